r"""Exact data-dependent free energy and Gibbs averages (conventions §2).

The Gibbs measure ``p(θ) ∝ exp(−β E_t(θ))`` of the quadratic training energy is Gaussian with
mean ``θ*`` (the ridge solution) and covariance ``A⁻¹/β``, ``A = H + λI``. Hence, exactly,

.. math::
   F(β, λ) = E_t(θ^*) − \frac{M}{2β}\log\frac{2π}{β} + \frac{1}{2β}\log\det A,\qquad
   ⟨E_t⟩ = ∂_β(βF) = E_t(θ^*) + \frac{M}{2β},

   ⟨E_g⟩ = E_g(θ^*) + \frac{1}{2β}\operatorname{tr}(C A^{-1}),\qquad
   ∂_λ F = ½⟨|θ|²⟩ = ½|θ^*|² + \frac{1}{2β}\operatorname{tr} A^{-1},

with ``C = diag(c, c_v)`` the test-error metric. Everything is evaluated from one
eigendecomposition per dataset (:class:`spectra.Eigensystem`), for any number of ``(β, λ)``.

Limits: ``β = ∞`` (zero temperature) gives the ridge (``λ > 0``) or min-norm (``λ = 0``)
solution with no thermal terms; ``λ = 0`` at finite ``β`` requires ``P >= M`` (otherwise
``H`` has a null space and the Gibbs measure is not normalisable).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import check
from linattn.results import python_scalars, short_repr
from spectra import as_eigensystem


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
    test_idg, test_idg_ridge : ndarray or None
        With a task pool (``data.pool``): the in-distribution error ``⟨E_IDG⟩ = E_IDG(θ*) +
        tr(C_W A⁻¹)/(2β)`` (:mod:`linattn.pools`) and its zero-temperature part; ``None`` otherwise.
    """

    __repr__ = short_repr

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
    test_idg: np.ndarray | None = None
    test_idg_ridge: np.ndarray | None = None

    def __post_init__(self):
        python_scalars(self)      # scalar β and λ give floats, not 0-d arrays


def gibbs(data, pb, beta, lam, model="reduced") -> GibbsAverages:
    """Exact free energy and Gibbs averages of one dataset (module docstring).

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
        An eigensystem is reused as is (one decomposition for every ``β``, ``λ``).
    pb : linattn.Problem
    beta : float or array_like
        Inverse temperature ``β > 0`` (``inf`` allowed: zero temperature).
    lam : float or array_like
        Weight decay ``λ >= 0``.
    model : {"reduced", "full"}

    Returns
    -------
    GibbsAverages
        Arrays of the broadcast shape of ``beta`` and ``lam``.
    """
    es = as_eigensystem(data, pb, model)
    b_arr = check.real_array("beta", beta, low=0.0, low_open=True, allow_inf=True)
    l_arr = check.real_array("lam", lam, low=0.0)
    B, L = np.broadcast_arrays(b_arr, l_arr)
    null = es.null_dim
    if null and np.any((L == 0) & np.isfinite(B)):
        raise ValueError(f"lam must be > 0 at finite beta when P < M (P={es.P}, M={es.M}): H has a "
                         f"{null}-dimensional null space and the Gibbs measure is not normalisable; got lam = 0")
    out = {k: np.empty(B.shape) for k in ("train", "test", "F", "tr_r", "te_r", "dFb", "dFl", "n2", "idg", "idg_r")}
    idg = es.idg
    Wd = np.diag(es.W)
    trW = Wd.sum()
    for idx in np.ndindex(B.shape):
        beta_i, lam_i = float(B[idx]), float(L[idx])
        gl = es.g + lam_i
        a = es.ridge_coefficients(lam_i)
        et = es.train_at_ridge(lam_i)
        eg = float(es.test_error(a))
        norm2 = float(a @ a)
        idg_r = float(idg.error(a)) if idg is not None else np.nan
        idg_i = idg_r
        if np.isinf(beta_i):
            train, test, F, dFb, n2 = et, eg, et, 0.0, norm2
        else:
            with np.errstate(divide="ignore"):
                logdet = float(np.sum(np.log(gl))) + (null * np.log(lam_i) if null else 0.0)
                tr_inv = float(np.sum(1.0 / gl)) + (null / lam_i if null else 0.0)
                tr_Cinv = float(np.sum(Wd / gl)) + ((es.trC - trW) / lam_i if null else 0.0)
            M = es.M
            with np.errstate(over="ignore", invalid="ignore"):
                F = et - M / (2 * beta_i) * np.log(2 * np.pi / beta_i) + logdet / (2 * beta_i)
                train = et + M / (2 * beta_i)
                test = eg + tr_Cinv / (2 * beta_i)
                dFb = (train - F) / beta_i
                n2 = norm2 + tr_inv / beta_i
                if idg is not None:
                    idg_i = (idg_r
                             + float(idg.thermal_trace(1.0 / gl, 1.0 / lam_i if null else 0.0, null)) / (2 * beta_i))
            if not np.all(np.isfinite([F, train, test, dFb, n2])):
                check.fail("beta", beta_i, f"large enough for finite thermal terms M/(2 beta) (M = {M}, lam = {lam_i})")
        for key, val in zip(("train", "test", "F", "tr_r", "te_r", "dFb", "dFl", "n2", "idg", "idg_r"),
                            (train, test, F, et, eg, dFb, 0.5 * n2, n2, idg_i, idg_r)):
            out[key][idx] = val
    return GibbsAverages(beta=B, lam=L, train=out["train"], test=out["test"], free_energy=out["F"],
                         train_ridge=out["tr_r"], test_ridge=out["te_r"], dF_dbeta=out["dFb"],
                         dF_dlam=out["dFl"], mean_norm2=out["n2"],
                         test_idg=out["idg"] if idg is not None else None,
                         test_idg_ridge=out["idg_r"] if idg is not None else None)


