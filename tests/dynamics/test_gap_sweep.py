"""Gaps over a grid of ``P`` (:func:`dynamics.gap_sweep`): its guards, the gap beyond float64, bad ``P_values``."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import dynamics
import dynamics._gap_sweep
import linattn

PB = linattn.Problem(4, 8, 0.1)
PB_3_10 = linattn.Problem(3, 10, 0.1)
MiB = 1 << 20
RAGGED = [[1.0], [1.0, 2.0]]


def _no_eigensystem(*args, **kwargs):
    raise AssertionError("the sweep started: its guards let it through")


REFUSED = refusals(name_as_word, [
    ("gap-sweep", lambda: dynamics.gap_sweep(PB, [10], 0.1, n_datasets=10**9), "n_datasets"),
]) + refusals(name_not_within_letters, [
    ("gap-sweep-P-values", lambda: dynamics.gap_sweep(PB, RAGGED, 0.1, n_datasets=2), "P_values"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_gap_sweep_refuses_empty_P_values():
    with pytest.raises(ValueError, match="P_values"):
        dynamics.gap_sweep(PB_3_10, [], 0.1, n_datasets=2)


def test_gap_beyond_float_range_is_inf_as_in_the_seed_figure_6():
    """Seed Fig. 6 (reduced model, λ = 0, t = 10³): at P < M the flow drives E_t below 1e-300 (denormal) while
    E_g stays O(1), so ΔEr exceeds 1.8e308. A refusal there stopped ``make run`` (fig6, quick grid); the gap is
    +inf, as for E_t = 0, and P* reads it as above any level."""
    sw = dynamics.gap_sweep(linattn.Problem(10, 10), [8], 0.0, n_datasets=15, model="reduced", time=1e3, rng=10010)
    assert np.all(sw.train_all >= 0) and np.all(np.isfinite(sw.test_all)) and np.all(sw.test_all > 0.01)
    tr, te, gap = sw.train_all[0], sw.test_all[0], sw.gap_all[0]
    beyond = tr < te / np.finfo(float).max                 # ΔEr ≈ E_g/E_t above the largest float
    assert np.any(beyond & (tr > 0))                       # the regime of the failure is reached
    assert np.all(np.isposinf(gap[beyond])) and sw.gap_mean[0] == np.inf
    np.testing.assert_allclose(gap[~beyond], (te[~beyond] - tr[~beyond]) / tr[~beyond], rtol=1e-15)
    assert linattn.relative_gap(1e-300, 1e300) == np.inf
    assert linattn.relative_gap(5e-324, 1.0) == np.inf      # the smallest denormal
    assert linattn.transition_point([1.0, 2.0], [np.inf, 1.0]) == 2.0
    with pytest.raises(ValueError, match="test"):           # −inf only from a negative E_g beyond the range
        linattn.relative_gap(1e-300, -1e300)


@pytest.mark.parametrize("P_values, n_datasets, work_limit", [
    ([5] * 20, 10**6, None),         # 2e7 trips of ~0.6 ms (3 h) passed the work guard
    ([5] * 20, 1000, "1e30"),        # the result arrays under a 1 MiB memory limit (the work guard lifted)
])
def test_gap_sweep_guards_count_python_trips_and_results(P_values, n_datasets, work_limit, monkeypatch):
    monkeypatch.setattr(dynamics._gap_sweep, "_eigensystem", _no_eigensystem)
    if work_limit is not None:
        monkeypatch.setenv("LINATTN_WORK_LIMIT", work_limit)
        monkeypatch.setenv("LINATTN_MEMORY_LIMIT", str(MiB))
    with pytest.raises(ValueError, match=r"\bn_datasets\b"):
        dynamics.gap_sweep(PB, P_values, 0.1, n_datasets=n_datasets)


def test_flow_time_zero_is_refused_naming_time():
    """gap_sweep at time = 0 (or 1e-300, where Γ(t) underflows to 0) refused naming an internal Gamma."""
    import linattn

    pb = linattn.Problem(3, 4, 0.1)
    for t in (0.0, 1e-300):
        with pytest.raises(ValueError, match=r"^dynamics\.gap_sweep: time must be"):
            dynamics.gap_sweep(pb, [5], 0.01, n_datasets=2, time=t)
    assert np.all(np.isfinite(dynamics.gap_sweep(pb, [5], 0.01, n_datasets=2, time=1e-10).contrast_mean))


def test_one_training_set_has_nan_spreads():
    """gap_sweep with n_datasets = 1 reported gap_sd = contrast_sd = 0, a spread it cannot estimate."""
    import linattn

    sw = dynamics.gap_sweep(linattn.Problem(3, 4, 0.1), [5, 20], 0.01, n_datasets=1)
    assert np.all(np.isnan(sw.gap_sd)) and np.all(np.isnan(sw.contrast_sd))
    assert np.all(np.isfinite(sw.gap_mean)) and np.all(np.isfinite(sw.contrast_mean))
    sw2 = dynamics.gap_sweep(linattn.Problem(3, 4, 0.1), [5, 20], 0.01, n_datasets=2)
    assert np.all(np.isfinite(sw2.gap_sd)) and np.all(sw2.contrast_sd >= 0)
