"""Memorization → generalization diagram over ``(P, N)`` and ``(P, D)`` (replica issue, item 3).

Colour: the replica theory's ``log10(1 + ΔEr) = log10(E_g/E_t)`` with ``ΔEr = (⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩`` (ratio of
dataset-averaged errors), full model, ``λ = 0.01``, long-time limit of gradient flow (``β = ∞``);
green line: the boundary ``ΔEr = 5`` (``replica.phase_boundary``). Markers: the same boundary
from exact dataset averages (``dynamics.gap_sweep``, ratio of the mean errors, interpolated on a
``P`` grid): (a) ``D = 10``, ``N ∈ {10, 20, 50, 100, 200}``; (b) ``N = 100``,
``D ∈ {5, 10, 15, 20}``. Quick mode: 20 training sets per exact point (full: 100). In the saved
data, an exact boundary that does not cross within its ``P`` grid is stored as ``nan``.
"""
from __future__ import annotations

import numpy as np

import dynamics
import linattn
import replica

from ..experiments.stationary import boundary_from_means
from . import register, save, style

LAM = 0.01


#: theory-map resolution, exact boundary points and training sets per exact point, per mode
SETTINGS = {"smoke": dict(n_P=8, n_map=2, n_D=2, N_exact=[100], D_exact=[10], n_datasets=2, n_grid=3),
            "quick": dict(n_P=70, n_map=24, n_D=28, N_exact=[10, 20, 50, 100, 200], D_exact=[5, 10, 15, 20],
                          n_datasets=20, n_grid=11),
            "full": dict(n_P=70, n_map=24, n_D=28, N_exact=[10, 20, 50, 100, 200], D_exact=[5, 10, 15, 20],
                         n_datasets=100, n_grid=11)}


def theory_map(pairs, P_grid):
    out = np.empty((len(pairs), P_grid.size))
    for i, (D, N) in enumerate(pairs):
        out[i] = replica.stationary_curve(linattn.Problem(D, N), P_grid, np.inf, LAM, "full").gap
    return out


def exact_boundaries(pairs, n_datasets, n_grid, progress):
    """Per pair: the theory's ``P*`` and the exact one on a grid around it (``nan`` where either
    has no crossing; the exact grid is only built around an existing theory value)."""
    res = []
    for D, N in pairs:
        pb = linattn.Problem(D, N)
        guess = replica.phase_boundary(pb, np.inf, LAM, model="full")
        if guess is None:
            res.append((np.nan, np.nan))
            continue
        grid = np.unique(np.round(np.geomspace(max(guess / 2.5, 1.0), guess * 2.5, n_grid)).astype(int))
        sw = dynamics.gap_sweep(pb, grid, LAM, n_datasets, "full", seed=D * 100 + N, progress=progress)
        exact = boundary_from_means(sw.P, sw.train_mean, sw.test_mean)
        res.append((guess, np.nan if exact is None else exact))
    return np.array(res, dtype=float).reshape(len(pairs), 2)


def compute(mode="quick", progress=True):
    s = SETTINGS[mode]
    n = s["n_datasets"]
    P_grid = np.geomspace(1, 1e4, s["n_P"])
    N_map = np.unique(np.round(np.geomspace(5, 400, s["n_map"])).astype(int))
    D_map = np.unique(np.round(np.linspace(3, 30, s["n_D"])).astype(int))
    data = {"P_grid": P_grid, "N_map": N_map, "D_map": D_map,
            "gap_PN": theory_map([(10, N) for N in N_map], P_grid),
            "gap_PD": theory_map([(D, 100) for D in D_map], P_grid)}
    data["N_exact"] = np.array(s["N_exact"])
    data["D_exact"] = np.array(s["D_exact"])
    data["Pstar_N"] = exact_boundaries([(10, N) for N in data["N_exact"]], n, s["n_grid"], progress)
    data["Pstar_D"] = exact_boundaries([(D, 100) for D in data["D_exact"]], n, s["n_grid"], progress)
    data["Pstar_theory_N"] = _theory_boundaries([(10, N) for N in N_map])
    data["Pstar_theory_D"] = _theory_boundaries([(D, 100) for D in D_map])
    return data


def _theory_boundaries(pairs):
    """The theory's ``P*`` per pair (``nan`` where ``ΔEr`` does not cross 5 in the scanned range)."""
    out = [replica.phase_boundary(linattn.Problem(D, N), np.inf, LAM, model="full") for D, N in pairs]
    return np.array([np.nan if p is None else p for p in out], float)


def plot(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, ys, yl, ex, pst, ptheory in (
            (axes[0], "gap_PN", d["N_map"], "context length N (D = 10)", d["N_exact"], d["Pstar_N"], d["Pstar_theory_N"]),
            (axes[1], "gap_PD", d["D_map"], "token dimension D (N = 100)", d["D_exact"], d["Pstar_D"], d["Pstar_theory_D"])):
        z = np.log10(1.0 + d[key])           # 1 + ΔEr = E_g/E_t > 0: no clipping of negative ΔEr
        im = ax.pcolormesh(d["P_grid"], ys, z, shading="auto", cmap="magma", vmin=-0.3, vmax=4)
        ax.plot(ptheory, ys, color="#2ecc71", lw=1.5, label="theory: ΔEr = 5")
        ax.plot(pst[:, 1], ex, "o", mfc="w", mec="k", ms=6, label="exact dataset averages")
        ax.set_xscale("log")
        if key == "gap_PN":
            ax.set_yscale("log")
        ax.set_xlabel("task diversity P")
        ax.set_ylabel(yl)
        ax.text(0.04, 0.92, "memorization", transform=ax.transAxes, color="w", fontsize=8)
        ax.text(0.70, 0.06, "in-context\ngeneralization", transform=ax.transAxes, color="w", fontsize=8)
        fig.colorbar(im, ax=ax, label=r"$\log_{10}(1 + \Delta E_r) = \log_{10}(E_g/E_t)$ (theory)")
    handles, labels = axes[0].get_legend_handles_labels()   # below the panels: no marker hidden
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle(rf"full model, $\lambda$ = {LAM}, long-time limit ($\beta = \infty$)")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


@register("phase", "Memorization → generalization diagram over (P, N) and (P, D): theory and exact P*",
          caption="Beyond the seed. Colour: log10(1 + ΔEr) = log10(E_g/E_t) of the replica theory (ratio of dataset-averaged errors, full "
                  "model, λ = 0.01, β = ∞) over (P, N) at D = 10 (a) and over (P, D) at N = 100 (b). Green line: the "
                  "theory's boundary P* (last downward crossing of ΔEr = 5); circles: the same boundary from exact "
                  "dataset averages (20 training sets per point, full: 100) on a P grid around it.")
def make(out_dir, mode="quick", progress=True):
    d = compute(mode, progress)
    with style():
        fig = plot(d)
    rows = [dict(N=int(N), P_star_theory=float(t), P_star_exact=float(e)) for N, (t, e) in zip(d["N_exact"], d["Pstar_N"])]
    rows += [dict(D=int(D), P_star_theory=float(t), P_star_exact=float(e)) for D, (t, e) in zip(d["D_exact"], d["Pstar_D"])]
    return save(fig, out_dir, "phase", d, {"rows": rows, "mode": mode})
