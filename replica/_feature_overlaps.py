r"""The feature learner's theory, its exact pieces for a given ``Γ``: the normalised Hermite coefficients of the link,
the exact second moments ``E[u t]``, ``E[y t]``, ``E[t²]`` of the attention output ``t = sᵀΓx_q`` (fresh tasks,
isotropic inputs) and the test errors of the best linear and of the optimal readout of ``t`` (the Gaussian formula of
Mehler). Derivation and the theory of the trained learner: :mod:`replica._feature_theory` (Gu, Xu & Zdeborová;
O'Donnell, *Analysis of Boolean Functions*, 2014, ch. 11).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn import _links as links
from linattn import _validate as validate
from linattn._arguments import public
from linattn._errors import ConvergenceError
from linattn._numerics import quadrature
from linattn._results import short_repr
from linattn._validate import PROBLEM

#: the readouts of a given Γ (:func:`readout_error`)
GIVEN_GAMMA_READOUTS = ("optimal", "linear")
#: Hermite orders summed in the Gaussian formula (the remainder is bounded by ``r^{2(K+1)}`` times the tail mass)
HERMITE_ORDER = 200
#: accepted bound on the truncation remainder of the Hermite sum (relative to the label variance)
HERMITE_TOL = 1e-9



# --------------------------------------------------------------------------- Hermite coefficients
@functools.lru_cache(maxsize=64)
def _hermite_table(link, order):
    z, logw = quadrature.gauss_panels(links.ORDERS[-1])
    keep = np.abs(z) < 30.0                # the Gaussian weight beyond is below e^{-450}
    z, w = z[keep], np.exp(logw[keep])
    fz = link(z)
    out = np.array([float(np.sum(w * fz * h)) for h in quadrature.normalised_hermite(z, order)])
    ef2 = float(np.sum(w * fz * fz))
    out.setflags(write=False)
    return out, ef2


def hermite_coefficients(link, order=HERMITE_ORDER):
    r"""Normalised Hermite coefficients ``c_k = E[f(z) He_k(z)]/\sqrt{k!}``, ``k = 0..order``, and ``E f(z)²``.

    ``Σ_k c_k² = E f(z)²`` (Parseval); ``c₀ = μ₀``, ``c₁ = μ₁`` (conventions §6.3). Composite Gauss–Legendre quadrature
    of :mod:`linattn.links` (panel edges at 0: the kinks of ``relu`` and ``sign`` are integrated exactly).

    Parameters
    ----------
    link : str, callable or linattn.links.Link
    order : int
        Highest degree ``K`` (``0 <= K <= 400``).

    Returns
    -------
    coefficients : ndarray (order + 1,)
    second_moment : float
        ``E f(z)²``.
    """
    link = links.as_link(link)
    order = check.nonneg_int("order", order, maximum=400)
    link.hermite                                          # validates the link (finite, square-integrable)
    c, ef2 = _hermite_table(link, order)
    return c.copy(), ef2


def gaussian_readout_power(link, r, order=HERMITE_ORDER):
    r"""``E[E[f(u)|t]²] = Σ_k c_k² r^{2k}`` for ``(u, t)`` jointly Gaussian, ``u ~ N(0, 1)``, correlation ``r``.

    Parameters
    ----------
    link : str, callable or linattn.links.Link
    r : float
        Correlation ``|r| <= 1``.
    order : int
        Terms summed; the remainder ``<= r^{2(K+1)} (E f² − Σ_{k≤K} c_k²)`` is added at half its bound.

    Returns
    -------
    float

    Raises
    ------
    linattn.ConvergenceError
        If the remainder bound exceeds ``HERMITE_TOL`` times ``E f²`` (``|r|`` too close to 1 for ``order``).
    """
    r = check.real("r", r, low=-1.0, high=1.0)
    c, ef2 = hermite_coefficients(link, order)
    k = np.arange(c.size)
    partial = float(np.sum(c * c * r ** (2 * k)))
    tail = max(ef2 - float(np.sum(c * c)), 0.0) * r ** (2 * (c.size))
    if tail > HERMITE_TOL * max(ef2, 1e-300):
        raise ConvergenceError(f"Hermite series of E[E[f(u)|t]^2] at r = {r:.6g}: remainder bound {tail:.3g} > "
                               f"{HERMITE_TOL:g} E f^2 after {c.size} terms (increase order)")
    return partial + 0.5 * tail


# --------------------------------------------------------------------------- exact moments of a given Γ
@functools.lru_cache(maxsize=64)
def _radial(link, D):
    """``(E_r φ₀(r), E_r[√r φ₁(r)])`` over ``r ~ χ²_D/D`` (``E y`` without noise, and ``k_u``)."""
    if link.is_linear:
        return 0.0, float(link.slope)
    r, w = quadrature.chi_square_rule(D, links.R_ORDERS[-1])
    keep = w > 0.0
    r, w = r[keep], w[keep]
    m = links.moment_table(link, np.sqrt(r), links.gauss_orders(link)[-1], ((0, 1), (1, 1)))[0]
    return float(w @ m[:, 0]), float(w @ (np.sqrt(r) * m[:, 1]))


def label_mean(pb) -> float:
    """``E y = E_r E f(√r g)`` (exact at finite ``D``; fresh Gaussian tasks, isotropic inputs).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs (``covariance=None``) and fresh tasks (``tasks=None``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` with anisotropic inputs or a task pool (``r = |w|²/D ~ χ²_D/D`` does not hold).
    """
    require_isotropic(pb, "label_mean")
    return _radial(pb.link, pb.D)[0]


def query_overlap_strength(pb) -> float:
    """``k_u = E_r[√r φ₁(r)]``: ``E[u t] = k_u tr Γ / D`` (:mod:`replica._feature_theory`; ``→ μ₁`` as ``D → ∞``).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs (``covariance=None``) and fresh tasks (``tasks=None``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` with anisotropic inputs or a task pool (the identity ``E[u t] = k_u tr Γ/D`` does not hold).
    """
    require_isotropic(pb, "query_overlap_strength")
    return _radial(pb.link, pb.D)[1]


@dataclass(frozen=True)
class Overlaps:
    """Exact second moments of the attention output ``t = sᵀΓx_q`` (:mod:`replica._feature_theory`).

    Attributes
    ----------
    ut : float
        ``E[u t]``.
    yt : float
        ``E[y t]``.
    tt : float
        ``E[t²]``.
    r : float
        ``corr(u, t) = E[u t]/\\sqrt{E t²}`` (``E u² = 1``).
    """

    __repr__ = short_repr

    ut: float
    yt: float
    tt: float
    r: float

    def __post_init__(self):
        for name in ("ut", "yt"):
            object.__setattr__(self, name, check.real(name, getattr(self, name)))
        object.__setattr__(self, "tt", check.nonnegative("tt", self.tt))
        object.__setattr__(self, "r", check.real("r", self.r, low=-1.0, high=1.0))


def _overlaps(pb, trace_over_D, norm):
    ut = query_overlap_strength(pb) * trace_over_D
    yt = pb.teacher_strength * trace_over_D
    r = 0.0 if norm == 0 else float(np.clip(ut / np.sqrt(norm), -1.0, 1.0))
    return Overlaps(ut=float(ut), yt=float(yt), tt=float(norm), r=r)


def require_isotropic(pb, what):
    """Refuse (naming ``pb``) a problem with anisotropic inputs or a task pool: ``what`` needs ``r = |w|²/D ~ χ²_D/D``
    and isotropic queries."""
    validate.problem(pb)
    if pb.covariance is not None or pb.tasks is not None:
        check.fail("pb", pb, f"a problem with isotropic inputs and fresh tasks for {what}")


@public(pb=PROBLEM)
def gamma_overlaps(pb, Gamma, N_test=None) -> Overlaps:
    """The exact ``E[u t]``, ``E[y t]``, ``E[t²]`` and ``r`` of a given ``Γ`` (fresh tasks, isotropic inputs).

    Parameters
    ----------
    pb : linattn.Problem
    Gamma : array_like (D, D)
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).

    Returns
    -------
    Overlaps
    """
    if pb.covariance is not None or pb.tasks is not None:
        check.fail("pb", pb, "a problem with isotropic inputs and fresh tasks for gamma_overlaps")
    G = check.finite_array("Gamma", Gamma, shape=(pb.D, pb.D))
    pbt = pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)
    with np.errstate(over="ignore"):
        norm = pbt.feature_variance * float(np.sum(G * G))
    check.finite_result(norm, {"Gamma": G}, "E[t²] = c ‖Γ‖²")
    return _overlaps(pbt, float(np.trace(G)) / pb.D, norm)


def at_length(pb, N_test):
    """``pb`` at the context length ``N_test`` (checked; ``None`` or ``pb.N``: ``pb`` itself)."""
    N_test = check.n_test(N_test)
    return pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)


def readout_error(pb, overlaps, readout="optimal") -> float:
    r"""The test error of the readout given the attention's exact second moments (:mod:`replica._feature_theory`).

    ``readout="linear"``: ``½[V − (E y)² − E[yt]²/E[t²]]`` (exact). ``"optimal"``:
    ``½(V − Σ_k c_k² r^{2k})`` (``(u, t)`` jointly Gaussian).

    Parameters
    ----------
    pb : linattn.Problem
        The problem at the evaluation context length: isotropic inputs and fresh tasks.
    overlaps : Overlaps
    readout : {"optimal", "linear"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` with anisotropic inputs or a task pool, or ``overlaps`` not an :class:`Overlaps`.
    """
    require_isotropic(pb, "readout_error")
    check.choice("readout", readout, GIVEN_GAMMA_READOUTS)
    if not isinstance(overlaps, Overlaps):
        check.fail("overlaps", overlaps, "an Overlaps (replica.gamma_overlaps)")
    V = pb.label_variance
    if readout == "linear":
        explained = 0.0 if overlaps.tt == 0 else overlaps.yt**2 / overlaps.tt
        return float(0.5 * (V - label_mean(pb) ** 2 - explained))
    c, _ = hermite_coefficients(pb.link)
    if pb.link.is_linear:                     # Gaussian labels: E[y|t] is linear, the linear formula is exact
        return readout_error(pb, overlaps, "linear")
    del c
    return float(0.5 * (V - gaussian_readout_power(pb.link, overlaps.r)))
