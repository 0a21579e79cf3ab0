"""Markov-chain task (arXiv:2604.12151): the sampler, the stationary law, E[H(row)]."""
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
from scipy import integrate, special

import linattn
from linattn import markov


# ----------------------------------------------------------------------------- exact identities
def test_stationary_is_invariant_and_matches_two_state_closed_form():
    rng = np.random.default_rng(0)
    T = markov.Chains(C=7, concentration=0.2).draw_chains(50, rng)
    pi = markov.stationary(T)
    assert pi.shape == (50, 7)
    np.testing.assert_allclose(np.einsum("ki,kij->kj", pi, T), pi, atol=1e-13)   # π T = π (roundoff)
    np.testing.assert_allclose(pi.sum(-1), 1.0, atol=1e-14)
    assert np.all(pi > 0)
    a, b = 0.3, 0.05                                                             # π = (b, a)/(a + b)
    np.testing.assert_allclose(markov.stationary([[1 - a, a], [b, 1 - b]]), [b / (a + b), a / (a + b)], atol=1e-15)
    # a periodic chain with zeros (GTH needs no aperiodicity)
    np.testing.assert_allclose(markov.stationary([[0, 1, 0], [0.5, 0, 0.5], [0, 1, 0]]), [0.25, 0.5, 0.25],
                               atol=1e-15)


def test_expected_row_entropy_against_quadrature():
    """E H(p) = C E[−p₁ log p₁], p₁ ~ Beta(α, (C−1)α): quadrature to 1e-10; ψ(Cα) − ψ(α) (a common slip) fails."""
    for C, concentration in [(2, 1.0), (10, 1.0), (5, 0.3), (3, 4.0)]:
        b = (C - 1) * concentration
        f = lambda p: -p * np.log(p) * p ** (concentration - 1) * (1 - p) ** (b - 1) / special.beta(concentration, b)  # noqa: E731
        quad = C * integrate.quad(f, 0, 1, epsabs=1e-13, epsrel=1e-13, limit=200)[0]
        assert abs(markov.expected_row_entropy(C, concentration) - quad) < 1e-10
        wrong = special.digamma(C * concentration) - special.digamma(concentration)
        assert abs(wrong - quad) > 1e-3
    assert markov.expected_row_entropy(2, 1.0) == pytest.approx(0.5, abs=1e-15)


def test_first_law_definitions():
    T = np.array([[0.9, 0.1], [0.5, 0.5]])
    np.testing.assert_allclose(markov.first_law(T, "stationary"), [5 / 6, 1 / 6], atol=1e-15)
    np.testing.assert_allclose(markov.first_law(T, "uniform"), [0.5, 0.5])
    np.testing.assert_allclose(markov.first_law(T, "onestep"), [0.7, 0.3], atol=1e-15)


# ----------------------------------------------------------------------------- the sampler
def _z_frequencies(counts, probs):
    """z-scores of multinomial frequencies (rows of ``counts`` against rows of ``probs``)."""
    n = counts.sum(-1, keepdims=True)
    se = np.sqrt(probs * (1 - probs) / n)
    return np.where(se > 0, (counts / n - probs) / np.where(se > 0, se, 1), 0.0)


def test_transition_frequencies_and_first_state_law():
    """Given the visits, the draws from a row are i.i.d. (strong Markov property): each frequency is within
    4 s.e. of T_ij; x_0 follows π, uniform or (1/C) Σ_i T_ij within 4 s.e. (multinomial s.e.)."""
    for first in markov.FIRST_STATES:
        ch = markov.Chains(C=4, concentration=0.5, K=2, first_state=first)
        s = ch.sample(20_000, 40, rng=1)
        law = markov.first_law(s.pool, first)
        for k in range(2):
            x = s.states[s.task == k]
            counts = np.zeros((4, 4))
            np.add.at(counts, (x[:, :-1], x[:, 1:]), 1)
            assert np.abs(_z_frequencies(counts, s.pool[k])).max() < 4
            assert np.abs(_z_frequencies(np.bincount(x[:, 0], minlength=4)[None], law[k][None])).max() < 4
            if first == "stationary":   # the path stays stationary: states at a late position also follow π
                assert np.abs(_z_frequencies(np.bincount(x[:, -1], minlength=4)[None], law[k][None])).max() < 4


def test_first_state_baseline_is_rejected():
    """x_0 drawn with first_state='onestep' is rejected as stationary by the same 4-s.e. test."""
    T = np.array([[[0.9, 0.1], [0.5, 0.5]]])   # π = (5/6, 1/6), onestep law (0.7, 0.3)
    s = markov.Chains(C=2, concentration=1.0, K=1, first_state="onestep").sample(20_000, 2, rng=2, pool=T)
    f = np.bincount(s.states[:, 0], minlength=2)[None]
    assert np.abs(_z_frequencies(f, markov.first_law(T, "onestep"))).max() < 4
    assert np.abs(_z_frequencies(f, markov.stationary(T))).max() > 4


def test_dirichlet_rows_moments():
    """T_ij ~ Beta(α, (C−1)α): mean 1/C and variance (1/C)(1 − 1/C)/(Cα + 1) within 4 s.e. (both the α < 1
    log-space route and the α >= 1 route)."""
    for concentration in (0.3, 2.0):
        C = 5
        T = markov.Chains(C=C, concentration=concentration).draw_chains(4000, rng=3)
        np.testing.assert_allclose(T.sum(-1), 1.0, atol=1e-14)
        x = T.reshape(-1)
        mean, se = x.mean(), x.std(ddof=1) / np.sqrt(x.size)
        assert abs(mean - 1 / C) < 4 * se + 1e-15
        v = (1 / C) * (1 - 1 / C) / (C * concentration + 1)
        y = (x - 1 / C) ** 2
        assert abs(y.mean() - v) < 4 * y.std(ddof=1) / np.sqrt(y.size)
    tiny = markov.Chains(C=6, concentration=1e-3).draw_chains(200, rng=4)         # rows are one-hot-like, never NaN
    assert np.all(np.isfinite(tiny)) and np.allclose(tiny.sum(-1), 1.0, atol=1e-14) and tiny.max(-1).min() > 0.5


