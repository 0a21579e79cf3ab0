"""The Gaussian pool theory of many pools at once equals the pool-by-pool theory (every branch of the effective
ridge, both models, per-block decay, finite β, another test length)."""
import dataclasses

import numpy as np
import pytest

import linattn
import replica
from replica import _pool_batch as batch
from replica import _pool_theory as pool_theory

PB = linattn.Problem(6, 12, 0.3, tasks=5)
#: Brent's root stops at 1e-14 relative, Newton's at round-off: the errors agree to a few times 1e-14 relative
RTOL = 1e-12


def _one_by_one(pb, P, beta, lam, model, pools, N_test=None):
    lam_gamma, lam_v = lam if isinstance(lam, tuple) else (lam, lam)
    vs = lam_gamma / lam_v if lam_gamma != lam_v else 1.0
    runs = [pool_theory.gaussian_errors(pb, P, beta, lam_gamma, model, pool_theory._matrix_spectrum(
        pb, model, pool_theory.task_moments(pb, pl), vs, N_test)) for pl in pools]
    return runs, vs, lam_gamma


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P, beta, lam, N_test", [
    (400.0, np.inf, 0.01, None),        # Newton from the bracket's end
    (20.0, np.inf, 0.01, None),         # P < M, κ well above λ
    (400.0, 50.0, 0.01, 24),            # finite β, another test length
    (400.0, np.inf, (0.01, 0.3), None),  # per-block decay (the full model rescales the v block)
    (400.0, np.inf, 0.0, None),         # λ = 0, P > M: κ = 0 (the scalar root's closed form)
    (20.0, np.inf, 0.0, None),          # λ = 0, P < M: the scalar root
    (400.0, np.inf, 1e30, None),        # λ ≫ σ: g(δ₀) > 0 lost to rounding, the scalar root's third form
])
def test_batched_gaussian_theory_equals_pool_by_pool(model, P, beta, lam, N_test):
    if isinstance(lam, tuple) and model == "reduced":
        pytest.skip("per-block decay is a full-model pair")
    pools = np.stack([pool_theory.draw_theory_pool(PB, 3, j) for j in range(7)])
    runs, vs, lam_gamma = _one_by_one(PB, P, beta, lam, model, pools, N_test)
    out, residual, _ = batch.gaussian_errors(PB, P, beta, lam_gamma, model,
                                             batch.spectra(PB, model, batch.pool_moments(PB, pools), vs, N_test))
    for key, values in out.items():
        np.testing.assert_allclose(values, [getattr(r, key) for r in runs], rtol=RTOL, atol=0, err_msg=key)
    assert residual <= max(1e-12, max(r.residual for r in runs) * 10)


def test_nested_pools_are_slices_of_the_largest():
    big = dataclasses.replace(PB, tasks=40)
    for law in ("gaussian", "sphere"):
        pb = dataclasses.replace(PB, task_law=law)
        for j in (0, 5):
            largest = pool_theory.draw_theory_pool(dataclasses.replace(big, task_law=law), 1, j)
            np.testing.assert_array_equal(largest[:5], pool_theory.draw_theory_pool(pb, 1, j))


def test_thermal_error_below_the_interpolation_threshold_scales_as_one_over_lam():
    """At P < M and finite β the thermal error grows as κ/λ; the identity λ/κ = 1 − (D/P) Σ s/(s + κ) cancels to
    round-off there, which gave test = −2.6e14 at λ = 1e-300 (refused naming test) and a 1e-5 relative error at
    λ = 1e-12: λ · test is constant as λ → 0 (law='factor' and 'mp')."""
    pb = linattn.Problem(3, 4, noise=0.1, tasks=2)
    for law in ("factor", "mp"):
        scaled = [lam * replica.stationary(pb, 5, 100.0, lam, law=law, n_pools=2).test
                  for lam in (1e-12, 1e-20, 1e-300)]
        assert scaled == pytest.approx([scaled[0]] * 3, rel=1e-8)
