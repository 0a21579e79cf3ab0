"""The transition measures (:func:`linattn.relative_gap`, :func:`linattn.transition_point`): gaps that are no
real numbers refused by name."""
import pytest
from helpers import (
    assert_refused,
    name_as_word,
    name_not_within_letters,
    name_not_within_words_or_after_a_dot,
    refusals,
)

import linattn

REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("gap-str", lambda: linattn.transition_point([1, 2], ["a", "b"]), "gap"),
    ("gap-complex", lambda: linattn.transition_point([1, 2], [1j, 2.0]), "gap"),
    ("gap-ragged", lambda: linattn.transition_point([1, 2], [[1.0], [2.0, 3.0]]), "gap"),
]) + refusals(name_as_word, [
    ("relative-gap", lambda: linattn.relative_gap(1e-300, -1e300), "test"),
]) + refusals(name_not_within_letters, [
    ("relative-gap-negative-test", lambda: linattn.relative_gap(1.0, -0.5), "test"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
