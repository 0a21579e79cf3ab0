"""The module paths of version 0.1.0, kept importable for one release (they go in 0.3.0).

In 0.1.0 every module of the library was public (``replica.pool_theory``, ``linattn.check``, …). Since 0.2.0 the
API is what the public modules export (``docs/conventions.md`` §8) and the code lives in private rooms
(``replica/_pool_theory.py``). An old path still imports, with a ``DeprecationWarning`` that names the public place
of its names: ``import replica.pool_theory`` (or ``from replica.pool_theory import draw_theory_pool``, or the
attribute ``replica.pool_theory`` after ``import replica``) gives an alias module whose attributes are looked up in
the private module(s) that now hold that code — the same functions and classes, not copies.

An old path whose last part is also a public name of its package (``replica.stationary`` is a module path of 0.1.0
and the function ``replica.stationary``) keeps the public name: importing the alias does not replace the function on
the package (:class:`_Package`).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

REMOVED_IN = "0.3.0"

#: 0.1.0 module path -> the private module(s) holding its code now (looked up in order)
MOVED = {
    "linattn.check": ("linattn._check",), "linattn.covariance": ("linattn._covariance",),
    "linattn.energy": ("linattn._energy",), "linattn.errors": ("linattn._errors",),
    "linattn.invariants": ("linattn._invariants",), "linattn.numerics": ("linattn._numerics",),
    "linattn.numerics.cg": ("linattn._numerics.cg",),
    "linattn.numerics.fixed_point": ("linattn._numerics.fixed_point",),
    "linattn.numerics.quadrature": ("linattn._numerics.quadrature",),
    "linattn.numerics.stats": ("linattn._numerics.stats",), "linattn.params": ("linattn._params",),
    "linattn.problem": ("linattn._problem",), "linattn.prompts": ("linattn._prompts",),
    "linattn.random_kernels": ("linattn._random_kernels",), "linattn.readout": ("linattn._readout",),
    "linattn.results": ("linattn._results",), "linattn.sampling": ("linattn._sampling",),
    "linattn.transition": ("linattn._transition",), "linattn.validate": ("linattn._validate",),
    "linattn.markov.chains": ("linattn.markov._chains",),
    "linattn.markov.estimators": ("linattn.markov._estimators", "linattn.markov._loss_curves"),
    "spectra.density": ("spectra._density",), "spectra.device": ("spectra._device",),
    "spectra.eigensystem": ("spectra._eigensystem",), "spectra.eigenvalues": ("spectra._eigenvalues",),
    "spectra.law": ("spectra._prompt_law",), "spectra.matrix_free": ("spectra._matrix_free",),
    "spectra.resolvent": ("spectra._resolvent",), "spectra.symmetric": ("spectra._symmetric",),
    "dynamics.averaged": ("dynamics._averaged",), "dynamics.flow": ("dynamics._flow",),
    "dynamics.markov_minimal": ("dynamics._minimal_loss", "dynamics._minimal_flow", "dynamics._minimal_theory",
                                "dynamics._minimal_sequences"),
    "dynamics.staged": ("dynamics._staged",), "dynamics.sweeps": ("dynamics._gap_sweep",),
    "replica.asymptotic": ("replica._asymptotic",), "replica.bottleneck_theory": ("replica._bottleneck_theory",),
    "replica.feature_theory": ("replica._feature_theory", "replica._feature_overlaps", "replica._feature_mixture",
                               "replica._feature_readouts"),
    "replica.gibbs": ("replica._gibbs",), "replica.kernel_ridge": ("replica._kernel_ridge",),
    "replica.kernel_theory": ("replica._kernel_theory", "replica._kernel_types", "replica._kernel_solver",
                              "replica._ridge_law"),
    "replica.learner_theory": ("replica._learner_theory",), "replica.learners": ("replica._learner_common",),
    "replica.linear_solve": ("replica._linear_solve",), "replica.phase": ("replica._phase",),
    "replica.pool_finite": ("replica._pool_finite",), "replica.pool_theory": ("replica._pool_theory",),
    "replica.ridge": ("replica._ridge",), "replica.stationary": ("replica._stationary",),
    "replica.theory": ("replica._theory",),
    "diagnostics.checkpoints": ("diagnostics._checkpoints",),
    "diagnostics.markov_transformer": ("diagnostics._markov_readouts",),
    "diagnostics.measures": ("diagnostics._measures",), "diagnostics.transformers": ("diagnostics._transformer_runs",),
    "diagnostics.transitions": ("diagnostics._transitions",),
    "validation.app": ("validation._app",), "validation.app.cli": ("validation._app.cli",),
    "validation.app.report": ("validation._app.report",),
    "validation.simulators.attention_gd": ("validation.simulators._attention_gd",),
    "validation.simulators.factorized": ("validation.simulators._factorized_sims",),
    "validation.simulators.gradient_descent": ("validation.simulators._gradient_descent",),
    "validation.simulators.langevin": ("validation.simulators._langevin",),
    "validation.simulators.learners": ("validation.simulators._learner_sims",),
    "validation.simulators.markov_transformer": ("validation.simulators._markov_training",),
    "validation.simulators.stats": ("validation.simulators._stats",),
    "validation.simulators.transformers": ("validation.simulators._transformer_training",),
    "validation.experiments.base": ("validation.experiments._base",),
}


def _public_place(old: str) -> str:
    """The public package that exports the public names of an old module (its nearest ancestor that is no old path
    itself)."""
    package = old.rpartition(".")[0]
    while package in MOVED:
        package = package.rpartition(".")[0]
    return package


class _Alias(types.ModuleType):
    """An old module path: attributes are looked up in the private modules that hold its code now."""

    def __init__(self, old, targets):
        super().__init__(old, f"Deprecated alias of {', '.join(targets)} (module path of linattn 0.1.0).")
        self.__dict__["_targets"] = targets
        self.__dict__["__path__"] = []          # old subpackages (validation.app) keep their submodule paths

    def __getattr__(self, name):
        for target in self.__dict__["_targets"]:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {self.__name__!r} (deprecated alias) has no attribute {name!r}")

    def __dir__(self):
        out = set()
        for target in self.__dict__["_targets"]:
            out |= set(dir(importlib.import_module(target)))
        return sorted(out)


def _warn(old, stacklevel):
    warnings.warn(f"{old} is a private module since linattn 0.2.0: its public names are exported by "
                  f"{_public_place(old)} (docs/conventions.md §8); the path {old} is removed in {REMOVED_IN}",
                  DeprecationWarning, stacklevel=stacklevel)


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return _Alias(spec.name, MOVED[spec.name])

    def exec_module(self, module):
        _warn(module.__name__, stacklevel=3)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.machinery.ModuleSpec(fullname, _Loader())
        return None


class _Package(types.ModuleType):
    """A package of the library: an old submodule path found as an attribute (``replica.pool_theory``) is its alias,
    and importing an alias never replaces a public name of the package that has the same name."""

    def __getattr__(self, name):
        old = f"{self.__name__}.{name}"
        if old in MOVED:
            if old not in sys.modules:
                with warnings.catch_warnings():         # warned here, at the user's line
                    warnings.simplefilter("ignore", DeprecationWarning)
                    importlib.import_module(old)
                _warn(old, stacklevel=2)
            return sys.modules[old]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __reduce__(self):
        """Pickled by name, as a plain module is (a function of a notebook that names ``replica`` travels to worker
        processes by value: cloudpickle knows ``types.ModuleType`` only by its exact type)."""
        return importlib.import_module, (self.__name__,)

    def __setattr__(self, name, value):
        current = self.__dict__.get(name)
        if isinstance(value, _Alias) and current is not None and not isinstance(current, types.ModuleType):
            return
        super().__setattr__(name, value)


def install(package_name: str) -> None:
    """Make ``package_name`` (a package of the library) serve its old submodule paths, and put the finder of old
    paths on ``sys.meta_path`` (once; after the path finders, so a real module always wins)."""
    sys.modules[package_name].__class__ = _Package
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
