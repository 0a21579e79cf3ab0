"""Kernel learner vs feature learner (Gu, Xu & Zdeborová, seed paper): which wins over ``(P, N)``.

Two single-index links at ``D = 6``, noise-free, ``λ = 0.01``: ``relu`` (``μ₁ = ½`` carries most of
the signal) and ``f(z) = z/2 + He₂(z)/√2`` (mostly quadratic). Panels (a, b): colour =
``log10(E_g^kernel / E_g^feature)`` over the number of training prompts ``P`` (= task diversity: a
fresh task per prompt) and the context length ``N``; blue where the kernel learner (fixed degree-2
Hermite features, then linear attention, ridge solution) wins, red where the feature learner (linear
attention on raw tokens, then a learned piecewise-linear readout, gradient descent) wins, on one
colour scale; a tie within 2 s.e. is hatched; grey cells: neither learner beats the zero predictor. Panel (c):
context-length scaling at the largest ``P``: test error (in units of ``E_g(ŷ = 0)``) against ``N`` for both learners
and both links, with linear attention (the library's reduced model, exact test error) for reference.
Test errors are Monte Carlo over fresh prompts (:mod:`validation.simulators.learners`; experiment
``learners``, :mod:`validation.experiments.learners`).
"""
from __future__ import annotations

import numpy as np

from ..experiments.learners import LAM, LINKS, D
from . import panel_letters, register

TITLES = {"relu": "relu", "quad": r"$z/2 + \mathrm{He}_2(z)/\sqrt{2}$"}


def _edges(x):
    """Cell edges of a log-spaced grid (geometric midpoints, mirrored at the ends)."""
    x = np.asarray(x, float)
    if x.size == 1:
        return np.array([x[0] / 1.5, x[0] * 1.5])
    mid = np.sqrt(x[1:] * x[:-1])
    return np.concatenate([[x[0] ** 2 / mid[0]], mid, [x[-1] ** 2 / mid[-1]]])


def _log_ratio(d, name):
    """``log10(E_kernel/E_feature)`` per cell and its standard error (from the two errors' s.e., independent)."""
    k, f = d[f"{name}_kernel"], d[f"{name}_feature"]
    se = np.hypot(d[f"{name}_kernel_se"] / k, d[f"{name}_feature_se"] / f) / np.log(10.0)
    return np.log10(k / f), se


