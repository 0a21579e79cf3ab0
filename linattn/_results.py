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


def xarray_dataset(result, dim=None, coords=(), dims=None, skip=()):
    """The ``xarray.Dataset`` of a result dataclass (:meth:`ToXarray.to_xarray`).

    Parameters
    ----------
    result : dataclass instance
    dim : str, optional
        The field that is the result's coordinate (a 1-d array: ``"P"``, ``"K"``, ``"times"``); arrays whose first
        axis has its length lie along it. ``None``: a single point.
    coords : tuple of str
        Scalar fields that become scalar coordinates (the parameters a user sweeps by hand: ``xarray.concat`` of
        the datasets along one of them builds the sweep); a pair ``(λ_Γ, λ_v)`` becomes ``lam`` and ``lam_v``.
    dims : dict, optional
        Dimension names of other array fields (``{"Gamma": ("i", "j")}``); default ``<field>_0, <field>_1, …``.
    skip : tuple of str
        Fields left out.

    Returns
    -------
    xarray.Dataset
        Numbers and flags as variables (0-d, or along ``dim``), strings and other objects (their repr) as
        attributes; ``None`` fields are left out.

    Raises
    ------
    ImportError
        Without xarray (the optional extra ``[dask]``).
    """
    try:
        import xarray as xr
    except ImportError:
        raise ImportError(f"{type(result).__name__}.to_xarray needs xarray, part of the optional extra [dask]: "
                          "pip install 'linattn[dask]' (or pip install xarray)") from None
    dims = dims or {}
    n = None if dim is None else np.asarray(getattr(result, dim)).shape[0]
    data, attrs, scalar = {}, {}, {}
    for f in dataclasses.fields(result):
        name, v = f.name, getattr(result, f.name)
        if name == dim or name in skip or v is None:
            continue
        if name in coords:
            if isinstance(v, tuple):
                scalar.update(lam=float(v[0]), lam_v=float(v[1])) if name == "lam" else scalar.update(
                    {f"{name}_{i}": float(x) for i, x in enumerate(v)})
            else:
                scalar[name] = v
        elif isinstance(v, np.ndarray) or (isinstance(v, (list, tuple)) and v
                                           and all(isinstance(x, (int, float, np.number)) for x in v)):
            arr = np.asarray(v)
            if name in dims:
                data[name] = (dims[name], arr)
            elif n is not None and arr.ndim >= 1 and arr.shape[0] == n:
                data[name] = ((dim,) + tuple(f"{name}_{i}" for i in range(1, arr.ndim)), arr)
            else:
                data[name] = (tuple(f"{name}_{i}" for i in range(arr.ndim)), arr)
        elif isinstance(v, (bool, int, float, np.number, np.bool_)):
            data[name] = ((), v)
        elif isinstance(v, str):
            attrs[name] = v
        else:
            attrs[name] = repr(v)
    if dim is not None:
        scalar[dim] = (dim, np.asarray(getattr(result, dim)))
    return xr.Dataset(data, coords=scalar, attrs=attrs)


class ToXarray:
    """Mixin of the result dataclasses a user sweeps by hand: :meth:`to_xarray`. A class states its layout in its
    class line, ``class Curve(ToXarray, xarray_dim="P", xarray_coords=("lam",))``: ``xarray_dim``, its coordinate
    field (``None``: one point), ``xarray_coords``, scalar fields that become coordinates, ``xarray_dims``, dimension
    names of other array fields, and ``xarray_skip``, fields left out (internal state)."""

    _xarray = (None, (), None, ())

    def __init_subclass__(cls, xarray_dim=None, xarray_coords=(), xarray_dims=None, xarray_skip=(), **kwargs):
        super().__init_subclass__(**kwargs)
        cls._xarray = (xarray_dim, tuple(xarray_coords), xarray_dims, tuple(xarray_skip))

    def to_xarray(self):
        """This result as an ``xarray.Dataset``: numbers and flags as variables (along the result's coordinate,
        e.g. ``P``, ``K`` or ``times``, where it has one), the parameters a user sweeps by hand as scalar
        coordinates (``xarray.concat([r.to_xarray() for r in results], dim="P")`` builds a sweep), strings and
        other objects as attributes. Needs xarray, part of the optional extra ``[dask]``.

        Returns
        -------
        xarray.Dataset

        Raises
        ------
        ImportError
            Without xarray (naming the extra).
        """
        dim, coords, dims, skip = self._xarray
        return xarray_dataset(self, dim, coords, dims, skip)
