"""Numba kernels of the finite-``D`` pool theory (private; see :mod:`replica._pool_finite`).

Each prompt type ``p`` has a quadratic form ``q_p = z_pᵀ Q z_p`` and the radius ``r = |x_q|²`` is integrated on
the nodes ``r_j`` (weights ``w_j``) of the ``χ²_D`` rule; the leave-one-out factor is
``ω̃_pj = 1/(s + q_p r_j/P)``. The type equations need, for every type, sums over the nodes of powers of ``ω̃`` times
polynomials in ``r_j``. The numpy form builds the ``(n_types, n_nodes)`` array of ``ω̃`` (about a million entries at
the default 8192 types) several times per fixed-point step; these loops compute the same sums node by node, without
the temporaries (the same terms; the sums over the nodes are vectorised, so their order of additions differs from a
plain loop by round-off, ~1e-15 relative).

The loops are compiled with numpy's error model (a division by zero gives ``inf``, as in numpy, instead of raising
:class:`ZeroDivisionError`; the denominators ``s + q_p r_j/P`` are positive) and ``fastmath``: the check for a zero
divisor in every iteration kept the compiler from vectorising the divisions, which bound these loops (3–5 times
slower).
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=True, error_model="numpy")
def first_moment(q, r, wr, scale, P):
    """``Σ_j w_j (r_j/D) ω̃_pj`` per type, with ``wr`` holding ``w_j r_j/D`` (the resolvent step). One thread: threads
    of their own slowed this step threefold beside other busy processes on 2 cores."""
    n, m = q.shape[0], r.shape[0]
    out = np.empty(n)
    for p in range(n):
        qp = q[p] / P
        acc = 0.0
        for j in range(m):
            acc += wr[j] / (scale + qp * r[j])
        out[p] = acc
    return out


@njit(cache=True, fastmath=True, error_model="numpy")
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


@njit(cache=True, fastmath=True, error_model="numpy")
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


@njit(cache=True, fastmath=True, error_model="numpy")
def weighted_gram(ZT, c):
    """``Σ_p c_p z_p z_pᵀ / n`` of the types' rows ``z_p`` given as the columns of ``ZT`` (``D_z × n``, contiguous:
    the sum over types runs along memory and is vectorised), exactly symmetric. The matrix averages of the type
    equations; about twice as fast as ``(Z.T * c) @ Z`` with its ``n × D_z`` temporary."""
    d, n = ZT.shape
    out = np.empty((d, d))
    for a in range(d):
        for b in range(a + 1):
            acc = 0.0
            for p in range(n):
                acc += c[p] * ZT[a, p] * ZT[b, p]
            out[a, b] = acc / n
            out[b, a] = acc / n
    return out


@njit(cache=True, fastmath=True, error_model="numpy")
def quadratic_forms(ZT, A):
    """``z_pᵀ A z_p`` of every type (rows ``z_p`` as the columns of the contiguous ``ZT``, ``D_z × n``): the sum
    over the pairs ``a >= b`` of ``(A_ab + A_ba) z_a z_b`` (``A_aa z_a²`` on the diagonal), vectorised over the
    types."""
    d, n = ZT.shape
    out = np.zeros(n)
    for a in range(d):
        for b in range(a + 1):
            coef = A[a, a] if a == b else A[a, b] + A[b, a]
            for p in range(n):
                out[p] += coef * ZT[a, p] * ZT[b, p]
    return out
