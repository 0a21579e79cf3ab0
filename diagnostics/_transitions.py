r"""Transition times of training curves and diagnostics: steepest changes, change points, curvature.

Any scalar series recorded along training (a loss, an accuracy, an effective rank, a subspace distance)
gets the same treatment, so that the transition times of different measures can be compared:

* :func:`steepest_changes` — the ``n`` largest local maxima of ``|dS/du|``, ``u = ln t`` (or ``t``), after
  optional Savitzky–Golay smoothing; for a logistic step ``a(t) = A/(1 + e^{−(t − t_0)/w})`` in ``u = t``
  this is ``t_0`` exactly;
* :func:`change_points` — the least-squares piecewise-constant fit with ``n`` change points (optimal
  partitioning by dynamic programming, Jackson et al., IEEE SPL 2005), robust to noise in a staircase;
* :func:`loss_curvature` — ``d² ln L / du²``: the curvature of the loss curve in log–log (or log–linear)
  axes; negative at the onset of a drop (the loss bends downwards) and positive where it levels off.
  This is the loss-curve curvature of Mainali & Teixeira (arXiv 2504.12916) in a definition we fix here;
* :func:`rolling_autocorrelation` — lag-``ℓ`` autocorrelation of the linearly detrended series in a
  sliding window, the early-warning indicator of critical slowing down before a transition (Scheffer
  et al., Nature 2009): it rises towards 1 as a plateau loses stability.
"""
from __future__ import annotations

import numba
import numpy as np
from scipy.signal import savgol_filter

from linattn import _check as check
from linattn._arguments import array, boolean, choice, public

#: the rules of the arguments the functions share
_SCALE = choice(("log", "linear"))
_TIMES = array(ndim=1)


def _series(series, t, name="series", scale="linear"):
    """The checked ``(series, times)`` of the times ``t`` and the axis ``scale`` the decorator checked; on a log axis
    the records at ``t <= 0`` (a step-0 checkpoint) are left out with a warning, since ``ln t`` cannot place them
    (the stated rule of every function here)."""
    if t.size < 3 or np.any(np.diff(t) <= 0):
        check.fail("times", "<array>", "a strictly increasing 1-d array of at least 3 times")
    S = check.finite_array(name, series, ndim=1, shape=(t.size,))
    peak = np.max(np.abs(S))
    if peak > 0:              # the transitions do not depend on the series' scale: no overflow of differences at 1e308
        S = S / peak
    if scale == "log" and t[0] <= 0:
        keep = t > 0
        if keep.sum() < 3:
            check.fail("times", t.tolist()[:5], "at least 3 positive times for scale='log' (or scale='linear')")
        import warnings

        warnings.warn(f"scale='log' leaves out the {int((~keep).sum())} record(s) at times <= 0 (first time "
                      f"{t[0]:g}); pass scale='linear' to use them", UserWarning, stacklevel=3)
        S, t = S[keep], t[keep]
    return S, t


def _axis(t, scale):
    return np.log(t) if scale == "log" else t


def _uniform(u, S, n_grid=None):
    """Resample ``S(u)`` on a uniform grid of ``u`` (linear interpolation); the grid and the values."""
    n = n_grid or max(u.size, 64)
    g = np.linspace(u[0], u[-1], n)
    return g, np.interp(g, u, S)


def _window(name, window, n):
    if window is None:
        return None
    w = check.positive_int(name, window, minimum=5, maximum=n)
    return w if w % 2 else w - 1


@public(times=_TIMES, scale=_SCALE)
def steepest_changes(series, times, n=1, scale="log", window=None) -> np.ndarray:
    r"""Times of the ``n`` steepest changes of a series: the largest local maxima of ``|dS/du|``.

    ``u = ln t`` (``scale="log"``, for learning curves on log time axes) or ``u = t``. The series is
    resampled on a uniform grid of ``u`` (as many points as records, at least 64), optionally smoothed by a
    Savitzky–Golay filter (cubic, ``window`` points) and differentiated by central differences; each
    maximum is refined by the vertex of the parabola through its three grid points.

    Parameters
    ----------
    series : array_like (T,)
    times : array_like (T,)
        Strictly increasing; with ``scale="log"`` records at ``t <= 0`` (a step-0 checkpoint) are left out,
        with a warning.
    n : int
        Number of transitions, ``1 <= n``.
    scale : {"log", "linear"}
    window : int, optional
        Savitzky–Golay window (odd, ``5 <= window <= T``; even values are lowered by one).

    Returns
    -------
    ndarray (n,)
        Ascending times. Raises ``ValueError`` if the series has fewer than ``n`` local maxima of ``|dS/du|``.
    """
    S, t = _series(series, times, scale=scale)
    n = check.positive_int("n", n, maximum=t.size)
    if np.ptp(S) == 0:
        check.fail("series", f"<constant series of {S.size} records>", "a series that changes (a constant has no "
                   "transition)")
    u = _axis(t, scale)
    g, y = _uniform(u, S)
    w = _window("window", window, g.size)
    dy = savgol_filter(y, w, 3, deriv=1, delta=g[1] - g[0]) if w else np.gradient(y, g)
    a = np.abs(dy)
    peaks = np.flatnonzero((a[1:-1] > a[:-2]) & (a[1:-1] >= a[2:])) + 1
    if peaks.size < n:
        check.fail("n", n, f"at most the number of local maxima of |dS/du| ({peaks.size})")
    top = np.sort(peaks[np.argsort(a[peaks])[::-1][:n]])
    h = g[1] - g[0]
    den = a[top - 1] - 2 * a[top] + a[top + 1]
    shift = np.divide(0.5 * (a[top - 1] - a[top + 1]), den, out=np.zeros(top.size), where=den != 0)
    uu = g[top] + h * shift
    return np.exp(uu) if scale == "log" else uu


