r"""Exact gradient-flow and gradient-descent solutions per dataset (conventions §2).

Gradient flow ``dθ/dt = −γ ∇E_t`` and gradient descent ``θ_{n+1} = θ_n − η ∇E_t`` are linear:

.. math:: θ(t) = θ^* + e^{−γ A t}(θ_0 − θ^*),\qquad θ_n = θ^* + (I − ηA)^n (θ_0 − θ^*),

with ``A = H + λI`` and ``θ* = A⁻¹b``. In the eigenbasis of ``H`` every mode decays by its own
factor ``d_k`` (``e^{−γ(g_k+λ)t}`` or ``(1 − η(g_k+λ))^n``); the null space of ``H`` (present when
``P < M``) decays by ``d_⊥`` (``e^{−γλt}`` or ``(1 − ηλ)^n``). For ``λ = 0`` the null-space part of
``θ_0`` therefore stays for ever, and ``θ* `` is the min-norm solution.

Errors. ``E_t(θ) = E_t(θ*) + ½ (θ − θ*)ᵀ A (θ − θ*)`` and
``E_g(θ) = ½ [V − 2 u·θ + θᵀ C θ]`` (``u = [b vec(I)/D, 0]``, ``C = diag(c, c_v)``) are
quadratic forms in ``θ(t)``. For a Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)``,
``θ(t) = m(t) + L(t) z`` with ``z ~ N(0, I)``, ``m = V(1 − d)β*`` and
``L = σ_0 [V diag(d) Vᵀ + d_⊥ (I − V Vᵀ)]``; for ``q = zᵀ Q z + lᵀ z + κ``,
``E q = tr Q + κ`` and ``Var q = 2 tr Q² + |l|²`` (conventions §2), all traces reduce to the
eigensystem (:mod:`spectra.eigensystem`) — the mean and the s.d. over initialisations are
exact, with no sampling.

References: the seed paper (conventions §4) (exact solution of the parameter dynamics, Sec. III, Eq. (16)).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import check
from linattn.results import short_repr
from spectra import Eigensystem, as_eigensystem


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
    test_idg : ndarray or None
        With a task pool (``data.pool``): the in-distribution error ``E_IDG`` (mean over
        initialisations; its s.d. is not computed), ``None`` otherwise.
    """

    __repr__ = short_repr

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    train_sd: np.ndarray
    test_sd: np.ndarray
    params: np.ndarray | None
    lam: float
    model: str
    test_idg: np.ndarray | None = None


def _init(es: Eigensystem, init):
    """Normalise ``init``: ``None`` → zeros; float → Gaussian s.d.; array → θ0 (M,)."""
    if init is None:
        return None, 0.0
    if isinstance(init, numbers.Real) and not isinstance(init, (bool, np.bool_)):
        return None, check.nonnegative("init", init)
    theta0 = check.finite_array("init", init, shape=(es.M,))
    return theta0, 0.0


@dataclass(frozen=True)
class _NullPart:
    """The part ``n_0`` of ``θ_0`` outside the modes held (it decays by ``d_⊥`` alone) and the
    inner products the errors need: ``|n_0|²``, ``u·n_0``, ``Vᵀ C n_0``, ``n_0ᵀ C n_0``."""

    __repr__ = short_repr

    vector: np.ndarray
    norm2: float
    overlap: float
    CV: np.ndarray
    CC: float

    @classmethod
    def of(cls, es: Eigensystem, theta0):
        if theta0 is None or es.null_dim == 0:
            return cls(np.zeros(es.M), 0.0, 0.0, np.zeros(es.k), 0.0)
        n0 = theta0 - es.lift(es.project(theta0))
        Cn0 = es.apply_metric(n0)
        D = es.problem.D
        return cls(n0, float(n0 @ n0), float(np.trace(n0[: D * D].reshape(D, D))) / (D / es.problem.teacher_strength),
                   es.project(Cn0), float(n0 @ Cn0))


def _mean_errors(es: Eigensystem, lam, d, dn, c0, null: _NullPart):
    """Mean coefficients ``a(t)`` and the errors of the mean trajectory (deterministic part).

    ``a = b* + d (c_0 − b*)``; ``E_t = E_t(θ*) + ½[Σ_k (g_k+λ) (a_k − b*_k)² + λ d_⊥² |n_0|²]``;
    ``E_g`` from the moments ``overlap = a·u + d_⊥ u·n_0`` and
    ``norm = aᵀWa + 2 d_⊥ a·VᵀCn_0 + d_⊥² n_0ᵀCn_0``.
    """
    gl = es.g + lam
    bstar = es.ridge_coefficients(lam)
    dev = d * (c0 - bstar)
    a = bstar + dev
    train = es.train_at_ridge(lam) + 0.5 * (np.sum(gl * dev**2, axis=1) + lam * dn**2 * null.norm2)
    overlap = a @ es.u + dn * null.overlap
    norm = np.einsum("tk,kl,tl->t", a, es.W, a) + 2 * dn * (a @ null.CV) + dn**2 * null.CC
    return a, train, es.problem.test_error_from_moments(overlap, norm)


