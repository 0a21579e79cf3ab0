r"""The kernel learner's theory, its solvers: the Gaussian deterministic equivalent (``law="gaussian"``) and the
random-scale equations (``law="finite"``) in their scalar form for fresh tasks and with ``F × F`` resolvent blocks for
a task pool (Gu, Xu & Zdeborová; the equations and their derivation: :mod:`replica._kernel_theory`).
"""
from __future__ import annotations

import numpy as np

from linattn._errors import ConvergenceError
from linattn._kernel_errors import block_directions, fresh_blocks, trace_direction
from linattn._numerics.fixed_point import anderson
from linattn._numerics.stats import mean_se

from . import _fresh_kernels as kernels
from ._kernel_types import block_dims, fresh_types, label_moments, query_scales, unit_rows
from ._linear_solve import solve_covariance
from ._pool_theory import effective_ridge

TOLERANCE = 1e-11
MAX_ITERATIONS = 3_000
#: Gauss–Jacobi nodes per half of c ∈ [−1, 1] (the label moments given |x_q|²)


# --------------------------------------------------------------------------- the Gaussian theory
def gaussian_errors(S, B, V, P, lam, metrics):
    r"""The Gaussian deterministic equivalent (:mod:`replica._kernel_theory`) for training moments ``(S̄, B, V)``.

    Parameters
    ----------
    S, B : ndarray (F, F)
        Training moments (``S`` symmetric positive definite).
    V : float
    P, lam : float
        Prompts and weight decay ``λ > 0``.
    metrics : list of (S_t, B_t, V_t)
        The moments of each evaluation distribution.

    Returns
    -------
    dict
        ``train``, ``errors`` (one per metric), ``kappa``, ``residual``.
    """
    F = S.shape[0]
    sig, U = np.linalg.eigh(S)
    sig = np.maximum(sig, 0.0)
    Bt = U.T @ B
    g = np.einsum("jk,jk->j", Bt, Bt)
    kap, res, _ = effective_ridge(sig, np.ones(F), F, P, lam)
    inv = 1.0 / (sig + kap)
    G = U @ (inv[:, None] * Bt)
    pos = sig > 0
    se2 = V - float(np.sum(g[pos] / sig[pos]))
    bias = float(np.sum(g[pos] / sig[pos] * (kap / (sig[pos] + kap)) ** 2))      # no κ² overflow at huge λ
    df2 = F * float(np.sum(sig**2 * inv**2))
    cov = (se2 + bias) / (P - df2) * sig * inv**2               # Cov(vec Γ̂) = U diag(cov) Uᵀ ⊗ I_F

    def error(St, Bm, Vt):
        return 0.5 * (Vt - 2.0 * float(np.sum(Bm * G)) + float(np.sum(G * (St @ G)))
                      + F * float(cov @ np.einsum("ij,ij->j", U, St @ U)))

    inside = error(S, B, V)
    train = 0.5 * ((lam / kap) ** 2 * 2.0 * inside + lam * (float(np.sum(G * G)) + F * float(np.sum(cov))))
    return dict(train=train, errors=[error(*m) for m in metrics], kappa=kap, residual=res)



# --------------------------------------------------------------------------- the two theories
def fresh_finite(pb, P, lam, features, N_test, n_contexts, seed, n_groups=4):
    """Random-scale theory for fresh tasks in its rotation-invariant (scalar) form (:mod:`replica._kernel_theory`);
    returns the errors on all contexts and their standard errors from ``n_groups`` disjoint groups of contexts."""
    types = fresh_types(pb, n_contexts, np.random.default_rng(seed), features, n_groups)
    d = block_dims(pb.D, features)
    R, wR, rho = query_scales(pb.D, features)
    mco, Ey2 = label_moments(pb, types["r"], R, features)
    ft = fresh_blocks(pb, features, N_test)
    metric = tuple(np.array(x)[: d.size] for x in (ft.S, ft.B)) + (ft.V,)
    node = types["node"]

    def solve(sel, scale):
        return solve_fresh(types["sig"][sel], types["p"][sel], node[sel], mco, Ey2, scale * types["weight"][sel], rho,
                           wR, d, metric, P, lam)

    full = solve(slice(None), 1.0)
    groups = [solve(types["group"] == g, float(n_groups)) for g in range(n_groups)]
    se = {k: mean_se([gr[k] for gr in groups])[1] for k in ("train", "test")}
    return full, se


