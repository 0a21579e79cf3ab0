"""Mean ± standard error: the one such helper of the library.

Every sample mean the library reports with an error bar from independent values (datasets, pools, chains,
seeds, test prompts) takes its standard error from :func:`mean_se`, so that the rule, and its case of a single
value, are written once. Estimators of another kind (autocorrelated chains, a bootstrap, a sum of variances)
compute their own.
"""
from __future__ import annotations

import numpy as np

__all__ = ["mean_se"]


def mean_se(x, axis=None, single=np.nan):
    """Sample mean and the standard error of the mean of independent values.

    The standard error is ``x.std(axis, ddof=1) / np.sqrt(n)``, ``n`` the number of values along ``axis`` (all
    of them for ``axis=None``), computed exactly so: the same floating-point numbers as that expression written
    out.

    Parameters
    ----------
    x : array_like
        The values (converted with :func:`numpy.asarray`).
    axis : int or None
        The axis the values lie along; ``None``: all of ``x``, flattened.
    single : float
        The standard error reported for a single value (``n == 1``, see Notes): ``nan`` (default: not computable,
        there is no spread to estimate it from) or ``0`` for a caller whose single value is exact (no sampling at all).

    Returns
    -------
    mean, se : float or ndarray
        ``x.mean(axis)`` and its standard error; Python floats for ``axis=None``, else of the shape of
        ``x.mean(axis)``.

    Notes
    -----
    Finite values so large that their sum or squares overflow (beyond about ``1e154``) are averaged as
    ``x / max|x|`` and scaled back, so that finite values give a finite mean and standard error.

    One value (``n == 1``) has no spread estimate: ``se`` is then ``single`` (``nan`` by default, never a silent
    ``0``; of the mean's shape for an ``axis``), with no warning. A public result that can hold one value states
    the reason of its ``nan`` in its docstring. No values (``n == 0``) give ``nan`` for both, as NumPy does.

    Examples
    --------
    >>> mean_se([1.0, 2.0, 3.0, 4.0])
    (2.5, 0.6454972243679028)
    >>> mean_se([5.0])
    (5.0, nan)
    >>> mean_se([5.0], single=0.0)
    (5.0, 0.0)
    >>> m, se = mean_se([[1.0, 2.0], [3.0, 6.0]], axis=0)
    >>> m.tolist(), se.tolist()
    ([2.0, 4.0], [1.0, 2.0])
    """
    x = np.asarray(x)
    n = x.size if axis is None else x.shape[axis]
    with np.errstate(over="ignore", invalid="ignore" if np.all(np.isfinite(x)) else "warn"):
        mean = x.mean(axis)
        se = np.full_like(mean, single)[()] if n == 1 else x.std(axis, ddof=1) / np.sqrt(n)
    if n > 1 and np.all(np.isfinite(x)) and not (np.all(np.isfinite(mean)) and np.all(np.isfinite(se))):
        # finite values beyond ~1e154 (their squares, or their sum, overflow): the same statistics of x / max|x|,
        # scaled back — finite wherever the mean and the spread are representable
        big = np.max(np.abs(x), axis=axis, keepdims=True)
        big = np.where(big > 0, big, 1.0)
        y = x / big
        scale = big.reshape(()) if axis is None else np.squeeze(big, axis=axis)
        mean = y.mean(axis) * scale
        se = y.std(axis, ddof=1) / np.sqrt(n) * scale
    if axis is None:
        return float(mean), float(se)
    return mean, se
