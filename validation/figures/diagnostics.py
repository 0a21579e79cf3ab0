"""Training diagnostics on the exact model (Mainali & Teixeira, seed paper).

``rank_dynamics``: effective rank, marginalised effective rank and subspace distance of ``Γ(t) = P Q`` during
staged learning — closed form vs exact ODE vs online SGD, with the theory's rise windows and entry times
(experiment ``rank_dynamics``, :mod:`validation.experiments.rank_dynamics`).
"""
from __future__ import annotations

import numpy as np

from . import register


@register("rank_dynamics", "Effective rank and subspace distance of staged learning: theory vs ODE vs SGD",
          caption="Diagnostics of Mainali & Teixeira (seed paper) on Γ = PQ (value_kq_modes), noise-free, N = 31, input "
                  "eigenvalues geometric from 1 to 0.25 (D = 4, quick), start a⁰ = 10⁻³ balanced and aligned, online SGD "
                  "η = 0.05, batch 128 (thin lines, one per chain; time = step × η). (a) exact test error: closed form "
                  "(black), SGD; dotted verticals: half-rise times t½ of the modes. (b) effective rank exp(H(σ/Σσ)) of Γ(t): "
                  "closed form (black), exact ODE from a random start of the same size (dashed: every step later, the "
                  "modes must first align), SGD; shaded: the theory's rise windows t½ ± τ of modes 2…D, in which each "
                  "step must fall. Grey: marginalised effective rank (top singular value removed). (c) subspace distance "
                  "‖Γ_*(I − Γ⁺Γ)‖/‖Γ_*‖ with cutoff 0.01·σ_max: it rises as the first mode dominates and falls when a mode "
                  "enters the numerical row space, at a_α = 0.01·max a (dashed verticals: closed form), before the loss "
                  "drops; horizontal ticks: the exact plateau levels ‖a^∞ outside‖/‖a^∞‖.",
          experiment="rank_dynamics", order=40)
def draw(result):
    return _plot(result.data)


def _plot(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    t = d["times"]
    ax = axes[0]
    ax.plot(t, d["test_closed"], "k-", label="closed form")
    for i, y in enumerate(d["test_sgd"]):
        ax.plot(t, y, color="C3", lw=0.7, alpha=0.7, label="online SGD" if i == 0 else None)
    for th in d["t_half"]:
        ax.axvline(th, color="0.6", ls=":", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("test error E_g")
    ax.set_title("(a) loss")
    ax = axes[1]
    for lo, hi in zip(d["t_half"][1:] - d["tau"][1:], d["t_half"][1:] + d["tau"][1:]):
        ax.axvspan(lo, hi, color="C0", alpha=0.12, lw=0)
    ax.plot(t, d["erank_closed"], "k-", label="closed form")
    ax.plot(t, d["erank_random"], "k--", label="exact ODE, random start")
    for i, y in enumerate(d["erank_sgd"]):
        ax.plot(t, y, color="C3", lw=0.7, alpha=0.7, label="online SGD" if i == 0 else None)
    ax.plot(t, d["marg_closed"], color="0.5", lw=1.2, label="marginalised (top 1 removed)")
    ax.set_ylabel("effective rank of Γ")
    ax.set_title("(b) effective rank; shaded: t½ ± τ")
    ax = axes[2]
    ax.plot(t, d["dist_closed"], "k-", label="closed form")
    ax.plot(t, d["dist_random"], "k--", label="exact ODE, random start")
    for i, y in enumerate(d["dist_sgd"]):
        ax.plot(t, y, color="C3", lw=0.7, alpha=0.7, label="online SGD" if i == 0 else None)
    for te in d["t_enter"][np.isfinite(d["t_enter"])]:
        ax.axvline(te, color="C0", ls="--", lw=0.8)
    for lv in d["levels"]:
        ax.axhline(lv, xmin=0.97, xmax=1.0, color="C0", lw=2)
    ax.set_ylabel("subspace distance to Γ_*")
    ax.set_title("(c) subspace distance (rtol 0.01)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("time t")
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig
