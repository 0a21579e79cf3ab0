r"""Certified conjugate gradients: the one CG of the library (``replica.ridge``, ``replica.kernel_ridge``).

Solves ``A x = b`` for a symmetric positive definite ``A`` given as a product, preconditioned by ``M⁻¹``, and stops
only when the *true* residual certifies the solution of the ridge problem it comes from (Hestenes & Stiefel 1952;
the stopping rule: Arioli, Numer. Math. 97 (2004), for the energy-norm view; reliable updates: van der Vorst &
Ye, SIAM J. Sci. Comput. 22 (2000)).

The certificate. For ``A = H + λ`` with ``H ⪰ 0`` the error of an iterate obeys
``‖x − x*‖ <= ‖A⁻¹‖ ‖b − Ax‖ <= ‖r‖/λ``, so the rule

.. math:: ‖r‖ <= \mathrm{rtol}\; λ\, ‖x‖

proves ``‖x − x*‖ <= rtol ‖x‖``. The residual that certifies is recomputed from the data (``true_residual``), never
the recursive one, which drifts.

Reliable updates. The true residual is recomputed (and the recursion restarted from it, the search direction
kept) when the recursive residual has met the target, has fallen by ``RELIABLE`` since the last recomputation, or
``SEGMENT`` iterations have passed.

Precision. With ``fast_apply`` (e.g. float32 products) CG uses it until it fails: a direction with ``pᵀAp`` not
positive, or a segment that does not halve the true residual; from then on ``apply`` (float64). The certificate is
always computed in float64.

Norms and coordinates. The iteration may run in transformed coordinates ``x = Qψ`` (a preconditioner that is
diagonal there); ``x_norm`` and ``r_norm`` give the norms of the solution and of the residual in the coordinates
of the certificate (default: Euclidean in the iteration's own).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._errors import ConvergenceError
from .._results import short_repr

RELIABLE = 1e-4     # recompute the true residual when the recursive one has fallen by this factor,
SEGMENT = 50        # or after this many iterations
#: the smallest residual asked for relative to |b| (float64 cannot resolve less)
FLOOR = 1e-15
#: the target at λ = 0 (no certificate exists; the minimum-norm solution is approached to this relative residual)
ZERO_LAMBDA_TARGET = 1e-13


class NotCertified(ConvergenceError):
    """CG stopped at ``maxiter`` before its certificate held (not a breakdown): ``target``, ``residual`` (the last
    true residual norm), ``x_norm`` and ``iterations`` say how far it was."""

    def __init__(self, message, target, residual, x_norm, iterations):
        super().__init__(message)
        self.target, self.residual, self.x_norm, self.iterations = target, residual, x_norm, iterations


@dataclass(frozen=True, eq=False)
class CGSolution:
    """``x`` (iteration coordinates), the ``iterations``, and the certifying true ``residual`` norm."""

    __repr__ = short_repr

    x: np.ndarray
    iterations: int
    residual: float


def _euclid(v):
    return float(np.linalg.norm(v))


def _dot(a, b):
    """``Σ a b`` of arrays of any shape (one BLAS dot)."""
    return float(np.vdot(a, b))


def certified_cg(apply, b, precondition, lam, rtol, maxiter, *, true_residual=None, fast_apply=None,
                 x_norm=_euclid, r_norm=_euclid, b_norm=None, name="cg") -> CGSolution:
    r"""Preconditioned CG on ``A x = b`` that returns only a certified solution (module docstring).

    Parameters
    ----------
    apply : callable
        ``p ↦ A p`` in float64.
    b : ndarray
        Right-hand side (iteration coordinates).
    precondition : callable
        ``r ↦ M⁻¹ r`` (symmetric positive definite, or semidefinite on the iterates' subspace).
    lam : float
        ``λ >= 0``, the smallest eigenvalue bound ``A ⪰ λ`` of the certificate; ``0``: no certificate, the residual
        is driven to ``ZERO_LAMBDA_TARGET ‖b‖``.
    rtol : float
        Relative error bound to certify.
    maxiter : int
    true_residual : callable, optional
        ``x ↦ (r, ‖r‖, ‖x‖)``: the residual ``b − A x`` recomputed from the data in float64 (iteration coordinates)
        and the norms of the residual and of the solution in the certificate's coordinates (default:
        ``b − apply(x)``, ``r_norm``, ``x_norm``).
    fast_apply : callable, optional
        A cheaper, less accurate ``A p`` (float32), used while it makes progress.
    x_norm, r_norm : callable
        Norms of the solution and of the residual in the certificate's coordinates (on the recursion's iterates).
    b_norm : float, optional
        ``‖b‖`` in the certificate's coordinates (default ``r_norm(b)``).
    name : str
        Who is solving (for messages).

    Returns
    -------
    CGSolution

    Raises
    ------
    ConvergenceError
        A direction with ``pᵀAp <= 0`` (``A`` is not positive definite in floating point).
    NotCertified
        ``maxiter`` iterations without the certificate.
    """
    b = np.asarray(b, dtype=float)
    lam, rtol, maxiter = float(lam), float(rtol), int(maxiter)
    if true_residual is None:
        def true_residual(x):
            r = b - apply(x)
            return r, r_norm(r), x_norm(x)
    x = np.zeros_like(b)
    bnorm = r_norm(b) if b_norm is None else float(b_norm)
    if bnorm == 0.0:                    # A x = 0: x* = 0 exactly (also the minimum-norm solution at λ = 0)
        return CGSolution(x=x, iterations=0, residual=0.0)
    floor = FLOOR * bnorm

    def target_of(xn):
        return rtol * lam * xn if lam > 0 else ZERO_LAMBDA_TARGET * bnorm

    r = b.copy()
    anchor, since = bnorm, 0            # the true residual at the last recomputation, iterations since
    fast = fast_apply is not None
    z = precondition(r)
    p = z.copy()
    rz = _dot(r, z)
    rn, target = bnorm, target_of(0.0)
    for it in range(1, maxiter + 1):
        Ap = fast_apply(p) if fast else apply(p)
        pAp = _dot(p, Ap)
        if fast and not (np.isfinite(pAp) and pAp > 0):
            fast = False
            Ap = apply(p)
            pAp = _dot(p, Ap)
        if not pAp > 0:
            raise ConvergenceError(f"{name}: conjugate gradients met a direction with pᵀAp = {pAp:.3g} (A is not "
                                   f"positive definite in floating point; lam = {lam!r})")
        step = rz / pAp
        x += step * p
        r -= step * Ap
        rn = r_norm(r)
        target = target_of(x_norm(x))
        since += 1
        if rn <= max(target, floor) or rn <= RELIABLE * anchor or since >= SEGMENT:
            since = 0
            r, rt, xt = true_residual(x)    # reliable update: certify with the true residual, not the recursive one
            target = target_of(xt)
            if rt <= max(target, floor) * 1.0000001:
                return CGSolution(x=x, iterations=it, residual=rt)
            if fast and not rt <= 0.5 * anchor:      # the cheap products stopped helping: float64 from here
                fast = False
                z = precondition(r)
                p = z.copy()
                rz = _dot(r, z)
                anchor = rn = rt
                continue
            anchor = rn = rt
        z = precondition(r)
        rz_new = _dot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    raise NotCertified(f"{name}: conjugate gradients did not reach |r| <= {target:.3g} in maxiter = {maxiter} "
                       f"iterations (|r| = {rn:.3g}; raise maxiter or rtol)", target, rn, x_norm(x), maxiter)
