"""Gradient-flow learning curves: the exact closed-form dynamics against gradient descent and against the
dataset-averaged theory.

One experiment, ``flow_curves``: it draws figure ``fig4`` (seed paper, Fig. 4) and gives the report section
``dynamics``. Its points:

* the figure: the train and test loss of one dataset under gradient flow (``D = 10``, ``N = 100``, ``λ = 0.01``,
  full model, ``θ₀ ~ N(0, σ₀² I)``, ``σ₀ = 0.1``; mean ± 1 s.d. over initialisations in closed form), explicit
  gradient-descent markers from ``n_init`` sampled initialisations, and the zero-temperature replica asymptote.
  One point per ``P ∈ {10, 100}`` (data ``rng=(seed, P)``, initialisations ``rng=(seed, P, 1)``).
* the figure's dataset averages: :func:`dynamics.averaged_curves` at the same setting with its band over datasets
  and initialisations (``n_datasets`` datasets ``rng=(40, P, i)``), against the spread of as many exact per-dataset
  flows ``rng=(46, P, i)`` (one point per ``P ∈ {10, 100}``); and the memorization rise of the test loss from
  ``θ₀ = 0`` at ``D = 10``, ``N = 50``, ``P = 30`` (band ``rng=(40, 30, i)``, exact flows ``rng=(47, 30, i)``), which
  the random start ``σ₀ = 0.1`` hides (one point).
* the report: dataset-averaged gradient-flow curves against :func:`dynamics.averaged_curves` (one point per
  (model, ``P``), ``n_datasets`` datasets ``rng=(41, P, i)``), their band (``n_datasets`` other datasets
  ``rng=(40, P, i)``) against the spread of the same exact curves, and the figure's bands; the memorization and
  generalization signatures
  of the same flow from ``θ₀ = 0`` (one point: datasets ``rng=(42, i)`` at ``P = 10`` and ``rng=(43, i)`` at
  ``P = 100``); and gradient descent on the attention weights against the closed form (one point: tokens seed
  44, initial weights ``default_rng(45)``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import dynamics
import linattn
import replica
import spectra
from dynamics._band import total_spread
from linattn import _sampling as sampling
from linattn._numerics.stats import mean_se

from ..simulators._attention_gd import attention_gradient_descent
from ..simulators._gradient_descent import descent_from_random_inits
from ._base import Check, Experiment
from ._data import ExperimentData
from ._stationary_sections import fmt

D, N, LAM, SIGMA0 = 10, 100, 0.01, 0.1
#: the two dataset sizes of Fig. 4
FLOW_P = (10, 100)
#: the memorization signature: data seed of each dataset size (``rng=(seed, i)``)
SIGNATURE_SEEDS = {10: 42, 100: 43}
#: data seed of the datasets behind the bands of :func:`dynamics.averaged_curves` (``rng=(seed, P, i)``)
BAND_SEED = 40
#: data seed of the exact per-dataset flows the figure's bands are drawn against (``rng=(seed, P, i)``), by panel
EXACT_SEEDS = {"band": 46, "memorization": 47}
#: the memorization rise of the figure: ``N`` (the setting ``memorization_N``) and ``P`` at ``D = 10`` (full model,
#: ``λ = 0.01``, ``θ₀ = 0``)
MEMORIZATION_N, MEMORIZATION_P = 50, 30
#: band within this many combined standard errors of the exact spread at every time (many times and curves: four)
BAND_K = 4.0
#: a theory curve "falls" where no step rises by more than this, relative to its largest value (the contour
#: quadrature of :func:`dynamics.averaged_curves` is accurate to 1e-13; a plateau wobbles at that level)
FALL_TOL = 1e-10


def falls(curve):
    """Whether ``curve`` never rises, to the theory's accuracy (:data:`FALL_TOL`)."""
    return bool(np.all(np.diff(curve) <= FALL_TOL * np.max(np.abs(curve))))


