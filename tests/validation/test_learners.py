"""Kernel and feature learners (kernel vs feature learner)."""
import numpy as np
import pytest
from helpers import assert_mean, assert_refused, name_as_word, name_not_within_letters, refusals

import dynamics
import linattn
import validation
from linattn import _sampling as sampling
from validation import binned_readout_error, feature_learner, hermite_features, kernel_learner
from validation.simulators import _learner_sims as learners


def test_hermite_features_are_orthonormal(rng):
    """E[φ(x) φ(x)ᵀ] = I under x ~ N(0, I): every entry within 4 s.e. of the identity."""
    phi = hermite_features(rng.standard_normal((200_000, 3)))
    assert phi.shape[1] == 3 + 6
    for i in range(phi.shape[1]):
        for j in range(i + 1):
            assert_mean(phi[:, i] * phi[:, j], float(i == j), label=f"E φ_{i} φ_{j}")


def test_linear_kernel_learner_is_the_library_ridge():
    """φ(x) = x: the kernel learner is the reduced model; its ridge solution, training loss and exact
    test error equal dynamics.long_time_limit on the same prompts (to 1e-9)."""
    pb = linattn.Problem(4, 6, 0.2, link="tanh")
    run = kernel_learner(pb, 300, 0.05, rng=3, features="linear")
    tok = sampling.sample_tokens(pb, 300, np.random.default_rng(3))
    ref = dynamics.long_time_limit(tok.prompts(), pb, 0.05, model="reduced")
    assert run.train == pytest.approx(ref.train, rel=1e-9)
    assert run.test == pytest.approx(ref.test, rel=1e-9)


def test_kernel_learner_monte_carlo_matches_exact_error_on_the_linear_block(rng):
    """A Γ supported on the linear block of φ predicts like the linear model, so the kernel learner's
    Monte-Carlo test error must equal pb.test_error of that block (4 s.e.)."""
    pb = linattn.Problem(3, 5, 0.1, link="relu")
    G = 0.3 * np.eye(3) + 0.05 * rng.standard_normal((3, 3))
    F = 3 + 6
    Gk = np.zeros((F, F))
    Gk[:3, :3] = G
    data = learners._kernel_prompts(pb, 100_000, rng, "hermite2")
    assert_mean(0.5 * (data.yq - data.predict(Gk)) ** 2, pb.test_error(G), label="E_g")


def test_feature_learner_gradient():
    rng = np.random.default_rng(0)
    H, y = rng.standard_normal((40, 9)), rng.standard_normal(40)
    knots = np.array([-0.5, 0.3])
    g, a = 0.3 * rng.standard_normal(9), rng.standard_normal(4)
    gg, ga = np.empty(9), np.empty(4)
    learners._loss_grad(H, y, knots, g, a, 0.1, gg, ga)
    f = lambda gv, av: learners._loss_grad(H, y, knots, gv, av, 0.1, np.empty(9), np.empty(4))   # noqa: E731
    h = 1e-6
    num_g = [(f(g + h * e, a) - f(g - h * e, a)) / (2 * h) for e in np.eye(9)]
    num_a = [(f(g, a + h * e) - f(g, a - h * e)) / (2 * h) for e in np.eye(4)]
    assert np.allclose(gg, num_g, atol=1e-6) and np.allclose(ga, num_a, atol=1e-6)


def test_feature_learner_reaches_the_convex_optimum_with_a_linear_readout():
    """With no knots the readout is a₀ + a₁ t: the product a₁Γ is a linear model with an intercept,
    and (λ → 0) descent must reach its least-squares training loss (to 1e-4 relative), although the
    parametrisation is not convex."""
    pb = linattn.Problem(3, 8, 0.3, link="sign")
    run = feature_learner(pb, 400, 1e-8, rng=2, n_knots=0, n_test_prompts=100, tol=1e-14, max_steps=200_000)
    data = pb.sample(400, np.random.default_rng(2))
    X = np.hstack([np.ones((400, 1)), data.features()])
    coef, *_ = np.linalg.lstsq(X, data.yq, rcond=None)
    ls = 0.5 * np.mean((data.yq - X @ coef) ** 2)
    assert run.converged
    assert run.train == pytest.approx(ls, rel=1e-4)


