"""Figure 4: gradient-flow learning curves of one dataset and of the dataset average with its band (seed paper,
Fig. 4; experiment ``flow_curves``, :mod:`validation.experiments.curves`).

``D = 10``, ``N = 100``, ``λ = 0.01``, ``P ∈ {10, 100}``, full model. (a), (b): one dataset; curves: the exact
gradient-flow solution from a Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)``, ``σ_0 = 0.1``, mean ± 1 s.d. over
initialisations (closed form, :func:`dynamics.gradient_flow`). Markers: explicit gradient-descent simulations (step
``η = 0.5/λ_max(A)``, plotted at ``t = n η``) from ``n_init`` sampled initialisations, mean ± 1 s.d. Dashed lines:
the zero-temperature asymptote of the replica theory (dataset average, ``β = ∞``; this one dataset need not sit on
it). ``P = 10`` is the seed's memorization case (the training loss falls far below the test loss, which passes
through a transient bump), ``P = 100`` its generalization case.

(c): the dataset average at the same setting, :func:`dynamics.averaged_curves`, with its band (± 1 s.d. of one
dataset's curve over datasets and initialisations, from ``n_datasets`` exact per-dataset flows); markers: mean ± 1
s.d. of as many independent datasets' exact curves. (d): the test loss at ``N = 50``, ``P = 30`` from ``θ_0 = 0``
(theory, band over datasets, exact markers), whose minimum and rise to the memorization plateau the random start
``σ_0 = 0.1`` hides (dashed: its dataset average). The caption gives the numbers of the result drawn.
"""
from __future__ import annotations

import numpy as np

from ..experiments._curves import falls
from . import panel_letters, register

COLORS = {10: "#c0392b", 100: "#1f4e9c"}


def _describe(P, cur):
    """What the curves of one ``P`` do, in numbers read from them."""
    k = int(np.argmax(cur.test))
    bump = (f", through a maximum of {cur.test[k]:.2g} near t ≈ {cur.times[k]:.2g}," if 0 < k < cur.test.size - 1
            else "")
    return (f"at P = {P} the training loss goes from {cur.train[0]:.2g} to {cur.train[-1]:.2g} and the test loss from "
            f"{cur.test[0]:.2g}{bump} to {cur.test[-1]:.2g} (replica asymptote: {cur.asymptote_train:.2g} and "
            f"{cur.asymptote_test:.2g})")


def _describe_band(P, cur):
    """The width of the band of one ``P`` at the start and at the end, read from it."""
    return (f"at P = {P} the test loss of one dataset spreads by ± {cur.test_sd[0]:.2g} (1 s.d.) about the average "
            f"{cur.test[0]:.3g} at t = {cur.times[0]:.2g} and by ± {cur.test_sd[-1]:.2g} about {cur.test[-1]:.3g} at "
            f"t = {cur.times[-1]:.2g}")


def _describe_memorization(mem, sigma0):
    """The minimum, the plateau and the random start's curve of panel (d), read from them."""
    cur = mem.zero
    k = int(np.argmin(cur.test))
    init = (f"falls monotonically from {mem.init_test[0]:.3g} to {mem.init_test[-1]:.3g}" if falls(mem.init_test) else
            f"goes from {mem.init_test[0]:.3g} to {mem.init_test[-1]:.3g} (minimum {mem.init_test.min():.3g})")
    return (f"(d): at N = {mem.N}, P = {mem.P} the dataset-averaged test loss from θ₀ = 0 starts at {cur.test[0]:.4g}, "
            f"reaches its minimum {cur.test[k]:.4g} at t ≈ {cur.times[k]:.2g} and rises to the memorization plateau "
            f"{cur.test[-1]:.4g} (t = {cur.times[-1]:.2g}; band ± {cur.test_sd[-1]:.2g} over datasets); from "
            f"θ₀ ~ N(0, {sigma0:g}² I) it {init}: the random start's excess error hides the rise.")


def _caption(result):
    s, d = result.settings, result.data
    text = ("Seed paper, Fig. 4. Training and test loss against time under gradient flow, full "
            f"model, D = {s['D']}, N = {s['N']}, λ = {s['lam']:g}, P ∈ {{{', '.join(str(P) for P in d.figure)}}}, "
            f"θ₀ ~ N(0, {s['sigma0']:g}² I). (a), (b): one dataset; lines and bands: the exact closed-form mean ± 1 "
            "s.d. over initialisations; markers: explicit gradient descent (η = 0.5/λ_max(A), plotted at t = nη) from "
            f"{s['n_init']} sampled initialisations, mean ± 1 s.d.; dashed: the zero-temperature replica asymptote "
            "(dataset average, so this one dataset need not sit on it). In the closed form, "
            + "; ".join(_describe(P, cur) for P, cur in d.figure.items())
            + " (P = 10 is the seed's memorization case, P = 100 its generalization case).")
    if d.band:
        text += (" (c): the dataset-averaged theory (dynamics.averaged_curves; solid: test, dashed: training) with its "
                 f"band, ± 1 s.d. of one dataset's curve over datasets and initialisations estimated from "
                 f"{s['n_datasets']} exact per-dataset flows; markers: mean ± 1 s.d. of {s['n_datasets']} other "
                 "datasets' exact curves; "
                 + "; ".join(_describe_band(P, cur) for P, cur in d.band.items()) + ".")
    if d.memorization is not None:
        text += " " + _describe_memorization(d.memorization, s["sigma0"])
    return text


@register("fig4", "Gradient-flow train/test curves, P = 10 and 100: one dataset vs gradient descent, the dataset "
          "average with its band, the memorization rise", caption=_caption, experiment="flow_curves", order=4)
