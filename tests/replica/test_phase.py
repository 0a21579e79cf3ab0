"""The phase boundary of the stationary theory (:func:`replica.phase_boundary`): its work guards name the
argument."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import linattn
import replica

PB = linattn.Problem(4, 8, 0.1)
PB_POOL = linattn.Problem(4, 8, 0.1, tasks=3)


REFUSED = refusals(name_as_word, [
    ("phase-boundary", lambda: replica.phase_boundary(PB, 100.0, 0.01, n_scan=10**9), "n_scan"),
]) + refusals(name_not_within_letters, [
    ("phase-boundary-pool", lambda: replica.phase_boundary(PB_POOL, np.inf, 0.01, n_scan=10**5), "n_scan"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
