"""Transition times of a series (:func:`diagnostics.change_points`, :func:`diagnostics.steepest_changes`,
:func:`diagnostics.crossing_times`, :func:`diagnostics.rolling_autocorrelation`): scale-free, constant series
and bad arguments refused by name."""
import numpy as np
import pytest
from helpers import CALLED, assert_refused, name_not_within_letters, refusals

import diagnostics
import linattn

REFUSED = refusals(name_not_within_letters, [
    ("crossing-times-scalar", lambda: diagnostics.crossing_times(np.arange(1.0, 4.0), 1.0, 0.5), "values"),
    ("rolling-autocorrelation-lag", lambda: diagnostics.rolling_autocorrelation(np.sin(np.arange(30.0)), 5,
                                                                                lag=10**9), "lag"),
    ("rolling-autocorrelation-series", lambda: diagnostics.rolling_autocorrelation(np.array([]), 5), "series"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_a_constant_series_has_no_transition():
    with pytest.raises(ValueError, match="series"):
        diagnostics.steepest_changes(np.ones(50), np.arange(1, 51.0))
    with pytest.raises(ValueError, match="series"):
        diagnostics.change_points(np.ones(50), np.arange(1, 51.0))


def test_change_points_do_not_cancel_at_a_large_offset():
    t, s = np.arange(1, 41.0), np.r_[np.zeros(20), np.ones(20)]
    for offset in (0.0, 1e9, -1e12):
        assert diagnostics.change_points(s + offset, t, scale="linear")[0] == 20.5


def test_scale_free_measures_do_not_overflow():
    """contrast_ratio and the transition finders are scale-free: they normalise before squaring or differencing."""
    assert abs(linattn.contrast_ratio(1e300 * np.eye(3)) - 1.0) < 1e-12
    jump, t = np.r_[-1e308 * np.ones(10), 1e308 * np.ones(10)], np.arange(1, 21.0)
    assert diagnostics.change_points(jump, t, scale="linear")[0] == 10.5
    assert abs(diagnostics.steepest_changes(jump, t, scale="linear")[0] - 10.5) < 1e-9   # interpolated


def test_rolling_autocorrelation_is_scale_free():
    s = np.sin(np.arange(20.0))
    ref = diagnostics.rolling_autocorrelation(s, 8)
    for k in (1e300, 1e-300):
        assert np.allclose(diagnostics.rolling_autocorrelation(k * s, 8), ref, rtol=0, atol=1e-15)
    assert not np.any(diagnostics.rolling_autocorrelation(3.0 * np.arange(10.0) + 1.0, 5))   # a line: exactly 0


@pytest.mark.parametrize("call, name", [
    (lambda: diagnostics.crossing_times([3.0, 2.0, 1.0], [3.0, 2.0, 1.0], 1.5, below=True), "times"),
    (lambda: diagnostics.crossing_times([1.0, 2.0], [1.0, 2.0], True), "level"),
    (lambda: diagnostics.crossing_times([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], np.nan, below=True), "level"),
])
def test_invalid_input_that_was_accepted_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{CALLED}{name} must"):
        call()
