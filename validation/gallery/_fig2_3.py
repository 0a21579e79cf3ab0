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

import numpy as np

from ..experiments._stationary import sweeps_of
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


def markers_vs_theory(result, label):
    """How far the markers of ``result`` lie from the theory curve (interpolated in ``log P`` at each marker): per
    kind of marker (``"exact"``, ``"Langevin"``), the number within 3 s.e., the total, and the marker farthest in
    units of its s.e. (``label``: ``"N"`` or ``"D"``, what the curves vary).

    Parameters
    ----------
    result : validation.experiments.Result
        Of ``stationary_N`` or ``stationary_D``.
    label : {"N", "D"}

    Returns
    -------
    dict of str to dict
        ``{kind: dict(within=int, total=int, z=float, rel=float, value=int, P=int, loss=str, sim=float, se=float,
        theory=float)}``.
    """
    out = {}
    for kind, prefix in (("exact", "exact"), ("Langevin", "sim")):
        rows = []
        for r in sweeps_of(result):
            P = getattr(r, f"P_{prefix}")
            for loss in ("train", "test"):
                m, se = getattr(r, f"{prefix}_{loss}"), getattr(r, f"{prefix}_{loss}_se")
                th = np.interp(np.log(P), np.log(r.P_theory), getattr(r, f"theory_{loss}"))
                rows += [dict(z=abs(a - t) / e, rel=a / t - 1, value=r.N if label == "N" else r.D, P=int(p), loss=loss,
                              sim=a, se=e, theory=t) for a, e, t, p in zip(m, se, th, P)]
        worst = max(rows, key=lambda x: x["z"])
        out[kind] = dict(worst, within=sum(x["z"] <= 3 for x in rows), total=len(rows))
    return out


def _caption(result, label):
    s = result.settings
    sweeps = sweeps_of(result)
    fixed = f"D = {sweeps[0].D}" if label == "N" else f"N = {sweeps[0].N}"
    values = ", ".join(str(r.N if label == "N" else r.D) for r in sweeps)
    lkw = {"n_chains": 1, **(s["langevin_kw"] or {})}
    found = markers_vs_theory(result, label)
    words = "; ".join(f"{kind}: {w['within']} of {w['total']} markers within 3 s.e. of the theory, the farthest "
                      f"{w['z']:.1f} s.e. ({w['rel']:+.1%}: {w['sim']:.3g} ± {w['se']:.1g} against {w['theory']:.3g}) "
                      f"at {label} = {w['value']}, P = {w['P']}, {w['loss']} loss" for kind, w in found.items())
    return ("Seed paper, Fig. " + ("2" if label == "N" else "3") + ". Stationary training (a) and test (b) loss of "
            f"the Gibbs measure against the task diversity P, {s['model']} model, β = {s['beta']:g}, λ = {s['lam']:g}, "
            f"γ = 1, {fixed}, {label} ∈ {{{values}}}. Lines: replica-symmetric theory; open circles: exact Gibbs "
            f"averages of {s['n_exact']} datasets ± 1 s.e.; squares: Langevin simulations with the seed's protocol "
            f"(10⁵ equilibration steps, 20 samples 5000 steps apart) on {s['n_sim']} datasets ({lkw['n_chains']} "
            f"chain(s) each) ± 1 s.e. over datasets (with few datasets the s.e. is itself uncertain: ±1/√(2(n − 1)), "
            f"±{100 / np.sqrt(2 * (s['n_sim'] - 1)):.0f} % here). Theory, exact averages and simulations share D, N, "
            f"β, λ. Markers against the theory (interpolated in log P): {words}.")


@register("fig2", "Stationary train/test loss vs P for several N at D = 10 (theory, exact, Langevin)",
          caption=lambda result: _caption(result, "N"), experiment="stationary_N", order=2)
def draw_fig2(result):
    return _draw(result, "N")


@register("fig3", "Stationary train/test loss vs P for several D at N = 100 (theory, exact, Langevin)",
          caption=lambda result: _caption(result, "D"), experiment="stationary_D", order=3)
def draw_fig3(result):
    return _draw(result, "D")
