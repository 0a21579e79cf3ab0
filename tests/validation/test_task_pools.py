"""Exact averages with task pools (:func:`validation.pool_average`): sizes and decays refused by name."""
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import linattn
import validation

RAGGED = [[1.0], [1.0, 2.0]]


REFUSED = refusals(name_as_word, [
    ("pool-average", lambda: validation.pool_average(linattn.Problem(3, 6, 0.1, tasks=2), 10, 0.1,
                                                     n_datasets=10**9), "n_datasets"),
]) + refusals(name_not_within_letters, [
    ("pool-average-lam", lambda: validation.pool_average(linattn.Problem(4, 8, 0.1, tasks=3), 20, RAGGED,
                                                          n_datasets=2), "lam"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
