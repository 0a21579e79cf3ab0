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

Each figure draws the result of the experiment of the same name (:mod:`validation.experiments._task_pools`;
its data class holds the arrays by name), and each caption is computed from that result.
"""
from __future__ import annotations

import numpy as np

from ..experiments._task_pools import FIG_NOISE, DoubleDescent, FiniteD, GTask, PoolPhase
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
    D = d.D
    for ax, name, title in ((axes[0], "icl", "fresh tasks (ICL)"), (axes[1], "idg", "pool tasks (IDG)")):
        for cur, col in zip(d.curves.values(), colors):
            ax.plot(d.sample_ratio_theory, getattr(cur, f"{name}_theory"), color=col, lw=1.5)
            ax.plot(d.sample_ratio_theory, getattr(cur, f"{name}_finite"), color=col, lw=1, ls="--")
            ax.errorbar(d.sample_ratio, getattr(cur, name), getattr(cur, f"{name}_se"), fmt="o", color=col, mfc="w",
                        ms=5, capsize=2)
        ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"prompts per parameter $\tau = P/D^2$")
        ax.set_ylabel(r"error $E$ ($=e/2$)")
        ax.set_title(title)
    panel_letters(axes)
    handles = _style_handles([(rf"$\alpha = N/D$ = {a:g}", c) for a, c in zip(d.curves, colors)],
                             [(r"$D \to \infty$ theory", dict(lw=1.5)),
                              (f"finite-D pool theory, D = {D}", dict(lw=1, ls="--")),
                              (f"exact average ± 1 s.e., D = {D}", dict(marker="o", mfc="w", ls="none")),
                              (r"$\tau = 1$", dict(color="0.6", lw=0.8, ls=":"))])
    fig.legend(handles=handles, loc="outside lower center", ncol=7, fontsize=8)
    fig.suptitle(rf"double descent at $\tau = 1$: $\kappa = K/D = {DoubleDescent.TASK_RATIO:g}$, "
                 rf"$\sigma^2 = {FIG_NOISE ** 2:g}$, ridge $\lambda_L = {DoubleDescent.RIDGE:g}$")
    return fig


def _double_descent_caption(result):
    s = result.settings
    return ("Beyond the seed (Lu et al., PNAS 2025, their Fig. 1). Fresh-task (a) and in-distribution (b) errors of "
            f"the ridge solution against τ = P/D² with a pool of K = {DoubleDescent.TASK_RATIO:g}·D tasks on the "
            f"sphere, σ² = {FIG_NOISE ** 2:g}, the peer's ridge λ_L = {DoubleDescent.RIDGE:g} (λ_L/D on Γ, λ_L on v), "
            f"for α = N/D ∈ {{{', '.join(f'{a:g}' for a in s['alpha'])}}} (colours). Solid: the D → ∞ theory "
            "(replica.asymptotic; IDG = −τ c_e). Dashed: the finite-D pool theory at the simulated D "
            "(replica.stationary with the pool: 1 pool plus the Gaussian theory as control variate, the same pools at "
            f"every τ). Circles: exact averages (replica.ridge, {s['n']} datasets per point) at D = {s['D']}, ± 1 s.e. "
            "Dotted: τ = 1; the peak there is the interpolation threshold.")


@register("pools_double_descent", "Task pools: double descent in τ = P/D² (ICL and IDG), κ = 0.5, α ∈ {1, 10, 100}",
          caption=_double_descent_caption, experiment="pools_double_descent", order=50)
def draw_double_descent(result):
    return plot_double_descent(result.data)


# ----------------------------------------------------------------------------- g_task against κ
def plot_gtask(d):
    """``g_task`` against ``κ``: ``D → ∞`` theory, finite-``D`` theory and exact averages at each simulated ``D``."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(d.task_ratio_theory, d.gtask_theory, color="k", lw=1.5, label=r"$D \to \infty$ theory")
    for (D, cur), col in zip(d.by_D.items(), ("#d95f02", "#1b9e77")):
        def actual(kappa, D=D):                     # the simulated pool has K = round(κD) tasks: draw at K/D
            return np.maximum(1, np.round(np.asarray(kappa) * D)) / D

        ax.plot(actual(d.task_ratio_theory), cur.finite, color=col, lw=1, ls="--",
                label=f"finite-D pool theory, D = {D}")
        ax.errorbar(actual(d.task_ratio), cur.mean, cur.se, fmt="o", color=col, mfc="w", ms=5, capsize=2,
                    label=f"exact average ± 1 s.e., D = {D}")
    ax.axvline(1.0, color="0.6", lw=0.8, ls=":", label=r"$\kappa = 1$ (K = D)")
    ax.set_xscale("log")
    ax.set_xlabel(r"task diversity $\kappa = K/D$ (pool size per dimension)")
    ax.set_ylabel(r"task-generalization gap $g_{\rm task} = E_{\rm ICL} - E_{\rm IDG}$")
    ax.set_title(rf"memorization $\to$ ICL: $\alpha = {GTask.CONTEXT_RATIO:g}$, $\tau = {GTask.SAMPLE_RATIO:g}$, "
                 rf"$\sigma^2 = {FIG_NOISE ** 2:g}$, $\lambda_L = {GTask.RIDGE:g}$")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _gtask_caption(result):
    s = result.settings
    kappa = [float(k) for k in s["kappa"]]
    sims = " and ".join(f"D = {D} ({n} datasets)" for D, n in zip(s["D"], s["n"]))
    return ("Beyond the seed (Lu et al., PNAS 2025, their Fig. 3). The task-generalization gap g_task = E_ICL − E_IDG "
            f"of the ridge solution against κ = K/D at α = {GTask.CONTEXT_RATIO:g}, τ = {GTask.SAMPLE_RATIO:g}, "
            f"σ² = {FIG_NOISE ** 2:g}, λ_L = {GTask.RIDGE:g} (sphere tasks). Black: the D → ∞ theory; dashed: the "
            f"finite-D pool theory at each simulated D, averaged over {s['n_pools']} nested random pool(s) (with its "
            "Gaussian control variate), on a κ grid that contains the simulated κ; theory and simulations are drawn "
            f"at the actual κ = K/D of the pool, K = round(κD); circles: exact averages at {sims}, ± 1 s.e., at "
            f"{len(kappa)} values of κ in [{min(kappa):g}, {max(kappa):g}]; dotted: κ = 1. For κ < 1 the model "
            "memorises the pool (large gap); past κ ≈ 1 it learns in context (gap → 0).")


