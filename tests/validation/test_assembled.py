"""The result a finished store keeps (``assembled-<key>.npz``, :func:`validation.run_experiment` with ``store=``): a
kept file is returned only when it is this experiment's result for these settings and this key, so a damaged file
or another experiment's result under the name costs a recomputation — the file assembled afresh and replaced —
and is never returned (another experiment's result was returned as this one's). Property tests (hypothesis):
random truncation, random bytes, foreign results."""
import glob
import os

import numpy as np
import pytest

import validation

pytest.importorskip("zarr")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXPERIMENT = "spectra"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished smoke store of the experiment, its result and the bytes of the file it keeps."""
    store = str(tmp_path_factory.mktemp("assembled") / "s")
    result = validation.run_experiment(EXPERIMENT, "smoke", store=store, progress=False)
    (kept,) = glob.glob(os.path.join(store, "assembled-*.npz"))
    with open(kept, "rb") as fh:
        return store, result, kept, fh.read()


def _rerun(store):
    """Run the experiment on its finished store again; return the result and how many times it was assembled."""
    exp = type(validation.experiments.get(EXPERIMENT))
    calls = []
    original = exp.assemble
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exp, "assemble", lambda self, s, o: calls.append(1) or original(self, s, o))
        result = validation.run_experiment(EXPERIMENT, "smoke", store=store, progress=False)
    return result, len(calls)


def _same(a, b):
    assert (a.experiment, a.mode, a.settings, a.meta) == (b.experiment, b.mode, b.settings, b.meta)
    x, y = a.data.to_arrays(), b.data.to_arrays()
    assert sorted(x) == sorted(y)
    for k in x:
        np.testing.assert_array_equal(x[k], y[k], err_msg=k)


def _foreign(kind, first):
    """A valid result file's content that is not the kept one: another experiment's result, this experiment's in
    another mode or with other settings, or this very result without its key."""
    if kind == "other experiment":
        return validation.Result("gaps_long_time", "smoke", {}, {"x": np.ones(3)}, {})
    if kind == "plain dict":
        return validation.Result(EXPERIMENT, "smoke", first.settings, {"eigenvalues": np.ones(4)}, {})
    if kind == "other mode":
        return validation.Result(EXPERIMENT, "quick", first.settings, first.data, first.meta)
    settings = {**first.settings, "extra": 1} if kind == "other settings" else first.settings
    return validation.Result(EXPERIMENT, "smoke", settings, first.data, first.meta)


def test_an_intact_kept_result_is_returned_without_assembling(finished):
    store, first, kept, raw = finished
    again, assembled = _rerun(store)
    assert assembled == 0
    _same(again, first)
    assert "assembly_key" not in again.meta


@pytest.mark.parametrize("kind", ["other experiment", "plain dict", "other mode", "other settings", "no key"])
def test_a_foreign_result_under_the_name_is_assembled_afresh(finished, kind):
    """Another result saved under the kept file's name (the key in the name matches, the file does not)."""
    store, first, kept, raw = finished
    _foreign(kind, first).save(kept)
    again, assembled = _rerun(store)
    assert assembled == 1
    _same(again, first)
    assert _rerun(store)[1] == 0              # the file was replaced by this result


#: a third of the profile's examples: each reopens the store and assembles the result afresh (~1 s)
@settings(max_examples=max(8, settings.default.max_examples // 3))
@given(how=st.sampled_from(["cut", "bytes", "flip"]), at=st.floats(0.0, 1.0), junk=st.binary(max_size=300))
def test_a_damaged_kept_result_costs_a_recomputation(finished, how, at, junk):
    """Property: the kept file cut at a random length, replaced by random bytes, or with one random byte changed:
    the result is this experiment's (assembled afresh when the file cannot be read, or does not hold this key) —
    never an exception, never another result."""
    store, first, kept, raw = finished
    if how == "cut":
        damaged = raw[:int(at * len(raw))]
    elif how == "bytes":
        damaged = junk
    else:
        i = min(int(at * len(raw)), len(raw) - 1)
        damaged = raw[:i] + bytes([raw[i] ^ 0xFF]) + raw[i + 1:]
    for old in glob.glob(os.path.join(store, "assembled-*.npz")):
        os.remove(old)
    with open(kept, "wb") as fh:
        fh.write(damaged)
    again, assembled = _rerun(store)
    _same(again, first)
    assert assembled in (0, 1)
    with open(kept, "rb") as fh:              # a file that was not the kept result was replaced by it
        assert assembled == 0 or fh.read() != damaged
