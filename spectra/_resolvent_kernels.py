"""Numba kernels for the block resolvent fixed point (private; see ``spectra/_resolvent.py``).

Equations (H/c units, blocks i = 1..B, quadrature nodes k with weights w_k and scales ξ_ik):

    r_i(z) = 1 / (−z + Σ_k w_k ξ_ik ω_k),   ω_k = 1 / (1 + Σ_j q_j ξ_jk r_j).

Solved as R_i(r) = r_i (−z + S_i(r)) − 1 = 0 by Newton's method with backtracking, continued
from a large imaginary part η_0 down to the target Im z (homotopy): for Im z > 0 the solution is
the unique one in the upper half plane, and following it as η decreases selects the physical
branch on the real axis (Im r ≥ 0).

Arithmetic follows numpy (``error_model="numpy"``): a division by zero gives inf/nan instead of raising inside a
parallel loop (which surfaced as a ``SystemError``), and a residual that is not a number is a failure
(``not res <= tol``), reported as such.
"""
import math

import numpy as np
from numba import njit, prange

STATUS_OK = 0
STATUS_NO_CONVERGENCE = 1
STATUS_WRONG_BRANCH = 2
#: residual (in units of tol) on the real axis up to which the last homotopy level is accepted as its solution
FALLBACK_TOL_FACTOR = 1e3


@njit(cache=True, error_model="numpy")
def _div(a, b):
    """``a / b``, nan for ``b = 0`` (numba's complex division raises even under ``error_model="numpy"``)."""
    if b == 0:
        return complex(np.nan, np.nan)
    return a / b


@njit(cache=True, error_model="numpy")
def _residual(z, w, xi, q, r, S, om):
    K, B = xi.shape
    for i in range(B):
        S[i] = 0.0
    for k in range(K):
        den = 1.0 + 0j
        for j in range(B):
            den += q[j] * xi[k, j] * r[j]
        om[k] = _div(1.0 + 0j, den)
        for i in range(B):
            S[i] += w[k] * xi[k, i] * om[k]
    res = 0.0
    for i in range(B):
        R = abs(r[i] * (-z + S[i]) - 1.0)
        if not R <= res:        # nan propagates (max() would drop it: a NaN residual is a failure, not 0)
            res = R
        if R != R:
            return R
    return res


@njit(cache=True, error_model="numpy")
def _jacobian(z, w, xi, q, r, S, om, J):
    K, B = xi.shape
    for i in range(B):
        for j in range(B):
            J[i, j] = 0.0
    for k in range(K):
        o2 = om[k] * om[k]
        for i in range(B):
            for j in range(B):
                J[i, j] -= w[k] * xi[k, i] * xi[k, j] * q[j] * o2
    for i in range(B):
        for j in range(B):
            J[i, j] *= r[i]
        J[i, i] += -z + S[i]


@njit(cache=True, error_model="numpy")
def _solve_small(J, b, out):
    B = b.shape[0]
    if B == 1:
        out[0] = _div(b[0], J[0, 0])
    else:
        # Cramer's rule on J/s, s the power of two nearest the largest |J_ij| (exact: the same bits as on J itself
        # wherever that is finite): the 2x2 determinant squares J's scale, which overflows far from the spectrum
        # (|z| ~ 1e155 and beyond: a large weight decay) or underflows
        top = 0.0
        for i in range(2):
            for j in range(2):
                top = max(top, abs(J[i, j]))
        s = 1.0
        if top > 0.0 and top < np.inf:
            s = math.ldexp(1.0, math.frexp(top)[1])
        a00, a01, a10, a11 = J[0, 0] / s, J[0, 1] / s, J[1, 0] / s, J[1, 1] / s
        det = a00 * a11 - a01 * a10
        out[0] = _div(a11 * b[0] - a01 * b[1], det) / s
        out[1] = _div(a00 * b[1] - a10 * b[0], det) / s