@register("pools_gtask", "Task pools: g_task = E_ICL − E_IDG against κ (α = τ = 10), D = 32 and 64 vs theory",
          caption=_gtask_caption, experiment="pools_gtask", order=51)
def draw_gtask(result):
    return plot_gtask(result.data)


# ----------------------------------------------------------------------------- finite-D convergence
def plot_finite_d(d):
    """ICL (left) and IDG (right) errors against ``κ`` at each ``D`` (rows): exact averages, the finite-``D`` pool
    theory (± its pool-average s.e., a thin band), the earlier theory (baseline) and the ``D → ∞`` formula."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, axes = plt.subplots(len(d.by_D), 2, figsize=(10, 3.6 * len(d.by_D)), layout="constrained", squeeze=False)
    for row, (D, cur) in enumerate(d.by_D.items()):
        kth = cur.task_ratio_theory
        for col, (err, title) in enumerate((("icl", "fresh tasks (ICL)"), ("idg", "pool tasks (IDG)"))):
            ax = axes[row, col]
            mid, se = getattr(cur, f"theory_{err}"), getattr(cur, f"theory_{err}_se")
            ax.fill_between(kth, mid - 2 * se, mid + 2 * se, color="#1b9e77", alpha=0.3, lw=0)
            ax.plot(kth, mid, color="#1b9e77", lw=1.5, label="finite-D pool theory (± 2 s.e. of its pool average)")
            ax.plot(kth, getattr(cur, f"baseline_{err}"), color="#d95f02", lw=1, ls="--",
                    label="earlier theory: Gaussian × fresh-task factor (baseline)")
            ax.plot(d.task_ratio_asymptotic, getattr(d, f"asymptotic_{err}"), color="0.4", lw=1, ls=":",
                    label=r"$D \to \infty$ (Lu et al.)")
            exact = getattr(cur, f"exact_{err}")
            ax.errorbar(d.task_ratio[: exact.size], exact, getattr(cur, f"exact_{err}_se"), fmt="o", color="k",
                        mfc="w", ms=5, capsize=2, label="exact average ± 1 s.e.")
            ax.set_xscale("log")
            ax.set_xticks([0.2, 0.5, 1, 2, 5], labels=["0.2", "0.5", "1", "2", "5"])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(r"pool size per dimension $\kappa = K/D$")
            ax.set_ylabel(r"error $E$ ($= e/2$)")
            ax.set_title(f"D = {D}: {title}")
    panel_letters(axes.ravel())
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=8)
    fig.suptitle(rf"finite-D pool theory: $\alpha = N/D = {FiniteD.CONTEXT_RATIO:g}$, "
                 rf"$\tau = P/D^2 = {FiniteD.SAMPLE_RATIO:g}$, $\sigma^2 = {FIG_NOISE ** 2:g}$, "
                 rf"$\lambda = {FiniteD.RIDGE:g}/D$, Gaussian tasks, full model")
    return fig


def _span(values):
    """``"a–b %"`` of relative differences (signed), or ``"a %"`` when they agree to the digit."""
    lo, hi = (f"{100 * v:+.0f}".replace("-0", "+0") for v in (np.min(values), np.max(values)))
    return f"{lo} %" if lo == hi else f"{lo} to {hi} %"


def finite_d_summary(d):
    """What the caption of ``pools_finite_d`` says of the data ``d`` (:class:`FiniteDData`): per ``D``, how many
    exact averages the finite-``D`` theory meets within ``E/M + 3 s.e.`` (exact and theory s.e. combined, ``M`` the
    parameters of the full model), and the relative differences of the baseline and of the ``D → ∞`` formula
    (interpolated in ``log κ``) to the exact averages.

    Parameters
    ----------
    d : validation.experiments._task_pools.FiniteDData

    Returns
    -------
    list of dict
        One per ``D``: ``D``, ``passed``, ``total``, ``baseline`` and ``asymptotic`` (arrays over ``κ``, ICL then
        IDG).
    """
    import linattn

    rows = []
    for D, cur in d.by_D.items():
        M = linattn.Problem(D, int(FiniteD.CONTEXT_RATIO * D)).n_params("full")
        K_theory = np.round(cur.task_ratio_theory * D).astype(int)
        n_exact = cur.exact_icl.size
        at = [int(np.flatnonzero(K_theory == int(k * D))[0]) for k in d.task_ratio[:n_exact]]
        passed, base, asym = 0, [], []
        for err in ("icl", "idg"):
            m, se = getattr(cur, f"exact_{err}"), getattr(cur, f"exact_{err}_se")
            t, t_se = getattr(cur, f"theory_{err}")[at], getattr(cur, f"theory_{err}_se")[at]
            passed += int(np.sum(np.abs(t - m) <= m / M + 3 * np.hypot(se, t_se)))
            base.append(getattr(cur, f"baseline_{err}")[at] / m - 1)
            asym.append(np.interp(np.log(d.task_ratio[:n_exact]), np.log(d.task_ratio_asymptotic),
                                  getattr(d, f"asymptotic_{err}")) / m - 1)
        rows.append(dict(D=D, passed=passed, total=2 * n_exact, baseline=base, asymptotic=asym))
    return rows


def _finite_d_caption(result):
    s, d = result.settings, result.data
    counts = ", ".join(f"{n} at D = {D}" for D, n in zip(s["D"], s["n"]))
    rows = finite_d_summary(d)
    found = "; ".join(f"D = {r['D']}: {r['passed']} of {r['total']} exact points (ICL and IDG) within E/M + 3 s.e., "
                      f"baseline {_span(r['baseline'][0])} (ICL) and {_span(r['baseline'][1])} (IDG), D → ∞ formula "
                      f"{_span(r['asymptotic'][0])} (ICL) and {_span(r['asymptotic'][1])} (IDG)" for r in rows)
    return (f"Beyond the seed. ICL (left) and IDG (right) errors of the ridge solution against κ = K/D at "
            f"D ∈ {{{', '.join(str(D) for D in d.by_D)}}} (rows), α = N/D = {FiniteD.CONTEXT_RATIO:g}, "
            f"τ = P/D² = {FiniteD.SAMPLE_RATIO:g}, σ² = {FIG_NOISE ** 2:g}, λ = {FiniteD.RIDGE:g}/D on both blocks, "
            f"Gaussian tasks. Circles: exact averages ({counts} datasets; a new pool per dataset) ± 1 s.e. Solid: the "
            "finite-D pool theory (replica.stationary with Problem(tasks=K): prompts Gaussian given their context), "
            f"averaged over {s['n_pools']} nested random pools with the Gaussian theory as "
            "control variate; the band is ± 2 s.e. of that average. Dashed: the earlier theory (Gaussian features × "
            "the fresh-task finite-D factor, law='factor'), which the acceptance test rejects. Dotted: "
            "replica.asymptotic (D → ∞). Relative to the exact averages, over the simulated κ (the D → ∞ formula "
            f"interpolated in log κ): {found}.")


@register("pools_finite_d",
          "Task pools at finite D: the finite-D pool theory vs exact averages vs D → ∞ over κ, D = 20 and 40",
          caption=_finite_d_caption, experiment="pools_finite_d", order=52)
def draw_finite_d(result):
    return plot_finite_d(result.data)


# ----------------------------------------------------------------------------- (P, K) phase diagram
def plot_phase(d):
    """The ``(P, K)`` diagram: (a) ``log10(1 + ΔEr)`` with the ``ΔEr = 5`` contour, (b) ``g_task/E_ICL``."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    Ps, Ks = d.P, d.K
    ylab = [str(k) for k in Ks] + ["∞"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    y = np.arange(Ks.size + 1)
    x = np.arange(Ps.size)
    inside = Ps <= Ks[-1]                                   # the diagonal K = P where the pool grid reaches it
    panels = ((axes[0], np.log10(1.0 + d.gap), r"$\log_{10}(1 + \Delta E_r)$ (fresh-task error)", "magma",
               -0.3, 3.0),
              (axes[1], d.gtask_rel, r"$g_{\rm task}/E_{\rm ICL} = 1 - E_{\rm IDG}/E_{\rm ICL}$", "viridis",
               0.0, 1.0))
    for ax, z, lab, cmap, vmin, vmax in panels:
        im = ax.pcolormesh(np.arange(Ps.size + 1) - 0.5, np.arange(Ks.size + 2) - 0.5, z, cmap=cmap, vmin=vmin,
                           vmax=vmax)
        if ax is axes[0]:
            ax.contour(x, y, d.gap, levels=[5.0], colors="#2ecc71", linewidths=1.5)
        ax.set_xticks(x)
        ax.set_xticklabels([str(p) for p in Ps], rotation=60, fontsize=7)
        ax.set_yticks(y)
        ax.set_yticklabels(ylab, fontsize=7)
        ax.axhline(np.searchsorted(Ks, PoolPhase.D) - 0.5, color="w", lw=0.8, ls="--")   # K = D (κ = 1)
        kk = np.interp(np.log(Ps[inside]), np.log(Ks), np.arange(Ks.size))          # the diagonal K = P
        ax.plot(x[inside], kk, color="w", lw=0.8, ls=":")
        ax.set_xlabel("number of training prompts P")
        ax.set_ylabel("task-pool size K (∞: a fresh task per prompt)")
        ax.grid(False)
        fig.colorbar(im, ax=ax, label=lab)
    if np.isfinite(d.P_star_theory):
        axes[0].plot(np.interp(np.log(d.P_star_theory), np.log(Ps), x), Ks.size, "*", color="#2ecc71", ms=12,
                     mec="k")
    panel_letters(axes)
    handles = [Line2D([], [], color="#2ecc71", lw=1.5, label=r"(a) $\Delta E_r = 5$ (exact averages)"),
               Line2D([], [], color="#2ecc71", marker="*", mec="k", ms=12, ls="none",
                      label="(a) replica P* for fresh tasks"),
               Line2D([], [], color="0.3", lw=0.8, ls="--", label=r"K = D ($\kappa = 1$)"),
               Line2D([], [], color="0.3", lw=0.8, ls=":", label="K = P")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8)
    fig.suptitle(rf"D = {PoolPhase.D}, N = {PoolPhase.N}, $\lambda$ = {PoolPhase.LAM:g}, full model, long-time limit")
    return fig


def _phase_caption(result):
    return (f"Beyond the seed. Exact dataset averages ({result.settings['n']} datasets per cell) of the ridge solution "
            f"at D = {PoolPhase.D}, N = {PoolPhase.N}, λ = {PoolPhase.LAM:g} (full model, the seed's long-time limit) "
            "over the number of prompts P and the pool size K (top row: a fresh task per prompt, the seed's setting). "
            "(a) log10(1 + ΔEr) with ΔEr = (⟨E_ICL⟩ − ⟨E_t⟩)/⟨E_t⟩ (ratio of the dataset means); green contour "
            "ΔEr = 5, star: the replica theory's P* for fresh tasks. (b) The relative task-generalization gap "
            "1 − ⟨E_IDG⟩/⟨E_ICL⟩ (0 by definition in the top row). White dashed: K = D (κ = 1); white dotted: K = P "
            "(a pool as large as the data: every prompt nearly its own task, the seed's regime), drawn up to the "
            "largest finite K. Each cell is a mean over its datasets; the standard errors of the cells are not shown.")


@register("pools_phase", "Task pools: (P, K) phase diagram at D = 10 linking the seed's ΔEr = 5 transition to κ ≈ 1",
          caption=_phase_caption, experiment="pools_phase", order=53)
def draw_phase(result):
    return plot_phase(result.data)