def solve_fresh(sig, p, node, mco, Ey2, wc, rho, wR, d, metric, P, lam):
    """The scalar equations of the fresh-task theory (:mod:`replica._kernel_theory`) on one sample of context types:
    ``sig`` and ``p`` (n, nb), each context's ``node`` of ``r`` (n,), the label moments per node ``mco``
    (n_nodes, n_R, nb) and ``Ey2`` (n_nodes, n_R), context weights ``wc`` (summing to 1). The sums over contexts and
    query scales are the loops of :mod:`replica._fresh_kernels`."""
    nb = d.size
    dd = np.outer(d, d)
    # writable C-ordered float copies (contexts last) and a float P: one compiled signature of each loop (read-only
    # arrays or an int P compiled others)
    sigT, pT, mcoT, Ey2T = (np.array(np.moveaxis(x, 0, -1), dtype=float, order="C") for x in (sig, p, mco, Ey2))
    rho, wc, wR = (np.array(x, dtype=float, order="C") for x in (rho, wc, wR))
    node = np.array(node, dtype=np.int64, order="C")
    P = float(P)

    def resolvent(loga):
        E = kernels.resolvent_sums(sigT, np.exp(loga).reshape(nb, nb), rho, wc, wR, P)     # E[ω ρ_k σ_l]
        return -np.log(lam + E / dd).ravel()

    fp = anderson(resolvent, -np.log(lam + np.outer(sigT @ wc, d) / dd).ravel(), TOLERANCE, MAX_ITERATIONS,
                  valid=lambda v: bool(np.all(np.isfinite(v))))
    loga, its, res = fp.x, fp.iterations, fp.residual
    if not fp.converged:
        raise ConvergenceError(f"learner theory: the resolvent fixed point did not converge in {MAX_ITERATIONS} "
                               f"iterations (residual {res:.3g}; P = {P:g}, lam = {lam:g})")
    a = np.exp(loga).reshape(nb, nb)
    gam = np.diag(a) * kernels.label_sums(sigT, a, rho, wc, wR, pT, node, mcoT, P) / d
    b0, T, S, f0 = kernels.residual_moments(sigT, a, rho, wc, wR, pT, node, mcoT, Ey2T, gam, d.astype(float), P)
    b0 = b0 / dd
    T = T.transpose(0, 2, 1, 3) / dd[:, :, None, None]           # [l, k, m, o]
    coef = a * a / P
    L = np.eye(nb * nb) - (coef[:, :, None, None] * T).reshape(nb * nb, nb * nb)
    rhs = (coef * b0).ravel()
    C = np.linalg.solve(L, rhs).reshape(nb, nb)
    res_c = float(np.max(np.abs(L @ C.ravel() - rhs)) / max(float(np.max(np.abs(rhs))), 1e-300))
    fit = f0 + float(np.sum(C * S))                              # Σ ω² w (e0 + σᵀ C ρ)
    norm2 = float(np.sum(gam**2 * d) + np.sum(C * dd))
    St, Bt, Vt = metric
    test = 0.5 * (Vt - 2.0 * float(np.sum(Bt * gam * d)) + float(np.sum(St * gam**2 * d))
                  + float(np.sum(St[:, None] * C * dd)))
    return dict(train=0.5 * fit + 0.5 * lam * norm2, test=test, iterations=its, residual=max(res, res_c), gamma=gam,
                C=C, fit=fit, norm2=norm2, a=a)


def _projected(M, k, D, t, features):
    """``M Π_k`` (right projection on the feature block ``k``)."""
    if features == "linear":
        return M
    out = np.zeros_like(M)
    if k == 0:
        out[:, :D] = M[:, :D]
        return out
    Mt = np.outer(M @ t, t)
    if k == 1:
        return Mt
    out[:, D:] = M[:, D:]
    return out - Mt


