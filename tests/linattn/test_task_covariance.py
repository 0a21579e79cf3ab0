"""Structured tasks (Problem(task_covariance=S), w ~ N(0, S)): validation, the sampler, and the exact test errors
(fresh tasks from S, from the isotropic law of the same power, from a pool) against raw-token Monte Carlo."""
import numpy as np
import pytest

import linattn
from linattn import pools
from linattn._task_covariance import gaussian_moments
from linattn._task_moments import error_from_moments, moment_matrices
from linattn.pools import TaskCovariance


def _random_covariance(D, r, rng, rotate=True):
    """A PSD matrix of rank r with random eigenvalues, trace D."""
    s = np.r_[rng.uniform(0.2, 2.0, r), np.zeros(D - r)]
    s *= D / s.sum()
    if not rotate:
        return s
    U = np.linalg.qr(rng.standard_normal((D, D)))[0]
    return (U * s) @ U.T


def _mc_error(pb, Gamma, v, n, rng, w=None):
    """½(y_q − ŷ)² over n raw-token prompts: mean and standard error."""
    tok = linattn.sample_tokens(pb, n, rng, w=w)
    N = tok.X.shape[1]
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / N
    y2 = np.einsum("pn,pn->p", tok.y, tok.y) / N
    yhat = np.einsum("pd,de,pe->p", s, Gamma, tok.xq)
    if v is not None:
        yhat += y2 * (tok.xq @ v)
    e = 0.5 * (tok.yq - yhat) ** 2
    return e.mean(), e.std(ddof=1) / np.sqrt(n)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("bad, match", [
    (np.ones(5), "task_covariance"),                                   # wrong length
    (np.ones((4, 5)), "task_covariance"),                              # wrong shape
    (np.zeros(4), "not all 0"),                                        # all zero
    (np.array([1.0, -0.1, 1.0, 1.0]), ">= 0"),                         # negative eigenvalue
    (np.array([1.0, np.nan, 1.0, 1.0]), "task_covariance"),            # not finite
    (np.diag([1.0, 1.0, 1.0, -1e-3]), "semi-definite"),                # indefinite
    (np.triu(np.ones((4, 4))), "symmetric"),                           # asymmetric
    (np.zeros((4, 4)), "task_covariance"),                             # zero matrix
])
def test_bad_task_covariances_are_refused_by_name(bad, match):
    with pytest.raises(ValueError, match="task_covariance") as err:
        linattn.Problem(4, 6, 0.1, task_covariance=bad)
    assert match in str(err.value)


def test_round_off_of_a_zero_eigenvalue_is_zero_and_a_larger_one_is_refused():
    """A rank-2 projector built in floating point has eigenvalues ~1e-16 where 0 is meant: set to 0 (PSD_TOL = 1e-10
    of the largest); −1e-8 relative is refused."""
    rng = np.random.default_rng(1)
    A = np.linalg.qr(rng.standard_normal((6, 2)))[0]
    S = 3.0 * A @ A.T
    tc = linattn.Problem(6, 4, task_covariance=S).task_covariance
    assert tc.rank == 2 and np.count_nonzero(tc.spectrum == 0.0) == 4
    U = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    with pytest.raises(ValueError, match="task_covariance"):
        linattn.Problem(6, 4, task_covariance=(U * np.r_[-3e-8, 3.0, 1, 1, 1, 1]) @ U.T)


@pytest.mark.parametrize("kw, why", [(dict(link="tanh"), "nonlinear link"), (dict(covariance=np.arange(1.0, 5.0)),
                                      "anisotropic inputs"), (dict(tasks=3, task_law="sphere"), "sphere")])
def test_what_the_theory_does_not_cover_is_refused(kw, why):
    with pytest.raises(ValueError, match="task_covariance") as err:
        linattn.Problem(4, 6, 0.1, task_covariance=np.r_[2.0, 2.0, 0.0, 0.0], **kw)
    assert why in str(err.value)


def test_identity_is_the_isotropic_problem_bit_for_bit():
    """S = I (a vector of ones, or the identity matrix) is stored as None: the same problem, the same draws."""
    D = 5
    base = linattn.Problem(D, 7, 0.2, tasks=4)
    for S in (np.ones(D), np.eye(D), TaskCovariance(np.ones(D))):
        pb = linattn.Problem(D, 7, 0.2, tasks=4, task_covariance=S)
        assert pb.task_covariance is None and pb == base and hash(pb) == hash(base)
        a, b = base.sample(50, rng=3), pb.sample(50, rng=3)
        assert np.array_equal(a.s, b.s) and np.array_equal(a.pool, b.pool)


