"""validation.simulators — the simulators that check the theory.

numba Langevin sampler of the Gibbs measure (:func:`langevin`), gradient descent from sampled initialisations
(:func:`descent_from_random_inits`), gradient descent on the whole attention matrix through the forward pass
(:func:`attention_gradient_descent`), the factorized-attention simulator (:func:`factorized_descent`: gradient
descent, online SGD, Langevin), the kernel and feature learners of nonlinear single-index tasks
(:func:`kernel_learner`, :func:`feature_learner`, with the Monte-Carlo check of the feature learner's optimal readout
of a fixed ``Γ``, :func:`binned_readout_error`) and the statistics of correlated samples (:func:`mean_and_se`,
:func:`integrated_time`). The numba kernels live in private modules behind these validating functions.
"""
from ._attention_gd import AttentionRun, attention_gradient_descent
from ._factorized_sims import FactorizedRun, factorized_descent
from ._gradient_descent import DescentRun, descent_from_random_inits
from ._langevin import Chain, LangevinResult, chain, choose_dt, langevin
from ._learner_sims import (
    BinnedError,
    LearnerRun,
    binned_readout_error,
    feature_learner,
    hermite_features,
    kernel_learner,
    readout,
)
from ._markov_training import MarkovTransformerRun, build_markov_model, train_markov_transformer
from ._stats import MeanEstimate, autocorrelation, integrated_time, mean_and_se
from ._transformer_training import (
    EmergenceStudy,
    build_model,
    copy_batch,
    emergence_study,
    torch_available,
    train_attention_only,
    train_modular_addition,
)

__all__ = ["langevin", "LangevinResult", "chain", "Chain", "choose_dt", "attention_gradient_descent", "AttentionRun",
           "descent_from_random_inits", "DescentRun", "kernel_learner", "feature_learner", "hermite_features",
           "readout", "LearnerRun", "binned_readout_error", "BinnedError", "factorized_descent", "FactorizedRun",
           "mean_and_se", "MeanEstimate", "integrated_time", "autocorrelation",
           "torch_available", "build_model", "copy_batch", "train_attention_only", "train_modular_addition",
           "emergence_study", "EmergenceStudy", "build_markov_model", "train_markov_transformer",
           "MarkovTransformerRun"]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
