r"""Memorization → generalization boundaries: in the number of prompts ``P`` (:func:`phase_boundary`) and in the task
diversity ``K`` of a pool (:func:`diversity_transition`).

``ΔEr(P) = (⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩`` is large when the model memorises (small task diversity
``P``) and of order 1 or below once it generalises in context. Following the seed (Figs. 5–6),
``ΔEr = 5`` is used as a rough boundary: ``P*`` is the largest ``P`` in the scanned range at
which the theory's ``ΔEr`` crosses the level downwards, so that ``ΔEr < 5`` for every larger
``P`` (near ``P = M`` at small ``λ`` the gap can have a double-descent bump; the definition
picks the transition after it: the library's one rule, :func:`linattn.transition_point`). The
theory uses ratios of dataset-averaged errors; exact and simulated counterparts apply
:func:`linattn.transition_point` to the same ratio of averages over training sets.

Task diversity (Raventós et al., "Pretraining task diversity and the emergence of non-Bayesian in-context learning
for regression", NeurIPS 2023; Lu et al., "Asymptotic theory of in-context learning by linear attention", PNAS
2025). With a pool of ``K`` tasks the model trained on ``P`` prompts does better on the pool's tasks than on fresh
ones while it memorises the pool, and equally well once it learns in context. The **pool advantage**

.. math:: A(K) = 1 − E_{IDG}/E_{ICL}

(in-distribution over fresh-task test error) falls from near 1 at ``K = 1`` towards 0 as ``K`` grows; ``K*`` is
where it crosses ``level`` (default ½) downwards, by the same rule as ``P*`` (the last downward crossing on the
``K`` grid, interpolated in ``log K``).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import optimize

import linattn
from linattn import _check as check
from linattn._arguments import choice, integer, positive, public, real
from linattn._results import short_repr
from linattn._validate import PROBLEM

from ._pool_theory import GAUSS_POOLS, POOL_WORK, theory_work
from ._stationary import _stationary


@public(pb=PROBLEM, level=positive(), n_scan=integer(minimum=2, maximum=10**5))    # each point: one theory solve
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

    Examples
    --------
    >>> import numpy as np, linattn, replica
    >>> P_star = replica.phase_boundary(linattn.Problem(10, 20, 0.1), np.inf, 0.01, model="full", n_scan=20)
    >>> bool(10 < P_star < 1e4)
    True
    """
    if not isinstance(P_range, (tuple, list)) or len(P_range) != 2:
        check.fail("P_range", P_range, "a pair (lo, hi) with 1 <= lo < hi")
    lo, hi = (check.real("P_range", p, low=1.0) for p in P_range)
    if not hi > lo:
        check.fail("P_range", P_range, "a pair (lo, hi) with 1 <= lo < hi")
    # each point (and each of Brent's ~50 steps at most): one theory, ~1e7 operations, or one pool theory of 16 pools
    per_point = 1e7 if pb.tasks is None else theory_work(pb, 16, law)
    check.work((n_scan + 50) * per_point, f"the theory at {n_scan} + 50 values of P", "n_scan")

    def gap(P):
        return _stationary(pb, float(P), beta, lam, model, law).gap

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


@dataclass(frozen=True, eq=False)
class DiversityTransition:
    """The task-diversity transition of the pool theory (module docstring).

    Attributes
    ----------
    K : ndarray (n,)
        Pool sizes of the curve.
    test, test_idg : ndarray (n,)
        The theory's fresh-task (ICL) and in-distribution (IDG) test errors at each ``K``.
    advantage : ndarray (n,)
        The pool advantage ``A(K) = 1 − E_IDG/E_ICL``.
    K_star : float or None
        Where ``A`` last crosses ``level`` downwards (interpolated in ``log K``); ``None`` without a crossing in the
        grid.
    level : float
    P : float
    lam : float or tuple
    model : str
    """

    __repr__ = short_repr

    K: np.ndarray
    test: np.ndarray
    test_idg: np.ndarray
    advantage: np.ndarray
    K_star: float | None
    level: float
    P: float
    lam: float | tuple
    model: str


@public(pb=PROBLEM, P=real(low=1.0), level=real(low=0.0, high=1.0), law=choice(("finite", "mp", "factor")),
        n_pools=integer(maximum=10_000), rng=None)
