"""validation — simulations that check the theory, figure regeneration, and the command line.

Public names: :func:`langevin` (numba Langevin sampler of the Gibbs measure), :class:`LangevinResult`,
:func:`chain` (the exact description of the discrete chain), :func:`choose_dt`,
:func:`attention_gradient_descent` (gradient descent on the whole attention matrix through the
forward pass), :func:`descent_from_random_inits` (explicit gradient descent from sampled
initialisations), :func:`stationary_sweep` (theory vs exact vs Langevin against ``P``),
:func:`boundary_from_means`, the statistics :func:`mean_and_se`, :func:`integrated_time`,
:func:`autocorrelation`, parameter sweeps on local processes or Dask (:func:`sweep`,
:func:`load_sweep`, :func:`sweep_summary`, :func:`local_cluster`; optional extra ``[dask]``), the kernel and
feature learners of nonlinear single-index tasks (:func:`kernel_learner`, :func:`feature_learner`,
:func:`hermite_features`, :func:`readout`, :class:`LearnerRun`), the factorized-attention simulator
(:func:`factorized_descent`, :class:`FactorizedRun`: gradient descent, online SGD, Langevin), the training
diagnostics of staged learning checked against its closed form (:func:`rank_dynamics`, :class:`RankDynamics`,
:mod:`validation.rank_dynamics`), exact dataset averages with task pools (:func:`pool_average`, :mod:`validation.pools`), and the modules :mod:`validation.plots` (the figure registry),
:mod:`validation.report`, :mod:`validation.cli`.
"""
from .attention_gd import AttentionRun, attention_gradient_descent
from .factorized import FactorizedRun, factorized_descent
from .experiments import StationarySweep, boundary_from_means, stationary_sweep
from .gradient_descent import DescentRun, descent_from_random_inits
from .langevin import Chain, LangevinResult, chain, choose_dt, langevin
from .pools import PoolAverage, pool_average
from .rank_dynamics import RankDynamics, rank_dynamics
from .learners import LearnerRun, feature_learner, hermite_features, kernel_learner, readout
from .stats import MeanEstimate, autocorrelation, integrated_time, mean_and_se
from .sweeps import EXPERIMENTS, load_sweep, local_cluster, sweep, sweep_summary

__all__ = ["langevin", "LangevinResult", "chain", "Chain", "choose_dt", "attention_gradient_descent",
           "AttentionRun", "descent_from_random_inits", "DescentRun", "stationary_sweep", "StationarySweep",
           "boundary_from_means", "mean_and_se", "MeanEstimate", "integrated_time", "autocorrelation",
           "sweep", "load_sweep", "sweep_summary", "local_cluster", "EXPERIMENTS",
           "kernel_learner", "feature_learner", "hermite_features", "readout", "LearnerRun",
           "factorized_descent", "FactorizedRun", "rank_dynamics", "RankDynamics", "pool_average", "PoolAverage"]
