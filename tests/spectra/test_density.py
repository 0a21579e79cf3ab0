"""Spectral densities and distribution functions (:func:`spectra.density`, :func:`spectra.cdf`,
:func:`spectra.spectral_cdf`, :func:`spectra.zero_atom`, :func:`spectra.kolmogorov_distance`): a CDF is a
distribution function, bad arguments are refused by name."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import linattn
import spectra

PB = linattn.Problem(4, 8, 0.1)


REFUSED = refusals(name_as_word, [
    ("cdf-nan", lambda: spectra.spectral_cdf(1.0, PB)(np.nan), "x", None),
    ("cdf-str", lambda: spectra.spectral_cdf(1.0, PB)("a"), "x", None),
    ("edges-nan", lambda: spectra.spectral_cdf(1.0, PB).edges(np.nan), "rel_tol", None),
    ("edges-negative", lambda: spectra.spectral_cdf(1.0, PB).edges(-1.0), "rel_tol", None),
    ("cdf-grid", lambda: spectra.cdf(np.array([0.5]), 1.0, PB, n_grid=10**9), "n_grid"),
    ("zero-atom-pb", lambda: spectra.zero_atom(1.0, pb="x"), "pb"),
]) + refusals(name_not_within_letters, [
    # a density peak too sharp for the real-axis fixed point: refused, not a ConvergenceError
    ("density-huge-alpha", lambda: spectra.density(np.array([0.5, 1.0]), 1e12, PB), "alpha"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_spectral_cdf_is_a_distribution_function():
    """The tabulated law ends at exactly 1 (its quadrature error is spread over the continuous part), so a CDF and a
    Kolmogorov distance never exceed 1 (they reached 1.0000019 and 1.0000037)."""
    import spectra

    pb = linattn.Problem(3, 4, 0.1)
    assert np.array_equal(spectra.cdf([100.0, 1e300], 0.5, pb, law="mp"), [1.0, 1.0])
    assert spectra.kolmogorov_distance(np.full(9, 50.0), 0.5, pb, law="mp") <= 1.0


def test_tiniest_alpha_is_refused_naming_alpha():
    """At alpha = 1e-300 the tabulation's grid reached x ~ M/P = 1e300, where the block resolvent raised a
    ConvergenceError naming no argument; it is refused naming alpha, as every alpha whose spectrum no grid
    resolves."""
    pb = linattn.Problem(3, 4, 0.1)
    for call in (lambda: spectra.support_edges(1e-300, pb), lambda: spectra.spectral_cdf(1e-300, pb),
                 lambda: spectra.cdf(np.array([1.0]), 1e-300, pb)):
        with pytest.raises(ValueError, match=r"^spectra\.\w+: alpha must be a sample ratio whose continuous spectrum"):
            call()
