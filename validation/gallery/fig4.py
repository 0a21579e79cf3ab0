"""Figure 4: gradient-flow learning curves of one dataset (seed paper, Fig. 4; experiment ``flow_curves``,
:mod:`validation.experiments.curves`).

``D = 10``, ``N = 100``, ``λ = 0.01``, ``P ∈ {10, 100}``, full model. Curves: the exact
gradient-flow solution from a Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)``, ``σ_0 = 0.1``,
mean ± 1 s.d. over initialisations (closed form, :func:`dynamics.gradient_flow`). Markers:
explicit gradient-descent simulations (step ``η = 0.5/λ_max(A)``, plotted at ``t = n η``) from
``n_init`` sampled initialisations, mean ± 1 s.d. Dashed lines: the zero-temperature asymptote of
the replica theory (dataset average, ``β = ∞``; this one dataset need not sit on it). At ``P = 10`` the
training loss falls to ``≈ 3 × 10⁻³`` while the test loss passes through a transient bump (largest near
``t ≈ 5``) and settles at ``≈ 0.58``, barely below its initial ``≈ 0.62`` (memorization: a train–test
ratio of about 200); at ``P = 100`` the test loss falls monotonically to ``≈ 0.20``.
"""
from __future__ import annotations

from . import panel_letters, register


@register("fig4", "Gradient-flow train/test curves, P = 10 and 100, exact solution vs gradient descent",
          caption="Seed paper, Fig. 4. Training (a) and test (b) loss of one dataset against time under gradient flow, "
                  "full model, D = 10, N = 100, λ = 0.01, P ∈ {10, 100}, θ₀ ~ N(0, 0.1² I). Lines and bands: the "
                  "exact closed-form mean ± 1 s.d. over initialisations; markers: explicit gradient descent "
                  "(η = 0.5/λ_max(A), plotted at t = nη) from 8 sampled initialisations (full: 40), mean ± 1 s.d.; "
                  "dashed: the zero-temperature replica asymptote (dataset average, so this one dataset need not sit "
                  "on it). P = 10 memorises: its training loss falls to ≈ 3·10⁻³ while its test loss rises through a "
                  "transient bump (peak ≈ 0.66 near t ≈ 5) and settles at ≈ 0.58, barely below its initial ≈ 0.62. "
                  "P = 100 generalises: its test loss falls monotonically from ≈ 0.61 to ≈ 0.20 (training loss "
                  "≈ 0.037).",
          experiment="flow_curves", order=4)
def draw(result):
    import matplotlib.pyplot as plt

    d = result.data
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    colors = {10: "#c0392b", 100: "#1f4e9c"}
    for P, col in colors.items():
        key = f"P{P}"
        t = d[f"times_{key}"]
        for j, (ax, name) in enumerate(((axes[0], "train"), (axes[1], "test"))):
            m, s = d[f"{name}_{key}"], d[f"{name}_sd_{key}"]
            ax.plot(t, m, color=col, label=f"P = {P}: exact flow, mean ± 1 s.d. (band)")
            ax.fill_between(t, m - s, m + s, color=col, alpha=0.2, lw=0)
            sim = d[f"gd_{key}"]
            ax.errorbar(d[f"gd_t_{key}"], sim[:, 2 * j], yerr=sim[:, 2 * j + 1], fmt="o", color=col, ms=3.5,
                        mfc="white", lw=0.8, label=f"P = {P}: gradient descent, mean ± 1 s.d.")
            ax.axhline(d[f"asymptote_{key}"][j], color=col, ls="--", lw=0.9,
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