def test_zero_probability_states_are_never_drawn():
    T = np.array([[[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.0, 1.0, 0.0]]])
    s = markov.Chains(C=3, concentration=1.0, K=1).sample(500, 50, rng=5, pool=T)
    assert np.all(T[0][s.states[:, :-1], s.states[:, 1:]] > 0)


def test_reproducible_and_independent_of_batching():
    ch = markov.Chains(C=5, concentration=0.7)
    big = ch.sample(300, 30, rng=9)
    small = ch.sample(20, 30, rng=9)            # sequence i depends only on the seed and i
    np.testing.assert_array_equal(small.states, big.states[:20])
    np.testing.assert_array_equal(small.pool, big.pool[:20])
    np.testing.assert_array_equal(big.task, np.arange(300))
    pooled = markov.Chains(C=5, concentration=0.7, K=3)
    a, b = pooled.sample(50, 10, rng=(4, 1)), pooled.sample(50, 10, rng=(4, 1))
    np.testing.assert_array_equal(a.states, b.states)
    np.testing.assert_array_equal(a.pool, pooled.draw_pool((4, 1)))
    assert a.states.dtype == np.int64 and a.task.dtype == np.int64 and a.pool.dtype == np.float64


def test_bad_inputs():
    with pytest.raises(ValueError, match="C"):
        markov.Chains(C=1, concentration=1.0)
    with pytest.raises(ValueError, match="concentration"):
        markov.Chains(C=3, concentration=np.inf)
    with pytest.raises(ValueError, match="K"):
        markov.Chains(C=3, concentration=1.0, K=0)
    with pytest.raises(ValueError, match="first_state"):
        markov.Chains(C=3, concentration=1.0, first_state="first")
    with pytest.raises(ValueError, match="K"):
        markov.Chains(C=3, concentration=1.0).draw_pool(0)
    with pytest.raises(ValueError, match="pool"):
        markov.Chains(C=3, concentration=1.0).sample(2, 3, 0, pool=np.ones((1, 3, 3)) / 3)
    with pytest.raises(ValueError, match="pool"):
        markov.Chains(C=3, concentration=1.0, K=2).sample(2, 3, 0, pool=np.ones((1, 3, 3)) / 3)
    with pytest.raises(ValueError, match="pool"):
        markov.Chains(C=2, concentration=1.0, K=1).sample(2, 3, 0, pool=[[[0.5, 0.6], [0.5, 0.5]]])
    with pytest.raises(ValueError, match="irreducible"):
        markov.stationary([[1.0, 0.0], [0.0, 1.0]])                          # two closed classes
    with pytest.raises(ValueError, match="T"):
        markov.stationary([[0.5, 0.5]])
    with pytest.raises(ValueError, match="n_seq"):
        markov.Chains(C=3, concentration=1.0).sample(10**9, 10**4, 0)                # memory guard


# ----------------------------------------------------------------------------- refusals and extreme arguments
CHK = markov.Chains(C=3, concentration=1.0, K=4)


REFUSED = refusals(name_as_escaped_word, [
    # the reducible pool was called T
    ("sample-pool-reducible", lambda: CHK.sample(2, 5, 0, pool=np.tile(np.eye(3), (4, 1, 1))), "pool"),
], limit=2**31) + refusals(name_as_word, [
    # the name in the message
    ("chains-concentration", lambda: markov.Chains(C=3, concentration=1e-3).sample(4, 10, 0), "concentration"),
]) + refusals(name_not_within_letters, [
    # an empty stack of transition matrices: numpy's "zero-size array to reduction operation maximum"
    ("first-law-empty", lambda: linattn.markov.first_law(np.empty((0, 3, 3)), "stationary"), "T"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


TOO_LARGE = refusals(name_starts_too_large, [
    # the dominant factor, not the arguments that happen to enter the size
    ("sample-C", lambda: markov.Chains(C=10**6, concentration=1.0).sample(1, 2, 0), "C"),
    ("sample-K", lambda: markov.Chains(C=3, concentration=1, K=10**12).sample(1, 2, 0), "K"),
    ("sample-n-seq", lambda: markov.Chains(C=3, concentration=1.0).sample(10**9, 10, 0), "n_seq"),
    ("draw-chains-C", lambda: markov.Chains(C=10**6, concentration=1).draw_chains(1, 0), "C"),
    ("draw-pool-K", lambda: markov.Chains(C=3, concentration=1, K=10**12).draw_pool(0), "K"),
], limit=2**31)


@pytest.mark.parametrize("call, match, limit", TOO_LARGE)
def test_too_large_names_the_dominant_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.usefixtures("two_gib_memory_limit")
def test_row_entropy_huge_alpha_is_log_C():
    """C·concentration overflowed to inf."""
    assert markov.expected_row_entropy(10, 1e308) == pytest.approx(math.log(10), abs=1e-12)
    assert markov.expected_row_entropy(2**53, 1e300) == pytest.approx(53 * math.log(2), abs=1e-12)
    assert markov.expected_row_entropy(10, 1e307) == pytest.approx(math.log(10), abs=1e-12)
