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
``K`` grid, interpolated in ``log K``). A second question has its own criterion: at what ``K`` does the ICL error
come within a fraction ``x`` of its value at ``K = ∞`` (fresh tasks)? That ``K*`` is where the **ICL excess**

.. math:: e(K) = E_{ICL}(K)/E_{ICL}(∞) − 1

crosses ``x`` downwards, by the same rule (``criterion="icl_within"``).
"""
from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import optimize

import linattn
from linattn import _check as check
from linattn._arguments import boolean, choice, integer, optional, positive, public, real
from linattn._results import ToXarray, short_repr
from linattn._threads import blas_threads
from linattn._validate import PROBLEM

from ._pool_theory import GAUSS_POOLS, POOL_WORK, blas_work, fresh_limit, pool_sweep, theory_work
from ._stationary import _stationary, _theory_of_P
from ._theory import checked_arguments


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

    theory = _theory_of_P(pb, beta, lam, model, law)

    def gap(P):
        return theory(float(P)).gap

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
class DiversityTransition(ToXarray, xarray_dim="K", xarray_coords=("P", "lam")):
    """The task-diversity transition of the pool theory (module docstring).

    Attributes
    ----------
    K : ndarray (n,)
        Pool sizes of the curve.
    test, test_idg : ndarray (n,)
        The theory's fresh-task (ICL) and in-distribution (IDG) test errors at each ``K``.
    advantage : ndarray (n,)
        The pool advantage ``A(K) = 1 − E_IDG/E_ICL``.
    excess : ndarray (n,)
        The ICL error's relative excess over its ``K = ∞`` value, ``E_ICL(K)/E_ICL(∞) − 1``.
    test_inf : float
        ``E_ICL(∞)``: the fresh-task error of the same theory in the limit of infinitely many tasks
        (:func:`diversity_transition`).
    K_star : float or None
        Where the criterion's curve (``advantage``, or ``excess``) last crosses ``level`` downwards (interpolated in
        ``log K``); ``None`` without a crossing in the grid.
    level : float
    criterion : {"advantage", "icl_within"}
    P : float
    lam : float or tuple
    model : str
    law : str
    test_se, test_idg_se : ndarray (n,)
        Standard errors of the sampling inside the theory (its average over random pools) at each ``K``.
    """

    __repr__ = short_repr

    K: np.ndarray
    test: np.ndarray
    test_idg: np.ndarray
    advantage: np.ndarray
    excess: np.ndarray
    test_inf: float
    K_star: float | None
    level: float
    criterion: str
    P: float
    lam: float | tuple
    model: str
    law: str
    test_se: np.ndarray
    test_idg_se: np.ndarray


#: the transition's criteria and their default levels (module docstring)
CRITERIA = {"advantage": 0.5, "icl_within": 0.1}


@public(pb=PROBLEM, P=real(low=1.0), level=optional(positive()), law=choice(("finite", "mp", "factor")),
        n_pools=integer(maximum=10_000), rng=None, criterion=choice(tuple(CRITERIA)), refine=boolean())
def diversity_transition(pb, P, beta, lam, K_values=None, level=None, model="reduced", law="finite", n_pools=16,
                         rng=0, criterion="advantage", refine=False, progress=True) -> DiversityTransition:
    r"""``K*``: the pool size where the pool theory's curve in ``K`` crosses ``level`` (module docstring), with the
    curve it is read from. Two criteria:

    * ``criterion="advantage"`` (default): the pool advantage ``A(K) = 1 − E_IDG/E_ICL`` falls through ``level``
      (default ½): above ``K*`` the model does nearly as well on fresh tasks as on the pool's.
    * ``criterion="icl_within"``: the ICL error comes within ``level`` (default 0.1, "within 10 %") of its
      ``K = ∞`` value, ``E_ICL(K)/E_ICL(∞) − 1 < level``: above ``K*`` more task diversity no longer pays.

    The two answer different questions and differ several-fold (at ``D = 10``, ``N = 20``, ``σ = 0.1``, ``P = 1000``,
    ``λ = 0.01``, full model: ``K* ≈ 11`` by the advantage at ½, ``K* ≈ 40`` by the ICL error within 10 %).
    ``E_ICL(∞)`` is the fresh-task theory (``replica.stationary`` with ``tasks=None``, the limit the pool theory
    tends to: within 7e-5 relative at ``K = 2¹⁶``, ``D = 10``; for ``law="mp"`` the Gaussian theory at fresh tasks,
    its own limit; with a task covariance, the theory of fresh tasks from ``N(0, S)``).

    Cost: each ``K`` is one pool theory (:func:`replica.stationary` with ``tasks = K``, ``law="finite"``): measured
    3.5 s for the default 15 values of ``K`` with ``n_pools=4`` at ``D = 10``, ``N = 20``, ``P = 1000`` (full model,
    on a busy 2-core machine: about 0.06 s per pool and ``K``); the type averages grow like ``D²``, so roughly four
    times that per pool at ``D = 20``. The pools of the largest ``K`` are drawn once and sliced (nested pools), the
    Gaussian control variate of all pools of a ``K`` is batched, and the type averages run on one BLAS thread.
    ``refine=True`` adds about ``log₂`` of the bracketing interval's width in theories. Either criterion also solves
    the fresh-task theory once (``E_ICL(∞)``, for the ``excess`` curve; its prompt law is cached per problem and
    model, a fraction of a second the first time). A tqdm bar counts the theories (``progress=False`` silences it;
    one update per theory, microseconds next to a theory).

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
    level : float, optional
        The criterion's level: in ``(0, 1)`` for the advantage (default ½), ``> 0`` for the ICL excess (default 0.1).
    model : {"reduced", "full"}
        Default ``"reduced"``, as everywhere in :mod:`replica` (``"full"`` is Lu et al.'s model; it was this
        function's default before and reproduces its earlier numbers).
    law : {"finite", "mp", "factor"}
    n_pools : int
        Random pools averaged per ``K`` (:func:`replica.stationary`).
    rng : int
    criterion : {"advantage", "icl_within"}
    refine : bool
        Also bisect (in ``log K``, on integers) the grid interval where the curve last crosses ``level``, until it is
        two consecutive integers: ``K*`` is then interpolated between ``K`` and ``K + 1`` (about ``log₂`` of the
        interval's width more theories; the visited ``K`` join the curve). Default: ``K*`` from the grid alone.
    progress : bool
        A progress bar over the theories (one per ``K``).

    Returns
    -------
    DiversityTransition

    Examples
    --------
    >>> import numpy as np, linattn, replica
    >>> pb = linattn.Problem(10, 20, 0.1)
    >>> tr = replica.diversity_transition(pb, 1000, np.inf, 0.01, K_values=[2, 5, 10, 20, 40], model="full",
    ...                                   n_pools=4, progress=False)
    >>> 5 < tr.K_star < 40
    True
    """
    if pb.tasks is not None:
        check.fail("pb", pb, "a Problem with tasks=None (the pool size K is what diversity_transition varies)")
    if pb.covariance is not None:       # Problem(tasks=K) refuses it, in words about tasks, not this argument
        check.fail("pb", pb, "a Problem with isotropic inputs (covariance=None): diversity_transition varies the "
                   "task-pool size K, and task pools are implemented for isotropic inputs only")
    level = CRITERIA[criterion] if level is None else level
    if criterion == "advantage" and not level < 1.0:
        check.fail("level", level, "a number in (0, 1) (the pool advantage lies between 0 and 1)")
    if K_values is None:
        K_values = np.unique(np.round(np.geomspace(1, 16 * pb.D, 16)))
    Ks = check.finite_array("K_values", K_values, ndim=1, min_ndim=1)
    if Ks.size < 2 or np.any(Ks < 1) or np.any(Ks != np.round(Ks)) or np.any(np.diff(Ks) <= 0) \
            or np.any(Ks > check.MAX_INT):
        check.fail("K_values", K_values,
                   f"an increasing 1-d array of at least two integers >= 1 and <= {check.MAX_INT}")
    n_theories = Ks.size + (int(np.ceil(np.log2(Ks[-1]))) if refine else 0)     # a bisection's steps at most
    check.work(n_theories * theory_work(pb, n_pools, law), f"{n_theories} pool theories of {n_pools} pools at "
               f"D = {pb.D}", "K_values or n_pools")
    # the largest pool is drawn n_pools (x 32 Gaussian-theory pools with law="finite") times: the pool theory's bound
    n_draw = n_pools * (GAUSS_POOLS if law == "finite" else 1)
    if Ks[-1] * n_draw * pb.D > POOL_WORK:
        check.fail("K_values", K_values, f"pool sizes K <= {int(POOL_WORK // (n_draw * pb.D))} (a pool average over "
                                         f"{n_draw} pools in D = {pb.D} draws at most {POOL_WORK:.3g} task entries)")
    rng = check.seed_int("rng", rng)
    if pb.task_covariance is not None:          # structured tasks: one theory per K (replica._structured)
        threads = contextlib.nullcontext()
    else:
        lam, _ = checked_arguments(dataclasses.replace(pb, tasks=int(Ks[0])), P, beta, lam, model, law, "correlated")
        threads = blas_threads(blas_work(pb, model, law))
    with threads:
        if pb.task_covariance is not None:
            def at(K):
                return _stationary(dataclasses.replace(pb, tasks=int(K)), P, beta, lam, model, law, n_pools=n_pools,
                                   rng=rng)

            test_inf = _stationary(pb, P, beta, lam, model, law).test       # fresh tasks from N(0, S)
        else:
            at = pool_sweep(pb, int(Ks[-1]), P, beta, lam, model, law, n_pools, rng)
            test_inf = fresh_limit(pb, P, beta, lam, model, law)
        if criterion == "advantage":
            def value(th):
                return 1.0 - th.test_idg / th.test
        else:
            def value(th):
                return th.test / test_inf - 1.0
        found = _scan(at, Ks.astype(np.int64), value, level, refine,
                      dict(desc=f"diversity_transition D={pb.D} P={P:g}", disable=not progress, leave=False))
    K = np.array(sorted(found), dtype=np.int64)
    theories = [found[k] for k in K]
    test = np.array([th.test for th in theories])
    idg = np.array([th.test_idg for th in theories])
    if np.any(test <= 0):
        check.fail("P", P, "a number of prompts at which the fresh-task error is positive (A = 1 − E_IDG/E_ICL)")
    advantage = 1.0 - idg / test
    excess = test / test_inf - 1.0
    K_star = linattn.transition_point(K.astype(float), advantage if criterion == "advantage" else excess, level)
    lam = theories[0].lam if pb.task_covariance is not None else lam
    return DiversityTransition(K=K, test=test, test_idg=idg, advantage=advantage, excess=excess,
                               test_inf=float(test_inf), K_star=None if K_star is None else float(K_star),
                               level=float(level), criterion=criterion, P=float(P),
                               lam=lam if isinstance(lam, tuple) else float(lam), model=model, law=law,
                               test_se=np.array([th.test_se for th in theories]),
                               test_idg_se=np.array([th.test_idg_se for th in theories]))


def _scan(at, Ks, value, level, refine, bar):
    """The theories ``at(K)`` at every ``K`` of ``Ks`` (a dict ``K → theory``) and, with ``refine``, at the integers
    a bisection in ``log K`` visits inside the grid interval of the last downward crossing of ``value`` through
    ``level``, until that interval is two consecutive integers. ``bar``: the tqdm arguments (one update per theory)."""
    from tqdm.auto import tqdm

    found = {}
    with tqdm(total=Ks.size, **bar) as progress:
        for K in Ks:
            found[int(K)] = at(int(K))
            progress.update()
        if not refine:
            return found
        vals = np.array([value(found[int(K)]) for K in Ks])
        down = np.flatnonzero((vals[:-1] >= level) & (vals[1:] < level))
        if down.size == 0 or np.any(vals[down[-1] + 1:] >= level):
            return found        # no crossing in the grid (transition_point: None)
        lo, hi = int(Ks[down[-1]]), int(Ks[down[-1] + 1])
        while hi - lo > 1:
            mid = min(max(int(round(np.sqrt(lo * hi))), lo + 1), hi - 1)
            progress.total += 1
            progress.refresh()
            found[mid] = at(mid)
            progress.update()
            lo, hi = (mid, hi) if value(found[mid]) >= level else (lo, mid)
    return found