def doubling_times(start, n_octaves, per_octave=1):
    """``start · 2^{j/per_octave}``, ``j = 0 … per_octave · n_octaves``, built so that every time ``2t`` of the grid
    is exactly another time of it (:func:`dynamics.averaged_curves` then solves each ``τ`` once)."""
    steps = start * 2.0 ** (np.arange(per_octave) / per_octave)
    grid = (steps[None, :] * 2.0 ** np.arange(n_octaves)[:, None]).ravel()
    return np.append(grid, start * 2.0 ** n_octaves)


def _signature_key(P):
    """The output of the signature point at ``P`` (a point of a store keeps this name)."""
    return f"test_P{P}"


@dataclass(frozen=True, eq=False, repr=False)
class FigureCurves(ExperimentData):
    """The curves of figure ``fig4`` at one ``P``: one dataset under gradient flow from ``θ₀ ~ N(0, σ₀² I)``.

    Attributes
    ----------
    times : ndarray (200,)
        Times of the closed-form curves (``γ = 1``).
    train, train_sd, test, test_sd : ndarray (200,)
        Closed-form mean and standard deviation over initialisations of the training and test loss.
    gd_times : ndarray (n_marks,)
        Times ``t = nη`` of the gradient-descent markers.
    gd_train_mean, gd_train_sd, gd_test_mean, gd_test_sd : ndarray (n_marks,)
        Explicit gradient descent from ``n_init`` sampled initialisations: mean and standard deviation.
    asymptote_train, asymptote_test : float
        The zero-temperature replica theory (dataset average, ``β = ∞``).
    """

    times: np.ndarray
    train: np.ndarray
    train_sd: np.ndarray
    test: np.ndarray
    test_sd: np.ndarray
    gd_times: np.ndarray
    gd_train_mean: np.ndarray
    gd_train_sd: np.ndarray
    gd_test_mean: np.ndarray
    gd_test_sd: np.ndarray
    asymptote_train: float
    asymptote_test: float


@dataclass(frozen=True, eq=False, repr=False)
class BandCurves(ExperimentData):
    """Dataset-averaged curves with their band (:func:`dynamics.averaged_curves`), and the exact spread of
    independent datasets at fewer times (figure ``fig4``, panels c and d).

    Attributes
    ----------
    times : ndarray (n_times,)
        Times of the theory (``γ = 1``).
    train, test : ndarray (n_times,)
        The dataset-averaged theory (means over initialisations too).
    train_sd, test_sd, train_sd_se, test_sd_se : ndarray (n_times,)
        The band: s.d. of one dataset's curve over datasets and initialisations, and its standard error
        (``n_datasets`` datasets ``rng=(40, P, i)``).
    exact_times : ndarray (n_marks,)
        Times of the exact flows (every other, or every fourth, time of ``times``).
    exact_train, exact_test : ndarray (n_marks,)
        Mean over ``n_datasets`` independent datasets of their exact curves (exact over initialisations).
    exact_train_sd, exact_test_sd, exact_train_sd_se, exact_test_sd_se : ndarray (n_marks,)
        Their s.d. over datasets and initialisations and its standard error (the estimator of the band).
    """

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    train_sd: np.ndarray
    test_sd: np.ndarray
    train_sd_se: np.ndarray
    test_sd_se: np.ndarray
    exact_times: np.ndarray
    exact_train: np.ndarray
    exact_test: np.ndarray
    exact_train_sd: np.ndarray
    exact_test_sd: np.ndarray
    exact_train_sd_se: np.ndarray
    exact_test_sd_se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class Memorization(ExperimentData):
    """The memorization rise of the test loss (figure ``fig4``, panel d): full model, ``D = 10``, ``N`` (the setting
    ``memorization_N``), ``P = MEMORIZATION_P``, ``λ = 0.01``.

    Attributes
    ----------
    N, P : int
        Context length and prompts.
    zero : BandCurves
        From ``θ₀ = 0``: the theory, its band over datasets, and exact flows (``rng=(47, P, i)``).
    init_times, init_test : ndarray (n_init_times,)
        The dataset-averaged test loss from ``θ₀ ~ N(0, σ₀² I)`` (theory, mean over initialisations).
    """

    N: int
    P: int
    zero: BandCurves
    init_times: np.ndarray
    init_test: np.ndarray


