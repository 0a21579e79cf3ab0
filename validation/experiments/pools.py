"""Exact dataset averages with task pools, and the checks of the pool theory (report section ``pools``).

:func:`pool_average` solves ``n_datasets`` independent datasets exactly (:func:`replica.ridge`: no ``M × M``
eigendecomposition) and averages the fresh-task (ICL) and in-distribution (IDG) errors, with standard errors.
:func:`checks` compares them with the ``D → ∞`` theory of Lu et al. (:func:`replica.asymptotic`) and with the
finite-``D`` pool theory (:func:`replica.stationary` with ``Problem(tasks=K)``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
import replica
from linattn import check


@dataclass(frozen=True, eq=False)
class PoolAverage:
    """ICL and IDG errors (and training errors, weight decay included) of independent datasets, exact per dataset.

    Attributes
    ----------
    icl, idg, train : ndarray (n_datasets,)
    """

    icl: np.ndarray
    idg: np.ndarray
    train: np.ndarray

    @property
    def icl_mean(self) -> float:
        return float(self.icl.mean())

    @property
    def idg_mean(self) -> float:
        return float(self.idg.mean())

    @property
    def train_mean(self) -> float:
        return float(self.train.mean())

    @property
    def icl_se(self) -> float:
        return float(self.icl.std(ddof=1) / np.sqrt(self.icl.size))

    @property
    def idg_se(self) -> float:
        return float(self.idg.std(ddof=1) / np.sqrt(self.idg.size))


def pool_average(pb, P, lam, n_datasets=20, model="full", seed=0, progress=False) -> PoolAverage:
    """Exact ridge solutions (:func:`replica.ridge`) of ``n_datasets`` datasets with a task pool, and their errors.

    Parameters
    ----------
    pb : linattn.Problem
        With ``tasks=K`` (a fresh task per prompt is also accepted: then ``idg`` equals the fresh-task error
        of a pool of all the training tasks, and is reported as ``icl``).
    P : int
        Prompts per dataset.
    lam : float or (float, float)
        Weight decay (per block for the full model: the peer's ridge ``λ_L`` is ``(λ_L/D, λ_L)``).
    n_datasets : int
        ``>= 2``; dataset ``i`` uses ``rng=(seed, P, K, i)``.
    model : {"reduced", "full"}
    seed : int
    progress : bool

    Returns
    -------
    PoolAverage
    """
    check.problem(pb)
    P = check.positive_int("P", P)
    n_datasets = check.positive_int("n_datasets", n_datasets, minimum=2)
    check.model(model)
    seed = check.seed_int("seed", seed)
    progress = check.boolean("progress", progress)
    icl, idg, train = (np.empty(n_datasets) for _ in range(3))
    for i in tqdm(range(n_datasets), desc=f"pools P={P} K={pb.tasks}", disable=not progress, leave=False):
        sol = replica.ridge(pb.sample(P, rng=(seed, P, pb.tasks or 0, i)), pb, lam, model)
        icl[i], train[i] = sol.test, sol.train
        idg[i] = sol.test if sol.test_idg is None else sol.test_idg
    return PoolAverage(icl=icl, idg=idg, train=train)


@dataclass(frozen=True)
class Check:
    """One comparison: ``name``, ``setting``, ``theory``, ``measured`` (strings), ``passed``, ``rule``, ``rel``."""

    name: str
    setting: str
    theory: str
    measured: str
    rel: str
    passed: bool
    rule: str


def checks(n16=40, n32=20, n20=24, progress=False) -> list[Check]:
    """The comparisons of the report section ``pools`` (each one also a test in ``tests/replica/test_pools.py``).

    1. ``D → ∞`` theory vs exact averages extrapolated in ``1/D`` (``2E₃₂ − E₁₆``), ICL and IDG, peer conventions
       (sphere tasks, ridge ``λ_L``): tolerance 4 s.e. + 25 % of the measured ``1/D`` correction; the fresh-task
       formula (``κ = ∞``) must be rejected by the same rule.
    2. Finite-``D`` pool theory vs exact averages at ``D = 20``, two pool sizes: within 3.5 % + 3 s.e., and
       closer than the ``D → ∞`` formula wherever the two theories differ by more than 3 s.e.
    3. The pool theory's ``D → ∞`` limit (quadratic extrapolation over ``D = 1000 … 8000``) equals the
       asymptotic formula within ``1e-6``.
    4. The fast ridge solver equals the eigendecomposition route (:func:`replica.gibbs`, ``β = ∞``) on one dataset.
    """
    out = []
    alpha, tau, kappa, noise, ridge_L = 1.0, 2.0, 0.5, 0.1, 0.1
    th = replica.asymptotic(alpha, tau, kappa, noise, ridge_L)
    base = replica.asymptotic(alpha, tau, np.inf, noise, ridge_L)
    avgs = {}
    for D, n in ((16, n16), (32, n32)):
        pb = linattn.Problem(D, int(alpha * D), noise, tasks=int(kappa * D), task_law="sphere")
        avgs[D] = pool_average(pb, int(tau * D * D), (ridge_L / D, ridge_L), n, seed=7, progress=progress)
    for name, attr, ref in (("ICL", "icl", th.icl), ("IDG", "idg", th.idg)):
        a16, a32 = getattr(avgs[16], attr), getattr(avgs[32], attr)
        extrap = 2 * a32.mean() - a16.mean()
        se = float(np.hypot(2 * a32.std(ddof=1) / np.sqrt(a32.size), a16.std(ddof=1) / np.sqrt(a16.size)))
        tol = 4 * se + 0.25 * abs(a32.mean() - a16.mean())
        rejected = abs(extrap - base.icl) > tol
        out.append(Check(f"D → ∞ theory, {name} error (Lu et al.; IDG = −τ c_e conjectured)",
                         f"α={alpha:g}, τ={tau:g}, κ={kappa:g}, σ={noise:g}, λ_L={ridge_L:g}; exact at D=16 ({n16}), "
                         f"32 ({n32}), extrapolated 2E₃₂ − E₁₆",
                         f"{ref:.4g} (κ=∞: {base.icl:.4g})", f"{extrap:.4g} ± {se:.2g}", f"{abs(extrap / ref - 1):.2%}",
                         bool(abs(extrap - ref) <= tol and rejected), "4 s.e. + 25 % of the 1/D correction; κ=∞ rejected"))
    D, N, lam = 20, 40, 0.1 / 20
    for tau20, kappa20 in ((2.0, 0.5), (2.0, 2.0)):
        pb = linattn.Problem(D, N, noise, tasks=int(kappa20 * D))
        P = int(tau20 * D * D)
        avg = pool_average(pb, P, lam, n20, seed=1, progress=progress)
        st = replica.stationary(pb, P, np.inf, lam, "full", n_pools=32)
        asym = replica.asymptotic(N / D, tau20, kappa20, noise, lam * D)
        for name, m, se, t, b in (("ICL", avg.icl_mean, avg.icl_se, st.test, asym.icl),
                                  ("IDG", avg.idg_mean, avg.idg_se, st.test_idg, asym.idg)):
            ok = abs(t / m - 1) <= 0.035 + 3 * se / m and (abs(b - t) <= 3 * se or abs(t - m) < abs(b - m))
            out.append(Check(f"finite-D pool theory, {name} error", f"D=20, N=40, σ={noise:g}, λ=0.005, τ={tau20:g}, "
                             f"κ={kappa20:g}, full model, {n20} datasets", f"{t:.4g} (D→∞: {b:.4g})", f"{m:.4g} ± {se:.2g}",
                             f"{abs(t / m - 1):.2%} (D→∞ {abs(b / m - 1):.1%})", bool(ok),
                             "≤ 3.5 % + 3 s.e., and closer than the D → ∞ formula where the two differ by > 3 s.e."))
    Ds = np.array([1000, 2000, 4000, 8000])
    vals = np.array([(lambda st: (st.test, st.test_idg))(replica.stationary(
        linattn.Problem(int(d), int(alpha * d), noise, tasks=int(kappa * d), task_law="sphere"), tau * d * d, np.inf,
        ridge_L / d, "reduced", law="mp", pool="mp")) for d in Ds])
    ext = [float(np.polyval(np.polyfit(1.0 / Ds, vals[:, k], 2), 0.0)) for k in range(2)]
    err = max(abs(ext[0] - th.icl), abs(ext[1] - th.idg))
    out.append(Check("finite-D pool theory at D → ∞ = Lu et al.", f"α={alpha:g}, τ={tau:g}, κ={kappa:g}, σ={noise:g}, "
                     f"λ_L={ridge_L:g}; D = 1000…8000, quadratic in 1/D", f"{th.icl:.8g}, {th.idg:.8g}",
                     f"{ext[0]:.8g}, {ext[1]:.8g}", f"{err:.1e} (abs.)", bool(err < 1e-6), "|difference| < 1e-6"))
    pb = linattn.Problem(12, 24, noise, tasks=6)
    data = pb.sample(400, rng=3)
    fast = replica.ridge(data, pb, 0.01, "full")
    ref = replica.gibbs(data, pb, np.inf, 0.01, "full")
    rel = max(abs(fast.test / float(ref.test) - 1), abs(fast.test_idg / float(ref.test_idg) - 1),
              abs(fast.train / float(ref.train) - 1))
    out.append(Check("fast ridge solver (CG, no eigendecomposition) = eigensystem route",
                     "D=12, N=24, K=6, P=400 (> M), λ=0.01, full model", "replica.gibbs(β=∞)",
                     f"{fast.method}, {fast.iterations} it., certified={fast.certified}", f"{rel:.1e}",
                     bool(rel < 1e-7 and fast.certified), "relative difference < 1e-7 (rtol = 1e-8)"))
    return out