def test_learners_are_reproducible():
    pb = linattn.Problem(3, 4, 0.0, link="relu")
    a, b = feature_learner(pb, 50, 0.01, rng=7, n_test_prompts=500), feature_learner(pb, 50, 0.01, rng=7,
                                                                                     n_test_prompts=500)
    assert a.test == b.test and np.array_equal(a.params["readout"], b.params["readout"])
    c, d = kernel_learner(pb, 50, 0.01, rng=7), kernel_learner(pb, 50, 0.01, rng=7)
    assert c.test == d.test


def test_learners_with_a_pool_and_another_context_length():
    """Both learners accept a task pool (pb.tasks = K) and N_test: the kernel learner's errors are exact
    (kernel_test_error; equal to kernel_test_error(..., features="hermite2", pool=pool, N_test=)), the feature learner's
    are Monte Carlo with a standard error; memorising a pool of 3 tasks makes the in-distribution error the smaller."""
    import linattn
    from linattn.kernel_learner import kernel_test_error
    from validation import feature_learner, kernel_learner

    pb = linattn.Problem(4, 8, 0.1, link="tanh", tasks=3)
    k = kernel_learner(pb, 300, 0.01, rng=0, N_test=16)
    G, pool = k.params["Gamma"], k.params["pool"]
    assert k.test == kernel_test_error(pb, G, "hermite2", N_test=16)
    assert k.test_idg == kernel_test_error(pb, G, "hermite2", pool=pool, N_test=16)
    assert k.test_idg < k.test and k.test_se == 0.0
    f = feature_learner(pb, 300, 0.01, rng=0, N_test=16, n_test_prompts=4000, max_steps=2000)
    assert f.test_idg is not None and f.test_idg_se > 0 and f.test_idg < f.test


def test_quantile_knots_bring_the_readout_close_to_optimal():
    """The knot fix: knots at the quantiles of the trained t (two stages) give a lower test error than knots on ±2 s.d.
    of the labels (measured 0.0707 vs 0.0732 at tanh, P = 2000, 3 sets; here one set, the difference ≫ the MC s.e.)."""
    pb = linattn.Problem(6, 12, 0.0, link="tanh")
    new = feature_learner(pb, 2000, 0.01, rng=(6, 2000, 0), n_test_prompts=100_000, second_stage="joint")
    old = feature_learner(pb, 2000, 0.01, rng=(6, 2000, 0), n_test_prompts=100_000, knots="labels",
                          second_stage="joint")
    assert new.converged and old.converged
    assert new.test < old.test - 4 * np.hypot(new.test_se, old.test_se)
    t = learners.quantile_knots(np.arange(100.0), 5)
    assert np.all(np.diff(t) > 0) and t[0] == pytest.approx(9.9) and t[-1] == pytest.approx(89.1)
    with pytest.raises(ValueError, match="knots"):
        feature_learner(pb, 20, 0.01, knots="middle")


def test_feature_test_error_at_another_length_matches_retraining():
    """feature_test_error(run, N_test) evaluates the same trained model as feature_learner(..., N_test=) (same rng for
    the training data: identical Γ and readout), so the two Monte-Carlo errors agree within 4 s.e."""
    from validation.simulators._learner_sims import feature_test_error

    pb = linattn.Problem(4, 8, 0.0, link="relu")
    run = feature_learner(pb, 300, 0.01, rng=5, n_test_prompts=100)
    other = feature_learner(pb, 300, 0.01, rng=5, n_test_prompts=40_000, N_test=32)
    e, se = feature_test_error(pb, run, N_test=32, n_test_prompts=40_000, rng=9)
    assert np.array_equal(run.params["Gamma"], other.params["Gamma"])
    assert abs(e - other.test) < 4 * np.hypot(se, other.test_se)
    with pytest.raises(ValueError, match="in_distribution"):
        feature_test_error(pb, run, in_distribution=True)
    with pytest.raises(ValueError, match="run"):
        feature_test_error(pb, kernel_learner(pb, 50, 0.01, rng=1))


