"""The measures of a trajectory (:func:`diagnostics.diagnose`, :func:`diagnostics.stable_rank`,
:func:`diagnostics.subspace_distance`, :func:`diagnostics.principal_angles`): scale-free at extreme scales,
degenerate matrices refused by name."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, refusals

import diagnostics
import dynamics
import linattn

PB = linattn.Problem(4, 8, 0.1)


def _trivial_limits():
    """Scale-free quantities at extreme scales: the same numbers as at scale 1."""
    rng = np.random.default_rng(0)
    traj, ref = rng.normal(size=(2, 5, 4)), rng.normal(size=(5, 4))
    base = diagnostics.subspace_distance(traj, ref)
    for scaled in (diagnostics.subspace_distance(traj, ref * 1e200), diagnostics.subspace_distance(traj * 1e-200, ref)):
        assert np.all(np.isfinite(scaled)) and np.allclose(scaled, base, atol=1e-12)
    a = dynamics.logistic_modes(PB, 1e200, [0.0, 1.0])             # a(0) = a^0, then relaxes toward a^∞
    assert a[0, 0] == 1e200 and np.all(np.isfinite(a))
    low = dynamics.logistic_modes(PB, 1e-300, [0.0])
    assert low[0, 0] == 1e-300
    mid = dynamics.logistic_modes(PB, 0.3, [0.0, 1.0, 100.0])
    assert mid[0, 0] == 0.3 and 0.3 < mid[1, 0] < mid[-1, 0]


REFUSED = refusals(name_as_word, [
    # the default reference of diagnose is M's last matrix
    ("diagnose-zero", lambda: diagnostics.diagnose(np.zeros((3, 4, 4))), "M"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_the_trivial_limits_are_values():
    """(Also diagnose: its scale-free measures at 1e200 and 1e-300 equal those at scale 1.)"""
    traj = np.random.default_rng(0).normal(size=(5, 4, 4))
    base = diagnostics.diagnose(traj)
    for scale in (1e200, 1e-300):
        d = diagnostics.diagnose(traj * scale)
        for name in ("subspace_distance", "stable_rank", "effective_rank"):
            assert np.allclose(getattr(d, name), getattr(base, name), atol=1e-12), name
    _trivial_limits()


def test_principal_angles_of_a_zero_matrix_are_refused():
    with pytest.raises(ValueError, match="M_t"):
        diagnostics.principal_angles(np.zeros((3, 3)), np.eye(3))


def test_stable_rank_is_scale_free():
    M = np.diag([3.0, 2.0, 1.0])
    assert diagnostics.stable_rank(M * 1e200) == pytest.approx(diagnostics.stable_rank(M), rel=1e-14)
    assert diagnostics.stable_rank(M * 1e-200) == pytest.approx(14 / 9, rel=1e-14)
