"""Gradient-flow learning curves: the exact closed-form dynamics against gradient descent and against the
dataset-averaged theory.

One experiment, ``flow_curves``: it draws figure ``fig4`` (seed paper, Fig. 4) and gives the report section
``dynamics``. Its points:

* the figure: the train and test loss of one dataset under gradient flow (``D = 10``, ``N = 100``, ``λ = 0.01``,
  full model, ``θ₀ ~ N(0, σ₀² I)``, ``σ₀ = 0.1``; mean ± 1 s.d. over initialisations in closed form), explicit
  gradient-descent markers from ``n_init`` sampled initialisations, and the zero-temperature replica asymptote.
  One point per ``P ∈ {10, 100}`` (data ``rng=(seed, P)``, initialisations ``rng=(seed, P, 1)``).
* the report: dataset-averaged gradient-flow curves against :func:`dynamics.averaged_curves` (one point per
  (model, ``P``), ``n_datasets`` datasets ``rng=(41, P, i)``); the memorization and generalization signatures
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
    """

    P: np.ndarray
    times: np.ndarray
    test: np.ndarray
    train: np.ndarray
    theory_test: np.ndarray
    theory_train: np.ndarray
    mp_test: np.ndarray
    mp_train: np.ndarray


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
    """

    figure: dict[int, FigureCurves]
    averaged: dict[str, AveragedCurves]
    signature_times: np.ndarray
    signature_test: dict[int, np.ndarray]
    network_max_dW: float
    network_loss_gradient_W12_W22: float

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
    """Gradient-flow curves of one dataset per ``P`` (the figure), and the report's dataset averages, signatures and
    attention-weight check (module docstring). Settings: ``n_init`` initialisations per marker, ``n_marks`` marker
    times up to ``t_max``, ``seed``; ``n_datasets`` and the dataset sizes ``P`` of the averaged curves."""

    name = "flow_curves"
    title = "Gradient flow: curves of one dataset vs gradient descent, dataset averages vs theory"
    data_class = FlowCurvesData
    positive = ("t_max",)
    MODELS = ("reduced", "full")
    presets = {mode: dict(D=D, N=N, lam=LAM, sigma0=SIGMA0, **rest) for mode, rest in (
        ("smoke", dict(n_init=2, n_marks=3, t_max=20.0, seed=0, n_datasets=3, P=[10, 100])),
        ("quick", dict(n_init=8, n_marks=14, t_max=2e3, seed=0, n_datasets=30, P=[10, 100, 1000])),
        ("full", dict(n_init=40, n_marks=14, t_max=2e3, seed=0, n_datasets=60, P=[10, 100, 1000])))}
    report_order = 20

    #: times of the averaged curves and of the memorization signature
    TIMES = np.geomspace(0.1, 1e5, 13)
    SIGNATURE_TIMES = np.concatenate([[0.0], np.geomspace(1e-2, 1e4, 25)])

    def points(self, s):
        return ([dict(kind="figure", P=P) for P in FLOW_P]
                + [dict(kind="curve", model=m, P=P) for m in self.MODELS for P in s.P]
                + [dict(kind="signature"), dict(kind="network")])

    def compute(self, s, point):
        if point["kind"] == "figure":
            return self._figure_curves(s, point["P"])
        pb, n = linattn.Problem(s.D, s.N), s.n_datasets
        if point["kind"] == "curve":
            model, P, t = point["model"], point["P"], self.TIMES
            runs = [dynamics.gradient_flow(pb.sample(P, rng=(41, P, i)), pb, s.lam, t, model=model) for i in range(n)]
            th = dynamics.averaged_curves(pb, P, s.lam, t, model=model)
            mp = dynamics.averaged_curves(pb, P, s.lam, t, model=model, law="mp")
            return {"test": np.array([r.test for r in runs]), "train": np.array([r.train for r in runs]),
                    "theory_test": th.test, "theory_train": th.train, "mp_test": mp.test, "mp_train": mp.train}
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
        run = descent_from_random_inits(data, pb, s.lam, steps, lr, s.sigma0, s.n_init, rng=(seed, P, 1), model="full")
        asym = replica.stationary(pb, P, np.inf, s.lam, "full")
        # gd columns: _GD_COLUMNS; asymptote: train, test
        return {"times": times, "train": cur.train, "train_sd": cur.train_sd, "test": cur.test, "test_sd": cur.test_sd,
                "gd_t": steps * lr, "gd": np.stack([run.train_mean, run.train_sd, run.test_mean, run.test_sd], axis=1),
                "asymptote": np.array([asym.train, asym.test]), "lr": lr}

    def assemble(self, s, outputs):
        figure, curves, rows = {}, {}, []
        signature = network = None
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
            else:
                network = out
        averaged = {model: AveragedCurves(P=np.array(s.P), times=self.TIMES, **{
            k: np.stack([o[k] for o in outs]) for k in ("test", "train", "theory_test", "theory_train", "mp_test",
                                                        "mp_train")}) for model, outs in curves.items()}
        data = FlowCurvesData(figure=figure, averaged=averaged, signature_times=self.SIGNATURE_TIMES,
                              signature_test=signature, network_max_dW=network["max_dW"],
                              network_loss_gradient_W12_W22=network["loss_gradient_W12_W22"])
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
