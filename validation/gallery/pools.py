"""Task pools (Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025): four figures.

``pools_double_descent``: ICL and IDG errors against ``τ = P/D²`` at ``κ = 0.5`` for ``α ∈ {1, 10, 100}``; exact
dataset averages (peer conventions: tasks on the sphere, ridge ``λ_L = 1e-4``, i.e. ``λ = λ_L/D`` on ``Γ`` and ``λ_L``
on ``v``), the ``D → ∞`` theory (lines) and the finite-``D`` pool theory at the simulated ``D`` (dashed).
``pools_gtask``: ``g_task = E_ICL − E_IDG`` against ``κ`` at ``α = τ = 10``, ``σ² = 0.01``: simulations at ``D = 32``
and ``64``, the ``D → ∞`` theory and the finite-``D`` theory; the memorization → ICL transition near ``κ = 1``.
``pools_finite_d``: exact averages at ``D = 20, 40, 64`` against ``1/D``, the finite-``D`` theory and the ``D → ∞``
formula (``α = 1``, ``τ = 2``, ``λ = 0.1/D``, full model, Gaussian tasks).
``pools_phase``: the ``(P, K)`` diagram at ``D = 10``, ``N = 100``, ``λ = 0.01`` (full model, long-time limit):
the seed's ``ΔEr`` and the task-generalization gap ``g_task/E_ICL``, exact dataset averages.

Each figure draws the result of the experiment of the same name (:mod:`validation.experiments.pools`).
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register


# ----------------------------------------------------------------------------- double descent in τ
def _style_handles(colors, styles):
    """Legend handles: one colour patch per ``(label, colour)`` of ``colors``, then one black line per ``(label, kw)``
    of ``styles`` (so that colour and line style are explained once each)."""
    from matplotlib.lines import Line2D

    return ([Line2D([], [], color=col, lw=6, label=lab) for lab, col in colors]
            + [Line2D([], [], label=lab, **{"color": "k", **kw}) for lab, kw in styles])


def plot_double_descent(d):
    """ICL (a) and IDG (b) errors against ``τ``: ``D → ∞`` theory, finite-``D`` theory and exact averages per ``α``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    colors = ("#1b9e77", "#d95f02", "#7570b3")
    D = int(d["D"])
    for ax, name, title in ((axes[0], "icl", "fresh tasks (ICL)"), (axes[1], "idg", "pool tasks (IDG)")):
        for alpha, col in zip(d["alpha"], colors):
            key = f"a{alpha:g}"
            ax.plot(d["tau_theory"], d[f"{key}_{name}_theory"], color=col, lw=1.5)
            ax.plot(d["tau_theory"], d[f"{key}_{name}_finite"], color=col, lw=1, ls="--")
            ax.errorbar(d["tau"], d[f"{key}_{name}"], d[f"{key}_{name}_se"], fmt="o", color=col, mfc="w", ms=5,
                        capsize=2)
        ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"prompts per parameter $\tau = P/D^2$")
        ax.set_ylabel(r"error $E$ ($=e/2$)")
        ax.set_title(title)
    panel_letters(axes)
    handles = _style_handles([(rf"$\alpha = N/D$ = {a:g}", c) for a, c in zip(d["alpha"], colors)],
                             [(r"$D \to \infty$ theory", dict(lw=1.5)),
                              (f"finite-D pool theory, D = {D}", dict(lw=1, ls="--")),
                              (f"exact average ± 1 s.e., D = {D}", dict(marker="o", mfc="w", ls="none")),
                              (r"$\tau = 1$", dict(color="0.6", lw=0.8, ls=":"))])
    fig.legend(handles=handles, loc="outside lower center", ncol=7, fontsize=8)
    fig.suptitle(r"double descent at $\tau = 1$: $\kappa = K/D = 0.5$, $\sigma^2 = 0.01$, ridge $\lambda_L = 10^{-4}$")
    return fig


