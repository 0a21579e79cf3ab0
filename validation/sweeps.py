r"""Parameter sweeps that outgrow one machine: a grid runner on local processes or Dask, and a
Zarr result store.

``sweep(fn, grid, replicates, rng, client, store)`` evaluates ``fn(**point, rng=Generator)`` at
every point of the Cartesian product of ``grid`` and every replicate, and returns an
``xarray.Dataset`` whose dimensions are the grid's parameters plus ``replicate`` and whose
variables are the quantities ``fn`` returns (a dict of floats or arrays; an array of shape ``s``
adds dimensions ``{name}_0, {name}_1, …``).

Determinism. The generator of a task is seeded by a ``numpy.random.SeedSequence`` built from the
sweep seed and a SHA-256 digest of ``(grid function name, point values, replicate)``: the numbers do
not depend on scheduling, on the number of workers, or on how a grid is split into several
sweeps. Serial, local-process and Dask runs therefore give bit-identical stores.

Failures. An exception raised by ``fn`` at a point (e.g. the ``ValueError`` of a parameter
combination the experiment refuses) is recorded — ``status`` 2 and the message in the ``error``
variable — and the sweep goes on.

Store. With ``store`` (a directory), the Zarr group holds one array per variable, chunked one
grid point per chunk, a ``status`` array (0 pending, 1 done, 2 failed) and the (truncated) messages
of failed points in ``error``; every array carries its dimension names and the grid values are
coordinate arrays, so ``xarray.open_zarr(store)`` reads a store as :func:`load_sweep` does.
On local processes and Dask workers each task writes its own
point into its own chunks as soon as it is done (no two points share a file, so concurrent writers
never collide; the status is written last, so a write cut short leaves the point pending); the
first point is evaluated by the driver, which creates the arrays from its outputs. An interrupted
sweep loses at most the points in flight, and re-running the same sweep skips the points already
done. Worker-side writing needs the store on a filesystem the workers share (always true for local
processes and a LocalCluster). The attributes record the library version, the git commit,
a hash of the experiment's source code, the grid and the seed, and a store written by another
code version is refused unless ``allow_mixed=True``.

Execution. ``client=None`` runs on local processes (``workers`` of them, default: the number of
cores; ``workers=1`` runs serially in this process); a ``dask.distributed.Client`` runs on its
cluster. Worker processes that this module starts get one BLAS/OpenMP/numba thread each, so that
``workers`` processes do not oversubscribe the cores; the numba cache on disk is shared.

Requires the optional extra ``pip install -e ".[dask]"`` (xarray, zarr, dask.distributed).
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import hashlib
import inspect
import itertools
import json
import logging
import os
import re
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
from linattn import check
from linattn.results import short_repr

#: environment of worker processes started here: one thread each
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
PENDING, DONE, FAILED = 0, 1, 2


def _require(module):
    try:
        return __import__(module)
    except ImportError as err:
        raise ImportError(f"validation.sweep needs {module}: install the optional extra with "
                          "`pip install -e \".[dask]\"`") from err


# ----------------------------------------------------------------------------- registered grid functions
#: functions registered by name with :func:`grid_function` (the modules of :mod:`validation.experiments` register
#: theirs: ``gibbs``, ``langevin``, ``long_time_limit``); the runner itself knows none of them. A grid function is
#: one point of a parameter grid, not an :class:`validation.experiments.Experiment` (conventions §7)
GRID_FUNCTIONS: dict = {}


def grid_function(name):
    """Decorator registering ``fn(**params, rng)`` as the named grid function of ``linattn sweep``.

    Parameters
    ----------
    name : str

    Returns
    -------
    callable
    """
    if not isinstance(name, str) or not name.strip():
        check.fail("name", name, "a non-empty string (the name `linattn sweep NAME` calls it by)")

    def deco(fn):
        GRID_FUNCTIONS[name] = fn
        fn.grid_function_name = name
        return fn
    return deco


# ----------------------------------------------------------------------------- tasks and seeds
@dataclass(frozen=True)
class Task:
    """One evaluation: the grid index, the parameter values, the replicate and its seed words."""

    __repr__ = short_repr

    index: tuple
    point: dict
    replicate: int
    seed: tuple


def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def task_seed(seed, name, point, replicate):
    """Seed words of a task: ``(seed, 8 words of SHA-256(name, point, replicate))``.

    Parameters
    ----------
    seed : int
    name : str
    point : dict
    replicate : int

    Returns
    -------
    tuple of int
    """
    seed = check.seed_int("seed", seed)
    if not isinstance(name, str):
        check.fail("name", name, "a string (the grid function's name)")
    if not isinstance(point, dict):
        check.fail("point", point, "a dict of parameter names to values")
    replicate = check.nonneg_int("replicate", replicate)
    text = json.dumps([name, sorted((k, _jsonable(v)) for k, v in point.items()), int(replicate)], default=repr)
    digest = hashlib.sha256(text.encode()).digest()
    return (int(seed),) + tuple(int.from_bytes(digest[4 * i:4 * i + 4], "little") for i in range(8))


def _grid(fn, grid):
    if not isinstance(grid, dict) or not grid:
        check.fail("grid", grid, "a non-empty dict mapping parameter names to lists of values")
    params = inspect.signature(fn).parameters
    accepts_any = any(p.kind == p.VAR_KEYWORD for p in params.values())
    out = {}
    for name, values in grid.items():
        if not isinstance(name, str) or name in ("rng", "replicate") or (name not in params and not accepts_any):
            known = [p for p in params if p != "rng"]
            raise ValueError(f"grid has an unknown parameter name {name!r}: accepted are the parameters of the "
                             f"grid function, {known}")
        vals = list(values) if isinstance(values, (list, tuple, np.ndarray, range)) else None
        if not vals:
            check.fail(f"grid[{name!r}]", values, "a non-empty list of values")
        vals = [_jsonable(v) for v in vals]
        if not all(v is None or isinstance(v, (bool, int, float, str)) for v in vals):
            check.fail(f"grid[{name!r}]", vals[:4], "a list of scalars (numbers, strings, booleans): a grid "
                       "coordinate cannot hold lists or arrays")
        keys = {("b", v) if isinstance(v, bool) else ("n", v) if isinstance(v, (int, float)) else ("s", v)
                for v in vals}          # 1 and 1.0 are one value (one coordinate): equal numbers hash alike in Python
        if len({kind for kind, v in keys if v is not None}) > 1:     # a coordinate array would coerce them
            check.fail(f"grid[{name!r}]", vals, "a list of values of one kind: numbers, strings or booleans (a "
                       "coordinate would turn 1 and 'a' into strings, True and 1 into numbers)")
        if len(keys) != len(vals):
            check.fail(f"grid[{name!r}]", vals, "a list of distinct values (a repeated value would be one point "
                       "twice; use replicates=)")
        out[name] = vals
    missing = [n for n, p in params.items() if p.default is p.empty and n != "rng" and n not in out
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if missing:                 # else every point fails alike with Python's "missing required positional arguments"
        check.fail("grid", sorted(out), f"a grid with a list of values for every required parameter of the grid "
                   f"function (missing: {missing})")
    if "rng" not in params and not accepts_any:
        raise ValueError("fn must accept an argument rng (a numpy.random.Generator); got a function without one")
    return out


def _tasks(name, grid, replicates, seed):
    keys = list(grid)
    tasks = []
    for index in itertools.product(*(range(len(grid[k])) for k in keys)):
        point = {k: grid[k][i] for k, i in zip(keys, index)}
        for r in range(replicates):
            tasks.append(Task(index + (r,), point, r, task_seed(seed, name, point, r)))
    return tasks


_SINGLE_THREADED = []


def _one_blas_thread():
    """Limit BLAS to one thread in this (worker) process, once: a multi-threaded BLAS sums in
    another order, and results would differ in the last bits between serial and parallel runs."""
    if not _SINGLE_THREADED:
        from threadpoolctl import threadpool_limits

        _SINGLE_THREADED.append(threadpool_limits(limits=1, user_api="blas"))


def _run_task(fn, task, limit_threads=True):
    """Evaluate one task: ``(index, outputs or None, error message or None)``; BLAS runs on one
    thread (set once per worker process; the serial path limits it around its loop instead)."""
    if limit_threads:
        _one_blas_thread()
    rng = np.random.default_rng(np.random.SeedSequence(task.seed))
    try:
        return task.index, _numeric_outputs(fn(**task.point, rng=rng)), None
    except BaseException as err:      # recorded, the sweep goes on (sys.exit in fn included); Ctrl-C stops it
        if isinstance(err, KeyboardInterrupt):
            raise
        return task.index, None, f"{type(err).__name__}: {err}"


def _numeric_outputs(out):
    """The outputs of a grid point as float arrays; anything else (None, text, complex values) is an error
    of that point, not a NaN stored as done."""
    if not isinstance(out, dict) or not out or not all(isinstance(k, str) for k in out):
        raise TypeError(f"the grid function must return a non-empty dict of named floats or arrays; got {out!r:.100}")
    arrays = {}
    for k, v in out.items():
        a = np.asarray(v)
        if a.dtype.kind not in "biuf":
            raise TypeError(f"output {k!r} must be a real number or array; got {v!r:.60}")
        arrays[k] = a.astype(float)
    return arrays


# ----------------------------------------------------------------------------- the store
def _code_attrs(fn, name, grid, replicates, seed):
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):       # defined in `python -c` or a notebook cell without source: its bytecode
        import marshal

        code = getattr(fn, "__code__", None) or getattr(getattr(fn, "func", None), "__code__", None)
        source = marshal.dumps(code).hex() if code is not None else type(fn).__qualname__
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                                cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    return {"experiment": name, "library_version": linattn.__version__, "git_commit": commit,
            "code_hash": hashlib.sha256(source.encode()).hexdigest()[:16], "seed": int(seed),
            "replicates": int(replicates), "grid": json.dumps(grid)}


#: the argument of :func:`sweep` behind each attribute of a store that must match (named in the messages)
_ATTR_ARGUMENTS = {"seed": "rng", "experiment": "experiment (fn's name)"}
#: characters of an error message kept in the store
ERROR_CHARS = 400
#: arrays of a store that are not outputs
_RESERVED = ("status", "error", "error_text")


def _dims(array):
    """The dimension names of a Zarr array (empty for a store written without them)."""
    return tuple(getattr(array.metadata, "dimension_names", None) or ())


def _write_point(group, shape, index, outputs, error):
    """Write one point's outputs (or its error) into its own chunks, the status last: a write cut
    short leaves the point pending, and a re-run redoes it. Arrays must exist (see :meth:`_Store.ensure`)."""
    region = tuple(slice(i, i + 1) for i in index)
    if outputs is not None:
        status_dims = _dims(group["status"])
        stored = {k for k in group.array_keys() if k not in _RESERVED and _dims(group[k])[:len(shape)] == status_dims}
        if stored and set(outputs) != stored:
            outputs, error = None, (f"OutputError: outputs {sorted(outputs)} are not the store's variables "
                                    f"{sorted(stored)} (set by the first point)")
    if outputs is not None:
        for k, v in outputs.items():
            if k not in group or group[k].shape != shape + v.shape:
                outputs, error = None, (f"OutputError: output {k!r} of shape {v.shape} does not match the store's "
                                        "variables (set by the first point)")
                break
    if outputs is not None:
        for k, v in outputs.items():
            group[k][region] = v[(None,) * len(shape)]
        group["status"][region] = DONE
    else:
        group["error"][region] = np.array(error[:ERROR_CHARS], dtype=str).reshape((1,) * len(shape))
        group["status"][region] = FAILED


_GROUPS = {}


def _run_and_write(fn, task, path, shape):
    """Worker side: evaluate a task and write its point into the store itself (one chunk per point,
    so concurrent writers never touch the same file). Returns ``(index, status)``."""
    import zarr

    if path not in _GROUPS:
        _GROUPS[path] = zarr.open_group(path, mode="r+")
    index, outputs, error = _run_task(fn, task)
    _write_point(_GROUPS[path], shape, index, outputs, error)
    return index, DONE if outputs is not None else FAILED


class _Store:
    """A Zarr group laid out one grid point per chunk (module docstring). Every array carries its
    dimension names and the grid values are coordinate arrays, so ``xarray.open_zarr`` reads the store."""

    def __init__(self, path, attrs, shape, allow_mixed, dims=None, coords=None, consolidated=True):
        try:
            self._open(path, attrs, shape, allow_mixed, dims, coords, consolidated)
        except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as err:   # zarr's errors among them
            if str(err).startswith("store "):                                            # ours: they name the store
                raise
            raise ValueError(f"store {path!r} is not a usable sweep store (damaged, or written by other code): "
                             f"{type(err).__name__}: {err}") from None

    def _open(self, path, attrs, shape, allow_mixed, dims, coords, consolidated):
        zarr = _require("zarr")
        self.path = path
        self.consolidated = consolidated
        self.shape = shape
        self.dims = list(dims) if dims is not None else [f"dim_{i}" for i in range(len(shape))]
        exists = os.path.exists(os.path.join(path, "zarr.json")) or os.path.exists(os.path.join(path, ".zgroup"))
        if os.path.exists(path) and not os.path.isdir(path):
            raise ValueError(f"store must be a folder for a Zarr group; {path!r} is a file")
        # Every step below may be cut by a kill at any moment; a re-run must complete it. So: the group's attributes
        # are written with the group (one file), membership is read from disk (not from possibly stale consolidated
        # metadata), and each array is created when it is missing.
        self.group = (zarr.open_group(path, mode="a", use_consolidated=False) if exists
                      else zarr.open_group(path, mode="a", attributes=dict(attrs)))
        if exists and "experiment" not in self.group.attrs:     # written by code that set the attributes later
            self.group.attrs.update(attrs)
        elif exists:
            old = dict(self.group.attrs)
            for key in ("experiment", "grid", "seed", "replicates") + (("settings",) if "settings" in attrs else ()):
                if old.get(key) != attrs[key]:
                    arg = _ATTR_ARGUMENTS.get(key, key)
                    raise ValueError(f"store {path!r} holds another sweep ({arg} = {old.get(key)!r}, not "
                                     f"{attrs[key]!r}); use a new store")
            for key in ("library_version", "code_hash"):
                if old.get(key) != attrs[key] and not allow_mixed:
                    raise ValueError(f"store {path!r} was written by another code version ({key} = {old.get(key)!r}, "
                                     f"now {attrs[key]!r}); refusing to mix results (allow_mixed=True to override)")
        self.coords = set()
        for name, values in (coords or {}).items():
            self.coords.add(name)
            if name not in self.group:
                vals = np.asarray(values)
                arr = self.group.create_array(name, shape=vals.shape,
                                              dtype=str if vals.dtype.kind in "US" else vals.dtype,
                                              dimension_names=[name])
                arr[...] = vals
        chunks = (1,) * len(shape)
        if "error" not in self.group:
            self.group.create_array("error", shape=shape, chunks=chunks, dtype=str, dimension_names=self.dims)
        if "status" not in self.group:
            self.group.create_array("status", shape=shape, chunks=chunks, dtype="int8", fill_value=0,
                                    dimension_names=self.dims)
            self.consolidate()

    def consolidate(self):
        """Write the consolidated metadata that ``xarray.open_zarr`` reads first."""
        import zarr

        if self.consolidated:
            import warnings

            with warnings.catch_warnings():      # "not part of the Zarr 3 specification": xarray reads it first
                warnings.simplefilter("ignore", UserWarning)
                zarr.consolidate_metadata(self.path)

    def status(self):
        return np.asarray(self.group["status"][...])

    def _outputs(self):
        return [k for k in self.group.array_keys() if k not in _RESERVED and k not in self.coords]

    def has_variables(self):
        """Whether the output arrays are complete: ``ensure`` notes their names in the attributes last."""
        return "variables" in self.group.attrs

    def ensure(self, outputs):
        """Create the arrays of the outputs of a first point (driver only, before workers write), the missing ones
        only (a run killed half-way through this resumes it), then note their names."""
        for k, v in outputs.items():
            if k not in self.group:
                self.group.create_array(k, shape=self.shape + v.shape, chunks=(1,) * len(self.shape) + v.shape,
                                        dtype="float64", fill_value=np.nan,
                                        dimension_names=self.dims + [f"{k}_{i}" for i in range(v.ndim)])
        self.group.attrs["variables"] = sorted(outputs)
        self.consolidate()

    def write(self, index, outputs, error):
        if outputs is not None and not self.has_variables():     # the first point fixes the variables
            self.ensure(outputs)
        _write_point(self.group, self.shape, index, outputs, error)

    def errors(self):
        return _decode_errors(self.group)

    def variables(self):
        return {k: np.asarray(self.group[k][...]) for k in self._outputs()}


def _decode_errors(group):
    status = np.asarray(group["status"][...])
    failed = list(zip(*np.nonzero(status == FAILED)))
    if "error_text" in group:                 # stores written before the string array
        text = np.asarray(group["error_text"][...])
        return {idx: bytes(text[idx]).rstrip(b"\0").decode("utf-8", errors="ignore") for idx in failed}
    text = np.asarray(group["error"][...])
    return {idx: str(text[idx]) for idx in failed}


class _Memory:
    """The in-memory stand-in of :class:`_Store` (``store=None``)."""

    def __init__(self, shape):
        self.shape = shape
        self._status = np.zeros(shape, np.int8)
        self._vars = {}
        self._errors = {}

    def status(self):
        return self._status

    def write(self, index, outputs, error):
        if outputs is not None and self._vars:
            if set(outputs) != set(self._vars) or any(self._vars[k].shape != self.shape + v.shape
                                                         for k, v in outputs.items()):
                outputs, error = None, (f"OutputError: outputs {sorted((k, v.shape) for k, v in outputs.items())} do "
                                        "not match those of the first point (names and shapes)")
        if outputs is not None:
            for k, v in outputs.items():
                if k not in self._vars:
                    self._vars[k] = np.full(self.shape + v.shape, np.nan)
                self._vars[k][index] = v
            self._status[index] = DONE
        else:
            self._errors[index] = error
            self._status[index] = FAILED

    def errors(self):
        return dict(self._errors)

    def variables(self):
        return dict(self._vars)


# ----------------------------------------------------------------------------- execution
@contextlib.contextmanager
def worker_env():
    """Environment inherited by worker processes started in this block: one thread each."""
    saved = {k: os.environ.get(k) for k in WORKER_ENV}
    os.environ.update(WORKER_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: local worker processes at most (``workers`` of :func:`sweep`, :func:`run_points`, :func:`local_cluster`): each is a
#: Python process of its own, and a pool never starts more of them than it has points
MAX_WORKERS = 1024


def checked_client(client):
    """``client`` if it is ``None`` or has a callable ``submit`` (a ``dask.distributed.Client``); else a ValueError
    naming ``client`` (a string or a number reached ``client.submit``: a raw ``AttributeError``).

    Parameters
    ----------
    client : None or dask.distributed.Client
        The client of :func:`sweep`, :func:`run_points` and :func:`validation.run_experiment`.

    Returns
    -------
    None or dask.distributed.Client
        ``client`` unchanged.

    Raises
    ------
    ValueError
        ``client`` neither ``None`` nor an object with a callable ``submit``.
    """
    if client is not None and not callable(getattr(client, "submit", None)):
        check.fail("client", client, "None or a dask.distributed.Client (an object with a submit method)")
    return client


def local_cluster(workers):
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker processes and its client.

    Worker processes inherit one BLAS/OpenMP/numba thread each (no oversubscription). The cluster's own log
    messages below ``ERROR`` are silenced (its warnings about cancelled tasks and killed workers after a Ctrl-C would
    bury the one line that says how to resume); errors of the cluster and the points' own warnings still show. Its
    HTTP server listens on a free port (two clusters at once: no "port 8787 is already in use" warning).

    Parameters
    ----------
    workers : int

    Returns
    -------
    contextmanager
        Yields a ``dask.distributed.Client``; the cluster is closed on exit.
    """
    workers = check.positive_int("workers", workers, maximum=MAX_WORKERS)
    return _local_cluster(workers, _require("distributed"))


