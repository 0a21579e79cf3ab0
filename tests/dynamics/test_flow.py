"""Exact gradient flow / descent per dataset (rungs 1, 2, 5)."""
import numpy as np
import pytest
from helpers import assert_mean, assert_refused, name_as_word, name_not_within_letters, refusals

import dynamics
import linattn
import spectra
from linattn import _attention as attention
from linattn import _sampling as sampling
from validation import attention_gradient_descent


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [9, 60])   # Gram path (P < M) and dense path
@pytest.mark.parametrize("link", ["linear", "relu"])   # nonlinear labels: the energy is still quadratic
def test_closed_form_matches_explicit_descent(model, P, link, rng):
    pb = linattn.Problem(4, 6, 0.3, link=link)
    data = pb.sample(P, rng)
    M, lam = pb.n_params(model), 0.03
    F = data.features(model)
    A = F.T @ F / P + lam * np.eye(M)
    b = F.T @ data.yq / P
    lr = 1.5 / np.linalg.eigvalsh(A).max()
    th0 = 0.4 * rng.standard_normal(M)
    steps = np.array([0, 1, 7, 100, 1000])
    cv = dynamics.gradient_descent(data, pb, lam, steps, lr, init=th0, model=model, return_params=True)
    th, ref = th0.copy(), {}
    for n in range(1001):
        if n in steps:
            ref[n] = th.copy()
        th = th - lr * (A @ th - b)
    for i, n in enumerate(steps):
        G, v = linattn.unpack(ref[n], 4, model)
        assert np.max(np.abs(cv.params[i] - ref[n])) < 1e-11
        assert cv.train[i] == pytest.approx(linattn.train_energy(data, G, lam, v), abs=1e-12)
        assert cv.test[i] == pytest.approx(pb.test_error(G, v), abs=1e-12)


def test_attention_network_follows_closed_form(rng):
    """Gradient descent on all of W through the forward pass = closed form (full model)."""
    pb = linattn.Problem(5, 12, 0.2)
    tok = sampling.sample_tokens(pb, 40, rng)
    Z, data = tok.embed(), tok.prompts()
    lam = 0.02
    es = spectra.eigensystem(data, pb, "full")
    lr = 1.0 / (es.lambda_max + lam)
    W0 = 0.3 * rng.standard_normal((6, 6))
    run = attention_gradient_descent(Z, data.yq, lam, 1000, lr, W0=W0, record=[0, 10, 100, 1000])
    th0 = linattn.pack(W0[:5, :5], W0[5, :5])
    cv = dynamics.gradient_descent(es, pb, lam, run.steps, lr, init=th0, model="full", return_params=True)
    for i, n in enumerate(run.steps):
        W11, W12, W21, W22 = attention.blocks(run.W[i])
        assert np.max(np.abs(linattn.pack(W11, W21) - cv.params[i])) <= 1e-9
        # W12 and W22: zero loss gradient, only weight decay
        assert np.allclose(W12, (1 - lr * lam) ** n * W0[:5, 5], rtol=1e-12, atol=1e-15)
        assert W22 == pytest.approx((1 - lr * lam) ** n * W0[5, 5], rel=1e-12)
    assert run.loss_gradient_W12_W22 == 0.0


def test_flow_is_the_small_step_limit_of_descent(rng):
    """|E^GD(n = T/η) − E^flow(T)| = O(η): halving η halves the gap."""
    pb = linattn.Problem(5, 20)
    es = spectra.eigensystem(pb.sample(30, rng), pb, "full")
    lam, T = 0.01, 20.0
    flow = dynamics.gradient_flow(es, pb, lam, [T], model="full")
    gaps = []
    for eta in (0.2, 0.1, 0.05, 0.025):
        gd = dynamics.gradient_descent(es, pb, lam, [int(round(T / eta))], eta, model="full")
        gaps.append(abs(gd.test[0] - flow.test[0]))
    ratios = np.array(gaps[:-1]) / np.array(gaps[1:])
    assert np.all(np.abs(ratios - 2.0) < 0.15), ratios


@pytest.mark.parametrize("model, P, lam", [("reduced", 8, 0.05), ("reduced", 8, 0.0), ("full", 40, 0.02),
                                           ("full", 8, 0.0)])