#: the columns of the gradient-descent output ``gd`` of a figure point
_GD_COLUMNS = ("gd_train_mean", "gd_train_sd", "gd_test_mean", "gd_test_sd")


@dataclass(frozen=True, eq=False, repr=False)
class AveragedCurves(ExperimentData):
    """Dataset-averaged gradient-flow curves of one model from ``θ₀ = 0`` (report section ``dynamics``).

    Attributes
    ----------
    P : ndarray (n_P,)
        Dataset sizes (the setting ``P``).
    times : ndarray (n_times,)
        :attr:`FlowCurves.TIMES`.
    test, train : ndarray (n_P, n_datasets, n_times)
        Test and training loss of each dataset (data ``rng=(41, P, i)``).
    theory_test, theory_train : ndarray (n_P, n_times)
        :func:`dynamics.averaged_curves` (the exact finite-size law).
    mp_test, mp_train : ndarray (n_P, n_times)
        The same with the Marchenko–Pastur law (the baseline).
    band_test, band_train, band_test_se, band_train_se : ndarray (n_P, n_times) or None
        The band of :func:`dynamics.averaged_curves` (s.d. over datasets, ``n_datasets`` other datasets
        ``rng=(40, P, i)``) and its standard error (``None`` in results of version 0.1.0).
    """

    P: np.ndarray
    times: np.ndarray
    test: np.ndarray
    train: np.ndarray
    theory_test: np.ndarray
    theory_train: np.ndarray
    mp_test: np.ndarray
    mp_train: np.ndarray
    band_test: np.ndarray | None = None
    band_train: np.ndarray | None = None
    band_test_se: np.ndarray | None = None
    band_train_se: np.ndarray | None = None


