"""Training diagnostics on the exact model (Mainali & Teixeira, seed paper).

``rank_dynamics``: effective rank, marginalised effective rank and subspace distance of ``Γ(t) = P Q`` during
staged learning — closed form vs exact ODE vs online SGD, with the theory's rise windows and entry times
(experiment ``rank_dynamics``, :mod:`validation.experiments._rank_dynamics`, whose run also gives the report section
``diagnostics``).
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register


def _caption(result):
    s, d = result.settings, result.data
    return (f"Diagnostics of Mainali & Teixeira (seed paper) on Γ = PQ (value_kq_modes), noise-free, N = {d.N}, "
            f"D = {d.spectrum.size} input eigenvalues geometric from {d.spectrum.max():g} to {d.spectrum.min():g}, "
            f"start a⁰ = {d.a0:g} balanced and aligned, online SGD η = 0.05, batch {s['batch']}, thin lines, one per "
            f"chain ({len(d.sgd)} chains); time = step × η. (a) Exact test error: closed form (black), SGD; dotted "
            "verticals: half-rise times t½ of the modes. (b) Effective rank exp(H(σ/Σσ)) of Γ(t): closed form "
            "(black), exact ODE from a random start of the same size (dashed: every step later, the modes must first "
            "align), SGD; shaded: the theory's rise windows t½ ± τ of modes 2…D, in which each step must fall. Grey: "
            "marginalised effective rank (top singular value removed). (c) Subspace distance ‖Γ_*(I − Γ⁺Γ)‖/‖Γ_*‖ "
            f"with cutoff {d.rtol:g}·σ_max: it rises as the first mode dominates and falls when a mode enters the "
            f"numerical row space, at a_α = {d.rtol:g}·max a (blue dashed verticals: the closed-form entry times), "
            "before the loss drops; blue ticks at the right edge: the exact plateau levels ‖a^∞ outside‖/‖a^∞‖ (one "
            "per number of modes inside the row space), on which the closed form and SGD sit between entries.")


@register("rank_dynamics", "Effective rank and subspace distance of staged learning: theory vs ODE vs SGD",
          caption=_caption, experiment="rank_dynamics", order=40)
def draw(result):
    return _plot(result.data)


def _plot(d):
    """Panels (a) loss, (b) effective rank, (c) subspace distance; one legend below for every mark."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), layout="constrained")
    t = d.times
    closed = dict(color="k", ls="-")
    random = dict(color="k", ls="--")
    sgd = dict(color="C3", lw=0.7, alpha=0.7)
    ax = axes[0]
    ax.plot(t, d.test_closed, **closed)
    for y in d.test_sgd:
        ax.plot(t, y, **sgd)
    for th in d.t_half:
        ax.axvline(th, color="0.6", ls=":", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylabel(r"test error $E_g$")
    ax.set_title("loss")
    ax = axes[1]
    for lo, hi in zip(d.t_half[1:] - d.tau[1:], d.t_half[1:] + d.tau[1:]):
        ax.axvspan(lo, hi, color="C0", alpha=0.12, lw=0)
    ax.plot(t, d.closed.effective_rank, **closed)
    ax.plot(t, d.random.effective_rank, **random)
    for y in (c.effective_rank for c in d.sgd):
        ax.plot(t, y, **sgd)
    ax.plot(t, d.closed.marginalised_rank, color="0.5", lw=1.2)
    ax.set_ylabel(r"effective rank of $\Gamma$, $\exp H(\sigma/\Sigma\sigma)$")
    ax.set_title(r"effective rank")
    ax = axes[2]
    ax.plot(t, d.closed.subspace_distance, **closed)
    ax.plot(t, d.random.subspace_distance, **random)
    for y in (c.subspace_distance for c in d.sgd):
        ax.plot(t, y, **sgd)
    for te in d.t_enter[np.isfinite(d.t_enter)]:
        ax.axvline(te, color="C0", ls="--", lw=0.8)
    for lv in d.distance_levels:
        ax.axhline(lv, xmin=0.97, xmax=1.0, color="C0", lw=2)
    ax.set_ylabel(r"subspace distance $\|\Gamma_*(I - \Gamma^+\Gamma)\| / \|\Gamma_*\|$")
    ax.set_title("subspace distance (cutoff 0.01 σ_max)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("time t (SGD: step × η)")
    panel_letters(axes)
    handles = [Line2D([], [], label="closed form (aligned start)", **closed),
               Line2D([], [], label="exact ODE, random start", **random),
               Line2D([], [], label="online SGD (one line per chain)", **sgd),
               Line2D([], [], color="0.5", lw=1.2, label="(b) marginalised rank, top mode removed (closed form)"),
               Line2D([], [], color="0.6", ls=":", lw=0.8, label=r"(a) half-rise times $t_{1/2}$ of the modes"),
               Patch(color="C0", alpha=0.12, lw=0, label=r"(b) rise windows $t_{1/2} \pm \tau$ of modes 2…D"),
               Line2D([], [], color="C0", ls="--", lw=0.8,
                      label=r"(c) entry times: $a_\alpha = 0.01\,\max a$ (closed form)"),
               Line2D([], [], color="C0", lw=2, label=r"(c) ticks at right: exact plateau levels")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8)
    return fig