@register("pools_double_descent", "Task pools: double descent in τ = P/D² (ICL and IDG), κ = 0.5, α ∈ {1, 10, 100}",
          caption="Beyond the seed (Lu et al., PNAS 2025, their Fig. 1). Fresh-task (a) and in-distribution (b) "
                  "errors of the ridge solution against τ = P/D² with a pool of K = D/2 tasks on the sphere, σ² = "
                  "0.01, the peer's ridge λ_L = 1e-4 (λ_L/D on Γ, λ_L on v), for α = N/D ∈ {1, 10, 100} (colours). "
                  "Solid: the D → ∞ theory (replica.asymptotic; IDG = −τ c_e). Dashed: the finite-D pool theory at "
                  "the simulated D (8 random pools). Circles: exact averages (replica.ridge, 4 datasets per point; "
                  "full: 10) at D = 32 (full mode: D = 100), ± 1 s.e. Dotted: τ = 1; the peak there is the "
                  "interpolation threshold.",
          experiment="pools_double_descent", order=50)
def draw_double_descent(result):
    return plot_double_descent(result.data)


# ----------------------------------------------------------------------------- g_task against κ
def plot_gtask(d):
    """``g_task`` against ``κ``: ``D → ∞`` theory, finite-``D`` theory and exact averages at each simulated ``D``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(d["kappa_theory"], d["gtask_theory"], color="k", lw=1.5, label=r"$D \to \infty$ theory")
    for D, col in zip(d["Ds"], ("#d95f02", "#1b9e77")):
        def actual(kappa, D=D):                     # the simulated pool has K = round(κD) tasks: draw at K/D
            return np.maximum(1, np.round(np.asarray(kappa) * D)) / D

        ax.plot(actual(d["kappa_theory"]), d[f"D{D}_finite"], color=col, lw=1, ls="--",
                label=f"finite-D pool theory, D = {D}")
        ax.errorbar(actual(d["kappa"]), d[f"D{D}"], d[f"D{D}_se"], fmt="o", color=col, mfc="w", ms=5, capsize=2,
                    label=f"exact average ± 1 s.e., D = {D}")
    ax.axvline(1.0, color="0.6", lw=0.8, ls=":", label=r"$\kappa = 1$ (K = D)")
    ax.set_xscale("log")
    ax.set_xlabel(r"task diversity $\kappa = K/D$ (pool size per dimension)")
    ax.set_ylabel(r"task-generalization gap $g_{\rm task} = E_{\rm ICL} - E_{\rm IDG}$")
    ax.set_title(r"memorization $\to$ ICL: $\alpha = \tau = 10$, $\sigma^2 = 0.01$, $\lambda_L = 10^{-4}$")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


@register("pools_gtask", "Task pools: g_task = E_ICL − E_IDG against κ (α = τ = 10), D = 32 and 64 vs theory",
          caption="Beyond the seed (Lu et al., PNAS 2025, their Fig. 3). The task-generalization gap g_task = E_ICL "
                  "− E_IDG of the ridge solution against κ = K/D at α = τ = 10, σ² = 0.01, λ_L = 1e-4 (sphere "
                  "tasks). Black: the D → ∞ theory; dashed: the finite-D pool theory at each simulated D, averaged "
                  "over 64 random pools (full: 256), on a κ grid that contains the simulated κ; theory and "
                  "simulations are drawn at the actual κ = K/D of the pool, K = round(κD); circles: exact averages "
                  "at D = 32 (4 datasets; full: 20) and D = 64 (2; full: 20), ± 1 s.e. (quick: 6 values of κ; full: "
                  "12 in [0.2, 32]); dotted: κ = 1. For κ < 1 the model memorises the pool (large gap); past κ ≈ 1 "
                  "it learns in context (gap → 0).",
          experiment="pools_gtask", order=51)
def draw_gtask(result):
    return plot_gtask(result.data)


# ----------------------------------------------------------------------------- finite-D convergence
def plot_finite_d(d):
    """ICL (a) and IDG (b) errors against ``1/D``: exact averages, the finite-``D`` pool theory (curve and its values
    at the simulated ``D``) and the ``D → ∞`` formula, one colour per ``κ``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    colors = dict(zip(d["kappas"], ("#d95f02", "#1b9e77")))
    for ax, k, title in ((axes[0], 0, "fresh tasks (ICL)"), (axes[1], 1, "pool tasks (IDG)")):
        for kappa, col in colors.items():
            key = f"k{kappa:g}"
            ex = d[f"{key}_exact"]
            ax.plot(1.0 / d["D_theory"], d[f"{key}_finite"][:, k], color=col, lw=1, ls="--")
            if f"{key}_finite_at_D" in d:
                ax.plot(1.0 / d["Ds"], d[f"{key}_finite_at_D"][:, k], "x", color=col, ms=7)
            ax.errorbar(1.0 / d["Ds"], ex[:, 2 * k], ex[:, 2 * k + 1], fmt="o", color=col, mfc="w", ms=5, capsize=2)
            ax.plot([0.0], [d[f"{key}_asym"][k]], "*", color=col, ms=11, clip_on=False)
        ax.set_xlim(0, 1.1 / float(np.min(d["Ds"])))
        ax.set_xlabel("inverse token dimension 1/D")
        ax.set_ylabel(r"error $E$ ($= e/2$)")
        ax.set_title(title)
    panel_letters(axes)
    handles = _style_handles([(rf"$\kappa = K/D$ = {kappa:g}", col) for kappa, col in colors.items()],
                             [("exact average ± 1 s.e.", dict(marker="o", mfc="w", ls="none")),
                              ("finite-D pool theory", dict(ls="--", lw=1)),
                              ("finite-D pool theory at the simulated D", dict(marker="x", ls="none", ms=7)),
                              (r"$D \to \infty$ (Lu et al.)", dict(marker="*", ls="none", ms=11))])
    fig.legend(handles=handles, loc="outside lower center", ncol=6, fontsize=8)
    fig.suptitle(r"finite-D convergence: $\alpha = 1$, $\tau = 2$, $\sigma^2 = 0.01$, $\lambda = 0.1/D$, full model")
    return fig


