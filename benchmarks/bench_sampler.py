"""Exact O(D) prompt sampler vs the naive sampler that builds every token matrix X, and the exact
O(N + D) sampler of nonlinear links (tanh) against the same naive route.

Target: >= 20x faster at D = N = 100, P = 20 000. Nonlinear links: no target; the O(N + D) construction should beat
the O(N D) one by a factor of order D.
Run: .venv/bin/python benchmarks/bench_sampler.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, report  # noqa: E402

import linattn  # noqa: E402
from linattn import _sampling as sampling  # noqa: E402

pb = linattn.Problem(D=100, N=100)
P = 20_000
fast = best_time(lambda: pb.sample(P, rng=0), repeat=5)
naive = best_time(lambda: sampling.sample_naive(pb, P, rng=0), repeat=2)
pt = linattn.Problem(D=100, N=100, link="tanh")
fast_t = best_time(lambda: pt.sample(P, rng=0), repeat=3)
naive_t = best_time(lambda: sampling.sample_naive(pt, P, rng=0), repeat=2)
report("Prompt sampling, D = N = 100, P = 20 000", [("exact O(D) sampler vs X-building", naive, fast, ">= 20x"),
                                                  ("tanh link: exact O(N + D) sampler vs X-building", naive_t, fast_t,
                                                   "order D")])
