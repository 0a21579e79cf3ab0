"""The feature learner as trained: theory (replica.feature_learner_theory, readout="trained") against simulated
learners (validation.simulators.learners.feature_learner) — the numbers of docs/feature_learner.md §7.

For one (D, N, link, pool size K) and each P of a list: ``n`` training sets (16 at P <= 100, 8 at P <= 600, 4 beyond,
2 at D >= 10 and P >= 3000), each evaluated at every test context length of a list without retraining
(``feature_test_error``), against the theory at that ``N_test``; one JSON row per (P, N_test) with the simulated mean
and s.e. over the sets, the theory ± its s.e., the optimal-readout baseline (``test_optimal``), and the training loss
(simulated ``train`` and ``train_fit``, theory ``train`` and ``train_fit``); with a pool also the IDG errors.
``--summary`` prints a table of rows written before: the deviation in s.e. (z) and the excess of |sim − theory| over
3 s.e. relative to the theory (the accuracy the acceptance test allows).

Run from the repository root:

    OPENBLAS_NUM_THREADS=1 .venv/bin/python docs/scripts/feature_learner_as_trained.py \
        OUT.jsonl D N link P1,P2 Nt1,Nt2 [K]
    .venv/bin/python docs/scripts/feature_learner_as_trained.py --summary OUT.jsonl ...

``link`` is a key of ``validation.experiments.learners.LINKS`` (``relu``, ``quad``). Cost (2 busy cores): D = 6,
five P up to 3600 and five N_test: about 3 min per link; D = 10 (P up to 3000): about 8 min per link.
"""
import json
import sys
import time

import numpy as np

import linattn
import replica
from validation.experiments._learners import LINKS
from validation.simulators._learner_sims import feature_learner, feature_test_error

LAM = 0.01


def n_sets(D, P):
    if D >= 10 and P >= 3000:
        return 2
    return 16 if P <= 100 else 8 if P <= 600 else 4


def measure(out, D, N, link, Ps, Nts, K=None):
    pb = linattn.Problem(D, N, 0.0, link=LINKS[link], tasks=K)
    with open(out, "a") as fh:
        for P in Ps:
            t0 = time.time()
            n = n_sets(D, P)
            runs = [feature_learner(pb, P, LAM, rng=(D, N, K or 0, P, r), n_test_prompts=50_000) for r in range(n)]
            for Nt in Nts:
                def errors(idg):
                    if Nt == N:
                        return np.array([r.test_idg if idg else r.test for r in runs])
                    return np.array([feature_test_error(pb, r, N_test=Nt, n_test_prompts=50_000, rng=(k, Nt, int(idg)),
                                                        in_distribution=idg)[0] for k, r in enumerate(runs)])

                te = errors(False)
                th = replica.feature_learner_theory(pb, P, LAM, N_test=None if Nt == N else Nt)
                train = np.array([r.train for r in runs])
                row = dict(D=D, N=N, link=link, K=K, P=P, N_test=Nt, n_sets=n, sim=te.mean(),
                           sim_se=te.std(ddof=1) / np.sqrt(n), th=th.test, th_se=th.test_se, th_opt=th.test_optimal,
                           sim_train=train.mean(), sim_train_se=train.std(ddof=1) / np.sqrt(n),
                           sim_fit=float(np.mean([r.train_fit for r in runs])), th_train=th.train,
                           th_train_se=th.train_se, th_fit=th.train_fit,
                           unconverged=int(sum(not r.converged for r in runs)))
                if K:
                    idg = errors(True)
                    row.update(sim_idg=idg.mean(), sim_idg_se=idg.std(ddof=1) / np.sqrt(n), th_idg=th.test_idg,
                               th_idg_se=th.test_idg_se, th_idg_opt=th.test_idg_optimal)
                row["seconds"] = time.time() - t0
                fh.write(json.dumps({k: float(v) if isinstance(v, (float, np.floating)) else v
                                     for k, v in row.items()}) + "\n")
                fh.flush()


def summary(files):
    for f in files:
        for line in open(f):
            r = json.loads(line)
            tags = [("ICL", "sim", "th", "th_se", "th_opt")]
            if r.get("K"):
                tags.append(("IDG", "sim_idg", "th_idg", "th_idg_se", "th_idg_opt"))
            text = (f"D={r['D']:2d} N={r['N']:2d} {r['link']:4s} K={r.get('K') or '-':>2} P={r['P']:5d} "
                    f"Nt={r['N_test']:3d}")
            for tag, s, t, ts, o in tags:
                se = float(np.hypot(r[s + "_se"], r[ts]))
                excess = max(abs(r[s] - r[t]) - 3 * se, 0.0) / r[t]
                text += (f" | {tag} sim {r[s]:.4f} ± {r[s + '_se']:.4f} theory {r[t]:.4f} ± {r[ts]:.4f} "
                         f"z {(r[s] - r[t]) / se:+.1f} excess {excess:.1%} optimal {r[s] / r[o] - 1:+.0%}")
            text += f" | train sim {r['sim_train']:.4f} ± {r['sim_train_se']:.4f} theory {r['th_train']:.4f}"
            print(text)


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
    else:
        a = sys.argv[1:]
        measure(a[0], int(a[1]), int(a[2]), a[3], [int(x) for x in a[4].split(",")], [int(x) for x in a[5].split(",")],
                int(a[6]) if len(a) > 6 else None)
