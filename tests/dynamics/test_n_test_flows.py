"""Inference context length N_test ≠ training length N in the exact flows (dynamics.gradient_flow, gradient_descent,
long_time_limit) and the dataset-averaged theory (dynamics.averaged_curves)."""
import dataclasses

import numpy as np
import pytest
import scipy.linalg
from helpers import assert_discriminating

import dynamics
import linattn
import replica

TIMES = np.array([0.0, 0.3, 3.0, 30.0, 1e4])
CASES = [(model, lam, tasks, P) for model, lam in (("reduced", 0.0), ("reduced", 0.02), ("full", 0.02),
                                                  ("full", (0.02, 0.1)))
         for tasks in (None, 3) for P in (12, 40)]


def _setting(tasks, P):
    pb = linattn.Problem(4, 6, 0.3, tasks=tasks)
    return pb, pb.sample(P, rng=(7, P))


@pytest.mark.parametrize("model, lam, tasks, P", CASES)
def test_flows_at_another_context_length_are_the_error_of_their_parameters(model, lam, tasks, P):
    """gradient_flow / gradient_descent / long_time_limit with N_test ∈ {2, 15} (D = 4, N = 6) from a deterministic
    θ_0 (with a null-space part when P = 12 < M): ``test`` (and ``test_idg`` with a 3-task pool) equal
    pb.test_error(Γ, v, N_test=) (tasks= the pool) of the returned θ(t) to relative 1e-10 (measured ≤ 1.4e-13);
    ``train``
    is bit-for-bit the training length's; the errors at N differ from the references (the test can fail)."""
    pb, data = _setting(tasks, P)
    M = pb.n_params(model)
    theta0 = 0.3 * np.random.default_rng(1).standard_normal(M)
    D = pb.D
    for Nt in (2, 15):
        runs = [(dynamics.gradient_flow(data, pb, lam, TIMES, init=theta0, model=model, return_params=True, N_test=Nt),
                 dynamics.gradient_flow(data, pb, lam, TIMES, init=theta0, model=model, return_params=True)),
                (dynamics.gradient_descent(data, pb, lam, [0, 1, 10, 100], 0.05, init=theta0, model=model,
                                           return_params=True, N_test=Nt),
                 dynamics.gradient_descent(data, pb, lam, [0, 1, 10, 100], 0.05, init=theta0, model=model,
                                           return_params=True))]
        for cur, base in runs:
            assert cur.N_test == Nt and np.array_equal(cur.train, base.train)
            for i, theta in enumerate(cur.params):
                G, v = linattn.unpack(theta, D, model)
                ref = pb.test_error(G, v, N_test=Nt)
                assert cur.test[i] == pytest.approx(ref, rel=1e-10), (Nt, i)
                assert abs(base.test[i] / ref - 1) > 1e-3
                if tasks:
                    ref_idg = linattn.pools.idg_error(pb, data.pool, G, v, N_test=Nt)
                    assert cur.test_idg[i] == pytest.approx(ref_idg, rel=1e-10), (Nt, i)
                    assert abs(base.test_idg[i] / ref_idg - 1) > 1e-3
        lt = dynamics.long_time_limit(data, pb, lam, model, init=theta0, N_test=Nt)
        G, v = linattn.unpack(lt.theta, D, model)
        assert lt.test == pytest.approx(pb.test_error(G, v, N_test=Nt), rel=1e-10)
        assert lt.gap == linattn.relative_gap(lt.train, lt.test) and lt.N_test == Nt
        if tasks:
            assert lt.test_idg == pytest.approx(linattn.pools.idg_error(pb, data.pool, G, v, N_test=Nt), rel=1e-10)


