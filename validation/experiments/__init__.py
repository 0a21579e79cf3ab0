"""validation.experiments — every theory-vs-simulation experiment of the library, one module per family.

An experiment is settings → run → result → checks (:mod:`validation.experiments._base`): figures draw its
saved :class:`Result`, whose ``data`` is an instance of the experiment's :class:`ExperimentData` class (named,
documented fields), the validation report is the loop over its :class:`Check` rows, tests and sweeps call the same
:func:`run`. The registry discovers the modules of this package: adding an experiment means adding a module.
"""
from ._base import MODES, Check, Experiment, Result, Settings, get, registry, run
from ._data import ExperimentData

__all__ = ["Experiment", "ExperimentData", "Result", "Check", "Settings", "MODES", "registry", "get", "run"]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
