r"""Theory of the feature learner: linear attention on the raw input, then a learned nonlinear readout.

The feature learner (:func:`validation.feature_learner`; Gu, Xu & Zdeborová, conventions §5)
computes the reduced attention output ``t = sᵀ Γ x_q`` (``s = (1/N) Σ_i y_i x_i``) and predicts ``ŷ = g(t)`` with a
learned readout ``g``, on labels ``y = f(u) + σε``, ``u = w·x_q/√D`` (conventions §6.3). Derivation and measured
accuracy: ``docs/feature_learner.md``.

**Exact second moments.** For any ``Γ`` independent of the test prompt (``x_q`` is independent of the context given
``w``, ``E[s | w] = φ₁(r) ŵ``, ``E[x_q u | w] = √r ŵ``, ``r = |w|²/D ~ χ²_D/D``, :mod:`linattn.links`):

.. math::
   E[t] = 0,\qquad E[t²] = c_{N_\mathrm{test}} ‖Γ‖_F²,\qquad E[y t] = b \operatorname{tr}Γ/D,\qquad
   E[u t] = k_u \operatorname{tr}Γ/D,\quad k_u = E_r[√r\, φ_1(r)],\qquad E[u²] = 1,

with ``b = E_r φ₁(r)²`` (:attr:`linattn.Problem.teacher_strength`) and ``c`` (:attr:`linattn.Problem.feature_variance`)
at the evaluation context length. These are the overlap and norm of the library's linear test error
(:meth:`linattn.Problem.test_error_from_moments`).

**Best linear readout** ``g(t) = a₀ + a₁t`` (exact at finite ``D``, a least-squares identity):

.. math:: E_g^{\mathrm{lin}} = ½\big[V − (E y)² − (E[y t])² / E[t²]\big].

**Optimal readout** ``g(t) = E[y | t]``: ``E_g = ½(V − E[E[y|t]²])``. If ``(u, t)`` is jointly Gaussian with
correlation ``r_{ut} = E[u t]/\sqrt{E[t²]}``, Mehler's formula gives
``E[f(u) | t] = Σ_k c_k r_{ut}^k He_k(τ)/\sqrt{k!}`` (``τ = t/\sqrt{E t²}``), hence

.. math:: E_g^{\mathrm{opt}} = ½\Big(V − Σ_{k ≥ 0} c_k² r_{ut}^{2k}\Big),\qquad
          c_k = E[f(z) He_k(z)]/\sqrt{k!},\ z ∼ N(0, 1)

(normalised Hermite coefficients, :func:`~replica._feature_overlaps.hermite_coefficients`; ``c₀ = μ₀``, ``c₁ = μ₁``,
``Σ_{k≥2} c_k² = μ_*²``; O'Donnell, *Analysis of Boolean Functions*, 2014, ch. 11; Mehler's formula). What is exact and
what is not at finite ``D``: given the test task and context ``(w, s)``, ``(u, t)`` *is* exactly jointly Gaussian
(``x_q`` is Gaussian and independent of them), with ``Var u = r``, ``Var t = |Γᵀs|²``, ``Cov = sᵀΓw/√D``; the
unconditional law is a scale mixture of Gaussians over ``(w, s)`` (the task norm ``r``, the context norm ``|s|²`` —
which carries the label noise and the label law — and the overlap fluctuate at order ``1/√D``). The Gaussian formula
replaces the mixture by one Gaussian with the exact second moments; it is exact as ``D → ∞`` and, for the linear link,
reduces to the linear-readout error. ``law="finite"`` keeps the mixture: ``E[E[y|t]²] = ∫ num(t)²/den(t) dt`` with
``den = E_{w,s} N(t; 0, v)``, ``num = E_{w,s}[N(t; 0, v) E(f(u) | t, w, s)]`` averaged over sampled ``(w, s)``
(:func:`~replica._feature_mixture.mixture_readout_power`), the parameters' part ``Γ = α I + Δ`` with ``Δ`` isotropic
(see below).

**The trained ``Γ``** (:func:`~replica._ridge_law.ridge_law`). The theory takes the ridge ``Γ̂`` of the reduced
linear attention on the *training* prompts — fresh tasks, or the pool's tasks (``pb.tasks = K``) — with the query labels
centred by the readout's intercept ``E_train y`` and the contexts ``s`` built from the raw labels, as the learner
sees them (centring the contexts too, as an earlier version did through :func:`replica.stationary`, put ``tr Γ/D``
20 % and ``E‖Γ‖²`` 40 % off the exact ridge for ``relu`` at ``D = 6``). Its law over datasets is Gaussian with the mean
``Γ̄`` and the covariance ``Cov(vec Γ̂) = C ⊗ I_D`` of the random-scale deterministic equivalent of
:mod:`replica._kernel_theory` with ``φ(x) = x`` (fresh tasks: ``Γ̄ = γI``, ``C = cI``; a pool: ``D × D`` matrices — at
finite ``D`` the pool's tasks are fixed directions and ``Γ̄`` is anisotropic, aligned with them).

**Second moments under a test distribution** (fresh tasks at ``N_test``, or the pool's tasks), exact for a given
``Γ`` and averaged over ``Γ̂``: ``E[t²] = tr(Γ̄ᵀS̄Γ̄) + D tr(S̄C)``, ``E[y t] = ⟨B, Γ̄⟩``, ``E[u t] = ⟨B_u, Γ̄⟩`` with
``S̄ = E[s sᵀ]``, ``B = E_w[E[s|w] E[y x_q|w]ᵀ]`` (:func:`linattn.kernel_learner.kernel_moments`, ``φ(x) = x``) and
``B_u = E_w[φ₁(r) √r ŵŵᵀ]`` (fresh: ``k_u I/D``; a pool: the mean over its tasks, so the IDG overlaps are
``wᵀΓ̄w``-type averages over the pool).

**The readout is fitted on the training distribution** and applied to each test distribution: ``g = E_train[y|t]`` (the
mixture of the training components), ``E = ½[V − 2∫num_test g + ∫den_test g²]``
(:func:`~replica._feature_mixture.mixture_error`); the components of a distribution sample ``(w, s)`` from raw tokens
and ``Γ̂ᵀs = Γ̄ᵀs + g``, ``g ~ N(0, (sᵀCs) I)`` (the dataset's fluctuation, one draw per component). The linear readout
``a₀ + a₁t`` takes ``a₀ = E_train y``, ``a₁ = E_train[yt]/E_train[t²]`` per dataset (averaged with
``E[X²] = X̄² + tr(BᵀCB)``). With fresh tasks and ``N_test = N`` train and test coincide and these are the formulas
above.

**Weight decay.** The feature learner's weight decay acts on ``Γ`` *and* the readout: for a readout of slope ``a₁`` the
penalty ``λ(‖Γ‖² + a₁²)/2`` at fixed product ``W = a₁Γ`` is minimal at ``a₁² = ‖W‖_F``, where it is ``λ‖W‖_F`` — a
ridge on ``W`` with the effective decay ``λ_eff = λ/‖W‖_F`` (``decay="balanced"``, solved self-consistently with
``‖W‖² = E‖Γ̂‖²`` by Brent's method; ``decay="plain"`` uses ``λ``). The penalty ``λ‖W‖_F`` is not differentiable at
``W = 0``: for ``λ ≥ λ* = lim_{λ_eff→∞} λ_eff E‖Γ̂‖`` (the norm of the training loss's gradient at ``W = 0``; 0.16 for
tanh at ``D = 6``, ``N = 12``, ``P = 200``) the trained ``W`` is exactly zero, as in the group lasso, and every readout
is the constant ``E_train y``: ``E = ½(V − 2E_train y E y + (E_train y)²)`` (``V/2`` for an odd link), with
``lam_effective = inf``. The optimal and best linear readouts are refitted without a penalty, so they see only the
direction of ``Γ̂`` and jump at ``λ*`` to the constant readout; the trained linear-readout learner (``test_ridge``,
whose slope ``a₁ = ‖W‖^{1/2}`` vanishes with ``W``) is continuous there.

**The readout as trained** (``readout="trained"``, the default; Gu, Xu & Zdeborová's memorisation error). The learner
(:func:`validation.feature_learner`) fits its readout ``g(t) = ψ(t)ᵀa`` (``linattn/_readout.py``:
``J`` hinges at the quantiles of the training ``t``, ridge ``λ`` on ``a``) on the *training* values ``t_μ`` of its own
``P`` prompts — not on test values. Those are in-sample predictions of the ridge ``Γ̂``: by the leave-one-out identity
of ridge regression (Sherman–Morrison), exactly,

.. math:: y_μ − c − t_μ = \frac{y_μ − c − t_μ^{(−μ)}}{1 + h_μ}
          \quad⇔\quad t_μ = \frac{h_μ (y_μ − c) + t_μ^{(−μ)}}{1 + h_μ},
          \qquad h_μ = \frac1P φ_μᵀ\Big(\frac1P Σ_{ν≠μ} φ_νφ_νᵀ + λ\Big)^{-1} φ_μ,

``φ_μ = vec(s_μ x_μᵀ)``, where ``t_μ^{(−μ)}`` is the output of the ridge fitted without prompt ``μ`` — distributed as a
*test* output of the training distribution. The random-scale theory gives the leverage per prompt type:
``h = |x_q|² sᵀAs/P`` with its resolvent ``A`` (the ``ω = 1/(1 + h)`` of :mod:`replica._kernel_theory`, returned as
:attr:`replica._ridge_law.RidgeLaw.resolvent`). When ``P`` is below the ``D²`` parameters and ``λ`` small, ``h ≫ 1``
and the training ``t`` interpolate the labels: the readout learns ``g ≈`` identity on them and applies it to test
``t`` whose law is another — the memorisation regime the optimal readout cannot describe. The theory therefore draws
exact samples of the training law of ``(y, t_μ)`` (contexts from raw tokens, ``Γ̂`` from its law, ``x_q`` Gaussian;
:data:`N_QUERIES` queries per context), fits the learner's own readout (:func:`linattn._readout.quantile_knots`,
:func:`linattn._readout.fit_readout`) to ``N_REPLICATES`` training sets of ``P`` of them — so its finite-``P`` fit,
its knots and its training error are those of the learner — and evaluates it on exact samples of each test
distribution (fresh tasks or the pool's, at ``N_test``: the inference-time scale of ``t`` enters through the test
samples). Outputs are in the learner's units ``t = sᵀΓx_q`` with ``Γ = Ŵ/a₁``, ``a₁ = ‖Ŵ‖_F^{1/2}`` (balanced decay).
The training loss adds ``½λ|a|²`` and ``½λ‖Γ‖² = ½λ‖Ŵ‖_F``. Standard errors: the spread over :data:`N_GROUPS` disjoint
groups of contexts (each with its own training sets). **Approximated**: the law of ``Γ̂`` (Gaussian around its mean,
one draw per context: the training set's own ``Γ̂`` is shared by its ``P`` prompts), the leverage at the prompt
type's deterministic equivalent, and ``t^{(−μ)}`` independent across ``μ``; beyond ``P`` larger than the samples
(``N_QUERIES · n_contexts / N_GROUPS``) the readout is fitted on all of them. Measured accuracy:
``docs/feature_learner.md`` §7.

**Training error.** With the linear readout the learner *is* that ridge on ``W``: its training loss is
``½E_t[ω²e_t] + λE‖Ŵ‖ + ½(E y)²λ/(1 + λ)`` (the ridge's training residual at ``λ_eff``, the balanced penalty, the
penalised intercept) — ``train_linear``. The optimal (population) readout has no training error (``train = None``
for ``readout="optimal"``); the learner's own readout has one (``readout="trained"``, above).

Not modelled: the trained ``Γ`` is the ridge ``Γ`` only when the readout is linear while ``Γ`` trains (true of the
simulator's default ``second_stage="readout"``, not of ``"joint"``); the optimal readout is the population optimum
(its finite-``P`` estimation error is in ``readout="trained"`` only); order-parameter fluctuations between datasets
beyond the Gaussian law of ``Γ̂`` (relative ``O(1/M)``).

References: H. Gu, Y. Xu, L. Zdeborová, kernel vs feature learners of nonlinear in-context learning (2026);
Y. M. Lu et al., PNAS 122 (2025) (the linear-attention theory); M. Letey et al. (2025) (the Hermite decomposition of
the link, the nonlinearity–noise equivalence).

This module is the entry (:func:`feature_learner_theory`, :class:`FeatureTheory`) with the balanced decay's fixed point;
the exact moments and readouts of a given ``Γ`` are in :mod:`replica._feature_overlaps`, the finite-``D`` mixtures in
:mod:`replica._feature_mixture`, the prompt distributions and the readouts of the trained ``Γ̂`` in
:mod:`replica._feature_readouts`, and the law of ``Γ̂`` in :mod:`replica._ridge_law`.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
from linattn import _check as check
from linattn._arguments import choice, integer, public, seed, tolerance
from linattn._check import PROGRESS_DELAY
from linattn._errors import ConvergenceError
from linattn._numerics.stats import mean_se
from linattn._results import short_repr
from linattn._threads import whole_call

from ._feature_mixture import N_T, N_Z, mixture_errors, mixture_memory
from ._feature_overlaps import Overlaps
from ._feature_readouts import (
    components,
    distribution,
    gaussian_optimal,
    linear_errors,
    second_moments,
    trained_readout,
)
from ._learner_common import LEARNER
from ._ridge_law import _ridge_law

READOUTS = ("trained", "optimal", "linear")
LAWS = ("gaussian", "finite")
DECAYS = ("balanced", "plain")


# --------------------------------------------------------------------------- the trained Γ
def _ridge(pb, P, lam, pool, centre, seed):
    return _ridge_law(pb, P, lam, pool, centre, 2**12 if pool is not None else 2**14, seed)


def _balanced(pb, P, lam, pool, centre, seed, decay, max_iter, tol):
    """The ridge law at ``λ`` (``decay="plain"``) or at the balanced ``λ_eff = λ/‖W‖_F`` (``‖W‖² = E‖Γ̂‖²``), and
    ``λ_eff`` (module docstring). Cached: the trained ``Γ`` does not depend on the test prompts, so the errors at
    several ``N_test``, readouts or laws of one training setting solve it once."""
    key = None if pool is None else (pool.shape, np.ascontiguousarray(pool, dtype=float).tobytes())
    return _balanced_cached(pb, float(P), float(lam), key, float(centre), seed, decay, max_iter, tol)


#: ``λ_eff`` at which ``λ_eff ‖Γ̂‖`` is taken as its limit ``λ*`` (measured: converged to 1e-14 relative by 1e12 at
#: D = 6, 20, tanh and relu; the ridge is ``(1/λ_eff) E[(y − c) s x_qᵀ] + O(λ_eff^{-2})``)
LAM_EFF_LIMIT = 1e16


@functools.lru_cache(maxsize=128)
def _balanced_cached(pb, P, lam, key, centre, seed, decay, max_iter, tol):
    r"""Solve ``h(x) = log λ − ½ log E‖Γ̂‖²(e^x) − x = 0`` for ``x = log λ_eff``.

    ``h`` decreases (slope in ``(−1, 0)``: ``λ_eff ‖Γ̂‖`` grows with ``λ_eff``) from ``+∞`` to ``log(λ/λ*)``, where
    ``λ* = lim_{λ_eff→∞} λ_eff ‖Γ̂‖ = ‖E[(y − c) s x_qᵀ]‖``-type (the training loss's gradient at ``Γ = 0``). For
    ``λ ≥ λ*`` there is no root: the penalty ``λ‖W‖_F`` is not differentiable at ``W = 0`` (as in the group lasso) and
    the trained ``W`` is exactly zero — returned as the zero law with ``λ_eff = ∞``. Otherwise the root is
    bracketed in ``(x_lo, log LAM_EFF_LIMIT)`` and found by Brent's method (``xtol = tol``).
    """
    from scipy import optimize

    pool = None if key is None else np.frombuffer(key[1]).reshape(key[0])
    if decay == "plain":
        return _ridge(pb, P, lam, pool, centre, seed), lam
    laws = {}

    def h(x):
        laws[x] = _ridge(pb, P, float(np.exp(x)), pool, centre, seed)
        return float(np.log(lam) - 0.5 * np.log(laws[x].norm2) - x)

    x_hi = float(np.log(LAM_EFF_LIMIT))
    if h(x_hi) >= 0.0:       # λ ≥ λ*: the trained Γ vanishes (to ‖Γ̂‖ ≤ λ*/LAM_EFF_LIMIT at the root, if any)
        limit = laws[x_hi]
        D = limit.mean.shape[0]
        return (dataclasses.replace(limit, mean=np.zeros((D, D)), cov=np.zeros((D, D)), norm2=0.0,
                                    resolvent=np.zeros((D, D))), float("inf"))
    x_lo = min(float(np.log(lam)), x_hi - 1.0)
    for _ in range(max_iter):          # λ_eff down by e per step: near the interpolation threshold P ≈ D² the ridge
        if h(x_lo) > 0.0:              # law's norm grows fast as λ_eff → 0, and far below the root its resolvent
            break                      # overflows
        x_lo -= 1.0
    else:
        raise ConvergenceError(f"feature_learner_theory: no lower bracket of the balanced decay λ_eff = λ/‖W‖ in "
                               f"{max_iter} steps (last λ_eff = {np.exp(x_lo):.6g})")
    x, info = optimize.brentq(h, x_lo, x_hi, xtol=tol, maxiter=max_iter, full_output=True, disp=False)
    if not info.converged:
        raise ConvergenceError(f"feature_learner_theory: the balanced decay λ_eff = λ/‖W‖ did not converge in "
                               f"{max_iter} Brent steps (last λ_eff = {np.exp(x):.6g}, tol = {tol:g})")
    if x not in laws:
        h(x)
    return laws[x], float(np.exp(x))


# --------------------------------------------------------------------------- the theory
@dataclass(frozen=True, eq=False)
class FeatureTheory:
    """Dataset-averaged errors of the trained feature learner (module docstring).

    Attributes
    ----------
    test : float
        Fresh-task (ICL) error of the requested readout (``readout``) at ``N_test``.
    test_se : float
        Its standard error (the sampled contexts and training sets, and with a pool the average over pools; 0 for
        ``readout="optimal"`` with ``law="gaussian"`` and fresh tasks, and for ``"linear"``; ``nan`` for one random
        pool, ``n_pools=1``: its spread over pools is not computable).
    test_idg, test_idg_se : float or None
        In-distribution error (a task of the training pool) of the requested readout and its standard error
        (``pb.tasks = K``), else ``None``.
    train : float or None
        Training loss (with the weight decay) of the requested readout: ``"trained"``, the learner as trained (the
        readout's data term ``train_fit``, its decay ``½λ|a|²`` and ``½λ‖Γ‖²``, ``‖Γ‖² = ‖Ŵ‖_F`` at the balanced
        decay); ``"linear"``, ``train_linear``; ``None`` for ``"optimal"`` (a population readout has no fit).
    train_se : float or None
        Its standard error (0 for ``"linear"``, which is not sampled; ``nan`` for one random pool, as ``test_se``).
    train_fit : float
        The trained readout's data term ``½ E mean_μ (y_μ − g(t_μ))²`` on its ``P`` training prompts: the
        memorisation error.
    train_linear : float
        The training loss of the linear-readout learner: ``½ E_t[ω²e_t]`` of the ridge ``Γ̂`` at ``λ_eff`` plus
        ``λ E‖Ŵ‖_F`` (balanced) and the intercept's ``½ (E y)² λ/(1 + λ)``.
    test_trained, test_optimal, test_linear, test_ridge : float
        ICL error of the trained readout (module docstring), of the optimal readout ``E_train[y|t]`` (finite-``D``
        mixture, or the Gaussian formula of the test distribution's own readout with ``law="gaussian"``), of the
        best linear readout of the training distribution, and of the trained linear-readout learner (``Ŵ`` the ridge
        at ``λ_eff``, no refitted scale).
    test_idg_trained, test_idg_optimal, test_idg_linear, test_idg_ridge : float or None
        The same on the pool's tasks.
    overlaps : Overlaps
        ``E[u t]``, ``E[y t]``, ``E[t²]`` and ``r`` on fresh test prompts (mean over pools).
    lam_effective : float
        The weight decay of the ridge ``Γ̂`` (``λ`` or the balanced ``λ_eff``; mean over pools).
    rho, sigma2 : float
        ``ρ = √(Dc) tr Γ̄/D`` and ``σ² = c E‖Γ̂‖² − ρ²`` (``c`` at the training length; the order parameters of
        :class:`replica.OrderParameters` for fresh tasks).
    n_pools : int
        Pools averaged (1 with a given pool, 0 for fresh tasks).
    readout, law, decay : str
    N_test : int or None
    """

    __repr__ = short_repr

    problem: linattn.Problem
    P: float
    lam: float
    test: float
    test_se: float
    test_idg: float | None
    test_idg_se: float | None
    train: float | None
    train_se: float | None
    train_fit: float
    train_linear: float
    test_trained: float
    test_optimal: float
    test_linear: float
    test_ridge: float
    test_idg_trained: float | None
    test_idg_optimal: float | None
    test_idg_linear: float | None
    test_idg_ridge: float | None
    overlaps: Overlaps
    lam_effective: float
    rho: float
    sigma2: float
    n_pools: int
    readout: str
    law: str
    decay: str
    N_test: int | None


def _one_pool(pb, P, lam, pool, N_test, law, decay, n_contexts, seed, max_iter, tol, n_knots):
    """Every error for fresh tasks (``pool=None``) or one pool (a dict of floats)."""
    D, N = pb.D, pb.N
    Nt = N if N_test is None else N_test
    train = distribution(pb, pool, N)
    law_g, lam_eff = _balanced(pb, P, lam, pool, train.Ey, seed, decay, max_iter, tol)
    fresh = distribution(pb, None, Nt)
    tests = [fresh] if pool is None else [fresh, train if Nt == N else distribution(pb, pool, Nt)]
    gen = np.random.default_rng([seed, D, 5])
    vanished = law_g.norm2 == 0.0          # λ ≥ λ*: t ≡ 0, every readout is the constant E_train y
    comp_tr = components(train, law_g, n_contexts, gen) if law == "finite" and not vanished else None
    out = {}
    for name, dist in zip(("test", "test_idg"), tests):
        out[name + "_linear"], out[name + "_ridge"] = linear_errors(train, dist, law_g, lam)
        if comp_tr is None:         # a linear link: Gaussian labels given the task, the optimal readout is linear
            linear = pb.link.is_linear or vanished
            opt = out[name + "_linear"] if linear else gaussian_optimal(dist, law_g)
            out[name + "_optimal"], out[name + "_optimal_se"] = opt, 0.0
    if comp_tr is not None:
        todo = [(None if dist is train else components(dist, law_g, n_contexts, gen), dist.V) for dist in tests]
        for name, (err, se) in zip(("test", "test_idg"), mixture_errors(pb.link, comp_tr, todo)):
            out[name + "_optimal"], out[name + "_optimal_se"] = err, se
    gamma2 = np.sqrt(law_g.norm2) if decay == "balanced" else law_g.norm2     # ‖Γ‖² of the learner (Γ = Ŵ/a₁)
    fit, decay_a, errors = trained_readout(train, tests, law_g, P, lam, n_knots, n_contexts,
                                           np.random.default_rng([seed, D, 11]), decay)
    out.update(train_fit=fit[0], train_trained=fit[0] + decay_a + 0.5 * lam * gamma2, train_trained_se=fit[1])
    for name, (err, se) in zip(("test", "test_idg"), errors):
        out[name + "_trained"], out[name + "_trained_se"] = err, se
    c = train.pb.feature_variance
    rho = float(np.sqrt(D * c) * np.trace(law_g.mean) / D)
    penalty = lam * np.sqrt(law_g.norm2) if decay == "balanced" else 0.5 * lam * law_g.norm2
    out.update(train_linear=0.5 * law_g.fit + penalty + 0.5 * train.Ey**2 * lam / (1.0 + lam), lam_eff=lam_eff,
               rho=rho, sigma2=c * law_g.norm2 - rho * rho, moments=second_moments(fresh, law_g))
    return out


@public(readout=choice(READOUTS), law=choice(LAWS), decay=choice(DECAYS), n_pools=integer(maximum=10_000), rng=seed(),
        max_iter=integer(maximum=10**6), tol=tolerance(), n_knots=integer(maximum=64), **LEARNER)
def feature_learner_theory(pb, P, lam, N_test=None, readout="trained", law="finite", decay="balanced", pool=None,
                           n_pools=4, n_contexts=None, rng=0, max_iter=50, tol=1e-8, n_knots=5,
                           progress=True) -> FeatureTheory:
    r"""Dataset-averaged errors of the trained feature learner, fresh tasks or a task pool (module docstring).

    Cost: one theory for fresh tasks, one per pool with a task pool (linear in ``n_pools``); measured with 4 pools at
    ``D = 10``, ``N = 20``, ``K = 10``, ``P = 2500`` (relu), 64 s on a shared 2-core machine under a load average of
    about 9 (about 16 s a pool, caches cold).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs, ``D >= 2``, any link; ``tasks=K`` adds the in-distribution error.
    P : float
        Training prompts (``>= 1``).
    lam : float
        Weight decay ``λ >= 1e-20`` (:data:`replica._learner_common.LAM_MIN`) of the feature learner (on ``Γ`` and the
        readout).
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``); the readout is the one of the training length.
    readout : {"trained", "optimal", "linear"}
        Which errors ``test``/``test_idg``/``train`` report: the learner's own readout (default; ``n_knots`` hinges
        fitted by ridge on ``P`` in-sample values of ``t``, module docstring), the optimal readout ``E_train[y|t]``
        of the training distribution (no training error), or the best ``a₀ + a₁ t`` of the training distribution.
    law : {"finite", "gaussian"}
        Optimal readout: the finite-``D`` scale mixture (default; :func:`~replica._feature_mixture.mixture_error`, Monte
        Carlo over ``n_contexts`` components per distribution), or ``(u, t)`` jointly Gaussian (the Hermite formula of
        each test distribution's own optimal readout; exact as ``D → ∞``, but at ``D = 6`` it misses by 1 % (tanh)
        to 9 % (sign): ``docs/feature_learner.md``).
    decay : {"balanced", "plain"}
        The ridge ``Γ̂`` at the balanced effective decay ``λ/‖W‖_F`` or at ``λ``.
    pool : None or array_like (K, D)
        With ``pb.tasks = K``: average over ``n_pools`` random pools (``None``; pool ``j`` is
        :func:`replica._pool_theory.draw_theory_pool`) or condition on the given pool.
    n_pools : int
        Random pools averaged (``pool=None``).
    n_contexts : None or int
        Components of each mixture (``law="finite"``; default 2048 for fresh tasks, 1024 per pool; bias
        ``O(1/n_contexts)``: measured −0.5 % (ICL) and +0.2 % (IDG) at 1024, within one s.e.),
        ``64 <= n_contexts <= 2**20`` and within the memory limit (:func:`~replica._feature_mixture.mixture_memory`:
        ~2.5 MB per component for a smooth link).
    rng : int
        Seed of the sampled contexts and of the pools.
    max_iter : int
        Secant steps of the ``λ_eff`` fixed point.
    tol : float
        Its tolerance on ``log λ_eff``.
    n_knots : int
        Hinges ``J`` of the trained readout (``1 <= J <= 64``; the simulator's default 5).
    progress : bool
        Show a progress bar (over the pools of a task-pool problem) when the call lasts more than two seconds.

    Returns
    -------
    FeatureTheory

    Raises
    ------
    ValueError
        Bad input (the argument is named).
    linattn.ConvergenceError
        The ``λ_eff`` fixed point or the ridge theory did not converge.
    """
    with whole_call():                      # many mid-sized products over readouts and pools (linattn.threads)
        return _feature_learner_theory(pb, P, lam, N_test, readout, law, decay, pool, n_pools, n_contexts, rng,
                                       max_iter, tol, n_knots, progress)


def _feature_learner_theory(pb, P, lam, N_test, readout, law, decay, pool, n_pools, n_contexts, rng, max_iter, tol,
                            n_knots, progress=False):
    """:func:`feature_learner_theory` of checked arguments but ``n_contexts`` and ``pool``, checked here against the
    problem (with the memory guards they size)."""
    if n_contexts is None:
        n_contexts = 2048 if pb.tasks is None else 1024
    n_contexts = check.positive_int("n_contexts", n_contexts, minimum=64, maximum=2**20)
    if pool is not None:
        if pb.tasks is None:
            check.fail("pool", "<array>", "None for a problem with fresh tasks (pb.tasks = None)")
        pool = check.finite_array("pool", pool, shape=(pb.tasks, pb.D))
        if np.any(np.all(pool == 0, axis=1)):
            check.fail("pool", "<array with a zero row>", "tasks with nonzero rows (each task's direction enters)")
    for name, length in (("N_test", N_test), ("pb", pb.N)):     # the sampled contexts' tokens (_components)
        if length is not None:
            check.memory(8.0 * 2 * n_contexts * length * (pb.D + 1),
                         f"the tokens of {n_contexts} sampled contexts of length {length} (D = {pb.D})",
                         f"{name} = {length if name == 'N_test' else pb}")
    if law == "finite":         # the optimal readout's mixture (_mixture_errors): n_contexts components each
        mixture_memory(pb.link, n_contexts, N_T, N_Z, "n_contexts")
    from ._pool_theory import draw_theory_pool

    if pb.tasks is None:
        pools = [None]
    elif pool is not None:
        pools = [pool]
    else:
        pools = [draw_theory_pool(pb, rng, j) for j in range(n_pools)]
    bar = dict(desc=f"feature learner theory, {len(pools)} pools", disable=not progress or pb.tasks is None,
               leave=False, delay=PROGRESS_DELAY)
    runs = [_one_pool(pb, P, lam, W, N_test, law, decay, n_contexts, int(rng) + 7919 * j, max_iter, tol, n_knots)
            for j, W in enumerate(tqdm(pools, **bar))]

    def mean(key):
        return float(np.mean([r[key] for r in runs]))

    def se(key):
        if len(runs) > 1:                       # pool-to-pool spread (carries each pool's sampling error too)
            return mean_se([r[key] for r in runs])[1]
        if pb.tasks is not None and pool is None:       # one random pool: its spread over pools is not computable
            return float("nan")
        return float(runs[0].get(key + "_se", 0.0))      # one given pool or fresh tasks: the contexts' sampling

    ut, yt, tt = (float(np.mean([r["moments"][i] for r in runs])) for i in range(3))
    ov = Overlaps(ut=ut, yt=yt, tt=tt, r=0.0 if tt == 0 else float(np.clip(ut / np.sqrt(tt), -1.0, 1.0)))
    key = "_" + readout
    idg = pb.tasks is not None
    train_linear = mean("train_linear")
    train = {"trained": mean("train_trained"), "linear": train_linear, "optimal": None}[readout]
    return FeatureTheory(problem=pb, P=P, lam=lam, test=mean("test" + key), test_se=se("test" + key),
                         test_idg=mean("test_idg" + key) if idg else None,
                         test_idg_se=se("test_idg" + key) if idg else None,
                         train=train, train_se=se("train_trained") if readout == "trained" else (
                             None if readout == "optimal" else 0.0),
                         train_fit=mean("train_fit"), train_linear=train_linear,
                         test_trained=mean("test_trained"), test_optimal=mean("test_optimal"),
                         test_linear=mean("test_linear"), test_ridge=mean("test_ridge"),
                         test_idg_trained=mean("test_idg_trained") if idg else None,
                         test_idg_optimal=mean("test_idg_optimal") if idg else None,
                         test_idg_linear=mean("test_idg_linear") if idg else None,
                         test_idg_ridge=mean("test_idg_ridge") if idg else None, overlaps=ov,
                         lam_effective=mean("lam_eff"), rho=mean("rho"), sigma2=mean("sigma2"),
                         n_pools=0 if pb.tasks is None else len(pools), readout=readout, law=law, decay=decay,
                         N_test=N_test)