@register("pools_finite_d",
          "Task pools: exact averages at D = 20, 40, 64 vs the finite-D pool theory vs the D → ∞ formula",
          caption="Beyond the seed. ICL (a) and IDG (b) errors of the ridge solution against 1/D at α = N/D = 1, τ = "
                  "P/D² = 2, σ² = 0.01, λ = 0.1/D on both blocks, Gaussian tasks, κ = K/D ∈ {0.5, 2} (colours). "
                  "Circles: exact averages (24, 8 and 3 datasets at D = 20, 40, 64; full: 100, 30, 10), ± 1 s.e. "
                  "Dashed: the finite-D pool theory (replica.stationary with Problem(tasks=K), finite-D factor) for "
                  "D = 16 … 256, averaged over 256 random pools at every D (full: 1024; pool-to-pool Monte-Carlo "
                  "error below 10⁻³, so the curve is smooth); crosses: the same theory at the simulated D. We "
                  "average over random pools rather than use the deterministic pool='mp' spectrum because the latter "
                  "drops the O(1/D) fluctuations of a finite pool, which move the theory by up to 8 % at D = 20, κ = "
                  "0.5. Stars: replica.asymptotic (D → ∞). The theory converges to the stars. The IDG errors agree "
                  "with it within 2 s.e. at every D; the ICL errors lie below it at κ = 0.5 by 4.0, 3.8 and 2.4 s.e. "
                  "(4 %, 1.6 %, 1.3 %) at D = 20, 40, 64, and at κ = 2 agree within 1.6 s.e. at D = 20 and 40 and "
                  "lie 2.9 s.e. (1.2 %) above it at D = 64. The small steps of the κ = 0.5 IDG curve (≈ 0.004) are "
                  "not Monte Carlo over pools (the spread between pool seeds is ≈ 0.001); they come from the theory "
                  "at consecutive D.",
          experiment="pools_finite_d", order=52)
def draw_finite_d(result):
    return plot_finite_d(result.data)


