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

import numpy as np

import dynamics
import linattn
import replica
import spectra
from linattn import sampling
from linattn.numerics.stats import mean_se

from ..simulators.attention_gd import attention_gradient_descent
from ..simulators.gradient_descent import descent_from_random_inits
from .base import Check, Experiment
from .stationary import fmt

D, N, LAM, SIGMA0 = 10, 100, 0.01, 0.1
#: the two dataset sizes of Fig. 4
FLOW_P = (10, 100)


class FlowCurves(Experiment):
    """Gradient-flow curves of one dataset per ``P`` (the figure), and the report's dataset averages, signatures and
    attention-weight check (module docstring). Settings: ``n_init`` initialisations per marker, ``n_marks`` marker
    times up to ``t_max``, ``seed``; ``n_datasets`` and the dataset sizes ``P`` of the averaged curves."""

    name = "flow_curves"
    title = "Gradient flow: curves of one dataset vs gradient descent, dataset averages vs theory"
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
            return {f"test_P{P}": np.array([dynamics.gradient_flow(pb.sample(P, rng=(seed, i)), pb, s.lam, tt,
                                                                   model="full").test for i in range(n)])
                    for P, seed in ((10, 42), (100, 43))}
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
        return {"times": times, "train": cur.train, "train_sd": cur.train_sd, "test": cur.test, "test_sd": cur.test_sd,
                "gd_t": steps * lr, "gd": np.stack([run.train_mean, run.train_sd, run.test_mean, run.test_sd], axis=1),
                "asymptote": np.array([asym.train, asym.test]), "lr": lr}

    def assemble(self, s, outputs):
        data, rows = {}, []
        for p, out in zip(self.points(s), outputs):
            if p["kind"] == "figure":
                P = p["P"]
                data.update({f"{k}_P{P}": v for k, v in out.items() if k != "lr"})
                times, test, (asym_train, asym_test) = out["times"], out["test"], out["asymptote"]
                k = int(np.argmin(test))
                rows.append(dict(P=P, lr=float(out["lr"]), test_min_time=float(times[k]), test_min=float(test[k]),
                                 test_final=float(test[-1]), asym_train=float(asym_train),
                                 asym_test=float(asym_test)))
            else:
                prefix = f"{p['model']}_P{p['P']}_" if p["kind"] == "curve" else f"{p['kind']}_"
                data.update({prefix + k: v for k, v in out.items()})
        return data, {"rows": rows}

    def checks(self, r):
        d, s, rows = r.data, r.settings, []
        n = s["n_datasets"]
        where = f"D={s['D']}, N={s['N']}, λ={s['lam']:g}"
        for model in self.MODELS:
            for P in s["P"]:
                for name in ("test", "train"):
                    theory, sims, mpv = (d[f"{model}_P{P}_{k}"] for k in (f"theory_{name}", name, f"mp_{name}"))
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
        tt, m10, m100 = self.SIGNATURE_TIMES, d["signature_test_P10"], d["signature_test_P100"]
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
        diff, grad = d["network_max_dW"], d["network_loss_gradient_W12_W22"]
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
