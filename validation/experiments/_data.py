"""The named, typed data of an experiment: :class:`ExperimentData`, a frozen dataclass per experiment.

Each experiment declares the class of its data (``Experiment.data_class``); :meth:`Experiment.assemble` returns an
instance of it and :attr:`Result.data <validation.experiments.Result>` is that instance, so that figures, checks, the
report and tests read ``result.data.<field>`` — a name with a docstring (meaning, shape with named axes, units) — and
not a key string built in two places or a column number.

Why a frozen dataclass and not an ``xarray.Dataset``: xarray is only the optional extra ``[dask]`` and the core (every
experiment, figure and the report) must work without it; the data of one experiment are not one grid either (a
theory curve on its own fine grid beside simulated markers on a coarse one, per-``D`` curves of different lengths,
report scalars), which a Dataset would hold only as unrelated variables with made-up dimension names. A dataclass
names each piece, nests structured pieces (a small dataclass per ``D``, ``dict[int, PerD]``), and is checked by the
tools that read the code.

Fields and how they are stored. A field is annotated with one of

* a leaf: ``np.ndarray``, ``float``, ``int``, ``bool`` or ``str`` (one ``.npz`` member named like the field);
* a nested dataclass (any frozen dataclass, e.g. :class:`diagnostics.TrajectoryDiagnostics`; members
  ``field.sub``);
* ``dict[K, V]`` with ``K`` one of ``int``, ``float``, ``str`` and ``V`` a leaf or a dataclass (members
  ``field[key]`` or ``field[key].sub``, the key written as ``str(int)``, ``repr(float)`` or the string itself);
* ``tuple[V, ...]`` with ``V`` a leaf or a dataclass (members ``field[0]``, ``field[1]``, …);
* any of these ``| None``: ``None`` is stored as no member at all.

:meth:`ExperimentData.to_arrays` is that flat ``{member name: array}`` dict (what a ``Result`` file and a figure's
``.npz`` hold), :meth:`ExperimentData.from_arrays` reads it back, field by field, and refuses a member that is not a
field. Results saved by version 0.1.0 held a plain dict of arrays under names of their own; each data class maps them
to its fields in :meth:`ExperimentData.legacy_arrays`, which :meth:`Result.load <validation.experiments.Result.load>`
calls for a file without a data class in its header.
"""
from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing

import numpy as np

from linattn import _check as check

#: one segment of a member name: a field, an optional ``[key]``, then the rest after a dot
_SEGMENT = re.compile(r"^([A-Za-z_]\w*)(?:\[([^\]]+)\])?(?:\.(.+))?$", re.S)
_LEAVES = {np.ndarray: "array", float: "float", int: "int", bool: "bool", str: "str"}
_KEYS = (int, float, str)


def _leaf(kind, value, where):
    """``value`` as leaf ``kind`` (a 0-d array read from a file becomes the Python scalar it was)."""
    try:
        if kind == "array":
            arr = np.asarray(value)
            if arr.dtype.hasobject:
                raise TypeError(f"an array of dtype {arr.dtype}")
            return arr
        arr = np.asarray(value)
        if arr.size != 1 or arr.dtype.hasobject:
            raise TypeError(f"{type(value).__name__} of shape {arr.shape}")
        item = arr.reshape(()).item()
        if kind == "str":
            if not isinstance(item, str):
                raise TypeError(f"{type(item).__name__}")
            return item
        if isinstance(item, str):
            raise TypeError("a string")
        if kind == "int":
            if float(item) != int(item):
                raise TypeError(f"the non-integer {item!r}")
            return int(item)
        return bool(item) if kind == "bool" else float(item)
    except (TypeError, ValueError, OverflowError) as err:
        check.fail(where, f"<{err}>", {"array": "an array of numbers, booleans or strings", "float": "one number",
                                      "int": "one integer", "bool": "one boolean", "str": "one string"}[kind])


def _kind(hint, where):
    """How a field annotated ``hint`` is stored: ``(shape, optional, detail)`` with shape ``"leaf"`` (detail: the leaf
    kind), ``"nested"`` (detail: the dataclass), ``"dict"`` (detail: ``(key type, value kind)``) or ``"tuple"``
    (detail: the value kind)."""
    optional = False
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1 or len(typing.get_args(hint)) != 2:
            raise TypeError(f"{where}: a union other than `X | None` ({hint!r})")
        optional, hint, origin = True, args[0], typing.get_origin(args[0])
    if hint in _LEAVES:
        return "leaf", optional, _LEAVES[hint]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return "nested", optional, hint
    args = typing.get_args(hint)
    if origin is dict and len(args) == 2 and args[0] in _KEYS:
        return "dict", optional, (args[0], _value_kind(args[1], where))
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return "tuple", optional, _value_kind(args[0], where)
    raise TypeError(f"{where}: a field of experiment data must be an array, a number, a string, a dataclass, "
                    f"dict[int | float | str, ...] or tuple[..., ...] of these, or one of them | None; got {hint!r}")


