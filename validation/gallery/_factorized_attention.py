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

from linattn._numerics.stats import mean_se

from . import panel_letters, register


def _log_marks(t, n=40):
    """Indices of about ``n`` records evenly spaced in log-time (markers on log axes)."""
    pos = t[t > 0]
    idx = np.searchsorted(t, np.geomspace(pos[0], t[-1], n))
    return np.unique(np.clip(idx, 0, t.size - 1))


def _mean_sd(x, axis=0):
    return x.mean(axis), x.std(axis, ddof=1) if x.shape[axis] > 1 else np.zeros(x.shape[1 - axis] if x.ndim == 2 else 0)


def _staged_caption(result):
    s, d = result.settings, result.data
    spec = d.spectrum
    late = np.mean(d.t_half_random > d.t_half)
    return ("Mainali & Teixeira (seed paper), Γ = PQ (value_kq_modes), noise-free, N = "
            f"{s['N']}, D = {spec.size} input eigenvalues s geometric from {spec.max():g} to {spec.min():g}. (a) Exact "
            f"test error vs time: closed-form logistic law from a balanced aligned start a⁰ = {result.meta['a0']:g} "
            "(solid; exact for that start), exact ODE from a random start of the same size (dashed), online SGD with "
            f"fresh batches (markers, mean ± sd over {s['n_chains']} chains, batch {s['batch']}; time = step × η). "
            "(b) Mode amplitudes a_α(t)/a^∞_α, one colour per eigenvalue s_α, same lines and markers. (c) Half-rise "
            "time vs s_α: closed form ln[(a^∞ − a⁰)/a⁰]/(2b_α) ∝ D/s² (line), SGD (circles, mean ± sd over chains), "
            f"random start (crosses; later than the closed form for {late:.0%} of the modes: the modes must first "
            "align).")


@register("staged", "Staged learning of value × key-query attention on an anisotropic spectrum",
          caption=_staged_caption, experiment="staged", order=30)
def draw_staged(result):
    return _plot_staged(result.data)


