"""Generate the API reference pages ``docs/api/<package>.md`` from the packages' ``__all__``.

Each page says what the package is for and where to start, then documents

1. every name of the package's ``__all__`` (the public API, as users call it: ``replica.stationary``), and
2. every public submodule: its docstring, and the public names it defines (its ``__all__``, else the functions and
   classes defined in it) that the package's ``__all__`` did not already document.

Each object is documented once, at its public path (``replica.stationary``: the first package, in the order of
``PACKAGES`` and their public submodules, whose ``__all__`` exports it): that is the anchor a link to the reference
uses and the cross-references of the docstrings link to (``docs/scripts/griffe_xref.py``).
The pages are committed (static);
``tests/test_api_reference.py`` regenerates them and fails when they drift, so a new public name gets its entry.

Run ``python docs/scripts/api_pages.py`` from the repository root to rewrite the pages.
"""
from __future__ import annotations

import importlib
import inspect
import pathlib
import pkgutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: the packages with a page, and what each page says first (what the package is for, where to start)
PACKAGES = {
    "linattn": (
        "The model: problems, prompts, exact samplers, energies, exact test errors, links, task pools, the kernel "
        "learner's exact errors, Markov chains, the argument checks and the shared numerics.",
        "Start with `linattn.Problem` (a problem is `D`, `N`, the noise, the link and the task law) and "
        "`Problem.sample`; then `Problem.test_error` and the [recipes](../recipes.md)."),
    "spectra": (
        "Hessian spectra of the empirical risk: exact eigenvalues, the Marchenko–Pastur and finite-size laws, and "
        "the per-dataset eigensystem the exact engines share.",
        "Start with `spectra.hessian_eigenvalues` and `spectra.density`; `spectra.eigensystem` is what `replica` "
        "and `dynamics` diagonalise once per dataset."),
    "dynamics": (
        "Learning dynamics: exact gradient flow and descent per dataset, dataset-averaged curves, staged learning "
        "and the minimal Markov model.",
        "Start with `dynamics.gradient_flow` (one dataset, exact) and `dynamics.averaged_curves` (the theory)."),
    "replica": (
        "Free energies: exact Gibbs averages per dataset, the replica-symmetric theory of the dataset-averaged "
        "errors, task pools at finite and infinite `D`, the learners' theories, and the phase boundaries.",
        "Start with `replica.stationary` (the theory), `replica.gibbs` and `replica.ridge` (one dataset, exact); "
        "derivations on the [replica page](../replica.md)."),
    "diagnostics": (
        "Diagnostics of any weight trajectory: effective and stable ranks, subspace distances, principal angles, "
        "transitions, checkpoints and attention circuits.",
        "Start with `diagnostics.load_checkpoints` and `diagnostics.diagnose`; the "
        "[diagnostics page](../diagnostics.md) says when each measure is informative."),
    "validation": (
        "Simulators (numba Langevin, gradient descent, factorized attention, the learners), the experiments "
        "(settings → run → result → checks), the sweep runner, the figures and the command line.",
        "Start with `validation.langevin` or `validation.run_experiment`; the "
        "[experiments page](../experiments.md) lists every experiment and figure."),
}

#: modules left out of the reference: the figure modules of the gallery only draw registered results (the gallery
#: package's own functions are documented)
SKIP = ("validation.gallery.",)


def _public_modules(package):
    pkg = importlib.import_module(package)
    names = sorted(m.name for m in pkgutil.walk_packages(pkg.__path__, package + ".")
                   if not any(part.startswith("_") for part in m.name.split(".")))
    return [n for n in names if not n.startswith(SKIP) or n.count(".") < 2]


def _defining_path(owner, name):
    """``module.qualname`` where ``owner.name`` is defined, or ``None`` for a value that is not a function or class
    (constants are described in their module's docstring)."""
    obj = getattr(owner, name)
    if inspect.ismodule(obj):
        return None
    obj = inspect.unwrap(obj)
    if not (inspect.isfunction(obj) or inspect.isclass(obj)):
        return None
    return f"{obj.__module__}.{obj.__qualname__}"


def public_paths():
    """``{defining path: public path}`` of every documented function and class: the public path is the first
    ``module.name`` of the public modules (each package of ``PACKAGES``, then its public submodules) whose
    ``__all__`` has it — the anchor of its entry."""
    found = {}
    for package in PACKAGES:
        for modname in [package] + _public_modules(package):
            module = importlib.import_module(modname)
            for name in _own_names(module):
                path = _defining_path(module, name) if hasattr(module, name) else None
                if path is not None:
                    found.setdefault(path, f"{modname}.{name}")
    return found


def _own_names(module):
    """The public names of a module: its ``__all__``, else the functions and classes defined in it, in source
    order."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    own = []
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        try:
            line = inspect.getsourcelines(obj)[1]
        except (OSError, TypeError):
            line = 0
        own.append((line, name))
    return [name for _, name in sorted(own)]


def _entry(path, heading, level):
    return f"::: {path}\n    options:\n      heading: \"{heading}\"\n      heading_level: {level}\n"


def page(package, done, public=None):
    """The markdown of the page of ``package``; ``done`` (the anchors documented so far, on earlier pages too) gains
    the anchors it documents (public paths): each object has one entry in the whole reference."""
    public = public_paths() if public is None else public
    what, start = PACKAGES[package]
    lines = [f"# {package}\n", what + "\n", "**Where to start.** " + start + "\n",
             f"::: {package}\n    options:\n      members: false\n      show_root_heading: false\n",
             f"## Public API (`{package}.__all__`)\n"]
    for modname in [package] + _public_modules(package):
        module = importlib.import_module(modname)
        entries = []
        for name in _own_names(module):
            path = _defining_path(module, name) if hasattr(module, name) else None
            anchor = public.get(path)
            if anchor is None or anchor in done:
                continue
            done.add(anchor)
            entries.append(_entry(anchor, anchor, 3 if modname == package else 4))
        if modname == package:
            lines.extend(entries)
            continue
        lines.append(f"## `{modname}`\n")
        lines.append(f"::: {modname}\n    options:\n      members: false\n      show_root_heading: false\n")
        lines.extend(entries)
    return "\n".join(lines)


def pages():
    """``{file name: markdown}`` of every API page, and the set of anchors (public paths) they document."""
    done, public = set(), public_paths()
    return {f"{p}.md": page(p, done, public) for p in PACKAGES}, done


def main():
    out = ROOT / "docs" / "api"
    for name, text in pages()[0].items():
        (out / name).write_text(text)
        print(f"wrote {out / name}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
