r"""Memorization → generalization boundaries from the relative generalization gap.

``ΔEr(P) = (⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩`` is large when the model memorises (small task diversity
``P``) and of order 1 or below once it generalises in context. Following the seed (Figs. 5–6),
``ΔEr = 5`` is used as a rough boundary: ``P*`` is the largest ``P`` in the scanned range at
which the theory's ``ΔEr`` crosses the level downwards, so that ``ΔEr < 5`` for every larger
``P`` (near ``P = M`` at small ``λ`` the gap can have a double-descent bump; the definition
picks the transition after it). The theory uses ratios of dataset-averaged errors; the exact
counterpart (:func:`exact_boundary`) uses the same ratio of averages over training sets.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from linattn import _validate as check

from .theory import stationary


def _log_crossing(f, P_lo, P_hi, level):
    return float(np.exp(optimize.brentq(lambda x: f(np.exp(x)) - level, np.log(P_lo), np.log(P_hi),
                                        xtol=1e-10, rtol=1e-10)))


def phase_boundary(pb, beta, lam, level=5.0, model="reduced", law="finite", P_range=(1.0, 1e5), n_scan=80):
    """``P*`` where the theory's ``ΔEr`` last crosses ``level`` downwards (module docstring).

    Returns ``None`` if ``ΔEr`` stays on one side of ``level`` over ``P_range``.
    """
    level = check.positive("level", level)
    lo, hi = (check.positive("P_range", p) for p in P_range)
    if not hi > lo:
        raise ValueError(f"P_range must be increasing; got {P_range!r}")

    def gap(P):
        return stationary(pb, P, beta, lam, model, law).gap

    grid = np.geomspace(lo, hi, check.positive_int("n_scan", n_scan, minimum=2))
    vals = np.array([gap(P) for P in grid])
    down = np.flatnonzero((vals[:-1] >= level) & (vals[1:] < level) & np.isfinite(vals[1:]))
    if down.size == 0 or np.any(vals[down[-1] + 1:] >= level):
        return None
    k = down[-1]
    if not np.isfinite(vals[k]):
        return float(grid[k + 1])
    return _log_crossing(gap, grid[k], grid[k + 1], level)


@dataclass(frozen=True, eq=False)
class Boundary:
    """``P*`` against a control parameter (``N`` or ``D``): theory and exact dataset averages."""

    name: str
    values: np.ndarray
    P_theory: np.ndarray
    P_exact: np.ndarray


def exact_boundary(P, train_mean, test_mean, level=5.0):
    """``P*`` from dataset-averaged exact errors on a ``P`` grid: last downward crossing of the
    ratio of averages (log-linear interpolation); ``None`` if there is none."""
    P = np.asarray(P, float)
    tr = np.asarray(train_mean, float)
    with np.errstate(divide="ignore", over="ignore"):
        g = np.where(tr > 0, (np.asarray(test_mean) - tr) / np.where(tr > 0, tr, 1.0), np.inf)
    down = np.flatnonzero((g[:-1] >= level) & (g[1:] < level))
    if down.size == 0 or np.any(g[down[-1] + 1:] >= level):
        return None
    k = down[-1]
    x0, x1, y0, y1 = np.log(P[k]), np.log(P[k + 1]), g[k], g[k + 1]
    if not np.isfinite(y0):
        return float(P[k + 1])
    return float(np.exp(x0 + (level - y0) * (x1 - x0) / (y1 - y0)))
