"""Point the training diagnostics at your own transformer's checkpoints.

    python examples/diagnose_your_checkpoints.py                 # demo: trains a small model, saves checkpoints
    python examples/diagnose_your_checkpoints.py CKPT_DIR --prefix "blocks.{l}.attn." --heads 8 --layers 6

Checkpoints are a folder of ``*.pt``/``*.pth`` state_dicts (needs torch) or ``*.npz`` files, one per training step
with the step in the file name (``ckpt_001000.pt``). Adapt ``circuits()`` to your weight names: the diagnostics only
need the matrices, as numpy arrays of shape (T, m, n). Output: one PNG per layer with the effective rank, the
marginalised effective rank, the stable rank and the subspace distance of every head's QK circuit, and a table of
transition times.
"""
import argparse
import os
import tempfile

import numpy as np

import diagnostics


def demo_checkpoints(folder, steps=1500, every=25, rng=0):
    """Train a 2-layer attention-only transformer on in-context copying and save a state_dict every ``every`` steps."""
    import torch

    from validation.simulators import build_model, copy_batch

    torch.manual_seed(rng)
    gen = np.random.default_rng(rng)
    model = build_model(32, 32, 24, d_model=32, heads=4, layers=2, tokens=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(1, steps + 1):
        x, ok = copy_batch(torch, 32, 12, 64, gen)
        loss = torch.nn.functional.cross_entropy(model(x[:, :-1])[ok], x[:, 1:][ok])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            torch.save(model.state_dict(), os.path.join(folder, f"ckpt_{step:06d}.pt"))
    return "attn.{l}.", 4, 2


def circuits(run, prefix, layer, heads):
    """QK circuits (T, heads, d, d) of one layer: W_Qᵀ W_K per head, from the weights' names in the checkpoints."""
    p = prefix.format(l=layer)
    if p + "in_proj_weight" in run.weights:                      # torch.nn.MultiheadAttention layout
        W_Q, W_K, _ = diagnostics.split_in_proj(run[p + "in_proj_weight"])
    else:
        W_Q, W_K = run[p + "W_Q.weight"], run[p + "W_K.weight"]
    return diagnostics.qk_circuit(W_Q, W_K, heads=heads)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", help="checkpoint folder (default: train a demo model)")
    ap.add_argument("--prefix", default="attn.{l}.", help="weight-name prefix of layer l's attention")
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--out", default="diagnostics_out")
    args = ap.parse_args()
    folder = args.folder
    if folder is None:
        folder = tempfile.mkdtemp(prefix="linattn-ckpt-")
        print(f"training a demo model, checkpoints in {folder}")
        args.prefix, args.heads, args.layers = demo_checkpoints(folder)
    run = diagnostics.load_checkpoints(folder)
    os.makedirs(args.out, exist_ok=True)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    print(f"{len(run.steps)} checkpoints, steps {run.steps[0]} … {run.steps[-1]}")
    print("layer head  erank-step  distance-half-way-step")
    for layer in range(args.layers):
        qk = circuits(run, args.prefix, layer, args.heads)
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.5))
        for h in range(args.heads):
            d = diagnostics.diagnose(qk[:, h], run.steps, skip=1, progress=False)
            for ax, key in zip(axes, ("effective_rank", "marginalised_rank", "stable_rank", "subspace_distance")):
                ax.plot(run.steps, getattr(d, key), label=f"head {h}")
                ax.set_title(key.replace("_", " "))
                ax.set_xscale("log")
            half = 0.5 * (d.subspace_distance[0] + d.subspace_distance[-1])
            t_half = run.steps[np.argmax(d.subspace_distance <= half)]
            print(f"{layer:5d} {h:4d}  {d.transitions('effective_rank', method='step')[0]:10.0f}  {t_half:10.0f}")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(args.out, f"layer{layer}.png")
        fig.savefig(path, dpi=120)
        print("wrote", path)


if __name__ == "__main__":
    main()
