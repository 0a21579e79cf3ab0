"""ICL emergence in attention-only transformers, read off with the spectral diagnostics (needs torch).

    python examples/icl_emergence.py [copy|regression] [--seeds 3] [--depths 1 2]

Trains each depth with each seed (about 10–30 s per run on one core), then prints, per depth and layer, the mean ± sd
over seeds of: the step at which ln(loss) is half-way down, the step at which the QK subspace distance to the final
weights is half-way down, and the step and depth of the dip of the marginalised effective rank of QK.
"""
import argparse

from validation.simulators import emergence_study


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task", nargs="?", default="copy", choices=("copy", "regression"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args()
    kw = dict(steps=2000, half=12, vocab=32) if args.task == "copy" else dict(steps=3000, D=12, N=24)
    if args.steps:
        kw["steps"] = args.steps
    study = emergence_study(args.task, depths=tuple(args.depths), seeds=tuple(range(args.seeds)), progress=True, **kw)
    print(f"{'depth':>5} {'layer':>5}  {'quantity':<22} {'mean':>9} {'sd':>8}")
    for L, layer, q, m, sd in study.table():
        print(f"{L:5d} {'' if layer is None else layer:>5}  {q:<22} {m:9.3g} {sd:8.2g}")


if __name__ == "__main__":
    main()
