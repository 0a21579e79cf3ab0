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

Per-block weight decay ``lam=(λ_Γ, λ_v)`` (full model): ``A = H + Λ``, ``Λ = diag(λ_Γ I_{D²}, λ_v I_D)``. The
flow is *not* invariant under the rescaling ``v' = v√(λ_v/λ_Γ)`` that makes the Gibbs measure a common-decay
problem (:mod:`replica.gibbs`): ``dθ'/dt = −γ S⁻²∇_{θ'}E_t`` has another speed on the ``v`` block. The
closed form above is therefore evaluated in the eigenbasis of ``A`` itself, a dense ``M × M``
decomposition (:func:`spectra.eigensystem` with ``lam=(λ_Γ, λ_v)``, ``O(M³)``; a pair of equal entries takes
the common-``λ`` path). With both entries ``> 0``, ``A`` is positive definite: every mode decays, there is no
null space to carry, and ``θ(∞) = θ* = A⁻¹b`` whatever ``θ_0``; a pair ``(0, 0)`` is ``λ = 0`` (min-norm
solution plus the null-space part of ``θ_0``).

Test prompts of another context length ``N_test`` (``N_test=`` of every function here; the model is trained at
``N``): the trajectory and ``E_t`` are unchanged, and ``E_g`` is the exact error at ``N_test``, the same quadratic
form with the metric ``C_t = diag(c(N_test) I_{D²}, c_v(N_test) I_D)`` (``u`` does not depend on the context
length). In the modes, ``W_t = VᵀC_tV = c_t I + (s c_{v,t} − c_t) V_2ᵀV_2`` (``V_2`` the ``v`` rows of the modes,
``s`` the eigensystem's ``v_scale``) and ``W_{2,t} = VᵀC_t²V`` likewise; the in-distribution error uses the pool's
metric at ``N_test`` (:func:`linattn.pools.idg_metric`).

Structured tasks (``Problem(task_covariance=S)``, ``w ~ N(0, S)``): the trajectories and ``E_t`` are as above;
``E_g`` is the exact error on fresh tasks from ``N(0, S)``, the same quadratic form with ``C = Σ̃ ⊗ I_D`` and
``u = vec(a²S/D)`` of that law (:attr:`spectra.Eigensystem.law`; ``C u`` is then no multiple of ``u``), and
``test_odg`` the error on fresh tasks from the isotropic law of the same power ``(tr S/D) I``, the mean over
initialisations as for ``test_idg`` (:attr:`spectra.Eigensystem.odg`).

Extreme inputs: the spread over initialisations is computed from the amplitudes ``σ_0 d_k(t)`` (never
``σ_0²`` times a vanishing factor), so late times of a huge ``σ_0`` have their exact finite value; a result
that overflows float64 is refused with a ``ValueError`` naming ``init``, ``lam`` or ``times``
(:func:`linattn._check.finite_result`).

References: the seed paper (conventions §4) (exact solution of the parameter dynamics, Sec. III, Eq. (16)).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _check as check
from linattn._arguments import Rule, boolean, public
from linattn._results import short_repr
from linattn._validate import PROBLEM
from spectra import Eigensystem
from spectra._eigensystem import _as_eigensystem

#: the rule of recorded step numbers
STEPS = Rule(f"a 1-d array of integers >= 0 and <= {check.MAX_INT}", check.counts)


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
    lam : float or (float, float)
        The common weight decay, or the per-block pair ``(λ_Γ, λ_v)``.
    model : str
    test_idg : ndarray or None
        With a task pool (``data.pool``): the in-distribution error ``E_IDG`` (mean over
        initialisations; its s.d. is not computed), ``None`` otherwise.
    N_test : int or None
        The context length of the test prompts of ``test``, ``test_sd``, ``test_idg`` (``None``: the training
        length ``N``).
    test_odg : ndarray or None
        Structured tasks (``pb.task_covariance = S``; ``test`` is on fresh tasks from ``N(0, S)``): the error on fresh
        tasks from the isotropic law of the same power ``(tr S/D) I`` (mean over initialisations), else ``None``.
    """

    __repr__ = short_repr

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    train_sd: np.ndarray
    test_sd: np.ndarray
    params: np.ndarray | None
    lam: float | tuple
    model: str
    test_idg: np.ndarray | None = None
    N_test: int | None = None
    test_odg: np.ndarray | None = None


def decay_system(data, pb, lam, model):
    """The eigensystem a flow runs in, the common decay to add to its ``g``, and ``lam`` as reported.

    A number, or a pair of equal entries: the eigensystem of ``H`` and ``λ``. A pair ``(λ_Γ, λ_v)`` with
    ``λ_Γ != λ_v``: the eigensystem of ``A = H + Λ`` itself (module docstring) and 0.

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
    pb : linattn.Problem
    lam : float or (float, float)
    model : {"reduced", "full"}

    Returns
    -------
    (spectra.Eigensystem, float, float or tuple)
    """
    lg, lv = check.block_lambdas(lam, model)
    if lg == lv:
        return _as_eigensystem(data, pb, model), lg, lg
    return _as_eigensystem(data, pb, model, pair=(lg, lv)), 0.0, (lg, lv)


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
    inner products the errors need: ``|n_0|``, ``u·n_0``, ``Vᵀ C n_0``, ``|C^{1/2} n_0|`` (norms, not their
    squares, so that ``(d_⊥ |n_0|)²`` is exact when ``|n_0|²`` alone would overflow)."""

    __repr__ = short_repr

    vector: np.ndarray
    norm: float
    overlap: float
    CV: np.ndarray
    Cnorm: float

    @classmethod
    def of(cls, es: Eigensystem, theta0):
        if theta0 is None or es.null_dim == 0:
            return cls(np.zeros(es.M), 0.0, 0.0, np.zeros(es.k), 0.0)
        n0 = theta0 - es._lift(es._project(theta0))
        Cn0 = es._apply_metric(n0)
        if es.law is not None:          # structured tasks: C = Σ̃ ⊗ I is not diagonal
            scale = float(np.max(np.abs(n0), initial=0.0)) or 1.0
            cnorm = scale * float(np.sqrt(max(float((n0 / scale) @ es._apply_metric(n0 / scale)), 0.0)))
            return cls(n0, _norm(n0), es._teacher_overlap(n0), es._project(Cn0), cnorm)
        D = es.problem.D
        return cls(n0, _norm(n0), float(np.trace(n0[: D * D].reshape(D, D))) / (D / es.problem.teacher_strength),
                   es._project(Cn0), _norm(np.sqrt(es._apply_metric(np.ones(es.M))) * n0))   # C is diagonal


def _norm(x) -> float:
    """``|x|`` scaled by its largest entry (no overflow of ``x·x``)."""
    top = float(np.max(np.abs(x), initial=0.0))
    return top * float(np.sqrt(np.sum((x / top) ** 2))) if top > 0 else 0.0


def _mean_errors(es: Eigensystem, lam, d, dn, c0, null: _NullPart, culprits):
    """Mean coefficients ``a(t)`` and the errors of the mean trajectory (deterministic part).

    ``a = b* + d (c_0 − b*)``; ``E_t = E_t(θ*) + ½[Σ_k (g_k+λ) (a_k − b*_k)² + λ d_⊥² |n_0|²]``;
    ``E_g`` from the moments ``overlap = a·u + d_⊥ u·n_0`` and
    ``norm = aᵀWa + 2 d_⊥ a·VᵀCn_0 + d_⊥² n_0ᵀCn_0``.
    """
    gl = es.g + lam
    bstar = es._ridge_coefficients(lam)
    dev = d * (c0 - bstar)
    a = bstar + dev
    train = es._train_at_ridge(lam) + 0.5 * (np.sum(gl * dev**2, axis=1) + lam * (dn * null.norm) ** 2)
    overlap = a @ es.u + dn * null.overlap
    norm = np.einsum("tk,kl,tl->t", a, es.W, a) + 2 * dn * (a @ null.CV) + (dn * null.Cnorm) ** 2
    check.finite_result([train, overlap, norm], culprits, "the error along the flow")
    return a, train, es.problem.test_error_from_moments(overlap, norm)


def _init_spread(es: Eigensystem, lam, d, dn, a, sigma0):
    """Extra mean and the s.d. of ``E_t``, ``E_g`` over ``θ_0 ~ N(0, σ_0² I)`` (module docstring).

    In the amplitudes ``x = σ_0 d`` (``x_⊥ = σ_0 d_⊥``), scaled per time by ``s = max(|x|, |x_⊥|)``: with
    ``x̃ = x/s``, ``Var = s⁴ Q_4 + s² Q_2`` and ``sd = s · hypot(s √Q_4, √Q_2)``, so that nothing overflows
    unless the result does. Returns ``(train_extra, test_extra, train_sd, test_sd)``.
    """
    null = es.null_dim
    gl = es.g + lam
    x, xn = sigma0 * d, sigma0 * dn
    scale = np.max(np.abs(x), axis=1, initial=0.0)
    if null:
        scale = np.maximum(scale, np.abs(xn))
    scale = np.where(scale > 0, scale, 1.0)
    d2 = (x / scale[:, None]) ** 2
    dn2 = (xn / scale) ** 2 if null else np.zeros_like(xn)     # no null space: nothing outside the modes
    s2 = scale**2
    W, Wd = es.W, np.diag(es.W)
    # test: Q = ½ Lᵀ C L,  l = Lᵀ(C m − u)
    test_extra = 0.5 * s2 * (d2 @ Wd + dn2 * (es.trC - Wd.sum()))
    WW = W @ W
    tr_CB2 = (np.einsum("tk,kl,tl->t", d2, W**2, d2)
              + 2 * dn2 * (d2 @ (np.diag(es.W2) - np.diag(WW)))
              + dn2**2 * (es.trC2 - 2 * np.trace(es.W2) + np.trace(WW)))
    r = a @ W - es.u                                              # Vᵀ(C m − u)  (n_t, k)
    Cm_u_norm2 = np.einsum("tk,kl,tl->t", a, es.W2, a) - 2 * es._metric_overlap(a) + es.u_norm2
    perp2 = Cm_u_norm2 - np.sum(r**2, axis=1)
    test_q2 = np.sum(d2 * r**2, axis=1) + dn2 * perp2
    # train: Q = ½ Lᵀ A L,  l = Lᵀ(A m − b); A's eigenvalues scaled by their largest (λ = 1e300 stays finite)
    train_extra = 0.5 * s2 * (d2 @ gl + dn2 * lam * null)
    g_top = max(float(gl[-1]) if gl.size else 0.0, lam, 1e-300)
    tr_AB2 = d2**2 @ (gl / g_top) ** 2 + dn2**2 * (lam / g_top) ** 2 * null
    train_q2 = np.sum(d2 * (gl * a - es.b) ** 2, axis=1)
    # both variances are sums of squares; the maximum only removes round-off of order 1e-16
    train_sd = scale * np.hypot(scale * g_top * np.sqrt(0.5 * np.maximum(tr_AB2, 0.0)),
                                np.sqrt(np.maximum(train_q2, 0.0)))
    test_sd = scale * np.hypot(scale * np.sqrt(0.5 * np.maximum(tr_CB2, 0.0)), np.sqrt(np.maximum(test_q2, 0.0)))
    return train_extra, test_extra, train_sd, test_sd


def curves(es: Eigensystem, lam, decay, decay_null, theta0=None, sigma0=0.0, return_params=False, times=None,
           culprits=None, lam_label=None, N_test=None) -> LearningCurves:
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
    theta0 : None or ndarray (M,)
        The start ``θ_0`` (``None``: zeros or a random start).
    sigma0 : float
        The s.d. of a random start ``θ_0 ~ N(0, σ_0² I)`` (0: none); ``theta0`` and ``sigma0`` as :func:`_init`
        makes them of ``init``.
    return_params : bool
    times : ndarray, optional
        Stored in the result (default: ``0, 1, …``).
    culprits : dict, optional
        ``{argument: value}`` named when a result overflows float64 (:func:`linattn._check.finite_result`;
        default: ``init`` and ``lam``).
    lam_label : float or tuple, optional
        The weight decay reported in the result (default ``lam``; a per-block pair when ``es`` holds ``H + Λ``).
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: the training length; module docstring).

    Returns
    -------
    LearningCurves
    """
    if N_test is not None:
        es = es._at_length(N_test)       # the test prompts' metric; the modes and E_t are unchanged
        N_test = es.problem.N
    culprits = {"init": theta0 if theta0 is not None else sigma0, "lam": lam} if culprits is None else culprits
    d = np.atleast_2d(decay)
    dn = np.atleast_1d(decay_null)
    with np.errstate(over="ignore", invalid="ignore"):
        null = _NullPart.of(es, theta0)
        c0 = es._project(theta0) if theta0 is not None else np.zeros(es.k)
        a, train, test = _mean_errors(es, lam, d, dn, c0, null, culprits)
        train_sd = np.zeros_like(train)
        test_sd = np.zeros_like(test)
        if sigma0 > 0:
            tr_x, te_x, train_sd, test_sd = _init_spread(es, lam, d, dn, a, sigma0)
            train, test = train + tr_x, test + te_x
        idg = _idg_curve(es.idg, es, a, d, dn, null, sigma0)
        odg = _idg_curve(es.odg, es, a, d, dn, null, sigma0)
        check.finite_result([train, test, train_sd, test_sd] + [x for x in (idg, odg) if x is not None], culprits,
                            "the learning curve")
        params = None
        if return_params:
            params = check.finite_result(es._lift(a) + dn[:, None] * null.vector[None, :], culprits, "theta(t)")
    return LearningCurves(times=np.asarray(times) if times is not None else np.arange(len(train)),
                          train=train, test=test, train_sd=train_sd, test_sd=test_sd, params=params,
                          lam=float(lam) if lam_label is None else lam_label, model=es.model, test_idg=idg,
                          N_test=N_test, test_odg=odg)


def _idg_curve(idg, es: Eigensystem, a, d, dn, null: _NullPart, sigma0):
    """The error ``idg`` (:class:`spectra._task_metric.EigenIDG`: a pool's in-distribution error, or structured tasks'
    out-of-distribution error) of the mean trajectory ``θ = V a + d_⊥ n_0`` plus ``½σ_0² tr(C_W L Lᵀ)/σ_0²`` for a
    random start (:mod:`linattn.pools`; ``None`` when ``idg`` is)."""
    if idg is None:
        return None
    out = idg.error(a)
    if null.norm > 0:        # x = d_⊥ n_0 per time: −ℓ·x + a·VᵀC_W x + ½ xᵀC_W x
        x = dn[:, None] * null.vector[None, :]
        Cx = idg.metric.apply(x)
        out = (out - x @ idg.metric.linear + np.einsum("tk,tk->t", a, es._project(Cx))
               + 0.5 * np.einsum("tm,tm->t", x, Cx))
    if sigma0 > 0:       # ½ tr(C_W L Lᵀ) in the amplitudes σ_0 d (no σ_0² times a vanishing factor)
        out = out + 0.5 * idg.thermal_trace((sigma0 * d) ** 2, (sigma0 * dn) ** 2, es.null_dim)
    return out


@public(pb=PROBLEM, return_params=boolean())
def gradient_flow(data, pb, lam, times, gamma=1.0, init=None, model="reduced", return_params=False,
                  N_test=None) -> LearningCurves:
    """Exact gradient-flow learning curves ``E_t(t)``, ``E_g(t)`` of one dataset.

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
        Passing an eigensystem (:func:`spectra.eigensystem`) reuses its decomposition (any ``λ``,
        times, initialisations).
    pb : linattn.Problem
    lam : float or (float, float)
        Weight decay ``λ >= 0``. For ``λ = 0`` the null-space part of ``θ_0`` never decays. A pair
        ``(λ_Γ, λ_v)`` (full model, both ``> 0``): per-block decay, exact in the eigenbasis of ``H + Λ``
        (module docstring; an eigensystem passed as ``data`` must then be ``spectra.eigensystem(data, pb,
        "full", lam=(λ_Γ, λ_v))``).
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
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: the training length ``N``): ``test``,
        ``test_sd`` and ``test_idg`` are the exact errors at ``N_test`` of the model trained at ``N``
        (module docstring).

    Returns
    -------
    LearningCurves

    Examples
    --------
    >>> import linattn, dynamics
    >>> pb = linattn.Problem(6, 12, 0.1)
    >>> curves = dynamics.gradient_flow(pb.sample(100, rng=0), pb, 0.01, [0.0, 10.0, 1e4])
    >>> bool(curves.train[0] > curves.train[1] > curves.train[2])
    True
    """
    es, lam_c, label = decay_system(data, pb, lam, model)
    per_time = 8.0 * (3 * es.k + (2 * pb.n_params(model) if return_params else 0))
    what = f"the modes{' and parameters' if return_params else ''}"
    if isinstance(times, np.ndarray):          # a huge array: refused by its size before its values are scanned
        check.memory(per_time * times.size, f"{what} at {times.size} times", "times")
    t = np.atleast_1d(check.finite_array("times", times))
    check.memory(per_time * t.size, f"{what} at {t.size} times", "times")
    if t.ndim != 1 or np.any(t < 0):
        check.fail("times", f"<array with shape {t.shape}{f', minimum {t.min()!r}' if t.size else ''}>",
                   "a 1-d array of times >= 0")
    theta0, sigma0 = _init(es, init)
    return _gradient_flow(es, lam_c, label, t, gamma, theta0, sigma0, return_params, N_test, lam)


def _gradient_flow(es, lam_c, label, t, gamma, theta0, sigma0, return_params, N_test, lam):
    """:func:`gradient_flow` in the eigensystem ``es`` of :func:`decay_system` (common decay ``lam_c``, reported as
    ``label``; ``lam`` as given, named when a result overflows), at checked times ``t`` (1-d, ``>= 0``) from the start
    ``theta0``, ``sigma0`` of :func:`_init`."""
    with np.errstate(over="ignore"):     # γ a t beyond float64: the decay is exactly 0
        decay = np.exp(-(gamma * np.outer(t, es.g + lam_c)))
        decay_null = np.exp(-(gamma * lam_c * t))
    culprits = {"init": theta0 if theta0 is not None else sigma0, "lam": lam, "times": t}
    return curves(es, lam_c, decay, decay_null, theta0, sigma0, return_params, times=t, culprits=culprits,
                  lam_label=label, N_test=N_test)


@public(pb=PROBLEM, steps=STEPS, return_params=boolean())
def gradient_descent(data, pb, lam, steps, lr, init=None, model="reduced", return_params=False,
                     N_test=None) -> LearningCurves:
    """Exact gradient-descent learning curves ``θ_n = θ* + (I − ηA)^n(θ_0 − θ*)``.

    Parameters
    ----------
    data, pb, lam, init, model, return_params, N_test
        As in :func:`gradient_flow` (a per-block pair runs in the eigenbasis of ``H + Λ``).
    steps : array_like of int
        Step counts ``n >= 0``.
    lr : float
        Step ``η``, with ``0 < η < 2/λ_max(A)`` (stability).

    Returns
    -------
    LearningCurves
        ``times`` holds the step counts.
    """
    es, lam_c, label = decay_system(data, pb, lam, model)
    lmax = es.lambda_max + lam_c
    if lr >= 2.0 / lmax:
        check.fail("lr", lr, f"< 2/lambda_max(A) = {2.0 / lmax:.6g} for stability")
    n = steps
    check.memory(8.0 * n.size * (3 * es.k + (2 * pb.n_params(model) if return_params else 0)),
                 f"the modes{' and parameters' if return_params else ''} at {n.size} steps", "steps")
    decay = (1.0 - lr * (es.g + lam_c))[None, :] ** n[:, None]
    decay_null = (1.0 - lr * lam_c) ** n.astype(float)
    theta0, sigma0 = _init(es, init)
    return curves(es, lam_c, decay, decay_null, theta0, sigma0, return_params, times=n, lam_label=label,
                  N_test=N_test)


@dataclass(frozen=True, eq=False)
class LongTimeLimit:
    """``θ(∞)`` of gradient flow from ``θ_0`` (ridge solution for ``λ > 0``; min-norm solution
    plus the null-space part of ``θ_0`` for ``λ = 0``) and its errors.

    ``test_idg``: the in-distribution error when the data carry a task pool (else ``None``); ``test_odg``: with
    structured tasks, the error on fresh tasks from the isotropic law of the same power (else ``None``). ``N_test``:
    the context length of the test prompts of ``test``, ``test_idg`` and ``gap`` (``None``: the training length).
    ``gap = (E_g − E_t)/E_t`` (:func:`linattn.relative_gap`: ``inf`` when the training error is
    exactly zero, i.e. at ``λ = 0`` with ``P < M``); ``contrast = tr Γ / (‖Γ‖_F √D)``.

    Attributes
    ----------
    theta : ndarray
        ``θ(∞)``, packed (:func:`linattn.pack`).
    train, test : float
        ``E_t`` (weight decay included) and ``E_g`` at ``θ(∞)``.
    gap : float
        ``ΔEr = (E_g − E_t)/E_t`` (:func:`linattn.relative_gap`).
    contrast : float
        The contrast ratio of ``Γ`` (:func:`linattn.contrast_ratio`).
    test_idg : float or None
        In-distribution error with a task pool, else ``None``.
    N_test : int or None
        Context length of the test prompts (``None``: the training length).
    test_odg : float or None
        Structured tasks: the error on fresh tasks from the isotropic law of the same power, else ``None``.
    """

    __repr__ = short_repr

    theta: np.ndarray
    train: float
    test: float
    gap: float
    contrast: float
    test_idg: float | None = None
    N_test: int | None = None
    test_odg: float | None = None


@public(pb=PROBLEM)
def long_time_limit(data, pb, lam, model="reduced", init=None, N_test=None) -> LongTimeLimit:
    """The long-time limit of gradient flow (ΔEr and the contrast ratio of seed Figs. 5–6).

    Parameters
    ----------
    data : linattn.Prompts or spectra.Eigensystem
    pb : linattn.Problem
    lam : float or (float, float)
        Weight decay ``λ >= 0``, or the per-block pair ``(λ_Γ, λ_v)`` (full model, both ``> 0``): then
        ``θ(∞) = (H + Λ)⁻¹ b`` for every ``θ_0`` (module docstring).
    model : {"reduced", "full"}
    init : None or array_like (M,)
        ``θ_0`` (zeros by default; a random initialisation has no single limit).
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: ``N``): ``test``, ``test_idg`` and ``gap``
        at ``N_test`` (module docstring).

    Returns
    -------
    LongTimeLimit
    """
    es, lam_c, label = decay_system(data, pb, lam, model)
    if init is not None and check.asarray("init", init, "None or an array θ0").ndim == 0:
        check.fail("init", init, "None or an array θ0 (a random initialisation has no single limit)")
    return _long_time_limit(es, lam_c, label, _init(es, init)[0], N_test)


def _long_time_limit(es, lam_c, label, theta0, N_test):
    """:func:`long_time_limit` in the eigensystem ``es`` of :func:`decay_system` from a checked ``theta0`` (or
    ``None``), with its refusal of data whose limit has ``Γ = 0``."""
    decay = np.zeros((1, es.k))
    decay_null = np.array([1.0 if lam_c == 0 else 0.0])
    cv = curves(es, lam_c, decay, decay_null, theta0, 0.0, return_params=True, lam_label=label, N_test=N_test)
    theta = cv.params[0]
    Gamma, _ = linattn.unpack(theta, es.problem.D, es.model)
    if not np.any(Gamma):
        check.fail("data", "<prompts>", "prompts whose long-time limit has Γ ≠ 0 (here Γ = 0 — e.g. all labels are 0 —"
                                        " and the contrast ratio tr Γ/(‖Γ‖_F √D) is undefined)")
    train, test = float(cv.train[0]), float(cv.test[0])
    return LongTimeLimit(theta=theta, train=train, test=test, gap=linattn.relative_gap(train, test),
                         contrast=float(linattn.contrast_ratio(Gamma)),
                         test_idg=None if cv.test_idg is None else float(cv.test_idg[0]), N_test=N_test,
                         test_odg=None if cv.test_odg is None else float(cv.test_odg[0]))
