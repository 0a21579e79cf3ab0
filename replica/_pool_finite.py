r"""Finite-``D`` theory of ridge regression with a task pool: prompts that are Gaussian given their context.

Given the pool ``w_1 … w_K``, a prompt's features are ``h = z ⊗ x_q`` with the context statistics
``z = [s; y2]`` (``z = s`` for the reduced model) independent of the query ``x_q ~ N(0, I_D)``, and its label is
``y_q = u·x_q + σε`` with ``u = a w_k/√D`` (link ``f(u) = a u``). Hence, **given its type** ``t = (z, k, r = |x_q|²)``,
a prompt is an exactly linear-Gaussian regression sample in the direction ``x̂_q`` (uniform on the sphere):
``h = z ⊗ x_q`` and ``y_q = hᵀθ_t + σε`` with the type's own teacher ``Θ_t = z uᵀ/|z|²`` (``Θ = [Γ; vᵀ]`` is
``(D_z × D)``, ``ŷ = zᵀΘx_q``). The pooled dataset is a mixture over types, and ridge regression on a mixture of
Gaussian linear models has a deterministic equivalent with one leave-one-out factor per type (Loureiro, Sicuro,
Gerbelot, Pacco, Krzakala & Zdeborová, *Learning Gaussian mixtures with generalized linear models: precise
asymptotics in high dimensions*, NeurIPS 2021; the elliptical case: El Karoui, *Asymptotic behavior of unregularized
and ridge regularized high-dimensional robust regression estimators*, PTRF 2018). Rotating every query by one
``O ∈ O(D)`` leaves a dataset's law invariant, so the averaged resolvent is ``Q ⊗ I_D`` with a ``D_z × D_z``
matrix ``Q``, every type's quadratic form is ``hᵀ(Q ⊗ I)h = r zᵀQz`` exactly, and the equations close on
``D_z × D_z`` matrices (``Λ = diag(λ_Γ, …, λ_Γ, λ_v)``: per-block weight decay is native):

.. math::
   ω_t = \Big(1 + \frac{r\, zᵀQz}{P}\Big)^{-1},\qquad
   Q = \Big(Λ + E_t\big[ω_t \tfrac{r}{D}\, z zᵀ\big]\Big)^{-1},\qquad
   \bar Θ = Q\, E_t\big[ω_t \tfrac{r}{D}\, z uᵀ\big],

   e_t = σ² + \tfrac{r}{D}\,|u − \bar Θᵀ z|² + r\, zᵀ C z,\qquad
   C = \frac1P\, Q\, E_t\big[ω_t² e_t \tfrac{r}{D}\, z zᵀ\big]\, Q,

where ``e_t`` is the leave-one-out error of a type and ``C ⊗ I_D`` the covariance of ``Θ̂`` over datasets (only its
``x``-traces enter the errors, and those are exact for the sphere's fourth moments). The errors:

.. math::
   E_t = ½ E_t[ω_t² e_t] + ½ \mathrm{tr}\,Λ(\bar Θ \bar Θᵀ + D C),\quad
   E_{\rm ICL} = ½\big[V − 2b\,\mathrm{tr}\bar Γ/D + c(‖\bar Γ‖² + D\,\mathrm{tr}\,C_{ΓΓ})
                 + c_v(|\bar v|² + D C_{vv})\big],

   E_{\rm IDG} = ½\big[E y² − 2\,\mathrm{tr}(\bar ΘᵀB) + \mathrm{tr}(\bar ΘᵀΣ̃\bar Θ) + D\,\mathrm{tr}(Σ̃ C)\big]

(``Σ̃``, ``B``: the pool's exact moments, :func:`linattn.pools.moment_matrices`); at finite ``β`` the thermal parts are
``M/(2β)``, ``D tr(C̃ Q)/(2β)`` and ``D tr(Σ̃ Q)/(2β)``. The expectation over types is a quadrature of the exact
one-prompt law given the pool: ``r ~ χ²_D`` by the composite rule of
:func:`linattn._numerics.quadrature.chi_square_rule`, and ``z`` given its task by a scrambled Sobol
sample of the context's exact representation (:func:`linattn.pools.context_statistics`), the tasks stratified.
Special cases: with fresh tasks (a pool of ``K → ∞`` types) the equations reproduce the library's replica theory
(:func:`replica._theory.fresh_stationary`, measured within 0.15 %, ``docs/pools.md``); with ``ω_t`` replaced by
its mean (Gaussian features) they are the Gaussian pool theory.

Minimum-norm limit (``λ = 0``, ``P < M``): ``Q`` diverges like ``1/λ``; the solver works with ``Q̃ = sQ`` and
``ω̃ = ω/s`` (``s = λ_Γ`` when ``P < M``, else 1), in which the equations stay finite at ``λ = 0``.
"""
from __future__ import annotations

