"""Diagnostics of nonlinear transformers (optional extra ``[torch]``; Mainali & Teixeira, seed paper).

``icl_emergence``: attention-only transformers of 1 and 2 layers (3 in full mode) on in-context copying and
in-context linear regression — loss, marginalised effective rank and subspace distance of the QK circuits.
``grokking``: one-layer transformer on modular addition — train/test accuracy and the OV (and QK)
subspace distance to the final weights.

Both are registered with ``requires="torch"``: without torch :func:`validation.gallery.make` skips them with a
message (they write nothing); everything else runs. The experiments are in
:mod:`validation.experiments.transformers`.
"""
from __future__ import annotations

import numpy as np

from . import register


def _emergence_caption(result):
    s = result.settings
    depths = " and ".join(str(L) for L in s["depths"])
    copy, reg = s["copy"], s["regression"]
    return ("Needs the optional extra [torch] (skipped without it). Attention-only transformers (causal softmax "
            f"attention, 4 heads, d_model = 32, no MLP) of {depths} layers, Adam lr 1e-3, batch 64, fresh data every "
            f"step, {len(s['seeds'])} seeds. Top row: in-context copying (blocks of distinct tokens from a vocabulary "
            f"of {copy['vocab']} repeated with a random period {max(2, copy['half'] // 2)}…{copy['half']}; loss on the "
            f"predictable tokens; {copy['steps']} steps). Bottom row: in-context linear regression with the library's "
            f"prompts (D = {reg['D']}, N = {reg['N']}; {reg['steps']} steps; dotted: E_g of the best linear "
            "attention). (a) loss; (b) marginalised effective rank of QK_h (top singular value removed, mean over "
            "heads) per layer; (c) subspace distance of QK_h(t) to its final value (mean over heads). Markers: the "
            "step at which each curve is half-way from its first to its last value (mean ± sd over seeds).")


@register("icl_emergence", "Attention-only transformers: loss, marginalised effective rank and subspace distance of QK",
          requires="torch", caption=_emergence_caption, experiment="icl_emergence", order=60)
def draw_icl_emergence(result):
    return _plot_emergence(result.data)


def _mean_sd(x):
    return x.mean(0), (x.std(0, ddof=1) if x.shape[0] > 1 else np.zeros(x.shape[1:]))


def _plot_emergence(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    styles = ["-", "--", ":", "-."]
    for row, (task, td) in enumerate(d.by_task.items()):
        t = td.steps
        for i, (L, dep) in enumerate(td.depths.items()):
            c = f"C{i}"
            m, sd = _mean_sd(dep.loss)
            ax = axes[row, 0]
            ax.plot(t, m, color=c, label=f"{L} layer{'s' if L > 1 else ''}")
            ax.fill_between(t, m - sd, m + sd, color=c, alpha=0.2, lw=0)
            ls = dep.loss_step
            for ax in axes[row]:
                ax.axvline(ls.mean(), color=c, lw=0.8, alpha=0.6)
            for layer in range(L):
                for col, key in ((1, "marginalised"), (2, "distance")):
                    m, sd = _mean_sd(getattr(dep, key)[:, :, layer])
                    ax = axes[row, col]
                    ax.plot(t, m, color=c, ls=styles[layer], label=f"L={L}, layer {layer + 1}")
                    ax.fill_between(t, m - sd, m + sd, color=c, alpha=0.15, lw=0)
                ds = dep.distance_step[:, layer]
                y = np.interp(ds.mean(), t, dep.distance[:, :, layer].mean(0))
                axes[row, 2].errorbar([ds.mean()], [y], xerr=[ds.std(ddof=1) if ds.size > 1 else 0.0], fmt="o",
                                      color=c, ms=4)
        if task == "regression":
            axes[row, 0].axhline(td.baseline, color="k", ls=":", lw=1, label="best linear attention")
        axes[row, 0].set_yscale("log")
        axes[row, 0].set_ylabel(f"{task}: training loss")
        axes[row, 1].set_ylabel("marginalised effective rank of QK")
        axes[row, 2].set_ylabel("subspace distance of QK to final")
        for ax in axes[row]:
            ax.set_xscale("log")
            ax.set_xlabel("step")
            ax.legend(fontsize=7)
    axes[0, 0].set_title("(a) loss (vertical: loss half-way step)")
    axes[0, 1].set_title("(b) marginalised effective rank")
    axes[0, 2].set_title("(c) subspace distance (dots: half-way step)")
    fig.tight_layout()
    return fig


def _grokking_caption(result):
    s = result.settings
    return (f"Needs the optional extra [torch] (skipped without it). One-layer transformer (4 heads, d_model = "
            f"{s['d_model']}, ReLU MLP {s['mlp']}) on (a + b) mod {s['p']}, half of the pairs for training, full-batch "
            f"AdamW (lr 3e-3, weight decay 1, betas 0.9/0.98), {s['steps']} steps, {len(s['seeds'])} seed(s). (a) "
            "train and test accuracy; (b) subspace distance of the OV circuits (mean over heads) and of the QK "
            "circuits to their final values, with the marginalised effective rank of OV on the right axis (grey); "
            "verticals: the steps at which the train accuracy first reaches 0.99 (memorised) and the test accuracy "
            "0.9 (generalised), seed means. The test accuracy sits near 0.5 while memorising: the mirror (b, a) of "
            "half the test pairs is a training pair.")


@register("grokking", "Grokking in modular addition: train/test accuracy and the OV subspace distance",
          requires="torch", caption=_grokking_caption, experiment="grokking", order=61)
def draw_grokking(result):
    return _plot_grokking(result.data)


def _plot_grokking(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    t = d.steps
    ax = axes[0]
    for i in range(d.train_acc.shape[0]):
        ax.plot(t, d.train_acc[i], color="C0", lw=1, label="train" if i == 0 else None)
        ax.plot(t, d.test_acc[i], color="C3", lw=1, label="test" if i == 0 else None)
    ax.set_ylabel("accuracy")
    ax = axes[1]
    for i in range(d.ov_distance.shape[0]):
        ax.plot(t, d.ov_distance[i], color="C2", label="OV distance" if i == 0 else None)
        ax.plot(t, d.qk_distance[i], color="C1", ls="--", label="QK distance" if i == 0 else None)
    ax.set_ylabel("subspace distance to final")
    tw = ax.twinx()
    for i in range(d.ov_marginalised.shape[0]):
        tw.plot(t, d.ov_marginalised[i], color="0.5", lw=0.8, label="OV marginalised erank" if i == 0 else None)
    tw.set_ylabel("marginalised effective rank of OV", color="0.4")
    for ax in axes:
        for key, c in (("train_half", "C0"), ("test_half", "C3")):
            v = getattr(d, key)[np.isfinite(getattr(d, key))]
            if v.size:
                ax.axvline(v.mean(), color=c, ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("step")
        ax.legend(fontsize=7, loc="center left")
    axes[0].set_title("(a) modular addition: accuracy")
    axes[1].set_title("(b) circuits: subspace distance to the final weights")
    fig.tight_layout()
    return fig
