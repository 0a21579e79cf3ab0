"""validation.open_store: every store the library writes opens as one xarray Dataset — a point store over ``point``
with the points' parameters as coordinates and every output as a variable (ragged ones padded, each point's own
shape kept so that ``read_points`` gives the outputs back exactly); finished stores are read without opening the
point groups; unfinished and older stores still open; ``load_sweep`` refuses what is not a sweep in one line; a
store whose metadata claim 10¹² elements is refused before anything is read; a damaged store is a ValueError naming
it."""
import functools
import json
import os
import shutil
import warnings

import numpy as np
import pytest

import validation
from validation import sweeps as sw

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

N_POINTS = 6


def _ragged(i, rng=None, fail_at=None):
    """Outputs of every kind a point store meets: stacked (one shape and dtype everywhere), ragged in length, in
    number of axes and in presence, of float32, int and bool dtypes; an integer beyond 2**53 (kept in the point's
    group only) and an output named like the store's own ``status`` array."""
    if i == fail_at:
        raise ValueError("refused at this point")
    out = {"count": np.array(i, dtype=np.int64),
           "z": np.array([i, -1], dtype=np.float32),
           "curve": np.linspace(0, 1, i + 1).astype(np.float32),
           "ints": np.arange(i % 2 + 1, dtype=np.int32),
           "m": np.arange(6.0).reshape(2, 3) * i if i < 3 else np.arange(3.0) + i,
           "status": np.array(float(i))}
    if i % 2 == 0:
        out["flag"] = np.array(i % 4 == 0)
    if i == 1:
        out["big"] = np.array([2**60, 1], dtype=np.int64)
    return out


#: the points' parameters: P only at some points, kind everywhere, a list-valued field
POINTS = [{"D": 10, "N": 20 * (i + 1), "kind": "theory" if i == 0 else "exact",
           **({"P": 10 * i} if i else {}), "grid": [1, i]} for i in range(N_POINTS)]


def _coords():
    from validation.experiments._base import point_coords

    return point_coords(POINTS, [{"seed": 100 + i} for i in range(N_POINTS)])


def _store(tmp_path, name="s", fn=_ragged):
    path = str(tmp_path / name)
    sw.run_points(fn, N_POINTS, "ragged", store=path, coords=_coords())
    return path


