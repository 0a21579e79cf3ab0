"""Laws of the rescaled Hessian: the fixed-point solver against closed forms, its own
consistency, the quadrature's accuracy, and bad input (rungs 1, 2, 5)."""
import numpy as np
import pytest
from scipy import integrate

import linattn
import spectra
from linattn import ConvergenceError
from spectra import mp


@pytest.mark.parametrize("alpha", [0.25, 0.5, 1.0, 2.0, 5.0])
def test_fixed_point_reproduces_marchenko_pastur(alpha):
    """ξ ≡ 1 (law='mp', reduced) must give the MP closed forms."""
    pb = linattn.Problem(10, 30)
    q = 1 / alpha
    lo, hi = mp.edges(q)
    x = np.linspace(max(lo, 1e-3) * 0.5, hi * 1.2, 301)
    assert np.max(np.abs(spectra.density(x, alpha, pb, law="mp") - mp.density(x, q))) < 1e-8
    z = np.array([0.3 + 0.5j, 2.0 + 0.01j, -0.7, hi + 1.0, 1.0 - 0.2j])
    assert np.max(np.abs(spectra.stieltjes(z, alpha, pb, law="mp") - mp.stieltjes(z, q))) < 1e-9
    xc = np.linspace(-0.5, hi + 1, 57)
    assert np.max(np.abs(spectra.cdf(xc, alpha, pb, law="mp") - mp.cdf(xc, q))) < 5e-5  # grid integration
    assert spectra.zero_atom(alpha) == pytest.approx(mp.atom(q))
    (lo_t, hi_t), = spectra.support_edges(alpha, pb, law="mp")
    tab = spectra.spectral_cdf(alpha, pb, law="mp")
    h = np.max(np.diff(tab.grid))                       # the edges are located to the grid spacing
    assert abs(lo_t - lo) <= 2 * h and abs(hi_t - hi) <= 2 * h


def test_full_model_has_a_separate_v_cluster():
    """With c_v/c ≈ 11 (D = 10, N = 100) and P >> D the v-block eigenvalues form their own
    component of the MP law: two support intervals, the upper one holding D/M of the mass."""
    pb = linattn.Problem(10, 100)
    parts = spectra.support_edges(20.0, pb, law="mp", model="full")
    assert len(parts) == 2
    tab = spectra.spectral_cdf(20.0, pb, law="mp", model="full")
    split = 0.5 * (parts[0][1] + parts[1][0])
    assert 1 - tab(split) == pytest.approx(10 / 110, abs=2e-3)


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_finite_law_mass_mean_and_branch(model):
    pb = linattn.Problem(8, 12, 0.2)
    for alpha in (0.5, 1.0, 3.0):
        tab = spectra.spectral_cdf(alpha, pb, model=model)
        assert tab.mass_error < 1e-4
        # mean eigenvalue of H/c is E ξ per block: (D² + D c_v/c)/M for the full model
        law = spectra.prompt_law(pb, model)
        expected_mean = np.dot(law.block_dims, law.xi.T @ law.weights) / law.M
        x = tab.grid
        dens = np.gradient(tab.cumulative, x)
        mean = integrate.trapezoid(x * dens, x)
        assert mean == pytest.approx(expected_mean, rel=2e-3)
        m = spectra.stieltjes(np.linspace(0.05, 5, 40) + 1e-3j, alpha, pb, model=model)
        assert np.all(m.imag > 0)  # Herglotz: the physical branch


def test_derivative_matches_finite_differences():
    pb = linattn.Problem(7, 10, 0.1)
    for model in ("reduced", "full"):
        z = np.array([-0.3, 0.8 + 0.2j, 2.5 + 0.05j])
        m, dm = spectra.stieltjes(z, 1.3, pb, model=model, derivative=True)
        h = 1e-6
        fd = (spectra.stieltjes(z + h, 1.3, pb, model=model) - spectra.stieltjes(z - h, 1.3, pb, model=model)) / (2 * h)
        assert np.max(np.abs(fd - dm) / np.abs(dm)) < 1e-6


