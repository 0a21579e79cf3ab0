r"""Marchenko–Pastur law in closed form (ratio ``q = 1/α``, unit population variance).

Edges ``x_± = (1 ± √q)²``, density ``√((x₊ − x)(x − x₋)) / (2π q x)`` on ``[x₋, x₊]``, atom
``max(0, 1 − 1/q)`` at zero, Stieltjes transform
``m(z) = [1 − q − z + √((z − x₋)(z − x₊))] / (2 q z)`` (branch with ``m ~ −1/z`` at infinity).
These closed forms are the reference against which the general fixed-point solver
(``spectra/_resolvent.py``, which reproduces MP for ``ξ ≡ 1``) is tested.

References: V. A. Marchenko and L. A. Pastur, Math. USSR-Sbornik 1, 457 (1967).
"""
from __future__ import annotations

import numpy as np

from linattn import _check as check
from linattn._arguments import array, positive, public

__all__ = ["edges", "atom", "density", "stieltjes", "cdf"]


@public(ratio=positive())
def edges(ratio):
    """Support edges ``((1 − √q)², (1 + √q)²)``.

    Parameters
    ----------
    ratio : float
        Ratio ``M/P > 0``.

    Returns
    -------
    (float, float)
    """
    return _edges(ratio)


def _edges(ratio):
    """:func:`edges` of a checked ``ratio``."""
    return (1 - np.sqrt(ratio)) ** 2, (1 + np.sqrt(ratio)) ** 2


@public(ratio=positive())
def atom(ratio):
    """Mass at zero ``max(0, 1 − 1/q)``.

    Parameters
    ----------
    ratio : float
        Ratio ``M/P > 0``.

    Returns
    -------
    float
    """
    return _atom(ratio)


def _atom(ratio):
    """:func:`atom` of a checked ``ratio``."""
    return max(0.0, 1.0 - 1.0 / ratio)


@public(x=array(), ratio=positive())
def density(x, ratio):
    """Continuous part of the density (normalised by all eigenvalues).

    Parameters
    ----------
    x : array_like
    ratio : float
        Ratio ``M/P > 0``.

    Returns
    -------
    ndarray (shape of ``x``)
    """
    lo, hi = _edges(ratio)
    out = np.zeros_like(x)
    inside = (x > lo) & (x < hi) & (x > 0)
    out[inside] = np.sqrt((hi - x[inside]) * (x[inside] - lo)) / (2 * np.pi * ratio * x[inside])
    return out


@public(z=array(allow_complex=True), ratio=positive())
def stieltjes(z, ratio):
    """``m(z) = ∫ ρ(x) dx / (x − z)`` including the atom, for ``Im z > 0`` or real ``z`` off the support.

    The two roots ``(s ± √·)/(2qz)``, ``s = 1 − q − z``, have the product ``1/(qz)``: each is taken from the form
    without cancellation (``(s + √·)/(2qz)`` or ``2/(s − √·)``), so that ``m`` keeps full precision at small ``|z|``
    (where ``s + √· → 0`` for ``q < 1``) and ``m(0) = 1/(1 − q)`` for ``q < 1``.

    Parameters
    ----------
    z : complex or array_like
        ``z = 0`` is refused for ``ratio >= 1``: the pole of the atom at zero (``ratio > 1``) or the divergence
        of the density at the edge ``x₋ = 0`` (``ratio = 1``).
    ratio : float
        Ratio ``M/P > 0``.

    Returns
    -------
    ndarray (shape of ``z``), complex
    """
    if ratio >= 1.0 and np.any(z == 0):
        check.fail("z", z if z.ndim == 0 else "<array containing 0>",
                   f"complex numbers other than 0 for ratio = {ratio!r} >= 1 (z = 0 is the pole of the atom at zero, "
                   "or the edge x₋ = 0 where m diverges)")
    return _stieltjes(z, ratio)


def _stieltjes(z, ratio):
    """:func:`stieltjes` of checked arguments (``z`` a complex array, nonzero for ``ratio >= 1``)."""
    if np.any(z.imag < 0):  # conjugate symmetry m(z̄) = conj m(z)
        lower = z.imag < 0
        out = _stieltjes(np.where(lower, np.conj(z), z), ratio)
        return np.where(lower, np.conj(out), out)
    lo, hi = _edges(ratio)
    sq = np.sqrt(z - lo) * np.sqrt(z - hi)  # product of principal roots: branch cut on [lo, hi]
    s = 1 - ratio - z
    plus, minus = s + sq, s - sq
    with np.errstate(divide="ignore", invalid="ignore"):   # z = 0 (ratio < 1 only): the forms 2/(s ∓ √·) are used
        m = np.where(np.abs(plus) >= np.abs(minus), plus / (2 * ratio * z), 2 / minus)
        alt = np.where(np.abs(minus) > np.abs(plus), minus / (2 * ratio * z), 2 / plus)
        # pick the root with m ~ -1/z at infinity and Im m >= 0 for Im z > 0 (the unused branch at z = 0 is inf,
        # and inf·0 a NaN that compares False: older numpy warned about it)
        use_alt = ((np.imag(m) < 0)
                   | ((np.imag(z) == 0) & (np.abs(m * z + 1) > np.abs(alt * z + 1)) & (np.real(z) > hi)))
    return np.where(use_alt, alt, m)


@public(x=array(), ratio=positive())
def cdf(x, ratio):
    """Cumulative distribution including the atom (closed form).

    Parameters
    ----------
    x : array_like
    ratio : float
        Ratio ``M/P > 0``.

    Returns
    -------
    ndarray (shape of ``x``)
    """
    lo, hi = _edges(ratio)
    a0 = _atom(ratio)
    xc = np.clip(x, lo, hi)
    # ∫ R/x dx = R + m asin((x − m)/h) − √(x₋x₊) asin((m x − x₋x₊)/(h x)),  R = √((x₊ − x)(x − x₋))
    r = np.sqrt(np.maximum((hi - xc) * (xc - lo), 0.0))
    m = 0.5 * (lo + hi)
    h = 0.5 * (hi - lo)
    ab = lo * hi
    with np.errstate(divide="ignore", invalid="ignore"):
        t3 = -np.sqrt(ab) * np.arcsin(np.clip((m * xc - ab) / (h * xc), -1, 1)) if lo > 0 else 0.0 * xc
    F = (r + m * np.arcsin(np.clip((xc - m) / h, -1, 1)) + t3) / (2 * np.pi * ratio)
    F0 = (np.sqrt(ab) - m) * 0.5 * np.pi / (2 * np.pi * ratio)
    cont = F - F0
    out = np.where(x < 0, 0.0, a0 + np.where(x <= lo, 0.0, np.where(x >= hi, 1.0 - a0, cont)))
    return out