@pytest.mark.parametrize("model, lam, tasks, P", [c for c in CASES if c[2] is None or c[1] == 0.02])
def test_random_init_spread_at_another_context_length_is_exact(model, lam, tasks, P):
    """θ_0 ~ N(0, σ_0² I) (σ_0 = 0.4): the mean and the s.d. over initialisations of E_g(t) at N_test against the dense
    closed form (θ(t) = m + Lz, L = σ_0 e^{−γAt}, m = (I − e^{−γAt})θ*; E = E_g(m) + ½tr(C_t LLᵀ),
    Var = ½tr((LᵀC_tL)²) + |Lᵀ(C_t m − u)|², C_t = diag(c(N_test), c_v(N_test))), and the mean in-distribution error
    (½tr(C_W LLᵀ) added), relative 1e-10 (measured ≤ 1.9e-12; the reference's expm and lstsq)."""
    pb, data = _setting(tasks, P)
    D, M = pb.D, pb.n_params(model)
    sigma0, Nt = 0.4, 15
    cur = dynamics.gradient_flow(data, pb, lam, TIMES, init=sigma0, model=model, N_test=Nt)
    F = data.features(model)
    lg, lv = (lam, lam) if np.ndim(lam) == 0 else lam
    A = F.T @ F / data.P + np.diag(np.r_[np.full(D * D, lg), np.full(M - D * D, lv)])
    theta_star = np.linalg.lstsq(A, F.T @ data.yq / data.P, rcond=None)[0]      # min-norm at λ = 0
    pbt = dataclasses.replace(pb, N=Nt)
    C = np.diag(np.r_[np.full(D * D, pbt.feature_variance), np.full(M - D * D, pbt.feature_variance_v)])
    u = np.r_[np.eye(D).ravel() / D, np.zeros(M - D * D)]
    for i, t in enumerate(TIMES):
        E = scipy.linalg.expm(-A * t)
        m, L = theta_star - E @ theta_star, sigma0 * E
        G, v = linattn.unpack(m, D, model)
        mean = pb.test_error(G, v, N_test=Nt) + 0.5 * np.trace(C @ L @ L.T)
        Q = L.T @ C @ L
        sd = np.sqrt(0.5 * np.trace(Q @ Q) + np.sum((L.T @ (C @ m - u)) ** 2))
        assert cur.test[i] == pytest.approx(mean, rel=1e-10), i
        assert cur.test_sd[i] == pytest.approx(sd, rel=1e-10), i
        if tasks:
            idg = (linattn.pools.idg_error(pb, data.pool, G, v, N_test=Nt)
                   + 0.5 * np.trace(linattn.pools.idg_metric(pbt, data.pool, model).apply(L @ L.T)))
            assert cur.test_idg[i] == pytest.approx(idg, rel=1e-10), i


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_averaged_long_time_limit_is_the_ridge_theory_at_n_test(model):
    """τ → ∞: averaged_curves(..., N_test=) (poles of the flow filter at complex z) against
    replica.stationary(β = ∞, N_test=) (the real-axis saddle point, a separate code path), relative 1e-9 as at
    N_test = N (tests/dynamics/test_averaged.py); D = 10, N = 100, λ = 0.01, N_test ∈ {10, 400}."""
    pb = linattn.Problem(10, 100)
    for P in (30, 300):
        for Nt in (10, 400):
            cur = dynamics.averaged_curves(pb, P, 0.01, [1e8], model=model, N_test=Nt)
            st = replica.stationary(pb, P, np.inf, 0.01, model, N_test=Nt)
            base = replica.stationary(pb, P, np.inf, 0.01, model)
            assert cur.test[0] == pytest.approx(st.test, rel=1e-9)
            assert abs(base.test / st.test - 1) > 1e-3
            assert cur.train[0] == pytest.approx(st.train, rel=1e-9) and cur.N_test == Nt


def test_averaged_curves_at_n_test_against_exact_dataset_means():
    """Theory vs exact: averaged_curves(..., init=0.3, N_test=10) against the mean of 200 exact per-dataset curves
    gradient_flow(..., init=0.3, N_test=10) (D = 10, N = 100, P = 100, λ = 0.01, reduced model, 7 times), tolerance
    1/M + 3 s.e. (the replica theory's neglected order-parameter fluctuations, as tests/dynamics/test_averaged.py);
    the theory evaluated at the training length (the baseline) is rejected. Measured: the theory within −1.14 … +0.41
    s.e. (≤ 0.5 %) of the exact means; the baseline's test error 141–2446 s.e. off."""
    pb = linattn.Problem(10, 100)
    P, n, Nt = 100, 200, 10
    times = np.logspace(-1, 4, 7)
    runs = [dynamics.gradient_flow(pb.sample(P, rng=(11, P, i)), pb, 0.01, times, init=0.3, N_test=Nt)
            for i in range(n)]
    exact = np.array([[r.train, r.test] for r in runs])
    mean, se = exact.mean(0), exact.std(0, ddof=1) / np.sqrt(n)
    th = dynamics.averaged_curves(pb, P, 0.01, times, init=0.3, N_test=Nt)
    base = dynamics.averaged_curves(pb, P, 0.01, times, init=0.3)
    assert_discriminating(mean, se, np.array([th.train, th.test]),
                          {"N_test ignored": np.array([base.train, base.test])}, tol=1.0 / pb.n_params(),
                          label="N_test = 10")


