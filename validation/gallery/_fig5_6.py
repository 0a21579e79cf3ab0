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

from . import panel_letters, register

#: largest top of the 1 + ΔEr axis (interpolating models, fig. 6 at P < D², reach 10^15 and more)
RATIO_TOP = 1e16


def plot(panel, title, dotted_D2=False, letters=("(a)", "(b)")):
    """Two panels: (left) ``1 + ΔEr = E_g/E_t`` on a log axis, median and 16–84 % band over training
    sets, and where the replica theory is there (dashed) the ratio of dataset-averaged errors
    ``⟨E_g⟩/⟨E_t⟩ ± 1 s.e.`` it predicts (open squares); (right) the contrast ratio ``C``, median and 16–84 %
    band; one colour per problem ``(D, N)`` of ``panel`` (a :class:`~validation.experiments._gaps.GapPanel`);
    ``letters`` label the two panels."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig, (ax, axc) = plt.subplots(1, 2, figsize=(10, 4.6), gridspec_kw=dict(width_ratios=[1.35, 1]))
    cmap = plt.get_cmap("viridis")
    handles, labels = [], []
    curves, label = panel.curves, panel.varied
    has_theory = any(c.theory_P is not None for c in curves)
    for i, c in enumerate(curves):
        D, N = c.D, c.N
        col = cmap(0.85 * i / max(1, len(curves) - 1))
        P = c.P
        m, lo, hi = (1.0 + getattr(c, f"gap_{q}") for q in ("median", "q16", "q84"))
        (line,) = ax.plot(P, np.minimum(m, 10 * RATIO_TOP), color=col, marker="o", ms=3)
        ax.fill_between(P, np.minimum(lo, 10 * RATIO_TOP), np.minimum(hi, 10 * RATIO_TOP), color=col, alpha=0.2, lw=0)
        handles.append((Patch(color=col, alpha=0.2, lw=0), line))
        labels.append(f"{label} = {N if label == 'N' else D}")
        if c.theory_P is not None:
            ax.plot(c.theory_P, 1.0 + c.theory_gap, color=col, ls="--", lw=0.9)
            ax.errorbar(P, c.test_mean / c.train_mean, yerr=c.ratio_of_means_se, fmt="s", ms=3.5, mfc="white",
                        mec=col, ecolor=col, lw=0.8, zorder=3)
        cm, clo, chi = (getattr(c, f"contrast_{q}") for q in ("median", "q16", "q84"))
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
    medians = np.concatenate([1.0 + c.gap_median for c in curves])
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
        ``file stem -> (figure, data, meta)``, the data the panel's :class:`~validation.experiments._gaps.GapPanel`.
    """
    s = result.settings
    extra = f", t = {s['time']:g}" if s["time"] is not None else ", long-time limit"
    out = {}
    for k, (tag, panel) in enumerate(result.data.panels.items()):
        fixed = f"D = {panel.curves[0].D}" if panel.varied == "N" else f"N = {panel.curves[0].N}"
        fig = plot(panel, f"{s['model']} model, λ = {s['lam']:g}{extra}, {fixed}; "
                   f"{s['n_datasets']} training sets per P", dotted_D2=dotted_D2,
                   letters=(f"({'abcd'[2 * k]})", f"({'abcd'[2 * k + 1]})"))
        out[f"{name}{tag}"] = (fig, panel, {"rows": result.meta["rows"][tag]})
    return out


def _problems(result):
    """``"D = 10, N ∈ {…}"`` and ``"N = 100, D ∈ {…}"`` of the two panels of ``result``."""
    out = []
    for panel in result.data.panels.values():
        c0, other = panel.curves[0], "D" if panel.varied == "N" else "N"
        values = ", ".join(str(getattr(c, panel.varied)) for c in panel.curves)
        out.append(f"{other} = {getattr(c0, other)}, {panel.varied} ∈ {{{values}}}")
    return out


def _caption_fig5(result):
    s = result.settings
    a, b = _problems(result)
    return ("Seed paper, Fig. 5. Relative generalization gap, plotted as 1 + ΔEr = E_g/E_t on a log axis (a, c), and "
            f"contrast ratio C (b, d) against P for the long-time limit of gradient flow ({s['model']} model, "
            f"λ = {s['lam']:g}): file fig5a, (a, b): {a}; file fig5b, (c, d): {b}. Lines with dots: medians over "
            f"{s['n_datasets']} training sets per P of the per-set ratio; bands: its 16–84 % quantiles (the spread "
            "over training sets; the seed shows mean ± 1 s.d., which is negative on a log axis where the model "
            "memorises; both are in the .npz). Open squares: the ratio of dataset-averaged errors ⟨E_g⟩/⟨E_t⟩ ± 1 s.e. "
            "(delta method), the quantity the dashed replica theory (β = ∞, same D, N, λ) predicts; dash-dotted: "
            "ΔEr = 5.")


def _caption_fig6(result):
    s, d = result.settings, result.data
    a, b = _problems(result)
    medians = np.concatenate([1.0 + c.gap_median for p in d.panels.values() for c in p.curves])
    finite = medians[np.isfinite(medians)]
    infinite = int(np.sum(~np.isfinite(medians)))
    exact_zero = (f"; the median training error is exactly 0 (1 + ΔEr infinite, not drawn) at {infinite} (problem, P) "
                  "pairs" if infinite else "")
    return (f"Seed paper, Fig. 6. As Fig. 5 for the {s['model']} model (W21 = 0) with λ = {s['lam']:g}, gradient flow "
            f"from θ₀ = 0 stopped at t = {s['time']:g} (steps of 0.01), {s['n_datasets']} training sets per P: file "
            f"fig6a, (a, b): {a}; file fig6b, (c, d): {b}. Lines: medians, bands: 16–84 % quantiles over training "
            "sets; dotted lines at P = D² (in the colour of their D); dash-dotted: ΔEr = 5; no theory curve (the "
            "replica theory is for the long-time limit). Below P = D² the model interpolates: the largest finite "
            f"median of 1 + ΔEr is {finite.max():.1e} (the axis stops at {RATIO_TOP:.0e}){exact_zero}.")


@register("fig5", "ΔEr and contrast ratio vs P (full model, λ = 0.01, long-time limit), several N and D",
          files=("fig5a", "fig5b"), caption=_caption_fig5, experiment="gaps_long_time", order=5)
def draw_fig5(result):
    """Figures ``fig5a`` and ``fig5b`` from the result of ``gaps_long_time`` (:func:`draw_panels`)."""
    return draw_panels(result, "fig5")


@register("fig6", "ΔEr and contrast ratio vs P (reduced model, λ = 0, finite training time)",
          files=("fig6a", "fig6b"), caption=_caption_fig6, experiment="gaps_finite_time", order=6)
def draw_fig6(result):
    """Figures ``fig6a`` and ``fig6b`` from the result of ``gaps_finite_time`` (:func:`draw_panels`)."""
    return draw_panels(result, "fig6", dotted_D2=True)
