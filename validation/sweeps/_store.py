"""The Zarr stores of sweeps and of experiment points, and their in-memory stand-in.

A sweep store (:class:`Store`) holds one array per output, chunked one grid point per chunk, a ``status`` array
(:data:`PENDING`, :data:`DONE`, :data:`FAILED`) and the truncated messages of failed points in ``error``; every array
carries its dimension names and the grid values are coordinate arrays, so ``xarray.open_zarr`` reads it as
:func:`load_sweep` does. A point store (:func:`validation.sweeps.run_points`, :mod:`._points`) holds each point in its
own subgroup ``p{i}`` and, once finished, every output over ``point``. A worker writes its own point
(:func:`run_and_write`), the status last. :func:`store_kind` tells the kinds apart from their metadata alone, and
:func:`guard_metadata` refuses arrays whose metadata claim more than memory holds, before anything is read.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import warnings

import numpy as np

import linattn
from linattn import _check as check

from ._grid import require, run_task

#: the status of a point in a store: not evaluated yet, done, failed (its message in ``error``)
PENDING, DONE, FAILED = 0, 1, 2


# ----------------------------------------------------------------------------- the store
def code_attrs(fn, name, grid, replicates, seed):
    """The attributes of a store: the experiment's name, the library version, the git commit, a hash of ``fn``'s
    source (of its bytecode where there is no source), the seed, the replicates and the grid (JSON)."""
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
    short leaves the point pending, and a re-run redoes it. Arrays must exist (see :meth:`Store.ensure`)."""
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


def run_and_write(fn, task, path, shape):
    """Worker side: evaluate a task and write its point into the store itself (one chunk per point,
    so concurrent writers never touch the same file). Returns ``(index, status)``."""
    import zarr

    if path not in _GROUPS:
        _GROUPS[path] = zarr.open_group(path, mode="r+")
    index, outputs, error = run_task(fn, task)
    _write_point(_GROUPS[path], shape, index, outputs, error)
    return index, DONE if outputs is not None else FAILED


class Store:
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
        zarr = require("zarr")
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
        for name in ("status", "error"):      # read whole on every resume: their metadata must be this run's
            if tuple(self.group[name].shape) != tuple(shape):
                raise ValueError(f"store {path!r} is damaged or holds another run: its {name} array has shape "
                                 f"{tuple(self.group[name].shape)}, not {tuple(shape)}")

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
        return decode_errors(self.group)

    def variables(self):
        return {k: np.asarray(self.group[k][...]) for k in self._outputs()}


def decode_errors(group):
    """``{index: message}`` of the failed points of a store."""
    status = np.asarray(group["status"][...])
    failed = list(zip(*np.nonzero(status == FAILED)))
    if "error_text" in group:                 # stores written before the string array
        text = np.asarray(group["error_text"][...])
        return {idx: bytes(text[idx]).rstrip(b"\0").decode("utf-8", errors="ignore") for idx in failed}
    text = np.asarray(group["error"][...])
    return {idx: str(text[idx]) for idx in failed}


class Memory:
    """The in-memory stand-in of :class:`Store` (``store=None``)."""

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



def dataset(xr, grid, replicates, sink, attrs):
    """The ``xarray.Dataset`` of a sweep from its :class:`Store` or :class:`Memory` ``sink``."""
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


#: bytes counted for one element of a string array (its metadata say nothing of the lengths) by :func:`guard_metadata`
_STRING_BYTES = 64


def guard_metadata(group, names, where):
    """Refuse the arrays ``names`` of ``group`` when the sizes their metadata claim exceed the memory limit, before
    anything is read (a store whose ``zarr.json`` claims 10¹² elements would exhaust memory in the read):
    ``ValueError`` naming ``where`` (:func:`linattn.check.memory`)."""
    total = 0.0
    for name in names:
        arr = group[name]
        dtype = np.dtype(arr.dtype) if isinstance(arr.dtype, np.dtype) else None
        itemsize = dtype.itemsize if dtype is not None and dtype.kind in "biufcmM" else _STRING_BYTES
        total += float(np.prod(arr.shape, dtype=float)) * itemsize
    check.memory(total, f"{len(names)} of its arrays (sizes claimed by their metadata)", where)


