"""The bounded integrator's own diagnosis of a failed integration (not scipy's words, which change between
versions)."""
import numpy as np
import pytest

import dynamics
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
    """``mean_flow`` of separate key/query heads from a 1e-9 start escapes its saddle at t ~ 1e9–1e10 (a
    relative-growth stall test refused it at t = 9.25e9)."""
    import dynamics
    from linattn.factorized import Parametrization

    par = Parametrization("separate_kq", 2)
    fl = dynamics.mean_flow(linattn.Problem(2, 20), par, par.init(1e-9, rng=0), np.geomspace(1, 1.5e10, 30))
    assert np.all(np.isfinite(fl.loss)) and fl.loss[-1] < fl.loss[0]


def test_a_slow_escape_from_a_tiny_start_is_not_a_stall():
    """``mean_flow`` of the value × key-query product from a random start of scale 1e-15 to t = 1e9: LSODA's first
    step tries t = 3.2e4, is rejected, and the flow then climbs there in hundreds of accepted steps. The stall test
    read progress from the furthest time *tried* and refused it at t = 31622.8; it now reads the accepted steps."""
    from linattn.factorized import Parametrization

    pb = linattn.Problem(3, 7, covariance=np.geomspace(1.0, 0.1, 3))
    par = Parametrization("value_kq", 3)
    fl = dynamics.mean_flow(pb, par, par.init(1e-15, 0), np.geomspace(1.0, 1e9, 30))
    assert fl.test[-1] - pb.icl_solution().test_error < 1e-9


@pytest.mark.parametrize("kind, H", [("merged", 1), ("value_kq", 1), ("value_kq_modes", 1), ("separate_kq", 3),
                                     ("merged_heads", 2)])
def test_the_slowest_documented_flows_integrate(kind, H):
    """Every parametrization of the factorized-attention page, from the smallest start the library's pages use
    (1e-15) to t = 1e9 on the anisotropic problem of the tour: integrated, none refused as a stall; each escapes to
    the population minimiser except separate key/query heads, whose cubic escape from 1e-15 takes t ~ 1e15."""
    from linattn.factorized import Parametrization

    pb = linattn.Problem(3, 7, covariance=np.geomspace(1.0, 0.1, 3))
    par = Parametrization(kind, 3, heads=H)
    fl = dynamics.mean_flow(pb, par, par.init(1e-15, 0), np.geomspace(1.0, 1e9, 30))
    gap = fl.test[-1] - pb.icl_solution().test_error
    assert gap < 1e-9 if kind != "separate_kq" else gap == pytest.approx(fl.test[0] - pb.icl_solution().test_error)


def test_the_markov_minimal_flows_of_the_figures_integrate():
    """The minimal model's flows of the Markov figure (quick mode: C = 3, N = 6, concentration 0.5, both variants;
    from near the origin and from either side of the saddle, to t = 3e4): integrated, none refused."""
    times = np.concatenate([[0.0], np.geomspace(0.1, 3e4, 30)])
    for variant in ("released", "attention"):
        saddle = dynamics.markov_minimal_theory(3, 6, 0.5, variant=variant).delta_saddle
        for b0, d0 in [(0.01, 0.01), (0.0, saddle + 0.01), (0.0, saddle - 0.01)]:
            fl = dynamics.markov_minimal_flow(b0, d0, 3, 6, 0.5, times, variant=variant)
            assert np.all(np.isfinite(fl.loss)) and fl.loss[-1] <= fl.loss[0]


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)
MARKOV = dict(score_scale0=0.1, delta0=0.1, C=3, N=8, concentration=1.0, n_mc=2000, rng=0)


@pytest.mark.parametrize("end", [1e-150, 1e-300, 5e-324 * 4])
def test_flows_over_a_span_below_lsodas_step_are_the_initial_state(end):
    """A last time of 1e-150 … 1e-300: LSODA stalled at t = 0 and ``mode_flow`` raised ConvergenceError after 1e5
    evaluations (3–6 s); ``markov_minimal_flow`` took ~50 s for the same. Over such a span the flow does not move:
    the answer is the initial state at every time (now integrated in the rescaled time ``(t − t₀)/span``)."""
    t = np.array([0.0, end / 2, end])
    mf = dynamics.mode_flow(PB, 0.1, 0.2, t)
    assert np.array_equal(mf.times, t) and np.allclose(mf.p, 0.1) and np.allclose(mf.q, 0.2)
    fl = dynamics.markov_minimal_flow(**MARKOV, times=t)
    assert np.allclose(fl.score_scale, 0.1, rtol=1e-12) and np.allclose(fl.delta, 0.1, rtol=1e-12)
    assert fl.escape_time == np.inf


def test_rescaled_short_span_agrees_with_the_direct_integration():
    """Just below the rescaling threshold and just above it the flow is the same (to its first-order change)."""
    from dynamics import _ode

    for span in (_ode.SHORT_SPAN * 0.5, _ode.SHORT_SPAN * 2):
        fl = dynamics.mode_flow(PB, 0.1, 0.2, np.array([0.0, span]))
        assert np.allclose(fl.p[-1], 0.1, rtol=1e-12) and np.allclose(fl.q[-1], 0.2, rtol=1e-12)


def test_a_flow_that_blows_up_stops_with_a_convergence_error(monkeypatch):
    """mode_flow from p0 = 1e200 stepped for ever; every integration of dynamics.staged now has an evaluation budget
    (lowered here to keep the test short) and ends with ConvergenceError naming the likely cause."""
    import dynamics
    import dynamics._ode

    monkeypatch.setattr(dynamics._ode, "MAX_EVALUATIONS", 2000)
    pb = linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25])
    with pytest.raises(linattn.ConvergenceError, match="blows up"):
        dynamics.mode_flow(pb, 1e200, [0.1, 0.2, 0.1], [0.0, 1.0])
