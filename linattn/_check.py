"""Argument checks shared by every public function of the library (public: ``linattn.check``).

Every check raises ``ValueError`` naming the argument, the value received and the accepted
range. Nothing is clipped or coerced silently: booleans are not
numbers, complex values are not real, and work that cannot fit in memory is refused before it
starts (:func:`memory`).

This module imports nothing of the library: the checks of the library's own objects (a ``Problem``,
``Prompts`` and the two together) are in ``linattn/_validate.py``, one floor up.
"""
from __future__ import annotations

import cmath
import functools
import math
import numbers
import os

import numpy as np

MODELS = ("reduced", "full")


def fail(name, value, accepted):
    """Raise ``ValueError("{name} must be {accepted}; got {value!r}")`` (a repr longer than 120 characters is
    shortened to its first 60 and its length, so that the message stays one readable line)."""
    text = repr(value)
    if len(text) > 120:
        text = f"{text[:60]}… ({len(text)} characters)"
    raise ValueError(f"{name} must be {accepted}; got {text}")


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


#: seconds after which a call's progress bar shows (``tqdm(..., delay=PROGRESS_DELAY)``): a shorter call stays silent
PROGRESS_DELAY = 2.0

#: largest integer argument accepted anywhere (every integer of float64's exact range): a size, count or step
#: beyond it cannot be used in arithmetic with floats (``OverflowError`` deep inside) nor fit in memory
MAX_INT = 2**53


def positive_int(name, value, minimum=1, maximum=None):
    """Return ``value`` as ``int`` if it is an integer (or an integral float) in ``[minimum, maximum]``.

    Parameters
    ----------
    name : str
        Argument name for the message.
    value : object
        The value to check; ``bool`` is refused.
    minimum, maximum : int, optional
        Accepted range (``maximum=None``: :data:`MAX_INT` = 2**53).

    Returns
    -------
    int
    """
    maximum = MAX_INT if maximum is None else min(maximum, MAX_INT)
    if type(value) is int and minimum <= value <= maximum:       # the common case, checked in ~0.1 µs
        return value
    accepted = f"an integer >= {minimum} and <= {maximum}"
    if _is_bool(value) or not isinstance(value, numbers.Real):
        fail(name, value, accepted)
    if not isinstance(value, numbers.Integral):
        try:                                  # any Real (a float, numpy scalar, Fraction, ...): compare as float
            as_float = float(value)
        except (OverflowError, TypeError, ValueError):
            fail(name, value, accepted)
        if not (math.isfinite(as_float) and as_float.is_integer()) or int(as_float) != value:
            fail(name, value, accepted)
        value = int(as_float)
    if value < minimum or value > maximum:
        fail(name, value, accepted)
    return int(value)


def nonneg_int(name, value, maximum=None):
    """:func:`positive_int` with ``minimum = 0``."""
    return positive_int(name, value, minimum=0, maximum=maximum)


def n_test(N_test):
    """The optional test context length ``N_test``: ``None`` (the training length ``N``) or an integer ``>= 1``.

    Parameters
    ----------
    N_test : None or int

    Returns
    -------
    None or int
    """
    return None if N_test is None else positive_int("N_test", N_test)


def real(name, value, low=None, high=None, low_open=False, high_open=False, allow_inf=False):
    """Return ``value`` as ``float`` if it is a real number in the stated interval.

    Parameters
    ----------
    name : str
    value : object
        ``bool`` and complex values are refused; NaN always, ``±inf`` unless ``allow_inf``.
    low, high : float, optional
        Interval ends (``None``: unbounded).
    low_open, high_open : bool
        Whether the ends are excluded.
    allow_inf : bool

    Returns
    -------
    float
    """
    if type(value) is float:                 # the common cases without the ABC checks
        v = value
    elif type(value) is int and -MAX_INT <= value <= MAX_INT:
        v = float(value)
    else:
        if _is_bool(value) or not isinstance(value, numbers.Real):
            _refuse_real(name, value, low, high, low_open, high_open)
        try:
            v = float(value)
        except OverflowError:                 # an int beyond float64's range (>= 2**1024)
            _refuse_real(name, value, low, high, low_open, high_open)
    if v != v or (not allow_inf and (v == math.inf or v == -math.inf)):
        _refuse_real(name, value, low, high, low_open, high_open)
    if low is not None and (v < low or (low_open and v == low)):
        _refuse_real(name, value, low, high, low_open, high_open)
    if high is not None and (v > high or (high_open and v == high)):
        _refuse_real(name, value, low, high, low_open, high_open)
    return v


def _refuse_real(name, value, low, high, low_open, high_open):
    """Raise the ``ValueError`` of :func:`real` (the accepted interval in words)."""
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    fail(name, value, f"a real number in {'(' if low_open or low is None else '['}{lo}, {hi}"
                      f"{')' if high_open or high is None else ']'}")


