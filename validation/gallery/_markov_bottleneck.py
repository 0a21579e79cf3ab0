"""The bigram-embedding bottleneck of the Markov-chain task (Gibson, Cui & Reddy, arXiv:2604.12151): figure
``markov_bottleneck``, drawn from experiment ``markov_bottleneck`` (:mod:`validation.experiments.markov_bottleneck`).

(a) The information ``I(k; m)`` (bits) that the pooled bigram embedding carries about the chain of a pool of ``K``,
against ``K``, for a few embedding dimensions ``d``: estimates ± s.e. (markers), the deterministic approximation
(lines), the maximum ``log₂ K`` (dashed), and the unigram-only baseline at the largest ``d`` (grey).
(b) ``log₂ K₂*`` (``log₂ K − I = 1`` bit) against ``d``: measured ± s.e., the approximation, the random-projection
closed form, and the unigram baseline (measured and approximation).
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register

COLORS = ("#1f4e9c", "#c0392b", "#2e8b57", "#e08e0b", "#7b3f9e")
GREY = "#5f6a6a"


def plot(d, settings, meta):
    """Panels (a) information vs ``K`` and (b) ``log₂ K₂*`` vs ``d`` from the arrays of experiment
    ``markov_bottleneck``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    ax = axes[0]
    Ks = np.asarray(d.Ks, dtype=float)
    lk = np.log2(Ks)
    ax.plot(lk, lk, "k--", lw=1.0, label="log₂ K (maximum)")
    for c, (dd, cur) in zip(COLORS, d.curves.items()):
        ax.errorbar(lk, cur.bits, yerr=cur.bits_se, fmt="o", color=c, ms=4, capsize=2,
                    label=f"d = {dd}: estimate ± s.e.")
        ax.plot(lk, cur.approx, "-", color=c, lw=1.2, label=f"d = {dd}: approximation")
    dmax = max(d.curves)
    ax.errorbar(lk, d.unigram_curve.bits, yerr=d.unigram_curve.bits_se, fmt="s", mfc="white", color=GREY, ms=4,
                capsize=2, label=f"unigram-only embedding, d = {dmax}")
    ax.plot(lk, d.unigram_curve.approx, ":", color=GREY, lw=1.2, label="unigram-only: approximation")
    ax.set(xlabel="log₂ K (pool size)", ylabel="information I(k; m) (bits)",
           title=f"bigram-embedding information, L = {settings['curve_L']} (one random projection per d)")
    ax.set_ylim(0.0, min(lk.max(), ax.get_ylim()[1]) + 0.5)
    ax.legend(fontsize=7, loc="upper left", ncol=1)
    ax = axes[1]
    for k, (L, scan) in enumerate(d.k2.items()):
        c = COLORS[k % len(COLORS)]
        ds = scan.d
        ax.errorbar(ds, scan.bigram.measured, yerr=scan.bigram.measured_se, fmt="o", color=c, ms=5, capsize=2.5,
                    label=f"L = {L}: measured ± s.e.")
        ax.plot(ds, scan.bigram.approx, "-", color=c, lw=1.2, label=f"L = {L}: approximation")
        ax.plot(ds, scan.closed, "--", color=c, lw=1.0, label=f"L = {L}: closed form (π ≈ 1/C)")
        ax.errorbar(ds, scan.unigram.measured, yerr=scan.unigram.measured_se, fmt="s", mfc="white", color=c, ms=4,
                    capsize=2, alpha=0.7, label=f"L = {L}: unigram-only, measured")
        ax.plot(ds, scan.unigram.approx, ":", color=c, lw=1.0, alpha=0.7, label=f"L = {L}: unigram-only, "
                "approximation")
    C = int(meta.get("C", 10))
    ax.axvline(C - 1, color=GREY, lw=0.8, ls="-.")
    ax.text(C - 1 + 0.15, 0.02, f"d = C − 1 = {C - 1}\n(unigram rank)", transform=ax.get_xaxis_transform(),
            fontsize=7, color=GREY, va="bottom")
    ax.set(xlabel="embedding dimension d", ylabel="log₂ K₂*  (log₂ K − I = 1 bit)",
           title=f"bottleneck pool size; {settings['n_proj']} projections × {settings['n_pools']} pools per d")
    ax.legend(fontsize=7, loc="upper left")
    panel_letters(axes, x=-0.1, y=1.03)
    return fig


def _caption(result):
    s, d, m = result.settings, result.data, result.meta
    dmax, K = max(d.curves), int(d.Ks[-1])
    uni, big = d.unigram_curve.bits[-1], d.curves[dmax].bits[-1]
    low = "; ".join(f"L = {L}: low by {np.min(sc.bigram.diff):.2f}–{np.max(sc.bigram.diff):.2f}"
                    for L, sc in d.k2.items())
    lengths = ", ".join(str(L) for L in d.k2)
    return ("Gibson, Cui & Reddy's measure of the representational bottleneck (arXiv:2604.12151, code "
            "transformer/pd/bigram_embd.py): the information I(k; m), in bits, that the pooled bigram embedding "
            "m = (1/n) Σ_t E[x_t C + x_{t+1}] of a sequence (n = L − 1 bigrams) carries about which of the K chains "
            "of a pool generated it, with m | k Gaussian (mean Eᵀp_k, multinomial covariance), "
            f"linattn.markov.bottleneck. C = {m['C']} states, rows ~ Dirichlet(α = {m['concentration']:g}), E a "
            "random projection of the one-hot bigrams (R_ij ~ N(0, 1/d)). (a) I against log₂ K at "
            f"L = {s['curve_L']} for d ∈ {{{', '.join(str(x) for x in d.curves)}}} (markers: mean ± s.e. over "
            f"{s['curve_pools']} pools of {s['curve_samples']} Monte Carlo samples each, one projection per d), the "
            "deterministic approximation on the same projection (lines; Jensen over the other chains + two Gaussian "
            f"closures, prior moments from {s['n_chains']} sampled chains), the maximum log₂ K (dashed), and a "
            f"unigram-only embedding (bigram (a, b) ↦ U[b], grey) at d = {dmax}: at K = {K} it carries {uni:.2f} "
            f"bits, {big - uni:.2f} bits below the bigram projection. (b) log₂ K₂*, K₂* the pool size at which the "
            "information falls 1 bit short of log₂ K (our criterion; the authors find K₂* by training), against d: "
            f"measured (mean ± s.e. over {s['n_proj']} projections × {s['n_pools']} pools; L ∈ {{{lengths}}}), the "
            f"approximation (solid; averaged over the same projections; a lower bound, {low}), the closed form "
            "λ₀ = n/(C(Cα + 1) − 1) on min(d, C(C − 1)) directions (dashed; drops the fluctuations of π) and the "
            "unigram-only embedding (open squares, dotted). Below d ≈ C − 1 the state counts alone give as large a "
            "K₂*: the bigram structure matters only once d exceeds the C − 1 directions of the unigram frequencies.")


@register("markov_bottleneck", "Markov-chain ICL: information of the pooled bigram embedding and the bottleneck "
          "pool size K₂* vs embedding dimension", caption=_caption, experiment="markov_bottleneck", order=97)
def draw(result):
    """Figure ``markov_bottleneck`` from the result of the experiment of the same name."""
    return plot(result.data, result.settings, result.meta)