# ----------------------------------------------------------------------------- (P, K) phase diagram
def plot_phase(d):
    """The ``(P, K)`` diagram: (a) ``log10(1 + ΔEr)`` with the ``ΔEr = 5`` contour, (b) ``g_task/E_ICL``."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    Ps, Ks = d["P"], d["K"]
    ylab = [str(k) for k in Ks] + ["∞"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    y = np.arange(Ks.size + 1)
    x = np.arange(Ps.size)
    inside = Ps <= Ks[-1]                                   # the diagonal K = P where the pool grid reaches it
    panels = ((axes[0], np.log10(1.0 + d["gap"]), r"$\log_{10}(1 + \Delta E_r)$ (fresh-task error)", "magma",
               -0.3, 3.0),
              (axes[1], d["gtask_rel"], r"$g_{\rm task}/E_{\rm ICL} = 1 - E_{\rm IDG}/E_{\rm ICL}$", "viridis",
               0.0, 1.0))
    for ax, z, lab, cmap, vmin, vmax in panels:
        im = ax.pcolormesh(np.arange(Ps.size + 1) - 0.5, np.arange(Ks.size + 2) - 0.5, z, cmap=cmap, vmin=vmin,
                           vmax=vmax)
        if ax is axes[0]:
            ax.contour(x, y, d["gap"], levels=[5.0], colors="#2ecc71", linewidths=1.5)
        ax.set_xticks(x)
        ax.set_xticklabels([str(p) for p in Ps], rotation=60, fontsize=7)
        ax.set_yticks(y)
        ax.set_yticklabels(ylab, fontsize=7)
        ax.axhline(np.searchsorted(Ks, 10) - 0.5, color="w", lw=0.8, ls="--")        # K = D (κ = 1)
        kk = np.interp(np.log(Ps[inside]), np.log(Ks), np.arange(Ks.size))          # the diagonal K = P
        ax.plot(x[inside], kk, color="w", lw=0.8, ls=":")
        ax.set_xlabel("number of training prompts P")
        ax.set_ylabel("task-pool size K (∞: a fresh task per prompt)")
        ax.grid(False)
        fig.colorbar(im, ax=ax, label=lab)
    if np.isfinite(d["P_star_theory"]):
        axes[0].plot(np.interp(np.log(d["P_star_theory"]), np.log(Ps), x), Ks.size, "*", color="#2ecc71", ms=12,
                     mec="k")
    panel_letters(axes)
    handles = [Line2D([], [], color="#2ecc71", lw=1.5, label=r"(a) $\Delta E_r = 5$ (exact averages)"),
               Line2D([], [], color="#2ecc71", marker="*", mec="k", ms=12, ls="none",
                      label="(a) replica P* for fresh tasks"),
               Line2D([], [], color="0.3", lw=0.8, ls="--", label=r"K = D ($\kappa = 1$)"),
               Line2D([], [], color="0.3", lw=0.8, ls=":", label="K = P")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8)
    fig.suptitle(r"D = 10, N = 100, $\lambda$ = 0.01, full model, long-time limit")
    return fig


@register("pools_phase", "Task pools: (P, K) phase diagram at D = 10 linking the seed's ΔEr = 5 transition to κ ≈ 1",
          caption="Beyond the seed. Exact dataset averages (8 datasets per cell; full: 30) of the ridge solution at "
                  "D = 10, N = 100, λ = 0.01 (full model, the seed's long-time limit) over the number of prompts P "
                  "and the pool size K (top row: a fresh task per prompt, the seed's setting). (a) log10(1 + ΔEr) "
                  "with ΔEr = (⟨E_ICL⟩ − ⟨E_t⟩)/⟨E_t⟩ (ratio of the dataset means); green contour ΔEr = 5, star: the "
                  "replica theory's P* for fresh tasks. (b) The relative task-generalization gap 1 − ⟨E_IDG⟩/⟨E_ICL⟩ "
                  "(0 by definition in the top row). White dashed: K = D (κ = 1); white dotted: K = P (a pool as "
                  "large as the data: every prompt nearly its own task, the seed's regime), drawn up to the largest "
                  "finite K. Each cell is a mean over its datasets; the standard errors of the cells are not shown.",
          experiment="pools_phase", order=53)
def draw_phase(result):
    return plot_phase(result.data)