def _init_spread(es: Eigensystem, lam, d, dn, a, sigma0):
    """Extra mean and the variance of ``E_t``, ``E_g`` over ``θ_0 ~ N(0, σ_0² I)`` (module docstring).

    Returns ``(train_extra, test_extra, train_var, test_var)``.
    """
    s2, null = sigma0**2, es.null_dim
    gl = es.g + lam
    d2, dn2 = d**2, dn**2
    W, Wd = es.W, np.diag(es.W)
    # test: Q = ½ Lᵀ C L,  l = Lᵀ(C m − u)
    test_extra = 0.5 * s2 * (d2 @ Wd + dn2 * (es.trC - Wd.sum()))
    WW = W @ W
    tr_CB2 = (np.einsum("tk,kl,tl->t", d2, W**2, d2)
              + 2 * dn2 * (d2 @ (np.diag(es.W2) - np.diag(WW)))
              + dn2**2 * (es.trC2 - 2 * np.trace(es.W2) + np.trace(WW)))
    r = a @ W - es.u                                              # Vᵀ(C m − u)  (n_t, k)
    Cm_u_norm2 = np.einsum("tk,kl,tl->t", a, es.W2, a) - 2 * es.c_u * (a @ es.u) + es.u_norm2
    perp2 = Cm_u_norm2 - np.sum(r**2, axis=1)
    test_var = 0.5 * s2**2 * tr_CB2 + s2 * (np.sum(d2 * r**2, axis=1) + dn2 * perp2)
    # train: Q = ½ Lᵀ A L,  l = Lᵀ(A m − b)
    train_extra = 0.5 * s2 * (d2 @ gl + dn2 * lam * null)
    tr_AB2 = d2**2 @ gl**2 + dn2**2 * lam**2 * null
    train_var = 0.5 * s2**2 * tr_AB2 + s2 * np.sum(d2 * (gl * a - es.b) ** 2, axis=1)
    return train_extra, test_extra, train_var, test_var


def curves(es: Eigensystem, lam, decay, decay_null, init=None, return_params=False, times=None) -> LearningCurves:
    """Errors for given per-mode decay factors ``decay`` (n_t, k) and null-space factor (n_t,).

    The common core of :func:`gradient_flow` and :func:`gradient_descent` (module docstring).

    Parameters
    ----------
    es : spectra.Eigensystem
    lam : float
    decay : ndarray (n_t, k)
        Per-mode factors ``d_k(t)``.
    decay_null : ndarray (n_t,)
        Null-space factor ``d_⊥(t)``.
    init : None, float or ndarray
        As in :func:`gradient_flow`.
    return_params : bool
    times : ndarray, optional
        Stored in the result (default: ``0, 1, …``).

    Returns
    -------
    LearningCurves
    """
    theta0, sigma0 = _init(es, init)
    d = np.atleast_2d(decay)
    dn = np.atleast_1d(decay_null)
    null = _NullPart.of(es, theta0)
    c0 = es.project(theta0) if theta0 is not None else np.zeros(es.k)
    a, train, test = _mean_errors(es, lam, d, dn, c0, null)
    train_sd = np.zeros_like(train)
    test_sd = np.zeros_like(test)
    if sigma0 > 0:
        tr_x, te_x, tr_var, te_var = _init_spread(es, lam, d, dn, a, sigma0)
        train, test = train + tr_x, test + te_x
        # both variances are sums of squares; the maximum only removes round-off of order 1e-16
        train_sd, test_sd = np.sqrt(np.maximum(tr_var, 0.0)), np.sqrt(np.maximum(te_var, 0.0))
    params = None
    if return_params:
        params = es.lift(a) + dn[:, None] * null.vector[None, :]
    return LearningCurves(times=np.asarray(times) if times is not None else np.arange(len(train)),
                          train=train, test=test, train_sd=train_sd, test_sd=test_sd, params=params,
                          lam=float(lam), model=es.model, test_idg=_idg_curve(es, a, d, dn, null, sigma0))


def _idg_curve(es: Eigensystem, a, d, dn, null: _NullPart, sigma0):
    """``E_IDG`` of the mean trajectory ``θ = V a + d_⊥ n_0`` plus ``½σ_0² tr(C_W L Lᵀ)/σ_0²`` for a
    random start (:mod:`linattn.pools`; ``None`` without a task pool)."""
    idg = es.idg
    if idg is None:
        return None
    out = idg.error(a)
    if null.norm2 > 0:
        Cn0 = idg.metric.apply(null.vector)
        out = (out + dn * (-(idg.metric.linear @ null.vector) + a @ es.project(Cn0))
               + 0.5 * dn**2 * float(null.vector @ Cn0))
    if sigma0 > 0:
        out = out + 0.5 * sigma0**2 * idg.thermal_trace(d**2, dn**2, es.null_dim)
    return out


