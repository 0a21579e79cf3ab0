"""validation.sweep: deterministic seeds, serial = local processes = Dask, resumable Zarr store,
recorded failures, code-version guard, and bad input."""
import os
import subprocess
import sys

import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

import validation
from validation import sweeps as sw
from validation.sweeps import _runners as runners  # noqa: E402

try:
    import xarray as xr
    import zarr  # noqa: F401
except ImportError:             # no [dask] extra
    xr = None

#: the cases that need neither a dataset nor a store; every other case skips without the [dask] extra
WITHOUT_THE_EXTRA = {"test_refused_naming_the_argument", "test_run_points_still_runs"}


@pytest.fixture(autouse=True)
def _the_dask_extra(request):
    if xr is None and request.function.__name__ not in WITHOUT_THE_EXTRA:
        pytest.skip("validation.sweep's datasets and stores need the [dask] extra (xarray, zarr)")

GRID = {"D": [3, 4], "N": [5], "P": [4, 30], "beta": [50.0], "lam": [0.1, 0.0]}   # λ = 0, P < M: refused
KW = dict(replicates=2, rng=7)


def _same(a, b):
    """Bit-identical datasets: the same variables, values (NaN where failed) and attributes."""
    assert set(a.data_vars) == set(b.data_vars)
    for k in a.data_vars:
        x, y = a[k].values, b[k].values
        assert x.shape == y.shape
        if x.dtype.kind == "f":
            assert np.array_equal(x, y, equal_nan=True), k
        else:
            assert (x == y).all(), k
    assert a.attrs == b.attrs


def test_task_seeds_depend_on_the_point_not_on_the_grid():
    a = sw.task_seed(7, "gibbs", {"D": 3, "P": 4}, 1)
    assert a == sw.task_seed(7, "gibbs", {"P": 4, "D": 3}, 1)              # order of the keys
    assert a != sw.task_seed(7, "gibbs", {"D": 3, "P": 4}, 0)
    assert a != sw.task_seed(8, "gibbs", {"D": 3, "P": 4}, 1)
    whole = sw.sweep("gibbs", GRID, workers=1, **KW)
    part = sw.sweep("gibbs", {**GRID, "D": [4]}, workers=1, **KW)           # a split grid: same numbers
    assert np.array_equal(whole["test"].sel(D=4).values, part["test"].sel(D=4).values, equal_nan=True)


def test_results_and_recorded_failures():
    ds = sw.sweep("gibbs", GRID, workers=1, **KW)
    assert ds["test"].dims == ("D", "N", "P", "beta", "lam", "replicate")
    refused = ds.sel(P=4, lam=0.0)                                          # P < M at λ = 0: ValueError
    assert (refused["status"] == sw.FAILED).all() and np.isnan(refused["test"]).all()
    assert all("lam must be > 0" in e for e in refused["error"].values.ravel())
    ok = ds.sel(P=30, lam=0.1)
    assert (ok["status"] == sw.DONE).all() and (ok["error"] == "").all()
    import linattn
    import replica
    pb = linattn.Problem(3, 5)                                              # one point by hand, same seed
    rng = np.random.default_rng(np.random.SeedSequence(sw.task_seed(7, "gibbs", dict(D=3, N=5, P=30, beta=50.0,
                                                                                       lam=0.1), 1)))
    g = replica.gibbs(pb.sample(30, rng=rng), pb, 50.0, 0.1)       # the grid function's default model
    assert float(ok.sel(D=3, N=5, beta=50.0, replicate=1)["test"]) == float(g.test)
    s = sw.sweep_summary(ds)
    assert int(s["n"].sel(D=3, N=5, P=4, beta=50.0, lam=0.0)) == 0
    assert np.isfinite(s["test_se"].sel(P=30, lam=0.1)).all()


def test_serial_processes_and_stores_are_bit_identical(tmp_path):
    serial = sw.sweep("gibbs", GRID, workers=1, **KW)
    local = sw.sweep("gibbs", GRID, workers=2, store=str(tmp_path / "local"), **KW)
    _same(serial, local)
    _same(local, sw.load_sweep(str(tmp_path / "local")))


def test_dask_local_cluster_is_bit_identical(tmp_path):
    distributed = pytest.importorskip("distributed")
    serial = sw.sweep("gibbs", GRID, workers=1, **KW)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        ds = sw.sweep("gibbs", GRID, client=client, store=str(tmp_path / "dask"), **KW)
    _same(serial, ds)


