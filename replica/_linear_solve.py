r"""The linear covariance equations of the pool theories, ``(I − L) c = a``, solved by GMRES with the checks it lacks.

Both finite-``D`` pool theories (``replica/_pool_finite.py``, the learners' pool theory in
``replica/_kernel_theory.py``) end with a linear equation for the fluctuation covariance ``C``:
``C − L(C) = A₀``, with ``L`` a positive map whose spectral radius is below 1 away from the interpolation
threshold. :func:`solve_covariance` solves it by restarted GMRES (scipy) from the start ``c = a`` and adds what the
theories need on every machine and scipy version:

* ``a = 0`` (the right-hand side underflowed, ``λ ≳ 1e154``): ``c = 0`` exactly;
* the equation is solved for ``c / max|a|`` (no norm of ``a ~ 1e-200`` underflows);
* a start that already solves it to ``tol`` (large ``λ``, where ``L(a) ≪ a``) is returned as is — scipy 1.12's
  GMRES divides 0 by 0 there and returns NaN;
* the residual ``‖(I − L)c − a‖ / ‖a‖`` is computed here, not taken from GMRES' ``info``.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import linalg as sparse_linalg

from linattn import _check as check


def solve_covariance(apply_L, a, tol, restart, maxiter):
    """Solve ``c − L(c) = a`` (flattened), returning ``(c, info, relative residual)``.

    Parameters
    ----------
    apply_L : callable
        ``c ↦ L(c)`` on flat float64 vectors (linear).
    a : ndarray (n,)
        The right-hand side (finite).
    tol : float
        GMRES' relative tolerance.
    restart : int
        GMRES' restart length.
    maxiter : int
        Outer GMRES iterations (restarts).

    Returns
    -------
    c : ndarray (n,)
    info : int
        0 when GMRES (or the start) reached ``tol``; GMRES' ``info`` otherwise.
    residual : float
        ``‖c − L(c) − a‖ / ‖a‖`` (0 for ``a = 0``).
    """
    if not callable(apply_L):
        check.fail("apply_L", apply_L, "a callable c ↦ L(c)")
    a = check.finite_array("a", a, ndim=1)
    tol = check.tolerance("tol", tol)
    restart = min(check.positive_int("restart", restart, maximum=10**4), a.size)     # GMRES' own clamp
    maxiter = check.positive_int("maxiter", maxiter, maximum=10**6)
    check.work(float(maxiter) * restart * (a.size * restart + check.PYTHON_TRIP), "GMRES", "maxiter or restart")
    if not np.any(a):
        return np.zeros_like(a), 0, 0.0
    scale = float(np.max(np.abs(a)))
    rhs = a / scale

    def L(c):
        out = np.asarray(apply_L(c))
        if out.shape != c.shape or not np.all(np.isfinite(out)) or np.iscomplexobj(out):
            check.fail("apply_L", apply_L, f"a map to finite real vectors of shape {c.shape}")
        return out

    def residual(c):
        return float(np.linalg.norm(c - L(c) - rhs) / np.linalg.norm(rhs))

    res = residual(rhs)
    if res < tol:
        return a.copy(), 0, res
    op = sparse_linalg.LinearOperator((rhs.size, rhs.size), matvec=lambda c: c - L(c), dtype=float)
    c, info = sparse_linalg.gmres(op, rhs, x0=rhs, rtol=tol, atol=0.0, restart=restart, maxiter=maxiter)
    return c * scale, int(info), residual(c)
