"""Factorized simulators: numba step vs numpy step, the kernel's exact sampler, SGD vs the mean flow,
Langevin vs the exact (merged) Gibbs measure and the equipartition law of the factorized one."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, refusals
from scipy import stats

import linattn
import validation
from dynamics import escape_times, mode_constants
from linattn import _parametrizations as factorized
from linattn.factorized import Parametrization
from validation import factorized_descent
from validation.experiments._staged_runs import gibbs_comparison
from validation.simulators._factorized_sims import _descent_reference, _kernel_prompts

CASES = [("merged", 1, 1), ("value_kq", 1, 1), ("value_kq_modes", 1, 1), ("separate_kq", 3, 2), ("merged_heads", 2, 1)]
PB = linattn.Problem(4, 10, 0.2, covariance=[1.0, 0.5, 0.25, 0.1])


@pytest.mark.parametrize("kind, H, R", CASES)
def test_kernel_descent_equals_numpy_reference(kind, H, R):
    """Deterministic gradient descent on one dataset: numba kernel = plain numpy loop to 1e-12 (rung 2)."""
    par = Parametrization(kind, 4, H, R)
    data = PB.sample(30, rng=0)
    th = par.init(0.5, 1)
    run = factorized_descent(PB, par, th, 200, 0.05, data=data, lam=0.01, record=200)
    ref = _descent_reference(PB, par, th, 200, 0.05, data, lam=0.01)
    assert np.abs(run.theta[0, -1] - ref).max() < 1e-12
    assert np.allclose(run.loss[0, -1], linattn.train_energy(data, par.gamma(run.theta[0, -1]), 0.0), atol=1e-12)


@pytest.mark.parametrize("kind, H, R", CASES[1:])
def test_conservation_laws_along_simulated_descent(kind, H, R):
    """Gradient descent conserves the quantities of gradient flow up to the integrator error: over a fixed
    time T = nη the drift is O(η) (each step changes them by O(η²)), so halving η halves it (ratio 2 ± 20 %),
    and it is below 1e-3 of their size at η = 0.01."""
    par = Parametrization(kind, 4, H, R)
    data = PB.sample(30, rng=0)
    th = par.init(0.6, 2)
    c0 = par.conserved(th)
    drift = []
    for eta in (0.01, 0.005):
        run = factorized_descent(PB, par, th, int(2.0 / eta), eta, data=data, record=int(2.0 / eta))
        drift.append(np.abs(par.conserved(run.theta[0, -1]) - c0).max())
    assert drift[0] < 1e-3 * np.abs(c0).max()
    assert 1.6 < drift[0] / drift[1] < 2.4, drift


@pytest.mark.parametrize("rotated", [False, True])
def test_kernel_sampler_matches_the_library_sampler(rotated):
    """The kernel's exact O(D) prompts (gamma-distributed χ²_N, ziggurat normals) against
    linattn.Problem.sample: two-sample KS on projections (rung 4)."""
    cov = [2.0, 1.0, 0.5, 0.1]
    if rotated:
        U = np.linalg.qr(np.random.default_rng(2).standard_normal((4, 4)))[0]
        cov = U @ np.diag(cov) @ U.T
    pb = linattn.Problem(4, 7, 0.3, covariance=cov)
    S, XQ, YQ = _kernel_prompts(pb, 60_000, seed=1)
    d = pb.sample(60_000, rng=2)
    u = np.random.default_rng(3).standard_normal(4)
    pairs = {"s.u": (S @ u, d.s @ u), "xq.u": (XQ @ u, d.xq @ u), "yq": (YQ, d.yq),
             "s.xq": (np.einsum("pi,pi->p", S, XQ), np.einsum("pi,pi->p", d.s, d.xq)),
             "yq*xq.u": (YQ * (XQ @ u), d.yq * (d.xq @ u))}
    for name, (a, b) in pairs.items():
        assert stats.ks_2samp(a, b).pvalue > 1e-3, name


def test_online_sgd_escapes_when_the_mean_flow_does():
    """Online SGD (fresh batches of 64 exact prompts, η = 0.01) from a balanced aligned start: each mode's
    half-rise time, averaged over 8 chains, equals the closed-form t_½ within 4 s.e. + the discretisation
    shift of gradient descent, |ln(1 + 2ηb)/(2ηb) − 1| ≤ ηb (relative), + one record interval."""
    pb = linattn.Problem(3, 10, 0.0, covariance=[1.0, 0.5, 0.25])
    par = Parametrization("value_kq_modes", 3)
    a0, eta, rec = 1e-3, 0.01, 10
    t_half = escape_times(pb, a0)
    n = int(1.3 * t_half.max() / eta)
    run = factorized_descent(pb, par, par.aligned(np.full(3, a0)), n, eta, batch=64, record=rec, n_chains=8, rng=4)
    mc = mode_constants(pb)
    t = run.steps * eta
    for k in range(3):
        crossing = np.array([t[np.argmax(m[:, k] >= 0.5 * mc.a_inf[k])] for m in run.modes])
        se = crossing.std(ddof=1) / np.sqrt(crossing.size)
        tol = 4 * se + eta * mc.b[k] * t_half[k] + rec * eta
        assert abs(crossing.mean() - t_half[k]) < tol, (k, crossing.mean(), t_half[k], tol)


def test_merged_langevin_reproduces_the_exact_gibbs_averages():
    """The factorized kernel with kind 'merged' is Euler–Maruyama Langevin: ⟨E_t⟩ and ⟨E_g⟩ over 16 chains
    agree with replica.gibbs within 4 s.e. (η = 0.005: discretisation bias ≈ ηa_max/2 of the thermal
    part, below 1e-4 here)."""
    pb = linattn.Problem(3, 6, 0.2)
    data = pb.sample(40, rng=1)
    g = gibbs_comparison(pb, data, 200.0, 0.05, kind="merged", n_steps=40_000, dt=0.005, rng=5)
    assert abs(g.train - g.exact_train) < 4 * g.train_se + 1e-4, g
    assert abs(g.test - g.exact_test) < 4 * g.test_se + 1e-4, g
    assert abs(g.e_min + g.harmonic_dof / 400.0 - g.exact_train) < 1e-12      # merged: exact equipartition


def test_factorized_gibbs_measure_obeys_equipartition_over_its_non_symmetric_directions():
    """Finding: at large β the Gibbs measure of Γ = PQ (weight decay λ on P and Q) has
    ⟨E_t⟩ − E_t^min = (2D² − D(D−1)/2)/(2β): every direction of θ is harmonic except the D(D−1)/2 of the
    orthogonal symmetry P → PR, Q → RᵀQ, which leaves E_t invariant; the merged model has M/(2β) = D²/(2β).
    Tolerance: 4 s.e. over 16 chains + 10 % of the thermal part for the O(1/β) anharmonic and O(η)
    discretisation corrections. Merged-model equipartition, and the exact merged Gibbs average, are rejected."""
    pb = linattn.Problem(3, 6, 0.2)
    data = pb.sample(40, rng=1)
    beta = 2000.0
    g = gibbs_comparison(pb, data, beta, 0.05, kind="value_kq_modes", n_steps=60_000, dt=0.002, rng=6)
    thermal = g.harmonic_dof / (2 * beta)
    assert g.harmonic_dof == 15
    assert abs(g.train - g.equipartition) < 4 * g.train_se + 0.1 * thermal, g
    assert abs(g.train - (g.e_min + 9 / (2 * beta))) > 4 * g.train_se + 0.1 * thermal
    assert abs(g.train - g.exact_train) > 4 * g.train_se + 0.1 * thermal


def test_divergence_raises():
    par = Parametrization("value_kq", 4)
    with pytest.raises(linattn.ConvergenceError, match=r"\blr\b"):
        factorized_descent(PB, par, par.init(1.0, 0) * 30, 500, 5.0, data=PB.sample(20, rng=0))
    with pytest.raises(ValueError, match="beta"):
        factorized_descent(PB, par, par.init(1.0, 0), 5, 0.01, beta=10.0)


def test_value_kq_kernel_is_descent_through_the_attention_forward_pass():
    """Gradient descent on (W_V, W_KQ) computed with the real forward pass f(Z) = W_V Z Zᵀ W_KQ Z/N, null blocks
    of Mainali & Teixeira held at zero, equals the numba kernel's 'value_kq' descent on the reduced
    predictor to 1e-10. Trained too, the null blocks leave zero on a finite training set (their gradient
    vanishes only on average over data), here by more than 1e-3."""
    from linattn import _attention as attention
    from linattn import _sampling as sampling

    pb = linattn.Problem(3, 5, 0.1, covariance=[1.0, 0.6, 0.3])
    tk = sampling.sample_tokens(pb, 40, rng=7)
    Z, pr = tk.embed(), tk.prompts()
    rng = np.random.default_rng(8)
    p2, q1 = 0.5, 0.3 * rng.standard_normal((3, 3))
    eta, n = 0.05, 200
    mask_u = np.array([0.0, 0.0, 0.0, 1.0])
    mask_W = np.zeros((4, 4))
    mask_W[:3, :3] = 1.0
    out = {}
    for held in (True, False):
        u = np.zeros(4)
        u[3] = p2
        W = np.zeros((4, 4))
        W[:3, :3] = q1
        for _ in range(n):
            yhat, du, dW = attention.predict_value_kq(Z, u, W)
            r = yhat - pr.yq
            gu, gW = (r[:, None] * du).mean(0), (r[:, None, None] * dW).mean(0)
            u = u - eta * (gu * mask_u if held else gu)
            W = W - eta * (gW * mask_W if held else gW)
        out[held] = (u, W)
    par = Parametrization("value_kq", 3)
    run = factorized_descent(pb, par, np.concatenate([[p2], q1.ravel()]), n, eta, data=pr, record=n)
    u, W = out[True]
    assert abs(run.theta[0, -1, 0] - u[3]) < 1e-10
    assert np.abs(run.theta[0, -1, 1:].reshape(3, 3) - W[:3, :3]).max() < 1e-10
    u, W = out[False]
    assert max(np.abs(u[:3]).max(), np.abs(W[3, :3]).max()) > 1e-3


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_4_8 = linattn.Problem(4, 8, 0.1)
DATA_4_8 = PB_4_8.sample(20, rng=0)


REFUSED = refusals(name_as_word, [
    ("factorized-theta0", lambda: validation.factorized_descent(PB_4_8, factorized.Parametrization("merged", 4),
                                                                np.ones(16) * 1e200, 10, 0.01, data=DATA_4_8),
     "theta0"),
    ("factorized-batch", lambda: validation.factorized_descent(PB_4_8, factorized.Parametrization("merged", 4),
                                                               np.ones(16) * 0.1, 10**6, 0.01, batch=10**12), "batch"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_factorized_descent_batch_memory_guard():
    pb = linattn.Problem(3, 4, 0.1)
    par = Parametrization("value_kq_modes", 3)
    with pytest.raises(ValueError, match=r"^batch too large.*GiB"):
        factorized_descent(pb, par, par.init(0.1, rng=0), 2, 0.01, batch=10**9)
