"""Figure 4: gradient-flow learning curves of one dataset (seed paper, Fig. 4; experiment ``flow_curves``,
:mod:`validation.experiments.curves`).

``D = 10``, ``N = 100``, ``λ = 0.01``, ``P ∈ {10, 100}``, full model. Curves: the exact
gradient-flow solution from a Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)``, ``σ_0 = 0.1``,
mean ± 1 s.d. over initialisations (closed form, :func:`dynamics.gradient_flow`). Markers:
explicit gradient-descent simulations (step ``η = 0.5/λ_max(A)``, plotted at ``t = n η``) from
``n_init`` sampled initialisations, mean ± 1 s.d. Dashed lines: the zero-temperature asymptote of
the replica theory (dataset average, ``β = ∞``; this one dataset need not sit on it). ``P = 10`` is the seed's
memorization case (the training loss falls far below the test loss, which passes through a transient bump), ``P = 100``
its generalization case; the caption gives the numbers of the result drawn.
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register


def _describe(P, cur):
    """What the curves of one ``P`` do, in numbers read from them."""
    k = int(np.argmax(cur.test))
    bump = (f", through a maximum of {cur.test[k]:.2g} near t ≈ {cur.times[k]:.2g}," if 0 < k < cur.test.size - 1
            else "")
    return (f"at P = {P} the training loss goes from {cur.train[0]:.2g} to {cur.train[-1]:.2g} and the test loss from "
            f"{cur.test[0]:.2g}{bump} to {cur.test[-1]:.2g} (replica asymptote: {cur.asymptote_train:.2g} and "
            f"{cur.asymptote_test:.2g})")


def _caption(result):
    s, d = result.settings, result.data
    return ("Seed paper, Fig. 4. Training (a) and test (b) loss of one dataset against time under gradient flow, full "
            f"model, D = {s['D']}, N = {s['N']}, λ = {s['lam']:g}, P ∈ {{{', '.join(str(P) for P in d.figure)}}}, "
            f"θ₀ ~ N(0, {s['sigma0']:g}² I). Lines and bands: the exact closed-form mean ± 1 s.d. over "
            "initialisations; markers: explicit gradient descent (η = 0.5/λ_max(A), plotted at t = nη) from "
            f"{s['n_init']} sampled initialisations, mean ± 1 s.d.; dashed: the zero-temperature replica asymptote "
            "(dataset average, so this one dataset need not sit on it). In the closed form, "
            + "; ".join(_describe(P, cur) for P, cur in d.figure.items())
            + " (P = 10 is the seed's memorization case, P = 100 its generalization case).")


@register("fig4", "Gradient-flow train/test curves, P = 10 and 100, exact solution vs gradient descent",
          caption=_caption, experiment="flow_curves", order=4)
def draw(result):
    import matplotlib.pyplot as plt

    d = result.data
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colors = {10: "#c0392b", 100: "#1f4e9c"}
    for P, col in colors.items():
        cur = d.figure[P]
        t = cur.times
        for ax, name in ((axes[0], "train"), (axes[1], "test")):
            m, s = getattr(cur, name), getattr(cur, f"{name}_sd")
            ax.plot(t, m, color=col, label=f"P = {P}: exact flow, mean ± 1 s.d. (band)")
            ax.fill_between(t, m - s, m + s, color=col, alpha=0.2, lw=0)
            ax.errorbar(cur.gd_times, getattr(cur, f"gd_{name}_mean"), yerr=getattr(cur, f"gd_{name}_sd"), fmt="o",
                        color=col, ms=3.5, mfc="white", lw=0.8, label=f"P = {P}: gradient descent, mean ± 1 s.d.")
            ax.axhline(getattr(cur, f"asymptote_{name}"), color=col, ls="--", lw=0.9,
                       label=f"P = {P}: asymptote (T = 0 theory)")
    for ax, title, ylabel in zip(axes, ("training loss", "test loss"),
                                 (r"training loss $E_t(t)$", r"test loss $E_g(t)$")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("time t (γ = 1)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
    panel_letters(axes)
    handles, labels = axes[0].get_legend_handles_labels()   # one legend below both panels, off the data
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7.5, frameon=False)
    st = result.settings
    fig.suptitle(rf"gradient flow, D = {st['D']}, N = {st['N']}, $\lambda$ = {st['lam']:g}, "
                 rf"$\theta_0 \sim N(0, {st['sigma0']:g}^2 I)$ "
                 "(bands: ±1 s.d. over initialisations)")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
