r"""Gradient flow of the two-parameter minimal model (Gibson, Cui & Reddy 2026, arXiv:2604.12151).

``d(β, δ)/dt = −γ ∇L(β, δ)`` on the exact loss (or the mean over one fixed Monte Carlo sample) of
:mod:`dynamics._minimal_loss`, with its escape time from the 1-point saddle and its transition time. The saddle and
the linear escape: :mod:`dynamics._minimal_theory`; ``docs/markov_minimal.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._arguments import array, optional, positive, public, real, tolerance
from linattn._results import python_scalars, short_repr

from ._minimal_loss import COMMON, evaluate, finite_evaluate, resolve_method
from ._minimal_sequences import sequence_patterns
from ._ode import check_rates, integrate


@dataclass(frozen=True)
class MarkovMinimalFlow:
    """Gradient flow ``d(β, δ)/dt = −γ ∇L`` of the minimal model (:func:`markov_minimal_flow`).

    Attributes
    ----------
    times : ndarray (T,)
    score_scale, delta : ndarray (T,)
        The trajectory.
    loss, loss_seen : ndarray (T,)
        ``L`` and ``L_seen`` along it (:mod:`dynamics._minimal_loss`).
    escape_time : float
        First time ``|δ(t) − δ_s| = radius`` (``δ_s``: the saddle of :func:`markov_minimal_theory` if
        given, else ``delta0``), located by an integrator event; ``inf`` if not reached by ``times[-1]`` or
        if the start is already at least ``radius`` from ``δ_s``.
    transition_time : float
        First time the loss falls half-way from the 1-point loss ``L(0, ·)`` to ``loss[-1]``; ``inf`` if the
        loss never falls below ``L(0, ·)`` by more than ``1e-9`` (no transition).
    loss_1point : float
        ``L(β = 0, δ)`` (uniform attention: the in-context unigram estimator; independent of ``δ``).
    delta_saddle, radius : float
        The reference ``δ_s`` and the radius of :attr:`escape_time`.
    C, N, concentration, first_state, variant, method, gamma, rtol : as given
    """

    __repr__ = short_repr

    times: np.ndarray
    score_scale: np.ndarray
    delta: np.ndarray
    loss: np.ndarray
    loss_seen: np.ndarray
    escape_time: float
    transition_time: float
    loss_1point: float
    delta_saddle: float
    radius: float
    C: int
    N: int
    concentration: float
    first_state: str
    variant: str
    method: str
    gamma: float
    rtol: float

    def __post_init__(self):
        python_scalars(self)


@public(score_scale0=real(), delta0=real(), times=array(ndim=1), rtol=tolerance(), delta_saddle=optional(real()),
        radius=positive(), **COMMON)
def markov_minimal_flow(score_scale0, delta0, C, N, concentration, times, first_state="onestep", variant="released",
                        method="auto", gamma=1.0, n_mc=200_000, rng=None, eps=1e-10, rtol=1e-9,
                        delta_saddle=None, radius=0.5):
    r"""Integrate the gradient flow ``d(β, δ)/dt = −γ ∇L(β, δ)`` of the minimal model.

    ``L`` is exact (enumeration) or, with ``method="mc"``, the mean over one fixed Monte Carlo sample of
    ``n_mc`` sequences (a deterministic sample-average loss, so the flow is an ODE). scipy ``solve_ivp``
    (LSODA with the analytic Jacobian ``−γ H``), relative tolerance ``rtol`` and absolute ``rtol·1e-3``.
    The authors' released run is gradient descent with step 5 from ``(0.01, 0.01)`` (Gibson, Cui & Reddy
    2026, arXiv:2604.12151, ``ICL_mini_2paras.py``): ``t = 5 × steps`` at ``γ = 1``.

    Parameters
    ----------
    score_scale0, delta0 : float
        Initial condition.
    C, N, concentration, first_state, variant, method, n_mc, rng, eps
        As in :func:`markov_minimal_loss`.
    times : array_like
        Increasing times ``>= 0`` at which to report the state.
    gamma : float
        Learning rate ``γ > 0``.
    rtol : float
        Relative tolerance of the integrator, in ``(0, 1)``.
    delta_saddle : float, optional
        ``δ_s`` for :attr:`MarkovMinimalFlow.escape_time` (default ``delta0``).
    radius : float
        ``r > 0`` of :attr:`MarkovMinimalFlow.escape_time`.

    Returns
    -------
    MarkovMinimalFlow

    Raises
    ------
    linattn.ConvergenceError
        If the integrator fails.
    """
    t = times
    if t.size == 0 or np.any(t < 0) or np.any(np.diff(t) <= 0):
        check.fail("times", t.tolist(), "a non-empty increasing 1-d array of times >= 0")
    check_rates(gamma)
    method = resolve_method(C, N, first_state, method, n_mc)
    d_s = delta0 if delta_saddle is None else delta_saddle
    pat = sequence_patterns(C, N, concentration, first_state, method, n_mc, rng)
    finite_evaluate(score_scale0, delta0, pat, variant, eps, ("score_scale0", "delta0"))  # a start in float64's range

    def rhs(_, th):
        return -gamma * evaluate(th[0], th[1], pat, variant, eps, order=1)["grad"]

    def jac(_, th):
        return -gamma * evaluate(th[0], th[1], pat, variant, eps)["hessian"]

    def hit(_, th):
        return abs(th[1] - d_s) - radius
    hit.terminal = False
    sol = integrate("markov_minimal_flow", rhs, (0.0, float(t[-1])), [score_scale0, delta0], method="LSODA", jac=jac,
                    t_eval=t, rtol=rtol, atol=rtol * 1e-3, events=hit)
    score_scale, delta = sol.y
    vals = [evaluate(b, d, pat, variant, eps, order=0) for b, d in zip(score_scale, delta)]
    loss = np.array([v["loss"] for v in vals])
    loss_seen = np.array([v["loss_seen"] for v in vals])
    up = [te for te in sol.t_events[0] if abs(delta0 - d_s) < radius]
    escape = float(up[0]) if up else math.inf
    l1 = evaluate(0.0, 0.0, pat, variant, eps, order=0)["loss"]
    transition = math.inf
    if loss[-1] < l1 - 1e-9:
        half = 0.5 * (l1 + loss[-1])
        below = np.nonzero(loss <= half)[0]
        k = int(below[0])
        if k == 0:
            transition = float(t[0])
        else:   # linear interpolation between the bracketing report times
            transition = float(t[k - 1] + (half - loss[k - 1]) * (t[k] - t[k - 1]) / (loss[k] - loss[k - 1]))
    return MarkovMinimalFlow(times=t, score_scale=score_scale, delta=delta, loss=loss, loss_seen=loss_seen,
                             escape_time=escape,
                             transition_time=transition, loss_1point=l1, delta_saddle=d_s, radius=radius, C=C, N=N,
                             concentration=concentration, first_state=first_state, variant=variant, method=method,
                             gamma=gamma,
                             rtol=rtol)
