"""Experiments on factorized attention shared by the figures, the report and the tests.

:func:`staged_run` (closed form vs exact ODE vs online SGD for ``Γ = PQ`` on an anisotropic
spectrum), :func:`saddle_comparison` (separate key/query heads vs one merged head: exact ODE and SGD),
:func:`finite_p_gap` (ΔEr and contrast
ratio of the merged and the product parametrization trained on the same datasets).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import dynamics
import linattn
from diagnostics import crossing_times
from linattn import _check as check
from linattn._numerics.stats import mean_se
from linattn._parametrizations import Parametrization

from ..simulators._factorized_sims import FactorizedRun, factorized_descent


def noise_free_problem(spectrum, N):
    """The noise-free problem with input eigenvalues ``spectrum`` (identity basis)."""
    spectrum = check.real_array("spectrum", spectrum, low=0.0, low_open=True)
    return linattn.Problem(spectrum.size, N, 0.0, covariance=spectrum)


def n_steps_covering(t_max, lr, record, culprit="t_max"):
    """Steps of size ``lr`` covering ``t_max``, rounded up to a multiple of ``record``; more than
    :data:`linattn._check.MAX_INT` steps are refused naming ``culprit`` (the caller's argument that set ``t_max``)."""
    lr, record = check.positive("lr", lr), check.positive_int("record", record)
    with np.errstate(over="ignore"):
        n = np.ceil(t_max / lr)
    if not n <= check.MAX_INT:
        check.fail(culprit, f"<{n:.3g} steps of lr = {lr:g}>", f"small enough that the run takes at most "
                   f"{check.MAX_INT} steps of size lr")
    n = int(n)
    return n + (-n) % record


@dataclass(frozen=True)
class StagedRun:
    """Closed form, exact ODEs and SGD of ``Γ = PQ`` (``"value_kq_modes"``) from a small start.

    Attributes
    ----------
    problem : linattn.Problem
    a0 : float
    times : ndarray (T,)
    closed_modes, closed_test : ndarray (T, D), (T,)
        Logistic law from the balanced aligned start (exact for it).
    ode_random_modes, ode_random_test : ndarray
        Exact population ODE from a small *random* start of the same size (not aligned, not balanced).
    sgd : FactorizedRun
        Online SGD from the balanced aligned start (``n_chains`` chains).
    t_half, t_half_sgd, t_half_random : ndarray (D,), (n_chains, D), (D,)
        Half-rise times: closed form, SGD, exact ODE from the random start.
    """

    problem: linattn.Problem
    a0: float
    times: np.ndarray
    closed_modes: np.ndarray
    closed_test: np.ndarray
    ode_random_modes: np.ndarray
    ode_random_test: np.ndarray
    sgd: FactorizedRun
    t_half: np.ndarray
    t_half_sgd: np.ndarray
    t_half_random: np.ndarray


def staged_run(spectrum, N, a0=1e-3, lr=0.05, batch=128, n_chains=4, record=50, rng=0) -> StagedRun:
    """Run :class:`StagedRun` for input eigenvalues ``spectrum`` (noise-free, identity basis).

    Parameters
    ----------
    spectrum : array_like (D,)
    N : int
    a0 : float
        Initial mode amplitude (``p_α = q_α = √a0``); the random start has ``‖Γ(0)‖_F = a0 √D``.
    lr : float
        SGD step ``η``; the time of step ``k`` is ``kη``.
    batch, n_chains, record : int
    rng : int or numpy.random.Generator

    Returns
    -------
    StagedRun
    """
    pb = noise_free_problem(spectrum, N)
    a0 = check.positive("a0", a0)
    mc = dynamics.mode_constants(pb)
    t_half = dynamics.escape_times(pb, a0)
    n_steps = n_steps_covering(1.6 * t_half.max(), lr, record, culprit="lr")
    par = Parametrization("value_kq_modes", pb.D)
    sgd = factorized_descent(pb, par, par.aligned(np.full(pb.D, a0)), n_steps, lr, batch=batch, record=record,
                             n_chains=n_chains, rng=rng)
    times = sgd.steps * lr
    closed = dynamics.logistic_modes(pb, a0, times)
    gen = np.random.default_rng(rng)
    th = gen.standard_normal(par.n_params)
    th *= np.sqrt(a0 * np.sqrt(pb.D)) / np.linalg.norm(th[: pb.D**2])     # ‖P‖ = ‖Q‖ ≈ (a0 √D)^{1/2}
    ode = dynamics.mean_flow(pb, par, th, times)
    half = 0.5 * mc.a_inf
    return StagedRun(problem=pb, a0=a0, times=times, closed_modes=closed,
                     closed_test=dynamics.mode_loss(pb, closed),
                     ode_random_modes=ode.modes, ode_random_test=ode.test, sgd=sgd, t_half=t_half,
                     t_half_sgd=crossing_times(times, np.swapaxes(sgd.modes, 1, 2), half[None, :]),
                     t_half_random=crossing_times(times, ode.modes.T, half))


@dataclass(frozen=True)
class SaddleComparison:
    """Separate key/query heads vs one merged head on the same spectrum: exact ODEs and online SGD.

    Attributes
    ----------
    problem : linattn.Problem
    saddles : ndarray (D + 1,)
        :func:`dynamics.saddle_losses`.
    times : ndarray (T,)
    ode_separate, ode_merged : ndarray (T,)
        Exact population test error along the flows.
    sgd_separate, sgd_merged : FactorizedRun
    """

    problem: linattn.Problem
    saddles: np.ndarray
    times: np.ndarray
    ode_separate: np.ndarray
    ode_merged: np.ndarray
    sgd_separate: FactorizedRun
    sgd_merged: FactorizedRun


def saddle_comparison(spectrum, N, scale=0.3, t_max=6000.0, lr=0.2, batch=128, n_chains=4, record=100,
                      rng=0) -> SaddleComparison:
    """Run :class:`SaddleComparison`: ``D`` rank-one separate heads (``ATTN_S``) and one merged head (``ATTN_M``)
    from the same small random start of size ``scale`` (Zhang, Singh, Latham & Saxe 2025).

    Parameters
    ----------
    spectrum : array_like (D,)
    N : int
    scale : float
        Start size (:meth:`linattn.factorized.Parametrization.init`).
    t_max, lr : float
        Time span and SGD step.
    batch, n_chains, record : int
    rng : int or numpy.random.Generator

    Returns
    -------
    SaddleComparison
    """
    pb = noise_free_problem(spectrum, N)
    out = {tag: saddle_run(pb, tag, scale, t_max, lr, batch, n_chains, record, rng) for tag in SADDLE_MODELS}
    times = out["separate"][0].steps * lr
    return SaddleComparison(problem=pb, saddles=dynamics.saddle_losses(spectrum, N), times=times,
                            ode_separate=out["separate"][1], ode_merged=out["merged"][1],
                            sgd_separate=out["separate"][0], sgd_merged=out["merged"][0])


#: the two models of :func:`saddle_comparison`
SADDLE_MODELS = ("separate", "merged")
#: :func:`gap_one` doubles the product model's integration time at most this many times (to 16 ``t_max``) while its
#: loss still moves (a full-size dataset of ``factorized_gap``, D = 8, N = 40, still changed by 3.4e-6 at 2e4)
GAP_DOUBLINGS = 4


def saddle_run(pb, tag, scale=0.3, t_max=6000.0, lr=0.2, batch=128, n_chains=4, record=100, rng=0) -> tuple:
    """One model of :func:`saddle_comparison`: online SGD and the exact ODE from the start ``init(scale, seed)``.

    Parameters
    ----------
    pb : linattn.Problem
    tag : {"separate", "merged"}
        ``D`` rank-one separate key/query heads, or one merged head.
    scale, t_max, lr : float
    batch, n_chains, record : int
    rng : int or numpy.random.Generator

    Returns
    -------
    (FactorizedRun, ndarray (T,))
        The SGD run and the exact test error at its record times.
    """
    check.choice("tag", tag, SADDLE_MODELS)
    n_steps = n_steps_covering(check.positive("t_max", t_max), lr, record)
    par = (Parametrization("separate_kq", pb.D, heads=pb.D) if tag == "separate"
           else Parametrization("merged_heads", pb.D))
    th = par.init(scale, rng)
    run = factorized_descent(pb, par, th, n_steps, lr, batch=batch, record=record, n_chains=n_chains, rng=rng)
    ode = dynamics.mean_flow(pb, par, th, run.steps[1:] * lr)
    return run, np.concatenate([[run.test[0, 0]], ode.test])


@dataclass(frozen=True)
class FiniteGap:
    """ΔEr, contrast ratio and test error per dataset for the merged and the product model (shape (n_P, n))."""

    P: np.ndarray
    gap_merged: np.ndarray
    gap_product: np.ndarray
    contrast_merged: np.ndarray
    contrast_product: np.ndarray
    test_merged: np.ndarray
    test_product: np.ndarray


def finite_p_gap(pb, P_values, lam, n_datasets, scale=1e-2, t_max=2e4, rng=0) -> FiniteGap:
    """Train the merged ``Γ`` (exact long-time limit of gradient flow from 0) and ``Γ = PQ`` (exact ODE from a
    small random start, ``λ`` on ``P`` and ``Q``) on the same datasets; return ΔEr and the contrast ratio.

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic.
    P_values : array_like of int
    lam : float
        Weight decay (> 0: both limits exist).
    n_datasets : int
    scale : float
        Start size of ``P`` and ``Q``.
    t_max : float
        Integration time of the product model, doubled up to :data:`GAP_DOUBLINGS` times while its loss still
        changes by more than 1e-6 (relative) over the second half of the time.
    rng : int

    Returns
    -------
    FiniteGap
    """
    P_values = np.asarray(P_values, dtype=int)
    lam = check.positive("lam", lam)
    n = check.positive_int("n_datasets", n_datasets)
    res = [gap_one(pb, int(P), r, lam, scale, t_max, rng) for P in P_values for r in range(n)]
    return FiniteGap(P=P_values, **gap_arrays(res, P_values.size, n))


def gap_arrays(rows, n_P, n) -> dict:
    """The fields of :class:`FiniteGap` (shape ``(n_P, n)``) from the dicts of :func:`gap_one`, ``P``-major."""
    keys = ("gap_merged", "gap_product", "contrast_merged", "contrast_product", "test_merged", "test_product")
    return {k: np.array([float(x[k]) for x in rows]).reshape(n_P, n) for k in keys}


def gap_one(pb, P, r, lam, scale=1e-2, t_max=2e4, rng=0) -> dict:
    """Dataset ``r`` of :func:`finite_p_gap` at ``P`` prompts (``rng=(seed, P, r)``): both models trained on it.

    Parameters
    ----------
    pb : linattn.Problem
    P, r : int
    lam, scale, t_max : float
    rng : int

    Returns
    -------
    dict
        ``gap_*``, ``test_*`` and ``contrast_*`` of the merged and the product model (floats).
    """
    lam = check.positive("lam", lam)
    par = Parametrization("value_kq_modes", pb.D)
    data = pb.sample(int(P), rng=(rng, int(P), r))
    lt = dynamics.long_time_limit(data, pb, lam)
    theta0 = par.init(scale, (rng, int(P), r))
    for horizon in t_max * 2.0 ** np.arange(GAP_DOUBLINGS + 1):     # a slow plateau: integrate on, up to 16 t_max
        fl = dynamics.mean_flow(pb, par, theta0, [horizon / 2, horizon], data=data, lam=lam)
        drift = abs(fl.loss[-1] - fl.loss[0])
        if drift <= 1e-6 * fl.loss[-1]:
            break
    else:
        raise linattn.ConvergenceError(f"finite_p_gap: the product model is still moving at t = {horizon:g} "
                                       f"(relative change {drift / fl.loss[-1]:.1e} from t = {horizon / 2:g}); "
                                       "increase t_max")
    return dict(gap_merged=float(lt.gap), test_merged=float(lt.test), contrast_merged=float(lt.contrast),
                gap_product=float(linattn.relative_gap(fl.loss[-1], fl.test[-1])), test_product=float(fl.test[-1]),
                contrast_product=float(linattn.contrast_ratio(fl.Gamma)))


@dataclass(frozen=True)
class GibbsComparison:
    """Langevin averages of a parametrization on one dataset against the exact merged Gibbs measure.

    Attributes
    ----------
    train, train_se, test, test_se : float
        Langevin ``⟨E_t⟩`` (weight decay on ``θ`` included) and ``⟨E_g⟩``, mean and s.e. over chains.
    exact_train, exact_test : float
        :func:`replica.gibbs` of the merged model at the same ``(P, β, λ)``.
    e_min : float
        Minimum of ``E_t(θ)`` of the parametrization (exact ODE to convergence).
    harmonic_dof : int
        ``n_params`` minus the dimension of the norm-preserving symmetry (``D(D−1)/2`` for ``PQ``).
    equipartition : float
        ``e_min + harmonic_dof/(2β)``: the large-β prediction for ``⟨E_t⟩``.
    """

    train: float
    train_se: float
    test: float
    test_se: float
    exact_train: float
    exact_test: float
    e_min: float
    harmonic_dof: int
    equipartition: float


def gibbs_comparison(pb, data, beta, lam, kind="value_kq_modes", n_steps=60_000, dt=0.002, n_chains=16,
                     burn=0.3, rng=0) -> GibbsComparison:
    """Langevin on the factorized energy vs the exact merged Gibbs averages and the equipartition law.

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic (the merged Gibbs averages are exact for it).
    data : linattn.Prompts
    beta, lam : float
        Inverse temperature and weight decay (``> 0``).
    kind : {"merged", "value_kq_modes"}
    n_steps : int
    dt : float
        Euler–Maruyama step ``η`` (bias ``O(η)``).
    n_chains : int
    burn : float
        Fraction of the records discarded, in ``[0, 1)``.
    rng : int

    Returns
    -------
    GibbsComparison
    """
    import replica

    kind = check.choice("kind", kind, ("merged", "value_kq_modes"))
    beta = check.positive("beta", beta)
    lam = check.positive("lam", lam)
    burn = check.real("burn", burn, low=0.0, high=1.0, high_open=True)
    par = Parametrization(kind, pb.D)
    exact = replica.gibbs(data, pb, beta, lam)
    start = par.init(0.5, rng)
    fl = dynamics.mean_flow(pb, par, start, [1.0, 50.0 / lam], data=data, lam=lam, rtol=1e-11)
    run = factorized_descent(pb, par, fl.theta[-1], n_steps, dt, data=data, lam=lam, beta=beta,
                             record=max(1, n_steps // 100), n_chains=n_chains, rng=rng)
    k0 = int(burn * run.steps.size)
    et = (run.loss + 0.5 * lam * np.sum(run.theta**2, axis=2))[:, k0:].mean(1)
    eg = run.test[:, k0:].mean(1)
    dof = par.n_params - (pb.D * (pb.D - 1) // 2 if kind == "value_kq_modes" else 0)
    (train, train_se), (test, test_se) = mean_se(et, single=np.nan), mean_se(eg, single=np.nan)  # 1 chain: nan
    return GibbsComparison(train=train, train_se=train_se, test=test, test_se=test_se,
                           exact_train=float(exact.train), exact_test=float(exact.test), e_min=float(fl.loss[-1]),
                           harmonic_dof=dof,
                           equipartition=float(fl.loss[-1] + dof / (2 * beta)))