@public(times=_TIMES, scale=_SCALE)
def change_points(series, times, n=1, scale="log", min_size=2) -> np.ndarray:
    r"""Least-squares change points: the best fit of ``S`` by ``n + 1`` constant segments.

    Minimises ``Σ_segments Σ_{i ∈ seg} (S_i − mean_seg)²`` over all segmentations with segments of at
    least ``min_size`` records, exactly, by dynamic programming (optimal partitioning; ``O(n T²)`` in numba:
    ``T = 2·10⁴`` records, ``n = 50``: about 25 s on one core; beyond ``LINATTN_WORK_LIMIT`` refused). A change
    between records ``k − 1`` and ``k`` is reported at their midpoint in ``u`` (geometric mean of the times
    for ``scale="log"``).

    Parameters
    ----------
    series : array_like (T,)
    times : array_like (T,)
        Strictly increasing.
    n : int
        Number of change points, ``1 <= n`` and ``(n + 1) · min_size <= T``.
    scale : {"log", "linear"}
        Where between two records the change is placed.
    min_size : int
        Smallest segment, ``>= 1`` records.

    Returns
    -------
    ndarray (n,)
        Ascending times.
    """
    S, t = _series(series, times, scale=scale)
    min_size = check.positive_int("min_size", min_size, maximum=t.size)
    n = check.positive_int("n", n, maximum=max(1, t.size // min_size - 1))
    if (n + 1) * min_size > t.size:
        check.fail("n", n, f"at most T / min_size − 1 = {t.size // min_size - 1}")
    u = _axis(t, scale)
    T = S.size
    if np.ptp(S) == 0:
        check.fail("series", f"<constant series of {T} records>",
                   "a series that changes (a constant has no change point)")
    Z = (S - np.median(S)) / np.ptp(S)      # centred and scaled: the running sums do not cancel at large offsets
    c1 = np.concatenate([[0.0], np.cumsum(Z)])
    c2 = np.concatenate([[0.0], np.cumsum(Z * Z)])

    check.work(float(n) * T * T / 2, f"the exact segmentation of {T} records into {n + 1} segments (O(n T²))",
               "n or series")
    best = np.full((n + 2, T + 1), np.inf)
    arg = np.zeros((n + 2, T + 1), dtype=np.int64)
    _segment(c1, c2, n, min_size, best, arg)
    cuts, j = [], T
    for k in range(n + 1, 1, -1):
        j = arg[k, j]
        cuts.append(j)
    cuts = np.array(cuts[::-1])
    mid = 0.5 * (u[cuts - 1] + u[cuts])
    return np.exp(mid) if scale == "log" else mid


@public(times=_TIMES, scale=_SCALE)
def loss_curvature(loss, times, scale="log", window=None) -> np.ndarray:
    r"""Curvature ``d² ln L / du²`` of a loss curve, ``u = ln t`` (log–log axes) or ``t``.

    Computed on a uniform grid of ``u`` (linear interpolation of ``ln L``), smoothed and differentiated by a
    cubic Savitzky–Golay filter of ``window`` points (default: a ninth of the grid), and interpolated back
    to ``times``. Negative where the loss starts to fall faster (onset of a drop), positive where it levels
    off; its extrema bracket each transition.

    Parameters
    ----------
    loss : array_like (T,)
        Positive losses.
    times : array_like (T,)
        Strictly increasing (positive for ``scale="log"``: the curvature is returned at every record).
    scale : {"log", "linear"}
    window : int, optional
        Savitzky–Golay window (odd, ``5 <= window <=`` grid size).

    Returns
    -------
    ndarray (T,)
    """
    if scale == "log" and times.size and times[0] <= 0:
        check.fail("times", times[0], "positive times for scale='log' (the curvature is returned at every record: "
                   "pass scale='linear', or leave out the records at t <= 0)")
    L, t = _series(loss, times, "loss", scale=scale)
    if np.any(L <= 0):
        check.fail("loss", "<array with non-positive entries>", "positive losses (the curvature is of ln L)")
    u = _axis(t, scale)
    g, y = _uniform(u, np.log(L))
    w = _window("window", window if window is not None else max(5, g.size // 9), g.size)
    d2 = savgol_filter(y, w, 3, deriv=2, delta=g[1] - g[0])
    return np.interp(u, g, d2)


@public(series=array(ndim=1))
def rolling_autocorrelation(series, window, lag=1) -> np.ndarray:
    r"""Lag-``ℓ`` autocorrelation of the linearly detrended series in each window of ``window`` records.

    For the window ending at record ``j`` (``j = window − 1, …, T − 1``): remove the least-squares line,
    then ``ρ = Σ_i r_i r_{i+ℓ} / Σ_i r_i²`` (Scheffer et al., Nature 2009: rising autocorrelation is the
    early warning of a transition). A window whose residual vanishes (an exact straight line) gets 0.

    Parameters
    ----------
    series : array_like (T,)
    window : int
        ``lag + 3 <= window <= T``.
    lag : int
        ``>= 1``.

    Returns
    -------
    ndarray (T − window + 1,)
        Value ``k`` belongs to the window ending at record ``window − 1 + k``.
    """
    S = series
    if S.size < 4:
        check.fail("series", f"<array of length {S.size}>", "a series of at least 4 records (a window of lag + 3)")
    lag = check.positive_int("lag", lag, maximum=S.size - 3)
    window = check.positive_int("window", window, minimum=lag + 3, maximum=S.size)
    if S.size < window:
        check.fail("series", f"<array of length {S.size}>", f"a series of at least window = {window} records")
    W = np.lib.stride_tricks.sliding_window_view(S, window)
    # ρ is scale-free: each window is scaled by a power of 2 (exact) to a largest |value| in [0.5, 1), so that r² does
    # not overflow at 1e300 nor underflow at 1e-300
    W = np.ldexp(W, -np.frexp(np.max(np.abs(W), axis=1, keepdims=True))[1])
    x = np.arange(window) - 0.5 * (window - 1)
    slope = (W @ x) / (x @ x)
    r = W - W.mean(axis=1, keepdims=True) - slope[:, None] * x
    num = np.sum(r[:, :-lag] * r[:, lag:], axis=1)
    den = np.sum(r * r, axis=1)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 1e-300)

@public(times=_TIMES, values=array(), level=array(), below=boolean())
def crossing_times(times, values, level, below=False) -> np.ndarray:
    """First time each trajectory reaches ``level`` (linear interpolation between records; ``nan`` if never).

    Parameters
    ----------
    times : array_like (T,)
    values : array_like (..., T)
        Trajectories along the last axis.
    level : float or array_like broadcastable to ``values[..., 0]``
    below : bool
        ``True``: first time ``values <= level`` (a falling loss); else ``values >= level``.

    Returns
    -------
    ndarray (...)
    """
    t, v, lev = times, values, level
    if t.size == 0 or np.any(np.diff(t) <= 0):
        check.fail("times", t.tolist()[:5], "a non-empty strictly increasing 1-d array")
    if v.ndim == 0 or v.shape[-1] != t.size:
        check.fail("values", f"<array with shape {v.shape}>", f"an array whose last axis has length {t.size}")
    try:
        lev = np.broadcast_to(lev, v.shape[:-1])[..., None]
    except ValueError:
        check.fail("level", f"<array with shape {lev.shape}>", f"a number or an array broadcastable to {v.shape[:-1]}")
    hit = (v <= lev) if below else (v >= lev)
    out = np.full(v.shape[:-1], np.nan)
    for idx in np.ndindex(*v.shape[:-1]):
        k = int(np.argmax(hit[idx]))
        if not hit[idx][k]:
            continue
        if k == 0:
            out[idx] = t[0]
            continue
        v0, v1, L = v[idx][k - 1], v[idx][k], lev[idx][0]
        out[idx] = t[k - 1] + (t[k] - t[k - 1]) * (L - v0) / (v1 - v0) if v1 != v0 else t[k]
    return out


@numba.njit(cache=True)
def _segment(c1, c2, n, min_size, best, arg):
    """The dynamic programme of :func:`change_points`: ``best[k, j]`` the least squared deviation of the first ``j``
    records cut into ``k`` segments of at least ``min_size``, ``arg[k, j]`` the start of the last (the first
    minimiser, as ``numpy.argmin``); ``c1``, ``c2`` running sums of the series and its square."""
    T = c1.size - 1
    for j in range(min_size, T + 1):
        best[1, j] = c2[j] - c1[j] * c1[j] / j
    for k in range(2, n + 2):
        for j in range(k * min_size, T + 1):
            value, where = np.inf, -1
            for i in range((k - 1) * min_size, j - min_size + 1):
                s = c1[j] - c1[i]
                c = best[k - 1, i] + c2[j] - c2[i] - s * s / (j - i)
                if c < value:
                    value, where = c, i
            best[k, j], arg[k, j] = value, where
