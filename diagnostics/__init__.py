"""diagnostics — training diagnostics of any weight trajectory (numpy in, numpy out).

A room of its own: nothing here knows linear attention (it depends only on the argument checks of
:mod:`linattn.check`, and the optional torch demos on the task sampler of :mod:`linattn.sampling`).

Public names
------------
effective_rank, stable_rank, singular_values,      spectral measures of a stack of matrices
subspace_distance, principal_angles,               distances between row/column spaces
diagnose, TrajectoryDiagnostics                    all of them along a trajectory (:mod:`diagnostics.measures`)
steepest_changes, change_points, loss_curvature,   transition times of a series (:mod:`diagnostics.transitions`)
rolling_autocorrelation, crossing_times
load_checkpoints, Checkpoints, qk_circuit,         checkpoint folders and per-head circuits
ov_circuit, split_in_proj                          (:mod:`diagnostics.checkpoints`)

The PyTorch demos (attention-only ICL emergence, grokking) are in :mod:`diagnostics.transformers`, and a
two-layer transformer trained on pools of Markov chains (its phases against the ideal estimators of
:mod:`linattn.markov`, and its attention order parameters) in :mod:`diagnostics.markov_transformer`
(optional extra ``[torch]``; importing this package never imports torch).
"""
from .checkpoints import Checkpoints, load_checkpoints, ov_circuit, qk_circuit, split_in_proj
from .measures import (
                       TrajectoryDiagnostics,
                       diagnose,
                       effective_rank,
                       principal_angles,
                       singular_values,
                       stable_rank,
                       subspace_distance,
)
from .transitions import change_points, crossing_times, loss_curvature, rolling_autocorrelation, steepest_changes

__all__ = ["effective_rank", "stable_rank", "singular_values", "subspace_distance", "principal_angles", "diagnose",
           "TrajectoryDiagnostics", "steepest_changes", "change_points", "loss_curvature", "rolling_autocorrelation",
           "crossing_times", "load_checkpoints", "Checkpoints", "qk_circuit", "ov_circuit", "split_in_proj"]
