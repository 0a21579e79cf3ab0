r"""Dataset-averaged learning curves from the spectral theory (conventions §3.3, extended).

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

Test prompts of another context length ``N_test`` (the model trained at ``N``): the filters and ``E_t`` are
unchanged; the test metric of each block is multiplied by ``c(N_test)/c(N)`` (``Γ``) and ``c_v(N_test)/c_v(N)``
(``v``), in the norm ``⟨φ_τ b, K φ_τ b⟩`` (teacher part included) and in the initial-spread term; the overlap
``b tr Γ/D`` does not depend on the context length.

``law="mp"`` uses Marchenko–Pastur with decoupled labels (conventions §3.2/§3.3 baseline);
``law="finite"`` the finite-D prompt law with the scale–label correlations (``channel="decoupled"``
drops them: the second baseline).

Very short times: for ``0 < τ < 10^{-10}`` the poles ``s_k/τ`` approach overflow, and the curve is
the chord between ``τ = 0`` (exact) and ``τ = 10^{-10}``; its error, ``O(τ · 10^{-10} E'')`` plus
the contour's uniform ``10^{-14}``, is below ``10^{-13}`` absolute.

Very long times: for ``τ > 10^{15}`` the curve is evaluated at ``τ = 10^{15}`` (``TAU_MAX``): the poles ``λ' + s_k/τ``
would otherwise approach the zero atom's pole at 0 closer than the resolvent resolves (``spectra.resolvent.Z_MIN``).
The curve has then reached its long-time limit: the rest decays like ``e^{−2 x₋ τ}`` with ``x₋`` the lower edge of the
continuous spectrum, below ``e^{−100}`` unless ``x₋ < 5·10^{-14}`` (``P`` within ~``10^{-6}`` relative of ``M``; at
``P = M`` the resolvent fails near 0 with a ``ConvergenceError``). Likewise a weight decay with ``λ' = λ/c`` below
``Z_MIN`` drops the pole ``a_0 = λ'`` as at ``λ = 0`` (its weight ``c_0`` is the contour's quadrature error, and the
data vector has no component on the zero atom).

Huge weight decay: for ``λ' > 10^{300}`` (``LAM_LIMIT``) the curves at ``τ > 0`` are their ``λ' → ∞`` limit,
``E_t = ½ Ȳ²`` and ``E_g = E_g(θ = 0)``, with no initial-spread term: ``φ_τ <= 1/λ'`` and ``e^{−2λ'τ}``
(``τ >= 10^{-10}``) change them by less than ``10^{-280}`` relative, while the poles ``−a_j`` would approach
float64's top, where the resolvent is not resolved.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._arguments import array, choice, nonnegative, optional, public, real
from linattn._results import ToXarray, short_repr
from linattn._validate import PROBLEM
from spectra._prompt_law import CHANNELS, LAWS, fresh_law
from spectra._resolvent import Z_MIN, _block_overlaps, _block_resolvent, _cmatmul, _data_transforms

# parabolic contour for e^{-y} (tuned for a uniform error < 1e-14 on [0, inf); tests/dynamics)
CONTOUR_NODES = 31
CONTOUR_MU = 4.54
CONTOUR_H = 0.18
#: rescaled time below which the curve is the chord from τ = 0 (module docstring)
TAU_CHORD = 1e-10
#: rescaled time beyond which the curve is its value at TAU_MAX, the long-time limit (module docstring)
TAU_MAX = 1e15
#: ``λ'`` beyond which the curves at ``τ > 0`` are their infinite-decay limit (module docstring)
LAM_LIMIT = 1e300


def exp_contour(n=CONTOUR_NODES, mu=CONTOUR_MU, h=CONTOUR_H):
    """Nodes ``s_k`` and weights ``w_k`` with ``e^{−y} ≈ Σ_k w_k/(s_k + y)`` for ``y >= 0``.

    Parameters
    ----------
    n : int
        Number of nodes (odd).
    mu, h : float
        Parabola scale and step (``> 0``).

    Returns
    -------
    s, w : ndarray (n,) complex
    """
    n = check.positive_int("n", n)
    mu, h = check.positive("mu", mu), check.positive("h", h)
    if n % 2 == 0:
        check.fail("n", n, "an odd integer")
    return _exp_contour(n, mu, h)


@functools.lru_cache(maxsize=4)
def _exp_contour(n, mu, h):
    K = (n - 1) // 2
    u = h * np.arange(-K, K + 1)
    s = mu * (1 + 1j * u) ** 2
    w = h * np.exp(s) * (2j * mu * (1 + 1j * u)) / (2j * np.pi)
    return s, w


def filter_poles(rescaled_time, lam):
    """``(c_j, a_j)`` with ``φ_τ(x) = Σ_j c_j/(x + a_j)`` (module docstring).

    Parameters
    ----------
    rescaled_time : float
        Rescaled time ``τ > 0``.
    lam : float
        ``λ' >= 0``.

    Returns
    -------
    c, a : ndarray complex
    """
    return _filter_poles(check.positive("rescaled_time", rescaled_time), check.nonnegative("lam", lam))


def _filter_poles(rescaled_time, lam):
    """:func:`filter_poles` of checked arguments."""
    s, w = _exp_contour(CONTOUR_NODES, CONTOUR_MU, CONTOUR_H)
    a = np.concatenate([[lam + 0j], lam + s / rescaled_time])
    c = np.concatenate([[1.0 - np.sum(w / s)], w / s])
    if lam < Z_MIN:  # the pole at x = −λ' ≈ 0 carries only the quadrature error (|c_0| < 1e-14): drop it
        a, c = a[1:], c[1:]
    return c, a


@dataclass(frozen=True, eq=False)
class AveragedCurves(ToXarray, xarray_dim="times", xarray_coords=("P", "lam")):
    """Dataset-averaged learning curves (theory). ``times`` in units of ``t`` (not ``τ``).

    Attributes
    ----------
    times : ndarray
        Times ``t``.
    train, test : ndarray
        Dataset-averaged ``E_t(t)`` and ``E_g(t)``.
    P, lam : float
        Prompts and weight decay.
    law, model : str
        Prompt law and model.
    N_test : int or None
        Context length of the test prompts (``None``: the training length).
    """

    __repr__ = short_repr

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    P: float
    lam: float
    law: str
    model: str
    N_test: int | None = None


@public(pb=PROBLEM, P=real(low=1.0), lam=nonnegative(), times=array(min_ndim=1), init=optional(nonnegative()),
        law=choice(LAWS), channel=choice(CHANNELS))
def averaged_curves(pb, P, lam, times, gamma=1.0, init=None, law="finite", channel="correlated",
                    model="reduced", N_test=None) -> AveragedCurves:
    """Theory of the dataset-averaged gradient-flow curves (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
    P : float
        Number of prompts, a real number ``P >= 1`` (the theory is continuous in ``P``).
    lam : float
        Weight decay ``λ >= 0``.
    times : array_like
        Times ``t >= 0`` of the flow ``dθ/dt = −γ ∇E_t``.
    gamma : float
    init : None or float
        ``None`` (``θ_0 = 0``) or the s.d. ``σ_0`` of a Gaussian initialisation (mean errors).
    law : {"finite", "mp"}
    channel : {"correlated", "decoupled"}
        With ``law="finite"``: keep (default) or drop the scale–label correlations (the baseline
        of conventions §3.3).
    model : {"reduced", "full"}
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: the training length ``N``): ``test`` is
        the error at ``N_test`` of the model trained at ``N`` (module docstring).

    Returns
    -------
    AveragedCurves
        ``N_test`` records the test prompts' context length (``None``: ``N``).
    """
    sigma0 = 0.0 if init is None else init
    t = times
    if t.ndim != 1 or np.any(t < 0):
        check.fail("times", f"<array with shape {t.shape}, minimum {t.min()!r}>", "a 1-d array of times >= 0")
    # each time point solves the law's resolvent (a few ms): 10⁸ points would be days
    check.work(1e7 * t.size, f"the curves at {t.size} times (a resolvent solve each)", "times")
    lw = fresh_law(pb, model, law, channel)
    c = pb.feature_variance
    ratio = None if N_test in (None, pb.N) else pb.test_metric_ratio(N_test)[:lw.n_blocks]    # None: untouched
    with np.errstate(over="ignore"):
        lp = float(check.finite_result(np.float64(lam) / c, {"lam": lam}, "λ/c (the weight decay in H/c units)"))

    def point(tau):
        """(E_t, E_g) at rescaled time τ >= TAU_CHORD (or τ = 0)."""
        if tau > 0.0 and lp > LAM_LIMIT:        # the infinite-decay limit (module docstring)
            return 0.5 * pb.label_variance, pb.test_error_from_moments(0.0, 0.0)
        if tau == 0.0:
            tr, te = 0.5 * pb.label_variance, pb.test_error_from_moments(0.0, 0.0)
        else:
            tr = 0.5 * (pb.label_variance - _filtered(2 * tau, lp, P, lw).real)
            overlap, norm = _moments(tau, lp, P, lw, pb, ratio)
            te = pb.test_error_from_moments(overlap, norm)
        if sigma0 > 0:
            init_tr, init_te = _init_terms(tau, lp, P, lw, ratio)
            with np.errstate(over="ignore", invalid="ignore"):
                spread = 0.5 * c * np.float64(sigma0) ** 2 * np.array([init_tr, init_te])
            spread = check.finite_result(spread, {"init": sigma0, "lam": lam},
                                         "the initial spread of the errors (its weight decay included)")
            tr, te = tr + spread[0], te + spread[1]
        return tr, te

    train = np.empty(t.size)
    test = np.empty(t.size)
    chord = None
    with np.errstate(over="ignore"):
        rescaled = np.minimum(gamma * c * t, TAU_MAX)      # beyond TAU_MAX: the long-time limit (module docstring)
    for i, tau in enumerate(rescaled):
        if 0.0 < tau < TAU_CHORD:    # the chord from τ = 0 (module docstring)
            if chord is None:
                chord = np.array(point(0.0)), np.array(point(TAU_CHORD))
            train[i], test[i] = chord[0] + (tau / TAU_CHORD) * (chord[1] - chord[0])
        else:
            train[i], test[i] = point(tau)
    return AveragedCurves(times=t, train=train, test=test, P=P, lam=lam, law=law, model=model, N_test=N_test)


def _filtered(tau, lp, P, lw):
    """``⟨b, φ_τ b⟩ = Σ_j c_j T(−a_j)``."""
    cj, aj = _filter_poles(tau, lp)
    return np.sum(cj * _data_transforms(-aj, P, lw).T)


def _moments(tau, lp, P, lw, pb, ratio=None):
    """The two moments of ``θ(τ)`` the test error depends on (:meth:`linattn.Problem.test_error_from_moments`):
    ``overlap = t⟨θ̂_0, φ_τ b⟩`` and ``norm = ⟨φ_τ b, K φ_τ b⟩``, from ``ρ`` and the two-system
    block overlaps; ``ratio`` (per block) rescales ``K`` to the test prompts' context length."""
    cj, aj = _filter_poles(tau, lp)
    tr = _data_transforms(-aj, P, lw)
    res = tr.resolvent
    nu = 1.0 / (lw._ratios(P) * res.r)
    S = _block_overlaps(nu, nu, res.omega, res.omega, tr.rho, tr.rho, lw, P)   # all pairs (n, n, B)
    if ratio is None:
        pair = np.outer(tr.rho, tr.rho) + S @ lw.metric
    else:       # the teacher direction lies in the Γ block
        pair = ratio[0] * np.outer(tr.rho, tr.rho) + S @ (lw.metric * ratio)
    return np.sqrt(pb.teacher_norm2) * np.sum(cj * tr.rho).real, (cj @ pair @ cj).real