@njit(cache=True, error_model="numpy")
def _newton(z, w, xi, q, r, tol, maxit, S, om, J, R, dr, trial):
    """Newton with backtracking from ``r`` (updated in place); returns (residual, iterations)."""
    B = r.shape[0]
    res = _residual(z, w, xi, q, r, S, om)
    it = 0
    while res > tol and it < maxit:
        it += 1
        _jacobian(z, w, xi, q, r, S, om, J)
        for i in range(B):
            R[i] = r[i] * (-z + S[i]) - 1.0
        _solve_small(J, R, dr)
        step = 1.0
        accepted = False
        for _ in range(30):
            for i in range(B):
                trial[i] = r[i] - step * dr[i]
            ok = True
            if z.imag > 0:
                for i in range(B):
                    if trial[i].imag < 0:
                        ok = False
            if ok:
                new = _residual(z, w, xi, q, trial, S, om)
                if new < res:
                    for i in range(B):
                        r[i] = trial[i]
                    res = new
                    accepted = True
                    break
            step *= 0.5
        if not accepted:
            break
    res = _residual(z, w, xi, q, r, S, om)  # leaves S, om consistent with r
    return res, it


@njit(cache=True, error_model="numpy")
def resolvent_point(x, eta, w, xi, q, tol, maxit, r_out, dr_out):
    """Solve at z = x + i·eta (eta >= 0) by η-homotopy + Newton.

    Writes r and dr/dz into ``r_out``, ``dr_out``; returns (status, residual, iterations).
    """
    K, B = xi.shape
    S = np.empty(B, np.complex128)
    om = np.empty(K, np.complex128)
    J = np.empty((B, B), np.complex128)
    R = np.empty(B, np.complex128)
    dr = np.empty(B, np.complex128)
    trial = np.empty(B, np.complex128)
    r = np.empty(B, np.complex128)
    eta0 = 2.0 * (1.0 + abs(x))
    if not eta0 < np.inf:       # |x| near float64's top (a huge weight decay): the largest finite start
        eta0 = 1.7e308
    if eta >= eta0:
        eta0 = eta
    z = complex(x, eta0)
    for i in range(B):
        mean_xi = 0.0
        for k in range(K):
            mean_xi += w[k] * xi[k, i]
        r[i] = _div(1.0 + 0j, -z + mean_xi)
    total = 0
    floor = 1e-15 * (1.0 + abs(x))
    last_ok = eta0      # imaginary part of the last solved level (r holds its solution)
    cur = eta0
    factor = 0.1        # homotopy step: next level = last_ok * factor (then the target eta)
    status = STATUS_OK
    res = 0.0
    first = True
    r_prev = np.empty(B, np.complex128)
    while True:
        for i in range(B):
            r_prev[i] = r[i]
        res, it = _newton(complex(x, cur), w, xi, q, r, tol, maxit, S, om, J, R, dr, trial)
        total += it
        if not res <= tol:          # nan included
            for i in range(B):
                r[i] = r_prev[i]
            if eta == 0.0 and last_ok <= 1e-12 * (1.0 + abs(x)):
                # the level at Im z <= 1e-12 is the real-axis solution to that accuracy where m is smooth on that
                # scale; its residual on the real axis itself says whether it is: near the pole of a zero atom
                # (|x| below ~1e-40) it is not, and the point is reported as not converged
                res = _residual(complex(x, 0.0), w, xi, q, r, S, om)
                if not res <= FALLBACK_TOL_FACTOR * tol:
                    status = STATUS_NO_CONVERGENCE
                break
            if first or factor > 0.999:
                status = STATUS_NO_CONVERGENCE
                break
            factor = factor ** 0.5      # retreat: a smaller step from the last solved level
            cur = last_ok * factor
            if cur < eta or cur < floor:
                cur = eta
            continue
        first = False
        last_ok = cur
        if cur <= eta:
            break
        cur = cur * factor
        if cur < eta or cur < floor:
            cur = eta   # last level: the target (eta = 0 is the real axis itself)
    # branch check: with Im z >= 0 every r_i must have Im r_i >= 0 (Herglotz)
    for i in range(B):
        if r[i].imag < -1e-10 * (1.0 + abs(r[i])):
            status = STATUS_WRONG_BRANCH
    z = complex(x, eta)
    _jacobian(z, w, xi, q, r, S, om, J)
    _solve_small(J, r, dr)
    for i in range(B):
        r_out[i] = r[i]
        dr_out[i] = dr[i]
    return status, res, total


@njit(cache=True, parallel=True, error_model="numpy")
def resolvent_many(x, eta, w, xi, q, tol, maxit, r_out, dr_out, status, residual, iterations):
    """``resolvent_point`` for every (x[n], eta[n]); independent points in parallel."""
    for n in prange(x.shape[0]):
        st, res, it = resolvent_point(x[n], eta[n], w, xi, q, tol, maxit, r_out[n], dr_out[n])
        status[n] = st
        residual[n] = res
        iterations[n] = it
