"""diagnostics — training diagnostics of any weight trajectory (numpy in, numpy out).

A room of its own: nothing here knows linear attention or trains anything (it depends only on the argument checks
of the model package).

Public names
------------
effective_rank, stable_rank, singular_values,      spectral measures of a stack of matrices
subspace_distance, principal_angles,               distances between row/column spaces
diagnose, TrajectoryDiagnostics                    all of them along a trajectory
steepest_changes, change_points, loss_curvature,   transition times of a series
rolling_autocorrelation, crossing_times
load_checkpoints, Checkpoints, qk_circuit,         checkpoint folders and per-head circuits
ov_circuit, split_in_proj
TransformerRun, emergence, Emergence,              the record of a transformer run and its transition times
halfway_step
markov                                             the read-outs of a model trained on Markov chains (KL to the
                                                   ideal estimators, phases, attention order parameters)

The runs are trained by :func:`validation.simulators.emergence_study`,
:func:`validation.simulators.train_modular_addition` and :func:`validation.simulators.train_markov_transformer`
(optional extra ``[torch]``; nothing in this package imports torch).
"""
from . import markov
from ._checkpoints import Checkpoints, load_checkpoints, ov_circuit, qk_circuit, split_in_proj
from ._measures import (
    TrajectoryDiagnostics,
    diagnose,
    effective_rank,
    principal_angles,
    singular_values,
    stable_rank,
    subspace_distance,
)
from ._transformer_runs import Emergence, TransformerRun, emergence, halfway_step
from ._transitions import change_points, crossing_times, loss_curvature, rolling_autocorrelation, steepest_changes

__all__ = ["effective_rank", "stable_rank", "singular_values", "subspace_distance", "principal_angles", "diagnose",
           "TrajectoryDiagnostics", "steepest_changes", "change_points", "loss_curvature", "rolling_autocorrelation",
           "crossing_times", "load_checkpoints", "Checkpoints", "qk_circuit", "ov_circuit", "split_in_proj",
           "TransformerRun", "emergence", "Emergence", "halfway_step", "markov"]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
