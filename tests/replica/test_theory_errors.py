"""Theory results computed by sampling carry their standard errors, and their iteration counts are true (a user
found ``replica.stationary`` with a pool returning no errors and ``iterations=0`` beside ``converged=True``)."""
import numpy as np
import pytest

import linattn
import replica
from validation import pool_average

PB = linattn.Problem(10, 20, 0.1, tasks=8)


def _spread_over_se(results, key):
    """Seed-to-seed standard deviation of ``key`` over the root-mean-square of its reported standard errors."""
    values = np.array([getattr(r, key) for r in results])
    se = np.array([getattr(r, key + "_se") for r in results])
    return values.std(ddof=1) / np.sqrt(np.mean(se**2))


def test_pool_average_standard_errors_match_the_spread_over_seeds():
    """40 independent pool averages (Gaussian theory, 16 pools each): the spread of the results over seeds is what
    their standard errors say. With 39 degrees of freedom the ratio lies in [0.66, 1.36] with probability 0.998
    (χ² bounds; measured 0.92); an error reported as the pools' standard deviation instead (4× too large) or as 0
    fails."""
    results = [replica.stationary(PB, 400, np.inf, 0.01, "full", law="mp", n_pools=16, rng=s) for s in range(40)]
    for key in ("train", "test", "test_idg"):
        assert 0.66 < _spread_over_se(results, key) < 1.36, key


@pytest.mark.slow
def test_finite_pool_theory_standard_errors_match_the_spread_over_seeds():
    """The finite-D pool theory (its Gaussian control variate and the finite-D difference combined): 12 seeds of 4
    pools; with 11 degrees of freedom the ratio lies in [0.38, 1.74] with probability 0.999 (measured: 1.13–1.20)."""
    results = [replica.stationary(PB, 400, np.inf, 0.01, "full", n_pools=4, rng=s) for s in range(12)]
    for key in ("train", "test", "test_idg"):
        assert 0.38 < _spread_over_se(results, key) < 1.74, key


def test_errors_are_zero_where_nothing_is_sampled_and_iterations_are_counted():
    pool = np.random.default_rng(0).standard_normal((8, 10))
    given = replica.stationary(PB, 400, np.inf, 0.01, "full", pool=pool)
    mp = replica.stationary(PB, 400, np.inf, 0.01, "full", law="mp", pool="mp")
    fresh = replica.stationary(linattn.Problem(10, 20, 0.1), 400, np.inf, 0.01, "full")
    given_mp = replica.stationary(PB, 400, np.inf, 0.01, "full", law="mp", pool=pool)
    for th in (given_mp, mp):           # the Gaussian theory of a given pool, or of the pool's mp spectrum: no sampling
        assert (th.train_se, th.test_se, th.test_idg_se) == (0.0, 0.0, 0.0)
    for th in (given, given_mp, mp):
        assert isinstance(th.iterations, int) and th.iterations > 0      # a root or a fixed point was iterated
    # law="finite" of one given pool: its prompt types are one sampled draw, whose error one draw cannot estimate
    assert all(np.isnan(x) for x in (given.train_se, given.test_se, given.test_idg_se))
    assert (fresh.train_se, fresh.test_se, fresh.test_idg_se) == (0.0, 0.0, None)
    sampled = replica.stationary(PB, 400, np.inf, 0.01, "full", n_pools=2)
    assert sampled.iterations >= given.iterations > 0 and min(sampled.train_se, sampled.test_se) > 0
    curve = replica.stationary_curve(PB, [100, 400], np.inf, 0.01, "full", law="mp")
    assert curve.test_se.shape == curve.test_idg_se.shape == (2,) and np.all(curve.test_se > 0)


def test_pool_average_reports_the_standard_error_of_every_error():
    avg = pool_average(linattn.Problem(4, 8, 0.1, tasks=3), 30, 0.01, n_datasets=5)
    for key in ("train", "test", "test_idg"):
        values = getattr(avg, key)
        assert getattr(avg, key + "_se") == pytest.approx(values.std(ddof=1) / np.sqrt(values.size), rel=1e-12)
    assert "train" in repr(avg) and repr(avg).count("±") == 3
