"""Figure 1 of the seed paper: rescaled-Hessian eigenvalue histograms against the Marchenko–Pastur and the
finite-size random-scale laws (experiment ``spectra``, :mod:`validation.experiments.spectra`).

Histograms exclude the exact zero eigenvalues but are normalised by all ``M`` eigenvalues, so their area
is ``1 − atom``; the atom is written on the panel. The darker band around each histogram is ± 1 s.e. of
the bin height (Poisson counting error, ``√count``). The ``α = 1`` density diverges at the origin; its axis
is truncated.
"""
from __future__ import annotations

import numpy as np

from ..experiments._spectra import ALPHAS
from . import panel_letters, register


def _caption(result):
    s, panels = result.settings, result.data.panels
    letters = "abcdefghijkl"
    parts = []
    for i, D in enumerate(s["sizes"]):
        mine = [p for p in panels if p.D == D]
        counts = ", ".join(f"{p.eigenvalues.shape[0]} at α = {p.alpha:g}" for p in mine)
        role = " (the validation report's pooled datasets)" if D == s["check_size"] else ""
        parts.append(f"D = N = {D}{role}, panels ({letters[3 * i]}–{letters[3 * i + 2]}): datasets {counts}")
    return ("Seed paper, Fig. 1. Histograms of the nonzero eigenvalues of the rescaled Hessian H/c (exact, Gram path "
            f"for P < M) of independent datasets per α = P/M ∈ {{{', '.join(f'{a:g}' for a in ALPHAS)}}} (M = DN "
            f"parameters), reduced model: {'; '.join(parts)}; normalised by all M eigenvalues, so the zero atom "
            "(stated on each panel) is left out. Dark band: ± 1 s.e. of each bin (counting error). Red: the "
            "finite-size random-scale law (theory, same D, N, P); dashed: Marchenko–Pastur. The Kolmogorov distances "
            "(KS) of both laws to the pooled exact spectrum are written on each panel; the α = 1 densities diverge at "
            f"0 and their axes are cut at {ALPHA1_TOP:g}.")


#: the top of the density axis of the ``α = 1`` panels (the densities diverge at 0)
ALPHA1_TOP = 1.6


@register("fig1", "Rescaled-Hessian eigenvalue histograms with the MP and finite-size laws", caption=_caption,
          experiment="spectra", order=1)
def draw(result):
    import matplotlib.pyplot as plt

    sizes = list(result.settings["sizes"])

    fig, axes = plt.subplots(len(sizes), len(ALPHAS), figsize=(10, 3.2 * len(sizes)), squeeze=False)
    for panel in result.data.panels:
        i, j = sizes.index(panel.D), ALPHAS.index(panel.alpha)
        ax = axes[i, j]
        evs = panel.eigenvalues
        pooled = evs.ravel()
        nz = pooled[pooled > 1e-9 * pooled.max()]
        x = panel.x
        bins = np.linspace(0, x[-1], 70)
        counts, edges = np.histogram(nz, bins=bins)
        dens = counts / (pooled.size * np.diff(edges))  # normalised by all eigenvalues
        ax.stairs(dens, edges, fill=True, color="#6f9fd8", alpha=0.55, label="exact eigenvalues (histogram)")
        se = np.sqrt(counts) / (pooled.size * np.diff(edges))      # Poisson counting error of each bin
        ax.stairs(dens + se, edges, baseline=dens - se, fill=True, color="#1f4e9c", alpha=0.35, lw=0,
                  label="± 1 s.e. (counting)")
        ax.plot(x, panel.density_finite, color="#c0392b", label="finite-size law")
        ax.plot(x, panel.density_mp, color="k", ls="--", lw=1.0, label="Marchenko–Pastur")
        if panel.alpha == 1.0:
            ax.set_ylim(0, ALPHA1_TOP)
        ax.set_title(f"D = N = {panel.D}, α = {panel.alpha:g} (P = {panel.P}, {len(evs)} set"
                     f"{'s' if len(evs) > 1 else ''})", fontsize=9)
        ax.text(0.97, 0.95, f"zero atom: {panel.atom:.2g}\nKS finite: {panel.ks_finite_pooled:.3f}\n"
                f"KS MP: {panel.ks_mp_pooled:.3f}", transform=ax.transAxes, ha="right", va="top", fontsize=7.5)
        ax.set_xlabel("eigenvalue of H/c")
        ax.set_ylabel("eigenvalue density")
    axes[0, 0].legend(loc="center right", fontsize=7.5)
    fig.tight_layout()
    panel_letters(axes, x=-0.16)
    return fig