def gradient_flow(data, pb, lam, times, gamma=1.0, init=None, model="reduced", return_params=False) -> LearningCurves:
    """Exact gradient-flow learning curves ``E_t(t)``, ``E_g(t)`` of one dataset.

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
        Passing an eigensystem (:func:`spectra.eigensystem`) reuses its decomposition (any ``λ``,
        times, initialisations).
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

    Returns
    -------
    LearningCurves
    """
    es = as_eigensystem(data, pb, model)
    lam = check.nonnegative("lam", lam)
    gamma = check.positive("gamma", gamma)
    return_params = check.boolean("return_params", return_params)
    t = np.atleast_1d(check.finite_array("times", times))
    if t.ndim != 1 or np.any(t < 0):
        check.fail("times", f"<array with shape {t.shape}, minimum {t.min()!r}>", "a 1-d array of times >= 0")
    decay = np.exp(-gamma * np.outer(t, es.g + lam))
    decay_null = np.exp(-gamma * lam * t)
    return curves(es, lam, decay, decay_null, init, return_params, times=t)


def gradient_descent(data, pb, lam, steps, lr, init=None, model="reduced", return_params=False) -> LearningCurves:
    """Exact gradient-descent learning curves ``θ_n = θ* + (I − ηA)^n(θ_0 − θ*)``.

    Parameters
    ----------
    data, pb, lam, init, model, return_params
        As in :func:`gradient_flow`.
    steps : array_like of int
        Step counts ``n >= 0``.
    lr : float
        Step ``η``, with ``0 < η < 2/λ_max(A)`` (stability).

    Returns
    -------
    LearningCurves
        ``times`` holds the step counts.
    """
    es = as_eigensystem(data, pb, model)
    lam = check.nonnegative("lam", lam)
    lr = check.positive("lr", lr)
    return_params = check.boolean("return_params", return_params)
    lmax = es.lambda_max + lam
    if lr >= 2.0 / lmax:
        check.fail("lr", lr, f"< 2/lambda_max(A) = {2.0 / lmax:.6g} for stability")
    n = check.counts("steps", steps)
    decay = (1.0 - lr * (es.g + lam))[None, :] ** n[:, None]
    decay_null = (1.0 - lr * lam) ** n.astype(float)
    return curves(es, lam, decay, decay_null, init, return_params, times=n)


@dataclass(frozen=True, eq=False)
class LongTimeLimit:
    """``θ(∞)`` of gradient flow from ``θ_0`` (ridge solution for ``λ > 0``; min-norm solution
    plus the null-space part of ``θ_0`` for ``λ = 0``) and its errors.

    ``test_idg``: the in-distribution error when the data carry a task pool (else ``None``).
    ``gap = (E_g − E_t)/E_t`` (:func:`linattn.relative_gap`: ``inf`` when the training error is
    exactly zero, i.e. at ``λ = 0`` with ``P < M``); ``contrast = tr Γ / (‖Γ‖_F √D)``.
    """

    __repr__ = short_repr

    theta: np.ndarray
    train: float
    test: float
    gap: float
    contrast: float
    test_idg: float | None = None


def long_time_limit(data, pb, lam, model="reduced", init=None) -> LongTimeLimit:
    """The long-time limit of gradient flow (ΔEr and the contrast ratio of seed Figs. 5–6).

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
    pb : linattn.Problem
    lam : float
        Weight decay ``λ >= 0``.
    model : {"reduced", "full"}
    init : None or array_like (M,)
        ``θ_0`` (zeros by default; a random initialisation has no single limit).

    Returns
    -------
    LongTimeLimit
    """
    es = as_eigensystem(data, pb, model)
    lam = check.nonnegative("lam", lam)
    if init is not None and (np.ndim(init) == 0):
        check.fail("init", init, "None or an array θ0 (a random initialisation has no single limit)")
    decay = np.zeros((1, es.k))
    decay_null = np.array([1.0 if lam == 0 else 0.0])
    cv = curves(es, lam, decay, decay_null, init, return_params=True)
    theta = cv.params[0]
    Gamma, _ = linattn.unpack(theta, es.problem.D, es.model)
    train, test = float(cv.train[0]), float(cv.test[0])
    return LongTimeLimit(theta=theta, train=train, test=test, gap=linattn.relative_gap(train, test),
                         contrast=float(linattn.contrast_ratio(Gamma)),
                         test_idg=None if cv.test_idg is None else float(cv.test_idg[0]))
