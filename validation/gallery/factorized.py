"""Factorized attention (Mainali & Teixeira, seed paper; Zhang, Singh, Latham & Saxe 2025).

``staged``: staged learning of ``Γ = PQ`` on an anisotropic spectrum — loss and mode amplitudes against
time, closed form vs exact ODE vs online SGD, and the escape time against the eigenvalue.
``saddles``: separate key/query heads (saddle to saddle) vs one merged head (one abrupt drop).
``factorized_gap``: ΔEr and contrast ratio against P for the merged and the product parametrization
trained on the same datasets.

The experiments are in :mod:`validation.experiments.factorized`.
"""
from __future__ import annotations

import numpy as np

from linattn.numerics.stats import mean_se

from . import panel_letters, register


def _log_marks(t, n=40):
    """Indices of about ``n`` records evenly spaced in log-time (markers on log axes)."""
    pos = t[t > 0]
    idx = np.searchsorted(t, np.geomspace(pos[0], t[-1], n))
    return np.unique(np.clip(idx, 0, t.size - 1))


def _mean_sd(x, axis=0):
    return x.mean(axis), x.std(axis, ddof=1) if x.shape[axis] > 1 else np.zeros(x.shape[1 - axis] if x.ndim == 2 else 0)


@register("staged", "Staged learning of value × key-query attention on an anisotropic spectrum",
          caption="Mainali & Teixeira (seed paper), Γ = PQ (value_kq_modes), noise-free, N = 31, input eigenvalues s "
                  "geometric from 1 to 0.2 (D = 6, quick; D = 8 from 1 to 0.1, full). (a) Exact test error vs time: "
                  "closed-form logistic law from a balanced aligned start a⁰ = 10⁻³ (solid; exact for that start), "
                  "exact ODE from a random start of the same size (dashed), online SGD with fresh batches (markers, "
                  "mean ± sd over 4 chains, batch 128, quick; full: 8 chains, batch 256; time = step × η). (b) Mode "
                  "amplitudes a_α(t)/a^∞_α, one colour per eigenvalue s_α, same lines and markers. (c) Half-rise "
                  "time vs s_α: closed form ln[(a^∞ − a⁰)/a⁰]/(2b_α) ∝ D/s² (line), SGD (circles, mean ± sd over "
                  "chains), random start (crosses: later, since the modes must first align).",
          experiment="staged", order=30)
def draw_staged(result):
    return _plot_staged(result.data)


def _plot_staged(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    t = d["times"]
    keep = t > 0
    ax = axes[0]
    ax.plot(t[keep], d["closed_test"][keep], "k-", label="closed form (balanced, aligned start)")
    ax.plot(t[keep], d["ode_random_test"][keep], "k--", label="exact ODE, random start")
    m, sd = _mean_sd(d["sgd_test"])
    sl = _log_marks(t)
    ax.errorbar(t[sl], m[sl], yerr=sd[sl], fmt="o", ms=3, color="C3", label="online SGD, mean ± sd over chains")
    ax.set_xscale("log")
    ax.set_xlabel("time t (SGD: step × η)")
    ax.set_ylabel(r"test error $E_g$")
    ax.legend(fontsize=8)
    ax.set_title("loss: one drop per mode", fontsize=10)
    ax = axes[1]
    for k, a in enumerate(d["a_inf"]):
        col = f"C{k % 10}"
        ax.plot(t[keep], d["closed_modes"][keep, k] / a, "-", color=col, label=f"s = {d['spectrum'][k]:.2f}")
        ax.plot(t[keep], d["ode_random_modes"][keep, k] / a, "--", color=col)
        ms, sds = _mean_sd(d["sgd_modes"][:, :, k])
        ax.errorbar(t[sl], ms[sl] / a, yerr=sds[sl] / a, fmt="o", ms=2.5, color=col)
    ax.set_xscale("log")
    ax.set_xlabel("time t (SGD: step × η)")
    ax.set_ylabel(r"mode amplitude $a_\alpha(t)/a^\infty_\alpha$")
    ax.legend(title="markers: SGD, mean ± sd", title_fontsize=7, fontsize=7, ncol=2, loc="upper left")
    ax.set_title("mode amplitudes (solid: closed form, dashed: random start)", fontsize=10)
    ax = axes[2]
    s = d["spectrum"]
    ax.plot(s, d["t_half"], "k-", label=r"closed form $\propto D/s^2$")
    ms, sds = _mean_sd(d["t_half_sgd"])
    ax.errorbar(s, ms, yerr=sds, fmt="o", color="C3", label="online SGD, mean ± sd over chains")
    ax.plot(s, d["t_half_random"], "x", color="C0", ms=8, label="exact ODE, random start")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"input eigenvalue $s_\alpha$")
    ax.set_ylabel(r"half-rise time $t_{1/2}$")
    ax.legend(fontsize=8)
    ax.set_title("escape time vs eigenvalue", fontsize=10)
    fig.suptitle(r"staged learning of $\Gamma = PQ$ (value $\times$ key-query), D = %d" % s.size)
    fig.tight_layout()
    panel_letters(axes)
    return fig


