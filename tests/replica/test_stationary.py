"""The stationary theory (:func:`replica.stationary`, :func:`replica.stationary_curve`) at extreme decays and
temperatures, with task pools at the edges of their range, and its refusals by name."""
import numpy as np
import pytest
from helpers import CALLED, assert_refused, name_as_word, name_not_within_letters, refusals

import dynamics
import linattn
import replica
import spectra

PB = linattn.Problem(4, 8, 0.1)
PB_POOL = linattn.Problem(D=4, N=8, noise=0.1, tasks=3)
RAGGED = [[1.0], [1.0, 2.0]]


REFUSED = refusals(name_as_word, [
    ("stationary-curve", lambda: replica.stationary_curve(PB, np.linspace(1, 100, 10**7), 10.0, 0.1), "P_values"),
]) + refusals(name_not_within_letters, [
    # raw exceptions
    ("pool-theory-threshold", lambda: replica.stationary(PB_POOL, 20.0, np.inf, 1e-300, model="full", law="mp"), "lam"),
    ("stationary-beta-tiny", lambda: replica.stationary(PB, 50.0, 1e-307, 0.01, model="full"), "beta"),
    ("stationary-pool-beta-tiny", lambda: replica.stationary(PB_POOL, 50.0, 1e-307, 0.01, model="full", law="mp"),
     "beta"),
    ("stationary-curve-pool", lambda: replica.stationary_curve(PB_POOL, np.linspace(10, 100, 1000), np.inf, 0.01),
     "P_values"),
    ("stationary-curve-P-values", lambda: replica.stationary_curve(PB, RAGGED, 1e3, 0.01), "P_values"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("law", ["finite", "mp", "factor"])
def test_pool_theory_lambda_zero_at_finite_beta(law):
    """λ = 0, P > M, finite β (ZeroDivisionError before): the limit κ/λ → P/(P − M); continuous in λ
    (|E(λ) − E(0)| = O(λ), checked at λ = 1e-9 within 1e-6 relative)."""
    at0 = replica.stationary(PB_POOL, 40, 100.0, 0.0, law=law, n_pools=2)
    near = replica.stationary(PB_POOL, 40, 100.0, 1e-9, law=law, n_pools=2)
    for k in ("train", "test", "test_idg"):
        assert getattr(at0, k) == pytest.approx(getattr(near, k), rel=1e-6)


@pytest.mark.parametrize("law", ["finite", "mp", "factor"])
@pytest.mark.parametrize("lam", [1e30, 1e100, 1e300])
def test_pool_theory_huge_lambda_is_the_trivial_limit(law, lam):
    """λ → ∞ (OverflowError / brentq sign error / NaN before): Γ → 0, so test = V/2 = ½(1 + σ²) exactly,
    train = test_idg = ½ E_pool[y²] (the decay term λ|Θ̄|² ~ 1/λ vanishes) and finite β adds M/(2β) to train."""
    th = replica.stationary(PB_POOL, 10, np.inf, lam, law=law, n_pools=2)
    assert th.test == pytest.approx(0.5 * (1 + PB_POOL.noise**2), rel=1e-14)
    # law="finite": the training fit is the average over 8192 Sobol prompt types, test_idg the exact pool moment;
    # they differ by that quadrature's error (measured 1e-4 relative at D = 4), hence 1e-3 there
    assert th.train == pytest.approx(th.test_idg, rel=1e-3 if law == "finite" else 1e-12)
    hot = replica.stationary(PB_POOL, 10, 10.0, lam, law=law, n_pools=2)
    assert hot.train == pytest.approx(th.train + 16 / 20.0, rel=1e-12)
    assert hot.test == pytest.approx(th.test, rel=1e-12)


def test_pool_theory_refuses_a_pool_beyond_float64():
    """A pool of entries 1e200 (LinAlgError before) is refused, naming pool."""
    with pytest.raises(ValueError, match="pool"):
        replica.stationary(PB_POOL, 10, np.inf, 0.1, pool=np.full((3, 4), 1e200))


def test_huge_pool_average_is_refused_not_run_for_minutes():
    """A hang: a pool average over 16 × 32 drawn pools of K = 10⁶ tasks (D = 20: 10¹⁰ task entries, about
    ten minutes) ran; it is refused naming pb.tasks and the largest K, and the suggested large-D route answers."""
    pb = linattn.Problem(20, 40, 0.1, tasks=10**6)
    with pytest.raises(ValueError, match=r"pb\.tasks.*K <= 104857 "):
        replica.stationary(pb, 1000, np.inf, 0.01, "reduced")
    mp = replica.stationary(pb, 1000, np.inf, 0.01, "reduced", law="mp", pool="mp")
    assert np.isfinite(mp.test) and np.isfinite(mp.train)


@pytest.mark.parametrize("lam", [1e200, 1e300])
def test_huge_weight_decay_of_the_full_model_is_the_limit(lam):
    """From λ ≈ 1e155 the full model's route (the 2 x 2 Newton determinant) overflowed: ConvergenceError. The
    limit Γ = 0: E_test = V/2, as the reduced model and replica.ridge give."""
    half = 0.5 * PB.label_variance
    th = replica.stationary(PB, 10, np.inf, lam, "full")
    assert th.test == pytest.approx(half, rel=1e-12) and th.train == pytest.approx(half, rel=1e-12)
    assert th.test == pytest.approx(replica.stationary(PB, 10, np.inf, lam, "reduced").test, rel=1e-12)
    assert th.test == pytest.approx(replica.ridge(PB.sample(10, rng=0), PB, lam, "full").test, rel=1e-12)
    assert replica.stationary(PB, 30, 2.0, lam, "full").test == pytest.approx(half, rel=1e-12)
    curves = dynamics.averaged_curves(PB, 20, lam, [0, 1], model="full")
    assert np.allclose(curves.test, half, rtol=1e-12) and np.allclose(curves.train, half, rtol=1e-12)
    rr = spectra.ridge_resolvent(10, lam, spectra.prompt_law(PB, "full"))
    assert np.all(np.isfinite(rr.a)) and rr.converged


def test_weight_decay_near_the_top_of_float64():
    """λ' = λ/c ~ 1.7e308 (the complex-plane solver's homotopy started at Im z = inf and looped
    forever; CG underflowed in pᵀAp at λ = 1e305 with P = 100)."""
    half = 0.5 * PB.label_variance
    lam = 7e307
    assert replica.stationary(PB, 10, np.inf, lam, "full").test == pytest.approx(half, rel=1e-12)
    assert np.allclose(dynamics.averaged_curves(PB, 20, lam, [0, 1, 10], model="full").test, half, rtol=1e-12)
    for model in ("reduced", "full"):
        assert replica.ridge(PB.sample(100, rng=0), PB, 1e305, model).test == pytest.approx(half, rel=1e-12)
    with pytest.raises(ValueError, match=r"\blam\b"):        # λ/c overflows float64: named, not "got inf"
        replica.stationary(PB, 10, np.inf, 1.7e308, "full")


def test_tiny_weight_decay_of_the_full_model():
    """0 < λ' < 1e-20 with P < M refused 'z' (an internal start of the two-block solver)."""
    ref = replica.stationary(PB, 10, np.inf, 1e-19, "full").test
    assert replica.stationary(PB, 10, np.inf, 1e-200, "full").test == pytest.approx(ref, rel=1e-9)


def test_pool_theory_at_a_tiny_temperature_has_finite_standard_errors():
    """β = 1e-300 with a pool: errors ~ M/(2β) ~ 1e301 and their standard errors were inf (mean_se's squares)."""
    th = replica.stationary(PB_POOL, 50.0, 1e-300, 0.01, model="full", n_pools=2)
    assert np.all(np.isfinite([th.train, th.test, th.test_idg, th.train_se, th.test_se, th.test_idg_se]))


def test_pool_theory_at_zero_decay_is_the_min_norm_limit():
    pk = linattn.Problem(6, 12, 0.1, tasks=3)
    zero, small = replica.stationary(pk, 20, np.inf, 0.0), replica.stationary(pk, 20, np.inf, 1e-9)
    assert zero.train == 0.0 and zero.test == pytest.approx(small.test, rel=1e-6)


@pytest.mark.parametrize("call, name", [
    (lambda: replica.stationary(linattn.Problem(3, 4, 0.1, tasks=2), 5, np.inf, 0.1, pool=np.ones((3, 3))),
     r"replica\.stationary: pool"),
    (lambda: replica.stationary(linattn.Problem(3, 4, 0.1, tasks=2), 5, np.inf, 0.1, n_pools=10**9),
     r"replica\.stationary: n_pools"),
])
def test_invalid_input_that_was_accepted_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{CALLED}{name} must"):
        call()


def test_stationary_curve_progress_bar_shows_on_long_calls_only(monkeypatch, capsys):
    """A bar over the values of P, shown once a curve has run two seconds; it changes no number."""
    from replica import _stationary

    pb = linattn.Problem(4, 8, 0.1)
    P = [10.0, 40.0, 160.0]
    quiet = replica.stationary_curve(pb, P, np.inf, 0.1)
    assert "stationary curve" not in capsys.readouterr().err           # short: silent
    monkeypatch.setattr(_stationary, "PROGRESS_DELAY", 0.0)             # every call counts as long
    shown = replica.stationary_curve(pb, P, np.inf, 0.1)
    assert "stationary curve" in capsys.readouterr().err
    silent = replica.stationary_curve(pb, P, np.inf, 0.1, progress=False)
    assert capsys.readouterr().err == ""
    for r in (shown, silent):
        for name in ("train", "test", "gap"):
            np.testing.assert_array_equal(getattr(r, name), getattr(quiet, name))
