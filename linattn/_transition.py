r"""The memorization → generalization boundary: one definition of ``ΔEr`` and of ``P*``.

Relative generalization gap (conventions §2, seed paper, Figs. 5–6):

.. math:: ΔE_r = (E_g − E_t)/E_t,

``+inf`` when ``E_t = 0`` (min-norm interpolation, ``λ = 0`` and ``P < M``) or when the ratio
overflows; it can be slightly negative at large ``P`` because ``E_t`` includes weight decay.

Transition point ``P*`` (the one rule of the library, used by the theory, the exact dataset
averages, the simulations and the figures): the **last downward crossing** of ``ΔEr = level``
(default 5, the seed's rough boundary) on a grid of ``P``, so that ``ΔEr < level`` at every
larger ``P`` of the grid; located by linear interpolation of ``ΔEr`` in ``log P`` (or at the
grid point after the crossing when the value before it is infinite). Near ``P = M`` at small
``λ`` the gap can have a double-descent bump; the rule picks the transition after it.
``None`` when there is no such crossing in the range (``ΔEr`` stays on one side of the level,
or rises above it again at the end).
"""
from __future__ import annotations

import math

import numpy as np

from . import _check as check
from ._arguments import array, positive, public


@public(train=array(), test=array())
def relative_gap(train, test):
    """``ΔEr = (E_g − E_t)/E_t`` elementwise (module docstring); ``+inf`` where ``E_t = 0`` or where the ratio
    exceeds the float64 range (``E_t`` below ~1e-308 ``E_g``: the gradient flow at ``λ = 0``, long times).

    Parameters
    ----------
    train, test : float or array_like
        ``E_t >= 0`` (weight decay included) and ``E_g >= 0`` (a mean squared error).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        Naming ``train`` or ``test``: non-finite, negative, or shapes that do not broadcast.
    """
    return _relative_gap(train, test)


def _relative_gap(tr, te):
    """:func:`relative_gap` of finite float64 arrays or scalars (the library's own calls; the signs and shapes are
    checked here)."""
    if isinstance(tr, float) and isinstance(te, float) and tr >= 0 and te >= 0:   # two numbers: no array round trip
        tr, te = float(tr), float(te)
        return (te - tr) / tr if tr > 0 else math.inf          # Python floats: an overflow is +inf, as below
    try:
        if tr.shape != te.shape:
            np.broadcast_shapes(tr.shape, te.shape)
    except ValueError:
        check.fail("test", f"<array with shape {te.shape}>", f"an array of the shape of train, {tr.shape}")
    if (tr < 0).any():
        raise ValueError(f"train must be >= 0 (an energy with non-negative terms); got minimum {tr.min()!r}")
    if (te < 0).any():
        check.fail("test", f"<values down to {float(te.min())!r}>", "errors E_g >= 0 (a mean squared error)")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        gap = np.where(tr > 0, (te - tr) / np.where(tr > 0, tr, 1.0), np.inf)
    # E_t > 0 and E_g >= 0: the ratio is >= −1, so it can only overflow upwards, to a gap beyond 1.8e308 — +inf, as
    # for E_t = 0 (a gradient flow at λ = 0 drives E_t below 1e-300 while E_g stays O(1)).
    return float(gap) if gap.ndim == 0 else gap


@public(P=array(ndim=1), level=positive())
def transition_point(P, gap, level=5.0):
    """``P*``: the last downward crossing of ``ΔEr = level`` on a ``P`` grid (module docstring).

    Parameters
    ----------
    P : array_like
        Increasing positive grid.
    gap : array_like
        ``ΔEr`` at the grid points (``+inf`` allowed, NaN not).
    level : float
        Boundary level (``> 0``; the seed uses 5).

    Returns
    -------
    float or None
    """
    g = check.real_array("gap", gap, allow_inf=True)      # strings, complex or ragged input: named, not numpy's words
    if g.shape != P.shape:
        check.fail("gap", f"<array with shape {g.shape}>",
                   f"an array of shape {P.shape} of real numbers or +inf (no NaN)")
    if np.any(P <= 0) or np.any(np.diff(P) <= 0):
        check.fail("P", f"<array from {P.min()!r} to {P.max()!r}>", "an increasing grid of positive numbers")
    down = np.flatnonzero((g[:-1] >= level) & (g[1:] < level))
    if down.size == 0 or np.any(g[down[-1] + 1:] >= level):
        return None
    k = down[-1]
    if not np.isfinite(g[k]):
        return float(P[k + 1])
    x0, x1 = np.log(P[k]), np.log(P[k + 1])
    return float(np.exp(x0 + (level - g[k]) * (x1 - x0) / (g[k + 1] - g[k])))