def _value_kind(hint, where):
    shape, optional, detail = _kind(hint, where)
    if shape not in ("leaf", "nested") or optional:
        raise TypeError(f"{where}: the values of a dict or tuple field must be leaves or dataclasses; got {hint!r}")
    return shape, detail


@functools.lru_cache(maxsize=None)
def layout(cls) -> tuple:
    """``((field name, shape, optional, detail), ...)`` of the dataclass ``cls`` (:func:`_kind`), from its type
    hints.

    Parameters
    ----------
    cls : type
        A dataclass.

    Returns
    -------
    tuple
    """
    hints = typing.get_type_hints(cls)
    return tuple((f.name, *_kind(hints[f.name], f"{cls.__name__}.{f.name}")) for f in dataclasses.fields(cls)
                 if f.init)


def _key_text(key, key_type, where):
    if key_type is str:
        if not isinstance(key, str) or not key or "]" in key:
            check.fail(where, key, "a non-empty string key without ']'")
        return key
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, float, np.integer, np.floating)):
        check.fail(where, key, f"a key of type {key_type.__name__}")
    return str(int(key)) if key_type is int else repr(float(key))


def _key_value(text, key_type, where):
    try:
        return key_type(text) if key_type is not int else int(text)
    except ValueError:
        check.fail(where, text, f"a key of type {key_type.__name__}")


def flatten(obj, prefix="") -> dict:
    """The arrays of the dataclass ``obj`` by member name (module docstring: how each kind of field is named).

    Parameters
    ----------
    obj : dataclass instance
    prefix : str
        Prepended to every member name.

    Returns
    -------
    dict of str to ndarray
    """
    out = {}

    def value(name, kind, detail, v):
        if kind == "leaf":
            out[name] = _leaf("array", v, name)
        else:
            out.update(flatten(v, name + "."))

    for name, shape, _, detail in layout(type(obj)):
        v = getattr(obj, name)
        where = prefix + name
        if v is None:
            continue
        if shape == "leaf":
            out[where] = _leaf("array", v, where)
        elif shape == "nested":
            out.update(flatten(v, where + "."))
        elif shape == "dict":
            key_type, (kind, sub) = detail
            for k, item in v.items():
                value(f"{where}[{_key_text(k, key_type, where)}]", kind, sub, item)
        else:
            kind, sub = detail
            for i, item in enumerate(v):
                value(f"{where}[{i}]", kind, sub, item)
    return out


def unflatten(cls, arrays, prefix=""):
    """The dataclass ``cls`` from the arrays :func:`flatten` wrote (a member that is no field of ``cls`` is refused).

    Parameters
    ----------
    cls : type
        A dataclass.
    arrays : mapping of str to array_like
    prefix : str
        The member names of ``arrays`` lack it (written in error messages).

    Returns
    -------
    cls

    Raises
    ------
    ValueError
        Naming ``arrays``: a member that is no field, a required field missing, a value that is not of its field's
        kind.
    """
    groups = {}
    for k, v in arrays.items():
        m = _SEGMENT.match(k) if isinstance(k, str) else None
        if m is None:
            check.fail("arrays", f"<member {prefix + str(k)!r}>", f"member names of the fields of {cls.__name__}")
        groups.setdefault(m.group(1), []).append((m.group(2), m.group(3), v))
    values = {}
    for name, shape, optional, detail in layout(cls):
        entries = groups.pop(name, [])
        where = prefix + name
        if not entries:
            if not optional and shape not in ("dict", "tuple"):
                check.fail("arrays", f"<no member {where!r}>", f"every field of {cls.__name__}")
            values[name] = None if optional else ({} if shape == "dict" else ())
            continue
        if shape in ("leaf", "nested"):
            values[name] = _read_value((shape, detail), entries, where, bracket=False)
            continue
        items = {}
        for key, rest, v in entries:
            if key is None:
                check.fail("arrays", f"<member {where!r} without a [key]>", f"members {where}[key] of a {shape}")
            items.setdefault(key, []).append((None, rest, v))
        if shape == "dict":
            key_type, kind = detail
            values[name] = {_key_value(key, key_type, f"arrays[{where!r}]"): _read_value(kind, group, f"{where}[{key}]")
                            for key, group in items.items()}
        else:
            if sorted(items, key=lambda x: (len(x), x)) != [str(i) for i in range(len(items))]:
                check.fail("arrays", f"<members {where}[{', '.join(sorted(items))}]>", f"{where}[0] … [n−1]")
            values[name] = tuple(_read_value(detail, items[str(i)], f"{where}[{i}]") for i in range(len(items)))
    if groups:
        extra = sorted(groups)[0]
        check.fail("arrays", f"<member {prefix + extra!r}>", f"member names of the fields of {cls.__name__} "
                   f"({', '.join(n for n, *_ in layout(cls))})")
    return cls(**values)


