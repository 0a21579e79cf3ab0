"""Round 3 of "no silent wrong answer" (dynamics): extreme but valid arguments give values or a ValueError naming the
argument, never NaN or a raw exception."""
import numpy as np
import pytest

import dynamics
import linattn
from linattn.factorized import Parametrization

PB = linattn.Problem(3, 10, 0.1)


# ----------------------------------------------------------------------------- markov_minimal_loss at extreme δ
@pytest.mark.parametrize("variant", ["released", "attention"])
def test_markov_minimal_loss_huge_delta_is_the_limit(variant):
    """e^δ overflowed float64 (NaN loss and gradient); the kernel now works in e^{−δ} for δ > 0 and gives the
    δ → ∞ limit, which δ = 50 already reaches to rounding."""
    far = dynamics.markov_minimal_loss(0.5, 1e300, 3, 4, 1.0, variant=variant)
    near = dynamics.markov_minimal_loss(0.5, 50.0, 3, 4, 1.0, variant=variant)
    for r in (far, near):
        assert np.isfinite(r.loss) and np.all(np.isfinite(r.grad)) and np.all(np.isfinite(r.hessian))
    assert far.loss == pytest.approx(near.loss, rel=1e-12)
    np.testing.assert_allclose(far.grad, near.grad, rtol=1e-12, atol=1e-18)


@pytest.mark.parametrize("variant", ["released", "attention"])
def test_markov_minimal_loss_continuous_across_zero(variant):
    """The two forms of the kernel (e^δ for δ <= 0, e^{−δ} for δ > 0) agree at δ = 0."""
    a = dynamics.markov_minimal_loss(0.7, 1e-12, 3, 5, 0.5, variant=variant)
    b = dynamics.markov_minimal_loss(0.7, -1e-12, 3, 5, 0.5, variant=variant)
    assert a.loss == pytest.approx(b.loss, abs=1e-10)
    np.testing.assert_allclose(a.grad, b.grad, atol=1e-10)
    np.testing.assert_allclose(a.hessian, b.hessian, atol=1e-10)


def test_markov_minimal_loss_large_delta_gradient_is_accurate():
    """u = m d − (f m + S) cancelled catastrophically at large e^δ; ∂_δ L ∝ e^{−δ} must scale exactly."""
    g30 = dynamics.markov_minimal_loss(0.5, 30.0, 3, 4, 1.0).grad[1]
    g40 = dynamics.markov_minimal_loss(0.5, 40.0, 3, 4, 1.0).grad[1]
    assert g30 != 0.0
    assert g40 / g30 == pytest.approx(np.exp(-10.0), rel=1e-6)


@pytest.mark.parametrize("score_scale, delta, name", [(0.5, -1e300, "delta"), (1e300, 0.1, "score_scale")])
def test_markov_minimal_loss_overflow_names_the_argument(score_scale, delta, name):
    with pytest.raises(ValueError, match=name):
        dynamics.markov_minimal_loss(score_scale, delta, 3, 4, 1.0, variant="released")


def test_markov_minimal_theory_bracket_overflow_is_refused():
    with pytest.raises(ValueError, match="bracket"):
        dynamics.markov_minimal_theory(3, 4, 1.0, bracket=(-1e300, 1.0))


# ----------------------------------------------------------------------------- times of the flows
def test_mode_flow_single_time():
    """times=[0.0] crashed with AttributeError (solve_ivp's y is a list on an empty span)."""
    r = dynamics.mode_flow(PB, 0.1, 0.2, [0.0])
    np.testing.assert_array_equal(r.p, [[0.1] * 3])
    np.testing.assert_array_equal(r.q, [[0.2] * 3])


def test_mean_flow_single_time_and_list():
    par = Parametrization("value_kq_modes", 3)
    theta0 = par.init(0.1, rng=0)
    r = dynamics.mean_flow(PB, par, theta0, [0.0])
    np.testing.assert_array_equal(r.theta, theta0[None])
    r2 = dynamics.mean_flow(PB, par, theta0, [0.0, 0.5])
    assert r2.theta.shape == (2, theta0.size)


def test_markov_minimal_flow_single_time():
    r = dynamics.markov_minimal_flow(0.01, 0.02, 3, 4, 1.0, [0.0])
    np.testing.assert_array_equal(r.score_scale, [0.01])
    np.testing.assert_array_equal(r.delta, [0.02])


@pytest.mark.parametrize("call", [
    lambda t: dynamics.mode_flow(PB, 0.1, 0.1, t),
    lambda t: dynamics.logistic_modes(PB, 0.1, t),
    lambda t: dynamics.gradient_flow(PB.sample(5, rng=0), PB, 0.1, t),
    lambda t: dynamics.averaged_curves(PB, 20, 0.1, t),
])
def test_two_dimensional_times_refused(call):
    with pytest.raises(ValueError, match="times"):
        call([[0.0, 1.0]])


def test_mode_flow_wrong_shape_start_names_it():
    with pytest.raises(ValueError, match="p0"):
        dynamics.mode_flow(PB, [0.1, 0.2], 0.1, [0.0, 1.0])


# ----------------------------------------------------------------------------- accepted nonsense
@pytest.mark.parametrize("P", [0.5, 0.999])
def test_averaged_curves_refuses_fewer_than_one_prompt(P):
    with pytest.raises(ValueError, match="P"):
        dynamics.averaged_curves(PB, P, 0.1, [1.0])


def test_gap_sweep_refuses_empty_P_values():
    with pytest.raises(ValueError, match="P_values"):
        dynamics.gap_sweep(PB, [], 0.1, n_datasets=2)


# ----------------------------------------------------------------------------- ΔEr beyond the float64 range
def test_gap_beyond_float_range_is_inf_as_in_the_seed_figure_6():
    """Seed Fig. 6 (reduced model, λ = 0, t = 10³): at P < M the flow drives E_t below 1e-300 (denormal) while
    E_g stays O(1), so ΔEr exceeds 1.8e308. A refusal there stopped ``make run`` (fig6, quick grid); the gap is
    +inf, as for E_t = 0, and P* reads it as above any level."""
    sw = dynamics.gap_sweep(linattn.Problem(10, 10), [8], 0.0, n_datasets=15, model="reduced", time=1e3, rng=10010)
    assert np.all(sw.train_all >= 0) and np.all(np.isfinite(sw.test_all)) and np.all(sw.test_all > 0.01)
    tr, te, gap = sw.train_all[0], sw.test_all[0], sw.gap_all[0]
    beyond = tr < te / np.finfo(float).max                 # ΔEr ≈ E_g/E_t above the largest float
    assert np.any(beyond & (tr > 0))                       # the regime of the failure is reached
    assert np.all(np.isposinf(gap[beyond])) and sw.gap_mean[0] == np.inf
    np.testing.assert_allclose(gap[~beyond], (te[~beyond] - tr[~beyond]) / tr[~beyond], rtol=1e-15)
    assert linattn.relative_gap(1e-300, 1e300) == np.inf
    assert linattn.relative_gap(5e-324, 1.0) == np.inf      # the smallest denormal
    assert linattn.transition_point([1.0, 2.0], [np.inf, 1.0]) == 2.0
    with pytest.raises(ValueError, match="test"):           # −inf only from a negative E_g beyond the range
        linattn.relative_gap(1e-300, -1e300)
