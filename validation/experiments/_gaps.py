"""Relative generalization gap ``ΔEr`` and contrast ratio against task diversity ``P`` (seed paper,
Figs. 5–6), and the memorization → generalization diagram over ``(P, N)`` and ``(P, D)``.

Three experiments:

* ``gaps_long_time`` (figure ``fig5``): full model, ``λ = 0.01``, long-time limit of gradient flow;
  panel (a) ``D = 10``, ``N ∈ {10, 20, 50, 100}``, panel (b) ``N = 100``, ``D ∈ {5, 10, 15, 20}``;
  training set ``j`` at ``P`` of the problem ``(D, N)`` uses ``rng = (1000 D + N, P, j)``
  (:func:`dynamics.gap_sweep`), so there is one point per ``(D, N, P)`` (a pair in both panels is
  computed once). The replica theory (``β = ∞``) and the boundaries ``P*`` are computed in ``assemble``;
  the standard error of the ratio of dataset-averaged errors ``⟨E_g⟩/⟨E_t⟩`` (the quantity the theory
  predicts) is kept as ``ratio_of_means_se``.
* ``gaps_finite_time`` (figure ``fig6``): the same for the reduced model, ``λ = 0``, gradient flow
  from ``θ_0 = 0`` stopped at ``t = 10³`` (no theory).
* ``phase`` (figure ``phase``): the replica theory's ``ΔEr`` over ``(P, N)`` at ``D = 10`` and over
  ``(P, D)`` at ``N = 100`` with its boundary ``P*`` (one point per map row), and the boundary from
  exact dataset averages on a ``P`` grid around the theory's (one point per ``(D, N)``; training
  sets ``rng = (100 D + N, P, j)``), with its standard deviation over bootstrap resamples of the
  training sets (``Pstar_sd_N``, ``Pstar_sd_D``). An exact boundary without a crossing is stored as ``nan``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import dynamics
import linattn
import replica

from ._base import Experiment
from ._data import ExperimentData
from ._stationary import boundary_from_means

#: context lengths of panel (a) (``D = 10``) and token dimensions of panel (b) (``N = 100``)
NS = (10, 20, 50, 100)
DS = (5, 10, 15, 20)
#: per-``P`` statistics of :func:`dynamics.gap_sweep` kept by the figures
_SWEEP_FIELDS = ("P", "gap_mean", "gap_sd", "gap_median", "gap_q16", "gap_q84", "contrast_mean", "contrast_sd")
#: bootstrap resamples of the training sets behind the standard deviation of an exact boundary ``P*``
N_BOOT = 200


def ratio_of_means_se(train_all, test_all):
    """Standard error of ``⟨E_g⟩/⟨E_t⟩`` over training sets (delta method, with the train–test covariance).

    Parameters
    ----------
    train_all, test_all : ndarray (n_P, n_datasets)
        The errors of every training set at every ``P``.

    Returns
    -------
    ndarray (n_P,)
        ``0`` with a single training set; ``inf`` or ``nan`` where ``⟨E_t⟩ = 0`` (interpolating models).
    """
    n = train_all.shape[1]
    if n < 2:
        return np.zeros(train_all.shape[0])
    mt, mg = train_all.mean(1), test_all.mean(1)
    vt, vg = train_all.var(1, ddof=1), test_all.var(1, ddof=1)
    cov = ((train_all - mt[:, None]) * (test_all - mg[:, None])).sum(1) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = mg / mt
        rel = np.maximum(vg / mg**2 + vt / mt**2 - 2 * cov / (mg * mt), 0.0)
        return np.abs(r) * np.sqrt(rel / n)


def bootstrap_boundary_sd(sw, n_boot=N_BOOT, seed=0):
    """Standard deviation of the exact boundary ``P*`` (ratio of means) over bootstrap resamples of the
    training sets (one resample of the set indices shared by every ``P`` of the grid).

    Parameters
    ----------
    sw : dynamics.Sweep
        With ``train_all`` and ``test_all``.
    n_boot : int
    seed : int

    Returns
    -------
    float
        ``nan`` when fewer than half of the resamples cross ``ΔEr = 5``.
    """
    rng = np.random.default_rng(seed)
    n = sw.train_all.shape[1]
    stars = []
    for _ in range(n_boot):
        idx = rng.integers(0, n, n)
        b = boundary_from_means(sw.P, sw.train_all[:, idx].mean(1), sw.test_all[:, idx].mean(1))
        if b is not None:
            stars.append(b)
    return float(np.std(stars, ddof=1)) if len(stars) >= max(2, n_boot // 2) else np.nan


def panels(s):
    """The panels of a gap figure: ``(tag, label, [(D, N), ...])`` for (a) ``D = 10`` and (b) ``N = 100``.

    Parameters
    ----------
    s : Settings
        With ``N_values`` and ``D_values``.

    Returns
    -------
    list of tuple
    """
    return [("a", "N", [(10, int(N)) for N in s["N_values"]]), ("b", "D", [(int(D), 100) for D in s["D_values"]])]


def _unique(pairs):
    """``pairs`` without repetitions, in order of first appearance."""
    return list(dict.fromkeys(tuple(p) for p in pairs))


def _gap_presets(model, lam, time, sizes):
    """Presets of a gap experiment: ``sizes[mode] = (n_P, n_datasets)``; smoke mode uses two problems per panel."""
    out = {}
    for mode, (n_P, n_datasets) in sizes.items():
        n = 2 if mode == "smoke" else len(NS)
        out[mode] = dict(model=model, lam=lam, time=time, n_P=n_P, n_datasets=n_datasets,
                         N_values=list(NS[:n]), D_values=list(DS[:n]))
    return out


@dataclass(frozen=True, eq=False, repr=False)
class GapCurves(ExperimentData):
    """``ΔEr`` and the contrast ratio against ``P`` for one problem ``(D, N)`` (statistics over training sets).

    Attributes
    ----------
    D, N : int
    P : ndarray (n_P,)
        Training prompts (``n_P`` log-spaced integers from 1 to 10⁴).
    gap_mean, gap_sd, gap_median, gap_q16, gap_q84 : ndarray (n_P,)
        ``ΔEr = (E_g − E_t)/E_t`` of each training set: mean, standard deviation, median, 16 % and 84 % quantiles.
    contrast_mean, contrast_sd, contrast_median, contrast_q16, contrast_q84 : ndarray (n_P,)
        The contrast ratio ``C = tr Γ/(‖Γ‖_F √D)``: the same statistics.
    train_mean, test_mean : ndarray (n_P,)
        Dataset-averaged errors ``⟨E_t⟩``, ``⟨E_g⟩``.
    ratio_of_means_se : ndarray (n_P,)
        Standard error of ``⟨E_g⟩/⟨E_t⟩`` (:func:`ratio_of_means_se`).
    theory_P, theory_gap : ndarray (120,) or None
        The replica theory's ``ΔEr`` of the ratio of averages (``β = ∞``; ``None`` without weight decay).
    """

    D: int
    N: int
    P: np.ndarray
    gap_mean: np.ndarray
    gap_sd: np.ndarray
    gap_median: np.ndarray
    gap_q16: np.ndarray
    gap_q84: np.ndarray
    contrast_mean: np.ndarray
    contrast_sd: np.ndarray
    contrast_median: np.ndarray
    contrast_q16: np.ndarray
    contrast_q84: np.ndarray
    train_mean: np.ndarray
    test_mean: np.ndarray
    ratio_of_means_se: np.ndarray
    theory_P: np.ndarray | None
    theory_gap: np.ndarray | None


@dataclass(frozen=True, eq=False, repr=False)
class GapPanel(ExperimentData):
    """One panel of a gap figure: the problems along one axis.

    Attributes
    ----------
    varied : str
        What varies between the curves: ``"N"`` (at ``D = 10``) or ``"D"`` (at ``N = 100``).
    curves : tuple of GapCurves
        One per problem, in the order of the settings ``N_values`` or ``D_values``.
    """

    varied: str
    curves: tuple[GapCurves, ...]


@dataclass(frozen=True, eq=False, repr=False)
class GapsData(ExperimentData):
    """Data of ``gaps_long_time`` (figure ``fig5``) and ``gaps_finite_time`` (figure ``fig6``).

    Attributes
    ----------
    panels : dict of str to GapPanel
        Panel ``"a"`` (``D = 10``, ``N`` varied) and ``"b"`` (``N = 100``, ``D`` varied) (:func:`panels`).
    """

    panels: dict[str, GapPanel]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``{tag}_{statistic}_D{D}_N{N}`` for each panel tag and problem."""
        out = dict(arrays)
        for tag, label, pairs in panels(settings):
            out[f"panels[{tag}].varied"] = np.asarray(label)
            for k, (D, N) in enumerate(pairs):
                at = f"panels[{tag}].curves[{k}]."
                out[at + "D"], out[at + "N"] = np.asarray(D), np.asarray(N)
                for name in GapCurves.__dataclass_fields__:
                    if f"{tag}_{name}_D{D}_N{N}" in out:
                        out[at + name] = out.pop(f"{tag}_{name}_D{D}_N{N}")
        return out