def draw(result):
    import matplotlib.pyplot as plt

    d = result.data
    extra = bool(d.band) or d.memorization is not None
    fig, axes = plt.subplots(2 if extra else 1, 2, figsize=(10, 8.2 if extra else 4), squeeze=False)
    top = axes[0]
    for P, col in COLORS.items():
        cur = d.figure[P]
        t = cur.times
        for ax, name in ((top[0], "train"), (top[1], "test")):
            m, s = getattr(cur, name), getattr(cur, f"{name}_sd")
            ax.plot(t, m, color=col, label=f"P = {P}: exact flow, mean ± 1 s.d. (band)")
            ax.fill_between(t, m - s, m + s, color=col, alpha=0.2, lw=0)
            ax.errorbar(cur.gd_times, getattr(cur, f"gd_{name}_mean"), yerr=getattr(cur, f"gd_{name}_sd"), fmt="o",
                        color=col, ms=3.5, mfc="white", lw=0.8, label=f"P = {P}: gradient descent, mean ± 1 s.d.")
            ax.axhline(getattr(cur, f"asymptote_{name}"), color=col, ls="--", lw=0.9,
                       label=f"P = {P}: asymptote (T = 0 theory)")
    for ax, title, ylabel in zip(top, ("one dataset: training loss", "one dataset: test loss"),
                                 (r"training loss $E_t(t)$", r"test loss $E_g(t)$")):
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_ylabel(ylabel)
    handles, labels = top[0].get_legend_handles_labels()
    st = result.settings
    if extra:
        _draw_band(axes[1][0], d)
        _draw_memorization(axes[1][1], d, st["sigma0"])
        top[1].legend(handles, labels, fontsize=6.5, frameon=False, loc="lower left", ncol=1)
    for ax in np.ravel(axes):
        ax.set_xscale("log")
        ax.set_xlabel("time t (γ = 1)")
    panel_letters(np.ravel(axes))
    fig.suptitle(rf"gradient flow, D = {st['D']}, $\lambda$ = {st['lam']:g}, full model; (a)–(c): N = {st['N']}, "
                 rf"$\theta_0 \sim N(0, {st['sigma0']:g}^2 I)$" if extra else
                 rf"gradient flow, D = {st['D']}, N = {st['N']}, $\lambda$ = {st['lam']:g}, "
                 rf"$\theta_0 \sim N(0, {st['sigma0']:g}^2 I)$ (bands: ±1 s.d. over initialisations)")
    if extra:
        fig.tight_layout(rect=(0, 0, 1, 0.97))
    else:       # a result of version 0.1.0: one legend below both panels, off the data
        fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=7.5, frameon=False)
        fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def _draw_band(ax, d):
    """(c): the dataset-averaged curves with their band, and the exact markers."""
    for P, cur in (d.band or {}).items():
        col = COLORS.get(P, "k")
        for name, ls, mk in (("test", "-", "o"), ("train", "--", "s")):
            m, s = getattr(cur, name), getattr(cur, f"{name}_sd")
            ax.plot(cur.times, m, color=col, ls=ls, label=f"P = {P}: {name}, theory ± band")
            ax.fill_between(cur.times, np.maximum(m - s, 0.0), m + s, color=col, alpha=0.15, lw=0)
            ax.errorbar(cur.exact_times, getattr(cur, f"exact_{name}"), yerr=getattr(cur, f"exact_{name}_sd"),
                        fmt=mk, color=col, ms=3, mfc="white", lw=0.7)
    ax.set_title("dataset average ± 1 s.d. over datasets and θ₀")
    ax.set_ylabel("loss")
    ax.legend(fontsize=6.5, frameon=False, loc="lower left")


def _draw_memorization(ax, d, sigma0):
    """(d): the test loss from ``θ₀ = 0`` (theory, band, exact markers) and from the random start."""
    mem = d.memorization
    if mem is None:
        ax.set_visible(False)
        return
    cur = mem.zero
    col = "#2e7d32"
    ax.plot(cur.times, cur.test, color=col, label=r"$\theta_0 = 0$: theory ± band")
    ax.fill_between(cur.times, cur.test - cur.test_sd, cur.test + cur.test_sd, color=col, alpha=0.15, lw=0)
    ax.errorbar(cur.exact_times, cur.exact_test, yerr=cur.exact_test_sd, fmt="o", color=col, ms=3, mfc="white",
                lw=0.7, label=r"$\theta_0 = 0$: exact flows, mean ± 1 s.d.")
    k = int(np.argmin(cur.test))
    ax.plot(cur.times[k], cur.test[k], "v", color="k", ms=6, label=f"minimum {cur.test[k]:.4f}")
    ax.axhline(cur.test[-1], color="k", ls=":", lw=0.8, label=f"plateau {cur.test[-1]:.3f}")
    ax.plot(mem.init_times, mem.init_test, color="#7f7f7f", ls="--",
            label=rf"$\theta_0 \sim N(0, {sigma0:g}^2 I)$: theory")
    lo = min(cur.test.min(), mem.init_test.min(), np.min(cur.test - cur.test_sd))
    hi = max(mem.init_test.max(), np.max(cur.test + cur.test_sd))
    ax.set_ylim(lo - 0.02 * (hi - lo), hi + 0.45 * (hi - lo))          # the legend above the curves
    ax.set_title(f"memorization rise of the test loss, N = {mem.N}, P = {mem.P}")
    ax.set_ylabel(r"test loss $E_g(t)$")
    ax.legend(fontsize=6.5, frameon=False, loc="upper right", ncol=2)
