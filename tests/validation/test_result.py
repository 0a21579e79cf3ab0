"""Result files (:class:`validation.Result`): the header checked against its schema, the sizes the file claims
checked before reading, save refuses what load refuses."""
import io
import json
import tempfile
import zipfile

import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import validation
from validation import Result

GOOD = {"experiment": "x", "mode": "quick", "settings": {"a": 1}, "meta": {}}


def _npz(path, header, **arrays):
    np.savez_compressed(path, __result__=np.asarray(json.dumps(header)), **arrays)
    return str(path)


def _npy(array=None, header=None):
    buf = io.BytesIO()
    if header is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


REFUSED = refusals(name_as_word, [
    ("result-experiment", lambda: Result(5, "smoke", {}, {}, {}), "experiment"),
    ("result-save", lambda: Result("a", "smoke", {}, {}, {}).save("/proc/nope/x"), "path"),
]) + refusals(name_not_within_letters, [
    ("result-int-key", lambda: validation.Result("x", "smoke", {}, {1: np.ones(2)}), "data"),
    ("result-reserved-key", lambda: validation.Result("x", "smoke", {}, {"__result__": np.ones(2)}), "data"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("header, field", [
    ({"experiment": 5, "mode": "nonsense", "settings": [1], "meta": 7}, "header's"),
    ({**GOOD, "experiment": 5}, "experiment"),
    ({**GOOD, "experiment": ""}, "experiment"),
    ({**GOOD, "mode": "nonsense"}, "mode"),
    ({**GOOD, "settings": [1]}, "settings"),
    ({**GOOD, "meta": 7}, "meta"),
    ({**GOOD, "extra": 1}, "header"),
    ([1, 2], "header"),              # TypeError before
    ({}, "header"),                  # KeyError before
    ("text", "header"),
])
def test_load_refuses_headers_outside_the_schema(tmp_path, header, field):
    path = _npz(tmp_path / "r.npz", header)
    with pytest.raises(ValueError, match="path") as err:
        Result.load(path)
    assert field in str(err.value) and "r.npz" in str(err.value)


def test_load_round_trip(tmp_path):
    r = Result("x", "custom", {"a": [1, 2]}, {"y": np.arange(3.0), "s": np.array(["a", "b"])}, {"m": 1.5})
    back = Result.load(r.save(str(tmp_path / "ok.npz")))
    assert (back.experiment, back.mode, back.settings, back.meta) == ("x", "custom", {"a": [1, 2]}, {"m": 1.5})
    np.testing.assert_array_equal(back.data["y"], np.arange(3.0))
    np.testing.assert_array_equal(back.data["s"], ["a", "b"])


def test_load_truncated_file(tmp_path):
    """BadZipFile before."""
    path = Result("x", "quick", {}, {"y": np.arange(100.0)}).save(str(tmp_path / "ok.npz"))
    raw = open(path, "rb").read()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(raw[:len(raw) // 2])
    with pytest.raises(ValueError, match=r"path .*cut\.npz"):
        Result.load(str(cut))


def test_load_member_claiming_8_TB(tmp_path):
    """The .npy header of a member claims 10¹² float64 (numpy.load allocates them before reading)."""
    path = tmp_path / "big.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__result__.npy", _npy(np.asarray(json.dumps(GOOD))))
        zf.writestr("y.npy", _npy(header={"descr": "<f8", "fortran_order": False, "shape": (10**12,)}) + bytes(64))
    with pytest.raises(ValueError, match=r"path .*big\.npz.* too large.*7\.45e\+03 GiB"):
        Result.load(str(path))


def test_load_member_claiming_more_than_it_holds(tmp_path):
    path = tmp_path / "short.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__result__.npy", _npy(np.asarray(json.dumps(GOOD))))
        zf.writestr("y.npy", _npy(header={"descr": "<f8", "fortran_order": False, "shape": (100,)}) + bytes(64))
    with pytest.raises(ValueError, match=r"path .*short\.npz.*claims 800 bytes"):
        Result.load(str(path))


def test_load_small_zip_bomb(tmp_path, monkeypatch):
    """8 MB of zeros compress to ~8 kB: the sizes the zip declares are checked before anything is decompressed."""
    path = _npz(tmp_path / "bomb.npz", GOOD, y=np.zeros(10**6))
    assert (tmp_path / "bomb.npz").stat().st_size < 100_000
    monkeypatch.setenv("LINATTN_MEMORY_LIMIT", str(2**20))
    with pytest.raises(ValueError, match=r"path .*bomb\.npz.* too large.*GiB"):
        Result.load(path)


def test_save_refuses_object_arrays(tmp_path):
    r = Result("x", "quick", {}, {"y": np.array([{"a": 1}, 2], dtype=object)})
    with pytest.raises(ValueError, match=r"data\['y'\]"):
        r.save(str(tmp_path / "o.npz"))
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize("kw, name", [
    (dict(experiment=5), "experiment"), (dict(mode="nonsense"), "mode"), (dict(settings=[1]), "settings"),
    (dict(meta=7), "meta"), (dict(settings={"f": object()}), "settings"), (dict(data={1: np.ones(2)}), "data"),
])
def test_save_refuses_what_load_refuses(tmp_path, kw, name):
    args = {"experiment": "x", "mode": "quick", "settings": {}, "data": {}, "meta": {}, **kw}
    with pytest.raises(ValueError, match=name):
        Result(**args).save(str(tmp_path / "o.npz"))
    assert not (tmp_path / "o.npz").exists()


def test_result_save_returns_the_file_it_wrote(tmp_path):
    """Numpy appends .npz; the returned path is the file written, and load reads it."""
    r = Result("x", "quick", {"a": 1}, {"y": np.arange(3.0)})
    path = r.save(str(tmp_path / "r"))
    assert path == str(tmp_path / "r.npz") and (tmp_path / "r.npz").is_file()
    back = Result.load(path)
    assert back.settings == {"a": 1} and np.array_equal(back.data["y"], np.arange(3.0))
    assert r.save(str(tmp_path / "s.npz")) == str(tmp_path / "s.npz")
    with pytest.raises(ValueError, match=r"\bpath\b"):
        r.save(str(tmp_path))                   # a folder


@pytest.mark.parametrize("field", ["settings", "meta"])
def test_result_save_deep_nesting(tmp_path, field):
    """A dict nested 5000 deep raised RecursionError."""
    deep = c = {}
    for _ in range(5000):
        c["a"] = {}
        c = c["a"]
    args = {"settings": {}, "meta": {}, field: deep}
    with pytest.raises(ValueError, match=rf"\b{field}\b"):
        Result("x", "quick", args["settings"], {}, args["meta"]).save(str(tmp_path / "d.npz"))
    assert not (tmp_path / "d.npz").exists()


def test_result_load_deep_header(tmp_path):
    """A file whose JSON header is nested beyond the recursion limit is not a result file (no RecursionError)."""
    text = '{"experiment": "x", "mode": "quick", "settings": ' + "[" * 100_000 + "]" * 100_000 + ', "meta": {}}'
    path = str(tmp_path / "deep.npz")
    np.savez(path, __result__=np.asarray(text))
    with pytest.raises(ValueError, match=r"\bpath\b"):
        Result.load(path)


def test_result_keys_are_checked_once_and_save_still_refuses_a_changed_dict():
    res = validation.Result("x", "smoke", {}, {"": np.ones(2), "a": np.ones(1)})      # '' is a valid npz member
    res.data[2] = np.ones(1)
    with pytest.raises(ValueError, match=r"(?<![A-Za-z_])data(?![A-Za-z_])"):
        res.save(tempfile.mkdtemp(prefix="result") + "/r.npz")
