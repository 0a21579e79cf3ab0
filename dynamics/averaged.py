r"""Dataset-averaged learning curves from the spectral theory (THEORY §3.3, extended).

From ``θ_0 = 0``, gradient flow in rescaled time ``τ = γ c t`` gives (``H/c`` units)
``θ(τ) = φ_τ(H/c) b`` with the filter ``φ_τ(x) = (1 − e^{−(x+λ')τ})/(x + λ')``. Hence, exactly,

.. math::
   E_t(τ) = ½ [Ȳ² − ⟨b, φ_{2τ}(H/c) b⟩],\qquad
   E_g(τ) = ½ [1 + σ² − 2t ⟨θ̂_0, φ_τ b⟩ + ⟨φ_τ b, K φ_τ b⟩],

(``2φ_τ − (x+λ')φ_τ² = φ_{2τ}``; ``K = diag(1, c_v/c)`` weights the ``v`` block of the test error).
The averages of these spectral functionals follow from the theory of the data vector at complex
spectral parameter (:mod:`spectra.resolvent`): ``ρ(z)``, ``T(z)`` and the two-system block
overlaps ``S_i(z_1, z_2)``. To use them, ``φ_τ`` is written as a sum of simple poles: a
contour quadrature of the Laplace inversion ``e^{−y} = (1/2πi)∫_Γ e^{s} ds/(s + y)`` on the
parabola ``s(u) = μ(1 + iu)²`` (31 nodes, ``μ = 4.54``, ``h = 0.18``) gives
``e^{−y} ≈ Σ_k w_k/(s_k + y)`` with a uniform error below ``1e-14`` on ``y ∈ [0, ∞)`` (tested),
and then ``φ_τ(x) = Σ_j c_j/(x + a_j)`` with ``a_0 = λ'``, ``c_0 = 1 − Σ_k w_k/s_k`` and
``a_k = λ' + s_k/τ``, ``c_k = w_k/s_k``. Every average is then a finite sum of the theory's
transforms at the complex points ``z = −a_j``, off the real axis: no density is integrated, the
atom and the spectral edges need no special treatment, and the curve is as accurate as the
theory itself.

A Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)`` adds ``(c σ_0²/2) Σ_i κ_i D_i r̄_i`` terms with
``∫ e^{−2(x+λ')τ} dρ_i`` (per-block spectral measures) to the mean errors.

``law="mp"`` uses Marchenko–Pastur with decoupled labels (THEORY §3.2/§3.3 baseline);
``law="finite"`` the finite-D prompt law with the scale–label correlations.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _validate as check
from spectra import block_resolvent, data_transforms, prompt_law
from spectra.resolvent import block_overlaps

# parabolic contour for e^{-y} (tuned for a uniform error < 1e-14 on [0, inf); tests/dynamics)
CONTOUR_NODES = 31
CONTOUR_MU = 4.54
CONTOUR_H = 0.18


@functools.lru_cache(maxsize=4)
def exp_contour(n=CONTOUR_NODES, mu=CONTOUR_MU, h=CONTOUR_H):
    """Nodes ``s_k`` and weights ``w_k`` with ``e^{−y} ≈ Σ_k w_k/(s_k + y)`` for ``y >= 0``."""
    K = (n - 1) // 2
    u = h * np.arange(-K, K + 1)
    s = mu * (1 + 1j * u) ** 2
    w = h * np.exp(s) * (2j * mu * (1 + 1j * u)) / (2j * np.pi)
    return s, w


def filter_poles(tau, lam):
    """``(c_j, a_j)`` with ``φ_τ(x) = Σ_j c_j/(x + a_j)`` (module docstring); ``τ > 0``."""
    s, w = exp_contour()
    a = np.concatenate([[lam + 0j], lam + s / tau])
    c = np.concatenate([[1.0 - np.sum(w / s)], w / s])
    if lam == 0.0:  # the pole at x = 0 carries only the quadrature error (|c_0| < 1e-14): drop it
        a, c = a[1:], c[1:]
    return c, a


@dataclass(frozen=True, eq=False)
class AveragedCurves:
    """Dataset-averaged learning curves (theory). ``times`` in units of ``t`` (not ``τ``)."""

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    P: float
    lam: float
    law: str
    model: str


def averaged_curves(pb, P, lam, times, gamma=1.0, init=None, law="finite", model="reduced") -> AveragedCurves:
    """Theory of the dataset-averaged gradient-flow curves (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
    P : float
        Number of prompts (``P > 0``).
    lam : float
        Weight decay ``λ >= 0``.
    times : array_like
        Times ``t >= 0`` of the flow ``dθ/dt = −γ ∇E_t``.
    gamma : float
    init : None or float
        ``None`` (``θ_0 = 0``) or the s.d. ``σ_0`` of a Gaussian initialisation (mean errors).
    law : {"finite", "mp"}
    model : {"reduced", "full"}
    """
    if not isinstance(pb, linattn.Problem):
        raise ValueError(f"pb must be a linattn.Problem; got {type(pb).__name__}")
    P = check.positive("P", P)
    lam = check.nonnegative("lam", lam)
    gamma = check.positive("gamma", gamma)
    sigma0 = 0.0 if init is None else check.nonnegative("init", init)
    t = np.atleast_1d(check.finite_array("times", times))
    if np.any(t < 0):
        raise ValueError(f"times must be >= 0; got minimum {t.min()!r}")
    lw = prompt_law(pb, model, law)
    c = pb.feature_variance
    lp = lam / c
    tau = gamma * c * t
    kappa = np.array([1.0, pb.feature_variance_v / c])[: lw.n_blocks]
    tt = np.sqrt(pb.teacher_norm2)
    y2bar = 1.0 + pb.noise**2
    train = np.empty(t.size)
    test = np.empty(t.size)
    for i, ti in enumerate(tau):
        if ti == 0.0:
            train[i], test[i] = 0.5 * y2bar, 0.5 * (1.0 + pb.noise**2)
        else:
            train[i] = 0.5 * (y2bar - _filtered(2 * ti, lp, P, lw).real)
            test[i] = 0.5 * (1.0 + pb.noise**2 + _quadratic(ti, lp, P, lw, tt, kappa).real)
        if sigma0 > 0 and lw.n_blocks:
            tr_, te_ = _init_terms(ti, lp, P, lw, kappa)
            train[i] += 0.5 * c * sigma0**2 * tr_
            test[i] += 0.5 * c * sigma0**2 * te_
    return AveragedCurves(times=t, train=train, test=test, P=P, lam=lam, law=law, model=model)


def _filtered(tau, lp, P, lw):
    """``⟨b, φ_τ b⟩ = Σ_j c_j T(−a_j)``."""
    cj, aj = filter_poles(tau, lp)
    return np.sum(cj * data_transforms(-aj, P, lw).T)


def _quadratic(tau, lp, P, lw, tt, kappa):
    """``−2t⟨θ̂_0, φ_τ b⟩ + ⟨φ_τ b, K φ_τ b⟩`` from ``ρ`` and the two-system block overlaps."""
    cj, aj = filter_poles(tau, lp)
    dt = data_transforms(-aj, P, lw)
    res = dt.resolvent
    nu = 1.0 / (lw.q(P) * res.r)
    S = block_overlaps(nu, nu, res.omega, res.omega, dt.rho, dt.rho, lw, P)   # all pairs (n, n, B)
    pair = np.outer(dt.rho, dt.rho) + S @ kappa
    return -2 * tt * np.sum(cj * dt.rho) + cj @ pair @ cj


def _init_terms(tau, lp, P, lw, kappa):
    """``Σ_i D_i ∫(x+λ') e^{−2(x+λ')τ} dρ_i`` (train) and ``Σ_i κ_i D_i ∫ e^{−2(x+λ')τ} dρ_i`` (test)."""
    dims = np.asarray(lw.block_dims, float)
    if tau == 0.0:
        mean_x = np.array([lw.weights @ lw.xi[:, i] for i in range(lw.n_blocks)])  # E[x] per block = E ξ_i
        return float(dims @ (mean_x + lp)), float((kappa * dims).sum())
    s, w = exp_contour()
    a = lp + s / (2 * tau)
    r = block_resolvent(-a, P, lw).r                     # ∫ dρ_i/(x + a) = r_i(−a)
    wk = (w / (2 * tau))[:, None]
    exp_int = np.sum(wk * r, axis=0).real                # ∫ e^{−2(x+λ')τ} dρ_i
    lin_int = np.sum(wk * (1.0 - (a - lp)[:, None] * r), axis=0).real
    return float(dims @ lin_int), float((kappa * dims) @ exp_int)
