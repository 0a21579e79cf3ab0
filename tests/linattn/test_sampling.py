"""The exact O(D) sampler against the naive sampler that builds X (test ladder rungs 1–2)."""
import numpy as np
import pytest
from helpers import assert_mean, assert_refused, name_as_word, name_not_within_words_or_after_a_dot, refusals
from scipy import stats

import linattn
from linattn import Problem
from linattn import _invariants as invariants
from linattn import _sampling as sampling
from linattn.links import Link

# Two-sample KS tests at level 1e-3: a correct sampler fails one by chance with probability 1e-3.
ALPHA = 1e-3


def _naive_with_tasks(pb, P, rng):
    parts = [sampling.sample_tokens(pb, 500, rng) for _ in range(P // 500)]
    data = [t.prompts() for t in parts]
    return (linattn.Prompts(s=np.concatenate([d.s for d in data]), xq=np.concatenate([d.xq for d in data]),
                            yq=np.concatenate([d.yq for d in data]), y2=np.concatenate([d.y2 for d in data])),
            np.concatenate([t.w for t in parts]))


@pytest.mark.parametrize("D, N, noise, link", [(10, 100, 0.0, "linear"), (6, 9, 0.5, "linear"), (1, 4, 0.3, "linear"),
                                               (2, 3, 0.0, "linear"), (5, 7, 0.2, "tanh"), (4, 6, 0.0, "relu"),
                                               (3, 5, 0.3, "sign"), (4, 3, 0.0, "hermite:2"), (1, 4, 0.1, "tanh")])
def test_exact_sampler_matches_naive_in_distribution(D, N, noise, link, rng):
    """The O(D) sampler (linear links) and the O(N + D) sampler (other links) against tokens."""
    pb = Problem(D, N, noise, link=link)
    fast, w_fast = sampling.sample_with_tasks(pb, 40_000, rng)
    slow, w_slow = _naive_with_tasks(pb, 20_000, rng)
    for name, a, b in [
        ("|s|²", np.sum(fast.s**2, 1), np.sum(slow.s**2, 1)),
        ("s·w", np.sum(fast.s * w_fast, 1), np.sum(slow.s * w_slow, 1)),
        ("y2", fast.y2, slow.y2),
        ("s·x_q", np.sum(fast.s * fast.xq, 1), np.sum(slow.s * slow.xq, 1)),
        ("y_q·(s·x_q)", fast.yq * np.sum(fast.s * fast.xq, 1), slow.yq * np.sum(slow.s * slow.xq, 1)),
    ]:
        p = stats.ks_2samp(a, b).pvalue
        assert p > ALPHA, f"{name}: KS p-value {p:.2e}"
    # moments against their exact values, for both samplers
    for data in (fast, slow):
        F = data.features("full")
        assert_mean(np.mean(F[:, : D * D] ** 2, 1), pb.feature_variance, label="c")
        assert_mean(np.mean(F[:, D * D:] ** 2, 1), pb.feature_variance_v, label="c_v")
        assert_mean(data.y2, pb.label_variance, label="E[y2]")
        assert_mean(data.yq**2, pb.label_variance, label="E[y_q²]")
        assert_mean(np.sum(data.s * data.xq, 1) * data.yq, pb.teacher_strength, label="E[y_q s·x_q] = b")


def test_reproducible_and_blocks_independent(rng):
    """Same seed, same prompts; the internal blocks give independent prompts (no repeated rows, as a
    restarted generator would give) with the same law from seed to seed (two-sample KS tests on |s|², y2 and
    s·x_q at level 1e-3)."""
    pb = Problem(5, 7, 0.2)
    a = pb.sample(1000, rng=3)
    b = pb.sample(1000, rng=3)
    assert np.array_equal(a.s, b.s) and np.array_equal(a.yq, b.yq)
    assert not np.array_equal(a.s, pb.sample(1000, rng=4).s)
    big = pb.sample(20_000, rng=5)
    small = pb.sample(20_000, rng=6)
    assert np.unique(small.s[:, 0]).size == small.P and np.unique(small.xq[:, 0]).size == small.P
    for name, x, y in (("|s|²", np.sum(big.s**2, 1), np.sum(small.s**2, 1)), ("y2", big.y2, small.y2),
                       ("s·x_q", np.sum(big.s * big.xq, 1), np.sum(small.s * small.xq, 1))):
        assert stats.ks_2samp(x, y).pvalue > ALPHA, name


@pytest.mark.parametrize("pb", [Problem(7, 15, 0.4), Problem(5, 6, 0.3, link="tanh"), Problem(4, 5, 0.0, link="relu"),
                                Problem(3, 4, 0.2, link="sign")], ids=lambda pb: pb.link.name)
def test_invariants_transport_map_matches_prompts(pb, rng):
    """The transport of linattn.invariants (8 variables for linear links, 6 + N (+ N) otherwise) has
    the law of the invariants of sampled prompts."""
    direct = invariants.from_prompts(pb, pb.sample(30_000, rng))
    u = rng.uniform(size=(30_000, invariants.n_primitives(pb)))
    mapped = invariants.from_uniforms(pb, u)
    for name in ("xi1", "xi2", "f", "y"):
        p = stats.ks_2samp(getattr(direct, name), getattr(mapped, name)).pvalue
        assert p > ALPHA, f"{name}: KS p-value {p:.2e}"
    p = stats.ks_2samp(direct.f * direct.y, mapped.f * mapped.y).pvalue
    assert p > ALPHA
    assert_mean(mapped.xi1, 1.0, label="E xi1")
    assert_mean(mapped.xi2, pb.feature_variance_v / pb.feature_variance, label="E xi2")
    assert_mean(mapped.f * mapped.y, np.sqrt(pb.teacher_norm2), label="E f y = t")


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)


def _huge_in_the_sampler(z):
    """tanh on the quadrature's arrays, 1e80·tanh on the sampler's (n, N = 8) context labels."""
    return np.tanh(z) * (1e80 if np.shape(z)[-1:] == (8,) else 1.0)


REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("sample-link", lambda: linattn.Problem(4, 8, 0.0, link=_huge_in_the_sampler).sample(5, rng=0), "pb"),
    ("sample-naive-link", lambda: sampling.sample_naive(linattn.Problem(4, 8, 0.0, link=_huge_in_the_sampler), 5,
                                                        rng=0), "pb"),
    ("sample-covariance", lambda: linattn.Problem(4, 8, 1.0, link=Link.linear(1e30),
                                                  covariance=[1e30, 1, 1, 1]).sample(5, rng=0), "pb"),
    ("sample-naive-N", lambda: sampling.sample_naive(linattn.Problem(4, 10**9), 1, rng=0), "pb.N"),
    ("sample-tokens-N", lambda: sampling.sample_tokens(linattn.Problem(4, 10**9), 1), "pb.N"),
    ("sample-D", lambda: linattn.Problem(10**9, 8).sample(1), "pb.D"),
]) + refusals(name_as_word, [
    # hangs: loops bounded by validated sizes
    ("sample-naive", lambda: sampling.sample_naive(PB, 10**9, rng=0), "P"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
