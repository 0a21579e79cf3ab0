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

**The trained ``Γ``** (:func:`replica.kernel_theory.ridge_law`). The theory takes the ridge ``Γ̂`` of the reduced
linear attention on the *training* prompts — fresh tasks, or the pool's tasks (``pb.tasks = K``) — with the query labels
centred by the readout's intercept ``E_train y`` and the contexts ``s`` built from the raw labels, as the learner
sees them (centring the contexts too, as an earlier version did through :func:`replica.stationary`, put ``tr Γ/D``
20 % and ``E‖Γ‖²`` 40 % off the exact ridge for ``relu`` at ``D = 6``). Its law over datasets is Gaussian with the mean
``Γ̄`` and the covariance ``Cov(vec Γ̂) = C ⊗ I_D`` of the random-scale deterministic equivalent of
:mod:`replica.kernel_theory` with ``φ(x) = x`` (fresh tasks: ``Γ̄ = γI``, ``C = cI``; a pool: ``D × D`` matrices — at
finite ``D`` the pool's tasks are fixed directions and ``Γ̄`` is anisotropic, aligned with them).

**Second moments under a test distribution** (fresh tasks at ``N_test``, or the pool's tasks), exact for a given
``Γ`` and averaged over ``Γ̂``: ``E[t²] = tr(Γ̄ᵀS̄Γ̄) + D tr(S̄C)``, ``E[y t] = ⟨B, Γ̄⟩``, ``E[u t] = ⟨B_u, Γ̄⟩`` with
``S̄ = E[s sᵀ]``, ``B = E_w[E[s|w] E[y x_q|w]ᵀ]`` (:func:`linattn.kernel_learner.kernel_moments`, ``φ(x) = x``) and
``B_u = E_w[φ₁(r) √r ŵŵᵀ]`` (fresh: ``k_u I/D``; a pool: the mean over its tasks, so the IDG overlaps are
``wᵀΓ̄w``-type averages over the pool).

**The readout is fitted on the training distribution** and applied to each test distribution: ``g = E_train[y|t]``
(the mixture of the training components), ``E = ½[V − 2∫num_test g + ∫den_test g²]`` (:func:`mixture_error`); the
components of a distribution sample ``(w, s)`` from raw tokens and ``Γ̂ᵀs = Γ̄ᵀs + g``, ``g ~ N(0, (sᵀCs) I)``
(the dataset's fluctuation, one draw per component). The linear readout ``a₀ + a₁t`` takes ``a₀ = E_train y``,
``a₁ = E_train[yt]/E_train[t²]`` per dataset (averaged with ``E[X²] = X̄² + tr(BᵀCB)``). With fresh tasks and
``N_test = N`` train and test coincide and these are the formulas above.

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
(:func:`validation.simulators.learners.feature_learner`) fits its readout ``g(t) = ψ(t)ᵀa`` (:mod:`linattn.readout`:
``J`` hinges at the quantiles of the training ``t``, ridge ``λ`` on ``a``) on the *training* values ``t_μ`` of its own
``P`` prompts — not on test values. Those are in-sample predictions of the ridge ``Γ̂``: by the leave-one-out identity
of ridge regression (Sherman–Morrison), exactly,

.. math:: y_μ − c − t_μ = \frac{y_μ − c − t_μ^{(−μ)}}{1 + h_μ}
          \quad⇔\quad t_μ = \frac{h_μ (y_μ − c) + t_μ^{(−μ)}}{1 + h_μ},
          \qquad h_μ = \frac1P φ_μᵀ\Big(\frac1P Σ_{ν≠μ} φ_νφ_νᵀ + λ\Big)^{-1} φ_μ,

``φ_μ = vec(s_μ x_μᵀ)``, where ``t_μ^{(−μ)}`` is the output of the ridge fitted without prompt ``μ`` — distributed as a
*test* output of the training distribution. The random-scale theory gives the leverage per prompt type:
``h = |x_q|² sᵀAs/P`` with its resolvent ``A`` (the ``ω = 1/(1 + h)`` of :mod:`replica.kernel_theory`, returned as
:attr:`replica.kernel_theory.RidgeLaw.resolvent`). When ``P`` is below the ``D²`` parameters and ``λ`` small, ``h ≫ 1``
and the training ``t`` interpolate the labels: the readout learns ``g ≈`` identity on them and applies it to test
``t`` whose law is another — the memorisation regime the optimal readout cannot describe. The theory therefore draws
exact samples of the training law of ``(y, t_μ)`` (contexts from raw tokens, ``Γ̂`` from its law, ``x_q`` Gaussian;
:data:`N_QUERIES` queries per context), fits the learner's own readout (:func:`linattn.readout.quantile_knots`,
:func:`linattn.readout.fit_readout`) to ``N_REPLICATES`` training sets of ``P`` of them — so its finite-``P`` fit,
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
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from scipy import special

import linattn
from linattn import check, links, sampling, validate
from linattn import readout as readout_class
from linattn.errors import ConvergenceError
from linattn.numerics import quadrature
from linattn.numerics.stats import mean_se
from linattn.results import short_repr

from .kernel_theory import ridge_law
from .learners import learner_arguments

READOUTS = ("trained", "optimal", "linear")
#: the readouts of a given Γ (:func:`readout_error`)
GIVEN_GAMMA_READOUTS = ("optimal", "linear")
LAWS = ("gaussian", "finite")
DECAYS = ("balanced", "plain")
#: Hermite orders summed in the Gaussian formula (the remainder is bounded by ``r^{2(K+1)}`` times the tail mass)
HERMITE_ORDER = 200
#: accepted bound on the truncation remainder of the Hermite sum (relative to the label variance)
HERMITE_TOL = 1e-9


# --------------------------------------------------------------------------- Hermite coefficients
@functools.lru_cache(maxsize=64)
def _hermite_table(link, order):
    z, logw = quadrature.gauss_panels(links.ORDERS[-1])
    keep = np.abs(z) < 30.0                # the Gaussian weight beyond is below e^{-450}
    z, w = z[keep], np.exp(logw[keep])
    fz = link(z)
    out = np.array([float(np.sum(w * fz * h)) for h in quadrature.normalised_hermite(z, order)])
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
    r, w = quadrature.chi_square_rule(D, links.R_ORDERS[-1])
    keep = w > 0.0
    r, w = r[keep], w[keep]
    m = links.moment_table(link, np.sqrt(r), links.gauss_orders(link)[-1], ((0, 1), (1, 1)))[0]
    return float(w @ m[:, 0]), float(w @ (np.sqrt(r) * m[:, 1]))


def label_mean(pb) -> float:
    """``E y = E_r E f(√r g)`` (exact at finite ``D``; fresh Gaussian tasks, isotropic inputs).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs (``covariance=None``) and fresh tasks (``tasks=None``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` with anisotropic inputs or a task pool (``r = |w|²/D ~ χ²_D/D`` does not hold).
    """
    _isotropic(pb, "label_mean")
    return _radial(pb.link, pb.D)[0]


def query_overlap_strength(pb) -> float:
    """``k_u = E_r[√r φ₁(r)]``: ``E[u t] = k_u tr Γ / D`` (module docstring; ``→ μ₁`` as ``D → ∞``).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs (``covariance=None``) and fresh tasks (``tasks=None``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` with anisotropic inputs or a task pool (the identity ``E[u t] = k_u tr Γ/D`` does not hold).
    """
    _isotropic(pb, "query_overlap_strength")
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

    def __post_init__(self):
        for name in ("ut", "yt"):
            object.__setattr__(self, name, check.real(name, getattr(self, name)))
        object.__setattr__(self, "tt", check.nonnegative("tt", self.tt))
        object.__setattr__(self, "r", check.real("r", self.r, low=-1.0, high=1.0))


def _overlaps(pb, trace_over_D, norm):
    ut = query_overlap_strength(pb) * trace_over_D
    yt = pb.teacher_strength * trace_over_D
    r = 0.0 if norm == 0 else float(np.clip(ut / np.sqrt(norm), -1.0, 1.0))
    return Overlaps(ut=float(ut), yt=float(yt), tt=float(norm), r=r)


def _isotropic(pb, what):
    validate.problem(pb)
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
    with np.errstate(over="ignore"):
        norm = pbt.feature_variance * float(np.sum(G * G))
    check.finite_result(norm, {"Gamma": G}, "E[t²] = c ‖Γ‖²")
    return _overlaps(pbt, float(np.trace(G)) / pb.D, norm)


def _at_length(pb, N_test):
    N_test = check.n_test(N_test)
    return pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)


def readout_error(pb, overlaps, readout="optimal") -> float:
    r"""The test error of the readout given the attention's exact second moments (module docstring).

    ``readout="linear"``: ``½[V − (E y)² − E[yt]²/E[t²]]`` (exact). ``"optimal"``:
    ``½(V − Σ_k c_k² r^{2k})`` (``(u, t)`` jointly Gaussian).

    Parameters
    ----------
    pb : linattn.Problem
        The problem at the evaluation context length: isotropic inputs and fresh tasks.
    overlaps : Overlaps
    readout : {"optimal", "linear"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` with anisotropic inputs or a task pool, or ``overlaps`` not an :class:`Overlaps`.
    """
    _isotropic(pb, "readout_error")
    check.choice("readout", readout, GIVEN_GAMMA_READOUTS)
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
#: readout grid: points in t and its half-width in standard deviations of t
N_T = 241
T_WIDTH = 8.0
#: Gauss–Hermite nodes of the conditional mean of a smooth link (error < 3e-5 for tanh at conditional s.d. 1.2)
N_Z = 24
#: Gauss–Hermite nodes in ``t`` of each test component's own law (:func:`_component_terms`)
N_GH_T = 64


def _normal_rule(n):
    """Nodes and weights of the ``n``-node Gauss–Hermite rule of ``N(0, 1)``
    (:func:`linattn.numerics.quadrature.gauss_hermite`)."""
    z, logw = quadrature.gauss_hermite(n)
    return z, np.exp(logw)


def _conditional_mean(link, mean, sd, n_z):
    """``E f(mean + sd z)``, ``z ~ N(0, 1)``: closed forms for the linear, ``relu`` and ``sign`` links (their kinks
    defeat Gauss–Hermite quadrature), Gauss–Hermite with ``n_z`` nodes otherwise (smooth links)."""
    if link.is_linear:
        return float(link.slope) * mean
    if link.name in ("relu", "sign"):
        safe = np.where(sd > 0, sd, 1.0)
        x = mean / safe
        if link.name == "relu":
            out = mean * special.ndtr(x) + safe * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
            return np.where(sd > 0, out, np.maximum(mean, 0.0))
        return np.where(sd > 0, special.erf(x / np.sqrt(2.0)), np.sign(mean))
    zn, zw = _normal_rule(n_z)
    return np.asarray(link.fn(mean[..., None] + sd[..., None] * zn), float) @ zw   # link validated by the caller


def _mixture_fields(link, comp, t, n_z):
    """Density ``N(t; 0, v_k)`` and conditional mean ``m_k(t) = E[f(u) | t, k]`` of each component on the grid ``t``,
    and the atom (components with ``v = 0``: ``t = 0`` exactly) with its conditional mean ``E f(√r z)``."""
    r, kap, v = comp
    atom = v <= 0.0
    zn, zw = _normal_rule(max(n_z, 4))
    m_atom = link(np.sqrt(r[atom])[:, None] * zn) @ zw if atom.any() else np.zeros(0)
    r, kap, v = r[~atom], kap[~atom], v[~atom]
    dens = np.exp(-0.5 * t[None, :] ** 2 / v[:, None]) / np.sqrt(2 * np.pi * v[:, None])
    cond = np.sqrt(np.maximum(r - kap**2 / v, 0.0))
    m = _conditional_mean(link, (kap / v)[:, None] * t[None, :], np.broadcast_to(cond[:, None], dens.shape), n_z)
    return dens, m, atom, m_atom


def mixture_error(link, train, test, V, same=False, n_t=N_T, n_z=N_Z):
    r"""Error of the readout ``g = E_train[f(u) | t]`` on a test distribution, both scale mixtures of Gaussians.

    A *component* ``k`` is a jointly Gaussian ``(u, t)`` with ``Var u = r_k``, ``Cov(u, t) = κ_k``, ``Var t = v_k``
    (given a test task and context ``(w, s)``, and ``Γ``: ``r = |w|²/D``, ``κ = sᵀΓw/√D``, ``v = |Γᵀs|²``; module
    docstring). With ``den(t) = mean_k N(t; 0, v_k)`` and ``num(t) = mean_k N(t; 0, v_k) m_k(t)``,
    ``m_k(t) = E f(κ_k t/v_k + \sqrt{r_k − κ_k²/v_k}\, z)``, the readout is ``g = num_train/den_train`` and

    .. math:: E = ½\Big[V − 2∫ num_{test}\, g\, dt + ∫ den_{test}\, g²\, dt\Big]

    (``= ½(V − ∫ num²/den)`` when the two samples are one, ``same=True``). Trapezoid on ``±8`` s.d. of ``t`` (``g``
    held constant beyond the training support); the inner mean in closed form for ``relu``, ``sign`` and linear links,
    else Gauss–Hermite. Components with ``v = 0`` (a context with ``s = 0``) form an atom at ``t = 0`` with its own
    readout value. The standard error is the delta method on the components (influence functions; the two samples
    independent unless ``same``).

    Parameters
    ----------
    link : linattn.links.Link
    train, test : tuple of ndarray (r, kappa, v)
        The components of the training and of the test distribution.
    V : float
        ``E y²`` of the test distribution (label noise included).
    same : bool
        ``test`` is ``train`` (the readout's own distribution).
    n_t, n_z : int
        Grid points in ``t``; Gauss–Hermite nodes.

    Returns
    -------
    error, standard_error : float
    """
    link = links.as_link(link)
    train = _mixture_components("train", train)
    same = check.boolean("same", same)
    test = None if same else _mixture_components("test", test)
    V = check.nonnegative("V", V)
    n_t = check.positive_int("n_t", n_t, minimum=3, maximum=1 << 20)
    n_z = check.positive_int("n_z", n_z, maximum=quadrature.MAX_HERMITE_NODES)
    mixture_memory(link, max(train[0].size, 0 if test is None else test[0].size), n_t, n_z,
                   "the components (train, test), n_t or n_z")
    return _mixture_errors(link, train, [(test, V)], n_t, n_z)[0]


def _mixture_components(name, value):
    """Mixture components ``(r, kappa, v)``: three finite 1-d arrays of one length >= 2, ``r, v >= 0``."""
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        check.fail(name, value, "a tuple (r, kappa, v) of three 1-d arrays")
    r, kappa, v = (check.finite_array(name, a, ndim=1) for a in value)
    if not (r.size == kappa.size == v.size >= 2) or np.any(r < 0) or np.any(v < 0):
        check.fail(name, f"<arrays of sizes {r.size}, {kappa.size}, {v.size}>",
                   "three arrays of one size >= 2 with r >= 0 and v >= 0")
    return r, kappa, v


def mixture_memory(link, n, n_t, n_z, arguments):
    """Refuse (:func:`linattn.check.memory`, naming ``arguments``) mixture fields of ``n`` components on ``n_t`` grid
    points that would not fit: the densities and conditional means (``n × n_t``, a few held at once) and, for a smooth
    link, the Gauss–Hermite evaluations (``n × n_t × n_z``, twice: arguments and values; measured peak
    ``8 n n_t (2 n_z + 8)`` bytes, ``8 n n_t · 12`` for the closed-form links).

    Parameters
    ----------
    link : linattn.links.Link
    n, n_t, n_z : int
        Components (of the largest distribution), grid points in ``t``, Gauss–Hermite nodes.
    arguments : str
        The arguments that set ``n``, ``n_t`` and ``n_z`` (for the message).
    """
    closed = link.is_linear or link.name in ("relu", "sign")
    check.memory(8.0 * n * n_t * (12 if closed else 2 * n_z + 8),
                 f"the readout's fields of {n} mixture components on {n_t} points of t"
                 + ("" if closed else f" ({n_z} Gauss–Hermite nodes each)"), arguments)


def _component_terms(link, comp, t, g, n_z):
    """``E_k[g(t)² − 2 m_k(t) g(t)]`` over each component's own ``t ~ N(0, v_k)`` (components with ``v > 0``), by
    Gauss–Hermite on ``t/√v_k`` (``N_GH_T`` nodes), ``g`` interpolated on the grid ``t`` (constant beyond it).
    Per component, not on the shared grid: a component far narrower than the grid's spacing (a context with a tiny
    ``s``, frequent for ``relu`` at short test contexts: ``P(s = 0) = 2^{−N}``) would be integrated wrongly there —
    the cause of the jumps of the ICL error in ``N_test`` that an earlier version showed."""
    r, kap, v = comp
    keep = v > 0.0
    r, kap, v = r[keep], kap[keep], v[keep]
    zn, zw = _normal_rule(N_GH_T)
    tk = np.sqrt(v)[:, None] * zn[None, :]
    gk = np.interp(tk, t, g)
    cond = np.sqrt(np.maximum(r - kap**2 / v, 0.0))
    m = _conditional_mean(link, (kap / v)[:, None] * tk, np.broadcast_to(cond[:, None], tk.shape), n_z)
    return (gk * gk - 2.0 * m * gk) @ zw


def _mixture_errors(link, train, tests, n_t=N_T, n_z=N_Z):
    """:func:`mixture_error` for several test distributions ``[(components or None (= train), V), ...]`` sharing
    one readout (its fields computed once)."""
    v_all = np.concatenate([train[2]] + [c[2] for c, _ in tests if c is not None])
    sd = float(np.sqrt(np.mean(v_all)))
    if not sd > 0:
        raise ValueError("the attention output t is identically 0 (Γ = 0): no readout")
    t = np.linspace(-T_WIDTH * sd, T_WIDTH * sd, n_t)
    wt = np.full(n_t, t[1] - t[0])
    wt[[0, -1]] *= 0.5
    dtr, mtr, atr, matr = _mixture_fields(link, train, t, n_z)
    n_tr = train[0].size
    den = dtr.sum(axis=0) / n_tr
    num = (dtr * mtr).sum(axis=0) / n_tr
    ok = den > 1e-300 * max(float(den.max()), 1e-300)
    g = np.interp(t, t[ok], num[ok] / den[ok])                  # constant beyond the training support
    g_atom = float(matr.mean()) if matr.size else float(np.interp(0.0, t, g))
    out = []
    for comp, V in tests:
        same = comp is None
        if same:
            dte, mte, ate, mate, n_te = dtr, mtr, atr, matr, n_tr
        else:
            dte, mte, ate, mate = _mixture_fields(link, comp, t, n_z)
            n_te = comp[0].size
        phi = np.zeros(n_te)                                    # per test component: ∫ dens (g² − 2 m g)
        phi[~ate] = _component_terms(link, comp if not same else train, t, g, n_z)
        phi[ate] = g_atom**2 - 2.0 * mate * g_atom
        err = 0.5 * (V + float(phi.mean()))
        var = float(np.var(0.5 * phi, ddof=1)) / n_te
        if not same:                                            # the readout's own sampling error
            den_te = dte.sum(axis=0) / n_te
            num_te = (dte * mte).sum(axis=0) / n_te
            lever = np.where(ok, (den_te * g - num_te) / np.where(ok, den, 1.0), 0.0)
            psi = np.zeros(n_tr)
            psi[~atr] = (dtr * (mtr - g)) @ (lever * wt)
            var += float(np.var(psi, ddof=1)) / n_tr
        out.append((float(err), float(np.sqrt(var))))
    return out


def mixture_readout_power(pb, identity_weight, delta2, n_contexts=4096, rng=0, n_t=N_T, n_z=N_Z, N_test=None) -> float:
    r"""``E[E[f(u)|t]²]`` for ``Γ = α I + Δ`` (``Δ`` isotropic with ``E Δ_ij² = δ²``), keeping the exact scale mixture.

    Given a sampled test task and context ``(w, s)`` (raw tokens, :func:`linattn.sampling.sample_tokens`), ``(u, t)``
    is jointly Gaussian with ``Var u = |w|²/D``, ``Cov(u, t) = α s·w/√D`` and ``Var t = (α² + D δ²)|s|²`` (the
    isotropic ``Δ`` at its mean: ``sᵀΔw/√D`` is dropped from the covariance). The power is ``∫ num²/den dt``
    (:func:`mixture_error` with ``same=True``: ``E y² − 2E``).

    Parameters
    ----------
    pb : linattn.Problem
    identity_weight : float
        ``tr Γ/D``.
    delta2 : float
        ``δ² >= 0``, the per-entry variance of the part of ``Γ`` orthogonal to ``I``.
    n_contexts : int
        Sampled ``(w, s)`` (the mixture's components; bias ``O(1/n_contexts)``).
    rng : int or numpy.random.Generator
    n_t, n_z : int
        Grid points in ``t`` (``11 <= n_t <= 2**20``) and Gauss–Hermite nodes in ``z`` (smooth links).
    N_test : int, optional
        Context length of the test prompts.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad input, or sizes (``n_contexts`` × ``n_t``) whose arrays would not fit in memory.

    Notes
    -----
    The power depends on ``Γ`` only through its direction (``(u, t)`` and ``(u, ct)`` have the same conditional
    means): ``(α, δ²)`` of any scale are rescaled to ``max(|α|, √(D δ²)) = 1`` when that scale is outside
    ``[1e-100, 1e100]``, where ``α²`` or ``D δ²`` would over- or underflow.
    """
    _isotropic(pb, "mixture_readout_power")
    identity_weight = check.real("identity_weight", identity_weight)
    delta2 = check.nonnegative("delta2", delta2)
    n_contexts = check.positive_int("n_contexts", n_contexts, minimum=2)
    check.memory(8.0 * n_contexts * (2 * pb.N * pb.D + pb.N + 4 * pb.D), f"the tokens of {n_contexts} contexts",
                 "n_contexts")
    n_t = check.positive_int("n_t", n_t, minimum=11, maximum=1 << 20)
    n_z = check.positive_int("n_z", n_z, minimum=4, maximum=200)
    mixture_memory(pb.link, n_contexts, n_t, n_z, "n_contexts or n_t")
    if identity_weight == 0 and delta2 == 0:
        check.fail("identity_weight", identity_weight, "nonzero, or delta2 > 0 (t is identically 0 otherwise)")
    scale = max(abs(identity_weight), float(np.sqrt(pb.D) * np.sqrt(delta2)))
    if not 1e-100 <= scale <= 1e100:        # scale-free (Notes): rescale where α² or D δ² would leave float64
        identity_weight, delta2 = identity_weight / scale, (float(np.sqrt(delta2)) / scale) ** 2
    pbt = _at_length(pb, N_test)
    D = pb.D
    tok = sampling.sample_tokens(pbt, n_contexts, check.rng(rng))
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / pbt.N
    comp = (np.sum(tok.w**2, axis=1) / D, identity_weight * np.einsum("pd,pd->p", s, tok.w) / np.sqrt(D),
            (identity_weight**2 + D * delta2) * np.sum(s * s, axis=1))
    V = pbt.label_variance + label_mean(pbt) ** 2
    err, _ = mixture_error(pb.link, comp, comp, V, same=True, n_t=n_t, n_z=n_z)
    return float(V - 2.0 * err)


# --------------------------------------------------------------------------- the distributions of (u, t)
def _task_radial(link, r):
    """``(φ₀(r), φ₁(r))`` per task norm ratio ``r``: ``E f(√r g)`` and ``E[g f(√r g)]``."""
    if link.is_linear:
        return np.zeros_like(r), float(link.slope) * np.sqrt(r)
    m = links.moment_table(link, np.sqrt(r), links.gauss_orders(link)[-1], ((0, 1), (1, 1)))[0]
    return m[:, 0], m[:, 1]


@dataclass(frozen=True, eq=False)
class _Distribution:
    """The exact moments of one prompt distribution (fresh tasks or a pool's, at a context length): ``S = E[s sᵀ]``,
    ``B = E[s yᵀ x_q]``-matrix (``E[y t] = ⟨B, Γ⟩``), ``Bu`` (``E[u t] = ⟨Bu, Γ⟩``), ``V = E y²``, ``Ey``, ``Eu2``,
    the problem at that length and the pool's tasks (``None``: fresh)."""

    pb: object
    tasks: object
    S: np.ndarray
    B: np.ndarray
    Bu: np.ndarray
    V: float
    Ey: float
    Eu2: float


def _distribution(pb, tasks, N):
    from linattn.kernel_learner import kernel_moments

    pbt = dataclasses.replace(pb, N=N, tasks=None)
    km = kernel_moments(pbt, "linear", pool=tasks)
    D = pb.D
    if tasks is None:
        Bu, Ey, Eu2 = query_overlap_strength(pbt) * np.eye(D) / D, label_mean(pbt), 1.0
    else:
        r = np.sum(tasks * tasks, axis=1) / D
        f0, f1 = _task_radial(pb.link, r)
        what = tasks / np.sqrt(D * r)[:, None]
        Bu = (what.T * (f1 * np.sqrt(r))) @ what / tasks.shape[0]
        Ey, Eu2 = float(f0.mean()), float(r.mean())
    return _Distribution(pb=pbt, tasks=tasks, S=km.S, B=km.B, Bu=Bu, V=float(km.V), Ey=float(Ey), Eu2=Eu2)


def _components(dist, law, n, gen):
    """``n`` components ``(r, κ, v)`` of ``dist`` for a ``Γ̂`` drawn from its law: ``Γ̂ᵀs = Γ̄ᵀs + g`` with
    ``g ~ N(0, (sᵀCs) I_D)`` (``Cov(vec Γ̂) = C ⊗ I_D``), one draw per component."""
    D = dist.pb.D
    w, s, a = _contexts(dist, law, n, gen)
    return (np.sum(w**2, axis=1) / D, np.einsum("pd,pd->p", a, w) / np.sqrt(D), np.einsum("pd,pd->p", a, a))


def _contexts(dist, law, n, gen):
    """``n`` contexts of ``dist`` from raw tokens (the pool's tasks in turn, or fresh): their tasks ``w``, statistics
    ``s`` and ``Γ̂ᵀs = Γ̄ᵀs + g`` for a ``Γ̂`` drawn from ``law`` (``g ~ N(0, (sᵀCs) I_D)``, one draw per context)."""
    rows = None if dist.tasks is None else dist.tasks[np.arange(n) % dist.tasks.shape[0]]
    tok = sampling.sample_tokens(dist.pb, n, gen, rows)
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / dist.pb.N
    a = s @ law.mean + np.sqrt(np.maximum(np.einsum("pd,pd->p", s @ law.cov, s), 0.0))[:, None] * \
        gen.standard_normal((n, dist.pb.D))
    return tok.w, s, a


def _second_moments(dist, law):
    """``(E[u t], E[y t], E[t²])`` averaged over ``Γ̂`` (``E t² = tr(Γ̄ᵀSΓ̄) + D tr(SC)``)."""
    D = dist.pb.D
    G = law.mean
    return (float(np.sum(dist.Bu * G)), float(np.sum(dist.B * G)),
            float(np.sum(G * (dist.S @ G))) + D * float(np.sum(dist.S * law.cov)))


def _linear_errors(train, test, law, lam):
    """Test errors of the two linear readouts on ``test`` (module docstring): the best linear readout of the training
    distribution ``a₀ + a₁t`` (``a₀ = E_train y``, ``a₁ = E_train[yt]/E_train[t²]`` per dataset) and the trained
    linear-readout learner (``Ŵ = a₁Γ̂`` the ridge, intercept ``E_train y/(1 + λ)``)."""
    D = train.pb.D
    _, X_tr, Y_tr = _second_moments(train, law)
    _, X_te, Y_te = _second_moments(test, law)
    cross = float(np.sum(train.B * (law.cov @ test.B)))       # Cov(⟨B_tr, Γ̂⟩, ⟨B_te, Γ̂⟩) = tr(B_trᵀ C B_te)
    var_tr = float(np.sum(train.B * (law.cov @ train.B)))
    a0 = train.Ey
    best = 0.5 * (test.V - 2 * a0 * test.Ey + a0**2)        # Γ̂ = 0 (t ≡ 0): the intercept alone
    if Y_tr > 0.0:
        best -= (X_tr * X_te + cross) / Y_tr - 0.5 * (X_tr**2 + var_tr) * Y_te / Y_tr**2
    b0 = train.Ey / (1.0 + lam)
    ridge = 0.5 * (test.V - 2 * b0 * test.Ey + b0**2 - 2 * X_te + Y_te)
    del D
    return float(best), float(ridge)


def _gaussian_optimal(dist, law):
    """The Gaussian formula (module docstring) for ``dist``'s own optimal readout: ``½(V − Σ_k c_k² r^{2k})`` with
    the Hermite coefficients of ``z ↦ f(√(E u²) z)`` and ``r = E[ut]/√(E u² E t²)``."""
    ut, _, tt = _second_moments(dist, law)
    r = float(np.clip(ut / np.sqrt(dist.Eu2 * tt), -1.0, 1.0)) if tt > 0 else 0.0
    link = dist.pb.link
    if dist.Eu2 != 1.0:
        link = _scaled_link(link, float(np.sqrt(dist.Eu2)))
    return float(0.5 * (dist.V - gaussian_readout_power(link, r)))


@functools.lru_cache(maxsize=64)
def _scaled_link(link, scale):
    return links.Link(f"custom:{link.name}*{scale!r}", lambda z: link(scale * np.asarray(z, float)))


# --------------------------------------------------------------------------- the readout as trained
#: queries drawn per sampled context for the trained readout's samples (:func:`_prompt_samples`)
N_QUERIES = 32
#: disjoint groups of contexts whose spread gives the trained readout's standard errors
N_GROUPS = 4
#: training sets of ``P`` prompts on which the readout is fitted (over all groups)
N_REPLICATES = 64


def _prompt_samples(dist, law, n, gen, P, centre, scale):
    r"""Exact samples ``(y, t, t_in)`` of ``dist``'s prompts for a ``Γ̂`` drawn from ``law`` (one draw per context,
    :data:`N_QUERIES` queries each; module docstring): the label, the attention output of a prompt independent of
    ``Γ̂`` (a test prompt) and the in-sample output of a *training* prompt, ``t_in = (h(y − c) + t)/(1 + h)`` with the
    leverage ``h = |x_q|² sᵀAs/P`` (``A`` the ridge's resolvent, ``c`` the centre of the ridge's labels), both divided
    by ``scale`` (the readout's units: ``Γ = Ŵ/a₁``)."""
    D = dist.pb.D
    w, s, a = _contexts(dist, law, n, gen)
    xq = gen.standard_normal((n, N_QUERIES, D))
    u = np.einsum("pqd,pd->pq", xq, w) / np.sqrt(D)
    y = dist.pb.link(u) + dist.pb.noise * gen.standard_normal(u.shape)
    t = np.einsum("pqd,pd->pq", xq, a)
    h = np.einsum("pqd,pqd->pq", xq, xq) * np.einsum("pd,pd->p", s @ law.resolvent, s)[:, None] / P
    return y, t / scale, (h * (y - centre) + t) / ((1.0 + h) * scale)


def _fit_errors(train, tests, P, lam, n_knots, replicates, gen):
    r"""The trained readout fitted, as the learner fits it (:func:`linattn.readout.quantile_knots`,
    :func:`linattn.readout.fit_readout`), to ``replicates`` training sets of ``P`` prompts drawn without replacement
    from the samples of the training law ``train = (y, t_in)`` (all of them where ``P`` exceeds their number), and
    evaluated on the samples ``tests = [(y, t), ...]``. Returns the means over replicates of the training loss's data
    term ``½ mean (y − g(t_in))²``, of the readout's decay ``½λ|a|²`` and of each test error ``½ mean (y − g(t))²``."""
    y, t_in = (x.ravel() for x in train)
    tests = [(yt.ravel(), tt.ravel()) for yt, tt in tests]
    m = min(int(P), y.size)
    fit, decay, errors = [], [], []
    for _ in range(replicates):
        idx = gen.choice(y.size, m, replace=False) if m < y.size else np.arange(y.size)
        knots = readout_class.quantile_knots(t_in[idx], n_knots)
        a = readout_class.fit_readout(t_in[idx], y[idx], knots, lam)
        fit.append(0.5 * float(np.mean((y[idx] - readout_class.readout(t_in[idx], a, knots)) ** 2)))
        decay.append(0.5 * lam * float(a @ a))
        errors.append([0.5 * float(np.mean((yt - readout_class.readout(tt, a, knots)) ** 2)) for yt, tt in tests])
    return float(np.mean(fit)), float(np.mean(decay)), [float(e) for e in np.mean(errors, axis=0)]


def _trained_readout(train, tests, law, P, lam, n_knots, n, gen, decay):
    """The trained readout's training loss (data term, readout decay) and test errors on each distribution of
    ``tests``: the mean over :data:`N_GROUPS` disjoint groups of contexts (each with its own samples and
    :data:`N_REPLICATES` / groups training sets), with their spread / √groups as standard errors."""
    scale = law.norm2 ** 0.25 if decay == "balanced" and law.norm2 > 0 else 1.0
    tr = _prompt_samples(train, law, n, gen, P, train.Ey, scale)
    te = [_prompt_samples(dist, law, n, gen, P, train.Ey, scale)[:2] for dist in tests]
    groups = [_fit_errors((tr[0][b], tr[2][b]), [(y[b], t[b]) for y, t in te], P, lam, n_knots,
                          N_REPLICATES // N_GROUPS, gen) for b in np.array_split(np.arange(n), N_GROUPS)]
    train_fit = mean_se([g[0] for g in groups])
    decay_a = float(np.mean([g[1] for g in groups]))
    errors = [mean_se([g[2][i] for g in groups]) for i in range(len(te))]
    return train_fit, decay_a, errors


# --------------------------------------------------------------------------- the trained Γ
def _ridge(pb, P, lam, pool, centre, seed):
    return ridge_law(pb, P, lam, pool=pool, centre=centre, n_contexts=None if pool is not None else 2**14,
                     rng=seed)


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
        ``readout="optimal"`` with ``law="gaussian"`` and fresh tasks, and for ``"linear"``).
    test_idg, test_idg_se : float or None
        In-distribution error (a task of the training pool) of the requested readout and its standard error
        (``pb.tasks = K``), else ``None``.
    train : float or None
        Training loss (with the weight decay) of the requested readout: ``"trained"``, the learner as trained (the
        readout's data term ``train_fit``, its decay ``½λ|a|²`` and ``½λ‖Γ‖²``, ``‖Γ‖² = ‖Ŵ‖_F`` at the balanced
        decay); ``"linear"``, ``train_linear``; ``None`` for ``"optimal"`` (a population readout has no fit).
    train_se : float or None
        Its standard error (0 for ``"linear"``, which is not sampled).
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
    train = _distribution(pb, pool, N)
    law_g, lam_eff = _balanced(pb, P, lam, pool, train.Ey, seed, decay, max_iter, tol)
    fresh = _distribution(pb, None, Nt)
    tests = [fresh] if pool is None else [fresh, train if Nt == N else _distribution(pb, pool, Nt)]
    gen = np.random.default_rng([seed, D, 5])
    vanished = law_g.norm2 == 0.0          # λ ≥ λ*: t ≡ 0, every readout is the constant E_train y
    comp_tr = _components(train, law_g, n_contexts, gen) if law == "finite" and not vanished else None
    out = {}
    for name, dist in zip(("test", "test_idg"), tests):
        out[name + "_linear"], out[name + "_ridge"] = _linear_errors(train, dist, law_g, lam)
        if comp_tr is None:         # a linear link: Gaussian labels given the task, the optimal readout is linear
            linear = pb.link.is_linear or vanished
            opt = out[name + "_linear"] if linear else _gaussian_optimal(dist, law_g)
            out[name + "_optimal"], out[name + "_optimal_se"] = opt, 0.0
    if comp_tr is not None:
        todo = [(None if dist is train else _components(dist, law_g, n_contexts, gen), dist.V) for dist in tests]
        for name, (err, se) in zip(("test", "test_idg"), _mixture_errors(pb.link, comp_tr, todo)):
            out[name + "_optimal"], out[name + "_optimal_se"] = err, se
    gamma2 = np.sqrt(law_g.norm2) if decay == "balanced" else law_g.norm2     # ‖Γ‖² of the learner (Γ = Ŵ/a₁)
    fit, decay_a, errors = _trained_readout(train, tests, law_g, P, lam, n_knots, n_contexts,
                                            np.random.default_rng([seed, D, 11]), decay)
    out.update(train_fit=fit[0], train_trained=fit[0] + decay_a + 0.5 * lam * gamma2, train_trained_se=fit[1])
    for name, (err, se) in zip(("test", "test_idg"), errors):
        out[name + "_trained"], out[name + "_trained_se"] = err, se
    c = train.pb.feature_variance
    rho = float(np.sqrt(D * c) * np.trace(law_g.mean) / D)
    penalty = lam * np.sqrt(law_g.norm2) if decay == "balanced" else 0.5 * lam * law_g.norm2
    out.update(train_linear=0.5 * law_g.fit + penalty + 0.5 * train.Ey**2 * lam / (1.0 + lam), lam_eff=lam_eff,
               rho=rho, sigma2=c * law_g.norm2 - rho * rho, moments=_second_moments(fresh, law_g))
    return out


def feature_learner_theory(pb, P, lam, N_test=None, readout="trained", law="finite", decay="balanced", pool=None,
                           n_pools=4, n_contexts=None, rng=0, max_iter=50, tol=1e-8, n_knots=5) -> FeatureTheory:
    r"""Dataset-averaged errors of the trained feature learner, fresh tasks or a task pool (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs, ``D >= 2``, any link; ``tasks=K`` adds the in-distribution error.
    P : float
        Training prompts (``>= 1``).
    lam : float
        Weight decay ``λ >= 1e-20`` (:data:`replica.learners.LAM_MIN`) of the feature learner (on ``Γ`` and the
        readout).
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``); the readout is the one of the training length.
    readout : {"trained", "optimal", "linear"}
        Which errors ``test``/``test_idg``/``train`` report: the learner's own readout (default; ``n_knots`` hinges
        fitted by ridge on ``P`` in-sample values of ``t``, module docstring), the optimal readout ``E_train[y|t]``
        of the training distribution (no training error), or the best ``a₀ + a₁ t`` of the training distribution.
    law : {"finite", "gaussian"}
        Optimal readout: the finite-``D`` scale mixture (default; :func:`mixture_error`, Monte Carlo over
        ``n_contexts`` components per distribution), or ``(u, t)`` jointly Gaussian (the Hermite formula of each
        test distribution's own optimal readout; exact as ``D → ∞``, but at ``D = 6`` it misses by 1 % (tanh) to
        9 % (sign): ``docs/feature_learner.md``).
    decay : {"balanced", "plain"}
        The ridge ``Γ̂`` at the balanced effective decay ``λ/‖W‖_F`` or at ``λ``.
    pool : None or array_like (K, D)
        With ``pb.tasks = K``: average over ``n_pools`` random pools (``None``; pool ``j`` is
        :func:`replica.pool_theory.draw_theory_pool`) or condition on the given pool.
    n_pools : int
        Random pools averaged (``pool=None``).
    n_contexts : None or int
        Components of each mixture (``law="finite"``; default 2048 for fresh tasks, 1024 per pool; bias
        ``O(1/n_contexts)``: measured −0.5 % (ICL) and +0.2 % (IDG) at 1024, within one s.e.), ``64 <= n_contexts
        <= 2**20`` and within the memory limit (:func:`mixture_memory`: ~2.5 MB per component for a smooth link).
    rng : int
        Seed of the sampled contexts and of the pools.
    max_iter : int
        Secant steps of the ``λ_eff`` fixed point.
    tol : float
        Its tolerance on ``log λ_eff``.
    n_knots : int
        Hinges ``J`` of the trained readout (``1 <= J <= 64``; the simulator's default 5).

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
    pb, P, lam = learner_arguments(pb, P, lam)
    check.choice("readout", readout, READOUTS)
    check.choice("law", law, LAWS)
    check.choice("decay", decay, DECAYS)
    N_test = check.n_test(N_test)
    n_pools = check.positive_int("n_pools", n_pools, maximum=10_000)
    if n_contexts is None:
        n_contexts = 2048 if pb.tasks is None else 1024
    n_contexts = check.positive_int("n_contexts", n_contexts, minimum=64, maximum=2**20)
    rng = check.seed_int("rng", rng)
    max_iter = check.positive_int("max_iter", max_iter, maximum=10**6)
    tol = check.tolerance("tol", tol)
    n_knots = check.positive_int("n_knots", n_knots, maximum=64)
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
    from .pool_theory import draw_theory_pool

    if pb.tasks is None:
        pools = [None]
    elif pool is not None:
        pools = [pool]
    else:
        pools = [draw_theory_pool(pb, rng, j) for j in range(n_pools)]
    runs = [_one_pool(pb, P, lam, W, N_test, law, decay, n_contexts, int(rng) + 7919 * j, max_iter, tol, n_knots)
            for j, W in enumerate(pools)]

    def mean(key):
        return float(np.mean([r[key] for r in runs]))

    def se(key):
        if len(runs) > 1:                       # pool-to-pool spread (carries each pool's sampling error too)
            return mean_se([r[key] for r in runs])[1]
        return float(runs[0].get(key + "_se", 0.0))

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