def _json(path):
    try:
        with open(path, encoding="utf-8") as fh:
            value = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def store_kind(path, scan=True):
    """What the folder ``path`` holds, from its ``zarr.json`` files alone: ``("sweep", attrs)`` (a store of
    :func:`validation.sweep`), ``("points", attrs)`` (of :func:`validation.sweeps.run_points`: experiments and
    figures), ``("folder", [relative paths])`` (a folder of point stores ``<experiment>/<mode>``, as ``linattn figures
    --store`` writes; looked for only when ``scan``), or ``("other", what it is)``."""
    meta = _json(os.path.join(path, "zarr.json"))
    if meta is None:
        if os.path.exists(os.path.join(path, ".zgroup")) or os.path.exists(os.path.join(path, ".zarray")):
            return "other", "a Zarr version 2 store (this library writes version 3)"
        if os.path.exists(os.path.join(path, "zarr.json")):
            return "other", "a folder whose zarr.json is not readable JSON (damaged)"
        found = []
        try:
            for first in sorted(os.listdir(path)) if scan else ():
                inner = os.path.join(path, first)
                if os.path.isdir(inner):
                    found += [f"{first}/{second}" for second in sorted(os.listdir(inner))
                              if store_kind(os.path.join(inner, second), scan=False)[0] == "points"]
        except OSError:                        # a folder it may not list: not a folder of stores
            found = []
        return ("folder", found) if found else ("other", "not a Zarr store (no zarr.json)")
    if meta.get("node_type") != "group":
        return "other", f"a Zarr {meta.get('node_type', 'node')}, not a group"
    attrs = meta.get("attributes") if isinstance(meta.get("attributes"), dict) else {}
    if not ("grid" in attrs and "replicates" in attrs and "experiment" in attrs):
        return "other", "a Zarr group without the attributes of a store written by this library (experiment, grid)"
    status = _json(os.path.join(path, "status", "zarr.json")) or {}
    return ("points" if status.get("dimension_names") == ["point"] else "sweep"), attrs


def load_sweep(store):
    """Open a sweep's Zarr store as an ``xarray.Dataset`` (the same layout :func:`sweep` returns).

    Parameters
    ----------
    store : str
        The folder passed to :func:`sweep`.

    Returns
    -------
    xarray.Dataset

    Raises
    ------
    ValueError
        In one line naming the store: not a folder; a store of another kind (the points of an experiment or a
        figure: :func:`validation.open_store` opens those), not a store, or damaged; arrays whose metadata claim
        more than the memory limit (checked before anything is read).
    """
    xr = require("xarray")
    zarr = require("zarr")
    if not isinstance(store, (str, os.PathLike)) or not os.path.isdir(store):
        check.fail("store", store, "the folder of an existing sweep store")
    where = f"store {os.fspath(store)!r}"
    kind, info = store_kind(os.fspath(store))
    if kind == "points":
        raise ValueError(f"{where} holds the points of experiment {info.get('experiment')!r} (run_experiment, linattn "
                         "figures), not a sweep: open it with validation.open_store")
    if kind == "folder":
        raise ValueError(f"{where} is a folder of experiment stores ({', '.join(info[:4])}"
                         f"{', …' if len(info) > 4 else ''}), not a sweep: open one with validation.open_store")
    if kind == "other":
        raise ValueError(f"{where} is not a sweep store (written by validation.sweep): {info}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            group = zarr.open_group(os.fspath(store), mode="r", use_consolidated=False)
        attrs = dict(group.attrs)
        attrs.pop("variables", None)
        grid = json.loads(attrs["grid"])
        outputs = [k for k in group.array_keys() if k not in _RESERVED and k not in grid and k != "replicate"]
        guard_metadata(group, ["status", "error"] + outputs, where)
        mem = Memory(tuple(len(v) for v in grid.values()) + (int(attrs["replicates"]),))
        mem._status = np.asarray(group["status"][...])
        mem._vars = {k: np.asarray(group[k][...]) for k in outputs}
        mem._errors = decode_errors(group)
        return dataset(xr, grid, int(attrs["replicates"]), mem, attrs)
    except MemoryError:
        raise
    except Exception as err:                 # zarr's, numcodecs' and xarray's errors of a damaged store among them
        if isinstance(err, ValueError) and str(err).startswith(where):   # ours (sizes), already naming the store
            raise
        raise ValueError(f"{where} is a damaged sweep store: {type(err).__name__}: "
                         f"{' '.join(str(err).split())[:300]}") from None


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
    xr = require("xarray")
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