class _GapSweep(Experiment):
    """``ΔEr`` and contrast ratio against ``P`` for the problems of both panels (not registered)."""

    data_class = GapsData

    def P_grid(self, s):
        """The ``P`` grid: ``n_P`` log-spaced integers from 1 to 10⁴."""
        return np.unique(np.round(np.geomspace(1, 1e4, s.n_P)).astype(int))

    def points(self, s):
        pairs = _unique(pair for _, _, ps in panels(s) for pair in ps)
        return [dict(D=D, N=N, P=int(P)) for D, N in pairs for P in self.P_grid(s)]

    def compute(self, s, point):
        D, N = point["D"], point["N"]
        sw = dynamics.gap_sweep(linattn.Problem(D, N), [point["P"]], s.lam, s.n_datasets, s.model, time=s.time,
                                rng=D * 1000 + N)
        out = {k: getattr(sw, k) for k in _SWEEP_FIELDS + ("train_mean", "test_mean")}
        out["ratio_of_means_se"] = ratio_of_means_se(sw.train_all, sw.test_all)
        for name, q in zip(("q16", "median", "q84"), np.quantile(sw.contrast_all, [0.16, 0.5, 0.84], axis=1)):
            out[f"contrast_{name}"] = q
        return out

    def assemble(self, s, outputs):
        by_pair = {}
        for p, out in zip(self.points(s), outputs):
            by_pair.setdefault((p["D"], p["N"]), []).append(out)
        P_grid = self.P_grid(s)
        theory = s.lam > 0
        data, rows = {}, {}
        for tag, label, pairs in panels(s):
            rows[tag], curves = [], []
            for D, N in pairs:
                sw = {k: np.concatenate([np.atleast_1d(o[k]) for o in by_pair[(D, N)]]) for k in by_pair[(D, N)][0]}
                row = dict(D=D, N=N, P_star_exact_mean_of_ratios=linattn.transition_point(sw["P"], sw["gap_mean"]),
                           P_star_exact_ratio_of_means=boundary_from_means(sw["P"], sw["train_mean"], sw["test_mean"]))
                Pt = gap = None
                if theory:
                    pb = linattn.Problem(D, N)
                    Pt = np.geomspace(P_grid[0], P_grid[-1], 120)
                    gap = replica.stationary_curve(pb, Pt, np.inf, s.lam, s.model, progress=False).gap
                    row["P_star_theory"] = replica.phase_boundary(pb, np.inf, s.lam, model=s.model)
                curves.append(GapCurves(D=D, N=N, theory_P=Pt, theory_gap=gap, **{
                    k: sw[k] for k in _SWEEP_FIELDS + ("contrast_q16", "contrast_median", "contrast_q84",
                                                       "train_mean", "test_mean", "ratio_of_means_se")}))
                rows[tag].append(row)
            data[tag] = GapPanel(varied=label, curves=tuple(curves))
        return GapsData(panels=data), {"rows": rows}