def finite_result(value, culprits, what):
    """Return ``value`` if every entry is finite; else raise a ``ValueError`` naming the argument that made it
    overflow float64 (``culprits``: ``{name: array}`` in the order to blame; the first with the largest magnitude
    is named) — a result that overflows is refused, never returned as ``inf`` or ``nan``."""
    if isinstance(value, float):             # a scalar result (float, numpy float64): no array round trip
        if math.isfinite(value):
            return np.asarray(value)
    else:
        value = np.asarray(value)
        if _all_finite(value):
            return value
    sizes = {n: float(np.max(np.abs(a))) if np.size(a) else 0.0 for n, a in culprits.items() if a is not None}
    name = max(sizes, key=sizes.get)
    fail(name, f"<values up to {sizes[name]:.3g}>", f"small enough that {what} is finite in float64")


def finite_results(values, culprits, what):
    """:func:`finite_result` of several arrays in one call (``values``: a tuple, blamed in order; the common case, every
    entry finite, costs one pass over each), returned as given."""
    for v in values:
        if not _all_finite(np.asarray(v)):
            for w in values:
                finite_result(w, culprits, what)
    return values


def all_finite(*values):
    """Whether every entry of every array of ``values`` is finite (a result guard's test; on ``False`` the caller
    names the culprit with :func:`finite_result`)."""
    return all(_all_finite(np.asarray(v)) for v in values)


def _all_finite(value):
    """Whether every entry of the array ``value`` is finite."""
    kind = value.dtype.kind                 # one or a few floats: ~0.2–0.5 µs in Python, ~2–3 µs through numpy
    if kind == "f":
        if value.size == 1:
            return math.isfinite(value.item())
        if value.size <= 16:
            return all(map(math.isfinite, value.ravel().tolist()))
    elif kind == "c" and value.size <= 16:
        return all(map(cmath.isfinite, value.ravel().tolist()))
    return bool(np.isfinite(value).all())


def positive(name, value, allow_inf=False):
    """A real number ``> 0`` (:func:`real`)."""
    return real(name, value, low=0.0, low_open=True, allow_inf=allow_inf)


def nonnegative(name, value, allow_inf=False):
    """A real number ``>= 0`` (:func:`real`)."""
    return real(name, value, low=0.0, allow_inf=allow_inf)


def tolerance(name, value):
    """A solver tolerance: a real number in ``(0, 1)``."""
    return real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def boolean(name, value):
    """Return ``value`` if it is ``True`` or ``False`` (no truthiness: ``"no"`` is refused)."""
    if not _is_bool(value):
        fail(name, value, "True or False")
    return bool(value)


def model(value):
    """``value`` if it is one of ``("reduced", "full")``."""
    return choice("model", value, MODELS)


def choice(name, value, options):
    """``value`` if it equals one of ``options`` (strings compared as strings only)."""
    if not isinstance(value, (str, type(None), numbers.Number)) or value not in tuple(options):
        fail(name, value, f"one of {tuple(options)}")
    return value


def distinct(name, values):
    """``values`` (a sequence of hashable entries) if no entry repeats: a repeated name would be computed, summed or
    returned twice (every argument that lists names: estimator names, weight names, …).

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    values : sequence

    Returns
    -------
    sequence
        ``values`` itself.
    """
    seen = set()
    for v in values:
        if v in seen:
            fail(name, list(values), f"distinct entries ({v!r} is repeated: each is computed once)")
        seen.add(v)
    return values


#: the most axes :func:`asarray` pads to (numpy's own limit is 32 in numpy 1 and 64 in numpy 2)
MAX_NDIM = 32


def asarray(name, value, accepted="an array of real numbers", min_ndim=0):
    """``np.asarray(value)`` with at least ``min_ndim`` axes (leading axes of length 1 added, as
    ``np.atleast_1d``/``np.atleast_2d`` do), refusing ragged or exotic input by ``name`` and ``accepted``:
    numpy's own words ("setting an array element with a sequence") would not name the argument.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : array_like
    accepted : str
        What the argument accepts, for the message.
    min_ndim : int
        The fewest axes of the result, an integer in ``[0, 32]`` (:data:`MAX_NDIM`).

    Returns
    -------
    ndarray
        ``np.asarray(value)`` (no copy where numpy makes none), with leading axes of length 1 up to ``min_ndim``.

    Raises
    ------
    ValueError
        ``value`` that numpy cannot make one array of (ragged nested lists), naming ``name``; ``min_ndim`` that is
        not an integer in ``[0, 32]``, naming ``min_ndim``.
    """
    min_ndim = positive_int("min_ndim", min_ndim, minimum=0, maximum=MAX_NDIM)
    try:
        raw = np.asarray(value)
    except Exception:  # ragged nested lists or exotic input
        fail(name, f"<{type(value).__name__} of uneven shape>", accepted)
    if raw.ndim < min_ndim:
        raw = raw.reshape((1,) * (min_ndim - raw.ndim) + raw.shape)
    return raw


