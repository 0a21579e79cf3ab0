"""Numba kernels of the factorized-attention simulators (private; wrappers in validation.simulators.factorized).

One kernel runs gradient descent (fixed dataset), online SGD (a fresh batch of exact prompts every
step) or Langevin (fixed dataset) for every parametrization of :mod:`linattn.factorized`, coded by
``linattn.factorized.CODES``: 0 merged, 1 value_kq, 2 value_kq_modes, 3 separate_kq, 4 merged_heads.
Random numbers: the explicit per-chain xoshiro256+ states of :mod:`validation.simulators._kernels`; χ²_N draws by
Marsaglia & Tsang's exact gamma sampler (ACM TOMS 26, 363 (2000)).
"""
import numpy as np
from numba import njit

from linattn._random_kernels import fill_normal, next_normal, next_uniform, seed_state


@njit(cache=True)
def gamma_of(code, theta, D, H, R, out):
    """``out = Γ(θ)``."""
    out[:, :] = 0.0
    DD = D * D
    if code == 0:
        for i in range(D):
            for j in range(D):
                out[i, j] = theta[i * D + j]
    elif code == 1:
        p = theta[0]
        for i in range(D):
            for j in range(D):
                out[i, j] = p * theta[1 + i * D + j]
    elif code == 2:
        for i in range(D):
            for k in range(D):
                pik = theta[i * D + k]
                for j in range(D):
                    out[i, j] += pik * theta[DD + k * D + j]
    elif code == 3:
        oK = H
        oQ = H + H * D * R
        for h in range(H):
            v = theta[h]
            for i in range(D):
                for j in range(D):
                    acc = 0.0
                    for r in range(R):
                        acc += theta[oK + (h * D + i) * R + r] * theta[oQ + (h * D + j) * R + r]
                    out[i, j] += v * acc
    else:
        for h in range(H):
            v = theta[h]
            for i in range(D):
                for j in range(D):
                    out[i, j] += v * theta[H + h * DD + i * D + j]


@njit(cache=True)
def pullback(code, theta, G, D, H, R, out):
    """``out = ∂L/∂θ`` from ``G = ∂L/∂Γ``."""
    DD = D * D
    if code == 0:
        for i in range(D):
            for j in range(D):
                out[i * D + j] = G[i, j]
    elif code == 1:
        p = theta[0]
        acc = 0.0
        for i in range(D):
            for j in range(D):
                acc += G[i, j] * theta[1 + i * D + j]
                out[1 + i * D + j] = p * G[i, j]
        out[0] = acc
    elif code == 2:   # dP = G Qᵀ, dQ = Pᵀ G
        for i in range(D):
            for k in range(D):
                a = 0.0
                b = 0.0
                for j in range(D):
                    a += G[i, j] * theta[DD + k * D + j]
                    b += theta[j * D + i] * G[j, k]
                out[i * D + k] = a
                out[DD + i * D + k] = b
    elif code == 3:   # dv_h = ⟨G, K_h Q_hᵀ⟩, dK_h = v_h G Q_h, dQ_h = v_h Gᵀ K_h
        oK = H
        oQ = H + H * D * R
        for h in range(H):
            v = theta[h]
            dv = 0.0
            for r in range(R):
                for i in range(D):
                    gk = 0.0
                    gq = 0.0
                    for j in range(D):
                        gk += G[i, j] * theta[oQ + (h * D + j) * R + r]
                        gq += G[j, i] * theta[oK + (h * D + j) * R + r]
                    dv += gk * theta[oK + (h * D + i) * R + r]
                    out[oK + (h * D + i) * R + r] = v * gk
                    out[oQ + (h * D + i) * R + r] = v * gq
            out[h] = dv
    else:
        for h in range(H):
            v = theta[h]
            acc = 0.0
            for i in range(D):
                for j in range(D):
                    acc += G[i, j] * theta[H + h * DD + i * D + j]
                    out[H + h * DD + i * D + j] = v * G[i, j]
            out[h] = acc


@njit(cache=True)
def loss_gradient(S, XQ, YQ, Gam, G, start, stop):
    """``G = (1/n) Σ_μ (ŷ_μ − y_μ) s_μ x_μᵀ`` over prompts ``start:stop``; returns ``(1/2n) Σ (y − ŷ)²``."""
    D = Gam.shape[0]
    G[:, :] = 0.0
    tmp = np.empty(D)
    loss = 0.0
    for mu in range(start, stop):
        for i in range(D):
            acc = 0.0
            for j in range(D):
                acc += Gam[i, j] * XQ[mu, j]
            tmp[i] = acc
        yh = 0.0
        for i in range(D):
            yh += S[mu, i] * tmp[i]
        r = yh - YQ[mu]
        loss += r * r
        for i in range(D):
            ri = r * S[mu, i]
            for j in range(D):
                G[i, j] += ri * XQ[mu, j]
    n = stop - start
    G /= n
    return 0.5 * loss / n


