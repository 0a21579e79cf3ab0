"""Numba kernels of the kernel learner's fresh-task equations (private; see :func:`replica._kernel_solver.solve_fresh`).

The equations run over pairs ``(i, j)`` of a context type ``i`` (block scales ``σ_i``, weight ``c_i``) and a query
scale ``j`` (block scales ``ρ_j``, weight ``w_j``), with the leave-one-out weight
``ω_ij = 1/(1 + σ_iᵀ A ρ_j / P)``. The numpy form built the ``(n, n_R)`` arrays of ``ω``, of the weights and of the
residuals, and multiplied them by the thin ``(n, n_b)`` and ``(n_R, n_b)`` factors, several times per fixed-point
step (16,000 contexts and 58 query scales at the learner figures' sizes). These loops compute the same sums query
scale by query scale, without the temporaries; the sums over the
contexts are vectorised (contexts along memory: ``sigT`` and ``pT`` are ``n_b × n``; the label moments are per node of
``r``, ``mcoT`` ``n_R × n_b × n_nodes`` and ``Ey2T`` ``n_R × n_nodes``, and ``node`` gives each context's). They
are the same terms; only the order of the additions differs, by round-off (~1e-15 relative). Measured against the
numpy form at ``D = 10``, ``N = 20`` on one thread: the linear ridge law 6–10× faster, a fresh-task theory
1.3–2.5× (the rest of its time is sampling the context types).

Compiled with numpy's error model and ``fastmath`` (as :mod:`replica._pool_kernels`: the denominators
``1 + σᵀ A ρ/P`` are positive, and the zero-divisor checks kept the compiler from vectorising the divisions). One
thread: these run inside figure workers that already use every core.
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=True, error_model="numpy")
def _omega(sigT, a, rho, j, P, q, out):
    """``out_i = ω_ij = 1/(1 + σ_iᵀ A ρ_j / P)`` for every context ``i`` at the query scale ``j`` (``q`` a buffer of
    ``n_b``: ``A ρ_j / P``)."""
    nb, n = sigT.shape
    for l in range(nb):
        acc = 0.0
        for k in range(nb):
            acc += a[l, k] * rho[j, k]
        q[l] = acc / P
    for i in range(n):
        out[i] = 0.0
    for l in range(nb):
        ql = q[l]
        for i in range(n):
            out[i] += sigT[l, i] * ql
    for i in range(n):
        out[i] = 1.0 / (1.0 + out[i])


@njit(cache=True, fastmath=True, error_model="numpy")
def resolvent_sums(sigT, a, rho, wc, wR, P):
    """``E_lk = Σ_ij c_i w_j ω_ij σ_il ρ_jk`` (``n_b × n_b``): the averages of the resolvent step."""
    nb, n = sigT.shape
    m = rho.shape[0]
    E = np.zeros((nb, nb))
    q = np.empty(nb)
    om = np.empty(n)
    for j in range(m):
        _omega(sigT, a, rho, j, P, q, om)
        for i in range(n):
            om[i] *= wc[i]
        for l in range(nb):
            z = 0.0
            for i in range(n):
                z += sigT[l, i] * om[i]
            z *= wR[j]
            for k in range(nb):
                E[l, k] += z * rho[j, k]
    return E


@njit(cache=True, fastmath=True, error_model="numpy")
def label_sums(sigT, a, rho, wc, wR, pT, node, mcoT, P):
    """``h_l = Σ_ij c_i w_j ω_ij p_il m_l(R_j)`` (``m`` the label coefficients of the context's node of ``r``): the
    mean readout's projections, before the resolvent's diagonal."""
    nb, n = sigT.shape
    m = rho.shape[0]
    h = np.zeros(nb)
    q = np.empty(nb)
    om = np.empty(n)
    for j in range(m):
        _omega(sigT, a, rho, j, P, q, om)
        for l in range(nb):
            z = 0.0
            for i in range(n):
                z += wc[i] * om[i] * pT[l, i] * mcoT[j, l, node[i]]
            h[l] += wR[j] * z
    return h


@njit(cache=True, fastmath=True, error_model="numpy")
def residual_moments(sigT, a, rho, wc, wR, pT, node, mcoT, Ey2T, gam, d, P):
    """The second moments of the fixed point, with ``W_ij = c_i w_j ω_ij²`` and the mean readout's residual
    ``e0_ij = E[y²]_ij − 2 Σ_l p_il m_l(R_j) γ_l + Σ_l σ_il γ_l² ρ_jl / d_l`` (``E[y²]`` and ``m`` of the context's
    node of ``r``):

    - ``b0_lk = Σ_ij W_ij e0_ij σ_il ρ_jk``,
    - ``T_lmko = Σ_ij W_ij σ_il σ_im ρ_jk ρ_jo``,
    - ``S_lk = Σ_ij W_ij σ_il ρ_jk``,
    - ``f0 = Σ_ij W_ij e0_ij``.
    """
    nb, n = sigT.shape
    m = rho.shape[0]
    b0 = np.zeros((nb, nb))
    T = np.zeros((nb, nb, nb, nb))
    S = np.zeros((nb, nb))
    f0 = 0.0
    q = np.empty(nb)
    g = np.empty(nb)
    W = np.empty(n)
    e0 = np.empty(n)
    for j in range(m):
        for l in range(nb):
            g[l] = gam[l] * gam[l] / d[l] * rho[j, l]
        _omega(sigT, a, rho, j, P, q, W)
        for i in range(n):
            W[i] = wc[i] * wR[j] * W[i] * W[i]
            e0[i] = Ey2T[j, node[i]]
        for l in range(nb):
            gl = 2.0 * gam[l]
            hl = g[l]
            for i in range(n):
                e0[i] += sigT[l, i] * hl - gl * pT[l, i] * mcoT[j, l, node[i]]
        z = 0.0
        for i in range(n):
            z += W[i] * e0[i]
        f0 += z
        for l in range(nb):
            zb = 0.0
            zs = 0.0
            for i in range(n):
                zb += sigT[l, i] * W[i] * e0[i]
                zs += sigT[l, i] * W[i]
            for k in range(nb):
                b0[l, k] += zb * rho[j, k]
                S[l, k] += zs * rho[j, k]
            for mm in range(l + 1):
                zt = 0.0
                for i in range(n):
                    zt += sigT[l, i] * sigT[mm, i] * W[i]
                for k in range(nb):
                    for o in range(nb):
                        t = zt * rho[j, k] * rho[j, o]
                        T[l, mm, k, o] += t
                        if mm != l:
                            T[mm, l, k, o] += t
    return b0, T, S, f0
