"""replica — free energies of linear attention trained on finite data.

Exact data-dependent free energy and Gibbs averages (:func:`gibbs`), the replica-symmetric theory
of the dataset-averaged stationary errors (:func:`stationary`, derivation in ``docs/replica.md``),
memorization → generalization boundaries (:func:`phase_boundary`), the fast single-``λ`` ridge
solution (:func:`ridge`) and the ``D → ∞`` task-pool theory of Lu et al. (:func:`asymptotic`).
"""
from .asymptotic import AsymptoticErrors, asymptotic, pool_resolvent
from .gibbs import DatasetAverage, GibbsAverages, dataset_average, gibbs
from .phase import phase_boundary
from .pool_theory import PoolErrors
from .ridge import RidgeSolution, ridge
from .stationary import StationaryCurve, stationary, stationary_curve
from .theory import OrderParameters, StationaryTheory, rs_constant, rs_functional

__all__ = ["gibbs", "GibbsAverages", "dataset_average", "DatasetAverage", "stationary", "stationary_curve",
           "StationaryTheory", "StationaryCurve", "OrderParameters", "rs_functional", "rs_constant", "phase_boundary",
           "asymptotic", "AsymptoticErrors", "pool_resolvent", "ridge", "RidgeSolution", "PoolErrors"]
