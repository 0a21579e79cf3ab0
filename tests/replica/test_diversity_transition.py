"""``replica.diversity_transition``: ``K*`` where the pool theory's curve in ``K`` crosses a level — the pool
advantage ``A(K) = 1 − E_IDG/E_ICL`` (default ½), or the ICL error's excess over its ``K = ∞`` value (within 10 %) —
and the curve it is read from."""
import dataclasses

import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

import linattn
import replica
from replica import _pool_theory

PB = linattn.Problem(10, 20, 0.1)
#: pools per pool theory (the default 16 costs 4 times as much; the identities below hold at any number)
POOLS = 4
GRID = [2, 4, 8, 16, 32, 64]


def _theory(K, model="full"):
    return replica.stationary(dataclasses.replace(PB, tasks=K), 1000, np.inf, 0.01, model, n_pools=POOLS)


def test_k_star_is_where_the_theory_crosses_the_level():
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=GRID, model="full", n_pools=POOLS,
                                      progress=False)
    assert tr.K.dtype == np.int64 and isinstance(tr.K_star, float) and tr.level == 0.5
    assert tr.criterion == "advantage" and tr.model == "full" and tr.law == "finite"
    assert np.all(np.diff(tr.advantage) < 0) and 0 < tr.advantage[-1] < 0.5 < tr.advantage[0] < 1
    np.testing.assert_allclose(tr.advantage, 1 - tr.test_idg / tr.test, rtol=0, atol=0)
    # the curve is the pool theory itself, point by point (the sweep draws the largest pools once and slices them:
    # the same pools, the same numbers)
    for i in (0, 3):
        th = _theory(int(tr.K[i]))
        assert (th.test, th.test_idg, th.test_se) == (tr.test[i], tr.test_idg[i], tr.test_se[i])
    # K* lies between the grid points that bracket the crossing; the theory at integers on either side of it
    # (not on the grid) falls on the right side of the level
    k = int(np.flatnonzero(tr.advantage < 0.5)[0])
    assert tr.K[k - 1] < tr.K_star < tr.K[k]
    for K, above in ((int(np.floor(tr.K_star)) - 1, True), (int(np.ceil(tr.K_star)) + 1, False)):
        th = _theory(K)
        assert (1 - th.test_idg / th.test > 0.5) == above, K
    assert len(repr(tr)) < 600


def test_the_full_model_reproduces_the_earlier_default():
    """The default model is now "reduced" (as everywhere in replica); model="full" gives the numbers of the earlier
    default: K* on this grid computed before the sweep reused its pools, batched the Gaussian theory and vectorised
    its kernels (agreement to the solvers' tolerance, 1e-11; measured 5e-16)."""
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=GRID, model="full", n_pools=POOLS,
                                      progress=False)
    assert tr.K_star == pytest.approx(11.384845715689938, rel=1e-10)
    np.testing.assert_allclose(tr.test, [0.6799964, 0.5314873, 0.38041634, 0.2794699, 0.23794107, 0.22187748],
                               rtol=1e-7)     # the printed digits of the earlier run
    reduced = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=GRID, n_pools=POOLS, progress=False)
    assert reduced.model == "reduced" and not np.allclose(reduced.test, tr.test, rtol=1e-3)


def test_icl_within_is_where_the_icl_error_comes_within_the_level_of_its_fresh_task_value():
    grid = [8, 16, 32, 64, 128]
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=grid, model="full", n_pools=POOLS,
                                      criterion="icl_within", progress=False)
    assert tr.level == 0.1 and tr.criterion == "icl_within" and list(tr.K) == grid
    fresh = replica.stationary(PB, 1000, np.inf, 0.01, "full")
    assert tr.test_inf == fresh.test
    np.testing.assert_allclose(tr.excess, tr.test / fresh.test - 1, rtol=0, atol=0)
    # the pool theory tends to the fresh-task theory: the excess falls through 10 % inside the grid
    assert np.all(np.diff(tr.excess) < 0) and tr.excess[-1] < 0.1 < tr.excess[0]
    k = int(np.flatnonzero(tr.excess < 0.1)[0])
    assert tr.K[k - 1] < tr.K_star < tr.K[k]
    # refined: the bisection ends on consecutive integers that bracket the crossing, and the theory there (computed
    # one K at a time) falls on either side of the level; the grid's interpolated K* is a few K off on this grid
    fine = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=grid, model="full", n_pools=POOLS,
                                        criterion="icl_within", refine=True, progress=False)
    assert set(grid) < set(fine.K.tolist()) and fine.K.size <= len(grid) + 5
    lo = int(np.floor(fine.K_star))
    assert lo in fine.K and lo + 1 in fine.K
    for K, above in ((lo, True), (lo + 1, False)):
        assert (_theory(K).test / fresh.test - 1 >= 0.1) == above, K
    assert abs(fine.K_star - tr.K_star) < 5
    # the two criteria answer different questions: the advantage's K* on the same curve lies well below
    assert linattn.transition_point(tr.K.astype(float), tr.advantage, 0.5) < tr.K_star / 2


