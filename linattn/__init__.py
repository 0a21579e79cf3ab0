"""linattn — the model: in-context regression with single-layer linear attention.

Public names: :class:`Problem`, :class:`Prompts`, :func:`train_energy`, :func:`train_gradient`,
:class:`ConvergenceError`, and the modules :mod:`linattn.sampling`, :mod:`linattn.attention`,
:mod:`linattn.params`, :mod:`linattn.invariants`.
"""
from . import attention, invariants, params, sampling
from .energy import Gradient, train_energy, train_gradient
from .errors import ConvergenceError
from .params import contrast_ratio, pack, unpack
from .problem import ICLSolution, Problem
from .prompts import Prompts

MODELS = ("reduced", "full")

__all__ = [
    "Problem", "Prompts", "ICLSolution", "train_energy", "train_gradient", "Gradient",
    "ConvergenceError", "pack", "unpack", "contrast_ratio", "MODELS",
    "attention", "invariants", "params", "sampling",
]
__version__ = "0.1.0"
