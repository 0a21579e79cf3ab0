"""replica._linear_solve: the pool theories' covariance equation c − L(c) = a."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, refusals

from replica._linear_solve import solve_covariance


def _contraction(n, radius, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return radius * A / np.abs(np.linalg.eigvals(A)).max()


def test_against_a_dense_solve_at_any_scale():
    """Relative error of c against numpy.linalg.solve ≤ 1e3 · tol · cond (here cond(I − L) ≤ 1/(1 − 0.6) = 2.5)
    for right-hand sides of size 1, 1e-200 and 1e200 (solved for c / max|a|: nothing underflows or overflows)."""
    L = _contraction(30, 0.6, 0)
    a = np.random.default_rng(1).standard_normal(30)
    for scale in (1.0, 1e-200, 1e200):
        c, info, res = solve_covariance(lambda x: L @ x, scale * a, 1e-12, 20, 50)
        exact = np.linalg.solve(np.eye(30) - L, scale * a)
        assert info == 0 and res < 1e-11
        assert np.linalg.norm(c - exact) <= 2.5e3 * 1e-12 * np.linalg.norm(exact)


def test_trivial_cases_are_exact_and_need_no_gmres():
    """a = 0 gives c = 0; a map far below tol (large λ) returns the start a itself, where scipy 1.12's GMRES
    returned NaN."""
    c, info, res = solve_covariance(lambda x: 1e-20 * x, np.zeros(4), 1e-11, 10, 10)
    assert not np.any(c) and info == 0 and res == 0.0
    a = np.arange(1.0, 5.0)
    c, info, res = solve_covariance(lambda x: 1e-20 * x, a, 1e-11, 10, 10)
    assert np.array_equal(c, a) and info == 0 and res < 1e-11


# ----------------------------------------------------------------------------- refusals and extreme arguments
REFUSED = refusals(name_as_word, [
    ("solve-covariance-nan", lambda: solve_covariance(lambda c: 0.5 * c, np.array([np.nan, 1.0]), 1e-10, 20, 10), "a"),
    ("solve-covariance-restart", lambda: solve_covariance(lambda c: 0.5 * c, np.ones(2), 1e-10, 0, 10), "restart"),
    ("solve-covariance-restart-huge", lambda: solve_covariance(
        lambda c: 0.5 * c, np.ones(2), 1e-10, 10**5, 10), "restart"),
    ("solve-covariance-L", lambda: solve_covariance(3, np.ones(2), 1e-10, 1, 10), "apply_L"),
    ("solve-covariance-maxiter", lambda: solve_covariance(
        lambda c: c + 1e-3 * np.roll(c, 1), np.ones(200), 1e-14, 1, 10**13), "maxiter"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