def test_learners_report_section_smoke():
    """Experiment ``learners`` (figure and report section) runs in smoke mode, its result holds finite numbers and the
    report section's 18 rows come from it — per link: the kernel learner's test and training errors, the optimal
    readout of the trained Γ, and the feature learner as trained (test error and training loss at two P, test error at
    N_test = N/4 and 4N); the three figure experiments run in smoke mode in tests/validation/test_cli_figures.py,
    which also checks that their saved data are finite."""
    from validation.experiments import get, run

    r = run("learners", mode="smoke", progress=False)
    for k, v in r.data.to_arrays().items():
        assert np.all(np.isfinite(np.asarray(v, float))), k
    rows = get("learners").checks(r)
    assert len(rows) == 18 and all(c.section == "learners" for c in rows)
    quantities = [c.quantity for c in rows]
    assert sum("as trained, test error" in q for q in quantities) == 8
    assert sum("training loss" in q for q in quantities) == 4
    assert sum("N_test = 4 ≠ N" in q or "N_test = 64 ≠ N" in q for q in quantities) == 4     # smoke: N = 16
    assert not any("KNOWN FAILURE" in q for q in quantities)
    assert get("learners").report_order is not None


def test_trained_row_flags_the_optimal_baseline():
    """A report row of the feature learner as trained passes within 3 s.e. + FEATURE_ACCURACY of its theory and states
    whether the optimal-readout baseline would pass the same criterion."""
    from validation.experiments._learners import FEATURE_ACCURACY, _trained_row

    sim = np.array([0.20, 0.21, 0.19, 0.20])          # mean 0.2, s.e. 0.0041
    row = _trained_row("q", "p", sim, None, 0.2 * (1 + FEATURE_ACCURACY / 2), 0.001, 0.15)
    assert row.passed and "FAILS" in row.rel_error
    row = _trained_row("q", "p", sim, None, 0.15, 0.001, 0.2)
    assert not row.passed and "passes" in row.rel_error


def test_fit_power_law_recovers_a_power_law():
    from validation.experiments._learners_scaling import fit_power_law

    N = np.array([4, 8, 16, 32, 64, 128.0])
    gam, einf, A = fit_power_law(N, 0.1 + 2.0 * N**-0.7)
    assert gam == pytest.approx(0.7, rel=1e-4) and einf == pytest.approx(0.1, rel=1e-3) and A == pytest.approx(2.0,
                                                                                                              rel=1e-3)


def test_gamma_check_resolves_a_different_exponent():
    """The exponent check: simulated points on the theory's own power law give a difference within 3 s.e.; points on
    a power law with γ = 0.4 instead of 0.7 (s.e. 1 %) give a difference of about −0.3, far beyond 3 s.e. — the row
    can fail."""
    from validation.experiments._learners_scaling import gamma_check

    N = np.array([4, 8, 16, 32, 64.0])
    th = 0.1 + 2.0 * N**-0.7
    same = gamma_check(N, th, 0.01 * th, th, 0.001 * th, n_boot=50)
    assert same[0] == pytest.approx(0.7, rel=1e-3) and abs(same[1] - same[0]) <= 3 * same[2]
    other = 0.1 + 2.0 * N**-0.4
    diff = gamma_check(N, other, 0.01 * other, th, 0.001 * th, n_boot=50)
    assert diff[1] == pytest.approx(0.4, rel=1e-2) and abs(diff[1] - diff[0]) > 3 * diff[2]


