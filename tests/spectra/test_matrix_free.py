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


def test_progress_bar_over_the_probes_shows_on_long_calls_only(monkeypatch, capsys):
    import numpy as np

    from spectra import _matrix_free

    quiet = spectra.slq_spectrum(DATA, PB, steps=5, n_probes=3, rng=0)
    assert "slq spectrum" not in capsys.readouterr().err               # short: silent
    monkeypatch.setattr(_matrix_free, "PROGRESS_DELAY", 0.0)            # every call counts as long
    shown = spectra.slq_spectrum(DATA, PB, steps=5, n_probes=3, rng=0)
    assert "slq spectrum" in capsys.readouterr().err
    silent = spectra.slq_spectrum(DATA, PB, steps=5, n_probes=3, rng=0, progress=False)
    assert capsys.readouterr().err == ""
    for est in (shown, silent):                                         # the bar changes no number
        np.testing.assert_array_equal(est.nodes, quiet.nodes)
        np.testing.assert_array_equal(est.weights, quiet.weights)
