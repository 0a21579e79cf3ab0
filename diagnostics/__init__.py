"""diagnostics — training diagnostics of any weight trajectory (numpy in, numpy out).

A room of its own: nothing here knows linear attention or trains anything (it depends only on the argument checks
of :mod:`linattn.check`).

Public names
------------
effective_rank, stable_rank, singular_values,      spectral measures of a stack of matrices
subspace_distance, principal_angles,               distances between row/column spaces
diagnose, TrajectoryDiagnostics                    all of them along a trajectory (:mod:`diagnostics.measures`)
steepest_changes, change_points, loss_curvature,   transition times of a series (:mod:`diagnostics.transitions`)
rolling_autocorrelation, crossing_times
load_checkpoints, Checkpoints, qk_circuit,         checkpoint folders and per-head circuits
ov_circuit, split_in_proj                          (:mod:`diagnostics.checkpoints`)

The measures of recorded transformer runs are :mod:`diagnostics.transformers` (the record ``TransformerRun`` and its
transition times, ``emergence``) and :mod:`diagnostics.markov_transformer` (the read-outs of a transformer on
Markov chains: KL to the ideal estimators, phases, attention order parameters). The runs are trained by
:mod:`validation.simulators.transformers` and :mod:`validation.simulators.markov_transformer` (optional extra
``[torch]``; nothing in this package imports torch).
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
