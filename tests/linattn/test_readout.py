"""The ridge readout on hinge features (``linattn._readout``): no training pairs, decays below rounding."""
import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

from linattn import _readout as readout

KNOTS = np.array([-1.0, 0.0, 1.0])


REFUSED = refusals(name_not_within_letters, [
    # silent wrong values: P = 0 training pairs divided by zero (a NaN readout)

])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_fit_readout_at_a_decay_below_rounding_is_the_min_norm_readout():
    """``fit_readout`` with fewer distinct training values than coefficients and ``lam`` below float64's resolution
    of ``ΨᵀΨ/P`` raised numpy's LinAlgError (Singular matrix); now the λ → 0 limit, the min-norm least squares."""
    for t, y, lam in (([1.0], [1.0], 1e-300), (np.ones(3), np.ones(3), 1e-320), ([0.5, 2.0], [1.0, 3.0], 1e-300)):
        psi = readout.hinge_features(t, KNOTS[:0])
        assert np.allclose(readout.fit_readout(t, y, KNOTS[:0], lam), np.linalg.pinv(psi) @ np.asarray(y),
                           rtol=1e-12, atol=1e-14)
    # the ridge itself where it is well conditioned (the normal equations), and λ → ∞ gives a → 0
    rng = np.random.default_rng(0)
    t, y = rng.normal(size=50), rng.normal(size=50)
    psi = readout.hinge_features(t, KNOTS)
    ref = np.linalg.solve(psi.T @ psi / 50 + 0.01 * np.eye(5), psi.T @ y / 50)
    assert np.allclose(readout.fit_readout(t, y, KNOTS, 0.01), ref, rtol=1e-12, atol=1e-14)
    big = readout.fit_readout(t, y, KNOTS, 1e300)
    assert np.all(np.isfinite(big)) and np.max(np.abs(big)) < 1e-299