@njit(cache=True, inline="always")
def next_gamma(state, xs, fs, k):
    """Gamma(k, 1) by Marsaglia & Tsang (``k >= 1``; ``k < 1`` by the ``U^{1/k}`` boost).

    One loop with a single exit, as :func:`validation.simulators._kernels.next_normal` (nested loops and early
    returns made numba's code an order of magnitude slower)."""
    boost = 1.0
    if k < 1.0:
        boost = next_uniform(state) ** (1.0 / k)
        k += 1.0
    d = k - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    out = 0.0
    while True:
        x = next_normal(state, xs, fs)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = next_uniform(state)
        if u < 1.0 - 0.0331 * x * x * x * x or np.log(u) < 0.5 * x * x + d * (1.0 - v + np.log(v)):
            out = d * v * boost
            break
    return out


@njit(cache=True)
def sample_prompts(state, xs, fs, root, U, rotate, N, slope, sigma, S, XQ, YQ):
    """Exact ``O(D)`` prompts (linattn.sampling, anisotropic form) into ``S, XQ, YQ``.

    The ``3D + 1`` Gaussians of a prompt come from one :func:`validation.simulators._kernels.fill_normal` call: an
    inlined ziggurat at each use made this module take ~30 s to compile."""
    n, D = S.shape
    z = np.empty(3 * D + 1)     # task w, ζ, query z_q, query noise
    sz = np.empty(D)
    sqD = np.sqrt(D)
    for mu in range(n):
        fill_normal(state, z, xs, fs)
        wn2 = 0.0
        for i in range(D):
            wt = z[i] * root[i]
            wn2 += wt * wt
        wn = np.sqrt(wn2)
        r = slope * slope * wn2 / D
        K = 2.0 * next_gamma(state, xs, fs, 0.5 * N)
        z1 = 0.0
        for i in range(D):
            z1 += z[D + i] * z[i] * root[i] / wn
        along = np.sqrt(r) * K + sigma * np.sqrt(K) * z1
        perp = np.sqrt((r + sigma * sigma) * K)
        yq = 0.0
        for i in range(D):
            sz[i] = (((along - perp * z1) / N) * z[i] * root[i] / wn + (perp / N) * z[D + i]) * root[i]
            z[2 * D + i] *= root[i]
            yq += z[i] * z[2 * D + i]
        YQ[mu] = slope * yq / sqD + sigma * z[3 * D]
        for i in range(D):
            if rotate:
                a = 0.0
                b = 0.0
                for j in range(D):
                    a += U[i, j] * sz[j]
                    b += U[i, j] * z[2 * D + j]
                S[mu, i] = a
                XQ[mu, i] = b
            else:
                S[mu, i] = sz[i]
                XQ[mu, i] = z[2 * D + i]


@njit(cache=True, nogil=True)
def run_chain(c, code, D, H, R, theta0, online, S, XQ, YQ, batch, root, U, rotate, N, slope, sigma,
              lam, step, noise, n_steps, record, seed, chain_ids, out_theta, out_loss, xs, fs):
    """Chain ``c``: descent (``noise = 0``) or Langevin (``noise = √(2 γ dt/β)``).

    ``θ ← θ − step (∂L/∂θ + λθ) + noise ξ``. ``online``: ``L`` on a fresh batch of ``batch`` exact prompts
    every step (SGD on the population); else ``L`` on the fixed dataset ``(S, XQ, YQ)``. Records ``θ`` and
    the loss of the current step before steps ``0, record, 2·record, …``. Releases the GIL, so that
    chains run in parallel threads (the wrapper's thread pool; a ``prange`` driver doubled the compile time).
    """
    n = theta0.shape[1]
    n_rec = out_theta.shape[1]
    state = np.empty(4, dtype=np.uint64)
    seed_state(seed, chain_ids[c], state)
    theta = theta0[c].copy()
    Gam = np.empty((D, D))
    G = np.empty((D, D))
    grad = np.empty(n)
    xi = np.empty(n)
    bS = np.empty((batch, D))
    bX = np.empty((batch, D))
    bY = np.empty(batch)
    j = 0
    for t in range(n_steps + 1):
        gamma_of(code, theta, D, H, R, Gam)
        if online:
            sample_prompts(state, xs, fs, root, U, rotate, N, slope, sigma, bS, bX, bY)
            loss = loss_gradient(bS, bX, bY, Gam, G, 0, batch)
        else:
            loss = loss_gradient(S, XQ, YQ, Gam, G, 0, S.shape[0])
        if t % record == 0 and j < n_rec:
            for i in range(n):                 # element by element: a slice assignment compiles numba's
                out_theta[c, j, i] = theta[i]  # shape-mismatch message (its string formatting, ~5 s per process)
            out_loss[c, j] = loss
            j += 1
        if t == n_steps:
            break
        pullback(code, theta, G, D, H, R, grad)
        if noise > 0.0:
            fill_normal(state, xi, xs, fs)
        for i in range(n):
            theta[i] -= step * (grad[i] + lam * theta[i])
            if noise > 0.0:
                theta[i] += noise * xi[i]
