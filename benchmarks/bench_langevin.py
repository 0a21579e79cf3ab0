"""Langevin simulation at the seed's Fig. 2 settings: steps per second against a plain numpy loop.

Settings: D = 10, N = 100, P = 100, full model (M = 110), beta = 1e3, lambda = 0.01, gamma = 1.
Baseline: a Python loop of numpy operations, theta -= gamma dt (A theta - b) + sqrt(2 gamma dt/beta) xi.
Target: >= 20x the baseline's steps per second. Also timed: the whole Langevin
part of Figure 2 with the seed's protocol (10^5 + 20 x 5000 steps per chain; 4 values of N x
6 values of P x n_sim datasets). Run: .venv/bin/python benchmarks/bench_langevin.py
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

import linattn  # noqa: E402
from validation import (
    _kernels,  # noqa: E402
    chain,
    langevin,
)


def numpy_loop(A, b, dt, beta, n_steps, rng):
    theta = np.zeros(b.size)
    noise = np.sqrt(2 * dt / beta)
    for _ in range(n_steps):
        theta -= dt * (A @ theta - b) - noise * rng.standard_normal(b.size)
    return theta


def main():
    pb = linattn.Problem(10, 100)
    data = pb.sample(100, rng=0)
    ch = chain(data, pb, 1e3, 0.01, 1.0, "full")
    A = ch.V @ (ch.a[:, None] * ch.V.T)
    b = ch.V @ ch.es.b
    dt = 0.5 / ch.lambda_max
    n_np = 20_000
    t0 = time.perf_counter()
    numpy_loop(A, b, dt, 1e3, n_np, np.random.default_rng(1))
    t_np = time.perf_counter() - t0
    steps = 200_000
    rows = []
    M = b.size
    for basis, chains in (("eigen", 1), ("eigen", 2), ("parameter", 1), ("parameter", 2)):
        out = np.empty((chains, 1, M))
        ids = np.arange(chains)
        zx, zf = _kernels.ZIG_X, _kernels.ZIG_F

        def run(n):
            if basis == "eigen":
                _kernels.langevin_eigen(1 - dt * ch.a, dt * ch.es.b, np.sqrt(2 * dt / 1e3), np.zeros((chains, M)),
                                        n, 1, 1, 0, ids, out, zx, zf)
            else:
                _kernels.langevin_dense(A, b, dt, np.sqrt(2 * dt / 1e3), np.zeros((chains, M)), n, 1, 1, 0, ids, out,
                                        zx, zf)

        run(10)  # compile / load cache
        t0 = time.perf_counter()
        run(steps)
        t = time.perf_counter() - t0
        base = t_np / n_np * steps * chains   # numpy time for the same number of chain-steps
        rows.append((f"numba {basis} basis, {chains} chain(s)", base, t, ">= 20x"))
    t0 = time.perf_counter()
    langevin(data, pb, 1e3, 0.01, model="full")
    t_wrap = time.perf_counter() - t0
    print(f"numpy loop: {n_np / t_np:,.0f} steps/s (M = {b.size})")
    report("Langevin steps at Fig. 2 settings (kernel time, equal number of chain-steps)", rows)
    print("one call of validation.simulators._langevin with the seed protocol (2e5 steps, setup included): "
          f"{t_wrap:.2f} s")
    t0 = time.perf_counter()
    for N in (10, 20, 50, 100):
        pbn = linattn.Problem(10, N)
        for P in (10, 30, 100, 300, 1000, 3000):
            for j in range(10):
                langevin(pbn.sample(P, rng=(j, P)), pbn, 1e3, 0.01, model="full", rng=j)
    print("\nwhole Fig. 2 Langevin simulation (4 N x 6 P x 10 datasets, seed protocol): "
          f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
