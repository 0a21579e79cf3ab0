"""Gradient descent of the real attention layer (:func:`validation.attention_gradient_descent`): its work and
memory guards and a start whose loss overflows, refused by name."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import validation

REFUSED = refusals(name_as_word, [
    # a start whose loss overflows
    ("attention-gd-W0", lambda: validation.attention_gradient_descent(np.ones((3, 5, 4)), np.ones(3), 0.1, 10, 0.01,
                                                                      W0=np.eye(5) * 1e200), "W0"),
    ("attention-gd", lambda: validation.attention_gradient_descent(
        np.ones((3, 5, 4)), np.ones(3), 0.1, 10**13, 0.01, record=[0]), "n_steps"),
]) + refusals(name_not_within_letters, [
    # memory: sizes a user controls checked before the allocation
    ("attention-gd-every-step", lambda: validation.attention_gradient_descent(np.ones((3, 5, 4)), np.ones(3), 0.1,
                                                                              10**12, 0.01), "n_steps"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
