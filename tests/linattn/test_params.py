"""Parameter vectors (:func:`linattn.pack`, :func:`linattn.unpack`): degenerate arguments refused by name."""
import numpy as np
import pytest
from helpers import assert_refused, name_not_within_words_or_after_a_dot, refusals

import linattn

REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("unpack-scalar", lambda: linattn.unpack(5.0, 1), "theta"),
    ("pack-empty", lambda: linattn.pack(np.zeros((0, 0))), "Gamma"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
