"""Task pools: sampler, exact in-distribution error (rungs 1–2)."""
import numpy as np
import pytest
from helpers import assert_mean, assert_refused, name_as_word, name_not_within_words_or_after_a_dot, refusals

import linattn
from linattn import _idg as pools
from linattn import _sampling as sampling
from linattn._task_moments import error_from_moments


def test_pool_sampler_shapes_laws_and_assignment():
    pb = linattn.Problem(5, 7, 0.2, tasks=4, task_law="sphere", assignment="balanced")
    d = pb.sample(18, rng=3)
    assert d.pool.shape == (4, 5) and d.task.shape == (18,) and d.K == 4
    np.testing.assert_allclose(np.sum(d.pool**2, axis=1), 5.0, rtol=1e-13)      # |w|² = D
    counts = np.bincount(d.task, minlength=4)
    assert counts.max() - counts.min() <= 1 and counts.sum() == 18                # balanced
    again = pb.sample(18, rng=3)
    np.testing.assert_array_equal(again.s, d.s)
    np.testing.assert_array_equal(again.task, d.task)
    sub = d.take(np.array([1, 4]))
    np.testing.assert_array_equal(sub.task, d.task[[1, 4]])
    np.testing.assert_array_equal(sub.pool, d.pool)
    assert linattn.Problem(5, 7).sample(3, rng=0).pool is None


def test_pool_labels_follow_the_prompt_task():
    """y_q − w_task·x_q/√D is pure noise: the query label uses the prompt's own pool task."""
    pb = linattn.Problem(6, 5, 0.0, tasks=3)
    d = pb.sample(50, rng=1)
    np.testing.assert_allclose(d.yq, np.einsum("pd,pd->p", d.pool[d.task], d.xq) / np.sqrt(6), atol=1e-12)


