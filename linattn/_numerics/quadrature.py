r"""Quadrature rules of the laws the library averages over, each written once.

* :func:`gauss_panels` — the standard normal law ``z ~ N(0, 1)`` by composite Gauss–Legendre quadrature on unit panels
  of ``[−CUTOFF, CUTOFF]`` with an edge at 0: it converges geometrically for any link that is smooth on each half line
  (the kinks of ``relu`` and ``sign`` sit on a panel edge), where Gauss–Hermite converges only algebraically.
* :func:`gauss_hermite` — the ``n``-node Gauss–Hermite rule of ``N(0, 1)``: exact for polynomials of degree
  ``<= 2n − 1`` (polynomial links, smooth integrands with few nodes).
* :func:`chi_square_rule` — the task norm ``r = ρ² ~ χ²_D/D`` by composite Gauss–Legendre quadrature in ``ρ`` on a
  window around the peak ``ρ = 1``: geometric convergence for the smooth non-polynomial functions of ``r`` the theory
  averages (a Gauss–Laguerre rule in ``r`` converges only algebraically for ``√r`` or ``φ₂(r) → 1 − O(r^{−1/2})``).
* :func:`normalised_hermite` — the orthonormal Hermite polynomials ``h_k = He_k/\sqrt{k!}`` (``E h_j h_k = δ_jk``)
  by their stable three-term recurrence.

The accuracy of each rule on known moments is shown in ``tests/linattn/test_quadrature.py``.

References: G. H. Golub and J. H. Welsch, *Calculation of Gauss quadrature rules*, Math. Comp. 23 (1969) 221;
P. J. Davis and P. Rabinowitz, *Methods of Numerical Integration* (2nd ed., 1984), §2.7 (composite rules);
Abramowitz & Stegun 22.7.14 (the recurrence of ``He_k``).
"""
from __future__ import annotations

import functools

import numpy as np

#: the Gaussian integrals of :func:`gauss_panels` are truncated at ``|z| = CUTOFF`` (the weight there is
#: ``e^{−CUTOFF²/2} ≈ 1e-348``)
CUTOFF = 40
#: panels of :func:`chi_square_rule`
R_PANELS = 48
#: the most nodes per panel of a composite rule: far above any order the library uses
MAX_RULE_NODES = 4096
#: the most nodes of a Gauss–Hermite rule whose weights are normal float64 numbers (the smallest is ~ e^{−2n})
MAX_HERMITE_NODES = 250
#: the highest degree of :func:`normalised_hermite`
MAX_HERMITE_ORDER = 400


def gauss_panels(n):
    r"""Composite Gauss–Legendre rule of ``z ~ N(0, 1)``: ``n`` nodes on each unit panel of ``±[0, CUTOFF]``, the
    standard normal density folded into the weights,

    .. math:: E\,g(z) ≈ Σ_i e^{\log w_i} g(z_i),\qquad
              \log w_i = \log(½ ω_i) − z_i²/2 − ½\log 2π,

    with ``ω_i`` the Gauss–Legendre weights on ``[−1, 1]`` (Davis & Rabinowitz §2.7). The weights are returned as
    logarithms: beyond ``|z| ≈ 38`` they underflow float64.

    Parameters
    ----------
    n : int
        Nodes per panel, ``1 <= n <= MAX_RULE_NODES``.

    Returns
    -------
    z, log_weights : ndarray (2 · CUTOFF · n,)
    """
    return _gauss_panels(n)


@functools.lru_cache(maxsize=None)
def _gauss_panels(n):
    from scipy import special

    x, w = special.roots_legendre(n)
    left = np.arange(CUTOFF, dtype=float)
    z = (left[:, None] + 0.5 * (x + 1.0)[None, :]).ravel()
    logw = np.log(np.tile(0.5 * w, CUTOFF)) - 0.5 * z * z - 0.5 * np.log(2.0 * np.pi)
    return np.concatenate([z, -z]), np.concatenate([logw, logw])


