"""The exact two-parameter minimal model of the 1-point → 2-point transition: experiment ``markov_minimal``
(figure ``markov_minimal``).

Gibson, Cui & Reddy (arXiv:2604.12151), released code ``minimal_models/ICL_mini_2paras.py``; the model,
its exact enumeration and the theory: ``dynamics/_minimal_loss.py``, ``docs/markov_minimal.md``.

Points: ``landscape`` — the loss over a ``(β, δ)`` grid at ``(C, N, α) = (3, N_land, 0.5)`` for both variants,
with gradient flows from the released run's start ``(0.01, 0.01)`` and from ``(0, δ_s ± 10⁻²)``;
``scan`` — per case ``(C, N, α)`` (first the ``N`` scan at ``C = 3``, ``α = 0.5``, then ``cases``) and variant,
the saddle ``(0, δ_s)`` of the 1-point line, its escape rate ``λ₊`` and the escape time from ``(0, δ_s + ε)`` to
``|δ − δ_s| = r``: linear theory vs the exact flow, and the flow's loss transition time; ``mc`` — a case too
large to enumerate (``C = 10``), theory and flow on one fixed Monte Carlo sample (``rng = 1``) and the theory
again on an independent sample (``rng = 2``), plus the exact vs Monte Carlo comparison of the loss and gradient
at ``C = 3``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dynamics import markov_minimal_flow, markov_minimal_loss, markov_minimal_theory

from ._base import Check, Experiment
from ._data import ExperimentData

#: states of the enumerated cases, the Dirichlet concentration of the rows, the start's distance from the saddle and
#: the radius that ends an escape
C_EXACT, CONCENTRATION, EPS0, RADIUS = 3, 0.5, 1e-3, 0.05
VARIANTS = ("released", "attention")
#: what a report row compares, exact vs Monte Carlo, at (β, δ) = (1, 1): the seen-state loss, the probability of an
#: unseen state, the gradient
LOSS_CHECK = ("loss_seen", "p_unseen", "grad_score_scale", "grad_delta")


@dataclass(frozen=True, eq=False, repr=False)
class MinimalFlow(ExperimentData):
    """A gradient flow of the minimal model on :attr:`MarkovMinimalData.flow_times`.

    Attributes
    ----------
    score_scale, delta : ndarray (n_times,)
        The weights ``β(t)``, ``δ(t)``.
    loss : ndarray (n_times,)
        The exact loss along the flow.
    """

    score_scale: np.ndarray
    delta: np.ndarray
    loss: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class Landscape(ExperimentData):
    """The exact loss of one variant over the ``(β, δ)`` grid at ``(C, N, α) = (3, N_land, 0.5)``.

    Attributes
    ----------
    loss : ndarray (n_delta, n_score_scale)
        The loss, rows along :attr:`MarkovMinimalData.deltas`.
    saddle_delta : float
        ``δ_s`` of the saddle ``(0, δ_s)`` of the 1-point line.
    flows : tuple of MinimalFlow
        From the released run's start ``(0.01, 0.01)``, from ``(0, δ_s + 0.01)`` and from ``(0, δ_s − 0.01)``.
    """

    loss: np.ndarray
    saddle_delta: float
    flows: tuple[MinimalFlow, ...]


@dataclass(frozen=True, eq=False, repr=False)
class EscapeTimes(ExperimentData):
    """The escape from ``(0, δ_s + ε)`` to ``|δ − δ_s| = r`` per case (one value for the Monte Carlo case).

    Attributes
    ----------
    delta_saddle, delta_saddle_se : ndarray (n_cases,)
        The saddle ``δ_s`` and its Monte-Carlo s.e. (0 when exact).
    rate, rate_se : ndarray (n_cases,)
        Its escape rate ``λ₊`` and s.e.
    t_theory, t_flow, t_naive : ndarray (n_cases,)
        Escape time of the linear theory, of the exact flow, and of the naive rate ``|H_βδ|`` (the baseline).
    t_transition : ndarray (n_cases,)
        The flow's loss half-way time.
    loss_1point, loss_final : ndarray (n_cases,)
        The 1-point loss and the flow's final loss.
    """

    delta_saddle: np.ndarray
    rate: np.ndarray
    rate_se: np.ndarray
    t_theory: np.ndarray
    t_flow: np.ndarray
    t_naive: np.ndarray
    t_transition: np.ndarray
    loss_1point: np.ndarray
    loss_final: np.ndarray
    delta_saddle_se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class SaddleEstimate(ExperimentData):
    """The saddle of the Monte-Carlo case from a second, independent sample.

    Attributes
    ----------
    delta_saddle, delta_saddle_se, rate, rate_se : float
    """

    delta_saddle: float
    delta_saddle_se: float
    rate: float
    rate_se: float


@dataclass(frozen=True, eq=False, repr=False)
class LossCheck(ExperimentData):
    """The loss and gradient at ``(β, δ) = (1, 1)`` (``C = 3``, ``N = 6``): exact, Monte Carlo or its s.e.

    Attributes
    ----------
    loss_seen : float
        The loss on sequences whose last state was seen before.
    p_unseen : float
        The probability that it was not.
    grad_score_scale, grad_delta : float
        ``∂L/∂β`` and ``∂L/∂δ``.
    """

    loss_seen: float
    p_unseen: float
    grad_score_scale: float
    grad_delta: float

    def values(self) -> np.ndarray:
        """The four numbers in the order of the fields.

        Returns
        -------
        ndarray (4,)
        """
        return np.array([getattr(self, k) for k in LOSS_CHECK])


@dataclass(frozen=True, eq=False, repr=False)
class MarkovMinimalData(ExperimentData):
    """Data of ``markov_minimal`` (figure and report rows of section ``markov``).

    Attributes
    ----------
    score_scales, deltas : ndarray (n_score_scale,), (n_delta,)
        The ``(β, δ)`` grid of the landscapes.
    flow_times : ndarray (n_times,)
        Times of the landscapes' flows.
    landscape : dict of str to Landscape
        By variant (:data:`VARIANTS`).
    N_scan : ndarray (n_scan,)
        The context lengths of the ``N`` scan at ``C = 3``, ``α = 0.5`` (the first cases).
    case_C, case_N, case_concentration : ndarray (n_cases,)
        Every case ``(C, N, α)``: the ``N`` scan, then the setting ``cases``.
    escape : dict of str to EscapeTimes
        By variant, over the cases.
    mc : EscapeTimes
        The ``C = 10`` case on one fixed Monte Carlo sample (released variant; 0-d arrays).
    mc_second : SaddleEstimate
        Its saddle from an independent sample.
    check_exact, check_mc, check_se : LossCheck
        The loss and gradient at ``(1, 1)``: exact, Monte Carlo, and the Monte Carlo's s.e.
    """

    score_scales: np.ndarray
    deltas: np.ndarray
    flow_times: np.ndarray
    landscape: dict[str, Landscape]
    N_scan: np.ndarray
    case_C: np.ndarray
    case_N: np.ndarray
    case_concentration: np.ndarray
    escape: dict[str, EscapeTimes]
    mc: EscapeTimes
    mc_second: SaddleEstimate
    check_exact: LossCheck
    check_mc: LossCheck
    check_se: LossCheck

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``land_score_scale``, ``land_delta``, ``flow_times``, ``land_{v}``, ``saddle_{v}``,
        ``flow_{v}_{k}_{score_scale,delta,loss}``, ``{v}_{escape}``, ``mc_{escape}``, ``mc2_*``, ``check_{exact,mc,se}``
        (four values each), ``case_alpha``."""
        out = dict(arrays)
        out["score_scales"], out["deltas"] = out.pop("land_score_scale"), out.pop("land_delta")
        out["case_concentration"] = out.pop("case_alpha")
        for v in VARIANTS:
            out[f"landscape[{v}].loss"], out[f"landscape[{v}].saddle_delta"] = out.pop(f"land_{v}"), out.pop(
                f"saddle_{v}")
            for k in range(3):
                for f in MinimalFlow.__dataclass_fields__:
                    out[f"landscape[{v}].flows[{k}].{f}"] = out.pop(f"flow_{v}_{k}_{f}")
            for f in EscapeTimes.__dataclass_fields__:
                out[f"escape[{v}].{f}"] = out.pop(f"{v}_{f}")
        for f in EscapeTimes.__dataclass_fields__:
            out[f"mc.{f}"] = out.pop(f"mc_{f}")
        for f in SaddleEstimate.__dataclass_fields__:
            out[f"mc_second.{f}"] = out.pop(f"mc2_{f}")
        for which in ("exact", "mc", "se"):
            out.update({f"check_{which}.{k}": v for k, v in zip(LOSS_CHECK, out.pop(f"check_{which}"))})
        return out


