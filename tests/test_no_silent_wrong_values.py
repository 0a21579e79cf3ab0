"""Examples of the adversarial review's classes of silent wrong values and raw exceptions, each fixed at its root:
the call now returns the right value or raises a ValueError naming the argument."""
import numpy as np
import pytest

import diagnostics
import linattn
import replica


def test_principal_angles_of_a_zero_matrix_are_refused():
    with pytest.raises(ValueError, match="M_t"):
        diagnostics.principal_angles(np.zeros((3, 3)), np.eye(3))


def test_a_constant_series_has_no_transition():
    with pytest.raises(ValueError, match="series"):
        diagnostics.steepest_changes(np.ones(50), np.arange(1, 51.0))
    with pytest.raises(ValueError, match="series"):
        diagnostics.change_points(np.ones(50), np.arange(1, 51.0))


def test_change_points_do_not_cancel_at_a_large_offset():
    t, s = np.arange(1, 41.0), np.r_[np.zeros(20), np.ones(20)]
    for offset in (0.0, 1e9, -1e12):
        assert diagnostics.change_points(s + offset, t, scale="linear")[0] == 20.5


def test_stable_rank_is_scale_free():
    M = np.diag([3.0, 2.0, 1.0])
    assert diagnostics.stable_rank(M * 1e200) == pytest.approx(diagnostics.stable_rank(M), rel=1e-14)
    assert diagnostics.stable_rank(M * 1e-200) == pytest.approx(14 / 9, rel=1e-14)


def test_the_surrogate_keeps_the_task_pool():
    pb = linattn.Problem(6, 12, 0.1, tasks=3, task_law="sphere", link="tanh")
    s = pb.surrogate()
    assert (s.tasks, s.task_law, s.link.is_linear) == (3, "sphere", True)
    assert pb.surrogate(finite_size=True).tasks == 3


def test_links_must_be_real_and_may_be_float32():
    with pytest.raises(ValueError, match="link"):
        linattn.Problem(6, 12, link=lambda z: z + 0j)
    h = linattn.Problem(6, 12, link=lambda z: (z**3).astype(np.float32)).hermite   # its own precision, ~1e-7
    assert h.mu1 == pytest.approx(3.0, rel=1e-5) and h.mu_star2 == pytest.approx(6.0, rel=1e-5)


def test_the_prompts_of_a_seed_do_not_depend_on_batching():
    pb = linattn.Problem(6, 12, 0.1)
    a, b = pb.sample(300, rng=1, batch_size=7), pb.sample(300, rng=1)
    assert np.array_equal(a.s, b.s) and np.array_equal(a.yq, b.yq)


def test_pool_theory_at_zero_decay_is_the_min_norm_limit():
    pk = linattn.Problem(6, 12, 0.1, tasks=3)
    zero, small = replica.stationary(pk, 20, np.inf, 0.0), replica.stationary(pk, 20, np.inf, 1e-9)
    assert zero.train == 0.0 and zero.test == pytest.approx(small.test, rel=1e-6)


def test_covariance_eigenvalues_must_keep_fourth_moments_finite():
    with pytest.raises(ValueError, match="covariance"):
        linattn.Problem(3, 6, covariance=[1e200, 1.0, 1.0])
    assert np.isfinite(linattn.Problem(3, 6, covariance=[1e40, 1.0, 1.0]).icl_solution().test_error)


# ----------------------------------------------------------------------------- second adversarial pass
def test_integers_beyond_float64_are_refused_by_name():
    """A Python int >= 2**1024 cannot become a float: every real argument refuses it with its name (one check)."""
    with pytest.raises(ValueError, match="noise must be"):
        linattn.Problem(3, 4, noise=10**400)
    with pytest.raises(ValueError, match="slope must be"):
        linattn.links.Link.linear(10**400)
    with pytest.raises(ValueError, match="steps must be"):
        linattn.check.counts("steps", [1e300])


def test_asymptotic_error_at_the_interpolation_peak_follows_ridge_to_the_minus_half():
    """At τ = 1 the ridgeless error diverges: ε ~ √ridge, E ∝ ridge^(−1/2) over every decade (the root is found in
    log ε, the denominator 1 − τ − ε(2M + εdM) keeps 1 − τ exact). The earlier solver saturated at 4.4e14 for every
    ridge <= 1e-40 (absolute xtol = 1e-15 on ε)."""
    ref = replica.asymptotic(1.0, 1.0, 2.0, 0.0, 1e-10).test * 1e-5
    for r in (1e-20, 1e-40, 1e-80, 1e-300):
        got = replica.asymptotic(1.0, 1.0, 2.0, 0.0, r).test * np.sqrt(r)
        assert abs(got / ref - 1) < 1e-4, r          # the next order of the expansion is O(√ridge) = 1e-5 at 1e-10


