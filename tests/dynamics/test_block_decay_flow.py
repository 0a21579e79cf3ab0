"""Per-block weight decay ``lam=(λ_Γ, λ_v)`` in the exact flows, and their extreme inputs.

The flows run in the eigenbasis of ``A = H + Λ`` itself; checked against ``scipy.linalg.expm`` of the dense ``A``
built with numpy from the prompts, against explicit gradient-descent steps, against the exact quadratic-form
mean and s.d. over Gaussian initialisations evaluated densely, and (long-time limit) against ``replica.ridge``.
Tolerances: every comparison is between two backward-stable evaluations of the same linear algebra on a matrix
with ``cond(A) < 3e3``: agreement to ``~cond · 1e-16``; asserted to ``1e-10`` (relative, or absolute on
parameter vectors scaled by their largest entry).
"""
import numpy as np
import pytest
from scipy.linalg import expm

import dynamics
import linattn
import replica
import spectra

PB = linattn.Problem(4, 8, 0.2)
D, M = 4, 20
LAM = (0.01, 0.3)


def dense(data, lam):
    P = data.P
    F = data.features("full")
    A = F.T @ F / P + np.diag(np.r_[np.full(D * D, lam[0]), np.full(D, lam[1])])
    b = F.T @ data.yq / P
    return A, b, np.linalg.solve(A, b)


def errors(data, pb, theta, lam):
    G, v = linattn.unpack(theta, D, "full")
    return linattn.train_energy(data, G, lam, v), pb.test_error(G, v)


@pytest.mark.parametrize("P", [12, 60], ids=["P<M", "P>=M"])
@pytest.mark.parametrize("lam", [LAM, (0.3, 0.002)])
def test_flow_equals_the_matrix_exponential(P, lam, rng):
    data = PB.sample(P, rng)
    A, b, theta_star = dense(data, lam)
    assert np.linalg.cond(A) < 3e3
    theta0, gamma = 0.5 * rng.standard_normal(M), 0.7
    t = np.array([0.0, 0.3, 4.0, 50.0, 2000.0])
    cv = dynamics.gradient_flow(data, PB, lam, t, gamma=gamma, init=theta0, model="full", return_params=True)
    assert cv.lam == lam
    for i, ti in enumerate(t):
        ref = theta_star + expm(-gamma * A * ti) @ (theta0 - theta_star)
        assert np.max(np.abs(cv.params[i] - ref)) <= 1e-10 * np.max(np.abs(ref))
        et, eg = errors(data, PB, ref, lam)
        assert cv.train[i] == pytest.approx(et, rel=1e-10) and cv.test[i] == pytest.approx(eg, rel=1e-10)
    assert np.all(cv.train_sd == 0) and np.all(cv.test_sd == 0)


def test_the_flow_is_not_the_rescaled_flow(rng):
    """The rescaling v' = v√(λ_v/λ_Γ) that is exact for the Gibbs measure changes the dynamics: the flow with
    the pair differs from the flow of the rescaled problem at finite times (and agrees at t = ∞)."""
    data = PB.sample(60, rng)
    A, b, theta_star = dense(data, LAM)
    s = LAM[0] / LAM[1]
    S = np.r_[np.ones(D * D), np.full(D, np.sqrt(s))]
    A_r = S[:, None] * A * S[None, :]                     # Hessian in θ' = S⁻¹θ: H' + λ_Γ I
    t = 5.0
    flow = dynamics.gradient_flow(data, PB, LAM, [t, 1e9], model="full", return_params=True).params
    rescaled = S * (theta_star / S - expm(-A_r * t) @ (theta_star / S))
    assert np.max(np.abs(flow[0] - rescaled)) > 1e-3 * np.max(np.abs(flow[0]))
    assert np.max(np.abs(flow[1] - theta_star)) <= 1e-10 * np.max(np.abs(theta_star))


def test_descent_equals_explicit_steps(rng):
    data = PB.sample(12, rng)
    A, b, _ = dense(data, LAM)
    lr = 1.8 / np.linalg.eigvalsh(A).max()
    theta0 = 0.3 * rng.standard_normal(M)
    steps = np.array([0, 1, 9, 200])
    cv = dynamics.gradient_descent(data, PB, LAM, steps, lr, init=theta0, model="full", return_params=True)
    th = theta0.copy()
    for n in range(steps[-1] + 1):
        if n in steps:
            i = int(np.flatnonzero(steps == n)[0])
            assert np.max(np.abs(cv.params[i] - th)) <= 1e-10 * np.max(np.abs(th))
            et, eg = errors(data, PB, th, LAM)
            assert cv.train[i] == pytest.approx(et, rel=1e-10) and cv.test[i] == pytest.approx(eg, rel=1e-10)
        th = th - lr * (A @ th - b)
    with pytest.raises(ValueError, match="lr"):
        dynamics.gradient_descent(data, PB, LAM, steps, 2.01 / np.linalg.eigvalsh(A).max(), model="full")


