"""Gradient descent from random starts (:func:`validation.descent_from_random_inits`): steps refused by name."""
import pytest
from helpers import assert_refused, name_as_word, refusals

import linattn
import validation

PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)


REFUSED = refusals(name_as_word, [
    # no step to record
    ("descent-steps-empty", lambda: validation.descent_from_random_inits(DATA, PB, 0.1, [], 0.01, 0.1, 2, rng=0),
     "steps"),
    ("descent-steps", lambda: validation.descent_from_random_inits(DATA, PB, 0.1, [10**13], 0.01, 0.1, 2, rng=0),
     "steps"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
