r"""Exact data-dependent free energy and Gibbs averages (THEORY §2).

The Gibbs measure ``p(θ) ∝ exp(−β E_t(θ))`` of the quadratic training energy is Gaussian with
mean ``θ*`` (the ridge solution) and covariance ``A⁻¹/β``, ``A = H + λI``. Hence, exactly,

.. math::
   F(β, λ) = E_t(θ^*) − \frac{M}{2β}\log\frac{2π}{β} + \frac{1}{2β}\log\det A,\qquad
   ⟨E_t⟩ = ∂_β(βF) = E_t(θ^*) + \frac{M}{2β},

   ⟨E_g⟩ = E_g(θ^*) + \frac{1}{2β}\operatorname{tr}(C A^{-1}),\qquad
   ∂_λ F = ½⟨|θ|²⟩ = ½|θ^*|² + \frac{1}{2β}\operatorname{tr} A^{-1},

with ``C = diag(c, c_v)`` the test-error metric. Everything is evaluated from one
eigendecomposition per dataset (:class:`dynamics.Eigensystem`), for any number of ``(β, λ)``.

Limits: ``β = ∞`` (zero temperature) gives the ridge (``λ > 0``) or min-norm (``λ = 0``)
solution with no thermal terms; ``λ = 0`` at finite ``β`` requires ``P >= M`` (otherwise
``H`` has a null space and the Gibbs measure is not normalisable).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
from dynamics import Eigensystem, eigensystem
from linattn import _validate as check


@dataclass(frozen=True, eq=False)
class GibbsAverages:
    """Exact Gibbs quantities of one dataset (arrays broadcast over the given ``beta``, ``lam``).

    Attributes
    ----------
    beta, lam : ndarray
    train, test : ndarray
        ``⟨E_t⟩`` and ``⟨E_g⟩``.
    free_energy : ndarray
        ``F(β, λ)`` (``E_t(θ*)`` at ``β = ∞``).
    train_ridge, test_ridge : ndarray
        ``E_t(θ*)`` and ``E_g(θ*)`` (the zero-temperature values).
    dF_dbeta, dF_dlam : ndarray
        ``∂F/∂β = (⟨E_t⟩ − F)/β`` and ``∂F/∂λ = ½⟨|θ|²⟩``.
    mean_norm2 : ndarray
        ``⟨|θ|²⟩``.
    """

    beta: np.ndarray
    lam: np.ndarray
    train: np.ndarray
    test: np.ndarray
    free_energy: np.ndarray
    train_ridge: np.ndarray
    test_ridge: np.ndarray
    dF_dbeta: np.ndarray
    dF_dlam: np.ndarray
    mean_norm2: np.ndarray


def gibbs(data, pb, beta, lam, model="reduced") -> GibbsAverages:
    """Exact free energy and Gibbs averages of one dataset (module docstring).

    Parameters
    ----------
    data : linattn.Prompts or dynamics.Eigensystem
        An eigensystem is reused as is (one decomposition for every ``β``, ``λ``).
    pb : linattn.Problem
    beta : float or array_like
        Inverse temperature ``β > 0`` (``inf`` allowed: zero temperature).
    lam : float or array_like
        Weight decay ``λ >= 0``.
    model : {"reduced", "full"}
    """
    if isinstance(data, Eigensystem):
        check.model(model)
        if data.model != model:
            raise ValueError(f"model must match the eigensystem's model {data.model!r}; got {model!r}")
        es = data
    else:
        es = eigensystem(data, pb, model)
    b_arr = np.asarray(beta, dtype=float)
    l_arr = np.asarray(lam, dtype=float)
    if b_arr.size == 0 or np.any(np.isnan(b_arr)) or np.any(b_arr <= 0):
        raise ValueError(f"beta must be > 0 (inf allowed); got {beta!r}")
    if l_arr.size == 0 or not np.all(np.isfinite(l_arr)) or np.any(l_arr < 0):
        raise ValueError(f"lam must be a finite number >= 0; got {lam!r}")
    B, L = np.broadcast_arrays(b_arr, l_arr)
    null = es.M - es.k
    if null and np.any((L == 0) & np.isfinite(B)):
        raise ValueError(f"lam must be > 0 at finite beta when P < M (P={es.P}, M={es.M}): H has a "
                         f"{null}-dimensional null space and the Gibbs measure is not normalisable; got lam = 0")
    pbm = es.problem
    kappa = 1.0 + pbm.noise**2
    out = {k: np.empty(B.shape) for k in ("train", "test", "F", "tr_r", "te_r", "dFb", "dFl", "n2")}
    Wd = np.diag(es.W)
    trW = Wd.sum()
    for idx in np.ndindex(B.shape):
        beta_i, lam_i = float(B[idx]), float(L[idx])
        gl = es.g + lam_i
        a = es.b / gl
        et = es.train_at_ridge(lam_i)
        eg = 0.5 * (kappa - 2 * a @ es.u + a @ es.W @ a)
        norm2 = float(a @ a)
        if np.isinf(beta_i):
            train, test, F, dFb, n2 = et, eg, et, 0.0, norm2
        else:
            with np.errstate(divide="ignore"):
                logdet = float(np.sum(np.log(gl))) + (null * np.log(lam_i) if null else 0.0)
                tr_inv = float(np.sum(1.0 / gl)) + (null / lam_i if null else 0.0)
                tr_Cinv = float(np.sum(Wd / gl)) + ((es.trC - trW) / lam_i if null else 0.0)
            M = es.M
            F = et - M / (2 * beta_i) * np.log(2 * np.pi / beta_i) + logdet / (2 * beta_i)
            train = et + M / (2 * beta_i)
            test = eg + tr_Cinv / (2 * beta_i)
            dFb = (train - F) / beta_i
            n2 = norm2 + tr_inv / beta_i
        for key, val in zip(("train", "test", "F", "tr_r", "te_r", "dFb", "dFl", "n2"),
                            (train, test, F, et, eg, dFb, 0.5 * n2, n2)):
            out[key][idx] = val
    return GibbsAverages(beta=B, lam=L, train=out["train"], test=out["test"], free_energy=out["F"],
                         train_ridge=out["tr_r"], test_ridge=out["te_r"], dF_dbeta=out["dFb"],
                         dF_dlam=out["dFl"], mean_norm2=out["n2"])


def dataset_average(pb, P, beta, lam, n_datasets=100, model="reduced", seed=0):
    """Mean and standard error over ``n_datasets`` training sets of ``⟨E_t⟩`` and ``⟨E_g⟩``.

    Returns ``(train_mean, train_se, test_mean, test_se)``; dataset ``i`` uses ``rng=(seed, P, i)``.
    """
    if not isinstance(pb, linattn.Problem):
        raise ValueError(f"pb must be a linattn.Problem; got {type(pb).__name__}")
    P = check.positive_int("P", P)
    n_datasets = check.positive_int("n_datasets", n_datasets, minimum=2)
    tr, te = np.empty(n_datasets), np.empty(n_datasets)
    for i in range(n_datasets):
        g = gibbs(pb.sample(P, rng=(seed, P, i)), pb, beta, lam, model)
        tr[i], te[i] = float(g.train), float(g.test)
    n = np.sqrt(n_datasets)
    return tr.mean(), tr.std(ddof=1) / n, te.mean(), te.std(ddof=1) / n