def test_quadrature_accuracy_of_the_finite_law():
    """The node construction is converged (the documented accuracy of spectra.law): another
    scrambling seed and half the nodes change the CDF by < 2e-3 everywhere and the density by
    < 2e-3 of its maximum above the lowest 5% of the nonzero spectrum. (Below, for P < M, the
    lower edge is set by the small-ξ tail and moves by up to ~2% of the maximum density; measured
    and documented in spectra.law.)"""
    pb = linattn.Problem(10, 20, 0.0)
    base = spectra.prompt_law(pb)
    variants = [spectra.prompt_law(pb, rng=7), spectra.prompt_law(pb, n_nodes=512)]
    for alpha in (0.5, 2.0):
        P = alpha * 100
        tab = spectra.spectral_cdf(alpha, pb)
        x = np.linspace(1e-3, 4, 400)
        lower = x[np.argmax((tab(x) - tab.atom) / (1 - tab.atom) > 0.05)]
        x = x[x >= lower] + 0j
        d0 = spectra.block_resolvent(x, P, base).m.imag / np.pi
        for lw in variants:
            d1 = spectra.block_resolvent(x, P, lw).m.imag / np.pi
            assert np.max(np.abs(d1 - d0)) < 2e-3 * np.max(d0)
            g = tab.grid[1::4]          # every 4th point of the tabulation grid: 750 points
            c0 = np.cumsum(spectra.block_resolvent(g + 0j, P, base).m.imag * np.gradient(g))
            c1 = np.cumsum(spectra.block_resolvent(g + 0j, P, lw).m.imag * np.gradient(g))
            assert np.max(np.abs(c1 - c0)) / np.pi < 2e-3



@pytest.mark.parametrize("model", ["reduced", "full"])
def test_quasi_monte_carlo_moments_before_correction(model):
    """The law imposes five exact moments by a multiplicative correction; the raw quasi-Monte-Carlo
    estimates before it (``moment_errors``) measure the quadrature error of the transport map.
    Randomised QMC with 2^17 points integrates these smooth moments to ~1e-4 relative; a wrong
    transport map (a wrong primitive law, a swapped column) shifts them by O(1): the bound 2e-3
    is the documented accuracy of the law (spectra.law)."""
    for pb in (linattn.Problem(10, 20, 0.0), linattn.Problem(7, 15, 0.4), linattn.Problem(3, 5, 1.0)):
        errors = spectra.prompt_law(pb, model).moment_errors
        assert set(errors) == ({"xi1", "f2", "fy", "y2"} | ({"xi2"} if model == "full" else set()))
        assert max(abs(e) for e in errors.values()) < 2e-3, errors


def test_bad_input_and_nonconvergence():
    pb = linattn.Problem(5, 5)
    with pytest.raises(ValueError, match="alpha"):
        spectra.density([1.0], 0.0, pb)
    with pytest.raises(ValueError, match="alpha"):
        spectra.density([1.0], -1.0, pb)
    with pytest.raises(ValueError, match="x"):
        spectra.density([1.0, np.nan], 1.0, pb)
    with pytest.raises(ValueError, match="law"):
        spectra.density([1.0], 1.0, pb, law="wigner")
    with pytest.raises(ValueError, match="model"):
        spectra.cdf([1.0], 1.0, pb, model="medium")
    with pytest.raises(ValueError, match="pb"):
        spectra.zero_atom(0.5, model="full")
    with pytest.raises(ConvergenceError, match="did not converge"):
        spectra.block_resolvent([1.0 + 0.1j], 25.0, spectra.prompt_law(pb), tol=1e-30, maxit=1)
    assert spectra.density([0.0], 1.0, pb)[0] == np.inf
    assert spectra.density([-1.0, 0.0], 0.5, pb).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("law", ["finite", "mp"])
def test_two_system_overlaps_satisfy_the_resolvent_identity(model, law):
    """docs/replica.md §4: the block overlaps of two ridge solutions on the same data satisfy the
    exact resolvent identity ρ(z1)ρ(z2) + Σ_i S_i(z1, z2) = (T(z1) − T(z2))/(z1 − z2), whose two
    sides come from different code paths (the linear system of block_overlaps vs the data
    transform T); at z1 → z2 the right side is T'(z) (central difference)."""
    pb = linattn.Problem(8, 30, 0.2)
    lw = spectra.prompt_law(pb, model, law)
    z1 = np.array([-0.05, -0.3 + 0.2j, 0.7 + 0.4j, -2.0, 1.5 + 0.05j])
    z2 = np.array([-0.8, -1.1 - 0.1j, 0.2 + 0.9j, -0.01, 1.2 + 0.3j])
    for P in (40.0, 64.0, 300.0):
        rr, S = spectra.pair_overlaps(z1, z2, P, lw)
        T1, T2 = spectra.data_transforms(z1, P, lw).T, spectra.data_transforms(z2, P, lw).T
        lhs = rr + S.sum(axis=1)
        rhs = (T1 - T2) / (z1 - z2)
        assert np.max(np.abs(lhs - rhs) / np.abs(rhs)) < 1e-10
        h = 1e-6
        rr0, S0 = spectra.pair_overlaps(z1, z1, P, lw)
        dT = (spectra.data_transforms(z1 + h, P, lw).T - spectra.data_transforms(z1 - h, P, lw).T) / (2 * h)
        assert np.max(np.abs(rr0 + S0.sum(axis=1) - dT) / np.abs(dT)) < 1e-6
