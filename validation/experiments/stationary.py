"""Theory-vs-simulation experiments: stationary errors against task diversity ``P``.

For one problem, :func:`stationary_sweep` computes
* the replica-symmetric theory on a fine grid of ``P`` (:func:`replica.stationary`),
* dataset-averaged exact Gibbs averages (:func:`replica.gibbs`) at a coarser grid,
* Langevin simulations (:func:`validation.simulators.langevin`) on a few datasets per ``P`` — the markers of
  the seed's Figs. 2–3 — and
* the memorization → generalization boundary ``P*`` (``ΔEr = 5``) from each of the three.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
import replica
from linattn import check

from ..simulators.langevin import langevin


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


def _mean_se(x):
    """Mean and standard error over the last axis."""
    x = np.asarray(x, float)
    return x.mean(-1), x.std(-1, ddof=1) / np.sqrt(x.shape[-1])


def _markers(pb, model, beta, lam, P_exact, n_exact, P_sim, n_sim, lkw, seed, progress, store):
    """Exact markers ``(n_P, 4)``: train mean, s.e., test mean, s.e.; Langevin markers ``(n_P, 5)``
    with the mean step ``dt`` last; computed here."""
    ex = []
    for P in tqdm(P_exact, desc=f"exact Gibbs D={pb.D} N={pb.N}", disable=not progress, leave=False):
        avg = replica.dataset_average(pb, int(P), beta, lam, n_exact, model, seed=seed)
        ex.append((*_mean_se(avg.train), *_mean_se(avg.test)))
    sim = []
    for P in tqdm(P_sim, desc=f"Langevin D={pb.D} N={pb.N}", disable=not progress, leave=False):
        runs = [langevin(pb.sample(int(P), rng=(seed + 1, int(P), j)), pb, beta, lam, model=model,
                         seed=seed * 7919 + j, **lkw) for j in range(n_sim)]
        sim.append((*_mean_se([r.mean_train for r in runs]), *_mean_se([r.mean_test for r in runs]),
                    np.mean([r.dt for r in runs])))
    return np.array(ex), np.array(sim)


def _markers_from_store(pb, model, beta, lam, P_exact, n_exact, P_sim, n_sim, lkw, seed, progress, store):
    """As :func:`_markers`, computed by resumable sweeps into Zarr stores under ``store``."""
    from ..sweeps import sweep

    if set(lkw) - {"n_chains"}:
        check.fail("langevin_kw", lkw, "a dict with at most n_chains when the markers come from a store")
    fixed = {"D": [pb.D], "N": [pb.N], "noise": [pb.noise], "beta": [beta], "lam": [lam], "model": [model]}
    tag = f"D{pb.D}_N{pb.N}"
    ex = sweep("gibbs", {**fixed, "P": [int(P) for P in P_exact]}, replicates=n_exact, seed=seed,
               store=os.path.join(store, f"gibbs_{tag}"), progress=progress).squeeze()
    sim = sweep("langevin", {**fixed, "P": [int(P) for P in P_sim], "n_chains": [int(lkw["n_chains"])]},
                replicates=n_sim, seed=seed + 1, store=os.path.join(store, f"langevin_{tag}"),
                progress=progress).squeeze()
    for name, ds in (("gibbs", ex), ("langevin", sim)):
        if not (ds["status"] == 1).all():
            raise ValueError(f"store {store!r}: {int((ds['status'] != 1).sum())} {name} evaluations failed: "
                             f"{sorted(set(ds['error'].values.ravel()) - {''})}")
    ex = np.stack([*_mean_se(ex["train"].values), *_mean_se(ex["test"].values)], axis=1)
    sim = np.stack([*_mean_se(sim["train"].values), *_mean_se(sim["test"].values), sim["dt"].values.mean(-1)], axis=1)
    return ex.reshape(-1, 4), sim.reshape(-1, 5)


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
                     P_sim=None, n_sim=4, langevin_kw=None, seed=0, progress=False, store=None) -> StationarySweep:
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
        Passed to :func:`validation.simulators.langevin` (protocol, chains).
    seed : int
    progress : bool
    store : str, optional
        A folder: the exact and Langevin markers are computed by :func:`validation.sweep` into the
        Zarr stores ``store/gibbs_D{D}_N{N}`` and ``store/langevin_D{D}_N{N}`` (resumable: what is
        there is read, not recomputed; optional extra ``[dask]``). ``langevin_kw`` may then only
        hold ``n_chains``.

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
    if store is not None and (not isinstance(store, (str, os.PathLike)) or not str(store).strip()):
        check.fail("store", store, "None or a folder path")
    lkw = dict(n_chains=1)
    lkw.update(langevin_kw or {})
    M = pb.n_params(model)
    theory_P = np.array([P for P in P_theory if not (lam == 0 and abs(P - M) < 1e-9)])
    cur = replica.stationary_curve(pb, theory_P, beta, lam, model)
    markers = _markers_from_store if store is not None else _markers
    ex, sim = markers(pb, model, beta, lam, P_exact, n_exact, P_sim, n_sim, lkw, seed, progress, store)
    ex_tr, ex_te = ex[:, 0], ex[:, 2]
    return StationarySweep(
        D=pb.D, N=pb.N, model=model, beta=beta, lam=lam, P_theory=cur.P, theory_train=cur.train,
        theory_test=cur.test, P_exact=P_exact, exact_train=ex_tr, exact_train_se=ex[:, 1],
        exact_test=ex_te, exact_test_se=ex[:, 3], P_sim=P_sim, sim_train=sim[:, 0],
        sim_train_se=sim[:, 1], sim_test=sim[:, 2], sim_test_se=sim[:, 3], sim_dt=sim[:, 4],
        P_star_theory=replica.phase_boundary(pb, beta, lam, model=model),
        P_star_exact=boundary_from_means(P_exact, ex_tr, ex_te),
        P_star_sim=boundary_from_means(P_sim, sim[:, 0], sim[:, 2]))
