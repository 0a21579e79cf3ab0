"""Statistical assertion helpers shared by the tests.

Statistical assertions state their error estimate: a Monte Carlo mean is compared with its
exact value within ``k`` standard errors, the standard error estimated from the same sample.
With ``k = 4`` a correct implementation fails with probability ~6e-5 per assertion.
"""
import numpy as np


def assert_mean(samples, expected, k=4.0, label=""):
    """Assert that the sample mean of ``samples`` is within ``k`` standard errors of ``expected``."""
    x = np.asarray(samples, dtype=float)
    mean = x.mean()
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert abs(mean - expected) <= k * se, (
        f"{label}: mean {mean:.6g} vs exact {expected:.6g}: |diff| = {abs(mean-expected):.3g} "
        f"> {k} standard errors ({k*se:.3g})")