def test_interrupted_sweep_resumes_to_the_same_store(tmp_path):
    """Kill the sweep after 3 points (os._exit in a serial run, so nothing is flushed on exit) and
    run it again: the resumed store equals an uninterrupted one, and the done points are skipped."""
    store = str(tmp_path / "resumed")
    script = (f"import os, validation.sweeps as sw, validation.sweeps._sweep as entries\n"
              f"n = [0]\n"
              f"def sink_wrap(write):\n"
              f"    def w(*a):\n"
              f"        write(*a); n[0] += 1\n"
              f"        if n[0] == 3: os._exit(17)\n"
              f"    return w\n"
              f"orig = entries.execute\n"
              f"entries.execute = lambda fn, tasks, client, workers, sink, progress, **kw: "
              f"orig(fn, tasks, client, workers, sink_wrap(sink), progress, **kw)\n"
              f"sw.sweep('gibbs', {GRID!r}, replicates=2, rng=7, workers=1, store={store!r})\n")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert res.returncode == 17, res.stderr
    partial = sw.load_sweep(store)
    assert int((partial["status"] != sw.PENDING).sum()) == 3
    calls = []
    orig = runners.run_task
    sw_run = lambda fn, t, **kw: calls.append(t) or orig(fn, t, **kw)   # noqa: E731
    try:
        runners.run_task = sw_run
        resumed = sw.sweep("gibbs", GRID, workers=1, store=store, **KW)
    finally:
        runners.run_task = orig
    assert len(calls) == partial["status"].size - 3                       # done points skipped
    _same(resumed, sw.sweep("gibbs", GRID, workers=1, store=str(tmp_path / "fresh"), **KW))


def test_store_guards(tmp_path):
    store = str(tmp_path / "s")
    sw.sweep("gibbs", GRID, workers=1, store=store, **KW)
    with pytest.raises(ValueError, match="another sweep"):
        sw.sweep("gibbs", {**GRID, "N": [6]}, workers=1, store=store, **KW)
    import zarr
    zarr.open_group(store, mode="a").attrs["code_hash"] = "0" * 16          # as if written by other code
    with pytest.raises(ValueError, match="another code version"):
        sw.sweep("gibbs", GRID, workers=1, store=store, **KW)
    sw.sweep("gibbs", GRID, workers=1, store=store, allow_mixed=True, **KW)


@pytest.mark.parametrize("kwargs, words", [
    (dict(fn="nope"), "registered grid functions"),
    (dict(fn=3), "fn must be"),
    (dict(grid={"Q": [1]}), "unknown parameter name 'Q'"),
    (dict(grid={"D": []}), "non-empty list"),
    (dict(grid={}), "grid must be"),
    (dict(replicates=0), "replicates"),
    (dict(replicates=True), "replicates"),
    (dict(rng=-1), "rng"),
    (dict(workers=0), "workers"),
    (dict(store=""), "store"),
    (dict(allow_mixed="yes"), "allow_mixed"),
    (dict(isolate="yes"), "isolate"),
    (dict(grid={**GRID, "D": [3, "4"]}), r"grid\['D'\] must be a list of values of one kind"),
    (dict(grid={**GRID, "D": [True, 3]}), r"grid\['D'\] must be a list of values of one kind"),
    (dict(grid={**GRID, "D": [None, 3]}, store="STORE"), r"grid\['D'\] must be values a Zarr coordinate can hold"),
    (dict(grid={**GRID, "D": [10**400]}, store="STORE"), r"grid\['D'\] must be values a Zarr coordinate can hold"),
])
def test_bad_input(kwargs, words, tmp_path):
    args = dict(fn="gibbs", grid=GRID, workers=1)
    args.update(kwargs)
    if args.get("store") == "STORE":
        args["store"] = str(tmp_path / "s")
    with pytest.raises(ValueError, match=words):
        sw.sweep(**args)


