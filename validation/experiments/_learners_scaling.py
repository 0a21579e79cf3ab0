"""Context-length scalings of the kernel and the feature learner: experiment ``learners_scaling`` (figure of the
same name). Setting of :mod:`validation.experiments.learners` (``D = 6``, noise-free, ``λ = 0.01``, links ``relu``
and ``quad``), a fixed number of training prompts ``P``.

* **Train = test length**: each learner's test error against ``N`` (theory on a fine grid of ``N``); the exponent
  ``γ`` of ``E(N) − E_∞ ≈ A N^{−γ}`` fitted to the theory over ``N_fit`` (least squares in ``log N`` for the three
  parameters, :func:`fit_power_law`), and simulated points (``n_sets`` training sets at ``sim_N`` and ``N_train``: 5
  context lengths in quick mode, 7 in full).
* **Which learner wins over** ``(N, N_test)``: both theories on the plane ``plane_N × N_test`` at ``P``
  (generalisation, ``P > D²``) and at ``P_memo`` (memorisation, ``P < D²``); simulated cells at every
  ``(N, N_test)`` of ``sim_N × sim_N_test`` (every simulated training set evaluated at every ``sim_N_test``, without
  retraining: exact for the kernel learner, Monte Carlo for the feature learner; at ``P_memo`` with ``n_sets_memo``
  sets, as the spread between sets is large there).
* **Train ≠ inference length**: the row ``N = N_train`` of the plane at ``P`` — the models trained at ``N_train``
  evaluated at every ``N_test`` (theory), the simulated sets at ``sim_N_test`` (5 lengths in quick mode, 7 in
  full).

The feature learner's theory is the learner as trained (:func:`validation.experiments.learners.feature_theory`): its
readout is the one fitted at the training length, applied to the ``t`` of the test length, so ``N_test ≠ N`` is in
the theory (the optimal-readout theory it replaces was off at ``N_test < N``, ``docs/learners.md``).

Report section ``learners_scaling`` (:meth:`LearnersScaling.checks`), per link and learner:

* **the error against N** at the ``sim_N`` lengths (train = test, ``P``) and **against N_test** at the ``sim_N_test``
  lengths (trained at ``N_train``): every length within ``t·s.e. + accuracy``, where s.e. combines the simulation's
  (spread between sets ⊕ Monte Carlo) and the theory's own, ``t`` is the two-sided 99.73 % quantile of Student's t
  with ``n_sets − 1`` degrees of freedom (the "3 s.e." of a normal, widened for an s.e. estimated from few sets),
  and the accuracy is ``E/M`` (kernel learner, ``M = F²``) or :data:`~validation.experiments.learners.FEATURE_ACCURACY`
  ``·E`` (feature learner);
* **the exponent**: ``γ`` fitted by :func:`fit_power_law` to the simulated points and to the theory at the same
  ``sim_N``; passes when they differ by ≤ 3 s.e. of the difference (parametric bootstrap: both fitted again to
  normal draws around each point with its s.e.; :func:`gamma_check`);
* **the winner** on each ``(N, N_test)`` plane: where the simulation resolves one (``|ln(E_k/E_f)| > 2`` s.e. of the
  simulated ratio, and the theory's ratio as far from 1), it is the theory's
  (:func:`validation.experiments.learners.winner_agreement`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from linattn import _check as check
from linattn._kernel_errors import n_features

from ._base import Check, Experiment
from ._data import ExperimentData
from ._learners import (
    FEATURE_ACCURACY,
    LAM,
    LINKS,
    D,
    feature_theory,
    kernel_theory,
    length_key,
    problem,
    simulate_cell,
    winner_agreement,
)

#: the planes of the (N, N_test) diagrams: generalisation (at ``P``) and memorisation (at ``P_memo``)
PLANES = ("gen", "memo")
#: parametric-bootstrap draws of the exponent check (quick and full; smoke settings draw 20)
N_BOOT = 200


def fit_power_law(N, E):
    """Least-squares fit of ``E(N) = E_∞ + A N^{−γ}`` in ``log E`` (``E_∞ >= 0``, ``A > 0``, ``0 < γ < 4``).

    Parameters
    ----------
    N, E : array_like
        Context lengths and errors (at least 4 points, errors positive).

    Returns
    -------
    (float, float, float)
        ``(γ, E_∞, A)``.
    """
    N, E = np.asarray(N, float), np.asarray(E, float)

    logN, logE = np.log(N), np.log(E)

    def resid(p):
        gam, einf, loga = p
        return np.log(einf + np.exp(loga - gam * logN)) - logE

    def jac(p):           # the exact derivatives (the default's finite differences took ~15 % of learners_scaling)
        gam, einf, loga = p
        t = np.exp(loga - gam * logN)                     # A N^{−γ}
        u = einf + t
        return np.column_stack((-t * logN / u, 1.0 / u, t / u))

    best = None
    for gam0 in (0.5, 1.0, 2.0):
        start = (gam0, 0.5 * float(E.min()), np.log(max(float(E[0] - 0.5 * E.min()), 1e-12)) + gam0 * np.log(N[0]))
        res = optimize.least_squares(resid, start, jac=jac, bounds=([1e-3, 0.0, -50.0], [4.0, float(E.min()), 50.0]))
        if best is None or res.cost < best.cost:
            best = res
    gam, einf, loga = best.x
    return float(gam), float(einf), float(np.exp(loga))


def gamma_check(N, sim, sim_se, th, th_se, rng=0, n_boot=N_BOOT):
    """The exponent ``γ`` of :func:`fit_power_law` fitted to simulated points and to the theory at the same lengths,
    with the s.e. of their difference from a parametric bootstrap (both refitted to normal draws around each point,
    floored at a tenth of the point).

    Parameters
    ----------
    N : array_like
        Context lengths (at least 4).
    sim, sim_se, th, th_se : array_like
        Simulated errors and their s.e.; the theory and its s.e. (Monte Carlo of the theory), at ``N``.
    rng : int
        Seed of the bootstrap (``>= 0``).
    n_boot : int
        Bootstrap draws (2 to 10⁵).

    Returns
    -------
    numpy.ndarray
        ``[γ_theory, γ_simulation, s.e. of γ_simulation − γ_theory]``.
    """
    N = check.real_array("N", N, low=0.0, low_open=True)
    if N.ndim != 1 or N.size < 4:
        check.fail("N", N, "a 1-d array of at least 4 context lengths > 0")
    sim, th = (check.finite_array(name, x, shape=N.shape) for name, x in (("sim", sim), ("th", th)))
    sim_se, th_se = (check.finite_array(name, x, shape=N.shape) for name, x in (("sim_se", sim_se), ("th_se", th_se)))
    for name, x in (("sim", sim), ("th", th)):
        if np.any(x <= 0):
            check.fail(name, x, "an array of errors > 0")
    for name, x in (("sim_se", sim_se), ("th_se", th_se)):
        if np.any(x < 0):
            check.fail(name, x, "an array of standard errors >= 0")
    n_boot = check.positive_int("n_boot", n_boot, minimum=2, maximum=10**5)
    g = np.random.default_rng(check.seed_int("rng", rng))
    diffs = []
    for _ in range(n_boot):
        s = np.maximum(sim + sim_se * g.standard_normal(sim.size), 0.1 * sim)
        t = np.maximum(th + th_se * g.standard_normal(th.size), 0.1 * th)
        diffs.append(fit_power_law(N, s)[0] - fit_power_law(N, t)[0])
    return np.array([fit_power_law(N, th)[0], fit_power_law(N, sim)[0], float(np.std(diffs, ddof=1))])


def student_t(n_sets):
    """The two-sided 99.73 % quantile of Student's t with ``n_sets − 1`` degrees of freedom: the "3 s.e." of a
    normal (3.0 for many sets), widened for an s.e. estimated from ``n_sets`` training sets."""
    n_sets = check.positive_int("n_sets", n_sets, minimum=2)
    return float(stats.t.ppf(0.5 + 0.9973 / 2, n_sets - 1))


def _index(grid, values, grid_name, values_name):
    """Positions of ``values`` (setting ``values_name``) on ``grid`` (setting ``grid_name``): each must be a grid
    value, as the simulated cells lie on the theory's grids."""
    grid, values = np.asarray(grid), np.asarray(values)
    idx = np.searchsorted(grid, values)
    if np.any(idx >= grid.size) or np.any(grid[np.minimum(idx, grid.size - 1)] != values):
        raise ValueError(f"settings: every value of {values_name} = {values.tolist()} must be a value of "
                         f"{grid_name} = {grid.tolist()} (the simulated cells lie on the theory's grid)")
    return idx