def test_n_test_none_or_n_is_bit_for_bit_the_training_length():
    """N_test=None and N_test=N run the unchanged code path: identical curves, limits and averaged curves."""
    for tasks in (None, 3):
        pb, data = _setting(tasks, 12)
        for lam, model in ((0.0, "reduced"), (0.02, "full"), ((0.02, 0.1), "full")):
            for fn, args in ((dynamics.gradient_flow, (TIMES,)), (dynamics.gradient_descent, ([0, 5, 50], 0.05))):
                out = [fn(data, pb, lam, *args, init=0.2, model=model, **kw) for kw in ({}, dict(N_test=None),
                                                                                       dict(N_test=pb.N))]
                for cur in out[1:]:
                    for name in ("train", "test", "train_sd", "test_sd", "test_idg"):
                        assert np.array_equal(getattr(cur, name), getattr(out[0], name)), name
            a, b = (dynamics.long_time_limit(data, pb, lam, model, **kw) for kw in ({}, dict(N_test=pb.N)))
            assert (a.train, a.test, a.test_idg, a.gap) == (b.train, b.test, b.test_idg, b.gap)
    pb = linattn.Problem(6, 12)
    a, b = (dynamics.averaged_curves(pb, 50, 0.01, [0.0, 1.0, 100.0], init=0.2, model="full", law="mp", **kw)
            for kw in ({}, dict(N_test=12)))
    assert np.array_equal(a.test, b.test) and np.array_equal(a.train, b.train)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "x", True, np.nan])
def test_bad_n_test_is_refused(bad):
    pb = linattn.Problem(3, 4, 0.1)
    data = pb.sample(6, rng=0)
    calls = [lambda: dynamics.gradient_flow(data, pb, 0.1, [0.0, 1.0], N_test=bad),
             lambda: dynamics.gradient_descent(data, pb, 0.1, [0, 1], 0.01, N_test=bad),
             lambda: dynamics.long_time_limit(data, pb, 0.1, N_test=bad),
             lambda: dynamics.averaged_curves(pb, 6, 0.1, [0.0, 1.0], law="mp", N_test=bad)]
    for call in calls:
        with pytest.raises(ValueError, match="N_test"):
            call()


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_eigensystem_at_context_length_is_the_test_prompts_metric(model):
    """spectra.Eigensystem.at_context_length: the same modes with W at N_test, so test_error of mode coefficients is
    pb.test_error(Γ, v, N_test=) of the lifted parameters (relative 1e-10); training length → the same object;
    linattn.Problem.test_metric_ratio is c(N_test)/c(N), c_v(N_test)/c_v(N) and names N_test when it is bad."""
    import spectra

    pb, data = _setting(None, 40)
    es = spectra.eigensystem(data, pb, model)
    assert es.at_context_length(pb.N) is es
    a = np.random.default_rng(2).standard_normal(es.k)
    theta = es.lift(a)
    D = pb.D
    for Nt in (2, 15):
        et = es.at_context_length(Nt)
        ref = pb.test_error(theta[:D * D].reshape(D, D), theta[D * D:] if model == "full" else None, N_test=Nt)
        assert abs(float(et.test_error(a)) - ref) <= 1e-10 * abs(ref)
        assert abs(float(es.test_error(a)) - ref) > 1e-3 * abs(ref)        # the training length's metric differs
        pbt = dataclasses.replace(pb, N=Nt)
        np.testing.assert_allclose(pb.test_metric_ratio(Nt), [pbt.feature_variance / pb.feature_variance,
                                                              pbt.feature_variance_v / pb.feature_variance_v],
                                   rtol=1e-15)
    np.testing.assert_array_equal(pb.test_metric_ratio(None), [1.0, 1.0])
    for bad in (0, -1, 2.5, "x"):
        with pytest.raises(ValueError, match="N_test"):
            pb.test_metric_ratio(bad)
        with pytest.raises(ValueError, match="N_test"):
            es.at_context_length(bad)
