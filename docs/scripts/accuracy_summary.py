"""Worst relative errors (and in standard errors) of the theory and of its baselines against exact
dataset averages: the numbers quoted in README.md and docs/replica.md.

Run from the repository root: .venv/bin/python docs/scripts/accuracy_summary.py  (~1 minute)
"""
import numpy as np

import dynamics
import linattn
import replica

print("STATIONARY beta=1e3 lam=0.01 P=10..1000")
for prob, model, n in [((10, 100, 0.0), "reduced", 400), ((10, 100, 0.0), "full", 400),
                       ((20, 40, 0.25), "reduced", 200), ((20, 40, 0.25), "full", 200)]:
    pb = linattn.Problem(*prob)
    res = {"finite": [], "mp": [], "decoupled": []}
    for P in (10, 20, 50, 100, 200, 500, 1000):
        a = replica.dataset_average(pb, P, 1e3, 0.01, n, model, rng=5)
        for law, kw in (("finite", {}), ("mp", dict(law="mp")), ("decoupled", dict(channel="decoupled"))):
            t = replica.stationary(pb, P, 1e3, 0.01, model, **kw)
            for v, m, s in ((t.train, a.train_mean, a.train_se), (t.test, a.test_mean, a.test_se)):
                res[law].append((abs(v / m - 1), abs(v - m) / s, s / m, P))
    out = []
    for law, r in res.items():
        r = np.array(r)
        k = np.argmax(r[:, 0])
        out.append(f"{law}: worst {r[k,0]:.2%} ({r[k,1]:.1f} s.e., s.e. {r[k,2]:.2%}, P={int(r[k,3])}); "
                   f"median {np.median(r[:,0]):.2%}")
    print(prob, model, n, " | ".join(out))
print("CURVES D=10 N=100 lam=0.01, 13 times, 1000 datasets")
PB = linattn.Problem(10, 100)
T = np.logspace(-1, 5, 13)
for model in ("reduced", "full"):
    for P in (10, 100, 1000):
        runs = [dynamics.gradient_flow(PB.sample(P, rng=(11, P, i)), PB, 0.01, T, model=model) for i in range(1000)]
        ex = np.array([[r.train, r.test] for r in runs])
        m = ex.mean(0)
        s = ex.std(0, ddof=1) / np.sqrt(1000)
        out = []
        for law, kw in (("finite", {}), ("mp", dict(law="mp")), ("decoupled", dict(channel="decoupled"))):
            c = dynamics.averaged_curves(PB, P, 0.01, T, model=model, **kw)
            v = np.array([c.train, c.test])
            for j, nm in ((0, "train"), (1, "test")):
                rel = np.abs(v[j] / m[j] - 1)
                k = np.argmax(rel)
                out.append(f"{law[:3]} {nm} {rel[k]:.2%}({abs(v[j]-m[j])[k]/s[j][k]:.1f}se)")
        print(model, P, " ".join(out))
