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
    Ks = np.asarray(d["Ks"], dtype=float)
    lk = np.log2(Ks)
    ax.plot(lk, lk, "k--", lw=1.0, label="log₂ K (maximum)")
    for c, dd in zip(COLORS, d["curve_ds"]):
        ax.errorbar(lk, d[f"curve_d{dd}_bits"], yerr=d[f"curve_d{dd}_bits_se"], fmt="o", color=c, ms=4, capsize=2,
                    label=f"d = {dd}: estimate ± s.e.")
        ax.plot(lk, d[f"curve_d{dd}_approx"], "-", color=c, lw=1.2, label=f"d = {dd}: approximation")
    dmax = int(np.max(d["curve_ds"]))
    ax.errorbar(lk, d["curve_uni_bits"], yerr=d["curve_uni_bits_se"], fmt="s", mfc="white", color=GREY, ms=4,
                capsize=2, label=f"unigram-only embedding, d = {dmax}")
    ax.plot(lk, d["curve_uni_approx"], ":", color=GREY, lw=1.2, label="unigram-only: approximation")
    ax.set(xlabel="log₂ K (pool size)", ylabel="information I(k; m) (bits)",
           title=f"bigram-embedding information, L = {settings['curve_L']} (one random projection per d)")
    ax.set_ylim(0.0, min(lk.max(), ax.get_ylim()[1]) + 0.5)
    ax.legend(fontsize=7, loc="upper left", ncol=1)
    ax = axes[1]
    for k, L in enumerate(np.atleast_1d(d["lengths"])):
        c = COLORS[k % len(COLORS)]
        key = f"L{int(L)}"
        ds = d[f"{key}_d"]
        ax.errorbar(ds, d[f"{key}_meas"], yerr=d[f"{key}_meas_se"], fmt="o", color=c, ms=5, capsize=2.5,
                    label=f"L = {int(L)}: measured ± s.e.")
        ax.plot(ds, d[f"{key}_approx"], "-", color=c, lw=1.2, label=f"L = {int(L)}: approximation")
        ax.plot(ds, d[f"{key}_closed"], "--", color=c, lw=1.0, label=f"L = {int(L)}: closed form (π ≈ 1/C)")
        ax.errorbar(ds, d[f"{key}_uni_meas"], yerr=d[f"{key}_uni_meas_se"], fmt="s", mfc="white", color=c, ms=4,
                    capsize=2, alpha=0.7, label=f"L = {int(L)}: unigram-only, measured")
        ax.plot(ds, d[f"{key}_uni_approx"], ":", color=c, lw=1.0, alpha=0.7, label=f"L = {int(L)}: unigram-only, "
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


@register("markov_bottleneck", "Markov-chain ICL: information of the pooled bigram embedding and the bottleneck "
          "pool size K₂* vs embedding dimension",
          caption="Gibson, Cui & Reddy's measure of the representational bottleneck (arXiv:2604.12151, code "
                  "transformer/pd/bigram_embd.py): the information I(k; m), in bits, that the pooled bigram embedding "
                  "m = (1/n) Σ_t E[x_t C + x_{t+1}] of a sequence (n = L − 1 bigrams) carries about which of the K "
                  "chains of a pool generated it, with m | k Gaussian (mean Eᵀp_k, multinomial covariance), "
                  "linattn.markov.bottleneck. C = 10 states, rows ~ Dirichlet(α = 1), E a random projection of the "
                  "one-hot bigrams (R_ij ~ N(0, 1/d)). (a) I against log₂ K at L = 101 for d = 4, 8, 16 (quick; "
                  "markers: mean ± s.e. over 4 pools of 256 Monte Carlo samples each, one projection per d), the "
                  "deterministic approximation on the same projection (lines; Jensen over the other chains + two "
                  "Gaussian closures, prior moments from 3000 sampled chains), the maximum log₂ K (dashed), and a "
                  "unigram-only embedding (bigram (a, b) ↦ U[b], grey) at d = 16: it saturates near 4.5 bits, about "
                  "3 bits below the bigram projection at K = 1024. (b) log₂ K₂*, K₂* the pool size at which the "
                  "information falls 1 bit short of log₂ K (our criterion; the authors find K₂* by training), "
                  "against d: measured (mean ± s.e. over 4 projections × 2 pools; quick, L = 101; full adds "
                  "L = 401 and 6 × 3 seeds), the approximation (solid; averaged over the same projections; a lower "
                  "bound, low by 0.2–0.65 in quick), the closed form λ₀ = n/(C(Cα + 1) − 1) on min(d, C(C − 1)) "
                  "directions (dashed; drops the fluctuations of π and is lower still) and the unigram-only "
                  "embedding (open squares, dotted). Below d ≈ C − 1 the state counts alone give as large a K₂*: the "
                  "bigram structure matters only once d exceeds the C − 1 directions of the unigram frequencies.",
          experiment="markov_bottleneck", order=97)
def draw(result):
    """Figure ``markov_bottleneck`` from the result of the experiment of the same name."""
    return plot(result.data, result.settings, result.meta)