def test_cli_sweep_with_a_toml_grid(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('D = [3]\nN = [5]\nP = [30]\nbeta = [50.0]\nlam = [0.1]\n')
    out = tmp_path / "store"
    from validation._app import cli

    assert cli.main(["sweep", "gibbs", "--grid", str(grid), "--replicates", "2", "--workers", "1",
                     "--store", str(out), "--no-progress"]) == 0
    exe = os.path.join(os.path.dirname(sys.executable), "linattn")
    ds = sw.load_sweep(str(out))
    assert ds["test"].shape == (1, 1, 1, 1, 1, 2) and (ds["status"] == sw.DONE).all()
    res = subprocess.run([exe, "sweep", "gibbs", "--grid", str(grid), "--scheduler", "tcp://127.0.0.1:9"],
                         capture_output=True, text=True)
    assert res.returncode != 0 and len(res.stderr.strip().splitlines()) == 1 and "scheduler" in res.stderr


def test_figure_from_store_reads_instead_of_recomputing(tmp_path):
    """`linattn figures fig2 --store DIR`: the first call computes the points of the figure's experiment
    into DIR/stationary_N/smoke, the second reads them (no point is evaluated) and writes the same data;
    a store written by another code version is refused."""
    from validation import gallery as plots
    from validation.gallery import _make as making

    store = str(tmp_path / "store")
    plots.make(["fig2"], str(tmp_path / "a"), mode="smoke", progress=False, store=store)
    making.COMPUTED.clear()                              # the figures' in-process cache: read the store again
    calls = []
    orig = runners.run_point
    try:
        runners.run_point = lambda fn, t, **kw: calls.append(t) or orig(fn, t, **kw)
        plots.make(["fig2"], str(tmp_path / "b"), mode="smoke", progress=False, store=store)
    finally:
        runners.run_point = orig
    assert calls == []
    a, b = np.load(tmp_path / "a" / "fig2.npz"), np.load(tmp_path / "b" / "fig2.npz")
    for k in a.files:
        if k.startswith("D") and a[k].dtype.kind == "f":
            assert np.array_equal(a[k], b[k], equal_nan=True), k
    import zarr
    zarr.open_group(os.path.join(store, "stationary_N", "smoke"), mode="a").attrs["code_hash"] = "0" * 16
    making.COMPUTED.clear()
    with pytest.raises(ValueError, match="another code version"):
        plots.make(["fig2"], str(tmp_path / "c"), mode="smoke", progress=False, store=store)


def test_store_is_a_standard_xarray_zarr_store(tmp_path):
    """`xarray.open_zarr` reads a sweep store (no warning) with the values, coordinates and errors of `load_sweep`."""
    import warnings

    import xarray as xr

    store = str(tmp_path / "s")
    grid = {"D": [4], "N": [8], "P": [10, 0], "beta": [1e3], "lam": [0.01]}      # P = 0 fails: an error string
    sw.sweep("gibbs", grid, replicates=2, workers=1, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = xr.open_zarr(store).load()
    ref = sw.load_sweep(store)
    for name in ("train", "test", "status"):
        assert ds[name].dims == ref[name].dims
        np.testing.assert_array_equal(ds[name].values, ref[name].values)
    assert list(ds["P"].values) == [10, 0] and list(ds["replicate"].values) == [0, 1]
    assert "P must be" in str(ds["error"].sel(P=0).values[0, 0, 0, 0, 0])
    assert [str(x) for x in ds["error"].values.ravel()] == [str(x) for x in ref["error"].values.ravel()]


def test_a_function_defined_in_python_c_runs_on_local_processes(tmp_path):
    """Notebook-safe: a function defined in `__main__` (here `python -c`) is sent to spawned workers by value;
    the store resumes (a second run evaluates nothing) and equals the serial run."""
    import subprocess
    import sys

    code = f"""
import numpy as np
from validation import sweep
def f(a, rng):
    return {{"y": a + rng.standard_normal()}}
s = sweep(f, {{"a": [1.0, 2.0, 3.0]}}, replicates=2, workers=2, store={str(tmp_path / 's')!r})
r = sweep(f, {{"a": [1.0, 2.0, 3.0]}}, replicates=2, workers=1)
assert int((s.status == 1).sum()) == 6, s.error.values
np.testing.assert_array_equal(s.y.values, r.y.values)
again = sweep(f, {{"a": [1.0, 2.0, 3.0]}}, replicates=2, workers=2, store={str(tmp_path / 's')!r})
np.testing.assert_array_equal(again.y.values, r.y.values)
print("OK")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0 and out.stdout.strip().endswith("OK"), out.stderr[-3000:]


def _faulty(a, rng):
    """A grid function with faults at some points (module level: spawned workers import it)."""
    import os as _os
    import sys as _sys

    if a == 1:
        _sys.exit(3)
    if a == 2:
        _os._exit(9)                  # the worker process dies
    if a == 3:
        return {"y": None}
    if a == 4:
        return {"z": 1.0}             # other keys than the first point
    return {"y": float(a) + rng.standard_normal()}


@pytest.mark.parametrize("workers", [1, 2])
def test_faults_of_some_points_leave_the_others_done(tmp_path, workers):
    """sys.exit in fn, a worker that dies, None outputs and other output names fail their own point (with the
    error recorded); every other point completes, in memory and in a store."""
    grid = {"a": [2, 0, 1, 3, 4, 5]} if workers > 1 else {"a": [0, 1, 3, 4, 5]}   # os._exit would end this process
    for store in (None, str(tmp_path / f"s{workers}")):
        ds = sw.sweep(_faulty, grid, replicates=1, workers=workers, store=store)
        status = dict(zip(ds["a"].values.tolist(), ds["status"].values[:, 0].tolist()))
        errors = dict(zip(ds["a"].values.tolist(), ds["error"].values[:, 0].tolist()))
        assert status[0] == status[5] == sw.DONE
        assert all(status[a] == sw.FAILED for a in grid["a"] if a not in (0, 5))
        assert "SystemExit" in str(errors[1]) and "None" in str(errors[3]) and "OutputError" in str(errors[4])
        if workers > 1:
            assert "WorkerDied" in str(errors[2])


def _dies_at_zero(a, rng):
    """Grid function: the worker evaluating ``a = 0`` dies."""
    import os as _os

    if a == 0:
        _os._exit(9)
    return {"y": float(a)}


def test_the_points_a_dead_worker_took_with_it_are_retried_together(monkeypatch):
    """A worker that dies breaks its pool, losing every point in flight or waiting: the points that were running
    (at most one per worker) run again alone and the others together, so the culprit among 12 points costs at most
    workers + 1 = 3 more pool starts (halving the lost points took 6, one fresh process per lost point 12), and it
    alone is recorded as failed."""
    starts = []
    real = runners._in_processes

    def counted(blob, runner, tasks, workers, sink, bar):
        starts.append(len(tasks))
        return real(blob, runner, tasks, workers, sink, bar)

    monkeypatch.setattr(runners, "_in_processes", counted)
    grid = {"a": list(range(12))}
    ds = sw.sweep(_dies_at_zero, grid, workers=2)
    status = dict(zip(ds["a"].values.tolist(), ds["status"].values[:, 0].tolist()))
    assert status[0] == sw.FAILED and "WorkerDied" in str(ds["error"].values[0, 0])
    assert all(status[a] == sw.DONE for a in range(1, 12))
    assert starts[0] == 12 and len(starts) - 1 <= 2 + 1, starts


def test_grid_values_must_be_distinct_scalars():
    with pytest.raises(ValueError, match="distinct"):
        sw.sweep(_faulty, {"a": [0, 0]}, workers=1)
    with pytest.raises(ValueError, match="scalars"):
        sw.sweep(_faulty, {"a": [[0, 1], [2, 3]]}, workers=1)


def test_read_points_names_a_store_it_cannot_read(tmp_path):
    """A sweep store, an empty folder or an incomplete point store is a ValueError naming the store (KeyError and
    zarr's GroupNotFoundError before)."""
    sw.sweep(_faulty, {"a": [0]}, workers=1, store=str(tmp_path / "sweep"))
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "sweep", tmp_path / "empty"):
        with pytest.raises(ValueError, match="^store .* is not a complete point store"):
            sw.read_points(str(path))


_KILL_DRIVER = """
import os, sys, time
from validation import sweeps as sw
def f(a, rng):
    with open(os.path.join({pids!r}, str(os.getpid())), "w"):
        pass
    time.sleep(30.0 if a == 1 else 0.15)        # a = 1 keeps a worker busy when the driver dies
    return {{"y": a + rng.standard_normal(), "z": rng.standard_normal(3)}}
f.grid_function_name = "kill9"
sw.sweep(f, {{"a": list(range(12))}}, replicates=2, rng=5, workers=2, store={store!r})
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kill_9_of_the_driver_at_a_random_moment_resumes_to_the_same_store(tmp_path, seed):
    """Fault injection: the driver of a 2-worker sweep is killed with SIGKILL at a random moment (uniform in 2–5 s:
    workers starting, the first point, points being written, a point of 30 s running); its workers die with it
    (none orphaned, checked within 3 s: without ``die_with_parent`` the worker in the long point outlives the
    driver), and a resumed run gives a store identical to an uninterrupted one."""
    import signal
    import time

    pids, store = tmp_path / "pids", str(tmp_path / "killed")
    pids.mkdir()
    driver = subprocess.Popen([sys.executable, "-c", _KILL_DRIVER.format(pids=str(pids), store=store)],
                              env={**os.environ, "OMP_NUM_THREADS": "1"}, stderr=subprocess.DEVNULL)
    time.sleep(np.random.default_rng(seed).uniform(2.0, 5.0))
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    workers = [int(p.name) for p in pids.iterdir()]
    deadline = time.time() + 3.0
    while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in workers):
        time.sleep(0.1)
    assert not [p for p in workers if os.path.exists(f"/proc/{p}")], "orphaned workers"

    def f(a, rng):
        return {"y": a + rng.standard_normal(), "z": rng.standard_normal(3)}

    f.grid_function_name = "kill9"           # the same sweep as the driver's (its source is another function's)
    resumed = sw.sweep(f, {"a": list(range(12))}, replicates=2, rng=5, workers=1, store=store, allow_mixed=True)
    fresh = sw.sweep(f, {"a": list(range(12))}, replicates=2, rng=5, workers=1)
    assert (resumed["status"].values == sw.DONE).all()
    for k in ("y", "z"):
        np.testing.assert_array_equal(resumed[k].values, fresh[k].values)


def _slow_point(a, rng, starts):
    """Grid function for the timeout test (module level: spawned workers import it): point 1 hangs."""
    import time

    if a == 1:
        with open(starts, "a") as fh:
            fh.write("start\n")
        time.sleep(60)
    return {"y": float(a)}


@pytest.mark.parametrize("workers, stored", [(1, False), (2, True)])
def test_a_point_that_hangs_is_stopped_at_its_timeout(tmp_path, workers, stored):
    """``timeout``: the hanging point is stopped with its worker and recorded failed with a Timeout error, and is
    not retried (it started once); every other point is done (in memory with one worker process, in a store with
    two)."""
    import functools

    starts = tmp_path / "starts"
    fn = functools.partial(_slow_point, starts=str(starts))
    fn.grid_function_name = "slow_point"
    ds = sw.sweep(fn, {"a": [0, 1, 2]}, workers=workers, timeout=2.0,
                  store=str(tmp_path / "t") if stored else None)
    assert ds["status"].values[:, 0].tolist() == [sw.DONE, sw.FAILED, sw.DONE]
    assert str(ds["error"].values[1, 0]).startswith("Timeout: the point ran longer than timeout = 2 s")
    assert starts.read_text().count("start") == 1


def test_an_experiment_store_is_an_xarray_dataset_over_its_points(tmp_path, monkeypatch):
    """A figure's ragged point store: ``xarray.open_zarr`` reads every output as a variable over ``point`` with the
    points' ``D``, ``N``, ``P`` as coordinates (no warning), a point's group reads alone, and reopening the finished
    store evaluates nothing, assembles nothing (the result assembled the first time is kept beside the points: fig5's
    theory curves took 15 of the 17.6 s a full store took to reopen) and gives the same result and report rows. A
    cached file cut short, or a point's outputs changed in the store, assemble afresh."""
    import glob
    import warnings

    import zarr

    from validation.experiments import _base as base
    from validation.experiments._gaps import GapsLongTime

    store = str(tmp_path / "fig5")
    first = base.run("gaps_long_time", "smoke", store=store, progress=False)
    exp = base.get("gaps_long_time")
    pts = exp.points(exp.settings("smoke"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = xr.open_zarr(store).load()
        p1 = xr.open_zarr(store, group="p1").load()
    outputs = sw.read_points(store)
    assert ds.sizes["point"] == len(pts) == len(outputs)
    # the points' D, N, P are coordinates; P is also an output of each point, so its coordinate is point_P
    assert list(ds["point_P"].values) == [p["P"] for p in pts] and list(ds["D"].values) == [p["D"] for p in pts]
    assert {"D", "N", "point_P"} <= set(ds["gap_mean"].coords) and ds["gap_mean"].dims[0] == "point"
    for i, out in enumerate(outputs):
        for k, v in out.items():
            np.testing.assert_array_equal(ds[k].values[i], v)
    for k, v in outputs[1].items():
        np.testing.assert_array_equal(p1[k].values, v)
    cached = glob.glob(f"{store}/assembled-*.npz")
    assert len(cached) == 1
    assembled = []
    monkeypatch.setattr(GapsLongTime, "assemble", lambda self, s, o: assembled.append(1) or ({"x": np.zeros(1)}, {}))
    monkeypatch.setattr(runners, "run_point", lambda *a, **k: pytest.fail("a point was evaluated again"))
    again = base.run("gaps_long_time", "smoke", store=store, progress=False)
    assert assembled == [] and again.data == first.data and again.meta == first.meta
    for k, v in first.data.to_arrays().items():
        np.testing.assert_array_equal(again.data.to_arrays()[k], v)
    assert exp.checks(again) == exp.checks(first)
    with open(cached[0], "r+b") as fh:                      # cut short: assembled again, and rewritten whole
        fh.truncate(100)
    assert list(base.run("gaps_long_time", "smoke", store=store, progress=False).data) == ["x"]
    assert assembled == [1] and glob.glob(f"{store}/assembled-*.npz") == cached
    g = zarr.open_group(store, mode="r+")                    # another output at point 0: another key
    g["gap_mean"][0] = 123.0
    g["p0"]["gap_mean"][...] = 123.0
    base.run("gaps_long_time", "smoke", store=store, progress=False)
    now = glob.glob(f"{store}/assembled-*.npz")
    assert assembled == [1, 1] and len(now) == 1 and now != cached
    monkeypatch.setattr(base, "_LOADED_DIGEST", "other")      # the library edited since it was loaded: no cache
    base.run("gaps_long_time", "smoke", store=store, progress=False)
    assert assembled == [1, 1, 1] and glob.glob(f"{store}/assembled-*.npz") == now
    monkeypatch.setattr(base, "_LOADED_DIGEST", base._library_digest())

    scaled = GapsLongTime()                                  # an instance with state of its own: no cache
    scaled.factor = 2.0
    base.run(scaled, "smoke", store=store, progress=False)
    assert assembled == [1, 1, 1, 1] and glob.glob(f"{store}/assembled-*.npz") == now
    g["gap_mean"][0] = 124.0                                 # a store it cannot write to: the result all the same
    g["p0"]["gap_mean"][...] = 124.0
    monkeypatch.setattr(base.Result, "save", lambda self, path: (_ for _ in ()).throw(OSError("read-only")))
    assert list(base.run("gaps_long_time", "smoke", store=store, progress=False).data) == ["x"]



_CTRL_C = """
import os, sys, time
import numpy as np
from validation import sweeps as sw
def f(i, rng=None):
    with open(os.path.join({pids!r}, str(os.getpid())), "w"):
        pass
    time.sleep(0.2 if i < 3 or os.environ.get("FAST") else 60.0)
    return {{"y": np.array(float(i))}}
try:
    if {dask!r}:
        with sw.local_cluster(2) as client:
            sw.run_points(f, 10, "ctrl_c", store={store!r}, client=client)
    else:
        sw.run_points(f, 10, "ctrl_c", store={store!r}, workers=2)
except KeyboardInterrupt as err:
    print(err, file=sys.stderr)
    sys.exit(130)
print("done", file=sys.stderr)
"""


@pytest.mark.parametrize("dask", [False, True], ids=["processes", "dask"])
def test_ctrl_c_leaves_one_line_no_worker_and_a_store_that_resumes(tmp_path, dask):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) during a stored run on two workers (local
    processes, or a Dask ``LocalCluster``): one line saying how many points are stored and how to resume (it was a
    44-line traceback and a distributed CancelledError), the workers gone, and the same call completes the store."""
    import re
    import signal
    import time

    import zarr

    if dask:
        pytest.importorskip("distributed")
    pids, store = tmp_path / "pids", str(tmp_path / "store")
    pids.mkdir()
    script = _CTRL_C.format(pids=str(pids), store=store, dask=dask)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(os.path.join(store, "p2")):
        time.sleep(0.2)
    time.sleep(1.0)                                   # points 0-2 stored, two points of 60 s running
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=30)
    lines = err.strip().splitlines()
    assert run.returncode == 130 and len(lines) == 2 and lines[0].startswith("ctrl_c: 10 of 10 points"), err
    m = re.fullmatch(r"interrupted: (\d+) of 10 points stored in '(.*)'; run the same command to resume", lines[1])
    assert m and m.group(2) == store, lines[1]
    stored = int(np.sum(np.asarray(zarr.open_group(store, mode="r")["status"][...]) == sw.DONE))
    assert int(m.group(1)) == stored >= 3
    workers = [int(p.name) for p in pids.iterdir()]
    deadline = time.time() + 5.0
    while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in workers):
        time.sleep(0.1)
    assert not [p for p in workers if os.path.exists(f"/proc/{p}")], "workers left running"
    if dask:                                          # resuming a store does not depend on who evaluates the points
        return
    done = subprocess.run([sys.executable, "-c", script], env={**env, "FAST": "1"}, stderr=subprocess.PIPE,
                          text=True, timeout=120)
    assert done.returncode == 0 and f"{10 - stored} of 10 points to evaluate" in done.stderr, done.stderr
    assert [float(o["y"]) for o in sw.read_points(store)] == [float(i) for i in range(10)]


_SLOW_POINT = """
import os, time
def slow(x, rng):
    with open(os.path.join(os.environ["MARKS"], str(x)), "w"):
        pass
    time.sleep(0.4)
    return {"y": float(x)}
"""


def test_ctrl_c_on_a_local_cluster_is_one_line_and_the_resume_finds_its_count(tmp_path):
    """``linattn sweep … --workers 2`` (a Dask ``LocalCluster``) interrupted by Ctrl-C — SIGINT to the process
    group, as a terminal sends it — while points run: the whole stderr is the one line saying how many are stored
    (it followed ~60 lines of the workers' KeyboardInterrupt tracebacks), that count is what the store holds (the
    points running at the Ctrl-C were written after it was counted: the resume found 45 done, not 44), and the same
    command evaluates exactly the others."""
    import re
    import signal
    import time

    import zarr

    pytest.importorskip("distributed")
    n = 16
    (tmp_path / "slowmod.py").write_text(_SLOW_POINT)
    (tmp_path / "grid.toml").write_text(f"x = {list(range(n))}\n")
    store, first, second = str(tmp_path / "store"), tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    command = [sys.executable, "-m", "validation._app.cli", "sweep", "slowmod:slow", "--grid", "grid.toml",
               "--workers", "2", "--store", store, "--no-progress"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MARKS": str(first)}
    run = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)

    def stored():
        try:
            return int(np.sum(np.asarray(zarr.open_group(store, mode="r")["status"][...]) == sw.DONE))
        except Exception:                       # the store is being created
            return 0

    deadline = time.time() + 120
    while time.time() < deadline and stored() < 3:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGINT)           # two points running, a few stored
    _, err = run.communicate(timeout=120)
    m = re.fullmatch(rf"linattn: error: interrupted: (\d+) of {n} evaluations stored in '(.*)'; run the same "
                     "command to resume\n", err)
    assert run.returncode == 130 and m and m.group(2) == store, err
    k = int(m.group(1))
    assert 3 <= k == stored() < n
    done = subprocess.run(command, cwd=tmp_path, env={**env, "MARKS": str(second)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and f"{n} of {n} evaluations done, 0 failed" in done.stdout, done.stderr
    assert done.stderr == "" and len(list(second.iterdir())) == n - k


def test_the_command_line_says_interrupted_in_one_line(tmp_path):
    script = ("import sys\nfrom validation import gallery\nfrom validation._app import cli\n"
              "def make(*a, **k):\n    raise KeyboardInterrupt('interrupted: 3 of 12 points stored in \\'x\\'; run "
              "the same command to resume')\ngallery.make = make\nsys.exit(cli.main(['figures', 'fig5', '--smoke', "
              f"'--out', {str(tmp_path)!r}]))\n")
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 130, res.stderr
    assert res.stderr.strip() == ("linattn: error: interrupted: 3 of 12 points stored in 'x'; run the same command "
                                  "to resume")


# ----------------------------------------------------------------------------- refusals and extreme arguments
def _point(i, rng=None):
    return {"a": float(i)}


def _sweep(*args, **kwargs):
    """``validation.sweep`` (its results are xarray Datasets: skipped without the [dask] extra)."""
    pytest.importorskip("xarray")
    return validation.sweep(*args, **kwargs)


REFUSED = refusals(name_not_within_letters, [
    ("task-seed-inf", lambda: sw.task_seed(float("inf"), "f", {"a": 1}, 0), "seed"),
    ("task-seed-point", lambda: sw.task_seed(0, "f", "x", 0), "point"),
    ("task-seed-replicate", lambda: sw.task_seed(0, "f", {"a": 1}, float("-inf")), "replicate"),
    ("grid-function-name", lambda: sw.grid_function(5), "name"),
    # run_points: a non-callable fn ran every point and raised RuntimeError("3 of 3 points failed: 'int' object is not
    # callable"); attrs / progress of the wrong type raised raw TypeError / numpy's "truth value is ambiguous";
    # n_points = 1e12 built a list of 1e12 tasks (no memory guard: a hang)
    ("run-points-fn", lambda: sw.run_points(3, 2, "x"), "fn"),
    ("run-points-attrs", lambda: sw.run_points(_point, 2, "x", attrs=[1]), "attrs"),
    ("run-points-progress", lambda: sw.run_points(_point, 2, "x", progress=np.ones(3)), "progress"),
    ("run-points-allow-mixed", lambda: sw.run_points(_point, 2, "x", allow_mixed="no"), "allow_mixed"),
    ("run-points-n-points-huge", lambda: sw.run_points(_point, 10**12, "x"), "n_points"),
    ("sweep-client", lambda: _sweep(lambda a, rng=None: {"y": a}, {"a": [1.0]}, client=3), "client"),
    # a grid without a required parameter of the grid function: every point failed with Python's "missing 3
    # required positional arguments" (linattn sweep long_time_limit --grid <D only>)
    ("sweep-grid-missing", lambda: _sweep(lambda D, N, rng=None: {"y": D}, {"D": [3]}, workers=1), "grid"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("client", ["tcp://x", 3, "executor"])
def test_a_client_is_a_dask_client(client):
    """``checked_client(ThreadPoolExecutor())`` passed (it has a ``submit``) and the sweep failed later inside Dask's
    ``as_completed``: anything but ``None`` or a ``dask.distributed.Client`` is refused naming client."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match=r"^client must be None"):
            sw.checked_client(pool if client == "executor" else client)
    assert sw.checked_client(None) is None


def test_run_points_still_runs():
    assert sw.run_points(_point, 3, "x") == [{"a": 0.0}, {"a": 1.0}, {"a": 2.0}]


def test_sweep_refuses_a_billion_workers():
    """``validation.sweep(..., workers=10**9)`` hung starting processes; refused naming ``workers`` (the sweep runner
    needs the [dask] extra: skipped without it)."""
    pytest.importorskip("xarray")
    with pytest.raises(ValueError, match=r"(?<![A-Za-z_])workers(?![A-Za-z_])"):
        validation.sweep(lambda a, rng=None: {"y": np.array(a)}, {"a": [1.0, 2.0]}, workers=10**9)


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


def test_a_sweep_records_any_exception_of_a_point_and_guards_its_size():
    """A BaseException subclass raised by a point is that point's recorded error (Ctrl-C still stops the run); a grid
    × replicates too large for memory is refused before anything is allocated."""
    pytest.importorskip("xarray")
    import validation

    class Stop(BaseException):
        pass

    def f(x, rng):
        if x == 2:
            raise Stop("boom")
        return {"y": float(x)}

    ds = validation.sweep(f, {"x": [1, 2, 3]}, workers=1)
    assert ds["status"].values.ravel().tolist() == [1, 2, 1] and "Stop: boom" in str(ds["error"].values[1, 0])
    with pytest.raises(ValueError, match="grid or replicates too large"):
        validation.sweep(f, {"x": [1]}, replicates=10**9, workers=1)


def test_sweep_grid_values_are_compared_by_value_and_settings_by_key():
    pytest.importorskip("xarray")
    import validation
    from validation.experiments import _base as base

    with pytest.raises(ValueError, match="distinct values"):
        validation.sweep(lambda x, rng: {"y": 1.0}, {"x": [1, 1.0]}, workers=1)
    with pytest.raises(ValueError, match="unknown: \\['bogus'\\]"):
        base.run("flow_curves", "smoke", settings={"bogus": 1}, progress=False)
    with pytest.raises(ValueError, match="^ds must be"):
        validation.sweep_summary(None)


def test_cli_sweep_unknown_grid_function_is_named(capsys):
    """``linattn sweep nope --grid g.toml``: "fn must be a callable or one of the registered grid functions" named the
    library's argument ``fn``, not the command line's ``grid_function``."""
    import tempfile

    from validation._app import cli

    grid = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    grid.write("D = [3]\nN = [6]\nP = [10]\nlam = [0.1]\n")
    grid.close()
    assert cli.main(["sweep", "nope", "--grid", grid.name, "--workers", "1", "--no-progress"]) == 2
    assert "grid_function" in capsys.readouterr().err
