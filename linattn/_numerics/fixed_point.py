"""Anderson mixing: the one fixed-point accelerator of the library (the finite-D pool theory and the learners'
theories).

Anderson mixing (Anderson, J. ACM 12 (1965); Walker & Ni, SIAM J. Numer. Anal. 49 (2011)) solves ``x = g(x)`` by
taking as the next iterate the combination of the last ``depth`` images ``g(x_i)`` whose residuals
``f_i = g(x_i) − x_i`` combine to the least norm (in the difference form: ``γ = argmin |f_m − ΔF γ|``,
``x_{m+1} = g(x_m) − ΔG γ``). A mixed candidate that ``valid`` rejects (e.g. not positive definite) restarts the
history from the last pair and takes the plain step ``x_{m+1} = g(x_m)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import _check as check

from .._results import short_repr


@dataclass(frozen=True, eq=False)
class FixedPoint:
    """``x`` (the last image ``g(x)`` when converged), ``iterations``, ``residual`` (the last relative change
    ``max|g(x) − x| / max|g(x)|``) and ``converged`` (``residual < tol``)."""

    __repr__ = short_repr

    x: np.ndarray
    iterations: int
    residual: float
    converged: bool


def anderson(g, x0, tol, max_iterations, depth=6, valid=None, project=None) -> FixedPoint:
    r"""Fixed point ``x = g(x)`` of a map of arrays (any shape) by Anderson mixing (module docstring).

    Parameters
    ----------
    g : callable
        ``x ↦ g(x)``, arrays of the shape of ``x0``.
    x0 : ndarray
        Start.
    tol : float
        Stop when ``max|g(x) − x| <= tol · max|g(x)|`` (strictly below).
    max_iterations : int
    depth : int
        Number of past pairs mixed.
    valid : callable, optional
        ``x ↦ bool``: whether a mixed candidate may be taken.
    project : callable, optional
        Applied to a mixed candidate first (e.g. the symmetric part of a matrix).

    Returns
    -------
    FixedPoint
        Not converged after ``max_iterations``, or ``g`` left float64's range (an image with ``inf`` or ``nan``:
        ``residual = inf``, the last finite iterate): ``converged=False`` (the caller raises, naming its own equation).
    """
    x0 = np.asarray(x0, dtype=float)
    xs, gs = [], []
    x, res = x0, np.inf
    for it in range(1, max_iterations + 1):
        gx = np.asarray(g(x))
        if gx.shape != x0.shape or gx.dtype.kind not in "iuf":
            check.fail("g", g, f"a map returning real arrays of the shape of x0 {x0.shape}; got "
                               f"{'an array of shape ' + str(gx.shape) if gx.dtype.kind in 'iufc' else gx.dtype}")
        if not np.all(np.isfinite(gx)):         # the map overflowed: not converged (the caller names the equation)
            return FixedPoint(x=x, iterations=it, residual=np.inf, converged=False)
        res = float(np.max(np.abs(gx - x)) / max(float(np.max(np.abs(gx))), 1e-300))
        if res < tol:
            return FixedPoint(x=gx, iterations=it, residual=res, converged=True)
        xs.append(x.ravel())
        gs.append(gx.ravel())
        xs, gs = xs[-depth:], gs[-depth:]
        if len(xs) > 1:
            G = np.array(gs)
            Fm = G - np.array(xs)                               # residuals (m, n)
            dF = Fm[1:] - Fm[:-1]
            coef, *_ = np.linalg.lstsq(dF.T, Fm[-1], rcond=None)
            cand = (gs[-1] - coef @ (G[1:] - G[:-1])).reshape(x.shape)
            if project is not None:
                cand = project(cand)
            if valid is None or valid(cand):
                x = cand
                continue
            xs, gs = xs[-1:], gs[-1:]
        x = gx
    return FixedPoint(x=x, iterations=max_iterations, residual=res, converged=False)
