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
