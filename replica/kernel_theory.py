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
:mod:`replica.pool_theory` with ``F`` in place of ``D``).

``law="finite"`` (default) — **random scales** (the library's finite-``D`` care, as in :mod:`replica.pool_finite`).
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

*Fresh tasks* (:func:`_fresh_finite`): the context is rotation invariant too, so ``A_k = Σ_l a_{lk} Π_l``, ``Γ̄ = Σ_l
γ_l Π_l``, ``Cov = Σ_{lk} c_{lk} Π_l ⊗ Π_k``, and the equations close on the ``3 × 3`` scalars ``a``, ``c`` and three
``γ``; a context enters through its block norms ``σ_l = |Π_l s|²`` and its overlaps ``p_l = Π_l s · u_l(w)`` with the
directions of ``m_R(w)`` (:func:`linattn.kernel_learner.block_directions`). Contexts are stratified over the task norm
(equal numbers at the nodes of the ``χ²_D/D`` rule, weighted by it); ``*_se`` is the spread of the theory over 4
disjoint groups of contexts, divided by 2. The averages are plain sample means: control variates with the exact
moments (``E[x σ] ≈ x̄ E σ + mean((x − x̄)σ)``, as in :mod:`replica.pool_finite`) multiplied the sampling error by up
to 25 at ``D = 6``, because the block norms are heavy-tailed there (relative s.d. up to 1.8 for ``relu``) while ``ωσ``
is bounded.

*A pool* (:func:`_matrix_finite`): the ``A_k`` and ``C_k`` are ``F × F`` matrices (Anderson mixing for ``A``, GMRES
for ``C``), on ``2¹³`` contexts drawn from the pool's tasks in turn. The average over random pools uses the Gaussian
theory as a control variate, as :func:`replica.pool_theory.pool_errors` does: ``mean over 32 n_pools pools of
E_Gauss + mean over n_pools of (E_finite − E_Gauss)``.

``law="mp"`` — the **baseline**: the linear-attention equivalence applied to the kernel learner. The features
``φ(x)`` are replaced by Gaussian tokens ``N(0, I_F)`` and the labels by the linear surrogate in feature space, a
teacher of strength ``b_φ = E|m(w)|² = tr B`` and noise ``V − b_φ``: the library's reduced linear-attention model in
dimension ``F`` (:func:`_equivalent_problem`), whose features have the isotropic covariance ``c I_{F²}``,
``c = (N + F + 1) b_φ/(N F) + (V − b_φ)/N`` (conventions §2), solved by its Marchenko–Pastur theory
(:func:`replica.stationary` with ``law="mp"``; with a pool, ``pool="mp"``).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from scipy import special

import linattn
from linattn import check, links, sampling
from linattn.errors import ConvergenceError
from linattn.kernel_learner import (
    block_directions,
    fresh_blocks,
    hermite_features,
    kernel_moments,
    n_features,
    trace_direction,
)
from linattn.numerics import quadrature
from linattn.numerics.fixed_point import anderson
from linattn.numerics.stats import mean_se
from linattn.results import short_repr

from .learners import LearnerTheory, learner_arguments
from .linear_solve import solve_covariance
from .pool_theory import GAUSS_POOLS, draw_theory_pool, effective_ridge

LAWS = ("finite", "gaussian", "mp")
TOLERANCE = 1e-11
MAX_ITERATIONS = 3_000
#: Gauss–Jacobi nodes per half of c ∈ [−1, 1] (the label moments given |x_q|²)
N_COSINE = 48


# --------------------------------------------------------------------------- the Gaussian theory
def gaussian_errors(S, B, V, P, lam, metrics):
    r"""The Gaussian deterministic equivalent (module docstring) for training moments ``(S̄, B, V)``.

    Parameters
    ----------
    S, B : ndarray (F, F)
        Training moments (``S`` symmetric positive definite).
    V : float
    P, lam : float
        Prompts and weight decay ``λ > 0``.
    metrics : list of (S_t, B_t, V_t)
        The moments of each evaluation distribution.

    Returns
    -------
    dict
        ``train``, ``errors`` (one per metric), ``kappa``, ``residual``.
    """
    F = S.shape[0]
    sig, U = np.linalg.eigh(S)
    sig = np.maximum(sig, 0.0)
    Bt = U.T @ B
    g = np.einsum("jk,jk->j", Bt, Bt)
    kap, res, _ = effective_ridge(sig, np.ones(F), F, P, lam)
    inv = 1.0 / (sig + kap)
    G = U @ (inv[:, None] * Bt)
    pos = sig > 0
    se2 = V - float(np.sum(g[pos] / sig[pos]))
    bias = float(np.sum(g[pos] / sig[pos] * (kap / (sig[pos] + kap)) ** 2))      # no κ² overflow at huge λ
    df2 = F * float(np.sum(sig**2 * inv**2))
    cov = (se2 + bias) / (P - df2) * sig * inv**2               # Cov(vec Γ̂) = U diag(cov) Uᵀ ⊗ I_F

    def error(St, Bm, Vt):
        return 0.5 * (Vt - 2.0 * float(np.sum(Bm * G)) + float(np.sum(G * (St @ G)))
                      + F * float(cov @ np.einsum("ij,ij->j", U, St @ U)))

    inside = error(S, B, V)
    train = 0.5 * ((lam / kap) ** 2 * 2.0 * inside + lam * (float(np.sum(G * G)) + F * float(np.sum(cov))))
    return dict(train=train, errors=[error(*m) for m in metrics], kappa=kap, residual=res)


# --------------------------------------------------------------------------- types: queries, contexts, labels
def _blocks(D, features):
    """Dimensions ``d_k`` of the irreducible blocks ``(L, T, Q)`` (``(L,)`` for the linear map)."""
    return np.array([D], float) if features == "linear" else np.array([D, 1.0, D * (D + 1) / 2 - 1.0])


def _chi_square_nodes(D, per_panel=6):
    """Nodes and weights of ``χ²_D/D``: the library's composite Gauss–Legendre rule in ``√r`` for the ``χ_D/√D`` density
    (:func:`linattn.links.radial_moments`; exponentially convergent for functions of ``√r``, where Gauss–Laguerre in
    ``r`` converges only algebraically), nodes of relative weight ``< 1e-12`` dropped."""
    r, w = quadrature.chi_square_rule(D, per_panel)
    keep = w > 1e-12 * w.max()
    return r[keep], w[keep] / w[keep].sum()


def query_scales(D, features="hermite2"):
    r"""Nodes ``R`` of ``|x_q|² ~ χ²_D`` (:func:`_chi_square_nodes`), their weights, and the squared block norms
    ``ρ_k(R)`` of ``φ(x_q)`` (module docstring): ``ρ_L = R``, ``ρ_T = (R − D)²/(2D)``, ``ρ_Q = R²(1 − 1/D)/2``.

    Parameters
    ----------
    D : int
    features : {"hermite2", "linear"}
        ``"linear"``: one block, ``ρ_L = R``.

    Returns
    -------
    R, w : ndarray (n,)
    rho : ndarray (n, n_blocks)
    """
    D = check.positive_int("D", D)
    check.choice("features", features, ("hermite2", "linear"))
    r, w = _chi_square_nodes(D)
    R = D * r
    if features == "linear":
        return R, w, R[:, None]
    return R, w, np.stack([R, (R - D) ** 2 / (2.0 * D), R * R * (1.0 - 1.0 / D) / 2.0], axis=1)


def _cosine_rule(D, n=N_COSINE):
    """Nodes ``c ∈ (0, 1]`` and weights with ``E g(c) = Σ w (g(c) + g(−c))/2`` for ``c = ŵ·x̂`` (density
    ``∝ (1 − c²)^{(D−3)/2}``): Gauss–Jacobi in ``(1 − c)^α`` on ``[0, 1]`` times ``(1 + c)^α``."""
    al = (D - 3) / 2.0
    x, w = special.roots_jacobi(n, al, 0.0)
    c = 0.5 * (x + 1.0)
    w = w * (1.0 + c) ** al
    return c, w / w.sum()


def label_moments(pb, r, R, features="hermite2", n=N_COSINE):
    r"""Coefficients of ``m_R(w)`` on the block directions ``u_k(w)`` and ``E[y² | w, R]`` (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
    r : ndarray (n_r,)
        Task norm ratios ``|w|²/D``.
    R : ndarray (n_R,)
        Query norms ``|x_q|²``.
    features : {"hermite2", "linear"}
    n : int
        Gauss–Jacobi nodes per half of ``c ∈ [−1, 1]``.

    Returns
    -------
    mco : ndarray (n_r, n_R, n_blocks)
        ``m_R(w) = Σ_k mco_k u_k(w)`` with ``u_L = ŵ``, ``u_T = t``, ``u_Q = b̂_w``.
    Ey2 : ndarray (n_r, n_R)
    """
    D = pb.D
    rR = np.multiply.outer(r, R)
    if pb.link.is_linear:
        a = float(pb.link.slope)
        F0 = F2 = np.zeros_like(rR)
        F1, F00 = a * np.sqrt(rR) / D, a * a * rR / D
    else:
        if D < 2:
            check.fail("pb", pb, "a problem with D >= 2 for the kernel learner's theory")
        c, w = _cosine_rule(D, n)
        sc = np.sqrt(rR)[..., None] * c
        with np.errstate(all="ignore"):
            fp, fm = pb.link(sc), pb.link(-sc)
            F0 = 0.5 * (fp + fm) @ w
            F1 = 0.5 * ((fp - fm) * c) @ w
            F2 = 0.5 * ((fp + fm) * c * c) @ w
            F00 = 0.5 * (fp * fp + fm * fm) @ w
    mL = np.sqrt(R) * F1
    if features == "linear":
        mco = mL[..., None]
    else:
        A = R * F2 - R * (F0 - F2) / (D - 1)
        mco = np.stack([mL, (R - D) * F0 / np.sqrt(2.0 * D), A * np.sqrt((1.0 - 1.0 / D) / 2.0)], axis=-1)
    out = (mco, F00 + pb.noise**2)
    check.finite_result(np.concatenate([out[0].ravel(), out[1].ravel()]), {"pb.noise": pb.noise},
                        "the label moments given |x_q|²")
    return out


def _unit(W):
    norm = np.linalg.norm(W, axis=1, keepdims=True)
    return np.divide(W, norm, out=np.zeros_like(W), where=norm > 0)


def _contexts(pb, W, rng, features):
    """``s_φ`` of one context per row of ``W`` (its task), from raw tokens (:func:`linattn.sampling.sample_tokens`), in
    batches: yields ``(lo, hi, s)``."""
    N, D = pb.N, pb.D
    F = n_features(D, features)
    batch = max(1, (1 << 22) // (N * (F + D)))
    for lo in range(0, W.shape[0], batch):
        hi = min(W.shape[0], lo + batch)
        tok = sampling.sample_tokens(pb, hi - lo, rng, w=W[lo:hi])
        yield lo, hi, np.einsum("pn,pnf->pf", tok.y, hermite_features(tok.X, features)) / N


def _block_norms(s, D, features):
    """``σ_l = |Π_l s|²`` per row, blocks ``(L, T, Q)`` (``(L,)`` for the linear map)."""
    sL = np.einsum("nf,nf->n", s[:, :D], s[:, :D])
    if features == "linear":
        return sL[:, None]
    pT = np.sum(s[:, D:2 * D], axis=1) / np.sqrt(D)
    return np.stack([sL, pT * pT, np.einsum("nf,nf->n", s[:, D:], s[:, D:]) - pT * pT], axis=1)


def fresh_types(pb, n, rng, features="hermite2", n_groups=4):
    """A sample of context types for fresh Gaussian tasks, stratified over the nodes of ``r = |w|²/D ~ χ²_D/D``
    (:func:`_chi_square_nodes`):
    ``⌈n/(n_nodes n_groups)⌉ n_groups`` contexts per node, each from raw tokens with a uniformly random direction.

    Parameters
    ----------
    pb : linattn.Problem
    n : int
        Contexts wanted (rounded up to a multiple of ``n_nodes n_groups``).
    rng : numpy.random.Generator
    features : {"hermite2", "linear"}
    n_groups : int
        Disjoint groups (for the standard error).

    Returns
    -------
    dict
        ``r`` (nodes), ``node`` (per context), ``weight`` (per context, summing to 1), ``group`` (per context, the
        ``n_groups`` disjoint groups of the standard error), ``sig`` (``σ_l``, (n, n_blocks)) and ``p`` (the overlaps
        ``Π_l s · u_l(w)``, (n, n_blocks)).
    """
    D = pb.D
    r, w = _chi_square_nodes(D)
    per = n_groups * max(1, -(-n // (r.size * n_groups)))
    node = np.repeat(np.arange(r.size), per)
    what = _unit(rng.standard_normal((node.size, D)))
    W = what * np.sqrt(D * r[node])[:, None]
    nb = _blocks(D, features).size
    sig, p = np.empty((node.size, nb)), np.empty((node.size, nb))
    for lo, hi, s in _contexts(pb, W, rng, features):
        sig[lo:hi] = _block_norms(s, D, features)
        p[lo:hi] = np.einsum("nf,nkf->nk", s, block_directions(what[lo:hi], features))
    return dict(r=r, node=node, weight=w[node] / per, group=np.tile(np.arange(per) % n_groups, r.size), sig=sig, p=p)


def sample_contexts(pb, W, rng, features="hermite2"):
    """``s_φ`` of one context per row of ``W`` (its task), from raw tokens (:func:`linattn.sampling.sample_tokens`).

    Parameters
    ----------
    pb : linattn.Problem
    W : ndarray (n, D)
        The task of each context.
    rng : numpy.random.Generator
    features : {"hermite2", "linear"}

    Returns
    -------
    ndarray (n, F)
    """
    s = np.empty((W.shape[0], n_features(pb.D, features)))
    for lo, hi, sb in _contexts(pb, W, rng, features):
        s[lo:hi] = sb
    return s


def contexts_memory(D, n, features, arguments="n_contexts"):
    """Refuse (:func:`linattn.check.memory`, naming ``arguments``) a random-scale theory on ``n`` sampled contexts
    whose arrays would not fit: per context (and query scale ``R``, ``n_R`` nodes) the label coefficients, the
    weights ``ω`` and the residuals, ``n_R (2 n_b + 6)`` floats, and the context's features and block directions,
    ``(n_b + 2) F`` (measured: 594 floats per context at ``D = 4`` for fresh tasks, 775 with a pool; estimate 775).

    Parameters
    ----------
    D, n : int
        Dimension and sampled contexts (rounded up by :func:`fresh_types` to whole strata: counted).
    features : {"hermite2", "linear"}
    arguments : str
        For the message.
    """
    nb, F = _blocks(D, features).size, n_features(D, features)
    n_R = _chi_square_nodes(D)[0].size
    n_eff = n + n_R * 4                     # fresh_types: whole strata of n_nodes n_groups contexts (n_groups <= 4)
    check.memory(8.0 * n_eff * (n_R * (2 * nb + 6) + nb * nb + 4 * nb + (nb + 2) * F),
                 f"the theory's arrays on {n} sampled contexts ({n_R} query scales, {F} features)", arguments)


# --------------------------------------------------------------------------- the two theories
def _fresh_finite(pb, P, lam, features, N_test, n_contexts, seed, n_groups=4):
    """Random-scale theory for fresh tasks in its rotation-invariant (scalar) form (module docstring); returns the
    errors on all contexts and their standard errors from ``n_groups`` disjoint groups of contexts."""
    types = fresh_types(pb, n_contexts, np.random.default_rng(seed), features, n_groups)
    d = _blocks(pb.D, features)
    R, wR, rho = query_scales(pb.D, features)
    mco, Ey2 = label_moments(pb, types["r"], R, features)
    ft = fresh_blocks(pb, features, N_test)
    metric = tuple(np.array(x)[: d.size] for x in (ft.S, ft.B)) + (ft.V,)
    node = types["node"]

    def solve(sel, scale):
        return _solve_fresh(types["sig"][sel], types["p"][sel][:, None, :] * mco[node[sel]], Ey2[node[sel]],
                            scale * types["weight"][sel], rho, wR, d, metric, P, lam)

    full = solve(slice(None), 1.0)
    groups = [solve(types["group"] == g, float(n_groups)) for g in range(n_groups)]
    se = {k: mean_se([gr[k] for gr in groups])[1] for k in ("train", "test")}
    return full, se


def _solve_fresh(sig, Y, Ey2, wc, rho, wR, d, metric, P, lam):
    """The scalar equations of the fresh-task theory (module docstring) on one sample of context types: ``sig``
    (n, nb), ``Y = p_l m_l`` (n, n_R, nb), ``Ey2`` (n, n_R), context weights ``wc`` (summing to 1)."""
    nb = d.size
    dd = np.outer(d, d)
    wt = wc[:, None] * wR                                      # weights of the (context, R) types

    def omega(a):
        return 1.0 / (1.0 + (sig @ a @ rho.T) / P)           # (n, n_R)

    def resolvent(loga):
        E = sig.T @ (omega(np.exp(loga).reshape(nb, nb)) * wt) @ rho       # E[ω ρ_k σ_l]
        return -np.log(lam + E / dd).ravel()

    fp = anderson(resolvent, -np.log(lam + np.outer(wc @ sig, d) / dd).ravel(), TOLERANCE, MAX_ITERATIONS,
                  valid=lambda v: bool(np.all(np.isfinite(v))))
    loga, its, res = fp.x, fp.iterations, fp.residual
    if not fp.converged:
        raise ConvergenceError(f"learner theory: the resolvent fixed point did not converge in {MAX_ITERATIONS} "
                               f"iterations (residual {res:.3g}; P = {P:g}, lam = {lam:g})")
    a = np.exp(loga).reshape(nb, nb)
    om = omega(a)
    gam = np.diag(a) * np.einsum("nj,njl->l", om * wt, Y) / d
    e0 = Ey2 - 2.0 * Y @ gam + (sig * (gam**2 / d)) @ rho.T
    w2 = om * om * wt                                         # ω² weights over (context, R)
    b0 = sig.T @ (w2 * e0) @ rho / dd
    n = sig.shape[0]
    X = (sig[:, :, None] * sig[:, None, :]).reshape(n, nb * nb)          # σ_l σ_m
    Z = (rho[:, :, None] * rho[:, None, :]).reshape(-1, nb * nb)         # ρ_k ρ_o
    T = (X.T @ w2 @ Z).reshape(nb, nb, nb, nb).transpose(0, 2, 1, 3) / dd[:, :, None, None]   # [l, k, m, o]
    coef = a * a / P
    L = np.eye(nb * nb) - (coef[:, :, None, None] * T).reshape(nb * nb, nb * nb)
    rhs = (coef * b0).ravel()
    C = np.linalg.solve(L, rhs).reshape(nb, nb)
    res_c = float(np.max(np.abs(L @ C.ravel() - rhs)) / max(float(np.max(np.abs(rhs))), 1e-300))
    e = e0 + sig @ C @ rho.T
    fit = float(np.sum(w2 * e))
    norm2 = float(np.sum(gam**2 * d) + np.sum(C * dd))
    St, Bt, Vt = metric
    test = 0.5 * (Vt - 2.0 * float(np.sum(Bt * gam * d)) + float(np.sum(St * gam**2 * d))
                  + float(np.sum(St[:, None] * C * dd)))
    return dict(train=0.5 * fit + 0.5 * lam * norm2, test=test, iterations=its, residual=max(res, res_c), gamma=gam,
                C=C, fit=fit, norm2=norm2, a=a)


def _projected(M, k, D, t, features):
    """``M Π_k`` (right projection on the feature block ``k``)."""
    if features == "linear":
        return M
    out = np.zeros_like(M)
    if k == 0:
        out[:, :D] = M[:, :D]
        return out
    Mt = np.outer(M @ t, t)
    if k == 1:
        return Mt
    out[:, D:] = M[:, D:]
    return out - Mt


def _matrix_finite(pb, P, lam, features, s, tasks, task, metrics):
    """Random-scale theory with ``F × F`` resolvent blocks (module docstring; task pools): ``s`` the sampled contexts
    (n, F), ``tasks`` the distinct tasks (K, D), ``task`` the task of each context, ``metrics`` the moments
    ``(S̄, B, V)`` of each evaluation distribution. Returns ``train``, ``errors`` (one per metric), ``iterations``,
    ``residual``."""
    D = pb.D
    n, F = s.shape
    d = _blocks(D, features)
    nb = d.size
    t = trace_direction(D) if features == "hermite2" else None
    R, wR, rho = query_scales(D, features)
    mco, Ey2 = label_moments(pb, np.sum(tasks * tasks, axis=1) / D, R, features)
    mco, Ey2 = mco[task], Ey2[task]                                   # (n, n_R, nb), (n, n_R)
    U = block_directions(_unit(tasks), features)[task]                # (n, nb, F)
    eye = np.eye(F)

    def gram(x):
        """``E[x s sᵀ]`` for per-context weights ``x`` (n,)."""
        return (s.T * x) @ s / n

    def forms(Ms):
        """``sᵀ M_k s`` for each context and block: (n, nb)."""
        return np.stack([np.einsum("nf,nf->n", s @ M, s) for M in Ms], axis=1)

    def resolvents(E):
        return np.stack([np.linalg.inv(lam * eye + E[k]) for k in range(nb)])

    def omega(A):
        return 1.0 / (1.0 + forms(A) @ rho.T / P)                     # (n, n_R)

    def step(flat):
        x = (omega(resolvents(flat.reshape(nb, F, F))) * wR) @ rho / d     # Σ_j w_j ω ρ_k/d_k: (n, nb)
        return np.stack([gram(x[:, k]) for k in range(nb)]).ravel()

    def valid(flat):
        E = flat.reshape(nb, F, F)
        return all(np.linalg.eigvalsh(E[k] + lam * eye)[0] > 0 for k in range(nb))

    fp = anderson(step, np.stack([gram(np.ones(n))] * nb).ravel(), TOLERANCE, MAX_ITERATIONS,
                  valid=lambda v: bool(np.all(np.isfinite(v))) and valid(v))
    flat, its, res = fp.x, fp.iterations, fp.residual
    if not fp.converged:
        raise ConvergenceError(f"learner theory (pool): the resolvent fixed point did not converge in "
                               f"{MAX_ITERATIONS} iterations (residual {res:.3g}; P = {P:g}, lam = {lam:g})")
    A = resolvents(flat.reshape(nb, F, F))
    om = omega(A)
    h = (om * wR)[:, :, None] * mco                                   # w_j ω m_l(R_j): (n, n_R, nb)
    Mt = s.T @ np.einsum("nl,nlf->nf", h.sum(axis=1), U) / n          # E[ω s m_Rᵀ]
    G = sum(A[k] @ _projected(Mt, k, D, t, features) for k in range(nb))
    v = s @ G                                                         # Γ̄ᵀ s: (n, F)
    vu = np.einsum("nf,nlf->nl", v, U)
    vb = np.stack([np.einsum("nf,nf->n", _projected(v, k, D, t, features), v) for k in range(nb)], axis=1)
    e0 = Ey2 - 2.0 * np.einsum("njl,nl->nj", mco, vu) + (vb / d) @ rho.T
    w2 = om * om * wR                                                 # ω² weights (times 1/n in the averages)

    def cov_map(flat):
        e = forms(flat.reshape(nb, F, F)) @ rho.T
        x = (w2 * e) @ rho / d
        return np.stack([A[k] @ gram(x[:, k]) @ A[k] / P for k in range(nb)]).ravel()

    x0 = (w2 * e0) @ rho / d
    rhs = np.stack([A[k] @ gram(x0[:, k]) @ A[k] / P for k in range(nb)]).ravel()
    c, info, res_c = solve_covariance(cov_map, rhs, TOLERANCE, 40, MAX_ITERATIONS // 40)
    if info != 0 or not res_c < 1e3 * TOLERANCE:
        raise ConvergenceError(f"learner theory (pool): the covariance equation was not solved (GMRES info {info}, "
                               f"relative residual {res_c:.3g}; P = {P:g}, lam = {lam:g})")
    C = c.reshape(nb, F, F)
    C = 0.5 * (C + C.transpose(0, 2, 1))
    fit = float(np.sum(w2 * (e0 + forms(C) @ rho.T))) / n
    norm2 = float(np.sum(G * G)) + float(sum(d[k] * np.trace(C[k]) for k in range(nb)))

    def error(St, Bm, Vt):
        return 0.5 * (Vt - 2.0 * float(np.sum(Bm * G)) + float(np.sum(G * (St @ G)))
                      + float(sum(d[k] * np.sum(St * C[k]) for k in range(nb))))

    return dict(train=0.5 * fit + 0.5 * lam * norm2, errors=[error(*m) for m in metrics], iterations=its,
                residual=max(res, res_c), G=G, C=C, fit=fit, norm2=norm2, A=A)


def pool_types(pb, pool, n, rng, features="hermite2"):
    """``n`` contexts drawn from the rows of ``pool`` in turn (task ``i mod K``: stratified), from raw tokens.

    Parameters
    ----------
    pb : linattn.Problem
    pool : ndarray (K, D)
    n : int
    rng : numpy.random.Generator
    features : {"hermite2", "linear"}

    Returns
    -------
    s : ndarray (n, F)
    task : ndarray (n,) int
    """
    task = np.arange(n) % pool.shape[0]
    return sample_contexts(pb, pool[task], rng, features), task


# --------------------------------------------------------------------------- the ridge law of the linear map
@functools.lru_cache(maxsize=64)
def centred_link(link, mean):
    """The link ``f − mean`` (cached, so that equal arguments give one :class:`linattn.links.Link` and the caches keyed
    on it hit).

    Parameters
    ----------
    link : linattn.links.Link
    mean : float

    Returns
    -------
    linattn.links.Link
    """
    if not isinstance(link, links.Link):
        check.fail("link", link, "a linattn.links.Link")
    mean = check.real("mean", mean)
    if mean == 0.0:
        return link
    return links.Link(f"custom:{link.name}-centred{mean!r}", lambda z: link(z) - mean)


def _checked_centre(link, centre):
    """``centre`` if the centred link ``f − centre`` keeps its values within :data:`linattn.links.LINK_SCALE` (the
    bounds every link's values must meet: its moments use the fourth power), else a ``ValueError`` naming centre."""
    centre = check.real("centre", centre)
    z = quadrature.gauss_panels(links.ORDERS[0])[0]
    z = z[np.abs(z) < 8]
    with np.errstate(all="ignore"):
        F = np.asarray(link(z), dtype=float)
    if not np.all(np.isfinite(F)):
        return centre                   # the link itself is refused with its own message
    top = float(np.max(np.abs(F - centre)))
    low, high = links.LINK_SCALE
    if top != 0.0 and not low <= top <= high:
        check.fail("centre", centre, f"a real number with max |f(z) − centre| on |z| < 8 between {low:g} and {high:g} "
                   f"(the centred labels' moments use (f − centre)⁴; max |f(z)| = {float(np.max(np.abs(F))):.3g})")
    return centre


_TYPES_CACHE: dict = {}


def _linear_types(pb, pool, n, rng):
    """The sampled contexts of :func:`ridge_law` (linear map), cached (a fixed point in ``λ`` reuses them): fresh
    :func:`fresh_types` or the pool's :func:`pool_types`."""
    key = (pb, None if pool is None else (pool.shape, pool.tobytes()), n, rng)
    if key not in _TYPES_CACHE:
        if len(_TYPES_CACHE) >= 16:
            _TYPES_CACHE.pop(next(iter(_TYPES_CACHE)))
        if pool is None:
            _TYPES_CACHE[key] = fresh_types(pb, n, np.random.default_rng([rng, pb.D, 3]), "linear", 1)
        else:
            _TYPES_CACHE[key] = pool_types(pb, pool, n, np.random.default_rng([rng, pb.D, 4]), "linear")
    return _TYPES_CACHE[key]


@dataclass(frozen=True, eq=False)
class RidgeLaw:
    """Mean and covariance of the ridge ``Γ̂`` of the reduced linear attention over datasets (:func:`ridge_law`).

    Attributes
    ----------
    mean : ndarray (D, D)
        ``Γ̄ = E Γ̂``.
    cov : ndarray (D, D)
        ``C`` with ``Cov(vec Γ̂) = C ⊗ I_D`` (row-major ``vec``: ``Cov(Γ̂_ij, Γ̂_kl) = C_ik δ_jl``).
    fit : float
        ``E_t[ω_t² e_t]``: twice the training mean-squared residual (without the weight decay).
    norm2 : float
        ``E‖Γ̂‖_F² = ‖Γ̄‖² + D tr C``.
    iterations : int
    residual : float
    resolvent : ndarray (D, D)
        ``A = (λ + E_t[ω_t s sᵀ])^{-1}`` (fresh tasks: ``a I``): a training prompt's leverage is ``h = |x_q|² sᵀAs/P``
        and its in-sample residual ``ω = 1/(1 + h)`` times its leave-one-out residual (module docstring).
    """

    __repr__ = short_repr

    mean: np.ndarray
    cov: np.ndarray
    fit: float
    norm2: float
    iterations: int
    residual: float
    resolvent: np.ndarray


def ridge_law(pb, P, lam, pool=None, centre=0.0, n_contexts=None, rng=0) -> RidgeLaw:
    r"""The random-scale theory (module docstring) with the linear map ``φ(x) = x``: the mean and covariance of the
    ridge ``Γ̂`` of ``(1/2P) Σ_μ (y_μ − c − s_μᵀΓx_μ)² + (λ/2)‖Γ‖_F²`` (the reduced linear attention on ``pb``'s
    prompts, any link), the query labels centred by ``c`` (``centre``) and the contexts ``s = (1/N) Σ_i y_i x_i``
    built from the raw labels.

    With ``φ(x) = x`` there is one block: for fresh tasks ``Γ̄ = γ I`` and ``Cov(vec Γ̂) = c I ⊗ I`` from the scalar
    equations (:func:`_fresh_finite`'s solver); for a pool ``Γ̄`` and ``C`` are ``D × D`` matrices (``Cov(vec Γ̂) =
    C ⊗ I_D``) from the matrix equations on the pool's tasks. With a linear link this is the finite-``D`` theory of
    :mod:`replica.pool_finite` (measured equal within its sampling error).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs, ``D >= 2``; ``pb.tasks`` is ignored (``pool`` decides).
    P : float
        Prompts (``>= 1``).
    lam : float
        Weight decay ``λ >= 1e-20`` (:data:`replica.learners.LAM_MIN`).
    pool : None or array_like (K, D)
        ``None``: fresh tasks; else the tasks of the pool (each context draws them in turn).
    centre : float
        ``c``: subtracted from the query labels (the readout's intercept); the centred labels ``f − c`` must stay
        within the magnitudes of a link (:data:`linattn.links.LINK_SCALE` on ``|z| < 8``).
    n_contexts : None or int
        Sampled contexts (default ``2**16`` fresh, ``2**12`` with a pool).
    rng : int
        Seed of the sampled contexts.

    Returns
    -------
    RidgeLaw

    Raises
    ------
    ValueError
        Bad input.
    linattn.ConvergenceError
        A fixed point or the covariance equation was not solved.
    """
    pb, P, lam = learner_arguments(pb, P, lam)
    centre = _checked_centre(pb.link, centre)
    rng = check.seed_int("rng", rng)
    D = pb.D
    label_pb = dataclasses.replace(pb, link=centred_link(pb.link, centre), tasks=None)
    context_pb = dataclasses.replace(pb, tasks=None)
    if pool is None:
        n = check.positive_int("n_contexts", n_contexts or 2**16, minimum=64, maximum=2**22)
        contexts_memory(D, n, "linear")
        types = _linear_types(context_pb, None, n, rng)
        d = _blocks(D, "linear")
        R, wR, rho = query_scales(D, "linear")
        mco, Ey2 = label_moments(label_pb, types["r"], R, "linear")
        ft = fresh_blocks(label_pb, "linear")
        metric = tuple(np.array(x)[:1] for x in (ft.S, ft.B)) + (ft.V,)
        node = types["node"]
        out = _solve_fresh(types["sig"], types["p"][:, None, :] * mco[node], Ey2[node], types["weight"], rho, wR, d,
                           metric, P, lam)
        mean, cov = float(out["gamma"][0]) * np.eye(D), float(out["C"][0, 0]) * np.eye(D)
        resolvent = float(out["a"][0, 0]) * np.eye(D)
    else:
        pool = check.finite_array("pool", pool, shape=(None, D))
        n = check.positive_int("n_contexts", n_contexts or 2**12, minimum=64, maximum=2**22)
        contexts_memory(D, n, "linear")
        s, task = _linear_types(context_pb, pool, n, rng)
        out = _matrix_finite(label_pb, P, lam, "linear", s, pool, task, [])
        mean, cov, resolvent = out["G"], out["C"][0], out["A"][0]
    return RidgeLaw(mean=mean, cov=cov, fit=float(out["fit"]), norm2=float(out["norm2"]),
                    iterations=int(out["iterations"]), residual=float(out["residual"]), resolvent=resolvent)


# --------------------------------------------------------------------------- the public entry point
def _equivalent_problem(pb, features):
    """The baseline's linear-attention problem (module docstring): dimension ``F``, Gaussian tokens, a linear link of
    slope ``√(E|m|²)`` and noise ``√(V − E|m|²)``, the pool size of ``pb``."""
    km = kernel_moments(pb, features)
    b = float(np.trace(km.B))
    return linattn.Problem(n_features(pb.D, features), pb.N, float(np.sqrt(max(km.V - b, 0.0))),
                           links.Link.linear(float(np.sqrt(b))), tasks=pb.tasks)


def kernel_learner_theory(pb, P, lam, N_test=None, law="finite", pool=None, n_pools=8, n_contexts=None,
                          rng=0) -> LearnerTheory:
    r"""Dataset-averaged train and test errors of the trained kernel learner (module docstring); the public entry
    point is :func:`replica.learner_theory` (``learner="kernel"``), which documents the arguments.

    Parameters
    ----------
    pb, P, lam, N_test, law, pool, n_pools, n_contexts, rng
        As in :func:`replica.learner_theory`.

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
    pb, P, lam = learner_arguments(pb, P, lam)
    N_test = check.n_test(N_test)
    n_pools = check.positive_int("n_pools", n_pools, maximum=10_000)
    check.choice("law", law, LAWS)
    rng = check.seed_int("rng", rng)
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
        from .stationary import stationary
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
        full, se = _fresh_finite(pb, P, lam, features, N_test, n_contexts or 2**16, rng)
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
    for j, W in enumerate(pools):
        km = kernel_moments(pb, features, pool=W)
        kt = kernel_moments(pb, features, pool=W, N=N_test) if N_test not in (None, pb.N) else km
        metrics = [metric_fresh, (kt.S, kt.B, kt.V)]
        g = gaussian_errors(km.S, km.B, km.V, P, lam, metrics)
        gauss.append([g["train"], *g["errors"]])
        kappas.append(g["kappa"])
        resid = max(resid, g["residual"])
        if law == "finite" and j < n_finite:
            s, task = pool_types(pb, W, n_contexts or 2**13, np.random.default_rng([rng, pb.D, j, 2]), features)
            out = _matrix_finite(pb, P, lam, features, s, W, task, metrics)
            diffs.append([out["train"] - g["train"], *(np.array(out["errors"]) - g["errors"])])
            its, resid = max(its, out["iterations"]), max(resid, out["residual"])
            if n_finite == 1:   # one pool: the contexts' sampling error from 4 disjoint contiguous groups (each
                # cycles through the pool's tasks like the whole sample), as for fresh tasks
                parts = [_matrix_finite(pb, P, lam, features, s[idx], W, task[idx], metrics)
                         for idx in np.array_split(np.arange(len(task)), 4)]
                ctx_se = mean_se([[q["train"], *q["errors"]] for q in parts], axis=0)[1]
    mean, se = mean_se(gauss, axis=0)          # se: zeros for one pool
    if law == "finite":         # mean_g[E_Gauss] + mean_f[E_finite − E_Gauss] (the two move together pool to pool)
        diffs = np.array(diffs)
        mean = mean + diffs.mean(axis=0)
        if len(diffs) > 1:
            se = np.hypot(se, mean_se(diffs, axis=0)[1])
        else:
            se = np.hypot(se, ctx_se)
    if not np.all(np.isfinite(np.r_[mean, se])):
        raise ConvergenceError(f"learner_theory: the kernel learner's theory gave non-finite errors at lam = {lam!r} "
                               "(below the resolution of its equations; raise lam)")
    return LearnerTheory(**common, train=float(mean[0]), test=float(mean[1]), test_idg=float(mean[2]),
                         train_se=float(se[0]), test_se=float(se[1]), test_idg_se=float(se[2]),
                         kappa_eff=float(np.mean(kappas)), iterations=int(its), residual=float(resid))