def _plot_staged(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    t = d.times
    keep = t > 0
    ax = axes[0]
    ax.plot(t[keep], d.closed_test[keep], "k-", label="closed form (balanced, aligned start)")
    ax.plot(t[keep], d.ode_random_test[keep], "k--", label="exact ODE, random start")
    m, sd = _mean_sd(d.sgd_test)
    sl = _log_marks(t)
    ax.errorbar(t[sl], m[sl], yerr=sd[sl], fmt="o", ms=3, color="C3", label="online SGD, mean ± sd over chains")
    ax.set_xscale("log")
    ax.set_xlabel("time t (SGD: step × η)")
    ax.set_ylabel(r"test error $E_g$")
    ax.legend(fontsize=8)
    ax.set_title("loss: one drop per mode", fontsize=10)
    ax = axes[1]
    for k, a in enumerate(d.a_inf):
        col = f"C{k % 10}"
        ax.plot(t[keep], d.closed_modes[keep, k] / a, "-", color=col, label=f"s = {d.spectrum[k]:.2f}")
        ax.plot(t[keep], d.ode_random_modes[keep, k] / a, "--", color=col)
        ms, sds = _mean_sd(d.sgd_modes[:, :, k])
        ax.errorbar(t[sl], ms[sl] / a, yerr=sds[sl] / a, fmt="o", ms=2.5, color=col)
    ax.set_xscale("log")
    ax.set_xlabel("time t (SGD: step × η)")
    ax.set_ylabel(r"mode amplitude $a_\alpha(t)/a^\infty_\alpha$")
    ax.legend(title="markers: SGD, mean ± sd", title_fontsize=7, fontsize=7, ncol=2, loc="upper left")
    ax.set_title("mode amplitudes (solid: closed form, dashed: random start)", fontsize=10)
    ax = axes[2]
    s = d.spectrum
    ax.plot(s, d.t_half, "k-", label=r"closed form $\propto D/s^2$")
    ms, sds = _mean_sd(d.t_half_sgd)
    ax.errorbar(s, ms, yerr=sds, fmt="o", color="C3", label="online SGD, mean ± sd over chains")
    ax.plot(s, d.t_half_random, "x", color="C0", ms=8, label="exact ODE, random start")
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


def _last_escape(d):
    """The first time the separate heads' exact ODE comes within 1 % (relative) of the last saddle loss ``M_D``
    (``nan`` if it does not)."""
    near = np.flatnonzero(np.abs(d.ode_separate / d.saddle_losses[-1] - 1) <= 0.01)
    return float(d.times[near[0]]) if near.size else np.nan


def _saddles_caption(result):
    s, d = result.settings, result.data
    D = len(s["spectrum"])
    spectrum = ", ".join(f"{x:g}" for x in s["spectrum"])
    t_last = _last_escape(d)
    reached = (f"In this figure (start seed {s['seed']}) the exact flow of separate heads comes within 1 % of M_{D} "
               f"at t ≈ {t_last:.2g}" if np.isfinite(t_last) else
               f"In this figure (start seed {s['seed']}) the exact flow of separate heads does not reach M_{D} by the "
               f"last record, t = {d.times[-1]:.2g}")
    return (f"Zhang, Singh, Latham & Saxe (ICML 2025) defaults: D = {D}, N = {s['N']}, input eigenvalues ({spectrum}), "
            "noise-free, both models started from the same small random start (scale 0.3). Exact test error vs time "
            f"from the exact population ODE (lines) and online SGD (markers, mean ± sd over {s['n_chains']} chains, "
            f"batch {s['batch']}, η = {s['step']:g}; time = step × η). (a) {D} separate rank-one key/query heads "
            f"(ATTN_S) pass through the saddles M₀ … M_{D}, whose losses (dotted, dynamics.saddle_losses, Zhang et al. "
            "Eq. 19) are learned one principal component at a time; (b) one merged head (ATTN_M) drops once to "
            f"E_g(Γ_*) = {d.optimum_test:.3g} (Γ_* = preconditioned estimator). The last escape depends strongly on "
            f"the start. {reached}.")


@register("saddles", "Separate key/query heads learn saddle to saddle; a merged head drops once",
          caption=_saddles_caption, experiment="saddles", order=31)
def draw_saddles(result):
    return _plot_saddles(result.data)


def _plot_saddles(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    t = d.times
    keep = t > 0
    sl = _log_marks(t, 50)
    D = d.saddle_losses.size - 1
    for ax, tag, title in ((axes[0], "separate", f"separate K, Q ({D} rank-one heads)"),
                           (axes[1], "merged", "merged K–Q (one head)")):
        ax.plot(t[keep], getattr(d, f"ode_{tag}")[keep], "k-", label="exact population ODE")
        m, sd = _mean_sd(getattr(d, f"sgd_{tag}"))
        ax.errorbar(t[sl], m[sl], yerr=sd[sl], fmt="o", ms=3, color="C3", label="online SGD, mean ± sd over chains")
        for k, v in enumerate(d.saddle_losses):
            ax.axhline(v, color="0.6", ls=":", lw=1, label=r"saddle losses $M_0 \ldots M_D$" if k == 0 else None)
            ax.text(t[keep][0], v, f" $M_{k}$", va="bottom", fontsize=8, color="0.4")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("time t (SGD: step × η)")
        ax.set_ylabel(r"test error $E_g$")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    fig.suptitle(f"saddle-to-saddle (separate) vs abrupt (merged) learning, D = {D}")
    fig.tight_layout()
    panel_letters(axes)
    return fig


def gap_differences(d):
    """The product model's mean minus the merged model's, per ``P``, in units of the standard error of the paired
    difference over training sets, for ``gap``, ``contrast`` and ``test`` (``nan`` with one training set).

    Parameters
    ----------
    d : validation.experiments._factorized_attention.FactorizedGapData

    Returns
    -------
    dict of str to ndarray (n_P,)
    """
    out = {}
    for key in ("gap", "contrast", "test"):
        diff = getattr(d, f"{key}_product") - getattr(d, f"{key}_merged")
        m, se = mean_se(diff, 1, single=np.nan)
        out[key] = m / se
    return out


def _gap_caption(result):
    s, d = result.settings, result.data
    n = d.gap_merged.shape[1]
    z = gap_differences(d)

    def words(key, name):
        v = z[key]
        if not np.any(np.isfinite(v)):
            return f"{name}: not resolved with one training set"
        lower, higher = int(np.sum(v < -2)), int(np.sum(v > 2))
        k = int(np.nanargmax(np.abs(v)))
        return (f"{name} lower by more than 2 s.e. at {lower} and higher at {higher} of {v.size} P (the largest "
                f"difference {v[k]:+.1f} s.e. at P = {d.P[k]})")

    return (f"Each training set of P prompts (isotropic, D = {d.D}, N = {s['N']}, noise-free, λ = {s['lam']:g}) is "
            "fitted twice: the merged Γ (exact long-time limit of gradient flow: ridge with λ‖Γ‖²/2) and Γ = PQ "
            "(exact ODE from a small random start to convergence, weight decay λ(‖P‖² + ‖Q‖²)/2, which is λ‖Γ‖_* at "
            "the balanced optimum). (a) ΔEr = (E_g − E_t)/E_t vs P, with the seed's ΔEr = 5 line (dashed); (b) "
            "contrast ratio C = trΓ/(‖Γ‖_F√D); (c) exact test error. Every panel: mean ± 1 s.e. over "
            f"{n} training sets per P; dotted: P = D². The product model against the merged one on the same training "
            "sets (paired differences): " + "; ".join(words(k, nm) for k, nm in (("gap", "mean ΔEr"),
                                                                                ("contrast", "contrast"),
                                                                                ("test", "test error"))) + ".")


@register("factorized_gap", "Finite P: ΔEr of the merged vs the product parametrization on the same datasets",
          caption=_gap_caption, experiment="factorized_gap", order=32)
def draw_gap(result):
    return _plot_gap(result.data)


def _plot_gap(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    P = d.P
    n = d.gap_merged.shape[1]
    for ax, key, ylabel, log in ((axes[0], "gap", r"relative gap $\Delta E_r = (E_g - E_t)/E_t$", True),
                                 (axes[1], "contrast", r"contrast ratio $C = {\rm tr}\Gamma/(\|\Gamma\|_F\sqrt{D})$",
                                  False),
                                 (axes[2], "test", r"test error $E_g$", True)):
        for tag, label, col in (("merged", r"merged $\Gamma$", "C0"), ("product", r"$\Gamma = PQ$", "C3")):
            m, se = mean_se(getattr(d, f"{key}_{tag}"), 1)
            ax.errorbar(P, m, yerr=se if n > 1 else None, fmt="o-", color=col, label=label, capsize=2)
        ax.axvline(d.D ** 2, color="0.5", ls=":", label=r"$P = D^2$")
        ax.set_xscale("log")
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("training prompts P")
        ax.set_ylabel(ylabel)
    axes[0].axhline(5.0, color="k", ls="--", lw=1, label=r"$\Delta E_r = 5$ (the seed's threshold)")
    for ax in axes:
        ax.legend(fontsize=8)
    panel_letters(axes)
    fig.suptitle(r"finite P: merged vs factorized training of the same datasets (D = %d)" % d.D)
    fig.tight_layout()
    return fig
