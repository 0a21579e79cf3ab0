"""Figure registry: each seed figure is a function that writes its image (PNG and PDF) and the
data behind it (``.npz``) into an output folder.

A figure module registers itself with :func:`register`; :func:`names` lists them in order and
:func:`make` runs them. Modules are imported lazily (figures can be heavy to import).

Modes: ``"full"`` (the seed papers' protocol), ``"quick"`` (what ``make run`` regenerates) and
``"smoke"`` (tiny settings that exercise every code path of a figure in seconds; the pictures say
nothing and are for tests only).
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

#: modules that define figures, in the order ``figures all`` runs them
MODULES = ("fig1", "fig2_3", "fig4", "fig5_6", "phase", "nonlinear", "learners", "factorized", "diagnostics", "pools",
           "transformers")

#: settings of the figures and of the report
MODES = ("smoke", "quick", "full")

#: figures that take longest in quick mode (measured in a fresh-clone ``make run``: phase ≈ 50 s, fig2, fig3 and
#: factorized_gap ≈ 60 s, fig5 ≈ 50 s each beside the report); ``make(..., jobs > 1)`` starts them first so that
#: no long figure runs alone at the end
LONG_FIRST = ("phase", "fig2", "fig3", "factorized_gap", "fig5", "fig6", "learners", "nonlinear_errors")

_REGISTRY: dict[str, "Figure"] = {}


@dataclass(frozen=True)
class Figure:
    """A registered figure: ``func(out_dir, mode, progress)`` returns the paths it wrote;
    ``caption`` says what is plotted, the parameters, theory vs simulation, and the seed figure."""

    name: str
    title: str
    func: Callable
    caption: str = ""
    requires: str = ""


def register(name: str, title: str, caption: str = "", requires: str = ""):
    """Decorator registering ``func(out_dir, mode, progress)`` as figure ``name``.

    Parameters
    ----------
    name : str
        Registry name (``linattn figures NAME``).
    title : str
        One-line description.
    caption : str
        The caption of the gallery (:func:`write_gallery`).
    requires : str
        Optional extra the figure needs (the module to import, e.g. ``"torch"``); without it :func:`make`
        skips the figure with a message and the gallery says how to get it.

    Returns
    -------
    callable
        The decorator.
    """

    def deco(func):
        _REGISTRY[name] = Figure(name, title, func, caption, requires)
        return func

    return deco


def _load_all():
    for mod in MODULES:
        try:
            importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as err:  # a figure module not written yet
            if err.name != f"{__name__}.{mod}":
                raise


def registry() -> dict[str, Figure]:
    """All registered figures by name.

    Returns
    -------
    dict of str to Figure
    """
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def names() -> list[str]:
    """Names of the registered figures.

    Returns
    -------
    list of str
    """
    return list(registry())


def _importable(module):
    """``True`` if ``module`` (an optional extra) can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _run_one(name, out_dir, mode, progress, store):
    """Run one registered figure (module-level, so that worker processes can call it)."""
    import inspect

    fig = registry()[name]
    if fig.requires and not _importable(fig.requires):
        import sys

        print(f"figure {name}: skipped — it needs the optional extra [{fig.requires}] and {fig.requires} is not "
              f"installed (pip install -e '.[{fig.requires}]', or `make {fig.requires}`)", file=sys.stderr)
        return []
    func = fig.func
    if store is not None and "store" in inspect.signature(func).parameters:
        return func(out_dir, mode, progress, store=store)
    return func(out_dir, mode, progress)


