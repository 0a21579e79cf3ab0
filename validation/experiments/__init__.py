"""validation.experiments — every theory-vs-simulation experiment of the library, one module per family.

An experiment is settings → run → result → checks (:mod:`validation.experiments.base`): figures draw its
saved :class:`Result`, the validation report is the loop over its :class:`Check` rows, tests and sweeps
call the same :func:`run`. The registry discovers the modules of this package: adding an experiment
means adding a module.
"""
from .base import MODES, Check, Experiment, Result, Settings, get, registry, run

__all__ = ["Experiment", "Result", "Check", "Settings", "MODES", "registry", "get", "run"]
