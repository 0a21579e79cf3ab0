"""``replica.diversity_transition``: ``K*`` where the pool advantage ``A(K) = 1 − E_IDG/E_ICL`` of the pool theory
crosses ½, and the curve it is read from."""
import dataclasses

import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

import linattn
import replica

PB = linattn.Problem(10, 20, 0.1)
#: pools per pool theory (the default 16 costs 4 times as much; the identities below hold at any number)
POOLS = 4


def test_k_star_is_where_the_theory_crosses_the_level():
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=[2, 4, 8, 16, 32, 64], n_pools=POOLS)
    assert tr.K.dtype == np.int64 and isinstance(tr.K_star, float) and tr.level == 0.5
    assert np.all(np.diff(tr.advantage) < 0) and 0 < tr.advantage[-1] < 0.5 < tr.advantage[0] < 1
    np.testing.assert_allclose(tr.advantage, 1 - tr.test_idg / tr.test, rtol=0, atol=0)
    # the curve is the pool theory itself, point by point
    for i in (0, 3):
        th = replica.stationary(dataclasses.replace(PB, tasks=int(tr.K[i])), 1000, np.inf, 0.01, "full", n_pools=POOLS)
        assert (th.test, th.test_idg) == (tr.test[i], tr.test_idg[i])
    # K* lies between the grid points that bracket the crossing; the theory at integers on either side of it
    # (not on the grid) falls on the right side of the level
    k = int(np.flatnonzero(tr.advantage < 0.5)[0])
    assert tr.K[k - 1] < tr.K_star < tr.K[k]
    for K, above in ((int(np.floor(tr.K_star)) - 1, True), (int(np.ceil(tr.K_star)) + 1, False)):
        th = replica.stationary(dataclasses.replace(PB, tasks=K), 1000, np.inf, 0.01, "full", n_pools=POOLS)
        assert (1 - th.test_idg / th.test > 0.5) == above, K
    assert len(repr(tr)) < 400


def test_no_crossing_in_the_grid_is_none():
    tr = replica.diversity_transition(PB, 1000, np.inf, 0.01, K_values=[1, 2], n_pools=POOLS)
    assert tr.K_star is None and np.all(tr.advantage > 0.5)


@pytest.mark.parametrize("kwargs, name", [
    (dict(pb=linattn.Problem(10, 20, 0.1, tasks=5)), "pb"),
    (dict(K_values=[4]), "K_values"),
    (dict(K_values=[4, 2]), "K_values"),
    (dict(K_values=[0, 2]), "K_values"),
    (dict(K_values=[1.5, 2]), "K_values"),
    (dict(level=1.0), "level"),
    (dict(level=0.0), "level"),
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