def finite_array(name, value, ndim=None, shape=None, allow_complex=False, min_ndim=0):
    """Return ``value`` as a float64 (or complex128) array after type, shape and finiteness checks.

    Parameters
    ----------
    name : str
    value : array_like
        Boolean arrays are refused, and so are complex ones unless ``allow_complex``.
    ndim : int, optional
    shape : tuple, optional
        May contain ``None`` for free axes.
    allow_complex : bool
    min_ndim : int
        Fewer axes are padded with leading axes of length 1 first (``np.atleast_1d``, ``np.atleast_2d``).

    Returns
    -------
    ndarray
    """
    raw = asarray(name, value, "an array of real numbers", min_ndim)
    if raw.dtype.kind == "b" or raw.dtype.kind not in "iufc":
        fail(name, value if raw.ndim == 0 else f"<array of dtype {raw.dtype}>",
             "an array of " + ("real or complex" if allow_complex else "real") + " numbers")
    if raw.dtype.kind == "c" and not allow_complex:
        fail(name, value if raw.ndim == 0 else "<complex array>", "an array of real numbers (not complex)")
    arr = raw.astype(np.complex128 if allow_complex else np.float64)
    if ndim is not None and arr.ndim != ndim:
        fail(name, f"<array with shape {arr.shape}>", f"an array with {ndim} dimension(s)")
    if shape is not None:
        ok = arr.ndim == len(shape) and all(s is None or s == a for s, a in zip(shape, arr.shape))
        if not ok:
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            fail(name, f"<array with shape {arr.shape}>", f"an array of shape {want}")
    if not _all_finite(arr):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        fail(name, f"<array with {bad} non-finite entries>", "an array of finite numbers")
    return arr


def real_array(name, value, low=None, low_open=False, allow_inf=False, min_ndim=0):
    """A non-empty real array (no NaN; ``+inf`` only if ``allow_inf``) with every entry ``>= low``
    (``> low`` if ``low_open``), with at least ``min_ndim`` axes (:func:`asarray`).

    Returns
    -------
    ndarray (float64)
    """
    if (type(value) in (list, tuple) and 0 < len(value) <= 16 and type(min_ndim) is int and 0 <= min_ndim <= 1
            and all(type(v) is float or type(v) is int and -MAX_INT <= v <= MAX_INT for v in value)):
        # a short list of Python numbers (a few values of P, β or λ): checked as floats, one array built; anything
        # else (NaN, a bound crossed, bools, big integers) takes the general path below and its message
        floats = [float(v) for v in value]
        if all(map(math.isfinite, floats)) and (low is None or not any(v < low or low_open and v == low
                                                                       for v in floats)):
            return np.array(floats)
    raw = asarray(name, value if not isinstance(value, (str, bytes)) else [value],
                  "a real number or a non-empty array of them", min_ndim)
    if raw.dtype.kind in "iuf" and raw.size:         # the common case, finite numbers: one conversion, one pass
        arr = raw.astype(np.float64)
        if _all_finite(arr) and (low is None or not (arr < low if not low_open else arr <= low).any()):
            return arr
    finite = np.where(raw == np.inf, 0.0, raw) if allow_inf and raw.dtype.kind in "iuf" else raw
    finite_array(name, finite)
    arr = raw.astype(np.float64)
    bound = "" if low is None else f" {'>' if low_open else '>='} {low}"
    accepted = f"a real number{bound} or a non-empty array of them" + (" (inf allowed)" if allow_inf else "")
    if arr.size == 0 or (low is not None and (arr < low if not low_open else arr <= low).any()):
        fail(name, value, accepted)
    return arr


def counts(name, value):
    """A 1-d array of non-negative integers (step counts), returned as ``int64``."""
    n = finite_array(name, value, ndim=1, min_ndim=0 if isinstance(value, str) else 1)
    if np.any(n < 0) or np.any(n != np.round(n)) or np.any(n > MAX_INT):
        fail(name, value, f"a 1-d array of integers >= 0 and <= {MAX_INT}")
    return n.astype(np.int64)


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
        if not value or not all(isinstance(v, numbers.Integral) and not _is_bool(v) and v >= 0 for v in value):
            fail("rng", value, accepted)
        return np.random.default_rng([int(v) for v in value])
    if _is_bool(value) or not isinstance(value, numbers.Integral) or value < 0:
        fail("rng", value, accepted)
    return np.random.default_rng(int(value))


