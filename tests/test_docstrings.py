"""numpydoc: every public function and method of the public modules (``docs/conventions.md`` §8) documents its
``Parameters`` (when it takes any) and its ``Returns``."""
import importlib
import inspect

import pytest
from test_public_face import PUBLIC

import diagnostics
import dynamics
import linattn
import replica
import spectra
import validation
from validation._app import report

PACKAGES = (linattn, spectra, dynamics, replica, diagnostics, validation)
SKIP_MODULES = {"check"}     # the argument checks: documented one-liners used by the library itself


def public_functions():
    seen = {}
    for pkg in PACKAGES:
        for name in pkg.__all__:
            if name in SKIP_MODULES:
                continue
            obj = getattr(pkg, name)
            if inspect.ismodule(obj):
                members = [(f"{pkg.__name__}.{name}.{n}", f) for n, f in vars(obj).items()
                           if not n.startswith("_") and inspect.isfunction(f) and f.__module__ == obj.__name__]
            elif inspect.isclass(obj):
                members = [(f"{pkg.__name__}.{name}.{n}", f) for n, f in vars(obj).items()
                           if not n.startswith("_") and inspect.isfunction(f)]
            elif inspect.isfunction(obj):
                members = [(f"{pkg.__name__}.{name}", obj)]
            else:
                members = []
            for qual, f in members:
                seen.setdefault(id(f), (qual, f))
    for mod in [importlib.import_module(m) for m in PUBLIC] + [report]:   # every public module, and the report
        for n, f in vars(mod).items():
            if not n.startswith("_") and inspect.isfunction(f) and (f.__module__ == mod.__name__
                                                                     or f.__module__.startswith(mod.__name__ + "._")):
                seen.setdefault(id(f), (f"{mod.__name__}.{n}", f))
    return sorted(seen.values(), key=lambda t: t[0])


FUNCTIONS = public_functions()


@pytest.mark.parametrize("qual, func", FUNCTIONS, ids=[q for q, _ in FUNCTIONS])
def test_numpydoc_sections(qual, func):
    doc = inspect.getdoc(func) or ""
    params = [p for p in inspect.signature(func).parameters if p not in ("self", "cls")]
    if params:
        assert "Parameters\n----------" in doc, f"{qual}: no Parameters section"
        for p in params:
            assert p in doc.split("Parameters\n----------", 1)[1], f"{qual}: parameter {p!r} undocumented"
    assert "Returns\n-------" in doc or "Yields\n------" in doc, f"{qual}: no Returns section"


def test_the_scan_finds_the_api():
    names = {q for q, _ in FUNCTIONS}
    assert {"replica.stationary", "spectra.density", "dynamics.gradient_flow", "validation.langevin",
            "validation.gallery.make"} <= names
    assert len(FUNCTIONS) > 80


def test_the_scan_finds_the_functions_behind_the_faces_of_the_gallery_and_the_sweeps():
    names = {q for q, _ in FUNCTIONS}
    assert {"validation.gallery.make", "validation.gallery.write_gallery", "validation.gallery.save",
            "validation.sweeps.run_points", "validation.sweeps.worker_env", "validation.sweeps.task_seed"} <= names
