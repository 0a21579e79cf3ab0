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
    import dynamics._ode

    monkeypatch.setattr(dynamics._ode, "MAX_EVALUATIONS", 2000)
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
             (lambda: pools.idg_error(pb, np.full((2, 3), 1e200), 0.1 * np.eye(3)), "pool"),
             (lambda: spectra.eigensystem(data, pb).test_error(np.full(6, 1e200)), "a")]
    for call, name in cases:
        with pytest.raises(ValueError, match=f"^{name} must be small enough"):
            call()
    assert np.isfinite(pb.test_error(1e10 * np.eye(3)))          # large but representable: a value


# ----------------------------------------------------------------------------- third adversarial pass
def test_a_link_that_fails_or_leaves_float64_is_refused_by_name():
    """A callable link's own exception, a degree that is not a decimal integer, and values whose fourth powers leave
    float64 (the moments would be 0 or inf: teacher_norm2 divided 0 by 0) are ValueErrors naming the link."""
    for link, words in ((lambda z: 1 / 0, "raised ZeroDivisionError"), (lambda z: z + "a", "raised UFuncTypeError"),
                        (lambda z: 1e-200 * z, "magnitude between"), (lambda z: 1e200 + 0 * z, "magnitude between"),
                        ("hermite:\u00b2", "k an integer"), ("hermite:" + "9" * 5000, "k an integer")):
        with pytest.raises(ValueError, match=f"^link must .*{words}"):
            linattn.Problem(3, 4, link=link)
    with pytest.raises(ValueError, match="^noise must be > 0 when the link is 0"):
        linattn.Problem(3, 4, link=lambda z: 0 * z)
    assert linattn.Problem(3, 4, 0.1, link=lambda z: 0 * z).teacher_norm2 == 0.0


def test_radial_moments_converge_at_large_D():
    """The task-norm rule covers the window ±40/√D around ρ = 1 (tanh at D = 10⁷ was refused as not converged): the
    moments tend to the D → ∞ values, μ₁² for E_r φ₁² up to O(1/D) = 1e-7."""
    mu1 = linattn.links.as_link("tanh").hermite.mu1
    assert linattn.links.radial_moments("tanh", 10**7).phi1_sq == pytest.approx(mu1**2, abs=1e-6)


def test_factorized_products_that_overflow_name_their_argument():
    par = linattn.factorized.Parametrization("value_kq", 3)
    big = np.full(par.n_params, 1e200)
    for call, name in ((lambda: par.init(1e300, rng=0), "scale"), (lambda: par.gamma(big), "theta"),
                       (lambda: par.conserved(big), "theta"), (lambda: par.pullback(big, 1e200 * np.eye(3)), "theta")):
        with pytest.raises(ValueError, match=f"^{name} must be small enough"):
            call()
    with pytest.raises(ValueError, match="^test must be an array of the shape of train"):
        linattn.relative_gap([1.0, 2.0], [1.0, 2.0, 3.0])


def test_marchenko_pastur_transform_near_zero():
    """m(z) from the root without cancellation: at q = 1/2 (no atom) m(z) = 1/(1 − q) + z/(1 − q)³ + O(z²) (the
    earlier form gave 2.0000007 at z = 1e-10 and −4 − 1e300 i at z = 1e-300 i); z = 0 is refused where it is the
    atom's pole (q > 1) or the divergent edge (q = 1)."""
    from spectra import mp

    for z in (0.0, 1e-300j, 1e-10, -1e-10):
        assert abs(mp.stieltjes(z, 0.5) - (2.0 + 8.0 * z)) < 1e-15, z
    assert mp.stieltjes(1e-300j, 0.5).imag >= 0.0
    for q in (1.0, 2.0):
        with pytest.raises(ValueError, match="^z must be"):
            mp.stieltjes(0.0, q)


def test_block_resolvent_near_the_zero_atom():
    """P < M: m(z) ≈ −(1 − P/M)/z near the atom's pole, resolved down to |z| = Z_MIN = 1e-20; closer (it returned
    m(i·1e-15) for z = 0 and z = 1e-300) is refused naming z. Real z on the support is the limit z + i0 in
    data_transforms too (it was refused naming its internal L)."""
    import spectra
    from spectra.resolvent import Z_MIN

    law = spectra.prompt_law(linattn.Problem(3, 4, 0.1), law="mp")
    for z in (0.0, 1e-300):
        with pytest.raises(ValueError, match="^z must be complex numbers with \\|z\\| >= 1e-20"):
            spectra.block_resolvent([z], 6.0, law)
    m = spectra.block_resolvent([Z_MIN, -Z_MIN, 1j * Z_MIN], 6.0, law).m
    assert np.allclose(m * np.array([Z_MIN, -Z_MIN, 1j * Z_MIN]), -1.0 / 3.0, rtol=1e-12, atol=0)
    x = np.array([0.5, 2.0])
    on, above = spectra.data_transforms(x, 6.0, law), spectra.data_transforms(x + 1e-9j, 6.0, law)
    assert np.allclose(on.T, above.T, rtol=1e-7) and np.all(on.T.imag > 0)       # O(η) = 1e-9 apart


