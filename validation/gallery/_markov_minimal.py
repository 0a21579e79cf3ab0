"""The exact minimal model of the 1-point → 2-point transition (Gibson, Cui & Reddy, arXiv:2604.12151).

Panels (a, b): the exact loss over ``(β, δ)`` at ``C = 3``, ``N = N_land``, ``α = 0.5`` (onestep first state)
for the released variant ``f(δ) = e^δ − 1`` (a) and the attention variant ``f(δ) = e^δ`` (b), with the saddle
``(0, δ_s)`` of the 1-point line and gradient flows from the released run's start ``(0.01, 0.01)`` and from
``(0, δ_s ± 0.01)``. Panel (c): escape time from ``(0, δ_s + ε)`` against ``N`` — linear theory (lines), exact
flow (markers), the flow's loss half-way time (open markers), and the ``C = 10`` Monte Carlo case (star). Panel
(d): flow against theory for every case ``(C, N, α)`` and both variants, with the naive rate for contrast. Drawn
from experiment ``markov_minimal`` (:mod:`validation.experiments.markov_minimal`).
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register

COLORS = {"released": "C0", "attention": "C3"}


def plot(d, settings):
    """Landscapes with trajectories (a, b) and escape times vs ``N`` (c)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(20, 4.6), layout="constrained")
    B, D = np.meshgrid(d.score_scales, d.deltas)
    for ax, v in zip(axes[:2], ("released", "attention")):
        L = d.landscape[v].loss
        levels = np.quantile(L, np.linspace(0.0, 1.0, 25))
        cs = ax.contourf(B, D, L, levels=np.unique(levels), cmap="viridis")
        fig.colorbar(cs, ax=ax, label="loss L")
        styles = [("w-", "from (0.01, 0.01)"), ("w--", "from (0, δ_s + 0.01)"), ("w:", "from (0, δ_s − 0.01)")]
        for flow, (st, lab) in zip(d.landscape[v].flows, styles):
            b, dl = flow.score_scale, flow.delta
            keep = (b > B.min()) & (b < B.max()) & (dl > D.min()) & (dl < D.max())
            ax.plot(np.where(keep, b, np.nan), np.where(keep, dl, np.nan), st, lw=1.5, label=lab)
            ax.plot(b[-1] if keep[-1] else np.nan, dl[-1] if keep[-1] else np.nan, "wo", ms=4)
        ax.plot(0.0, d.landscape[v].saddle_delta, "r*", ms=11, label="saddle (0, δ_s)")
        ax.axvline(0.0, color="w", lw=0.5, alpha=0.5)
        ax.set(xlabel="β (layer-2 inverse temperature)", ylabel="δ (previous-token logit)",
               title=f"{v}: f(δ) = e^δ{' − 1' if v == 'released' else ''}, C = 3, N = {settings['N_land']}")
        ax.legend(fontsize=7, loc="lower right")
    ax = axes[2]
    n = len(d.N_scan)
    N = d.N_scan
    for v in ("released", "attention"):
        c, e = COLORS[v], d.escape[v]
        ax.plot(N, e.t_theory[:n], "-", color=c, label=f"{v}: linear theory (escape)")
        ax.plot(N, e.t_flow[:n], "o", color=c, label=f"{v}: exact flow (escape)")
        ax.plot(N, e.t_transition[:n], "s", mfc="none", color=c, label=f"{v}: flow, loss half-way")
    ax.plot([settings["N_mc"]], [float(d.mc.t_flow)], "*", color="k", ms=10,
            label=f"C = 10 released, Monte Carlo flow ({settings['n_mc']} chains)")
    ax.plot([settings["N_mc"]], [float(d.mc.t_theory)], "_", color="k", ms=16, mew=2, label="C = 10 theory")
    ax.set(yscale="log", xlabel="context length N", ylabel="time (γ = 1)",
           title="escape from (0, δ_s + 10⁻³) to |δ − δ_s| = 0.05")
    ax.legend(fontsize=7)
    ax = axes[3]
    for v in ("released", "attention"):
        c, e = COLORS[v], d.escape[v]
        ax.plot(e.t_theory, e.t_flow, "o", color=c, label=f"{v}: linear theory (λ₊)")
        ax.plot(e.t_naive, e.t_flow, "x", color=c, alpha=0.6, label=f"{v}: naive rate |H_βδ|")
    ax.plot(float(d.mc.t_theory), float(d.mc.t_flow), "*", color="k", ms=10, label="C = 10, Monte Carlo")
    lo = 0.5 * min(float(np.min(d.escape["released"].t_flow)), float(d.mc.t_flow))
    hi = 2.0 * float(np.max(d.escape["attention"].t_flow))
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.6)
    for C, Nc, a, t_fl in zip(d.case_C[n:], d.case_N[n:], d.case_concentration[n:], d.escape["released"].t_flow[n:]):
        ax.annotate(f"C={C}, N={Nc}, α={a:g}", (t_fl, t_fl), fontsize=6, xytext=(4, -8), textcoords="offset points")
    ax.set(xscale="log", yscale="log", xlabel="predicted escape time", ylabel="exact flow escape time",
           title="all cases (C, N, α): flow vs theory")
    ax.legend(fontsize=7)
    panel_letters(axes)
    return fig


def _caption(result):
    s, d, m = result.settings, result.data, result.meta
    ds = d.landscape["released"].saddle_delta
    side = "above" if ds > 0.01 else "below"
    return ("Gibson, Cui & Reddy's two-parameter minimal model, exact (enumeration of all sequences with the "
            f"Dirichlet–multinomial law, α = {m['concentration']:g}, first state one step from a hidden uniform "
            f"state). (a, b) Loss L over (β, δ) at C = {m['C']}, N = {s['N_land']} for the released factor e^δ − 1 "
            "(a) and the layer-1-softmax factor e^δ (b); red star: the saddle (0, δ_s) of the 1-point line β = 0 "
            f"(δ_s = {ds:.3g} and {d.landscape['attention'].saddle_delta:.3g}); white: gradient flows from (0.01, "
            f"0.01) (the released run's start; with e^δ − 1 it starts {side} the saddle's δ_s), and from (0, δ_s ± "
            f"0.01). (c) Escape time from (0, δ_s + {m['eps0']:g}) to |δ − δ_s| = {m['radius']:g} against N at "
            f"C = {m['C']}: linear theory (lines) vs exact flow (filled markers), the flow's loss half-way time (open "
            f"squares), and C = 10 from one fixed Monte Carlo sample of {s['n_mc']} chains (star: flow, bar: "
            f"theory). (d) Flow vs theory for every (C, N, α) case of the experiment ({d.case_C.size} cases) and both "
            "variants (dots on the diagonal), and the naive rate |H_βδ| that ignores the relaxation of β (crosses).")


@register("markov_minimal", "Minimal model: exact loss landscape, flows and the escape from the 1-point saddle",
          caption=_caption, experiment="markov_minimal", order=96)
def draw(result):
    """Figure ``markov_minimal`` from the result of the experiment of the same name."""
    return plot(result.data, result.settings)
