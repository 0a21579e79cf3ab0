"""Markov-chain ICL estimators (arXiv:2604.12151): numba kernels vs the straightforward numpy route.

1. 2×10⁵ sequences × 1000 positions, C = 10, α = 1, pool K = 16, first state stationary: ``markov.losses`` per
   estimator (sampling included; the sampling alone is the "true" row, the oracle costing one log per token).
   The numpy route (``markov.log_losses_naive``: cumulative one-hot counts and per-chain log-likelihoods over
   all positions, posteriors by log-sum-exp, as in the authors' ``markov_model_ar.py``) is timed on 200 of the
   sequences and extrapolated linearly (×1000; its cost is linear in the number of sequences); the numba route
   on the same 200 sequences is timed too (same-subset ratio). Goal: each numba estimator in seconds.
2. Cost per position of the estimators vs K ∈ {4, 16, 64} (``log_losses`` on 2000 pre-sampled sequences × 1000,
   best of 3, and its CPU time): O(1) for 1-gen, 2-gen, O(K) for 1-mem, 2-mem, bayes.
3. The Monte Carlo Bayes predictor of fresh chains with a stationary first state (C = 10, n_mc = 16): cost per
   position (it is the one estimator that is not O(1) or O(K) per token).
The machine may be shared with other jobs: wall times are indicative, the ratios less so.
Run: .venv/bin/python benchmarks/bench_markov.py [--small]
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, report  # noqa: E402

from linattn import markov  # noqa: E402

SMALL = "--small" in sys.argv
C, ALPHA, K, L = 10, 1.0, 16, 1000
N_SEQ = 20_000 if SMALL else 200_000
N_NAIVE = 200


def wall(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    ch = markov.Chains(C=C, concentration=ALPHA, K=K, first_state="stationary")
    markov.losses(ch, 10, 20, rng=0)                                   # compile
    s = ch.sample(N_NAIVE, L, rng=1)
    names = ("1-mem", "2-mem", "1-gen", "2-gen", "bayes")
    for nm in names:
        markov.log_losses(s.states[:2, :20], nm, pool=s.pool, chains=ch)
    print(f"{N_SEQ} sequences x {L} positions, C = {C}, concentration = {ALPHA}, K = {K}; naive numpy on {N_NAIVE} "
          "sequences, extrapolated")
    t_sample, _ = wall(lambda: markov.losses(ch, N_SEQ, L, rng=2, names=["true"]))
    print(f"sampling + oracle ('true'): {t_sample:.2f} s ({t_sample / (N_SEQ * (L - 1)) * 1e9:.1f} ns/token)")
    rows = []
    for nm in names:
        t_fast, r = wall(lambda: markov.losses(ch, N_SEQ, L, rng=2, names=[nm]))
        t_naive, a = wall(lambda: markov.log_losses_naive(s.states, nm, pool=s.pool, chains=ch))
        t_sub, b = wall(lambda: markov.log_losses(s.states, nm, pool=s.pool, chains=ch))
        assert np.abs(a - b).max() < 1e-10
        scale = N_SEQ / N_NAIVE
        est = t_fast - t_sample
        print(f"{nm:6s}: numba {t_fast:7.2f} s with sampling ({est:6.2f} s estimator, "
              f"{est / (N_SEQ * (L - 1)) * 1e9:5.1f} ns/token); naive {t_naive:.3f} s on {N_NAIVE} -> "
              f"{t_naive * scale:8.1f} s extrapolated; same {N_NAIVE}: numba {t_sub:.4f} s; "
              f"late-position mean loss {r.mean[nm][-1]:.4f}")
        rows.append((f"{nm}: losses() vs numpy (extrapolated)", t_naive * scale, t_fast, "seconds"))
        rows.append((f"{nm}: same {N_NAIVE} sequences", t_naive, t_sub, ""))
    report(f"Estimators, {N_SEQ} x {L}, C = {C}, K = {K}", rows)

    print("\nPool estimators: cost per token vs K (log_losses on 2000 pre-sampled sequences x 1000; best of 3; "
          "CPU time in brackets)")
    for k in (4, 16, 64):
        chk = markov.Chains(C=C, concentration=ALPHA, K=k)
        sk = chk.sample(2000, L, rng=3)
        for nm in ("1-gen", "2-gen", "1-mem", "2-mem", "bayes"):
            t = best_time(lambda: markov.log_losses(sk.states, nm, pool=sk.pool, chains=chk), repeat=3)
            c0 = time.process_time()
            markov.log_losses(sk.states, nm, pool=sk.pool, chains=chk)
            cpu = time.process_time() - c0
            per = 1e9 / (2000 * (L - 1))
            print(f"K = {k:3d} {nm:6s}: {t * per:6.1f} ns/token ({cpu * per:.1f})")

    fresh = markov.Chains(C=C, concentration=ALPHA, first_state="stationary")
    markov.losses(fresh, 2, 5, rng=0, names=["bayes"], n_mc=2)
    t, _ = wall(lambda: markov.losses(fresh, 50, 100, rng=4, names=["bayes"], n_mc=16))
    print(f"\nFresh chains, stationary first state, Monte Carlo bayes (n_mc = 16, C = {C}): "
          f"{t / (50 * 99) * 1e6:.1f} us/token")


if __name__ == "__main__":
    main()
