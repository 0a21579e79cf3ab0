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
    B, D = np.meshgrid(d["land_score_scale"], d["land_delta"])
    for ax, v in zip(axes[:2], ("released", "attention")):
        L = d[f"land_{v}"]
        levels = np.quantile(L, np.linspace(0.0, 1.0, 25))
        cs = ax.contourf(B, D, L, levels=np.unique(levels), cmap="viridis")
        fig.colorbar(cs, ax=ax, label="loss L")
        styles = [("w-", "from (0.01, 0.01)"), ("w--", "from (0, δ_s + 0.01)"), ("w:", "from (0, δ_s − 0.01)")]
        for k, (st, lab) in enumerate(styles):
            b, dl = d[f"flow_{v}_{k}_score_scale"], d[f"flow_{v}_{k}_delta"]
            keep = (b > B.min()) & (b < B.max()) & (dl > D.min()) & (dl < D.max())
            ax.plot(np.where(keep, b, np.nan), np.where(keep, dl, np.nan), st, lw=1.5, label=lab)
            ax.plot(b[-1] if keep[-1] else np.nan, dl[-1] if keep[-1] else np.nan, "wo", ms=4)
        ax.plot(0.0, float(d[f"saddle_{v}"]), "r*", ms=11, label="saddle (0, δ_s)")
        ax.axvline(0.0, color="w", lw=0.5, alpha=0.5)
        ax.set(xlabel="β (layer-2 inverse temperature)", ylabel="δ (previous-token logit)",
               title=f"{v}: f(δ) = e^δ{' − 1' if v == 'released' else ''}, C = 3, N = {settings['N_land']}")
        ax.legend(fontsize=7, loc="lower right")
    ax = axes[2]
    n = len(d["N_scan"])
    N = d["N_scan"]
    for v in ("released", "attention"):
        c = COLORS[v]
        ax.plot(N, d[f"{v}_t_theory"][:n], "-", color=c, label=f"{v}: linear theory (escape)")
        ax.plot(N, d[f"{v}_t_flow"][:n], "o", color=c, label=f"{v}: exact flow (escape)")
        ax.plot(N, d[f"{v}_t_transition"][:n], "s", mfc="none", color=c, label=f"{v}: flow, loss half-way")
    ax.plot([settings["N_mc"]], [float(d["mc_t_flow"])], "*", color="k", ms=10,
            label=f"C = 10 released, Monte Carlo flow ({settings['n_mc']} chains)")
    ax.plot([settings["N_mc"]], [float(d["mc_t_theory"])], "_", color="k", ms=16, mew=2, label="C = 10 theory")
    ax.set(yscale="log", xlabel="context length N", ylabel="time (γ = 1)",
           title="escape from (0, δ_s + 10⁻³) to |δ − δ_s| = 0.05")
    ax.legend(fontsize=7)
    ax = axes[3]
    for v in ("released", "attention"):
        c = COLORS[v]
        ax.plot(d[f"{v}_t_theory"], d[f"{v}_t_flow"], "o", color=c, label=f"{v}: linear theory (λ₊)")
        ax.plot(d[f"{v}_t_naive"], d[f"{v}_t_flow"], "x", color=c, alpha=0.6, label=f"{v}: naive rate |H_βδ|")
    ax.plot(float(d["mc_t_theory"]), float(d["mc_t_flow"]), "*", color="k", ms=10, label="C = 10, Monte Carlo")
    lo = 0.5 * min(float(np.min(d["released_t_flow"])), float(d["mc_t_flow"]))
    hi = 2.0 * float(np.max(d["attention_t_flow"]))
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.6)
    for C, Nc, a, t_fl in zip(d["case_C"][n:], d["case_N"][n:], d["case_alpha"][n:], d["released_t_flow"][n:]):
        ax.annotate(f"C={C}, N={Nc}, α={a:g}", (t_fl, t_fl), fontsize=6, xytext=(4, -8), textcoords="offset points")
    ax.set(xscale="log", yscale="log", xlabel="predicted escape time", ylabel="exact flow escape time",
           title="all cases (C, N, α): flow vs theory")
    ax.legend(fontsize=7)
    panel_letters(axes)
    return fig


@register("markov_minimal", "Minimal model: exact loss landscape, flows and the escape from the 1-point saddle",
          caption="Gibson, Cui & Reddy's two-parameter minimal model, exact (enumeration of all sequences with the "
                  "Dirichlet–multinomial law, α = 0.5, first state one step from a hidden uniform state). (a, b) Loss "
                  "L over (β, δ) at C = 3 for the released factor e^δ − 1 (a) and the layer-1-softmax factor e^δ (b); "
                  "red star: the saddle (0, δ_s) of the 1-point line β = 0; white: gradient flows from (0.01, 0.01) "
                  "(the released run's start), and from (0, δ_s ± 0.01). With e^δ − 1, δ_s > 0.01: the released "
                  "start falls to the β < 0, δ < 0 basin (barely below the 1-point loss), while starts above the "
                  "saddle reach the 2-point solution. (c) Escape time from (0, δ_s + 10⁻³) to |δ − δ_s| = 0.05 against "
                  "N at C = 3: linear theory (lines) vs exact flow (filled markers), the flow's loss half-way time "
                  "(open squares), and C = 10 from one fixed Monte Carlo sample (star: flow, bar: theory). (d) Flow vs "
                  "theory for every (C, N, α) case of the experiment and both variants (dots on the diagonal), and "
                  "the naive rate |H_βδ| that ignores the relaxation of β (crosses, off the diagonal for the "
                  "attention variant).",
          experiment="markov_minimal", order=96)
def draw(result):
    """Figure ``markov_minimal`` from the result of the experiment of the same name."""
    return plot(result.data, result.settings)
