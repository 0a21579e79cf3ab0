"""Round 3 of "no silent wrong answer" (validation): result files checked against their schema and their sizes, the
argument named by a sweep store, the batch of the factorized simulator."""
import io
import json
import zipfile

import numpy as np
import pytest

import linattn
from linattn.factorized import Parametrization
from validation.experiments.base import Result
from validation.simulators.factorized import factorized_descent

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


# ----------------------------------------------------------------------------- Result.load: the header
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


# ----------------------------------------------------------------------------- Result.load: sizes before reading
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


# ----------------------------------------------------------------------------- Result.save refuses what load refuses
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


# ----------------------------------------------------------------------------- sweep store: the argument named
def test_sweep_store_names_rng(tmp_path):
    pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    from validation import sweeps as sw

    def fn(x, rng):
        return {"y": float(x)}
    store = str(tmp_path / "s")
    sw.sweep(fn, {"x": [1.0]}, rng=0, store=store, workers=1)
    with pytest.raises(ValueError, match=r"rng = 0, not 1"):
        sw.sweep(fn, {"x": [1.0]}, rng=1, store=store, workers=1)


# ----------------------------------------------------------------------------- factorized_descent: batch
def test_factorized_descent_batch_memory_guard():
    pb = linattn.Problem(3, 4, 0.1)
    par = Parametrization("value_kq_modes", 3)
    with pytest.raises(ValueError, match=r"^batch too large.*GiB"):
        factorized_descent(pb, par, par.init(0.1, rng=0), 2, 0.01, batch=10**9)


def test_feature_test_error_refuses_another_problem():
    """Defect 7: a run trained on relu labels was scored against tanh labels (or another noise, or a pool) without a
    word; the run now carries its problem and feature_test_error names pb. Another length goes through N_test."""
    from validation.simulators.learners import feature_learner, feature_test_error

    pb = linattn.Problem(4, 8, 0.0, link="relu")
    run = feature_learner(pb, 200, 0.01, rng=5, n_test_prompts=100, max_steps=200)
    assert run.problem == pb
    for other in (linattn.Problem(4, 8, 0.0, link="tanh"), linattn.Problem(4, 8, 0.5, link="relu"),
                  linattn.Problem(4, 16, 0.0, link="relu"), linattn.Problem(4, 8, 0.0, link="relu", tasks=3)):
        with pytest.raises(ValueError, match="pb"):
            feature_test_error(other, run, n_test_prompts=100)
    e, se = feature_test_error(pb, run, N_test=16, n_test_prompts=100, rng=1)
    assert np.isfinite(e) and se > 0
