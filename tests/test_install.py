"""The package as users get it: ``python -m build`` makes an sdist and, from it, a wheel; the wheel installed into a
fresh virtual environment outside the source tree imports every module, runs the command line and a figure, and
computes the same numbers as the library under test.

The fresh environment gets the wheel alone (``--no-deps``, by its own pip); its dependencies (numpy, scipy, numba, …)
are those of the environment running the tests, reached through ``.pth`` lines naming its site folders (plain paths:
the editable install's finder there is not run, so the source tree is not importable; the test checks it). The build
runs without isolation where setuptools >= 77 is installed (no network needed), with isolation otherwise. A full
install with dependency resolution from the index is what the nox sessions of ``make test-matrix`` do (noxfile.py).
"""
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("linattn", "spectra", "dynamics", "replica", "diagnostics", "validation")
#: the optional extras' modules: a module that needs one may fail to import only for want of it
OPTIONAL = ("torch", "xarray", "zarr", "distributed", "dask")
#: not copied into the build folder: environments, outputs and caches
JUNK = shutil.ignore_patterns(".venv", ".nox", ".git", "figures", "build", "dist", "*.egg-info", "__pycache__",
                              "runs", ".pytest_cache", ".ruff_cache")

IMPORT_ALL = f"""
import importlib, json, pkgutil, sys
out = {{"modules": 0, "skipped": [], "files": {{}}}}
for top in {PACKAGES!r}:
    pkg = importlib.import_module(top)
    out["files"][top] = pkg.__file__
    for info in pkgutil.walk_packages(pkg.__path__, top + "."):
        try:
            importlib.import_module(info.name)
        except ImportError as err:
            if (err.name or "").split(".")[0] not in {OPTIONAL!r}:
                raise
            out["skipped"].append(info.name)
        out["modules"] += 1
print(json.dumps(out))
"""

COMPUTE = """
import json
import linattn, replica, spectra
pb = linattn.Problem(D=4, N=8, noise=0.1)
data = pb.sample(P=30, rng=3)
g = replica.gibbs(data, pb, beta=1e3, lam=0.01, model="full")
th = replica.stationary(pb, 30, 1e3, 0.01, "full")
ev = spectra.hessian_eigenvalues(data, pb)
print(json.dumps([g.train, g.test, th.train, th.test, float(ev.max()), float(ev.sum())]))
"""


def _compute_here():
    ns = {}
    out = []
    ns["print"] = lambda s: out.append(s)
    exec(COMPUTE, ns)
    return json.loads(out[0])


def _build_isolation():
    """``[]`` (isolated build: setuptools from the index) or ``["--no-isolation"]`` where this environment already
    has the build backend the project asks for (setuptools >= 77)."""
    try:
        import setuptools
    except ImportError:
        return []
    major = int(setuptools.__version__.split(".")[0])
    return ["--no-isolation"] if major >= 77 else []


def _site_folders():
    """The folders this interpreter imports installed packages from (site-packages, user site, a numpy elsewhere),
    never the source tree."""
    import site

    dirs = list(site.getsitepackages()) + [site.getusersitepackages(), sysconfig.get_paths()["purelib"],
                                            sysconfig.get_paths()["platlib"], str(pathlib.Path(np.__file__).parents[1])]
    out = []
    for d in dirs:
        p = pathlib.Path(d).resolve()
        if p.is_dir() and p != ROOT and str(p) not in out:
            out.append(str(p))
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python, bin folder, folder to run in) of a fresh environment holding the wheel built from this tree."""
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package (extra [test]) is not installed")
    tmp = tmp_path_factory.mktemp("install")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=JUNK)
    dist = tmp / "dist"
    run = subprocess.run([sys.executable, "-m", "build", *_build_isolation(), "--outdir", str(dist), str(src)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    sdist, = dist.glob("linattn-*.tar.gz")
    wheel, = dist.glob("linattn-*.whl")
    env_dir = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)      # with its own pip (ensurepip)
    python = env_dir / "bin" / "python"
    site = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       check=True, capture_output=True, text=True).stdout.strip())
    run = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    # the dependencies only now: with them on the path first, pip saw the tested environment's linattn (a non-editable
    # install under nox) as "already satisfied" and installed nothing
    (site / "zz_test_dependencies.pth").write_text("\n".join(_site_folders()) + "\n")
    work = tmp / "work"
    work.mkdir()
    return python, env_dir / "bin", work, sdist


def _tracked_modules():
    """The package modules of the source tree (those git tracks, where it is a checkout: a stray file is not)."""
    try:
        names = subprocess.run(["git", "ls-files", "--", *PACKAGES], cwd=ROOT, check=True, capture_output=True,
                               text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(ROOT)) for top in PACKAGES for p in (ROOT / top).rglob("*.py")]
    return [n for n in names if n.endswith(".py")]


def _run(args, work):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(MPLBACKEND="Agg")          # BLAS threads as in this process (the same numbers, bit for bit)
    run = subprocess.run([str(a) for a in args], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return run.stdout


def test_the_wheel_installs_and_works_outside_the_tree(installed):
    """One test (the build is shared, and one xdist worker does it): the sdist has the license and the package
    data; every module of the tree imports from the wheel's copy; ``linattn --help`` and a smoke figure run; a small
    computation gives the numbers of the library under test, bit for bit (same code, same dependencies)."""
    import tarfile

    python, bin_dir, work, sdist = installed
    names = tarfile.open(sdist).getnames()
    assert any(n.endswith("/LICENSE") for n in names)
    assert any(n.endswith("validation/gallery/linattn.mplstyle") for n in names)

    out = json.loads(_run([python, "-c", IMPORT_ALL], work).splitlines()[-1])
    env_dir = python.parents[1]
    for top, path in out["files"].items():      # the wheel's copy, not the source tree
        path = pathlib.Path(path).resolve()
        assert env_dir.resolve() in path.parents and (ROOT / top) not in path.parents, (top, path)
    tracked = _tracked_modules()
    assert out["modules"] + len(PACKAGES) == len(tracked), (out["modules"], len(tracked))   # every module is in it

    assert "figures" in _run([bin_dir / "linattn", "--help"], work)
    # a figure whose numba kernels compile in ~3 s: every kernel compiles afresh for the wheel's copy (the staged
    # figure's online-SGD kernels took ~15 s)
    _run([bin_dir / "linattn", "figures", "pools_gtask", "--smoke", "--out", work / "figs"], work)
    assert {".npz", ".png"} <= {p.suffix for p in (work / "figs").iterdir() if p.stem == "pools_gtask"}

    there = json.loads(_run([python, "-c", COMPUTE], work).splitlines()[-1])
    assert there == _compute_here()
