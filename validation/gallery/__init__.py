"""Figure registry: a figure draws the saved :class:`~validation.experiments.Result` of one experiment
and writes its image (PNG and PDF) and the data behind it (``.npz``) into an output folder.

A figure module (any module of this package) registers its drawing functions with :func:`register`;
the registry discovers the modules (no list to edit). :func:`make` runs each figure's experiment
(:func:`validation.experiments.run`: in this process, or with ``store=`` as resumable points on local
processes or a Dask cluster), saves the result, and draws it.

Modes: ``"full"`` (the seed papers' protocol), ``"quick"`` (what ``make run`` regenerates) and
``"smoke"`` (tiny settings that exercise every code path of a figure in seconds; the pictures say
nothing and are for tests only).
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass
from typing import Callable

import numpy as np

from linattn import check

from ..experiments.base import MODES

#: figures that take longest in quick mode (measured in a fresh-clone ``make run``: phase ≈ 50 s, fig2, fig3 and
#: factorized_gap ≈ 60 s, fig5 ≈ 50 s each beside the report; fig2 and fig3 have since taken over the points of the
#: report sections langevin, transition and replica, which the report no longer computes — not measured again);
#: ``make(..., jobs > 1)`` starts them first so that no long figure runs alone at the end
LONG_FIRST = ("phase", "fig2", "fig3", "factorized_gap", "fig5", "fig6", "learners", "learners_scaling",
              "nonlinear_errors")

_REGISTRY: dict[str, "Figure"] = {}


@dataclass(frozen=True)
class Figure:
    """A registered figure: ``draw(result)`` returns a matplotlib figure of the saved result of
    ``experiment`` (or a dict ``file stem -> figure`` or ``-> (figure, data, meta)`` for several files);
    ``caption`` says what is plotted, the parameters, theory vs simulation, and the
    paper's figure; ``order`` places it in ``figures all`` and in the gallery (seed figures first,
    then by topic)."""

    name: str
    title: str
    func: Callable
    caption: str = ""
    requires: str = ""
    experiment: str = ""
    order: float = 100.0
    files: tuple = ()

    @property
    def stems(self) -> tuple:
        """The names of the files the figure writes (``name.png``, ``.pdf``, ``.npz`` for each)."""
        return self.files or (self.name,)

    def __repr__(self):
        return f"Figure({self.name!r}, experiment={self.experiment!r})"


def register(name: str, title: str, caption: str = "", requires: str = "", experiment: str = "", order: float = 100.0,
             files: tuple = ()):
    """Decorator registering ``draw(result) -> matplotlib.figure.Figure`` as figure ``name``.

    Parameters
    ----------
    name : str
        Registry name (``linattn figures NAME``), also the name of the files written.
    title : str
        One-line description.
    caption : str
        The caption of the gallery (:func:`write_gallery`).
    requires : str
        Optional extra the figure needs (the module to import, e.g. ``"torch"``); without it :func:`make`
        skips the figure with a message and the gallery says how to get it.
    experiment : str
        The experiment whose result the figure draws (required: a figure draws a result, it computes nothing).
    order : float
        Position in ``figures all`` and in the gallery.
    files : tuple of str
        The file stems when the figure writes several files (``("fig5a", "fig5b")``); each is also accepted as
        a name by :func:`make` and the command line. Default: ``(name,)``.

    Returns
    -------
    callable
        The decorator.
    """

    if not experiment:
        raise ValueError(f"figure {name!r}: experiment must name the experiment whose result it draws; got "
                         f"{experiment!r}")

    def deco(func):
        _REGISTRY[name] = Figure(name, title, func, caption, requires, experiment, order, tuple(files))
        return func

    return deco


def _load_all():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


def registry() -> dict[str, Figure]:
    """All registered figures by name.

    Returns
    -------
    dict of str to Figure
    """
    _load_all()
    return dict(sorted(_REGISTRY.items(), key=lambda kv: (kv[1].order, kv[0])))


def points(name: str, mode: str) -> int:
    """The number of points (independent units of work) of figure ``name``'s experiment in ``mode``.

    Parameters
    ----------
    name : str
        A registered figure.
    mode : {"smoke", "quick", "full"}

    Returns
    -------
    int
    """
    from ..experiments.base import get

    figures = registry()
    if not isinstance(name, str) or name not in figures:
        check.fail("name", name, f"one of the registered figures {tuple(figures)}")
    exp = get(figures[name].experiment)
    return len(exp.points(exp.settings(mode)))


def listing() -> str:
    """``linattn figures --list``: each figure, its title, the points of its experiment and what it costs (quick
    and full, seconds measured on 2 cores: :data:`validation.gallery.costs.COSTS`).

    Returns
    -------
    str
        One line per figure and a note on how the costs were measured.
    """
    from .costs import COSTS

    def cost(seconds):
        return "—" if seconds is None else (f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min")

    rows = [f"{'figure':22s} {'points quick/full':>17s} {'quick':>7s} {'full':>7s}  title"]
    for name, fig in registry().items():
        quick, full = COSTS.get(name, (None, None))
        files = f"  (writes {', '.join(fig.stems)}; each name is accepted)" if fig.files else ""
        counts = f"{points(name, 'quick')}/{points(name, 'full')}"
        rows.append(f"{name:22s} {counts:>17s} {cost(quick):>7s} {cost(full):>7s}  {fig.title}{files}")
    note = ("costs on 2 cores: quick, measured in a fresh-clone `make run` (two figures at a time beside the report); "
            "full, `linattn figures NAME --full` (one process, or --store DIR --workers 2) beside another job: upper "
            "bounds; — not measured. A full run takes --store DIR --workers N to spread its points and to resume.")
    return "\n".join(rows) + "\n\n" + note


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


def _run_one(name, out_dir, mode, progress, store, workers=1, scheduler=None):
    """Run one registered figure (module-level, so that worker processes can call it): its experiment
    (through a point store in ``store/<experiment>/<mode>`` when ``store`` is given), then the drawing; return the
    paths written and the seconds it took."""
    import time

    start = time.perf_counter()
    paths = _draw_one(name, out_dir, mode, progress, store, workers, scheduler)
    return paths, time.perf_counter() - start


def _draw_one(name, out_dir, mode, progress, store, workers, scheduler):
    fig = registry()[name]
    if fig.requires and not _importable(fig.requires):
        import sys

        print(f"figure {name}: skipped — it needs the optional extra [{fig.requires}] and {fig.requires} is not "
              f"installed (pip install -e '.[{fig.requires}]', or `make {fig.requires}`)", file=sys.stderr)
        return []
    result = compute(fig.experiment, mode, progress, store, workers, scheduler)
    save_result(result, out_dir)
    with style():
        image = fig.func(result)
    if not isinstance(image, dict):              # one image with the whole result
        return save(image, out_dir, name, result.data, {**result.meta, "mode": result.mode})
    paths = []                                   # several files: stem -> image or (image, data, meta)
    for stem, item in image.items():
        picture, data, meta = item if isinstance(item, tuple) else (item, result.data, result.meta)
        paths += save(picture, out_dir, stem, data, {**meta, "mode": result.mode})
    return paths


_RESULTS: dict = {}
#: the folder of an output folder that holds the results its figures drew (``linattn validate --reuse`` reads them)
RESULTS_FOLDER = "results"


def result_path(out_dir, experiment, mode):
    """Where :func:`make` keeps the result of ``experiment`` in ``mode`` drawn into ``out_dir``.

    Parameters
    ----------
    out_dir : str
    experiment : str
    mode : str

    Returns
    -------
    str
        ``out_dir/results/<experiment>-<mode>.npz``.
    """
    return os.path.join(out_dir, RESULTS_FOLDER, f"{experiment}-{mode}.npz")


def code_hash(experiment):
    """A hash of the source of the module that defines ``experiment`` (a result computed by other code of that
    module is not reused).

    Parameters
    ----------
    experiment : str

    Returns
    -------
    str
        16 hexadecimal digits.
    """
    import hashlib
    import inspect

    from ..experiments import get, registry

    experiment = check.choice("experiment", experiment, sorted(registry()))
    source = inspect.getsource(inspect.getmodule(type(get(experiment))))
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def save_result(result, out_dir):
    """Keep ``result`` at :func:`result_path` with the :func:`code_hash` of its experiment in ``meta``.

    Parameters
    ----------
    result : validation.experiments.Result
    out_dir : str

    Returns
    -------
    str
        The path written.
    """
    from ..experiments import Result

    path = result_path(out_dir, result.experiment, result.mode)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    kept = Result(result.experiment, result.mode, result.settings, data=result.data,
                  meta={**result.meta, "code_hash": code_hash(result.experiment)})
    return kept.save(path)


def compute(experiment, mode="quick", progress=True, store=None, workers=1, scheduler=None):
    """The result of ``experiment`` in ``mode`` (computed once per process and reused by every figure
    that draws it; with ``store``: the resumable points in ``store/<experiment>/<mode>``).

    Parameters
    ----------
    experiment : str
    mode : {"smoke", "quick", "full"}
    progress : bool
    store : str, optional
    workers : int
        With ``store``: a Dask ``LocalCluster`` of this many single-threaded workers evaluates the points
        (1: this process).
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:port``) that evaluates the points.

    Returns
    -------
    validation.experiments.Result
    """
    from ..experiments import run

    key = (experiment, mode, store)
    if key not in _RESULTS:
        path = None if store is None else os.path.join(store, experiment, mode)
        if scheduler is not None:
            from distributed import Client

            with Client(scheduler, timeout="10s") as client:
                _RESULTS[key] = run(experiment, mode, store=path, client=client, progress=progress)
        elif workers > 1:
            from ..sweeps import local_cluster

            with local_cluster(workers) as client:
                _RESULTS[key] = run(experiment, mode, store=path, client=client, progress=progress)
        else:
            _RESULTS[key] = run(experiment, mode, store=path, progress=progress)
    return _RESULTS[key]


def _parallel(selected, out_dir, mode, store, jobs):
    """Run figures in ``jobs`` worker processes with one BLAS thread each (several BLAS
    threads per worker oversubscribe the cores: OpenBLAS threads spin while they wait); yield
    (name, paths) as they finish. The workers are loky's: a plain script calling :func:`make` with ``jobs > 1``
    needs no ``if __name__ == "__main__"`` guard."""
    from concurrent.futures import as_completed

    from loky import ProcessPoolExecutor

    from ..sweeps import _die_with_parent, worker_env  # one BLAS/OpenMP/numba thread per worker

    order = sorted(selected, key=lambda n: LONG_FIRST.index(n) if n in LONG_FIRST else len(LONG_FIRST))
    with worker_env():
        ex = ProcessPoolExecutor(jobs, initializer=_die_with_parent, initargs=(os.getpid(),))
        try:
            futures = {ex.submit(_run_one, name, out_dir, mode, False, store): name for name in order}
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        except KeyboardInterrupt:     # the workers ignore Ctrl-C: stop them, say what is kept
            ex.shutdown(wait=False, kill_workers=True)
            raise KeyboardInterrupt("interrupted" + (f": the points finished are stored under {store!r}; run the same "
                                                     "command to resume" if store else "")) from None
        except BaseException:         # a failed figure: no worker keeps computing
            ex.shutdown(wait=False, kill_workers=True)
            raise
        ex.shutdown(wait=True)


def make(selected, out_dir: str, mode: str = "quick", progress: bool = True, store: str | None = None,
         jobs: int = 1, exclude=(), workers: int = 1, scheduler: str | None = None) -> list[str]:
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
        Folder of point stores: each figure's experiment computes its points resumably into
        ``store/<experiment>/<mode>`` (a Zarr group) and the figure is drawn from it; a second call
        evaluates nothing that is done (optional extra ``[dask]``).
    jobs : int
        Figures computed at once, each in its own worker process (loky) with one BLAS thread (``make run``
        uses 2 on two cores, after running ``fig1`` — one dense ``10⁴ × 10⁴`` eigenproblem — alone on
        both cores).
    exclude : sequence of str
        Figure names to leave out (e.g. ``all`` but ``fig1``; refused, naming ``exclude``, where none of
        ``selected`` is left). With ``jobs > 1`` the per-figure progress bars are replaced by one bar over the figures.
    workers : int
        With ``store``: a Dask ``LocalCluster`` of this many single-threaded workers evaluates each
        experiment's points (1: this process).
    scheduler : str, optional
        With ``store``: the address of a Dask scheduler that evaluates the points instead.

    Returns
    -------
    list of str
    """
    from linattn import check

    check.choice("mode", mode, MODES)
    progress = check.boolean("progress", progress)
    reg = registry()
    alias = {stem: name for name, fig in reg.items() for stem in fig.stems}
    for arg, names in (("selected", selected), ("exclude", exclude)):   # a str would be taken letter by letter
        if not isinstance(names, (list, tuple)) or not all(isinstance(s, str) for s in names):
            check.fail(arg, names, "a list of figure names (str)")
    if list(selected) == ["all"] or not selected:
        selected = list(reg)
    known = list(reg) + sorted(set(alias) - set(reg))
    for arg, names in (("selected", selected), ("exclude", exclude)):
        unknown = [s for s in names if s not in reg and s not in alias]
        if unknown:
            check.fail(arg, unknown, f"figure names among {known + ['all'] if arg == 'selected' else known}")
    selected = list(dict.fromkeys(alias.get(s, s) for s in selected))     # a file's stem runs its figure
    exclude = [alias.get(s, s) for s in exclude]
    jobs = check.positive_int("jobs", jobs)
    left = [s for s in selected if s not in set(exclude)]
    if not left:
        check.fail("exclude", list(exclude), f"names that leave at least one of the selected figures {selected}")
    selected = left
    writable_folder(out_dir)
    manifest = os.path.join(out_dir, MANIFEST)
    if os.path.exists(manifest) and not os.path.isfile(manifest):      # refused before any figure is computed
        raise ValueError(f"out must be a folder whose {MANIFEST} is a file (the index of the figures); "
                         f"{manifest!r} is a directory")
    written = []
    if jobs == 1 or len(selected) == 1:
        done = ((name, _run_one(name, out_dir, mode, progress, store, workers, scheduler)) for name in selected)
    else:
        done = _parallel(selected, out_dir, mode, store, jobs)
    from tqdm import tqdm

    for name, (paths, seconds) in tqdm(done, total=len(selected), desc="figures", disable=not progress or jobs == 1):
        _record(out_dir, name, paths, mode, seconds)
        written += paths
    write_gallery(out_dir)
    return written


