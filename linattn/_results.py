"""Result objects return numbers as numbers: one helper for the frozen result dataclasses of the library."""
from __future__ import annotations

import dataclasses

import numpy as np


def python_scalars(obj) -> None:
    """Replace, in place, every field of the frozen dataclass ``obj`` that holds a 0-d array or a numpy
    scalar by the Python ``float``, ``int`` or ``bool`` of the same value (call it from ``__post_init__``).

    Parameters
    ----------
    obj : dataclass instance

    Returns
    -------
    None
    """
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, np.ndarray) and v.ndim == 0 or isinstance(v, np.generic):
            object.__setattr__(obj, f.name, np.asarray(v).item())


def _short(v) -> str:
    if v is None or isinstance(v, (bool, int, str, np.bool_)):
        return repr(v)
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    if isinstance(v, np.ndarray):
        return f"{v.item():.6g}" if v.ndim == 0 and v.dtype.kind in "fiu" else f"<array {v.shape} {v.dtype}>"
    if isinstance(v, dict):
        return f"<dict of {len(v)}: {', '.join(map(str, list(v)[:4]))}{', …' if len(v) > 4 else ''}>"
    if isinstance(v, (list, tuple)):
        return f"<{type(v).__name__} of {len(v)}>"
    if dataclasses.is_dataclass(v) and type(v).__repr__ is short_repr:
        return f"{type(v).__name__}(…)"
    text = repr(v)
    return text if len(text) <= 80 else f"<{type(v).__name__}>"


def short_repr(self) -> str:
    """A repr of a result dataclass that a person can read: scalars with 6 digits, arrays as their shape,
    containers as their length — never whole arrays (set ``__repr__ = short_repr`` in the class).

    Returns
    -------
    str
    """
    parts = [f"{f.name}={_short(getattr(self, f.name))}" for f in dataclasses.fields(self) if f.repr]
    text = f"{type(self).__name__}({', '.join(parts)})"
    return text if len(text) <= 500 else text[:497] + "…)"
