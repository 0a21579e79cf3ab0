"""The law of the rescaled Hessian (:func:`spectra.prompt_law`, :class:`spectra.PromptLaw`): per-block decays
beyond float64 refused by name."""
import pytest
from helpers import assert_refused, name_as_word, refusals

import linattn
import spectra

PB = linattn.Problem(4, 8, 0.1)


REFUSED = refusals(name_as_word, [
    ("block-decay", lambda: spectra.prompt_law(PB, "full").with_block_decay((1e300, 1e-300)), "lam", None),
    ("block-decay-tiny", lambda: spectra.prompt_law(PB, "full").with_block_decay((1e-300, 1e300)), "lam", None),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_ragged_block_decay_is_named():
    """PromptLaw.with_block_decay of a ragged lam raised numpy's 'setting an array element with a sequence'."""
    law = spectra.prompt_law(linattn.Problem(3, 4, 0.1), model="full", n_nodes=64, log2_points=10)
    with pytest.raises(ValueError, match=r"^spectra\.PromptLaw\.with_block_decay: lam must be a pair"):
        law.with_block_decay([[1.0], [1.0, 2.0]])
