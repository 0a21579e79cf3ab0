"""The bigram-embedding bottleneck of the Markov-chain task (linattn.markov._bottleneck; arXiv:2604.12151)."""
import math

import numpy as np
import pytest
from helpers import (
    assert_refused,
    name_as_escaped_word,
    name_as_word,
    name_not_within_letters,
    name_starts_too_large,
    refusals,
)

from linattn import ConvergenceError, markov
from linattn.markov import _bottleneck as bn
from replica import _bottleneck_theory as bt

C = 10


def test_pooled_embedding_is_the_mean_bigram_embedding():
    rng = np.random.default_rng(0)
    states = rng.integers(0, 4, size=(5, 9))
    E = rng.normal(size=(16, 3))
    loop = np.array([[E[a * 4 + b] for a, b in zip(s[:-1], s[1:])] for s in states]).mean(axis=1)
    np.testing.assert_allclose(bn.pooled_embedding(states, E), loop, atol=1e-14)
    f = bn.pooled_embedding(states, bn.one_hot_embedding(4))          # bigram frequencies
    np.testing.assert_allclose(f.sum(axis=1), 1.0, atol=1e-14)


def test_sampled_pooled_embeddings_follow_the_gaussian_model_and_reject_the_multinomial_covariance():
    """Stationary paths: E[m | k] = c_k exactly; Var(v·m | k) is the Markov covariance (within 4 s.e.), while the
    authors' multinomial covariance (independent bigrams) is rejected by the same assertion for chain 0."""
    ch = markov.Chains(C=3, concentration=1.0, K=2)
    pool = ch.draw_pool(7)
    s = ch.sample(4000, 200, rng=8, pool=pool)
    m = bn.pooled_embedding(s.states, bn.one_hot_embedding(3))
    p = bn.bigram_laws(pool)
    markov_cov = bn._markov_covariance(pool, p) / 199
    v = np.random.default_rng(1).normal(size=9)
    rejected = []
    for k in range(2):
        mk = m[s.task == k]
        n = len(mk)
        z_mean = (mk.mean(axis=0) - p[k]) / (mk.std(axis=0, ddof=1) / math.sqrt(n))
        assert np.all(np.abs(z_mean) < 4)
        u = mk @ v
        var = u.var(ddof=1)
        se = math.sqrt((np.mean((u - u.mean()) ** 4) - var ** 2) / n)      # s.e. of a sample variance
        assert abs(var - v @ markov_cov[k] @ v) < 4 * se                  # O(1/n) finite-length bias: 0.5 %
        multinomial = v @ (np.diag(p[k]) - np.outer(p[k], p[k])) @ v / 199
        rejected.append(abs(var - multinomial) >= 4 * se)
    assert rejected[0]


def test_information_is_exactly_invariant_under_invertible_maps_of_the_embedding():
    pool = markov.Chains(C=C, concentration=1.0, K=32).draw_pool(1)
    R = bn.random_projection(C, 8, 3)
    M = np.random.default_rng(0).normal(size=(8, 8)) + 3 * np.eye(8)
    a = bn.information(pool, R, 101, 1024, rng=5)
    b = bn.information(pool, R @ M + np.arange(8.0)[None, :], 101, 1024, rng=5)   # E -> E M + 1 h^T
    assert abs(a.bits - b.bits) < 1e-10 and abs(a.bits_se - b.bits_se) < 1e-10
    m1 = bn.information(pool[:8], R, 101, 256, rng=5, covariance="markov")
    m2 = bn.information(pool[:8], R @ M + 1.0, 101, 256, rng=5, covariance="markov")
    assert abs(m1.bits - m2.bits) < 1e-10
    # a redundant column (rank stays 8) changes nothing either
    c = bn.information(pool, np.hstack([R, R @ np.ones((8, 1))]), 101, 1024, rng=5)
    assert c.rank == 8 and abs(c.bits - a.bits) < 1e-10


