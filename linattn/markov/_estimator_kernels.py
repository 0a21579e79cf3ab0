r"""The numba kernels of the ideal estimators of the Markov-chain task (:mod:`linattn.markov._estimators`, whose
docstring defines the estimators; Gibson, Cui & Reddy, arXiv:2604.12151).

One pass per sequence, no ``(n_seq, L, C)`` array for :func:`linattn.markov.losses`. Posterior weights over the pool
are kept normalized in linear space (``w_k ← w_k f_k / Σ_j w_j f_j``; for the bigram likelihoods that sum is the
next-token probability itself), beside the exact running log-likelihoods ``ll_k`` and the log normalizer ``z``
(``w_k = exp(ll_k − z)``). Weights below ``1e-300`` are set to 0; if a weight is below ``1e-280`` while
``ll_k − z > −600`` (it underflowed and the data now favour its chain again), and every 64 positions, the weights are
recomputed from ``ll`` by log-sum-exp. The posterior is therefore as accurate as log-sum-exp over any number of
positions (checked against it to 1e-10), at ``O(K)`` cost per position without an ``exp`` per chain and position.
"""
from __future__ import annotations

import numba
import numpy as np

from .._random_kernels import next_uniform, seed_state
from ._chains import log_gamma_variate

#: the estimators' and the first-state laws' codes in the kernels
KIND_CODES = {"1-mem": 0, "2-mem": 1, "1-gen": 2, "2-gen": 3, "bayes": 4, "true": 5}
FIRST_CODES = {"stationary": 0, "uniform": 1, "onestep": 2}
_TINY = 1e-280  # a weight below this ...
_GAP = 600.0    # ... while ll_k − z exceeds −_GAP (an underflowed weight that recovered): recompute all


# ----------------------------------------------------------------------------- numba kernels
@numba.njit(cache=True)
def _resync(ll, w):
    """``w = softmax(ll)`` by log-sum-exp (weights below ``e^−690`` of the best set to 0: no subnormal numbers);
    returns the log normalizer ``z = log Σ_k exp(ll_k)``, so that ``w_k = exp(ll_k − z)``."""
    top = -np.inf
    for k in range(ll.shape[0]):
        if ll[k] > top:
            top = ll[k]
    s = 0.0
    for k in range(ll.shape[0]):
        w[k] = np.exp(ll[k] - top) if ll[k] - top > -690.0 else 0.0
        s += w[k]
    for k in range(ll.shape[0]):
        w[k] /= s
    return top + np.log(s)


@numba.njit(cache=True, inline="always")
def _update(ll, w, f, lf, i, j, inv, z):
    """Posterior step ``ll_k += lf[i, j, k]``, ``w_k ← w_k f[i, j, k] · inv`` with ``inv = 1/Σ_k w_k f[i, j, k]``;
    ``z`` is the log normalizer after the step (``w_k = exp(ll_k − z)``). Weights below ``1e-300`` are set to 0
    (below the roundoff of the sum; subnormal numbers are slow). Returns True if a weight is below ``1e-280``
    while ``ll_k − z > −600`` (it underflowed earlier and has recovered): the caller then recomputes all
    weights from ``ll`` (:func:`_resync`). Indices rather than slices: no reference counting per position."""
    thr = z - _GAP
    bad = False
    for k in range(ll.shape[0]):
        ll[k] += lf[i, j, k]
        v = w[k] * f[i, j, k] * inv
        w[k] = v if v >= 1e-300 else 0.0
        bad |= (v < _TINY) & (ll[k] > thr)
    return bad


@numba.njit(cache=True, inline="always")
def _mix(w, f, i, j):
    """``Σ_k w_k f[i, j, k]`` with four partial sums (independent additions pipeline: ~20 % faster at K = 16)."""
    K = w.shape[0]
    p0, p1, p2, p3 = 0.0, 0.0, 0.0, 0.0
    k = 0
    while k + 4 <= K:
        p0 += w[k] * f[i, j, k]
        p1 += w[k + 1] * f[i, j, k + 1]
        p2 += w[k + 2] * f[i, j, k + 2]
        p3 += w[k + 3] * f[i, j, k + 3]
        k += 4
    while k < K:
        p0 += w[k] * f[i, j, k]
        k += 1
    return (p0 + p1) + (p2 + p3)


@numba.njit(cache=True)
def _g_onestep(cnt2, rowc, x0, concentration, C):
    """``g(N) = Σ_i (α + N_{i→x0})/(N_i + Cα)`` (module docstring)."""
    g = 0.0
    for i in range(C):
        g += (concentration + cnt2[i, x0]) / (rowc[i] + C * concentration)
    return g