def test_pool_resolvent_has_full_precision_at_small_task_ratio():
    """M_κ(x) from the branch of the quadratic formula without cancellation: 1e-15 against 60-digit arithmetic
    (the earlier form lost ~log10(1/κ) digits: 7e-9 at κ = 1e-8)."""
    import decimal

    decimal.getcontext().prec = 60
    for k in (1e-8, 1e-5, 1.0, 1e8):
        for x in (1e-100, 1e-8, 1.0, 1e100):
            X, K = decimal.Decimal(x), decimal.Decimal(k)
            b, a = X + 1 - 1 / K, X / K
            r = (b * b + 4 * a).sqrt()
            exact = 2 / (b + r) if b >= 0 else (r - b) / (2 * a)
            assert abs(replica.pool_resolvent(x, k)[0] / float(exact) - 1) < 1e-15, (k, x)
    with pytest.raises(ValueError, match="task_ratio"):
        replica.pool_resolvent(1.0, 1e-300)


def test_spectral_cdf_is_a_distribution_function():
    """The tabulated law ends at exactly 1 (its quadrature error is spread over the continuous part), so a CDF and a
    Kolmogorov distance never exceed 1 (they reached 1.0000019 and 1.0000037)."""
    import spectra

    pb = linattn.Problem(3, 4, 0.1)
    assert np.array_equal(spectra.cdf([100.0, 1e300], 0.5, pb, law="mp"), [1.0, 1.0])
    assert spectra.kolmogorov_distance(np.full(9, 50.0), 0.5, pb, law="mp") <= 1.0


def test_a_sweep_records_any_exception_of_a_point_and_guards_its_size():
    """A BaseException subclass raised by a point is that point's recorded error (Ctrl-C still stops the run); a grid
    × replicates too large for memory is refused before anything is allocated."""
    pytest.importorskip("xarray")
    import validation

    class Stop(BaseException):
        pass

    def f(x, rng):
        if x == 2:
            raise Stop("boom")
        return {"y": float(x)}

    ds = validation.sweep(f, {"x": [1, 2, 3]}, workers=1)
    assert ds["status"].values.ravel().tolist() == [1, 2, 1] and "Stop: boom" in str(ds["error"].values[1, 0])
    with pytest.raises(ValueError, match="grid or replicates too large"):
        validation.sweep(f, {"x": [1]}, replicates=10**9, workers=1)


def test_a_flow_that_blows_up_stops_with_a_convergence_error(monkeypatch):
    """mode_flow from p0 = 1e200 stepped for ever; every integration of dynamics.staged now has an evaluation budget
    (lowered here to keep the test short) and ends with ConvergenceError naming the likely cause."""
    import dynamics
    import dynamics.staged

    monkeypatch.setattr(dynamics.staged, "MAX_EVALUATIONS", 2000)
    pb = linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25])
    with pytest.raises(linattn.ConvergenceError, match="blows up"):
        dynamics.mode_flow(pb, 1e200, [0.1, 0.2, 0.1], [0.0, 1.0])


def test_scale_free_measures_do_not_overflow():
    """contrast_ratio and the transition finders are scale-free: they normalise before squaring or differencing."""
    assert abs(linattn.contrast_ratio(1e300 * np.eye(3)) - 1.0) < 1e-12
    jump, t = np.r_[-1e308 * np.ones(10), 1e308 * np.ones(10)], np.arange(1, 21.0)
    assert diagnostics.change_points(jump, t, scale="linear")[0] == 10.5
    assert abs(diagnostics.steepest_changes(jump, t, scale="linear")[0] - 10.5) < 1e-9   # interpolated


@pytest.mark.parametrize("call, name", [
    (lambda: linattn.links.Link.linear(1e200), "slope"),
    (lambda: linattn.links.Link.linear(1e-200), "slope"),
    (lambda: linattn.links.Link("linear", None, slope=np.nan), "slope"),
    (lambda: linattn.Problem(3, 4, 0.0, link=linattn.links.Link.linear(0.0)), "noise"),
    (lambda: replica.stationary(linattn.Problem(3, 4, 0.1, tasks=2), 5, np.inf, 0.1, pool=np.ones((3, 3))), "pool"),
    (lambda: replica.stationary(linattn.Problem(3, 4, 0.1, tasks=2), 5, np.inf, 0.1, n_pools=10**9), "n_pools"),
    (lambda: diagnostics.crossing_times([3.0, 2.0, 1.0], [3.0, 2.0, 1.0], 1.5, below=True), "times"),
    (lambda: diagnostics.crossing_times([1.0, 2.0], [1.0, 2.0], True), "level"),
    (lambda: diagnostics.crossing_times([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], np.nan, below=True), "level"),
])
def test_invalid_input_that_was_accepted_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{name} must"):
        call()