def matrix_finite(pb, P, lam, features, s, pool, task, metrics):
    """Random-scale theory with ``F × F`` resolvent blocks (:mod:`replica._kernel_theory`; task pools): ``s`` the
    sampled contexts (n, F), ``pool`` the distinct tasks (K, D), ``task`` the task of each context, ``metrics`` the
    moments ``(S̄, B, V)`` of each evaluation distribution. Returns ``train``, ``errors`` (one per metric),
    ``iterations``, ``residual``."""
    D = pb.D
    n, F = s.shape
    d = block_dims(D, features)
    nb = d.size
    t = trace_direction(D) if features == "hermite2" else None
    R, wR, rho = query_scales(D, features)
    mco, Ey2 = label_moments(pb, np.sum(pool * pool, axis=1) / D, R, features)
    mco, Ey2 = mco[task], Ey2[task]                                   # (n, n_R, nb), (n, n_R)
    U = block_directions(unit_rows(pool), features)[task]                 # (n, nb, F)
    eye = np.eye(F)

    def gram(x):
        """``E[x s sᵀ]`` for per-context weights ``x`` (n,)."""
        return (s.T * x) @ s / n

    def forms(Ms):
        """``sᵀ M_k s`` for each context and block: (n, nb)."""
        return np.stack([np.einsum("nf,nf->n", s @ M, s) for M in Ms], axis=1)

    def resolvents(E):
        return np.stack([np.linalg.inv(lam * eye + E[k]) for k in range(nb)])

    def omega(A):
        return 1.0 / (1.0 + forms(A) @ rho.T / P)                     # (n, n_R)

    def step(flat):
        x = (omega(resolvents(flat.reshape(nb, F, F))) * wR) @ rho / d     # Σ_j w_j ω ρ_k/d_k: (n, nb)
        return np.stack([gram(x[:, k]) for k in range(nb)]).ravel()

    def valid(flat):
        E = flat.reshape(nb, F, F)
        return all(np.linalg.eigvalsh(E[k] + lam * eye)[0] > 0 for k in range(nb))

    fp = anderson(step, np.stack([gram(np.ones(n))] * nb).ravel(), TOLERANCE, MAX_ITERATIONS,
                  valid=lambda v: bool(np.all(np.isfinite(v))) and valid(v))
    flat, its, res = fp.x, fp.iterations, fp.residual
    if not fp.converged:
        raise ConvergenceError(f"learner theory (pool): the resolvent fixed point did not converge in "
                               f"{MAX_ITERATIONS} iterations (residual {res:.3g}; P = {P:g}, lam = {lam:g})")
    A = resolvents(flat.reshape(nb, F, F))
    om = omega(A)
    h = (om * wR)[:, :, None] * mco                                   # w_j ω m_l(R_j): (n, n_R, nb)
    Mt = s.T @ np.einsum("nl,nlf->nf", h.sum(axis=1), U) / n          # E[ω s m_Rᵀ]
    G = sum(A[k] @ _projected(Mt, k, D, t, features) for k in range(nb))
    v = s @ G                                                         # Γ̄ᵀ s: (n, F)
    vu = np.einsum("nf,nlf->nl", v, U)
    vb = np.stack([np.einsum("nf,nf->n", _projected(v, k, D, t, features), v) for k in range(nb)], axis=1)
    e0 = Ey2 - 2.0 * np.einsum("njl,nl->nj", mco, vu) + (vb / d) @ rho.T
    w2 = om * om * wR                                                 # ω² weights (times 1/n in the averages)

    def cov_map(flat):
        e = forms(flat.reshape(nb, F, F)) @ rho.T
        x = (w2 * e) @ rho / d
        return np.stack([A[k] @ gram(x[:, k]) @ A[k] / P for k in range(nb)]).ravel()

    x0 = (w2 * e0) @ rho / d
    rhs = np.stack([A[k] @ gram(x0[:, k]) @ A[k] / P for k in range(nb)]).ravel()
    c, info, res_c = solve_covariance(cov_map, rhs, TOLERANCE, 40, MAX_ITERATIONS // 40)
    if info != 0 or not res_c < 1e3 * TOLERANCE:
        raise ConvergenceError(f"learner theory (pool): the covariance equation was not solved (GMRES info {info}, "
                               f"relative residual {res_c:.3g}; P = {P:g}, lam = {lam:g})")
    C = c.reshape(nb, F, F)
    C = 0.5 * (C + C.transpose(0, 2, 1))
    fit = float(np.sum(w2 * (e0 + forms(C) @ rho.T))) / n
    norm2 = float(np.sum(G * G)) + float(sum(d[k] * np.trace(C[k]) for k in range(nb)))

    def error(St, Bm, Vt):
        return 0.5 * (Vt - 2.0 * float(np.sum(Bm * G)) + float(np.sum(G * (St @ G)))
                      + float(sum(d[k] * np.sum(St * C[k]) for k in range(nb))))

    return dict(train=0.5 * fit + 0.5 * lam * norm2, errors=[error(*m) for m in metrics], iterations=its,
                residual=max(res, res_c), G=G, C=C, fit=fit, norm2=norm2, A=A)
