"""Argument checks shared by every public function.

Every check raises ``ValueError`` naming the argument, the value received and the accepted
range (DESIGN.md, "Bad input"). Nothing is clipped or coerced silently.
"""
from __future__ import annotations

import numbers

import numpy as np

MODELS = ("reduced", "full")


def _fail(name, value, accepted):
    raise ValueError(f"{name} must be {accepted}; got {value!r}")


def positive_int(name, value, minimum=1):
    """Return ``value`` as int if it is an integer >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer() and np.isfinite(value):
            value = int(value)
        else:
            _fail(name, value, f"an integer >= {minimum}")
    if value < minimum:
        _fail(name, value, f"an integer >= {minimum}")
    return int(value)


def nonneg_int(name, value):
    return positive_int(name, value, minimum=0)


def real(name, value, low=None, high=None, low_open=False, high_open=False, allow_inf=False):
    """Return ``value`` as float if it is a real number in the stated interval."""
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    accepted = f"a real number in {'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        _fail(name, value, accepted)
    v = float(value)
    if np.isnan(v) or (np.isinf(v) and not allow_inf):
        _fail(name, value, accepted)
    if low is not None and (v < low or (low_open and v == low)):
        _fail(name, value, accepted)
    if high is not None and (v > high or (high_open and v == high)):
        _fail(name, value, accepted)
    return v


def positive(name, value, allow_inf=False):
    return real(name, value, low=0.0, low_open=True, allow_inf=allow_inf)


def nonnegative(name, value, allow_inf=False):
    return real(name, value, low=0.0, allow_inf=allow_inf)


def model(value):
    if value not in MODELS:
        _fail("model", value, f"one of {MODELS}")
    return value


def choice(name, value, options):
    if value not in options:
        _fail(name, value, f"one of {tuple(options)}")
    return value


def finite_array(name, value, ndim=None, shape=None, allow_complex=False):
    """Return ``value`` as a float64 (or complex128) array after shape and finiteness checks.

    ``shape`` may contain ``None`` for free axes.
    """
    try:
        arr = np.asarray(value, dtype=np.complex128 if allow_complex else np.float64)
    except (TypeError, ValueError):
        _fail(name, value if np.ndim(value) == 0 else f"<array of type {type(value).__name__}>",
              "an array of real numbers")
    if ndim is not None and arr.ndim != ndim:
        _fail(name, f"<array with shape {arr.shape}>", f"an array with {ndim} dimension(s)")
    if shape is not None:
        ok = arr.ndim == len(shape) and all(s is None or s == a for s, a in zip(shape, arr.shape))
        if not ok:
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            _fail(name, f"<array with shape {arr.shape}>", f"an array of shape {want}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        _fail(name, f"<array with {bad} non-finite entries>", "an array of finite numbers")
    return arr


def rng(value):
    """Return a ``numpy.random.Generator`` from ``None``, an int seed or a Generator.

    ``None`` draws fresh entropy (not reproducible); an int, a tuple of ints (a seed sequence,
    e.g. ``(seed, dataset_index)``) or a Generator is reproducible. The global numpy state is
    never used.
    """
    if isinstance(value, np.random.Generator):
        return value
    if value is None:
        return np.random.default_rng()
    accepted = "None, a non-negative integer seed, a tuple of them, or a numpy.random.Generator"
    if isinstance(value, (tuple, list)):
        if not value or not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
                                and v >= 0 for v in value):
            _fail("rng", value, accepted)
        return np.random.default_rng([int(v) for v in value])
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        _fail("rng", value, accepted)
    return np.random.default_rng(int(value))


def seed_int(name, value):
    """A non-negative integer seed (for numba kernels, which take explicit integer seeds)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        _fail(name, value, "a non-negative integer")
    return int(value)