def test_checkpoint_steps_and_names_must_be_meaningful(tmp_path):
    np.savez(tmp_path / "snan.npz", W=np.eye(2))
    np.savez(tmp_path / "s1.npz", W=np.eye(2))
    with pytest.raises(ValueError, match="step must be a pattern whose match is a finite number"):
        diagnostics.load_checkpoints(str(tmp_path), step=r"s(.*)")
    with pytest.raises(ValueError, match="names must be a non-empty list"):
        diagnostics.load_checkpoints(str(tmp_path), names=[], step=lambda f: len(f))
    with pytest.raises(ValueError, match="step must be a callable returning a finite number"):
        diagnostics.load_checkpoints(str(tmp_path), step=lambda f: 10**400)


def test_sweep_grid_values_are_compared_by_value_and_settings_by_key():
    pytest.importorskip("xarray")
    import validation
    from validation.experiments import base

    with pytest.raises(ValueError, match="distinct values"):
        validation.sweep(lambda x, rng: {"y": 1.0}, {"x": [1, 1.0]}, workers=1)
    with pytest.raises(ValueError, match="unknown: \\['bogus'\\]"):
        base.run("flow_curves", "smoke", settings={"bogus": 1}, progress=False)
    with pytest.raises(ValueError, match="^ds must be"):
        validation.sweep_summary(None)


def test_moments_indices_and_estimates_are_validated():
    """The one formula of the test error checks its moments; Prompts.take checks its index; a SpectralEstimate its
    counts (they raised raw TypeError/IndexError or were accepted)."""
    import spectra

    pb = linattn.Problem(3, 4, 0.1)
    for overlap, norm, name in ((0.0, -1.0, "norm"), (1j, 0.0, "overlap"), (np.nan, 0.0, "overlap"),
                                (None, 0.0, "overlap"), (10**400, 0.0, "overlap")):
        with pytest.raises(ValueError, match=f"^{name} must"):
            pb.test_error_from_moments(overlap, norm)
    assert pb.test_error_from_moments(0.5, 0.3) == pytest.approx(0.5 * (pb.label_variance - 1.0 + 0.3))
    data = pb.sample(6, rng=0)
    for index in (np.array([50]), np.array([1.5]), "a", np.array([], int)):
        with pytest.raises(ValueError, match="^index must"):
            data.take(index)
    assert data.take(np.array([0, 2])).P == 2 and data.take(slice(1, 3)).P == 2
    with pytest.raises(ValueError, match="^n_probes must"):
        spectra.SpectralEstimate(nodes=np.ones(3), weights=np.ones(3) / 3, n_probes=-1, steps=3, matvecs=3)


def test_the_ridge_resolvent_reports_non_convergence_as_such():
    import spectra

    law = spectra.prompt_law(linattn.Problem(3, 4, 0.1))
    with pytest.raises(linattn.ConvergenceError, match="maxit = 1"):
        spectra.ridge_resolvent(6.0, 0.1, law, maxit=1)


def test_a_result_that_overflows_names_the_argument_that_made_it():
    """One check (``linattn.check.finite_result``) where a finite input gives a result beyond float64: the exact test
    error, the training energy, the layer output, the in-distribution error and the eigen-coordinate error raise a
    ValueError naming the culprit instead of returning inf or NaN."""
    import spectra
    from linattn import attention, pools, sampling

    pb = linattn.Problem(3, 4, 0.1)
    data = pb.sample(6, rng=0)
    cases = [(lambda: pb.test_error(1e200 * np.eye(3)), "Gamma"),
             (lambda: pb.test_error(np.zeros((3, 3)), v=np.full(3, 1e200)), "v"),
             (lambda: linattn.Problem(3, 4, link="tanh").test_error(1e200 * np.eye(3)), "Gamma"),
             (lambda: linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25]).test_error(1e200 * np.eye(3)), "Gamma"),
             (lambda: linattn.train_energy(data, 1e200 * np.eye(3), 0.1), "Gamma"),
             (lambda: linattn.train_energy(data, 10 * np.eye(3), 1e308), "lam"),
             (lambda: attention.forward(1e200 * sampling.sample_tokens(pb, 2, rng=0).embed(), np.eye(4)), "Z"),
             (lambda: pools.idg_error(pb, np.full((2, 3), 1e200), 0.1 * np.eye(3)), "tasks"),
             (lambda: spectra.eigensystem(data, pb).test_error(np.full(6, 1e200)), "a")]
    for call, name in cases:
        with pytest.raises(ValueError, match=f"^{name} must be small enough"):
            call()
    assert np.isfinite(pb.test_error(1e10 * np.eye(3)))          # large but representable: a value
