"""Kernel learner vs feature learner (Gu, Xu & Zdeborová, seed paper): which wins over ``(P, N)``.

Two single-index links at ``D = 6``, noise-free, ``λ = 0.01``: ``relu`` (``μ₁ = ½`` carries most of
the signal) and ``f(z) = z/2 + He₂(z)/√2`` (mostly quadratic). Panels (a, b): colour =
``log10(E_g^kernel / E_g^feature)`` over the number of training prompts ``P`` (= task diversity: a
fresh task per prompt) and the context length ``N``; blue where the kernel learner (fixed degree-2
Hermite features, then linear attention, ridge solution) wins, red where the feature learner (linear
attention on raw tokens, then a learned piecewise-linear readout, gradient descent) wins; the black
contour is the tie; grey cells: neither learner beats the zero predictor. Panel (c): context-length
scaling at the largest ``P``: test error (in units of ``E_g(ŷ = 0)``) against ``N`` for both learners
and both links, with linear attention (the library's reduced model, exact test error) for reference.
Test errors are Monte Carlo over fresh prompts (:mod:`validation.simulators.learners`; experiment
``learners``, :mod:`validation.experiments.learners`).
"""
from __future__ import annotations

import numpy as np

from ..experiments.learners import LAM, LINKS, D
from . import register

TITLES = {"relu": "relu", "quad": r"$z/2 + \mathrm{He}_2(z)/\sqrt{2}$"}


def _edges(x):
    """Cell edges of a log-spaced grid (geometric midpoints, mirrored at the ends)."""
    x = np.asarray(x, float)
    if x.size == 1:
        return np.array([x[0] / 1.5, x[0] * 1.5])
    mid = np.sqrt(x[1:] * x[:-1])
    return np.concatenate([[x[0] ** 2 / mid[0]], mid, [x[-1] ** 2 / mid[-1]]])


def plot(d):
    """Panels (a, b): the log ratio of the two learners' errors over ``(P, N)``; (c): errors against ``N`` at the
    largest ``P``."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    P, N = d["P"], d["N"]
    for ax, name in zip(axes[:2], LINKS):
        z = np.log10(d[f"{name}_kernel"] / d[f"{name}_feature"])
        lim = max(0.05, np.nanmax(np.abs(z)))
        useless = np.minimum(d[f"{name}_kernel"], d[f"{name}_feature"]) >= 1.0   # neither beats ŷ = 0
        im = ax.pcolormesh(_edges(P), _edges(N), np.ma.masked_where(useless, z), shading="flat", cmap="coolwarm",
                           norm=TwoSlopeNorm(0.0, -lim, lim))
        ax.pcolormesh(_edges(P), _edges(N), np.ma.masked_where(~useless, np.ones_like(z)), shading="flat",
                      cmap="Greys", vmin=0, vmax=3)
        if P.size > 1 and N.size > 1 and np.nanmin(z) < 0 < np.nanmax(z):
            ax.contour(P, N, np.ma.masked_where(useless, z), levels=[0.0], colors="k", linewidths=1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training prompts P (= task diversity)")
        ax.set_ylabel("context length N")
        ax.set_title(f"link {TITLES[name]}: red = feature learner wins\n(grey: neither beats ŷ = 0)", fontsize=9)
        fig.colorbar(im, ax=ax, label=r"$\log_{10}(E_g^{\rm kernel}/E_g^{\rm feature})$")
    ax = axes[2]
    for name, col in zip(LINKS, ("C0", "C1")):
        ax.errorbar(N, d[f"{name}_kernel"][:, -1], yerr=d[f"{name}_kernel_se"][:, -1], color=col, marker="s", ls="-",
                    label=f"{TITLES[name]}: kernel")
        ax.errorbar(N, d[f"{name}_feature"][:, -1], yerr=d[f"{name}_feature_se"][:, -1], color=col, marker="o", ls="--",
                    label=f"{TITLES[name]}: feature")
        ax.plot(N, d[f"{name}_linear"], color=col, ls=":", label=f"{TITLES[name]}: linear attention")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("context length N")
    ax.set_ylabel(r"test error / $E_g(\hat y = 0)$")
    ax.set_title(f"context-length scaling at P = {P[-1]}", fontsize=9)
    ax.legend(fontsize=7)
    fig.suptitle(rf"kernel vs feature learner, D = {D}, $\lambda$ = {LAM}")
    fig.tight_layout()
    return fig


@register("learners", "Kernel vs feature learner on nonlinear single-index tasks: phase diagram over (P, N)",
          caption="Beyond the seed (Gu, Xu & Zdeborová). D = 6, λ = 0.01, noise-free. (a, b) log10 of the ratio of "
                  "the test errors of the kernel learner (degree-2 Hermite features, then linear attention; ridge "
                  "solution) and the feature learner (linear attention on raw tokens, then a learned piecewise-linear "
                  "readout; gradient descent) over (P, N) for relu and for f = z/2 + He₂/√2; black: the tie; grey: "
                  "neither beats ŷ = 0. (c) test error vs N at the largest P, with linear attention (exact) for "
                  "reference. Monte-Carlo test errors; quick mode 1 training set per cell (full: 3).",
          experiment="learners", order=22)
def draw(result):
    """Figure ``learners`` from the result of the experiment of the same name."""
    return plot(result.data)