import dataclasses
import functools
import numbers

import numpy as np
from scipy import special, stats

from linattn import _check as check
from linattn import _validate as validate
from linattn._errors import ConvergenceError
from linattn._numerics import quadrature
from linattn._numerics.fixed_point import anderson
from linattn._task_moments import moment_matrices

from . import _pool_kernels as kernels
from ._linear_solve import solve_covariance

MAX_ITERATIONS = 5_000
TOLERANCE = 1e-11
#: the largest part of the variance term ``D tr(Σ̃ C)`` that the negative eigenvalues of the solved ``C`` may carry.
#: ``C`` is a covariance over datasets; the type average of its source ``A0`` uses the exact moment ``Σ̃`` as a
#: control variate, which is not positivity-preserving: where the weights ``ω̃²`` of the types are heavy-tailed
#: (below the interpolation threshold at small ``λ`` in small ``D``) the estimate of ``A0``, and so ``C``, can lose
#: positivity, and the errors built from it are wrong (a test error of 11.6 at ``D = 3``, ``K = 2``, ``P = 8``,
#: ``M = 9``, ``λ = 1e-6``, where exact ridge averages give 71 ± 7). Measured: at most 2.7e-8 over the 356 solves of
#: the quick pool and structured-task experiments, 0.11–130 at the unresolved points.
NEGATIVE_VARIANCE = 1e-3


#: Gauss–Legendre nodes per panel of the ``χ²_D`` rule (:func:`linattn._numerics.quadrature.chi_square_rule`): the
#: averages ``E_r[r/(c + r/D)]`` of the resolvent equation to ``<= 1e-14`` at any ``D`` (the 32-node Gauss–Laguerre
#: rule used before: ``5e-2`` at ``D = 1``, ``1e-5`` at ``D = 6``; tests/linattn/test_quadrature.py). 12 nodes per
#: panel (147 kept at ``D = 20``) give the pool theory's errors within ``3e-15`` relative of 32 nodes (393 kept) at
#: ``D = 2, 6, 20``, 3–4 times faster (the resolvent step is ``O(n_types · nodes)``).
R_NODES = 12
#: below this ``D`` the ``χ²_D`` density is singular or sharply peaked near ``r = 0`` (``r^{D/2 − 1}``): 32 nodes
#: per panel
#: there (12 nodes miss the ``1e-12`` of the resolvent average at ``D = 1, 2`` and ``c = 0.01``)
R_NODES_SMALL_D, SMALL_D = 32, 3


@functools.lru_cache(maxsize=64)
def _radius_nodes(D):
    """Nodes ``r = |x_q|² ~ χ²_D`` and weights (:data:`R_NODES` per panel), nodes of weight below ``1e-18`` of the
    largest dropped (their mass is below ``1e-15``)."""
    r, w = quadrature.chi_square_rule(D, R_NODES_SMALL_D if D < SMALL_D else R_NODES)
    keep = w > 1e-18 * w.max()
    return D * r[keep], w[keep] / w[keep].sum()


def _seed(seed):
    """``seed`` if numpy can seed a generator with it: None, a Generator, a non-negative integer or a non-empty
    sequence of them (else a ValueError naming seed, not numpy's words)."""
    def is_count(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) and v >= 0

    if seed is None or isinstance(seed, np.random.Generator) or is_count(seed):
        return seed
    if isinstance(seed, (tuple, list)) and seed and all(is_count(v) for v in seed):
        return seed
    check.fail("seed", seed, "None, a non-negative integer, a non-empty sequence of them, or a numpy.random.Generator")


def prompt_types(pb, pool, model, n_types, seed):
    """A stratified scrambled-Sobol sample of the context statistics of prompts drawn from ``pool``.

    Each type is one point of a scrambled Sobol sequence in ``D + 2`` dimensions: its task ``⌊u_0 K⌋``, and its context
    ``z``, the exact function of ``(χ²_N, ζ ∈ R^D)`` of :func:`linattn.pools.context_statistics`, through the inverse
    CDFs of the other coordinates.

    Parameters
    ----------
    pb : linattn.Problem
        With a task pool (``tasks=K``).
    pool : array_like (K, D)
        The pool's tasks (nonzero rows).
    model : {"reduced", "full"}
    n_types : int
        Sobol points (``<= 2**20``).
    seed : None, int, sequence of int or numpy.random.Generator
        Seed of the scrambling (a non-negative integer, a non-empty sequence of them, or a Generator; ``None``:
        fresh entropy).

    Returns
    -------
    Z : ndarray (n_types, D_z)
    U : ndarray (n_types, D)
        The teachers ``u = a w/√D``.

    Raises
    ------
    ValueError
        Bad input (the argument is named).
    """
    pb = validate.problem(pb)
    if pb.tasks is None:
        check.fail("pb", pb, "a Problem with a task pool (tasks=K)")
    model = check.model(model)
    pool = check.finite_array("pool", pool, ndim=2)
    if pool.shape[1] != pb.D or pool.shape[0] < 1:
        check.fail("pool", f"<array with shape {pool.shape}>", f"an array of shape (K, {pb.D}), K >= 1")
    if np.any(np.all(pool == 0, axis=1)):
        check.fail("pool", f"<array whose row {int(np.flatnonzero(np.all(pool == 0, axis=1))[0])} is zero>",
                   f"an array of shape (K, {pb.D}) without a zero row (every task's direction enters)")
    return _prompt_types(pb, pool, model, check.positive_int("n_types", n_types, maximum=2**20), _seed(seed))


def _prompt_types(pb, pool, model, n_types, seed):
    """:func:`prompt_types` of checked arguments, with its memory guard."""
    from linattn._idg import context_statistics

    D, N = pb.D, pb.N
    check.memory(8.0 * n_types * (6 * D + 12), f"{n_types} prompt types of dimension D = {D}", "n_types")
    K = pool.shape[0]
    if isinstance(seed, (tuple, list)):      # a seed sequence: the same draws for every pool size (cached)
        u0, chi2, zeta = _sobol_draws(D, N, n_types, tuple(int(v) for v in seed))
    else:
        u0, chi2, zeta = _sobol_draws.__wrapped__(D, N, n_types, seed)
    task = np.minimum((u0 * K).astype(int), K - 1)   # the task from one coordinate (not i mod K: a stride
    W = pool[task]                                    # through a Sobol sequence biases its other coordinates)
    s, y2 = context_statistics(pb, W, chi2, zeta)
    Z = np.concatenate([s, y2[:, None]], axis=1) if model == "full" else s
    return Z, float(pb.link.slope) * W / np.sqrt(D)


@functools.lru_cache(maxsize=16)
def _sobol_draws(D, N, n_types, seed):
    """The pool-independent part of :func:`prompt_types`: a scrambled Sobol sample in ``D + 2`` dimensions, its
    first coordinate (which picks the task), and the inverse CDFs of ``χ²_N`` and ``N(0, 1)`` of the others (cached by
    seed: a sweep over pool sizes draws them once)."""
    sob = stats.qmc.Sobol(d=D + 2, scramble=True, seed=np.random.default_rng(seed))
    pts = sob.random(n_types)
    pts = np.clip(pts, 1e-15, 1 - 1e-15)     # a scrambled point is never 0 or 1; guard the ppf's infinite ends
    u0, chi2, zeta = pts[:, 0], special.chdtri(N, 1.0 - pts[:, 1]), special.ndtri(pts[:, 2:])
    for a in (u0, chi2, zeta):
        a.flags.writeable = False            # shared by the cache
    return u0, chi2, zeta


def solve(pb, P, beta, lam, model, Z, U, moments, N_test=None, metrics=None):
    r"""Solve the type equations of the module docstring for one pool and return the errors.

    Parameters
    ----------
    pb : linattn.Problem
    P : float
    beta : float
        Inverse temperature ``β > 0`` (``numpy.inf``: zero temperature).
    lam : float or (float, float)
        Weight decay ``λ``, or per block ``(λ_Γ, λ_v)`` for ``model="full"`` (both 0, or both > 0).
    model : {"reduced", "full"}
    Z, U : ndarray
        The types (:func:`prompt_types`).
    moments : linattn.pools.TaskMoments
        The pool's task moments (:func:`linattn.pools.task_moments`; ``Σ̃``, ``B``, ``E y²`` from
        :func:`linattn.pools.moment_matrices`).
    N_test : int, optional
        Context length of the test prompts (default: the training length ``pb.N``): the ICL metric ``c, c_v`` and
        the in-distribution metric ``Σ̃`` at ``N_test`` (the mean and covariance of ``Θ̂`` are those of training).
    metrics : dict, optional
        Further test errors, name → :class:`linattn.pools.TaskMoments` of the test tasks (fresh tokens and noise):
        ``½[E y² − 2 tr(Θ̄ᵀB) + tr(Θ̄ᵀΣ̃Θ̄) + D tr(Σ̃C)]`` with that law's ``(Σ̃, B, E y²)`` at ``N_test``
        (:func:`linattn.pools.moment_matrices`), plus ``D tr(Σ̃Q)/(2β)`` at finite ``β``. With a task covariance
        (``pb.task_covariance``), ``test`` is this error for fresh tasks from ``N(0, S)``.

    Returns
    -------
    dict
        ``train``, ``test``, ``test_idg``, one entry per name of ``metrics``, their ``*_ridge`` parts,
        ``iterations``, ``residual``, and ``mean``: the mean ``Θ̄`` (``D_z × D``) of the ridge solution.

    Raises
    ------
    linattn.ConvergenceError
        If the fixed point of ``Q`` or of ``C`` is not reached in ``MAX_ITERATIONS`` iterations.
    """
    pb = validate.problem(pb)
    model = check.model(model)
    P = check.real("P", P, low=1.0)
    beta = check.positive("beta", beta, allow_inf=True)
    lam_gamma, lam_v = check.block_lambdas(lam, model)
    N_test = check.n_test(N_test)
    D = pb.D
    Dz = D + (1 if model == "full" else 0)
    Z = check.finite_array("Z", Z, ndim=2)
    if Z.shape[1] != Dz or Z.shape[0] < 1:
        check.fail("Z", f"<array with shape {Z.shape}>", f"an array of shape (n_types, {Dz}) for model={model!r}")
    U = check.finite_array("U", U, shape=(Z.shape[0], D))
    return _solve(pb, P, beta, lam_gamma, lam_v, model, Z, U, moments, N_test, metrics)


def _solve(pb, P, beta, lam_gamma, lam_v, model, Z, U, moments, N_test=None, metrics=None):
    """:func:`solve` of checked arguments (the decay as the pair ``(λ_Γ, λ_v)``), with its refusal of ``P`` at the
    interpolation threshold."""
    D = pb.D
    Dz = D + (1 if model == "full" else 0)
    n = Z.shape[0]
    M = D * Dz
    if lam_gamma == 0 and (abs(P - M) < 0.5 or (P < M and not np.isinf(beta))):
        check.fail("P", P, f"!= M = {M} at lam = 0 (and > M at finite beta)")
    St, B, Ey2 = moment_matrices(pb, model, moments)
    pbt = pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)
    St_test = St if pbt is pb else moment_matrices(pbt, model, moments)[0]
    lam = np.full(Dz, float(lam_gamma))
    if model == "full":
        lam[-1] = lam_v
    if P >= M:                  # Q̃ = s Q, ω̃ = ω/s (module docstring)
        scale, lam_s = 1.0, lam
    elif lam_gamma > 0:
        scale, lam_s = float(lam_gamma), lam / lam_gamma
    else:                       # λ = 0, P < M: the min-norm limit of a common λ → 0
        scale, lam_s = 0.0, np.ones(Dz)
    r, wr = _radius_nodes(D)
    rD = r / D

    ZT = np.ascontiguousarray(Z.T)

    def average(weights, right):
        """``E[w z rightᵀ]`` with the exact moment as control variate: ``w̄ E[z rightᵀ] + mean((w − w̄) z rightᵀ)``."""
        wbar = float(weights.mean())
        if right is Z:
            return wbar * St + kernels.weighted_gram(ZT, weights - wbar)
        return wbar * B + (Z.T * (weights - wbar)) @ right / n

    wrD = wr * rD

    def g(Qc):              # one step of the resolvent equation: E_r[ω̃ r/D] per type, ω̃ = 1/(s + r zᵀQz/P)
        weights = kernels.first_moment(kernels.quadratic_forms(ZT, Qc), r, wrD, scale, P)
        return np.linalg.inv(np.diag(lam_s) + average(weights, Z))

    fp = anderson(g, np.linalg.inv(np.diag(lam_s) + St), TOLERANCE, MAX_ITERATIONS,
                  project=lambda c: 0.5 * (c + c.T), valid=lambda c: bool(np.all(np.linalg.eigvalsh(c) > 0)))
    Q, iterations, res = fp.x, fp.iterations, fp.residual
    if not fp.converged:
        raise ConvergenceError(f"pool theory (finite D): the resolvent fixed point did not converge in "
                               f"{MAX_ITERATIONS} iterations (residual {res:.3g}; P = {P:g}, M = {M})")
    qf = kernels.quadratic_forms(ZT, Q)
    Theta = Q @ average(kernels.first_moment(qf, r, wrD, scale, P), U)
    resid = U - Z @ Theta
    b2 = np.einsum("pd,pd->p", resid, resid)
    # E_r[ω̃² (r/D) (σ² + (r/D)|u − Θᵀz|²)] and E_r[ω̃² (r/D) r] per type
    w_const, w_lin = kernels.second_moments(qf, b2, r, wr, float(D), float(pb.noise**2), scale, P)
    A0 = Q @ average(w_const, Z) @ Q / P

    def L(c):               # C ↦ (1/P) Q E[w_lin (zᵀCz) z zᵀ] Q on vec(C)
        Cm = c.reshape(Dz, Dz)
        return (Q @ average(w_lin * kernels.quadratic_forms(ZT, Cm), Z) @ Q / P).ravel()

    # C − L(C) = A0; A0 ~ Q² underflows to 0 at λ ≳ 1e154, then C = 0 exactly (replica.linear_solve)
    c, info, res_c = solve_covariance(L, A0.ravel(), TOLERANCE, 60, MAX_ITERATIONS // 60)
    if info != 0 or not res_c < 1e3 * TOLERANCE:
        raise ConvergenceError(f"pool theory (finite D): the covariance equation was not solved (GMRES info {info}, "
                               f"relative residual {res_c:.3g}; P = {P:g}, M = {M}: close to the interpolation "
                               "threshold?)")
    C = c.reshape(Dz, Dz)
    _require_covariance(C, St, D, P, M, lam_gamma)
    # mean over types of E_r[ω² e], e = σ² + (r/D) b2 + r zᵀCz (s ω̃ = ω: no s² overflow at λ ~ 1e300)
    fit = float(kernels.fit_error(qf, b2, kernels.quadratic_forms(ZT, C), r, wr, float(D), float(pb.noise**2),
                                  scale, P))
    train = 0.5 * fit + 0.5 * float(np.sum(lam[:, None] * Theta**2)) + 0.5 * D * float(lam @ np.diag(C))
    def law_error(Sm, Bm, Ey2m):      # ½[E y² − 2 tr(Θ̄ᵀB) + tr(Θ̄ᵀΣ̃Θ̄) + D tr(Σ̃C)] and its thermal part
        ridge = 0.5 * (Ey2m - 2.0 * float(np.sum(Theta * Bm)) + float(np.sum(Theta * (Sm @ Theta)))
                       + D * float(np.sum(Sm * C)))
        return ridge, (0.0 if np.isinf(beta) else D * float(np.sum(Sm * Q)) / (2 * beta * scale))

    laws = dict(metrics or {})
    if pb.task_covariance is not None:          # fresh tasks from N(0, S): the law's exact moments
        from linattn._task_covariance import gaussian_moments

        laws["test"] = gaussian_moments(pb)
    else:
        G = Theta[:D]
        norm = pbt.feature_variance * (float(np.sum(G * G)) + D * float(np.trace(C[:D, :D])))
        Cd = np.full(Dz, pbt.feature_variance)
        if model == "full":
            norm += pbt.feature_variance_v * (float(Theta[D] @ Theta[D]) + D * float(C[D, D]))
            Cd[D] = pbt.feature_variance_v
        test = float(pb.test_error_from_moments(pb.teacher_strength * float(np.trace(G)) / D, norm))
    idg, idg_t = law_error(St_test, B, Ey2)
    out = dict(train_ridge=train, test_idg_ridge=idg, iterations=iterations, residual=max(res, res_c), mean=Theta)
    for name, mo in laws.items():
        ridge, thermal = law_error(*moment_matrices(pbt, model, mo))
        out.update({name + "_ridge": ridge, name: ridge + thermal})
    if pb.task_covariance is None:
        out.update(test_ridge=test, test=test + (0.0 if np.isinf(beta) else
                                                 D * float(Cd @ np.diag(Q)) / (2 * beta * scale)))
    # (H + Λ)⁻¹ ≈ (Q̃/s) ⊗ I_D at finite β
    out.update(train=train + (0.0 if np.isinf(beta) else M / (2 * beta)), test_idg=idg + idg_t)
    return out


def _require_covariance(C, St, D, P, M, lam_gamma):
    """Raise :class:`~linattn.ConvergenceError` when the negative eigenvalues of the solved covariance ``C`` carry more
    than :data:`NEGATIVE_VARIANCE` of the variance term ``D tr(Σ̃ C)``: the type average did not resolve it."""
    ev, V = np.linalg.eigh(0.5 * (C + C.T))
    if ev[0] >= 0:
        return
    parts = [D * float(np.sum(St * ((V[:, m] * ev[m]) @ V[:, m].T))) for m in (ev < 0, ev > 0)]
    negative, positive = -parts[0], parts[1]
    if negative > NEGATIVE_VARIANCE * positive:
        raise ConvergenceError(
            f"pool theory (finite D): the average over prompt types did not resolve the covariance of the solution "
            f"over datasets at P = {P:g}, lam = {lam_gamma:g} (M = {M}): its negative eigenvalues carry "
            f"{negative / max(positive, np.finfo(float).tiny):.3g} of its variance term (more than "
            f"{NEGATIVE_VARIANCE:g}), so the errors built from it would be wrong. The types' weights are heavy-tailed "
            "below the interpolation threshold at small lam in small D: move P away from M, raise lam, or use "
            "law='mp' (Gaussian features)")


def check_types(n_types):
    """``n_types``: a power of two ``>= 256`` (Sobol points are balanced in powers of two)."""
    n_types = check.positive_int("n_types", n_types, minimum=256, maximum=2**20)
    if n_types & (n_types - 1):
        check.fail("n_types", n_types, "a power of two between 256 and 2**20 (Sobol points)")
    return n_types
