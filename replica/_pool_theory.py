r"""Finite-``D`` theory of the stationary errors with a finite task pool (``Problem(tasks=K)``).

Given the pool ``w_1 … w_K``, the prompts of a dataset are i.i.d., and their features factorise exactly:
``h = z ⊗ x_q`` with ``z = [s; y2]`` (full model; ``z = s`` reduced) independent of the query
``x_q ~ N(0, I)``. Hence, conditional on the pool, every second moment is a Kronecker product
(:mod:`linattn.pools` for the moments): with ``Θ = [Γ; vᵀ]`` ((D+1) × D) and ``ŷ = zᵀΘx_q``,

.. math::
   E[h hᵀ] = Σ̃ ⊗ I_D,\quad Σ̃ = \begin{pmatrix} \frac{ā² + σ²}{N} I + (1 + \frac1N) R & k\,m \\
                                             k\,mᵀ & k\,v₂ \end{pmatrix},\quad
   E[h\,y] = \mathrm{vec}(B),\quad B = \begin{pmatrix} R \\ mᵀ \end{pmatrix},\quad k = 1 + \tfrac2N,

and the in-distribution error is exactly ``½[E y² − 2 tr(ΘᵀB) + tr(ΘᵀΣ̃Θ)]``. The theory treats the
features as Gaussian with these moments (the deterministic equivalent of ridge regression with a
structured covariance; Bach, SIAM J. Math. Data Sci. 2024; Hastie, Montanari, Rosset & Tibshirani,
Ann. Stat. 2022): with ``σ_j`` the eigenvalues of ``Σ̃`` (each ``D`` times), the effective ridge
``κ`` solves ``λ = κ(1 − (D/P) Σ_j σ_j/(σ_j + κ))``, ``df₂ = D Σ_j σ_j²/(σ_j + κ)²``, and

.. math::
   \bar Θ = (Σ̃ + κ)^{-1} B,\qquad
   \mathrm{Cov}(\hat Θ) = \frac{σ_e² + κ²\,\mathrm{tr}(Θ_*ᵀΣ̃(Σ̃ + κ)^{-2}Θ_*)}{P − df₂}\; Σ̃(Σ̃ + κ)^{-2} ⊗ I_D,

``Θ_* = Σ̃⁻¹B``, ``σ_e² = E y² − tr(BᵀΣ̃⁻¹B)``. Any quadratic error (the fresh-task metric
``diag(c, c_v)``, or ``Σ̃`` for the in-distribution error) follows from the mean and this covariance;
the training error is ``(λ/κ)²`` times the in-distribution mean-squared error plus the weight decay;
the thermal parts at finite ``β`` use ``(Ĥ + λ)⁻¹ ≈ (κ/λ)(Σ̃ + κ)⁻¹ ⊗ I``. The errors are averaged over
``n_pools`` pools drawn from the problem's task law (or evaluated for one given pool).

Three laws (``law=``):

* ``"finite"`` (default): the finite-``D`` theory of ``replica/_pool_finite.py`` — given its context statistics and
  ``|x_q|²``, a pooled prompt is exactly a linear-Gaussian sample, and ridge regression on that mixture has a
  deterministic equivalent with one leave-one-out factor per prompt type, solved with the exact one-prompt law given
  the pool. Measured against exact dataset averages at ``D = 20`` on ``κ ∈ {0.2, 0.5, 1, 2, 5} × τ ∈ {0.5, 2, 10}``
  (both models, train, ICL and IDG errors): within ``E/M + 3 s.e.`` everywhere (``docs/pools.md``).
* ``"mp"``: the Gaussian-feature theory above alone (features Gaussian with the pool's second moments). As
  ``D → ∞`` it tends to the asymptotic theory of Lu et al. (:func:`replica.asymptotic`, measured in
  ``tests/replica/test_pools.py``), and so does ``"finite"`` (their difference is ``O(1/D)``).
* ``"factor"``: the Gaussian theory times the fresh-task factor ``E_replica(κ = ∞)/E_Gauss(κ = ∞)`` — the earlier
  theory of this module, kept as the baseline the acceptance test rejects (up to 2.3 s.e. + ``E/M`` off at
  ``D = 20``, ``κ = 0.5``, ``τ = 2``).

The average over random pools (``pool=None``) uses nested pools (pool ``j`` is drawn from seed ``(rng, D, j)``; its
first ``K`` tasks do not depend on ``K``, so curves in ``κ`` and in ``P`` are smooth) and, for ``law="finite"``, the
Gaussian theory as a control variate: ``mean over 32·n_pools pools of E_Gauss + mean over n_pools of (E_finite −
E_Gauss)``; the two move together from pool to pool, so the difference varies little (``*_se`` of
:class:`PoolErrors` is the standard error of this average).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn import _validate as validate
from linattn._idg import task_moments
from linattn._numerics.stats import mean_se
from linattn._results import short_repr
from linattn._sampling import draw_pool
from linattn._task_moments import TaskMoments, moment_matrices

from . import _pool_batch as pool_batch
from . import _pool_finite as pool_finite
from ._pool_batch import effective_ridge
from ._theory import StationaryTheory, checked_arguments, fresh_stationary


@dataclass(frozen=True)
class _Spectrum:
    """``Σ̃`` in its eigenbasis, as nodes ``j`` each standing for ``n_j`` eigen-directions with eigenvalue
    ``s_j``: ``G`` = Gram matrix of the rows of ``UᵀB`` (1-d: its diagonal, rows orthogonal), ``t_j`` the
    contribution to ``tr Γ̄`` per unit ``1/(s_j + κ)``, ``Cu`` = ``UᵀC̃U`` of the fresh-task metric
    ``C̃ = diag(c, …, c, c_v)`` (1-d: diagonal), ``Ey2 = E y²``, ``Su`` = ``UᵀΣ̃U`` of the in-distribution metric
    (``s`` itself unless the errors are evaluated at another context length ``N_test``)."""

    __repr__ = short_repr

    s: np.ndarray
    n: np.ndarray
    G: np.ndarray
    t: np.ndarray
    Cu: np.ndarray
    Ey2: float
    Su: np.ndarray


def _matrix_spectrum(pb, model, moments: TaskMoments, v_scale=1.0, N_test=None) -> _Spectrum:
    """``Σ̃`` of the given task moments; ``v_scale = λ_Γ/λ_v`` rescales the ``v`` row and column (per-block decay);
    the test metrics at the context length ``N_test`` (default: the training length)."""
    D, s2 = pb.D, pb.noise**2
    pbt = pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)
    St, B, _ = moment_matrices(pb, model, moments)
    St_test = St if pbt is pb else moment_matrices(pbt, model, moments)[0]
    Cd = np.full(D, pbt.feature_variance)
    if model == "full":
        Cd = np.append(Cd, pbt.feature_variance_v * v_scale)
        if v_scale != 1.0:              # v' = v √(λ_v/λ_Γ): the v feature is √(λ_Γ/λ_v) y2 x_q
            r = np.append(np.ones(D), np.sqrt(v_scale))
            St, B, St_test = St * np.outer(r, r), B * r[:, None], St_test * np.outer(r, r)
    sj, U = np.linalg.eigh(St)
    Bt = U.T @ B
    sj = np.maximum(sj, 0.0)
    return _Spectrum(s=sj, n=np.ones(sj.size), G=Bt @ Bt.T,
                     t=pb.teacher_strength * np.einsum("ij,ji->j", U[:D], Bt), Cu=(U.T * Cd) @ U,
                     Ey2=moments.mean_sq + s2, Su=sj if pbt is pb else U.T @ St_test @ U)


def _mp_spectrum(pb, model, n_nodes=400, v_scale=1.0, N_test=None) -> _Spectrum:
    r"""The pool's covariance at its large-``D`` law: the eigenvalues of ``R = W/D`` are ``λ/D`` with ``λ`` from
    Marchenko–Pastur of ratio ``1/κ`` (atom ``1 − κ`` at 0 for ``κ < 1``), integrated by Gauss–Chebyshev
    quadrature of the second kind (exact for the square-root edges); ``m = 0``, ``ā² = 1``,
    ``v₂ = (1 + σ²)² (+ 2/D`` for Gaussian tasks).  Every ``1/D`` of the finite-``D`` problem is kept."""
    from spectra import mp

    D, N, s2 = pb.D, pb.N, pb.noise**2
    q = D / pb.tasks
    lo, hi = mp._edges(q)
    i = np.arange(1, n_nodes + 1)
    u = np.cos(i * np.pi / (n_nodes + 1))
    w = np.pi / (n_nodes + 1) * np.sin(i * np.pi / (n_nodes + 1)) ** 2
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    lam = mid + half * u
    frac = w * half**2 / (2 * np.pi * q * lam)
    atom = mp._atom(q)
    if atom > 0:
        lam, frac = np.append(lam, 0.0), np.append(frac, atom)
    r = lam / D
    Nt = N if N_test is None else N_test
    pbt = pb if Nt == N else dataclasses.replace(pb, N=Nt)
    sj = (1.0 + s2) / N + (1.0 + 1.0 / N) * r
    su = (1.0 + s2) / Nt + (1.0 + 1.0 / Nt) * r
    n = D * frac
    G, t, Cu = n * r * r, pb.teacher_strength * n * r, np.full(sj.size, pbt.feature_variance)
    if model == "full":
        v2 = (1.0 + s2) ** 2 + (0.0 if pb.task_law == "sphere" else 2.0 / D)
        sj, su, n = (np.append(sj, (1.0 + 2.0 / N) * v2 * v_scale), np.append(su, (1.0 + 2.0 / Nt) * v2 * v_scale),
                     np.append(n, 1.0))
        G, t, Cu = np.append(G, 0.0), np.append(t, 0.0), np.append(Cu, pbt.feature_variance_v * v_scale)
    return _Spectrum(s=sj, n=n, G=G, t=t, Cu=Cu, Ey2=1.0 + s2, Su=su)


def _diag(M):
    return np.diag(M) if M.ndim == 2 else M


@dataclass(frozen=True)
class PoolErrors:
    """Errors of the pool theory: ``train``, ``test`` (fresh tasks), ``test_idg`` (Gibbs averages at ``β``),
    their zero-temperature parts ``*_ridge``, the effective ridge ``kappa_eff`` and ``df2`` of the Gaussian theory,
    the solver ``residual``, and the standard errors ``*_se`` of the average over random pools (floats).

    Attributes
    ----------
    train, test, test_idg : float
        ``⟨E_t⟩``, fresh-task ``⟨E_g⟩`` and in-distribution ``⟨E_IDG⟩`` (Gibbs averages at ``β``).
    train_ridge, test_ridge, test_idg_ridge : float
        Their zero-temperature parts.
    kappa_eff, df2 : float
        Effective ridge and ``df₂`` of the Gaussian theory.
    residual : float
        The solver's residual.
    train_se, test_se, test_idg_se : float
        Standard errors of the average over random pools; ``0`` for a given pool (or ``pool="mp"``) with the
        Gaussian theory (``law="mp"``, no sampling), ``nan`` where they are not computable: one random pool
        (``n_pools=1``), or ``law="finite"`` with one pool, drawn or given (its sampled prompt types are one draw).
    iterations : int
        The most iterations any solve behind the result took (the Gaussian theory's root of the effective ridge,
        Brent; the finite-``D`` theory's fixed point, :func:`replica._pool_finite.solve`), over all pools.
    """

    __repr__ = short_repr

    train: float
    test: float
    test_idg: float
    train_ridge: float
    test_ridge: float
    test_idg_ridge: float
    kappa_eff: float
    df2: float
    residual: float
    train_se: float = 0.0
    test_se: float = 0.0
    test_idg_se: float = 0.0
    iterations: int = 0


def gaussian_errors(pb, P, beta, lam, model, spectrum: _Spectrum) -> PoolErrors:
    """The Gaussian-feature theory of the module docstring for one pool spectrum.

    Returns
    -------
    PoolErrors
    """
    sp, D = spectrum, pb.D
    s, n = sp.s, sp.n
    M = D * float(n.sum())
    if lam == 0 and abs(P - M) < 0.5:
        check.fail("P", P, f"!= M = {M:g} at lam = 0 (the min-norm solution diverges at the interpolation threshold)")
    kap, res, iterations = effective_ridge(s, n, D, P, lam)
    Gd = _diag(sp.G)
    inv = 1.0 / (s + kap)
    pos = s > 0
    se2 = sp.Ey2 - float(np.sum(Gd[pos] / s[pos]))
    bias = float(np.sum(Gd[pos] / s[pos] * (kap / (s[pos] + kap)) ** 2)) if kap > 0 else 0.0   # no κ² overflow
    df2 = D * float(np.sum(n * s**2 * inv**2))
    if not P - df2 > 0:     # κ → 0 at P = M: the min-norm variance 1/(P − df2) diverges (and is lost in float64)
        check.fail("lam", lam, f"large enough that the variance factor 1/(P − df2) is finite at P = {P:g} (M = {M:g}: "
                               "at the interpolation threshold the min-norm solution diverges as lam → 0)")
    scale = (se2 + bias) / (P - df2)
    Cd, Sd = _diag(sp.Cu), _diag(sp.Su)
    overlap = float(sp.t @ inv) / D
    norm = _cnorm(sp.Cu, sp.G, inv)
    test = float(pb.test_error_from_moments(overlap, norm + scale * D * float(np.sum(n * Cd * s * inv**2))))
    def idg_at(Mu, Md):     # the in-distribution error with the metric Mu (training: Σ̃ itself, s)
        return 0.5 * (sp.Ey2 - 2.0 * float(Gd @ inv) + _cnorm(Mu, sp.G, inv)
                      + scale * D * float(np.sum(n * Md * s * inv**2)))

    idg = idg_at(sp.Su, Sd)
    idg_train = idg if sp.Su is sp.s else idg_at(s, s)     # the training residual lives at the training length
    lam_inv = lam * inv             # λ|Θ̄|² as Σ (λ inv) inv: no λ·inv² underflow at λ ~ 1e300
    decay = float(np.sum(Gd * lam_inv * inv)) + scale * D * float(np.sum(n * s * lam_inv * inv))
    # λ/κ is the training residual's shrinkage; at λ = 0 it is 1 − M/P above the threshold (κ = 0) and 0 below
    shrink = lam / kap if kap > 0 else max(0.0, 1.0 - M / P)
    train = 0.5 * (shrink**2 * 2.0 * idg_train + decay)
    out = dict(train_ridge=train, test_ridge=test, test_idg_ridge=idg, kappa_eff=kap, df2=df2, residual=res,
               iterations=iterations)
    if np.isinf(beta):
        out.update(train=train, test=test, test_idg=idg)
    else:       # tr(C (H + λ)⁻¹) ≈ (κ/λ) D tr(C̃ (Σ̃ + κ)⁻¹)
        # κ/λ at λ = 0 (finite β needs P > M there): λ = κ(1 − (D/P)Σ nσ/(σ + κ)) → κ(1 − M/P) as κ → 0
        ratio = kap / lam if lam > 0 else P / (P - M)
        out.update(train=train + M / (2 * beta),
                   test=test + ratio * D * float(np.sum(n * Cd * inv)) / (2 * beta),
                   test_idg=idg + ratio * D * float(np.sum(n * Sd * inv)) / (2 * beta))
    return PoolErrors(**{k: (v if k == "iterations" else float(v)) for k, v in out.items()})


def _cnorm(Mu, G, inv) -> float:
    """``Θ̄ᵀ M Θ̄`` with ``Θ̄ = U diag(inv) UᵀB``: ``Σ_jl Mu_jl G_jl inv_j inv_l`` (diagonal forms as vectors)."""
    if Mu.ndim == 1 and G.ndim == 1:
        return float(np.sum(Mu * G * inv * inv))
    Mu = Mu if Mu.ndim == 2 else np.diag(Mu)
    G = G if G.ndim == 2 else np.diag(G)
    return float(inv @ (Mu * G) @ inv)


def fresh_moments(pb) -> TaskMoments:
    """The task moments of ``w ~ N(0, I_D)`` (a pool of infinitely many fresh tasks):
    ``R = I/D``, ``ā² = 1``, ``m = 0``, ``v₂ = (1 + σ²)² + 2/D`` (linear link of slope ``a``: times ``a²``, ``a⁴``)."""
    a2 = float(pb.link.slope) ** 2
    return TaskMoments(K=0, mean_sq=a2, R=a2 * np.eye(pb.D) / pb.D, m=np.zeros(pb.D),
                       v2=(a2 + pb.noise**2) ** 2 + 2.0 * a2 * a2 / pb.D)


GAUSS_POOLS = 32       # Gaussian-theory pools per finite-D pool in the pool average (module docstring)
#: numbers drawn for a pool average at most (pools × K × D): 2^30 ≈ a minute on 2 cores (measured: D = 20,
#: K = 10⁵, 16 × 33 pools, 1.1·10⁹ numbers, 57 s; the pool draws and their moments are 90 % of it)
POOL_WORK = float(2**30)


def theory_work(pb, n_pools, law="finite"):
    """Operations of one pool theory (:func:`pool_errors` of ``n_pools`` pools), for :func:`linattn._check.work`: about
    1e9 per pool of the finite-D theory (its 8192 prompt types and their fixed point; a second on one core at
    D = 20, more for the D x D products beyond), 32 Gaussian-theory pools per pool of ``law="finite"``. Used by the
    work guards of :func:`replica.stationary_curve`, :func:`replica.phase_boundary` and
    :func:`replica.diversity_transition`.

    Parameters
    ----------
    pb : linattn.Problem
        The pooled problem (its ``D``).
    n_pools : int
        Pools averaged.
    law : str
        ``"finite"`` (the finite-D theory) or another law (the Gaussian theory's cost).

    Returns
    -------
    float
        Operations, ``n_pools · (1e9 or 3e7) · max(1, (D/20)³)``.
    """
    per_pool = 1e9 if law == "finite" else 3e7
    return float(n_pools) * per_pool * max(1.0, (pb.D / 20.0) ** 3)


def blas_work(pb, model, law="finite", n_types=8192):
    """Flops of the largest BLAS call of one pool theory, for :func:`linattn._threads.blas_threads`: the type
    averages of the finite-``D`` theory (``n_types × D_z`` times ``D_z × D_z``, ~2·10⁶ at ``D = 10``: one thread,
    where the default threads of a 2-core machine beside other work made each such product 10–40 times slower), or
    the ``D × D`` algebra of the Gaussian theory.

    Parameters
    ----------
    pb : linattn.Problem
    model : {"reduced", "full"}
    law : str
        ``"finite"`` (the type averages; also the structured-task theory) or another law.
    n_types : int
        Prompt types of the finite-``D`` theory.

    Returns
    -------
    float
    """
    Dz = pb.D + (1 if model == "full" else 0)
    return 2.0 * float(n_types) * Dz * Dz if law == "finite" else 2.0 * float(pb.D) ** 3


def pool_sweep(pb, K_max, P, beta, lam, model, law, n_pools, rng):
    """The pool theory averaged over random pools (``pool=None``) as a function ``K ↦ PoolErrors`` for
    ``1 <= K <= K_max``: :func:`pool_errors` at ``K`` with the work that does not depend on ``K`` done once — the
    ``n_draw`` pools of ``K_max`` are drawn here, once, and sliced (nested pools: the first ``K`` tasks of pool ``j``
    are its tasks at ``K``, so the pools and the numbers are those of one ``K`` at a time), the prompt types' Sobol
    draws are shared (cached per seed), and the Gaussian theory of all pools of one ``K`` is batched
    (:mod:`replica._pool_batch`). Arguments checked (``lam`` as :func:`~replica._theory.checked_arguments` returns
    it, ``rng`` an int seed).

    Returns
    -------
    callable
        ``K ↦ PoolErrors`` (``K`` an int in ``[1, K_max]``).
    """
    n_draw = n_pools * (GAUSS_POOLS if law == "finite" else 1)
    big = dataclasses.replace(pb, tasks=int(K_max))
    pools = np.stack([draw_theory_pool(big, rng, j) for j in range(n_draw)])

    def at(K):
        return _pool_errors(dataclasses.replace(pb, tasks=int(K)), P, beta, lam, model, law, None, n_pools, rng, 8192,
                            None, pools=pools[:, :int(K)])

    return at


def draw_theory_pool(pb, rng, j):
    """Pool ``j`` of the theory's pool average: ``draw_pool`` from ``default_rng([rng, D, j])``, so that the first
    ``K`` rows do not depend on ``K`` (nested pools: smooth curves in ``κ``)."""
    return draw_pool(pb, 1, np.random.default_rng([rng, pb.D, j]))[0]


@functools.lru_cache(maxsize=32)
def _theory_types(pb, model, rng, j, n_types):
    """The prompt types of the theory's pool ``j`` (cached: a curve in ``P`` or ``λ`` reuses them)."""
    Z, U = pool_finite._prompt_types(pb, draw_theory_pool(pb, rng, j), model, n_types, [rng, pb.D, j, 1])
    Z.flags.writeable = U.flags.writeable = False
    return Z, U


def pool_arguments(pb, pool, law, rng):
    """The checked ``(pool, rng)`` of the pool theory: the pool against the problem and the law, ``rng`` an int seed
    (a Generator reduced to one draw of it)."""
    if isinstance(pool, str):
        check.choice("pool", pool, ("mp",))
        if law == "finite":
            check.fail("law", law, "'mp' or 'factor' with pool='mp' (the finite-D theory needs the pool's tasks)")
    elif pool is not None:
        pool = check.finite_array("pool", pool, ndim=2)
        if pool.shape != (pb.tasks, pb.D):
            check.fail("pool", f"<array with shape {pool.shape}>", f"an array of shape (K, D) = ({pb.tasks}, {pb.D})")
        if np.any(np.all(pool == 0, axis=1)):
            check.fail("pool", "<array with a zero row>", "tasks with nonzero rows (each task's direction enters)")
        # the theory needs the pool's moments up to |w|⁴ (v₂) and the products of Σ̃ with itself: refuse a pool whose
        # fourth powers (times D², the sums) leave float64's range instead of failing inside an eigensolver
        big = float(np.max(np.abs(pool)))
        limit = (np.finfo(np.float64).max / (16.0 * pb.D**2 * max(pb.N, 1))) ** 0.25
        if not big <= limit:
            check.fail("pool", f"<array with entries up to {big:.3g}>", f"an array with entries of magnitude <= "
                               f"{limit:.3g} (the theory's fourth moments of the tasks must be finite in float64)")
    return pool, check.seed_int("rng", rng)


def pool_errors(pb, P, beta, lam, model="reduced", law="finite", pool=None, n_pools=16, rng=0,
                n_types=8192, N_test=None) -> PoolErrors:
    """Pool theory (module docstring): averaged over random pools (``pool=None``), for one given ``pool``
    (K × D array), or at the pool's large-``D`` spectrum (``pool="mp"``, Gaussian theory only).

    ``law="finite"``: the theory of prompts that are Gaussian given their context (``replica/_pool_finite.py``).
    Its pool average is ``mean_g[E_Gauss] + mean_f[E_finite − E_Gauss]``: the Gaussian theory (cheap) over
    ``32 n_pools`` pools, the difference over the first ``n_pools`` of them (the two theories move together from
    pool to pool, so the difference varies little); ``*_se`` is the resulting standard error.
    ``law="mp"``: the Gaussian theory. ``law="factor"``: the Gaussian theory times the fresh-task factor
    ``E_replica(κ = ∞)/E_Gauss(κ = ∞)`` (the earlier theory, kept as the baseline of the tests).

    Returns
    -------
    PoolErrors
    """
    validate.problem(pb)
    if pb.tasks is None:
        check.fail("pb", pb, "a linattn.Problem with a task pool (tasks=K): the pool theory")
    P, beta = check.real("P", P, low=1.0), check.positive("beta", beta, allow_inf=True)
    check.model(model)
    lam, _ = checked_arguments(pb, P, beta, lam, model, law, "correlated")
    pool, rng = pool_arguments(pb, pool, law, rng)
    n_pools = check.positive_int("n_pools", n_pools, maximum=10_000)     # each pool: one D x D eigenproblem
    return _pool_errors(pb, P, beta, lam, model, law, pool, n_pools, rng, pool_finite.check_types(n_types),
                        check.n_test(N_test))


def _pool_errors(pb, P, beta, lam, model, law, pool, n_pools, rng, n_types, N_test, pools=None):
    """:func:`pool_errors` of checked arguments (``lam`` as :func:`~replica._theory.checked_arguments` returns it,
    ``pool`` and ``rng`` as :func:`pool_arguments` does), with its guard of the work of drawing the pools.
    ``pools``: the random pools ``(n_draw, K, D)`` when the caller drew them (:func:`pool_sweep` slices the largest
    pools of a sweep: nested pools), else they are drawn here."""
    lam_gamma, lam_v = lam if isinstance(lam, tuple) else (lam, lam)
    vs = lam_gamma / lam_v if lam_gamma != lam_v else 1.0       # per-block decay: rescaled v block, common λ_Γ
    keys = ("train", "test", "test_idg", "train_ridge", "test_ridge", "test_idg_ridge", "kappa_eff", "df2")
    drawn_here = False
    if isinstance(pool, str) or pool is not None:       # one pool: the pool-by-pool theory
        sp = (_mp_spectrum(pb, model, v_scale=vs, N_test=N_test) if isinstance(pool, str)
              else _matrix_spectrum(pb, model, task_moments(pb, pool), vs, N_test))
        run = gaussian_errors(pb, P, beta, lam_gamma, model, sp)
        g = {k: np.array([getattr(run, k)]) for k in keys}
        residual, iterations = run.residual, run.iterations
    else:                                               # random pools: the Gaussian theory of all of them at once
        if pools is None:
            n_draw = n_pools * (GAUSS_POOLS if law == "finite" else 1)
            if n_draw * pb.tasks * pb.D > POOL_WORK:       # drawing and reducing the pools is O(n_draw K D)
                check.fail("pb.tasks", pb.tasks, f"K <= {int(POOL_WORK // (n_draw * pb.D))} for a pool average over "
                           f"{n_draw} pools in D = {pb.D} (n_pools = {n_pools}"
                           + (f" times {GAUSS_POOLS} Gaussian-theory pools" if law == "finite" else "")
                           + f"; at most {POOL_WORK:.3g} task entries drawn, about a minute): lower n_pools, or use "
                           "law='mp' with pool='mp' (the pool's large-D spectrum, no pools drawn)")
            pools = np.stack([draw_theory_pool(pb, rng, j) for j in range(n_draw)])
            drawn_here = True
        sp = pool_batch.spectra(pb, model, pool_batch.pool_moments(pb, pools), vs, N_test)
        g, residual, iterations = pool_batch.gaussian_errors(pb, P, beta, lam_gamma, model, sp)
    # standard errors over the pools drawn: nan for one random pool (no spread to estimate it from); 0 for a given
    # pool or pool="mp", whose Gaussian theory involves no sampling
    with np.errstate(over="ignore", invalid="ignore"):     # beyond float64: refused below, by name
        out = {k: float(v.mean()) for k, v in g.items()}
    finite = all(np.isfinite(v).all() for v in g.values())
    ses = {k: mean_se(g[k], single=0.0 if pool is not None else np.nan)[1] if finite else math.nan
           for k in ("train", "test", "test_idg")}
    out["residual"] = residual
    out["iterations"] = iterations
    if law == "finite":
        n_fin = 1 if pool is not None else n_pools
        diffs = {k: [] for k in keys[:6]}
        for j in range(n_fin):
            pl = pool if pool is not None else pools[j]
            # the prompt types: cached per pool where the pools are the problem's own (a curve in P or λ reuses them)
            types = (_theory_types(pb, model, rng, j, n_types) if drawn_here
                     else pool_finite._prompt_types(pb, pl, model, n_types, [rng, pb.D, j, 1]))
            fin = pool_finite._solve(pb, P, beta, lam_gamma, lam_v, model, *types, task_moments(pb, pl), N_test)
            for k in diffs:
                diffs[k].append(fin[k] - g[k][j])
            out["residual"] = max(out["residual"], fin["residual"])
            out["iterations"] = max(out["iterations"], int(fin["iterations"]))
        for k, d in diffs.items():
            out[k] += float(np.mean(d))
        if n_fin > 1:
            ses = {k: float(np.hypot(ses[k], mean_se(diffs[k])[1])) for k in ses}
        else:       # one pool, drawn or given: the finite-D part (its pool, its sampled prompt types) is one draw
            ses = {k: math.nan for k in ses}
    elif law == "factor":
        fresh_pb = dataclasses.replace(pb, tasks=None, task_law="gaussian", assignment="random")
        key = float(lam_gamma) if vs == 1.0 else (float(lam_gamma), float(lam_v))
        factors, residual, steps = _finite_factors(fresh_pb, float(P), float(beta), key, model, N_test)
        for k, src in (("train", "train"), ("test", "test"), ("test_idg", "test"), ("train_ridge", "train_ridge"),
                       ("test_ridge", "test_ridge"), ("test_idg_ridge", "test_ridge")):
            out[k] *= factors[src]
        ses = {k: v * factors["test" if k == "test_idg" else k] for k, v in ses.items()}
        out["residual"] = max(out["residual"], residual)
        out["iterations"] = max(out["iterations"], steps)
    values = [out[k] for k in keys[:6]] + [v for v in ses.values() if not math.isnan(v)]    # nan: not computable
    if not np.all(np.isfinite(values)):     # errors ∝ 1/β beyond float64 (β ~ 1e-308), or a decay as large
        name, value = ("beta", beta) if np.isfinite(beta) and beta < 1.0 else ("lam", lam)
        check.fail(name, value, "a value at which the pool theory's errors and their standard errors are finite in "
                                "float64")
    return PoolErrors(**out, **{k + "_se": v for k, v in ses.items()})


def pool_stationary(pb, P, beta, lam, model="reduced", law="finite", pool=None, n_pools=16, rng=0,
                    N_test=None) -> StationaryTheory:
    """The pool theory as a :class:`~replica.StationaryTheory` (with ``test_idg``); arguments as in
    :func:`replica.stationary`, checked (``lam`` as :func:`~replica._theory.checked_arguments` returns it, ``pool``
    and ``rng`` as :func:`pool_arguments` does).

    Returns
    -------
    StationaryTheory
    """
    import linattn

    e = _pool_errors(pb, P, beta, lam, model, law, pool, n_pools, rng, 8192, N_test)
    return StationaryTheory(problem=pb, P=P, beta=beta, lam=lam, model=model, law=law, train=e.train,
                            test=e.test, train_ridge=e.train_ridge, test_ridge=e.test_ridge,
                            free_energy=e.train_ridge if np.isinf(beta) else None,
                            gap=float(linattn.relative_gap(e.train, e.test)), order=None, converged=True,
                            iterations=e.iterations, residual=float(e.residual), test_idg=e.test_idg, N_test=N_test,
                            train_se=e.train_se, test_se=e.test_se, test_idg_se=e.test_idg_se)


def fresh_limit(pb, P, beta, lam, model, law):
    """The fresh-task (ICL) error of the pool theory of ``law`` in the limit ``K → ∞`` of a pool of Gaussian tasks:
    for ``"finite"`` and ``"factor"`` the replica theory of fresh tasks (:func:`replica.theory.fresh_stationary`;
    the finite-``D`` pool theory tends to it, within 7e-5 relative at ``K = 2¹⁶``, ``D = 10``), for ``"mp"`` the
    Gaussian theory at the moments of fresh tasks (its own limit). Arguments checked (``lam`` as
    :func:`~replica._theory.checked_arguments` returns it); ``pb`` isotropic, with Gaussian tasks.

    Returns
    -------
    float
    """
    fresh_pb = dataclasses.replace(pb, tasks=None, task_law="gaussian", assignment="random")
    if law != "mp":
        return float(fresh_stationary(fresh_pb, P, beta, lam, model).test)
    lam_gamma, lam_v = lam if isinstance(lam, tuple) else (lam, lam)
    v_scale = lam_gamma / lam_v if lam_v else 1.0
    return float(gaussian_errors(fresh_pb, P, beta, lam_gamma, model,
                                 _matrix_spectrum(fresh_pb, model, fresh_moments(fresh_pb), v_scale)).test)


@functools.lru_cache(maxsize=256)
def _finite_factors(fresh_pb, P, beta, lam, model, N_test=None):
    """``E_replica(κ = ∞)/E_Gauss(κ = ∞)`` per error, the replica solver's residual and iterations. Cached: it
    depends on the fresh-task problem only, not on the pool, so a sweep over ``K`` computes it once."""
    shape = fresh_stationary(fresh_pb, P, beta, lam, model, N_test=N_test)
    lam_gamma, lam_v = lam if isinstance(lam, tuple) else (lam, lam)
    v_scale = lam_gamma / lam_v if lam_v else 1.0
    gauss = gaussian_errors(fresh_pb, P, beta, lam_gamma, model,
                            _matrix_spectrum(fresh_pb, model, fresh_moments(fresh_pb), v_scale, N_test))
    def factor(k):      # an interpolator's training error is 0 in both theories (λ = 0, P < M): nothing to correct
        a, g = getattr(shape, k), getattr(gauss, k)
        return 1.0 if a == g == 0.0 else a / g

    return {k: factor(k) for k in ("train", "test", "train_ridge", "test_ridge")}, shape.residual, shape.iterations