def test_information_never_exceeds_log_K_and_the_one_hot_embedding_saturates():
    pool = markov.Chains(C=C, concentration=1.0, K=64).draw_pool(2)
    for E in (bn.random_projection(C, 4, 0), bn.one_hot_embedding(C)):
        r = bn.information(pool, E, 101, 1024, rng=3)
        assert r.bits <= r.max_bits + 1e-12 and r.max_bits == 6.0
    # one-hot (no bottleneck, rank C² − 1 = 99): the 64 chains are told apart (Gaussian-channel capacity ~ 47 bits)
    assert r.rank == 99 and r.bits > 6.0 - 4 * r.bits_se - 1e-9
    one = bn.information(pool[:1], bn.random_projection(C, 4, 0), 101, 16, rng=0)
    assert one.bits == 0.0 and one.max_bits == 0.0


def test_unigram_embedding_is_rejected_by_the_k2_criterion_at_the_same_dimension():
    """d = 32, n = 100 bigrams, K = 256: the bigram projection keeps log2 K − I <= 1 bit (measured 0.04), the
    unigram embedding (rank C − 1 = 9) loses 3.6 bits — the same assertion fails for the baseline."""
    pool = markov.Chains(C=C, concentration=1.0, K=256).draw_pool(2)
    big = bn.information(pool, bn.random_projection(C, 32, 3), 101, 512, rng=1)
    uni = bn.information(pool, bn.unigram_embedding(C, 32, 3), 101, 512, rng=1)
    assert uni.rank == C - 1
    assert big.max_bits - big.bits + 4 * big.bits_se <= 1.0
    assert not uni.max_bits - uni.bits + 4 * uni.bits_se <= 1.0
    assert big.bits - uni.bits > 4 * math.hypot(big.bits_se, uni.bits_se)


def test_deterministic_approximation_matches_the_estimator_and_rejects_the_common_noise_closed_form():
    """d = 16, n = 100, K ∈ {64, 256}, 4 pools: the approximation with the heteroscedastic capacity is within
    0.35 bits of the pool-averaged estimate (measured |gap| <= 0.29 bits for d ∈ {4, 8, 16}, n ∈ {100, 400},
    K ∈ {16 … 1024}, docs/markov_bottleneck.md); the common-noise closed form (π ≈ 1/C, projection_channel)
    fails the same assertion at K = 256 (measured 0.88 bits low)."""
    R = bn.random_projection(C, 16, 3)
    ch = bt.channel(R, 101, bn.prior_moments(C, 1.0, n_chains=5000, rng=0))
    closed = bt.projection_channel(C, 1.0, 16, 101)
    for K in (64, 256):
        est = bn.information_mean(C, 1.0, K, R, 101, n_pools=4, rng=K, n_samples=1024)
        assert abs(est.bits_mean - bt.information_theory(K, ch)) <= 0.35 + 4 * est.bits_se
    assert not abs(est.bits_mean - bt.information_theory(K, closed)) <= 0.35 + 4 * est.bits_se
    np.testing.assert_allclose(bt.information_theory([1, 16, 64], ch)[1:], [bt.information_theory(16, ch),
                                                                              bt.information_theory(64, ch)])
    assert bt.information_theory(1, ch) == 0.0


def test_k2_estimate_is_within_one_bit_of_the_approximation():
    """d = 8, n = 100 (C = 10, α = 1): log2 K2* = 4.04 ± 0.14 measured vs 3.23 from the approximation; the
    approximation is low by 0.1–0.85 bits over the nine (C, d, L) of docs/markov_bottleneck.md."""
    R = bn.random_projection(C, 8, 3)
    est = bn.k2(C, 1.0, R, 101, n_pools=4, rng=0, n_samples=512, K_max=1024)
    th = math.log2(bt.k2_theory(bt.channel(R, 101, bn.prior_moments(C, 1.0, n_chains=5000, rng=0))))
    assert th <= est.log2_k2 + 4 * est.log2_k2_se
    assert est.log2_k2 - th <= 1.0 + 4 * est.log2_k2_se


def test_k2_theory_inverts_the_approximation_and_has_the_capacity_limit():
    ch = bt.projection_channel(C, 1.0, 8, 110)                      # λ0 = 1, I_inf = 4 bits
    assert ch.capacity_bits == pytest.approx(4.0, abs=1e-14) and ch.spread == pytest.approx(4.0, abs=1e-14)
    K2 = bt.k2_theory(ch, gap=1.0)
    # the deficit at K2* is the gap (real K through K − 1 = e^{log K} − 1)
    x = math.log(K2 - 1.0) - 4.0 * math.log(2) + 2.0 * bt._GH_X
    assert np.sum(bt._GH_W * np.logaddexp(0.0, x)) / math.log(2) == pytest.approx(1.0, abs=1e-9)
    # no spread: K2* = 1 + e^{I_inf}
    flat = bt.Channel(snr=np.zeros(0), capacity_bits=5.0, capacity_se_bits=0.0, spread=0.0, n_bigrams=1)
    assert bt.k2_theory(flat) == pytest.approx(1.0 + 2.0 ** 5.0, rel=1e-9)


def test_prior_moments_identities():
    for n_chains in (0, 2000):
        mom = bn.prior_moments(4, 0.7, n_chains=n_chains, rng=1)
        np.testing.assert_allclose(mom.within @ np.ones(16), 0.0, atol=1e-15)      # Σ f = 1: no noise along 1
        np.testing.assert_allclose(mom.between @ np.ones(16), 0.0, atol=1e-15)
        assert mom.mean.sum() == pytest.approx(1.0, abs=1e-14)
    # closed-form projection channel: r = min(d, C(C − 1)) directions of λ0 = n/(C(Cα + 1) − 1)
    ch = bt.projection_channel(3, 1.0, 50, 34)
    assert ch.snr.shape == (6,) and np.all(ch.snr == 33 / 11)


def test_k2_estimate_is_reproducible_and_brackets_the_crossing():
    R = bn.random_projection(C, 4, 3)
    r = bn.k2(C, 1.0, R, 101, n_pools=3, rng=4, n_samples=512, K_max=256)
    again = bn.k2(C, 1.0, R, 101, n_pools=3, rng=4, n_samples=512, K_max=256)
    assert r.log2_k2 == again.log2_k2 and r.k2 == pytest.approx(2.0 ** r.log2_k2)
    for i, x in enumerate(r.log2_k2_seeds):
        deficit = np.log2(r.Ks) - r.bits[i]
        j = np.nanargmax(deficit > 1.0)                     # first grid point past the criterion
        assert deficit[j] > 1.0 and (j == 0 or deficit[j - 1] <= 1.0)
        assert (np.log2(r.Ks[j - 1]) if j else 0.0) <= x <= np.log2(r.Ks[j])
    with pytest.raises(ConvergenceError, match="K_max"):
        bn.k2(C, 1.0, bn.random_projection(C, 16, 0), 401, n_pools=2, rng=0, n_samples=64, K_max=8)


def test_bad_inputs():
    pool = markov.Chains(C=3, concentration=1.0, K=2).draw_pool(0)
    E = bn.one_hot_embedding(3)
    with pytest.raises(ValueError, match="E must be"):
        bn.pooled_embedding(np.zeros((2, 3), int), np.ones((8, 2)))              # 8 is not C²
    with pytest.raises(ValueError, match="E must be"):
        bn.information(pool, np.full((9, 2), np.nan), 10)
    with pytest.raises(ValueError, match="states must be"):
        bn.pooled_embedding(np.array([[0, 3]]), E)                                 # state out of range
    with pytest.raises(ValueError, match="states must be"):
        bn.pooled_embedding(np.array([[0.0, 1.0]]), E)
    with pytest.raises(ValueError, match="states must be"):
        bn.pooled_embedding(np.array([[0], [1]]), E)                               # L = 1: no bigram
    with pytest.raises(ValueError, match="length must be"):
        bn.information(pool, E, 1)
    with pytest.raises(ValueError, match="covariance must be"):
        bn.information(pool, E, 10, covariance="poisson")
    with pytest.raises(ValueError, match="n_samples must be"):
        bn.information(pool, E, 10, n_samples=1)
    with pytest.raises(ValueError, match="pool must be"):
        bn.information(pool, bn.one_hot_embedding(4), 10)                          # C mismatch
    with pytest.raises(ValueError, match="pool must be"):
        bn.information(np.zeros((0, 3, 3)), E, 10)                                 # empty pool
    with pytest.raises(ValueError, match="pool must be"):
        bn.information(np.full((2, 3, 3), 0.5), E, 10)                             # rows do not sum to 1
    with pytest.raises(ValueError, match="E must give different"):
        bn.information(pool, np.ones((9, 3)), 10)
    with pytest.raises(ValueError, match="gap must be"):
        bn.k2(3, 1.0, E, 10, gap=0.0)
    with pytest.raises(ValueError, match="moments must be"):
        bt.channel(E, 10, None)
    with pytest.raises(ValueError, match="K must be"):
        bt.information_theory(0, bt.projection_channel(3, 1.0, 2, 10))
    with pytest.raises(ValueError, match="n_chains must be"):
        bn.prior_moments(3, 1.0, n_chains=10)
    with pytest.raises(ValueError, match="d must be"):
        bn.random_projection(3, 0, 0)


