"""Nonlinear single-index links: stationary errors and the memorization → generalization boundary
(experiments ``nonlinear_errors`` and ``nonlinear_boundary``, :mod:`validation.experiments.nonlinear`).

``nonlinear_errors``: stationary train and test error against ``P`` for the links ``tanh``, ``relu``,
``sign`` and ``cubic`` at ``D = 10``, ``N = 100`` (full model, ``β = 10³``, ``λ = 0.01``): exact dataset
averages (markers, ± 1 s.e.), the ``D → ∞`` nonlinearity–noise equivalence (``pb.surrogate()``, solid),
the replica theory with the exact finite-``D`` label law (``replica.stationary(pb, ...)``, dashed) and
the linear link for reference (grey). Errors in units of ``E_g(Γ = 0) = V/2`` (``V`` = label variance),
so that the links share an axis.

``nonlinear_boundary``: ``P*`` (``ΔEr = 5``, full model, ``λ = 0.01``, long-time limit ``β = ∞``) against
the link's effective noise-to-signal ratio ``(μ_*² + μ₀²)/μ₁²``: for links with ``μ₁ = 1`` the
equivalence predicts one curve (a linear problem with noise ``σ²`` = the ratio, solid black); the
exact-law theory for two one-parameter families ``f = z + a He₂(z)/√2`` and ``f = z + a He₃(z)/√6``
(ratio ``a²``, lines) with exact boundaries from dataset averages (open circles; the ratio of the mean
errors on a ``P`` grid, :func:`validation.experiments.boundary_from_means`, ± 1 bootstrap s.e.), and the
four named links: exact (large open symbols), exact-law theory (small red) and their surrogate (small black; ``μ₁ ≠ 1``
moves them off the black curve, since ``λ`` is not rescaled with the labels).
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register

RED = "#c0392b"


def plot_errors(d, s):
    """Four panels (one per link): exact errors, the equivalence and the exact-law theory against ``P``; ``d`` holds
    the arrays of experiment ``nonlinear_errors``, ``s`` its settings."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 3.9), sharey=False)
    for ax, (name, c) in zip(axes, d.links.items()):
        ax.plot(d.P_theory, d.linear_test, color="0.6", lw=1.0, ls=":", label="linear link (theory)")
        ax.plot(d.P_theory, d.linear_train, color="0.6", lw=1.0, ls=":")
        for part, col, mk in (("test", RED, "o"), ("train", "#1f4e9c", "s")):    # red, blue
            ax.errorbar(d.P, getattr(c, part), yerr=getattr(c, f"{part}_se"), color=col, marker=mk, ms=4,
                        ls="none", label=f"exact {part}: dataset average ± 1 s.e.")
            ax.plot(d.P_theory, getattr(c, f"surrogate_{part}"), color=col, lw=1.2,
                    label=f"{part}: equivalence (D → ∞)")
            ax.plot(d.P_theory, getattr(c, f"law_{part}"), color=col, lw=1.2, ls="--",
                    label=f"{part}: exact-law theory")
        ax.set_xscale("log")
        ax.set_title(f"link: {name}")
        ax.set_xlabel("task diversity P (prompts)")
        ax.set_ylabel(r"error / $E_g(\Gamma = 0)$")
        if name == "cubic":         # the test error spans two decades: a log axis keeps the train error visible
            ax.set_yscale("log")
            ax.set_title("link: cubic (log scale)")
        else:
            ax.set_ylim(bottom=0)
    panel_letters(axes)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(rf"full model, D = {s['D']}, N = {s['N']}, $\beta$ = {s['beta']:g}, $\lambda$ = {s['lam']:g}")
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def _errors_caption(result):
    s, d = result.settings, result.data
    worst = {(r["link"], r["theory"]): max(r["worst_test"], r["worst_train"]) for r in result.meta["rows"]}
    words = "; ".join(f"{name}: exact-law theory within {worst[name, 'law']:.1%}, equivalence within "
                      f"{worst[name, 'surrogate']:.0%}" for name in d.links)
    return ("Beyond the seed (nonlinear single-index targets y = f(w·x/√D)). Stationary train (blue) and test (red) "
            "errors against P for the links tanh (a), relu (b), sign (c) and cubic (d; logarithmic error axis, the "
            f"test error spans two decades) at D = {s['D']}, N = {s['N']} (full model, β = {s['beta']:g}, "
            f"λ = {s['lam']:g}), in units of E_g(Γ = 0). Markers: exact dataset averages (± 1 s.e.; {s['n_datasets']} "
            f"datasets per point, {d.P.size} values of P). Solid: the nonlinearity–noise equivalence (linear "
            "surrogate, exact only as D → ∞). Dashed: the replica theory with the exact finite-D label law, evaluated "
            "at the simulated D, N. Dotted grey: the linear link (upper: test, lower: train). Largest deviation from "
            f"the averages at the simulated P (relative, train and test): {words}.")