def _same_outputs(got, want):
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_a_finished_point_store_is_one_dataset_over_its_points(tmp_path):
    path = _store(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = validation.open_store(path)
    assert ds.sizes["point"] == N_POINTS
    # the points' parameters: integers where every point has one, NaN where a point has none, strings, JSON
    assert ds["D"].dtype == np.int64 and list(ds["N"].values) == [20 * (i + 1) for i in range(N_POINTS)]
    np.testing.assert_array_equal(ds["P"].values, [np.nan] + [10.0 * i for i in range(1, N_POINTS)])
    assert list(ds["kind"].values) == ["theory"] + ["exact"] * (N_POINTS - 1)
    assert json.loads(str(ds["grid"].values[2])) == [1, 2] and list(ds["seed"].values) == list(range(100, 106))
    assert {"D", "N", "P", "kind", "seed"} <= set(ds["curve"].coords)
    # every output one variable over point: stacked, padded with NaN (a scalar fills the first entry of its axes)
    assert ds["count"].dims == ("point",) and ds["z"].dims == ("point", "z_0") and ds["z"].dtype == np.float32
    assert ds["curve"].dims == ("point", "curve_0") and ds.sizes["curve_0"] == N_POINTS
    np.testing.assert_array_equal(ds["curve"].values[2], [0.0, 0.5, 1.0, np.nan, np.nan, np.nan])
    assert ds["curve"].attrs["point_shapes"][2] == [3] and ds["curve"].attrs["point_dtypes"][2] == "<f4"
    np.testing.assert_array_equal(ds["flag"].values, [1.0, np.nan, 0.0, np.nan, 1.0, np.nan])
    np.testing.assert_array_equal(ds["ints"].values[:2], [[0.0, np.nan], [0.0, 1.0]])
    np.testing.assert_array_equal(ds["m"].values[4], [[4.0, np.nan, np.nan], [5.0, np.nan, np.nan],
                                                      [6.0, np.nan, np.nan]])
    # not padded: an integer float64 cannot hold, and an output named like the store's status
    assert "big" not in ds and ds["status"].dtype == np.int8 and (ds["status"].values == sw.DONE).all()
    # read_points gives every point's outputs back exactly (dtypes, shapes, values)
    for i, out in enumerate(sw.read_points(path)):
        _same_outputs(out, _ragged(i))


def test_a_finished_store_opens_without_its_point_groups(tmp_path):
    """Opening a finished store reads the arrays written when it finished, never the point groups (opening fig2
    full's 383 groups took 45 s): with every group deleted it still opens, with the same values."""
    fn = functools.partial(_only_stackable)
    path = _store(tmp_path, fn=fn)
    before = validation.open_store(path).load()
    outputs = sw.read_points(path)
    for i in range(N_POINTS):
        shutil.rmtree(os.path.join(path, f"p{i}"))
    after = validation.open_store(path).load()
    xr.testing.assert_identical(before, after)
    for got, want in zip(sw.read_points(path), outputs):
        _same_outputs(got, want)


def _only_stackable(i, rng=None):
    return {"y": np.arange(i + 1.0), "s": np.array(float(i))}


def test_an_unfinished_store_opens_with_the_points_done(tmp_path):
    """A failed point: the run raises, and the store opens with its coordinates, the failed point's error and NaN
    where it has no outputs."""
    path = str(tmp_path / "s")
    with pytest.raises(RuntimeError, match="1 of 6 points"):
        sw.run_points(functools.partial(_ragged, fail_at=3), N_POINTS, "ragged", store=path, coords=_coords())
    ds = validation.open_store(path)
    assert list(ds["status"].values) == [sw.DONE] * 3 + [sw.FAILED] + [sw.DONE] * 2
    assert "refused at this point" in str(ds["error"].values[3])
    assert np.isnan(ds["curve"].values[3]).all() and ds["curve"].values[4, 4] == np.float32(1.0)
    assert list(ds["N"].values) == [20 * (i + 1) for i in range(N_POINTS)]


def test_a_store_finished_by_an_older_version_opens_and_is_upgraded(tmp_path):
    """A store finished without the padded arrays (what an older version wrote: stacked outputs and coordinates
    only) opens from its point groups with the same values; running the same points again writes the padded
    arrays without evaluating any point."""
    path = _store(tmp_path)
    new = validation.open_store(path).load()
    g = zarr.open_group(path, mode="r+", use_consolidated=False)
    for k in g.attrs["padded"]:
        del g[k]
    for k in ("padded", "unpadded", "point_coords"):
        del g.attrs[k]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # consolidated metadata: "not part of the Zarr 3 specification"
        zarr.consolidate_metadata(path)
    old = validation.open_store(path).load()
    for k in new.data_vars:
        if k != "error":
            np.testing.assert_array_equal(old[k].values, new[k].values, err_msg=k)
    assert set(old.coords) == set(new.coords)
    calls = []
    sw.run_points(lambda i, rng=None: calls.append(i) or _ragged(i), N_POINTS, "ragged", store=path,
                  coords=_coords(), allow_mixed=True)
    assert calls == [] and "padded" in zarr.open_group(path, mode="r").attrs


def test_the_folder_of_figure_stores(tmp_path):
    """``linattn figures --store DIR`` writes DIR/<experiment>/<mode>: with one store in it the folder opens as that
    store; with two the message names them; ``load_sweep`` refuses it in one line."""
    root = tmp_path / "runs"
    one = _store(root / "ragged", "smoke")
    xr.testing.assert_identical(validation.open_store(str(root)).load(), validation.open_store(one).load())
    _store(root / "other", "quick")
    with pytest.raises(ValueError, match=r"^store '.*runs' is a folder of 2 experiment stores \(other/quick, "
                                         r"ragged/smoke\): open one of them"):
        validation.open_store(str(root))
    with pytest.raises(ValueError) as err:
        validation.load_sweep(str(root))
    assert "\n" not in str(err.value) and "not a sweep: open one with validation.open_store" in str(err.value)


def test_load_sweep_opens_sweeps_and_refuses_the_rest_in_one_line(tmp_path):
    """A point store reached load_sweep as a nested "Could not convert tuple of form (dims, data…" and a zarr
    warning; every store the library writes now opens with open_store, and load_sweep refuses what is not a sweep
    in one line naming the path and what it is, without a warning."""
    points = _store(tmp_path)
    sweep = str(tmp_path / "sweep")
    ds = sw.sweep(_sweep_fn, {"a": [0, 1]}, replicates=2, store=sweep, workers=1)
    xr.testing.assert_identical(validation.open_store(sweep), validation.load_sweep(sweep))
    (tmp_path / "empty").mkdir()
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / ".zgroup").write_text('{"zarr_format": 2}')
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "zarr.json").write_bytes(b"\x00\xff not json")
    cases = {points: r"holds the points of experiment 'ragged' \(run_experiment, linattn figures\), not a sweep: "
                     r"open it with validation.open_store",
             str(tmp_path / "empty"): r"is not a sweep store \(written by validation.sweep\): not a Zarr store",
             str(tmp_path / "v2"): "a Zarr version 2 store",
             str(tmp_path / "junk"): "zarr.json is not readable JSON"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path, message in cases.items():
            with pytest.raises(ValueError, match=rf"^store '{path}' .*{message}") as err:
                validation.load_sweep(path)
            assert "\n" not in str(err.value)
            if path != points:
                with pytest.raises(ValueError, match=rf"^store '{path}' is not a store written by this library"):
                    validation.open_store(path)
    assert ds.sizes["replicate"] == 2


def _sweep_fn(a, rng):
    return {"y": a + rng.standard_normal(), "v": rng.standard_normal(2)}


def _claim(path, shape):
    """Make the metadata of the array at ``path`` (a folder of a Zarr array) claim ``shape``."""
    meta = json.loads((path / "zarr.json").read_text())
    meta["shape"] = list(shape)
    (path / "zarr.json").write_text(json.dumps(meta))


def test_metadata_claiming_1e12_elements_is_refused_before_reading(tmp_path):
    """An array whose zarr.json claims 10¹² elements exhausted memory in load_sweep; it is refused from the
    metadata, naming the store (a read would allocate 8 TB first)."""
    sweep = tmp_path / "sweep"
    sw.sweep(_sweep_fn, {"a": [0, 1]}, store=str(sweep), workers=1)
    _claim(sweep / "y", (10**12, 1))
    for call in (validation.load_sweep, validation.open_store):
        with pytest.raises(ValueError, match=rf"^store '{sweep}' too large: .*\(sizes claimed by their metadata\)"):
            call(str(sweep))
    points = tmp_path / "points"
    with pytest.raises(RuntimeError):
        sw.run_points(functools.partial(_ragged, fail_at=3), N_POINTS, "ragged", store=str(points))
    _claim(points / "status", (10**12,))
    for call in (validation.open_store, sw.read_points):
        with pytest.raises(ValueError, match=rf"^store '{points}' too large"):
            call(str(points))
    with pytest.raises(ValueError, match=rf"^store '{points}' is damaged or holds another run: its status array has "
                                         r"shape \(1000000000000,\), not \(6,\)"):
        sw.run_points(_ragged, N_POINTS, "ragged", store=str(points), allow_mixed=True)   # a resume reads it all


_STORE_FILES = {}


def _pristine(kind, tmp_path_factory):
    """A small store of each kind, written once; each example damages a copy."""
    if kind not in _STORE_FILES:
        path = tmp_path_factory.mktemp(kind) / "s"
        if kind == "sweep":
            sw.sweep(_sweep_fn, {"a": [0, 1]}, store=str(path), workers=1)
        else:
            sw.run_points(_only_stackable, 3, "small", store=str(path), coords={"P": np.arange(3)})
        _STORE_FILES[kind] = (path, sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()))
    return _STORE_FILES[kind]


@pytest.fixture(scope="module")
def factory(tmp_path_factory):
    return tmp_path_factory


@given(kind=st.sampled_from(["sweep", "points"]), which=st.integers(0, 10**6), how=st.sampled_from(["cut", "bytes"]),
       cut=st.floats(0.0, 1.0), junk=st.binary(max_size=200))
def test_a_damaged_store_is_a_value_error_naming_it(factory, kind, which, how, cut, junk):
    """Property: one file of a store (its metadata, a chunk, the group's zarr.json) cut at a random length or replaced
    by random bytes: every reader gives the store's values or a ValueError naming the store — never another
    exception."""
    pristine, files = _pristine(kind, factory)
    path = factory.mktemp("damaged") / "s"
    shutil.copytree(pristine, path)
    target = path / files[which % len(files)]
    raw = target.read_bytes()
    target.write_bytes(raw[:int(cut * len(raw))] if how == "cut" else junk)
    readers = [validation.open_store] + ([validation.load_sweep] if kind == "sweep" else [sw.read_points])
    for read in readers:
        try:
            read(str(path))
        except ValueError as err:
            assert f"'{path}'" in str(err) and "\n" not in str(err), str(err)