# ----------------------------------------------------------------------------- the bad-input table of the module
from helpers import Row, sweep_tests  # noqa: E402

_C3 = 3
_POOL = markov.Chains(_C3, 1.0, K=3).draw_pool(0)
_E = bn.random_projection(_C3, 4, rng=1)
_STATES = markov.Chains(_C3, 1.0, K=3).sample(4, 6, 0).states
_MOM = bn.prior_moments(_C3, 1.0, n_chains=200, rng=0)
_CH = bt.channel(_E, 11, _MOM, n_logdet=50)
ROWS = [
    Row("bottleneck.one_hot_embedding", bn.one_hot_embedding, dict(C=_C3), dict(C="posint")),
    Row("bottleneck.random_projection", bn.random_projection, dict(C=_C3, d=4, rng=1),
        dict(C="posint", d="posint", rng="rng")),
    Row("bottleneck.unigram_embedding", bn.unigram_embedding, dict(C=_C3, d=4, rng=1),
        dict(C="posint", d="posint", rng="rng")),
    Row("bottleneck.pooled_embedding", bn.pooled_embedding, dict(states=_STATES, E=_E),
        dict(states="array_shape", E="array_shape")),
    Row("bottleneck.bigram_laws", bn.bigram_laws, dict(pool=_POOL), dict(pool="array_shape")),
    Row("bottleneck.information", bn.information, dict(pool=_POOL, E=_E, length=11, n_samples=64, rng=0),
        dict(pool="array_shape", E="array_shape", length="posint", n_samples="posint", rng="rng",
             covariance="choice")),
    Row("bottleneck.information_mean", bn.information_mean,
        dict(C=_C3, concentration=1.0, K=3, E=_E, length=11, n_pools=2, rng=0, n_samples=64),
        dict(C="posint", concentration="positive", K="posint", E="array_shape", length="posint", n_pools="posint",
             rng="rng", n_samples="posint", covariance="choice")),
    Row("bottleneck.k2", bn.k2, dict(C=_C3, concentration=1.0, E=_E, length=11, n_pools=2, rng=0, n_samples=64,
                                     K_max=64),
        dict(C="posint", concentration="positive", E="array_shape", length="posint", gap="positive", n_pools="posint",
             rng="rng", n_samples="posint", K_max="posint", step="positive")),
    Row("bottleneck.reduced_embedding", bn.reduced_embedding, dict(E=_E, C=_C3),
        dict(E="array_shape", C="posint")),
    Row("bottleneck.prior_moments", bn.prior_moments, dict(C=_C3, concentration=1.0, n_chains=200, rng=0),
        dict(C="posint", concentration="positive", rng="rng")),
    Row("bottleneck_theory.channel", bt.channel, dict(E=_E, length=11, moments=_MOM, n_logdet=50),
        dict(E="array_shape", length="posint", n_logdet="posint")),
    Row("bottleneck_theory.projection_channel", bt.projection_channel, dict(C=_C3, concentration=1.0, d=4, length=11),
        dict(C="posint", concentration="positive", d="posint", length="posint")),
    Row("bottleneck_theory.information_theory", bt.information_theory, dict(K=4, ch=_CH), dict(K="posint")),
    Row("bottleneck_theory.k2_theory", bt.k2_theory, dict(ch=_CH), dict(gap="positive")),
]
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, markov, {"Sample", "LossCurves", "NAMES", "FIRST_STATES", "Chains", "stationary", "first_law",
                   "expected_row_entropy", "losses", "log_losses", "log_losses_naive", "predict",
                   "matched_pseudocount"})


# ----------------------------------------------------------------------------- refusals and extreme arguments
CHK = markov.Chains(C=3, concentration=1.0, K=4)
E9 = np.random.default_rng(0).normal(size=(9, 2))


