r"""Replica-symmetric theory of the dataset-averaged stationary errors (derivation: ``docs/replica.md``).

Order parameters (``H/c`` units, ``θ̃ = √c θ``, blocks ``i``: ``Γ`` and, for the full model, ``v``):
the overlap ``ρ = θ̃·θ̂_0`` with the ICL direction ``θ̂_0 = vec(I)/√D``, the block norms
``σ_i²`` of the mean solution orthogonal to it, and the block susceptibilities
``Δ_i = D_i r_i/β`` (``r_i`` the normalised block trace of ``(H/c + λ')^{-1}``). The replica-
symmetric free energy (``docs/replica.md`` §2, :func:`rs_functional`) is extremal at

.. math::
   r_i = \frac{1}{λ' + E[ξ_i ω]},\quad ω = \frac{1}{1 + Σ_j q_j ξ_j r_j},\quad
   ρ = \frac{E[f y ω]}{λ' + E[f² ω]},\quad
   \frac{σ_i²}{r_i²} = q_i E\big[ξ_i\big((y − fρ)² + Σ_j ξ_j σ_j²\big) ω²\big],

with expectations over the exact finite-D law of one prompt (:func:`spectra.prompt_law`), which
carries the correlation between a prompt's scale ``ξ`` and its label moments. The errors are

.. math::
   ⟨E_t⟩ = ½ E[y (y − fρ) ω] + \frac{M}{2β},\qquad
   ⟨E_g⟩ = ½\big[1 + σ² − 2tρ + ρ² + Σ_i κ_i σ_i²\big] + \frac{1}{2β} Σ_i κ_i D_i r_i,

``t = 1/√(D c)``, ``κ = (1, c_v/c)``, and the free energy is
``F = E_t^* − (M/2β) log(2π/β) + (M/2β)[log c + V]`` with the Shannon transform
``V = Σ_i (D_i/M)(−log r_i + λ' r_i − 1) + (P/M) E log(1 + Σ_j q_j ξ_j r_j)``.

Special cases (tested): ``law="mp"`` (or ``channel="decoupled"``) reproduces the random-matrix
formulas of conventions §3.2. ``β = ∞`` drops the thermal terms; ``λ = 0`` with ``P < M`` is the
min-norm limit, solved in the scaled variables of :class:`spectra.RidgeResolvent`.

References: the seed paper (conventions §4) (data-dependent free energy, Sec. IV); replica method for ridge
regression with structured data: Loureiro et al., NeurIPS 2021; elliptical data: El Karoui (2018).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _check as check
from linattn._arguments import choice, public, real
from linattn._results import ToXarray, short_repr
from linattn._transition import _relative_gap
from linattn._validate import PROBLEM
from spectra._prompt_law import CHANNELS, LAWS, fresh_law
from spectra._resolvent import _block_overlaps, _ridge_resolvent, _teacher_overlap

#: the rules of the arguments every stationary theory takes (``beta`` and ``model`` by the table of
#: :mod:`linattn._arguments`; ``lam`` and ``law`` are checked against them by :func:`checked_arguments`)
THEORY = dict(pb=PROBLEM, P=real(low=1.0), channel=choice(CHANNELS))


@dataclass(frozen=True)
class OrderParameters:
    """Saddle point: ``rho``, ``sigma2`` (per block), ``r`` (per block, ``inf`` in the min-norm
    limit), and the scaled resolvent variables ``a``, ``eps``, ``L`` (see :class:`spectra.RidgeResolvent`).

    Attributes
    ----------
    rho : float
        Overlap with the ICL direction.
    sigma2 : ndarray
        Per-block squared norms of the mean solution orthogonal to it.
    r : ndarray
        Per-block normalised resolvent traces (``inf`` in the min-norm limit).
    a : ndarray
        Scaled resolvent variables per block.
    eps, L : float
        Scaled resolvent variables (:class:`spectra.RidgeResolvent`).
    """

    __repr__ = short_repr

    rho: float
    sigma2: np.ndarray
    r: np.ndarray
    a: np.ndarray
    eps: float
    L: float


@dataclass(frozen=True, eq=False)
class StationaryTheory(ToXarray, xarray_coords=("P", "beta", "lam"), xarray_skip=("order",)):
    """Dataset-averaged stationary errors of the Gibbs measure (replica-symmetric theory).

    Attributes
    ----------
    train, test : float
        ``⟨E_t⟩``, ``⟨E_g⟩`` (weight decay included in ``E_t``).
    train_ridge, test_ridge : float
        Zero-temperature parts ``E_t(θ*)``, ``E_g(θ*)``.
    free_energy : float or None
        ``F`` (equal to ``train_ridge`` at ``β = ∞``); ``None`` for a task pool at finite ``β`` (not computed).
    gap : float
        ``(⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩`` (``inf`` if ``⟨E_t⟩ = 0``: min-norm interpolation).
    order : OrderParameters or None
        ``None`` for a task pool (the pool theory has no replica order parameters).
    converged : bool
    iterations : int
        Iterations of the saddle-point solver; with a task pool, the most iterations any solve behind the result
        took (:attr:`replica.PoolErrors.iterations`).
    residual : float
        Largest relative residual of the saddle-point equations.
    test_idg : float or None
        With a task pool (``pb.tasks = K``): the in-distribution error ``⟨E_IDG⟩`` (``replica/_pool_theory.py``);
        ``test`` is then the fresh-task (ICL) error. ``None`` for fresh tasks.
    N_test : int or None
        The context length of the test errors (``None``: the training length ``problem.N``).
    train_se, test_se : float
        Standard errors of ``train`` and ``test`` from sampling inside the theory: with a task pool, the average over
        random pools (``replica/_pool_theory.py``); 0 where nothing is sampled (fresh tasks, a given pool or
        ``pool="mp"`` with ``law="mp"``); ``nan`` where the sampling's error is not computable — one random pool
        (``n_pools=1``), or ``law="finite"`` with one pool, drawn or given (one draw of its prompt types), or one
        scrambling of the structured theory's task types (``n_pools=1``): no spread to estimate it from.
    test_idg_se : float or None
        The same for ``test_idg`` (``None`` for fresh tasks).
    test_odg, test_odg_se : float or None
        Structured tasks (``problem.task_covariance = S``; :mod:`replica.structured`): the error on fresh tasks from
        the isotropic law of the same power ``(tr S/D) I`` (out of distribution; ``test`` is then on fresh tasks
        from ``N(0, S)``) and its standard error. ``None`` for isotropic tasks.
    """

    __repr__ = short_repr

    problem: linattn.Problem
    P: float
    beta: float
    lam: float | tuple
    model: str
    law: str
    train: float
    test: float
    train_ridge: float
    test_ridge: float
    free_energy: float
    gap: float
    order: OrderParameters
    converged: bool
    iterations: int
    residual: float
    test_idg: float | None = None
    N_test: int | None = None
    train_se: float = 0.0
    test_se: float = 0.0
    test_idg_se: float | None = None
    test_odg: float | None = None
    test_odg_se: float | None = None


def checked_arguments(pb, P, beta, lam, model, law, channel):
    """``(λ, prompt law)`` of the stationary theories: ``λ`` and ``law`` checked against the problem, ``P``, ``β`` and
    the model (checked before: :data:`THEORY`); ``λ`` is a number, or the pair ``(λ_Γ, λ_v)`` when the two differ, and
    the prompt law is ``None`` with a pool."""
    lam, lw, M = checked_decay(pb, lam, model, law, channel)
    refuse_min_norm(P, beta, lam, M)
    return lam, lw


def checked_decay(pb, lam, model, law, channel):
    """``(λ, prompt law, M)``: the part of :func:`checked_arguments` that does not depend on ``P`` and ``β`` (a curve
    in ``P`` checks it once, and :func:`refuse_min_norm` at each ``P``)."""
    lam_gamma, lam_v = check.block_lambdas(lam, model)
    lam = lam_gamma if lam_gamma == lam_v else (lam_gamma, lam_v)
    if pb.tasks is not None:
        check.choice("law", law, ("finite", "mp", "factor"))
        lw, M = None, pb.n_params(model)
    else:
        lw = fresh_law(pb, model, check.choice("law", law, LAWS), channel)
        M = lw.M
    return lam, lw, M


def refuse_min_norm(P, beta, lam, M):
    """Refuse ``λ = 0`` at finite ``β`` below ``P = M`` (``lam`` as :func:`checked_decay` returns it)."""
    lam_gamma = lam[0] if isinstance(lam, tuple) else lam
    if lam_gamma == 0 and P < M and np.isfinite(beta):
        raise ValueError(f"lam must be > 0 at finite beta when P < M = {M} (the Gibbs measure is not "
                         f"normalisable in the null space of H); got lam = 0 with P = {P}")


def fresh_stationary(pb, P, beta, lam, model="reduced", law="finite", channel="correlated",
                     N_test=None, lw=None) -> StationaryTheory:
    """Replica-symmetric stationary errors with a fresh task per prompt (module docstring), of checked arguments;
    the public entry point is :func:`replica.stationary`, which also dispatches task pools.

    Parameters
    ----------
    pb : linattn.Problem
        With ``tasks=None``.
    P, beta, model, law, channel, N_test
        As in :func:`replica.stationary`, checked.
    lam : float or (float, float)
        As :func:`checked_arguments` returns it.
    lw : spectra.PromptLaw, optional
        The prompt law (default: the law of ``pb``, ``model``, ``law`` and ``channel``).

    Returns
    -------
    StationaryTheory

    Raises
    ------
    ValueError
        A weight decay or temperature beyond float64's range (see :func:`replica.stationary`).
    linattn.ConvergenceError
        If the saddle-point equations do not converge.
    """
    lw = fresh_law(pb, model, law, channel) if lw is None else lw
    lam_given, log_jacobian = lam, 0.0
    if isinstance(lam, tuple):          # per-block decay: exact rescaling of the v block (PromptLaw.with_block_decay)
        lw = lw._with_block_decay(*lam)
        log_jacobian = 0.5 * pb.D * np.log(lam[0] / lam[1])        # dθ = (λ_Γ/λ_v)^{D/2} dθ'
        lam = lam[0]
    c = pb.feature_variance
    lp = float(lam) / float(c)          # Python floats: an overflow is inf (no warning), refused by name
    if not math.isfinite(lp):
        check.finite_result(lp, {"lam": lam}, "λ/c (the weight decay in H/c units)")
    rr = _ridge_resolvent(P, lp, lw)
    om = rr.omega_t
    rho = float(_teacher_overlap(rr.L, om, lw))
    overlap_args = (rr.a[None], rr.a[None], om[None], om[None], np.array([rho]), np.array([rho]), lw, P)
    S = _block_overlaps(*overlap_args, guard=False)[0, 0]      # guarded below, through the norm it enters
    sigma2 = np.real(S)
    w = lw.weights
    ratio = pb._test_metric_ratio(N_test)[:lw.n_blocks]
    kappa = lw.metric * ratio               # the test metric at the evaluation length N_test (θ̃ = √c θ units)
    et = 0.5 * rr.eps * float(w @ ((lw.y2 - rho * lw.fy) * om))
    norm = ratio[0] * rho**2 + float(kappa @ sigma2)
    if not math.isfinite(norm):         # the overlaps' guard names the culprit of a non-finite S
        _block_overlaps(*overlap_args)
    eg = _test_error(pb, np.sqrt(pb.teacher_norm2) * rho, norm)
    r = rr.r
    dims = np.asarray(lw.block_dims, float)
    # residual of the σ equations (the r and ρ equations are solved to rr.residual / exactly)
    Y = lw.y2 - 2 * rho * lw.fy + rho**2 * lw.f2
    rhs = ((w * om**2) * (Y + lw.xi @ sigma2)) @ lw.xi
    with np.errstate(over="ignore", invalid="ignore"):
        lhs = lw._ratios(P) * rr.a**2 * sigma2
    if not np.all(np.isfinite(lhs)):        # a² overflows at a huge weight decay (a ~ λ'/q, σ² ~ 1/a²)
        lhs = np.where(np.isfinite(lhs), lhs, lw._ratios(P) * rr.a * (rr.a * sigma2))
    res_sigma = float(np.max(np.abs(lhs - rhs) / np.maximum(np.abs(lhs), 1e-300)))
    if np.isinf(beta):
        train, test, F = et, eg, et
    else:
        M = lw.M
        train = et + M / (2 * beta)
        test = eg + float(kappa @ (dims * r)) / (2 * beta)
        V = float(dims @ (-np.log(r) + lp * r - 1.0)) / M + (P / M) * float(w @ -np.log(rr.eps * om))
        with np.errstate(over="ignore", invalid="ignore"):   # beyond float64: refused below, by name
            F = (et - M / (2 * beta) * np.log(2 * np.pi / beta) + M / (2 * beta) * (np.log(c) + V)
                 - log_jacobian / beta)
        if not (math.isfinite(train) and math.isfinite(test) and math.isfinite(F)):   # thermal terms ∝ 1/β
            check.fail("beta", beta, "a value at which the thermal terms (∝ 1/beta) of the errors and of the free "
                                     "energy are finite in float64")
    gap = _gap(train, test)
    order = OrderParameters(rho=rho, sigma2=sigma2, r=r, a=rr.a, eps=rr.eps, L=rr.L)
    return StationaryTheory(problem=pb, P=P, beta=beta, lam=lam_given, model=model, law=law, train=float(train),
                            test=float(test), train_ridge=float(et), test_ridge=float(eg), free_energy=float(F),
                            gap=float(gap), order=order, converged=True, iterations=rr.iterations,
                            residual=max(rr.residual, res_sigma), N_test=N_test)


def _test_error(pb, overlap, norm):
    """:meth:`linattn.Problem.test_error_from_moments` of two numbers the theory computed, as a float: the formula
    in floats when both are finite, ``norm >= 0`` and the error finite; else the public method, whose message names
    the argument."""
    overlap, norm = float(overlap), float(norm)
    if math.isfinite(overlap) and math.isfinite(norm) and norm >= 0:
        out = pb._error_from_floats(overlap, norm)
        if math.isfinite(out):
            return out
    return float(pb.test_error_from_moments(overlap, norm))


def _gap(train, test):
    """:func:`linattn.relative_gap` of two numbers the theory computed: checked by the public function only when one
    is not finite (its message names the argument), else straight to the formula (which refuses negative errors)."""
    if not (math.isfinite(train) and math.isfinite(test)):
        return linattn.relative_gap(train, test)
    return _relative_gap(np.float64(train), np.float64(test))


@public(rho=real(low=-1e150, high=1e150), **THEORY)        # ρ² and the energies stay finite
def rs_functional(pb, P, beta, lam, rho, norm2, Delta, model="reduced", law="finite", channel="correlated") -> float:
    r"""The replica-symmetric functional ``Φ(ρ, Q_i, Δ_i)`` whose extremum gives ``−βF``
    (``docs/replica.md`` §2), in ``θ̃ = √c θ`` units with total (not per-coordinate) overlaps:

    .. math::
       Φ = Σ_i \frac{D_i}{2}\Big[\log Δ_i + \frac{Q_i − ρ² δ_{i1}}{Δ_i}\Big] − \frac{βλ'}{2} Σ_i (Q_i + Δ_i)
           + P\, E\Big[−½ \log(1 + \tfrac{β}{P} Σ_i ξ_i Δ_i)
           − \frac{β}{2P}\,\frac{(y − fρ)² + Σ_i ξ_i (Q_i − ρ² δ_{i1})}{1 + \tfrac{β}{P} Σ_i ξ_i Δ_i}\Big],

    and ``−βF = Φ + Σ_i (D_i/2)(\log 2π + 1 − \log D_i) − (M/2) \log c`` at the extremum.
    ``Q_i`` is the squared norm of block ``i`` of the mean solution (``Q_1 = ρ² + σ_1²``) and
    ``Δ_i`` its thermal spread. Finite ``β`` only.

    Parameters
    ----------
    pb, P, lam, model, law, channel
        As in :func:`stationary`.
    beta : float
        Finite ``β > 0``.
    rho : float
        Overlap with the ICL direction, ``|ρ| <= 1e150``.
    norm2 : array_like (B,)
        Block norms ``Q_i >= 0`` (``Q_1 >= ρ²``).
    Delta : array_like (B,)
        Thermal spreads ``Δ_i > 0``.

    Returns
    -------
    float
    """
    if pb.tasks is not None:
        check.fail("pb", pb, "a Problem with tasks=None (the functional is written for fresh tasks; a task pool has "
                             "no replica functional here)")
    lam, lw = checked_arguments(pb, P, beta, lam, model, law, channel)
    if isinstance(lam, tuple):
        check.fail("lam", lam, "one number >= 0 (the functional is written for a common weight decay)")
    if not np.isfinite(beta):
        check.fail("beta", beta, "a finite number > 0 (the functional is defined at finite temperature)")
    norm2 = check.finite_array("norm2", norm2, shape=(lw.n_blocks,), min_ndim=1)
    Delta = check.finite_array("Delta", Delta, shape=(lw.n_blocks,), min_ndim=1)
    if np.any(Delta <= 0):
        check.fail("Delta", Delta.tolist(), "thermal spreads > 0, one per block")
    if np.any(norm2 < 0) or norm2[0] < rho**2:
        check.fail("norm2", norm2.tolist(), "block norms >= 0 with norm2[0] >= rho**2")
    q = norm2
    dims = np.asarray(lw.block_dims, float)
    lp = lam / pb.feature_variance
    shift = np.zeros(lw.n_blocks)
    shift[0] = rho**2
    ent = float(dims @ (0.5 * (np.log(Delta) + (q - shift) / Delta))) - 0.5 * beta * lp * float(np.sum(q + Delta))
    Beff = (beta / P) * (lw.xi @ Delta)
    Y = lw.y2 - 2 * rho * lw.fy + rho**2 * lw.f2
    energ = P * float(lw.weights @ (-0.5 * np.log1p(Beff) - 0.5 * (beta / P) * (Y + lw.xi @ (q - shift)) / (1 + Beff)))
    return float(check.finite_result(ent + energ, {"rho": rho, "norm2": norm2, "Delta": Delta, "lam": lam,
                                                        "beta": beta}, "the functional"))


@public(pb=PROBLEM)
def rs_constant(pb, model="reduced") -> float:
    """``Σ_i (D_i/2)(log 2π + 1 − log D_i) − (M/2) log c``: ``−βF = Φ_extremum + rs_constant``.

    Parameters
    ----------
    pb : linattn.Problem
    model : {"reduced", "full"}

    Returns
    -------
    float
    """
    dims = np.array([pb.D**2] + ([pb.D] if model == "full" else []), float)
    return (float(np.sum(0.5 * dims * (np.log(2 * np.pi) + 1 - np.log(dims))))
            - 0.5 * dims.sum() * np.log(pb.feature_variance))
