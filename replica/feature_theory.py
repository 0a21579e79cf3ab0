r"""Theory of the feature learner: linear attention on the raw input, then a learned nonlinear readout.

The feature learner (:func:`validation.simulators.learners.feature_learner`; Gu, Xu & Zdeborová, conventions §5)
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

(normalised Hermite coefficients, :func:`hermite_coefficients`; ``c₀ = μ₀``, ``c₁ = μ₁``, ``Σ_{k≥2} c_k² = μ_*²``;
O'Donnell, *Analysis of Boolean Functions*, 2014, ch. 11; Mehler's formula). What is exact and what is not at
finite ``D``: given the test task and context ``(w, s)``, ``(u, t)`` *is* exactly jointly Gaussian (``x_q`` is
Gaussian and independent of them), with ``Var u = r``, ``Var t = |Γᵀs|²``, ``Cov = sᵀΓw/√D``; the unconditional law is
a scale mixture of Gaussians over ``(w, s)`` (the task norm ``r``, the context norm ``|s|²`` — which carries the label
noise and the label law — and the overlap fluctuate at order ``1/√D``). The Gaussian formula replaces the mixture
by one Gaussian with the exact second moments; it is exact as ``D → ∞`` and, for the linear link, reduces to the
linear-readout error. ``law="finite"`` keeps the mixture: ``E[E[y|t]²] = ∫ num(t)²/den(t) dt`` with
``den = E_{w,s} N(t; 0, v)``, ``num = E_{w,s}[N(t; 0, v) E(f(u) | t, w, s)]`` averaged over sampled ``(w, s)``
(:func:`mixture_readout_power`), the parameters' part ``Γ = α I + Δ`` with ``Δ`` isotropic (see below).

**The trained ``Γ``.** The readout error depends on ``Γ`` only through ``r_{ut}`` (a scale-invariant ratio). The
theory takes ``Γ`` from the library's replica theory of the reduced linear attention at zero temperature
(:func:`replica.stationary` with ``beta=inf``, the exact one-prompt label law of the nonlinear link): with its order
parameters ``ρ`` (overlap with the ICL direction ``vec(I)/√D``, in ``θ̃ = √c θ`` units) and ``σ²`` (norm orthogonal to
it), ``tr Γ/D = ρ/√(D c)`` and ``c‖Γ‖² = ρ² + σ²``, so

.. math:: r_{ut}² = \frac{k_u² ρ²}{D c\,(ρ² + σ²)}\,\frac{c}{c_{N_\mathrm{test}}}.

The feature learner's weight decay acts on ``Γ`` *and* the readout: for a readout of slope ``a₁`` the penalty
``λ(‖Γ‖² + a₁²)/2`` at fixed product ``W = a₁Γ`` is minimal at ``a₁² = ‖W‖_F``, where it is ``λ‖W‖_F`` — a ridge on
``W`` with the effective decay ``λ_eff = λ/‖W‖_F`` (``decay="balanced"``, solved self-consistently with
``‖W‖_F² = (ρ² + σ²)/c`` from the ridge theory at ``λ_eff``; ``decay="plain"`` uses ``λ``). Not modelled: the
trained ``Γ`` is the ridge ``Γ`` only when the readout is (close to) linear during training; the readout is fitted
on ``P`` samples (its estimation error is not included); order-parameter fluctuations between datasets (relative
``O(1/M)``).

References: H. Gu, Y. Xu, L. Zdeborová, kernel vs feature learners of nonlinear in-context learning (2026);
Y. M. Lu et al., PNAS 122 (2025) (the linear-attention theory); M. Letey et al. (2025) (the Hermite decomposition of
the link, the nonlinearity–noise equivalence).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import check, links, sampling
from linattn.errors import ConvergenceError
from linattn.results import short_repr

READOUTS = ("optimal", "linear")
LAWS = ("gaussian", "finite")
DECAYS = ("balanced", "plain")
#: Hermite orders summed in the Gaussian formula (the remainder is bounded by ``r^{2(K+1)}`` times the tail mass)
HERMITE_ORDER = 200
#: accepted bound on the truncation remainder of the Hermite sum (relative to the label variance)
HERMITE_TOL = 1e-9


# --------------------------------------------------------------------------- Hermite coefficients
@functools.lru_cache(maxsize=64)
def _hermite_table(link, order):
    z, logw = links.half_rule(links.ORDERS[-1])
    keep = np.abs(z) < 30.0                # the Gaussian weight beyond is below e^{-450}
    z, w = z[keep], np.exp(logw[keep])
    fz = link(z)
    out = np.empty(order + 1)
    h_prev, h = np.zeros_like(z), np.ones_like(z)        # He_k(z)/√(k!) by the stable three-term recurrence
    for k in range(order + 1):
        out[k] = float(np.sum(w * fz * h))
        h_prev, h = h, (z * h - np.sqrt(k) * h_prev) / np.sqrt(k + 1.0)
    ef2 = float(np.sum(w * fz * fz))
    out.setflags(write=False)
    return out, ef2


def hermite_coefficients(link, order=HERMITE_ORDER):
    r"""Normalised Hermite coefficients ``c_k = E[f(z) He_k(z)]/\sqrt{k!}``, ``k = 0..order``, and ``E f(z)²``.

    ``Σ_k c_k² = E f(z)²`` (Parseval); ``c₀ = μ₀``, ``c₁ = μ₁`` (conventions §6.3). Composite Gauss–Legendre quadrature
    of :mod:`linattn.links` (panel edges at 0: the kinks of ``relu`` and ``sign`` are integrated exactly).

    Parameters
    ----------
    link : str, callable or linattn.links.Link
    order : int
        Highest degree ``K`` (``0 <= K <= 400``).

    Returns
    -------
    coefficients : ndarray (order + 1,)
    second_moment : float
        ``E f(z)²``.
    """
    link = links.as_link(link)
    order = check.nonneg_int("order", order, maximum=400)
    link.hermite                                          # validates the link (finite, square-integrable)
    c, ef2 = _hermite_table(link, order)
    return c.copy(), ef2


def gaussian_readout_power(link, r, order=HERMITE_ORDER):
    r"""``E[E[f(u)|t]²] = Σ_k c_k² r^{2k}`` for ``(u, t)`` jointly Gaussian, ``u ~ N(0, 1)``, correlation ``r``.

    Parameters
    ----------
    link : str, callable or linattn.links.Link
    r : float
        Correlation ``|r| <= 1``.
    order : int
        Terms summed; the remainder ``<= r^{2(K+1)} (E f² − Σ_{k≤K} c_k²)`` is added at half its bound.

    Returns
    -------
    float

    Raises
    ------
    linattn.ConvergenceError
        If the remainder bound exceeds ``HERMITE_TOL`` times ``E f²`` (``|r|`` too close to 1 for ``order``).
    """
    r = check.real("r", r, low=-1.0, high=1.0)
    c, ef2 = hermite_coefficients(link, order)
    k = np.arange(c.size)
    partial = float(np.sum(c * c * r ** (2 * k)))
    tail = max(ef2 - float(np.sum(c * c)), 0.0) * r ** (2 * (c.size))
    if tail > HERMITE_TOL * max(ef2, 1e-300):
        raise ConvergenceError(f"Hermite series of E[E[f(u)|t]^2] at r = {r:.6g}: remainder bound {tail:.3g} > "
                               f"{HERMITE_TOL:g} E f^2 after {c.size} terms (increase order)")
    return partial + 0.5 * tail


# --------------------------------------------------------------------------- exact moments of a given Γ
@functools.lru_cache(maxsize=64)
def _radial(link, D):
    """``(E_r φ₀(r), E_r[√r φ₁(r)])`` over ``r ~ χ²_D/D`` (``E y`` without noise, and ``k_u``)."""
    if link.is_linear:
        return 0.0, float(link.slope)
    r, w = links.r_rule(D, links.R_ORDERS[-1])
    keep = w > 0.0
    r, w = r[keep], w[keep]
    m = links.gauss_moments(link, np.sqrt(r), links.ORDERS[-1])
    return float(w @ m[:, 0]), float(w @ (np.sqrt(r) * m[:, 1]))


def label_mean(pb) -> float:
    """``E y = E_r E f(√r g)`` (exact at finite ``D``).

    Parameters
    ----------
    pb : linattn.Problem

    Returns
    -------
    float
    """
    check.problem(pb)
    return _radial(pb.link, pb.D)[0]


def query_overlap_strength(pb) -> float:
    """``k_u = E_r[√r φ₁(r)]``: ``E[u t] = k_u tr Γ / D`` (module docstring; ``→ μ₁`` as ``D → ∞``).

    Parameters
    ----------
    pb : linattn.Problem

    Returns
    -------
    float
    """
    check.problem(pb)
    return _radial(pb.link, pb.D)[1]


@dataclass(frozen=True)
class Overlaps:
    """Exact second moments of the attention output ``t = sᵀΓx_q`` (module docstring).

    Attributes
    ----------
    ut : float
        ``E[u t]``.
    yt : float
        ``E[y t]``.
    tt : float
        ``E[t²]``.
    r : float
        ``corr(u, t) = E[u t]/\\sqrt{E t²}`` (``E u² = 1``).
    """

    __repr__ = short_repr

    ut: float
    yt: float
    tt: float
    r: float


def _overlaps(pb, trace_over_D, norm):
    ut = query_overlap_strength(pb) * trace_over_D
    yt = pb.teacher_strength * trace_over_D
    r = 0.0 if norm == 0 else float(np.clip(ut / np.sqrt(norm), -1.0, 1.0))
    return Overlaps(ut=float(ut), yt=float(yt), tt=float(norm), r=r)


def _isotropic(pb, what):
    check.problem(pb)
    if pb.covariance is not None or pb.tasks is not None:
        check.fail("pb", pb, f"a problem with isotropic inputs and fresh tasks for {what}")


def gamma_overlaps(pb, Gamma, N_test=None) -> Overlaps:
    """The exact ``E[u t]``, ``E[y t]``, ``E[t²]`` and ``r`` of a given ``Γ`` (fresh tasks, isotropic inputs).

    Parameters
    ----------
    pb : linattn.Problem
    Gamma : array_like (D, D)
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).

    Returns
    -------
    Overlaps
    """
    _isotropic(pb, "gamma_overlaps")
    G = check.finite_array("Gamma", Gamma, shape=(pb.D, pb.D))
    pbt = _at_length(pb, N_test)
    return _overlaps(pbt, float(np.trace(G)) / pb.D, pbt.feature_variance * float(np.sum(G * G)))


def _at_length(pb, N_test):
    if N_test is None:
        return pb
    N_test = check.positive_int("N_test", N_test)
    return pb if N_test == pb.N else dataclasses.replace(pb, N=N_test)


def readout_error(pb, overlaps, readout="optimal") -> float:
    r"""The test error of the readout given the attention's exact second moments (module docstring).

    ``readout="linear"``: ``½[V − (E y)² − E[yt]²/E[t²]]`` (exact). ``"optimal"``:
    ``½(V − Σ_k c_k² r^{2k})`` (``(u, t)`` jointly Gaussian).

    Parameters
    ----------
    pb : linattn.Problem
        The problem at the evaluation context length.
    overlaps : Overlaps
    readout : {"optimal", "linear"}

    Returns
    -------
    float
    """
    check.problem(pb)
    check.choice("readout", readout, READOUTS)
    if not isinstance(overlaps, Overlaps):
        check.fail("overlaps", overlaps, "an Overlaps (replica.feature_theory.gamma_overlaps)")
    V = pb.label_variance
    if readout == "linear":
        explained = 0.0 if overlaps.tt == 0 else overlaps.yt**2 / overlaps.tt
        return float(0.5 * (V - label_mean(pb) ** 2 - explained))
    c, _ = hermite_coefficients(pb.link)
    if pb.link.is_linear:                     # Gaussian labels: E[y|t] is linear, the linear formula is exact
        return readout_error(pb, overlaps, "linear")
    del c
    return float(0.5 * (V - gaussian_readout_power(pb.link, overlaps.r)))


# --------------------------------------------------------------------------- finite-D mixture
def mixture_readout_power(pb, alpha, delta2, n_contexts=4096, rng=0, n_t=401, n_z=48, N_test=None) -> float:
    r"""``E[E[f(u)|t]²]`` for ``Γ = α I + Δ`` (``Δ`` isotropic with ``E Δ_ij² = δ²``), keeping the exact scale mixture.

    Given a sampled test task and context ``(w, s)`` (raw tokens, :func:`linattn.sampling.sample_tokens`), ``(u, t)``
    is jointly Gaussian with ``Var u = |w|²/D``, ``Cov(u, t) = α s·w/√D`` and ``Var t = (α² + D δ²)|s|²`` — the
    isotropic ``Δ`` adds ``sᵀΔw/√D`` with variance ``δ²|s|²|w|²/D``, taken as part of ``u``'s unexplained Gaussian
    part (module docstring). With ``den(t) = mean_k N(t; 0, v_k)`` and ``num(t) = mean_k N(t; 0, v_k) m_k(t)``,
    ``m_k(t) = E_z f(κ_k t/v_k + \sqrt{r_k − κ_k²/v_k} z)``, the power is ``∫ num²/den dt`` (trapezoid on ``±8``
    s.d. of ``t``; Gauss–Hermite in ``z``). A context with ``s = 0`` (possible when ``f`` vanishes on a half
    line) puts an atom at ``t = 0``, added as its probability times its conditional mean squared.

    Parameters
    ----------
    pb : linattn.Problem
    alpha : float
        ``tr Γ/D``.
    delta2 : float
        ``δ² >= 0``, the per-entry variance of the part of ``Γ`` orthogonal to ``I``.
    n_contexts : int
        Sampled ``(w, s)`` (the mixture's components; bias ``O(1/n_contexts)``).
    rng : int or numpy.random.Generator
    n_t, n_z : int
        Grid points in ``t`` and Gauss–Hermite nodes in ``z``.
    N_test : int, optional
        Context length of the test prompts.

    Returns
    -------
    float
    """
    _isotropic(pb, "mixture_readout_power")
    alpha = check.real("alpha", alpha)
    delta2 = check.nonnegative("delta2", delta2)
    n_contexts = check.positive_int("n_contexts", n_contexts, minimum=2)
    n_t = check.positive_int("n_t", n_t, minimum=11)
    n_z = check.positive_int("n_z", n_z, minimum=4, maximum=200)
    pbt = _at_length(pb, N_test)
    D = pb.D
    gen = check.rng(rng)
    tok = sampling.sample_tokens(pbt, n_contexts, gen)
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / pbt.N
    rw = np.sum(tok.w**2, axis=1) / D
    s2 = np.sum(s * s, axis=1)
    kap = alpha * np.einsum("pd,pd->p", s, tok.w) / np.sqrt(D)
    if alpha == 0 and delta2 == 0:
        check.fail("alpha", alpha, "nonzero, or delta2 > 0 (t is identically 0 otherwise)")
    v = (alpha**2 + D * delta2) * s2
    zn, zw = np.polynomial.hermite_e.hermegauss(n_z)
    zw = zw / zw.sum()
    atom = v <= 0.0                 # a context with s = 0 (all labels 0, e.g. relu): t = 0 exactly, an atom
    power_atom = 0.0
    if atom.any():
        m0 = float(np.mean(pb.link(np.sqrt(rw[atom])[:, None] * zn) @ zw))
        power_atom = atom.mean() * m0**2
        rw, kap, v = rw[~atom], kap[~atom], v[~atom]
    cond = np.maximum(rw - kap**2 / v, 0.0)
    sd = np.sqrt(np.mean(v))
    t = np.linspace(-8.0 * sd, 8.0 * sd, n_t)
    dens = np.exp(-0.5 * t[None, :] ** 2 / v[:, None]) / np.sqrt(2 * np.pi * v[:, None])     # (K, T)
    mean = (kap / v)[:, None] * t[None, :]
    m = np.einsum("ktz,z->kt", pb.link(mean[:, :, None] + np.sqrt(cond)[:, None, None] * zn), zw)
    den = dens.sum(axis=0) / n_contexts
    num = (dens * m).sum(axis=0) / n_contexts
    integrand = np.where(den > 0, num**2 / np.where(den > 0, den, 1.0), 0.0)
    return float(np.trapezoid(integrand, t)) + power_atom


# --------------------------------------------------------------------------- the theory
@dataclass(frozen=True, eq=False)
class FeatureTheory:
    """Test error of the feature learner from the linear-attention theory (module docstring).

    Attributes
    ----------
    test : float
        The error of the requested readout (``readout``).
    test_optimal, test_linear : float
        Optimal readout ``E[y|t]`` (Gaussian formula, or the finite-``D`` mixture with ``law="finite"``) and the best
        linear readout.
    overlaps : Overlaps
        ``E[u t]``, ``E[y t]``, ``E[t²]`` (in units of the ridge ``Γ`` of the stationary theory) and ``r``.
    lam_effective : float
        The weight decay of the ridge ``Γ`` (``λ`` or the balanced ``λ_eff``).
    rho, sigma2 : float
        Order parameters of the ridge ``Γ`` (:class:`replica.OrderParameters`).
    readout, law, decay : str
    N_test : int or None
    """

    __repr__ = short_repr

    problem: linattn.Problem
    P: float
    lam: float
    test: float
    test_optimal: float
    test_linear: float
    overlaps: Overlaps
    lam_effective: float
    rho: float
    sigma2: float
    readout: str
    law: str
    decay: str
    N_test: int | None


@functools.lru_cache(maxsize=64)
def _centred_link(link, mean):
    """``f − E y``: the readout's intercept absorbs the label mean, so ``Γ`` is trained on centred labels."""
    return links.Link(f"custom:{link.name}-centred", lambda z: link(z) - mean)


def _centred(pb):
    m = label_mean(pb)
    if m == 0.0:
        return pb
    return dataclasses.replace(pb, link=_centred_link(pb.link, m))


def _ridge_gamma(pb, P, lam):
    """``(tr Γ/D, ‖Γ‖_F², ρ, σ²)`` of the dataset-averaged ridge ``Γ`` (zero-temperature replica theory of the reduced
    model on the centred labels)."""
    from .stationary import stationary

    pc = _centred(pb)
    th = stationary(pc, P, np.inf, lam, model="reduced")
    rho, sigma2 = float(th.order.rho), float(np.sum(th.order.sigma2))
    c = pc.feature_variance
    return rho / np.sqrt(pb.D * c), (rho**2 + sigma2) / c, rho, sigma2


def feature_learner_theory(pb, P, lam, N_test=None, readout="optimal", law="finite", decay="balanced",
                           n_contexts=4096, rng=0, max_iter=100, tol=1e-8) -> FeatureTheory:
    r"""Dataset-averaged test error of the trained feature learner (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs, fresh tasks (``tasks=None``), any link.
    P : float
        Training prompts (``>= 1``).
    lam : float
        Weight decay ``λ > 0`` of the feature learner (on ``Γ`` and the readout).
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).
    readout : {"optimal", "linear"}
        Which error ``test`` reports: ``E[y|t]`` or the best ``a₀ + a₁ t``.
    law : {"finite", "gaussian"}
        Optimal readout: the finite-``D`` scale mixture (default; :func:`mixture_readout_power`, Monte Carlo over
        ``n_contexts`` contexts, about 1 s), or ``(u, t)`` jointly Gaussian (the Hermite formula; exact as
        ``D → ∞``, but at ``D = 6`` it misses by 1 % (tanh) to 9 % (sign), where it even exceeds the exact
        linear-readout error: ``docs/feature_learner.md``).
    decay : {"balanced", "plain"}
        The ridge ``Γ`` at the balanced effective decay ``λ/‖W‖_F`` or at ``λ``.
    n_contexts : int
        ``law="finite"`` only.
    rng : int or numpy.random.Generator
        ``law="finite"`` only.
    max_iter : int
        Iterations of the ``λ_eff`` fixed point.
    tol : float
        Its relative tolerance.

    Returns
    -------
    FeatureTheory

    Raises
    ------
    ValueError
        Bad input (the argument is named).
    linattn.ConvergenceError
        The ``λ_eff`` fixed point or the replica theory did not converge.
    """
    _isotropic(pb, "feature_learner_theory")
    P = check.real("P", P, low=1.0)
    lam = check.positive("lam", lam)
    check.choice("readout", readout, READOUTS)
    check.choice("law", law, LAWS)
    check.choice("decay", decay, DECAYS)
    max_iter = check.positive_int("max_iter", max_iter)
    tol = check.tolerance("tol", tol)
    pbt = _at_length(pb, N_test)
    lam_eff = lam
    trace_over_D, normF2, rho, sigma2 = _ridge_gamma(pb, P, lam_eff)
    if decay == "balanced":
        for _ in range(max_iter):
            new = lam / np.sqrt(normF2)
            if abs(np.log(new / lam_eff)) < tol:
                lam_eff = new
                break
            lam_eff = float(np.sqrt(new * lam_eff))           # geometric damping (the map is monotone decreasing)
            trace_over_D, normF2, rho, sigma2 = _ridge_gamma(pb, P, lam_eff)
        else:
            raise ConvergenceError(f"feature_learner_theory: the balanced decay λ_eff = λ/‖W‖ did not converge in "
                                   f"{max_iter} iterations (last λ_eff = {lam_eff:.6g}, tol = {tol:g})")
        trace_over_D, normF2, rho, sigma2 = _ridge_gamma(pb, P, lam_eff)
    D = pb.D
    ov = _overlaps(pbt, trace_over_D, pbt.feature_variance * normF2)
    test_linear = readout_error(pbt, ov, "linear")
    if law == "gaussian" or pb.link.is_linear:
        test_optimal = readout_error(pbt, ov, "optimal")
    else:
        alpha = trace_over_D
        delta2 = max(normF2 - D * alpha**2, 0.0) / (D * D)
        power = mixture_readout_power(pb, alpha, delta2, n_contexts=n_contexts, rng=rng, N_test=N_test)
        test_optimal = 0.5 * (pbt.label_variance - power)
    test = test_optimal if readout == "optimal" else test_linear
    return FeatureTheory(problem=pb, P=P, lam=lam, test=float(test), test_optimal=float(test_optimal),
                         test_linear=float(test_linear), overlaps=ov, lam_effective=float(lam_eff), rho=rho,
                         sigma2=sigma2, readout=readout, law=law, decay=decay,
                         N_test=None if N_test is None else int(N_test))


# --------------------------------------------------------------------------- Monte-Carlo check of a given Γ
@dataclass(frozen=True)
class BinnedError:
    """Monte-Carlo error of the optimal readout of a fixed ``Γ`` (:func:`binned_readout_error`).

    Attributes
    ----------
    test, test_se : float
        ``½ E(y − E[y|t])²`` estimated with ``E[y|t]`` the bin means, and its standard error.
    bias_bound : float
        Estimate of the binning bias (:func:`binned_readout_error`).
    """

    __repr__ = short_repr

    test: float
    test_se: float
    bias_bound: float


def binned_readout_error(pb, Gamma, n=1_000_000, bins=500, rng=0, N_test=None) -> BinnedError:
    r"""Monte-Carlo test error of the optimal readout ``E[y|t]`` of a fixed ``Γ`` (no Gaussian assumption).

    Draws ``n`` exact test prompts (:meth:`linattn.Problem.sample`), sorts them by ``t = sᵀΓx_q`` into ``bins``
    equal-count bins and estimates ``½ E Var(y | t)`` by the within-bin variances (``m/(m − 1)`` corrected, ``m`` the
    bin size). Binning replaces ``E[y|t]`` by the bin mean: it adds ``½ E Var(E[y|t] | bin)`` (positive), estimated by
    ``1/12`` of the mean squared jump between the means of neighbouring bins (``bias_bound``; conservative: the jumps
    also carry the bin means' sampling noise).

    Parameters
    ----------
    pb : linattn.Problem
    Gamma : array_like (D, D)
    n : int
        Test prompts (``>= 10 bins``).
    bins : int
    rng : int or numpy.random.Generator
    N_test : int, optional

    Returns
    -------
    BinnedError
    """
    _isotropic(pb, "binned_readout_error")
    G = check.finite_array("Gamma", Gamma, shape=(pb.D, pb.D))
    bins = check.positive_int("bins", bins, minimum=2)
    n = check.positive_int("n", n, minimum=10 * bins)
    pbt = _at_length(pb, N_test)
    data = pbt.sample(n, rng)
    t = data.predict(G)
    y = np.asarray(data.yq)
    order = np.argsort(t, kind="stable")
    m = n // bins
    yb = y[order[: m * bins]].reshape(bins, m)
    means = yb.mean(axis=1)
    resid2 = ((yb - means[:, None]) ** 2) * (m / (m - 1.0))
    per_bin = resid2.mean(axis=1)
    test = 0.5 * float(per_bin.mean())
    # s.e.: the bins are independent given the order statistics; use the per-prompt spread
    se = 0.5 * float(resid2.std(ddof=1)) / np.sqrt(resid2.size)
    bias = float(np.mean(np.diff(means) ** 2)) / 12.0
    return BinnedError(test=test, test_se=se, bias_bound=bias)