def test_averaged_curves_at_extreme_decay_and_time():
    """λ = 1e300 gives E_g(Γ = 0) (the block overlaps overflowed to NaN); t = 1e100 at λ = 0 is the long-time limit
    (the poles s_k/τ reached the zero atom: SystemError); a spread or a decay beyond float64 names its argument."""
    import dynamics

    pb = linattn.Problem(3, 4, 0.1)
    assert np.allclose(dynamics.averaged_curves(pb, 6, 1e300, [1.0], law="mp").test, pb.test_error(np.zeros((3, 3))),
                       rtol=1e-12)
    late = dynamics.averaged_curves(pb, 6, 0.0, [1e6, 1e100], law="mp").test
    assert abs(late[1] - late[0]) < 1e-9 * late[0]          # converged at t = 1e6 (measured: 1e-13)
    with pytest.raises(ValueError, match="^init must be small enough"):
        dynamics.averaged_curves(pb, 6, 0.1, [1.0], init=1e300, law="mp")
    with pytest.raises(ValueError, match="^lam must be small enough"):
        dynamics.averaged_curves(pb, 6, 1.7e308, [1.0], law="mp")


def test_spectral_tabulation_and_matvec_failures_are_named():
    import spectra

    pb = linattn.Problem(3, 4, 0.1)
    for alpha in (1e-300, 1e8):
        with pytest.raises(ValueError, match="^alpha must be a sample ratio whose continuous spectrum"):
            spectra.support_edges(alpha, pb, law="mp")
    for matvec, words in ((lambda v: 1 / 0, "raised ZeroDivisionError"), (lambda v: v * np.nan, "non-finite"),
                          (lambda v: np.ones(3), "shape"), (lambda v: v + 0j, "complex")):
        with pytest.raises(ValueError, match=f"^matvec must be .*{words}"):
            spectra.matrix_free.lanczos_quadrature(matvec, 4, 3, rng=0)


def test_staged_dynamics_name_their_arguments():
    import dynamics

    pb = linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25])
    with pytest.raises(ValueError, match="^modes must be small enough"):
        dynamics.mode_loss(pb, [1e200, 0.0, 0.0])
    with pytest.raises(ValueError, match="^spectrum must be eigenvalues in"):
        dynamics.saddle_losses([1e300, 1.0], 31)
    par = linattn.factorized.Parametrization("value_kq", 3)
    # the library's own diagnosis, whatever scipy's words ("Unexpected istate in LSODA" in scipy 1.18, "Repeated
    # convergence failures" in 1.17): depending on the solver's steps the state overflows (scipy 1.10) or stays
    # finite and the integrator stops short of the last time (1.17); either way the message names the flow, the
    # time it did not reach and the times to check
    with pytest.raises(linattn.ConvergenceError, match="^mean_flow: the integrator.* before t = 1e\\+300") as info:
        dynamics.mean_flow(pb, par, par.init(0.1, 0), [0.0, 1e300])
    assert "times" in str(info.value) and "LSODA" not in str(info.value)


def test_rolling_autocorrelation_is_scale_free():
    s = np.sin(np.arange(20.0))
    ref = diagnostics.rolling_autocorrelation(s, 8)
    for k in (1e300, 1e-300):
        assert np.allclose(diagnostics.rolling_autocorrelation(k * s, 8), ref, rtol=0, atol=1e-15)
    assert not np.any(diagnostics.rolling_autocorrelation(3.0 * np.arange(10.0) + 1.0, 5))   # a line: exactly 0