def _read_value(kind, entries, where, bracket=True):
    """One value of kind ``(shape, detail)`` from its entries ``(key, rest, value)``."""
    shape, detail = kind
    if shape == "leaf":
        if len(entries) != 1 or entries[0][1] is not None or (not bracket and entries[0][0] is not None):
            check.fail("arrays", f"<members under {where!r}>", f"one member {where!r}")
        return _leaf(detail, entries[0][2], f"arrays[{where!r}]")
    sub = {}
    for key, rest, v in entries:
        if rest is None or (not bracket and key is not None):
            check.fail("arrays", f"<member {where!r}>", f"members {where}.<field> of {detail.__name__}")
        sub[rest] = v
    return unflatten(detail, sub, where + ".")


class ExperimentData:
    """Base of the data of an experiment: subclasses are frozen dataclasses
    (``@dataclass(frozen=True, eq=False, repr=False)``) whose fields are the named arrays and scalars of the
    experiment (module docstring), each documented in the class docstring (meaning, shape with named axes, units).

    Leaves are normalised when an instance is made: ``float``, ``int``, ``bool`` and ``str`` fields hold Python
    scalars, ``np.ndarray`` fields arrays, ``dict`` and ``tuple`` fields plain dicts and tuples; so a result read back
    from its file equals the one that was saved (``==`` compares every array, NaN equal to NaN).
    """

    def __post_init__(self):
        for name, shape, _, detail in layout(type(self)):
            v = getattr(self, name)
            if v is None:
                continue
            where = f"{type(self).__name__}.{name}"
            if shape == "leaf":
                object.__setattr__(self, name, _leaf(detail, v, where))
            elif shape == "nested" and not isinstance(v, detail):
                check.fail(where, f"<{type(v).__name__}>", f"a {detail.__name__}")
            elif shape == "dict":
                key_type, (kind, sub) = detail
                if not isinstance(v, dict):
                    check.fail(where, f"<{type(v).__name__}>", "a dict")
                object.__setattr__(self, name, {_key_value(_key_text(k, key_type, where), key_type, where):
                                                _normal(kind, sub, x, where) for k, x in v.items()})
            elif shape == "tuple":
                if not isinstance(v, (tuple, list)):
                    check.fail(where, f"<{type(v).__name__}>", "a tuple")
                kind, sub = detail
                object.__setattr__(self, name, tuple(_normal(kind, sub, x, where) for x in v))

    def to_arrays(self) -> dict:
        """Every array of the data by member name (module docstring; what the ``.npz`` of a result holds).

        Returns
        -------
        dict of str to ndarray
        """
        return flatten(self)

    @classmethod
    def from_arrays(cls, arrays):
        """The data written by :meth:`to_arrays`.

        Parameters
        ----------
        arrays : mapping of str to array_like

        Returns
        -------
        ExperimentData
            An instance of ``cls``.
        """
        if not hasattr(arrays, "items"):
            check.fail("arrays", arrays, "a mapping of member names to arrays")
        return unflatten(cls, dict(arrays))

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta) -> dict:
        """The arrays of a result saved by version 0.1.0 (a plain dict under names of the experiment's own) under the
        member names of this class; default: the same names (override where they differ).

        Parameters
        ----------
        arrays : dict of str to ndarray
            The data of the 0.1.0 file.
        settings, meta : dict
            Its settings and metadata (the names of some arrays held a setting: ``D20_theory``).

        Returns
        -------
        dict of str to ndarray
        """
        return dict(arrays)

    def save(self, path) -> str:
        """Write :meth:`to_arrays` to ``path`` (``.npz``, appended as :func:`numpy.savez` does).

        Parameters
        ----------
        path : str

        Returns
        -------
        str
            The file written.
        """
        from ._result_io import write_npz

        return write_npz(path, self.to_arrays())

    @classmethod
    def load(cls, path):
        """The data written by :meth:`save` (no pickles; sizes checked before reading, as :meth:`Result.load`).

        Parameters
        ----------
        path : str

        Returns
        -------
        ExperimentData
            An instance of ``cls``.
        """
        from ._result_io import read_npz

        if not dataclasses.is_dataclass(cls):
            raise ValueError(f"ExperimentData.load must be called on the data class of an experiment (a dataclass "
                             f"deriving from ExperimentData); got {cls.__name__}")
        arrays = read_npz(path)
        try:
            return cls.from_arrays(arrays)
        except ValueError as err:           # a readable .npz of another layout: one error naming the file
            raise ValueError(f"path {str(path)!r} is not data of {cls.__name__} written by save: {err}") from None

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        a, b = self.to_arrays(), other.to_arrays()
        return a.keys() == b.keys() and all(
            a[k].shape == b[k].shape and np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind in "fc") for k in a)

    __hash__ = None

    def __repr__(self):
        arrays = self.to_arrays()
        return (f"{type(self).__name__}({len(arrays)} arrays: "
                + ", ".join(f"{k} {tuple(v.shape)}" for k, v in list(arrays.items())[:6])
                + (", …" if len(arrays) > 6 else "") + ")")


def _normal(kind, sub, value, where):
    if kind == "leaf":
        return _leaf(sub, value, where)
    if not isinstance(value, sub):
        check.fail(where, f"<{type(value).__name__}>", f"values of type {sub.__name__}")
    return value
