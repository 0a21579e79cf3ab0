"""The point stores of experiments (:func:`validation.sweeps.run_points`): each point in its own subgroup while the
run goes on, and, once finished, every output over one dimension ``point`` with the points' parameters as its
coordinates — one ``xarray.Dataset`` (:func:`point_dataset`, :func:`validation.open_store`).

A point writes its outputs, of any shapes, into its own subgroup ``p{i}`` (no two writers share a file), its status
last (:func:`write_ragged`). When every point is done, :func:`finish` writes beside the subgroups, at the root, one
array per output over ``point``: stacked where the output has one shape and dtype at every point, else padded to the
largest shape as float64 with ``NaN`` (an output with fewer axes at a point fills the first entry of the axes it
lacks) with each point's own shape and dtype in the array's attributes (:data:`SHAPES`, :data:`DTYPES`),
so that :func:`read_points` gives back every point's outputs exactly from one read per output. Axis ``j`` of output
``k`` is the dimension ``{k}_{j}``. The points' parameters are 1-d coordinate arrays over ``point`` (a parameter
that is also an output is the coordinate ``point_{name}``); they are noted in the attribute ``point_coords`` when
the store is created, so an unfinished store opens with them too.
"""
from __future__ import annotations

import os
import warnings

import numpy as np

from linattn import _check as check

from ._grid import require, run_point
from ._store import _GROUPS, _RESERVED, DONE, ERROR_CHARS, FAILED, _dims, decode_errors, guard_metadata

#: attributes of an output padded over ``point``: the shape and dtype of each point's own array (``None``: absent)
SHAPES, DTYPES = "point_shapes", "point_dtypes"
#: the root attribute holding the points' coordinates as JSON lists (``None`` for NaN), written at creation
COORDS_ATTR = "point_coords"
#: names an output cannot have at the root (they are the store's own arrays)
_NOT_OUTPUTS = _RESERVED + ("point",)
#: padding is skipped for an output whose padded array would hold more than this many times its values (and
#: more than :data:`_PAD_FREE` elements): one huge point among small ones stays in its subgroup only
_PAD_RATIO, _PAD_FREE = 10.0, 1e7


# ----------------------------------------------------------------------------- writing
def write_ragged(group, index, outputs, error):
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


def run_and_write_ragged(fn, task, path):
    """Worker side: evaluate a point of an experiment and write it into its own subgroup of the store at ``path``.
    Returns ``(index, status)``."""
    import zarr

    if path not in _GROUPS:
        _GROUPS[path] = zarr.open_group(path, mode="r+")
    index, outputs, error = run_point(fn, task)
    write_ragged(_GROUPS[path], index, outputs, error)
    return index, DONE if outputs is not None else FAILED


def coords_attr(coords):
    """The points' coordinates as the JSON attribute :data:`COORDS_ATTR` (NaN as ``null``)."""
    return {k: [None if isinstance(x, float) and x != x else x for x in np.asarray(v).tolist()]
            for k, v in coords.items()}


def _coords_from_attr(value, n_points):
    """The coordinates of :data:`COORDS_ATTR` as arrays (``None`` back to NaN); ``{}`` for anything else."""
    out = {}
    if not isinstance(value, dict):
        return out
    for k, v in value.items():
        if not isinstance(v, list) or len(v) != n_points:
            continue
        if all(isinstance(x, str) for x in v):
            out[k] = np.asarray(v, dtype=str)
        elif all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in v):
            out[k] = np.asarray([np.nan if x is None else x for x in v])
        elif all(isinstance(x, bool) for x in v):
            out[k] = np.asarray(v, dtype=bool)
    return out


def _padding(values):
    """``(dtype, fill)`` of an output padded over ``point`` from its arrays at the points that have it (numbers:
    :func:`~validation.sweeps._grid.run_point` keeps no other kind), or ``None`` when float64 could not give every
    value back exactly (an integer beyond 2**53, extended precision)."""
    if any(v.dtype.kind not in "biuf" or v.dtype.itemsize > 8 for v in values):
        return None
    for v in values:
        if v.dtype.kind in "iu" and v.size and not (v.min() >= -2**53 and v.max() <= 2**53):
            return None
    return np.dtype(float), np.nan


