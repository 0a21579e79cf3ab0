"""The trained kernel learner: theory (replica.learner_theory) against exact dataset averages of the ridge solution
(replica.kernel_ridge) — the numbers of docs/kernel_learner.md §7.

Fresh tasks: for each (D, link, P, λ) the mean and s.e. of the training and test errors over ``n`` datasets (N = 2D,
σ = 0.1), and the three theories (law="finite", "gaussian", "mp"); a row per point, deviations in % and in s.e., and the
ratio |theory − exact| / (E/M + 3 √(s.e.² + s.e._theory²)) (≤ 1: within the acceptance criterion).

Pools (``--pool``): paired with the datasets — each dataset draws its pool, and the theory is evaluated on that pool
(``pool=W``), so that the pool-to-pool variation cancels in the differences exact − theory; the rows give the mean
difference and its s.e. for the train, ICL and IDG errors.

Run from the repository root (single-threaded BLAS is faster on a shared machine):

    OPENBLAS_NUM_THREADS=1 .venv/bin/python docs/scripts/kernel_learner_theory.py OUT.jsonl D n link:P:lam ...
    OPENBLAS_NUM_THREADS=1 .venv/bin/python docs/scripts/kernel_learner_theory.py --pool OUT.jsonl D n link:P:lam:K ...

Cost: D = 6, 100 datasets: seconds per point; D = 10, 40 datasets: 0.5–7 min; D = 20, 16 datasets: 2–30 min per point
(P = 10⁴ to 10⁵); a pooled point at D = 20 adds ~30 s of theory per dataset.
"""
import json
import sys
import time
import zlib

import numpy as np

import linattn
from linattn._kernel_errors import n_features
from replica._kernel_ridge import kernel_data, kernel_ridge
from replica._learner_theory import learner_theory

LAWS = ("finite", "gaussian", "mp")


def _seed(D, link, P, lam, K, i):
    return (D, P, int(round(lam * 1e6)), K or 0, zlib.crc32(link.encode()) % 1000, i)


def fresh(out, D, n, link, P, lam):
    pb = linattn.Problem(D, 2 * D, 0.1, link)
    t = time.time()
    vals = np.array([[s.train, s.test] for s in (kernel_ridge(kernel_data(pb, P, rng=_seed(D, link, P, lam, None, i)),
                                                                pb, lam) for i in range(n))])
    mean, se = vals.mean(axis=0), vals.std(axis=0, ddof=1) / np.sqrt(n)
    M = n_features(D) ** 2
    rec = dict(D=D, link=link, P=P, lam=lam, K=None, n=n, mean=mean.tolist(), se=se.tolist(), seconds=time.time() - t)
    for law in LAWS:
        th = learner_theory(pb, P, lam, law=law)
        rec[law] = {}
        for i, k in enumerate(("train", "test")):
            v, ts = getattr(th, k), getattr(th, k + "_se")
            rec[law][k] = dict(value=v, se=ts, pct=100 * (v - mean[i]) / mean[i],
                               z=(v - mean[i]) / np.hypot(se[i], ts),
                               ratio=abs(v - mean[i]) / (mean[i] / M + 3 * np.hypot(se[i], ts)))
    return rec


def pooled(out, D, n, link, P, lam, K):
    pb = linattn.Problem(D, 2 * D, 0.1, link, tasks=K)
    t = time.time()
    rows = {law: [] for law in LAWS[:2]}
    exact = []
    for i in range(n):
        data = kernel_data(pb, P, rng=_seed(D, link, P, lam, K, i))
        sol = kernel_ridge(data, pb, lam)
        exact.append([sol.train, sol.test, sol.test_idg])
        for law in rows:
            th = learner_theory(pb, P, lam, law=law, pool=data.pool, n_contexts=2**13, rng=i)
            rows[law].append([th.train, th.test, th.test_idg])
    exact = np.array(exact)
    M = n_features(D) ** 2
    rec = dict(D=D, link=link, P=P, lam=lam, K=K, n=n, mean=exact.mean(axis=0).tolist(),
               se=(exact.std(axis=0, ddof=1) / np.sqrt(n)).tolist(), seconds=time.time() - t)
    for law, r in rows.items():
        diff = np.array(r) - exact
        dm, ds = diff.mean(axis=0), diff.std(axis=0, ddof=1) / np.sqrt(n)
        rec[law] = {k: dict(diff=dm[i], se=ds[i], pct=100 * dm[i] / exact[:, i].mean(), z=dm[i] / ds[i],
                            ratio=abs(dm[i]) / (exact[:, i].mean() / M + 3 * ds[i]))
                    for i, k in enumerate(("train", "test", "test_idg"))}
    return rec


def main(argv):
    pool = argv[0] == "--pool"
    if pool:
        argv = argv[1:]
    out, D, n = argv[0], int(argv[1]), int(argv[2])
    for spec in argv[3:]:
        parts = spec.split(":")
        link, P, lam = parts[0], int(parts[1]), float(parts[2])
        rec = pooled(out, D, n, link, P, lam, int(parts[3])) if pool else fresh(out, D, n, link, P, lam)
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        summary = "  ".join(f"{law} " + " ".join(f"{k} {v['pct']:+.2f}% ({v['z']:+.1f}, {v['ratio']:.2f})"
                                                 for k, v in rec[law].items()) for law in LAWS if law in rec)
        print(spec, f"{rec['seconds']:.0f}s", summary, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
