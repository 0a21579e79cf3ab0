r"""The theory of the representational bottleneck of the Markov-chain task (Gibson, Cui & Reddy,
arXiv:2604.12151): the information ``I(k; m)`` a pooled bigram embedding carries about the chain of a pool of ``K``
and the pool size ``K₂*`` it predicts, from the Gaussian channel of the embedding. The model — embeddings, bigram
laws, the Monte-Carlo information and the measured ``K₂*``, the prior's moments — is
:mod:`linattn.markov.bottleneck`; the measured accuracy of this theory: docs/markov_bottleneck.md.

Deterministic approximation (:func:`channel`, :func:`information_theory`, :func:`k2_theory`). For a pool of
``K`` chains drawn i.i.d. from the prior, ``I = log K − E log(1 + Σ_{j≠k} g_j)`` with
``g_j = p(m | j)/p(m | k)``. Averaging over the other chains inside the logarithm (Jensen: a lower bound on the
pool-averaged information) uses ``E_j g_j = p_∞(m)/p(m | k)``, ``p_∞`` the density of ``m`` for a chain drawn
from the prior, and ``E[log p(m | k) − log p_∞(m)] = I_∞``, the information at ``K = ∞``; hence

.. math::
   I_K ≈ \log K − E_ξ \log\big(1 + (K − 1)\, e^{−I_∞ + ξ}\big),\qquad E ξ = 0 .

Two Gaussian closures make it explicit. (i) ``p_∞`` is replaced by the Gaussian with its two moments,
``Σ_tot = Σ_b + Σ_w``, ``Σ_b = Eᵀ Cov(p) E``, ``Σ_w = Eᵀ E[diag p − p pᵀ] E / n`` (``p`` the stationary bigram law
of a ``Dirichlet(α)`` chain, :func:`prior_moments`), giving ``I_∞ = ½[log det Σ_tot − E_p log det Σ(p)]``.
(ii) ``ξ`` is Gaussian with the variance it has for a Gaussian codebook with common noise,
``V = Σ_i λ_i/(1 + λ_i)``, ``λ_i`` the eigenvalues of ``Σ_w^{-1} Σ_b`` (per-direction signal-to-noise ratios;
for that codebook ``ξ`` is a sum of independent quadratic forms and ``I_∞ = ½ Σ_i log(1 + λ_i)``). The
``ξ``-average is done by Gauss–Hermite quadrature. Without the spread ``V``, ``K₂* = 1 + e^{I_∞}``: the number of
chains the embedding can tell apart is the exponential of its channel capacity. For a random projection
``E = R``, ``R_{ij} ∼ N(0, 1/d)``, and ``π ≈ 1/C`` (:func:`projection_channel`, :func:`prior_moments` with
``n_chains=0``) the moments are explicit and every ``λ_i`` equals

.. math::
   λ_0 = \frac{n}{C(Cα + 1) − 1}\quad\text{on } r = \min(d, C(C − 1)) \text{ directions},\qquad
   I_∞ = \frac r2 \log(1 + λ_0),\quad V = \frac{r λ_0}{1 + λ_0}.
The ``ξ``-average uses the 60-node Gauss–Hermite rule :func:`linattn._numerics.quadrature.gauss_hermite`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._arguments import instance, integer, positive, public, real_array
from linattn._errors import ConvergenceError
from linattn._numerics import quadrature
from linattn._numerics.stats import mean_se
from linattn._results import python_scalars, short_repr
from linattn.markov._bottleneck import PriorMoments, reduced_embedding
from linattn.markov._chains import guard_memory

_LN2 = math.log(2.0)
#: the Gauss–Hermite rule of the ξ-average (nodes, weights summing to 1)
_GH_X, _GH_W = quadrature.gauss_hermite(60)
_GH_W = np.exp(_GH_W)
_LOG_MAX = math.log(np.finfo(float).max)   # 709.78: the largest log K of a K finite in float64


@dataclass(frozen=True)
class Channel:
    """The Gaussian-channel summary of an embedding (:func:`channel`, :func:`projection_channel`).

    Attributes
    ----------
    snr : ndarray (r,)
        ``λ_i``, eigenvalues of ``Σ_w^{-1} Σ_b`` (descending), ``Σ_w`` the prior-mean class covariance.
    capacity_bits : float
        ``I_∞`` (bits), the ``K → ∞`` scale of the information: ``½ [log det Σ_tot − E log det Σ_k]``
        (heteroscedastic, when the prior is sampled) or ``½ Σ log₂(1 + λ_i)`` (closed form).
    capacity_se_bits : float
        Monte Carlo standard error of ``E log det Σ_k`` in bits (0 for the closed form, which samples nothing;
        ``nan`` for prior moments of one sampled chain: no spread to estimate it from).
    spread : float
        ``V = Σ λ_i/(1 + λ_i)`` (nats²): the variance of ``ξ`` (module docstring).
    n_bigrams : int
    """

    __repr__ = short_repr

    snr: np.ndarray
    capacity_bits: float
    capacity_se_bits: float
    spread: float
    n_bigrams: int

    def __post_init__(self):
        python_scalars(self)


def _channel_from_snr(lam, n, capacity_bits=None, capacity_se_bits=0.0):
    lam = np.sort(np.clip(lam, 0.0, None))[::-1]   # generalized eigenvalues of PSD/PD pencils: >= 0 up to roundoff
    cap = float(0.5 * np.sum(np.log2(1.0 + lam))) if capacity_bits is None else capacity_bits
    return Channel(snr=lam, capacity_bits=cap, capacity_se_bits=capacity_se_bits,
                   spread=float(np.sum(lam / (1.0 + lam))), n_bigrams=n)


@public(moments=instance(PriorMoments, "a linattn.markov.bottleneck.PriorMoments"), n_logdet=integer(minimum=2))
def channel(E, length, moments, n_logdet=2000):
    r"""The Gaussian channel of an embedding ``E`` for sequences of ``length`` states and chains with the prior
    ``moments`` (module docstring).

    ``λ_i`` are the eigenvalues of ``Σ_w^{-1} Σ_b``, ``Σ_b = Eᵀ Cov(p) E``, ``Σ_w = Eᵀ E[diag p − p pᵀ] E / n``
    (on the informative subspace of ``E``). With a sampled prior the capacity is the heteroscedastic

    .. math::
       I_∞ = ½\big[\log\det(Σ_b + Σ_w) − E_p \log\det Σ(p)\big],\qquad
       Σ(p) = Eᵀ(\mathrm{diag}\,p − p p^\top)E / n,

    the exact mean of ``−log g`` when the mixture density is replaced by the Gaussian of its first two moments
    (module docstring), ``E_p`` over the first ``n_logdet`` sampled chains; with the closed-form moments it is
    ``½ Σ log(1 + λ_i)`` (the two agree when ``Σ(p)`` does not vary with the chain). Nothing depends on the scale
    of ``E`` (an ``E`` whose largest entry is outside ``[1e-100, 1e100]`` is first rescaled by a power of 2).

    Parameters
    ----------
    E : array_like, shape (C², d)
    length : int
        ``L >= 2`` (``n = L − 1``).
    moments : PriorMoments
        From :func:`prior_moments` with the same ``C``.
    n_logdet : int
        Chains used for ``E log det Σ(p)``, ``>= 2``.

    Returns
    -------
    Channel
    """
    Er = reduced_embedding(E, moments.C)
    n = length - 1
    Sb = Er.T @ moments.between @ Er
    Sw = Er.T @ moments.within @ Er / n
    Sw = 0.5 * (Sw + Sw.T)
    Lw = np.linalg.cholesky(Sw)
    X = np.linalg.solve(Lw, np.linalg.solve(Lw, Sb).T)
    lam = np.linalg.eigvalsh(0.5 * (X + X.T))
    if moments.samples is None:
        return _channel_from_snr(lam, n)
    p = moments.samples[:n_logdet]
    c = p @ Er
    S = (np.einsum("ia,ki,ib->kab", Er, p, Er) - np.einsum("ka,kb->kab", c, c)) / n
    sign, logdet = np.linalg.slogdet(S)
    if np.any(sign <= 0):
        raise ValueError("moments.samples contain chains with a singular class covariance (a bigram of probability "
                         "~0); draw the prior moments with a larger concentration")
    total = np.linalg.slogdet(Sb + Sw)[1]
    logdet_mean, logdet_se = mean_se(logdet)
    cap = 0.5 * (total - logdet_mean) / _LN2
    se = 0.5 * logdet_se / _LN2
    return _channel_from_snr(lam, n, float(cap), float(se))


@public(d=integer())
def projection_channel(C, concentration, d, length):
    r"""Closed-form channel of a random projection ``E = R`` (``π ≈ 1/C``, module docstring):
    ``λ_0 = n/(C(Cα + 1) − 1)`` on ``r = min(d, C(C − 1))`` directions.

    Parameters
    ----------
    C : int
        ``>= 2``.
    concentration : float
        ``> 0``.
    d : int
        Embedding dimension, ``>= 1``.
    length : int
        ``L >= 2`` (``n = L − 1``).

    Returns
    -------
    Channel

    Examples
    --------
    >>> from replica import bottleneck_theory
    >>> ch = bottleneck_theory.projection_channel(C=10, concentration=1.0, d=8, length=110)   # λ0 = 109/109 = 1
    >>> ch.capacity_bits                                                        # (8/2) log2(2)
    4.0
    """
    n = length - 1
    r = min(d, C * (C - 1))
    guard_memory([(40.0, [("d" if d <= C * (C - 1) else "C", r)])], f"{r} signal-to-noise ratios (one per direction)")
    lam0 = n / (C * (C * concentration + 1.0) - 1.0)
    return _channel_from_snr(np.full(r, lam0), n)


#: the rule of a ``ch`` argument
CHANNEL = instance(Channel, "a replica.Channel")


@public(K=real_array(low=1.0), ch=CHANNEL)
def information_theory(K, ch):
    r"""The deterministic approximation of ``I(k; m)`` (bits) for a pool of ``K`` chains:
    ``log K − E_ξ log(1 + (K − 1) e^{−I_∞ + ξ})``, ``ξ ~ N(0, V)`` (module docstring), by 60-point
    Gauss–Hermite quadrature.

    Parameters
    ----------
    K : int or array_like of int
        Pool size(s), ``>= 1``.
    ch : Channel

    Returns
    -------
    float or ndarray
    """
    K_arr = K
    if np.any(K_arr != np.round(K_arr)):
        check.fail("K", K.tolist(), "an integer >= 1 or an array of them")
    I_inf = ch.capacity_bits * _LN2
    x = np.log(np.maximum(K_arr - 1.0, 1e-300))[..., None] - I_inf + math.sqrt(ch.spread) * _GH_X
    deficit = np.where(K_arr > 1, np.sum(_GH_W * np.logaddexp(0.0, x), axis=-1), 0.0)
    out = (np.log(K_arr) - deficit) / _LN2
    return float(out) if np.ndim(K) == 0 else out


@public(ch=CHANNEL, gap=positive())
def k2_theory(ch, gap=1.0):
    """``K₂*`` of the deterministic approximation: the real ``K`` with ``log₂ K − I_K = gap`` (bisection in
    ``log K``; the deficit increases with ``K``).

    Parameters
    ----------
    ch : Channel
    gap : float
        Bits, ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``K₂*`` exceeds float64 (``log₂ K₂* > 1024``: ``gap`` or ``ch.capacity_bits`` of about a thousand bits
        or more), naming the larger of the two.
    """
    I_inf, V = ch.capacity_bits * _LN2, ch.spread

    def log_k_minus_1(logk):   # log(e^logk − 1), also where e^logk overflows
        return math.log(math.expm1(logk)) if logk < 700.0 else logk + math.log(-math.expm1(-logk))

    def deficit(logk):   # bits, K = e^logk treated as real
        x = log_k_minus_1(logk) - I_inf + math.sqrt(V) * _GH_X if logk > 0 else None
        return 0.0 if x is None else float(np.sum(_GH_W * np.logaddexp(0.0, x))) / _LN2

    lo, hi = 0.0, max(1.0, I_inf + 8.0 * math.sqrt(V) + 2.0 * gap * _LN2 + 2.0)
    while deficit(hi) <= gap:
        hi *= 2.0
        if hi > 1e6:
            raise ConvergenceError(f"k2_theory: no K with deficit > gap = {gap} bits below K = e^1e6")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if deficit(mid) <= gap else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    logk = 0.5 * (lo + hi)
    if logk > _LOG_MAX:
        accepted = f"small enough that K2* is finite in float64 (log2 K2* <= 1024; got log2 K2* = {logk / _LN2:.4g})"
        if gap * _LN2 >= I_inf:
            check.fail("gap", gap, accepted)
        check.fail("ch", f"<Channel with capacity_bits={ch.capacity_bits:.4g}>", "a channel " + accepted)
    return math.exp(logk)