@contextlib.contextmanager
def _local_cluster(workers, distributed):
    with worker_env(), distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                 dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        yield client


_UNPICKLED = {}


def _by_value(fn):
    """``fn`` as cloudpickle bytes. cloudpickle sends a function of ``__main__`` by value and one of an importable
    module by reference (the worker imports it); a module that this process loaded from a file by path (pytest's
    importlib mode, ``runpy``, an ``exec``) is in ``sys.modules`` but not importable by name in a worker, so its
    functions are sent by value too (a ``functools.partial`` is looked through)."""
    import importlib.machinery

    cloudpickle = _require("cloudpickle")
    modules = []
    f = fn
    while f is not None:
        name = getattr(f, "__module__", None)
        mod = sys.modules.get(name) if isinstance(name, str) else None
        if mod is not None and name != "__main__" and mod not in modules:
            # importable by name in a fresh process: its top-level package is found on sys.path (find_spec would
            # answer from sys.modules, where a module loaded by path also sits)
            importable = importlib.machinery.PathFinder.find_spec(name.partition(".")[0], sys.path) is not None
            if not importable:
                modules.append(mod)
        f = getattr(f, "func", None) if isinstance(f, functools.partial) else None
    for mod in modules:
        cloudpickle.register_pickle_by_value(mod)
    try:
        return cloudpickle.dumps(fn)
    finally:
        for mod in modules:
            cloudpickle.unregister_pickle_by_value(mod)