def dataset_average(pb, P, beta, lam, n_datasets=100, model="reduced", rng=0) -> "DatasetAverage":
    """``⟨E_t⟩`` and ``⟨E_g⟩`` of ``n_datasets`` independent training sets, with means and s.e.

    Parameters
    ----------
    pb : linattn.Problem
    P : int
        Prompts per dataset.
    beta : float
        ``β > 0`` (``inf``: zero temperature).
    lam : float
        ``λ >= 0``.
    n_datasets : int
        Datasets averaged (``>= 2``); dataset ``i`` is sampled with ``rng=(seed, P, i)``.
    model : {"reduced", "full"}
    rng : int or numpy.random.Generator
        The ``seed`` of the datasets (a Generator gives one draw of it).

    Returns
    -------
    DatasetAverage
        ``train_mean``, ``train_se``, ``test_mean``, ``test_se`` (and ``test_idg_*`` with a task pool), the
        per-dataset values in ``train``, ``test``.

    Examples
    --------
    The exact side of a theory-vs-exact comparison at your own ``(D, N)``:

    >>> import linattn, replica
    >>> pb = linattn.Problem(8, 16, 0.1)
    >>> avg = replica.dataset_average(pb, P=100, beta=1e3, lam=0.01, n_datasets=10, model="full")
    >>> th = replica.stationary(pb, 100, 1e3, 0.01, model="full")
    >>> abs(th.test / avg.test_mean - 1) < 0.05
    True
    """
    check.problem(pb)
    P = check.positive_int("P", P)
    beta = check.positive("beta", beta, allow_inf=True)
    lam = check.nonnegative("lam", lam)
    check.model(model)
    rng = check.seed_int("rng", rng)
    n_datasets = check.positive_int("n_datasets", n_datasets, minimum=2)
    tr, te = np.empty(n_datasets), np.empty(n_datasets)
    idg = np.empty(n_datasets) if pb.tasks is not None else None
    for i in range(n_datasets):
        g = gibbs(pb.sample(P, rng=(rng, P, i)), pb, beta, lam, model)
        tr[i], te[i] = float(g.train), float(g.test)
        if idg is not None:
            idg[i] = float(g.test_idg)
    return DatasetAverage(train=tr, test=te, test_idg=idg)


@dataclass(frozen=True, eq=False)
class DatasetAverage:
    """Exact Gibbs averages of independent datasets (``train``, ``test``: one value per dataset; ``test_idg``
    with a task pool, else ``None``), their means and standard errors."""

    __repr__ = short_repr

    train: np.ndarray
    test: np.ndarray
    test_idg: np.ndarray | None = None

    @property
    def test_idg_mean(self) -> float | None:
        return None if self.test_idg is None else float(self.test_idg.mean())

    @property
    def test_idg_se(self) -> float | None:
        return None if self.test_idg is None else float(self.test_idg.std(ddof=1) / np.sqrt(self.test_idg.size))

    @property
    def train_mean(self) -> float:
        return float(self.train.mean())

    @property
    def test_mean(self) -> float:
        return float(self.test.mean())

    @property
    def train_se(self) -> float:
        return float(self.train.std(ddof=1) / np.sqrt(self.train.size))

    @property
    def test_se(self) -> float:
        return float(self.test.std(ddof=1) / np.sqrt(self.test.size))
