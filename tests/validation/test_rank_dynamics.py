"""Training diagnostics on the exact model: effective rank and subspace distance of staged learning."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import validation
from validation import rank_dynamics
from validation.experiments._rank_dynamics import baseline_rejected, checks, distance_falls, step_ups


@pytest.fixture(scope="module")
def run():
    # D = 4, s = (1, .63, .40, .25), N = 31, a0 = 1e-3, rtol = 0.01; online SGD η = 0.05, batch 128, 3 chains
    return rank_dynamics(np.geomspace(1.0, 0.25, 4), 31, n_chains=3, rng=2)


def test_diagnostics_match_the_closed_form_of_staged_learning(run):
    failed = [f"{c.quantity}: theory {c.theory}, measured {c.simulation} ({c.criterion})"
              for c in checks(run) if not c.passed]
    assert not failed, failed


def test_the_step_criterion_rejects_the_linear_regression_time_scale(run):
    assert baseline_rejected(run)


def test_the_closed_form_itself_and_the_order_of_events(run):
    # the closed-form diagnostics detect the same times as the exact ODE (grid-exact)
    np.testing.assert_allclose(step_ups(run, run.closed), step_ups(run, run.flow), rtol=1e-6)
    np.testing.assert_allclose(distance_falls(run, run.closed), distance_falls(run, run.flow), rtol=1e-6)
    # the subspace distance falls before the effective rank steps up, which is before the loss drops (t½)
    falls = distance_falls(run, run.flow)
    entering = np.flatnonzero(np.isfinite(run.t_enter))
    steps = step_ups(run, run.flow)[entering - 1]
    assert np.all(falls < steps) and np.all(steps < run.t_half[entering])


def test_a_random_start_delays_every_step(run):
    # modes must first align: later than the aligned start
    assert np.all(step_ups(run, run.random) > step_ups(run, run.flow))


def test_helpers_refuse_other_objects(run):
    from validation.experiments._rank_dynamics import curvature_onsets, rise_windows

    for call, name in ((lambda: step_ups(None, run.flow), "r"), (lambda: step_ups(run, run.test_closed), "diag"),
                       (lambda: distance_falls(run, None), "diag"), (lambda: checks(run, lr=-1.0), "lr"),
                       (lambda: checks(run, record=0), "record"),
                       (lambda: rise_windows(run, half_width=[0.0] * 4), "half_width"),
                       (lambda: curvature_onsets("r", run.test_closed), "r"), (lambda: baseline_rejected(1), "r")):
        with pytest.raises(ValueError, match=name):
            call()


# ----------------------------------------------------------------------------- refusals and extreme arguments
REFUSED = refusals(name_as_word, [
    # the spectrum, and the SGD run's size named by the arguments that set it
    ("rank-spectrum-huge", lambda: validation.rank_dynamics(np.ones(10**4), 8, n_chains=1, batch=4), "spectrum"),
    ("rank-spectrum-2d", lambda: validation.rank_dynamics([[1.0, 0.5]], 8), "spectrum"),
    ("rank-span", lambda: validation.rank_dynamics(np.array([1.0, 0.5]), 8, span=1e6, lr=1e-6, n_chains=1,
                                                   batch=4), "span"),
    ("rank-n-chains", lambda: validation.rank_dynamics(np.array([1.0, 0.5]), 8, n_chains=0), "n_chains"),
    ("rank-dynamics", lambda: validation.rank_dynamics(np.array([1.0, 0.5]), 8, n_grid=10**9), "n_grid"),
    ("rank-dynamics-record", lambda: validation.rank_dynamics(np.array([1.0, 0.5]), 8, record=10**9), "record"),
]) + refusals(name_not_within_letters, [
    ("rank-dynamics-N", lambda: validation.rank_dynamics(np.array([1.0, 0.5]), 10**9, n_chains=2, batch=16,
                                                         record=5, n_grid=40), "N"),
    ("rank-dynamics-spectrum", lambda: validation.rank_dynamics(np.array([2e300, 1.5e300]), 8), "spectrum"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_rank_dynamics_of_an_isotropic_spectrum_is_a_value():
    """Two equal eigenvalues (stored as an isotropic problem) gave AttributeError."""
    r = validation.rank_dynamics([1.0, 1.0], 8, n_chains=1, batch=8, n_grid=32)
    assert r.t_half.shape == (2,) and r.t_half[0] == r.t_half[1] and np.all(np.isfinite(r.test_closed))