def _call_by_value(runner, blob, task):
    """Worker side: ``runner(fn, task)`` with ``fn`` unpickled (once per worker) from its cloudpickle bytes."""
    key = hashlib.sha256(blob).hexdigest()
    if key not in _UNPICKLED:
        import cloudpickle

        _UNPICKLED[key] = cloudpickle.loads(blob)
    return runner(_UNPICKLED[key], task)


#: the error recorded for a point whose worker process died (os._exit, a signal, the kernel's OOM killer)
WORKER_DIED = "WorkerDied: the worker process evaluating this point died (killed, out of memory, or os._exit)"


def _die_with_parent(parent):
    """Worker initializer: end this worker when the driver ``parent`` dies (e.g. ``kill -9`` of the driver), so that
    no orphaned worker keeps computing, and leave Ctrl-C to the driver (which kills its workers: one message, not
    one traceback per worker). Linux: the kernel sends SIGKILL at the parent's death
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere, and as a fallback, a thread checks the parent once a second."""
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the driver's: it stops the workers (_in_processes)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))    # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:            # the driver died before the signal was armed
        os._exit(1)

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="linattn-parent-watch").start()


def _timeout_marker(folder, task):
    return os.path.join(folder, "timeout-" + "_".join(map(str, task.index)))


def _with_timeout(runner, timeout, folder, fn, task):
    """Worker side: ``runner(fn, task)`` stopped after ``timeout`` seconds. ``faulthandler``'s watchdog is a C thread:
    it ends the worker process even inside compiled code that never returns to the interpreter, after writing the
    point's Python traceback to its marker file, from which the driver records the timeout."""
    import faulthandler

    path = _timeout_marker(folder, task)
    try:
        with open(path, "w") as fh:
            faulthandler.dump_traceback_later(timeout, exit=True, file=fh)
            try:
                return runner(fn, task)
            finally:
                faulthandler.cancel_dump_traceback_later()
    finally:             # not reached on a timeout: the process has exited, the marker stays for the driver
        os.remove(path)