MANIFEST = "manifest.json"


def _read_manifest(out_dir) -> dict:
    """The entries of ``out_dir/manifest.json`` that have the form ``_record`` writes
    (``{name: {"files": [str, ...], "mode": str, ...}}``). A missing file is an empty manifest; an unreadable
    one, or malformed entries, are dropped with a warning naming the file (the manifest is an index of generated
    files: regenerating a figure rewrites its entry)."""
    import json
    import warnings

    path = os.path.join(out_dir, MANIFEST)
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as fh:
            manifest = json.load(fh)
    except (OSError, ValueError) as exc:
        warnings.warn(f"{path} is not readable JSON ({type(exc).__name__}: {exc}); starting a new manifest",
                      stacklevel=3)
        return {}
    if not isinstance(manifest, dict):
        warnings.warn(f"{path} does not hold a JSON object; starting a new manifest", stacklevel=3)
        return {}
    good = {k: v for k, v in manifest.items()
            if isinstance(v, dict) and isinstance(v.get("files"), list) and all(isinstance(f, str) for f in v["files"])
            and isinstance(v.get("mode"), str) and isinstance(v.get("generated"), str)}
    if len(good) < len(manifest):
        warnings.warn(f"{path}: dropped malformed entries {sorted(set(manifest) - set(good))}", stacklevel=3)
    return good


