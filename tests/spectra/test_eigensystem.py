"""The exact per-dataset eigensystem (:func:`spectra.eigensystem`, :class:`spectra.Eigensystem`): arguments
beyond float64 refused by name."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, refusals

import linattn
import spectra

PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)


def _es():
    return spectra.eigensystem(DATA, PB, "full")


REFUSED = refusals(name_as_word, [
    # silent values and accepted nonsense
    ("v-norm2", lambda: (lambda es: es.v_norm2(np.ones(es.k) * 1e300))(_es()), "a", None),
    ("lift", lambda: (lambda es: es.lift(np.full(es.k, 1e308)))(_es()), "a", None),
    ("apply-metric", lambda: _es().apply_metric(np.full(_es().M, 1e308)), "theta", None),
    ("eigensystem-v-scale", lambda: spectra.eigensystem(DATA, PB, "full", v_scale=1e300), "v_scale"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_ragged_block_decay_is_named():
    """A ragged lam reached eigensystem as numpy's 'setting an array element with a sequence'."""
    pb = linattn.Problem(3, 4, 0.1)
    with pytest.raises(ValueError, match=r"^spectra\.eigensystem: lam must be .*uneven shape"):
        spectra.eigensystem(pb.sample(5, rng=0), pb, model="full", lam=[[1.0], [1.0, 2.0]])
