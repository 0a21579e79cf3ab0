"""A two-layer transformer on ``K`` random Markov chains (optional extra ``[torch]``; Gibson, Cui & Reddy,
arXiv:2604.12151): figure ``markov_transformer`` from experiment ``markov_transformer``
(:mod:`validation.experiments.markov_transformer`).

(a)–(c) per-position losses of the trained model beside the ideal estimators (1-mem, 2-mem, 1-gen, 2-gen, Bayes);
(d) order parameters along training (layer-1 previous-token attention, layer-2 induction attention);
(e) position-averaged ``KL(estimator ‖ model)`` along training; (f) the phase diagram over ``K × L``.
Registered with ``requires="torch"``: skipped with a message without torch.
"""
from __future__ import annotations

import numpy as np

from . import register

COLORS = {"1-mem": "#1f77b4", "2-mem": "#17becf", "1-gen": "#ff7f0e", "2-gen": "#d62728", "bayes": "0.35"}


def _run(d, label, L, seed):
    """The run of pool-size label ``label`` (``"inf"`` or the number) of the data ``d``."""
    return d.run(None if label == "inf" else int(label), L, seed)


def _losses(ax, run, kind, estimators, title):
    model = getattr(run, f"loss_{kind}")[-1]
    t = np.arange(1, model.size + 1)
    for i, n in enumerate(estimators):
        v = getattr(run, f"est_loss_{kind}")[i]
        if np.all(np.isfinite(v)):
            ax.plot(t, v, color=COLORS[n], lw=1.2, ls=":" if n == "bayes" else "-", label=n)
    ax.plot(t, model, color="k", lw=2.0, label="transformer")
    ax.set_xlabel("position t (context x_0 … x_{t−1})")
    ax.set_ylabel("loss (nats)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def plot(d, meta):
    """The six panels (module docstring) from the arrays ``d`` and metadata ``meta`` of the experiment."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    phases, est = meta["phases"], meta["estimators"]
    labels, Ls, seed = meta["K_labels"], list(meta["lengths"]), meta["seeds"][0]
    L = max(Ls)
    finite = [k for k in labels if k != "inf"]
    kmin = finite[0] if finite else labels[0]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
    _losses(axes[0, 0], _run(d, kmin, L, seed), "pool", est, f"(a) K = {kmin}, L = {L}: pool sequences")
    _losses(axes[0, 1], _run(d, kmin, L, seed), "fresh", est, f"(b) K = {kmin}, L = {L}: fresh chains")
    big = "inf" if "inf" in labels else labels[-1]
    _losses(axes[0, 2], _run(d, big, L, seed), "fresh", est, f"(c) K = {'∞' if big == 'inf' else big}, L = {L}: "
                                                                 "fresh chains")
    ax = axes[1, 0]
    shown = labels if len(labels) <= 4 else [labels[0], labels[len(labels) // 2], labels[-2], labels[-1]]
    for i, k in enumerate(shown):
        run = _run(d, k, L, seed)
        name = "∞" if k == "inf" else k
        ax.plot(run.steps, run.pta, color=f"C{i}", label=f"K = {name}: previous-token (layer 1)")
        ax.plot(run.steps, run.iha_total, color=f"C{i}", ls="--", label=f"K = {name}: induction (layer 2)")
    ax.set_xlabel("step")
    ax.set_ylabel("attention weight")
    ax.set_title(f"(d) order parameters, L = {L}", fontsize=9)
    ax.legend(fontsize=6)
    ax = axes[1, 1]
    for k, ls in ((kmin, "-"), (big, "--")):
        run = _run(d, k, L, seed)
        kl = run.kl_pool.mean(-1)                                     # (R, estimators)
        for i, n in enumerate(est[: len(phases)]):
            if np.all(np.isfinite(kl[:, i])):
                ax.plot(run.steps, kl[:, i], color=COLORS[n], ls=ls,
                        label=f"K = {'∞' if k == 'inf' else k}: {n}")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("position-averaged KL(estimator ‖ model)")
    ax.set_title(f"(e) divergences along training, L = {L} (pool sequences)", fontsize=9)
    ax.legend(fontsize=6)
    ax = axes[1, 2]
    grid = d.phase_grid[:, :, 0].T                                      # (lengths, K)
    cmap = ListedColormap([COLORS[p] for p in phases])
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(phases) - 0.5, origin="lower", aspect="auto")
    for (i, j), v in np.ndenumerate(grid):
        ax.text(j, i, phases[int(v)], ha="center", va="center", fontsize=7, color="w")
    ax.set_xticks(range(len(labels)), ["∞" if k == "inf" else k for k in labels])
    ax.set_yticks(range(len(Ls)), [str(x) for x in Ls])
    ax.set_xlabel("pool size K")
    ax.set_ylabel("sequence length L")
    ax.set_title(f"(f) phase (seed {seed}): smallest KL(estimator ‖ model)", fontsize=9)
    fig.suptitle(f"C = {meta['C']}, α = {meta['concentration']}, d = {meta['d_model']}, {meta['steps']} AdamW steps "
                 f"(lr {meta['lr']}, batch {meta['batch']}), {meta['positions']} positions")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


def _caption(result):
    s = result.settings
    K = ", ".join("∞" if k is None else str(k) for k in s["K"])
    return ("Needs the optional extra [torch] (skipped without it). A transformer of two [attention, MLP] blocks "
            f"(single head, d = {s['d_model']}, {s['positions']} positions, pre-LayerNorm; the architecture of Gibson, "
            f"Cui & Reddy, arXiv:2604.12151, scaled down) trained online with AdamW (lr {s['lr']:g}, batch "
            f"{s['batch']}, {s['steps']} steps) on sequences of L ∈ {{{', '.join(str(x) for x in s['lengths'])}}} "
            f"states of C = {s['C']}-state Markov chains with Dirichlet({s['concentration']:g}) rows, drawn from a "
            f"pool of K ∈ {{{K}}} chains (K = ∞: a fresh chain per sequence). (a)–(c) per-position next-state loss of "
            "the trained model (black) beside the ideal estimators 1-mem, 2-mem (retrieval from the pool with unigram "
            "/ bigram likelihoods), 1-gen, 2-gen (unigram / bigram counts with pseudocount α) and the Bayes predictor "
            f"(dotted), on {s['n_eval']} sequences from the pool and {s['n_eval']} from fresh chains. (d) order "
            "parameters: mean layer-1 attention on the previous position (solid) and layer-2 attention on the keys "
            "whose previous state equals the query's state (dashed). (e) position-averaged KL(estimator ‖ model) "
            "along training for the smallest K (solid) and K = ∞ (dashed). (f) the phase of each run: the estimator "
            "with the smallest position-averaged KL at the end.")


@register("markov_transformer", "A two-layer transformer on K Markov chains: losses beside the estimators, "
                                "order parameters and the phase diagram",
          requires="torch", caption=_caption, experiment="markov_transformer", order=62)
def draw_markov_transformer(result):
    return plot(result.data, {**result.settings, **result.meta})
