"""The stationary theory of the dataset-averaged errors: one entry point for fresh tasks
(:func:`replica._theory.fresh_stationary`, the replica-symmetric theory) and task pools
(:func:`replica._pool_theory.pool_stationary`, which builds on the fresh-task theory; the dependency runs
one way), and the theory along a list of ``P``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from linattn import _check as check
from linattn._arguments import integer, public, real_array
from linattn._check import PROGRESS_DELAY
from linattn._results import ToXarray, short_repr
from linattn._threads import blas_threads

from ._pool_theory import blas_work, pool_arguments, pool_stationary, theory_work
from ._structured import structured_stationary
from ._theory import THEORY, StationaryTheory, checked_arguments, checked_decay, fresh_stationary, refuse_min_norm


@public(n_pools=integer(maximum=10_000), rng=None, **THEORY)      # each pool: one D x D eigenproblem
def stationary(pb, P, beta, lam, model="reduced", law="finite", channel="correlated", pool=None, n_pools=16,
               rng=0, N_test=None) -> StationaryTheory:
    """Replica-symmetric stationary errors (module docstring); with a task pool, the pool theory.

    For ``pb.tasks = K`` the errors come from ``replica/_pool_theory.py`` (``law="finite"``: prompts that are
    Gaussian given their context, ``replica/_pool_finite.py``; ``"mp"``: Gaussian features with the pool's moments;
    ``"factor"``: the earlier Gaussian-times-fresh-factor theory, a baseline), and the result also carries
    ``test_idg``.

    Structured tasks (``pb.task_covariance = S``, ``w ~ N(0, S)``): the theory of ``replica/_structured.py`` (the
    type equations of the pool theory with the law's types; ``law="finite"`` or ``"mp"``, the Gaussian-feature
    theory); the result also carries ``test_odg`` (fresh isotropic tasks of the same power) and, with a pool,
    ``test_idg``; ``*_se`` are the standard errors of the sampling inside the theory.

    Parameters
    ----------
    pb : linattn.Problem
    P : float
        Number of prompts (``P >= 1``; non-integer values interpolate the theory).
    beta : float
        Inverse temperature ``β > 0``; ``numpy.inf`` for zero temperature.
    lam : float or (float, float)
        Weight decay ``λ >= 0`` (``λ = 0``: min-norm limit; needs ``β = ∞`` when ``P < M``), or per block
        ``(λ_Γ, λ_v)`` for the full model (Lu et al.'s ridge ``λ_L`` is ``(λ_L/D, λ_L)``): the ``v`` block is
        rescaled exactly (:meth:`spectra.PromptLaw.with_block_decay`).
    model : {"reduced", "full"}
    law : {"finite", "mp"} (and ``"factor"`` with a task pool)
        Prompt law: exact finite-D law, or Marchenko–Pastur with decoupled labels (with a task pool: see above).
    channel : {"correlated", "decoupled"}
        With ``law="finite"``: keep (default) or drop the scale–label correlations (fresh tasks only).
    pool : None, "mp" or array_like (K, D)
        Task pool only: average over ``n_pools`` random pools (``None``), the pool's large-``D``
        (Marchenko–Pastur) spectrum (``"mp"``), or condition on the given pool.
    n_pools : int
        Random pools averaged when ``pool=None`` (``law="finite"``: pools of the finite-``D`` theory; the Gaussian
        control variate uses 32 times as many, ``replica/_pool_theory.py``).
    rng : int or numpy.random.Generator
        Randomness of those pools (an int seed; a Generator is reduced to one draw of it).
    N_test : int, optional
        Context length at which the test errors are evaluated (default: ``pb.N``, the training length). The
        trained parameters are those of context length ``pb.N``; only the test metric changes (``c``, ``c_v`` and,
        with a pool, ``Σ̃`` depend on the context length).


    Returns
    -------
    StationaryTheory

    Raises
    ------
    ValueError
        Bad input; ``λ = 0`` with ``P = M`` (divergent min-norm solution) or with ``P < M`` at finite ``β``.
    linattn.ConvergenceError
        If the saddle-point equations do not converge.

    Examples
    --------
    >>> import numpy as np, linattn, replica
    >>> th = replica.stationary(linattn.Problem(10, 20, 0.1), 500, np.inf, 0.01)   # zero temperature
    >>> bool(0 < th.train < th.test), th.converged
    (True, True)
    """
    if pool is not None and pb.tasks is None:
        check.fail("pool", "<given>", "None for fresh tasks (pb.tasks=None)")
    return _stationary(pb, P, beta, lam, model, law, channel, pool, n_pools, rng, N_test)


def _stationary(pb, P, beta, lam, model="reduced", law="finite", channel="correlated", pool=None, n_pools=16, rng=0,
                N_test=None):
    """:func:`stationary` of a checked problem, ``P``, ``β``, model, channel, ``n_pools`` and ``N_test``; ``λ``,
    ``law`` and, with a task pool, ``pool`` and ``rng`` are checked here against them."""
    if pb.task_covariance is not None:     # structured tasks w ~ N(0, S): replica._structured
        with blas_threads(blas_work(pb, model, law)):
            return structured_stationary(pb, P, beta, lam, model, law, pool, n_pools, rng, N_test)
    lam, lw = checked_arguments(pb, P, beta, lam, model, law, channel)
    if pb.tasks is not None:
        pool, rng = pool_arguments(pb, pool, law, rng)
        # many type averages (n_types x D_z products) and D x D eigenproblems per pool: one BLAS thread
        with blas_threads(blas_work(pb, model, law)):
            return pool_stationary(pb, P, beta, lam, model, law, pool, n_pools, rng, N_test)
    return fresh_stationary(pb, P, beta, lam, model, law, channel, N_test, lw)


def _theory_of_P(pb, beta, lam, model="reduced", law="finite", channel="correlated", N_test=None):
    """``P ↦`` :func:`_stationary` ``(pb, P, beta, lam, …)`` along a curve in ``P``: for fresh isotropic tasks ``λ``
    and the law are checked once, here, and only what depends on ``P`` at each point."""
    if pb.tasks is not None or pb.task_covariance is not None:
        return lambda P: _stationary(pb, P, beta, lam, model, law, channel, N_test=N_test)
    lam, lw, M = checked_decay(pb, lam, model, law, channel)

    def at(P):
        refuse_min_norm(P, beta, lam, M)
        return fresh_stationary(pb, P, beta, lam, model, law, channel, N_test, lw)

    return at


@dataclass(frozen=True, eq=False)
class StationaryCurve(ToXarray, xarray_dim="P"):
    """Theory along a list of ``P`` values (arrays), with the worst solver residual (``test_idg`` and, at
    finite ``β``, no ``free_energy`` for a task pool).

    Attributes
    ----------
    P : ndarray
    train, test, gap : ndarray
        The theory's ``⟨E_t⟩``, ``⟨E_g⟩`` and ``ΔEr`` at each ``P``.
    free_energy : ndarray or None
        ``F`` at each ``P`` (``None`` for a task pool at finite ``β``).
    converged : bool
        Every point converged.
    max_residual : float
        The worst solver residual.
    test_idg : ndarray or None
        In-distribution errors with a task pool, else ``None``.
    N_test : int or None
        Context length of the test errors (``None``: the training length).
    train_se, test_se : ndarray
        Standard errors of the sampling inside the theory at each ``P`` (:class:`StationaryTheory`; zeros for fresh
        tasks).
    test_idg_se : ndarray or None
        The same for ``test_idg`` (``None`` for fresh tasks).
    """

    __repr__ = short_repr

    P: np.ndarray
    train: np.ndarray
    test: np.ndarray
    gap: np.ndarray
    free_energy: np.ndarray | None
    converged: bool
    max_residual: float
    test_idg: np.ndarray | None = None
    N_test: int | None = None
    train_se: np.ndarray | None = None
    test_se: np.ndarray | None = None
    test_idg_se: np.ndarray | None = None


@public(pb=THEORY["pb"], P_values=real_array(low=1.0, min_ndim=1), channel=THEORY["channel"])
def stationary_curve(pb, P_values, beta, lam, model="reduced", law="finite", channel="correlated",
                     N_test=None, progress=True) -> StationaryCurve:
    """:func:`stationary` at every ``P`` of ``P_values`` (a theory curve).

    Cost: one theory per value of ``P``, about 1–2 ms each for fresh tasks at ``D = 10`` (a curve of 100 points in
    a fraction of a second) and one pool theory (16 pools, a fraction of a second at ``D = 10``–20) per point with a
    task pool.

    Parameters
    ----------
    pb, beta, lam, model, law, channel, N_test
        As in :func:`stationary` (``N_test``: the test prompts' context length, ``None`` = ``N``; ``test``,
        ``test_idg`` and ``gap`` are then at ``N_test``).
    P_values : array_like (n,)
        Numbers of prompts (``>= 1``).
    progress : bool
        Show a progress bar (over the values of ``P``) when the call lasts more than two seconds.

    Returns
    -------
    StationaryCurve
    """
    Ps = P_values
    if Ps.ndim != 1 or Ps.size == 0:
        check.fail("P_values", Ps.tolist(), "a non-empty 1-d array of numbers of prompts >= 1")
    # each point solves the saddle-point equations (~1.5 ms); with a pool, one pool theory of 16 pools
    per_point = 1e7 if pb.tasks is None else theory_work(pb, 16, law)
    check.work(per_point * Ps.size, f"the theory at {Ps.size} values of P", "P_values")
    theory = _theory_of_P(pb, beta, lam, model, law, channel, N_test)
    pts = [theory(float(P)) for P in tqdm(Ps, desc=f"stationary curve {model}", disable=not progress, leave=False,
                                          delay=PROGRESS_DELAY)]
    return StationaryCurve(P=Ps, train=np.array([p.train for p in pts]), test=np.array([p.test for p in pts]),
                           gap=np.array([p.gap for p in pts]),
                           free_energy=(None if any(p.free_energy is None for p in pts)
                                        else np.array([p.free_energy for p in pts])),
                           converged=all(p.converged for p in pts), max_residual=max(p.residual for p in pts),
                           test_idg=None if pb.tasks is None else np.array([p.test_idg for p in pts]),
                           N_test=N_test, train_se=np.array([p.train_se for p in pts]),
                           test_se=np.array([p.test_se for p in pts]),
                           test_idg_se=None if pb.tasks is None else np.array([p.test_idg_se for p in pts]))
