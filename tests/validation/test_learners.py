"""Kernel and feature learners (issue "Nonlinear targets", kernel vs feature learner)."""
import numpy as np
import pytest
from helpers import assert_mean

import dynamics
import linattn
from linattn import sampling
from validation import feature_learner, hermite_features, kernel_learner
from validation.simulators import learners


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
    run = feature_learner(pb, 400, 1e-8, rng=2, n_knots=0, n_test=100, tol=1e-14, max_steps=200_000)
    data = pb.sample(400, np.random.default_rng(2))
    X = np.hstack([np.ones((400, 1)), data.features()])
    coef, *_ = np.linalg.lstsq(X, data.yq, rcond=None)
    ls = 0.5 * np.mean((data.yq - X @ coef) ** 2)
    assert run.converged
    assert run.train == pytest.approx(ls, rel=1e-4)


def test_learners_are_reproducible():
    pb = linattn.Problem(3, 4, 0.0, link="relu")
    a, b = feature_learner(pb, 50, 0.01, rng=7, n_test=500), feature_learner(pb, 50, 0.01, rng=7, n_test=500)
    assert a.test == b.test and np.array_equal(a.params["readout"], b.params["readout"])
    c, d = kernel_learner(pb, 50, 0.01, rng=7, n_test=500), kernel_learner(pb, 50, 0.01, rng=7, n_test=500)
    assert c.test == d.test


def test_learners_with_a_pool_and_another_context_length():
    """Both learners accept a task pool (pb.tasks = K) and N_test: the kernel learner's errors are exact
    (kernel_test_error; equal to pb.test_error(..., features="hermite2", tasks=pool, N_test=)), the feature learner's
    are Monte Carlo with a standard error; memorising a pool of 3 tasks makes the in-distribution error the smaller."""
    import linattn
    from validation.simulators.learners import feature_learner, kernel_learner

    pb = linattn.Problem(4, 8, 0.1, link="tanh", tasks=3)
    k = kernel_learner(pb, 300, 0.01, rng=0, N_test=16)
    G, pool = k.params["Gamma"], k.params["pool"]
    assert k.test == pb.test_error(G, features="hermite2", N_test=16)
    assert k.test_idg == pb.test_error(G, features="hermite2", tasks=pool, N_test=16)
    assert k.test_idg < k.test and k.test_se == 0.0
    f = feature_learner(pb, 300, 0.01, rng=0, N_test=16, n_test=4000, max_steps=2000)
    assert f.test_idg is not None and f.test_idg_se > 0 and f.test_idg < f.test