def test_random_init_mean_and_sd_against_monte_carlo(model, P, lam, rng):
    """Exact mean and s.d. over θ0 ~ N(0, σ0² I) against 2000 sampled initialisations."""
    pb = linattn.Problem(4, 6, 0.3)
    es = spectra.eigensystem(pb.sample(P, rng), pb, model)
    t, s0, n = np.array([0.0, 0.7, 5.0, 60.0]), 0.6, 2000
    exact = dynamics.gradient_flow(es, pb, lam, t, init=s0, model=model)
    samples = np.array([[dynamics.gradient_flow(es, pb, lam, t, init=th, model=model).train,
                         dynamics.gradient_flow(es, pb, lam, t, init=th, model=model).test]
                        for th in s0 * rng.standard_normal((n, es.M))])
    for k in range(t.size):
        assert_mean(samples[:, 0, k], exact.train[k], k=3.0, label=f"train mean t={t[k]}")
        assert_mean(samples[:, 1, k], exact.test[k], k=3.0, label=f"test mean t={t[k]}")
        # the sample s.d. of n Gaussian-quadratic-form draws has relative s.e. ≈ √((κ−1)/(4n)),
        # κ the kurtosis (≤ 15 for chi-square-like forms): 4 standard errors ≈ 0.17 at n = 2000
        for j, sd in ((0, exact.train_sd[k]), (1, exact.test_sd[k])):
            x = samples[:, j, k]
            kurt = np.mean((x - x.mean()) ** 4) / x.var() ** 2
            tol = 4 * np.sqrt(max(kurt - 1, 0.1) / (4 * n))
            assert x.std(ddof=1) == pytest.approx(sd, rel=tol)


@pytest.mark.parametrize("model, P, lam", [("reduced", 9, 0.0), ("full", 40, 0.02), ("full", 12, 0.01)])
def test_structured_flow_against_monte_carlo(model, P, lam, rng):
    """Structured tasks (rank-2 S in D = 4, a pool of 3 tasks): the exact mean and s.d. of the test error (fresh tasks
    from N(0, S)) and the means of test_odg (isotropic tasks of the same power) and test_idg (the pool) over
    θ0 ~ N(0, σ0² I), against 2000 sampled initialisations, each flowed by a dense eigendecomposition of A and scored
    with the exact errors of the parameters (the formula of pb.test_error, pools.task_error, pools.idg_error, from the
    laws' moments; checked against them on the last sample): means within 3 s.e.,
    the s.d. within 4 standard errors of a sample s.d. (kurtosis-aware, as the isotropic test); the long-time limit
    is the ridge solution (replica.ridge)."""
    import replica
    from linattn import pools
    from linattn._task_covariance import gaussian_moments
    from linattn._task_moments import error_from_moments

    D = 4
    pb = linattn.Problem(D, 6, 0.3, tasks=3, task_covariance=pools.low_rank_covariance(D, 2, rng=2))
    data = pb.sample(P, rng)
    t, s0, n = np.array([0.0, 2.0, 40.0]), 0.4, 2000
    exact = dynamics.gradient_flow(data, pb, lam, t, init=s0, model=model)
    F = data.features(model)
    g, V = np.linalg.eigh(F.T @ F / P + lam * np.eye(F.shape[1]))
    b = V.T @ (F.T @ data.yq / P)
    star = np.divide(b, g, out=np.zeros_like(b), where=g > 1e-10 * g[-1])     # the min-norm part at λ = 0
    laws = (gaussian_moments(pb), gaussian_moments(pb, "isotropic"), pools.task_moments(pb, data.pool))
    errors = [lambda G, v, mo=mo: error_from_moments(pb, mo, G, v) for mo in laws]     # pools.task_error, idg_error
    samples = np.empty((n, 3, t.size))
    for i, th in enumerate(s0 * rng.standard_normal((n, F.shape[1]))):
        for k, tk in enumerate(t):
            d = np.exp(-g * tk)
            G, v = linattn.unpack(V @ (d * (V.T @ th) + (1 - d) * star), D, model)
            samples[i, :, k] = [f(G, v) for f in errors]
    assert samples[-1, :, -1] == pytest.approx([pb.test_error(G, v), pools.task_error(pb, G, v, task_covariance=
                                                "isotropic"), pools.idg_error(pb, data.pool, G, v)], rel=1e-13)
    for k in range(t.size):
        for j, mean in enumerate((exact.test[k], exact.test_odg[k], exact.test_idg[k])):
            assert_mean(samples[:, j, k], mean, k=3.0, label=f"error {j} t={t[k]}")
        x = samples[:, 0, k]
        kurt = np.mean((x - x.mean()) ** 4) / x.var() ** 2
        assert x.std(ddof=1) == pytest.approx(exact.test_sd[k], rel=4 * np.sqrt(max(kurt - 1, 0.1) / (4 * n)))
    if lam > 0:
        lim, sol = dynamics.long_time_limit(data, pb, lam, model), replica.ridge(data, pb, lam, model)
        for name in ("test", "test_odg", "test_idg"):
            assert getattr(lim, name) == pytest.approx(getattr(sol, name), rel=1e-9)