def seed_int(name, value):
    """A non-negative integer seed below 2^63 (for numba kernels and seed tuples, which take explicit integer
    seeds); a ``numpy.random.Generator`` gives one draw of it (reproducible with the generator's state)."""
    if isinstance(value, np.random.Generator):
        return int(value.integers(2**63))
    if _is_bool(value) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**63:
        fail(name, value, "a non-negative integer below 2**63 or a numpy.random.Generator")
    return int(value)


# ----------------------------------------------------------------------------- memory guards
def memory_limit() -> int:
    """Bytes that one allocation plan may use: ``LINATTN_MEMORY_LIMIT`` (bytes) if set, else 80 %
    of the physical memory of this machine."""
    env = os.environ.get("LINATTN_MEMORY_LIMIT")
    if env:
        try:
            limit = float(env)
        except ValueError:
            limit = np.nan
        if not (np.isfinite(limit) and limit > 0):
            fail("LINATTN_MEMORY_LIMIT (environment variable)", env, "a number of bytes > 0")
        return int(limit)
    return _physical_memory_limit()


@functools.lru_cache(maxsize=1)
def _physical_memory_limit():
    """80 % of this machine's physical memory (read once a process: two ``sysconf`` calls cost ~10 µs, and a
    single call of the Langevin entry plans a dozen allocations)."""
    try:
        return int(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 16 << 30


def _size(estimate):
    """An estimate as a float for a message (an integer beyond float64's range reads as ``inf``)."""
    try:
        return float(estimate)
    except OverflowError:
        return float("inf")


def memory(n_bytes, what, arguments):
    """Refuse work whose arrays would need more than :func:`memory_limit` bytes.

    Parameters
    ----------
    n_bytes : float
        Estimated peak memory of the work; NaN (an estimate that overflowed to ``inf - inf``) is refused too.
    what : str
        What would be allocated (for the message).
    arguments : str
        The arguments that set the size (named in the message).

    Raises
    ------
    ValueError
        Unless ``n_bytes <= memory_limit()``, naming ``arguments``.
    """
    limit = memory_limit()
    if not n_bytes <= limit:
        raise ValueError(f"{arguments} too large: {what} would need {_size(n_bytes) / 2**30:.3g} GiB, more than the "
                         f"memory limit of {limit / 2**30:.3g} GiB (80 % of this machine's memory; set "
                         "LINATTN_MEMORY_LIMIT in bytes to change it)")


#: operations one trip of a Python-level loop counts as in :func:`work` (its overhead, ~20–50 µs with a few numpy calls)
PYTHON_TRIP = 1e5
#: elementary operations one call may plan (``LINATTN_WORK_LIMIT`` overrides): ~3 hours at 1e9 operations per second
WORK_LIMIT = 1e13


def work(n_ops, what, arguments):
    """Refuse a loop whose length a user sets beyond :data:`WORK_LIMIT` elementary operations (a call that would
    run for hours inside numba or scipy, where Ctrl-C cannot stop it), naming the arguments that set it.

    Parameters
    ----------
    n_ops : float
        Estimated operations (loop trips × work per trip).
    what : str
        The work (for the message).
    arguments : str
        The arguments that set its size.
    """
    env = os.environ.get("LINATTN_WORK_LIMIT")
    limit = WORK_LIMIT
    if env:
        try:
            limit = float(env)
        except ValueError:
            limit = np.nan
        if not (np.isfinite(limit) and limit > 0):
            fail("LINATTN_WORK_LIMIT (environment variable)", env, "a number of operations > 0")
    if not n_ops <= limit:
        raise ValueError(f"{arguments} too large: {what} would take about {_size(n_ops):.3g} operations, more than "
                         f"the work limit of {limit:.3g} (hours of computing; set LINATTN_WORK_LIMIT to change it)")


def block_lambdas(lam, model):
    """``(λ_Γ, λ_v)`` from a weight decay ``lam``: a number (both blocks), or a pair ``(λ_Γ, λ_v)`` for the full
    model (both 0 — the min-norm limit — or both > 0). Lu et al.'s ridge ``λ_L`` is ``(λ_L/D, λ_L)``."""
    model = choice("model", model, MODELS)
    if type(lam) is float or type(lam) is int:          # one number (the common case, without the array round trip)
        lg = nonnegative("lam", lam)
        return lg, lg
    shape = asarray("lam", lam, "a number >= 0, or a pair (lam_Gamma, lam_v) for model='full'").shape
    if shape == ():
        lg = nonnegative("lam", lam)
        return lg, lg
    if model != "full" or shape != (2,):
        fail("lam", lam, "a number >= 0, or a pair (lam_Gamma, lam_v) for model='full'")
    lg, lv = nonnegative("lam[0]", lam[0]), nonnegative("lam[1]", lam[1])
    if (lg == 0) != (lv == 0):
        fail("lam", tuple(lam), "a pair with both entries > 0, or both 0 (min-norm)")
    return lg, lv