@register("nonlinear_errors",
          "Stationary errors vs P for nonlinear links: exact averages, D → ∞ equivalence, exact-law theory",
          caption=_errors_caption, experiment="nonlinear_errors", order=20)
def draw_errors(result):
    """Figure ``nonlinear_errors`` from the result of the experiment of the same name."""
    return plot_errors(result.data, result.settings)


def plot_boundary(d, s):
    """``P*`` against the noise-to-signal ratio: equivalence line, Hermite families and named links; ``d`` holds the
    arrays of experiment ``nonlinear_boundary``, ``s`` its settings."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.8, 4.4))
    ax.plot(d.ratio_line, d.Pstar_equivalence, color="k", lw=1.3, label="equivalence: linear link, σ² = ratio")
    a2 = np.maximum(d.amplitudes ** 2, 1e-3)
    for (k, fam), col in zip(d.families.items(), ("#1f4e9c", "#e08e0b")):          # blue, orange
        ax.plot(a2, fam.theory, color=col, lw=1.2,
                label=rf"exact-law theory, $f = z + a\,\mathrm{{He}}_{k}/\sqrt{{{k}!}}$")
        ax.errorbar(a2, fam.exact, yerr=fam.exact_se, color=col, marker="o", mfc="w", ms=6, ls="none", capsize=2,
                    label=rf"exact P* ± 1 s.e., $\mathrm{{He}}_{k}$ family")
    marks = dict(zip(("tanh", "relu", "sign", "cubic"), ("^", "s", "D", "v")))
    for name, b in d.named.items():
        ax.errorbar([b.ratio], [b.exact], yerr=[b.exact_se], marker=marks[name], mfc="w", mec=RED, color=RED, ms=8,
                    ls="none", capsize=2, label=f"{name}: exact P* ± 1 s.e.")
        ax.plot([b.ratio], [b.theory], marker=marks[name], color=RED, ms=4, ls="none")
        ax.plot([b.ratio], [b.equivalence], marker=marks[name], color="k", ms=4, ls="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"effective noise-to-signal ratio $(\mu_*^2 + \mu_0^2)/\mu_1^2$ (a² for the families; a = 0 at "
                  r"$10^{-3}$)")
    ax.set_ylabel(r"boundary $P^*$ (prompts at $\Delta E_r = 5$)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.set_title(rf"full model, D = {s['D']}, N = {s['N']}, $\lambda$ = {s['lam']:g}, long-time limit" "\n"
                 "small symbols: exact-law theory (red), equivalence (black)", fontsize=9)
    fig.tight_layout()
    return fig


def _boundary_caption(result):
    s, d = result.settings, result.data
    fams = " and ".join(f"f = z + a He{k}/√{k}!" for k in d.families)
    return (f"Beyond the seed. P* (ΔEr = 5; full model, D = {s['D']}, N = {s['N']}, λ = {s['lam']:g}, long-time limit) "
            "against the effective noise-to-signal ratio (μ_*² + μ₀²)/μ₁² of the link. Black line: what the "
            "nonlinearity–noise equivalence predicts (a linear link with σ² equal to the ratio). Coloured lines: the "
            f"replica theory with the exact finite-D label law for {fams} (ratio a², a ∈ "
            f"{{{', '.join(f'{a:g}' for a in d.amplitudes)}}}; a = 0, the linear link, is drawn at 10⁻³), with exact "
            f"P* (open circles). Large open symbols: exact P* of the named links ({', '.join(d.named)}). Exact P* come "
            f"from dataset averages ({s['n_boundary']} training sets per P on a {s['n_grid']}-point P grid around the "
            "theory's P*), ± 1 bootstrap s.e. over the training sets. Small red / black symbols: the exact-law theory "
            "/ the equivalence for the named links (μ₁ ≠ 1 moves them off the black line, since λ is not rescaled "
            "with the labels).")


@register("nonlinear_boundary", "Memorization → generalization boundary P* vs the link's noise-to-signal ratio",
          caption=_boundary_caption, experiment="nonlinear_boundary", order=21)
def draw_boundary(result):
    """Figure ``nonlinear_boundary`` from the result of the experiment of the same name."""
    return plot_boundary(result.data, result.settings)