def test_law_mp_takes_its_own_k_infinity_limit():
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=[4, 64, 4096], law="mp", n_pools=2,
                                      criterion="icl_within", progress=False)
    big = replica.stationary(dataclasses.replace(PB, tasks=2**15), 1000, np.inf, 0.01, law="mp", n_pools=2)
    # the Gaussian theory at K = 2^15 is within its pool-to-pool error (~1/√K) of the limit
    assert abs(big.test / tr.test_inf - 1) < 3 * big.test_se / big.test + 1e-3
    assert tr.excess[0] > tr.excess[1] > tr.excess[2] > -1e-3


def test_no_crossing_in_the_grid_is_none():
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=[1, 2], model="full", n_pools=POOLS,
                                      progress=False)
    assert tr.K_star is None and np.all(tr.advantage > 0.5)


def test_the_sweep_draws_the_pools_once(monkeypatch):
    """What does not depend on K is done once: the pools of the largest K, drawn once and sliced."""
    calls = []
    draw = _pool_theory.draw_theory_pool
    monkeypatch.setattr(_pool_theory, "draw_theory_pool", lambda pb, rng, j: calls.append(pb.tasks) or draw(pb, rng, j))
    replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=[2, 3, 5], model="full", n_pools=2, progress=False)
    assert calls == [5] * 2 * _pool_theory.GAUSS_POOLS


def test_progress_bar_and_its_switch(capsys):
    kw = dict(K_values=[2, 3], law="mp", n_pools=2)
    replica.diversity_transition(PB, 1000, np.inf, 0.01, progress=False, **kw)
    assert capsys.readouterr().err == ""
    replica.diversity_transition(PB, 1000, np.inf, 0.01, **kw)
    assert "diversity_transition D=10" in capsys.readouterr().err


def test_to_xarray():
    xr = pytest.importorskip("xarray", reason="to_xarray needs the optional extra [dask]")
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=[2, 3], law="mp", n_pools=2, progress=False)
    ds = tr.to_xarray()
    assert isinstance(ds, xr.Dataset) and list(ds.K.values) == [2, 3]
    np.testing.assert_array_equal(ds.advantage.values, tr.advantage)
    assert ds.attrs["criterion"] == "advantage" and float(ds.P) == 1000.0


@pytest.mark.parametrize("kwargs, name", [
    (dict(pb=linattn.Problem(10, 20, 0.1, tasks=5)), "pb"),
    (dict(K_values=[4]), "K_values"),
    (dict(K_values=[4, 2]), "K_values"),
    (dict(K_values=[0, 2]), "K_values"),
    (dict(K_values=[1.5, 2]), "K_values"),
    (dict(level=1.0), "level"),
    (dict(level=0.0), "level"),
    (dict(level=-0.1, criterion="icl_within"), "level"),
    (dict(criterion="icl"), "criterion"),
    (dict(n_pools=0), "n_pools"),
    (dict(K_values=np.arange(1, 10**6)), "K_values"),
])
def test_bad_input_names_the_argument(kwargs, name):
    args = dict(pb=PB, P=1000, beta=np.inf, lam=0.01) | kwargs
    with pytest.raises(ValueError, match=name):
        replica.diversity_transition(**args)


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_4_8 = linattn.Problem(4, 8, 0.1)


REFUSED = refusals(name_not_within_letters, [
    # the name in the message
    ("diversity-K-huge", lambda: replica.diversity_transition(PB_4_8, 200.0, np.inf, 0.01, K_values=[1, 10**15],
                                                              n_pools=2), "K_values"),
    # hangs: work guards that count what the work costs
    ("diversity-K-many", lambda: replica.diversity_transition(PB_4_8, 200.0, np.inf, 0.01,
                                                              K_values=np.arange(1, 20000)), "K_values"),
    # anisotropic inputs: refused by Problem(tasks=K) inside, in words about "tasks (got 1)", not the argument
    ("diversity-anisotropic", lambda: replica.diversity_transition(
        linattn.Problem(4, 8, 0.1, covariance=[1.0, 0.5, 0.3, 0.2]), 200.0, np.inf, 0.01), "pb"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)