@dataclass(frozen=True, eq=False, repr=False)
class LearnerScaling(ExperimentData):
    """One learner of one link against the context length (errors in units of :attr:`ScalingLink.V2`).

    Attributes
    ----------
    over_N, over_N_se : ndarray (n_N,)
        The theory's test error at train = test length ``N`` (grid ``N``, at ``P``) and the s.e. of its Monte Carlo.
    fit_gamma, fit_e_inf, fit_amplitude : float
        ``γ``, ``E_∞``, ``A`` of ``E(N) − E_∞ ≈ A N^−γ`` fitted to the theory over ``N_fit_low … N_fit_high``
        (:func:`fit_power_law`).
    sim_over_N, sim_over_N_se : ndarray (n_sim_N,)
        Simulated test errors at the lengths ``sim_N``, mean ± s.e. over the training sets.
    over_N_test, over_N_test_se : ndarray (n_N_test,)
        The theory for the models trained at ``N_train``, evaluated at ``N_test`` (the row ``N_train`` of the plane
        ``gen``).
    sim_over_N_test, sim_over_N_test_se : ndarray (n_sim_N_test,)
        Simulated: the training sets at ``N_train`` evaluated at ``sim_N_test``.
    gamma_theory, gamma_sim, gamma_se : float
        ``γ`` fitted to the theory and to the simulation at ``sim_N``, and the s.e. of their difference
        (:func:`gamma_check`).
    """

    over_N: np.ndarray
    over_N_se: np.ndarray
    fit_gamma: float
    fit_e_inf: float
    fit_amplitude: float
    sim_over_N: np.ndarray
    sim_over_N_se: np.ndarray
    over_N_test: np.ndarray
    over_N_test_se: np.ndarray
    sim_over_N_test: np.ndarray
    sim_over_N_test_se: np.ndarray
    gamma_theory: float
    gamma_sim: float
    gamma_se: float


