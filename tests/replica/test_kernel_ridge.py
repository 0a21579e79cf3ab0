"""The kernel learner's exact ridge solver (replica.kernel_ridge) against a dense numpy solve of the normal equations
on the P × F² feature matrix (D = 3, 4), its certified bound, the data builder and bad input."""
import numpy as np
import pytest

import linattn
from linattn import ConvergenceError
from linattn.kernel_learner import kernel_test_error
from replica import kernel_data, kernel_ridge
from replica._kernel_ridge import KernelData
from validation import hermite_features


def _dense(data, lam):
    """Γ* from the dense normal equations ``(HᵀH/P + λ)θ = Hᵀy/P`` with ``h = s ⊗ φ`` (row-major vec Γ)."""
    P = data.P
    H = np.einsum("pf,pg->pfg", data.s, data.phi).reshape(P, -1)
    A = H.T @ H / P + lam * np.eye(H.shape[1])
    theta = np.linalg.solve(A, H.T @ data.yq / P)
    F = data.s.shape[1]
    resid = data.yq - H @ theta
    return theta.reshape(F, F), 0.5 * float(resid @ resid) / P + 0.5 * lam * float(theta @ theta)


@pytest.mark.parametrize("D,P,lam,link,K", [(3, 50, 0.01, "tanh", None), (3, 400, 1e-3, "relu", None),
                                             (4, 100, 0.01, "linear", 3), (4, 600, 1e-3, "relu", 2),
                                             (4, 150, 1e-4, "tanh", None)])
def test_against_dense_normal_equations(D, P, lam, link, K):
    """P below and above F² (81 at D = 3, 196 at D = 4), λ down to 1e-4, fresh tasks and pools: the CG solution is
    within its proven bound ‖R‖/λ of the dense solve (the dense solve's own error, ~1e-13 relative, is far below the
    bound of ~1e-8 relative), the test errors within their bound, the training error to the bound's order."""
    pb = linattn.Problem(D, 2 * D, 0.1, link, tasks=K)
    data = kernel_data(pb, P, rng=(D, P))
    sol = kernel_ridge(data, pb, lam, rtol=1e-8)
    G, train = _dense(data, lam)
    err = float(np.linalg.norm(sol.Gamma - G))
    assert sol.certified and sol.iterations > 0
    assert err <= sol.error_bound <= 1e-8 * np.linalg.norm(G) * 1.0000001
    assert abs(sol.test - kernel_test_error(pb, G)) <= sol.test_bound
    if K is not None:
        assert abs(sol.test_idg - kernel_test_error(pb, G, pool=data.pool)) <= sol.test_bound
    else:
        assert sol.test_idg is None
    assert sol.train == pytest.approx(train, rel=1e-6)


def test_loose_tolerance_still_bounds_the_error():
    """rtol = 1e-3: CG stops early, and the bound must still hold (it is proven, not estimated)."""
    pb = linattn.Problem(4, 8, 0.1, "relu")
    data = kernel_data(pb, 300, rng=1)
    sol = kernel_ridge(data, pb, 1e-3, rtol=1e-3)
    G, _ = _dense(data, 1e-3)
    assert np.linalg.norm(sol.Gamma - G) <= sol.error_bound
    assert abs(sol.test - kernel_test_error(pb, G)) <= sol.test_bound


def test_data_from_raw_tokens_and_n_test():
    """s_φ is (1/N) Σ y_i φ(x_i) of the sampler's own tokens (same generator state), the pool comes first from
    draw_pool, and N_test only changes the evaluation context length."""
    pb = linattn.Problem(3, 5, 0.2, "tanh", tasks=2)
    data = kernel_data(pb, 7, rng=3)
    gen = np.random.default_rng(3)
    pool, task = linattn.pools.draw_pool(pb, 7, gen)
    tok = linattn.sample_tokens(pb, 7, gen, w=pool[task])
    np.testing.assert_allclose(data.s, np.einsum("pn,pnf->pf", tok.y, hermite_features(tok.X)) / 5, rtol=1e-14)
    np.testing.assert_array_equal(data.phi, hermite_features(tok.xq))
    np.testing.assert_array_equal(data.pool, pool)
    sol = kernel_ridge(data, pb, 0.1, N_test=9)
    assert sol.N_test == 9 and sol.test == pytest.approx(kernel_test_error(pb, sol.Gamma, N_test=9), rel=1e-14)
    sphere = linattn.Problem(3, 5, 0.2, tasks=2, task_law="sphere")
    np.testing.assert_allclose(np.sum(kernel_data(sphere, 4, rng=0).pool ** 2, axis=1), 3.0, rtol=1e-14)


def test_convergence_error_and_bad_input():
    pb = linattn.Problem(3, 6, 0.1, "tanh")
    data = kernel_data(pb, 60, rng=0)
    with pytest.raises(ConvergenceError, match="did not reach"):
        kernel_ridge(data, pb, 1e-4, maxiter=2)
    for lam in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="lam"):
            kernel_ridge(data, pb, lam)
    with pytest.raises(ValueError, match="data must be"):
        kernel_ridge(pb.sample(5, rng=0), pb, 0.1)
    with pytest.raises(ValueError, match="data must be"):
        kernel_ridge(data, linattn.Problem(4, 6, 0.1), 0.1)
    with pytest.raises(ValueError, match="rtol"):
        kernel_ridge(data, pb, 0.1, rtol=1.0)
    with pytest.raises(ValueError, match="pb"):
        kernel_data(linattn.Problem(3, 6, 0.1, covariance=np.diag([1.0, 2.0, 3.0])), 5)
    with pytest.raises(ValueError, match="P"):
        kernel_data(pb, 0)
    assert isinstance(data, KernelData) and data.P == 60


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(D=4, N=8, noise=0.1)


def test_kernel_ridge_extreme_lambda():
    """λ = 1e300 (ConvergenceError before) gives Γ ≈ b/λ and E = V/2; λ = 1e-300 is refused naming
    lam (it asked to raise maxiter)."""
    data = kernel_data(PB, 20, rng=0)
    sol = kernel_ridge(data, PB, 1e300)
    assert sol.certified and np.max(np.abs(sol.Gamma)) < 1e-290
    assert sol.test == pytest.approx(0.5 * (1 + PB.noise**2), rel=1e-15)
    with pytest.raises(ValueError, match="lam"):
        kernel_ridge(data, PB, 1e-300)


def test_kernel_ridge_zero_labels():
    data = kernel_data(PB, 20, rng=0)
    zero = type(data)(s=data.s, phi=data.phi, yq=np.zeros(20), pool=None, features=data.features, N=data.N)
    sol = kernel_ridge(zero, PB, 0.1)
    assert not np.any(sol.Gamma) and sol.certified


def test_kernel_ridge_refuses_another_link():
    """Data made with the linear link, problem with tanh (or another noise): refused, naming pb."""
    data = kernel_data(PB, 20, rng=0)
    with pytest.raises(ValueError, match="pb.*link"):
        kernel_ridge(data, linattn.Problem(D=4, N=8, noise=0.1, link="tanh"), 0.1)
    with pytest.raises(ValueError, match="pb.*noise"):
        kernel_ridge(data, linattn.Problem(D=4, N=8, noise=0.2), 0.1)
