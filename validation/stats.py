r"""Statistics of Markov-chain samples: autocorrelation, integrated autocorrelation time,
standard error of a mean.

For a stationary sequence with normalised autocorrelation ``ρ(t)``, the variance of the mean
of ``n`` samples is ``σ² τ / n`` with the integrated autocorrelation time
``τ = 1 + 2 Σ_{t≥1} ρ(t)``. ``ρ`` is estimated by FFT and averaged over independent chains;
the sum is truncated at the first window ``W >= c τ(W)`` (Sokal's automatic windowing,
``c = 5``), as in Goodman & Weare-style ensemble samplers (Foreman-Mackey et al., emcee).

References: A. Sokal, "Monte Carlo methods in statistical mechanics" (1996).
"""
from __future__ import annotations

import numpy as np


def autocorrelation(x) -> np.ndarray:
    """Normalised autocorrelation of each chain (rows of ``x``), averaged over chains."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    n = x.shape[1]
    y = x - x.mean(axis=1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(y, n=size, axis=1)
    acf = np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n]
    acf = acf.mean(axis=0)
    if acf[0] <= 0:
        return np.concatenate([[1.0], np.zeros(n - 1)])
    return acf / acf[0]


def integrated_time(x, c: float = 5.0) -> float:
    """Integrated autocorrelation time of the samples ``x`` (shape (n_chains, n) or (n,)).

    Returns a value ``>= 1/(2·n)``-bounded below by construction of the window; for nearly
    independent samples it is close to 1.
    """
    rho = autocorrelation(x)
    taus = 2.0 * np.cumsum(rho) - 1.0
    window = np.arange(len(taus))
    ok = window >= c * taus
    k = int(np.argmax(ok)) if np.any(ok) else len(taus) - 1
    return float(max(taus[k], 1.0 / len(taus)))


def mean_and_se(x):
    """Mean of all samples and its standard error ``sd·√(τ/N)`` (``τ`` from :func:`integrated_time`)."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    tau = integrated_time(x)
    return float(x.mean()), float(x.std(ddof=1) * np.sqrt(tau / x.size)), tau
