"""Factorized attention: online SGD (numba kernel) and the exact per-mode ODE against naive baselines.

1. Loss curve of online SGD for Γ = PQ at D = 8, N = 31, batch 256, 10⁵ steps (the reference setting):
   numba kernel (exact O(D) prompts drawn inside the kernel) against a plain numpy loop of the same
   algorithm (linattn.Problem.sample for the batch, numpy gradient and chain rule), timed over 2·10³
   steps and scaled to 10⁵. Goal: >= 20x.
2. The exact population ODE of aligned Γ = PQ for D = 64 anisotropic modes over 10⁴ output times:
   dynamics.mode_flow (2D scalars, LSODA with the analytic Jacobian) against the full 2D² matrix ODE
   dynamics.mean_flow (same start, same times). Goal: well under a second.
Run: .venv/bin/python benchmarks/bench_factorized.py
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

import dynamics  # noqa: E402
import linattn  # noqa: E402
from linattn.factorized import Parametrization, dataset_objective
from validation import factorized_descent


def numpy_sgd(pb, par, theta, n_steps, step, batch, rng):
    for _ in range(n_steps):
        obj = dataset_objective(pb.sample(batch, rng=rng))
        theta = theta - step * par.pullback(theta, obj.gradient(par.gamma(theta)))
    return theta


def main():
    D, N, B, steps = 8, 31, 256, 100_000
    pb = linattn.Problem(D, N, 0.0, covariance=np.geomspace(1.0, 0.1, D))
    par = Parametrization("value_kq_modes", D)
    th = par.aligned(np.full(D, 1e-3))
    gen = np.random.default_rng(0)
    n_np = 2000
    t0 = time.perf_counter()
    numpy_sgd(pb, par, th, n_np, 0.05, B, gen)
    t_np = (time.perf_counter() - t0) * steps / n_np
    factorized_descent(pb, par, th, 10, 0.05, batch=B, record=10)     # compile / load the cache
    rows = []
    for chains in (1, 2):
        t0 = time.perf_counter()
        factorized_descent(pb, par, th, steps, 0.05, batch=B, record=1000, n_chains=chains)
        t = time.perf_counter() - t0
        rows.append((f"online SGD 1e5 steps, {chains} chain(s)", t_np * chains, t, ">= 20x (goal)"))
    report("Factorized attention: online SGD, D = 8, N = 31, batch 256 (numpy baseline timed over 2e3 steps)", rows)

    s = np.logspace(0, -1, 64)
    pb64 = linattn.Problem(64, 128, 0.0, covariance=s)
    a0 = 1e-4
    t = np.linspace(0.0, 1.2 * dynamics.escape_times(pb64, a0).max(), 10_000)
    dynamics.mode_flow(pb64, np.sqrt(a0), np.sqrt(a0), t[:10])
    t0 = time.perf_counter()
    mf = dynamics.mode_flow(pb64, np.sqrt(a0), np.sqrt(a0), t)
    t_mode = time.perf_counter() - t0
    par64 = Parametrization("value_kq_modes", 64)
    t0 = time.perf_counter()
    full = dynamics.mean_flow(pb64, par64, par64.aligned(np.full(64, a0)), t, rtol=1e-9, method="DOP853")
    t_full = time.perf_counter() - t0
    err = np.abs(full.modes - mf.modes).max()
    report(f"Exact ODE, D = 64 modes, 1e4 output times (max |Δa| between the two: {err:.1e})",
           [("mode_flow vs full matrix ODE", t_full, t_mode, "< 1 s")])


if __name__ == "__main__":
    main()
