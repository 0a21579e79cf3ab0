r"""Finite-``D`` theory of ridge regression with structured tasks (``Problem(task_covariance=S)``, ``w ~ N(0, S)``).

The query ``x_q ~ N(0, I_D)`` is still isotropic and independent of the context statistics ``z = [s; y2]`` (``z = s``
for the reduced model), whatever the law of the tasks. So the two facts behind the pool theory of
``replica/_pool_finite.py`` hold unchanged: rotating every query by one ``O ∈ O(D)`` leaves the law of the features
``h = z ⊗ x_q`` invariant (the averaged resolvent is ``Q ⊗ I_D``, ``Q`` of size ``D_z × D_z``), and given its type
``t = (z, w, |x_q|²)`` a prompt is an exactly linear-Gaussian sample in the direction ``x̂_q`` with the teacher
``u = a w/√D``. The type equations of ``replica/_pool_finite.py`` therefore apply to any task law; only the law of
the types changes:

* **fresh tasks** (``tasks=None``): every prompt has its own task ``w ~ N(0, S)``, a pool of infinitely many types.
  The expectation over types is a scrambled Sobol sample of ``w = F g`` (``F Fᵀ = S``, ``g ∈ R^r``, ``r = rank S``)
  and of the context's exact representation ``(χ²_N, ζ ∈ R^D)`` (:func:`linattn.pools.context_statistics`), in
  ``r + 1 + D`` dimensions (:func:`task_types`), with the law's exact moments
  (:func:`linattn._task_covariance.gaussian_moments`) as control variates; ``n_pools`` independent scramblings
  give the estimate and its standard error.
* **a pool of** ``K`` **tasks drawn from** ``N(0, S)`` (``tasks=K``): exactly the pool theory, the pool drawn from
  the problem's law (:func:`linattn.pools.draw_pool` knows ``S``); the average over pools uses the Gaussian theory
  below as a control variate, as ``replica/_pool_theory.py`` does.

The test errors of a structured problem are three quadratic forms in the mean ``Θ̄`` and covariance ``C ⊗ I_D`` of
the ridge solution: ``test`` on fresh tasks from ``N(0, S)``, ``test_odg`` on fresh tasks from the isotropic law of
the same power ``(tr S/D) I`` (out of distribution), and with a pool ``test_idg`` on the pool's tasks; each is
``½[E y² − 2 tr(Θ̄ᵀB) + tr(Θ̄ᵀΣ̃Θ̄) + D tr(Σ̃C)]`` with that task law's exact moments ``(Σ̃, B, E y²)``
(:func:`linattn.pools.moment_matrices`).

``law="mp"`` is the Gaussian-feature theory alone (:func:`gaussian_errors`): features Gaussian with the exact second
moments ``Σ̃ ⊗ I_D`` of the training law, effective ridge ``κ`` from ``λ = κ(1 − (D/P) Σ_j σ_j/(σ_j + κ))`` over the
eigenvalues ``σ_j`` of ``Σ̃`` (:func:`replica._pool_theory.effective_ridge`), ``Θ̄ = (Σ̃ + κ)⁻¹B`` and
``C = (σ_e² + κ² tr(Θ_*ᵀΣ̃(Σ̃ + κ)⁻²Θ_*))/(P − df₂) · Σ̃(Σ̃ + κ)⁻²`` (Bach, SIAM J. Math. Data Sci. 2024; Hastie,
Montanari, Rosset & Tibshirani, Ann. Stat. 2022). It is the ``D → ∞`` limit of the finite theory at fixed ``N/D``,
``P/D²``, ``r/D`` (the scale of a prompt, ``|x_q|²/D``, concentrates), and closed-form for the low-rank law
``S = (D/r) A Aᵀ``: ``Σ̃`` has the two eigenvalues ``σ_∥ = (1 + σ²)/N + (1 + 1/N)/r`` (multiplicity ``r``) and
``σ_⊥ = (1 + σ²)/N`` (``D − r``), ``B = A Aᵀ/r``.
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from linattn import _check as check
from linattn._errors import ConvergenceError
from linattn._idg import task_moments
from linattn._numerics.stats import mean_se
from linattn._task_covariance import gaussian_moments
from linattn._task_moments import moment_matrices
from linattn._threads import blas_threads

from . import _pool_finite as pool_finite
from ._pool_theory import GAUSS_POOLS, blas_work, draw_theory_pool, effective_ridge, pool_arguments
from ._theory import StationaryTheory

#: the errors a structured theory returns (zero-temperature parts: ``*_ridge``)
KEYS = ("train", "test", "test_odg", "test_idg")
#: Sobol types per scrambling of the fresh-task law (:func:`task_types`) and per pool (:func:`structured_errors`)
N_TYPES = 8192


def task_types(pb, model, n_types, seed):
    """A scrambled-Sobol sample of the types ``(z, u)`` of prompts with fresh tasks ``w ~ N(0, S)`` (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
        With a task covariance (``r = rank S``), a linear link and isotropic inputs.
    model : {"reduced", "full"}
    n_types : int
        Sobol points, a power of two in ``[256, 2**20]``.
    seed : None, int, sequence of int or numpy.random.Generator
        Seed of the scrambling.

    Returns
    -------
    Z : ndarray (n_types, D_z)
    U : ndarray (n_types, D)
        The teachers ``u = a w/√D``.
    """
    from linattn._idg import context_statistics

    S = pb.task_covariance
    if S is None:
        check.fail("pb", pb, "a Problem with a task covariance (task_covariance=S)")
    model = check.model(model)
    n_types = pool_finite.check_types(n_types)
    seed = pool_finite._seed(seed)
    D, N, r = pb.D, pb.N, S.rank
    check.memory(8.0 * n_types * (6 * D + r + 12), f"{n_types} prompt types of dimension D = {D}", "n_types")
    sob = stats.qmc.Sobol(d=r + 1 + D, scramble=True, seed=np.random.default_rng(seed))
    pts = np.clip(sob.random(n_types), 1e-15, 1 - 1e-15)    # guard the inverse CDFs' infinite ends
    W = S.tasks(special.ndtri(pts[:, :r]))
    chi2 = special.chdtri(N, 1.0 - pts[:, r])
    zeta = special.ndtri(pts[:, r + 1:])
    s, y2 = context_statistics(pb, W, chi2, zeta)
    Z = np.concatenate([s, y2[:, None]], axis=1) if model == "full" else s
    return Z, float(pb.link.slope) * W / np.sqrt(D)


def _block_scale(model, D, vs):
    """Row scaling ``r`` of the rescaled ``v`` block (per-block decay, ``vs = λ_Γ/λ_v``): ``v' = v/r_v``."""
    r = np.ones(D + (1 if model == "full" else 0))
    if model == "full":
        r[-1] = np.sqrt(vs)
    return r


def gaussian_errors(pb, P, beta, lam, model, train_moments, metrics, N_test=None):
    r"""The Gaussian-feature theory (module docstring) of a training task law, with any test laws.

    Parameters
    ----------
    pb : linattn.Problem
    P : float
    beta : float
    lam : float or (float, float)
        Weight decay (per block ``(λ_Γ, λ_v)`` for the full model: the ``v`` block is rescaled exactly).
    model : {"reduced", "full"}
    train_moments : linattn.pools.TaskMoments
        The task moments of the training prompts (a pool's, or a law's).
    metrics : dict
        Test laws, name → TaskMoments (evaluated at ``N_test``).
    N_test : int, optional

    Returns
    -------
    dict
        ``train`` and one entry per metric (Gibbs averages at ``β``), their ``*_ridge`` parts, ``kappa_eff``,
        ``df2``, ``residual``.
    """
    import dataclasses

    lam_gamma, lam_v = check.block_lambdas(lam, model)
    vs = lam_gamma / lam_v if lam_gamma != lam_v else 1.0
    D = pb.D
    rs = _block_scale(model, D, vs)
    pbt = pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)
    St, B, Ey2 = moment_matrices(pb, model, train_moments)
    St, B = St * np.outer(rs, rs), B * rs[:, None]
    s, U = np.linalg.eigh(St)
    s = np.maximum(s, 0.0)
    n = np.ones(s.size)
    M = D * s.size
    if lam_gamma == 0 and abs(P - M) < 0.5:
        check.fail("P", P, f"!= M = {M} at lam = 0 (the min-norm solution diverges at the interpolation threshold)")
    kap, res, _ = effective_ridge(s, n, D, P, lam_gamma)
    inv = 1.0 / (s + kap)
    Bt = U.T @ B
    Gd = np.einsum("ij,ij->i", Bt, Bt)
    pos = s > 0
    se2 = Ey2 - float(np.sum(Gd[pos] / s[pos]))
    bias = float(np.sum(Gd[pos] / s[pos] * (kap / (s[pos] + kap)) ** 2)) if kap > 0 else 0.0
    df2 = D * float(np.sum(s**2 * inv**2))
    if not P - df2 > 0:
        check.fail("lam", lam, f"large enough that the variance factor 1/(P − df2) is finite at P = {P:g} (M = {M})")
    scale = (se2 + bias) / (P - df2)
    Theta = U @ (inv[:, None] * Bt)                       # Θ̄ = (Σ̃ + κ)⁻¹B in the rescaled coordinates
    Cov = (U * (scale * s * inv**2)) @ U.T                # C: Cov(Θ̂) = C ⊗ I_D
    ratio = (kap / lam_gamma if lam_gamma > 0 else P / (P - M)) if not np.isinf(beta) else 0.0
    Ainv = (U * inv) @ U.T

    def law_error(mo, p):
        Sm, Bm, Ey2m = moment_matrices(p, model, mo)
        Sm, Bm = Sm * np.outer(rs, rs), Bm * rs[:, None]
        ridge = 0.5 * (Ey2m - 2.0 * float(np.sum(Theta * Bm)) + float(np.sum(Theta * (Sm @ Theta)))
                       + D * float(np.sum(Sm * Cov)))
        thermal = 0.0 if np.isinf(beta) else ratio * D * float(np.sum(Sm * Ainv)) / (2 * beta)
        return ridge, ridge + thermal

    fit, _ = law_error(train_moments, pb)                 # the training law at the training length
    decay = lam_gamma * (float(np.sum(Theta * Theta)) + D * float(np.trace(Cov)))
    shrink = lam_gamma / kap if kap > 0 else max(0.0, 1.0 - M / P)
    train = 0.5 * (shrink**2 * 2.0 * fit + decay)
    out = dict(train_ridge=train, train=train + (0.0 if np.isinf(beta) else M / (2 * beta)), kappa_eff=kap, df2=df2,
               residual=res)
    for name, mo in metrics.items():
        out[name + "_ridge"], out[name] = law_error(mo, pbt)
    return out


