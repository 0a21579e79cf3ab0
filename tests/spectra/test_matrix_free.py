"""The matrix-free spectrum (:func:`spectra.slq_spectrum`): its work guard names the argument."""
import pytest
from helpers import assert_refused, name_as_word, refusals

import linattn
import spectra

PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)


REFUSED = refusals(name_as_word, [
    ("slq-probes", lambda: spectra.slq_spectrum(DATA, PB, steps=5, n_probes=10**9, rng=0), "n_probes"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
