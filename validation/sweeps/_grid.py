"""The grid and its tasks: registered grid functions, :class:`Task` and its seed words, the checked grid and its
expansion into tasks, and the evaluation of one task (a grid point, or a point of an experiment).

The seed of a task is a ``numpy.random.SeedSequence`` of the sweep seed and a SHA-256 digest of ``(grid function
name, point values, replicate)`` (:func:`task_seed`): it depends on neither scheduling nor the number of workers.
"""
from __future__ import annotations

import hashlib
import inspect
import itertools
import json
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._results import short_repr


def require(module):
    """``module`` imported, or an ImportError that names the optional extra ``[dask]`` which provides it."""
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


def checked_grid(fn, grid):
    """``grid`` checked against ``fn``'s parameters: name → list of distinct scalars of one kind (numpy scalars as
    Python ones); a ValueError naming ``grid`` (or ``grid[name]``, or ``fn`` without an ``rng``) otherwise."""
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


def grid_tasks(name, grid, replicates, seed):
    """Every :class:`Task` of the Cartesian product of ``grid`` times ``replicates``, in grid order, with its seed."""
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


def run_task(fn, task, limit_threads=True):
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


# ----------------------------------------------------------------------------- ragged points (experiments)
def run_point(fn, task, limit_threads=True):
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