def structured_errors(pb, P, beta, lam, model="reduced", law="finite", pool=None, n_pools=16, rng=0, n_types=N_TYPES,
                      N_test=None):
    """The structured-task theory (module docstring), averaged over ``n_pools`` Sobol scramblings (fresh tasks) or
    random pools (``tasks=K``; ``pool``: one given pool instead). Its BLAS threads are those of the pool theory
    (:func:`replica._pool_theory.blas_work`; inside :func:`replica.stationary` the outermost call decides), so that a
    direct call (the experiments) does not meet the default threads of many small products on a busy machine.

    Returns
    -------
    dict
        ``train``, ``test``, ``test_odg``, ``test_idg`` (``None`` without a pool), their ``*_ridge`` parts and
        standard errors ``*_se`` (of the sampling inside the theory), ``residual``, ``iterations``; for fresh tasks
        also ``mean`` (the mean ``Θ̄`` of the ridge solution, ``D_z × D``, ``law="finite"``) and ``kappa_eff`` (the
        Gaussian theory's effective ridge ``κ``).
    """
    with blas_threads(blas_work(pb, model, law, n_types)):
        return _structured_errors(pb, P, beta, lam, model, law, pool, n_pools, rng, n_types, N_test)


def _structured_errors(pb, P, beta, lam, model, law, pool, n_pools, rng, n_types, N_test):
    """:func:`structured_errors` inside its thread policy."""
    if pb.task_covariance is None:
        check.fail("pb", pb, "a Problem with a task covariance (task_covariance=S)")
    check.choice("law", law, ("finite", "mp"))
    n_types = pool_finite.check_types(n_types)
    metrics = {"test": gaussian_moments(pb), "test_odg": gaussian_moments(pb, "isotropic")}
    fin_keys = ("train", "test", "test_odg", "test_idg")
    if pb.tasks is None:
        if pool is not None:
            check.fail("pool", "<given>", "None for fresh tasks (pb.tasks=None)")
        n_pools = check.positive_int("n_pools", n_pools, maximum=10_000)
        rng = check.seed_int("rng", rng)
        moments = gaussian_moments(pb)
        gauss = gaussian_errors(pb, P, beta, lam, model, moments, metrics, N_test)
        if law == "mp":
            out = {k: gauss[k] for k in gauss if not k.startswith("test_idg")}
            out.update(test_idg=None, test_idg_ridge=None, train_se=0.0, test_se=0.0, test_odg_se=0.0,
                       test_idg_se=None, iterations=0)
            return out
        runs = []
        for j in range(n_pools):
            Z, U = task_types(pb, model, n_types, [rng, pb.D, j, 2])
            runs.append(pool_finite.solve(pb, P, beta, lam, model, Z, U, moments, N_test=N_test,
                                          metrics={"test_odg": metrics["test_odg"]}))
        out = {}
        for k in fin_keys[:3]:
            for key in (k, k + "_ridge"):
                out[key] = float(np.mean([r[key] for r in runs]))
            out[k + "_se"] = mean_se(np.array([r[k] for r in runs]))[1]
        out.update(test_idg=None, test_idg_ridge=None, test_idg_se=None,
                   residual=max(r["residual"] for r in runs), iterations=max(int(r["iterations"]) for r in runs),
                   kappa_eff=gauss["kappa_eff"], mean=np.mean([r["mean"] for r in runs], axis=0))
        return out
    # a pool drawn from N(0, S): the pool theory with the structured test laws
    pool, rng = pool_arguments(pb, pool, law, rng)
    if isinstance(pool, str):
        check.fail("pool", pool, "None or a (K, D) array for a structured problem")
    if pool is not None:
        pools, n_draw = [pool], 1
    else:
        n_draw = n_pools * (GAUSS_POOLS if law == "finite" else 1)
        pools = [draw_theory_pool(pb, rng, j) for j in range(n_draw)]

    def gauss(pl):
        mo = task_moments(pb, pl)
        return gaussian_errors(pb, P, beta, lam, model, mo, dict(metrics, test_idg=mo), N_test)

    g = [gauss(pl) for pl in pools]
    keys = [k for k in fin_keys] + [k + "_ridge" for k in fin_keys]
    out = {k: float(np.mean([r[k] for r in g])) for k in keys}
    # nan for one random pool (no spread to estimate it from); 0 for a given pool's Gaussian theory (no sampling)
    ses = {k: mean_se(np.array([r[k] for r in g]), single=0.0 if pool is not None else np.nan)[1] for k in fin_keys}
    residual, iterations = max(r["residual"] for r in g), 0
    if law == "finite":
        n_fin = 1 if pool is not None else n_pools
        diffs = {k: [] for k in keys}
        for j in range(n_fin):
            pl = pools[j]
            Z, U = pool_finite.prompt_types(pb, pl, model, n_types, [rng, pb.D, j, 1])
            fin = pool_finite.solve(pb, P, beta, lam, model, Z, U, task_moments(pb, pl), N_test=N_test,
                                    metrics={"test_odg": metrics["test_odg"]})
            for k in keys:
                diffs[k].append(fin[k] - g[j][k])
            residual = max(residual, fin["residual"])
            iterations = max(iterations, int(fin["iterations"]))
        for k in keys:
            out[k] += float(np.mean(diffs[k]))
        ses = ({k: float(np.hypot(ses[k], mean_se(np.array(diffs[k]))[1])) for k in fin_keys} if n_fin > 1
               else {k: np.nan for k in fin_keys})      # one pool, drawn or given: one draw of the finite-D part
    out.update({k + "_se": v for k, v in ses.items()})
    out.update(residual=residual, iterations=iterations)
    return out


