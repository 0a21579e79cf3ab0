"""Kernel learner vs feature learner (Gu, Xu & Zdeborová): which wins, from the theories, with simulated points.

Setting of every ``learners*`` experiment: ``D = 6``, noise-free labels, weight decay ``λ = 0.01``, two links —
``relu`` (``μ₁ = ½``: most of the signal linear in ``u``) and ``quad`` ``f(z) = z/2 + He₂(z)/√2`` (a strong degree-2
part, which the kernel learner's Hermite features can represent and the feature learner's linear attention cannot
see). Errors are in units of ``E_g(ŷ = 0) = V/2`` (``V`` the label variance).

* Theories (the fine grids): the kernel learner's :func:`replica.learner_theory` (random-scale law,
  ``2¹²`` contexts; with a pool, random pools) and the feature learner's :func:`replica.feature_learner_theory`
  (what :func:`replica.learner_theory` with ``learner="feature"`` returns) **as trained**: the ridge ``Γ̂`` at the
  balanced decay and the simulator's own 5-hinge readout fitted by ridge on ``P`` in-sample values of ``t`` (the
  leave-one-out identity with the ridge law's leverage; ``1024`` contexts; with a pool, the ridge ``Γ`` of the pool)
  — so the memorisation regime (``P`` below the ``D²`` parameters of ``Γ``) and test context lengths ``N_test ≠ N``
  are in the theory. Both through :func:`kernel_theory` and :func:`feature_theory` of this module; every grid has
  a column in the memorisation corner (``P = 10 < D² = 36``) with a simulated cell.
* Simulations (a sparse subset of cells): :func:`simulate_cell` trains ``n_sets`` independent training sets of both
  learners (``validation/simulators/_learner_sims.py``; the kernel learner's test errors are exact, the feature
  learner's are Monte Carlo) and reports mean ± s.e. over the sets (the Monte-Carlo error included).

Experiments: ``learners`` (the ``(P, N)`` diagram with fresh tasks, figure ``learners``, and the report section
``learners``, :class:`Learners`), ``learners_pools`` (the ``(P, K)`` diagram with task pools, ICL and IDG, figure
``learners_pools``); ``learners_scaling`` (:mod:`validation.experiments.learners_scaling`). Their presets carry ``D``
and ``λ`` (the figures read them from the result); the functions of this module take them as keywords, defaulting to
this setting.

Report section ``learners`` (the points ``check_*`` of :class:`Learners`, at ``N = check_N = 12``, a context length
of no figure's grid: the theories are judged at one ``N`` with more training sets than a figure cell has). Rows and
criteria (each error estimate stated):

* **Kernel learner** (exact test errors per training set, ridge solution): theory (random-scale law) vs the average
  over ``check_n_kernel`` training sets, train and test errors; passes when ``|theory − exact| ≤ E/M + 3 s.e.``
  (``M = F²`` parameters: the ``O(1/M)`` accuracy of a deterministic equivalent; s.e. of the average and of the
  theory's own sampling combined), as in ``docs/kernel_learner.md`` §7. Beside it: the deviation of the baseline
  (``law="mp"``, the linear-attention equivalence).
* **Feature learner, given the trained Γ**: the theory's optimal-readout error (``test_optimal``) vs the exact (binned
  Monte Carlo, :func:`validation.binned_readout_error`) optimal-readout error of each trained
  ``Γ``; tolerance ``3 s.e. + 2 %`` (2 %: the measured accuracy of the finite-``D`` mixture for a fixed ``Γ``, ≤ 1.2 %
  in ``docs/feature_learner.md`` §4, plus the overlap of the trained ``Γ`` with the ridge ``Γ``, 0.003 in ``r``).
  Beside it: the Gaussian formula (``law="gaussian"``).
* **Feature learner as trained, test error** — at ``check_P_feature`` (generalisation), at ``check_P_memo = 100 ≤ 3D²``
  (memorisation: the readout interpolates the training ``t``; ``check_n_memo`` training sets, as the spread between
  sets is large there) and at ``N_test = check_N // 4`` and ``4 check_N`` (the ``check_P_feature`` runs evaluated at
  another context length, :func:`validation.simulators._learner_sims.feature_test_error`, no retraining): the theory as
  trained vs the mean over training sets; passes when ``|sim − th| ≤ 3 s.e. + FEATURE_ACCURACY·th`` (s.e. of the
  simulation ⊕ the theory's own ``test_se``; :data:`FEATURE_ACCURACY` = 5 %, the largest measured excess over
  3 s.e., 2.9 % over 50 cells at ``D = 6`` and none over 60 cells at ``D = 10``, rounded up: ``docs/learners.md``).
  Beside it: the deviation of the
  optimal-readout theory (the baseline the trained theory replaces) and whether it would pass the same criterion —
  it fails in memorisation and at ``N_test < N`` (it has no finite-``P`` fit of the readout and no inference-time
  scale of ``t``).
* **Feature learner as trained, training loss** (weight decay included; :attr:`LearnerRun.train` vs the theory's
  ``train`` ± ``train_se``) at both ``P``: ``≤ 3 s.e. + 12 %`` (:data:`TRAIN_ACCURACY`, measured for ``P ≥ 3D``; at
  ``P = D`` the theory's weight-decay term is ~40 % high — balanced decay's spread between datasets — and the row
  would fail there).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
from linattn._kernel_errors import n_features
from linattn._links import Link
from linattn._numerics.stats import mean_se
from replica._feature_theory import feature_learner_theory
from replica._learner_theory import learner_theory

from ..simulators._learner_sims import binned_readout_error, feature_learner, feature_test_error, kernel_learner
from ._base import Check, Experiment
from ._data import ExperimentData

D, LAM = 6, 0.01
LINKS = {"relu": "relu", "quad": Link("z/2+He2/sqrt2", lambda z: 0.5 * z + (z * z - 1.0) / np.sqrt(2.0))}
#: contexts of the theories' own Monte Carlo (kernel: fresh tasks / per pool; feature: the readout mixture)
KERNEL_CONTEXTS, POOL_CONTEXTS, FEATURE_CONTEXTS = 2**12, 2**11, 1024
#: relative accuracy of the optimal-readout theory given Γ (report; ``docs/feature_learner.md`` §4)
THEORY_ACCURACY = 0.02
#: relative accuracy of the theory of the feature learner as trained (test error): the largest measured excess over
#: 3 s.e., 2.9 % over 50 cells at D = 6 (P from D to 100 D², N_test from N/4 to 4N, relu and quad; none over 60
#: cells at D = 10), rounded up
FEATURE_ACCURACY = 0.05
#: relative accuracy of its training loss for P ≥ 3D (measured; at P = D the weight-decay term is ~40 % high)
TRAIN_ACCURACY = 0.12


def problem(link, N, K=None, D=D):
    """The problem of a cell: dimension ``D`` (default 6), noise-free, link ``link`` (a key of :data:`LINKS`), pool
    size ``K``."""
    return linattn.Problem(D, int(N), 0.0, link=LINKS[link], tasks=None if K is None else int(K))


def kernel_theory(pb, P, N_test=None, law="finite", n_pools=1, lam=LAM):
    """The kernel learner's theory at one cell (weight decay ``lam``, default 0.01): ``dict(test, test_se, test_idg,
    test_idg_se)`` (``test_idg`` NaN without a pool), from :func:`replica.learner_theory`."""
    n = KERNEL_CONTEXTS if pb.tasks is None else POOL_CONTEXTS
    th = learner_theory(pb, P, lam, learner="kernel", N_test=N_test, law=law, n_pools=n_pools,
                        n_contexts=None if law == "mp" else n, progress=False)
    return _theory_dict(th)


def feature_theory(pb, P, N_test=None, law="finite", n_pools=1, lam=LAM, readout="trained"):
    """The feature learner's theory at one cell, in the format of :func:`kernel_theory` plus ``train``, ``train_se``
    (the training loss with the weight decay; NaN for ``readout="optimal"``) and ``test_optimal`` (the optimal
    readout of the trained ``Γ``), from :func:`replica.feature_learner_theory` (what :func:`replica.learner_theory`
    with ``learner="feature"`` returns). ``readout="trained"`` (default): the learner as trained — the ridge ``Γ̂``
    and its 5-hinge readout fitted on the ``P`` training values of ``t``; ``"optimal"``: the optimal readout
    ``E_train[y|t]`` of ``Γ̂`` (the baseline). Fresh tasks, or ``n_pools`` random pools."""
    th = feature_learner_theory(pb, P, lam, N_test=N_test, readout=readout, law=law, n_contexts=FEATURE_CONTEXTS,
                                n_pools=n_pools, progress=False)
    out = _theory_dict(th)
    out["test_optimal"] = float(th.test_optimal)
    return out


def _theory_dict(th):
    idg = getattr(th, "test_idg", None)
    idg_se = getattr(th, "test_idg_se", None)
    train, train_se = getattr(th, "train", None), getattr(th, "train_se", None)
    return dict(test=float(th.test), test_se=float(getattr(th, "test_se", 0.0) or 0.0),
                test_idg=np.nan if idg is None else float(idg), test_idg_se=np.nan if idg_se is None else float(idg_se),
                train=np.nan if train is None else float(train),
                train_se=np.nan if train_se is None else float(train_se or 0.0))


def _mean_se(values, mc_se=None):
    """Mean over training sets and its s.e. (spread between sets, plus the Monte-Carlo error of each set)."""
    v = np.asarray(values, float)
    var = v.var(ddof=1) / v.size if v.size > 1 else 0.0
    if mc_se is not None:
        var += float(np.mean(np.asarray(mc_se, float) ** 2)) / v.size
    return float(v.mean()), float(np.sqrt(var))


def length_key(learner, n, se=False):
    """The output of :func:`simulate_cell` for ``learner`` evaluated at test context length ``n`` (and its s.e.).

    Parameters
    ----------
    learner : {"kernel", "feature"}
    n : int
    se : bool

    Returns
    -------
    str
    """
    return f"{learner}_N{int(n)}" + ("_se" if se else "")


def simulate_cell(pb, P, n_sets, seed, n_test_prompts, N_tests=(), max_steps=20_000, lam=LAM):
    """Train ``n_sets`` training sets of both learners at one cell (weight decay ``lam``, default 0.01; set ``r``
    seeded by ``(seed, r)``, the same training prompts' seed for both learners).

    Returns a dict of floats: ``kernel``, ``kernel_se``, ``feature``, ``feature_se`` (fresh-task errors); with a pool
    also ``kernel_idg``, ``feature_idg`` and their s.e.; for each ``n`` of ``N_tests`` the same at context length
    ``n`` (``kernel_N{n}``, …, the trained models evaluated without retraining); ``unconverged`` (feature runs that
    missed their tolerance).
    """
    runs_k, runs_f = [], []
    for r in range(n_sets):
        runs_k.append(kernel_learner(pb, P, lam, rng=(*seed, r)))
        runs_f.append(feature_learner(pb, P, lam, rng=(*seed, r), n_test_prompts=n_test_prompts, max_steps=max_steps))
    out = {"unconverged": float(sum(not f.converged for f in runs_f))}
    out["kernel"], out["kernel_se"] = _mean_se([k.test for k in runs_k])
    out["feature"], out["feature_se"] = _mean_se([f.test for f in runs_f], [f.test_se for f in runs_f])
    if pb.tasks is not None:
        out["kernel_idg"], out["kernel_idg_se"] = _mean_se([k.test_idg for k in runs_k])
        out["feature_idg"], out["feature_idg_se"] = _mean_se([f.test_idg for f in runs_f],
                                                             [f.test_idg_se for f in runs_f])
    from linattn._kernel_errors import kernel_test_error

    for n in N_tests:
        n = int(n)
        out[length_key("kernel", n)], out[length_key("kernel", n, se=True)] = _mean_se(
            [kernel_test_error(pb, k.params["Gamma"], N_test=n) for k in runs_k])
        ev = [feature_test_error(pb, f, N_test=n, n_test_prompts=n_test_prompts, rng=(*seed, r, n)) for r,
              f in enumerate(runs_f)]
        out[length_key("feature", n)], out[length_key("feature", n, se=True)] = _mean_se([e[0] for e in ev],
                                                                                          [e[1] for e in ev])
    return out


def winner_agreement(log_ratio_theory, k, k_se, f, f_se):
    """Where the simulation resolves a winner, does it agree with the theory's?

    ``log_ratio_theory = ln(E_kernel/E_feature)`` of the theory; the simulated ratio's s.e. is
    ``√((s.e._k/E_k)² + (s.e._f/E_f)²)``. Returns ``(decided, agrees)``: ``decided`` where both the theory's and the
    simulation's ``|ln ratio|`` exceed 2 s.e. of the simulated ratio, ``agrees`` where their signs are equal.
    """
    sim = np.log(np.asarray(k) / np.asarray(f))
    se = np.hypot(np.asarray(k_se) / np.asarray(k), np.asarray(f_se) / np.asarray(f))
    decided = (np.abs(sim) > 2 * se) & (np.abs(log_ratio_theory) > 2 * se)
    return decided, np.sign(sim) == np.sign(log_ratio_theory)


@dataclass(frozen=True, eq=False, repr=False)
class LinkMap(ExperimentData):
    """Which learner wins over ``(P, N)`` for one link, fresh tasks (errors in units of :attr:`V2`).

    Attributes
    ----------
    V2 : float
        ``E_g(ŷ = 0) = V/2`` (``V`` the label variance): the unit of the errors.
    theory_kernel, theory_kernel_se : ndarray (n_N, n_P)
        The kernel learner's theory (test error) and the s.e. of its own Monte Carlo.
    theory_feature : ndarray (n_N, n_P)
        The feature learner's theory as trained.
    sim_kernel, sim_kernel_se, sim_feature, sim_feature_se : ndarray (n_cells,)
        Simulated test errors of both learners at the simulated cells, mean ± s.e. over the training sets.
    decided, agrees : ndarray of bool (n_cells,)
        Where the simulation resolves a winner, and where it is the theory's (:func:`winner_agreement`).
    """

    V2: float
    theory_kernel: np.ndarray
    theory_kernel_se: np.ndarray
    theory_feature: np.ndarray
    sim_kernel: np.ndarray
    sim_kernel_se: np.ndarray
    sim_feature: np.ndarray
    sim_feature_se: np.ndarray
    decided: np.ndarray
    agrees: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class KernelCheck(ExperimentData):
    """The kernel learner at ``N = check_N``, ``P = check_P_kernel`` (report section ``learners``).

    Attributes
    ----------
    test, train : ndarray (n_sets,)
        Exact test and training error of each training set.
    theory_test, theory_train : float
        The theory (random-scale law, ``2¹⁴`` contexts).
    theory_test_se, theory_train_se : float
        The s.e. of its Monte Carlo.
    mp_test, mp_train : float
        The baseline ``law="mp"``.
    """

    test: np.ndarray
    train: np.ndarray
    theory_test: float
    theory_train: float
    theory_test_se: float
    theory_train_se: float
    mp_test: float
    mp_train: float


@dataclass(frozen=True, eq=False, repr=False)
class LengthCheck(ExperimentData):
    """Trained feature learners evaluated at another test context length (no retraining).

    Attributes
    ----------
    test, test_mc_se : ndarray (n_sets,)
        Monte-Carlo test error of each training set and its s.e.
    theory_test, theory_test_se : float
        The theory as trained at that length and the s.e. of its Monte Carlo.
    optimal_theory : float
        The optimal-readout theory there (the baseline).
    """

    test: np.ndarray
    test_mc_se: np.ndarray
    theory_test: float
    theory_test_se: float
    optimal_theory: float


@dataclass(frozen=True, eq=False, repr=False)
class FeatureCheck(ExperimentData):
    """The feature learner at ``N = check_N`` and one ``P`` (report section ``learners``).

    Attributes
    ----------
    test, test_mc_se : ndarray (n_sets,)
        Monte-Carlo test error of each training set and its s.e.
    train : ndarray (n_sets,)
        Training loss of each set (weight decay included).
    converged : ndarray (n_sets,)
        1 where the run met its tolerance, else 0.
    theory_test, theory_train, theory_test_se, theory_train_se : float
        The theory as trained and the s.e. of its Monte Carlo.
    optimal_theory : float
        The theory's optimal-readout error of the trained ``Γ``.
    gaussian : float or None
        The Gaussian formula of the optimal readout (at ``check_P_feature`` only).
    optimal, optimal_mc_se : ndarray (n_sets,) or None
        The binned Monte-Carlo optimal-readout error of each trained ``Γ`` and its s.e. (at ``check_P_feature``).
    lengths : dict of int to LengthCheck
        The same runs at the test lengths ``check_N // 4`` and ``4 check_N`` (at ``check_P_feature``; else empty).
    """

    test: np.ndarray
    test_mc_se: np.ndarray
    train: np.ndarray
    converged: np.ndarray
    theory_test: float
    theory_train: float
    theory_test_se: float
    theory_train_se: float
    optimal_theory: float
    gaussian: float | None
    optimal: np.ndarray | None
    optimal_mc_se: np.ndarray | None
    lengths: dict[int, LengthCheck]


def _length_key(n, what):
    """The output of a ``check_feature`` point at test length ``n`` (a point of a store keeps this name)."""
    return f"N{int(n)}_{what}"


def _check_data(kind, out):
    """The typed data of a report point's outputs ``out`` (``kind``: ``check_kernel``, ``check_feature`` or
    ``check_memo``): the packed pairs (test, train) and the per-length outputs named."""
    if kind == "check_kernel":
        return KernelCheck(test=out["test"], train=out["train"], theory_test=out["theory"][0],
                           theory_train=out["theory"][1], theory_test_se=out["theory_se"][0],
                           theory_train_se=out["theory_se"][1], mp_test=out["mp"][0], mp_train=out["mp"][1])
    lengths = {}
    for key in out:
        if key.startswith("N") and key.endswith("_optimal_theory"):
            n = int(key[1:-len("_optimal_theory")])
            theory = out[_length_key(n, "theory")]
            lengths[n] = LengthCheck(test=out[_length_key(n, "test")], test_mc_se=out[_length_key(n, "test_mc_se")],
                                     theory_test=theory[0], theory_test_se=theory[1],
                                     optimal_theory=out[_length_key(n, "optimal_theory")])
    return FeatureCheck(test=out["test"], test_mc_se=out["test_mc_se"], train=out["train"],
                        converged=out["converged"], theory_test=out["theory"][0], theory_train=out["theory"][1],
                        theory_test_se=out["theory_se"][0], theory_train_se=out["theory_se"][1],
                        optimal_theory=out["optimal_theory"], gaussian=out.get("gaussian"), optimal=out.get("optimal"),
                        optimal_mc_se=out.get("optimal_mc_se"), lengths=lengths)


@dataclass(frozen=True, eq=False, repr=False)
class LearnersData(ExperimentData):
    """Data of ``learners`` (figure ``learners`` and report section ``learners``).

    Attributes
    ----------
    P : ndarray (n_P,)
        Training prompts of the grid.
    N : ndarray (n_N,)
        Context lengths of the grid (train = test).
    sim_N_index, sim_P_index : ndarray of int (n_cells,)
        The simulated cells: positions on the grids ``N`` and ``P`` (the setting ``sim``).
    links : dict of str to LinkMap
        The theories and simulated cells of each link of :data:`LINKS`.
    check_kernel, check_feature, check_memo : dict of str to KernelCheck or FeatureCheck
        The report's points by link: the kernel learner, the feature learner at ``check_P_feature`` and at
        ``check_P_memo``.
    unconverged : int
        Feature-learner runs of the simulated cells that missed their tolerance.
    """

    P: np.ndarray
    N: np.ndarray
    sim_N_index: np.ndarray
    sim_P_index: np.ndarray
    links: dict[str, LinkMap]
    check_kernel: dict[str, KernelCheck]
    check_feature: dict[str, FeatureCheck]
    check_memo: dict[str, FeatureCheck]
    unconverged: int

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``sim_cells`` (columns: N index, P index), ``{link}_{V2,theory_*,sim_*,decided,agrees}``,
        ``check_{kernel,feature,memo}_{link}_{quantity}`` (``theory``, ``theory_se``, ``mp``: test, train;
        ``N{n}_theory``: test, s.e.)."""
        out = dict(arrays)
        cells = out.pop("sim_cells")
        out["sim_N_index"], out["sim_P_index"] = cells[:, 0], cells[:, 1]
        for name in LINKS:
            for field in LinkMap.__dataclass_fields__:
                out[f"links[{name}].{field}"] = out.pop(f"{name}_{field}")
            for kind in Learners.CHECKS:
                old = {k[len(f"{kind}_{name}_"):]: out.pop(k) for k in list(out) if k.startswith(f"{kind}_{name}_")}
                out.update({f"{kind}[{name}].{k}": v for k, v in _check_data(kind, old).to_arrays().items()})
        return out


