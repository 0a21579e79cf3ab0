"""Structured tasks (Takanami, Takahashi & Kabashima, arXiv:2510.04548): low-rank tasks ``w ~ N(0, S)``,
``S = (D/r) A Aᵀ``, the finite-``D`` theory against exact ridge averages, and the paper's three claims.

One experiment, ``structured_tasks`` (figure ``structured_tasks``, report section ``structured_tasks``), at
``D = 16``, ``N = 32``, ``σ = 0.25``, ``λ = 0.1/D`` (the acceptance setting of :func:`replica.stationary` with a task
covariance), ``A`` along the first ``r`` axes (every error is invariant under a rotation of ``S``):

* ``fresh``: rank-``r`` tasks, a fresh task per prompt: the errors on the training law (``test``), on the isotropic law
  of the same power (``test_odg``) and ``train``, against ``P``: the finite-``D`` theory (:func:`replica.stationary`,
  through :func:`replica._structured.structured_errors`, which also gives the mean ridge solution ``Θ̄``) and exact
  averages of ``n`` ridge solutions (:func:`replica.ridge`);
* ``pool``: the same with a pool of ``K`` tasks drawn from ``N(0, S)`` (a new pool per dataset): also ``test_idg``;
* ``isotropic``: the baseline ``S = I`` (the replica theory of isotropic tasks and its exact averages);
* ``implicit``: the effective ridge ``κ`` of the mean solution ``Γ̄ = P_A/(r(σ_∥ + κ))`` (on the span of ``S``,
  ``σ_∥ = (1 + σ²)/N + (1 + 1/N)/r``): measured from the mean of the exact ridge solutions, from the finite theory's
  ``Θ̄``, and the Gaussian-feature theory's root (``law="mp"``): finite ``P`` acts as the extra ridge ``κ − λ``;
* ``transition``: the test error against ``P/(rD)`` with a small ridge (``λ = 10⁻⁴``, which keeps the exact averages'
  spread finite at the peak) for ranks ``r ∈ transition_ranks`` at the long context ``N = transition_N`` (theory and
  ``transition_n`` exact ridge solutions) and at ``N`` (exact): the transition at ``P = rD``.

Points: one per theory curve (``kind="theory"``), one per exact average (``kind="exact"``); the isotropic replica
theory and the Gaussian ``κ`` (cheap) are computed in ``assemble``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
import replica
from linattn._numerics.stats import mean_se
from replica._structured import structured_errors

from ._base import Check, Experiment
from ._data import ExperimentData

#: the label noise ``σ``, the ridge ``λ = RIDGE/D`` and the data seed
NOISE, RIDGE, SEED = 0.25, 0.1, 17
#: the weight decay of the transition panel (absolute; small against the context ridge ``(1 + σ²)/N`` at ``N = 32``,
#: and large enough at ``N = 16384`` that the spread of the errors at ``P = rD`` stays measurable)
TRANSITION_LAM = 1e-4
#: the errors of a protocol (``test_idg`` with a pool only)
ERRORS = ("train", "test", "test_odg", "test_idg")


def low_rank_problem(D, N, r, K=None):
    """``Problem(D, N, σ, tasks=K, task_covariance=(D/r) A Aᵀ)`` with ``A`` the first ``r`` axes (``r = None``: the
    isotropic problem)."""
    S = None if r is None else linattn.pools.low_rank_covariance(D, r, rotate=False)
    return linattn.Problem(D, N, NOISE, tasks=K, task_covariance=S)


def sigma_parallel(D, N, r):
    """``σ_∥ = (1 + σ²)/N + (1 + 1/N)/r``: the eigenvalue of ``Σ̃ = E[s sᵀ]`` on the span of ``S`` (``tr S = D``)."""
    return (1.0 + NOISE**2) / N + (1.0 + 1.0 / N) / r


def kappa_of(span_trace, D, N, r):
    """The effective ridge ``κ`` of a mean solution with ``tr(P_A Γ̄) = 1/(σ_∥ + κ)`` (module docstring)."""
    return 1.0 / np.asarray(span_trace, float) - sigma_parallel(D, N, r)


@dataclass(frozen=True, eq=False, repr=False)
class ProtocolCurves(ExperimentData):
    """The errors of one training law against the number of prompts ``P``: theory and exact averages.

    Attributes
    ----------
    P_theory : ndarray (n_theory,)
        ``P`` of the theory curve.
    theory_train, theory_test, theory_test_odg : ndarray (n_theory,)
        The theory (:func:`replica.stationary`; ``test_odg``: the isotropic law of the same power, equal to ``test``
        for the isotropic baseline).
    theory_test_idg : ndarray (n_theory,) or None
        With a pool: the in-distribution error.
    P : ndarray (n_P,)
        ``P`` of the exact averages.
    train, train_se, test, test_se, test_odg, test_odg_se : ndarray (n_P,)
        Means and standard errors over the datasets of the exact errors of the ridge solution (:func:`replica.ridge`).
    test_idg, test_idg_se : ndarray (n_P,) or None
        The same for the in-distribution error (with a pool).
    """

    P_theory: np.ndarray
    theory_train: np.ndarray
    theory_test: np.ndarray
    theory_test_odg: np.ndarray
    theory_test_idg: np.ndarray | None
    P: np.ndarray
    train: np.ndarray
    train_se: np.ndarray
    test: np.ndarray
    test_se: np.ndarray
    test_odg: np.ndarray
    test_odg_se: np.ndarray
    test_idg: np.ndarray | None
    test_idg_se: np.ndarray | None


@dataclass(frozen=True, eq=False, repr=False)
class ImplicitRidge(ExperimentData):
    """The effective ridge ``κ`` of the mean ridge solution of fresh rank-``r`` tasks (module docstring).

    Attributes
    ----------
    P : ndarray (n_P,)
        ``P`` of the exact averages.
    measured, measured_se : ndarray (n_P,)
        ``κ`` from the mean of the exact ridge solutions (``1/tr(P_A Γ̄) − σ_∥``) and its standard error (delta
        method).
    finite : ndarray (n_theory,)
        ``κ`` from the finite theory's mean ``Θ̄`` on :attr:`StructuredTasksData.fresh` ``.P_theory``.
    P_gaussian : ndarray (n_gauss,)
        A fine grid of ``P``.
    gaussian : ndarray (n_gauss,)
        The Gaussian-feature theory's effective ridge on it.
    """

    P: np.ndarray
    measured: np.ndarray
    measured_se: np.ndarray
    finite: np.ndarray
    P_gaussian: np.ndarray
    gaussian: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class TransitionCurve(ExperimentData):
    """The test error of fresh rank-``r`` tasks (``λ = TRANSITION_LAM``) against the task diversity per rank,
    ``P/(rD)``.

    Attributes
    ----------
    ratio : ndarray (n_ratio,)
        ``P/(rD)`` (``P`` rounded to an integer).
    theory_long : ndarray (n_ratio,)
        The finite theory at the long context ``N = transition_N``.
    lam : float
        The weight decay ``λ``.
    exact_long, exact_long_se : ndarray (n_ratio,)
        Exact averages (and s.e.) at ``N = transition_N``.
    exact_short, exact_short_se : ndarray (n_ratio,)
        Exact averages (and s.e.) at the context length ``N`` of the other panels.
    """

    ratio: np.ndarray
    theory_long: np.ndarray
    lam: float
    exact_long: np.ndarray
    exact_long_se: np.ndarray
    exact_short: np.ndarray
    exact_short_se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class StructuredTasksData(ExperimentData):
    """Data of ``structured_tasks`` (module docstring).

    Attributes
    ----------
    D, N, rank, pool_size, transition_N : int
        Token dimension, context length, the task rank ``r`` of the ``fresh``/``pool`` panels, the pool size ``K``,
        the long context length of the transition.
    noise, lam : float
        ``σ`` and ``λ = 0.1/D``.
    fresh : ProtocolCurves
        Fresh rank-``r`` tasks.
    pool : ProtocolCurves
        A pool of ``K`` tasks from ``N(0, S)``.
    isotropic : ProtocolCurves
        The isotropic baseline ``S = I`` (its ``test_odg`` is its ``test``).
    isotropic_theory_on_fresh : ndarray (n_P,)
        The isotropic theory at the ``P`` of :attr:`fresh` (what the baseline predicts for the rank-``r`` tasks).
    implicit : ImplicitRidge
        The effective ridge of fresh rank-``r`` tasks.
    transition : dict of int to TransitionCurve
        The transition of each rank of the setting ``transition_ranks``.
    """

    D: int
    N: int
    rank: int
    pool_size: int
    transition_N: int
    noise: float
    lam: float
    fresh: ProtocolCurves
    pool: ProtocolCurves
    isotropic: ProtocolCurves
    isotropic_theory_on_fresh: np.ndarray
    implicit: ImplicitRidge
    transition: dict[int, TransitionCurve]


def _exact(pb, P, lam, n, span=0):
    """Exact errors of ``n`` ridge solutions (dataset ``i``: ``rng=(SEED, P, K, N, i)``): the mean and s.e. of each
    error of :data:`ERRORS` the problem has, and of ``tr(Γ[:span, :span])`` (``span > 0``)."""
    rows, traces = [], []
    for i in range(n):
        sol = replica.ridge(pb.sample(P, rng=(SEED, P, pb.tasks or 0, pb.N, i)), pb, lam)
        rows.append([sol.train, sol.test, sol.test if sol.test_odg is None else sol.test_odg]
                    + ([sol.test_idg] if sol.test_idg is not None else []))
        traces.append(float(np.trace(sol.Gamma[:span, :span])))
    a = np.array(rows)
    out = {}
    for j, name in enumerate(ERRORS[:a.shape[1]]):
        out[name], out[name + "_se"] = mean_se(a[:, j])
    if span:
        out["span_trace"], out["span_trace_se"] = mean_se(np.array(traces))
    return out


class StructuredTasks(Experiment):
    """Low-rank tasks: the finite-``D`` theory against exact ridge averages, the isotropic baseline, the implicit
    regularisation and the transition at ``P = rD`` (module docstring). Settings: ``P`` (exact averages, ``n``
    datasets each), ``P_theory`` (the theory curves), ``n_pools`` (scramblings or pools of the theory),
    ``transition_ratio`` (``P/(rD)``), ``transition_ranks``, ``transition_N``, ``transition_n`` (datasets)."""

    name = "structured_tasks"
    title = "Structured (low-rank) tasks: theory vs exact ridge averages, the three protocols, implicit ridge, P = rD"
    data_class = StructuredTasksData
    presets = {"smoke": dict(D=8, N=16, rank=2, pool=4, P=[16, 96], P_theory=[16, 96], n=3, n_pools=2,
                             transition_ratio=[0.5, 1.0, 2.0], transition_ranks=[2], transition_N=1024, transition_n=3),
               "quick": dict(D=16, N=32, rank=4, pool=8, P=[64, 128, 256, 512, 1024, 4096],
                             P_theory=[64, 128, 256, 512, 1024, 4096], n=10, n_pools=2,
                             transition_ratio=[0.5, 0.75, 1.0, 1.25, 1.5, 2.0], transition_ranks=[2, 4],
                             transition_N=16384, transition_n=20),
               "full": dict(D=16, N=32, rank=4, pool=8, P=[32, 64, 128, 256, 512, 1024, 2048, 4096],
                            P_theory=np.unique(np.geomspace(32, 4096, 22).round()).astype(int).tolist(), n=40,
                            n_pools=8, transition_ratio=[0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.5, 2.0, 3.0],
                            transition_ranks=[2, 4], transition_N=16384, transition_n=80)}
    report_order = 92

    def points(self, s):
        pts = [dict(kind="theory", panel=p) for p in ("fresh", "pool")]
        pts += [dict(kind="theory", panel="transition", rank=int(r)) for r in s.transition_ranks]
        pts += [dict(kind="exact", panel=p, P=int(P)) for p in ("fresh", "pool", "isotropic") for P in s.P]
        pts += [dict(kind="exact", panel="transition", rank=int(r), N=int(N), P=self._transition_P(s, r, x))
                for r in s.transition_ranks for N in (s.transition_N, s.N) for x in s.transition_ratio]
        return pts

    @staticmethod
    def _transition_P(s, r, ratio):
        return max(1, int(round(ratio * r * s.D)))

    def _problem(self, s, panel, r=None, N=None):
        K = s.pool if panel == "pool" else None
        return low_rank_problem(s.D, N or s.N, None if panel == "isotropic" else (r or s.rank), K)

    def compute(self, s, point):
        lam = RIDGE / s.D
        panel = point["panel"]
        if point["kind"] == "exact":
            if panel == "transition":
                pb = self._problem(s, panel, point["rank"], point["N"])
                out = _exact(pb, point["P"], TRANSITION_LAM, s.transition_n)
                return {"test": out["test"], "test_se": out["test_se"]}
            pb = self._problem(s, panel)
            return _exact(pb, point["P"], lam, s.n, span=s.rank if panel == "fresh" else 0)
        if panel == "transition":
            r = point["rank"]
            pb = self._problem(s, panel, r, s.transition_N)
            Ps = [self._transition_P(s, r, x) for x in s.transition_ratio]
            return {"test": np.array([replica.stationary(pb, P, np.inf, TRANSITION_LAM, n_pools=s.n_pools).test
                                      for P in Ps])}
        pb = self._problem(s, panel)
        rows, traces = [], []
        for P in s.P_theory:
            e = structured_errors(pb, float(P), np.inf, lam, n_pools=s.n_pools, rng=SEED)
            rows.append([e[k] if e[k] is not None else np.nan for k in ERRORS])
            if panel == "fresh":
                traces.append(float(np.trace(e["mean"][:s.rank, :s.rank])))
        out = {"theory": np.array(rows)}                                  # columns: ERRORS
        if panel == "fresh":
            out["span_trace"] = np.array(traces)
        return out

    def assemble(self, s, outputs):
        pairs = list(zip(self.points(s), outputs))
        D, N, r, lam = int(s.D), int(s.N), int(s.rank), RIDGE / s.D
        P_th = np.array(s.P_theory, float)

        def exact_of(panel):
            mine = [o for p, o in pairs if p["kind"] == "exact" and p["panel"] == panel]
            have = [k for k in ERRORS if k in mine[0]]
            return {k: np.array([float(o[x]) for o in mine]) for k in have for x in (k,)} | {
                k + "_se": np.array([float(o[k + "_se"]) for o in mine]) for k in have}

        def curves(panel, theory):
            ex = exact_of(panel)
            return ProtocolCurves(P_theory=P_th, theory_train=theory[:, 0], theory_test=theory[:, 1],
                                  theory_test_odg=theory[:, 2],
                                  theory_test_idg=None if np.all(np.isnan(theory[:, 3])) else theory[:, 3],
                                  P=np.array(s.P, float), **{k: ex.get(k) for k in (
                                      "train", "train_se", "test", "test_se", "test_odg", "test_odg_se", "test_idg",
                                      "test_idg_se")})

        theory = {p["panel"]: o for p, o in pairs if p["kind"] == "theory" and p["panel"] != "transition"}
        iso_pb = self._problem(s, "isotropic")
        iso = [replica.stationary(iso_pb, float(P), np.inf, lam) for P in P_th]
        iso_theory = np.array([[t.train, t.test, t.test, np.nan] for t in iso])
        fresh_exact = [o for p, o in pairs if p["kind"] == "exact" and p["panel"] == "fresh"]
        span = np.array([float(o["span_trace"]) for o in fresh_exact])
        span_se = np.array([float(o["span_trace_se"]) for o in fresh_exact])
        P_gauss = np.geomspace(min(min(s.P), min(s.P_theory)), max(max(s.P), max(s.P_theory)), 60)
        pb = self._problem(s, "fresh")
        gauss = np.array([structured_errors(pb, float(P), np.inf, lam, law="mp")["kappa_eff"] for P in P_gauss])
        implicit = ImplicitRidge(P=np.array(s.P, float), measured=kappa_of(span, D, N, r),
                                 measured_se=span_se / span**2, finite=kappa_of(theory["fresh"]["span_trace"], D, N, r),
                                 P_gaussian=P_gauss, gaussian=gauss)
        transition = {}
        for rank in s.transition_ranks:
            th = next(o for p, o in pairs if p["kind"] == "theory" and p["panel"] == "transition"
                      and p["rank"] == rank)
            ex = {NN: [o for p, o in pairs if p["kind"] == "exact" and p["panel"] == "transition"
                       and p["rank"] == rank and p["N"] == NN] for NN in (s.transition_N, s.N)}
            ratio = np.array([self._transition_P(s, rank, x) / (rank * s.D) for x in s.transition_ratio])
            transition[int(rank)] = TransitionCurve(
                ratio=ratio, theory_long=th["test"], lam=TRANSITION_LAM,
                exact_long=np.array([float(o["test"]) for o in ex[s.transition_N]]),
                exact_long_se=np.array([float(o["test_se"]) for o in ex[s.transition_N]]),
                exact_short=np.array([float(o["test"]) for o in ex[s.N]]),
                exact_short_se=np.array([float(o["test_se"]) for o in ex[s.N]]))
        iso_on_fresh = np.array([replica.stationary(iso_pb, float(P), np.inf, lam).test for P in s.P])
        data = StructuredTasksData(D=D, N=N, rank=r, pool_size=int(s.pool), transition_N=int(s.transition_N),
                                   noise=NOISE, lam=lam, fresh=curves("fresh", theory["fresh"]["theory"]),
                                   pool=curves("pool", theory["pool"]["theory"]),
                                   isotropic=curves("isotropic", iso_theory), isotropic_theory_on_fresh=iso_on_fresh,
                                   implicit=implicit, transition=transition)
        return data, {}

    def checks(self, r):
        """The report section ``structured_tasks``.

        1. The finite-``D`` theory against the exact averages of fresh rank-``r`` tasks and of a pool (each error of
           each panel at every ``P`` where the theory has a point): within 5 % + 3 s.e. (the acceptance criterion;
           the theory's own sampling error is far below the exact s.e. here).
        2. The isotropic baseline (the theory of ``S = I``, same power) against the same exact averages of the
           rank-``r`` test error: it must fail that criterion at every ``P``.
        3. The implicit ridge: the finite theory's ``κ`` against the measured one, within 3 s.e. + 10 %.
        4. The transition: at the long context the finite theory against the exact averages at every ``P/(rD)``
           (5 % + 3 s.e.), and the exact test error at ``P = rD`` exceeds those at ``P/(rD) = ½`` and ``2`` by more
           than 3 s.e. (a peak); at the short context it does not exceed the error at ``½`` by 3 s.e. (no peak).

        Parameters
        ----------
        r : validation.experiments.Result

        Returns
        -------
        list of validation.experiments.Check
        """
        s, d = r.settings, r.data
        out = []
        setting = (f"D={d.D}, N={d.N}, σ={d.noise:g}, λ={d.lam:g}, rank r={d.rank}, S=(D/r)AAᵀ, "
                   f"{s['n']} datasets")
        for panel, cur, extra in (("fresh tasks", d.fresh, ""), ("pool", d.pool, f", K={d.pool_size}")):
            names = ("train", "test", "test_odg") + (("test_idg",) if cur.test_idg is not None else ())
            for i, P in enumerate(cur.P):
                j = np.flatnonzero(cur.P_theory == P)
                if not j.size:
                    continue
                for name in names:
                    t, m, se = float(getattr(cur, "theory_" + name)[j[0]]), float(getattr(cur, name)[i]), float(
                        getattr(cur, name + "_se")[i])
                    out.append(Check(self.name, f"finite-D theory, {name}, {panel}", f"{setting}{extra}, P={P:g}",
                                     f"{t:.4g}", f"{m:.4g} ± {se:.2g}", f"{abs(t / m - 1):.2%}",
                                     bool(abs(t - m) <= 0.05 * m + 3 * se), "≤ 5 % + 3 s.e."))
        for i, P in enumerate(d.fresh.P):
            t, m, se = float(d.isotropic_theory_on_fresh[i]), float(d.fresh.test[i]), float(d.fresh.test_se[i])
            out.append(Check(self.name, "baseline rejected: isotropic theory (same power) for the rank-r test error",
                             f"{setting}, P={P:g}", f"{t:.4g}", f"{m:.4g} ± {se:.2g}", f"{abs(t / m - 1):.1%}",
                             bool(abs(t - m) > 0.05 * m + 3 * se), "misses by more than 5 % + 3 s.e."))
        imp = d.implicit
        for i, P in enumerate(imp.P):
            j = np.flatnonzero(d.fresh.P_theory == P)
            if not j.size:
                continue
            t, m, se = float(imp.finite[j[0]]), float(imp.measured[i]), float(imp.measured_se[i])
            out.append(Check(self.name, "implicit ridge κ of the mean solution (finite theory)", f"{setting}, P={P:g}",
                             f"{t:.4g}", f"{m:.4g} ± {se:.2g}", f"{abs(t - m) / max(abs(m), 1e-300):.1%}",
                             bool(abs(t - m) <= 3 * se + 0.1 * abs(m)), "≤ 3 s.e. + 10 %"))
        for rank, cur in d.transition.items():
            where = f"D={d.D}, r={rank}, N={d.transition_N}, λ={cur.lam:g}, {s['transition_n']} datasets"
            for k, x in enumerate(cur.ratio):
                t, m, se = float(cur.theory_long[k]), float(cur.exact_long[k]), float(cur.exact_long_se[k])
                out.append(Check(self.name, "finite-D theory, test, transition at long context",
                                 f"{where}, P/(rD)={x:.3g}", f"{t:.4g}", f"{m:.4g} ± {se:.2g}",
                                 f"{abs(t / m - 1):.2%}", bool(abs(t - m) <= 0.05 * m + 3 * se), "≤ 5 % + 3 s.e."))
            k1, lo, hi = (int(np.argmin(np.abs(cur.ratio - x))) for x in (1.0, 0.5, 2.0))
            peak = cur.exact_long[k1]
            margin = [peak - cur.exact_long[k] - 3 * np.hypot(cur.exact_long_se[k1], cur.exact_long_se[k])
                      for k in (lo, hi)]
            out.append(Check(self.name, "transition at P = rD: a peak of the test error (long context)", where,
                             f"theory {cur.theory_long[k1]:.3g} at P/(rD)={cur.ratio[k1]:.3g}",
                             f"{peak:.3g} vs {cur.exact_long[lo]:.3g} (½), {cur.exact_long[hi]:.3g} (2)",
                             f"peak/neighbours {peak / max(cur.exact_long[lo], cur.exact_long[hi]):.2f}",
                             bool(min(margin) > 0), "exceeds both by > 3 s.e."))
            short = cur.exact_short[k1] <= cur.exact_short[lo] + 3 * np.hypot(cur.exact_short_se[k1],
                                                                               cur.exact_short_se[lo])
            out.append(Check(self.name, "no peak at P = rD at the short context (the context ridge smooths it)",
                             f"D={d.D}, r={rank}, N={d.N}, λ={cur.lam:g}, {s['transition_n']} datasets", "—",
                             f"{cur.exact_short[k1]:.3g} at 1 vs {cur.exact_short[lo]:.3g} at ½", "—", bool(short),
                             "not above the error at ½ by 3 s.e."))
        return out
