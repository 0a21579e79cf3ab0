"""linattn._numerics.stats: the one mean ± standard-error helper, bit-identical to the formula it replaced."""
import math
import warnings

import numpy as np
import pytest

from linattn._numerics.stats import mean_se


def _bits(a):
    """The exact bit patterns of float64 values (nan included), for an identity test without tolerance."""
    return np.asarray(a, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (1000,), (4, 2, 3)])
def test_axis_none_bit_identical(shape):
    """``axis=None``: the same Python floats as ``float(x.mean())``, ``float(x.std(ddof=1) / np.sqrt(x.size))``
    (and as the ``math.sqrt`` spelling some callers had)."""
    rng = np.random.default_rng(sum(shape))
    for x in (rng.standard_normal(shape), rng.lognormal(3.0, 2.0, shape), 1e-3 + 1e-9 * rng.random(shape)):
        m, se = mean_se(x)
        assert type(m) is float and type(se) is float
        assert _bits(m) == _bits(float(x.mean()))
        assert _bits(se) == _bits(float(x.std(ddof=1) / np.sqrt(x.size)))
        assert _bits(se) == _bits(float(x.std(ddof=1) / math.sqrt(x.size)))
        # the scaled forms some callers compute: 0.5·s/√n = 0.5·(s/√n) exactly (a power of two)
        assert _bits(0.5 * se) == _bits(0.5 * float(x.std(ddof=1)) / np.sqrt(x.size))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_axis_bit_identical(axis):
    """Along an axis: arrays equal, bit for bit, to ``x.mean(axis)`` and ``x.std(axis, ddof=1) / np.sqrt(n)``."""
    rng = np.random.default_rng(3 + axis)
    x = rng.standard_normal((6, 9)) * rng.lognormal(0.0, 3.0, (6, 9))
    m, se = mean_se(x, axis)
    n = x.shape[axis]
    assert m.shape == se.shape == x.mean(axis).shape
    np.testing.assert_array_equal(_bits(m), _bits(x.mean(axis)))
    np.testing.assert_array_equal(_bits(se), _bits(x.std(axis, ddof=1) / np.sqrt(n)))


def test_lists_are_arrays():
    """Lists (of floats or of rows) give what their arrays give."""
    rows = [[1.0, 2.5, 4.0], [0.5, 3.0, 9.0], [2.0, 2.0, 2.0]]
    x = np.array(rows)
    np.testing.assert_array_equal(_bits(mean_se(rows, 0)[1]), _bits(x.std(0, ddof=1) / np.sqrt(3)))
    assert mean_se(rows[0]) == mean_se(x[0])


def test_textbook_value():
    """``2, 4, 4, 4, 5, 5, 7, 9``: mean 5, sample variance 32/7, s.e. √(32/7)/√8 = √(4/7)."""
    m, se = mean_se([2, 4, 4, 4, 5, 5, 7, 9])
    assert m == 5.0
    assert se == pytest.approx(math.sqrt(4.0 / 7.0), rel=1e-15)
    m, se = mean_se([[1.0, 10.0], [3.0, 10.0]], axis=0)        # columns: s.e. |a − b|/2 for two values
    np.testing.assert_allclose(m, [2.0, 10.0], rtol=0, atol=0)
    np.testing.assert_allclose(se, [1.0, 0.0], rtol=1e-15, atol=0)


def test_one_value():
    """n == 1: no spread estimate; s.e. ``nan`` (of the mean's shape; it was a silent 0: ``replica.stationary`` over
    one random pool reported ``test_idg_se = 0`` where seeds differ by ~16 %), or ``single=0.0`` for a caller whose
    one value is exact, and no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m, se = mean_se([3.5])
        assert m == 3.5 and math.isnan(se)
        m, se = mean_se(np.array([[2.0]]))
        assert m == 2.0 and math.isnan(se)
        m, se = mean_se(np.array([[1.0, 2.0, 3.0]]), axis=0)
        np.testing.assert_array_equal(m, [1.0, 2.0, 3.0])
        assert se.shape == m.shape and np.all(np.isnan(se))
        m, se = mean_se(np.array([4.0]), axis=0)
        assert m == 4.0 and math.isnan(se) and np.ndim(se) == 0
        m, se = mean_se([7.0], single=0.0)
        assert m == 7.0 and se == 0.0
        m, se = mean_se(np.ones((1, 4)), axis=0, single=0.0)
        assert se.shape == (4,) and np.all(se == 0.0)
    # the other axis of the same array has n = 4: the formula
    m, se = mean_se(np.arange(4.0)[None, :], axis=1)
    np.testing.assert_array_equal(se, np.arange(4.0)[None, :].std(1, ddof=1) / np.sqrt(4))


def test_single_is_only_for_one_value():
    """``single`` changes nothing for n >= 2."""
    x = np.random.default_rng(5).standard_normal((5, 3))
    for axis in (None, 0, 1):
        a, b = mean_se(x, axis), mean_se(x, axis, single=np.nan)
        np.testing.assert_array_equal(_bits(a[0]), _bits(b[0]))
        np.testing.assert_array_equal(_bits(a[1]), _bits(b[1]))


# ----------------------------------------------------------------------------- refusals and extreme arguments
RAGGED = [[1.0], [1.0, 2.0]]



def test_statistics_of_huge_finite_values_are_finite():
    """mean_se of finite values whose squares (or sum) overflow: (inf, inf) before; now the same statistics of
    x / max|x| scaled back (and bit-identical to the plain formula where it does not overflow)."""
    m, se = mean_se([1e308, 1e308, -1e308])
    assert m == pytest.approx(1e308 / 3) and se == pytest.approx(2 / 3 * 1e308)
    m, se = mean_se(np.array([[1e300, 1.0], [3e300, 3.0]]), axis=0)
    assert np.allclose(m, [2e300, 2.0]) and np.allclose(se, [1e300, 1.0])
    x = np.random.default_rng(0).normal(size=50)
    assert mean_se(x) == (float(x.mean()), float(x.std(ddof=1) / np.sqrt(50)))
