r"""Training diagnostics validated on the exact model: rank dynamics of staged learning.

For ``Γ = P Q`` (``"value_kq_modes"``) on an anisotropic spectrum the exact population flow from a small
balanced aligned start is the logistic law of :mod:`dynamics.staged`, ``Γ(t) = U diag(a(t)) Uᵀ``, so the
singular values of ``Γ(t)`` are the mode amplitudes ``a_α(t)`` and every spectral diagnostic of
:mod:`dynamics.diagnostics` has a closed-form prediction:

* the effective rank steps up once per mode; the step of mode ``α`` lies in its rise window
  ``[t_½ − τ_α, t_½ + τ_α]`` (``a_α`` from 12 % to 88 % of ``a^∞_α``; ``τ_α = 1/(γ b_α)``);
* the subspace distance to ``Γ_* = U diag(a^∞) Uᵀ`` with cutoff ``rtol`` falls when mode ``α`` enters the
  numerical row space, at the time ``t^r_α`` where ``a_α(t) = rtol · max_β a_β(t)``; it falls *before* the
  loss drops when ``rtol · max_β a^∞_β < a^∞_α / 2``, and at each fall it takes the exact value
  ``(Σ_{β ∉ row space} (a^∞_β)²)^{1/2} / ‖a^∞‖``.

:func:`rank_dynamics` computes the diagnostics of the closed form, of the exact ODE from the aligned start
and from a small random start, and of online SGD, on the same time grid (the figure ``rank_dynamics``,
the report and the tests share it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import dynamics
import linattn
from linattn import check
from linattn.factorized import Parametrization

from .factorized import factorized_descent
from .staged import _n_steps, _noise_free_problem, crossing_times


@dataclass(frozen=True)
class RankDynamics:
    """Spectral diagnostics of staged learning: closed form, exact ODEs and online SGD.

    Attributes
    ----------
    problem : linattn.Problem
    a0, rtol : float
        Start amplitude and cutoff of the subspace distance.
    times : ndarray (T,)
        Positive record times (SGD step × η).
    test_closed : ndarray (T,)
        Exact test error along the logistic law.
    closed, flow, random : dynamics.TrajectoryDiagnostics
        Closed form; exact ODE from the balanced aligned start; exact ODE from a small random start.
    sgd : list of dynamics.TrajectoryDiagnostics
        Online SGD from the aligned start, one per chain.
    test_sgd : ndarray (n_chains, T)
    t_half, tau : ndarray (D,)
        Half-rise times and time constants of the modes (in decreasing ``s_α``).
    t_enter : ndarray (D,)
        Closed-form time at which mode ``α`` enters the numerical row space (``a_α = rtol · max a``;
        ``nan`` for a mode that is inside from the start).
    distance_levels : ndarray (D + 1,)
        Exact subspace distance with the top ``m`` learned modes in the row space, ``m = 0 … D``.
    """

    problem: linattn.Problem
    a0: float
    rtol: float
    times: np.ndarray
    test_closed: np.ndarray
    closed: dynamics.TrajectoryDiagnostics
    flow: dynamics.TrajectoryDiagnostics
    random: dynamics.TrajectoryDiagnostics
    sgd: list
    test_sgd: np.ndarray
    t_half: np.ndarray
    tau: np.ndarray
    t_enter: np.ndarray
    distance_levels: np.ndarray


def _enter_times(times, closed_modes, rtol):
    """First time each mode reaches ``rtol · max_β a_β(t)`` after having been below it (closed form)."""
    ratio = closed_modes / closed_modes.max(axis=1, keepdims=True)
    out = np.full(closed_modes.shape[1], np.nan)
    for a in range(closed_modes.shape[1]):
        below = np.flatnonzero(ratio[:, a] <= rtol)
        if below.size:
            k = below[-1]
            out[a] = crossing_times(times[k:], ratio[k:, a], rtol)
    return out


def rank_dynamics(spectrum, N, a0=1e-3, rtol=0.01, span=3.0, step=0.05, batch=128, n_chains=3, record=20,
                  n_grid=400, seed=0) -> RankDynamics:
    """Run :class:`RankDynamics` for input eigenvalues ``spectrum`` (noise-free, identity basis).

    Parameters
    ----------
    spectrum : array_like (D,)
        Decreasing eigenvalues, ``D >= 2``.
    N : int
    a0 : float
        Start amplitude (``p_α = q_α = √a0``; the random start has ``‖Γ(0)‖_F ≈ a0 √D``).
    rtol : float
        Cutoff of the subspace distance, in ``(0, 1)``.
    span : float
        The run lasts ``span × t_½`` of the slowest mode (``> 1``).
    step : float
        SGD step ``η``.
    batch, n_chains, record : int
        SGD batch, chains, record interval (steps).
    n_grid : int
        Log-spaced times of the exact trajectories (``>= 16``); SGD records are interpolated on it.
    seed : int

    Returns
    -------
    RankDynamics
    """
    pb = _noise_free_problem(spectrum, N)
    if pb.D < 2 or np.any(np.diff(pb.covariance.spectrum) > 0):
        check.fail("spectrum", spectrum, "at least two eigenvalues in decreasing order")
    a0 = check.positive("a0", a0)
    rtol = check.real("rtol", rtol, low=0.0, high=1.0, low_open=True, high_open=True)
    span = check.real("span", span, low=1.0, low_open=True)
    n_grid = check.positive_int("n_grid", n_grid, minimum=16)
    mc = dynamics.mode_constants(pb)
    t_half = dynamics.escape_times(pb, a0)
    par = Parametrization("value_kq_modes", pb.D)
    ref = np.diag(mc.a_inf)                                    # Γ_* (identity basis)
    n_steps = _n_steps(span * t_half.max(), step, record)
    sgd = factorized_descent(pb, par, par.aligned(np.full(pb.D, a0)), n_steps, step, batch=batch, record=record,
                             n_chains=n_chains, seed=seed)
    t = np.geomspace(max(t_half.min() / 20.0, record * step), n_steps * step, n_grid)   # inside the SGD records
    closed_modes = dynamics.logistic_modes(pb, a0, t)
    G_closed = closed_modes[:, :, None] * np.eye(pb.D)
    flow = dynamics.mean_flow(pb, par, par.aligned(np.full(pb.D, a0)), t)
    rng = np.random.default_rng(seed)
    th = rng.standard_normal(par.n_params)
    th *= np.sqrt(a0 * np.sqrt(pb.D)) / np.linalg.norm(th[: pb.D**2])
    random = dynamics.mean_flow(pb, par, th, t)
    t_sgd = sgd.steps[1:] * step
    G_sgd = par.gamma(sgd.theta[:, 1:])                         # (chains, T_sgd, D, D)
    G_sgd = np.stack([[np.interp(t, t_sgd, g[:, i, j]) for i in range(pb.D) for j in range(pb.D)]
                      for g in G_sgd]).transpose(0, 2, 1).reshape(n_chains, t.size, pb.D, pb.D)
    test_sgd = np.array([np.interp(t, t_sgd, te[1:]) for te in sgd.test])

    def diag(G):
        return dynamics.diagnose(G, t, reference=ref, rtol=rtol)

    w = mc.a_inf ** 2
    levels = np.sqrt(np.concatenate([[w.sum()], w.sum() - np.cumsum(w)]).clip(0.0) / w.sum())
    return RankDynamics(problem=pb, a0=a0, rtol=rtol, times=t, test_closed=dynamics.mode_loss(pb, closed_modes),
                        closed=diag(G_closed), flow=diag(par.gamma(flow.theta)), random=diag(par.gamma(random.theta)),
                        sgd=[diag(g) for g in G_sgd], test_sgd=test_sgd, t_half=t_half, tau=mc.tau,
                        t_enter=_enter_times(t, closed_modes, rtol), distance_levels=levels)
