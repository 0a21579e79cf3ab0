"""Exact O(D) prompt sampler vs the naive sampler that builds every token matrix X.

Target (foundation issue): >= 20x faster at D = N = 100, P = 20 000.
Run: .venv/bin/python benchmarks/bench_sampler.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, report  # noqa: E402

import linattn  # noqa: E402
from linattn import sampling  # noqa: E402

pb = linattn.Problem(D=100, N=100)
P = 20_000
fast = best_time(lambda: pb.sample(P, rng=0), repeat=5)
naive = best_time(lambda: sampling.sample_naive(pb, P, rng=0), repeat=2)
report("Prompt sampling, D = N = 100, P = 20 000", [("exact O(D) sampler vs X-building", naive, fast, ">= 20x")])
