r"""Exact gradient-flow and gradient-descent solutions per dataset (THEORY §2).

Gradient flow ``dθ/dt = −γ ∇E_t`` and gradient descent ``θ_{n+1} = θ_n − η ∇E_t`` are linear:

.. math:: θ(t) = θ^* + e^{−γ A t}(θ_0 − θ^*),\qquad θ_n = θ^* + (I − ηA)^n (θ_0 − θ^*),

with ``A = H + λI`` and ``θ* = A⁻¹b``. In the eigenbasis of ``H`` every mode decays by its own
factor ``d_k`` (``e^{−γ(g_k+λ)t}`` or ``(1 − η(g_k+λ))^n``); the null space of ``H`` (present when
``P < M``) decays by ``d_⊥`` (``e^{−γλt}`` or ``(1 − ηλ)^n``). For ``λ = 0`` the null-space part of
``θ_0`` therefore stays for ever, and ``θ* `` is the min-norm solution.

Errors. ``E_t(θ) = E_t(θ*) + ½ (θ − θ*)ᵀ A (θ − θ*)`` and
``E_g(θ) = ½ [1 + σ² − 2 u·θ + θᵀ C θ]`` (``u = [vec(I)/D, 0]``, ``C = diag(c, c_v)``) are
quadratic forms in ``θ(t)``. For a Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)``,
``θ(t) = m(t) + L(t) z`` with ``z ~ N(0, I)``, ``m = V(1 − d)β*`` and
``L = σ_0 [V diag(d) Vᵀ + d_⊥ (I − V Vᵀ)]``; for ``q = zᵀ Q z + lᵀ z + κ``,
``E q = tr Q + κ`` and ``Var q = 2 tr Q² + |l|²`` (THEORY §2), all traces reduce to the
eigensystem (:mod:`dynamics.eigensystem`) — the mean and the s.d. over initialisations are
exact, with no sampling.

References: seed paper ``003`` (exact solution of the parameter dynamics, Sec. III, Eq. (16)).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _validate as check

from .eigensystem import Eigensystem, eigensystem


@dataclass(frozen=True, eq=False)
class LearningCurves:
    """Train and test errors along a trajectory.

    Attributes
    ----------
    times : ndarray
        Times ``t`` (gradient flow) or step counts ``n`` (gradient descent).
    train, test : ndarray
        ``E_t`` (weight decay included) and ``E_g``; means over initialisations for a random init.
    train_sd, test_sd : ndarray
        Standard deviations over initialisations (0 for a deterministic init).
    params : ndarray or None
        Mean parameter vectors ``θ(t)`` (``len(times) × M``) if requested.
    lam, model : float, str
    """

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    train_sd: np.ndarray
    test_sd: np.ndarray
    params: np.ndarray | None
    lam: float
    model: str


def _system(data, pb, model) -> Eigensystem:
    if isinstance(data, Eigensystem):
        check.model(model)
        if model != data.model:
            raise ValueError(f"model must match the eigensystem's model {data.model!r}; got {model!r}")
        if pb is not None and pb != data.problem:
            raise ValueError(f"pb must match the eigensystem's problem {data.problem}; got {pb}")
        return data
    return eigensystem(data, pb, model)


def _init(es: Eigensystem, init):
    """Normalise ``init``: ``None`` → zeros; float → Gaussian s.d.; array → θ0 (M,)."""
    if init is None:
        return None, 0.0
    if isinstance(init, numbers.Real) and not isinstance(init, bool):
        return None, check.nonnegative("init", init)
    theta0 = check.finite_array("init", init, shape=(es.M,))
    return theta0, 0.0


def _metric(es: Eigensystem, theta):
    """``C θ`` (blockwise ``c``, ``c_v``)."""
    out = es.problem.feature_variance * np.array(theta, dtype=float)
    if es.model == "full":
        D = es.problem.D
        out[..., D * D:] *= es.problem.feature_variance_v / es.problem.feature_variance
    return out


def curves(es: Eigensystem, lam, decay, decay_null, init=None, return_params=False, times=None) -> LearningCurves:
    """Errors for given per-mode decay factors ``decay`` (n_t, k) and null-space factor (n_t,).

    This is the common core of :func:`gradient_flow` and :func:`gradient_descent`.
    """
    pb = es.problem
    kappa = 1.0 + pb.noise**2
    g, b, u, W = es.g, es.b, es.u, es.W
    gl = g + lam
    bstar = b / gl
    theta0, sigma0 = _init(es, init)
    d = np.atleast_2d(decay)
    dn = np.atleast_1d(decay_null)
    et_star = es.train_at_ridge(lam)
    if theta0 is not None:
        c0 = es.project(theta0)
        n0 = theta0 - es.lift(c0) if es.k < es.M else np.zeros(es.M)   # null-space part of θ0
        n_norm2 = float(n0 @ n0)
        u_n = float(n0[: pb.D**2] @ np.eye(pb.D).ravel()) / pb.D
        Cn0 = _metric(es, n0)
        Cn_V = es.project(Cn0)
        nCn = float(n0 @ Cn0)
    else:
        c0 = np.zeros(es.k)
        n_norm2, u_n, Cn_V, nCn = 0.0, 0.0, np.zeros(es.k), 0.0
    a = bstar + d * (c0 - bstar)                                  # mean coefficients (n_t, k)
    dev = d * (c0 - bstar)
    train = et_star + 0.5 * (np.sum(gl * dev**2, axis=1) + lam * dn**2 * n_norm2)
    test = 0.5 * (kappa - 2 * (a @ u + dn * u_n) + np.einsum("tk,kl,tl->t", a, W, a)
                  + 2 * dn * (a @ Cn_V) + dn**2 * nCn)
    train_sd = np.zeros_like(train)
    test_sd = np.zeros_like(test)
    if sigma0 > 0:
        s2 = sigma0**2
        null = es.M - es.k
        d2 = d**2
        dn2 = dn**2
        Wd = np.diag(W)
        # test: Q = ½ Lᵀ C L,  l = Lᵀ(C m − u)
        test = test + 0.5 * s2 * (d2 @ Wd + dn2 * (es.trC - Wd.sum()))
        WW = W @ W
        tr_CB2 = (np.einsum("tk,kl,tl->t", d2, W**2, d2)
                  + 2 * dn2 * (d2 @ (np.diag(es.W2) - np.diag(WW)))
                  + dn2**2 * (es.trC2 - 2 * np.trace(es.W2) + np.trace(WW)))
        r = a @ W - u                                             # Vᵀ(C m − u)  (n_t, k)
        Cm_u_norm2 = (np.einsum("tk,kl,tl->t", a, es.W2, a) - 2 * es.c_u * (a @ u) + es.u_norm2)
        perp2 = Cm_u_norm2 - np.sum(r**2, axis=1)
        test_var = 0.25 * s2**2 * 2 * tr_CB2 + s2 * (np.sum(d2 * r**2, axis=1) + dn2 * perp2)
        # train: Q = ½ Lᵀ A L,  l = Lᵀ(A m − b)
        train = train + 0.5 * s2 * (d2 @ gl + dn2 * lam * null)
        tr_AB2 = d2**2 @ gl**2 + dn2**2 * lam**2 * null
        train_var = 0.5 * s2**2 * tr_AB2 + s2 * np.sum(d2 * (gl * a - b) ** 2, axis=1)
        # both variances are sums of squares; the maximum only removes round-off of order 1e-16
        train_sd = np.sqrt(np.maximum(train_var, 0.0))
        test_sd = np.sqrt(np.maximum(test_var, 0.0))
    params = None
    if return_params:
        params = es.lift(a)
        if theta0 is not None:
            params = params + dn[:, None] * n0[None, :]
    return LearningCurves(times=np.asarray(times) if times is not None else np.arange(len(train)),
                          train=train, test=test, train_sd=train_sd, test_sd=test_sd, params=params,
                          lam=float(lam), model=es.model)


def gradient_flow(data, pb, lam, times, gamma=1.0, init=None, model="reduced", return_params=False) -> LearningCurves:
    """Exact gradient-flow learning curves ``E_t(t)``, ``E_g(t)`` of one dataset.

    Parameters
    ----------
    data : linattn.Prompts or Eigensystem
        Passing an :class:`~dynamics.eigensystem.Eigensystem` reuses its decomposition (any
        ``λ``, times, initialisations).
    pb : linattn.Problem
    lam : float
        Weight decay ``λ >= 0``. For ``λ = 0`` the null-space part of ``θ_0`` never decays.
    times : array_like
        Times ``t >= 0``.
    gamma : float
        Learning rate of the flow ``dθ/dt = −γ ∇E_t`` (``γ > 0``).
    init : None, float or array_like
        ``None``: ``θ_0 = 0``; array: ``θ_0`` (length ``M``); float ``σ_0``: ``θ_0 ~ N(0, σ_0² I)``,
        and the exact mean and s.d. over initialisations are returned.
    model : {"reduced", "full"}
    return_params : bool
        Also return the (mean) parameter vectors ``θ(t)``.
    """
    es = _system(data, pb, model)
    lam = check.nonnegative("lam", lam)
    gamma = check.positive("gamma", gamma)
    t = check.finite_array("times", times, ndim=None)
    t = np.atleast_1d(t)
    if np.any(t < 0):
        raise ValueError(f"times must be >= 0; got minimum {t.min()!r}")
    decay = np.exp(-gamma * np.outer(t, es.g + lam))
    decay_null = np.exp(-gamma * lam * t)
    return curves(es, lam, decay, decay_null, init, return_params, times=t)


def gradient_descent(data, pb, lam, steps, lr, init=None, model="reduced", return_params=False) -> LearningCurves:
    """Exact gradient-descent learning curves ``θ_n = θ* + (I − ηA)^n(θ_0 − θ*)``.

    Parameters as :func:`gradient_flow`, with ``steps`` (integers ``n >= 0``) and the step
    ``lr = η``, which must satisfy ``0 < η < 2/λ_max(A)`` (stability).
    """
    es = _system(data, pb, model)
    lam = check.nonnegative("lam", lam)
    lr = check.positive("lr", lr)
    lmax = es.lambda_max + lam
    if lr >= 2.0 / lmax:
        raise ValueError(f"lr must be < 2/lambda_max(A) = {2.0 / lmax:.6g} for stability; got {lr!r}")
    n = np.atleast_1d(np.asarray(steps))
    if n.dtype.kind not in "iu" or np.any(n < 0):
        raise ValueError(f"steps must be non-negative integers; got {steps!r}")
    decay = (1.0 - lr * (es.g + lam))[None, :] ** n[:, None]
    decay_null = (1.0 - lr * lam) ** n.astype(float)
    return curves(es, lam, decay, decay_null, init, return_params, times=n)


@dataclass(frozen=True, eq=False)
class LongTimeLimit:
    """``θ(∞)`` of gradient flow from ``θ_0`` (ridge solution for ``λ > 0``; min-norm solution
    plus the null-space part of ``θ_0`` for ``λ = 0``) and its errors.

    ``gap = (E_g − E_t)/E_t`` (``inf`` when the training error is exactly zero, i.e. at
    ``λ = 0`` with ``P < M``); ``contrast = tr Γ / (‖Γ‖_F √D)``.
    """

    theta: np.ndarray
    train: float
    test: float
    gap: float
    contrast: float


def long_time_limit(data, pb, lam, model="reduced", init=None) -> LongTimeLimit:
    """The long-time limit of gradient flow (ΔEr and the contrast ratio of seed Figs. 5–6)."""
    es = _system(data, pb, model)
    lam = check.nonnegative("lam", lam)
    if init is not None and not (isinstance(init, np.ndarray) or isinstance(init, (list, tuple))):
        raise ValueError("init must be None or an array θ0 for the long-time limit (a random init has no "
                         f"single limit); got {init!r}")
    decay = np.zeros((1, es.k))
    decay_null = np.array([1.0 if lam == 0 else 0.0])
    cv = curves(es, lam, decay, decay_null, init, return_params=True)
    theta = cv.params[0]
    Gamma, _ = linattn.unpack(theta, es.problem.D, es.model)
    train, test = float(cv.train[0]), float(cv.test[0])
    gap = np.inf if train == 0.0 else (test - train) / train
    return LongTimeLimit(theta=theta, train=train, test=test, gap=float(gap),
                         contrast=float(linattn.contrast_ratio(Gamma)))
