"""validation — simulations that check the theory, figure regeneration, and the command line.

Public names: :func:`langevin` (numba Langevin sampler of the Gibbs measure), :class:`LangevinResult`,
:func:`attention_gradient_descent` (gradient descent on the whole attention matrix through the
forward pass), :func:`stationary_sweep` (theory vs exact vs Langevin against ``P``), and the
modules :mod:`validation.plots` (the figure registry), :mod:`validation.report`, :mod:`validation.cli`.
"""
from .attention_gd import AttentionRun, attention_gradient_descent
from .experiments import StationarySweep, stationary_sweep
from .langevin import LangevinResult, chain, langevin

__all__ = ["langevin", "LangevinResult", "chain", "attention_gradient_descent", "AttentionRun",
           "stationary_sweep", "StationarySweep"]