class Learners(Experiment):
    """Which learner wins over ``(P, N)``, fresh tasks (module docstring): one theory point per ``(link, N)`` (every
    ``P`` of the grid), one simulation point per simulated cell ``(link, i_N, j_P)``; and the report section
    ``learners``: one point per ``(learner, link)`` at ``N = check_N`` (kinds ``check_kernel``, ``check_feature`` at
    ``check_P_feature`` and ``check_memo`` at ``check_P_memo``)."""

    name = "learners"
    title = "Kernel vs feature learner: which wins over (P, N), theory with simulated cells"
    data_class = LearnersData
    presets = {mode: dict(D=D, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(P=[60, 300], N=[4, 16], sim=[[1, 1]], n_sets=2, n_test_prompts=2000,
                       check_N=16, check_P_kernel=300, check_n_kernel=3, check_P_feature=300, check_P_memo=300,
                       check_n_feature=2, check_n_memo=2, check_n_test_prompts=2000, check_n_binned=20_000)),
        ("quick", dict(P=[10, 100, 200, 400, 800, 1600, 3200, 6400], N=[4, 8, 16, 32, 64],
                       sim=[[0, 5], [2, 3], [2, 7], [4, 5], [2, 0]], n_sets=3, n_test_prompts=20_000,
                       check_N=12, check_P_kernel=1500, check_n_kernel=10, check_P_feature=2000, check_P_memo=100,
                       check_n_feature=4, check_n_memo=32, check_n_test_prompts=50_000, check_n_binned=200_000)),
        ("full", dict(P=[10, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800], N=[2, 4, 8, 16, 32, 64, 128],
                      sim=[[0, 5], [1, 3], [1, 7], [2, 4], [3, 2], [3, 6], [4, 3], [5, 5], [6, 1], [6, 7], [1, 0],
                           [5, 0]],
                      n_sets=5, n_test_prompts=100_000,
                      check_N=12, check_P_kernel=1500, check_n_kernel=60, check_P_feature=2000, check_P_memo=100,
                      check_n_feature=12, check_n_memo=64, check_n_test_prompts=200_000, check_n_binned=1_000_000)))}
    report_order = 62
    #: the kinds of the report's points
    CHECKS = ("check_kernel", "check_feature", "check_memo")

    def points(self, s):
        return ([dict(kind="theory", link=name, i=i) for name in LINKS for i in range(len(s.N))]
                + [dict(kind="sim", link=name, i=int(i), j=int(j)) for name in LINKS for i, j in s.sim]
                + [dict(kind=kind, link=name) for kind in self.CHECKS for name in LINKS])

    def compute(self, s, point):
        if point["kind"] in self.CHECKS:
            return self._check_point(s, point["kind"], point["link"])
        N = int(s.N[point["i"]])
        pb = problem(point["link"], N, D=s.D)
        if point["kind"] == "theory":
            k = [kernel_theory(pb, P, lam=s.lam) for P in s.P]
            f = [feature_theory(pb, P, lam=s.lam) for P in s.P]
            return {"kernel": np.array([x["test"] for x in k]), "kernel_se": np.array([x["test_se"] for x in k]),
                    "feature": np.array([x["test"] for x in f])}
        P = int(s.P[point["j"]])
        return simulate_cell(pb, P, s.n_sets, (N, P), s.n_test_prompts, lam=s.lam)

    @staticmethod
    def _check_point(s, kind, name):
        """One point of the report at ``N = check_N``: the kernel learner's training sets and theories, or the
        feature learner's at ``check_P_feature`` (with the binned optimal readout of each trained ``Γ``) or at
        ``check_P_memo``."""
        pb = problem(name, s.check_N, D=s.D)
        if kind == "check_kernel":
            P = s.check_P_kernel
            runs = [kernel_learner(pb, P, s.lam, rng=(62, P, r)) for r in range(s.check_n_kernel)]
            th = learner_theory(pb, P, s.lam, learner="kernel", n_contexts=2**14, progress=False)
            mp = learner_theory(pb, P, s.lam, learner="kernel", law="mp", progress=False)
            return {"test": np.array([r.test for r in runs]), "train": np.array([r.train for r in runs]),
                    "theory": np.array([th.test, th.train]), "theory_se": np.array([th.test_se, th.train_se]),
                    "mp": np.array([mp.test, mp.train])}
        memo = kind == "check_memo"
        P = s.check_P_memo if memo else s.check_P_feature
        n_sets = s.check_n_memo if memo else s.check_n_feature
        n_test = s.n_test_prompts if memo else s.check_n_test_prompts    # memo: more sets, fewer prompts each
        runs = [feature_learner(pb, P, s.lam, rng=(62, P, r), n_test_prompts=n_test) for r in range(n_sets)]
        th = feature_theory(pb, P, lam=s.lam)
        out = {"test": np.array([r.test for r in runs]), "test_mc_se": np.array([r.test_se for r in runs]),
               "train": np.array([r.train for r in runs]), "converged": np.array([r.converged for r in runs], float),
               "theory": np.array([th["test"], th["train"]]), "theory_se": np.array([th["test_se"], th["train_se"]]),
               "optimal_theory": np.array(th["test_optimal"])}
        if memo:
            return out
        out["gaussian"] = np.array(feature_theory(pb, P, law="gaussian", lam=s.lam, readout="optimal")["test"])
        b = [binned_readout_error(pb, r.params["Gamma"], n=s.check_n_binned, bins=200, rng=(63, r_i))
             for r_i, r in enumerate(runs)]
        out["optimal"] = np.array([x.test for x in b])
        out["optimal_mc_se"] = np.array([x.test_se for x in b])
        for n in _check_N_tests(s.check_N):                # the same trained runs at another context length
            ev = [feature_test_error(pb, r, N_test=n, n_test_prompts=s.check_n_test_prompts, rng=(64, P, r_i, n))
                  for r_i, r in enumerate(runs)]
            thn = feature_theory(pb, P, N_test=n, lam=s.lam)
            out[_length_key(n, "test")] = np.array([e[0] for e in ev])
            out[_length_key(n, "test_mc_se")] = np.array([e[1] for e in ev])
            out[_length_key(n, "theory")] = np.array([thn["test"], thn["test_se"]])
            out[_length_key(n, "optimal_theory")] = np.array(thn["test_optimal"])
        return out

    def assemble(self, s, outputs):
        P, N = np.array(s.P), np.array(s.N)
        cells = np.array(s.sim, int).reshape(-1, 2)
        i, j = cells[:, 0], cells[:, 1]
        theory = {name: {tag: np.zeros((N.size, P.size)) for tag in ("kernel", "kernel_se", "feature")}
                  for name in LINKS}
        sims, checks = {name: [] for name in LINKS}, {kind: {} for kind in self.CHECKS}
        for p, out in zip(self.points(s), outputs):
            if p["kind"] == "theory":
                for tag in theory[p["link"]]:
                    theory[p["link"]][tag][p["i"]] = out[tag]
            elif p["kind"] == "sim":
                sims[p["link"]].append(out)
            else:                                   # the report's points
                checks[p["kind"]][p["link"]] = _check_data(p["kind"], out)
        links, agree, decided, unconverged = {}, 0, 0, 0
        for name in LINKS:
            sim = {tag: np.array([out[tag] for out in sims[name]], float).reshape(len(s.sim))
                   for tag in ("kernel", "kernel_se", "feature", "feature_se")}
            unconverged += sum(int(out["unconverged"]) for out in sims[name])
            th = theory[name]
            dec, agr = winner_agreement(np.log(th["kernel"][i, j] / th["feature"][i, j]), sim["kernel"],
                                        sim["kernel_se"], sim["feature"], sim["feature_se"])
            links[name] = LinkMap(V2=0.5 * problem(name, N[0], D=s.D).label_variance,
                                  **{f"theory_{k}": v for k, v in th.items()},
                                  **{f"sim_{k}": v for k, v in sim.items()}, decided=dec, agrees=agr)
            decided += int(dec.sum())
            agree += int((dec & agr).sum())
        data = LearnersData(P=P, N=N, sim_N_index=i, sim_P_index=j, links=links, unconverged=unconverged,
                            **checks)
        return data, {"decided": decided, "agree": agree}

    def checks(self, r):
        s, d = r.settings, r.data
        rows = []
        M = n_features(s["D"], "hermite2") ** 2
        N, lam = s["check_N"], s["lam"]
        for name in LINKS:
            ck = d.check_kernel[name]
            for what in ("test", "train"):
                v = getattr(ck, what)
                m, se = mean_se(v, single=np.nan)      # one training set: nan, the check fails
                th, th_se, mp = (getattr(ck, f"theory_{what}"), getattr(ck, f"theory_{what}_se"),
                                 getattr(ck, f"mp_{what}"))
                tol = m / M + 3 * float(np.hypot(se, th_se))
                rows.append(Check("learners", f"kernel learner theory, {what} error",
                                  f"link {name}, D={s['D']}, N={N}, P={s['check_P_kernel']}, λ={lam:g}, noise-free, "
                                  f"{v.size} training sets (exact errors)",
                                  f"{th:.4g} ± {th_se:.1g} (baseline mp {mp:.4g})", f"{m:.4g} ± {se:.2g}",
                                  f"{abs(th / m - 1):.2%} (mp {abs(mp / m - 1):.1%}, {abs(mp - m) / tol:.1f}× tol)",
                                  bool(abs(th - m) <= tol), f"≤ E/M + 3 s.e. (M = F² = {M}; exact and theory s.e.)"))
            cf = d.check_feature[name]
            params = (f"link {name}, D={s['D']}, N={N}, P={s['check_P_feature']}, λ={lam:g}, "
                      f"{cf.test.size} training sets ({int(cf.converged.sum())} converged)")
            th_opt, ga = cf.optimal_theory, cf.gaussian
            o, omc = cf.optimal, cf.optimal_mc_se
            om, ose = _sets_mean_se(o, omc)
            rows.append(Check("learners", "feature learner theory: optimal readout of the trained Γ", params,
                              f"{th_opt:.4g} (Gaussian {ga:.4g})", f"{om:.4g} ± {ose:.2g} (binned MC)",
                              f"{abs(th_opt / om - 1):.2%} (Gaussian {abs(ga / om - 1):.1%})",
                              bool(abs(th_opt - om) <= 3 * ose + THEORY_ACCURACY * th_opt),
                              f"≤ 3 s.e. + {THEORY_ACCURACY:.0%} (the mixture's measured accuracy given Γ)"))
            for c, P in ((cf, s["check_P_feature"]), (d.check_memo[name], s["check_P_memo"])):
                sets = c.test.size
                params = (f"link {name}, D={s['D']}, N={N}, P={P}, λ={lam:g}, {sets} training sets "
                          f"({int(c.converged.sum())} converged)")
                what = ("memorisation regime, P < D² = %d" % s["D"] ** 2 if P < s["D"] ** 2 else
                        "memorisation regime, P ≤ 3D²" if P <= 3 * s["D"] ** 2 else "generalisation regime")
                th, th_train, th_se, th_train_se = c.theory_test, c.theory_train, c.theory_test_se, c.theory_train_se
                rows.append(_trained_row(f"feature learner as trained, test error ({what})", params, c.test,
                                         c.test_mc_se, th, th_se, c.optimal_theory))
                m, se = _sets_mean_se(c.train)
                tol = 3 * float(np.hypot(se, th_train_se)) + TRAIN_ACCURACY * th_train
                rows.append(Check("learners", "feature learner as trained, training loss (weight decay included)",
                                  params, f"{th_train:.4g} ± {th_train_se:.1g}", f"{m:.4g} ± {se:.2g}",
                                  f"{m / th_train - 1:+.1%}", bool(abs(m - th_train) <= tol),
                                  f"≤ 3 s.e. + {TRAIN_ACCURACY:.0%} (measured accuracy for P ≥ 3D; at P = D the "
                                  "weight-decay term is ~40 % high)"))
            for n in _check_N_tests(N):
                ln = cf.lengths[n]
                params = (f"link {name}, D={s['D']}, N={N}, N_test={n}, P={s['check_P_feature']}, λ={lam:g}, "
                          f"{ln.test.size} training sets (the same runs, not retrained)")
                rows.append(_trained_row(f"feature learner as trained, test error at N_test = {n} ≠ N", params,
                                         ln.test, ln.test_mc_se, ln.theory_test, ln.theory_test_se,
                                         ln.optimal_theory))
        return rows


