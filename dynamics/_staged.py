r"""Staged learning of factorized linear attention: exact mean flow, per-mode closed forms, saddles.

Gradient flow ``dθ/dt = −γ ∇_θ [L(Γ(θ)) + (λ/2)|θ|²]`` for any parametrization of
:mod:`linattn.factorized`, on the population objective (``P → ∞``: the exact test error, fresh prompts
every step, the mean flow of online SGD) or on one fixed training set of ``P`` prompts.

Per-mode closed forms (population, ``Σ = U diag(s) Uᵀ``). In the eigenbasis of ``Σ`` the objective of a
diagonal ``Γ = U diag(a) Uᵀ`` separates exactly (``linattn/_covariance.py``):

.. math:: E_g = ½\big[V − Σ_α (2 b_α a_α − h_α a_α^2)\big],\qquad b_α = a^2 s_α^2/D,\quad
          h_α = s_α (S_2)_α = \frac{a^2 s_α^2}{D}\, s^∞_α,\quad
          s^∞_α = \frac{(N+1) s_α + \operatorname{tr}Σ + Dσ^2/a^2}{N}

(slope ``a = 1``: Mainali & Teixeira's ``s^∞``). For ``Γ = P Q`` (``"value_kq_modes"``) started aligned
(``P, Q`` diagonal in ``U``) the flow stays aligned, and per mode ``ṗ = −γ q g``, ``q̇ = −γ p g`` with
``g = h a − b``; balanced starts (``p = q``) give the logistic law, exact:

.. math:: a_α(t) = \frac{a^∞_α a^0_α}{a^0_α + (a^∞_α − a^0_α) e^{−2γ b_α t}},\qquad a^∞_α = b_α/h_α,
          \qquad τ_α = 1/(γ b_α) = D/(γ a^2 s_α^2).

``a^∞ = 1/s^∞`` (``a = 1``, ``σ = 0``) is the exact population minimiser ``Γ_*``. (An earlier derivation
in conventions §6.2 claimed mode coupling through ``E[Σ̂BΣ̂]`` shifts ``a^∞`` by ``O(1/N)``; at
``d = 3, s = (1, ½, ¼), N = 10`` raw-token least squares on 4·10⁵ prompts gives
``(0.784, 1.382, 2.234) ± (0.002, 0.007, 0.012)`` against ``1/s^∞ = (0.784, 1.379, 2.222)``: the modes do
not couple at the fixed point; see ``docs/factorized.md``.) The escape (half-rise) time from ``a^0``
is ``t_½ = ln[(a^∞ − a^0)/a^0] / (2γ b_α)``.

Saddles of separate key/query heads (Zhang, Singh, Latham & Saxe 2025, their Eq. 19 form): the
principal components are learned one at a time in decreasing ``s_α``; at saddle ``M_m`` the top ``m``
modes sit at ``a^∞`` and the rest at 0, so

.. math:: E_g(M_m) = ½\Big[V − Σ_{α ≤ m} b_α a^∞_α\Big]
          \;\Big(= \tfrac{1}{2D}\big[\operatorname{tr}Λ + σ_Z^2
          − Σ_{α≤m}\tfrac{N λ_α^2}{(N+1)λ_α + \operatorname{tr}Λ + σ_Z^2}\big]
          \text{ in their units, } y = wᵀx + σ_Z ε,\ λ = s\Big).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _check as check
from linattn._arguments import array, choice, nonnegative, public, real_array, tolerance
from linattn._covariance import as_covariance
from linattn._parametrizations import Parametrization, dataset_objective, population_objective
from linattn._results import short_repr
from linattn._validate import PROBLEM

from ._ode import check_rates, integrate


@dataclass(frozen=True)
class ModeConstants:
    """Per-mode constants of the population objective (module docstring).

    Attributes
    ----------
    spectrum : ndarray (D,)
        Eigenvalues ``s_α`` of ``Σ`` (all ones for isotropic inputs).
    basis : ndarray (D, D)
        Eigenvectors ``U`` (columns).
    b, h : ndarray (D,)
        Linear and quadratic coefficients: ``E_g = ½[V − Σ(2 b a − h a²)]``.
    a_inf : ndarray (D,)
        Fixed point ``a^∞ = b/h`` (the eigenvalues of ``Γ_*``).
    tau : ndarray (D,)
        Time scales ``τ_α = 1/b_α`` (at ``γ = 1``).
    """

    __repr__ = short_repr

    spectrum: np.ndarray
    basis: np.ndarray
    b: np.ndarray
    h: np.ndarray
    a_inf: np.ndarray
    tau: np.ndarray


#: the rules of a flow's output times, weight decay and tolerance (:func:`mean_flow`, :func:`mode_flow`)
FLOW = dict(times=real_array(low=0.0), lam=nonnegative(), rtol=tolerance())


@public(pb=PROBLEM)
def mode_constants(pb) -> ModeConstants:
    """The per-mode constants ``b_α, h_α, a^∞_α, τ_α`` of problem ``pb`` (linear link, any ``Σ``).

    Parameters
    ----------
    pb : linattn.Problem

    Returns
    -------
    ModeConstants
    """
    return _mode_constants(pb)


def _mode_constants(pb):
    """:func:`mode_constants` of a checked problem, with its refusal of a link without a teacher."""
    obj = population_objective(pb)
    cov = pb.covariance
    s = np.ones(pb.D) if cov is None else cov.spectrum.copy()
    U = np.eye(pb.D) if cov is None or cov.basis is None else cov.basis.copy()
    b = np.diag(U.T @ obj.B @ U).copy()
    h = np.diag(U.T @ obj.left @ U) * s
    if np.any(b <= 0):
        check.fail("pb.link", pb.link.name, "a linear link with non-zero slope (no teacher to learn otherwise)")
    return ModeConstants(spectrum=s, basis=U, b=b, h=h, a_inf=b / h, tau=1.0 / b)


@public(pb=PROBLEM, modes=array())
def mode_loss(pb, modes) -> np.ndarray:
    r"""``E_g`` of ``Γ = U diag(a) Uᵀ``: ``½[V − Σ(2 b a − h a²)]``
    (through :meth:`linattn.Problem.test_error_from_moments`).

    Parameters
    ----------
    pb : linattn.Problem
    modes : array_like (..., D)

    Returns
    -------
    ndarray (...)
    """
    mc = _mode_constants(pb)
    if modes.shape[-1:] != (pb.D,):
        check.fail("modes", f"<array with shape {modes.shape}>", f"an array of shape (..., {pb.D})")
    return _mode_loss(pb, mc, modes)


def _mode_loss(pb, mc, a):
    """:func:`mode_loss` of checked modes ``a`` (..., D) with the problem's constants ``mc``."""
    with np.errstate(over="ignore", invalid="ignore"):
        overlap, norm = a @ mc.b, (a * a) @ mc.h
    check.finite_result(np.stack([overlap, norm]), {"modes": a}, "the test error")
    return pb.test_error_from_moments(overlap, norm)