def _death_error(task, timeout, folder):
    """What to record for a point whose worker died: a timeout when its marker holds a traceback."""
    if timeout is not None:
        path = _timeout_marker(folder, task)
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path, errors="replace") as fh:      # one block per thread, innermost frame first:
                blocks = re.split(r"\n(?=\S)", fh.read())   # the point's thread is the one in _with_timeout
            mine = [b for b in blocks if "_with_timeout" in b] or blocks
            where = [ln.strip() for ln in mine[0].splitlines() if ln.strip().startswith("File ")]
            return (f"Timeout: the point ran longer than timeout = {timeout:g} s and its worker was stopped"
                    + (f" (in {where[0]})" if where else ""))
    return WORKER_DIED


def _execute(fn, tasks, client, workers, sink, progress, runner=_run_task, done_before=0, on_died=None,
             timeout=None, isolate=False):
    """Run ``tasks``; ``runner(fn, task)`` returns what ``sink`` takes (``_run_task``: the outputs,
    for the driver to keep or write; ``_run_and_write``: a status, the worker having written).
    ``done_before``: evaluations of this run already done by the driver (counted by the progress bar).
    A worker that dies takes no other point with it: the points it broke are retried one by one in fresh
    processes, and a point whose worker dies again is recorded by ``on_died(task, error)`` (default: failed with
    :data:`WORKER_DIED`). ``timeout`` (seconds): a point still running after it is stopped with its worker
    (never in this process: with a timeout, ``workers = 1`` runs in one worker process) and recorded failed with
    a ``Timeout`` error, without a retry. ``isolate``: evaluate in worker processes even for ``workers = 1``."""
    if on_died is None:
        def on_died(task, error):
            sink(task.index, None, error)
    folder = None
    if timeout is not None:
        import tempfile

        folder = tempfile.mkdtemp(prefix="linattn-sweep-timeouts-")
        runner = functools.partial(_with_timeout, runner, float(timeout), folder)
    try:
        _dispatch(fn, tasks, client, workers, sink, progress, runner, done_before, on_died, timeout, folder, isolate)
    finally:
        if folder is not None:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def _dispatch(fn, tasks, client, workers, sink, progress, runner, done_before, on_died, timeout, folder, isolate):
    bar = tqdm(total=len(tasks) + done_before, initial=done_before, desc="sweep", disable=not progress)
    if client is not None:
        futures = {client.submit(runner, fn, t, pure=False): t for t in tasks}
        from distributed import as_completed

        try:
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as err:           # KilledWorker: dask retried it on other workers, and they died too
                    if type(err).__name__ != "KilledWorker":
                        raise
                    on_died(futures[fut], _death_error(futures[fut], timeout, folder))
                else:
                    sink(*result)
                bar.update()
        except KeyboardInterrupt:                  # the points in flight are dropped, not left running
            client.cancel(list(futures), force=True)
            raise
    elif workers == 1 and timeout is None and not isolate:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):     # restored afterwards in this process
            for t in tasks:
                sink(*_run_task(fn, t, limit_threads=False))
                bar.update()
    else:
        blob = _by_value(fn)                          # functions of a notebook, `python -c` or a loaded file work too
        broken = _in_processes(blob, runner, tasks, workers, sink, bar)
        for t in broken:                              # isolate each point its pool lost (a timed-out one: not again)
            error = _death_error(t, timeout, folder)
            if error != WORKER_DIED or _in_processes(blob, runner, [t], 1, sink, bar):
                on_died(t, _death_error(t, timeout, folder))
                bar.update()
    bar.close()