@dataclass(frozen=True, eq=False, repr=False)
class FlowCurvesData(ExperimentData):
    """Data of ``flow_curves`` (figure ``fig4`` and the report section ``dynamics``).

    Attributes
    ----------
    figure : dict of int to FigureCurves
        The curves of the figure, by ``P`` (:data:`FLOW_P`).
    averaged : dict of str to AveragedCurves
        The dataset-averaged curves, by model (``"reduced"``, ``"full"``).
    signature_times : ndarray (26,)
        :attr:`FlowCurves.SIGNATURE_TIMES`.
    signature_test : dict of int to ndarray (n_datasets, 26)
        Test loss of each dataset under gradient flow from ``θ₀ = 0``, full model, by ``P`` (10: memorization,
        data ``rng=(42, i)``; 100: generalization, ``rng=(43, i)``).
    network_max_dW : float
        Largest difference between gradient descent on the attention weights ``W`` and the closed form (1000 steps).
    network_loss_gradient_W12_W22 : float
        The loss gradient of the blocks ``W12``, ``W22`` there (exactly 0).
    band : dict of int to BandCurves or None
        The figure's dataset averages with their band, by ``P`` (:data:`FLOW_P`; full model, ``θ₀ ~ N(0, σ₀² I)``;
        ``None`` in results of version 0.1.0).
    memorization : Memorization or None
        The memorization rise from ``θ₀ = 0`` (``None`` in results of version 0.1.0).
    """

    figure: dict[int, FigureCurves]
    averaged: dict[str, AveragedCurves]
    signature_times: np.ndarray
    signature_test: dict[int, np.ndarray]
    network_max_dW: float
    network_loss_gradient_W12_W22: float
    band: dict[int, BandCurves] | None = None
    memorization: Memorization | None = None

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``{times,train,train_sd,test,test_sd,gd_t,gd,asymptote}_P{P}`` (``gd``: four columns,
        ``asymptote``: train, test), ``{model}_P{P}_{test,train,theory_*,mp_*}``, ``signature_test_P{10,100}``,
        ``network_max_dW``, ``network_loss_gradient_W12_W22``."""
        out = dict(arrays)
        for P in FLOW_P:
            at = f"figure[{P}]."
            for k in ("times", "train", "train_sd", "test", "test_sd"):
                out[at + k] = out.pop(f"{k}_P{P}")
            out[at + "gd_times"] = out.pop(f"gd_t_P{P}")
            gd, asym = out.pop(f"gd_P{P}"), out.pop(f"asymptote_P{P}")
            out.update({at + c: gd[:, j] for j, c in enumerate(_GD_COLUMNS)})
            out[at + "asymptote_train"], out[at + "asymptote_test"] = asym
            out[f"signature_test[{P}]"] = out.pop(f"signature_test_P{P}")
        for model in FlowCurves.MODELS:
            at = f"averaged[{model}]."
            out[at + "P"], out[at + "times"] = np.array(settings["P"]), FlowCurves.TIMES
            for k in ("test", "train", "theory_test", "theory_train", "mp_test", "mp_train"):
                out[at + k] = np.stack([out.pop(f"{model}_P{P}_{k}") for P in settings["P"]])
        out["signature_times"] = FlowCurves.SIGNATURE_TIMES
        return out


class FlowCurves(Experiment):
    """Gradient-flow curves of one dataset per ``P`` (the figure), the dataset averages with their bands, and the
    report's dataset averages, signatures and attention-weight check (module docstring). Settings: ``n_init``
    initialisations per marker, ``n_marks`` marker times up to ``t_max``, ``seed``; ``n_datasets`` and the dataset
    sizes ``P`` of the averaged curves (``n_datasets`` also the datasets of every band and of the exact flows drawn
    against it); ``band_every``: every how many times of :attr:`BAND_TIMES` (and every ``2 band_every``-th of
    :attr:`MEMORIZATION_TIMES`) the figure's dataset averages are drawn at (1; smoke 5); ``memorization_N``: the
    context length of the memorization panel (:data:`MEMORIZATION_N`; smoke ``N``, whose law is built anyway)."""

    name = "flow_curves"
    title = "Gradient flow: curves of one dataset vs gradient descent, dataset averages vs theory"
    data_class = FlowCurvesData
    positive = ("t_max",)
    MODELS = ("reduced", "full")
    presets = {mode: dict(D=D, N=N, lam=LAM, sigma0=SIGMA0, **rest) for mode, rest in (
        ("smoke", dict(n_init=2, n_marks=3, t_max=20.0, seed=0, n_datasets=3, P=[10, 100], band_every=5,
                       memorization_N=N)),
        ("quick", dict(n_init=8, n_marks=14, t_max=2e3, seed=0, n_datasets=30, P=[10, 100, 1000], band_every=1,
                       memorization_N=MEMORIZATION_N)),
        ("full", dict(n_init=40, n_marks=14, t_max=2e3, seed=0, n_datasets=60, P=[10, 100, 1000], band_every=1,
                      memorization_N=MEMORIZATION_N)))}
    report_order = 20

    #: times of the averaged curves and of the memorization signature
    TIMES = np.geomspace(0.1, 1e5, 13)
    SIGNATURE_TIMES = np.concatenate([[0.0], np.geomspace(1e-2, 1e4, 25)])

    #: times of the figure's dataset averages (exact doubling: one resolvent solve per time) and of the
    #: memorization rise (two per octave)
    BAND_TIMES = doubling_times(1e-2, 20)
    MEMORIZATION_TIMES = doubling_times(1e-2, 20, per_octave=2)

    def points(self, s):
        return ([dict(kind="figure", P=P) for P in FLOW_P]
                + [dict(kind="curve", model=m, P=P) for m in self.MODELS for P in s.P]
                + [dict(kind="signature"), dict(kind="network")]
                + [dict(kind="band", P=P) for P in FLOW_P] + [dict(kind="memorization")])

    def compute(self, s, point):
        if point["kind"] == "figure":
            return self._figure_curves(s, point["P"])
        pb, n = linattn.Problem(s.D, s.N), s.n_datasets
        if point["kind"] == "curve":
            model, P, t = point["model"], point["P"], self.TIMES
            runs = [dynamics.gradient_flow(pb.sample(P, rng=(41, P, i)), pb, s.lam, t, model=model) for i in range(n)]
            th = dynamics.averaged_curves(pb, P, s.lam, t, model=model, n_datasets=max(n, 2), rng=BAND_SEED,
                                          progress=False)
            mp = dynamics.averaged_curves(pb, P, s.lam, t, model=model, law="mp", progress=False)
            return {"test": np.array([r.test for r in runs]), "train": np.array([r.train for r in runs]),
                    "theory_test": th.test, "theory_train": th.train, "mp_test": mp.test, "mp_train": mp.train,
                    "band_test": th.test_sd, "band_train": th.train_sd, "band_test_se": th.test_sd_se,
                    "band_train_se": th.train_sd_se}
        every = s.band_every           # 1: the grids as they are, exact flows at every 2nd (4th) time; else thinned
        band_times = self.BAND_TIMES[::every]
        if point["kind"] == "band":
            return _band_curves(pb, point["P"], s.lam, band_times, 2 if every == 1 else 1, s.sigma0, max(n, 2),
                                EXACT_SEEDS["band"])
        if point["kind"] == "memorization":
            pbm = linattn.Problem(s.D, s.memorization_N)
            zero = _band_curves(pbm, MEMORIZATION_P, s.lam, self.MEMORIZATION_TIMES[::1 if every == 1 else 2 * every],
                                4 if every == 1 else 1, None, max(n, 2), EXACT_SEEDS["memorization"])
            init_times = band_times
            init = dynamics.averaged_curves(pbm, MEMORIZATION_P, s.lam, init_times, init=s.sigma0, model="full",
                                            progress=False)
            return {**zero, "init_times": init_times, "init_test": init.test}
        if point["kind"] == "signature":
            tt = self.SIGNATURE_TIMES
            return {_signature_key(P): np.array([dynamics.gradient_flow(pb.sample(P, rng=(seed, i)), pb, s.lam, tt,
                                                                        model="full").test for i in range(n)])
                    for P, seed in SIGNATURE_SEEDS.items()}
        return _network_vs_closed_form(s.lam)

    def _figure_curves(self, s, P):
        seed = s.seed
        pb = linattn.Problem(s.D, s.N)
        times = np.geomspace(1e-2, 1e4, 200)
        data = pb.sample(P, rng=(seed, P))
        es = spectra.eigensystem(data, pb, "full")
        cur = dynamics.gradient_flow(es, pb, s.lam, times, init=s.sigma0, model="full")
        lr = 0.5 / (es.lambda_max + s.lam)
        t_marks = np.geomspace(max(lr, 1e-2), s.t_max, s.n_marks)
        steps = np.unique(np.round(t_marks / lr).astype(int))
        run = descent_from_random_inits(data, pb, s.lam, steps, lr, s.sigma0, s.n_init, rng=(seed, P, 1), model="full",
                                        progress=False)
        asym = replica.stationary(pb, P, np.inf, s.lam, "full")
        # gd columns: _GD_COLUMNS; asymptote: train, test
        return {"times": times, "train": cur.train, "train_sd": cur.train_sd, "test": cur.test, "test_sd": cur.test_sd,
                "gd_t": steps * lr, "gd": np.stack([run.train_mean, run.train_sd, run.test_mean, run.test_sd], axis=1),
                "asymptote": np.array([asym.train, asym.test]), "lr": lr}

    def assemble(self, s, outputs):
        figure, curves, band, rows = {}, {}, {}, []
        signature = network = memorization = None
        for p, out in zip(self.points(s), outputs):
            if p["kind"] == "figure":
                P = p["P"]
                times, test, (asym_train, asym_test) = out["times"], out["test"], out["asymptote"]
                figure[P] = FigureCurves(times=times, train=out["train"], train_sd=out["train_sd"], test=test,
                                         test_sd=out["test_sd"], gd_times=out["gd_t"],
                                         **{c: out["gd"][:, j] for j, c in enumerate(_GD_COLUMNS)},
                                         asymptote_train=asym_train, asymptote_test=asym_test)
                k = int(np.argmin(test))
                rows.append(dict(P=P, lr=float(out["lr"]), test_min_time=float(times[k]), test_min=float(test[k]),
                                 test_final=float(test[-1]), asym_train=float(asym_train),
                                 asym_test=float(asym_test)))
            elif p["kind"] == "curve":
                curves.setdefault(p["model"], []).append(out)
            elif p["kind"] == "signature":
                signature = {P: out[_signature_key(P)] for P in SIGNATURE_SEEDS}
            elif p["kind"] == "band":
                band[p["P"]] = BandCurves(**out)
            elif p["kind"] == "memorization":
                init = {k: out.pop(k) for k in ("init_times", "init_test")}
                memorization = Memorization(N=s.memorization_N, P=MEMORIZATION_P, zero=BandCurves(**out), **init)
            else:
                network = out
        averaged = {model: AveragedCurves(P=np.array(s.P), times=self.TIMES, **{
            k: np.stack([o[k] for o in outs]) for k in ("test", "train", "theory_test", "theory_train", "mp_test",
                                                        "mp_train", "band_test", "band_train", "band_test_se",
                                                        "band_train_se")}) for model, outs in curves.items()}
        data = FlowCurvesData(figure=figure, averaged=averaged, signature_times=self.SIGNATURE_TIMES,
                              signature_test=signature, network_max_dW=network["max_dW"],
                              network_loss_gradient_W12_W22=network["loss_gradient_W12_W22"], band=band,
                              memorization=memorization)
        return data, {"rows": rows}

    def checks(self, r):
        d, s, rows = r.data, r.settings, []
        n = s["n_datasets"]
        where = f"D={s['D']}, N={s['N']}, λ={s['lam']:g}"
        for model in self.MODELS:
            cur = d.averaged[model]
            for i, P in enumerate(s["P"]):
                for name in ("test", "train"):
                    theory, sims, mpv = (getattr(cur, k)[i] for k in (f"theory_{name}", name, f"mp_{name}"))
                    mean, se = mean_se(sims, 0, single=np.nan)        # one dataset: nan, the check fails
                    rel = np.abs(theory / mean - 1)
                    k = int(np.argmax(rel))
                    ok = bool(np.all(rel <= 0.03 + 4 * se / mean))
                    rows.append(Check("dynamics", f"averaged {name} curve, worst time point",
                                      f"{model}, {where}, P={P}, {n} datasets, 13 times", fmt(theory[k]),
                                      fmt(mean[k], se[k]),
                                      f"{rel[k]:.2%} (max over t; MP {np.max(np.abs(mpv / mean - 1)):.1%})", ok,
                                      "≤ 3 % + 4 s.e. at every t"))
        rows += self._band_checks(d, s, where)
        # memorization signature (full model)
        tt, m10, m100 = d.signature_times, d.signature_test[10], d.signature_test[100]
        k = int(np.argmin(m10.mean(0)))
        rise = m10.mean(0)[-1] - m10.mean(0)[k]
        se_rise = mean_se(m10[:, -1] - m10[:, k], single=np.nan)[1]
        inc_mean, inc_se = mean_se(np.diff(m100, axis=1), 0, single=np.nan)
        worst = float(np.max(inc_mean / (inc_se + 1e-300)))
        rows.append(Check("dynamics", "memorization: test error minimum then rise",
                          f"full, {where}, P=10, θ0=0", "rise predicted",
                          f"min at t={tt[k]:.3g}, rise {rise:.4f} ± {se_rise:.1g}", "—",
                          bool(0 < k < tt.size - 1 and rise > 5 * se_rise), "interior minimum, rise > 5 s.e."))
        rows.append(Check("dynamics", "generalization: monotone decrease", f"full, {where}, P=100, θ0=0",
                          "monotone", f"largest mean increment = {worst:.2f} s.e.", "—", worst <= 3.0,
                          "no increment > 3 s.e."))
        # the real network
        diff, grad = d.network_max_dW, d.network_loss_gradient_W12_W22
        rows.append(Check("dynamics", "GD on attention W vs closed form", "D=5, N=12, P=40, 1000 steps", "closed form",
                          f"max |ΔW| = {diff:.1e}; W12, W22 loss gradient = {grad:.0e}", "—",
                          diff <= 1e-9 and grad == 0.0, "max |ΔW| ≤ 1e-9"))
        return rows


    @staticmethod
    def _band_checks(d, s, where):
        """The bands of :func:`dynamics.averaged_curves` against the spread of exact per-dataset curves (absent from
        results of version 0.1.0)."""
        rows = []
        n = s["n_datasets"]
        for model, cur in d.averaged.items():
            if cur.band_test is None:
                continue
            for i, P in enumerate(s["P"]):
                pairs = [(getattr(cur, f"band_{k}")[i], getattr(cur, f"band_{k}_se")[i], getattr(cur, k)[i])
                         for k in ("test", "train")]
                exact = [_exact_spread(sims) for _, _, sims in pairs]
                rows.append(_band_row(f"{model}, {where}, P={P}, θ0=0, {n} + {n} datasets, 13 times",
                                      [(b, se, sd, sd_se) for (b, se, _), (sd, sd_se) in zip(pairs, exact)]))
        for P, cur in (d.band or {}).items():
            k = np.searchsorted(cur.times, cur.exact_times)
            rows.append(_band_row(f"full, {where}, P={P}, θ0 ~ N(0, {s['sigma0']:g}² I), {n} + {n} datasets, "
                                  f"{k.size} times",
                                  [(getattr(cur, f"{x}_sd")[k], getattr(cur, f"{x}_sd_se")[k],
                                    getattr(cur, f"exact_{x}_sd"), getattr(cur, f"exact_{x}_sd_se"))
                                   for x in ("test", "train")]))
        mem = d.memorization
        if mem is not None:
            cur = mem.zero
            k = np.searchsorted(cur.times, cur.exact_times)
            rows.append(_band_row(f"full, D={s['D']}, N={mem.N}, λ={s['lam']:g}, P={mem.P}, θ0=0, {n} + {n} "
                                  f"datasets, {k.size} times",
                                  [(cur.test_sd[k], cur.test_sd_se[k], cur.exact_test_sd, cur.exact_test_sd_se),
                                   (cur.train_sd[k], cur.train_sd_se[k], cur.exact_train_sd, cur.exact_train_sd_se)]))
            j = int(np.argmin(cur.test))
            rise = float(cur.test[-1] - cur.test[j])
            e = int(np.argmin(np.abs(cur.exact_times - cur.times[j])))
            exact_rise = float(cur.exact_test[-1] - cur.exact_test[e])
            rows.append(Check("dynamics", "memorization from θ0 = 0: minimum, then the rise to the plateau",
                              f"full, D={s['D']}, N={mem.N}, λ={s['lam']:g}, P={mem.P}, {n} datasets",
                              f"min {fmt(cur.test[j])} at t={cur.times[j]:.2g}, rise {rise:.4f}",
                              f"rise {exact_rise:.4f} (exact mean, t={cur.exact_times[e]:.2g} → "
                              f"{cur.exact_times[-1]:.2g})", "—",
                              bool(0 < j < cur.times.size - 1 and rise > 0
                                   and falls(mem.init_test)),
                              "interior minimum and a rise (theory); from σ0 = "
                              f"{s['sigma0']:g} the test loss falls monotonically"))
        return rows


def _exact_spread(sims):
    """s.d. over the datasets (axis 0) of exact curves from ``θ₀ = 0`` and its standard error (NaN for one dataset:
    the check fails)."""
    if sims.shape[0] < 2:
        return np.full(sims.shape[1], np.nan), np.full(sims.shape[1], np.nan)
    sd, se, _ = total_spread(sims, np.zeros_like(sims))
    return sd, se


def _band_row(parameters, pairs):
    """One report row: bands against exact spreads, ``pairs`` of ``(band, band_se, exact_sd, exact_sd_se)`` arrays
    (test, then train), within :data:`BAND_K` combined standard errors at every time."""
    z = np.concatenate([np.abs(b - e) / np.maximum(np.hypot(bs, es), 1e-300) for b, bs, e, es in pairs])
    band = np.concatenate([p[0] for p in pairs])
    exact = np.concatenate([p[2] for p in pairs])
    exact_se = np.concatenate([p[3] for p in pairs])
    k = int(np.argmax(z))
    return Check("dynamics", "band (s.d. over datasets and initialisations) vs exact spread, worst time",
                 parameters, fmt(band[k]), fmt(exact[k], exact_se[k]),
                 f"{abs(band[k] / exact[k] - 1):.1%} ({z[k]:.1f} combined s.e.)", bool(np.all(z <= BAND_K)),
                 f"≤ {BAND_K:g} combined s.e. at every t (test and train)")


def _band_curves(pb, P, lam, times, every, init, n, exact_seed):
    """The outputs of a :class:`BandCurves`: :func:`dynamics.averaged_curves` with its band (``n`` datasets
    ``rng=(BAND_SEED, P, i)``, full model) at ``times``, and ``n`` exact flows ``rng=(exact_seed, P, i)`` at every
    ``every``-th time."""
    th = dynamics.averaged_curves(pb, P, lam, times, init=init, model="full", n_datasets=n, rng=BAND_SEED,
                                  progress=False)
    marks = times[::every]
    runs = [dynamics.gradient_flow(pb.sample(P, rng=(exact_seed, P, i)), pb, lam, marks, init=init, model="full")
            for i in range(n)]
    out = {"times": times, "train": th.train, "test": th.test, "exact_times": marks}
    for k in ("train", "test"):
        means, sds = np.array([getattr(r, k) for r in runs]), np.array([getattr(r, f"{k}_sd") for r in runs])
        out[f"{k}_sd"], out[f"{k}_sd_se"] = getattr(th, f"{k}_sd"), getattr(th, f"{k}_sd_se")
        out[f"exact_{k}"] = means.mean(0)
        out[f"exact_{k}_sd"], out[f"exact_{k}_sd_se"], _ = total_spread(means, sds)
    return out


def _network_vs_closed_form(lam):
    """1000 gradient-descent steps on the attention weights ``W`` (``D = 5``, ``N = 12``, ``σ = 0.2``,
    ``P = 40``) against the closed-form gradient descent of the packed parameters: the largest difference
    and the loss gradient of the blocks ``W12``, ``W22``."""
    pb2 = linattn.Problem(5, 12, 0.2)
    tok = sampling.sample_tokens(pb2, 40, 44)
    data = tok.prompts()
    es = spectra.eigensystem(data, pb2, "full")
    lr = 1.0 / (es.lambda_max + lam)
    W0 = 0.3 * np.random.default_rng(45).standard_normal((6, 6))
    run = attention_gradient_descent(tok.embed(), data.yq, lam, 1000, lr, W0=W0, record=[1000])
    cf = dynamics.gradient_descent(es, pb2, lam, [1000], lr, init=linattn.pack(W0[:5, :5], W0[5, :5]), model="full",
                                   return_params=True)
    diff = float(np.max(np.abs(linattn.pack(run.W[0][:5, :5], run.W[0][5, :5]) - cf.params[0])))
    return {"max_dW": diff, "loss_gradient_W12_W22": float(run.loss_gradient_W12_W22)}