@numba.njit(cache=True)
def _stationary_small(T, A, pi):
    """Stationary law of one irreducible chain (Grassmann–Taksar–Heyman), into ``pi``; ``A`` is scratch."""
    C = T.shape[0]
    for i in range(C):
        for j in range(C):
            A[i, j] = T[i, j]
    for n in range(C - 1, 0, -1):
        s = 0.0
        for j in range(n):
            s += A[n, j]
        if not s > 0.0:
            return False
        for i in range(n):
            A[i, n] /= s
        for i in range(n):
            for j in range(n):
                A[i, j] += A[i, n] * A[n, j]
    pi[0] = 1.0
    tot = 1.0
    for j in range(1, C):
        v = 0.0
        for i in range(j):
            v += pi[i] * A[i, j]
        pi[j] = v
        tot += v
    for j in range(C):
        pi[j] /= tot
    return True


@numba.njit(cache=True)
def _stationary_mc(cnt2, a, x0, concentration, n_mc, state, G, T, A, pi, gy):
    """``gy[y] = (1/n_mc) Σ_m π_{T^{(m,y)}}(x_0)``: Monte Carlo of ``g(N + e_{a y}) = E_{D(N + e_{ay})}[π_T(x_0)]``
    for every ``y`` with common random numbers: a draw ``G_{ij} ~ Gamma(α + N_{ij})`` and ``E ~ Exp(1)`` gives
    ``T^{(m,y)}`` with rows ``G_{i·}/Σ_j G_{ij}``, except row ``a`` built from ``G_{a·} + E e_y`` (a Gamma
    variate plus an independent ``Exp(1)`` is ``Gamma(shape + 1)``). Returns ``False`` if a draw is reducible."""
    C = cnt2.shape[0]
    for y in range(C):
        gy[y] = 0.0
    for m in range(n_mc):
        for i in range(C):
            for j in range(C):
                G[i, j] = np.exp(log_gamma_variate(concentration + cnt2[i, j], state))
        e = -np.log(1.0 - next_uniform(state))
        for i in range(C):
            if i == a:
                continue
            s = 0.0
            for j in range(C):
                s += G[i, j]
            for j in range(C):
                T[i, j] = G[i, j] / s
        sa = 0.0
        for j in range(C):
            sa += G[a, j]
        for y in range(C):
            for j in range(C):
                T[a, j] = (G[a, j] + (e if j == y else 0.0)) / (sa + e)
            if not _stationary_small(T, A, pi):
                return False
            gy[y] += pi[x0]
    for y in range(C):
        gy[y] /= n_mc
    return True


@numba.njit(cache=True)
def _mem_seq(x, kind, Tp, logTp, pip, logpip, logfp, w, ll, loss, probs, want):
    """1-mem (``kind`` 0), 2-mem (1) and bayes over the pool (4) for one sequence (see :func:`_seq`): posterior
    weights ``w`` (normalized, linear), log-likelihoods ``ll`` and log normalizer ``z`` (module docstring).
    A function of its own: small enough for the compiler to keep the loop over the pool tight."""
    L = x.shape[0]
    K = Tp.shape[2]
    C = Tp.shape[1]
    x0 = x[0]
    for k in range(K):
        ll[k] = logfp[x0, k] if kind == 4 else logpip[0, x0, k]
    z = _resync(ll, w)
    for n in range(L - 1):
        a = x[n]
        b = x[n + 1]
        p = _mix(w, Tp, a, b)  # p(y) = Σ_k w_k T_k(a, y) at the realized y = b
        if want:
            for y in range(C):
                probs[n, y] = _mix(w, Tp, a, y)
        if p <= 0.0:
            loss[n] = np.inf
            return n
        lp = np.log(p)
        loss[n] = -lp
        if kind == 0:  # 1-mem: the weights follow the unigram likelihood, not the predicted token
            s = _mix(w, pip, 0, b)
            z += np.log(s)
            bad = _update(ll, w, pip, logpip, 0, b, 1.0 / s, z)
        elif kind == 1 and n == 0:  # the authors' 2-mem drops π_k(x_0) from n = 1 on
            for k in range(K):
                ll[k] = logTp[a, b, k]
            bad = True
        else:  # bigram likelihood: the normalizer of the update is p itself
            z += lp
            bad = _update(ll, w, Tp, logTp, a, b, 1.0 / p, z)
        if bad or n % 64 == 63:  # and bound the roundoff drift of the linear weights (K exps per 64 steps)
            z = _resync(ll, w)
    return -1


