"""validation — simulations that check the theory, the experiments built on them, the figures, the
report and the command line. Rooms (imports point down the list):

* :mod:`validation.simulators` — numba Langevin (:func:`langevin`), gradient descent (:func:`descent_from_random_inits`,
  :func:`attention_gradient_descent`), factorized attention (:func:`factorized_descent`), the kernel and
  feature learners (:func:`kernel_learner`, :func:`feature_learner`), the Monte-Carlo check of the feature learner's
  optimal readout (:func:`binned_readout_error`) and the statistics of correlated samples;
* :mod:`validation.sweeps` — the generic runner: grids of any function (:func:`sweep`, :func:`load_sweep`,
  :func:`sweep_summary`, :func:`local_cluster`) and the points of experiments (:func:`~validation.sweeps.run_points`),
  in this process, on local processes or Dask, resumable into Zarr stores that open as one dataset
  (:func:`open_store`; optional extra ``[dask]``);
* :mod:`validation.experiments` — every experiment as settings → run → :class:`~validation.experiments.Result`
  (its data an :class:`~validation.experiments.ExperimentData`: named fields) → :class:`~validation.experiments.Check`,
  and the one-call workflows :func:`stationary_sweep` (theory vs exact
  vs Langevin against ``P``), :func:`pool_average` (exact averages with task pools) and :func:`rank_dynamics`;
* :mod:`validation.gallery` — figures that draw saved results (registry, gallery);
* ``validation.app`` — the validation report and the ``linattn`` command line.
"""
import importlib
from typing import TYPE_CHECKING

from .experiments import _grid_functions as grid_points  # noqa: F401  (registers the grid functions gibbs, langevin, long_time_limit)

#: public name -> module that defines it (imported on first use: ``import validation`` and ``linattn --help`` stay
#: fast, the simulators' numba kernels and the theory floors load only when needed)
_LAZY = {
    **dict.fromkeys(["Check", "Experiment", "Result"], "validation.experiments._base"),
    "ExperimentData": "validation.experiments._data",
    "run_experiment": "validation.experiments._base:run",
    **dict.fromkeys(["PoolAverage", "pool_average"], "validation.experiments._task_pools"),
    **dict.fromkeys(["RankDynamics", "rank_dynamics"], "validation.experiments._rank_dynamics"),
    **dict.fromkeys(["StationarySweep", "boundary_from_means", "stationary_sweep"],
                    "validation.experiments._stationary"),
    **dict.fromkeys(["AttentionRun", "BinnedError", "Chain", "DescentRun", "FactorizedRun", "LangevinResult",
                     "LearnerRun", "MeanEstimate", "attention_gradient_descent", "autocorrelation",
                     "binned_readout_error", "chain", "choose_dt", "descent_from_random_inits", "factorized_descent",
                     "feature_learner", "hermite_features", "integrated_time", "kernel_learner", "langevin",
                     "mean_and_se", "readout"],
                    "validation.simulators"),
    **dict.fromkeys(["load_sweep", "local_cluster", "open_store", "sweep", "sweep_summary"], "validation.sweeps"),
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:     # the lazy names, statically, for type checkers and the API reference
    from .experiments._base import Check, Experiment, Result  # noqa: F401
    from .experiments._base import run as run_experiment  # noqa: F401
    from .experiments._data import ExperimentData  # noqa: F401
    from .experiments._rank_dynamics import RankDynamics, rank_dynamics  # noqa: F401
    from .experiments._stationary import StationarySweep, boundary_from_means, stationary_sweep  # noqa: F401
    from .experiments._task_pools import PoolAverage, pool_average  # noqa: F401
    from .simulators import (  # noqa: F401
        AttentionRun,
        BinnedError,
        Chain,
        DescentRun,
        FactorizedRun,
        LangevinResult,
        LearnerRun,
        MeanEstimate,
        attention_gradient_descent,
        autocorrelation,
        binned_readout_error,
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
    from .sweeps import load_sweep, local_cluster, open_store, sweep, sweep_summary  # noqa: F401


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'validation' has no attribute {name!r}")
    module, _, attr = _LAZY[name].partition(":")
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

from linattn import _deprecated  # noqa: E402  (after the lazy names it falls back on)

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