def assemble(outs, coords):
    """The arrays of the dataset over ``point`` from the points' outputs (``None`` for a point not done) and their
    coordinates.

    Returns
    -------
    dict
        Name → ``(dims, values, attrs)`` of every output that has one at the root (stacked or padded), and of the
        coordinates (keyed by their name in the store: ``point_{name}`` where an output has the name).
    list of str, list of str, list of str
        The stacked outputs, the padded ones, and those left to the points' subgroups.
    """
    n = len(outs)
    every = set().union(*(o for o in outs if o is not None))
    names = sorted(every - set(_NOT_OUTPUTS))
    entries, stacked, padded = {}, [], []
    for k in names:
        present = [o[k] for o in outs if o is not None and k in o]
        if len(present) == n and all(v.shape == present[0].shape and v.dtype == present[0].dtype for v in present):
            entries[k] = (["point"] + [f"{k}_{j}" for j in range(present[0].ndim)], np.stack(present), {})
            stacked.append(k)
            continue
        pad = _padding(present)
        ndim = max(v.ndim for v in present)
        shape = tuple(max(v.shape[j] if j < v.ndim else 1 for v in present) for j in range(ndim))
        size = float(n) * float(np.prod(shape, dtype=float))
        if pad is None or size > max(_PAD_FREE, _PAD_RATIO * sum(v.size for v in present)):
            continue                                  # read from the points' subgroups only
        dtype, fill = pad
        values = np.full((n,) + shape, fill, dtype=dtype)
        shapes, dtypes = [], []
        for i, o in enumerate(outs):
            v = None if o is None else o.get(k)
            shapes.append(None if v is None else list(v.shape))
            dtypes.append(None if v is None else v.dtype.str)
            if v is not None:
                v = v.reshape(v.shape + (1,) * (ndim - v.ndim))
                values[(i,) + tuple(slice(0, s) for s in v.shape)] = v
        entries[k] = (["point"] + [f"{k}_{j}" for j in range(ndim)], values, {SHAPES: shapes, DTYPES: dtypes})
        padded.append(k)
    for k, v in coords.items():
        name = f"point_{k}" if k in names or k in _NOT_OUTPUTS else k
        entries[name] = (["point"], np.asarray(v), {"coordinate": True})
    return entries, stacked, padded, sorted(every - set(stacked) - set(padded))


def finish(group, n_points, coords):
    """Write the arrays of :func:`assemble` at the root of a finished point store (module docstring), each output
    naming the coordinates in its ``coordinates`` attribute (what ``xarray.open_zarr`` reads them by). The attributes
    ``stacked``, ``padded`` and ``unpadded`` (the outputs of each kind; the last read from the points' subgroups
    only) are written last: a finishing cut short is redone."""
    outs = [{k: np.asarray(v[...]) for k, v in group[f"p{i}"].arrays()} for i in range(n_points)]
    entries, stacked, padded, unpadded = assemble(outs, coords)
    coord_names = " ".join(k for k, (_, _, attrs) in entries.items() if attrs.get("coordinate"))
    for k, (dims, values, attrs) in entries.items():
        if attrs.get("coordinate"):
            attrs = {}
        elif coord_names:
            attrs = {**attrs, "coordinates": coord_names}
        arr = group.create_array(k, shape=values.shape, dtype=str if values.dtype.kind in "US" else values.dtype,
                                 chunks=values.shape if values.size else None, dimension_names=dims,
                                 attributes=attrs or None, overwrite=True)
        if values.size:
            arr[...] = values
    if coord_names:
        for k in ("status", "error"):
            group[k].attrs["coordinates"] = coord_names
    group.attrs.update({"stacked": stacked, "padded": padded, "unpadded": unpadded})


