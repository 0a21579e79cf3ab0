"""Sweep runner: the Langevin grid of Figure 2 (quick settings) on a 2-worker Dask LocalCluster
against the plain serial loop, in the same run.

Grid: D = 10, N in {10, 20, 50, 100}, P in {10, 30, 100, 300, 1000, 3000}, 3 datasets each
(72 tasks; each a Langevin simulation with the seed's protocol, full model, beta = 1e3,
lambda = 0.01). Expected: close to 2x on 2 cores; the overhead per task is
(2 T_cluster - T_serial) / n_tasks. Requires the optional extra [dask].
Run: .venv/bin/python benchmarks/bench_sweep.py
"""
import itertools
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

from validation import sweeps  # noqa: E402
from validation.experiments import _grid_functions as grid_points  # noqa: E402

GRID = {"D": [10], "N": [10, 20, 50, 100], "P": [10, 30, 100, 300, 1000, 3000], "beta": [1e3], "lam": [0.01]}
REPLICATES = 3


def _points():
    keys = list(GRID)
    for values in itertools.product(*(GRID[k] for k in keys)):
        yield dict(zip(keys, values))


def _evaluate(point, replicate):
    """One task with the sweep's seed (:func:`validation.sweeps.task_seed`), one BLAS thread like a worker."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(np.random.SeedSequence(sweeps.task_seed(0, "langevin", point, replicate)))
    with threadpool_limits(limits=1, user_api="blas"):
        return grid_points.langevin_point(**point, rng=rng)["test"]


def serial_loop():
    """The baseline: the same tasks, same seeds, in a plain loop in this process."""
    return np.array([_evaluate(point, r) for point in _points() for r in range(REPLICATES)])


def warm():
    """One task in this process: imports, numba kernels loaded from the on-disk cache."""
    _evaluate(next(_points()), 0)


def main():
    warm()
    n = 4 * 6 * REPLICATES
    t0 = time.perf_counter()
    serial = serial_loop()
    t_serial = time.perf_counter() - t0
    with sweeps.local_cluster(2) as client:
        client.run(warm)                                     # every worker warmed like this process
        t0 = time.perf_counter()
        ds = sweeps.sweep("langevin", GRID, replicates=REPLICATES, client=client)
        t_cluster = time.perf_counter() - t0
    t0 = time.perf_counter()
    ds_local = sweeps.sweep("langevin", GRID, replicates=REPLICATES, workers=2)
    t_local = time.perf_counter() - t0
    same = np.array_equal(np.sort(serial), np.sort(ds["test"].values.ravel())) and \
        np.array_equal(ds["test"].values, ds_local["test"].values)
    report("Figure-2 Langevin grid (72 tasks): serial loop vs 2-worker sweeps",
           [("validation.sweep on a 2-worker LocalCluster", t_serial, t_cluster, "close to 2x"),
            ("validation.sweep, 2 local processes (spawn)", t_serial, t_local, "close to 2x (startup incl.)")])
    print(f"overhead per task: {(2 * t_cluster - t_serial) / n * 1e3:.1f} ms; "
          f"results bit-identical to the loop: {same}")


if __name__ == "__main__":
    main()
