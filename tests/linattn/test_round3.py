"""Round 3 of "no silent wrong answer" (model package): degenerate inputs, memory guards, the argument named in each
message, accepted nonsense."""
import numpy as np
import pytest

import linattn
from linattn import factorized, markov, pools
from linattn.kernel_learner import block_directions, n_features
from linattn.markov import bottleneck

PB = linattn.Problem(3, 4, 0.1)


# ----------------------------------------------------------------------------- kernel_learner.block_directions
def test_block_directions_D1_has_an_empty_Q_block():
    """D = 1 divided by √(1 − 1/D) = 0 (NaN); the Q⊥ block has dimension 0 there: its direction is 0."""
    U = block_directions(np.array([[1.0], [-1.0]]))
    assert U.shape == (2, 3, n_features(1))
    assert np.all(np.isfinite(U))
    np.testing.assert_array_equal(U[:, 2], 0.0)
    np.testing.assert_array_equal(U[:, 0, 0], [1.0, -1.0])


def test_block_directions_unit_rows_unchanged():
    w = np.array([[0.6, 0.8, 0.0]])
    U = block_directions(w)
    np.testing.assert_allclose(np.linalg.norm(U, axis=-1), 1.0, rtol=1e-14)


@pytest.mark.parametrize("what, features, name", [
    (np.array([[1.0, 0.0]]), "foo", "features"),
    (np.array([[2.0, 0.0]]), "hermite2", "what"),        # not a direction
    (np.array([[np.nan, 0.0]]), "hermite2", "what"),
    (np.array([1.0, 0.0]), "hermite2", "what"),          # 1-d
    (np.zeros((0, 2)), "linear", "what"),
])
def test_block_directions_refuses(what, features, name):
    with pytest.raises(ValueError, match=name):
        block_directions(what, features)


# ----------------------------------------------------------------------------- memory guards
def test_one_hot_embedding_memory_guard():
    with pytest.raises(ValueError, match=r"C too large.*GiB"):
        bottleneck.one_hot_embedding(10**4)


def test_unigram_embedding_memory_guard():
    with pytest.raises(ValueError, match=r"C, d too large.*GiB"):
        bottleneck.unigram_embedding(10**4, 10**4, rng=0)


def test_parametrization_memory_guard():
    with pytest.raises(ValueError, match=r"heads=1000000000.*too large.*GiB"):
        factorized.Parametrization("separate_kq", 3, heads=10**9)
    with pytest.raises(ValueError, match=r"D=1000000.*too large.*GiB"):
        factorized.Parametrization("merged", 10**6)


# ----------------------------------------------------------------------------- the argument named
def test_losses_n_seq_memory_names_n_seq():
    """The n_seq term of the memory plan blamed length."""
    chains = markov.Chains(C=3, concentration=1.0, K=4)
    with pytest.raises(ValueError, match=r"^n_seq too large"):
        markov.losses(chains, n_seq=10**13, length=20, rng=0)


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


# ----------------------------------------------------------------------------- accepted nonsense
def test_aligned_refuses_non_orthogonal_basis():
    par = factorized.Parametrization("value_kq_modes", 2)
    with pytest.raises(ValueError, match="basis"):
        par.aligned([1.0, 2.0], [[1.0, 1.0], [0.0, 1.0]])
    U = np.array([[0.6, -0.8], [0.8, 0.6]])
    theta = par.aligned([1.0, 2.0], U)
    np.testing.assert_allclose(par.gamma(theta), U @ np.diag([1.0, 2.0]) @ U.T, atol=1e-14)
