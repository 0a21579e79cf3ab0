"""The information theory of the bigram-embedding bottleneck (:func:`replica.projection_channel`,
:func:`replica.k2_theory`): sizes beyond float64 or memory refused by name, large gaps as values."""
import math

import pytest
from helpers import assert_refused, name_as_escaped_word, name_starts_too_large, refusals

from replica import _bottleneck_theory as bt

REFUSED = refusals(name_as_escaped_word, [
    # K2* beyond float64 (OverflowError from math.expm1)
    ("k2-theory-capacity", lambda: bt.k2_theory(bt.projection_channel(10, 1.0, 90, 10**15)), "ch"),
    ("k2-theory-gap", lambda: bt.k2_theory(bt.projection_channel(10, 1.0, 8, 110), gap=1e300), "gap"),
], limit=2**31)


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


TOO_LARGE = refusals(name_starts_too_large, [
    ("projection-channel", lambda: bt.projection_channel(2**26, 1e300, 2**53, 2**53), "replica.projection_channel: C"),
    ("projection-channel-d", lambda: bt.projection_channel(10**7, 1.0, 2**40, 10), "replica.projection_channel: d"),
], limit=2**31)


@pytest.mark.parametrize("call, match, limit", TOO_LARGE)
def test_too_large_names_the_dominant_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.usefixtures("two_gib_memory_limit")
def test_k2_theory_large_gap_is_a_value():
    """gap = 1e3 bits overflowed math.expm1; K2* ~ 2^1004 is a float."""
    k = bt.k2_theory(bt.projection_channel(10, 1.0, 8, 110), gap=1e3)
    assert math.isfinite(k) and 1000 < math.log2(k) < 1024
