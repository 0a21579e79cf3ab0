"""Bounded ODE integration with the library's own diagnosis of a failure (shared by the staged flows and the Markov
minimal model's flow).

scipy's ``solve_ivp`` reports a failed LSODA or RK integration in words that change between scipy versions
("Unexpected istate in LSODA" in scipy 1.18, a step-size message before). The library does not read them: it watches
the states the integrator evaluates and the steps it accepts, and says itself what went wrong — the state or its
derivative left float64 (the flow overflowed), the evaluation budget ran out (a flow that blows up or is too stiff),
the integrator stalled (its accepted steps neither bring the end of the span within the budget nor move the state
beyond their own errors: a right-hand side that jumps, :data:`STALL_WINDOW`), or it stopped early at a finite state
(named with the time it reached).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.integrate import solve_ivp
from scipy.integrate._ivp.ivp import METHODS

from linattn import _check as check
from linattn._errors import ConvergenceError

#: right-hand-side evaluations an integration may take before it is declared not to converge (a flow that blows up,
#: e.g. from θ₀ ~ 1e100, or a time span γ·t far beyond the dynamics, would otherwise step for ever); the flows of the
#: figures take at most 1.1e4 (measured, quick mode); 1e5 is ~16 s of mean_flow at D = 3
MAX_EVALUATIONS = 100_000
#: a state beyond this magnitude has left the range where the flows' products (|θ|², θ⁴) are finite in float64
OVERFLOW_SCALE = 1e150
#: a time span shorter than this is integrated in the rescaled time ``s = (t − t₀)/span`` ∈ [0, 1]: LSODA stalls at
#: ``t₀`` for spans below ~1e-120 (measured: ``mode_flow`` to ``t = 1e-150 … 1e-300`` used up the evaluation budget)
SHORT_SPAN = 1e-50
#: a stall is judged once per this many consecutive evaluations at new times (the calls of a finite-difference
#: Jacobian share one time and count once). Progress is read from the steps the integrator *accepted* (its committed
#: time and state), never from the times it tried: a step tried far ahead and rejected (LSODA's first step from a
#: 1e-15 start tries t = 3e4 and then climbs there in hundreds of accepted steps) is not a stall. Over one window the
#: integration stalled when both (i) at the pace of the window's accepted steps the rest of the evaluation budget
#: cannot reach the end of the span, and (ii) no accepted state moved from the window's first one by more than the
#: local errors of the window's steps can add up to (``STALL_WINDOW · √n`` tolerance units ``atol + rtol·|y|``, the
#: integrators' per-step error norm being an RMS over ``n`` components). A flow that advances fails (i) (it finishes
#: within the budget at its pace) or (ii) (its state moves: a transient, an escape, an oscillation); a right-hand side
#: that jumps where a softmax saturates does neither (the Markov minimal model from β₀ = 1e20: accepted steps of
#: 1e-26 at t = 5.5e-20 with the state still to 0.6 tolerance units, 50 s exact, hours with Monte Carlo losses)
STALL_WINDOW = 500


class _Budget(Exception):
    pass


class _Stall(Exception):
    pass


class _Overflow(Exception):
    pass


class _Watched:
    """``rhs`` counting its calls (raising :class:`_Budget` past :data:`MAX_EVALUATIONS` and :class:`_Stall` where a
    window of :data:`STALL_WINDOW` evaluations at new times made no progress in the integrator's accepted steps,
    :meth:`accepted`), stopping the integration (:class:`_Overflow`) at the first state or derivative that is not
    finite, and remembering the furthest time and the largest state magnitude."""

    def __init__(self, rhs, span, y0, rtol, atol):
        self.rhs, self.calls, self.t, self.finite, self.top, self.raised = rhs, 0, float(span[0]), True, 0.0, False
        self.end, self.rtol, self.atol = float(span[1]), float(rtol), np.asarray(atol, dtype=float)
        self.t_last, self.fresh = None, 0         # the last time evaluated, and the evaluations at new times
        y0 = np.asarray(y0, dtype=float).ravel()
        self.limit = STALL_WINDOW * np.sqrt(max(y0.size, 1))     # (ii) of STALL_WINDOW, in tolerance units
        self.t_step, self.y_step = self.t, y0     # the last accepted step
        self.t_window, self.y_window, self.moved = self.t, y0, 0.0   # the window's first accepted state, and the
        self.pace = 0.0                           # largest excursion from it; the time the last window advanced

    def accepted(self, t, y):
        """The integrator accepted a step to ``(t, y)``."""
        self.t_step, self.y_step = float(t), np.array(y, dtype=float).ravel()
        with np.errstate(over="ignore", invalid="ignore"):
            scale = self.atol + self.rtol * np.maximum(np.abs(self.y_step), np.abs(self.y_window))
            moved = float(np.max(np.abs(self.y_step - self.y_window) / scale, initial=0.0))
        self.moved = max(self.moved, moved if np.isfinite(moved) else np.inf)

    def _judge(self):
        """The end of a window: :class:`_Stall` where it made no progress (:data:`STALL_WINDOW`)."""
        self.pace = self.t_step - self.t_window
        reach = self.pace * max(MAX_EVALUATIONS - self.calls, 0) / STALL_WINDOW
        if reach < self.end - self.t_step and not self.moved > self.limit:
            raise _Stall
        self.t_window, self.y_window, self.moved = self.t_step, self.y_step, 0.0

    def __call__(self, t, y):
        self.calls += 1
        if self.calls > MAX_EVALUATIONS:
            raise _Budget
        t = float(t)
        if t != self.t_last:
            self.t, self.t_last, self.fresh = max(self.t, t), t, self.fresh + 1
            if self.fresh % STALL_WINDOW == 0:
                self._judge()
        try:
            out = self.rhs(t, y)
        except ValueError:
            self.raised = True
            raise
        with np.errstate(over="ignore", invalid="ignore"):
            self.finite = bool(np.all(np.isfinite(y)) and np.all(np.isfinite(out)))
            self.top = max(self.top, float(np.max(np.abs(y), initial=0.0)))
        if not self.finite:
            raise _Overflow
        return out

    @property
    def overflowed(self):
        return not self.finite or self.top > OVERFLOW_SCALE


def _watching(method, watched):
    """The scipy integrator class ``method`` (a name of ``solve_ivp`` or an ``OdeSolver`` subclass) telling
    ``watched`` each step it accepts."""
    base = METHODS[method] if isinstance(method, str) else method

    class Watching(base):
        def step(self):
            message = super().step()
            if self.status != "failed":
                watched.accepted(self.t, self.y)
            return message

    Watching.__name__ = Watching.__qualname__ = f"Watched{base.__name__}"
    return Watching


def integrate(name, rhs, span, y0, **kw):
    """``solve_ivp(rhs, span, y0, **kw)`` within :data:`MAX_EVALUATIONS`; ``ConvergenceError`` naming the cause
    otherwise (module docstring).

    Parameters
    ----------
    name : str
        The public function integrating (for the message).
    rhs : callable
        ``(t, y) -> dy/dt``; a ``ValueError`` it raises (a check of a state that left float64) is read as overflow
        (one raised by ``solve_ivp`` itself is passed on).
    span : (float, float)
    y0 : array_like
    **kw
        Passed to ``solve_ivp``.

    Returns
    -------
    scipy.integrate OdeResult
    """
    if span[1] <= span[0]:              # nothing to integrate (every report time is the start): the initial state
        return _at_start(span[0], y0, kw)
    if span[1] - span[0] < SHORT_SPAN:
        return _rescaled(name, rhs, span, y0, kw)
    method = kw.pop("method", "RK45")
    if isinstance(method, str) and method not in METHODS:        # scipy's own words for an unknown method
        return solve_ivp(rhs, span, y0, method=method, **kw)
    watched = _Watched(rhs, span, y0, kw.get("rtol", 1e-3), kw.get("atol", 1e-6))
    overflow = (f"{name}: the integrator's state overflowed float64 before t = {span[1]:.6g} (a step too long for "
                "the flow, or a flow that blows up: check the times, gamma and the initial condition)")
    try:
        with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)      # scipy's words on a failure: diagnosed below instead
            sol = solve_ivp(watched, span, y0, method=_watching(method, watched), **kw)
    except _Budget:
        raise ConvergenceError(f"{name}: the integrator took more than {MAX_EVALUATIONS} evaluations before t = "
                               f"{span[1]:.6g} (the flow blows up or is too stiff: check the initial condition, gamma "
                               "and the times)") from None
    except _Stall:
        raise ConvergenceError(f"{name}: the integrator stalled at t = {watched.t_step:.6g} before t = {span[1]:.6g} "
                               f"(no progress over {STALL_WINDOW} evaluations at new times: its accepted steps "
                               f"advanced t by {watched.pace:.3g}, a pace that cannot reach the end within the "
                               f"evaluation budget of {MAX_EVALUATIONS}, and moved the state no more than their "
                               "integration errors: a right-hand side that jumps there, e.g. a saturated softmax from "
                               "an extreme initial condition, or a flow too stiff for the method and rtol: check the "
                               "initial condition, the method and rtol)") from None
    except _Overflow:
        raise ConvergenceError(f"{overflow}; it reached t = {watched.t:.6g}") from None
    except ValueError as err:
        if not watched.raised:          # scipy's own argument check, not the flow: a bug of the caller
            raise
        raise ConvergenceError(f"{overflow} — {err}") from None
    if sol.success and watched.finite and np.all(np.isfinite(sol.y)):
        return sol
    if watched.overflowed or not np.all(np.isfinite(sol.y)):
        raise ConvergenceError(f"{overflow}; it reached t = {watched.t:.6g}")
    start = float(np.max(np.abs(np.asarray(y0, dtype=float)), initial=0.0))
    raise ConvergenceError(f"{name}: the integrator stopped at t = {watched.t:.6g} before t = {span[1]:.6g} with a "
                           f"finite state (largest |state| {watched.top:.3g}, from {start:.3g} at the start): a flow "
                           "that blows up, times far beyond the flow's time scales (a step below the float64 "
                           "resolution of t), or a flow too stiff for rtol: check the initial condition, the times and "
                           "rtol")


def _rescaled(name, rhs, span, y0, kw):
    """:func:`integrate` over a span shorter than :data:`SHORT_SPAN`, in the time ``s = (t − t₀)/L``, ``L = span``
    (``dy/ds = L f(t₀ + sL, y)``: the same flow, in steps LSODA can take); times and event times mapped back."""
    t0, length = float(span[0]), float(span[1]) - float(span[0])

    def at(f):
        return lambda s, y: f(t0 + s * length, y)

    kw = dict(kw)
    t_eval = kw.get("t_eval")
    if t_eval is not None:
        kw["t_eval"] = np.clip((np.asarray(t_eval, dtype=float) - t0) / length, 0.0, 1.0)
    if callable(kw.get("jac")):
        jac = kw["jac"]
        kw["jac"] = lambda s, y: length * np.asarray(jac(t0 + s * length, y))
    events = kw.get("events")
    if events is not None:
        single = callable(events)
        wrapped = []
        for ev in [events] if single else events:
            w = at(ev)
            w.terminal, w.direction = getattr(ev, "terminal", False), getattr(ev, "direction", 0)
            wrapped.append(w)
        kw["events"] = wrapped[0] if single else wrapped
    try:
        sol = integrate(name, lambda s, y: length * np.asarray(rhs(t0 + s * length, y)), (0.0, 1.0), y0, **kw)
    except ConvergenceError as err:              # its times are s: say how they map back
        raise ConvergenceError(f"{err} (times s of the rescaled span: t = {t0:g} + s · {length:g})") from None
    sol.t = np.asarray(t_eval, dtype=float) if t_eval is not None else t0 + sol.t * length
    if sol.t_events is not None:
        sol.t_events = [t0 + np.asarray(te) * length for te in sol.t_events]
    return sol


def _at_start(t0, y0, kw):
    """The result of an integration over an empty span: the initial state at every requested time (``solve_ivp``
    returns ``y`` as a list there, and no events)."""
    from scipy.integrate._ivp.ivp import OdeResult

    y0 = np.asarray(y0, dtype=float)
    t = np.asarray(kw.get("t_eval") if kw.get("t_eval") is not None else [t0], dtype=float)
    events = kw.get("events")
    n_events = 0 if events is None else (len(events) if isinstance(events, (list, tuple)) else 1)
    return OdeResult(t=t, y=np.repeat(y0[:, None], t.size, axis=1), sol=None, t_events=[np.zeros(0)] * n_events,
                     y_events=[np.zeros((0, y0.size))] * n_events, nfev=0, njev=0, nlu=0, status=0,
                     message="empty time span: the initial state", success=True)


#: largest decay rate ``γ λ`` (and ``γ``) of a flow: the integrator's Jacobian is squared in its error control, which
#: overflows float64 beyond ~1e150 (the flow then ran 10⁵ evaluations, minutes, before its ConvergenceError)
MAX_RATE = 1e150


def check_rates(gamma, lam=0.0):
    """Refuse ``γ`` or ``γ λ`` beyond :data:`MAX_RATE`, naming the larger factor."""
    if gamma > MAX_RATE:
        check.fail("gamma", gamma, f"a learning rate <= {MAX_RATE:g} (the flow's Jacobian is squared in float64)")
    if gamma * lam > MAX_RATE:
        check.fail("lam", lam, f"a weight decay with gamma * lam <= {MAX_RATE:g} (the flow's Jacobian is squared in "
                   f"float64; gamma = {gamma:g})")
