"""linattn — the model: in-context regression with single-layer linear attention.

Public names: :class:`Problem` (``D``, ``N``, the noise, the link, the task law and the input covariance;
:class:`ICLSolution`), :class:`Prompts` (training prompts as sufficient statistics), :func:`sample_tokens` (raw
tokens and labels), :class:`Covariance` (anisotropic inputs), :func:`train_energy` and :func:`train_gradient`
(:class:`Gradient`), :func:`pack`, :func:`unpack` and :func:`contrast_ratio` (parameter vectors),
:func:`relative_gap` and :func:`transition_point` (the one definition of ``ΔEr`` and ``P*``), :data:`MODELS`, and
:class:`ConvergenceError`.

Namespaces: :mod:`linattn.pools` (task pools: exact in-distribution errors), :mod:`linattn.links` (link functions
and their moments), :mod:`linattn.factorized` (factorized parametrizations and their objectives),
:mod:`linattn.kernel_learner` (the kernel learner's exact errors), :mod:`linattn.attention` (the network itself on
embedded prompts), :mod:`linattn.markov` (in-context learning of random Markov chains) and :mod:`linattn.threads`
(how the library chooses its BLAS threads).
"""
from . import attention, factorized, kernel_learner, links, markov, pools, threads
from ._check import MODELS
from ._covariance import Covariance
from ._energy import Gradient, train_energy, train_gradient
from ._errors import ConvergenceError
from ._params import contrast_ratio, pack, unpack
from ._problem import ICLSolution, Problem
from ._prompts import Prompts
from ._sampling import Tokens, sample_tokens
from ._transition import relative_gap, transition_point

__all__ = [
    "Problem", "Prompts", "ICLSolution", "Covariance", "sample_tokens", "Tokens", "train_energy", "train_gradient",
    "Gradient", "ConvergenceError", "pack", "unpack", "contrast_ratio", "relative_gap", "transition_point", "MODELS",
    "attention", "factorized", "kernel_learner", "links", "markov", "pools", "threads",
]
__version__ = "0.2.0"

from . import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