# ----------------------------------------------------------------------------- reading
def _open(path):
    """The group of a point store (consolidated metadata when it has them), zarr's warnings silenced."""
    zarr = require("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_group(path, mode="r")


def _point_outputs(group, status, where):
    """Each point's outputs as written (``None`` for a point not done): from the root arrays of a finished store
    (one read per output), the rest from the points' subgroups."""
    n = status.size
    stacked = list(group.attrs.get("stacked", []))
    padded = list(group.attrs.get("padded", []))
    guard_metadata(group, stacked + padded, where)
    outs = [{} if status[i] == DONE else None for i in range(n)]
    for k in stacked:
        values = np.asarray(group[k][...])
        for i in range(n):
            if outs[i] is not None:
                outs[i][k] = values[i, ...]
    for k in padded:
        arr = group[k]
        values, shapes, dtypes = np.asarray(arr[...]), arr.attrs[SHAPES], arr.attrs[DTYPES]
        for i in range(n):
            if outs[i] is not None and shapes[i] is not None:
                index = (i,) + tuple(slice(0, s) for s in shapes[i]) + (0,) * (values.ndim - 1 - len(shapes[i]))
                outs[i][k] = np.asarray(values[index]).astype(np.dtype(dtypes[i]))
    finished = "unpadded" in group.attrs          # else: finished by an older version, or not at all
    for i in range(n):
        if outs[i] is None:
            continue
        if not (finished and not group.attrs["unpadded"]):
            sub = group[f"p{i}"]
            rest = [k for k in sub.array_keys() if k not in outs[i]]
            if rest:
                guard_metadata(sub, rest, where)
                outs[i].update({k: np.asarray(sub[k][...]) for k in rest})
        outs[i] = {k: outs[i][k] for k in sorted(outs[i])}
    return outs


def read_points(store):
    """The outputs of every point of a store written by :func:`run_points`, in order.

    Parameters
    ----------
    store : str

    Returns
    -------
    list of dict
    """
    if not isinstance(store, (str, os.PathLike)) or not os.path.isdir(store):
        check.fail("store", store, "the folder of an existing point store")
    where = f"store {os.fspath(store)!r}"
    try:
        group = _open(os.fspath(store))
        guard_metadata(group, ["status"], where)
        status = np.asarray(group["status"][...])
        if status.ndim != 1:
            raise ValueError(f"its status has shape {status.shape}, not (n_points,): a sweep store? (load_sweep)")
        if not np.all(status == DONE):
            raise ValueError(f"{int(np.sum(status != DONE))} of {status.size} points are not done")
        return _point_outputs(group, status, where)
    except MemoryError:
        raise
    except Exception as err:                 # zarr's, numcodecs' and xarray's errors of a damaged store among them
        if isinstance(err, ValueError) and str(err).startswith(where):   # ours (sizes), already naming the store
            raise
        raise ValueError(f"{where} is not a complete point store (written by run_points): "
                         f"{type(err).__name__}: {' '.join(str(err).split())[:300]}") from None


def point_dataset(path, where, attrs):
    """The ``xarray.Dataset`` over ``point`` of a point store (module docstring; ``attrs``: its root attributes):
    opened as it is on disk when the store is finished (one read of its consolidated metadata), else assembled in
    memory from the points done (and from their subgroups for a store finished by an older version, or not at all)."""
    xr = require("xarray")
    keep = {k: v for k, v in attrs.items() if k != COORDS_ATTR}
    if "unpadded" in attrs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds = xr.open_zarr(path, chunks=None)          # the metadata only: checked before anything is read
        claimed = sum(float(np.prod(v.shape, dtype=float)) * (v.dtype.itemsize if v.dtype.kind in "biufc" else 64)
                      for v in ds.variables.values())
        check.memory(claimed, f"{len(ds.variables)} of its arrays (sizes claimed by their metadata)", where)
        if np.all(ds["status"].values == DONE):
            ds.attrs = keep
            return ds.load()                              # a damaged chunk: an error here, naming the store
    group = _open(path)
    guard_metadata(group, ["status", "error"], where)
    status = np.asarray(group["status"][...])
    outs = _point_outputs(group, status, where)
    coords = _coords_from_attr(group.attrs.get(COORDS_ATTR), status.size)
    if not coords:          # a store finished before the coordinates were noted: its root coordinate arrays
        names = set(group.attrs.get("stacked", [])) | {"status", "error", "error_text"}
        for k in group.array_keys():
            if k not in names and _dims(group[k]) == ("point",):
                coords[k[len("point_"):] if k.startswith("point_") else k] = np.asarray(group[k][...])
    entries = assemble(outs, coords)[0]
    errors = np.full(status.shape, "", dtype=object)
    for index, message in decode_errors(group).items():
        errors[index] = message
    data = {k: (dims, values, extra) for k, (dims, values, extra) in entries.items() if not extra.get("coordinate")}
    data["status"] = (["point"], status)
    data["error"] = (["point"], errors.astype(str))
    coords = {k: (dims, values) for k, (dims, values, extra) in entries.items() if extra.get("coordinate")}
    return xr.Dataset(data, coords=coords, attrs=keep)
