"""Theory-vs-simulation experiments: stationary errors against task diversity ``P``.

For one problem, :func:`stationary_sweep` computes
* the replica-symmetric theory on a fine grid of ``P`` (:func:`replica.stationary`),
* dataset-averaged exact Gibbs averages (:func:`replica.gibbs`) at a coarser grid,
* Langevin simulations (:func:`validation.langevin`) on a few datasets per ``P`` — the markers of
  the seed's Figs. 2–3 — and
* the memorization → generalization boundary ``P*`` (``ΔEr = 5``) from each of the three.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
import replica
from linattn import check

from .langevin import langevin


@dataclass(frozen=True, eq=False)
class StationarySweep:
    D: int
    N: int
    model: str
    beta: float
    lam: float
    P_theory: np.ndarray
    theory_train: np.ndarray
    theory_test: np.ndarray
    P_exact: np.ndarray
    exact_train: np.ndarray
    exact_train_se: np.ndarray
    exact_test: np.ndarray
    exact_test_se: np.ndarray
    P_sim: np.ndarray
    sim_train: np.ndarray
    sim_train_se: np.ndarray
    sim_test: np.ndarray
    sim_test_se: np.ndarray
    sim_dt: np.ndarray
    P_star_theory: float | None
    P_star_exact: float | None
    P_star_sim: float | None

    def as_dict(self, prefix=""):
        """All fields as a dict (``None`` boundaries stored as NaN, for ``.npz`` files).

        Parameters
        ----------
        prefix : str
            Prepended to every key.

        Returns
        -------
        dict
        """
        out = {}
        for k, v in self.__dict__.items():
            out[prefix + k] = np.nan if v is None else v  # npz storage of "no crossing" (documented)
        return out


def boundary_from_means(P, train_mean, test_mean, level=5.0):
    """``P*`` from dataset-averaged errors on a ``P`` grid: the library's rule
    (:func:`linattn.transition_point`) applied to the ratio of averages
    ``(⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩``.

    Parameters
    ----------
    P : array_like (n,)
        Increasing grid.
    train_mean, test_mean : array_like (n,)
    level : float

    Returns
    -------
    float or None
    """
    train_mean = check.finite_array("train_mean", train_mean, ndim=1)
    test_mean = check.finite_array("test_mean", test_mean, shape=train_mean.shape)
    return linattn.transition_point(P, linattn.relative_gap(train_mean, test_mean), level)


def stationary_sweep(pb, model="full", beta=1e3, lam=0.01, P_theory=None, P_exact=None, n_exact=100,
                     P_sim=None, n_sim=4, langevin_kw=None, seed=0, progress=False) -> StationarySweep:
    """Theory, exact dataset averages and Langevin markers against ``P`` (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
    model : {"reduced", "full"}
    beta, lam : float
        ``β > 0`` (finite: Langevin) and ``λ >= 0``.
    P_theory, P_exact, P_sim : array_like, optional
        Grids of the theory curve, the exact dataset averages and the simulations.
    n_exact, n_sim : int
        Datasets per exact point (``>= 2``) and per simulated point (``>= 2``).
    langevin_kw : dict, optional
        Passed to :func:`validation.langevin` (protocol, chains).
    seed : int
    progress : bool

    Returns
    -------
    StationarySweep
        Each simulated point averages the per-dataset sample means of ``n_sim`` datasets; its error
        bar is the standard error over datasets (which includes the thermal sampling error).
    """
    check.problem(pb)
    check.model(model)
    beta = check.positive("beta", beta)
    lam = check.nonnegative("lam", lam)
    P_theory = np.geomspace(1, 1e4, 100) if P_theory is None else check.finite_array("P_theory", P_theory, ndim=1)
    P_exact = (np.unique(np.round(np.geomspace(1, 1e4, 13)).astype(int)) if P_exact is None
               else check.finite_array("P_exact", P_exact, ndim=1).astype(int))
    P_sim = (np.array([10, 30, 100, 300, 1000, 3000]) if P_sim is None
             else check.finite_array("P_sim", P_sim, ndim=1).astype(int))
    n_exact = check.positive_int("n_exact", n_exact, minimum=2)
    n_sim = check.positive_int("n_sim", n_sim, minimum=2)
    seed = check.seed_int("seed", seed)
    progress = check.boolean("progress", progress)
    lkw = dict(n_chains=1)
    lkw.update(langevin_kw or {})
    M = pb.n_params(model)
    theory_P = np.array([P for P in P_theory if not (lam == 0 and abs(P - M) < 1e-9)])
    cur = replica.stationary_curve(pb, theory_P, beta, lam, model)
    ex = [replica.dataset_average(pb, int(P), beta, lam, n_exact, model, seed=seed) for P in
          tqdm(P_exact, desc=f"exact Gibbs D={pb.D} N={pb.N}", disable=not progress, leave=False)]
    sim = np.empty((len(P_sim), 5))
    for i, P in enumerate(tqdm(P_sim, desc=f"Langevin D={pb.D} N={pb.N}", disable=not progress, leave=False)):
        runs = [langevin(pb.sample(int(P), rng=(seed + 1, int(P), j)), pb, beta, lam, model=model,
                         seed=seed * 7919 + j, **lkw) for j in range(n_sim)]
        tr = np.array([r.train.mean() for r in runs])
        te = np.array([r.test.mean() for r in runs])
        sim[i] = (tr.mean(), tr.std(ddof=1) / np.sqrt(n_sim), te.mean(), te.std(ddof=1) / np.sqrt(n_sim),
                  np.mean([r.dt for r in runs]))
    ex_tr = np.array([e.train_mean for e in ex])
    ex_te = np.array([e.test_mean for e in ex])
    return StationarySweep(
        D=pb.D, N=pb.N, model=model, beta=beta, lam=lam, P_theory=cur.P, theory_train=cur.train,
        theory_test=cur.test, P_exact=P_exact, exact_train=ex_tr, exact_train_se=np.array([e.train_se for e in ex]),
        exact_test=ex_te, exact_test_se=np.array([e.test_se for e in ex]), P_sim=P_sim, sim_train=sim[:, 0],
        sim_train_se=sim[:, 1], sim_test=sim[:, 2], sim_test_se=sim[:, 3], sim_dt=sim[:, 4],
        P_star_theory=replica.phase_boundary(pb, beta, lam, model=model),
        P_star_exact=boundary_from_means(P_exact, ex_tr, ex_te),
        P_star_sim=boundary_from_means(P_sim, sim[:, 0], sim[:, 2]))
