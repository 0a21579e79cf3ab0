"""Figures 5 and 6: relative generalization gap ``ΔEr`` and contrast ratio ``C`` against ``P``
(seed ``003``, Figs. 5–6).

Fig. 5: full model, ``λ = 0.01``, long-time limit of gradient flow (the ridge solution), 100
training sets per ``P`` (quick mode 20); (a) ``N ∈ {10, 20, 50, 100}`` at ``D = 10``, (b)
``D ∈ {5, 10, 15, 20}`` at ``N = 100``. Dashed lines: the replica theory (``β = ∞``) for the ratio
of dataset-averaged errors; dash-dotted: ``ΔEr = 5``.
Fig. 6: reduced model (``W21 = 0``), ``λ = 0``, gradient flow from ``θ_0 = 0`` stopped at
``t = 10³`` (10⁵ steps of 0.01), 50 training sets per ``P`` (quick 15); dotted lines at ``P = D²``.

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

import dynamics
import linattn
import replica

from ..experiments.stationary import boundary_from_means
from . import register, save, style

NS = (10, 20, 50, 100)
DS = (5, 10, 15, 20)
#: P-grid points and training sets per P, per figure and mode
SETTINGS = {"fig5": {"smoke": dict(n_P=4, n_datasets=2), "quick": dict(n_P=14, n_datasets=20),
                     "full": dict(n_P=20, n_datasets=100)},
            "fig6": {"smoke": dict(n_P=4, n_datasets=2), "quick": dict(n_P=14, n_datasets=15),
                     "full": dict(n_P=20, n_datasets=50)}}


def compute(settings, model, lam, n_datasets, P_grid, time=None, theory=True, progress=True):
    data, rows = {}, []
    for D, N in settings:
        pb = linattn.Problem(D, N)
        sw = dynamics.gap_sweep(pb, P_grid, lam, n_datasets, model, time=time, seed=D * 1000 + N, progress=progress)
        key = f"D{D}_N{N}"
        data.update({f"P_{key}": sw.P, f"gap_mean_{key}": sw.gap_mean, f"gap_sd_{key}": sw.gap_sd,
                     f"gap_median_{key}": sw.gap_median, f"gap_q16_{key}": sw.gap_q16, f"gap_q84_{key}": sw.gap_q84,
                     f"contrast_mean_{key}": sw.contrast_mean, f"contrast_sd_{key}": sw.contrast_sd,
                     **{f"contrast_{name}_{key}": q for name, q in
                        zip(("q16", "median", "q84"), np.quantile(sw.contrast_all, [0.16, 0.5, 0.84], axis=1))},
                     f"train_mean_{key}": sw.train_mean, f"test_mean_{key}": sw.test_mean})
        row = dict(D=D, N=N, P_star_exact_mean_of_ratios=linattn.transition_point(sw.P, sw.gap_mean),
                   P_star_exact_ratio_of_means=boundary_from_means(sw.P, sw.train_mean, sw.test_mean))
        if theory:
            Pt = np.geomspace(P_grid[0], P_grid[-1], 120)
            cur = replica.stationary_curve(pb, Pt, np.inf, lam, model)
            data.update({f"theory_P_{key}": Pt, f"theory_gap_{key}": cur.gap})
            row["P_star_theory"] = replica.phase_boundary(pb, np.inf, lam, model=model)
        rows.append(row)
    return data, rows


#: largest top of the 1 + ΔEr axis (interpolating models, fig. 6 at P < D², reach 10^15 and more)
RATIO_TOP = 1e16


def plot(data, settings, label, title, dotted_D2=False):
    """Two panels: (left) ``1 + ΔEr = E_g/E_t`` on a log axis, median and 16–84 % band over training
    sets, replica theory dashed; (right) the contrast ratio ``C``, median and 16–84 % band."""
    import matplotlib.pyplot as plt

    fig, (ax, axc) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw=dict(width_ratios=[1.35, 1]))
    cmap = plt.get_cmap("viridis")
    for i, (D, N) in enumerate(settings):
        key = f"D{D}_N{N}"
        col = cmap(0.85 * i / max(1, len(settings) - 1))
        P = data[f"P_{key}"]
        m, lo, hi = (1.0 + data[f"gap_{q}_{key}"] for q in ("median", "q16", "q84"))
        ax.plot(P, np.minimum(m, 10 * RATIO_TOP), color=col, marker="o", ms=3,
                label=f"{label} = {N if label == 'N' else D}")
        ax.fill_between(P, np.minimum(lo, 10 * RATIO_TOP), np.minimum(hi, 10 * RATIO_TOP), color=col, alpha=0.2, lw=0)
        if f"theory_P_{key}" in data:
            ax.plot(data[f"theory_P_{key}"], 1.0 + data[f"theory_gap_{key}"], color=col, ls="--", lw=0.9)
        cm, clo, chi = (data[f"contrast_{q}_{key}"] for q in ("median", "q16", "q84"))
        axc.plot(P, cm, color=col, marker="o", ms=3)
        axc.fill_between(P, clo, chi, color=col, alpha=0.2, lw=0)
        if dotted_D2:
            for a in (ax, axc):
                a.axvline(D * D, color=col, ls=":", lw=0.9)
    ax.axhline(6.0, color="k", ls="-.", lw=0.9, label=r"$\Delta E_r = 5$")
    for a in (ax, axc):
        a.set_xscale("log")
        a.set_xlabel("task diversity P")
    ax.set_yscale("log")
    medians = np.concatenate([1.0 + data[f"gap_median_D{D}_N{N}"] for D, N in settings])
    top = min(RATIO_TOP, 3 * np.max(medians[np.isfinite(medians)]))
    ax.set_ylim(max(ax.get_ylim()[0], 0.3), top)
    ax.set_ylabel(r"$1 + \Delta E_r = E_g / E_t$")
    axc.set_ylabel(r"contrast ratio $C = \mathrm{tr}\,\Gamma / (\|\Gamma\|_F \sqrt{D})$")
    axc.set_ylim(min(0.0, axc.get_ylim()[0]), 1.05)
    handles, labels = ax.get_legend_handles_labels()
    if any(f"theory_P_D{D}_N{N}" in data for D, N in settings):
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], color="gray", ls="--", lw=0.9))
        labels.append("replica theory (β = ∞)")
    axc.legend(handles, labels, loc="lower right", fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def _make(name, panels, model, lam, n_datasets, P_grid, time, out_dir, mode, progress, dotted):
    paths, meta_rows, all_data = [], {}, {}
    for tag, settings, label in panels:
        if mode == "smoke":
            settings = settings[:2]
        data, rows = compute(settings, model, lam, n_datasets, P_grid, time=time, theory=(lam > 0), progress=progress)
        all_data.update({f"{tag}_{k}": v for k, v in data.items()})
        meta_rows[tag] = rows
        extra = f", t = {time:g}" if time is not None else ", long-time limit"
        with style():
            fig = plot(data, settings, label, f"({tag}) {model} model, λ = {lam:g}{extra}; bands: 16–84 % of "
                       f"{n_datasets} training sets", dotted_D2=dotted)
            paths += save(fig, out_dir, f"{name}{tag}", data, {"rows": rows, "mode": mode})
    return paths


@register("fig5", "ΔEr and contrast ratio vs P (full model, λ = 0.01, long-time limit), several N and D",
          caption="Seed 003, Fig. 5. Relative generalization gap, plotted as 1 + ΔEr = E_g/E_t on a log axis, and "
                  "contrast ratio C against P for the long-time limit of gradient flow (full model, λ = 0.01): (a) "
                  "D = 10, N ∈ {10, 20, 50, 100}; (b) N = 100, D ∈ {5, 10, 15, 20}. Lines: medians over 20 training "
                  "sets per P (full: 100), bands: 16–84 % quantiles (the seed shows mean ± 1 s.d., which is negative "
                  "on a log axis where the model memorises; both are in the .npz). Dashed: replica theory (β = ∞) of "
                  "the ratio of dataset-averaged errors; dash-dotted: ΔEr = 5.")
def make_fig5(out_dir, mode="quick", progress=True):
    s = SETTINGS["fig5"][mode]
    P_grid = np.unique(np.round(np.geomspace(1, 1e4, s["n_P"])).astype(int))
    panels = [("a", [(10, N) for N in NS], "N"), ("b", [(D, 100) for D in DS], "D")]
    return _make("fig5", panels, "full", 0.01, s["n_datasets"], P_grid, None, out_dir, mode, progress, False)


@register("fig6", "ΔEr and contrast ratio vs P (reduced model, λ = 0, finite training time)",
          caption="Seed 003, Fig. 6. As Fig. 5 for the reduced model (W21 = 0) with λ = 0, gradient flow from θ₀ = 0 "
                  "stopped at t = 10³ (10⁵ steps of 0.01), 15 training sets per P (full: 50); dotted lines at P = D². "
                  "Below P = D² the model interpolates and 1 + ΔEr reaches 10¹⁰ and more.")
def make_fig6(out_dir, mode="quick", progress=True):
    s = SETTINGS["fig6"][mode]
    P_grid = np.unique(np.round(np.geomspace(1, 1e4, s["n_P"])).astype(int))
    panels = [("a", [(10, N) for N in NS], "N"), ("b", [(D, 100) for D in DS], "D")]
    return _make("fig6", panels, "reduced", 0.0, s["n_datasets"], P_grid, 1e3, out_dir, mode, progress, True)
