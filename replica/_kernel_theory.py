r"""Theory of the trained kernel learner: ridge regression on ``h = s_φ ⊗ φ(x_q)`` (the long-time limit, ``β = ∞``).

The kernel learner (:mod:`linattn.kernel_learner`; Gu, Xu & Zdeborová) predicts ``ŷ = s_φᵀ Γ φ(x_q)`` with the degree-2
Hermite map ``φ : R^D → R^F`` (``F = D + D(D+1)/2``) and is trained to the ridge solution ``Γ̂`` of
``(1/2P) Σ_μ (y_μ − s_μᵀΓφ_μ)² + (λ/2)‖Γ‖_F²`` (exact per dataset: :mod:`replica.kernel_ridge`). This module predicts
its dataset-averaged training error, fresh-task (ICL) error and, with a task pool (``pb.tasks = K``), in-distribution
(IDG) error, as functions of ``(P, K, N, N_test, λ, link, σ)``. Derivation and measured accuracy:
``docs/kernel_learner.md`` §6–7.

**Exact moments** (:func:`linattn.kernel_learner.kernel_moments`). ``φ(x_q)`` is independent of ``s_φ`` given the
task and ``E[φφᵀ] = I_F``, so ``E[h hᵀ] = S̄ ⊗ I_F`` with ``S̄ = E_w E[s_φ s_φᵀ | w]``, ``E[h y_q] = vec B`` with
``B = E_w m(w) m(w)ᵀ`` (``m(w) = E[y φ(x) | w]``), and every error of ``Γ`` is the quadratic form
``½[V − 2⟨B, Γ⟩ + tr(Γᵀ S̄ Γ)]`` with the moments of the evaluation distribution (fresh tasks at ``N_test`` for ICL,
the pool at ``N_test`` for IDG; the metric ``S̄ ⊗ I_F``).

``law="gaussian"`` — **Gaussian deterministic equivalent** with these exact moments (Bach, SIAM J. Math. Data Sci.
2024; Hastie, Montanari, Rosset & Tibshirani, Ann. Stat. 2022): with ``σ_j`` the eigenvalues of the training
``S̄`` (each ``F`` times), the effective ridge ``κ`` solves ``λ = κ(1 − (F/P) Σ_j σ_j/(σ_j + κ))``, and

.. math::
   \bar Γ = (S̄ + κ)^{-1} B,\qquad
   \mathrm{Cov}(\mathrm{vec}\, Γ̂) = \frac{σ_e² + κ² \mathrm{tr}(Γ_*ᵀ S̄ (S̄ + κ)^{-2} Γ_*)}{P − \mathrm{df}_2}\,
   S̄(S̄ + κ)^{-2} ⊗ I_F,

``Γ_* = S̄^{-1}B``, ``σ_e² = V − tr(BᵀS̄^{-1}B)``, ``df₂ = F Σ_j σ_j²/(σ_j + κ)²``; each error is the quadratic form
at ``Γ̄`` plus the trace of its metric against the covariance, and the training error is ``(λ/κ)²`` times the
in-distribution error at the training moments plus ``(λ/2) E‖Γ̂‖²`` (the Gaussian pool theory of
``replica/_pool_theory.py`` with ``F`` in place of ``D``).

``law="finite"`` (default) — **random scales** (the library's finite-``D`` care, as in ``replica/_pool_finite.py``).
The Gaussian theory fails at finite ``D`` because the features have random scales: ``|φ(x_q)|²`` fluctuates with
``|x_q|²`` (relative s.d. ``≈ 2√(2/D)`` on the quadratic block: 0.63 at ``D = 20``) and ``|s_φ|²`` with the task norm
and the context. The exact structure used:

* *The query, given its norm ``R = |x_q|²``.* ``x_q = √R x̂`` with ``x̂`` uniform on the sphere; the rotations of
  ``x̂`` act on ``φ`` through three irreducible blocks ``k``: the linear block ``L`` (dimension ``d_L = D``), the trace
  direction ``T`` of the quadratic block (``d_T = 1``, :func:`linattn.kernel_learner.trace_direction`) and its
  traceless complement ``Q`` (``d_Q = D(D+1)/2 − 1``), with projectors ``Π_k``. Hence, exactly,
  ``E[φφᵀ | R] = Σ_k (ρ_k(R)/d_k) Π_k`` with ``ρ_L = R``, ``ρ_T = (R − D)²/(2D)``, ``ρ_Q = R²(1 − 1/D)/2`` (the squared
  norms of the three blocks of ``φ(x_q)``, exact given ``R``), and the label's conditional mean is
  ``m_R(w) = E[y φ(x_q) | w, R] = √R F₁ ŵ + \frac{(R − D) F₀}{\sqrt{2D}}\, t + \frac{A}{\sqrt 2}\sqrt{1 − 1/D}\; b̂_w``,
  ``A = R F₂ − R (F₀ − F₂)/(D − 1)``, ``b̂_w`` the unit coordinate vector of ``ŵŵᵀ − I/D``, with
  ``F_j = E_c[c^j f(\sqrt{rR}\, c)]`` over ``c = ŵ·x̂`` (density ``∝ (1 − c²)^{(D−3)/2}``; Gauss–Jacobi on each half of
  ``[−1, 1]``, so kinks at 0 cost nothing), ``r = |w|²/D``, and ``E[y² | w, R] = E_c f(√(rR) c)² + σ²``. Averaged
  over ``R`` these are ``m(w)`` and ``e₀(r)`` of :mod:`linattn.kernel_learner` (tested).
* *A prompt's type* ``t = (context, R)``: conditional on it, the prompt is treated as a Gaussian linear-regression
  sample with the type's exact covariance ``Σ_t = s sᵀ ⊗ Σ_k (ρ_k(R)/d_k) Π_k`` and mean ``E[h y | t] = s ⊗ m_R(w)``
  (the ridge deterministic equivalent of a mixture of Gaussian models: Loureiro, Sicuro, Gerbelot, Pacco, Krzakala
  & Zdeborová, NeurIPS 2021; El Karoui, PTRF 2018). Rotating every query leaves a dataset's law invariant, so the
  averaged resolvent is ``Σ_k A_k ⊗ Π_k`` and the quadratic form ``hᵀ(Σ_k A_k ⊗ Π_k)h = Σ_k ρ_k(R) sᵀA_k s`` is exact
  given the type. **Approximated**: ``φ(x̂)`` is not Gaussian (it lies on a ``(D−1)``-dimensional manifold), and the
  label's residual ``y − hᵀθ_t`` (the degree-≥ 3 spherical harmonics of ``f`` in ``x̂``, and the noise) is treated as
  independent of ``h`` given the type; only the first two moments of ``h`` given ``t`` enter.

The equations (expectations over types; ``R`` by the library's composite rule for ``χ²_D``, contexts sampled from raw
tokens):

.. math::
   ω_t = \Big(1 + \frac1P Σ_k ρ_k(R)\, sᵀA_k s\Big)^{-1},\qquad
   A_k = \Big(λ + E_t\big[ω_t \tfrac{ρ_k(R)}{d_k}\, s sᵀ\big]\Big)^{-1},\qquad
   \bar Γ = Σ_k A_k\, E_t[ω_t\, s\, m_R(w)ᵀ]\, Π_k,

   e_t = E[y² | w, R] − 2 sᵀ\bar Γ m_R(w) + Σ_k \tfrac{ρ_k(R)}{d_k} |Π_k \bar Γᵀ s|² + Σ_k ρ_k(R)\, sᵀC_k s,\qquad
   C_k = \frac1P A_k E_t\big[ω_t² e_t \tfrac{ρ_k(R)}{d_k} s sᵀ\big] A_k,

``Cov(vec Γ̂) ≈ Σ_k C_k ⊗ Π_k``; ``E_t = ½ E_t[ω_t² e_t] + (λ/2)(‖Γ̄‖² + Σ_k d_k tr C_k)`` and each test error is
``½[V − 2⟨B, Γ̄⟩ + tr(Γ̄ᵀS̄Γ̄) + Σ_k d_k tr(S̄ C_k)]`` at its exact moments. Replacing ``ω_t`` by a constant gives back
the Gaussian theory; with ``φ(x) = x`` (one block) the equations are the library's replica theory of the reduced
model (:func:`replica.stationary`, tested).

*Fresh tasks* (:func:`replica._kernel_solver.fresh_finite`): the context is rotation invariant too, so
``A_k = Σ_l a_{lk} Π_l``, ``Γ̄ = Σ_l γ_l Π_l``, ``Cov = Σ_{lk} c_{lk} Π_l ⊗ Π_k``, and the equations close on the
``3 × 3`` scalars ``a``, ``c`` and three ``γ``; a context enters through its block norms ``σ_l = |Π_l s|²`` and its
overlaps ``p_l = Π_l s · u_l(w)`` with the directions of ``m_R(w)`` (:func:`linattn.kernel_learner.block_directions`).
Contexts are stratified over the task norm (equal numbers at the nodes of the ``χ²_D/D`` rule, weighted by it);
``*_se`` is the spread of the theory over 4 disjoint groups of contexts, divided by 2. The averages are plain sample
means: control variates with the exact moments (``E[x σ] ≈ x̄ E σ + mean((x − x̄)σ)``, as in ``replica/_pool_finite.py``)
multiplied the sampling error by up to 25 at ``D = 6``, because the block norms are heavy-tailed there (relative s.d.
up to 1.8 for ``relu``) while ``ωσ`` is bounded.

*A pool* (:func:`replica._kernel_solver.matrix_finite`): the ``A_k`` and ``C_k`` are ``F × F`` matrices (Anderson
mixing for ``A``, GMRES for ``C``), on ``2¹³`` contexts drawn from the pool's tasks in turn. The average over random
pools uses the Gaussian theory as a control variate, as :func:`replica._pool_theory.pool_errors` does: ``mean over 32
n_pools pools of E_Gauss + mean over n_pools of (E_finite − E_Gauss)``.

``law="mp"`` — the **baseline**: the linear-attention equivalence applied to the kernel learner. The features
``φ(x)`` are replaced by Gaussian tokens ``N(0, I_F)`` and the labels by the linear surrogate in feature space, a
teacher of strength ``b_φ = E|m(w)|² = tr B`` and noise ``V − b_φ``: the library's reduced linear-attention model in
dimension ``F`` (:func:`_equivalent_problem`), whose features have the isotropic covariance ``c I_{F²}``,
``c = (N + F + 1) b_φ/(N F) + (V − b_φ)/N`` (conventions §2), solved by its Marchenko–Pastur theory
(:func:`replica.stationary` with ``law="mp"``; with a pool, ``pool="mp"``).

This module is the entry (:func:`kernel_learner_theory`); the prompt types (query scales, label moments, sampled
contexts) are in :mod:`replica._kernel_types`, the Gaussian and random-scale solvers in :mod:`replica._kernel_solver`,
and the ridge law of the linear map (:func:`replica._ridge_law.ridge_law`) in :mod:`replica._ridge_law`.
"""
from __future__ import annotations