@dataclass(frozen=True, eq=False, repr=False)
class WinnerPlane(ExperimentData):
    """Which learner wins over ``(N, N_test)`` at one number of prompts (``P`` or ``P_memo``).

    Attributes
    ----------
    kernel, kernel_se, feature, feature_se : ndarray (n_plane_N, n_N_test)
        Both theories on the plane ``plane_N × N_test`` and the s.e. of their Monte Carlo.
    sim_kernel, sim_kernel_se, sim_feature, sim_feature_se : ndarray (n_sim_N, n_sim_N_test)
        Simulated: the training sets at each ``sim_N`` evaluated at each ``sim_N_test``, mean ± s.e.
    decided, agrees : ndarray of bool (n_sim_N, n_sim_N_test)
        Where the simulation resolves a winner, and where it is the theory's.
    """

    kernel: np.ndarray
    kernel_se: np.ndarray
    feature: np.ndarray
    feature_se: np.ndarray
    sim_kernel: np.ndarray
    sim_kernel_se: np.ndarray
    sim_feature: np.ndarray
    sim_feature_se: np.ndarray
    decided: np.ndarray
    agrees: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class ScalingLink(ExperimentData):
    """The context-length scalings of one link.

    Attributes
    ----------
    V2 : float
        ``E_g(ŷ = 0) = V/2`` at ``N_train``: the unit of the errors.
    sim_unconverged : ndarray (n_sim_N,)
        Feature-learner runs that missed their tolerance, per simulated length (at ``P``).
    learners : dict of str to LearnerScaling
        ``"kernel"`` and ``"feature"``.
    planes : dict of str to WinnerPlane
        ``"gen"`` (at ``P``) and ``"memo"`` (at ``P_memo``).
    """

    V2: float
    sim_unconverged: np.ndarray
    learners: dict[str, LearnerScaling]
    planes: dict[str, WinnerPlane]