def test_structured_problem_refuses_the_isotropic_feature_variance():
    pb = linattn.Problem(4, 6, 0.1, task_covariance=np.r_[2.0, 2.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="task_covariance"):
        pb.feature_variance
    assert pb.task_covariance == linattn.Problem(4, 6, 0.1, task_covariance=np.r_[2.0, 2, 0, 0]).task_covariance


# ---------------------------------------------------------------- exact errors
def test_general_formula_at_the_identity_is_test_error_to_rounding():
    """The Gaussian-law formula (linattn._task_covariance) at T = I against the isotropic closed form of
    Problem.test_error: two arithmetic routes to one number, so they agree to rounding, bounded by 16 ε times the
    sum of the magnitudes of the formula's terms (measured: within 2 ulps of the result over 1200 random Γ, v)."""
    rng = np.random.default_rng(0)
    eps = np.finfo(float).eps
    for D, N, sig in ((4, 5, 0.1), (16, 32, 0.25), (30, 7, 1.3)):
        pb = linattn.Problem(D, N, sig)
        mo = gaussian_moments(pb, TaskCovariance(np.ones(D)))
        for _ in range(50):
            G = rng.standard_normal((D, D)) / D * rng.uniform(0, 3)
            v = 0.1 * rng.standard_normal(D)
            for vv in (None, v):
                a, b = pb.test_error(G, vv), error_from_moments(pb, mo, G, vv)
                terms = (sig**2 + 1 + 2 * abs(np.trace(G)) / D + pb.feature_variance * np.sum(G * G)
                         + (0.0 if vv is None else pb.feature_variance_v * vv @ vv))
                assert abs(a - b) <= 16 * eps * terms


@pytest.mark.parametrize("r", [1, 3, 6])
@pytest.mark.parametrize("model", ["reduced", "full"])
def test_exact_errors_match_raw_token_monte_carlo(r, model):
    """test (fresh tasks from S), test_odg (fresh tasks from (tr S/D) I) and idg (a pool drawn from N(0, S)) against
    the mean of ½(y_q − ŷ)² over 40 000 raw-token prompts: within 3 s.e., for random S of ranks 1 … D (D = 6)."""
    D, N, sig, n = 6, 5, 0.3, 40_000
    rng = np.random.default_rng(10 + r)
    S = _random_covariance(D, r, rng)
    pb = linattn.Problem(D, N, sig, task_covariance=S)
    G = rng.standard_normal((D, D)) / D + 0.5 * np.eye(D) / D * D / r
    v = 0.2 * rng.standard_normal(D) if model == "full" else None
    exact = pb.test_error(G, v)
    m, se = _mc_error(pb, G, v, n, rng)
    assert abs(m - exact) <= 3 * se, (m, se, exact)
    power = np.trace(S) / D
    iso = pools.task_error(pb, G, v, task_covariance="isotropic")
    w = np.sqrt(power) * rng.standard_normal((n, D))
    m, se = _mc_error(pb, G, v, n, rng, w=w)
    assert abs(m - iso) <= 3 * se, (m, se, iso)
    pool = linattn.Problem(D, N, sig, tasks=5, task_covariance=S).sample(1, rng=rng).pool
    idg = pools.idg_error(pb, pool, G, v)
    m, se = _mc_error(pb, G, v, n, rng, w=pool[rng.integers(0, 5, n)])
    assert abs(m - idg) <= 3 * se, (m, se, idg)


def test_task_error_with_a_given_covariance_is_that_problems_test_error():
    """task_error(pb, …, task_covariance=T) is the test error of the problem whose own law is T (exactly the same
    formula), and the identity given explicitly is the isotropic error."""
    D = 5
    rng = np.random.default_rng(2)
    T = _random_covariance(D, 3, rng)
    G = rng.standard_normal((D, D)) / D
    pb = linattn.Problem(D, 8, 0.2, task_covariance=np.r_[2.5, 2.5, 0, 0, 0])
    assert pools.task_error(pb, G, task_covariance=T) == linattn.Problem(D, 8, 0.2, task_covariance=T).test_error(G)
    iso = linattn.Problem(D, 8, 0.2)
    assert pools.task_error(pb, G, task_covariance=np.eye(D)) == pools.task_error(iso, G)
    assert pools.task_error(pb, G, task_covariance="isotropic") == pools.task_error(iso, G)   # tr S = D


def test_icl_solution_solves_the_normal_equations_of_the_law():
    """Γ_* = [(ā² + σ²)/N I + (1 + 1/N) R]⁻¹R is the minimiser of E_g(·; S): Σ̃Γ_* = R (Σ̃, R the law's exact
    moments, linattn.pools.moment_matrices), and its error is E_g(Γ_*), below the error of any perturbation."""
    D, N = 6, 9
    rng = np.random.default_rng(4)
    S = _random_covariance(D, 2, rng)
    pb = linattn.Problem(D, N, 0.4, task_covariance=S)
    sol = pb.icl_solution()
    St, R, _ = moment_matrices(pb, "reduced", gaussian_moments(pb))
    assert np.allclose(St @ sol.Gamma, R, rtol=0, atol=1e-13)
    assert np.allclose(St, pb.context_covariance, rtol=0, atol=1e-15)
    assert sol.test_error == pytest.approx(pb.test_error(sol.Gamma), rel=1e-13)
    for _ in range(5):
        assert pb.test_error(sol.Gamma + 1e-3 * rng.standard_normal((D, D))) > sol.test_error


# ---------------------------------------------------------------- sampler
def test_exact_sampler_has_the_moments_of_the_law():
    """The O(D) sampler with w ~ N(0, S): E[s sᵀ] = Σ̃ (context_covariance) and E y2 = ā² + σ² (label_variance),
    within 4 s.e. per entry over 100 000 prompts; every task of a pool lies in the span of S."""
    D, N, n = 5, 4, 100_000
    S = np.r_[2.0, 0.5, 2.5, 0.0, 0.0]
    pb = linattn.Problem(D, N, 0.3, task_covariance=S)
    d = pb.sample(n, rng=7)
    ss = d.s[:, :, None] * d.s[:, None, :]
    m, se = ss.mean(0), ss.std(0) / np.sqrt(n)
    assert np.all(np.abs(m - pb.context_covariance) <= 4 * se + 1e-15)
    assert abs(d.y2.mean() - pb.label_variance) <= 4 * d.y2.std() / np.sqrt(n)
    pool = linattn.Problem(D, N, 0.3, tasks=50, task_covariance=S).sample(1, rng=1).pool
    assert np.all(pool[:, 3:] == 0.0) and np.all(pool[:, :3] != 0.0)