@public(pb=PROBLEM, a0=real_array(low=0.0, low_open=True), times=real_array(low=0.0))
def logistic_modes(pb, a0, times, gamma=1.0) -> np.ndarray:
    r"""Closed-form per-mode trajectories ``a_α(t)`` of ``Γ = P Q`` from a balanced aligned start.

    ``a_α(t) = a^∞ a^0 / (a^0 + (a^∞ − a^0) e^{−2γ b_α t})`` (module docstring; exact for the population
    flow of ``"value_kq_modes"`` with ``p_α = q_α``, Mainali & Teixeira 2025).

    Parameters
    ----------
    pb : linattn.Problem
    a0 : float or array_like (D,)
        Initial mode amplitudes, ``> 0``.
    times : array_like (T,)
        Non-negative times.
    gamma : float
        Learning rate ``γ > 0``.

    Returns
    -------
    ndarray (T, D)
    """
    mc = _mode_constants(pb)
    a0 = _modes0(a0, pb.D)
    t = times
    if t.ndim != 1:
        check.fail("times", float(t) if t.ndim == 0 else f"<array with shape {t.shape}>", "a 1-d array of times >= 0")
    x = -2.0 * gamma * np.outer(t, mc.b)
    e, one_minus_e = np.exp(x), -np.expm1(x)
    # the same formula divided through by the larger of a^0 and a^∞, as sums of positive terms: no overflow of
    # a^∞ a^0 (a^0 ~ 1e200), no cancellation in a^0 + (a^∞ − a^0) e
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):    # in the branch not taken
        big = a0 >= mc.a_inf
        r = np.where(big, mc.a_inf / a0, a0 / mc.a_inf)
        return np.where(big, mc.a_inf / (r * e + one_minus_e), a0 / (r + (1.0 - r) * e))