import numpy as np
from tqdm import tqdm

import linattn
from linattn import _check as check
from linattn import _links as links
from linattn._check import PROGRESS_DELAY
from linattn._errors import ConvergenceError
from linattn._kernel_errors import kernel_moments, n_features
from linattn._numerics.stats import mean_se

from ._kernel_solver import fresh_finite, gaussian_errors, matrix_finite
from ._kernel_types import contexts_memory, pool_types
from ._learner_common import LearnerTheory
from ._pool_theory import GAUSS_POOLS, draw_theory_pool

LAWS = ("finite", "gaussian", "mp")


# --------------------------------------------------------------------------- the public entry point
def _equivalent_problem(pb, features):
    """The baseline's linear-attention problem (module docstring): dimension ``F``, Gaussian tokens, a linear link of
    slope ``√(E|m|²)`` and noise ``√(V − E|m|²)``, the pool size of ``pb``."""
    km = kernel_moments(pb, features)
    b = float(np.trace(km.B))
    return linattn.Problem(n_features(pb.D, features), pb.N, float(np.sqrt(max(km.V - b, 0.0))),
                           links.Link.linear(float(np.sqrt(b))), tasks=pb.tasks)


def kernel_learner_theory(pb, P, lam, N_test=None, law="finite", pool=None, n_pools=8, n_contexts=None,
                          rng=0, progress=False) -> LearnerTheory:
    r"""Dataset-averaged train and test errors of the trained kernel learner (module docstring); the public entry
    point is :func:`replica.learner_theory` (``learner="kernel"``), which documents the arguments and checks them but
    ``law``, ``pool`` and ``n_contexts``, checked here.

    Parameters
    ----------
    pb, P, lam, N_test, law, pool, n_pools, n_contexts, rng, progress
        As in :func:`replica.learner_theory` (``n_pools`` an int, ``rng`` an int seed).

    Returns
    -------
    LearnerTheory

    Raises
    ------
    ValueError
        Bad input.
    linattn.ConvergenceError
        A fixed point or the covariance equation was not solved.
    """
    check.choice("law", law, LAWS)
    features = "hermite2"
    if n_contexts is not None:
        n_contexts = check.positive_int("n_contexts", n_contexts, minimum=64, maximum=2**22)
    if pool is not None:
        if pb.tasks is None:
            check.fail("pool", "<array>", "None for a problem with fresh tasks (pb.tasks = None)")
        pool = check.finite_array("pool", pool, shape=(pb.tasks, pb.D))
    common = dict(problem=pb, P=P, lam=lam, learner="kernel", law=law, N_test=N_test)
    if law == "finite":
        contexts_memory(pb.D, n_contexts or (2**16 if pb.tasks is None else 2**13), features)
    if law == "mp":
        from ._stationary import stationary
        eq = _equivalent_problem(pb, features)
        th = stationary(eq, P, np.inf, lam, law="mp", pool=None if pb.tasks is None else "mp", N_test=N_test)
        return LearnerTheory(**common, train=th.train, test=th.test, test_idg=th.test_idg, train_se=0.0, test_se=0.0,
                             test_idg_se=None if pb.tasks is None else 0.0, kappa_eff=None, iterations=th.iterations,
                             residual=th.residual)
    fresh_test = kernel_moments(pb, features, N=N_test)
    metric_fresh = (fresh_test.S, fresh_test.B, fresh_test.V)
    if pb.tasks is None:
        km = kernel_moments(pb, features)
        g = gaussian_errors(km.S, km.B, km.V, P, lam, [metric_fresh])
        if law == "gaussian":
            return LearnerTheory(**common, train=g["train"], test=g["errors"][0], test_idg=None, train_se=0.0,
                                 test_se=0.0, test_idg_se=None, kappa_eff=g["kappa"], iterations=0,
                                 residual=g["residual"])
        full, se = fresh_finite(pb, P, lam, features, N_test, n_contexts or 2**16, rng)
        if not np.all(np.isfinite([full["train"], full["test"], se["train"], se["test"]])):
            raise ConvergenceError(f"learner_theory: the kernel learner's theory gave non-finite errors at lam = "
                                   f"{lam!r} (below the resolution of its equations; raise lam)")
        return LearnerTheory(**common, train=full["train"], test=full["test"], test_idg=None, train_se=se["train"],
                             test_se=se["test"], test_idg_se=None, kappa_eff=g["kappa"],
                             iterations=full["iterations"], residual=max(full["residual"], g["residual"]))
    if pool is not None:
        pools = [pool]
    else:       # the Gaussian theory over GAUSS_POOLS times as many pools: a control variate (below)
        pools = [draw_theory_pool(pb, rng, j) for j in range(n_pools * (GAUSS_POOLS if law == "finite" else 1))]
    gauss, diffs, kappas, its, resid = [], [], [], 0, 0.0
    n_finite = 1 if pool is not None else n_pools
    ctx_se = np.zeros(3)
    bar = dict(desc=f"kernel learner theory, {len(pools)} pools", disable=not progress, leave=False,
               delay=PROGRESS_DELAY)
    for j, W in enumerate(tqdm(pools, **bar)):
        km = kernel_moments(pb, features, pool=W)
        kt = kernel_moments(pb, features, pool=W, N=N_test) if N_test not in (None, pb.N) else km
        metrics = [metric_fresh, (kt.S, kt.B, kt.V)]
        g = gaussian_errors(km.S, km.B, km.V, P, lam, metrics)
        gauss.append([g["train"], *g["errors"]])
        kappas.append(g["kappa"])
        resid = max(resid, g["residual"])
        if law == "finite" and j < n_finite:
            s, task = pool_types(pb, W, n_contexts or 2**13, np.random.default_rng([rng, pb.D, j, 2]), features)
            out = matrix_finite(pb, P, lam, features, s, W, task, metrics)
            diffs.append([out["train"] - g["train"], *(np.array(out["errors"]) - g["errors"])])
            its, resid = max(its, out["iterations"]), max(resid, out["residual"])
            if n_finite == 1:   # one pool: the contexts' sampling error from 4 disjoint contiguous groups (each
                # cycles through the pool's tasks like the whole sample), as for fresh tasks
                parts = [matrix_finite(pb, P, lam, features, s[idx], W, task[idx], metrics)
                         for idx in np.array_split(np.arange(len(task)), 4)]
                ctx_se = mean_se([[q["train"], *q["errors"]] for q in parts], axis=0)[1]
    # over the pools: nan for one random pool (no spread to estimate it from), 0 for a given pool (no sampling)
    mean, se = mean_se(gauss, axis=0, single=0.0 if pool is not None else np.nan)
    if law == "finite":         # mean_g[E_Gauss] + mean_f[E_finite − E_Gauss] (the two move together pool to pool)
        diffs = np.array(diffs)
        mean = mean + diffs.mean(axis=0)
        if len(diffs) > 1:
            se = np.hypot(se, mean_se(diffs, axis=0)[1])
        else:
            se = np.hypot(se, ctx_se)
    if not np.all(np.isfinite(mean)) or np.any(np.isinf(se)):        # a nan se: not computable (one random pool)
        raise ConvergenceError(f"learner_theory: the kernel learner's theory gave non-finite errors at lam = {lam!r} "
                               "(below the resolution of its equations; raise lam)")
    return LearnerTheory(**common, train=float(mean[0]), test=float(mean[1]), test_idg=float(mean[2]),
                         train_se=float(se[0]), test_se=float(se[1]), test_idg_se=float(se[2]),
                         kappa_eff=float(np.mean(kappas)), iterations=int(its), residual=float(resid))
