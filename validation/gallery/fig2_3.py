"""Figures 2 and 3: stationary train and test errors against ``P`` (seed paper, Figs. 2–3; experiments
``stationary_N`` and ``stationary_D``, :mod:`validation.experiments.stationary`).

Fig. 2: ``N ∈ {10, 20, 50, 100}`` at ``D = 10``; Fig. 3: ``D ∈ {5, 10, 15, 20}`` at ``N = 100``;
``β = 10³``, ``λ = 0.01``, ``γ = 1``, full model (``Γ`` and ``v`` trained). Curves: the
replica-symmetric theory (``replica.stationary``); open markers: dataset-averaged exact Gibbs
averages; filled markers: Langevin simulations with the seed's protocol (10⁵ equilibration
steps, then 20 samples 5000 steps apart), averaged over datasets, ±1 s.e.
Quick mode: 20 datasets per exact marker and 3 simulated datasets per Langevin marker
(full: 100 and 10, with 4 chains each). With ``--store DIR`` every marker (and every simulated dataset)
is a resumable point of the experiment in ``DIR/<experiment>/<mode>``: a second call reads them instead
of recomputing, and the points can be run on a cluster.

The same results give the report's sections on the stationary physics (their points are stored in the result
beside the figure's, :mod:`validation.experiments.stationary`): ``stationary_N`` the sections ``langevin`` and
``transition``, ``stationary_D`` the section ``replica``.
"""
from __future__ import annotations

from ..experiments.stationary import sweeps_of
from . import panel_letters, register


def _draw(result, label):
    """Both panels (train, test) for every problem of ``result``; ``label`` (``"N"`` or ``"D"``) names the
    curves."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    results = sweeps_of(result)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    cmap = plt.get_cmap("Blues")
    for i, r in enumerate(results):
        color = cmap(0.35 + 0.6 * i / max(1, len(results) - 1))
        name = f"{label} = {r.N if label == 'N' else r.D}"
        for ax, th, ex, exse, sm, smse in ((axes[0], r.theory_train, r.exact_train, r.exact_train_se, r.sim_train,
                                             r.sim_train_se),
                                            (axes[1], r.theory_test, r.exact_test, r.exact_test_se, r.sim_test,
                                             r.sim_test_se)):
            ax.plot(r.P_theory, th, color=color, label=name)
            ax.errorbar(r.P_exact, ex, yerr=exse, fmt="o", mfc="none", color=color, ms=4, lw=0.8)
            ax.errorbar(r.P_sim, sm, yerr=smse, fmt="s", color=color, ms=4, lw=0.8)
    for ax, title in zip(axes, ("stationary training loss", "stationary test loss")):
        ax.set_xscale("log")
        ax.set_xlabel("task diversity P")
        ax.set_title(title)
    axes[0].set_ylabel(r"training loss $\langle E_t\rangle$")
    axes[1].set_ylabel(r"test loss $\langle E_g\rangle$")
    axes[1].set_yscale("log")
    h, l = axes[0].get_legend_handles_labels()
    h += [Line2D([], [], color="gray", marker="o", mfc="none", ls=""), Line2D([], [], color="gray", marker="s", ls="")]
    l += ["exact Gibbs, dataset average ± 1 s.e.", "Langevin simulation ± 1 s.e."]
    fig.legend(h, l, loc="lower center", ncol=len(l), fontsize=8, frameon=False)   # below the panels, off the data
    fig.suptitle(rf"linear attention, $\beta = 10^3$, $\lambda = {result.settings['lam']}$, $\gamma = 1$; "
                 "curves: replica theory")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    panel_letters(axes)
    return fig


@register("fig2", "Stationary train/test loss vs P for several N at D = 10 (theory, exact, Langevin)",
          caption="Seed paper, Fig. 2. Stationary training (a) and test (b) loss of the Gibbs measure against the task "
                  "diversity P, full model, β = 10³, λ = 0.01, γ = 1, D = 10, N ∈ {10, 20, 50, 100}. Lines: "
                  "replica-symmetric theory; open circles: exact Gibbs averages of 20 datasets (full: 100) ± 1 s.e.; "
                  "squares: Langevin simulations with the seed's protocol (10⁵ equilibration steps, 20 samples 5000 "
                  "steps apart) on 3 datasets (full: 10, 4 chains each) ± 1 s.e. over datasets (with 3 datasets the "
                  "s.e. is itself uncertain by about ±50 %, and a few markers lie 4–6 s.e. from the theory, by at most "
                  "≈ 12 %: N = 10, P = 100, training loss). Theory, exact averages and simulations share D, N, β, λ.",
          experiment="stationary_N", order=2)
def draw_fig2(result):
    return _draw(result, "N")


@register("fig3", "Stationary train/test loss vs P for several D at N = 100 (theory, exact, Langevin)",
          caption="Seed paper, Fig. 3. As Fig. 2 for D ∈ {5, 10, 15, 20} at N = 100: training (a) and test (b) loss; "
                  "replica-symmetric theory (lines), exact Gibbs averages of 20 datasets (full: 100; open circles) "
                  "± 1 s.e. and Langevin simulations on 3 datasets (full: 10, 4 chains each; squares) ± 1 s.e. over "
                  "datasets, β = 10³, λ = 0.01, γ = 1, full model. The exact averages follow the theory within their "
                  "errors; the Langevin test loss does too except where the curve is steepest and 3 datasets are "
                  "few: at D = 5, P = 30 it is 0.35 ± 0.01 against the theory's 0.28.",
          experiment="stationary_D", order=3)
def draw_fig3(result):
    return _draw(result, "D")
