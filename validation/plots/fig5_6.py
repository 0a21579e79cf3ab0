"""Figures 5 and 6: relative generalization gap ``ΔEr`` and contrast ratio ``C`` against ``P``
(seed ``003``, Figs. 5–6).

Fig. 5: full model, ``λ = 0.01``, long-time limit of gradient flow (the ridge solution),
mean ± 1 s.d. over training sets (100 per ``P``; quick mode 20); (a) ``N ∈ {10, 20, 50, 100}`` at
``D = 10``, (b) ``D ∈ {5, 10, 15, 20}`` at ``N = 100``. Thin dashed lines: the replica theory
(``β = ∞``) for the ratio of dataset-averaged errors; dash-dotted: ``ΔEr = 5``.
Fig. 6: reduced model (``W21 = 0``), ``λ = 0``, gradient flow from ``θ_0 = 0`` stopped at
``t = 10³`` (10⁵ steps of 0.01), 50 training sets per ``P`` (quick 15); dotted lines at ``P = D²``.
For ``P < D²`` the model interpolates: the training error decays to zero and ``ΔEr`` is huge
and leaves the plotted range; since it spans tens of orders of magnitude there, Fig. 6 shows the
median and the 16–84 % band over training sets instead of mean ± s.d. ``ΔEr`` uses a
symmetric-log axis because it can be slightly negative at large ``P`` (``E_t`` includes weight
decay).
"""
from __future__ import annotations

import numpy as np

import dynamics
import linattn
import replica

from ..experiments import boundary_from_means
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


def plot(data, settings, label, title, dotted_D2=False, robust=False):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    # fig. 6 curves leave through the top left: put the inset bottom left and the legend top right
    inset = ax.inset_axes([0.1, 0.1, 0.36, 0.32] if robust else [0.58, 0.5, 0.38, 0.35])
    cmap = plt.get_cmap("Reds")
    for i, (D, N) in enumerate(settings):
        key = f"D{D}_N{N}"
        col = cmap(0.35 + 0.6 * i / max(1, len(settings) - 1))
        P = data[f"P_{key}"]
        if robust:
            m, lo, hi = data[f"gap_median_{key}"], data[f"gap_q16_{key}"], data[f"gap_q84_{key}"]
        else:
            m, s = data[f"gap_mean_{key}"], data[f"gap_sd_{key}"]
            lo, hi = m - s, m + s
        ax.plot(P, m, color=col, marker="o", ms=3, label=f"{label} = {N if label == 'N' else D}")
        ax.fill_between(P, lo, hi, color=col, alpha=0.18, lw=0)
        if f"theory_P_{key}" in data:
            ax.plot(data[f"theory_P_{key}"], data[f"theory_gap_{key}"], color=col, ls="--", lw=0.8)
        cm, cs = data[f"contrast_mean_{key}"], data[f"contrast_sd_{key}"]
        inset.plot(P, cm, color=col, lw=1)
        inset.fill_between(P, cm - cs, cm + cs, color=col, alpha=0.18, lw=0)
        if dotted_D2:
            ax.axvline(D * D, color=col, ls=":", lw=0.9)
    ax.axhline(5.0, color="k", ls="-.", lw=0.9, label=r"$\Delta E_r = 5$")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(-1, 1e4 if robust else None)   # the axis, not the data: bands below −1 are cut
    ax.set_xlabel("task diversity P")
    ax.set_ylabel(r"$\Delta E_r = (E_g - E_t)/E_t$")
    inset.set_xscale("log")
    inset.set_title("contrast ratio C", fontsize=7)
    inset.tick_params(labelsize=6)
    ax.legend(loc="upper right" if robust else "lower left", fontsize=7)
    ax.set_title(title)
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
            fig = plot(data, settings, label, f"({tag}) {model} model, λ = {lam:g}{extra}", dotted_D2=dotted,
                       robust=time is not None)
            paths += save(fig, out_dir, f"{name}{tag}", data, {"rows": rows, "mode": mode})
    return paths


@register("fig5", "ΔEr and contrast ratio vs P (full model, λ = 0.01, long-time limit), several N and D")
def make_fig5(out_dir, mode="quick", progress=True):
    s = SETTINGS["fig5"][mode]
    P_grid = np.unique(np.round(np.geomspace(1, 1e4, s["n_P"])).astype(int))
    panels = [("a", [(10, N) for N in NS], "N"), ("b", [(D, 100) for D in DS], "D")]
    return _make("fig5", panels, "full", 0.01, s["n_datasets"], P_grid, None, out_dir, mode, progress, False)


@register("fig6", "ΔEr and contrast ratio vs P (reduced model, λ = 0, finite training time)")
def make_fig6(out_dir, mode="quick", progress=True):
    s = SETTINGS["fig6"][mode]
    P_grid = np.unique(np.round(np.geomspace(1, 1e4, s["n_P"])).astype(int))
    panels = [("a", [(10, N) for N in NS], "N"), ("b", [(D, 100) for D in DS], "D")]
    return _make("fig6", panels, "reduced", 0.0, s["n_datasets"], P_grid, 1e3, out_dir, mode, progress, True)
