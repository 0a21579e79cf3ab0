"""Figures 5 and 6: relative generalization gap ``ΔEr`` and contrast ratio ``C`` against ``P``
(seed paper, Figs. 5–6; experiments ``gaps_long_time`` and ``gaps_finite_time``,
:mod:`validation.experiments.gaps`).

Fig. 5: full model, ``λ = 0.01``, long-time limit of gradient flow (the ridge solution), 100
training sets per ``P`` (quick mode 20); file ``fig5a`` (panels (a), (b)): ``N ∈ {10, 20, 50, 100}`` at
``D = 10``; file ``fig5b`` (panels (c), (d)): ``D ∈ {5, 10, 15, 20}`` at ``N = 100``. Dashed lines: the
replica theory (``β = ∞``) for the ratio of dataset-averaged errors ``⟨E_g⟩/⟨E_t⟩``, drawn against that
same ratio of the simulated training sets (open squares, ± 1 s.e. by the delta method); dash-dotted:
``ΔEr = 5``.
Fig. 6: reduced model (``W21 = 0``), ``λ = 0``, gradient flow from ``θ_0 = 0`` stopped at
``t = 10³`` (10⁵ steps of 0.01), 50 training sets per ``P`` (quick 15); dotted lines at ``P = D²``; no
theory.

Both figures plot ``1 + ΔEr = E_g/E_t`` on a log axis (it is positive even where ``ΔEr`` is slightly
negative at large ``P``, because ``E_t`` includes weight decay; the line ``ΔEr = 5`` sits at 6) and
the contrast ratio ``C`` in a side panel. Lines are medians over training sets and bands their
16–84 % quantiles (where the model memorises, ``E_t → 0`` and the spread of ``ΔEr`` exceeds its mean
by orders of magnitude, so mean ± s.d. would not live on a log axis). For ``P < D²`` at ``λ = 0``
the model interpolates and ``1 + ΔEr`` reaches ``10^{10}`` and more (the axis extends to 3 × the
largest median, at most ``10^{16}``; bands beyond it are cut). The seed's figures
show mean ± 1 s.d.; both statistics are saved in the ``.npz``.
"""
from __future__ import annotations

import numpy as np

from ..experiments.gaps import panels
from . import panel_letters, register

#: largest top of the 1 + ΔEr axis (interpolating models, fig. 6 at P < D², reach 10^15 and more)
RATIO_TOP = 1e16


