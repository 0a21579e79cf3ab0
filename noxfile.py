"""The test matrix (``make test-matrix``): nox sessions, each in its own environment with linattn installed from a
wheel (not editable), run from the source tree's tests against that installed copy.

nox rather than tox: sessions are plain Python (the oldest-dependency pins are read from pyproject.toml here, not
kept twice), and its uv backend makes an environment with numba and scipy in seconds. Sessions:

- ``tests-3.10`` … ``tests-3.13``: the newest dependencies with the extras ``[test,dask,docs]``, the whole suite
  (``[dask]`` and ``[docs]`` from Python 3.11 on, both found by this matrix: Zarr 3 needs Python >= 3.11, and on
  3.10 the resolver pairs mkdocstrings 1.0.6 with pymdown-extensions 12.3, which fails: ``Highlight.__init__()
  missing 1 required positional argument: 'md'``).
- ``oldest``: Python 3.10 with the core dependencies pinned to the lower bounds that pyproject.toml declares.
- ``core``: the core alone (extra ``[test]``, no ``[dask]``/``[docs]``/``[torch]``): tests of an extra skip.
- ``coretype(Prescott)``, ``coretype(Sandybridge)``: OpenBLAS forced onto other kernels (``OPENBLAS_CORETYPE``),
  the suite less the doc pages, to catch numerical knife edges that depend on the BLAS kernel.

Interpreters: found on PATH as ``python3.X``; under pyenv, ``make test-matrix`` sets ``PYENV_VERSION`` so that the
shims of every installed 3.10–3.13 answer. ``LINATTN_MATRIX_PYTEST`` adds pytest arguments to every session (e.g.
``-m "not slow"`` for a short pass).
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex

import nox

ROOT = pathlib.Path(__file__).parent
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
CORETYPES = ["Prescott", "Sandybridge"]
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = [f"tests-{v}" for v in PYTHONS] + ["oldest", "core"] + [f"coretype({c})" for c in CORETYPES]
nox.options.reuse_existing_virtualenvs = True


def lower_bounds():
    """``name==version`` for every core dependency of pyproject.toml declared as ``name>=version``."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.M | re.S).group(1)
    pins = re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9][0-9.]*)"', block)
    return [f"{name}=={version}" for name, version in pins]


def _pytest(session, *args):
    """The suite from the source tree's tests against the installed wheel (``pytest`` puts no source folder on the
    path; ``LINATTN_EXPECT_INSTALLED`` makes tests/conftest.py refuse to run if linattn came from the tree)."""
    extra = shlex.split(os.environ.get("LINATTN_MATRIX_PYTEST", ""))
    workers = os.environ.get("LINATTN_MATRIX_WORKERS", "2")
    session.run("pytest", "-q", "-n", workers, "--dist", "worksteal", "-p", "no:cacheprovider", *args, *extra,
                env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "LINATTN_EXPECT_INSTALLED": "1", "LINATTN_HYPOTHESIS_PROFILE": "matrix", **session.env})


def _install(session, spec, *constraints):
    """Install the wheel built from this tree (never editable) with ``spec``'s extras; reinstalled at every run (uv
    keeps an installed local package of the same version, which would test stale code in a reused environment)."""
    if session.venv_backend == "uv":
        session.install("--reinstall-package", "linattn", *constraints, f".{spec}")
    else:
        session.install(*constraints, f".{spec}")
        session.install("--force-reinstall", "--no-deps", ".")


@nox.session(name="tests", python=PYTHONS)
def tests(session):
    """Newest dependencies, extras [test,dask,docs] ([dask] and [docs] from Python 3.11), the whole suite."""
    _install(session, "[test]" if session.python == "3.10" else "[test,dask,docs]")
    _pytest(session)


@nox.session(python=PYTHONS[0])
def oldest(session):
    """The oldest declared core dependencies (pyproject's lower bounds, pinned exactly) on the oldest Python."""
    pins = lower_bounds()
    path = pathlib.Path(session.create_tmp()) / "oldest.txt"
    path.write_text("\n".join(pins) + "\n")
    session.log("pins: " + ", ".join(pins))
    _install(session, "[test]", "-c", str(path))
    _pytest(session)


@nox.session(python=PYTHONS[1])
def core(session):
    """The core alone: the tests of the optional extras must skip, not fail."""
    _install(session, "[test]")
    _pytest(session)


@nox.session(name="coretype", python=PYTHONS[1])
@nox.parametrize("coretype", [nox.param(c, id=c) for c in CORETYPES])
def coretype(session, coretype):
    """OpenBLAS on another kernel family (bundled OpenBLAS of numpy and scipy): the suite less the doc pages."""
    _install(session, "[test]")
    session.env["OPENBLAS_CORETYPE"] = coretype
    session.run("python", "-c", "import numpy, scipy.linalg, threadpoolctl as t; "
                "print([(i['internal_api'], i.get('architecture')) for i in t.threadpool_info()])")
    _pytest(session, "--ignore", "tests/test_docs_run.py", "--ignore", "tests/test_install.py")
