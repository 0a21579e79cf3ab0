"""validation — simulations that check the theory, the experiments built on them, the figures, the
report and the command line. Rooms (imports point down the list):

* :mod:`validation.simulators` — numba Langevin (:func:`langevin`), gradient descent (:func:`descent_from_random_inits`,
  :func:`attention_gradient_descent`), factorized attention (:func:`factorized_descent`), the kernel and
  feature learners (:func:`kernel_learner`, :func:`feature_learner`) and the statistics of correlated samples;
* :mod:`validation.sweeps` — the generic runner: grids of any function (:func:`sweep`, :func:`load_sweep`,
  :func:`sweep_summary`, :func:`local_cluster`) and the points of experiments (:func:`~validation.sweeps.run_points`),
  in this process, on local processes or Dask, resumable into Zarr stores (optional extra ``[dask]``);
* :mod:`validation.experiments` — every experiment as settings → run → :class:`~validation.experiments.Result`
  → :class:`~validation.experiments.Check`, and the one-call workflows :func:`stationary_sweep` (theory vs exact
  vs Langevin against ``P``), :func:`pool_average` (exact averages with task pools) and :func:`rank_dynamics`;
* :mod:`validation.figures` — figures that draw saved results (registry, gallery);
* :mod:`validation.app` — the validation report and the ``linattn`` command line.
"""
from .experiments import Check, Experiment, Result, grid_points  # noqa: F401  (registers the grid functions)
from .experiments import run as run_experiment
from .experiments.pools import PoolAverage, pool_average
from .experiments.rank_dynamics import RankDynamics, rank_dynamics
from .experiments.stationary import StationarySweep, boundary_from_means, stationary_sweep
from .simulators import (
                         AttentionRun,
                         Chain,
                         DescentRun,
                         FactorizedRun,
                         LangevinResult,
                         LearnerRun,
                         MeanEstimate,
                         attention_gradient_descent,
                         autocorrelation,
                         chain,
                         choose_dt,
                         descent_from_random_inits,
                         factorized_descent,
                         feature_learner,
                         hermite_features,
                         integrated_time,
                         kernel_learner,
                         langevin,
                         mean_and_se,
                         readout,
)
from .sweeps import load_sweep, local_cluster, sweep, sweep_summary

__all__ = ["langevin", "LangevinResult", "chain", "Chain", "choose_dt", "attention_gradient_descent",
           "AttentionRun", "descent_from_random_inits", "DescentRun", "stationary_sweep", "StationarySweep",
           "boundary_from_means", "mean_and_se", "MeanEstimate", "integrated_time", "autocorrelation",
           "sweep", "load_sweep", "sweep_summary", "local_cluster",
           "kernel_learner", "feature_learner", "hermite_features", "readout", "LearnerRun",
           "factorized_descent", "FactorizedRun", "rank_dynamics", "RankDynamics", "pool_average", "PoolAverage",
           "Experiment", "Result", "Check", "run_experiment"]