@public(pb=PROBLEM, a0=real_array(low=0.0, low_open=True), fraction=tolerance())
def escape_times(pb, a0, fraction=0.5, gamma=1.0) -> np.ndarray:
    r"""Time at which mode ``α`` reaches ``fraction · a^∞_α`` on the logistic law.

    ``t = ln[(a^∞ − a^0) f / (a^0 (1 − f))] / (2γ b_α)`` (``f`` = ``fraction``; ``t_½`` for ``f = ½``).

    Parameters
    ----------
    pb : linattn.Problem
    a0 : float or array_like (D,)
        Initial amplitudes, ``0 < a^0 < f a^∞``.
    fraction : float
        In ``(0, 1)``.
    gamma : float

    Returns
    -------
    ndarray (D,)
    """
    mc = _mode_constants(pb)
    a0 = _modes0(a0, pb.D)
    f = fraction
    if np.any(a0 >= f * mc.a_inf):
        check.fail("a0", f"<max a0/a_inf = {np.max(a0 / mc.a_inf):.3g}>",
                   f"below fraction * a_inf = {f} a_inf for every mode")
    return np.log((mc.a_inf - a0) * f / (a0 * (1.0 - f))) / (2.0 * gamma * mc.b)


@public(spectrum=real_array(low=0.0, low_open=True))
def saddle_losses(spectrum, N, noise=0.0) -> np.ndarray:
    r"""Test error at each saddle ``M_0 … M_D`` of separate key/query heads (module docstring).

    ``E_g(M_m) = ½[V − Σ_{α≤m} b_α a^∞_α]`` with modes taken in decreasing ``s_α`` (Zhang, Singh, Latham
    & Saxe, ICML 2025, Eq. 19, in the units of this library: ``y = w·x/√D + σε``, ``E_g = ½ E(y − ŷ)²``;
    multiply by ``2D`` and put ``σ_Z² = Dσ²`` for theirs).

    Parameters
    ----------
    spectrum : array_like (D,)
        Eigenvalues of the input covariance (positive).
    N : int
        Context length.
    noise : float
        Label-noise s.d. ``σ``.

    Returns
    -------
    ndarray (D + 1,)
        ``E_g(M_0) = V/2`` (nothing learned) down to ``E_g(M_D) = E_g(Γ_*)``.
    """
    s = spectrum
    if s.ndim != 1:
        check.fail("spectrum", f"<array with shape {s.shape}>", "a vector of eigenvalues")
    as_covariance(s, s.size, name="spectrum")      # the covariance's range, named as this argument
    pb = linattn.Problem(s.size, N, noise, covariance=s)
    mc = _mode_constants(pb)
    gain = np.sort(mc.b * mc.a_inf)[::-1]
    return pb.test_error_from_moments(np.concatenate([[0.0], np.cumsum(gain)]),
                                      np.concatenate([[0.0], np.cumsum(gain)]))


def _modes0(a0, D):
    """Checked amplitudes ``a0`` (a positive float array) against the ``D`` modes: one for every mode, or ``D``."""
    if a0.ndim == 0:
        return np.full(D, float(a0))
    if a0.shape != (D,):
        check.fail("a0", f"<array with shape {a0.shape}>", f"a positive scalar or an array of shape ({D},)")
    return a0


def _per_mode(name, value, D):
    """A finite scalar (every mode) or an array of shape ``(D,)``, as a float array of shape ``(D,)``."""
    arr = check.finite_array(name, value)
    if arr.shape not in ((), (D,)):
        check.fail(name, f"<array with shape {arr.shape}>", f"a real number or an array of shape ({D},)")
    return np.broadcast_to(arr, (D,)).astype(float)


# ----------------------------------------------------------------------------- exact mean flows
def _increasing(t):
    """Checked output times ``t`` (a float array ``>= 0``), refused unless 1-d and strictly increasing."""
    if t.ndim != 1 or np.any(np.diff(t) <= 0):
        check.fail("times", float(t) if t.ndim == 0 else f"<array with shape {t.shape}>",
                   "a strictly increasing 1-d array of times >= 0")
    return t


