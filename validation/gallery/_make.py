"""Making figures: :func:`compute` (an experiment's result, once per process, from a point store when given) and
:func:`make` (compute, save and draw the selected figures, in this process or ``jobs`` at a time in worker processes
of the sweeps' process pool, and index them in the manifest and the gallery page).
"""
from __future__ import annotations

import importlib
import os

from linattn import _check as check

from ..experiments._base import MODES
from ..sweeps._runners import process_pool
from ._costs import COSTS
from ._page import MANIFEST, record, write_gallery
from ._registry import registry
from ._saving import save, save_result, style, writable_folder

#: the figures by their measured quick-mode cost, longest first (:data:`._costs.COSTS`): ``make(..., jobs > 1)`` starts
#: them in this order, so that no long figure runs alone at the end
LONG_FIRST = tuple(sorted(COSTS, key=lambda name: -COSTS[name][0]))


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


#: the results computed in this process by (experiment, mode, store): each is computed once
COMPUTED: dict = {}


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
    if key not in COMPUTED:
        path = None if store is None else os.path.join(store, experiment, mode)
        if scheduler is not None:
            from distributed import Client

            with Client(scheduler, timeout="10s") as client:
                COMPUTED[key] = run(experiment, mode, store=path, client=client, progress=progress)
        elif workers > 1:
            from ..sweeps import local_cluster

            with local_cluster(workers) as client:
                COMPUTED[key] = run(experiment, mode, store=path, client=client, progress=progress)
        else:
            COMPUTED[key] = run(experiment, mode, store=path, progress=progress)
    return COMPUTED[key]


def _parallel(selected, out_dir, mode, store, jobs):
    """Run figures in ``jobs`` worker processes of the sweeps' process pool (one BLAS/OpenMP/numba thread each, loky's:
    a plain script calling :func:`make` with ``jobs > 1`` needs no ``if __name__ == "__main__"`` guard); yield
    (name, paths) as they finish. A failed figure, or Ctrl-C, stops every worker."""
    from concurrent.futures import as_completed

    order = sorted(selected, key=lambda n: LONG_FIRST.index(n) if n in LONG_FIRST else len(LONG_FIRST))
    try:
        with process_pool(jobs, len(order)) as pool:
            futures = {pool.submit(_run_one, name, out_dir, mode, False, store): name for name in order}
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
    except KeyboardInterrupt:       # the workers are stopped: say what is kept
        raise KeyboardInterrupt("interrupted" + (f": the points finished are stored under {store!r}; run the same "
                                                 "command to resume" if store else "")) from None


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
        Figures computed at once, each in its own worker process (loky) with one BLAS thread, the longest first
        (:data:`LONG_FIRST`; ``make run`` uses 2 on two cores).
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
        record(out_dir, name, paths, mode, seconds)
        written += paths
    write_gallery(out_dir)
    return written