@pytest.mark.filterwarnings("ignore::UserWarning")        # torch's deprecation notes on quantized and complex32
def test_torch_checkpoints_are_read_exactly_or_refused_by_file_and_dtype(tmp_path):
    """bfloat16 and float8 widen exactly to float32, sparse layouts are made dense; quantized and complex32 tensors
    are refused naming the file and the dtype (they raised TypeError); a missing weight name is a ValueError."""
    torch = pytest.importorskip("torch")
    w = torch.tensor([[1.5, -2.25], [3.0, 0.09375]])
    for k, t in enumerate((w.to(torch.bfloat16), w.to(torch.float8_e4m3fn), w.to_sparse(), w.to_sparse_csr())):
        d = tmp_path / f"ok{k}"
        d.mkdir()
        torch.save({"W": t}, d / "step_1.pt")
        assert np.array_equal(diagnostics.load_checkpoints(str(d))["W"][0], w.numpy())
    for k, (t, words) in enumerate(((torch.quantize_per_tensor(w, 0.1, 0, torch.qint8), "quantized tensor of dtype "
                                     "torch.qint8"), (w.to(torch.complex32), "complex, dtype torch.complex32"))):
        d = tmp_path / f"bad{k}"
        d.mkdir()
        torch.save({"W": t}, d / "step_1.pt")
        with pytest.raises(ValueError, match=f"^source must be .*{words}.*step_1.pt"):
            diagnostics.load_checkpoints(str(d))
    with pytest.raises(ValueError, match="^name must be one of the weight names"):
        diagnostics.load_checkpoints(str(tmp_path / "ok0"))["nope"]


def test_validation_statistics_and_simulators_name_their_arguments():
    import validation

    x = np.random.default_rng(0).standard_normal((2, 50))
    ref = validation.mean_and_se(x)
    for k in (1e300, 1e-300):
        est = validation.mean_and_se(k * x)
        assert est.mean / k == pytest.approx(ref.mean, rel=1e-14) and est.se / k == pytest.approx(ref.se, rel=1e-14)
        assert np.allclose(validation.autocorrelation(k * x), validation.autocorrelation(x), rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="^X must be small enough"):
        validation.hermite_features(np.full((2, 3), 1e200))
    pb = linattn.Problem(3, 4, 0.1)
    t = linattn.sampling.sample_tokens(pb, 5, rng=0)
    for kw, name in ((dict(n_steps=3, lr=0.01, record=[1.5]), "record"), (dict(n_steps=3, lr=0.01, record=[5]),
                     "record"), (dict(n_steps=2000, lr=1e3, record=[2000]), "lr")):
        with pytest.raises(ValueError, match=f"^{name} must be"):
            validation.attention_gradient_descent(t.embed(), t.yq, 0.1, **kw)
    with pytest.raises(ValueError, match="^init_sd must be small enough"):
        validation.descent_from_random_inits(pb.sample(6, rng=0), pb, 0.1, [0, 3], 0.01, 1e300, 2, rng=0)
    with pytest.raises(ValueError, match="^span must be small enough"):
        validation.rank_dynamics([1.0, 0.5], 5, span=1e300, lr=0.1, batch=4, n_chains=1, record=5, n_grid=16)
    with pytest.raises(ValueError, match="^train_mean must be an array of shape"):
        validation.boundary_from_means([1.0, 10.0], [0.1], [1.0, 0.2])
    with pytest.raises(ValueError, match=r"^langevin_kw must be .*\(not: \['bogus'\]\)"):
        validation.stationary_sweep(pb, P_theory=[5.0], P_exact=[5], n_exact=2, P_sim=[20], n_sim=2,
                                    langevin_kw=dict(bogus=1))


def test_remaining_replica_and_flow_cases_name_their_argument():
    """The last cases of the adversarial pass (issue 26): each names the argument at fault."""
    import dynamics
    pb = linattn.Problem(3, 4, 0.1)
    with pytest.raises(ValueError, match="rho"):
        replica.rs_functional(pb, 5, 100, 0.1, rho=1e300, norm2=[1e301], Delta=[1.0])
    for bad in ([], [-1.0]):
        with pytest.raises(ValueError, match="P_values"):
            replica.stationary_curve(pb, bad, np.inf, 0.1)
    with pytest.raises(ValueError, match="pool"):
        replica.stationary(linattn.Problem(3, 4, 0.1, tasks=2), 5, np.inf, 0.1, pool=np.zeros((2, 3)))
    d = pb.sample(6, rng=0)
    zero = linattn.Prompts(s=d.s, xq=d.xq, yq=np.zeros(6), y2=d.y2)
    with pytest.raises(ValueError, match="data"):
        dynamics.long_time_limit(zero, pb, 0.1)


def test_ridge_at_a_vanishing_pair_reports_no_certificate():
    """λ = (1e-300, 1e-300) on the CG route: the solution is computed, and its certified bound, beyond float64, is
    reported as inf (certified False) instead of an OverflowError."""
    pb = linattn.Problem(3, 4, 0.1)
    r = replica.ridge(pb.sample(20, rng=0), pb, (1e-300, 1e-300), "full")
    assert np.isfinite(r.test) and r.test_bound == np.inf and not r.certified