@dataclass(frozen=True)
class StagedFlow:
    """Trajectory of a factorized model under gradient flow.

    Attributes
    ----------
    times : ndarray (T,)
    loss : ndarray (T,)
        The objective flowed: ``E_g`` (population) or the training energy ``E_t`` incl. ``(λ/2)|θ|²``.
    test : ndarray (T,)
        Exact test error ``E_g(Γ(t))``.
    modes : ndarray (T, D)
        ``a_α(t) = u_αᵀ Γ(t) u_α`` in the eigenbasis of ``Σ``.
    conserved : ndarray (T, n_c)
        The conserved quantities of the parametrization along the path (constant when ``λ = 0``).
    theta : ndarray (T, n)
        Parameters.
    parametrization : linattn.factorized.Parametrization
    nfev : int
        Right-hand-side evaluations of the integrator.
    """

    __repr__ = short_repr

    times: np.ndarray
    loss: np.ndarray
    test: np.ndarray
    modes: np.ndarray
    conserved: np.ndarray
    theta: np.ndarray
    parametrization: Parametrization
    nfev: int

    @property
    def Gamma(self) -> np.ndarray:
        """``Γ`` at the last time."""
        return self.parametrization.gamma(self.theta[-1])


@public(pb=PROBLEM, method=choice(("LSODA", "DOP853", "Radau")), **FLOW)
def mean_flow(pb, parametrization, theta0, times, data=None, lam=0.0, gamma=1.0, rtol=1e-9,
              method="LSODA") -> StagedFlow:
    r"""Integrate ``dθ/dt = −γ ∇_θ[L(Γ(θ)) + (λ/2)|θ|²]`` to a stated tolerance (scipy ``solve_ivp``).

    Parameters
    ----------
    pb : linattn.Problem
        Linear link; any input covariance.
    parametrization : linattn.factorized.Parametrization
    theta0 : array_like (n_params,)
    times : array_like (T,)
        Increasing, non-negative output times (the flow starts at ``t = 0``).
    data : linattn.Prompts, optional
        ``None``: population objective (exact test error; ``P → ∞``). Else the training energy of this
        dataset (finite ``P``).
    lam : float
        Weight decay ``λ >= 0`` on every trained parameter.
    gamma : float
        Learning rate ``γ > 0``.
    rtol : float
        Relative tolerance of the integrator (absolute tolerance ``rtol · min(1e-3, max|θ0|)``: a start below
        ``1e-3`` is resolved to ``rtol`` of its own size, so that a flow escaping a saddle from a tiny start is not
        stepped over as if it were zero).
    method : {"LSODA", "DOP853", "Radau"}
        scipy integrator. LSODA (default) switches to a stiff method on the long converged tails;
        DOP853 is the non-stiff reference.

    Returns
    -------
    StagedFlow

    Raises
    ------
    ConvergenceError
        If the integrator fails.
    """
    par = Parametrization.checked(parametrization, pb.D)
    theta0 = par._theta(theta0, "theta0").copy()
    if theta0.ndim != 1:
        check.fail("theta0", f"<array with shape {theta0.shape}>", f"an array of shape ({par.n_params},)")
    t = _increasing(times)
    check_rates(gamma, lam)
    obj = population_objective(pb) if data is None else dataset_objective(data, pb)
    try:                                        # the start itself: named as the caller's theta0, not as Γ
        obj.value(par.gamma(theta0[None])[0])
    except ValueError:
        check.fail("theta0", f"<values up to {np.max(np.abs(theta0)):.3g}>",
                   "small enough that the objective at Γ(theta0) is finite in float64")

    def rhs(_, th):
        out = -gamma * (par._flow_gradient(th, obj.gradient) + lam * th)
        if not np.all(np.isfinite(out)):        # the state left float64: ConvergenceError (_integrate)
            raise ValueError(f"the gradient is not finite at |theta| up to {np.max(np.abs(th)):.3g}")
        return out

    sol = integrate("mean_flow", rhs, (0.0, float(t[-1])), theta0, method=method, t_eval=t, rtol=rtol,
                     atol=_atol(rtol, theta0))
    theta = sol.y.T
    G = par.gamma(theta)
    mc_basis = np.eye(pb.D) if pb.covariance is None or pb.covariance.basis is None else pb.covariance.basis
    modes = np.einsum("ia,tij,ja->ta", mc_basis, G, mc_basis)
    loss = np.array([obj.value(g) for g in G]) + 0.5 * lam * np.sum(theta * theta, axis=1)
    test = loss if data is None and lam == 0 else np.array([pb.test_error(g) for g in G])
    return StagedFlow(times=t, loss=loss, test=test, modes=modes, conserved=par.conserved(theta), theta=theta,
                      parametrization=par, nfev=int(sol.nfev))