def _in_processes(blob, runner, tasks, workers, sink, bar):
    """Evaluate ``tasks`` on ``workers`` fresh processes (loky: started without re-running the caller's
    ``__main__``, so a plain script needs no ``if __name__ == "__main__"`` guard); return the tasks lost to a dead
    worker."""
    import loky

    broken = []
    with worker_env():
        pool = loky.ProcessPoolExecutor(min(workers, max(len(tasks), 1)),     # never more processes than points
                                        initializer=_die_with_parent, initargs=(os.getpid(),))
        try:
            futures = {pool.submit(_call_by_value, runner, blob, t): t for t in tasks}
            for fut in cf.as_completed(futures):
                try:
                    result = fut.result()
                except cf.process.BrokenProcessPool:
                    broken.append(futures[fut])
                    continue
                sink(*result)
                bar.update()
        except KeyboardInterrupt:                 # the workers ignore Ctrl-C (_die_with_parent): stop them now
            pool.shutdown(wait=False, kill_workers=True)
            raise
        pool.shutdown(wait=True)
    return broken


def sweep(fn, grid, replicates=1, rng=0, client=None, store=None, workers=None, allow_mixed=False,
          progress=False, timeout=None, isolate=False):
    """Run ``fn`` over a parameter grid (module docstring) and return the results as a Dataset.

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
    xr = _require("xarray")
    if isinstance(fn, str):
        if fn not in GRID_FUNCTIONS:
            check.fail("fn", fn, f"a callable or one of the registered grid functions {sorted(GRID_FUNCTIONS)}")
        name, fn = fn, GRID_FUNCTIONS[fn]
    elif callable(fn):
        name = getattr(fn, "grid_function_name", f"{fn.__module__}.{getattr(fn, '__qualname__', repr(fn))}")
    else:
        raise ValueError(f"fn must be a callable or the name of a registered grid function; got {fn!r}")
    grid = _grid(fn, grid)
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
    attrs = _code_attrs(fn, name, grid, replicates, rng)
    if store is None:
        sink = _Memory(shape)
    else:
        if not isinstance(store, (str, os.PathLike)) or not str(store).strip():
            check.fail("store", store, "a folder path for a Zarr group")
        for k, v in grid.items():           # a Zarr coordinate holds one numeric, boolean or string type
            if np.asarray(v).dtype.kind not in "biufUS":
                check.fail(f"grid[{k!r}]", v, "values a Zarr coordinate can hold when store is given: numbers within "
                           "int64/float64, strings or booleans (not None, not integers beyond 2**63)")
        coords = {**{k: v for k, v in grid.items()}, "replicate": np.arange(replicates)}
        sink = _Store(os.fspath(store), attrs, shape, allow_mixed, dims=list(grid) + ["replicate"], coords=coords)
    status = sink.status()
    todo = [t for t in _tasks(name, grid, replicates, rng) if status[t.index] == PENDING]
    parallel = client is not None or workers > 1 or timeout is not None or isolate
    with _resumable(sink.status, int(n), store, "evaluations") if store is not None else contextlib.nullcontext():
        if store is None or not parallel:                  # the driver keeps or writes every point
            _execute(fn, todo, client, workers, sink.write, progress, timeout=timeout, isolate=isolate)
        else:                                              # workers write their own points
            first = 0
            while todo and not sink.has_variables():       # the first result fixes the variables' shapes; it runs
                _execute(fn, [todo.pop(0)], client, workers, sink.write, False, timeout=timeout,   # in a worker too
                         isolate=isolate)
                first += 1
            runner = functools.partial(_run_and_write, path=sink.path, shape=shape)
            _execute(fn, todo, client, workers, lambda index, st: None, progress, runner=runner, done_before=first,
                     on_died=lambda task, error: sink.write(task.index, None, error), timeout=timeout,
                     isolate=isolate)
    return _dataset(xr, grid, replicates, sink, attrs)


def _dataset(xr, grid, replicates, sink, attrs):
    dims = list(grid) + ["replicate"]
    coords = {k: np.asarray(v) for k, v in grid.items()}
    coords["replicate"] = np.arange(replicates)
    data = {}
    for k, v in sink.variables().items():
        extra = [f"{k}_{i}" for i in range(v.ndim - len(dims))]
        data[k] = (dims + extra, v)
    status = sink.status()
    data["status"] = (dims, status)
    errors = np.full(status.shape, "", dtype=object)
    for index, message in sink.errors().items():
        errors[index] = message
    data["error"] = (dims, errors.astype(str))
    return xr.Dataset(data, coords=coords, attrs=attrs)


def load_sweep(store):
    """Open a sweep's Zarr store as an ``xarray.Dataset`` (the same layout :func:`sweep` returns).

    Parameters
    ----------
    store : str
        The folder passed to :func:`sweep`.

    Returns
    -------
    xarray.Dataset
    """
    xr = _require("xarray")
    zarr = _require("zarr")
    if not isinstance(store, (str, os.PathLike)) or not os.path.isdir(store):
        check.fail("store", store, "the folder of an existing sweep store")
    try:
        group = zarr.open_group(os.fspath(store), mode="r", use_consolidated=False)
        attrs = dict(group.attrs)
        attrs.pop("variables", None)
        grid = json.loads(attrs["grid"])
        mem = _Memory(tuple(len(v) for v in grid.values()) + (int(attrs["replicates"]),))
        mem._status = np.asarray(group["status"][...])
        mem._vars = {k: np.asarray(group[k][...]) for k in group.array_keys()
                     if k not in _RESERVED and k not in grid and k != "replicate"}
        mem._errors = _decode_errors(group)
        return _dataset(xr, grid, int(attrs["replicates"]), mem, attrs)
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError, OSError) as err:  # zarr's errors among them
        raise ValueError(f"store {os.fspath(store)!r} is not a readable sweep store (written by validation.sweep): "
                         f"{type(err).__name__}: {err}") from None


def sweep_summary(ds):
    """Mean and standard error over replicates of every numeric variable (failed points excluded).

    Parameters
    ----------
    ds : xarray.Dataset
        A sweep result.

    Returns
    -------
    xarray.Dataset
        ``{var}_mean``, ``{var}_se`` and ``n`` (replicates done) per grid point (``{var}_se`` is NaN where fewer
        than two replicates are done: a standard error needs two).
    """
    xr = _require("xarray")
    if not isinstance(ds, xr.Dataset) or "status" not in ds or "replicate" not in ds.dims:
        check.fail("ds", type(ds).__name__, "the xarray.Dataset of a sweep (validation.sweep or load_sweep)")
    ok = ds["status"] == DONE
    out = {}
    for k, v in ds.data_vars.items():
        if k in ("status", "error"):
            continue
        vv = v.where(ok)
        n = ok.sum("replicate")
        out[f"{k}_mean"] = vv.mean("replicate")
        out[f"{k}_se"] = vv.std("replicate", ddof=1) / np.sqrt(n)
    out["n"] = ok.sum("replicate")
    return type(ds)(out, attrs=ds.attrs)


# ----------------------------------------------------------------------------- ragged points (experiments)
def _run_point(fn, task, limit_threads=True):
    """Evaluate point ``task.point["point"]``: ``(index, outputs or None, error or None)``; outputs keep
    their numeric dtype and any shape (the points of an experiment need not share shapes)."""
    if limit_threads:
        _one_blas_thread()
    try:
        out = fn(task.point["point"], rng=None)
        if not isinstance(out, dict) or not out:
            raise TypeError(f"a point must return a non-empty dict of numeric arrays; got {type(out).__name__}")
        arrays = {}
        for k, v in out.items():
            a = np.asarray(v)
            if a.dtype.kind not in "biuf":
                raise TypeError(f"output {k!r} of a point must be a numeric array; got dtype {a.dtype}")
            arrays[k] = a
        return task.index, arrays, None
    except BaseException as err:      # recorded, the others go on; Ctrl-C stops the run
        if isinstance(err, KeyboardInterrupt):
            raise
        return task.index, None, f"{type(err).__name__}: {err}"


def _write_ragged(group, index, outputs, error):
    """Write point ``index`` into its own subgroup ``p{index}`` (any shapes; axis ``j`` of output ``k`` is the
    dimension ``{k}_{j}``, so ``xarray.open_zarr(store, group="p{index}")`` reads it), the status last."""
    i = index[0]
    if outputs is not None:
        sub = group.require_group(f"p{i}")
        for k, v in outputs.items():
            arr = sub.create_array(k, shape=v.shape, dtype=v.dtype, overwrite=True,
                                   chunks=v.shape if v.size else None,
                                   dimension_names=[f"{k}_{j}" for j in range(v.ndim)])
            if v.size:
                arr[...] = v
        group["status"][i:i + 1] = DONE
    else:
        group["error"][i:i + 1] = np.array([error[:ERROR_CHARS]], dtype=str)
        group["status"][i:i + 1] = FAILED


def _run_and_write_ragged(fn, task, path):
    import zarr

    if path not in _GROUPS:
        _GROUPS[path] = zarr.open_group(path, mode="r+")
    index, outputs, error = _run_point(fn, task)
    _write_ragged(_GROUPS[path], index, outputs, error)
    return index, DONE if outputs is not None else FAILED


@contextlib.contextmanager
def _resumable(status, n, store, what="points"):
    """Ctrl-C during a stored run: one line that says what is stored and how to resume (the workers are stopped)."""
    try:
        yield
    except KeyboardInterrupt:
        try:
            done = f"{int(np.sum(status() == DONE))} of {n}"
        except Exception:                      # a store cut mid-write: still say how to resume
            done = f"? of {n}"
        raise KeyboardInterrupt(f"interrupted: {done} {what} stored in {os.fspath(store)!r}; run the same command "
                                "to resume") from None


def _stack_points(group, n_points, coords):
    """Beside the per-point subgroups of a finished store, every output that has one shape and dtype at all points,
    stacked over the dimension ``point`` (axis ``j`` of output ``k``: ``{k}_{j}``) with the points' ``coords``
    (numbers or strings per point) as its coordinates: ``xarray.open_zarr(store)`` reads them, and a finished store
    reopens with one read per output. The attribute ``stacked`` (their names) is written last: a stacking cut short
    is redone."""
    outs = [{k: np.asarray(v[...]) for k, v in group[f"p{i}"].arrays()} for i in range(n_points)]
    first = outs[0]
    stacked = sorted(k for k in first if k not in _RESERVED and k != "point"
                     and all(k in o and o[k].shape == first[k].shape and o[k].dtype == first[k].dtype for o in outs))
    names = {k: (f"point_{k}" if k in first or k in _RESERVED else k) for k in coords}
    for k, values in coords.items():
        arr = group.create_array(names[k], shape=values.shape, dtype=str if values.dtype.kind in "US" else values.dtype,
                                 dimension_names=["point"], overwrite=True)
        arr[...] = values
    for k in stacked:
        values = np.stack([o[k] for o in outs])
        arr = group.create_array(k, shape=values.shape, dtype=values.dtype, overwrite=True,
                                 chunks=values.shape if values.size else None,
                                 dimension_names=["point"] + [f"{k}_{j}" for j in range(values.ndim - 1)],
                                 attributes={"coordinates": " ".join(names.values())} if names else None)
        if values.size:
            arr[...] = values
    group.attrs["stacked"] = stacked


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

    A finished store is readable by any Zarr tool: ``xarray.open_zarr(store)`` gives every output that has one
    shape at all points as a variable over ``point`` (with ``coords`` as its coordinates) beside ``status`` and
    ``error``; an output whose shape changes from point to point is read per point,
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
        Name → one number or string per point (e.g. each point's ``D``, ``N``, ``P``): the coordinates of the
        store's ``point`` dimension.

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
    code = _code_attrs(source if source is not None else fn, name, {"point": list(range(n_points))}, 1, 0)
    code.update(attrs or {})
    if store is None:
        sink = _Memory((n_points,))
        sink._outputs = {}
        write = lambda index, outputs, error: (sink._outputs.__setitem__(index[0], outputs),  # noqa: E731
                                               sink._errors.__setitem__(index, error) if error else None)
        _execute(fn, tasks, client, workers, write, progress, runner=_run_point) if (client or workers > 1) else \
            _serial_points(fn, tasks, write, progress)
        failed = {i: e for i, e in sink._errors.items()}
        if failed:
            raise RuntimeError(f"{name}: {len(failed)} of {n_points} points failed; "
                               f"first: {next(iter(failed.values()))}")
        return [sink._outputs[i] for i in range(n_points)]
    if not isinstance(store, (str, os.PathLike)) or not str(store).strip():
        check.fail("store", store, "a folder path for a Zarr group")
    st = _Store(os.fspath(store), code, (n_points,), allow_mixed, dims=["point"], consolidated=False)
    status = st.status()
    todo = [t for t in tasks if status[t.index] != DONE]
    if todo:
        print(f"{name}: {len(todo)} of {n_points} points to evaluate (store {os.fspath(store)})", file=sys.stderr)
    with _resumable(st.status, n_points, store):
        if client is None and workers == 1:
            _serial_points(fn, todo, functools.partial(_write_ragged, st.group), progress)
        elif todo:
            runner = functools.partial(_run_and_write_ragged, path=st.path)
            _execute(fn, todo, client, workers, lambda index, s: None, progress, runner=runner,
                     on_died=lambda task, error: _write_ragged(st.group, task.index, None, error))
    status = st.status()
    errors = _decode_errors(st.group)
    if errors or not np.all(status == DONE):
        first = next(iter(errors.values()), "not evaluated")
        raise RuntimeError(f"{name}: {int(np.sum(status != DONE))} of {n_points} points are not done in store "
                           f"{os.fspath(store)!r}; first error: {first}")
    if "stacked" not in st.group.attrs:
        _stack_points(st.group, n_points, coords)
        st.consolidated = True
        st.consolidate()
    return read_points(store)


def _serial_points(fn, tasks, write, progress):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        for t in tqdm(tasks, desc="points", disable=not progress):
            write(*_run_point(fn, t, limit_threads=False))


def read_points(store):
    """The outputs of every point of a store written by :func:`run_points`, in order.

    Parameters
    ----------
    store : str

    Returns
    -------
    list of dict
    """
    zarr = _require("zarr")
    if not isinstance(store, (str, os.PathLike)) or not os.path.isdir(store):
        check.fail("store", store, "the folder of an existing point store")
    try:
        group = zarr.open_group(os.fspath(store), mode="r")     # consolidated metadata when finished
        status = np.asarray(group["status"][...])
        if status.ndim != 1:
            raise ValueError(f"its status has shape {status.shape}, not (n_points,): a sweep store? (load_sweep)")
        if not np.all(status == DONE):
            raise ValueError(f"{int(np.sum(status != DONE))} of {status.size} points are not done")
        stacked = {k: np.asarray(group[k][...]) for k in group.attrs.get("stacked", [])}   # one read per output
        out = []
        for i in range(status.size):
            sub = group[f"p{i}"]
            point = {k: v[i, ...] for k, v in stacked.items()}
            point.update({k: np.asarray(sub[k][...]) for k in sub.array_keys() if k not in stacked})
            out.append({k: point[k] for k in sorted(point)})
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError, OSError) as err:  # zarr's errors among them
        raise ValueError(f"store {os.fspath(store)!r} is not a complete point store (written by run_points): "
                         f"{type(err).__name__}: {err}") from None
    return out
