"""Numba kernels of the finite-``D`` pool theory (private; see :mod:`replica._pool_finite`).

Each prompt type ``p`` has a quadratic form ``q_p = z_pᵀ Q z_p`` and the radius ``r = |x_q|²`` is integrated on
the nodes ``r_j`` (weights ``w_j``) of the ``χ²_D`` rule; the leave-one-out factor is
``ω̃_pj = 1/(s + q_p r_j/P)``. The type equations need, for every type, sums over the nodes of powers of ``ω̃`` times
polynomials in ``r_j``. The numpy form builds the ``(n_types, n_nodes)`` array of ``ω̃`` (about a million entries at
the default 8192 types) several times per fixed-point step; these loops compute the same sums node by node, without
the temporaries (the same terms, summed in the same order over the nodes: equal to round-off).
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=True)
def first_moment(q, r, wr, scale, P):
    """``Σ_j w_j (r_j/D) ω̃_pj`` per type, with ``wr`` holding ``w_j r_j/D`` (the resolvent step; the node sum is
    vectorised, its order of additions differs from a plain loop by round-off). One thread: threads of their own
    slowed this step threefold beside other busy processes on 2 cores."""
    n, m = q.shape[0], r.shape[0]
    out = np.empty(n)
    for p in range(n):
        qp = q[p] / P
        acc = 0.0
        for j in range(m):
            acc += wr[j] / (scale + qp * r[j])
        out[p] = acc
    return out


@njit(cache=True)
def second_moments(q, b2, r, w, D, noise2, scale, P):
    """Per type: ``Σ_j w_j ω̃² (r_j/D)(σ² + (r_j/D) b2_p)`` and ``Σ_j w_j ω̃² (r_j/D) r_j``."""
    n, m = q.shape[0], r.shape[0]
    const = np.empty(n)
    lin = np.empty(n)
    for p in range(n):
        qp = q[p] / P
        a = 0.0
        b = 0.0
        for j in range(m):
            om = 1.0 / (scale + qp * r[j])
            rd = r[j] / D
            t = w[j] * om * om * rd
            a += t * (noise2 + rd * b2[p])
            b += t * r[j]
        const[p] = a
        lin[p] = b
    return const, lin


@njit(cache=True)
def fit_error(q, b2, qc, r, w, D, noise2, scale, P):
    """``mean_p Σ_j w_j (s ω̃_pj)² (σ² + (r_j/D) b2_p + r_j qc_p)``: the training fit of the type equations."""
    n, m = q.shape[0], r.shape[0]
    total = 0.0
    for p in range(n):
        qp = q[p] / P
        acc = 0.0
        for j in range(m):
            so = scale / (scale + qp * r[j])
            acc += w[j] * so * so * (noise2 + (r[j] / D) * b2[p] + r[j] * qc[p])
        total += acc
    return total / n
