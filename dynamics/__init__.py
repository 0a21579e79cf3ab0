"""dynamics — learning dynamics of linear attention on finite data.

Exact per-dataset solutions (gradient flow, gradient descent, mean ± s.d. over random
initialisations), long-time limits (ΔEr, contrast ratio), and dataset-averaged learning curves
from the spectral laws, with their band over datasets and initialisations.

Public names: gradient_flow, gradient_descent, LearningCurves,
long_time_limit, LongTimeLimit, averaged_curves, AveragedCurves, sweep, Sweep; staged learning of
factorized attention (``dynamics/_staged.py``): mean_flow, StagedFlow, mode_flow, ModeFlow, mode_constants,
ModeConstants, mode_loss, logistic_modes, escape_times, saddle_losses; the exact two-parameter Markov-chain
minimal model (``dynamics/_minimal_loss.py``): markov_minimal_loss, markov_minimal_flow, markov_minimal_theory.
(The training diagnostics moved to the package :mod:`diagnostics`.)
"""
from ._averaged import AveragedCurves, averaged_curves
from ._flow import LearningCurves, LongTimeLimit, gradient_descent, gradient_flow, long_time_limit
from ._gap_sweep import Sweep, gap_sweep
from ._minimal_flow import markov_minimal_flow
from ._minimal_loss import markov_minimal_loss
from ._minimal_theory import markov_minimal_theory
from ._staged import (
    ModeConstants,
    ModeFlow,
    StagedFlow,
    escape_times,
    logistic_modes,
    mean_flow,
    mode_constants,
    mode_flow,
    mode_loss,
    saddle_losses,
)

__all__ = ["gradient_flow", "gradient_descent", "LearningCurves",
           "long_time_limit", "LongTimeLimit", "averaged_curves", "AveragedCurves", "gap_sweep", "Sweep",
           "mean_flow", "StagedFlow", "mode_flow", "ModeFlow", "mode_constants", "ModeConstants", "mode_loss",
           "logistic_modes", "escape_times", "saddle_losses",
           "markov_minimal_loss", "markov_minimal_flow", "markov_minimal_theory"]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
