r"""Memorization → generalization boundaries from the relative generalization gap.

``ΔEr(P) = (⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩`` is large when the model memorises (small task diversity
``P``) and of order 1 or below once it generalises in context. Following the seed (Figs. 5–6),
``ΔEr = 5`` is used as a rough boundary: ``P*`` is the largest ``P`` in the scanned range at
which the theory's ``ΔEr`` crosses the level downwards, so that ``ΔEr < 5`` for every larger
``P`` (near ``P = M`` at small ``λ`` the gap can have a double-descent bump; the definition
picks the transition after it: the library's one rule, :func:`linattn.transition_point`). The
theory uses ratios of dataset-averaged errors; exact and simulated counterparts apply
:func:`linattn.transition_point` to the same ratio of averages over training sets.
"""
from __future__ import annotations

import numpy as np
from scipy import optimize

import linattn
from linattn import check, validate

from .stationary import stationary


def phase_boundary(pb, beta, lam, level=5.0, model="reduced", law="finite", P_range=(1.0, 1e5), n_scan=80):
    """``P*`` where the theory's ``ΔEr`` last crosses ``level`` downwards (module docstring).

    The crossing is bracketed on a log grid by the library's rule (:func:`linattn.transition_point`)
    and then located to ``1e-10`` relative by ``brentq`` on the theory itself.

    Parameters
    ----------
    pb : linattn.Problem
    beta : float
        ``β > 0`` (``inf``: zero temperature).
    lam : float
        ``λ >= 0``.
    level : float
        Boundary level (the seed's 5).
    model : {"reduced", "full"}
    law : {"finite", "mp"}
    P_range : (float, float)
        Scanned range ``1 <= lo < hi``.
    n_scan : int
        Grid points of the scan (``>= 2``).

    Returns
    -------
    float or None
        ``None`` if there is no such crossing in ``P_range``.
    """
    validate.problem(pb)
    level = check.positive("level", level)
    if not isinstance(P_range, (tuple, list)) or len(P_range) != 2:
        check.fail("P_range", P_range, "a pair (lo, hi) with 1 <= lo < hi")
    lo, hi = (check.real("P_range", p, low=1.0) for p in P_range)
    if not hi > lo:
        check.fail("P_range", P_range, "a pair (lo, hi) with 1 <= lo < hi")
    n_scan = check.positive_int("n_scan", n_scan, minimum=2, maximum=10**5)    # each point: one theory solve

    def gap(P):
        return stationary(pb, P, beta, lam, model, law).gap

    grid = np.geomspace(lo, hi, n_scan)
    vals = np.array([gap(P) for P in grid])
    guess = linattn.transition_point(grid, vals, level)
    if guess is None:
        return None
    k = int(np.searchsorted(grid, guess, side="right")) - 1 if guess < grid[-1] else grid.size - 2
    k = min(max(k, 0), grid.size - 2)
    if not np.isfinite(vals[k]):
        return guess
    return float(np.exp(optimize.brentq(lambda x: gap(np.exp(x)) - level, np.log(grid[k]), np.log(grid[k + 1]),
                                        xtol=1e-10, rtol=1e-10)))
