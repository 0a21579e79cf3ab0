"""replica — free energies of linear attention trained on finite data.

Exact data-dependent free energy and Gibbs averages (:func:`gibbs`), the replica-symmetric theory
of the dataset-averaged stationary errors (:func:`stationary`, derivation in ``docs/replica.md``),
and memorization → generalization boundaries (:func:`phase_boundary`).
"""
from .gibbs import DatasetAverage, GibbsAverages, dataset_average, gibbs
from .phase import phase_boundary
from .theory import (OrderParameters, StationaryCurve, StationaryTheory, rs_constant, rs_functional, stationary,
                     stationary_curve)

__all__ = ["gibbs", "GibbsAverages", "dataset_average", "DatasetAverage", "stationary", "stationary_curve", "StationaryTheory",
           "StationaryCurve", "OrderParameters", "rs_functional", "rs_constant", "phase_boundary"]