def test_student_t_widens_the_three_se_for_few_sets():
    from validation.experiments._learners_scaling import student_t

    assert student_t(10**6) == pytest.approx(3.0, abs=0.01)
    assert 4.0 < student_t(6) < 7.0 and student_t(3) > student_t(6)


def _scaling_result(factor=1.0, swap=False):
    """A synthetic ``learners_scaling`` result: simulated errors = ``factor`` × the theory (s.e. 1 %; theory s.e.
    0.1 %) on power laws, and planes whose theories have the feature learner winning (the kernel learner: ``swap``)
    while the simulation has the feature learner winning."""
    import types

    from validation.experiments import get
    from validation.experiments._learners import winner_agreement
    from validation.experiments._learners_scaling import gamma_check

    s = dict(get("learners_scaling").settings("smoke"), n_sets=6, n_sets_memo=6)
    N, Nt = np.array([4, 8, 16, 32.0]), np.array([4, 8, 16.0])
    links = {}
    for name in ("relu", "quad"):
        learners = {}
        for learner, scale in (("kernel", 2.0), ("feature", 1.0)):
            c = {}
            for x, key in ((N, "over_N"), (Nt, "over_N_test")):
                th = scale * (0.1 + x**-0.6)
                c[key], c[f"{key}_se"] = th, 1e-3 * th
                c[f"sim_{key}"], c[f"sim_{key}_se"] = factor * th, 0.01 * th
            th = c["over_N"]
            c["gamma_theory"], c["gamma_sim"], c["gamma_se"] = gamma_check(N, factor * th, 0.01 * th, th, 1e-3 * th,
                                                                           n_boot=20)
            learners[learner] = types.SimpleNamespace(**c)
        k, f = 2.0 * np.ones((4, 3)), np.ones((4, 3))
        planes = {}
        for plane in ("gen", "memo"):
            dec, agr = winner_agreement(np.log(f / k) if swap else np.log(k / f), k, 0.01 * k, f, 0.01 * f)
            planes[plane] = types.SimpleNamespace(decided=dec, agrees=agr)
        links[name] = types.SimpleNamespace(learners=learners, planes=planes)
    d = types.SimpleNamespace(N=N, N_test=Nt, sim_N=N, sim_N_test=Nt, links=links)
    return types.SimpleNamespace(settings=s, data=d)


def test_scaling_report_rows_pass_on_the_theory_and_fail_off_it():
    """The report rows of ``learners_scaling``: simulations equal to the theories pass every row (16); simulations
    30 % off the theories fail the error rows; theories with the winners swapped fail the plane rows."""
    from validation.experiments import get

    exp = get("learners_scaling")
    rows = exp.checks(_scaling_result())
    assert len(rows) == 16 and all(r.passed for r in rows)
    off = exp.checks(_scaling_result(factor=1.3))
    assert all(not r.passed for r in off if "error vs" in r.quantity)
    swapped = exp.checks(_scaling_result(swap=True))
    assert all(not r.passed for r in swapped if r.quantity.startswith("winner"))


def test_scaling_settings_put_the_simulated_cells_on_the_plane():
    """A simulated length off the plane's grid is refused before anything is computed."""
    from validation.experiments import get

    exp = get("learners_scaling")
    with pytest.raises(ValueError, match="must be a value of plane_N"):
        exp.points(exp.settings("smoke", plane_N=[4, 16, 32]))
    with pytest.raises(ValueError, match="must be a value of N_test"):
        exp.points(exp.settings("smoke", sim_N_test=[16]))


