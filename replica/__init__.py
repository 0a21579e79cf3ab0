"""replica — free energies of linear attention trained on finite data.

Exact data-dependent free energy and Gibbs averages (:func:`gibbs`), the replica-symmetric theory
of the dataset-averaged stationary errors (:func:`stationary`, derivation in ``docs/replica.md``),
memorization → generalization boundaries in ``P`` (:func:`phase_boundary`) and in the task diversity ``K``
(:func:`diversity_transition`), the fast single-``λ`` ridge
solution (:func:`ridge`), the ``D → ∞`` task-pool theory of Lu et al. (:func:`asymptotic`), and the kernel and
feature learners of nonlinear in-context learning: their exact per-dataset ridge (:func:`kernel_ridge`,
:func:`kernel_data`) and the theory of their errors (:func:`learner_theory`, :func:`feature_learner_theory`,
:func:`gamma_overlaps`), and the Gaussian-channel theory of the Markov-chain task's representational bottleneck
(:func:`channel`, :func:`projection_channel`, :func:`information_theory`, :func:`k2_theory`).
"""
from ._asymptotic import AsymptoticErrors, asymptotic, pool_resolvent
from ._bottleneck_theory import Channel, channel, information_theory, k2_theory, projection_channel
from ._feature_overlaps import gamma_overlaps
from ._feature_theory import FeatureTheory, feature_learner_theory
from ._gibbs import DatasetAverage, GibbsAverages, dataset_average, gibbs
from ._kernel_ridge import KernelRidgeSolution, kernel_data, kernel_ridge
from ._learner_common import LearnerTheory
from ._learner_theory import learner_theory
from ._phase import DiversityTransition, diversity_transition, phase_boundary
from ._pool_theory import PoolErrors
from ._ridge import RidgeSolution, ridge
from ._stationary import StationaryCurve, stationary, stationary_curve
from ._theory import OrderParameters, StationaryTheory, rs_constant, rs_functional

__all__ = ["gibbs", "GibbsAverages", "dataset_average", "DatasetAverage", "stationary", "stationary_curve",
           "StationaryTheory", "StationaryCurve", "OrderParameters", "rs_functional", "rs_constant", "phase_boundary",
           "diversity_transition", "DiversityTransition",
           "asymptotic", "AsymptoticErrors", "pool_resolvent", "ridge", "RidgeSolution", "PoolErrors",
           "learner_theory", "LearnerTheory", "feature_learner_theory", "FeatureTheory", "kernel_ridge", "kernel_data",
           "KernelRidgeSolution", "gamma_overlaps", "channel", "projection_channel", "Channel", "information_theory",
           "k2_theory"]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
