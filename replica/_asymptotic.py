r"""The ``D → ∞`` theory of task pools (Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025).

Scaling: ``α = N/D``, ``κ = K/D``, ``τ = P/D²`` fixed as ``D → ∞``; ``ρ = σ²``. Lu et al.'s ``α`` collides with
the seed paper's ``α = P/D²`` of :mod:`spectra`, so the public arguments are named ``context_ratio`` (``α``),
``sample_ratio`` (``τ``) and ``task_ratio`` (``κ``) (conventions §6.1, §7). The peer's errors
``e = E(y − ŷ)²`` are twice ours; their ridge ``λ_L`` on the stacked ``(Γ, v)`` equals our weight decay
``λ = λ_L/D`` on ``Γ`` and ``λ_L`` on ``v`` (conventions §6.1; :func:`replica.ridge` with ``lam=(λ_L/D, λ_L)``
reproduces it exactly). In their units (conventions §6.1):

* ``ξ = (1 + ρ)/α`` and ``M_κ(x)``, the positive root of ``(x/κ)M² + (x + 1 − 1/κ)M − 1 = 0``:
  the resolvent ``(1/D) tr(W + x)⁻¹`` of the pool's covariance ``W = (1/K)Σ_k w_k w_kᵀ``
  (Marchenko–Pastur with ratio ``1/κ``; ``M_∞(x) = 1/(1 + x)``).
* ``ε > 0`` solves ``f(ε) = 1 − τ + τλ_L/ε − ε M_κ(ξ + ε) = 0``; with ``ν = ξ + ε``, ``M = M_κ(ν)``,
  ``M' = M_κ'(ν)``:

  .. math::
     c_e = \frac{ρ + ν − ν²M − ε(1 − 2νM − ν²M')}{1 − 2εM − ε²M' − τ},\qquad
     e_{\rm ICL} = (ξ + 1)\big[1 − 2νM − ν²M' − c_e(M + εM')\big] − 2(1 − νM) + 1 + ρ,

  and the in-distribution error ``e_IDG = −τ c_e`` (conjectured for ``λ_L > 0``; tested against exact simulation in
  ``tests/replica/test_asymptotic.py``).

Certified root. ``εM_κ(ξ + ε) = ∫ ε/(t + ξ + ε) dμ(t)`` increases with ``ε`` and lies in
``[ε/(1 + ξ + ε), ε/(ξ + ε)]`` (Jensen, the pool spectrum ``μ`` having mean 1), so ``f`` decreases
strictly and ``f(λ_L) > 0``, ``f(2(1 + ξ + τλ_L)/τ) < 0``: exactly one root, found by Brent's method on
that bracket (no starting-point guess). Ridgeless limit ``λ_L → 0``: for ``τ < 1`` the root tends to the
root of ``1 − τ = εM_κ(ξ + ε)`` (bracket ``[(1 − τ)ξ/2, 2(1 + ξ)/τ]``); for ``τ > 1``, ``ε → 0``; at
``τ = 1`` the ridgeless error diverges (double descent), and is refused.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from linattn import _check as check
from linattn._arguments import optional, public, real, real_array
from linattn._errors import ConvergenceError
from linattn._results import short_repr

#: the rule of ``task_ratio``: ``κ = K/D``, with ``inf`` for fresh tasks
TASK_RATIO = real(low=1e-8, allow_inf=True)


@public(x=real_array(low=0.0, low_open=True), task_ratio=TASK_RATIO)
def pool_resolvent(x, task_ratio):
    r"""``M_κ(x)`` and ``M_κ'(x)`` (module docstring), ``κ = K/D`` = ``task_ratio``; ``inf`` gives ``1/(1 + x)``.

    .. math:: M = \frac{2}{(x + 1 − 1/κ) + \sqrt{(x + 1 − 1/κ)² + 4x/κ}},\qquad
              M' = −\frac{M²/κ + M}{2xM/κ + x + 1 − 1/κ}.

    Parameters
    ----------
    x : float or ndarray
        ``x ∈ [1e-100, 1e100]``.
    task_ratio : float
        ``κ >= 1e-8`` or ``inf``.

    Returns
    -------
    M, dM : float or ndarray
    """
    if np.any(x > 1e100) or np.any(x < 1e-100):     # beyond, M' overflows float64 at small κ
        check.fail("x", x, "real numbers in [1e-100, 1e100]")
    return _resolvent(x, task_ratio)


def _resolvent(x, kappa):
    if np.isinf(kappa):
        M = 1.0 / (1.0 + x)
        return M, -M * M
    # M is the positive root of (x/κ) M² + b M − 1 = 0; each branch of the quadratic formula is free of cancellation
    # on its side of b = 0 (at small κ, b ≈ −1/κ and the form 2/(b + √(b² + 4x/κ)) would lose ~log10(1/κ) digits)
    b = x + (1.0 - 1.0 / kappa)
    root = np.hypot(b, 2.0 * np.sqrt(x / kappa))
    with np.errstate(divide="ignore", invalid="ignore"):
        M = np.where(b >= 0, 2.0 / (b + root), (root - b) / (2.0 * x / kappa))
    dM = -(M * M / kappa + M) / (2.0 * x * M / kappa + b)
    return M, dM


@dataclass(frozen=True)
class AsymptoticErrors:
    """``D → ∞`` errors of the ridge solution with a task pool (module docstring).

    Attributes
    ----------
    context_ratio, sample_ratio, task_ratio, noise, ridge : float
        Lu et al.'s ``α = N/D``, ``τ = P/D²``, ``κ = K/D`` (``inf``: fresh tasks), ``σ``, ``λ_L`` (= ``D λ_Γ``).
    test, test_idg : float
        Fresh-task (ICL) and in-distribution errors in our units ``E_g = e/2``.
    eps : float
        Root ``ε`` of the self-consistency (0 in the ridgeless limit with ``τ > 1``).
    M, dM : float
        ``M_κ(ξ + ε)`` and its derivative.
    c_e : float
    bracket : tuple of float
        The certified bracket (``f(lo) > 0 > f(hi)``), ``(0, 0)`` when ``ε = 0``.
    residual : float
        ``|f(ε)|`` at the root (``|1 − τ − εM|`` in the ridgeless case).
    converged : bool
    iterations : int
    """

    __repr__ = short_repr

    context_ratio: float
    sample_ratio: float
    task_ratio: float
    noise: float
    ridge: float
    test: float
    test_idg: float
    eps: float
    M: float
    dM: float
    c_e: float
    bracket: tuple
    residual: float
    converged: bool
    iterations: int


# the ranges in which the certified bracket and the closed forms are representable in float64 (α = N/D, τ = P/D²; the
# noise ρ = σ² and its powers stay finite)
@public(context_ratio=real(low=1e-8, high=1e8), sample_ratio=real(low=1e-8, high=1e8), task_ratio=TASK_RATIO,
        noise=real(low=0.0, high=1e6), ridge=real(low=0.0, high=1e8),
        test_context_ratio=optional(real(low=1e-8, high=1e8)))
def asymptotic(context_ratio, sample_ratio, task_ratio=np.inf, noise=0.0, ridge=0.0,
               test_context_ratio=None) -> AsymptoticErrors:
    r"""The peer's ``D → ∞`` ICL and IDG errors (module docstring), in ``E_g`` units.

    Parameters
    ----------
    context_ratio : float
        ``α = N/D > 0``.
    sample_ratio : float
        ``τ = P/D² > 0`` (``τ = 1`` refused when ``ridge = 0``: the ridgeless error diverges).
    task_ratio : float
        ``κ = K/D > 0``; ``numpy.inf`` for a fresh task per prompt.
    noise : float
        Label-noise s.d. ``σ >= 0`` (``ρ = σ²``).
    ridge : float
        The peer's ``λ_L >= 0`` (our ``λ = λ_L/D`` on ``Γ``, ``λ_L`` on ``v``).
    test_context_ratio : float, optional
        ``α_test = N_test/D`` of the test prompts (default: ``α``). The trained ``Γ`` is that of context length
        ``α``; only the test metric changes: its norm term ``Q = 1 − 2νM − ν²M' − c_e(M + εM')`` is weighted by
        ``ξ + 1`` (the ``D c`` of conventions §2 as ``D → ∞``), so both errors move by ``(ξ_test − ξ) Q`` with
        ``ξ_test = (1 + ρ)/α_test`` (in ``e`` units; measured against the finite-``D`` theory extrapolated in ``1/D``,
        ``tests/replica/test_n_test.py``).

    Returns
    -------
    AsymptoticErrors

    Raises
    ------
    ValueError
        Bad input, or ``ridge = 0`` with ``tau = 1``.
    linattn.ConvergenceError
        If the bracket certificate fails (it cannot, by the module's argument, unless round-off).

    Examples
    --------
    >>> round(2 * asymptotic(context_ratio=1.0, sample_ratio=0.5, task_ratio=np.inf, noise=0.0, ridge=0.1).test, 4)
    1.1691
    """
    alpha, tau, kappa, lam = context_ratio, sample_ratio, task_ratio, ridge      # Lu et al.'s α, τ, κ, λ_L
    alpha_test = alpha if test_context_ratio is None else test_context_ratio
    rho = noise**2
    xi = (1.0 + rho) / alpha

    def f(e):
        return 1.0 - tau + tau * lam / e - e * float(_resolvent(xi + e, kappa)[0])

    if lam == 0 and tau == 1.0:
        check.fail("sample_ratio", tau, "!= 1 when ridge = 0 (the ridgeless error diverges at tau = P/D² = 1)")
    if lam == 0 and tau > 1:
        eps, bracket, res, its = 0.0, (0.0, 0.0), 0.0, 0
    else:
        lo = lam if lam > 0 else 0.5 * (1.0 - tau) * xi
        hi = 2.0 * (1.0 + xi + tau * lam) / tau
        # the bracket in u = log ε, widened by 1e-12 so that exp(u) stays outside [lo, hi] after rounding
        ulo, uhi = np.log(lo) - 1e-12, np.log(hi) + 1e-12
        lo, hi = np.exp(ulo), np.exp(uhi)
        flo, fhi = f(lo), f(hi)
        if not (flo > 0 > fhi):
            raise ConvergenceError(f"asymptotic: bracket certificate failed, f({lo}) = {flo}, f({hi}) = {fhi}")
        # Brent in u = log ε: relative accuracy at any scale (at τ = 1, ε ~ √ridge spans hundreds of decades)
        u, info = optimize.brentq(lambda u: f(np.exp(u)), ulo, uhi, xtol=1e-15,
                                  rtol=4 * np.finfo(float).eps, maxiter=200, full_output=True)
        eps = float(np.exp(u))
        if not info.converged:
            raise ConvergenceError(f"asymptotic: Brent's method did not converge ({info.flag})")
        bracket, res, its = (lo, hi), abs(f(eps)), info.iterations
    nu = xi + eps
    M, dM = (float(v) for v in _resolvent(nu, kappa))
    c_e = ((rho + nu - nu * nu * M - eps * (1.0 - 2.0 * nu * M - nu * nu * dM))
           / ((1.0 - tau) - eps * (2.0 * M + eps * dM)))      # 1 − τ first: no cancellation near τ = 1
    norm = 1.0 - 2.0 * nu * M - nu * nu * dM - c_e * (M + eps * dM)
    shift = ((1.0 + rho) / alpha_test - xi) * norm            # the test metric at α_test (test_context_ratio)
    e_icl = (xi + 1.0) * norm - 2.0 * (1.0 - nu * M) + 1.0 + rho + shift
    e_idg = -tau * c_e + shift
    return AsymptoticErrors(context_ratio=alpha, sample_ratio=tau, task_ratio=kappa, noise=noise, ridge=lam,
                            test=0.5 * e_icl, test_idg=0.5 * e_idg, eps=float(eps), M=M, dM=dM, c_e=float(c_e),
                            bracket=bracket, residual=float(res), converged=True, iterations=int(its))