def _flow_key(variant, k, field):
    """The output of the landscape point for flow ``k`` of ``variant`` (a point of a store keeps this name)."""
    return f"flow_{variant}_{k}_{field}"


class MarkovMinimal(Experiment):
    """Landscape, flows and the escape time of the minimal model (module docstring)."""

    name = "markov_minimal"
    title = "Minimal model of the 1-point → 2-point transition: exact loss, flows, escape from the 1-point saddle"
    data_class = MarkovMinimalData
    #: quick ≈ 15 s on one core (the C = 10 Monte Carlo flow and the N = 7 flows cost most)
    presets = {"smoke": dict(N_land=4, grid=9, N_scan=[4, 5], cases=[[2, 6, 0.5]], N_mc=12, n_mc=600,
                             n_check=4000),
               "quick": dict(N_land=6, grid=31, N_scan=[4, 5, 6, 7], cases=[[3, 5, 0.25], [3, 5, 1.0], [2, 8, 0.5],
                                                                           [4, 5, 0.5]],
                             N_mc=30, n_mc=2000, n_check=20000),
               "full": dict(N_land=8, grid=61, N_scan=[4, 5, 6, 7, 8, 9, 10],
                            cases=[[3, 5, 0.25], [3, 5, 1.0], [3, 5, 2.0], [2, 8, 0.5], [2, 12, 0.5], [4, 5, 0.5],
                                   [5, 4, 0.5]], N_mc=60, n_mc=20000, n_check=200000)}
    report_order = 95

    def points(self, s):
        cases = [[C_EXACT, int(n), CONCENTRATION] for n in s.N_scan] + [list(c) for c in s.cases]
        return ([{"kind": "landscape"}] + [{"kind": "scan", "C": int(c[0]), "N": int(c[1]),
                                            "concentration": float(c[2])}
                                           for c in cases] + [{"kind": "mc"}])

    def compute(self, s, point):
        if point["kind"] == "landscape":
            return self._landscape(s)
        if point["kind"] == "scan":
            return self._scan(point["C"], point["N"], point["concentration"])
        return self._mc(s)

    @staticmethod
    def _landscape(s):
        N = int(s.N_land)
        betas = np.linspace(-3.0, 4.0, int(s.grid))
        deltas = np.linspace(-3.0, 6.0, int(s.grid))
        times = np.concatenate([[0.0], np.geomspace(0.1, 3e4, 150)])
        out = {"land_score_scale": betas, "land_delta": deltas, "flow_times": times}
        for v in VARIANTS:
            out[f"land_{v}"] = np.array([[markov_minimal_loss(b, d, C_EXACT, N, CONCENTRATION, variant=v).loss
                                          for b in betas] for d in deltas])
            th = markov_minimal_theory(C_EXACT, N, CONCENTRATION, variant=v)
            out[f"saddle_{v}"] = np.array(th.delta_saddle)
            starts = [(0.01, 0.01), (0.0, th.delta_saddle + 0.01), (0.0, th.delta_saddle - 0.01)]
            for k, (b0, d0) in enumerate(starts):
                fl = markov_minimal_flow(b0, d0, C_EXACT, N, CONCENTRATION, times, variant=v)
                out.update({_flow_key(v, k, f): getattr(fl, f) for f in MinimalFlow.__dataclass_fields__})
        return out

    @staticmethod
    def _escape(C, N, v, concentration=CONCENTRATION, method="exact", n_mc=2, rng=None):
        th = markov_minimal_theory(C, N, concentration, variant=v, method=method, n_mc=n_mc, rng=rng)
        d0 = th.delta_saddle + EPS0
        t_th = th.escape_time(0.0, d0, RADIUS)
        times = np.linspace(0.0, 4.0 * t_th, 200)
        fl = markov_minimal_flow(0.0, d0, C, N, concentration, times, variant=v, method=method, n_mc=n_mc, rng=rng,
                                 delta_saddle=th.delta_saddle, radius=RADIUS)
        naive = math.log(RADIUS / (EPS0 * th.unstable[1] ** 2)) / (th.gamma * abs(th.hessian[0, 1]))
        return {"delta_saddle": th.delta_saddle, "rate": th.rate, "rate_se": th.rate_se, "t_theory": t_th,
                "t_flow": fl.escape_time, "t_naive": naive, "t_transition": fl.transition_time,
                "loss_1point": th.loss_1point, "loss_final": fl.loss[-1], "delta_saddle_se": th.delta_saddle_se}

    def _scan(self, C, N, concentration):
        out = {}
        for v in VARIANTS:
            for key, val in self._escape(C, N, v, concentration).items():
                out[f"{v}_{key}"] = np.array(val)
        return out

    def _mc(self, s):
        C, N, n = 10, int(s.N_mc), int(s.n_mc)
        out = {f"mc_{k}": np.array(val) for k, val in self._escape(C, N, "released", CONCENTRATION, "mc", n, 1).items()}
        other = markov_minimal_theory(C, N, CONCENTRATION, variant="released", method="mc", n_mc=n, rng=2)
        out["mc2_delta_saddle"], out["mc2_delta_saddle_se"] = np.array(other.delta_saddle), np.array(
            other.delta_saddle_se)
        out["mc2_rate"], out["mc2_rate_se"] = np.array(other.rate), np.array(other.rate_se)
        ex = markov_minimal_loss(1.0, 1.0, C_EXACT, 6, CONCENTRATION, method="exact")
        mc = markov_minimal_loss(1.0, 1.0, C_EXACT, 6, CONCENTRATION, method="mc", n_mc=int(s.n_check), rng=3)
        out["check_exact"] = np.array([ex.loss_seen, ex.p_unseen, ex.grad[0], ex.grad[1]])
        out["check_mc"] = np.array([mc.loss_seen, mc.p_unseen, mc.grad[0], mc.grad[1]])
        out["check_se"] = np.array([mc.loss_seen_se, mc.p_unseen_se, mc.grad_se[0], mc.grad_se[1]])
        return out

    def assemble(self, s, outputs):
        pts = self.points(s)
        land, mc = outputs[0], outputs[-1]
        cases = [p for p in pts if p["kind"] == "scan"]
        scans = [o for p, o in zip(pts, outputs) if p["kind"] == "scan"]
        landscape = {v: Landscape(loss=land[f"land_{v}"], saddle_delta=land[f"saddle_{v}"], flows=tuple(
            MinimalFlow(**{f: land[_flow_key(v, k, f)] for f in MinimalFlow.__dataclass_fields__}) for k in range(3)))
            for v in VARIANTS}
        escape = {v: EscapeTimes(**{f: np.array([o[f"{v}_{f}"] for o in scans])
                                    for f in EscapeTimes.__dataclass_fields__}) for v in VARIANTS}
        checks = {f"check_{which}": LossCheck(*mc[f"check_{which}"]) for which in ("exact", "mc", "se")}
        data = MarkovMinimalData(
            score_scales=land["land_score_scale"], deltas=land["land_delta"], flow_times=land["flow_times"],
            landscape=landscape, N_scan=np.array(s.N_scan), case_C=np.array([p["C"] for p in cases]),
            case_N=np.array([p["N"] for p in cases]), case_concentration=np.array([p["concentration"] for p in cases]),
            escape=escape, mc=EscapeTimes(**{f: mc[f"mc_{f}"] for f in EscapeTimes.__dataclass_fields__}),
            mc_second=SaddleEstimate(**{f: mc[f"mc2_{f}"] for f in SaddleEstimate.__dataclass_fields__}), **checks)
        return data, {"C": C_EXACT, "concentration": CONCENTRATION, "eps0": EPS0, "radius": RADIUS}

    def checks(self, result):
        d = result.data
        out = []
        names = ["L_seen", "p_unseen", "∂L/∂β", "∂L/∂δ"]
        exact, mc, se = d.check_exact.values(), d.check_mc.values(), d.check_se.values()
        z = np.abs(exact - mc) / se
        out.append(Check("markov", "minimal model exact vs Monte Carlo (" + ", ".join(names) + ")",
                         f"C={C_EXACT}, N=6, α={CONCENTRATION:g}, (β, δ) = (1, 1), onestep, released; "
                         f"{result.settings['n_check']} fresh chains",
                         ", ".join(f"{x:.5g}" for x in exact),
                         ", ".join(f"{x:.5g}±{e:.2g}" for x, e in zip(mc, se)),
                         f"max {z.max():.2f} s.e.", bool(np.all(z < 4)), "each within 4 s.e."))
        for v in VARIANTS:
            th, fl, nv = d.escape[v].t_theory, d.escape[v].t_flow, d.escape[v].t_naive
            rel = np.abs(th / fl - 1)
            rej = np.abs(nv / fl - 1)
            tol = 0.01 if v == "released" else 0.05
            out.append(Check("markov", f"theory of the transition vs flow: escape time ({v})",
                             "(C, N, α) = " + ", ".join(f"({c}, {n}, {a:g})" for c, n, a in
                                                        zip(d.case_C, d.case_N, d.case_concentration))
                             + f"; from (0, δ_s + {EPS0:g}) to |δ − δ_s| = {RADIUS:g}, exact",
                             ", ".join(f"{x:.4g}" for x in th), ", ".join(f"{x:.4g}" for x in fl),
                             f"max {rel.max():.2%} (naive rate |H_βδ|: {rej.min():.0%}+)",
                             bool(rel.max() < tol and rej.min() > tol),
                             f"< {tol:.0%}: cubic terms, a relative O(r) correction to the last e-fold; "
                             "naive rate rejected"))
        th, fl = float(d.mc.t_theory), float(d.mc.t_flow)
        out.append(Check("markov", "theory of the transition vs flow: escape time, Monte Carlo loss (released)",
                         f"C=10, N={result.settings['N_mc']}, α={CONCENTRATION:g}, one fixed sample of "
                         f"{result.settings['n_mc']} chains; δ_s = {float(d.mc.delta_saddle):.3g} ± "
                         f"{float(d.mc.delta_saddle_se):.2g} (2nd sample {d.mc_second.delta_saddle:.3g} ± "
                         f"{d.mc_second.delta_saddle_se:.2g})",
                         f"{th:.4g}", f"{fl:.4g}", f"{abs(th / fl - 1):.2%}", bool(abs(th / fl - 1) < 0.01),
                         "< 1 % (as the exact released case); the saddle's position from two samples within 4 s.e. is "
                         "reported, not judged"))
        return out
