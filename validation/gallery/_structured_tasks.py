"""Structured (low-rank) tasks (Takanami, Takahashi & Kabashima, arXiv:2510.04548): figure ``structured_tasks``.

Four panels of the result of experiment ``structured_tasks`` (:mod:`validation.experiments._structured_tasks`):
(a) fresh rank-``r`` tasks: train, test (fresh tasks of the training law) and test_odg (isotropic tasks of the same
power) against ``P``, the finite-``D`` theory and exact ridge averages, with the isotropic problem as the baseline;
(b) a pool of ``K`` tasks drawn from the low-rank law: the same and the in-distribution error test_idg; (c) the
test error against ``P/(rD)`` (a tiny ridge) at a long and a short context (the transition at ``P = rD``); (d) the
implicit ridge ``κ`` of the mean solution against ``P``. The caption is computed from the result drawn.
"""
from __future__ import annotations

import numpy as np

from ..experiments._structured_tasks import sigma_parallel
from . import panel_letters, register

#: colours of the errors
COLORS = {"train": "#1f4e9c", "test": "#c0392b", "test_odg": "#e67e22", "test_idg": "#27ae60"}
LABELS = {"train": "train (weight decay incl.)", "test": "test: fresh tasks ~ N(0, S)",
          "test_odg": "test_odg: fresh isotropic tasks, same power", "test_idg": "test_idg: the pool's tasks"}


def _protocol(ax, cur, d, names, title):
    for name in names:
        col = COLORS[name]
        ax.plot(cur.P_theory, getattr(cur, "theory_" + name), color=col, lw=1.4)
        ax.errorbar(cur.P, getattr(cur, name), getattr(cur, name + "_se"), fmt="o", color=col, mfc="w", ms=4.5,
                    capsize=2, label=LABELS[name])
    ax.axhline(0.5 * (1 + d.noise**2), color="0.5", lw=0.8, ls=":", label="zero predictor ½(1 + σ²)")
    for x, lab in ((d.rank * d.D, "P = rD"), (d.D * d.D, "P = D² = M")):
        ax.axvline(x, color="0.75", lw=0.8, ls="--")
        ax.text(x, 0.4, lab, rotation=90, va="bottom", ha="right", fontsize=7, color="0.4",
                transform=ax.get_xaxis_transform())
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.45 * max(float(np.max(getattr(cur, "theory_" + n))) for n in names))   # room for the legend
    ax.set_xlabel("training prompts P (task diversity)")
    ax.set_ylabel("error")
    ax.set_title(title, fontsize=10)


def draw_structured(result):
    """The four panels (module docstring)."""
    import matplotlib.pyplot as plt

    d = result.data
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.4), layout="constrained")
    ax = axes[0, 0]
    _protocol(ax, d.fresh, d, ("train", "test", "test_odg"), f"(fresh tasks) rank r = {d.rank}, D = {d.D}, N = {d.N}")
    iso = d.isotropic
    ax.plot(iso.P_theory, iso.theory_test, color="0.35", lw=1.2, ls="-.", label="isotropic S = I: theory (test)")
    ax.errorbar(iso.P, iso.test, iso.test_se, fmt="s", color="0.35", mfc="w", ms=4, capsize=2,
                label="isotropic S = I: exact (test)")
    ax.legend(fontsize=6.5, loc="upper center", ncol=2)
    _protocol(axes[0, 1], d.pool, d, ("train", "test", "test_idg", "test_odg"),
              f"(pool) K = {d.pool_size} tasks from N(0, S), rank r = {d.rank}")
    axes[0, 1].legend(fontsize=6.5, loc="upper center", ncol=2)
    ax = axes[1, 0]
    for (rank, cur), col in zip(d.transition.items(), ("#8e44ad", "#16a085")):
        ax.plot(cur.ratio, cur.theory_long, color=col, lw=1.4, label=f"r = {rank}, N = {d.transition_N}: theory")
        ax.errorbar(cur.ratio, cur.exact_long, cur.exact_long_se, fmt="o", color=col, mfc="w", ms=4.5, capsize=2,
                    label=f"r = {rank}, N = {d.transition_N}: exact")
        ax.errorbar(cur.ratio, cur.exact_short, cur.exact_short_se, fmt="^--", color=col, ms=4, capsize=2, lw=0.8,
                    alpha=0.8, label=f"r = {rank}, N = {d.N}: exact")
    ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
    ax.set_xlabel("task diversity per rank P/(rD)")
    ax.set_ylabel(f"test error (λ = {next(iter(d.transition.values())).lam:g})")
    ax.set_title("(transition) the rank-r block interpolated at P = rD", fontsize=10)
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    imp = d.implicit
    ax.plot(d.fresh.P_theory, imp.finite, color="k", lw=1.4, label="finite-D theory (mean Θ̄)")
    ax.plot(imp.P_gaussian, imp.gaussian, color="k", lw=1, ls="--", label="Gaussian-feature theory (D → ∞ form)")
    ax.errorbar(imp.P, imp.measured, imp.measured_se, fmt="o", color=COLORS["test"], mfc="w", ms=4.5, capsize=2,
                label="measured: mean of the exact ridge solutions")
    ax.axhline(d.lam, color="0.5", lw=0.8, ls=":", label=f"weight decay λ = {d.lam:g}")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("training prompts P")
    ax.set_ylabel(r"effective ridge $\kappa$ ($\bar\Gamma = P_A/(r(\sigma_\parallel + \kappa))$)")
    ax.set_title(f"(implicit regularisation) σ_∥ = {sigma_parallel(d.D, d.N, d.rank):.3g}", fontsize=10)
    ax.legend(fontsize=7)
    panel_letters(axes.ravel())
    fig.suptitle("Low-rank tasks w = √(D/r) A v (Takanami, Takahashi & Kabashima): exact ridge averages vs the "
                 "finite-D theory", fontsize=11)
    return fig