@dataclass(frozen=True, eq=False, repr=False)
class LearnersScalingData(ExperimentData):
    """Data of ``learners_scaling`` (figure and report section ``learners_scaling``).

    Attributes
    ----------
    P, P_memo : int
        Training prompts of the generalisation and the memorisation plane.
    N : ndarray (n_N,)
        The theory's grid of context lengths (train = test).
    N_test : ndarray (n_N_test,)
        The theory's grid of test context lengths.
    N_train : int
        The training length of the curves against ``N_test``.
    sim_N : ndarray (n_sim_N,)
        Simulated training lengths (``sim_N`` and ``N_train``, sorted).
    sim_N_test : ndarray (n_sim_N_test,)
        Simulated test lengths.
    N_fit_low, N_fit_high : int
        The range of ``N`` of the power-law fits (the setting ``N_fit``).
    plane_N : ndarray (n_plane_N,)
        Training lengths of the planes.
    links : dict of str to ScalingLink
    """

    P: int
    P_memo: int
    N: np.ndarray
    N_test: np.ndarray
    N_train: int
    sim_N: np.ndarray
    sim_N_test: np.ndarray
    N_fit_low: int
    N_fit_high: int
    plane_N: np.ndarray
    links: dict[str, ScalingLink]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``N_fit`` (low, high) and per link ``{link}_V2``, ``{link}_N_{tag}``,
        ``{link}_{learner}_fit`` (γ, E∞, A), ``{link}_plane_{plane}_{tag}``, ``{link}_sim_{tag}``,
        ``{link}_Ntest_{tag}``, ``{link}_simtest_{learner}[_se]``, ``{link}_{learner}_gamma_check`` (theory, sim,
        s.e.), ``{link}_simplane_{plane}_{learner}[_se]``, ``{link}_{plane}_{decided,agrees}``."""
        out = dict(arrays)
        out["N_fit_low"], out["N_fit_high"] = out.pop("N_fit")
        for name in LINKS:
            at = f"links[{name}]."
            out[at + "V2"] = out.pop(f"{name}_V2")
            out[at + "sim_unconverged"] = out.pop(f"{name}_sim_unconverged")
            for learner in ("kernel", "feature"):
                lt = f"{at}learners[{learner}]."
                for sfx in ("", "_se"):
                    out[f"{lt}over_N{sfx}"] = out.pop(f"{name}_N_{learner}{sfx}")
                    out[f"{lt}sim_over_N{sfx}"] = out.pop(f"{name}_sim_{learner}{sfx}")
                    out[f"{lt}over_N_test{sfx}"] = out.pop(f"{name}_Ntest_{learner}{sfx}")
                    out[f"{lt}sim_over_N_test{sfx}"] = out.pop(f"{name}_simtest_{learner}{sfx}")
                out[lt + "fit_gamma"], out[lt + "fit_e_inf"], out[lt + "fit_amplitude"] = out.pop(
                    f"{name}_{learner}_fit")
                out[lt + "gamma_theory"], out[lt + "gamma_sim"], out[lt + "gamma_se"] = out.pop(
                    f"{name}_{learner}_gamma_check")
            for plane in PLANES:
                pt = f"{at}planes[{plane}]."
                for tag in ("kernel", "kernel_se", "feature", "feature_se"):
                    out[pt + tag] = out.pop(f"{name}_plane_{plane}_{tag}")
                    out[pt + "sim_" + tag] = out.pop(f"{name}_simplane_{plane}_{tag}")
                for tag in ("decided", "agrees"):
                    out[pt + tag] = out.pop(f"{name}_{plane}_{tag}")
        return out


class LearnersScaling(Experiment):
    """Test error against ``N`` (train = test) and against ``N_test`` at ``N_train``, and which learner wins over
    ``(N, N_test)`` at ``P`` and ``P_memo`` (module docstring): one theory point per ``(link, kind)`` and per
    ``(link, plane, N)``, one simulation point per ``(link, plane, N)``."""

    name = "learners_scaling"
    title = "Kernel vs feature learner: context-length scaling, and which wins over (N, N_test)"
    data_class = LearnersScalingData
    presets = {mode: dict(D=D, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(P=300, P_memo=20, N=[4, 8, 16, 32], N_fit=[4, 32], sim_N=[4, 16, 32], N_train=8,
                       N_test=[8], sim_N_test=[8], plane_N=[4, 8, 16, 32], n_sets=2, n_sets_memo=2,
                       n_test_prompts=2000, n_boot=20)),
        ("quick", dict(P=1000, P_memo=20, N=[4, 8, 16, 32, 64, 128], N_fit=[8, 128], sim_N=[4, 8, 32, 64],
                       N_train=16, N_test=[2, 4, 16, 64, 256], sim_N_test=[2, 4, 16, 64, 256],
                       plane_N=[4, 8, 16, 32, 64], n_sets=6, n_sets_memo=6,
                       n_test_prompts=20_000, n_boot=N_BOOT)),
        ("full", dict(P=1000, P_memo=20, N=[2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256], N_fit=[8, 256],
                      sim_N=[2, 4, 8, 16, 32, 64, 128], N_train=16,
                      N_test=[2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512],
                      sim_N_test=[2, 4, 8, 32, 64, 128, 256], plane_N=[2, 4, 8, 16, 32, 64, 128],
                      n_sets=12, n_sets_memo=16, n_test_prompts=100_000, n_boot=N_BOOT)))}
    report_order = 63

    @staticmethod
    def _sim_N(s):
        return sorted(set(s.sim_N) | {s.N_train})

    def points(self, s):
        # the simulated cells on the theory's grids: refused before any work
        _index(s.N, self._sim_N(s), "N", "sim_N and N_train")
        _index(s.plane_N, self._sim_N(s), "plane_N", "sim_N and N_train")
        _index(s.N_test, s.sim_N_test, "N_test", "sim_N_test")
        return ([dict(kind="theory_N", link=name) for name in LINKS]
                + [dict(kind="theory_plane", link=name, plane=plane, N=int(N)) for name in LINKS for plane in PLANES
                   for N in s.plane_N]
                + [dict(kind="sim", link=name, plane=plane, N=int(N)) for name in LINKS for plane in PLANES
                   for N in self._sim_N(s)])

    def compute(self, s, point):
        name = point["link"]
        P = s.P_memo if point.get("plane") == "memo" else s.P
        if point["kind"] == "sim":
            N = point["N"]
            n_sets = s.n_sets_memo if point["plane"] == "memo" else s.n_sets
            return simulate_cell(problem(name, N, D=s.D), P, n_sets, (N, P, 7), s.n_test_prompts,
                                 N_tests=s.sim_N_test, lam=s.lam)
        if point["kind"] == "theory_N":
            cells = [(problem(name, N, D=s.D), None) for N in s.N]
        else:
            cells = [(problem(name, point["N"], D=s.D), n) for n in s.N_test]
        k = [kernel_theory(pb, P, N_test=n, lam=s.lam) for pb, n in cells]
        f = [feature_theory(pb, P, N_test=n, lam=s.lam) for pb, n in cells]
        return {"kernel": np.array([x["test"] for x in k]), "kernel_se": np.array([x["test_se"] for x in k]),
                "feature": np.array([x["test"] for x in f]), "feature_se": np.array([x["test_se"] for x in f])}

    def assemble(self, s, outputs):
        sim_N = np.array(self._sim_N(s))
        N = np.array(s.N)
        at_N = _index(s.N, sim_N, "N", "sim_N")
        pi = _index(s.plane_N, sim_N, "plane_N", "sim_N")
        pj = _index(s.N_test, s.sim_N_test, "N_test", "sim_N_test")
        row = _index(s.plane_N, [s.N_train], "plane_N", "N_train")[0]
        meta, sims = {"decided": 0, "agree": 0}, {}
        lo, hi = s.N_fit
        sel = (N >= lo) & (N <= hi)
        tags = ("kernel", "kernel_se", "feature", "feature_se")
        over_N = {name: {} for name in LINKS}
        planes = {(name, plane): {} for name in LINKS for plane in PLANES}
        for p, out in zip(self.points(s), outputs):
            name = p["link"]
            if p["kind"] == "theory_N":
                over_N[name] = out
                for learner in ("kernel", "feature"):
                    meta[f"{name}_{learner}_gamma"] = fit_power_law(N[sel], out[learner][sel])[0]
            elif p["kind"] == "theory_plane":
                for tag in tags:
                    planes[(name, p["plane"])].setdefault(tag, np.zeros((len(s.plane_N), len(s.N_test))))[
                        list(s.plane_N).index(p["N"])] = out[tag]
            else:
                sims[(name, p["plane"], p["N"])] = out
        links = {}
        for name in LINKS:
            gen = [sims[(name, "gen", int(n))] for n in sim_N]
            own = sims[(name, "gen", int(s.N_train))]           # the N_test evaluations of the N_train sets
            learners = {}
            for learner in ("kernel", "feature"):
                th, th_se = over_N[name][learner], over_N[name][f"{learner}_se"]
                sim = np.array([o[learner] for o in gen], float)
                sim_se = np.array([o[f"{learner}_se"] for o in gen], float)
                gam, einf, A = fit_power_law(N[sel], th[sel])
                g_th, g_sim, g_se = gamma_check(sim_N, sim, sim_se, th[at_N], th_se[at_N], n_boot=s.n_boot)
                learners[learner] = LearnerScaling(
                    over_N=th, over_N_se=th_se, fit_gamma=gam, fit_e_inf=einf, fit_amplitude=A, sim_over_N=sim,
                    sim_over_N_se=sim_se, over_N_test=planes[(name, "gen")][learner][row],
                    over_N_test_se=planes[(name, "gen")][f"{learner}_se"][row],
                    sim_over_N_test=np.array([own[length_key(learner, n)] for n in s.sim_N_test]),
                    sim_over_N_test_se=np.array([own[length_key(learner, n, se=True)] for n in s.sim_N_test]),
                    gamma_theory=g_th, gamma_sim=g_sim, gamma_se=g_se)
            plane_data = {}
            for plane in PLANES:
                th = planes[(name, plane)]
                sim = {f"sim_{learner}{sfx}": np.array([[sims[(name, plane, int(n))][length_key(learner, m, bool(sfx))]
                                                         for m in s.sim_N_test] for n in sim_N])
                       for learner in ("kernel", "feature") for sfx in ("", "_se")}
                dec, agr = winner_agreement(np.log(th["kernel"][np.ix_(pi, pj)] / th["feature"][np.ix_(pi, pj)]),
                                            *(sim[f"sim_{t}"] for t in tags))
                plane_data[plane] = WinnerPlane(**th, **sim, decided=dec, agrees=agr)
                meta["decided"] += int(dec.sum())
                meta["agree"] += int((dec & agr).sum())
            links[name] = ScalingLink(V2=0.5 * problem(name, s.N_train, D=s.D).label_variance,
                                      sim_unconverged=np.array([o["unconverged"] for o in gen], float),
                                      learners=learners, planes=plane_data)
        data = LearnersScalingData(P=s.P, P_memo=s.P_memo, N=N, N_test=np.array(s.N_test), N_train=s.N_train,
                                   sim_N=sim_N, sim_N_test=np.array(s.sim_N_test), N_fit_low=lo, N_fit_high=hi,
                                   plane_N=np.array(s.plane_N), links=links)
        return data, meta

    def checks(self, r):
        s, d = r.settings, r.data
        n_boot = s["n_boot"] if "n_boot" in s else N_BOOT        # results saved by 0.1.0 drew N_BOOT at every mode
        M = n_features(s["D"], "hermite2") ** 2
        t_gen = student_t(s["n_sets"])
        rows = []
        at_N = _index(d.N, d.sim_N, "N", "sim_N")
        at_Nt = _index(d.N_test, d.sim_N_test, "N_test", "sim_N_test")
        for name in LINKS:
            for learner in ("kernel", "feature"):
                c = d.links[name].learners[learner]
                acc = ("E/M", lambda e: e / M) if learner == "kernel" else \
                    (f"{FEATURE_ACCURACY:.0%}·E", lambda e: FEATURE_ACCURACY * e)
                crit = (f"every length ≤ {t_gen:.2f} s.e. + {acc[0]} (Student's t, {s['n_sets']} sets; s.e. of sim ⊕ "
                        "theory)")
                for what, xs, sim, se, th, th_se, params in (
                        ("error vs N (train = test)", d.sim_N, c.sim_over_N, c.sim_over_N_se, c.over_N[at_N],
                         c.over_N_se[at_N], "N"),
                        (f"error vs N_test (trained at N = {s['N_train']})", d.sim_N_test, c.sim_over_N_test,
                         c.sim_over_N_test_se, c.over_N_test[at_Nt], c.over_N_test_se[at_Nt], "N_test")):
                    tol = t_gen * np.hypot(se, th_se) + acc[1](th)
                    dev = np.abs(sim - th) / tol
                    w = int(np.argmax(dev))
                    rows.append(Check("learners_scaling", f"{learner} learner, {what}",
                                      f"link {name}, D={s['D']}, P={s['P']}, λ={s['lam']:g}, {params} ∈ "
                                      f"{[int(x) for x in xs]}, {s['n_sets']} training sets each",
                                      f"{th[w]:.4g} ± {th_se[w]:.1g} (worst length, {params} = {int(xs[w])})",
                                      f"{sim[w]:.4g} ± {se[w]:.2g}",
                                      f"{sim[w] / th[w] - 1:+.1%} (max |dev|/tol {dev.max():.2f} over "
                                      f"{len(xs)} lengths)", bool(np.all(dev <= 1)), crit))
                g_th, g_sim, g_se = c.gamma_theory, c.gamma_sim, c.gamma_se
                rows.append(Check("learners_scaling", f"{learner} learner, exponent γ of E − E∞ ∝ N^−γ",
                                  f"link {name}, P={s['P']}, fitted over N ∈ {[int(x) for x in d.sim_N]}",
                                  f"{g_th:.3g}", f"{g_sim:.3g}", f"{g_sim - g_th:+.3g} (± {g_se:.2g})",
                                  bool(abs(g_sim - g_th) <= 3 * g_se),
                                  f"≤ 3 s.e. of the difference (parametric bootstrap, {n_boot} draws)"))
            for plane in PLANES:
                dec, agr = d.links[name].planes[plane].decided, d.links[name].planes[plane].agrees
                P = s["P"] if plane == "gen" else s["P_memo"]
                regime = "generalisation, P > D²" if P > s["D"] ** 2 else "memorisation, P < D²"
                n_sets = s["n_sets"] if plane == "gen" else s["n_sets_memo"]
                rows.append(Check("learners_scaling", f"winner over (N, N_test) ({regime})",
                                  f"link {name}, P={P}, N ∈ {[int(x) for x in d.sim_N]} × N_test ∈ "
                                  f"{[int(x) for x in d.sim_N_test]}, {n_sets} training sets a cell",
                                  "theories' winner", f"{int(dec.sum())} of {dec.size} cells resolved",
                                  f"{int((dec & agr).sum())} of {int(dec.sum())} agree",
                                  bool(np.all(agr[dec])),
                                  "every resolved cell (|ln ratio| > 2 s.e., theory's too) agrees with the theory"))
        return rows