def _init_terms(tau, lp, P, lw, ratio=None):
    """``Σ_i D_i ∫(x+λ') e^{−2(x+λ')τ} dρ_i`` (train) and ``Σ_i κ_i D_i ∫ e^{−2(x+λ')τ} dρ_i`` (test; ``κ`` times
    ``ratio`` at another context length)."""
    dims = np.asarray(lw.block_dims, float)
    kappa = lw.metric if ratio is None else lw.metric * ratio
    if tau == 0.0:
        mean_x = np.array([lw.weights @ lw.xi[:, i] for i in range(lw.n_blocks)])  # E[x] per block = E ξ_i
        return float(dims @ (mean_x + lp)), float((kappa * dims).sum())
    s, w = _exp_contour(CONTOUR_NODES, CONTOUR_MU, CONTOUR_H)
    a = lp + s / (2 * tau)
    res = _block_resolvent(-a, P, lw)
    r = res.r                                            # ∫ dρ_i/(x + a) = r_i(−a)
    wk = (w / (2 * tau))[:, None]
    exp_int = np.sum(wk * r, axis=0).real                # ∫ e^{−2(x+λ')τ} dρ_i
    # ∫ (x+λ')/(x+a) dρ_i = 1 − (a−λ') r_i = (λ' + E[ξ_i ω]) r_i by the fixed point r_i = 1/(a + E[ξ_i ω]):
    # the second form has no cancellation when a is large (short times)
    xi_omega = _cmatmul(res.omega, lw.weights[:, None] * lw.xi)
    lin_int = np.sum(wk * (lp + xi_omega) * r, axis=0).real
    return float(dims @ lin_int), float((kappa * dims) @ exp_int)