@register("saddles", "Separate key/query heads learn saddle to saddle; a merged head drops once",
          caption="Zhang, Singh, Latham & Saxe (ICML 2025) defaults: D = 4, N = 31, input eigenvalues (0.4, 0.3, "
                  "0.2, 0.1), noise-free, both models started from the same small random start (scale 0.3). Exact "
                  "test error vs time from the exact population ODE (lines) and online SGD (markers, mean ± sd over "
                  "4 chains, batch 128, η = 0.25, quick; full: 8 chains, batch 256, η = 0.1; time = step × η). (a) 4 "
                  "separate rank-one key/query heads (ATTN_S) pass through the saddles M₀ … M₄, whose losses "
                  "(dotted, dynamics.saddle_losses, Zhang et al. Eq. 19) are learned one principal component at a "
                  "time; (b) one merged head (ATTN_M) drops once to E_g(Γ_*) (Γ_* = preconditioned estimator). The "
                  "last escape depends strongly on the start: over 6 random starts of this scale the exact flow "
                  "reaches M₄ between t ≈ 2·10³ and 10⁵ (this figure: start seed 0, t ≈ 5·10³).",
          experiment="saddles", order=31)
def draw_saddles(result):
    return _plot_saddles(result.data)


def _plot_saddles(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    t = d["times"]
    keep = t > 0
    sl = _log_marks(t, 50)
    for ax, tag, title in ((axes[0], "separate", "separate K, Q (4 rank-one heads)"),
                           (axes[1], "merged", "merged K–Q (one head)")):
        ax.plot(t[keep], d[f"ode_{tag}"][keep], "k-", label="exact population ODE")
        m, sd = _mean_sd(d[f"sgd_{tag}"])
        ax.errorbar(t[sl], m[sl], yerr=sd[sl], fmt="o", ms=3, color="C3", label="online SGD, mean ± sd over chains")
        for k, v in enumerate(d["saddles"]):
            ax.axhline(v, color="0.6", ls=":", lw=1, label=r"saddle losses $M_0 \ldots M_D$" if k == 0 else None)
            ax.text(t[keep][0], v, f" $M_{k}$", va="bottom", fontsize=8, color="0.4")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("time t (SGD: step × η)")
        ax.set_ylabel(r"test error $E_g$")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle("saddle-to-saddle (separate) vs abrupt (merged) learning, D = 4, N = 31")
    fig.tight_layout()
    panel_letters(axes)
    return fig


@register("factorized_gap", "Finite P: ΔEr of the merged vs the product parametrization on the same datasets",
          caption="Each training set of P prompts (isotropic, D = 5, N = 20, noise-free, λ = 0.01, quick; D = 8, N = "
                  "40, full) is fitted twice: the merged Γ (exact long-time limit of gradient flow: ridge with "
                  "λ‖Γ‖²/2) and Γ = PQ (exact ODE from a small random start to convergence, weight decay λ(‖P‖² + "
                  "‖Q‖²)/2, which is λ‖Γ‖_* at the balanced optimum). (a) ΔEr = (E_g − E_t)/E_t vs P, with the "
                  "seed's ΔEr = 5 line (dashed); (b) contrast ratio C = trΓ/(‖Γ‖_F√D); (c) exact test error. Every "
                  "panel: mean ± 1 s.e. over 3 training sets per P (quick; full: 20); dotted: P = D². With 3 "
                  "training sets per P (quick) most differences are within 1–2 s.e.: the product model's mean ΔEr is "
                  "below the merged one at every P (by ≈ 4 s.e. at P = 320), its contrast is lower at P = 10 and 20 "
                  "(≈ 2 s.e.) and equal within 1 s.e. from P = 40 on, and its mean test error is higher at P ≤ 40 "
                  "but within 1.5 s.e.; from P = 80 on the test errors agree within the error bars.",
          experiment="factorized_gap", order=32)
def draw_gap(result):
    return _plot_gap(result.data)


def _plot_gap(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    P = d["P"]
    n = d["gap_merged"].shape[1]
    for ax, key, ylabel, log in ((axes[0], "gap", r"relative gap $\Delta E_r = (E_g - E_t)/E_t$", True),
                                 (axes[1], "contrast", r"contrast ratio $C = {\rm tr}\Gamma/(\|\Gamma\|_F\sqrt{D})$",
                                  False),
                                 (axes[2], "test", r"test error $E_g$", True)):
        for tag, label, col in (("merged", r"merged $\Gamma$", "C0"), ("product", r"$\Gamma = PQ$", "C3")):
            m, se = mean_se(d[f"{key}_{tag}"], 1)
            ax.errorbar(P, m, yerr=se if n > 1 else None, fmt="o-", color=col, label=label, capsize=2)
        ax.axvline(int(d["D"]) ** 2, color="0.5", ls=":", label=r"$P = D^2$")
        ax.set_xscale("log")
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("training prompts P")
        ax.set_ylabel(ylabel)
    axes[0].axhline(5.0, color="k", ls="--", lw=1, label=r"$\Delta E_r = 5$ (the seed's threshold)")
    for ax in axes:
        ax.legend(fontsize=8)
    panel_letters(axes)
    fig.suptitle(r"finite P: merged vs factorized training of the same datasets (D = %d, $\lambda$ = 0.01)"
                 % int(d["D"]))
    fig.tight_layout()
    return fig