def gauss_hermite(n):
    r"""The ``n``-node Gauss–Hermite rule of ``z ~ N(0, 1)`` (probabilists' nodes, the roots of ``He_n``; weights
    summing to 1, as logarithms), exact for polynomials of degree ``<= 2n − 1`` (Golub & Welsch 1969):

    .. math:: E\,p(z) = Σ_i e^{\log w_i} p(z_i),\qquad \deg p <= 2n − 1.

    Parameters
    ----------
    n : int
        ``1 <= n <= MAX_HERMITE_NODES`` (beyond, the smallest weights underflow float64).

    Returns
    -------
    z, log_weights : ndarray (n,)
    """
    return _gauss_hermite(n)


@functools.lru_cache(maxsize=None)
def _gauss_hermite(n):
    z, w = np.polynomial.hermite_e.hermegauss(n)
    return z, np.log(w) - 0.5 * np.log(2.0 * np.pi)


def chi_square_rule(D, n):
    r"""Nodes ``r = ρ²`` and weights of ``r ~ χ²_D/D``, i.e. of ``ρ = |w|/√D`` with density
    ``∝ ρ^{D−1} e^{−Dρ²/2}``: composite Gauss–Legendre, ``n`` nodes on each of ``R_PANELS`` panels of
    ``[max(0, 1 − 40/√D), 1 + 40/√D]``.

    The density is ``∝ exp(−D δ² + O(D δ³))`` at ``ρ = 1 + δ``: beyond ``|δ| = 40/√D`` it is below ``e^{−1600}`` of its
    peak, so the panels cover only that window (at large ``D`` the peak, of width ``1/√(2D)``, would otherwise fall
    inside one panel of ``[0, 2]``: ``tanh`` at ``D = 10⁷`` was refused as not converged). The exponent is written in
    ``δ``, ``(D − 1) log1p(δ) − D(δ + δ²/2)``, without the cancellation of ``(D − 1) log ρ − Dρ²/2`` at large ``D``.
    The weights are normalised to sum to 1 (constants are exact); ``χ²_D`` itself is ``D r``.

    Parameters
    ----------
    D : int
        Degrees of freedom, ``>= 1``.
    n : int
        Nodes per panel, ``1 <= n <= MAX_RULE_NODES``.

    Returns
    -------
    r, weights : ndarray (R_PANELS · n,)
    """
    return _chi_square_rule(D, n)


@functools.lru_cache(maxsize=None)
def _chi_square_rule(D, n):
    from scipy import special

    x, w = special.roots_legendre(n)
    half = 40.0 / np.sqrt(D)
    bottom, top = max(0.0, 1.0 - half), 1.0 + half
    h = (top - bottom) / R_PANELS
    rho = (bottom + h * np.arange(R_PANELS)[:, None] + 0.5 * h * (x + 1.0)[None, :]).ravel()
    d = rho - 1.0
    expo = (D - 1) * np.log1p(d) - D * (d + 0.5 * d * d)
    wr = np.tile(0.5 * h * w, R_PANELS) * np.exp(expo - expo.max())
    return rho * rho, wr / wr.sum()


def normalised_hermite(z, order):
    r"""The orthonormal (probabilists') Hermite polynomials ``h_k(z) = He_k(z)/\sqrt{k!}``, ``k = 0..order``, by the
    three-term recurrence (Abramowitz & Stegun 22.7.14, divided by ``\sqrt{(k+1)!}``)

    .. math:: h_0 = 1,\quad h_1 = z,\quad h_{k+1} = \frac{z\, h_k − \sqrt{k}\, h_{k−1}}{\sqrt{k + 1}},

    stable where the power-basis or unnormalised series overflow or cancel; ``E h_j(z) h_k(z) = δ_jk`` for
    ``z ~ N(0, 1)``.

    Parameters
    ----------
    z : array_like
        Real points, any shape (a polynomial's value at ``±inf`` or ``nan`` is whatever its arithmetic gives).
    order : int
        Highest degree ``K``, ``0 <= K <= MAX_HERMITE_ORDER``.

    Returns
    -------
    ndarray, shape ``(order + 1,) + z.shape``
    """
    z = np.asarray(z, dtype=float)
    out = np.empty((order + 1,) + z.shape)
    h_prev, h = np.zeros_like(z), np.ones_like(z)
    with np.errstate(all="ignore"):                    # ±inf: inf − inf is nan, as in any polynomial evaluation
        for k in range(order + 1):
            out[k] = h
            h_prev, h = h, (z * h - np.sqrt(k) * h_prev) / np.sqrt(k + 1.0)
    return out
