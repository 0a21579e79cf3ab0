"""Ideal estimators of the Markov-chain task (Gibson, Cui & Reddy, arXiv:2604.12151): figure
``markov_estimators``, drawn from the experiment of the same name (:mod:`validation.experiments.markov_estimators`).

(a) ``K = ∞``: mean log-loss vs position of 1-gen (authors' ``β = α`` and ``β* = Cα + 1 − 1/C``), 2-gen, the
Monte Carlo Bayes predictor (first positions, drawn as 2-gen plus the paired difference) and the oracle; dotted:
``E H(row) = ψ(Cα+1) − ψ(α+1)`` and the stationary-weighted ``E_T[Σ_i π_i H(T_i·)]``. (b), (c) finite pools:
every estimator on the pool's chains (solid) and on fresh chains (dashed). (d) 2-gen excess over the oracle
(uniform first state), with the exact i.i.d. Dirichlet–multinomial formula at the realized visit counts and its
leading order ``(C − 1)/(2 N_x)``.
"""
from __future__ import annotations

import numpy as np

from . import panel_letters, register

COLORS = {"1-mem": "#1b9e77", "2-mem": "#d95f02", "1-gen": "#7570b3", "2-gen": "#e7298a", "bayes": "k",
          "true": "#999999", "1-gen*": "#66a61e"}


def plot(d):
    """The four panels from the arrays of experiment ``markov_estimators``."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), layout="constrained")
    n = d.positions + 1                 # log axis: position n + 1
    ax = axes[0, 0]
    fresh = d.fresh.losses
    for nm, lab in (("1-gen", "1-gen (β = α)"), ("1-gen*", "1-gen (β*)"), ("2-gen", "2-gen"), ("true", "oracle")):
        m, se = fresh.mean[nm], fresh.se[nm]
        ax.plot(n, m, color=COLORS[nm], lw=1.2, label=lab)
        ax.fill_between(n, m - 2 * se, m + 2 * se, color=COLORS[nm], alpha=0.2, lw=0)
    nb = np.arange(1, d.fresh.bayes_minus_2gen.size + 1)
    ax.errorbar(nb, fresh.mean["2-gen"][:nb.size] + d.fresh.bayes_minus_2gen, yerr=2 * d.fresh.bayes_minus_2gen_se,
                fmt="o", ms=2.5, color="k", lw=0.8, label="bayes (2-gen + paired MC difference)")
    ax.axhline(d.row_entropy, color="k", ls=":", lw=0.8, label="E H(row)")
    ax.axhline(d.weighted_entropy, color="C3", ls=":", lw=0.8, label="E Σ π_i H(T_i)")
    ax.set(xscale="log", xlabel="position n + 1", ylabel="mean log-loss (nats)", title="K = ∞ (fresh chains)")
    ax.legend(fontsize=7)
    for ax, K in zip((axes[0, 1], axes[1, 0]), list(d.pool)[:2]):
        for on, ls in (("pool", "-"), ("fresh", "--")):
            for nm in ("1-mem", "2-mem", "1-gen", "2-gen", "bayes", "true"):
                ax.plot(n, getattr(d.pool[K], f"on_{on}").mean[nm], color=COLORS[nm], ls=ls, lw=1.1,
                        label=nm if on == "pool" else None)
        ax.set(xscale="log", xlabel="position n + 1", ylabel="mean log-loss (nats)",
               title=f"K = {int(K)}: pool chains (solid), fresh chains (dashed)")
        ax.legend(fontsize=7)
    ax = axes[1, 1]
    m, se = d.uniform.excess, d.uniform.excess_se
    ax.plot(n, m, color=COLORS["2-gen"], lw=1.2, label="2-gen − oracle (simulation)")
    ax.fill_between(n, m - 2 * se, m + 2 * se, color=COLORS["2-gen"], alpha=0.2, lw=0)
    ax.plot(n, d.uniform.iid, color="k", lw=1, ls="--", label="exact i.i.d. formula at N_x")
    big = n >= 20                      # the leading order needs N_x ≫ 1
    ax.plot(n[big], d.uniform.lead[big], color="C0", lw=1, ls=":", label="(C − 1)/(2 N_x), n ≥ 20")
    ax.set(xscale="log", yscale="log", xlabel="position n + 1", ylabel="excess log-loss (nats)",
           title="2-gen excess, uniform first state")
    ax.legend(fontsize=7)
    panel_letters(axes.ravel())
    return fig


def _caption(result):
    s, d, m = result.settings, result.data, result.meta
    pools = " and ".join(f"K = {K}" for K in list(d.pool)[:2])
    return (f"Gibson, Cui & Reddy (arXiv:2604.12151) task: C = {m['C']} states, Dirichlet({m['concentration']:g}) "
            f"rows, first state stationary, L = {s['length']}. (a) fresh chains ({s['n_seq']} sequences): 1-gen with "
            "the authors' pseudocount α and with β* = Cα + 1 − 1/C, 2-gen, the Monte Carlo Bayes predictor (first "
            f"{s['L_bayes'] - 1} positions, {s['n_seq_bayes']} sequences, {s['n_mc']} posterior draws per position, "
            "drawn as 2-gen plus the paired mean difference; it uses the first state's law) and the oracle; dotted: "
            "E H(row) = ψ(Cα+1) − ψ(α+1) and the stationary-weighted E Σ π_i H(T_i). (b), (c) pools of "
            f"{pools} chains (mean over {s['n_pools']} pools of {s['n_seq_pool']} sequences; 2-mem is the authors' "
            "version, bayes includes p(x_0 | T_k)): on the pool's chains (solid) and on fresh chains (dashed). (d) "
            "2-gen excess over the oracle with a uniform first state against the exact i.i.d. Dirichlet–multinomial "
            "formula at the realized visit counts N_x and its leading order (C − 1)/(2 N_x). Bands: ±2 s.e.")


@register("markov_estimators", "Markov-chain ICL: ideal estimators vs position (K = ∞ and finite pools)",
          caption=_caption, experiment="markov_estimators", order=97)
def draw(result):
    """The figure from the result of experiment ``markov_estimators``."""
    return plot(result.data)
