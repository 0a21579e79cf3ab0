r"""Statistics of Markov-chain samples: autocorrelation, integrated autocorrelation time,
standard error of a mean, and whether the chains were long enough to estimate them.

For a stationary sequence with normalised autocorrelation ``ρ(t)``, the variance of the mean
of ``n`` samples is ``σ² τ / n`` with the integrated autocorrelation time
``τ = 1 + 2 Σ_{t≥1} ρ(t)``. ``ρ`` is estimated by FFT and averaged over independent chains;
the sum is truncated at the first window ``W >= c τ(W)`` (Sokal's automatic windowing,
``c = 5``). The estimate is trusted only when each chain is at least ``tol · τ`` samples long
(``tol = 50``, the criterion of emcee's ``get_autocorr_time``); shorter chains are flagged
(``MeanEstimate.reliable = False``), and the library's comparisons then use the exact standard
error of the chain (:meth:`validation.simulators.langevin.Chain.standard_errors`) instead.

References: A. Sokal, "Monte Carlo methods in statistical mechanics" (1996); D. Foreman-Mackey
et al., "emcee: the MCMC hammer", PASP 125, 306 (2013).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._results import short_repr

#: windowing constant of Sokal's rule
WINDOW_C = 5.0
#: chains shorter than TOL · τ samples do not estimate τ reliably (emcee's default)
TOL = 50.0


def _samples(x):
    x = check.finite_array("x", x)
    if x.ndim not in (1, 2) or x.size < 2:
        check.fail("x", f"<array with shape {x.shape}>", "samples of shape (n,) or (n_chains, n) with >= 2 values")
    return np.atleast_2d(x)


def _unit_scale(x):
    """``(x / 2^e, e)`` with the largest ``|x / 2^e|`` in ``[0.5, 1)`` (exact: a power of 2), so that sums of squares
    neither overflow at 1e300 nor underflow at 1e-300; the statistics are then scaled back (or are scale-free)."""
    e = int(np.frexp(np.max(np.abs(x)))[1])
    return np.ldexp(x, -e), e


def autocorrelation(x) -> np.ndarray:
    """Normalised autocorrelation of each chain (rows of ``x``), averaged over chains.

    Parameters
    ----------
    x : array_like (n,) or (n_chains, n)

    Returns
    -------
    ndarray (n,)
    """
    x = _unit_scale(_samples(x))[0]                 # ρ is scale-free
    n = x.shape[1]
    y = x - x.mean(axis=1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(y, n=size, axis=1)
    acf = np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n]
    acf = acf.mean(axis=0)
    if acf[0] <= 0:
        return np.concatenate([[1.0], np.zeros(n - 1)])
    return acf / acf[0]


def integrated_time(x, c: float = WINDOW_C) -> float:
    """Integrated autocorrelation time of the samples ``x`` (Sokal's window ``W >= c τ``).

    Parameters
    ----------
    x : array_like (n,) or (n_chains, n)
    c : float
        Window constant (``> 0``).

    Returns
    -------
    float
        At least ``1/n``; close to 1 for independent samples.
    """
    c = check.positive("c", c)
    rho = autocorrelation(x)
    taus = 2.0 * np.cumsum(rho) - 1.0
    window = np.arange(len(taus))
    ok = window >= c * taus
    k = int(np.argmax(ok)) if np.any(ok) else len(taus) - 1
    return float(max(taus[k], 1.0 / len(taus)))


@dataclass(frozen=True)
class MeanEstimate:
    """Mean of samples, its s.e. ``sd·√(τ/N)``, the integrated time ``τ`` (in samples), and
    ``reliable``: every chain is at least ``TOL · τ`` samples long.

    Attributes
    ----------
    mean : float
    se : float
        ``sd·√(τ/N)``.
    tau : float
        Integrated autocorrelation time (samples).
    reliable : bool
        Every chain is at least ``TOL · τ`` samples long.
    """

    __repr__ = short_repr

    mean: float
    se: float
    tau: float
    reliable: bool


def mean_and_se(x, tol: float = TOL) -> MeanEstimate:
    """Mean of all samples and its standard error from the integrated autocorrelation time.

    Parameters
    ----------
    x : array_like (n,) or (n_chains, n)
        At least two samples in all.
    tol : float
        Reliability criterion: chains of at least ``tol · τ`` samples (``> 0``).

    Returns
    -------
    MeanEstimate
    """
    tol = check.positive("tol", tol)
    x = _samples(x)
    tau = integrated_time(x) if x.shape[1] > 1 else 1.0
    reliable = x.shape[1] > 1 and x.shape[1] >= tol * tau
    u, e = _unit_scale(x)
    with np.errstate(over="ignore"):
        mean, se = np.ldexp(u.mean(), e), np.ldexp(u.std(ddof=1) * np.sqrt(tau / x.size), e)
    check.finite_result([mean, se], {"x": x}, "the mean and its standard error")
    return MeanEstimate(mean=float(mean), se=float(se), tau=float(tau), reliable=bool(reliable))
