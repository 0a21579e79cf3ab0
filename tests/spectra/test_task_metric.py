"""The errors of a task law in the modes of an eigensystem (spectra._task_metric): the structured test metric
(Problem(task_covariance=S)) and the out-of-distribution error, against dense matrices and the exact errors of the
parameters themselves, on the Gram and dense paths, rescaled and per-block eigensystems, and other context lengths."""
import numpy as np
import pytest

import linattn
import spectra
from linattn import pools
from linattn._task_covariance import gaussian_moments
from linattn._task_moments import moment_matrices

D = 5
S = pools.low_rank_covariance(D, 2, rng=3)


def _problem(tasks=None, N=8):
    return linattn.Problem(D, N, 0.3, tasks=tasks, task_covariance=S)


def _dense_metric(pb, model):
    """``C = Σ̃ ⊗ I_D`` and ``ℓ = vec B`` of the problem's law, as dense matrices."""
    St, B, _ = moment_matrices(pb, model, gaussian_moments(pb))
    return np.kron(St, np.eye(D)), B.ravel()


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [12, 80])            # Gram path (P < M) and dense path
def test_law_metric_is_the_dense_quadratic_form(model, P):
    """W = VᵀCV, W2 = VᵀC²V, u = Vᵀℓ, Vᵀ C ℓ, |ℓ|², tr C and tr C² of the eigensystem against the dense C and ℓ
    (two routes to the same numbers: 1e-12 relative to their scale)."""
    pb = _problem()
    es = spectra.eigensystem(pb.sample(P, rng=1), pb, model)
    C, ell = _dense_metric(pb, model)
    V = es.lift(np.eye(es.k)).T                                       # (M, k), orthonormal columns
    assert np.allclose(V.T @ V, np.eye(es.k), atol=1e-10)
    scale = np.abs(C).max()
    for got, want in ((es.W, V.T @ C @ V), (es.W2, V.T @ C @ C @ V), (es.u, V.T @ ell), (es.law.Cu, V.T @ C @ ell)):
        assert np.allclose(got, want, rtol=0, atol=1e-12 * max(scale, 1.0) * max(1.0, np.abs(want).max()))
    assert es.u_norm2 == pytest.approx(ell @ ell, rel=1e-12)
    assert es.trC == pytest.approx(np.trace(C), rel=1e-12)
    assert es.trC2 == pytest.approx(np.trace(C @ C), rel=1e-12)
    theta = np.random.default_rng(0).standard_normal(es.M)
    assert np.allclose(es.apply_metric(theta), C @ theta, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [12, 80])
@pytest.mark.parametrize("N_test", [None, 20])
def test_errors_in_the_modes_are_the_exact_errors_of_the_parameters(model, P, N_test):
    """For parameters in the modes, es.test_error, es.odg and es.idg equal pb.test_error (fresh tasks from S),
    pools.task_error(..., "isotropic") and pools.idg_error of the parameters: the same quadratic forms evaluated in
    other coordinates, to rounding (1e-11 relative); also at another test context length N_test."""
    pb = _problem(tasks=3)
    es = spectra.eigensystem(pb.sample(P, rng=2), pb, model)
    est = es if N_test is None else es.at_context_length(N_test)
    a = es.ridge_coefficients(0.01)
    G, v = linattn.unpack(es.lift(a), D, model)
    assert float(est.test_error(a)) == pytest.approx(pb.test_error(G, v, N_test=N_test), rel=1e-11)
    assert float(est.odg.error(a)) == pytest.approx(
        pools.task_error(pb, G, v, task_covariance="isotropic", N_test=N_test), rel=1e-11)
    assert float(est.idg.error(a)) == pytest.approx(pools.idg_error(pb, es.data.pool, G, v, N_test=N_test),
                                                     rel=1e-11)


def test_rescaled_and_per_block_eigensystems_carry_the_law():
    """The rescaled eigensystem (v_scale = λ_Γ/λ_v, coordinates θ') and the eigensystem of H + Λ (per-block decay)
    give the exact errors of the parameters they represent (θ = Sθ', and θ itself)."""
    pb = _problem()
    data = pb.sample(40, rng=4)
    lam = (0.01, 0.2)
    es = spectra.eigensystem(data, pb, "full", v_scale=lam[0] / lam[1])
    a = es.ridge_coefficients(lam[0])
    G, v = linattn.unpack(es.lift(a) * es.param_scale, D, "full")
    assert float(es.test_error(a)) == pytest.approx(pb.test_error(G, v), rel=1e-11)
    assert float(es.odg.error(a)) == pytest.approx(pools.task_error(pb, G, v, task_covariance="isotropic"), rel=1e-11)
    blk = spectra.eigensystem(data, pb, "full", lam=lam)
    b = blk.ridge_coefficients(0.0)
    G2, v2 = linattn.unpack(blk.lift(b), D, "full")
    assert np.allclose(G2, G, rtol=1e-8, atol=1e-12) and np.allclose(v2, v, rtol=1e-8, atol=1e-12)
    assert float(blk.test_error(b)) == pytest.approx(pb.test_error(G2, v2), rel=1e-11)


def test_isotropic_eigensystem_has_no_law():
    """Isotropic tasks keep the closed-form metric (no law, no out-of-distribution error)."""
    pb = linattn.Problem(D, 8, 0.3)
    es = spectra.eigensystem(pb.sample(20, rng=0), pb)
    assert es.law is None and es.odg is None
    assert np.array_equal(es.W, pb.feature_variance * np.eye(es.k))