def test_fast_sampler_matches_token_sampler_with_a_pool():
    """Conditional moments given the task: E[s | w] = w/√D, E[y2 | w] = |w|²/D + σ² (both samplers)."""
    pb = linattn.Problem(4, 6, 0.3, tasks=2)
    n = 40_000
    fast = pb.sample(n, rng=5)
    naive = sampling.sample_naive(pb, n // 4, rng=6)
    for d in (fast, naive):
        for k in range(2):
            sel = d.task == k
            a = d.pool[k] / 2.0
            for j in range(4):
                assert_mean(d.s[sel, j], a[j], label=f"s[{j}] | task {k}")
            assert_mean(d.y2[sel], a @ a + 0.09, label=f"y2 | task {k}")


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_in_distribution_error_against_monte_carlo(model):
    """Exact E_IDG (pools module docstring) vs prompts drawn token by token on the pool's tasks."""
    pb = linattn.Problem(5, 8, 0.4, tasks=3)
    rng = np.random.default_rng(11)
    W = rng.standard_normal((3, 5))
    G = 0.3 * rng.standard_normal((5, 5))
    v = 0.2 * rng.standard_normal(5) if model == "full" else None
    errs = []
    for _ in range(20):
        tok = sampling.sample_tokens(pb, 10_000, rng, w=W[rng.integers(0, 3, 10_000)]).prompts()
        r = tok.yq - tok.predict(G, v)
        errs.append(0.5 * r * r)
    assert_mean(np.concatenate(errs), linattn.pools.idg_error(pb, W, G, v), label="E_IDG")
    met = pools.idg_metric(pb, W, model)
    theta = G.ravel() if v is None else np.concatenate([G.ravel(), v])
    assert met.error(theta) == pytest.approx(linattn.pools.idg_error(pb, W, G, v), rel=1e-13)
    E = np.eye(theta.size)
    C = met.apply(E)
    np.testing.assert_allclose(C, C.T, atol=1e-15)
    assert np.trace(C) == pytest.approx(met.trace, rel=1e-13)


def test_gaussian_task_average_is_the_fresh_task_error():
    """Averaging the IDG moments over w ~ N(0, I) gives conventions §2: R = I/D, m = 0, v₂ = (1+σ²)² + 2/D."""
    pb = linattn.Problem(3, 4, 0.5)
    rng = np.random.default_rng(0)
    G, v = rng.standard_normal((3, 3)), rng.standard_normal(3)
    # exact moments of the Gaussian law inserted by hand
    mo = pools.TaskMoments(K=1, mean_sq=1.0, R=np.eye(3) / 3, m=np.zeros(3), v2=(1 + 0.25) ** 2 + 2 / 3)
    assert error_from_moments(pb, mo, G, v) == pytest.approx(pb.test_error(G, v), rel=1e-13)


def test_bad_pool_arguments():
    with pytest.raises(ValueError, match="task_law"):
        linattn.Problem(3, 4, task_law="sphere")                 # sphere needs a pool
    with pytest.raises(ValueError, match="tasks"):
        linattn.Problem(3, 4, tasks=2, covariance=[1.0, 2.0, 3.0])
    d = linattn.Problem(3, 4, tasks=2).sample(5, rng=0)
    with pytest.raises(ValueError, match="task"):
        linattn.Prompts(s=d.s, xq=d.xq, yq=d.yq, pool=d.pool, task=d.task + 5)
    with pytest.raises(ValueError, match="pool and task"):
        linattn.Prompts(s=d.s, xq=d.xq, yq=d.yq, pool=d.pool)
    with pytest.raises(ValueError, match="linear link"):          # the v block with a nonlinear link: not derived
        pools.idg_error(linattn.Problem(3, 4, link="tanh"), np.ones((2, 3)), np.eye(3), np.ones(3))
    # the reduced model with a nonlinear link is exact (linattn.kernel_learner, φ(x) = x; tested against Monte Carlo
    # in tests/linattn/test_kernel_learner.py)
    assert pools.idg_error(linattn.Problem(3, 4, link="tanh"), np.ones((2, 3)), np.eye(3)) > 0


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(3, 4, 0.1)
PB_4_8 = linattn.Problem(4, 8, 0.1)
POOL = linattn.Problem(4, 8, 0.1, tasks=3)


REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("idg-error-nan", lambda: pools.idg_metric(POOL, np.ones((2, 4))).error(np.full(16, np.nan)), "theta"),
    ("idg-error-huge", lambda: pools.idg_metric(POOL, np.ones((2, 4))).error(np.ones(16) * 1e200), "theta"),
    ("idg-error-shape", lambda: pools.idg_metric(POOL, np.ones((2, 4))).error(np.ones(5)), "theta"),
    ("idg-apply-str", lambda: pools.idg_metric(POOL, np.ones((2, 4))).apply("abc"), "theta"),
    ("idg-apply-scalar", lambda: pools.idg_metric(POOL, np.ones((2, 4))).apply(1.0), "theta"),
]) + refusals(name_as_word, [
    ("task-moments", lambda: linattn.pools.task_moments(PB_4_8, np.ones((3, 4)) * 1e200), "pool"),
    # memory guards
    ("draw-pool", lambda: linattn.pools.draw_pool(linattn.Problem(4, 8, 0.1, tasks=3), 10**9, rng=0), "P"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_context_statistics_tiny_rows_accepted():
    """Rows of norm 1e-200 underflowed |w|² to 0 and were refused as zero rows with a garbled message."""
    rng = np.random.default_rng(0)
    chi2, zeta = rng.chisquare(4, 2), rng.standard_normal((2, 3))
    s, y2 = pools.context_statistics(PB, np.full((2, 3), 1e-200), chi2, zeta)
    assert np.all(np.isfinite(s)) and np.all(np.isfinite(y2))
    s1, y21 = pools.context_statistics(PB, np.full((2, 3), 1e-100), chi2, zeta)
    np.testing.assert_allclose(s, s1, rtol=1e-12, atol=1e-300)      # the task's contribution is below rounding


def test_context_statistics_zero_row_message():
    with pytest.raises(ValueError, match=r"w must be an array of shape \(n, 3\) without a zero row.*row 1"):
        pools.context_statistics(PB, np.array([[1.0, 0, 0], [0, 0, 0]]), np.full(2, 4.0), np.ones((2, 3)))


def test_context_statistics_overflow_names_w():
    with pytest.raises(ValueError, match=r"\bw\b"):
        pools.context_statistics(PB, np.full((2, 3), 1e200), np.full(2, 4.0), np.ones((2, 3)))