REFUSED = refusals(name_as_escaped_word, [
    ("bigram-laws-reducible", lambda: bn.bigram_laws(np.eye(3)[None]), "pool"),
], limit=2**31) + refusals(name_as_word, [
    ("information-mean", lambda: markov.bottleneck.information_mean(3, 1.0, 4, E9, 10, n_pools=10**9), "n_pools"),
    ("k2-step", lambda: markov.bottleneck.k2(3, 1.0, E9, 10, step=1e-12), "step"),
    ("k2-pools", lambda: markov.bottleneck.k2(3, 1.0, E9, 10, n_pools=10**9), "n_pools"),
    ("prior-moments-concentration", lambda: markov.bottleneck.prior_moments(3, 1e-300, n_chains=100), "concentration"),
]) + refusals(name_not_within_letters, [
    ("information-mean-K", lambda: markov.bottleneck.information_mean(3, 1.0, None, E9, 10, n_pools=2, rng=0,
                                                                      n_samples=64), "K"),
    ("information-mean-concentration", lambda: markov.bottleneck.information_mean(3, 1e-300, 4, E9, 10, n_pools=2,
                                                                                  rng=0, n_samples=64),
     "concentration"),
    ("information-pool", lambda: bn.information([np.eye(3), [[1.0]]], bn.one_hot_embedding(3), 50), "pool"),
    ("pooled-embedding-states", lambda: bn.pooled_embedding([[0, 1], [1]], np.eye(4)), "states"),
    ("bigram-laws-empty", lambda: bn.bigram_laws(np.empty((0, 3, 3))), "pool"),
    # k2 with a concentration so small that the drawn pool underflows to a reducible chain: "pool must be
    # irreducible" (pool is no argument of k2); information_mean already named concentration
    ("k2-tiny-concentration", lambda: bn.k2(3, 1e-300, bn.one_hot_embedding(3), 50, n_pools=2,
                                           n_samples=64, K_max=8, rng=0), "concentration"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


TOO_LARGE = refusals(name_starts_too_large, [
    ("prior-moments-closed", lambda: bn.prior_moments(300, 1.0, n_chains=0), "C"),
    ("prior-moments-sampled", lambda: bn.prior_moments(300, 1.0, n_chains=100), "C"),
    ("information-n-samples", lambda: bn.information(CHK.draw_pool(0), np.eye(9), 10, n_samples=10**7,
                                                     rng=0), "n_samples"),
    ("information-mean-K", lambda: bn.information_mean(3, 1.0, 10**7, E9, 10, n_samples=2), "K"),
    ("k2-K-max", lambda: bn.k2(3, 1.0, E9, 10, K_max=10**9), "K_max"),
], limit=2**31)


@pytest.mark.parametrize("call, match, limit", TOO_LARGE)
def test_too_large_names_the_dominant_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_one_hot_embedding_memory_guard():
    with pytest.raises(ValueError, match=r"C too large.*GiB"):
        bn.one_hot_embedding(10**4)


def test_unigram_embedding_memory_guard():
    with pytest.raises(ValueError, match=r"C, d too large.*GiB"):
        bn.unigram_embedding(10**4, 10**4, rng=0)


@pytest.mark.usefixtures("two_gib_memory_limit")
@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_bottleneck_is_scale_invariant_in_the_embedding(scale):
    """E·1e200 gave NaN bits and a NaN channel; the quantities do not depend on the scale of E."""
    pool = CHK.draw_pool(0)
    ref, big = bn.information(pool, E9, 10, rng=0), bn.information(pool, E9 * scale, 10, rng=0)
    assert big.bits == pytest.approx(ref.bits, abs=1e-12) and big.bits_se == pytest.approx(ref.bits_se, abs=1e-12)
    for moments in (bn.prior_moments(3, 1.0, 0), bn.prior_moments(3, 1.0, 200)):
        a, b = bt.channel(E9, 10, moments), bt.channel(E9 * scale, 10, moments)
        np.testing.assert_allclose(b.snr, a.snr, rtol=1e-10)
        assert b.capacity_bits == pytest.approx(a.capacity_bits, rel=1e-10)
        assert b.spread == pytest.approx(a.spread, rel=1e-10)
