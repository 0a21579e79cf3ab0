"""linattn — the model: in-context regression with single-layer linear attention.

Public names: :class:`Problem`, :class:`Prompts`, :func:`train_energy`, :func:`train_gradient`,
:func:`relative_gap` and :func:`transition_point` (the one definition of ``ΔEr`` and ``P*``),
:class:`ConvergenceError`, and the modules :mod:`linattn.check` (checks of plain arguments shared by the
library; it imports nothing of the library), :mod:`linattn.validate` (checks of a Problem, Prompts and the two
together), :mod:`linattn.sampling` (the exact samplers of the prompts),
:mod:`linattn.attention`, :mod:`linattn.params`,
:mod:`linattn.invariants`, :mod:`linattn.links` (link functions of single-index tasks, their
Hermite coefficients and exact Gaussian moments), :mod:`linattn.covariance` (anisotropic inputs),
:mod:`linattn.pools` (task pools: the exact in-distribution error) and
:mod:`linattn.factorized` (value/key/query parametrizations of the same predictor and their objectives) and
:mod:`linattn.markov` (in-context learning of random Markov chains: sampler and ideal estimators) and
:mod:`linattn.readout` (the feature learner's piecewise-linear readout, fitted by ridge).
"""
from . import (
    attention,
    check,
    covariance,
    factorized,
    invariants,
    links,
    markov,
    params,
    pools,
    readout,
    sampling,
    validate,
)
from .energy import Gradient, train_energy, train_gradient
from .errors import ConvergenceError
from .params import contrast_ratio, pack, unpack
from .problem import ICLSolution, Problem
from .prompts import Prompts
from .transition import relative_gap, transition_point

MODELS = check.MODELS

__all__ = [
    "Problem", "Prompts", "ICLSolution", "train_energy", "train_gradient", "Gradient",
    "ConvergenceError", "pack", "unpack", "contrast_ratio", "relative_gap", "transition_point", "MODELS",
    "attention", "check", "covariance", "factorized", "invariants", "links", "markov", "params", "pools", "readout",
    "sampling", "validate",
]
__version__ = "0.1.0"