class GapsLongTime(_GapSweep):
    """Seed paper, Fig. 5: full model, ``λ = 0.01``, long-time limit, with the replica theory."""

    name = "gaps_long_time"
    title = "ΔEr and contrast ratio vs P (full model, λ = 0.01, long-time limit)"
    presets = _gap_presets("full", 0.01, None, {"smoke": (4, 2), "quick": (14, 20), "full": (20, 100)})


class GapsFiniteTime(_GapSweep):
    """Seed paper, Fig. 6: reduced model, ``λ = 0``, gradient flow stopped at ``t = 10³``."""

    name = "gaps_finite_time"
    title = "ΔEr and contrast ratio vs P (reduced model, λ = 0, t = 10³)"
    presets = _gap_presets("reduced", 0.0, 1e3, {"smoke": (4, 2), "quick": (14, 15), "full": (20, 50)})


@dataclass(frozen=True, eq=False, repr=False)
class BoundaryAxis(ExperimentData):
    """One panel of the diagram ``phase``: ``(P, N)`` at ``D = 10`` or ``(P, D)`` at ``N = 100``.

    Attributes
    ----------
    map_values : ndarray (n_map,)
        The ``N`` (or ``D``) of the theory map's rows.
    gap : ndarray (n_map, n_P)
        The replica theory's ``ΔEr`` of the ratio of averages on :attr:`PhaseData.P_grid` (full model, ``β = ∞``).
    theory_boundary : ndarray (n_map,)
        The theory's boundary ``P*`` (``ΔEr = 5``) of each row (``nan``: no crossing).
    exact_values : ndarray (n_exact,)
        The ``N`` (or ``D``) of the exact boundaries (the setting ``N_exact`` or ``D_exact``).
    exact_theory_boundary : ndarray (n_exact,)
        The theory's ``P*`` there (the centre of each exact ``P`` grid).
    exact_boundary : ndarray (n_exact,)
        ``P*`` from exact dataset averages (ratio of the mean errors; ``nan``: no crossing in its grid).
    exact_boundary_sd : ndarray (n_exact,)
        Its standard deviation over bootstrap resamples of the training sets.
    """

    map_values: np.ndarray
    gap: np.ndarray
    theory_boundary: np.ndarray
    exact_values: np.ndarray
    exact_theory_boundary: np.ndarray
    exact_boundary: np.ndarray
    exact_boundary_sd: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class PhaseData(ExperimentData):
    """Data of ``phase`` (figure ``phase``).

    Attributes
    ----------
    P_grid : ndarray (n_P,)
        ``P`` of the theory maps.
    axes : dict of str to BoundaryAxis
        ``"N"`` (``D = 10``, panel (a)) and ``"D"`` (``N = 100``, panel (b)).
    """

    P_grid: np.ndarray
    axes: dict[str, BoundaryAxis]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``P_grid``, ``{N,D}_map``, ``gap_P{N,D}``, ``Pstar_theory_{N,D}``, ``{N,D}_exact``,
        ``Pstar_{N,D}`` (columns: theory, exact), ``Pstar_sd_{N,D}``."""
        out = dict(arrays)
        for axis in ("N", "D"):
            at = f"axes[{axis}]."
            out[at + "map_values"], out[at + "gap"] = out.pop(f"{axis}_map"), out.pop(f"gap_P{axis}")
            out[at + "theory_boundary"] = out.pop(f"Pstar_theory_{axis}")
            out[at + "exact_values"] = out.pop(f"{axis}_exact")
            stars = out.pop(f"Pstar_{axis}")
            out[at + "exact_theory_boundary"], out[at + "exact_boundary"] = stars[:, 0], stars[:, 1]
            out[at + "exact_boundary_sd"] = out.pop(f"Pstar_sd_{axis}")
        return out


class PhaseDiagram(Experiment):
    """Memorization → generalization diagram: theory maps and exact boundaries (module docstring)."""

    name = "phase"
    title = "Memorization → generalization diagram over (P, N) and (P, D): theory and exact P*"
    data_class = PhaseData
    presets = {"smoke": dict(lam=0.01, n_P=8, n_map=2, n_D=2, N_exact=[100], D_exact=[10], n_datasets=2, n_grid=3),
               "quick": dict(lam=0.01, n_P=70, n_map=24, n_D=28, N_exact=[10, 20, 50, 100, 200],
                             D_exact=[5, 10, 15, 20], n_datasets=20, n_grid=11),
               "full": dict(lam=0.01, n_P=70, n_map=24, n_D=28, N_exact=[10, 20, 50, 100, 200],
                            D_exact=[5, 10, 15, 20], n_datasets=100, n_grid=11)}

    @staticmethod
    def grids(s):
        """``P_grid``, ``N_map`` and ``D_map`` of the theory maps.

        Parameters
        ----------
        s : Settings

        Returns
        -------
        dict of str to ndarray
        """
        return {"P_grid": np.geomspace(1, 1e4, s.n_P),
                "N_map": np.unique(np.round(np.geomspace(5, 400, s.n_map)).astype(int)),
                "D_map": np.unique(np.round(np.linspace(3, 30, s.n_D)).astype(int))}

    def _pairs(self, s):
        g = self.grids(s)
        return {"map_N": [(10, int(N)) for N in g["N_map"]], "map_D": [(int(D), 100) for D in g["D_map"]],
                "exact_N": [(10, int(N)) for N in s.N_exact], "exact_D": [(int(D), 100) for D in s.D_exact]}

    def points(self, s):
        pairs = self._pairs(s)
        return ([dict(kind="map", D=D, N=N) for D, N in _unique(pairs["map_N"] + pairs["map_D"])]
                + [dict(kind="exact", D=D, N=N) for D, N in _unique(pairs["exact_N"] + pairs["exact_D"])])

    def compute(self, s, point):
        pb = linattn.Problem(point["D"], point["N"])
        guess = replica.phase_boundary(pb, np.inf, s.lam, model="full")
        if point["kind"] == "map":
            gap = replica.stationary_curve(pb, self.grids(s)["P_grid"], np.inf, s.lam, "full", progress=False).gap
            return {"gap": gap, "Pstar_theory": np.nan if guess is None else guess}
        if guess is None:
            return {"boundary": np.array([np.nan, np.nan, np.nan])}
        grid = np.unique(np.round(np.geomspace(max(guess / 2.5, 1.0), guess * 2.5, s.n_grid)).astype(int))
        sw = dynamics.gap_sweep(pb, grid, s.lam, s.n_datasets, "full", rng=pb.D * 100 + pb.N)
        exact = boundary_from_means(sw.P, sw.train_mean, sw.test_mean)
        sd = bootstrap_boundary_sd(sw, seed=pb.D * 100 + pb.N)
        return {"boundary": np.array([guess, np.nan if exact is None else exact, sd], dtype=float)}

    def assemble(self, s, outputs):
        out = {(p["kind"], p["D"], p["N"]): o for p, o in zip(self.points(s), outputs)}
        pairs, grids = self._pairs(s), self.grids(s)
        axes, rows = {}, []
        for axis, exact in (("N", s.N_exact), ("D", s.D_exact)):
            pts = pairs[f"exact_{axis}"]
            boundaries = np.array([out["exact", D, N]["boundary"] for D, N in pts], float).reshape(len(pts), 3)
            axes[axis] = BoundaryAxis(
                map_values=grids[f"{axis}_map"],
                gap=np.array([out["map", D, N]["gap"] for D, N in pairs[f"map_{axis}"]]).reshape(-1, s.n_P),
                theory_boundary=np.array([float(out["map", D, N]["Pstar_theory"]) for D, N in pairs[f"map_{axis}"]],
                                         float),
                exact_values=np.array(exact), exact_theory_boundary=boundaries[:, 0], exact_boundary=boundaries[:, 1],
                exact_boundary_sd=boundaries[:, 2])
            rows += [{axis: int(v), "P_star_theory": float(t), "P_star_exact": float(e)}
                     for v, t, e in zip(exact, boundaries[:, 0], boundaries[:, 1])]
        return PhaseData(P_grid=grids["P_grid"], axes=axes), {"rows": rows}
