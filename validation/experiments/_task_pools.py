"""Exact dataset averages with task pools, the pool figures, and the report section ``pools``.

:func:`pool_average` solves ``n_datasets`` independent datasets exactly (:func:`replica.ridge`: no ``M × M``
eigendecomposition) and averages the fresh-task (ICL) and in-distribution (IDG) errors, with standard errors.

Experiments (each dataset average is seeded by ``(seed, P, K, i)``, so every average is a point; the theory
curves that cost most are points too, the cheap ones are computed in ``assemble``):

* ``pools_double_descent``, ``pools_gtask``, ``pools_finite_d``, ``pools_phase``: the figures of the same names
  (:mod:`validation.gallery.pools`);
* ``pools_finite_d`` also gives the report section ``pools`` (:meth:`FiniteD.checks`): the finite-``D`` pool theory
  against the figure's own exact averages at its first ``D`` (``D = 20`` in the quick and full modes) and
  ``κ ∈ {0.5, 2}``; the ``D → ∞`` theory against exact averages at ``D = 16, 32`` extrapolated in ``1/D`` (points
  of their own: the peer's conventions, sphere tasks and ridge ``λ_L = 0.1``, a setting no figure has); the pool
  theory's ``D → ∞`` limit; the fast ridge solver against the eigensystem route.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
import replica
from linattn import _check as check
from linattn import _validate as validate
from linattn._numerics.stats import mean_se
from replica._pool_theory import pool_errors

from ._base import Check, Experiment
from ._data import ExperimentData


@dataclass(frozen=True, eq=False)
class PoolAverage:
    """ICL and IDG errors (and training errors, weight decay included) of independent datasets, exact per dataset.

    Attributes
    ----------
    test, test_idg, train : ndarray (n_datasets,)
        Fresh-task (ICL) error, in-distribution error and training error of each dataset; ``*_mean`` and
        ``*_se`` are their means and standard errors.
    """

    test: np.ndarray
    test_idg: np.ndarray
    train: np.ndarray

    def __repr__(self):
        return (f"PoolAverage({self.test.size} datasets: test {self.test_mean:.6g} ± {self.test_se:.2g}, "
                f"test_idg {self.test_idg_mean:.6g} ± {self.test_idg_se:.2g}, train {self.train_mean:.6g} ± "
                f"{self.train_se:.2g})")

    @property
    def test_mean(self) -> float:
        return float(self.test.mean())

    @property
    def test_idg_mean(self) -> float:
        return float(self.test_idg.mean())

    @property
    def train_mean(self) -> float:
        return float(self.train.mean())

    @property
    def test_se(self) -> float:
        return mean_se(self.test, single=np.nan)[1]

    @property
    def test_idg_se(self) -> float:
        return mean_se(self.test_idg, single=np.nan)[1]

    @property
    def train_se(self) -> float:
        return mean_se(self.train, single=np.nan)[1]


def pool_average(pb, P, lam, n_datasets=20, model="reduced", rng=0, progress=False) -> PoolAverage:
    """Exact ridge solutions (:func:`replica.ridge`) of ``n_datasets`` datasets with a task pool, and their errors.

    Parameters
    ----------
    pb : linattn.Problem
        With ``tasks=K`` (a fresh task per prompt is also accepted: then ``idg`` equals the fresh-task error
        of a pool of all the training tasks, and is reported as ``icl``).
    P : int
        Prompts per dataset.
    lam : float or (float, float)
        Weight decay (per block for the full model: the peer's ridge ``λ_L`` is ``(λ_L/D, λ_L)``).
    n_datasets : int
        ``>= 2``; dataset ``i`` uses ``rng=(seed, P, K, i)``.
    model : {"reduced", "full"}
    rng : int
    progress : bool

    Returns
    -------
    PoolAverage

    Examples
    --------
    Exact ICL and IDG errors of the ridge solution at Lu et al.'s setting (ridge ``λ_L`` = ``(λ_L/D, λ_L)``):

    >>> import linattn, validation
    >>> pb = linattn.Problem(12, 12, 0.1, tasks=6)
    >>> avg = validation.pool_average(pb, 288, (0.1 / 12, 0.1), n_datasets=4, model="full")
    >>> avg.test_mean > avg.test_idg_mean          # memorising a small pool: in-distribution is easier
    True
    """
    validate.problem(pb)
    P = check.positive_int("P", P)
    n_datasets = check.positive_int("n_datasets", n_datasets, minimum=2, maximum=10**6)
    check.model(model)
    rng = check.seed_int("rng", rng)
    progress = check.boolean("progress", progress)
    icl, idg, train = (np.empty(n_datasets) for _ in range(3))
    for i in tqdm(range(n_datasets), desc=f"pools P={P} K={pb.tasks}", disable=not progress, leave=False):
        sol = replica.ridge(pb.sample(P, rng=(rng, P, pb.tasks or 0, i)), pb, lam, model)
        icl[i], train[i] = sol.test, sol.train
        idg[i] = sol.test if sol.test_idg is None else sol.test_idg
    return PoolAverage(test=icl, test_idg=idg, train=train)


def _average_arrays(avg: PoolAverage) -> dict:
    return {"icl": avg.test, "idg": avg.test_idg, "train": avg.train}


# ----------------------------------------------------------------------------- the D → ∞ check of ``pools``
#: the setting of the ``D → ∞`` comparison of the report (peer conventions: sphere tasks, ridge ``λ_L``): Lu et al.'s
#: context ratio ``α = N/D``, sample ratio ``τ = P/D²`` and task ratio ``κ = K/D``, the noise ``σ``, the ridge ``λ_L``
LIMIT_CONTEXT_RATIO, LIMIT_SAMPLE_RATIO, LIMIT_TASK_RATIO, LIMIT_NOISE, LIMIT_RIDGE = 1.0, 2.0, 0.5, 0.1, 0.1
#: the dimensions of the exact averages extrapolated to ``D → ∞`` (``2E₃₂ − E₁₆``)
LIMIT_D = (16, 32)


def _sphere_problem(D, context_ratio, task_ratio, noise=LIMIT_NOISE):
    """``N = context_ratio · D``, ``K = task_ratio · D`` tasks on the sphere (the peer's conventions)."""
    return linattn.Problem(D, int(context_ratio * D), noise, tasks=int(task_ratio * D), task_law="sphere")


# ----------------------------------------------------------------------------- figures
#: the label noise ``σ`` of the pool figures (``σ² = 0.01``)
FIG_NOISE = 0.1


def _renamed(arrays, renames):
    """``arrays`` with the keys of ``renames`` (old name → new member name) renamed; the others kept as they are."""
    out = dict(arrays)
    for old, new in renames.items():
        out[new] = out.pop(old)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class DoubleDescentCurves(ExperimentData):
    """The curves of one context ratio ``α = N/D`` of figure ``pools_double_descent`` (errors ``E = e/2``).

    Attributes
    ----------
    icl_theory, idg_theory : ndarray (n_theory,)
        The ``D → ∞`` theory (:func:`replica.asymptotic`) of the fresh-task (ICL) and in-distribution (IDG) errors on
        the grid :attr:`DoubleDescentData.sample_ratio_theory`.
    icl_finite, idg_finite : ndarray (n_theory,)
        The finite-``D`` pool theory at the simulated ``D``, on the same grid.
    icl, icl_se, idg, idg_se : ndarray (n_tau,)
        Exact dataset averages and their standard errors at :attr:`DoubleDescentData.sample_ratio`.
    """

    icl_theory: np.ndarray
    idg_theory: np.ndarray
    icl_finite: np.ndarray
    idg_finite: np.ndarray
    icl: np.ndarray
    icl_se: np.ndarray
    idg: np.ndarray
    idg_se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class DoubleDescentData(ExperimentData):
    """Data of ``pools_double_descent``: ICL and IDG errors against the sample ratio ``τ = P/D²`` per context ratio.

    Attributes
    ----------
    D : int
        Token dimension of the simulations and of the finite-``D`` theory.
    sample_ratio_theory : ndarray (n_theory,)
        ``τ`` of the theory curves (geometric, on both sides of ``τ = 1``).
    sample_ratio : ndarray (n_tau,)
        ``τ`` of the exact averages (the setting ``tau``).
    context_ratio : ndarray (n_alpha,)
        The context ratios ``α = N/D`` (the setting ``alpha``).
    curves : dict of float to DoubleDescentCurves
        The curves of each ``α``.
    """

    D: int
    sample_ratio_theory: np.ndarray
    sample_ratio: np.ndarray
    context_ratio: np.ndarray
    curves: dict[float, DoubleDescentCurves]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``tau_theory``, ``tau``, ``alpha``, ``D`` and ``a{α:g}_{icl,idg}_{theory,finite}``,
        ``a{α:g}_{icl,idg}``, ``a{α:g}_{icl,idg}_se``."""
        out = _renamed(arrays, {"tau_theory": "sample_ratio_theory", "tau": "sample_ratio", "alpha": "context_ratio"})
        for alpha in np.asarray(out["context_ratio"], float):
            for name in DoubleDescentCurves.__dataclass_fields__:
                out[f"curves[{float(alpha)!r}].{name}"] = out.pop(f"a{alpha:g}_{name}")
        return out


class PoolsFigure(Experiment):
    """Base of the pool figures: points are theory curves (``kind="theory"``) and dataset averages (``"sim"``)."""

    def _split(self, s, outputs):
        """The ``(point, output)`` pairs of the theory points and of the averages."""
        pairs = list(zip(self.points(s), outputs))
        return [x for x in pairs if x[0]["kind"] == "theory"], [x for x in pairs if x[0]["kind"] == "sim"]


class DoubleDescent(PoolsFigure):
    """ICL and IDG errors against ``τ = P/D²`` at ``κ = 0.5`` (figure ``pools_double_descent``): one theory point
    per ``α`` (the finite-``D`` pool theory), one point per ``(α, τ)`` average. The settings ``alpha`` and ``tau`` are
    Lu et al.'s context ratio ``α = N/D`` and sample ratio ``τ = P/D²`` (the data call them so)."""

    name = "pools_double_descent"
    title = "Task pools: double descent in τ = P/D² (ICL and IDG), κ = 0.5, α ∈ {1, 10, 100}"
    data_class = DoubleDescentData
    presets = {"smoke": dict(D=12, alpha=[1.0], tau=[0.5, 2.0], n=2, theory=4),
               "quick": dict(D=32, alpha=[1.0, 10.0, 100.0], tau=[0.2, 0.5, 0.8, 1.25, 2.0, 4.0], n=4, theory=40),
               "full": dict(D=100, alpha=[1.0, 10.0, 100.0],
                            tau=[0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0], n=10, theory=120)}
    #: the task ratio ``κ = K/D``, the peer's ridge ``λ_L`` (``λ_L/D`` on ``Γ``, ``λ_L`` on ``v``) and the data seed
    TASK_RATIO, RIDGE, SEED = 0.5, 1e-4, 3

    def points(self, s):
        return ([dict(kind="theory", alpha=a) for a in s.alpha]
                + [dict(kind="sim", alpha=a, tau=t) for a in s.alpha for t in s.tau])

    @staticmethod
    def _taus(s):
        return np.concatenate([np.geomspace(0.1, 0.97, s.theory // 2), np.geomspace(1.03, 6.0, s.theory // 2)])

    def _problem(self, s, context_ratio):
        return linattn.Problem(s.D, int(context_ratio * s.D), FIG_NOISE, tasks=int(self.TASK_RATIO * s.D),
                               task_law="sphere")

    def compute(self, s, point):
        pb, D = self._problem(s, point["alpha"]), s.D
        if point["kind"] == "theory":
            fd = [replica.stationary(pb, t * D * D, np.inf, self.RIDGE / D, "full", n_pools=1) for t in self._taus(s)]
            return {"icl_finite": np.array([f.test for f in fd]), "idg_finite": np.array([f.test_idg for f in fd])}
        a = pool_average(pb, int(round(point["tau"] * D * D)), (self.RIDGE / D, self.RIDGE), s.n, rng=self.SEED,
                         model="full")
        return {"icl": a.test_mean, "icl_se": a.test_se, "idg": a.test_idg_mean, "idg_se": a.test_idg_se}

    def assemble(self, s, outputs):
        taus_th = self._taus(s)
        theory, sims = self._split(s, outputs)
        curves = {}
        for alpha in np.array(s.alpha):
            th = [replica.asymptotic(alpha, t, self.TASK_RATIO, FIG_NOISE, self.RIDGE) for t in taus_th]
            fin = next(o for p, o in theory if p["alpha"] == alpha)
            mine = [o for p, o in sims if p["alpha"] == alpha]
            curves[float(alpha)] = DoubleDescentCurves(
                icl_theory=np.array([a.test for a in th]), idg_theory=np.array([a.test_idg for a in th]),
                icl_finite=fin["icl_finite"], idg_finite=fin["idg_finite"],
                **{name: np.array([float(o[name]) for o in mine]) for name in ("icl", "icl_se", "idg", "idg_se")})
        return DoubleDescentData(D=s.D, sample_ratio_theory=taus_th, sample_ratio=np.array(s.tau),
                                 context_ratio=np.array(s.alpha), curves=curves), {}


@dataclass(frozen=True, eq=False, repr=False)
class GTaskCurves(ExperimentData):
    """``g_task = E_ICL − E_IDG`` at one simulated ``D`` (figure ``pools_gtask``).

    Attributes
    ----------
    finite : ndarray (n_theory,)
        The finite-``D`` pool theory on :attr:`GTaskData.task_ratio_theory`.
    mean, se : ndarray (n_kappa,)
        Exact dataset averages of ``g_task`` and their standard errors at :attr:`GTaskData.task_ratio`.
    """

    finite: np.ndarray
    mean: np.ndarray
    se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class GTaskData(ExperimentData):
    """Data of ``pools_gtask``: the task-generalization gap against the task ratio ``κ = K/D``.

    Attributes
    ----------
    task_ratio_theory : ndarray (n_theory,)
        ``κ`` of the theory curves (a geometric grid on ``[0.1, 40]`` and every simulated ``κ``).
    task_ratio : ndarray (n_kappa,)
        ``κ`` of the exact averages (the setting ``kappa``; the pools have ``K = round(κD)`` tasks).
    D_values : ndarray (n_D,)
        The simulated token dimensions.
    gtask_theory : ndarray (n_theory,)
        The ``D → ∞`` theory of ``g_task``.
    by_D : dict of int to GTaskCurves
        The finite-``D`` theory and the exact averages of each ``D``.
    """

    task_ratio_theory: np.ndarray
    task_ratio: np.ndarray
    D_values: np.ndarray
    gtask_theory: np.ndarray
    by_D: dict[int, GTaskCurves]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``kappa_theory``, ``kappa``, ``Ds``, ``gtask_theory`` and ``D{D}_finite``, ``D{D}``,
        ``D{D}_se``."""
        out = _renamed(arrays, {"kappa_theory": "task_ratio_theory", "kappa": "task_ratio", "Ds": "D_values"})
        for D in np.asarray(out["D_values"], int):
            out.update(_renamed({k: out.pop(k) for k in (f"D{D}_finite", f"D{D}", f"D{D}_se")},
                                {f"D{D}_finite": f"by_D[{D}].finite", f"D{D}": f"by_D[{D}].mean",
                                 f"D{D}_se": f"by_D[{D}].se"}))
        return out


class GTask(PoolsFigure):
    """``g_task = E_ICL − E_IDG`` against ``κ`` at ``α = τ = 10`` (figure ``pools_gtask``): one theory point per ``D``
    (the finite-``D`` pool theory averaged over ``n_pools`` random pools, on a ``κ`` grid that contains every
    simulated ``κ``), one point per ``(D, κ)`` average. The setting ``kappa`` is the task ratio ``κ = K/D``."""

    name = "pools_gtask"
    title = "Task pools: g_task = E_ICL − E_IDG against κ (α = τ = 10), D = 32 and 64 vs theory"
    data_class = GTaskData
    presets = {"smoke": dict(D=[12], kappa=[0.5, 4.0], n=[2], theory=6, n_pools=1),
               "quick": dict(D=[32, 64], kappa=[0.2, 0.4, 0.7, 1.0, 1.6, 4.0], n=[4, 2], theory=16, n_pools=1),
               "full": dict(D=[32, 64], kappa=np.geomspace(0.2, 32, 12).tolist(), n=[20, 20], theory=60, n_pools=8)}
    #: Lu et al.'s context ratio ``α = N/D`` and sample ratio ``τ = P/D²``, the peer's ridge ``λ_L``, the data seed
    CONTEXT_RATIO, SAMPLE_RATIO, RIDGE, SEED = 10.0, 10.0, 1e-4, 5

    @staticmethod
    def _kappa_theory(s):
        """The ``κ`` of the theory curves: a geometric grid on ``[0.1, 40]`` and every simulated ``κ``."""
        return np.unique(np.concatenate([np.geomspace(0.1, 40, s.theory), np.array(s.kappa, float)]))

    def points(self, s):
        return ([dict(kind="theory", D=D) for D in s.D]
                + [dict(kind="sim", D=D, n=n, kappa=k) for D, n in zip(s.D, s.n) for k in s.kappa])

    def _problem(self, D, task_ratio):
        return linattn.Problem(D, int(self.CONTEXT_RATIO * D), FIG_NOISE, tasks=max(1, int(round(task_ratio * D))),
                               task_law="sphere")

    def compute(self, s, point):
        D = point["D"]
        if point["kind"] == "theory":
            fin = []
            for k in self._kappa_theory(s):
                st = replica.stationary(self._problem(D, k), self.SAMPLE_RATIO * D * D, np.inf, self.RIDGE / D,
                                        "full", n_pools=s.n_pools)
                fin.append(st.test - st.test_idg)
            return {"finite": np.array(fin)}
        a = pool_average(self._problem(D, point["kappa"]), int(self.SAMPLE_RATIO * D * D),
                         (self.RIDGE / D, self.RIDGE), point["n"], rng=self.SEED, model="full")
        mean, se = mean_se(a.test - a.test_idg)
        return {"mean": mean, "se": se}

    def assemble(self, s, outputs):
        kth = self._kappa_theory(s)
        th = [replica.asymptotic(self.CONTEXT_RATIO, self.SAMPLE_RATIO, k, FIG_NOISE, self.RIDGE) for k in kth]
        theory, sims = self._split(s, outputs)
        by_D = {}
        for D in s.D:
            mine = [o for p, o in sims if p["D"] == D]
            by_D[int(D)] = GTaskCurves(finite=next(o for p, o in theory if p["D"] == D)["finite"],
                                       mean=np.array([float(o["mean"]) for o in mine]),
                                       se=np.array([float(o["se"]) for o in mine]))
        return GTaskData(task_ratio_theory=kth, task_ratio=np.array(s.kappa, float), D_values=np.array(s.D),
                         gtask_theory=np.array([a.test - a.test_idg for a in th]), by_D=by_D), {}


@dataclass(frozen=True, eq=False, repr=False)
class FiniteDCurves(ExperimentData):
    """The curves of one ``D`` of figure ``pools_finite_d`` (errors ``E = e/2``).

    Attributes
    ----------
    task_ratio_theory : ndarray (n_K,)
        ``κ = K/D`` of the theory curve (integer pool sizes ``K``).
    theory_icl, theory_idg : ndarray (n_K,)
        The finite-``D`` pool theory (``law="finite"``), averaged over ``n_pools`` nested random pools.
    theory_icl_se, theory_idg_se : ndarray (n_K,)
        Standard errors of that pool average.
    baseline_icl, baseline_idg : ndarray (n_K,)
        The earlier theory (``law="factor"``: Gaussian features × the fresh-task finite-``D`` factor).
    exact_icl, exact_icl_se, exact_idg, exact_idg_se : ndarray (n_kappa,)
        Exact dataset averages and their standard errors at :attr:`FiniteDData.task_ratio`.
    """

    task_ratio_theory: np.ndarray
    theory_icl: np.ndarray
    theory_idg: np.ndarray
    theory_icl_se: np.ndarray
    theory_idg_se: np.ndarray
    baseline_icl: np.ndarray
    baseline_idg: np.ndarray
    exact_icl: np.ndarray
    exact_icl_se: np.ndarray
    exact_idg: np.ndarray
    exact_idg_se: np.ndarray


#: the columns of the theory output of a ``pools_finite_d`` point (one row per pool size ``K``)
_THEORY_COLUMNS = ("theory_icl", "theory_idg", "theory_icl_se", "theory_idg_se", "baseline_icl", "baseline_idg")
#: the columns of an exact-average output of a ``pools_finite_d`` point
_EXACT_COLUMNS = ("exact_icl", "exact_icl_se", "exact_idg", "exact_idg_se")


@dataclass(frozen=True, eq=False, repr=False)
class LimitAverages(ExperimentData):
    """Exact errors of each dataset at one ``D`` of the ``D → ∞`` check (:data:`LIMIT_D`).

    Attributes
    ----------
    icl, idg, train : ndarray (n_datasets,)
        Fresh-task, in-distribution and training error (weight decay included) of each dataset.
    """

    icl: np.ndarray
    idg: np.ndarray
    train: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class FiniteDData(ExperimentData):
    """Data of ``pools_finite_d`` (the figure and the report section ``pools``).

    Attributes
    ----------
    D_values : ndarray (n_D,)
        The token dimensions of the figure's rows.
    task_ratio : ndarray (n_kappa,)
        ``κ = K/D`` of the exact averages (the setting ``kappa``).
    task_ratio_asymptotic : ndarray (60,)
        ``κ`` of the ``D → ∞`` curves.
    asymptotic_icl, asymptotic_idg : ndarray (60,)
        The ``D → ∞`` formula (:func:`replica.asymptotic`) at the figure's setting.
    by_D : dict of int to FiniteDCurves
        The theory curves and exact averages of each ``D``.
    limit : dict of int to LimitAverages
        The exact averages at each ``D`` of :data:`LIMIT_D` (the peer's conventions).
    limit_theory_icl, limit_theory_idg : float
        The ``D → ∞`` theory at the setting of the limit check (``κ = LIMIT_TASK_RATIO``).
    limit_fresh_icl : float
        The fresh-task formula (``κ = ∞``) there: the baseline the check must reject.
    check_asymptotic_icl, check_asymptotic_idg : ndarray (n_check,)
        The ``D → ∞`` formula at the figure's setting and :attr:`FiniteD.CHECK_TASK_RATIO`.
    mp_extrapolated_icl, mp_extrapolated_idg : float
        The pool theory's ``D → ∞`` limit (quadratic in ``1/D`` over ``D = 1000 … 8000``).
    fast_rel : float
        Largest relative difference of the fast ridge solver to the eigensystem route (test, IDG, train).
    """

    D_values: np.ndarray
    task_ratio: np.ndarray
    task_ratio_asymptotic: np.ndarray
    asymptotic_icl: np.ndarray
    asymptotic_idg: np.ndarray
    by_D: dict[int, FiniteDCurves]
    limit: dict[int, LimitAverages]
    limit_theory_icl: float
    limit_theory_idg: float
    limit_fresh_icl: float
    check_asymptotic_icl: np.ndarray
    check_asymptotic_idg: np.ndarray
    mp_extrapolated_icl: float
    mp_extrapolated_idg: float
    fast_rel: float

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``Ds``, ``kappa``, ``kappa_asym``, ``asym`` (columns ICL, IDG), ``D{D}_kappa_theory``,
        ``D{D}_theory`` (six columns), ``D{D}_exact`` (four columns), ``limit_D{D}_{icl,idg,train}``, ``asym_icl``,
        ``asym_idg``, ``fresh_icl``, ``check_asym`` (columns ICL, IDG), ``mp_extrapolated`` (ICL, IDG), ``fast_rel``."""
        out = _renamed(arrays, {"Ds": "D_values", "kappa": "task_ratio", "kappa_asym": "task_ratio_asymptotic",
                                "asym_icl": "limit_theory_icl", "asym_idg": "limit_theory_idg",
                                "fresh_icl": "limit_fresh_icl"})
        for name, old in (("asymptotic", "asym"), ("check_asymptotic", "check_asym"), ("mp_extrapolated",
                                                                                         "mp_extrapolated")):
            packed = np.asarray(out.pop(old))
            out[f"{name}_icl"], out[f"{name}_idg"] = packed[..., 0], packed[..., 1]
        for D in np.asarray(out["D_values"], int):
            out[f"by_D[{D}].task_ratio_theory"] = out.pop(f"D{D}_kappa_theory")
            for packed, columns in ((out.pop(f"D{D}_theory"), _THEORY_COLUMNS), (out.pop(f"D{D}_exact"),
                                                                                 _EXACT_COLUMNS)):
                out.update({f"by_D[{D}].{c}": np.asarray(packed)[:, j] for j, c in enumerate(columns)})
        for D in LIMIT_D:
            out.update({f"limit[{D}].{k}": out.pop(f"limit_D{D}_{k}") for k in ("icl", "idg", "train")})
        return out


class FiniteD(PoolsFigure):
    """The finite-``D`` pool theory against exact averages over ``κ`` at ``D = 20`` and ``40`` (figure
    ``pools_finite_d``), with the earlier theory (``law="factor"``, the baseline) and the ``D → ∞`` formula: one theory
    point per ``D`` (a curve over ``K``, nested pools so that it is smooth), one point per ``(D, κ)`` average; and the
    report section ``pools`` (:meth:`checks`): one point per ``D`` of :data:`LIMIT_D` (``n16``, ``n32`` datasets).
    The setting ``kappa`` is the task ratio ``κ = K/D``."""

    name = "pools_finite_d"
    title = "Task pools at finite D: the finite-D pool theory vs exact averages vs D → ∞ over κ, D = 20 and 40"
    data_class = FiniteDData
    presets = {"smoke": dict(D=[12], n=[2], kappa=[0.5, 2.0], theory=4, n_pools=2, n16=3, n32=2),
               "quick": dict(D=[20, 40], n=[24, 8], kappa=[0.2, 0.5, 1.0, 2.0, 5.0], theory=14, n_pools=4, n16=40,
                             n32=20),
               "full": dict(D=[20, 40], n=[100, 30], kappa=[0.2, 0.5, 1.0, 2.0, 5.0], theory=32, n_pools=16, n16=160,
                            n32=80)}
    #: ``N = CONTEXT_RATIO · D``, ``P = SAMPLE_RATIO · D²``, ``λ = RIDGE/D`` on both blocks; the data seed
    CONTEXT_RATIO, SAMPLE_RATIO, RIDGE, SEED = 2.0, 2.0, 0.1, 9
    #: the task ratios ``κ`` at which the report compares the finite-``D`` theory with the exact averages (at the
    #: first ``D``; each must be among the settings' ``kappa``)
    CHECK_TASK_RATIO = (0.5, 2.0)
    report_order = 90

    def points(self, s):
        return ([dict(kind="theory", D=D) for D in s.D]
                + [dict(kind="sim", D=D, n=n, kappa=k) for D, n in zip(s.D, s.n) for k in s.kappa]
                + [dict(kind="limit", D=D) for D in LIMIT_D])

    def _problem(self, D, K):
        return linattn.Problem(int(D), int(self.CONTEXT_RATIO * D), FIG_NOISE, tasks=int(K))

    @staticmethod
    def _k_theory(s, D):
        """The pool sizes of the theory curve: a geometric grid of ``K`` over ``κ ∈ [0.15, 6]`` and every simulated
        ``K = κD``."""
        grid = np.round(np.geomspace(0.15 * D, 6.0 * D, s.theory)).astype(int)
        return np.unique(np.concatenate([np.maximum(grid, 1), np.array([int(k * D) for k in s.kappa])]))

    def compute(self, s, point):
        D = point["D"]
        if point["kind"] == "limit":            # the D → ∞ check: peer conventions (sphere tasks, ridge λ_L)
            n = s.n16 if D == LIMIT_D[0] else s.n32
            avg = pool_average(_sphere_problem(D, LIMIT_CONTEXT_RATIO, LIMIT_TASK_RATIO),
                               int(LIMIT_SAMPLE_RATIO * D * D), (LIMIT_RIDGE / D, LIMIT_RIDGE), n, rng=7, model="full")
            return _average_arrays(avg)
        P, lam = int(self.SAMPLE_RATIO * D * D), self.RIDGE / D
        if point["kind"] == "theory":
            rows = []
            for K in self._k_theory(s, D):
                pb = self._problem(D, K)
                fin = pool_errors(pb, P, np.inf, lam, "full", "finite", n_pools=s.n_pools)
                old = pool_errors(pb, P, np.inf, lam, "full", "factor", n_pools=s.n_pools)
                rows.append([fin.test, fin.test_idg, fin.test_se, fin.test_idg_se, old.test, old.test_idg])
            return {"theory": np.array(rows)}                                 # columns: _THEORY_COLUMNS
        av = pool_average(self._problem(D, int(point["kappa"] * D)), P, lam, point["n"], rng=self.SEED, model="full")
        return {"exact": np.array([av.test_mean, av.test_se, av.test_idg_mean, av.test_idg_se])}  # _EXACT_COLUMNS

    def assemble(self, s, outputs):
        theory, sims = self._split(s, outputs)
        kap = np.geomspace(0.15, 6.0, 60)
        asym = np.array([[a.test, a.test_idg] for a in (replica.asymptotic(self.CONTEXT_RATIO, self.SAMPLE_RATIO, k,
                                                                           FIG_NOISE, self.RIDGE) for k in kap)])
        by_D = {}
        for D in s.D:
            th = next(o for p, o in theory if p["D"] == D)["theory"]
            ex = np.array([o["exact"] for p, o in sims if p["D"] == D])
            by_D[int(D)] = FiniteDCurves(task_ratio_theory=self._k_theory(s, D) / D,
                                         **{c: th[:, j] for j, c in enumerate(_THEORY_COLUMNS)},
                                         **{c: ex[:, j] for j, c in enumerate(_EXACT_COLUMNS)})
        report, meta = self._report_data(s, outputs)
        return FiniteDData(D_values=np.array(s.D), task_ratio=np.array(s.kappa, float), task_ratio_asymptotic=kap,
                           asymptotic_icl=asym[:, 0], asymptotic_idg=asym[:, 1], by_D=by_D, **report), meta

    def _report_data(self, s, outputs):
        """The fields of the report beside the figure's: the exact averages at :data:`LIMIT_D` (``limit``), the
        ``D → ∞`` theory there (``limit_theory_icl``, ``limit_theory_idg``, the fresh-task ``limit_fresh_icl``), the
        ``D → ∞`` formula at the checked ``κ`` (``check_asymptotic_*``), the pool theory's ``D → ∞`` extrapolation
        (``mp_extrapolated_*``) and the fast ridge solver's relative difference to the eigensystem route
        (``fast_rel``); and the solver's metadata."""
        limit = {int(p["D"]): LimitAverages(**out) for p, out in zip(self.points(s), outputs) if p["kind"] == "limit"}
        th, base = (replica.asymptotic(LIMIT_CONTEXT_RATIO, LIMIT_SAMPLE_RATIO, k, LIMIT_NOISE, LIMIT_RIDGE)
                    for k in (LIMIT_TASK_RATIO, np.inf))
        check_asym = [replica.asymptotic(self.CONTEXT_RATIO, self.SAMPLE_RATIO, k, FIG_NOISE, self.RIDGE)
                      for k in self.CHECK_TASK_RATIO]
        Ds = np.array([1000, 2000, 4000, 8000])
        vals = np.array([(lambda st: (st.test, st.test_idg))(replica.stationary(
            _sphere_problem(int(d), LIMIT_CONTEXT_RATIO, LIMIT_TASK_RATIO), LIMIT_SAMPLE_RATIO * d * d, np.inf,
            LIMIT_RIDGE / d, "reduced", law="mp", pool="mp")) for d in Ds])
        mp_icl, mp_idg = (float(np.polyval(np.polyfit(1.0 / Ds, vals[:, k], 2), 0.0)) for k in range(2))
        pb = linattn.Problem(12, 24, LIMIT_NOISE, tasks=6)
        sample = pb.sample(400, rng=3)
        fast = replica.ridge(sample, pb, 0.01, "full")
        ref = replica.gibbs(sample, pb, np.inf, 0.01, "full")
        fast_rel = max(abs(fast.test / float(ref.test) - 1), abs(fast.test_idg / float(ref.test_idg) - 1),
                       abs(fast.train / float(ref.train) - 1))
        data = dict(limit=limit, limit_theory_icl=th.test, limit_theory_idg=th.test_idg, limit_fresh_icl=base.test,
                    check_asymptotic_icl=np.array([a.test for a in check_asym]),
                    check_asymptotic_idg=np.array([a.test_idg for a in check_asym]), mp_extrapolated_icl=mp_icl,
                    mp_extrapolated_idg=mp_idg, fast_rel=fast_rel)
        meta = {"fast_method": str(fast.method), "fast_iterations": int(fast.iterations),
                "fast_certified": bool(fast.certified)}
        return data, meta

    def checks(self, r):
        """The report section ``pools`` (each comparison also a test in ``tests/replica/test_pools.py``).

        1. ``D → ∞`` theory vs exact averages extrapolated in ``1/D`` (``2E₃₂ − E₁₆``), ICL and IDG, peer conventions
           (sphere tasks, ridge ``λ_L``): tolerance 4 s.e. + 25 % of the measured ``1/D`` correction; the fresh-task
           formula (``κ = ∞``) must be rejected by the same rule.
        2. Finite-``D`` pool theory vs the figure's exact averages at its first ``D`` and ``κ ∈``
           :attr:`CHECK_TASK_RATIO`: within ``E/M + 3 s.e.`` (the s.e. of the exact average and of the theory's pool
           average combined); the earlier theory (``law="factor"``) and the ``D → ∞`` formula are shown beside it.
        3. The pool theory's ``D → ∞`` limit (quadratic extrapolation over ``D = 1000 … 8000``) equals the
           asymptotic formula within ``1e-8``.
        4. The fast ridge solver equals the eigendecomposition route (:func:`replica.gibbs`, ``β = ∞``) on one dataset.

        Parameters
        ----------
        r : validation.experiments.Result
            A result of this experiment.

        Returns
        -------
        list of validation.experiments.Check
        """
        s, d = r.settings, r.data
        n16, n32 = s["n16"], s["n32"]
        out = []
        th_icl, th_idg, base_icl = d.limit_theory_icl, d.limit_theory_idg, d.limit_fresh_icl
        setting = (f"α={LIMIT_CONTEXT_RATIO:g}, τ={LIMIT_SAMPLE_RATIO:g}, κ={LIMIT_TASK_RATIO:g}, σ={LIMIT_NOISE:g}, "
                   f"λ_L={LIMIT_RIDGE:g}")
        small, large = (d.limit[D] for D in LIMIT_D)
        for name, attr, ref in (("ICL", "icl", th_icl), ("IDG", "idg", th_idg)):
            a16, a32 = getattr(small, attr), getattr(large, attr)
            extrap = 2 * a32.mean() - a16.mean()
            se = float(np.hypot(2 * mean_se(a32)[1], mean_se(a16)[1]))
            tol = 4 * se + 0.25 * abs(a32.mean() - a16.mean())
            rejected = abs(extrap - base_icl) > tol
            out.append(Check("pools", f"D → ∞ theory, {name} error (Lu et al.; IDG = −τ c_e conjectured)",
                             f"{setting}; exact at D=16 ({n16}), 32 ({n32}), extrapolated 2E₃₂ − E₁₆",
                             f"{ref:.4g} (κ=∞: {base_icl:.4g})", f"{extrap:.4g} ± {se:.2g}",
                             f"{abs(extrap / ref - 1):.2%}", bool(abs(extrap - ref) <= tol and rejected),
                             "4 s.e. + 25 % of the 1/D correction; κ=∞ rejected"))
        D, n = int(s["D"][0]), int(s["n"][0])
        N, lam = int(self.CONTEXT_RATIO * D), self.RIDGE / D
        M = linattn.Problem(D, N).n_params("full")
        kappa_sim = [float(k) for k in s["kappa"]]
        cur = d.by_D[D]
        K_theory = np.round(cur.task_ratio_theory * D).astype(int)
        for c, kappa in enumerate(self.CHECK_TASK_RATIO):
            i = kappa_sim.index(kappa)
            j = int(np.flatnonzero(K_theory == int(kappa * D))[0])
            for name, err in (("ICL", "icl"), ("IDG", "idg")):
                m, se = float(getattr(cur, f"exact_{err}")[i]), float(getattr(cur, f"exact_{err}_se")[i])
                t, t_se = float(getattr(cur, f"theory_{err}")[j]), float(getattr(cur, f"theory_{err}_se")[j])
                b, a = float(getattr(cur, f"baseline_{err}")[j]), float(getattr(d, f"check_asymptotic_{err}")[c])
                tol = m / M + 3 * float(np.hypot(se, t_se))
                out.append(Check("pools", f"finite-D pool theory, {name} error", f"D={D}, N={N}, σ={FIG_NOISE:g}, "
                                 f"λ={lam:g}, τ={self.SAMPLE_RATIO:g}, κ={kappa:g}, full model, {n} datasets",
                                 f"{t:.4g} (baseline {b:.4g}, D→∞ {a:.4g})", f"{m:.4g} ± {se:.2g}",
                                 f"{abs(t / m - 1):.2%} (baseline {abs(b / m - 1):.1%}, D→∞ {abs(a / m - 1):.1%})",
                                 bool(abs(t - m) <= tol), "≤ E/M + 3 s.e. (exact and theory s.e. combined)"))
        ext = [d.mp_extrapolated_icl, d.mp_extrapolated_idg]
        err = max(abs(ext[0] - th_icl), abs(ext[1] - th_idg))
        out.append(Check("pools", "finite-D pool theory at D → ∞ = Lu et al.",
                         f"{setting}; D = 1000…8000, quadratic in 1/D", f"{th_icl:.8g}, {th_idg:.8g}",
                         f"{ext[0]:.8g}, {ext[1]:.8g}", f"{err:.1e} (abs.)", bool(err < 1e-8), "|difference| < 1e-8"))
        m, rel = r.meta, d.fast_rel
        out.append(Check("pools", "fast ridge solver (CG, no eigendecomposition) = eigensystem route",
                         "D=12, N=24, K=6, P=400 (> M), λ=0.01, full model", "replica.gibbs(β=∞)",
                         f"{m['fast_method']}, {m['fast_iterations']} it., certified={m['fast_certified']}",
                         f"{rel:.1e}",
                         bool(rel < 1e-7 and m["fast_certified"]), "relative difference < 1e-7 (rtol = 1e-8)"))
        return out


@dataclass(frozen=True, eq=False, repr=False)
class PoolPhaseData(ExperimentData):
    """Data of ``pools_phase``: the ``(P, K)`` diagram at ``D = 10``, ``N = 100``, ``λ = 0.01`` (full model).

    Attributes
    ----------
    P : ndarray (n_P,)
        Training prompts of the columns.
    K : ndarray (n_K,)
        Pool sizes of the rows; the diagram has one more row, last: a fresh task per prompt (``K = ∞``).
    gap : ndarray (n_K + 1, n_P)
        ``ΔEr = (⟨E_ICL⟩ − ⟨E_t⟩)/⟨E_t⟩`` of the dataset means of each cell.
    gtask_rel : ndarray (n_K + 1, n_P)
        ``g_task/E_ICL = 1 − ⟨E_IDG⟩/⟨E_ICL⟩`` (0 in the row ``K = ∞``).
    P_star_theory : float
        The replica theory's ``P*`` for fresh tasks (``nan``: no crossing).
    """

    P: np.ndarray
    K: np.ndarray
    gap: np.ndarray
    gtask_rel: np.ndarray
    P_star_theory: float


class PoolPhase(Experiment):
    """The ``(P, K)`` diagram at ``D = 10`` (figure ``pools_phase``): one point per cell (``K = None``: a fresh
    task per prompt)."""

    name = "pools_phase"
    title = "Task pools: (P, K) phase diagram at D = 10 linking the seed's ΔEr = 5 transition to κ ≈ 1"
    data_class = PoolPhaseData
    presets = {"smoke": dict(P=[20, 200], K=[2, 20], n=2),
               "quick": dict(P=[10, 20, 40, 80, 160, 320, 640, 1280, 2560], K=[1, 2, 4, 8, 16, 32, 64, 128, 256, 1024],
                             n=8),
               "full": dict(P=np.unique(np.geomspace(10, 5000, 16).astype(int)).tolist(),
                            K=[1, 2, 3, 5, 8, 12, 20, 32, 50, 80, 128, 256, 512, 1024, 4096], n=30)}
    D, N, LAM, SEED = 10, 100, 0.01, 11

    def points(self, s):
        return [dict(K=None if K is None else int(K), P=int(P)) for K in list(s.K) + [None] for P in s.P]

    def compute(self, s, point):
        K = point["K"]
        a = pool_average(linattn.Problem(self.D, self.N, tasks=K), point["P"], self.LAM, s.n, rng=self.SEED,
                         model="full")
        return {"gap": linattn.relative_gap(a.train_mean, a.test_mean),
                "gtask_rel": 1.0 - a.test_idg_mean / a.test_mean if K is not None else 0.0}

    def assemble(self, s, outputs):
        Ps, Ks = np.array(s.P, int), np.array(s.K, int)
        gap = np.array([float(o["gap"]) for o in outputs]).reshape(Ks.size + 1, Ps.size)
        gt = np.array([float(o["gtask_rel"]) for o in outputs]).reshape(Ks.size + 1, Ps.size)
        pstar = replica.phase_boundary(linattn.Problem(self.D, self.N), np.inf, self.LAM, model="full")
        data = PoolPhaseData(P=Ps, K=Ks, gap=gap, gtask_rel=gt, P_star_theory=np.nan if pstar is None else pstar)
        rows = [dict(K="inf" if i == len(Ks) else int(Ks[i]), gap=[float(x) for x in gap[i]])
                for i in range(len(Ks) + 1)]
        return data, {"rows": rows}