def structured_stationary(pb, P, beta, lam, model="reduced", law="finite", pool=None, n_pools=16, rng=0,
                          N_test=None) -> StationaryTheory:
    """The structured-task theory as a :class:`~replica.StationaryTheory` (with ``test_odg`` and, with a
    pool, ``test_idg``); arguments as in :func:`replica.stationary`.

    Returns
    -------
    StationaryTheory

    Raises
    ------
    ValueError
        Bad input (named); ``law`` other than ``"finite"`` or ``"mp"``.
    linattn.ConvergenceError
        If the type equations do not converge.
    """
    import linattn

    if isinstance(rng, np.random.Generator):
        rng = int(rng.integers(2**63))
    P = check.real("P", P, low=1.0)
    beta = check.positive("beta", beta, allow_inf=True)
    model = check.model(model)
    lam_gamma, lam_v = check.block_lambdas(lam, model)
    lam = lam_gamma if lam_gamma == lam_v else (lam_gamma, lam_v)
    M = pb.n_params(model)
    if lam_gamma == 0 and P < M and np.isfinite(beta):
        check.fail("lam", lam, f"> 0 at finite beta when P < M = {M} (the Gibbs measure is not normalisable)")
    N_test = check.n_test(N_test)
    e = structured_errors(pb, P, beta, lam, model, law, pool, n_pools, rng, N_test=N_test)
    values = [e[k] for k in KEYS if e[k] is not None]
    if not np.all(np.isfinite(values)):
        raise ConvergenceError(f"structured-task theory: non-finite errors {values} (P = {P:g}, lam = {lam!r})")
    return StationaryTheory(problem=pb, P=P, beta=beta, lam=lam, model=model, law=law, train=e["train"],
                            test=e["test"], train_ridge=e["train_ridge"], test_ridge=e["test_ridge"],
                            free_energy=e["train_ridge"] if np.isinf(beta) else None,
                            gap=float(linattn.relative_gap(e["train"], e["test"])), order=None, converged=True,
                            iterations=e["iterations"], residual=float(e["residual"]), test_idg=e["test_idg"],
                            N_test=N_test, train_se=e["train_se"], test_se=e["test_se"], test_idg_se=e["test_idg_se"],
                            test_odg=e["test_odg"], test_odg_se=e["test_odg_se"])
