r"""The spread of the learning curves over datasets and initialisations: the band of :func:`dynamics.averaged_curves`.

The curves of one dataset vary with the dataset (and, from ``θ_0 ~ N(0, σ_0² I)``, with the initialisation). Their
spread is estimated from ``n`` sampled datasets (``rng = (seed, P, i)``), each solved exactly: the closed-form
gradient flow (:func:`dynamics.gradient_flow`) gives the mean ``m_i(t)`` and the variance ``v_i(t)`` over
initialisations of dataset ``i`` without sampling. By the law of total variance the variance of the curve of a random
dataset and a random initialisation is

.. math:: V(t) = \operatorname{Var}_i m_i(t) + E_i v_i(t),

estimated without bias by ``V̂ = s²(m) + mean(v)`` (``s²`` with ``n − 1``); the band is ``sd = √V̂``. With
``u_i = n/(n − 1) (m_i − m̄)² + v_i``, ``V̂ = mean(u)``, and its standard error is ``s(u)/√n`` (the delta method: the
spread's own fourth moment is in it, so heavy-tailed curves get the wider error they need; for Gaussian ``m_i`` and
``v = 0`` it is ``≈ V √(2/n)``). The standard error of ``sd`` is ``se(V̂)/(2 sd)`` (``0`` where ``sd = 0``, e.g. the
test error at ``t = 0`` from ``θ_0 = 0``, the same for every dataset). The part from the initialisations alone is
``sd_init = √mean(v)``.

Threads: one decision for the whole loop (:func:`linattn.threads.blas_threads`), by its largest BLAS call, the
eigendecomposition of a dataset (``min(P, M)³`` flops): one thread at the sizes of the seed figures, the free cores
for large ``M``.
"""
from __future__ import annotations

import numpy as np

from linattn import _check as check
from linattn._threads import blas_threads
from spectra._eigensystem import _eigensystem

from ._flow import _gradient_flow


def dataset_band(pb, P, lam, times, gamma, sigma0, model, N_test, n, seed, bar):
    """The band of the curves at ``times`` from ``n`` sampled datasets (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
    P : int
    lam : float
    times : ndarray (n_t,)
        Checked times ``t >= 0``.
    gamma, sigma0 : float
        Learning rate and the s.d. of the initialisation (0: ``θ_0 = 0``).
    model : {"reduced", "full"}
    N_test : int or None
    n : int
        Datasets, ``>= 2``.
    seed : int
        Dataset ``i`` is ``pb.sample(P, rng=(seed, P, i))``.
    bar : tqdm
        Advanced by one per dataset.

    Returns
    -------
    dict of str to ndarray (n_t,)
        ``{train,test}_sd``, ``{train,test}_sd_se``, ``{train,test}_sd_init``.
    """
    nt = times.size
    means = {k: np.empty((n, nt)) for k in ("train", "test")}
    sds = {k: np.empty((n, nt)) for k in ("train", "test")}
    with blas_threads(float(min(P, pb.n_params(model))) ** 3):
        for i in range(n):
            es = _eigensystem(pb.sample(P, rng=(seed, P, i)), pb, model)
            cv = _gradient_flow(es, lam, lam, times, gamma, None, sigma0, False, N_test, lam)
            for k in means:
                means[k][i], sds[k][i] = getattr(cv, k), getattr(cv, f"{k}_sd")
            bar.update()
    out = {}
    for k in means:
        out[f"{k}_sd"], out[f"{k}_sd_se"], out[f"{k}_sd_init"] = total_spread(means[k], sds[k])
    check.finite_result(list(out.values()), {"init": sigma0, "lam": lam, "times": times}, "the band of the curves")
    return out


def total_spread(means, sds):
    """The s.d. over datasets and initialisations, its standard error and the part from the initialisations
    (module docstring).

    Parameters
    ----------
    means, sds : ndarray (n, ...)
        Per dataset (axis 0, ``n >= 2``): the mean and the s.d. over initialisations.

    Returns
    -------
    sd, se, sd_init : ndarray (...)
    """
    n = means.shape[0]
    dev = means - means.mean(0)
    # scaled by the largest deviation or spread, so that no square overflows unless the result does
    scale = np.maximum(np.max(np.abs(dev), axis=0), np.max(sds, axis=0))
    scale = np.where(scale > 0, scale, 1.0)
    u = n / (n - 1) * (dev / scale) ** 2 + (sds / scale) ** 2
    var = u.mean(0)
    se_var = u.std(0, ddof=1) / np.sqrt(n)
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(sd > 0, se_var / (2.0 * sd), 0.0)
    sd_init = np.sqrt(((sds / scale) ** 2).mean(0))
    return sd * scale, se * scale, sd_init * scale