def _atol(rtol, start):
    """The absolute tolerance of a flow from ``start``: ``rtol · 1e-3``, or ``rtol · max|start|`` for a start
    below ``1e-3`` (not zero). An absolute tolerance above the state leaves it uncontrolled: Radau from a random start
    of scale 1e-15 stepped over the saddle's unstable direction and stayed on the plateau at t = 1e9 (LSODA escaped)."""
    top = float(np.max(np.abs(start), initial=0.0))
    return rtol * (min(1e-3, top) if top > 0.0 else 1e-3)


@dataclass(frozen=True)
class ModeFlow:
    """Per-mode trajectories of aligned ``Γ = P Q`` (population): ``p, q, a = p q`` of shape (T, D),
    and the test error.

    Attributes
    ----------
    times : ndarray (T,)
    p, q : ndarray (T, D)
        Per-mode factors of ``Γ = P Q``; their product ``a = p q`` is the mode's strength.
    test : ndarray (T,)
        Population test error.
    """

    __repr__ = short_repr

    times: np.ndarray
    p: np.ndarray
    q: np.ndarray
    test: np.ndarray

    @property
    def modes(self) -> np.ndarray:
        return self.p * self.q


@public(pb=PROBLEM, **FLOW)
def mode_flow(pb, p0, q0, times, lam=0.0, gamma=1.0, rtol=1e-10) -> ModeFlow:
    r"""Exact population flow of ``Γ = P Q`` from any aligned start (balanced or not), mode by mode.

    ``ṗ_α = −γ(q_α g_α + λ p_α)``, ``q̇_α = −γ(p_α g_α + λ q_α)``, ``g_α = h_α p_α q_α − b_α``: ``2D`` coupled
    scalars instead of ``2D²`` (exact because an aligned start stays aligned; module docstring).
    Unbalanced starts conserve ``p_α² − q_α²`` (``λ = 0``) and are not logistic.

    Parameters
    ----------
    pb : linattn.Problem
    p0, q0 : float or array_like (D,)
        Initial per-mode values (any sign).
    times : array_like (T,)
    lam : float
    gamma : float
    rtol : float
        Relative tolerance (absolute tolerance ``rtol · min(1e-3, max(|p0|, |q0|))``, as :func:`mean_flow`).

    Returns
    -------
    ModeFlow
    """
    mc = _mode_constants(pb)
    D = pb.D
    p0, q0 = (_per_mode(name, value, D) for name, value in (("p0", p0), ("q0", q0)))
    t = _increasing(times)
    check_rates(gamma, lam)
    b, h = mc.b, mc.h

    def rhs(_, y):
        p, q = y[:D], y[D:]
        g = h * p * q - b
        return -gamma * np.concatenate([q * g + lam * p, p * g + lam * q])

    def jac(_, y):
        p, q = y[:D], y[D:]
        g = h * p * q - b
        J = np.zeros((2 * D, 2 * D))
        i = np.arange(D)
        J[i, i] = -gamma * (h * q * q + lam)
        J[i, i + D] = -gamma * (g + h * p * q)
        J[i + D, i] = -gamma * (g + h * p * q)
        J[i + D, i + D] = -gamma * (h * p * p + lam)
        return J

    sol = integrate("mode_flow", rhs, (0.0, float(t[-1])), np.concatenate([p0, q0]), method="LSODA", t_eval=t,
                     jac=jac, rtol=rtol, atol=_atol(rtol, np.concatenate([p0, q0])))
    p, q = sol.y[:D].T, sol.y[D:].T
    return ModeFlow(times=t, p=p, q=q, test=_mode_loss(pb, mc, p * q))
