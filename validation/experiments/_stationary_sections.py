"""The report sections of the stationary physics — ``replica``, ``langevin`` and ``transition`` — whose points
the seed's stationary figures carry beside their own (experiments ``stationary_D`` and ``stationary_N``,
:mod:`validation.experiments._stationary`): the setting they share with the figures, each section's point, its data
and its report rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
import replica

from ..simulators._langevin import chain, langevin
from ._base import Check
from ._data import ExperimentData

#: inverse temperature and weight decay of the seed's stationary figures and report sections
BETA, LAM = 1e3, 0.01


def fmt(x, se=None, digits=4):
    """``x`` (and ``± se``) as the report writes numbers.

    Parameters
    ----------
    x : float
    se : float, optional
    digits : int

    Returns
    -------
    str
    """
    return f"{x:.{digits}g}" if se is None else f"{x:.{digits}g} ± {se:.2g}"


#: the cases of report section ``replica``: ``((D, N, σ), model)``
REPLICA_CASES = (((10, 100, 0.0), "reduced"), ((10, 100, 0.0), "full"), ((20, 40, 0.25), "full"))
#: the models of report section ``langevin``
LANGEVIN_MODELS = ("reduced", "full")

@dataclass(frozen=True, eq=False, repr=False)
class ReplicaSection(ExperimentData):
    """Report section ``replica``: dataset averages of exact Gibbs errors against the replica theory, per case of
    :data:`REPLICA_CASES` and ``P`` of the section's settings (``β = 10³``, ``λ = 0.01``).

    Attributes
    ----------
    train, train_se, test, test_se : ndarray (n_cases, n_P)
        Means over ``n_datasets`` datasets (``rng=(51, P, i)``) and their standard errors.
    theory_train, theory_test : ndarray (n_cases, n_P)
        The replica theory (:func:`replica.stationary`, the exact finite-size law).
    mp_train, mp_test : ndarray (n_cases, n_P)
        The same with the Marchenko–Pastur law (the baseline).
    """

    train: np.ndarray
    train_se: np.ndarray
    test: np.ndarray
    test_se: np.ndarray
    theory_train: np.ndarray
    theory_test: np.ndarray
    mp_train: np.ndarray
    mp_test: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class CoarseStep(ExperimentData):
    """The ``O(dt)`` bias of Langevin at a coarse step (``γ·dt·λ_max = 1.6``; report section ``langevin``).

    Attributes
    ----------
    discrete_train : float
        Exact mean training error of the discrete chain at that step.
    train_mean, train_se_exact : float
        Langevin estimate and its exact standard error.
    exact_train : float
        Exact Gibbs average (the continuous-time target).
    bias_train : float
        Exact ``O(dt)`` bias, ``discrete_train − exact_train``.
    """

    discrete_train: float
    train_mean: float
    train_se_exact: float
    exact_train: float
    bias_train: float


@dataclass(frozen=True, eq=False, repr=False)
class LangevinSection(ExperimentData):
    """Report section ``langevin``: Langevin chains of one dataset against its exact Gibbs averages, per model of
    :data:`LANGEVIN_MODELS` and ``P`` of the section's settings (``D = 10``, ``N = 100``).

    Attributes
    ----------
    dt : ndarray (n_models, n_P)
        The Langevin step.
    train_mean, test_mean : ndarray (n_models, n_P)
        Langevin estimates of ``⟨E_t⟩`` and ``⟨E_g⟩``.
    train_iat_se, test_iat_se : ndarray (n_models, n_P)
        Their standard errors from the integrated autocorrelation time.
    train_reliable, test_reliable : ndarray (n_models, n_P)
        1 where the chains are long enough (≥ 50 τ samples) for the IAT estimate, else 0.
    train_se_exact, test_se_exact : ndarray (n_models, n_P)
        Exact standard errors of the estimates.
    train_exact, test_exact : ndarray (n_models, n_P)
        The exact Gibbs averages.
    train_bias, test_bias : ndarray (n_models, n_P)
        Exact ``O(dt)`` biases of the discrete chains.
    coarse : CoarseStep
    """

    dt: np.ndarray
    train_mean: np.ndarray
    train_iat_se: np.ndarray
    train_reliable: np.ndarray
    train_se_exact: np.ndarray
    train_exact: np.ndarray
    train_bias: np.ndarray
    test_mean: np.ndarray
    test_iat_se: np.ndarray
    test_reliable: np.ndarray
    test_se_exact: np.ndarray
    test_exact: np.ndarray
    test_bias: np.ndarray
    coarse: CoarseStep


def replica_point(settings, point):
    """Report section ``replica``, one (case, ``P``): the dataset average of exact Gibbs errors (datasets
    ``rng=(51, P, i)``), the replica theory and its Marchenko–Pastur version, ``β = 10³``, ``λ = 0.01``."""
    (D, N, sig), model = REPLICA_CASES[point["case"]]
    pb, P = linattn.Problem(D, N, sig), point["P"]
    avg = replica.dataset_average(pb, P, BETA, LAM, settings["n_datasets"], model, rng=51, progress=False)
    th = replica.stationary(pb, P, BETA, LAM, model)
    mp = replica.stationary(pb, P, BETA, LAM, model, law="mp")
    return dict(train=avg.train_mean, train_se=avg.train_se, test=avg.test_mean, test_se=avg.test_se,
                theory_train=th.train, theory_test=th.test, mp_train=mp.train, mp_test=mp.test)


def langevin_point(settings, point):
    """Report section ``langevin``, one (model, ``P``): ``chains`` Langevin chains of one dataset (``D = 10``,
    ``N = 100``, ``β = 10³``, ``λ = 0.01``; data ``rng=(61, P)``, chains seed 62) against its exact Gibbs averages;
    or (``coarse``) ``4 · chains`` chains at ``γ·dt·λ_max = 1.6`` (data ``rng=(63, 1)``, chains seed 64) against the
    exact mean of the discrete chain."""
    pb = linattn.Problem(10, 100)
    if point.get("coarse"):
        data = pb.sample(100, rng=(63, 1))
        ch = chain(data, pb, BETA, LAM, 1.0, "full")
        dt = 1.6 / ch.lambda_max
        r = langevin(data, pb, BETA, LAM, dt=dt, n_chains=settings["chains"] * 4, model="full", rng=64)
        return dict(discrete_train=ch.means(dt)[0], train_mean=r.train_mean, train_se_exact=r.train_se_exact,
                    exact_train=r.exact_train, bias_train=r.bias_train)
    P = point["P"]
    r = langevin(pb.sample(P, rng=(61, P)), pb, BETA, LAM, n_chains=settings["chains"], model=point["model"], rng=62)
    out = {"dt": r.dt}
    for name, est in (("train", r.train_estimate), ("test", r.test_estimate)):
        out.update({f"{name}_mean": est.mean, f"{name}_iat_se": est.se, f"{name}_reliable": float(est.reliable),
                    f"{name}_se_exact": getattr(r, f"{name}_se_exact"),
                    f"{name}_exact": getattr(r, f"exact_{name}"), f"{name}_bias": getattr(r, f"bias_{name}")})
    return out


def replica_checks(d, settings):
    """Section ``replica``: the worst ``P`` of each case (``d``: the :class:`ReplicaSection`)."""
    rows, n = [], settings["n_datasets"]
    for c, ((D, N, sig), model) in enumerate(REPLICA_CASES):
        worst, worst_mp, worst_row, ok = 0.0, 0.0, None, True
        for i, P in enumerate(settings["P"]):
            for name in ("train", "test"):
                a, b, se, m = (getattr(d, f"theory_{name}")[c, i], getattr(d, name)[c, i],
                               getattr(d, f"{name}_se")[c, i], getattr(d, f"mp_{name}")[c, i])
                rel = abs(a / b - 1)
                ok = ok and rel <= 0.01 + 3 * se / b
                worst_mp = max(worst_mp, abs(m / b - 1))
                if rel >= worst:
                    worst, worst_row = rel, (name, P, a, b, se)
        name, P, a, b, se = worst_row
        rows.append(Check("replica", f"stationary {name} error (worst P)",
                          f"{model}, D={D}, N={N}, σ={sig:g}, β=1e3, λ=0.01, P∈[10,1000], {n} datasets", fmt(a),
                          fmt(b, se), f"{worst:.2%} (MP worst {worst_mp:.1%})", ok and worst <= 0.03,
                          "≤ 1 % (goal) + 3 s.e. at every P, and ≤ 3 %"))
    return rows


def langevin_checks(d, settings):
    """Section ``langevin``: each (model, ``P``, error) against the exact Gibbs average, and the coarse-step bias
    (``d``: the :class:`LangevinSection`)."""
    rows, chains = [], settings["chains"]
    for m, model in enumerate(LANGEVIN_MODELS):
        for i, P in enumerate(settings["P"]):
            for name in ("train", "test"):
                mean, se, exact, bias = (getattr(d, f"{name}_{k}")[m, i] for k in ("mean", "se_exact", "exact",
                                                                                    "bias"))
                # pass/fail on the exact s.e. of the discrete chain; the IAT estimate is shown beside it,
                # flagged when the chains are too short to estimate it (< 50 τ samples each)
                ok = abs(mean - exact) <= 3 * se + abs(bias)
                iat = f"IAT s.e. {getattr(d, f'{name}_iat_se')[m, i]:.2g}" + (
                    "" if getattr(d, f"{name}_reliable")[m, i] else " (unreliable: chains < 50 τ)")
                rows.append(Check("langevin", f"stationary {name} error",
                                  f"{model}, D=10, N=100, P={P}, β=1e3, λ=0.01, dt={d.dt[m, i]:.3g}, "
                                  f"{chains} chains × 20 samples", fmt(exact), f"{fmt(mean, se)}; {iat}",
                                  f"{(mean - exact) / exact:+.2%} (dt bias {bias:.1e})", ok,
                                  "|Δ| ≤ 3 exact s.e. + |dt bias|"))
    c = d.coarse
    disc_t, mean, se = c.discrete_train, c.train_mean, c.train_se_exact
    rows.append(Check("langevin", "O(dt) bias of ⟨E_t⟩ at γ·dt·λ_max = 1.6", "full, D=10, N=100, P=100",
                      f"{disc_t:.5f} (Gibbs {c.exact_train:.5f}, bias {c.bias_train:+.1e})",
                      fmt(mean, se), f"{(mean - disc_t) / disc_t:+.2%}", abs(mean - disc_t) <= 3 * se,
                      "matches the exact discrete-chain mean within 3 exact s.e."))
    return rows


def transition_checks(sw):
    """Section ``transition``: ``P*`` of exact Gibbs averages and of Langevin against the theory (``sw``: the sweep
    :attr:`StationaryData.transition`)."""
    rows = []
    for label, val in (("exact Gibbs", sw.P_star_exact), ("Langevin", sw.P_star_sim)):
        ok = val is not None and sw.P_star_theory is not None and abs(val / sw.P_star_theory - 1) <= 0.2
        rel = "—" if val is None else f"{val / sw.P_star_theory - 1:+.1%}"
        rows.append(Check("transition", f"P* (ΔEr = 5), {label}", "full, D=10, N=100, β=1e3, λ=0.01",
                          fmt(sw.P_star_theory), "none" if val is None else fmt(val), rel, ok,
                          "within 20 % (P grid spacing ≈ 40 %, linear interpolation)"))
    return rows
