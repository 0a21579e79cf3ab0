"""Grokking in modular addition and the OV subspace distance (needs torch).

    python examples/grokking.py [--p 31] [--steps 6000] [--seed 0]

Trains a one-layer transformer with full-batch AdamW (weight decay 1) on half of the pairs (a, b) and prints, every
500 steps, the train and test accuracy next to the subspace distance of the OV circuits to their final values.
"""
import argparse

import numpy as np

import diagnostics
from validation.simulators import train_modular_addition


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=int, default=31)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--d_model", type=int, default=64)
    ap.add_argument("--mlp", type=int, default=256)
    args = ap.parse_args()
    run = train_modular_addition(p=args.p, steps=args.steps, rng=args.seed, d_model=args.d_model, mlp=args.mlp,
                                 progress=True)
    ov = run.ov[:, 0]
    dist = np.mean([diagnostics.subspace_distance(ov[:, h], ov[-1, h]) for h in range(run.heads)], axis=0)
    print(f"{'step':>7} {'train acc':>10} {'test acc':>9} {'OV distance':>12}")
    for i in range(9, len(run.steps), 10):
        print(f"{run.steps[i]:7d} {run.metrics['train_acc'][i]:10.3f} {run.metrics['test_acc'][i]:9.3f} "
              f"{dist[i]:12.3f}")


if __name__ == "__main__":
    main()
