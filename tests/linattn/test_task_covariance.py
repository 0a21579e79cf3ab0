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


# ---------------------------------------------------------------- the low-rank law
def test_low_rank_covariance_is_the_papers_law():
    """S = (D/r) A Aᵀ: r eigenvalues D/r, the rest exactly 0, tr S = D; rotated by a Haar-random orthogonal basis
    (reproducible from rng) or along the first r axes; tasks drawn from it are w = √(D/r) A v with v ~ N(0, I_r)
    (their empirical covariance within 4 s.e. per entry over 50 000 draws)."""
    D, r = 8, 3
    S = pools.low_rank_covariance(D, r, rng=5)
    assert S.rank == r and S.trace == pytest.approx(D) and np.count_nonzero(S.spectrum == 0.0) == D - r
    assert np.allclose(S.basis.T @ S.basis, np.eye(D), atol=1e-12)
    A = S.basis[:, S.spectrum > 0]
    assert np.allclose(S.matrix, D / r * A @ A.T, atol=1e-12)
    assert pools.low_rank_covariance(D, r, rng=5) == S and pools.low_rank_covariance(D, r, rng=6) != S
    flat = pools.low_rank_covariance(D, r, rotate=False)
    assert flat.basis is None and np.array_equal(flat.spectrum, np.r_[np.full(r, D / r), np.zeros(D - r)])
    assert linattn.Problem(D, 4, task_covariance=pools.low_rank_covariance(D, D, rng=1)).task_covariance is None
    w = S.draw(np.random.default_rng(0), 50_000)
    ww = w[:, :, None] * w[:, None, :]
    assert np.all(np.abs(ww.mean(0) - S.matrix) <= 4 * ww.std(0) / np.sqrt(len(w)) + 1e-12)


# ---------------------------------------------------------------- properties (hypothesis)
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _law(D, r, seed):
    """A random PSD S of rank r in dimension D: eigenvalues in [0.1, 3], a Haar-random basis."""
    rng = np.random.default_rng(seed)
    s = np.r_[rng.uniform(0.1, 3.0, r), np.zeros(D - r)]
    U = np.linalg.qr(rng.standard_normal((D, D)))[0]
    return (U * s) @ U.T


@given(D=st.integers(2, 5), data=st.data(), N=st.integers(2, 8), noise=st.floats(0.0, 1.0),
       full=st.booleans(), seed=st.integers(0, 2**31))
def test_property_test_error_matches_monte_carlo(D, data, N, noise, full, seed):
    """For random S (any rank 1 … D, random basis) and random (Γ, v): pb.test_error equals the mean of ½(y_q − ŷ)²
    over 20 000 raw-token prompts with w ~ N(0, S) within 4.5 s.e. (a false alarm has probability 7e-6 per example:
    below 0.2 % over the 250 examples of the matrix profile)."""
    r = data.draw(st.integers(1, D))
    rng = np.random.default_rng(seed)
    pb = linattn.Problem(D, N, noise, task_covariance=_law(D, r, seed))
    G = rng.standard_normal((D, D)) / D
    v = 0.2 * rng.standard_normal(D) if full else None
    m, se = _mc_error(pb, G, v, 20_000, rng)
    assert abs(m - pb.test_error(G, v)) <= 4.5 * se, (m, se, pb.test_error(G, v))


@given(D=st.integers(1, 6), N=st.integers(1, 9), noise=st.floats(0.0, 2.0), tasks=st.sampled_from([None, 1, 3]),
       form=st.sampled_from(["vector", "matrix", "object", "low_rank"]), seed=st.integers(0, 2**31))
