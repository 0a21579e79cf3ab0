"""The D → ∞ pool theory (:func:`replica.asymptotic`, :func:`replica.pool_resolvent`) at the interpolation
peak and at small task ratios."""
import numpy as np
import pytest

import replica


def test_asymptotic_error_at_the_interpolation_peak_follows_ridge_to_the_minus_half():
    """At τ = 1 the ridgeless error diverges: ε ~ √ridge, E ∝ ridge^(−1/2) over every decade (the root is found in
    log ε, the denominator 1 − τ − ε(2M + εdM) keeps 1 − τ exact). The earlier solver saturated at 4.4e14 for every
    ridge <= 1e-40 (absolute xtol = 1e-15 on ε)."""
    ref = replica.asymptotic(1.0, 1.0, 2.0, 0.0, 1e-10).test * 1e-5
    for r in (1e-20, 1e-40, 1e-80, 1e-300):
        got = replica.asymptotic(1.0, 1.0, 2.0, 0.0, r).test * np.sqrt(r)
        assert abs(got / ref - 1) < 1e-4, r          # the next order of the expansion is O(√ridge) = 1e-5 at 1e-10


def test_pool_resolvent_has_full_precision_at_small_task_ratio():
    """M_κ(x) from the branch of the quadratic formula without cancellation: 1e-15 against 60-digit arithmetic
    (the earlier form lost ~log10(1/κ) digits: 7e-9 at κ = 1e-8)."""
    import decimal

    decimal.getcontext().prec = 60
    for k in (1e-8, 1e-5, 1.0, 1e8):
        for x in (1e-100, 1e-8, 1.0, 1e100):
            X, K = decimal.Decimal(x), decimal.Decimal(k)
            b, a = X + 1 - 1 / K, X / K
            r = (b * b + 4 * a).sqrt()
            exact = 2 / (b + r) if b >= 0 else (r - b) / (2 * a)
            assert abs(replica.pool_resolvent(x, k)[0] / float(exact) - 1) < 1e-15, (k, x)
    with pytest.raises(ValueError, match="task_ratio"):
        replica.pool_resolvent(1.0, 1e-300)