@pytest.mark.parametrize("P", [12, 60])
def test_random_init_mean_and_sd_equal_the_dense_quadratic_forms(P, rng):
    """θ(t) = m + L z, z ~ N(0, I), L = σ_0 e^{−γAt}, m = (I − e^{−γAt})θ*: for q = zᵀQz + lᵀz + κ,
    E q = tr Q + κ and Var q = 2 tr Q² + |l|² (conventions §2), evaluated densely."""
    data = PB.sample(P, rng)
    A, b, theta_star = dense(data, LAM)
    C = np.diag(np.r_[np.full(D * D, PB.feature_variance), np.full(D, PB.feature_variance_v)])
    u = np.r_[np.eye(D).ravel() / D, np.zeros(D)]
    s0, t = 0.4, np.array([0.0, 1.5, 30.0])
    cv = dynamics.gradient_flow(data, PB, LAM, t, init=s0, model="full")
    for i, ti in enumerate(t):
        E = expm(-A * ti)
        L, m = s0 * E, theta_star - E @ theta_star
        et_m, eg_m = errors(data, PB, m, LAM)
        for Q, lin, k, mean, sd in ((0.5 * L.T @ A @ L, L.T @ A @ (m - theta_star), et_m, cv.train[i], cv.train_sd[i]),
                                    (0.5 * L.T @ C @ L, L.T @ (C @ m - u), eg_m, cv.test[i], cv.test_sd[i])):
            assert mean == pytest.approx(np.trace(Q) + k, rel=1e-10)
            assert sd == pytest.approx(np.sqrt(2 * np.trace(Q @ Q) + lin @ lin), rel=1e-9)


@pytest.mark.parametrize("P", [12, 60])
def test_long_time_limit_is_the_per_block_ridge_solution(P, rng):
    """With both decays > 0 there is no null space: θ(∞) = (H + Λ)⁻¹b whatever θ_0."""
    data = PB.sample(P, rng)
    lam = (0.2 / D, 0.2)
    r = replica.ridge(data, PB, lam, "full", method="gram")
    for init in (None, rng.standard_normal(M)):
        lim = dynamics.long_time_limit(data, PB, lam, "full", init=init)
        ref = linattn.pack(r.Gamma, r.v)
        assert np.max(np.abs(lim.theta - ref)) <= 1e-10 * np.max(np.abs(ref))
        assert lim.train == pytest.approx(r.train, rel=1e-10) and lim.test == pytest.approx(r.test, rel=1e-10)
    es = spectra.eigensystem(data, PB, "full", lam=lam)                   # a reusable eigensystem of H + Λ
    assert dynamics.long_time_limit(es, PB, lam, "full").test == pytest.approx(r.test, rel=1e-10)
    assert es.null_dim == 0 and es.block_decay == lam


def test_equal_pair_is_the_common_decay(rng):
    data = PB.sample(12, rng)
    a = dynamics.gradient_flow(data, PB, (0.05, 0.05), [0.0, 3.0], init=0.2, model="full")
    b = dynamics.gradient_flow(data, PB, 0.05, [0.0, 3.0], init=0.2, model="full")
    assert np.array_equal(a.train, b.train) and np.array_equal(a.test_sd, b.test_sd) and a.lam == b.lam == 0.05
    with pytest.raises(ValueError, match="lam"):
        dynamics.gradient_flow(data, PB, (0.05, 0.1), [1.0], model="reduced")
    with pytest.raises(ValueError, match="lam"):
        dynamics.long_time_limit(data, PB, (0.0, 0.1), "full")


def test_extreme_inputs_give_the_exact_value_or_name_the_argument(rng):
    """Extreme inputs: σ0 = 1e200, λ = 1e300, t = 1e100 — exact closed-form values where they are finite, else a
    ValueError naming the argument; never NaN, inf or OverflowError."""
    pb = linattn.Problem(4, 8, 0.1)
    data = pb.sample(10, rng)                      # P < M = 16: a null space
    ybar = 0.5 * data.yq @ data.yq / data.P        # E_t(0)
    with pytest.raises(ValueError, match="init"):
        dynamics.gradient_flow(data, pb, 0.01, [0.0, 1.0], init=1e200)          # E_t ~ 1e400
    late = dynamics.gradient_flow(data, pb, 0.01, [1e100], init=1e200)          # the start is forgotten exactly
    lim = dynamics.long_time_limit(data, pb, 0.01)
    assert late.train[0] == lim.train and late.test[0] == lim.test and late.train_sd[0] == 0.0
    huge = dynamics.gradient_flow(data, pb, 1e300, [0.0, 1.0], init=1.0)
    # t = 0: E[E_t(θ0)] = E_t(0) + ½σ0² tr(H + λI), s.d. = σ0² √(½ tr (H + λI)²) → λ M/2 and λ √(M/2)
    assert huge.train[0] == pytest.approx(8e300, rel=1e-12) and huge.train_sd[0] == pytest.approx(np.sqrt(8) * 1e300)
    assert huge.train[1] == pytest.approx(ybar, rel=1e-12) and huge.test[1] == pytest.approx(0.5 * 1.01, rel=1e-12)
    with pytest.raises(ValueError, match="lam"):
        dynamics.gradient_flow(data, pb, 1e300, [0.0], init=1e10)               # E_t ~ 1e320
    # λ = 0: the null-space part of θ0 never decays; at t = 1e100 the mean test error is that of the min-norm
    # solution plus ½σ0² tr(C (I − F⁺F))
    zero = dynamics.gradient_flow(data, pb, 0.0, [1e100], init=0.5)
    F = data.features()
    null = np.eye(16) - np.linalg.pinv(F) @ F
    mn = dynamics.long_time_limit(data, pb, 0.0)
    assert zero.test[0] == pytest.approx(mn.test + 0.5 * 0.25 * pb.feature_variance * np.trace(null), rel=1e-10)
    with pytest.raises(ValueError, match="init"):
        dynamics.long_time_limit(data, pb, 0.0, init=np.full(16, 1e200))        # the null part stays: ~1e400
    assert np.isfinite(dynamics.long_time_limit(data, pb, 0.01, init=np.full(16, 1e200)).test)
