"""Task pools (Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025): four figures.

``pools_double_descent``: ICL and IDG errors against ``τ = P/D²`` at ``κ = 0.5`` for ``α ∈ {1, 10, 100}``; exact
dataset averages (peer conventions: tasks on the sphere, ridge ``λ_L = 1e-4``, i.e. ``λ = λ_L/D`` on ``Γ`` and ``λ_L``
on ``v``), the ``D → ∞`` theory (lines) and the finite-``D`` pool theory at the simulated ``D`` (dashed).
``pools_gtask``: ``g_task = E_ICL − E_IDG`` against ``κ`` at ``α = τ = 10``, ``σ² = 0.01``: simulations at ``D = 32``
and ``64``, the ``D → ∞`` theory and the finite-``D`` theory; the memorization → ICL transition near ``κ = 1``.
``pools_finite_d``: exact averages over ``κ`` at ``D = 20, 40`` against the finite-``D`` theory, its baseline and the
``D → ∞`` formula (``α = 2``, ``τ = 2``, ``λ = 0.1/D``, full model, Gaussian tasks).
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
                  "the simulated D (replica.pool_finite on 1 pool plus the Gaussian theory on 32 as control variate, "
                  "the same pools at every τ). Circles: exact averages (replica.ridge, 4 datasets per point; "
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
                  "over nested random pools (1 pool of the finite-D theory + 32 of its Gaussian control variate; "
                  "full: 8 + 256), on a κ grid that contains the simulated κ; theory and "
                  "simulations are drawn at the actual κ = K/D of the pool, K = round(κD); circles: exact averages "
                  "at D = 32 (4 datasets; full: 20) and D = 64 (2; full: 20), ± 1 s.e. (quick: 6 values of κ; full: "
                  "12 in [0.2, 32]); dotted: κ = 1. For κ < 1 the model memorises the pool (large gap); past κ ≈ 1 "
                  "it learns in context (gap → 0).",
          experiment="pools_gtask", order=51)
def draw_gtask(result):
    return plot_gtask(result.data)


# ----------------------------------------------------------------------------- finite-D convergence
def plot_finite_d(d):
    """ICL (left) and IDG (right) errors against ``κ`` at each ``D`` (rows): exact averages, the finite-``D`` pool
    theory (± its pool-average s.e., a thin band), the earlier theory (baseline) and the ``D → ∞`` formula."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    Ds = [int(D) for D in d["Ds"]]
    fig, axes = plt.subplots(len(Ds), 2, figsize=(10, 3.6 * len(Ds)), layout="constrained", squeeze=False)
    for row, D in enumerate(Ds):
        kth, th, ex = d[f"D{D}_kappa_theory"], d[f"D{D}_theory"], d[f"D{D}_exact"]
        for col, title in enumerate(("fresh tasks (ICL)", "pool tasks (IDG)")):
            ax = axes[row, col]
            mid, se = th[:, col], th[:, 2 + col]
            ax.fill_between(kth, mid - 2 * se, mid + 2 * se, color="#1b9e77", alpha=0.3, lw=0)
            ax.plot(kth, mid, color="#1b9e77", lw=1.5, label="finite-D pool theory (± 2 s.e. of its pool average)")
            ax.plot(kth, th[:, 4 + col], color="#d95f02", lw=1, ls="--",
                    label="earlier theory: Gaussian × fresh-task factor (baseline)")
            ax.plot(d["kappa_asym"], d["asym"][:, col], color="0.4", lw=1, ls=":", label=r"$D \to \infty$ (Lu et al.)")
            ax.errorbar(d["kappa"][: len(ex)], ex[:, 2 * col], ex[:, 2 * col + 1], fmt="o", color="k", mfc="w", ms=5,
                        capsize=2, label="exact average ± 1 s.e.")
            ax.set_xscale("log")
            ax.set_xticks([0.2, 0.5, 1, 2, 5], labels=["0.2", "0.5", "1", "2", "5"])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(r"pool size per dimension $\kappa = K/D$")
            ax.set_ylabel(r"error $E$ ($= e/2$)")
            ax.set_title(f"D = {D}: {title}")
    panel_letters(axes.ravel())
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    fig.suptitle(r"finite-D pool theory: $\alpha = N/D = 2$, $\tau = P/D^2 = 2$, $\sigma^2 = 0.01$, "
                 r"$\lambda = 0.1/D$, Gaussian tasks, full model")
    return fig


@register("pools_finite_d",
          "Task pools at finite D: the finite-D pool theory vs exact averages vs D → ∞ over κ, D = 20 and 40",
          caption="Beyond the seed. ICL (left) and IDG (right) errors of the ridge solution against κ = K/D at D = 20 "
                  "(top) and 40 (bottom), α = N/D = 2, τ = P/D² = 2, σ² = 0.01, λ = 0.1/D on both blocks, Gaussian "
                  "tasks. Circles: exact averages (24 and 8 datasets; full: 100, 30; a new pool per dataset) ± 1 "
                  "s.e. Solid: the finite-D pool theory (replica.stationary with Problem(tasks=K): prompts Gaussian "
                  "given their context, replica.pool_finite), averaged over nested random pools with the Gaussian "
                  "theory as control variate; the band is ± 2 s.e. of that average. Dashed: the earlier theory "
                  "(Gaussian features × the fresh-task finite-D factor, law='factor'), which the acceptance test "
                  "rejects. Dotted: replica.asymptotic (D → ∞). The new theory passes through the exact points "
                  "within E/M + 3 s.e. on the acceptance grid (tests/replica/test_pool_finite.py); the baseline is "
                  "high at κ ≲ 1 (up to +5 % at κ = 0.5 here) and the D → ∞ formula is low by 5–20 % at D = 20.",
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