def plot(d):
    """Panels (a, b): the log ratio of the two learners' errors over ``(P, N)`` on one colour scale, ties (|ratio| <
    2 s.e.) hatched; (c): errors against ``N`` at the largest ``P``, ± 1 s.e. over training sets."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, Rectangle

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.8), layout="constrained")
    P, N = d["P"], d["N"]
    xe, ye = _edges(P), _edges(N)
    ratios = {name: _log_ratio(d, name) for name in LINKS}
    useless = {name: np.minimum(d[f"{name}_kernel"], d[f"{name}_feature"]) >= 1.0 for name in LINKS}  # ŷ = 0 wins
    lim = max([0.05] + [float(np.nanmax(np.abs(z[~useless[n]]))) for n, (z, _) in ratios.items()
                        if (~useless[n]).any()])
    norm = TwoSlopeNorm(0.0, -lim, lim)                 # one colour scale for both links
    for ax, name in zip(axes[:2], LINKS):
        z, se = ratios[name]
        im = ax.pcolormesh(xe, ye, np.ma.masked_where(useless[name], z), shading="flat", cmap="coolwarm", norm=norm)
        ax.pcolormesh(xe, ye, np.ma.masked_where(~useless[name], np.ones_like(z)), shading="flat", cmap="Greys",
                      vmin=0, vmax=3)
        for i, j in zip(*np.nonzero((np.abs(z) < 2 * se) & ~useless[name])):
            ax.add_patch(Rectangle((xe[j], ye[i]), xe[j + 1] - xe[j], ye[i + 1] - ye[i], fill=False, hatch="///",
                                   edgecolor="k", lw=0))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training prompts P (= task diversity)")
        ax.set_ylabel("context length N (tokens per prompt)")
        ax.set_title(f"link {TITLES[name]}")
        ax.grid(False)
    fig.colorbar(im, ax=list(axes[:2]), shrink=0.9,
                 label="$\\log_{10}(E_g^{\\rm kernel}/E_g^{\\rm feature})$\n(red: feature learner wins; blue: kernel)")
    ax = axes[2]
    styles = {"kernel": dict(marker="s", ls="-"), "feature": dict(marker="o", ls="--")}
    colors = dict(zip(LINKS, ("#2e8b57", "#7b3f9e")))    # not red/blue: those mean the winner in (a, b)
    for name, col in colors.items():
        for tag, st in styles.items():
            ax.errorbar(N, d[f"{name}_{tag}"][:, -1], yerr=d[f"{name}_{tag}_se"][:, -1], color=col, capsize=2, **st)
        ax.plot(N, d[f"{name}_linear"], color=col, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("context length N (tokens per prompt)")
    ax.set_ylabel(r"test error $E_g$ / $E_g(\hat y = 0)$")
    ax.set_title(f"context-length scaling at P = {P[-1]}")
    handles = ([Patch(facecolor="0.78", label="(a, b) neither learner beats ŷ = 0"),
                Patch(fill=False, hatch="///", edgecolor="k", lw=0, label="(a, b) tie: |log ratio| < 2 s.e.")]
               + [Line2D([], [], color=col, lw=6, label=f"(c) link {TITLES[name]}") for name, col in colors.items()]
               + [Line2D([], [], color="k", label="(c) kernel learner ± 1 s.e.", **styles["kernel"]),
                  Line2D([], [], color="k", label="(c) feature learner ± 1 s.e.", **styles["feature"]),
                  Line2D([], [], color="k", ls=":", label="(c) linear attention (exact)")])
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8)
    panel_letters(axes)
    fig.suptitle(rf"kernel vs feature learner, D = {D}, $\lambda$ = {LAM}, noise-free")
    return fig


@register("learners", "Kernel vs feature learner on nonlinear single-index tasks: phase diagram over (P, N)",
          caption="Beyond the seed (Gu, Xu & Zdeborová). D = 6, λ = 0.01, noise-free. (a, b) log10 of the ratio of "
                  "the test errors of the kernel learner (degree-2 Hermite features, then linear attention; ridge "
                  "solution) and the feature learner (linear attention on raw tokens, then a learned "
                  "piecewise-linear readout; gradient descent) over (P, N) for relu (a) and for f = z/2 + He₂/√2 "
                  "(b), on one colour scale: red where the feature learner has the lower error, blue where the "
                  "kernel learner has; hatched: a tie (|log ratio| below 2 s.e.); grey: neither beats ŷ = 0. In "
                  "quick mode: for relu the feature learner wins in every cell but two at P = 100 (a tie, and one "
                  "where neither beats ŷ = 0); for the quadratic link both learners are useless at small P and N, "
                  "the feature learner wins at P ≥ 1600 and N ≤ 64, and at N = 256 the kernel learner's error is "
                  "lower but within 2 s.e. (c) Test error (in units of E_g(ŷ = 0)) vs N at the largest P: kernel "
                  "learner (squares, solid), feature learner (circles, dashed), linear attention (dotted; the "
                  "library's exact test error) for reference; colour = link. Each cell averages 3 independent "
                  "training sets, each seeded by (N, P, set) (quick and full); test errors are Monte Carlo over "
                  "fresh prompts (4000 for the kernel learner and 20 000 for the feature learner, on a 4 × 4 grid of "
                  "(P, N), quick; full: 9 × 8 cells, 20 000 and 100 000 prompts). Error bars and the s.e. of the "
                  "ties: ± 1 s.e. over training sets, including the Monte-Carlo error.",
          experiment="learners", order=22)
def draw(result):
    """Figure ``learners`` from the result of the experiment of the same name."""
    return plot(result.data)
