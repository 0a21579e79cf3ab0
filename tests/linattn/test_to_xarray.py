"""``to_xarray()`` of the result types a user sweeps by hand (a stationary theory point and curve, a ridge solution,
exact dataset averages, averaged learning curves; the task-diversity transition in its own test file). xarray is
the optional extra [dask]: these tests skip without it, except the message that names the extra."""
import sys

import numpy as np
import pytest

import dynamics
import linattn
import replica

PB = linattn.Problem(6, 12, 0.1)


@pytest.fixture
def xr():
    return pytest.importorskip("xarray", reason="to_xarray needs the optional extra [dask]")


def test_stationary_points_concatenate_into_a_sweep(xr):
    points = [replica.stationary(PB, P, np.inf, 0.01) for P in (50, 100, 200)]
    ds = points[0].to_xarray()
    assert float(ds.P) == 50 and float(ds.beta) == np.inf and float(ds.lam) == 0.01
    assert float(ds.test) == points[0].test and bool(ds.converged) and ds.attrs["model"] == "reduced"
    assert "order" not in ds and "D=6" in ds.attrs["problem"]
    sweep = xr.concat([p.to_xarray() for p in points], dim="P")
    np.testing.assert_array_equal(sweep.P.values, [50, 100, 200])
    np.testing.assert_array_equal(sweep.test.values, [p.test for p in points])


def test_stationary_curve_lies_along_p(xr):
    curve = replica.stationary_curve(PB, [50, 100, 200], np.inf, 0.01)
    ds = curve.to_xarray()
    assert ds.test.dims == ("P",) and ds.max_residual.dims == ()
    np.testing.assert_array_equal(ds.gap.values, curve.gap)


def test_ridge_solution_names_its_dimensions_and_the_decay_pair(xr):
    sol = replica.ridge(PB.sample(40, rng=0), PB, (0.01, 0.1), model="full")
    ds = sol.to_xarray()
    assert ds.Gamma.dims == ("i", "j") and ds.v.dims == ("i",)
    assert (float(ds.lam), float(ds.lam_v)) == (0.01, 0.1) and float(ds.test) == sol.test
    np.testing.assert_array_equal(ds.Gamma.values, sol.Gamma)


def test_dataset_averages_keep_one_value_per_dataset(xr):
    avg = replica.dataset_average(PB, 40, np.inf, 0.01, n_datasets=5)
    ds = avg.to_xarray()
    assert ds.test.dims == ("dataset",) and ds.sizes["dataset"] == 5 and "test_idg" not in ds
    assert float(ds.test.mean()) == pytest.approx(avg.test_mean, rel=1e-15)


def test_averaged_curves_lie_along_time(xr):
    ac = dynamics.averaged_curves(PB, 40, 0.01, [0.1, 1.0, 10.0])
    ds = ac.to_xarray()
    assert ds.test.dims == ("times",) and float(ds.P) == 40
    np.testing.assert_array_equal(ds.train.values, ac.train)


def test_without_xarray_the_message_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)        # import xarray raises ImportError
    with pytest.raises(ImportError, match=r"StationaryTheory.to_xarray needs xarray.*\[dask\]"):
        replica.stationary(PB, 50, np.inf, 0.01).to_xarray()
