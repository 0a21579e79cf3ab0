"""The quadrature rules of the numerics room (linattn.numerics.quadrature) on moments known in closed form, and the
reason each rule is the one kept: the composite rules against Gauss–Hermite (a kink) and Gauss–Laguerre (``√r``)."""
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from linattn._numerics import quadrature


def _double_factorial(k):
    return float(math.prod(range(k, 0, -2)))


@pytest.mark.parametrize("n", [1, 2, 5, 20, 60])
def test_gauss_hermite_is_exact_to_degree_2n_minus_1(n):
    """E z^{2k} = (2k − 1)!! for 2k <= 2n − 1, odd moments 0."""
    z, logw = quadrature.gauss_hermite(n)
    w = np.exp(logw)
    assert w.sum() == pytest.approx(1.0, rel=1e-14)
    for k in range(0, 2 * n):
        exact = 0.0 if k % 2 else _double_factorial(k - 1)
        assert w @ z**k == pytest.approx(exact, rel=1e-12, abs=1e-12 * _double_factorial(k)), k


def test_gauss_panels_integrates_moments_and_a_kink():
    """Even moments to 1e-13, and relu's moments E max(0, z) = 1/√(2π), E max(0, z)² = 1/2 to 1e-14 (the kink sits on
    a panel edge); Gauss–Hermite with as many nodes is off by more than 1e-7 on the same kink."""
    z, logw = quadrature.gauss_panels(12)
    w = np.exp(logw)
    assert w.sum() == pytest.approx(1.0, rel=1e-14)
    for k in range(0, 21, 2):
        assert w @ z**k == pytest.approx(_double_factorial(k - 1), rel=1e-13), k
    relu = np.maximum(z, 0.0)
    assert w @ relu == pytest.approx(1.0 / math.sqrt(2.0 * math.pi), rel=1e-14)
    assert w @ relu**2 == pytest.approx(0.5, rel=1e-14)
    zh, logwh = quadrature.gauss_hermite(quadrature.MAX_HERMITE_NODES)
    assert abs(np.exp(logwh) @ np.maximum(zh, 0.0) - 1.0 / math.sqrt(2.0 * math.pi)) > 1e-7


def _chi_moment(D, k):
    """E r^k for r ~ χ²_D/D (any real k > −D/2): (2/D)^k Γ(D/2 + k)/Γ(D/2) (the Pochhammer symbol, accurate where
    the difference of log-gammas cancels)."""
    return (2.0 / D) ** k * special.poch(D / 2, k)


@pytest.mark.parametrize("D", [1, 2, 5, 40, 10_000])
def test_chi_square_rule_integrates_integer_and_half_integer_moments(D):
    """E r^k of r ~ χ²_D/D, k = 1/2, 1, 3/2, 2, 3, to 1e-13 with 32 nodes per panel (at D = 10⁴ the integer moments
    only: the float64 reference Γ(D/2 + 1/2)/Γ(D/2) itself is off by 1e-12 there)."""
    r, w = quadrature.chi_square_rule(D, 32)
    assert w.sum() == pytest.approx(1.0, rel=1e-14)
    for k in (0.5, 1.0, 1.5, 2.0, 3.0) if D < 1000 else (1.0, 2.0, 3.0):
        assert w @ r**k == pytest.approx(_chi_moment(D, k), rel=1e-13), (D, k)


@pytest.mark.parametrize("D", [1, 2, 6])
def test_chi_square_rule_beats_gauss_laguerre_on_the_radius(D):
    """E √(χ²_D): the composite rule to 1e-13; the 32-node Gauss–Laguerre rule it replaced (replica.pool_finite)
    converges only algebraically on √r and is off by more than 1e-7 (measured: 1e-6 at D = 6)."""
    exact = math.sqrt(D) * _chi_moment(D, 0.5)
    r, w = quadrature.chi_square_rule(D, 32)
    assert w @ np.sqrt(D * r) == pytest.approx(exact, rel=1e-13)
    x, wl = special.roots_genlaguerre(32, D / 2.0 - 1.0)
    assert abs(wl @ np.sqrt(2.0 * x) / wl.sum() - exact) > 1e-7 * exact


@pytest.mark.parametrize("D", [1, 2, 6, 40])
@pytest.mark.parametrize("c", [0.01, 0.3, 10.0])
def test_chi_square_rule_on_the_pool_theory_resolvent_average(D, c):
    """E[R/(c + R/D)], R ~ χ²_D (the ω-average of replica.pool_finite's resolvent equation) against adaptive
    quadrature, to 1e-12 with the nodes per panel that pool_finite uses."""
    from replica._pool_finite import _radius_nodes

    def f(R):
        return R / (c + R / D)

    def g(R):
        return f(R) * stats.chi2.pdf(R, D)

    exact = (integrate.quad(g, 0, D, epsabs=0, epsrel=1e-13, limit=500)[0]
             + integrate.quad(g, D, np.inf, epsabs=0, epsrel=1e-13, limit=500)[0])
    R, w = _radius_nodes(D)
    assert w @ f(R) == pytest.approx(exact, rel=1e-12)


def test_normalised_hermite_is_orthonormal_and_matches_numpy():
    """E h_j h_k = δ_jk (Gauss–Hermite, exact at degree 2·30 < 2·40), and h_k = He_k/√(k!) against numpy's series."""
    z, logw = quadrature.gauss_hermite(40)
    H = quadrature.normalised_hermite(z, 30)
    assert H.shape == (31, 40)
    gram = (H * np.exp(logw)) @ H.T
    assert np.max(np.abs(gram - np.eye(31))) < 1e-12
    x = np.linspace(-5, 5, 11)
    Hx = quadrature.normalised_hermite(x, 20)
    for k in range(21):
        ref = np.polynomial.hermite_e.hermeval(x, np.eye(21)[k]) / math.sqrt(math.factorial(k))
        assert np.allclose(Hx[k], ref, rtol=1e-12, atol=1e-12), k
    assert quadrature.normalised_hermite(np.zeros((2, 3)), 2).shape == (3, 2, 3)