def _check_N_tests(N):
    """The test context lengths ``≠ N`` of the report: ``N // 4`` and ``4N``."""
    return (max(int(N) // 4, 1), 4 * int(N))


def _sets_mean_se(values, mc_se=None):
    """Mean over training sets and its s.e. (spread between sets, and each set's Monte-Carlo s.e.); one set: nan."""
    v = np.asarray(values, float)
    if v.size < 2:
        return float(v.mean()), float("nan")
    return _mean_se(v, mc_se)


def _trained_row(quantity, params, sim, sim_mc_se, th, th_se, th_optimal):
    """A report row: the feature learner's theory as trained vs its simulation, ``|sim − th| ≤ 3 s.e. +
    FEATURE_ACCURACY·th``; beside it the optimal-readout baseline's deviation and whether it would pass."""
    m, se = _sets_mean_se(sim, sim_mc_se)
    tol = 3 * float(np.hypot(se, th_se)) + FEATURE_ACCURACY * th
    tol_opt = 3 * se + FEATURE_ACCURACY * th_optimal
    base_ok = abs(m - th_optimal) <= tol_opt
    return Check("learners", quantity, params, f"{th:.4g} ± {th_se:.1g} (optimal readout {th_optimal:.4g})",
                 f"{m:.4g} ± {se:.2g}",
                 f"{m / th - 1:+.1%} (optimal readout {m / th_optimal - 1:+.0%}, {abs(m - th_optimal) / tol_opt:.1f}× "
                 f"its tol: {'passes' if base_ok else 'FAILS'})",
                 bool(abs(m - th) <= tol),
                 f"≤ 3 s.e. + {FEATURE_ACCURACY:.0%} (s.e. of sim ⊕ theory; the largest measured excess, 2.9 % in 50 "
                 "cells at D = 6, rounded up)")


@dataclass(frozen=True, eq=False, repr=False)
class PoolLinkMap(ExperimentData):
    """Which learner wins over ``(P, K)`` for one link with task pools (errors in units of :attr:`V2`).

    Attributes
    ----------
    V2 : float
        ``E_g(ŷ = 0) = V/2``.
    theory_kernel_test, theory_kernel_test_se, theory_kernel_test_idg, theory_kernel_test_idg_se : ndarray (n_K, n_P)
        The kernel learner's pool theory: ICL and IDG errors and the s.e. of its Monte Carlo over pools.
    theory_feature_test, theory_feature_test_idg : ndarray (n_K, n_P)
        The feature learner's pool theory as trained: ICL and IDG errors.
    sim_kernel, sim_kernel_se, sim_feature, sim_feature_se : ndarray (n_cells,)
        Simulated ICL errors at the simulated cells, mean ± s.e. over the training sets.
    sim_kernel_idg, sim_kernel_idg_se, sim_feature_idg, sim_feature_idg_se : ndarray (n_cells,)
        Simulated IDG errors.
    """

    V2: float
    theory_kernel_test: np.ndarray
    theory_kernel_test_se: np.ndarray
    theory_kernel_test_idg: np.ndarray
    theory_kernel_test_idg_se: np.ndarray
    theory_feature_test: np.ndarray
    theory_feature_test_idg: np.ndarray
    sim_kernel: np.ndarray
    sim_kernel_se: np.ndarray
    sim_feature: np.ndarray
    sim_feature_se: np.ndarray
    sim_kernel_idg: np.ndarray
    sim_kernel_idg_se: np.ndarray
    sim_feature_idg: np.ndarray
    sim_feature_idg_se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class LearnersPoolsData(ExperimentData):
    """Data of ``learners_pools`` (figure ``learners_pools``).

    Attributes
    ----------
    P : ndarray (n_P,)
        Training prompts of the grid.
    K : ndarray (n_K,)
        Pool sizes of the grid.
    N : int
        Context length.
    sim_K_index, sim_P_index : ndarray of int (n_cells,)
        The simulated cells: positions on the grids ``K`` and ``P`` (the setting ``sim``).
    links : dict of str to PoolLinkMap
    """

    P: np.ndarray
    K: np.ndarray
    N: int
    sim_K_index: np.ndarray
    sim_P_index: np.ndarray
    links: dict[str, PoolLinkMap]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``sim_cells`` (columns: K index, P index) and ``{link}_{field}``."""
        out = dict(arrays)
        cells = out.pop("sim_cells")
        out["sim_K_index"], out["sim_P_index"] = cells[:, 0], cells[:, 1]
        for name in LINKS:
            for field in PoolLinkMap.__dataclass_fields__:
                out[f"links[{name}].{field}"] = out.pop(f"{name}_{field}")
        return out


class LearnersPools(Experiment):
    """Which learner wins over ``(P, K)`` with task pools at ``N = 16``, ICL and IDG (module docstring): the kernel
    learner's and the feature learner's pool theories on the grid (one point per ``(link, K)``), simulated cells for
    both."""

    name = "learners_pools"
    title = "Kernel vs feature learner with task pools: (P, K), ICL and IDG errors"
    data_class = LearnersPoolsData
    presets = {mode: dict(D=D, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(P=[60, 300], K=[2, 12], N=8, sim=[[1, 1]], n_sets=2, n_test_prompts=2000, n_pools=1)),
        ("quick", dict(P=[10, 250, 500, 1000, 2000, 4000], K=[2, 4, 6, 12, 24], N=16, sim=[[0, 3], [4, 3], [2, 0]],
                       n_sets=3,
                       n_test_prompts=20_000, n_pools=1)),
        ("full", dict(P=[10, 100, 250, 630, 1600, 4000, 10000], K=[1, 2, 4, 6, 12, 24, 96], N=16,
                      sim=[[0, 2], [1, 4], [2, 3], [3, 5], [4, 2], [5, 4], [6, 3], [6, 6], [2, 0]], n_sets=5,
                      n_test_prompts=100_000, n_pools=4)))}

    def points(self, s):
        return ([dict(kind="theory", link=name, i=i) for name in LINKS for i in range(len(s.K))]
                + [dict(kind="sim", link=name, i=int(i), j=int(j)) for name in LINKS for i, j in s.sim])

    def compute(self, s, point):
        K = int(s.K[point["i"]])
        pb = problem(point["link"], s.N, K, D=s.D)
        if point["kind"] == "theory":
            k = [kernel_theory(pb, P, n_pools=s.n_pools, lam=s.lam) for P in s.P]
            out = {f"kernel_{a}": np.array([x[a] for x in k]) for a in ("test", "test_se", "test_idg", "test_idg_se")}
            f = [feature_theory(pb, P, n_pools=s.n_pools, lam=s.lam) for P in s.P]
            out.update({f"feature_{a}": np.array([x[a] for x in f]) for a in ("test", "test_idg")})
            return out
        P = int(s.P[point["j"]])
        return simulate_cell(pb, P, s.n_sets, (K, P, s.N), s.n_test_prompts, lam=s.lam)

    def assemble(self, s, outputs):
        P, K = np.array(s.P), np.array(s.K)
        cells = np.array(s.sim, int).reshape(-1, 2)
        theory, sims = {name: {} for name in LINKS}, {name: [] for name in LINKS}
        for p, out in zip(self.points(s), outputs):
            if p["kind"] == "theory":
                for tag, v in out.items():
                    theory[p["link"]].setdefault(tag, np.zeros((K.size, P.size)))[p["i"]] = v
            else:
                sims[p["link"]].append(out)
        links = {name: PoolLinkMap(V2=0.5 * problem(name, s.N, D=s.D).label_variance,
                                   **{f"theory_{tag}": v for tag, v in theory[name].items()},
                                   **{f"sim_{tag}": np.array([o[tag] for o in sims[name]])
                                      for tag in ("kernel", "kernel_se", "feature", "feature_se", "kernel_idg",
                                                  "kernel_idg_se", "feature_idg", "feature_idg_se")})
                 for name in LINKS}
        return LearnersPoolsData(P=P, K=K, N=s.N, sim_K_index=cells[:, 0], sim_P_index=cells[:, 1], links=links), {}
