"""The two entries of the runner: :func:`sweep` (a grid of any function, replicates, an ``xarray.Dataset``) and
:func:`run_points` (the points of an experiment, in order), each in memory or resumable in a Zarr store, and the
one line a Ctrl-C of a stored run leaves.
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys

import numpy as np

from linattn import _check as check

from ._grid import GRID_FUNCTIONS, Task, checked_grid, grid_tasks, require, run_point
from ._points import COORDS_ATTR, coords_attr, finish, read_points, run_and_write_ragged, write_ragged
from ._runners import MAX_WORKERS, checked_client, execute, serial_points
from ._store import DONE, PENDING, Memory, Store, code_attrs, dataset, decode_errors, run_and_write


def sweep(fn, grid, replicates=1, rng=0, client=None, store=None, workers=None, allow_mixed=False,
          progress=False, timeout=None, isolate=False):
    """Run ``fn`` over a parameter grid (:mod:`validation.sweeps`) and return the results as a Dataset.

    Parameters
    ----------
    fn : callable or str
        ``fn(**point, rng=numpy.random.Generator)`` returning a dict of floats or arrays, or the name
        of a registered grid function (:data:`GRID_FUNCTIONS`: ``"gibbs"``, ``"langevin"``,
        ``"long_time_limit"``). Functions defined in a notebook or in `python -c` work too: local
        worker processes receive ``fn`` by value (cloudpickle), Dask does the same.
    grid : dict
        Parameter name → list of values (names must be parameters of ``fn``).
    replicates : int
        Independent evaluations per grid point (different seeds).
    rng : int
        Sweep seed; task seeds derive from it and from (fn's name, point, replicate).
    client : dask.distributed.Client, optional
        Run on this cluster; ``None`` runs locally.
    store : str, optional
        Zarr folder: results are written as they arrive and a re-run resumes (``None``: in memory).
    workers : int, optional
        Local processes when ``client`` is ``None`` (default: ``LINATTN_SWEEP_WORKERS`` if set, else
        the number of cores; 1: serial, in this process — a point that ends its process with ``os._exit`` ends the
        run, the points already stored stay; with ``timeout``, ``isolate`` or ``workers >= 2`` every point runs in a
        worker).
    allow_mixed : bool
        Accept a store written by another code version.
    progress : bool
    timeout : float, optional
        Seconds an evaluation may run: a longer one is stopped with its worker process (also inside compiled code)
        and recorded failed with a ``Timeout`` error; the others go on. Evaluations then run in worker processes
        even for ``workers = 1``. With a Dask ``client`` the workers must share this machine's file system (a
        timed-out point of a remote worker is recorded as a dead worker).
    isolate : bool
        Evaluate every point in a worker process even for ``workers = 1`` (one worker: still serial), so that a
        point that ends its process (``os._exit``, a crash, the OOM killer) is recorded failed instead of ending
        the run; ``linattn sweep`` always isolates.

    Returns
    -------
    xarray.Dataset
        Dimensions: the grid parameters and ``replicate``; variables: the outputs of ``fn``,
        ``status`` (1 done, 2 failed) and ``error`` (message, empty when done).
    """
    xr = require("xarray")
    if isinstance(fn, str):
        if fn not in GRID_FUNCTIONS:
            check.fail("fn", fn, f"a callable or one of the registered grid functions {sorted(GRID_FUNCTIONS)}")
        name, fn = fn, GRID_FUNCTIONS[fn]
    elif callable(fn):
        name = getattr(fn, "grid_function_name", f"{fn.__module__}.{getattr(fn, '__qualname__', repr(fn))}")
    else:
        raise ValueError(f"fn must be a callable or the name of a registered grid function; got {fn!r}")
    grid = checked_grid(fn, grid)
    replicates = check.positive_int("replicates", replicates)
    rng = check.seed_int("rng", rng)
    allow_mixed = check.boolean("allow_mixed", allow_mixed)
    progress = check.boolean("progress", progress)
    isolate = check.boolean("isolate", isolate)
    client = checked_client(client)
    if timeout is not None:
        timeout = check.real("timeout", timeout, low=0.0, low_open=True, high=1e9)
    if client is None:
        if workers is None:
            env = os.environ.get("LINATTN_SWEEP_WORKERS")
            workers = (check.positive_int("LINATTN_SWEEP_WORKERS (environment variable)",
                                          int(env) if env.strip().lstrip("-").isdigit() else env)
                       if env else (os.cpu_count() or 1))
        workers = check.positive_int("workers", workers, maximum=MAX_WORKERS)
    elif workers is not None:
        raise ValueError(f"workers must be None when a client is given (the cluster decides); got {workers!r}")
    shape = tuple(len(v) for v in grid.values()) + (replicates,)
    n = float(np.prod(shape, dtype=float))      # ~1 kB per evaluation: its task, status, error and outputs
    check.memory(1000.0 * n, f"the bookkeeping of {n:.3g} evaluations (grid points × replicates)",
                 "grid or replicates")
    attrs = code_attrs(fn, name, grid, replicates, rng)
    if store is None:
        sink = Memory(shape)
    else:
        if not isinstance(store, (str, os.PathLike)) or not str(store).strip():
            check.fail("store", store, "a folder path for a Zarr group")
        for k, v in grid.items():           # a Zarr coordinate holds one numeric, boolean or string type
            if np.asarray(v).dtype.kind not in "biufUS":
                check.fail(f"grid[{k!r}]", v, "values a Zarr coordinate can hold when store is given: numbers within "
                           "int64/float64, strings or booleans (not None, not integers beyond 2**63)")
        coords = {**{k: v for k, v in grid.items()}, "replicate": np.arange(replicates)}
        sink = Store(os.fspath(store), attrs, shape, allow_mixed, dims=list(grid) + ["replicate"], coords=coords)
    status = sink.status()
    todo = [t for t in grid_tasks(name, grid, replicates, rng) if status[t.index] == PENDING]
    parallel = client is not None or workers > 1 or timeout is not None or isolate
    with _resumable(sink.status, int(n), store, "evaluations") if store is not None else contextlib.nullcontext():
        if store is None or not parallel:                  # the driver keeps or writes every point
            execute(fn, todo, client, workers, sink.write, progress, timeout=timeout, isolate=isolate)
        else:                                              # workers write their own points
            first = 0
            while todo and not sink.has_variables():       # the first result fixes the variables' shapes; it runs
                execute(fn, [todo.pop(0)], client, workers, sink.write, False, timeout=timeout,    # in a worker too
                        isolate=isolate)
                first += 1
            runner = functools.partial(run_and_write, path=sink.path, shape=shape)
            execute(fn, todo, client, workers, lambda index, st: None, progress, runner=runner, done_before=first,
                    on_died=lambda task, error: sink.write(task.index, None, error), timeout=timeout,
                    isolate=isolate)
    return dataset(xr, grid, replicates, sink, attrs)


@contextlib.contextmanager
def _resumable(status, n, store, what="points"):
    """Ctrl-C during a stored run: one line that says what is stored and how to resume (the workers are stopped)."""
    try:
        yield
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_Stored(status, n, store, what)) from None


class _Stored:
    """The message of an interrupted stored run, counted when it is shown: by then the points still running when
    Ctrl-C came are written or stopped (a Dask cluster finishes or kills them while it closes), so the count is
    what a resumed run finds done."""

    def __init__(self, status, n, store, what):
        self.status, self.n, self.store, self.what = status, n, os.fspath(store), what

    def __str__(self):
        try:
            done = f"{int(np.sum(self.status() == DONE))} of {self.n}"
        except Exception:                      # a store cut mid-write: still say how to resume
            done = f"? of {self.n}"
        return f"interrupted: {done} {self.what} stored in {self.store!r}; run the same command to resume"

    __repr__ = __str__


def _point_coords(coords, n_points):
    """Validated ``coords`` of :func:`run_points`: name → 1-d array of ``n_points`` numbers or strings."""
    if coords is None:
        return {}
    if not isinstance(coords, dict) or not all(isinstance(k, str) and k for k in coords):
        check.fail("coords", coords, "a dict of names to one number or string per point")
    out = {}
    for k, v in coords.items():
        a = np.asarray(v)
        if a.shape != (n_points,) or a.dtype.kind not in "biufU":
            check.fail(f"coords[{k!r}]", v, f"a 1-d array of {n_points} numbers or strings (one per point)")
        out[k] = a
    return out


def run_points(fn, n_points, name, attrs=None, store=None, client=None, workers=1, progress=False,
               allow_mixed=False, source=None, coords=None):
    """Evaluate ``fn(i, rng=None)`` for ``i = 0 … n_points − 1`` (the points of an experiment); return
    the list of outputs in order.

    Each point returns a dict of numeric arrays of any shape. With ``store`` (a folder) the outputs
    go into a Zarr group as they finish, point ``i`` into its own subgroup ``p{i}`` (so concurrent
    writers never share a file) with ``status[i]`` written last; a re-run evaluates only the points
    not yet done. The runner knows nothing about experiments: ``fn`` carries its own seeds.

    A finished store is one dataset over ``point`` (:func:`open_store`, or any Zarr tool: ``xarray.open_zarr(store)``):
    every output a variable — stacked where it has one shape at every point, else padded to its largest shape
    with NaN, each point's own shape noted so that the outputs read back exactly — with ``coords`` as its
    coordinates, beside ``status`` and ``error``; a point's group also reads alone,
    ``xarray.open_zarr(store, group="p7")``. Ctrl-C stops the workers and raises ``KeyboardInterrupt`` with one
    line: how many points are stored, and that the same call resumes.

    Parameters
    ----------
    fn : callable
        Picklable (e.g. a ``functools.partial`` of a module-level function) when run off this process.
    n_points : int
    name : str
        Recorded in the store; a store of another name is refused.
    attrs : dict, optional
        More attributes that must match for a resume (e.g. the settings as JSON).
    store : str, optional
    client : dask.distributed.Client, optional
    workers : int
        Local processes when no client is given (1: in this process, as :func:`sweep` with ``workers = 1``: a point
        that ends its process with ``os._exit`` ends the run; the points already stored stay).
    progress, allow_mixed : bool
    source : object, optional
        Whose source code is hashed into the store (default ``fn``).
    coords : dict, optional
        Name → one number, string or boolean per point (e.g. each point's ``D``, ``N``, ``P``; NaN where a point has
        no such parameter): the coordinates of the store's ``point`` dimension.

    Returns
    -------
    list of dict

    Raises
    ------
    RuntimeError
        If a point failed (its error is in the message and, with a store, in the store).
    """
    if not callable(fn):
        check.fail("fn", fn, "a callable fn(i, rng=None) returning a dict of numeric arrays")
    n_points = check.positive_int("n_points", n_points)
    check.memory(1000.0 * n_points, f"the bookkeeping of {n_points} points", "n_points")   # ~1 kB a point, as sweep
    workers = check.positive_int("workers", workers, maximum=MAX_WORKERS)
    progress = check.boolean("progress", progress)
    allow_mixed = check.boolean("allow_mixed", allow_mixed)
    client = checked_client(client)
    if attrs is not None and not isinstance(attrs, dict):
        check.fail("attrs", attrs, "None or a dict of attributes")
    coords = _point_coords(coords, n_points)
    tasks = [Task((i,), {"point": i}, 0, (0,)) for i in range(n_points)]
    code = code_attrs(source if source is not None else fn, name, {"point": list(range(n_points))}, 1, 0)
    code.update(attrs or {})
    if store is None:
        kept, failed = {}, {}                  # point -> outputs; index -> error
        write = lambda index, outputs, error: (kept.__setitem__(index[0], outputs),  # noqa: E731
                                               failed.__setitem__(index, error) if error else None)
        execute(fn, tasks, client, workers, write, progress, runner=run_point) if (client or workers > 1) else \
            serial_points(fn, tasks, write, progress)
        if failed:
            raise RuntimeError(f"{name}: {len(failed)} of {n_points} points failed; "
                               f"first: {next(iter(failed.values()))}")
        return [kept[i] for i in range(n_points)]
    if not isinstance(store, (str, os.PathLike)) or not str(store).strip():
        check.fail("store", store, "a folder path for a Zarr group")
    st = Store(os.fspath(store), code, (n_points,), allow_mixed, dims=["point"], consolidated=False)
    if coords and COORDS_ATTR not in st.group.attrs:    # an unfinished store opens with them (open_store)
        st.group.attrs[COORDS_ATTR] = coords_attr(coords)
    status = st.status()
    todo = [t for t in tasks if status[t.index] != DONE]
    if todo:
        print(f"{name}: {len(todo)} of {n_points} points to evaluate (store {os.fspath(store)})", file=sys.stderr)
    with _resumable(st.status, n_points, store):
        if client is None and workers == 1:
            serial_points(fn, todo, functools.partial(write_ragged, st.group), progress)
        elif todo:
            runner = functools.partial(run_and_write_ragged, path=st.path)
            execute(fn, todo, client, workers, lambda index, s: None, progress, runner=runner,
                    on_died=lambda task, error: write_ragged(st.group, task.index, None, error))
    status = st.status()
    errors = decode_errors(st.group)
    if errors or not np.all(status == DONE):
        first = next(iter(errors.values()), "not evaluated")
        raise RuntimeError(f"{name}: {int(np.sum(status != DONE))} of {n_points} points are not done in store "
                           f"{os.fspath(store)!r}; first error: {first}")
    if "padded" not in st.group.attrs:                 # also a store finished by a version that did not pad
        finish(st.group, n_points, coords)
        st.consolidated = True
        st.consolidate()
    return read_points(store)