@numba.njit(cache=True)
def _seq(x, kind, C, concentration, pseudo, first, n_mc, Tp, logTp, pip, logpip, logfp, Ttrue,
         cnt, cnt2, rowc, w, ll, state, G, T, A, pi, gy, loss, probs, want):
    """Log-losses ``loss[n] = −log p̂(x_{n+1} | x_{0:n})`` of one sequence for one estimator (and the full
    predictive rows into ``probs`` if ``want``). Pool arrays are laid out state-major, chain-minor:
    ``Tp[a, y, k] = T_k(a, y)``, ``pip[0, y, k] = π_k(y)``, ``logfp[y, k] = log φ_k(y)``. ``kind``: 0 1-mem,
    1 2-mem, 2 1-gen, 3 2-gen, 4 bayes (pool if ``K > 0``, fresh chains if ``K == 0``), 5 true.
    Returns −1, or the position where the pool gave the observed token probability 0 (−2: a reducible
    Monte Carlo draw)."""
    L = x.shape[0]
    K = Tp.shape[2]
    fresh_bayes = kind == 4 and K == 0
    if kind == 2 or kind == 3 or fresh_bayes:
        for c in range(C):
            cnt[c] = 0.0
            rowc[c] = 0.0
            for d in range(C):
                cnt2[c, d] = 0.0
    x0 = x[0]
    if kind == 0 or kind == 1 or kind == 4 and K > 0:
        return _mem_seq(x, kind, Tp, logTp, pip, logpip, logfp, w, ll, loss, probs, want)
    for n in range(L - 1):
        a = x[n]
        b = x[n + 1]
        if kind == 5:
            loss[n] = -np.log(Ttrue[a, b])
            continue
        if kind == 2:  # 1-gen
            cnt[a] += 1.0
            den = n + 1.0 + C * pseudo
            loss[n] = -np.log((cnt[b] + pseudo) / den)
            if want:
                for y in range(C):
                    probs[n, y] = (cnt[y] + pseudo) / den
            continue
        if kind == 3 or fresh_bayes:  # 2-gen, and Bayes of fresh chains
            den = rowc[a] + C * concentration
            if kind == 3 or first == 1:
                loss[n] = -np.log((cnt2[a, b] + concentration) / den)
                if want:
                    for y in range(C):
                        probs[n, y] = (cnt2[a, y] + concentration) / den
            else:
                if first == 2:  # onestep: exact g(N + e_ay)
                    g = _g_onestep(cnt2, rowc, x0, concentration, C)
                    old = (concentration + cnt2[a, x0]) / den
                    for y in range(C):
                        gy[y] = g - old + (concentration + cnt2[a, x0] + (1.0 if y == x0 else 0.0)) / (den + 1.0)
                elif not _stationary_mc(cnt2, a, x0, concentration, n_mc, state, G, T, A, pi, gy):
                    return -2
                norm = 0.0
                for y in range(C):
                    norm += (cnt2[a, y] + concentration) * gy[y]
                loss[n] = -np.log((cnt2[a, b] + concentration) * gy[b] / norm)
                if want:
                    for y in range(C):
                        probs[n, y] = (cnt2[a, y] + concentration) * gy[y] / norm
            cnt2[a, b] += 1.0
            rowc[a] += 1.0
            continue
    return -1


@numba.njit(cache=True)
def run_estimator(states, kind, C, concentration, pseudo, first, n_mc, seed, stream0, Tp, logTp, pip, logpip, logfp,
                  Ttrue, task, loss, probs, want, total, total_sq, accumulate):
    """Every sequence of ``states``: write its losses into ``loss[s]`` (and ``probs[s]`` if ``want``), and,
    if ``accumulate``, add ``ℓ_n − log C`` and its square into ``total`` and ``total_sq`` (with a ``loss`` of one row
    only: each sequence's losses are then not kept). The Monte Carlo of sequence
    ``s`` (bayes, fresh chains, stationary first state) uses the stream ``(seed, stream0 + s)``.
    Returns −1, or ``(s, code)`` information as ``s * 4 + (0 if zero probability else 1)``."""
    n_seq, L = states.shape
    K = max(Tp.shape[2], 1)
    cnt = np.zeros(C)
    cnt2 = np.zeros((C, C))
    rowc = np.zeros(C)
    w = np.zeros(K)
    ll = np.zeros(K)
    state = np.zeros(4, np.uint64)
    G = np.zeros((C, C))
    T = np.zeros((C, C))
    A = np.zeros((C, C))
    pi = np.zeros(C)
    gy = np.zeros(C)
    for s in range(n_seq):
        if kind == 4 and first == 0:
            seed_state(seed, stream0 + s, state)
        row = 0 if accumulate and loss.shape[0] < n_seq else s      # accumulate into a full buffer: keep them too
        bad = _seq(states[s], kind, C, concentration, pseudo, first, n_mc, Tp, logTp, pip, logpip, logfp,
                   Ttrue[task[s]],
                   cnt, cnt2, rowc, w, ll, state, G, T, A, pi, gy, loss[row], probs[s if want else 0], want)
        if bad != -1:
            return s * 4 + (1 if bad == -2 else 0)
        if accumulate:  # shifted by log C (the uniform predictor's loss) against cancellation in the variance
            for n in range(L - 1):
                d = loss[row, n] - np.log(C)
                total[n] += d
                total_sq[n] += d * d
    return -1