def test_property_identity_is_the_isotropic_problem_bit_for_bit(D, N, noise, tasks, form, seed):
    """S = I in any form (a vector of ones, the identity matrix, a TaskCovariance, low_rank_covariance with r = D) is
    the isotropic problem: the same Problem, the same draws, and bit for bit the same exact errors and engines."""
    import replica

    S = {"vector": np.ones(D), "matrix": np.eye(D), "object": TaskCovariance(np.ones(D)),
         "low_rank": pools.low_rank_covariance(D, D, rng=seed)}[form]
    iso = linattn.Problem(D, N, noise, tasks=tasks)
    pb = linattn.Problem(D, N, noise, tasks=tasks, task_covariance=S)
    assert pb == iso and pb.task_covariance is None
    rng = np.random.default_rng(seed)
    G, v = rng.standard_normal((D, D)), rng.standard_normal(D)
    assert pb.test_error(G, v) == iso.test_error(G, v)
    a, b = pb.sample(7, rng=seed), iso.sample(7, rng=seed)
    assert np.array_equal(a.s, b.s) and np.array_equal(a.yq, b.yq)
    ga, gb = replica.gibbs(a, pb, 50.0, 0.1, "full"), replica.gibbs(b, iso, 50.0, 0.1, "full")
    assert ga.test == gb.test and ga.train == gb.train and ga.test_odg is None


@given(D=st.integers(2, 6), kind=st.sampled_from(["negative", "indefinite", "shape", "nan", "link", "inputs"]),
       seed=st.integers(0, 2**31))
def test_property_bad_task_covariances_are_refused_by_name(D, kind, seed):
    """Bad S — a negative eigenvalue (vector), an indefinite matrix (one eigenvalue below −1e-6 of the largest),
    a wrong shape, a NaN entry — and a valid S with what the theory does not cover (a nonlinear link, anisotropic
    inputs) are refused with a ValueError naming task_covariance."""
    rng = np.random.default_rng(seed)
    good, kw = _law(D, max(1, D - 1), seed), {}
    if kind == "negative":
        bad = np.abs(rng.standard_normal(D)) + 0.1
        bad[rng.integers(D)] = -rng.uniform(1e-6, 1.0)
    elif kind == "indefinite":
        U = np.linalg.qr(rng.standard_normal((D, D)))[0]
        s = rng.uniform(0.5, 2.0, D)
        s[0] = -rng.uniform(1e-6, 1.0) * s.max()
        bad = (U * s) @ U.T
    elif kind == "shape":
        bad = np.ones((D, D + 1)) if rng.integers(2) else np.ones(D + 1)
    elif kind == "nan":
        bad = good.copy()
        bad[rng.integers(D), rng.integers(D)] = np.nan
    else:
        bad = good
        kw = dict(link="tanh") if kind == "link" else dict(covariance=np.linspace(0.5, 1.5, D))
    with pytest.raises(ValueError, match="task_covariance"):
        linattn.Problem(D, 4, 0.1, task_covariance=bad, **kw)


def test_tasks_and_draw_check_their_arguments():
    """TaskCovariance.tasks took NaN or wrongly shaped normals silently (NaN tasks, or a numpy shape error),
    draw raised AttributeError for a seed in place of a Generator and MemoryError for a huge n; and
    low_rank_covariance(10**12, 1) raised MemoryError: each is a ValueError naming the argument."""
    S = pools.low_rank_covariance(4, 2, rng=0)
    g = np.random.default_rng(1).standard_normal((3, 2))
    assert np.array_equal(S.tasks(g), g @ S.factor.T)
    assert S.draw(np.random.default_rng(2), 5).shape == (5, 4)
    assert S.draw(np.random.default_rng(2), 0).shape == (0, 4)
    for bad in (np.full((3, 2), np.nan), np.ones((3, 3)), "x", [[1.0], [1.0, 2.0]]):
        with pytest.raises(ValueError, match=r"TaskCovariance\.tasks: g must be"):
            S.tasks(bad)
    for gen in (0, None, "x"):
        with pytest.raises(ValueError, match=r"TaskCovariance\.draw: gen must be a numpy\.random\.Generator"):
            S.draw(gen, 3)
    for n in (-1, 2.5, np.nan):
        with pytest.raises(ValueError, match=r"TaskCovariance\.draw: n must be"):
            S.draw(np.random.default_rng(0), n)
    with pytest.raises(ValueError, match=r"TaskCovariance\.draw: n too large"):
        S.draw(np.random.default_rng(0), 10**12)
    with pytest.raises(ValueError, match=r"^linattn\.pools\.low_rank_covariance: D too large"):
        pools.low_rank_covariance(10**12, 1, rotate=False)
