"""Figure 1 of the seed paper: rescaled-Hessian eigenvalue histograms against the Marchenko–Pastur and the
finite-size random-scale laws (experiment ``spectra``, :mod:`validation.experiments.spectra`).

Histograms exclude the exact zero eigenvalues but are normalised by all ``M`` eigenvalues, so their area
is ``1 − atom``; the atom is written on the panel. The darker band around each histogram is ± 1 s.e. of
the bin height (Poisson counting error, ``√count``). The ``α = 1`` density diverges at the origin; its axis
is truncated.
"""
from __future__ import annotations

import numpy as np

from ..experiments.spectra import ALPHAS
from . import panel_letters, register


@register("fig1", "Rescaled-Hessian eigenvalue histograms with the MP and finite-size laws",
          caption="Seed paper, Fig. 1. Histograms of the nonzero eigenvalues of the rescaled Hessian H/c (exact, Gram "
                  "path for P < M) of three datasets per α = P/M ∈ {0.5, 1, 2} (M = DN parameters; quick mode: one "
                  "dataset for the two D = 100, α ≥ 1 panels (b, c), full: three), reduced model, D = N = 100 (a–c), "
                  "and of the validation report's pooled datasets at D = N = 20 (d–f; 10 per α quick, 30 full); "
                  "normalised by all M eigenvalues, so the zero atom (stated on each panel) is left out. Dark band: "
                  "± 1 s.e. of each bin (counting error). Red: the finite-size random-scale law "
                  "(theory, same D, N, P); dashed: Marchenko–Pastur. The Kolmogorov distances (KS) of both laws to "
                  "the pooled exact spectrum are written on each panel; the α = 1 densities diverge at 0 and their "
                  "axes are cut at 1.6.",
          experiment="spectra", order=1)
def draw(result):
    import matplotlib.pyplot as plt

    data, rows, sizes = result.data, result.meta["rows"], list(result.settings["sizes"])

    fig, axes = plt.subplots(len(sizes), len(ALPHAS), figsize=(10, 3.2 * len(sizes)), squeeze=False)
    for row in rows:
        i, j = sizes.index(row["D"]), ALPHAS.index(row["alpha"])
        ax = axes[i, j]
        key = f"D{row['D']}_a{row['alpha']:g}"
        evs = [data[k] for k in sorted(data) if k.startswith(f"eigenvalues_{key}_")]
        pooled = np.concatenate(evs)
        nz = pooled[pooled > 1e-9 * pooled.max()]
        x = data[f"x_{key}"]
        bins = np.linspace(0, x[-1], 70)
        counts, edges = np.histogram(nz, bins=bins)
        dens = counts / (pooled.size * np.diff(edges))  # normalised by all eigenvalues
        ax.stairs(dens, edges, fill=True, color="#6f9fd8", alpha=0.55, label="exact eigenvalues (histogram)")
        se = np.sqrt(counts) / (pooled.size * np.diff(edges))      # Poisson counting error of each bin
        ax.stairs(dens + se, edges, baseline=dens - se, fill=True, color="#1f4e9c", alpha=0.35, lw=0,
                  label="± 1 s.e. (counting)")
        ax.plot(x, data[f"density_finite_{key}"], color="#c0392b", label="finite-size law")
        ax.plot(x, data[f"density_mp_{key}"], color="k", ls="--", lw=1.0, label="Marchenko–Pastur")
        if row["alpha"] == 1.0:
            ax.set_ylim(0, 1.6)
        ax.set_title(f"D = N = {row['D']}, α = {row['alpha']:g} (P = {row['P']}, {len(evs)} set"
                     f"{'s' if len(evs) > 1 else ''})", fontsize=9)
        ax.text(0.97, 0.95, f"zero atom: {row['atom']:.2g}\nKS finite: {row['ks_finite_pooled']:.3f}\n"
                f"KS MP: {row['ks_mp_pooled']:.3f}", transform=ax.transAxes, ha="right", va="top", fontsize=7.5)
        ax.set_xlabel("eigenvalue of H/c")
        ax.set_ylabel("eigenvalue density")
    axes[0, 0].legend(loc="center right", fontsize=7.5)
    fig.tight_layout()
    panel_letters(axes, x=-0.16)
    return fig