@pytest.mark.slow
def test_simulated_winner_agrees_with_the_theory_where_the_margin_is_resolved():
    """Statistical test of the phase diagram: at the quick-mode simulated cells (relu and quad, 3 training sets each),
    wherever the theory's |ln(E_kernel/E_feature)| and the simulation's exceed 2 s.e. of the simulated ratio, the
    winners agree (measured: 8 of 8 cells resolved, 8 agree; the quick mode's simulated cells on a coarser theory
    grid). Swapping the theories' roles must fail."""
    from validation.experiments import get, run
    from validation.experiments._learners import winner_agreement

    coarse = dict(P=[100, 400, 1600, 6400], N=[4, 16, 64], sim=[[0, 2], [1, 1], [1, 3], [2, 2]])   # quick's cells
    smoke = get("learners").presets["smoke"]          # the report's points are not what this test checks
    checks = {k: v for k, v in smoke.items() if k.startswith("check_")}
    r = run("learners", mode="quick", settings=get("learners").settings("quick", **coarse, **checks), progress=False)
    d = r.data
    total = 0
    i, j = d.sim_N_index, d.sim_P_index
    for name in ("relu", "quad"):
        m = d.links[name]
        dec, agr = m.decided, m.agrees
        assert np.all(agr[dec]), name
        total += int(dec.sum())
        swapped = np.log(m.theory_feature[i, j] / m.theory_kernel[i, j])
        dec2, agr2 = winner_agreement(swapped, m.sim_kernel, m.sim_kernel_se, m.sim_feature, m.sim_feature_se)
        assert not np.any(agr2[dec2])
    assert total >= 6


# ----------------------------------------------------------------------------- refusals and extreme arguments
TANH = linattn.Problem(4, 8, 0.0, link="tanh")
TANH_3_6 = linattn.Problem(3, 6, 0.0, link="tanh")
MiB = 1 << 20


REFUSED = refusals(name_as_word, [
    # the argument named
    ("binned-n", lambda: binned_readout_error(TANH, np.eye(4), n=10**6, bins=500), "n", 16 * MiB),
    # the feature learner's step loop under the work guard
    ("feature-learner-max-steps", lambda: validation.feature_learner(TANH, 2000, 1e-6, rng=0, n_test_prompts=1000,
                                                                     max_steps=10**9, tol=1e-300), "max_steps"),
    ("feature-learner-n-test", lambda: validation.feature_learner(linattn.Problem(3, 6, 0.0, link="tanh", tasks=4),
                                                                  20, 0.1, rng=0, n_test_prompts=10**10),
     "n_test_prompts"),
]) + refusals(name_not_within_letters, [
    ("feature-learner-N-test", lambda: validation.feature_learner(TANH_3_6, 30, 0.1, rng=0, max_steps=200,
                                                                  n_test_prompts=1000, N_test=10**12), "N_test"),
    ("binned-bins", lambda: validation.binned_readout_error(TANH_3_6, np.eye(3) * 0.1, n=2000, bins=10**9), "bins"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_feature_test_error_refuses_another_problem():
    """A run trained on relu labels was scored against tanh labels (or another noise, or a pool) without a
    word; the run now carries its problem and feature_test_error names pb. Another length goes through N_test."""
    from validation import feature_learner
    from validation.simulators._learner_sims import feature_test_error

    pb = linattn.Problem(4, 8, 0.0, link="relu")
    run = feature_learner(pb, 200, 0.01, rng=5, n_test_prompts=100, max_steps=200)
    assert run.problem == pb
    for other in (linattn.Problem(4, 8, 0.0, link="tanh"), linattn.Problem(4, 8, 0.5, link="relu"),
                  linattn.Problem(4, 16, 0.0, link="relu"), linattn.Problem(4, 8, 0.0, link="relu", tasks=3)):
        with pytest.raises(ValueError, match="pb"):
            feature_test_error(other, run, n_test_prompts=100)
    e, se = feature_test_error(pb, run, N_test=16, n_test_prompts=100, rng=1)
    assert np.isfinite(e) and se > 0


def test_binned_readout_error_names_a_huge_test_context():
    """binned_readout_error at N_test = 1e12 with a nonlinear link refused naming the sampler's internal pb.N."""
    pb = linattn.Problem(3, 4, 0.1, link="tanh")
    with pytest.raises(ValueError, match=r"^N_test too large"):
        binned_readout_error(pb, 0.3 * np.eye(3), n=2000, bins=10, N_test=10**12)