def _parallel(selected, out_dir, mode, store, jobs):
    """Run figures in ``jobs`` spawned worker processes with one BLAS thread each (several BLAS
    threads per worker oversubscribe the cores: OpenBLAS threads spin while they wait); yield
    (name, paths) as they finish."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from ..sweeps import _worker_env     # one BLAS/OpenMP/numba thread per spawned worker

    order = sorted(selected, key=lambda n: LONG_FIRST.index(n) if n in LONG_FIRST else len(LONG_FIRST))
    with _worker_env(), ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
        futures = {ex.submit(_run_one, name, out_dir, mode, False, store): name for name in order}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()


def make(selected, out_dir: str, mode: str = "quick", progress: bool = True, store: str | None = None,
         jobs: int = 1, exclude=()) -> list[str]:
    """Run the figures in ``selected`` (names, or ``["all"]``); return the paths written.

    Parameters
    ----------
    selected : list of str
        Figure names, or ``["all"]``.
    out_dir : str
        Output folder (created if needed; must be writable).
    mode : {"smoke", "quick", "full"}
    progress : bool
    store : str, optional
        Folder of sweep stores: figures that support it (``fig2``, ``fig3``) read their simulations
        from there instead of recomputing, and write what is missing (optional extra ``[dask]``).
    jobs : int
        Figures computed at once, each in its own spawned process with one BLAS thread (``make run``
        uses 2 on two cores, after running ``fig1`` — one dense ``10⁴ × 10⁴`` eigenproblem — alone on
        both cores).
    exclude : sequence of str
        Figure names to leave out (e.g. ``all`` but ``fig1``). With ``jobs > 1`` the per-figure progress bars are replaced by one bar over
        the figures.

    Returns
    -------
    list of str
    """
    from linattn import check

    check.choice("mode", mode, MODES)
    progress = check.boolean("progress", progress)
    reg = registry()
    if list(selected) == ["all"] or not selected:
        selected = list(reg)
    unknown = [s for s in list(selected) + list(exclude) if s not in reg]
    if unknown:
        raise ValueError(f"figure names must be among {list(reg) + ['all']}; got {unknown}")
    jobs = check.positive_int("jobs", jobs)
    selected = [s for s in selected if s not in set(exclude)]
    writable_folder(out_dir)
    written = []
    if jobs == 1 or len(selected) == 1:
        done = ((name, _run_one(name, out_dir, mode, progress, store)) for name in selected)
    else:
        done = _parallel(selected, out_dir, mode, store, jobs)
    from tqdm import tqdm

    for name, paths in tqdm(done, total=len(selected), desc="figures", disable=not progress or jobs == 1):
        _record(out_dir, name, paths, mode)
        written += paths
    write_gallery(out_dir)
    return written


MANIFEST = "manifest.json"


def _record(out_dir, name, paths, mode):
    """Note in ``manifest.json`` which files figure ``name`` wrote, in which mode (for the gallery)."""
    import json
    import time

    path = os.path.join(out_dir, MANIFEST)
    try:
        with open(path) as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        manifest = {}
    manifest[name] = {"files": [os.path.basename(p) for p in paths], "mode": mode,
                      "generated": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(path, "w") as fh:
        json.dump(manifest, fh, indent=1)


def write_gallery(out_dir: str) -> list[str]:
    """Write ``index.md`` and ``index.html`` into ``out_dir``: every registered figure with its
    caption, its images, links to the PDF and data, the command that regenerated it, and the
    summary line of the validation report (when one is there).

    Parameters
    ----------
    out_dir : str
        The figures folder.

    Returns
    -------
    list of str
        The two paths.
    """
    import html
    import json

    writable_folder(out_dir)
    try:
        with open(os.path.join(out_dir, MANIFEST)) as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        manifest = {}
    summary = _validation_summary(out_dir)
    md = ["# linattn figures", "", f"Validation: {summary}", ""]
    page = ["<!doctype html><meta charset='utf-8'><title>linattn figures</title>",
            "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}img{max-width:100%}"
            "figure{margin:2em 0}figcaption{font-size:0.9em}</style>",
            "<h1>linattn figures</h1>", f"<p>Validation: {html.escape(summary)}</p>"]
    for name, fig in registry().items():
        entry = manifest.get(name)
        md += [f"## {name}: {fig.title}", ""]
        page.append(f"<h2>{html.escape(name)}: {html.escape(fig.title)}</h2>")
        if entry is None or not entry["files"]:
            how = f"linattn figures {name} --out {out_dir}"
            if fig.requires:             # the Makefile target of the extra installs it and makes its figures
                text = (f"needs the optional extra [{fig.requires}]: `make {fig.requires}`, or "
                        f"`pip install -e '.[{fig.requires}]'` then `{how}`")
            else:
                text = f"`{how}`"
            md += [f"Not generated yet: {text}.", ""]
            page.append(f"<p>Not generated yet: {html.escape(text).replace('`', '')}.</p>")
            continue
        command = f"linattn figures {name} --{entry['mode']} --out {out_dir}"
        pngs = [f for f in entry["files"] if f.endswith(".png")]
        others = [f for f in entry["files"] if not f.endswith(".png")]
        md += [f"![{name}]({f})" for f in pngs] + [""]
        md += [fig.caption, "", f"Files: {', '.join(f'[{f}]({f})' for f in others)}. "
               f"Regenerated by `{command}` ({entry['generated']}).", ""]
        images = "".join("<img src='" + html.escape(f) + "' alt='" + name + "'>" for f in pngs)
        page += [f"<figure>{images}<figcaption>{html.escape(fig.caption)}<br>Files: "
                 + ", ".join(f"<a href='{html.escape(f)}'>{html.escape(f)}</a>" for f in others)
                 + f". Regenerated by <code>{html.escape(command)}</code> ({entry['generated']}).</figcaption></figure>"]
    paths = [os.path.join(out_dir, "index.md"), os.path.join(out_dir, "index.html")]
    with open(paths[0], "w") as fh:
        fh.write("\n".join(md))
    with open(paths[1], "w") as fh:
        fh.write("\n".join(page) + "\n")
    return paths


def _validation_summary(out_dir):
    """The summary line of ``validation_report.json`` in ``out_dir`` (or how to make one)."""
    import json

    try:
        with open(os.path.join(out_dir, "validation_report.json")) as fh:
            rows = json.load(fh)
    except (OSError, ValueError):
        return f"no report yet (`linattn validate --out {out_dir}`)"
    passed = sum(bool(r.get("passed")) for r in rows)
    failed = [f"{r['section']}: {r['quantity']}" for r in rows if not r.get("passed")]
    line = f"{passed} of {len(rows)} theory-vs-simulation comparisons pass ([report](validation_report.md))"
    return line + ("; failing: " + "; ".join(failed) if failed else "")


def writable_folder(path: str) -> str:
    """Create ``path`` if needed and check that files can be written there (before any work).

    Raises ``ValueError`` naming ``out`` otherwise.

    Parameters
    ----------
    path : str

    Returns
    -------
    str
        ``path``.
    """
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"out must be a folder path; got {path!r}")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"out must be a folder, but {path!r} is an existing file")
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".linattn-write-test")
        with open(probe, "w") as fh:
            fh.write("")
        os.remove(probe)
    except OSError as err:
        raise ValueError(f"out must be a writable folder; {path!r}: {err.strerror or err}") from None
    return path


def style():
    """Context manager applying the package's matplotlib style (Agg backend).

    Returns
    -------
    contextmanager
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.style.context(os.path.join(os.path.dirname(os.path.dirname(__file__)), "linattn.mplstyle"))


def save(fig, out_dir: str, name: str, data: dict, meta: dict | None = None) -> list[str]:
    """Write ``name.png``, ``name.pdf`` and the data ``name.npz`` (with ``meta`` as strings).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    out_dir, name : str
    data : dict of array_like
    meta : dict, optional

    Returns
    -------
    list of str
        The three paths.
    """
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"{name}.{ext}") for ext in ("png", "pdf", "npz")]
    fig.savefig(paths[0])
    fig.savefig(paths[1])
    plt.close(fig)
    payload = {k: np.asarray(v) for k, v in data.items()}
    for k, v in (meta or {}).items():
        payload[f"meta_{k}"] = np.asarray(str(v))
    np.savez_compressed(paths[2], **payload)
    return paths