def diversity_transition(pb, P, beta, lam, K_values=None, level=0.5, model="full", law="finite", n_pools=16,
                         rng=0) -> DiversityTransition:
    r"""``K*``: the pool size where the pool advantage ``A(K) = 1 − E_IDG/E_ICL`` crosses ``level`` (module
    docstring), with the curve it is read from.

    Each ``K`` is one pool theory (:func:`replica.stationary` of ``pb`` with ``tasks = K``, ``law="finite"``: about
    0.15 s per pool at ``D = 10`` and 0.6 s at ``D = 20``, ``n_pools`` times that per ``K``).

    Parameters
    ----------
    pb : linattn.Problem
        ``D``, ``N``, the noise and the link; its ``tasks`` must be ``None`` (``K`` is what varies).
    P : float
        Training prompts (``>= 1``).
    beta : float
        Inverse temperature (``numpy.inf``: the ridge solution).
    lam : float or (float, float)
        Weight decay, as in :func:`replica.stationary`.
    K_values : array_like of int, optional
        Increasing pool sizes ``>= 1``; default: 16 log-spaced integers from 1 to ``16 D`` (``K*`` of Lu et al.'s
        theory is of order ``D``).
    level : float
        In ``(0, 1)``; default ½.
    model : {"full", "reduced"}
        Default ``"full"`` (Lu et al.'s model, where the pool theory was derived).
    law : {"finite", "mp", "factor"}
    n_pools : int
        Random pools averaged per ``K`` (:func:`replica.stationary`).
    rng : int

    Returns
    -------
    DiversityTransition

    Examples
    --------
    >>> import numpy as np, linattn, replica
    >>> pb = linattn.Problem(10, 20, 0.1)
    >>> tr = replica.diversity_transition(pb, 1000, np.inf, 0.01, K_values=[2, 5, 10, 20, 40], n_pools=4)
    >>> 5 < tr.K_star < 40
    True
    """
    if pb.tasks is not None:
        check.fail("pb", pb, "a Problem with tasks=None (the pool size K is what diversity_transition varies)")
    if pb.covariance is not None:       # Problem(tasks=K) refuses it, in words about tasks, not this argument
        check.fail("pb", pb, "a Problem with isotropic inputs (covariance=None): diversity_transition varies the "
                   "task-pool size K, and task pools are implemented for isotropic inputs only")
    if not 0.0 < level < 1.0:
        check.fail("level", level, "a number in (0, 1) (the pool advantage lies between 0 and 1)")
    if K_values is None:
        K_values = np.unique(np.round(np.geomspace(1, 16 * pb.D, 16)))
    Ks = check.finite_array("K_values", K_values, ndim=1, min_ndim=1)
    if Ks.size < 2 or np.any(Ks < 1) or np.any(Ks != np.round(Ks)) or np.any(np.diff(Ks) <= 0) \
            or np.any(Ks > check.MAX_INT):
        check.fail("K_values", K_values,
                   f"an increasing 1-d array of at least two integers >= 1 and <= {check.MAX_INT}")
    check.work(Ks.size * theory_work(pb, n_pools, law), f"{Ks.size} pool theories of {n_pools} pools at D = {pb.D}",
               "K_values or n_pools")
    # the largest pool is drawn n_pools (x 32 Gaussian-theory pools with law="finite") times: the pool theory's bound
    n_draw = n_pools * (GAUSS_POOLS if law == "finite" else 1)
    if Ks[-1] * n_draw * pb.D > POOL_WORK:
        check.fail("K_values", K_values, f"pool sizes K <= {int(POOL_WORK // (n_draw * pb.D))} (a pool average over "
                                         f"{n_draw} pools in D = {pb.D} draws at most {POOL_WORK:.3g} task entries)")
    theories = [_stationary(dataclasses.replace(pb, tasks=int(K)), P, beta, lam, model, law, n_pools=n_pools, rng=rng)
                for K in Ks]
    test = np.array([th.test for th in theories])
    idg = np.array([th.test_idg for th in theories])
    if np.any(test <= 0):
        check.fail("P", P, "a number of prompts at which the fresh-task error is positive (A = 1 − E_IDG/E_ICL)")
    advantage = 1.0 - idg / test
    K_star = linattn.transition_point(Ks, advantage, level)
    return DiversityTransition(K=Ks.astype(np.int64), test=test, test_idg=idg, advantage=advantage,
                               K_star=None if K_star is None else float(K_star), level=float(level),
                               P=float(theories[0].P), lam=theories[0].lam, model=model)