def plot(data, pairs, label, title, dotted_D2=False, letters=("(a)", "(b)")):
    """Two panels: (left) ``1 + ΔEr = E_g/E_t`` on a log axis, median and 16–84 % band over training
    sets, and where the replica theory is there (dashed) the ratio of dataset-averaged errors
    ``⟨E_g⟩/⟨E_t⟩ ± 1 s.e.`` it predicts (open squares); (right) the contrast ratio ``C``, median and 16–84 %
    band; one colour per problem ``(D, N)`` of ``pairs``; ``letters`` label the two panels."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig, (ax, axc) = plt.subplots(1, 2, figsize=(10, 4.6), gridspec_kw=dict(width_ratios=[1.35, 1]))
    cmap = plt.get_cmap("viridis")
    handles, labels = [], []
    has_theory = any(f"theory_P_D{D}_N{N}" in data for D, N in pairs)
    for i, (D, N) in enumerate(pairs):
        key = f"D{D}_N{N}"
        col = cmap(0.85 * i / max(1, len(pairs) - 1))
        P = data[f"P_{key}"]
        m, lo, hi = (1.0 + data[f"gap_{q}_{key}"] for q in ("median", "q16", "q84"))
        (line,) = ax.plot(P, np.minimum(m, 10 * RATIO_TOP), color=col, marker="o", ms=3)
        ax.fill_between(P, np.minimum(lo, 10 * RATIO_TOP), np.minimum(hi, 10 * RATIO_TOP), color=col, alpha=0.2, lw=0)
        handles.append((Patch(color=col, alpha=0.2, lw=0), line))
        labels.append(f"{label} = {N if label == 'N' else D}")
        if has_theory and f"theory_P_{key}" in data:
            ax.plot(data[f"theory_P_{key}"], 1.0 + data[f"theory_gap_{key}"], color=col, ls="--", lw=0.9)
            ratio = data[f"test_mean_{key}"] / data[f"train_mean_{key}"]
            se = data.get(f"ratio_of_means_se_{key}")           # absent in results saved before it was added
            ax.errorbar(P, ratio, yerr=se, fmt="s", ms=3.5, mfc="white", mec=col, ecolor=col, lw=0.8, zorder=3)
        cm, clo, chi = (data[f"contrast_{q}_{key}"] for q in ("median", "q16", "q84"))
        axc.plot(P, cm, color=col, marker="o", ms=3)
        axc.fill_between(P, clo, chi, color=col, alpha=0.2, lw=0)
        if dotted_D2:
            for a in (ax, axc):
                a.axvline(D * D, color=col, ls=":", lw=0.9)
    ax.axhline(6.0, color="k", ls="-.", lw=0.9)
    gray = dict(color="gray", lw=0.9)
    handles.append((Patch(color="gray", alpha=0.2, lw=0), Line2D([], [], marker="o", ms=3, **gray)))
    labels.append("median over training sets, band 16–84 %")
    if has_theory:
        handles += [Line2D([], [], ls="", marker="s", ms=3.5, mfc="white", mec="gray"), Line2D([], [], ls="--", **gray)]
        labels += [r"$\langle E_g\rangle/\langle E_t\rangle$ ± 1 s.e.", r"replica theory of $\langle E_g\rangle/"
                   r"\langle E_t\rangle$ (β = ∞)"]
    handles.append(Line2D([], [], color="k", ls="-.", lw=0.9))
    labels.append(r"$\Delta E_r = 5$")
    if dotted_D2:
        handles.append(Line2D([], [], ls=":", **gray))
        labels.append(r"$P = D^2$ (colour of its D)")
    for a in (ax, axc):
        a.set_xscale("log")
        a.set_xlabel("task diversity P")
    ax.set_yscale("log")
    medians = np.concatenate([1.0 + data[f"gap_median_D{D}_N{N}"] for D, N in pairs])
    top = min(RATIO_TOP, 3 * np.max(medians[np.isfinite(medians)]))
    ax.set_ylim(max(ax.get_ylim()[0], 0.3), top)
    ax.set_ylabel(r"$1 + \Delta E_r = E_g / E_t$")
    axc.set_ylabel(r"contrast ratio $C = \mathrm{tr}\,\Gamma / (\|\Gamma\|_F \sqrt{D})$")
    axc.set_ylim(min(0.0, axc.get_ylim()[0]), 1.05)
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7.5, frameon=False)   # below both panels
    fig.suptitle(title)
    fig.tight_layout(rect=(0.01, 0.13, 1, 0.95))
    panel_letters([ax, axc], letters, x=-0.1, y=1.02)
    return fig


def draw_panels(result, name, dotted_D2=False):
    """One figure per panel (files ``{name}a`` and ``{name}b``), each with its own data and rows.

    Parameters
    ----------
    result : validation.experiments.Result
        Of ``gaps_long_time`` or ``gaps_finite_time``.
    name : str
        Stem of the files (``"fig5"`` or ``"fig6"``).
    dotted_D2 : bool
        Draw dotted lines at ``P = D²``.

    Returns
    -------
    dict of str to tuple
        ``file stem -> (figure, data, meta)``.
    """
    s = result.settings
    extra = f", t = {s['time']:g}" if s["time"] is not None else ", long-time limit"
    out = {}
    for k, (tag, label, pairs) in enumerate(panels(s)):
        data = {key[len(tag) + 1:]: v for key, v in result.data.items() if key.startswith(f"{tag}_")}
        fixed = "D = 10" if label == "N" else "N = 100"
        fig = plot(data, pairs, label, f"{s['model']} model, λ = {s['lam']:g}{extra}, {fixed}; "
                   f"{s['n_datasets']} training sets per P", dotted_D2=dotted_D2,
                   letters=(f"({'abcd'[2 * k]})", f"({'abcd'[2 * k + 1]})"))
        out[f"{name}{tag}"] = (fig, data, {"rows": result.meta["rows"][tag]})
    return out


@register("fig5", "ΔEr and contrast ratio vs P (full model, λ = 0.01, long-time limit), several N and D",
          files=("fig5a", "fig5b"),
          caption="Seed paper, Fig. 5. Relative generalization gap, plotted as 1 + ΔEr = E_g/E_t on a log axis (a, c), "
                  "and contrast ratio C (b, d) against P for the long-time limit of gradient flow (full model, "
                  "λ = 0.01): file fig5a, (a, b): D = 10, N ∈ {10, 20, 50, 100}; file fig5b, (c, d): N = 100, "
                  "D ∈ {5, 10, 15, 20}. Lines with dots: medians over 20 training sets per P (full: 100) of the "
                  "per-set ratio; bands: its 16–84 % quantiles (the spread over training sets; the seed shows "
                  "mean ± 1 s.d., which is negative on a log axis where the model memorises; both are in the .npz). "
                  "Open squares: the ratio of dataset-averaged errors ⟨E_g⟩/⟨E_t⟩ ± 1 s.e. (delta method), the "
                  "quantity the dashed replica theory (β = ∞, same D, N, λ) predicts; dash-dotted: ΔEr = 5.",
          experiment="gaps_long_time", order=5)
def draw_fig5(result):
    """Figures ``fig5a`` and ``fig5b`` from the result of ``gaps_long_time`` (:func:`draw_panels`)."""
    return draw_panels(result, "fig5")


@register("fig6", "ΔEr and contrast ratio vs P (reduced model, λ = 0, finite training time)",
          files=("fig6a", "fig6b"),
          caption="Seed paper, Fig. 6. As Fig. 5 for the reduced model (W21 = 0) with λ = 0, gradient flow from θ₀ = 0 "
                  "stopped at t = 10³ (10⁵ steps of 0.01), 15 training sets per P (full: 50): file fig6a, (a, b): "
                  "D = 10, N ∈ {10, 20, 50, 100}; file fig6b, (c, d): N = 100, D ∈ {5, 10, 15, 20}. Lines: medians, "
                  "bands: 16–84 % quantiles over training sets; dotted lines at P = D² (in the colour of their D); "
                  "dash-dotted: ΔEr = 5; no theory curve (the replica theory is for the long-time limit). Below "
                  "P = D² the model interpolates and 1 + ΔEr reaches 10¹⁰ and more (the axis stops at 10¹⁶).",
          experiment="gaps_finite_time", order=6)
def draw_fig6(result):
    """Figures ``fig6a`` and ``fig6b`` from the result of ``gaps_finite_time`` (:func:`draw_panels`)."""
    return draw_panels(result, "fig6", dotted_D2=True)
