"""The files of results: a :class:`~validation.experiments.Result` as one ``.npz`` (its arrays, and the rest as JSON
in the member ``__result__``), written and read with every check (:meth:`Result.save`, :meth:`Result.load`).

The header is ``{"experiment", "mode", "settings", "meta"}`` and, for typed data (:class:`ExperimentData`), ``"data"``:
the name of the data class, whose :meth:`~ExperimentData.to_arrays` are the members. A file without ``"data"`` holds
a plain dict of arrays: what version 0.1.0 wrote for every experiment, and what an experiment of your own whose
``assemble`` returns a dict writes today. Nothing is unpickled: object arrays are refused, and the sizes of the
members are checked against the memory limit before anything is decompressed (:mod:`linattn._arrayfiles`: every
malformed file is one ``ValueError`` naming it).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping

import numpy as np

from linattn import _arrayfiles as arrayfiles
from linattn import _check as check

#: the modes of every experiment and figure
MODES = ("smoke", "quick", "full")
#: the modes a result records: a preset, or "custom" (hand-made settings, :func:`validation.experiments.run`)
RESULT_MODES = MODES + ("custom",)
#: deepest nesting of dicts and lists that settings and metadata may have (JSON's encoder and decoder recurse)
MAX_DEPTH = 100
#: the keys of a result's header (``"data"`` only with typed data)
HEADER_KEYS = ("experiment", "mode", "settings", "meta")


def jsonable(value, name="settings", depth=0):
    """``value`` with numpy scalars and arrays turned into JSON types (tuples become lists); nesting deeper than
    :data:`MAX_DEPTH` is refused naming ``name`` (the encoder would hit Python's recursion limit).

    Parameters
    ----------
    value : object
    name : str
        The argument named in the error.
    depth : int

    Returns
    -------
    object
    """
    if depth > MAX_DEPTH:
        check.fail(name, f"<{type(value).__name__} nested more than {MAX_DEPTH} levels deep>",
                   f"a dict of JSON-able values nested at most {MAX_DEPTH} levels deep")
    if isinstance(value, dict):
        return {str(k): jsonable(v, name, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, name, depth + 1) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), name, depth)
    if isinstance(value, np.generic):
        return value.item()
    return value


def check_data_keys(data):
    """Refuse a key of ``data`` that :meth:`Result.save` could not write as an ``.npz`` member (a non-str, or the
    reserved ``"__result__"``): ``ValueError`` naming ``data``.

    Parameters
    ----------
    data : mapping
    """
    for k in data:
        if not isinstance(k, str) or k == "__result__":
            check.fail("data", f"<dict with key {k!r}>",
                       "a dict with str keys other than the reserved '__result__'")


def check_header(header):
    """Refuse a result header outside the schema ``{"experiment": non-empty str, "mode": one of RESULT_MODES,
    "settings": dict, "meta": dict}`` (exactly these keys, and ``"data"``: a non-empty str, for typed data):
    ``ValueError`` naming the field (``header`` for the object itself).

    Parameters
    ----------
    header : dict
    """
    keys = set(header) if isinstance(header, dict) else None
    if keys is None or keys - {"data"} != set(HEADER_KEYS):
        got = f"a {type(header).__name__}" if not isinstance(header, dict) else f"the keys {sorted(map(str, header))}"
        raise ValueError('header must be a JSON object with exactly the keys "experiment", "mode", "settings" and '
                         f'"meta" (and "data" for typed data); got {got}')
    for key, ok, want in (("experiment", isinstance(header["experiment"], str) and header["experiment"] != "",
                           "a non-empty string"),
                          ("mode", isinstance(header["mode"], str) and header["mode"] in RESULT_MODES,
                           f"one of {RESULT_MODES}"),
                          ("settings", isinstance(header["settings"], dict), "a dict (JSON object)"),
                          ("meta", isinstance(header["meta"], dict), "a dict (JSON object)"),
                          ("data", isinstance(header.get("data", "-"), str) and header.get("data") != "",
                           "the name of the data class (a non-empty string)")):
        if not ok:
            check.fail(key, header[key], want)


def _target(path):
    """``path`` as the ``.npz`` file to write (``.npz`` appended as :func:`numpy.savez` does; a folder refused)."""
    if not isinstance(path, (str, os.PathLike)):
        check.fail("path", path, "a file path (str or os.PathLike)")
    path = os.fspath(path)
    if isinstance(path, bytes):
        check.fail("path", path, "a file path (str or os.PathLike of str)")
    if os.path.isdir(path) or os.path.isdir(path + ".npz"):
        check.fail("path", path, "the path of a file to write (this is a folder)")
    return path if path.endswith(".npz") else path + ".npz"


def _arrays(arrays):
    """``arrays`` as numpy arrays, object arrays refused naming ``data[key]``."""
    out = {}
    for k, v in arrays.items():
        try:
            arr = np.asarray(v)
        except Exception:  # ragged or exotic input
            check.fail(f"data[{k!r}]", f"<{type(v).__name__}>", "an array")
        if arr.dtype.hasobject:
            check.fail(f"data[{k!r}]", f"<array of dtype {arr.dtype}>", "an array of numbers, booleans or strings "
                       "(object arrays need pickles, which Result.load refuses)")
        out[k] = arr
    return out


def _write(path, members):
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        np.savez_compressed(path, **members)
    except OSError as err:
        check.fail("path", os.fspath(path), f"a writable file path ({err.strerror or err})")
    return path


def write_result(path, experiment, mode, settings, meta, arrays, data_class=None) -> str:
    """Write a result (the body of :meth:`Result.save`): what :func:`read_result` would refuse is refused first.

    Parameters
    ----------
    path : str
    experiment, mode : str
    settings, meta : dict
        JSON-able.
    arrays : dict of str to array_like
        The members (:meth:`ExperimentData.to_arrays`, or a plain dict).
    data_class : str, optional
        The name of the data class (typed data), written as the header's ``"data"``.

    Returns
    -------
    str
        The file written (``.npz`` appended when ``path`` does not end with it).
    """
    path = _target(path)
    fields = {"settings": settings, "meta": meta}
    for key in ("settings", "meta"):
        if not isinstance(fields[key], Mapping):
            check.fail(key, fields[key], f"a dict of JSON-able {'metadata' if key == 'meta' else key}")
    parts = {}
    for key in ("settings", "meta"):
        value = jsonable(dict(fields[key]), key)          # refuses nesting deeper than MAX_DEPTH, naming key
        try:
            parts[key] = json.loads(json.dumps(value))
        except (TypeError, ValueError) as err:
            check.fail(key, f"<dict with a value JSON cannot hold: {err}>", "a dict of JSON-able values")
    header = {"experiment": experiment, "mode": mode, **parts}
    if data_class is not None:
        header["data"] = data_class
    check_header(header)
    check_data_keys(arrays)
    return _write(path, {"__result__": np.asarray(json.dumps(header)), **_arrays(arrays)})


def _read(path, what):
    """``(header or None, arrays)`` of the ``.npz`` at ``path``: every member's claim checked before anything is read
    (:mod:`linattn._arrayfiles`, the one reader of the library's array files)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        check.fail("path", path, f"the path of {what}")
    path = os.fspath(path)
    where = f"path {path!r}"
    members = arrayfiles.claims(path, where, what, "npz")
    check.memory(sum(m.nbytes for m in members), "its arrays (sizes claimed by their .npy headers)", where)
    arrays = arrayfiles.read(path, where, what, members)
    header = arrays.pop("__result__", None)
    if header is not None:
        try:
            header = json.loads(str(header))
        except (ValueError, RecursionError) as err:
            raise ValueError(f"{where} is not {what}: its member '__result__' is not JSON ({type(err).__name__}: "
                             f"{' '.join(str(err).split())[:200]})") from None
    return header, arrays


def read_result(path) -> tuple:
    """The header and the arrays of a result file (the body of :meth:`Result.load`).

    Parameters
    ----------
    path : str

    Returns
    -------
    (dict, dict)
        The header (:func:`check_header`) and the arrays by member name.

    Raises
    ------
    ValueError
        Naming ``path``: not a file, not a result file (not a zip, truncated, a member that is not an ``.npy`` array or
        holds fewer bytes than its header claims, object arrays, a header outside the schema of
        :func:`check_header`), or arrays whose sizes exceed the memory limit (:func:`linattn._check.memory`).
    """
    what = "a result file written by Result.save"
    header, arrays = _read(path, what)
    where = f"path {os.fspath(path)!r}"
    if header is None:
        raise ValueError(f"{where} is not {what}: it has no member '__result__'")
    try:
        check_header(header)
    except ValueError as err:
        whose = "its " if str(err).startswith("header ") else "its header's "
        raise ValueError(f"{where} is not {what}: {whose}{err}") from None
    return header, arrays


def write_npz(path, arrays) -> str:
    """Write ``arrays`` to ``path`` (``.npz``; object arrays refused).

    Parameters
    ----------
    path : str
    arrays : dict of str to array_like

    Returns
    -------
    str
        The file written.
    """
    path = _target(path)
    check_data_keys(arrays)
    return _write(path, _arrays(arrays))


def read_npz(path) -> dict:
    """The arrays of an ``.npz`` written by :func:`write_npz` (sizes checked first, no pickles).

    Parameters
    ----------
    path : str

    Returns
    -------
    dict of str to ndarray
    """
    return _read(path, "an .npz file of arrays")[1]
