"""How far the nonlinearity–noise equivalence is from exact finite-D averages, and how the gap scales
with D: the numbers quoted in docs/nonlinear.md.

For each link (tanh, relu, sign, cubic), model (reduced, full) and D in {10, 20, 40} (N = 2D,
P = alpha D^2 with alpha in {0.5, 2}, beta = 1e3, lambda = 0.01) it prints the exact dataset average
(replica.dataset_average, n datasets) and the relative deviation of three theories from it:
the D -> infinity surrogate (pb.surrogate()), the moment-matched surrogate
(pb.surrogate(finite_size=True)) and the replica theory with the exact finite-D label law
(replica.stationary(pb, ...)).

Run from the repository root: .venv/bin/python docs/scripts/nonlinear_gap.py [n_datasets]  (~30 min on 2 cores)
"""
import sys
from concurrent.futures import ProcessPoolExecutor

import linattn
import replica

LINKS = ("tanh", "relu", "sign", "cubic")
DS = (10, 20, 40)
ALPHAS = (0.5, 2.0)
BETA, LAM = 1e3, 0.01


def point(args):
    link, model, D, alpha, n = args
    pb = linattn.Problem(D, 2 * D, 0.0, link=link)
    P = int(round(alpha * D * D))
    a = replica.dataset_average(pb, P, BETA, LAM, n, model, rng=7)
    out = dict(link=link, model=model, D=D, alpha=alpha, P=P, train=a.train_mean, train_se=a.train_se,
               test=a.test_mean, test_se=a.test_se)
    for name, q in (("surrogate", pb.surrogate()), ("matched", pb.surrogate(finite_size=True)), ("law", pb)):
        t = replica.stationary(q, P, BETA, LAM, model)
        out[name] = (t.train, t.test)
    return out


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    jobs = [(lk, m, D, al, n) for D in DS for lk in LINKS for m in ("reduced", "full") for al in ALPHAS]
    with ProcessPoolExecutor(2) as ex:
        for r in ex.map(point, jobs):
            cells = []
            for name in ("surrogate", "matched", "law"):
                tr, te = r[name]
                cells.append(f"{name} {tr / r['train'] - 1:+.2%}/{te / r['test'] - 1:+.2%}")
            print(f"{r['link']:5s} {r['model']:7s} D={r['D']:2d} alpha={r['alpha']:.1f} P={r['P']:5d} "
                  f"exact train {r['train']:.5g}±{r['train_se'] / r['train']:.2%} "
                  f"test {r['test']:.5g}±{r['test_se'] / r['test']:.2%} | "
                  + " | ".join(cells), flush=True)
