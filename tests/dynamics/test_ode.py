"""The bounded integrator's own diagnosis of a failed integration (not scipy's words, which change between
versions)."""
import numpy as np
import pytest

import linattn
from dynamics import _ode


@pytest.mark.parametrize("method", ["LSODA", "RK45"])
def test_a_blow_up_is_diagnosed_by_the_library(method):
    """dy/dt = y² from y(0) = 1e200 leaves float64 at once (overflow); from y(0) = 1 it blows up at t = 1, where
    LSODA exhausts the evaluation budget and RK45 stops with a huge but finite state (named with the time and the
    growth), whatever the method."""
    overflow = "blowup: the integrator's state overflowed float64 before t = 2"
    with pytest.raises(linattn.ConvergenceError, match=overflow):
        _ode.integrate("blowup", lambda t, y: y * y, (0.0, 2.0), [1e200], method=method, rtol=1e-8)
    with pytest.raises(linattn.ConvergenceError, match="blowup: .*before t = 2 .*blows up"):
        _ode.integrate("blowup", lambda t, y: y * y, (0.0, 2.0), [1.0], method=method, rtol=1e-8)


def test_a_finite_stop_names_the_time_reached(monkeypatch):
    """A solver that gives up with a finite state (here: a stand-in for scipy that fails after one evaluation with an
    unknown message) is reported with the time reached, not with the solver's message."""
    class Failed:
        success, message, y = False, "Unexpected istate in LSODA", np.ones((1, 1))

    def fake_solve_ivp(fun, span, y0, **kw):
        fun(0.5, np.asarray(y0, float))
        return Failed()

    monkeypatch.setattr(_ode, "solve_ivp", fake_solve_ivp)
    with pytest.raises(linattn.ConvergenceError, match="stopped at t = 0.5 before t = 3") as info:
        _ode.integrate("flow", lambda t, y: -y, (0.0, 3.0), [1.0])
    assert "istate" not in str(info.value)


def test_a_smooth_flow_integrates():
    sol = _ode.integrate("decay", lambda t, y: -y, (0.0, 2.0), [1.0], method="LSODA", t_eval=[0.0, 2.0], rtol=1e-10,
                         atol=1e-12)
    assert sol.y[0, -1] == pytest.approx(np.exp(-2.0), rel=1e-8)


@pytest.mark.parametrize("method", ["LSODA", "RK45"])
def test_a_stalled_integration_is_refused_within_a_few_windows(method):
    """A right-hand side that jumps (dy/dt = −10⁶ sign(y − ½): chattering at y = ½) keeps the integrator retrying
    the same step: refused as a stall after a few :data:`STALL_WINDOW`s of evaluations, not after the whole
    :data:`MAX_EVALUATIONS` budget (the Markov minimal model from β₀ = 1e20 with Monte Carlo losses took hours)."""
    calls = []

    def jumps(t, y):
        calls.append(t)
        return -1e6 * np.sign(y - 0.5)
    with pytest.raises(linattn.ConvergenceError, match="jump: the integrator stalled at t = .* before t = 10 \\(no "
                                                       "progress over 500 evaluations at new times"):
        _ode.integrate("jump", jumps, (0.0, 10.0), [1.0], method=method, rtol=1e-9, atol=1e-12)
    assert len(calls) <= 4 * _ode.STALL_WINDOW < _ode.MAX_EVALUATIONS


def test_the_markov_minimal_flow_from_a_saturated_start_stalls_quickly():
    """β₀ = 1e20: the δ-gradient is ~1e19 and jumps where the softmax saturates; the flow used to exhaust the 1e5
    evaluation budget (50 s exact, hours with Monte Carlo losses of 2e5 sequences at 0.3 s an evaluation)."""
    import dynamics
    with pytest.raises(linattn.ConvergenceError, match="markov_minimal_flow: the integrator stalled"):
        dynamics.markov_minimal_flow(1e20, 0.01, 3, 6, 1.0, np.geomspace(1, 1e4, 20))


def test_a_span_far_from_zero_is_not_a_stall():
    """The stall test measures the time elapsed since the start of the span, not ``t``: a long flow over
    ``(1e9, 1e9 + 500)`` (thousands of evaluations, each window advancing ~20, far less than 1e-6 of ``t``)
    integrates."""
    def oscillator(t, y):
        return np.array([y[1], -y[0]])
    sol = _ode.integrate("ring", oscillator, (1e9, 1e9 + 500.0), [1.0, 0.0], method="RK45", rtol=1e-6, atol=1e-9)
    assert sol.success and sol.nfev > 4 * _ode.STALL_WINDOW


def test_a_finite_difference_jacobian_is_not_a_stall():
    """Radau without ``jac`` estimates the Jacobian with n + 1 calls at one time: for n = 600 that is more than a
    stall window of calls without progress, yet no stall (they share a time and count once)."""
    rates = np.geomspace(1e-2, 1e3, 600)
    sol = _ode.integrate("stiff", lambda t, y: -rates * y, (0.0, 10.0), np.ones(600), method="Radau", rtol=1e-6,
                         atol=1e-9)
    assert sol.success and sol.nfev > _ode.STALL_WINDOW
    np.testing.assert_allclose(sol.y[:, -1], np.exp(-10.0 * rates), rtol=1e-3, atol=1e-8)


@pytest.mark.parametrize("method", ["LSODA", "Radau"])
def test_a_fast_transient_late_in_a_plateau_is_not_a_stall(method):
    """dy/dt = y²(1 − y) from 1e-10 leaves its plateau at t ≈ 1e10 in a transition of width ~1: hundreds of short
    steps far below 1e-6 of t, each accepted (t advances) — a flow, not a stall (a relative-growth test refused it)."""
    sol = _ode.integrate("escape", lambda t, y: y * y * (1.0 - y), (0.0, 3e10), [1e-10], method=method, rtol=1e-9,
                         atol=1e-12)
    assert sol.success and sol.y[0, -1] == pytest.approx(1.0, rel=1e-6)


def test_a_cubic_parametrization_escaping_late_is_not_a_stall():
    """``mean_flow`` of separate key/query heads from a 1e-9 start escapes its saddle at t ~ 1e9–1e10 (review of
    session 49: a relative-growth stall test refused it at t = 9.25e9)."""
    import dynamics
    from linattn.factorized import Parametrization

    par = Parametrization("separate_kq", 2)
    fl = dynamics.mean_flow(linattn.Problem(2, 20), par, par.init(1e-9, rng=0), np.geomspace(1, 1.5e10, 30))
    assert np.all(np.isfinite(fl.loss)) and fl.loss[-1] < fl.loss[0]