def _record(out_dir, name, paths, mode, seconds=None):
    """Note in ``manifest.json`` which files figure ``name`` wrote, in which mode and in how many seconds (for the
    gallery and for :data:`COSTS`)."""
    import json
    import time

    path = os.path.join(out_dir, MANIFEST)
    manifest = _read_manifest(out_dir)
    manifest[name] = {"files": [os.path.basename(p) for p in paths], "mode": mode,
                      "generated": time.strftime("%Y-%m-%d %H:%M:%S")}
    if seconds is not None:
        manifest[name]["seconds"] = round(float(seconds), 1)
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

    writable_folder(out_dir)
    manifest = _read_manifest(out_dir)
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
                 + f". Regenerated by <code>{html.escape(command)}</code> ({entry['generated']})."
                 + "</figcaption></figure>"]
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

    return plt.style.context(os.path.join(os.path.dirname(__file__), "linattn.mplstyle"))


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


def panel_letters(axes, labels=None, x=-0.12, y=1.04, size=11):
    """Write the panel letters (a), (b), … on ``axes`` (in reading order), bold, just outside the top-left corner.

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes or an array of them
    labels : sequence of str, optional
        Default ``"(a)", "(b)", …``.
    x, y : float
        Position in axes coordinates.
    size : float
        Font size.

    Returns
    -------
    list of matplotlib.text.Text
    """
    axes = list(np.ravel(axes))
    labels = labels or [f"({chr(ord('a') + i)})" for i in range(len(axes))]
    return [ax.text(x, y, lab, transform=ax.transAxes, fontweight="bold", fontsize=size, va="bottom", ha="left")
            for ax, lab in zip(axes, labels)]