def test_long_time_limit_and_min_norm(rng):
    pb = linattn.Problem(4, 6, 0.2)
    data = pb.sample(10, rng)  # P < M = 16
    es = spectra.eigensystem(data, pb)
    lim = dynamics.long_time_limit(es, pb, 0.0)
    F = data.features()
    assert np.allclose(lim.theta, np.linalg.pinv(F) @ data.yq, atol=1e-10)  # min-norm interpolant
    assert lim.train == 0.0 and lim.gap == np.inf
    th0 = rng.standard_normal(16)
    lim0 = dynamics.long_time_limit(es, pb, 0.0, init=th0)
    null = th0 - np.linalg.pinv(F) @ (F @ th0)
    assert np.allclose(lim0.theta, lim.theta + null, atol=1e-10)   # the null-space part stays
    ridge = dynamics.long_time_limit(es, pb, 0.1)
    assert np.allclose(ridge.theta, np.linalg.solve(F.T @ F / 10 + 0.1 * np.eye(16), F.T @ data.yq / 10))
    G, _ = linattn.unpack(ridge.theta, 4)
    assert ridge.contrast == pytest.approx(linattn.contrast_ratio(G))


def test_bad_input(rng):
    pb = linattn.Problem(3, 4)
    data = pb.sample(5, rng)
    with pytest.raises(ValueError, match="times"):
        dynamics.gradient_flow(data, pb, 0.1, [-1.0, 2.0])
    with pytest.raises(ValueError, match="lam"):
        dynamics.gradient_flow(data, pb, -0.1, [1.0])
    with pytest.raises(ValueError, match="gamma"):
        dynamics.gradient_flow(data, pb, 0.1, [1.0], gamma=0.0)
    with pytest.raises(ValueError, match="init"):
        dynamics.gradient_flow(data, pb, 0.1, [1.0], init=np.ones(5))
    with pytest.raises(ValueError, match="init"):
        dynamics.gradient_flow(data, pb, 0.1, [1.0], init=-1.0)
    es = spectra.eigensystem(data, pb)
    with pytest.raises(ValueError, match="lr"):
        dynamics.gradient_descent(es, pb, 0.1, [10], lr=2.0 / (es.lambda_max + 0.1))
    with pytest.raises(ValueError, match="steps"):
        dynamics.gradient_descent(es, pb, 0.1, [-1], lr=0.1)
    with pytest.raises(ValueError, match="model"):
        dynamics.gradient_flow(es, pb, 0.1, [1.0], model="full")


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)
RAGGED = [[1.0], [1.0, 2.0]]


def _data():
    return PB.sample(12, rng=0)


REFUSED = refusals(name_as_word, [
    ("gradient-flow", lambda: dynamics.gradient_flow(DATA, PB, 0.1, np.zeros(10**9), return_params=True), "times"),
    ("gradient-descent-steps", lambda: dynamics.gradient_descent(
        linattn.Problem(20, 8, 0.1).sample(50, rng=0), linattn.Problem(20, 8, 0.1), 0.1,
        np.zeros(2 * 10**7, dtype=np.int64), 0.01), "steps"),
]) + refusals(name_not_within_letters, [
    # a ragged nested list reached np.asarray / np.atleast_1d / np.ndim before the check: numpy's "setting an array
    # element with a sequence" named no argument (check.counts, check.block_lambdas, np.atleast_*d at the callers)
    ("gradient-descent-steps-ragged", lambda: dynamics.gradient_descent(_data(), PB, 0.1, RAGGED, 0.1), "steps"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_empty_two_dimensional_times_are_named():
    """gradient_flow with an empty 2-d times raised numpy's 'zero-size array to reduction operation' while writing
    its own refusal."""
    pb = linattn.Problem(3, 4, 0.1)
    with pytest.raises(ValueError, match=r"^dynamics\.gradient_flow: times must be a 1-d array"):
        dynamics.gradient_flow(pb.sample(5, rng=0), pb, 0.01, np.zeros((0, 2)))


def test_ragged_init_of_the_long_time_limit_is_named():
    """long_time_limit with a ragged init raised numpy's 'setting an array element with a sequence'."""
    pb = linattn.Problem(3, 4, 0.1)
    with pytest.raises(ValueError, match=r"^dynamics\.long_time_limit: init must be"):
        dynamics.long_time_limit(pb.sample(5, rng=0), pb, 0.01, init=[[1.0], [1.0, 2.0]])