def _worst(cur, names):
    """The largest relative difference of theory and exact average over the names and the ``P`` both have."""
    worst = 0.0
    for name in names:
        for i, P in enumerate(cur.P):
            j = np.flatnonzero(cur.P_theory == P)
            if j.size:
                worst = max(worst, abs(getattr(cur, "theory_" + name)[j[0]] / getattr(cur, name)[i] - 1))
    return worst


def _caption(result):
    s, d = result.settings, result.data
    fr, pl, imp = d.fresh, d.pool, d.implicit
    over = d.isotropic_theory_on_fresh / fr.test - 1
    zero = 0.5 * (1 + d.noise**2)
    k_small, k_big = int(np.argmin(imp.P)), int(np.argmax(imp.P))
    j_small = int(np.argmin(np.abs(fr.P_theory - imp.P[k_small])))
    g_small = float(np.interp(np.log(imp.P[k_small]), np.log(imp.P_gaussian), imp.gaussian))
    peaks = []
    for rank, cur in d.transition.items():
        k1, lo, hi = (int(np.argmin(np.abs(cur.ratio - x))) for x in (1.0, 0.5, 2.0))
        peaks.append(f"r = {rank}: {cur.exact_long[k1]:.2f} ± {cur.exact_long_se[k1]:.2f} at P = rD against "
                     f"{cur.exact_long[lo]:.2f} at P = rD/2 and {cur.exact_long[hi]:.2f} at 2rD (N = {d.transition_N}; "
                     f"theory {cur.theory_long[k1]:.2f} at rD), and {cur.exact_short[k1]:.2f} against "
                     f"{cur.exact_short[lo]:.2f} at rD/2 for N = {d.N}")
    return ("Beyond the seed (Takanami, Takahashi & Kabashima, arXiv:2510.04548). Tasks w = √(D/r) A v, A ∈ R^{D×r} "
            f"orthonormal, i.e. w ~ N(0, S) with S = (D/r) A Aᵀ (tr S = D); D = {d.D}, N = {d.N}, σ = {d.noise:g}, "
            f"λ = {d.lam:g}, reduced model, ridge solutions (β = ∞). Lines: the finite-D theory "
            f"(replica.stationary with task_covariance, {s['n_pools']} Sobol scramblings or pools); markers: exact "
            f"averages of {s['n']} ridge solutions (replica.ridge) ± 1 s.e., a new pool per dataset; dotted: the zero "
            f"predictor ½(1 + σ²) = {zero:.4g}. (a) Fresh rank-{d.rank} tasks: the theory is within "
            f"{_worst(fr, ('train', 'test', 'test_odg')):.1%} of every exact average; from P = {fr.P[0]:g} to "
            f"{fr.P[-1]:g} the test error on fresh low-rank tasks goes from {fr.test[0]:.3g} to {fr.test[-1]:.3g} "
            "while "
            f"the error on isotropic tasks of the same power (test_odg) stays between {fr.test_odg.min():.3g} and "
            f"{fr.test_odg.max():.3g}: the trained Γ projects on the span of S. Grey: the isotropic problem S = I, "
            f"whose theory misses the rank-{d.rank} test error by {over.min():+.0%} … {over.max():+.0%}. (b) A pool of "
            f"K = {d.pool_size} tasks drawn from N(0, S), the three protocols (test_idg on the pool's tasks, test on "
            "fresh low-rank tasks, test_odg on isotropic tasks): the theory is within "
            f"{_worst(pl, ('train', 'test', 'test_odg', 'test_idg')):.1%}. (c) Test error at "
            f"λ = {next(iter(d.transition.values())).lam:g} ({s['transition_n']} datasets) against P/(rD): "
            f"{'; '.join(peaks)}. The peak sits where the rank-r block (rD parameters) is interpolated; at the short "
            "context the context noise (1 + σ²)/N acts as a ridge and smooths it. (d) Implicit regularisation: the "
            "mean ridge solution is Γ̄ = P_A/(r(σ_∥ + κ)) on the span of S, so finite P acts as the extra ridge κ − λ: "
            f"measured κ = {imp.measured[k_small]:.3g} ± {imp.measured_se[k_small]:.1g} at P = {imp.P[k_small]:g} "
            f"(finite theory {imp.finite[j_small]:.3g}, Gaussian-feature theory {g_small:.3g}; λ = {d.lam:g}) and "
            f"{imp.measured[k_big]:.2g} ± {imp.measured_se[k_big]:.1g} at P = {imp.P[k_big]:g}.")


@register("structured_tasks", "Structured (low-rank) tasks: three protocols, implicit ridge, transition at P = rD",
          caption=_caption, experiment="structured_tasks", order=54)
def draw(result):
    return draw_structured(result)
