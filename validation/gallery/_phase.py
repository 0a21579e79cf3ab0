"""Memorization → generalization diagram over ``(P, N)`` and ``(P, D)`` (experiment ``phase``,
:mod:`validation.experiments._gaps`).

Colour: the replica theory's ``log10(1 + ΔEr) = log10(E_g/E_t)`` with ``ΔEr = (⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩`` (ratio of
dataset-averaged errors), full model, ``λ = 0.01``, long-time limit of gradient flow (``β = ∞``);
green line: the boundary ``ΔEr = 5`` (``replica.phase_boundary``). Markers: the same boundary
from exact dataset averages (``dynamics.gap_sweep``, ratio of the mean errors, interpolated on a
``P`` grid), with horizontal error bars of ±1 s.d. over bootstrap resamples of the training sets:
(a) ``D = 10``, ``N ∈ {10, 20, 50, 100, 200}``; (b) ``N = 100``, ``D ∈ {5, 10, 15, 20}``. Quick mode:
20 training sets per exact point (full: 100). In the saved data, an exact boundary that does not
cross within its ``P`` grid is stored as ``nan``.
"""
from __future__ import annotations

import numpy as np

from ..experiments._gaps import N_BOOT
from . import panel_letters, register


def plot(d, lam):
    """Theory maps (colour), theory boundary (green line) and exact boundaries (circles, ±1 s.d. bootstrap
    bars) over ``(P, N)`` and ``(P, D)``, panels (a) and (b); ``d`` is the data of experiment ``phase``
    (:class:`~validation.experiments._gaps.PhaseData`), ``lam`` its ``λ``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, axis, yl in ((axes[0], "N", "context length N (D = 10)"), (axes[1], "D", "token dimension D (N = 100)")):
        a = d.axes[axis]
        ys = a.map_values
        z = np.log10(1.0 + a.gap)           # 1 + ΔEr = E_g/E_t > 0: no clipping of negative ΔEr
        im = ax.pcolormesh(d.P_grid, ys, z, shading="auto", cmap="magma", vmin=-0.3, vmax=4)
        ax.plot(a.theory_boundary, ys, color="#2ecc71", lw=1.5, label="replica theory: boundary P* (ΔEr = 5)")
        ax.errorbar(a.exact_boundary, a.exact_values, xerr=np.nan_to_num(a.exact_boundary_sd), fmt="o", mfc="w",
                    mec="k", ecolor="k", ms=6, elinewidth=1.2, capsize=2.5,
                    label="exact dataset averages, P* ± 1 s.d. (bootstrap)")
        ax.set_xscale("log")
        if axis == "N":
            ax.set_yscale("log")
        ax.set_xlabel("task diversity P")
        ax.set_ylabel(yl)
        ax.text(0.04, 0.92, "memorization", transform=ax.transAxes, color="w", fontsize=8)
        ax.text(0.70, 0.06, "in-context\ngeneralization", transform=ax.transAxes, color="w", fontsize=8)
        fig.colorbar(im, ax=ax, label=r"$\log_{10}(1 + \Delta E_r) = \log_{10}(E_g/E_t)$ (theory)")
    handles, labels = axes[0].get_legend_handles_labels()   # below the panels: no marker hidden
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle(rf"full model, $\lambda$ = {lam}, long-time limit ($\beta = \infty$)")
    fig.tight_layout(rect=(0.01, 0.08, 1, 0.97))
    panel_letters(axes, x=-0.15, y=1.03)
    return fig


def _caption(result):
    s, d = result.settings, result.data
    rel = np.concatenate([a.exact_boundary_sd / a.exact_boundary for a in d.axes.values()])
    rel = rel[np.isfinite(rel)]
    spread = (f"{100 * rel.min():.1g}–{100 * rel.max():.1g} % of P*" if rel.size else "not available: no exact "
              "boundary crossed")
    agree = np.concatenate([a.exact_boundary / a.exact_theory_boundary - 1 for a in d.axes.values()])
    agree = agree[np.isfinite(agree)]
    versus = (f"; the exact P* lie {100 * agree.min():+.0f} to {100 * agree.max():+.0f} % from the theory's"
              if agree.size else "")
    return ("Beyond the seed. Colour: log10(1 + ΔEr) = log10(E_g/E_t) of the replica theory (ratio of dataset-averaged "
            f"errors, full model, λ = {s['lam']:g}, β = ∞) over (P, N) at D = 10 (a) and over (P, D) at N = 100 (b). "
            "Green line: the theory's boundary P* (last downward crossing of ΔEr = 5); circles: the same boundary from "
            f"exact dataset averages (ratio of mean errors of {s['n_datasets']} training sets per P, interpolated on a "
            f"grid of {s['n_grid']} P values around the theory's P*), with horizontal bars of ±1 s.d. over "
            f"{N_BOOT} bootstrap resamples of the training sets ({spread}){versus}. The labels 'memorization' and "
            "'in-context generalization' mark the sides of the boundary.")


@register("phase", "Memorization → generalization diagram over (P, N) and (P, D): theory and exact P*",
          caption=_caption, experiment="phase", order=7)
def draw(result):
    """The two panels of the diagram from the result of experiment ``phase``."""
    return plot(result.data, result.settings["lam"])
