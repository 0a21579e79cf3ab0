"""replica — free energies of linear attention trained on finite data.

Exact data-dependent free energy and Gibbs averages (:func:`gibbs`), the replica-symmetric theory
of the dataset-averaged stationary errors (:func:`stationary`, derivation in ``docs/replica.md``),
memorization → generalization boundaries in ``P`` (:func:`phase_boundary`) and in the task diversity ``K``
(:func:`diversity_transition`), the fast single-``λ`` ridge
solution (:func:`ridge`), the ``D → ∞`` task-pool theory of Lu et al. (:func:`asymptotic`), and the kernel and
feature learners of nonlinear in-context learning: their exact per-dataset ridge (:func:`kernel_ridge`,
:func:`kernel_data`) and the theory of their errors (:func:`learner_theory`, :func:`feature_learner_theory`).
"""
from .asymptotic import AsymptoticErrors, asymptotic, pool_resolvent
from .feature_theory import FeatureTheory, feature_learner_theory
from .gibbs import DatasetAverage, GibbsAverages, dataset_average, gibbs
from .kernel_ridge import KernelRidgeSolution, kernel_data, kernel_ridge
from .learner_theory import learner_theory
from .learners import LearnerTheory
from .phase import DiversityTransition, diversity_transition, phase_boundary
from .pool_theory import PoolErrors
from .ridge import RidgeSolution, ridge
from .stationary import StationaryCurve, stationary, stationary_curve
from .theory import OrderParameters, StationaryTheory, rs_constant, rs_functional

__all__ = ["gibbs", "GibbsAverages", "dataset_average", "DatasetAverage", "stationary", "stationary_curve",
           "StationaryTheory", "StationaryCurve", "OrderParameters", "rs_functional", "rs_constant", "phase_boundary",
           "diversity_transition", "DiversityTransition",
           "asymptotic", "AsymptoticErrors", "pool_resolvent", "ridge", "RidgeSolution", "PoolErrors",
           "learner_theory", "LearnerTheory", "feature_learner_theory", "FeatureTheory", "kernel_ridge", "kernel_data",
           "KernelRidgeSolution"]
