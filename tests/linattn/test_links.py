"""Link functions: Hermite coefficients, exact finite-D moments, exact errors against raw tokens,
and the surrogate of a linear link against the library's linear results."""
import numpy as np
import pytest
from helpers import (
    CALLED,
    assert_refused,
    name_as_word,
    name_not_within_letters,
    name_not_within_words_or_after_a_dot,
    refusals,
)
from scipy import integrate

import dynamics
import linattn
import replica
import spectra
from linattn import _invariants as invariants
from linattn import _links as links
from linattn import _sampling as sampling
from linattn.links import Link, as_link

PHI = lambda z: np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)   # noqa: E731


@pytest.mark.parametrize("name, expected", [
    ("linear", (0.0, 1.0, 0.0)),
    ("relu", (1 / np.sqrt(2 * np.pi), 0.5, 0.25 - 1 / (2 * np.pi))),
    ("sign", (0.0, np.sqrt(2 / np.pi), 1 - 2 / np.pi)),
    ("cubic", (0.0, 3.0, 6.0)),
    ("hermite:0", (1.0, 0.0, 0.0)),
    ("hermite:1", (0.0, 1.0, 0.0)),
    ("hermite:2", (0.0, 0.0, 1.0)),
    ("hermite:5", (0.0, 0.0, 1.0)),
])
def test_hermite_closed_forms(name, expected):
    """μ₀, μ₁, μ_*² to 1e-12 (the accuracy asked of them) where they are known in closed form."""
    assert np.allclose(tuple(as_link(name).hermite), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["tanh", "relu", "sign"])
def test_hermite_against_adaptive_quadrature(name):
    """An independent route (scipy's adaptive quad, split at the kink) agrees to 1e-12."""
    f = as_link(name)
    ref = []
    for g in (lambda z: f(z), lambda z: z * f(z), lambda z: f(z) ** 2):
        ref.append(sum(integrate.quad(lambda z: g(np.array(z)) * PHI(z), a, b, epsabs=1e-14, epsrel=1e-14, limit=200)[0]
                       for a, b in ((-np.inf, 0.0), (0.0, np.inf))))
    mu0, mu1, mu2 = f.hermite
    assert np.allclose([mu0, mu1, mu2 + mu0**2 + mu1**2], ref, rtol=0, atol=1e-12)


def test_radial_moments_closed_forms():
    """Moments whose r-average is known: relu (φ₁ = √r/2, φ₂ = r/2, φ₂₂ = 3r/2, φ₄ = 3r²/2),
    sign (φ₁ = √(2/π), the rest 1), and a linear link given as a plain callable, which goes through the
    quadrature and must reproduce the closed forms of Link.linear (E r = 1, E r² = 1 + 2/D)."""
    for D in (1, 3, 10, 200):
        er2 = 1 + 2 / D
        m = links.radial_moments(as_link("relu"), D)
        assert np.allclose([m.phi1_sq, m.phi2, m.phi22, m.phi4, m.phi2_sq], [0.25, 0.5, 1.5, 1.5 * er2, er2 / 4],
                           rtol=1e-12, atol=0)
        m = links.radial_moments(as_link("sign"), D)
        assert np.allclose([m.phi1_sq, m.phi2, m.phi22, m.phi4, m.phi2_sq], [2 / np.pi, 1, 1, 1, 1], rtol=1e-12, atol=0)
    for D, N, noise in ((3, 4, 0.0), (10, 100, 0.3)):
        quad = linattn.Problem(D, N, noise, link=lambda z: 0.7 * z)
        closed = linattn.Problem(D, N, noise, link=Link.linear(0.7))
        for name in ("feature_variance", "feature_variance_v", "teacher_strength", "label_variance",
                     "teacher_norm2", "icl_residual"):
            assert getattr(quad, name) == pytest.approx(getattr(closed, name), rel=1e-12), name


def test_tanh_radial_moment_against_nested_quadrature():
    """E_r φ₁(r)² for tanh at D = 3 by nested adaptive quadrature (an independent route)."""
    D = 3

    from scipy import stats
    chi = stats.chi2(D, scale=1.0 / D)

    def phi1(r):
        return integrate.quad(lambda z: z * np.tanh(np.sqrt(r) * z) * PHI(z), -np.inf, np.inf, epsabs=1e-14,
                              epsrel=1e-13)[0]
    ref = integrate.quad(lambda r: phi1(r) ** 2 * chi.pdf(r), 0, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    assert links.radial_moments(as_link("tanh"), D).phi1_sq == pytest.approx(ref, rel=1e-10)


@pytest.mark.parametrize("link", ["tanh", "relu", "sign", "cubic", "hermite:2", Link.linear(0.5)],
                         ids=lambda lk: str(lk))
@pytest.mark.parametrize("model", ["reduced", "full"])
def test_exact_test_error_against_raw_tokens(link, model, rng):
    """pb.test_error (exact, any link) against Monte Carlo over prompts built token by token
    (200 000 fresh prompts): within 4 standard errors."""
    pb = linattn.Problem(4, 6, 0.3, link=link)
    G = 0.3 * np.eye(4) + 0.1 * rng.standard_normal((4, 4))
    v = 0.05 * rng.standard_normal(4) if model == "full" else None
    exact = pb.test_error(G, v)
    loss = []
    for _ in range(8):
        d = sampling.sample_tokens(pb, 25_000, rng).prompts()
        yhat = d.predict(G, v)
        loss.append(0.5 * (d.yq - yhat) ** 2)
    loss = np.concatenate(loss)
    se = loss.std(ddof=1) / np.sqrt(loss.size)
    assert abs(loss.mean() - exact) <= 4 * se, (loss.mean(), exact, se)


def test_icl_solution_minimises_the_exact_error():
    """Γ_ICL = b I/(D c) is the stationary point of the exact E_g for a nonlinear link too."""
    pb = linattn.Problem(5, 8, 0.1, link="tanh")
    sol = pb.icl_solution()
    for eps in (1e-3, -1e-3):
        assert pb.test_error(sol.Gamma * (1 + eps)) > sol.test_error
    assert pb.test_error(sol.Gamma) == pytest.approx(sol.test_error, rel=1e-13)


def test_surrogate_of_a_linear_link_reproduces_the_linear_results():
    """A linear link given as a callable: its surrogate is the library's linear problem, so every
    theory evaluated on it equals the existing linear results to 1e-12."""
    lin = linattn.Problem(6, 20, 0.2)
    pb = linattn.Problem(6, 20, 0.2, link=lambda z: 1.0 * z)
    sur = pb.surrogate()
    assert sur.link.is_linear and sur.noise == pytest.approx(0.2, rel=1e-12)
    a = replica.stationary(sur, 50, 1e3, 0.01, "full")
    b = replica.stationary(lin, 50, 1e3, 0.01, "full")
    assert a.train == pytest.approx(b.train, rel=1e-12) and a.test == pytest.approx(b.test, rel=1e-12)
    t = np.array([0.0, 1.0, 100.0])
    ca, cb = dynamics.averaged_curves(sur, 50, 0.01, t), dynamics.averaged_curves(lin, 50, 0.01, t)
    assert np.allclose(ca.test, cb.test, rtol=1e-12, atol=0) and np.allclose(ca.train, cb.train, rtol=1e-12, atol=0)
    x = np.linspace(0.2, 3, 5)
    assert np.allclose(spectra.density(x, 50 / 36, sur), spectra.density(x, 50 / 36, lin), rtol=1e-12, atol=0)
    assert linattn.Problem(6, 20, 0.2, link="relu").surrogate().hermite.mu1 == pytest.approx(0.5, abs=1e-12)


def test_default_link_is_bit_for_bit_unchanged():
    """The default problem and Link.linear(1.0) are the same problem; the sampler draws the same numbers."""
    a, b = linattn.Problem(5, 7, 0.3), linattn.Problem(5, 7, 0.3, link=Link.linear(1.0))
    assert a == b and hash(a) == hash(b)
    assert np.array_equal(a.sample(50, rng=1).s, b.sample(50, rng=1).s)
    assert a.feature_variance == (7 + 5 + 1) / (7 * 5) + 0.09 / 7


def test_a_high_degree_hermite_link_is_accepted_and_exact_at_small_D():
    """hermite:40 at D = 3: f⁴ overflows float64 at large task norms where the χ_D weight makes the term
    negligible; the quadrature sums ``f^k w`` in log space there instead of refusing the link. The average of
    ``E He₄₀(√r g)²/40!`` over ``r ~ χ²_3/3`` equals the closed form of the Hermite scaling identity
    ``He_n(a x) = Σ_i a^{n−2i}(a²−1)^i n!/(i!(n−2i)! 2^i) He_{n−2i}(x)`` integrated by scipy.quad (rel. 1e-10)."""
    from math import factorial

    from scipy import integrate, stats

    n, D = 40, 3

    def phi2(r):
        a = np.sqrt(r)
        return sum((a ** (n - 2 * i) * (r - 1) ** i * factorial(n) / (factorial(i) * factorial(n - 2 * i) * 2 ** i))
                   ** 2 * factorial(n - 2 * i) for i in range(n // 2 + 1)) / factorial(n)

    want, _ = integrate.quad(lambda r: phi2(r) * stats.chi2.pdf(r * D, D) * D, 0, np.inf, limit=500, epsabs=0,
                             epsrel=1e-13)
    got = links.radial_moments("hermite:40", D).phi2
    assert abs(got / want - 1) < 1e-10


def test_a_link_whose_finite_D_moments_diverge_is_refused_naming_the_task_norm():
    """exp(z²/9) has E f⁴ < ∞ at the unit task norm but E_r E f(√r g)⁴ = ∞ (the Gaussian integral diverges for
    r ≥ 9/8, which χ²_D/D reaches with positive probability): refused, the message says why."""
    f = links.Link("exp(z^2/9)", lambda z: np.exp(z * z / 9.0))
    with pytest.raises(ValueError, match="task-norm scale"):
        linattn.Problem(3, 4, 0.1, link=f)


# ----------------------------------------------------------------------------- polynomial links: exact at any norm
def _double_factorial_moment(k):
    """E g^k for g ~ N(0, 1): (k − 1)!! for even k, 0 for odd k."""
    return 0.0 if k % 2 else float(np.prod(np.arange(k - 1, 0, -2, dtype=float)))


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0, 4.0, 8.0, 100.0])
def test_polynomial_link_moments_are_exact_at_every_scale(scale):
    """cubic: E[g^j f(s g)^p] = s^{3p} E g^{j+3p} (closed form) for every moment the library uses, at task-norm scales
    from 0.5 to 100, to 1e-13 of the size of the terms (the Gauss–Hermite rule of 9 nodes is exact to degree 17;
    the largest integrand, g⁴ f², has degree 10 and f⁴ degree 12)."""
    powers = ((0, 1), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2), (3, 2), (4, 2), (0, 3), (0, 4))
    values, sizes = links.moment_table(as_link("cubic"), np.array([scale]), links.gauss_orders(as_link("cubic"))[0],
                                       powers)
    want = np.array([scale ** (3 * p) * _double_factorial_moment(j + 3 * p) for j, p in powers])
    assert np.all(np.abs(values[0] - want) <= 1e-13 * sizes[0]), (values[0], want)


def test_polynomial_links_have_exact_hermite_coefficients():
    """f = 1 + 2z² = 3 He₀ + 2 He₂: μ₀ = 3, μ₁ = 0, μ_*² = 2²·2! = 8 (exact); a numpy Polynomial is the same link;
    a degree-one polynomial without constant is the closed-form linear link; z³ as a polynomial has cubic's moments."""
    lk = Link.polynomial([1.0, 0.0, 2.0])
    assert tuple(lk.hermite) == (3.0, 0.0, 8.0) and lk.degree == 2
    assert as_link(np.polynomial.Polynomial([1.0, 0.0, 2.0])) == lk
    assert Link.polynomial([0.0, 0.5]).is_linear and Link.polynomial([0.0, 0.5]).slope == 0.5
    a, b = links.radial_moments(Link.polynomial([0, 0, 0, 1.0]), 5), links.radial_moments("cubic", 5)
    assert np.allclose(tuple(vars(a).values()), tuple(vars(b).values()), rtol=1e-13, atol=0)
    with pytest.raises(ValueError, match="coefficients"):
        Link.polynomial(np.ones(50))


@pytest.mark.parametrize("link", ["cubic", lambda z: z**3], ids=["cubic", "z**3 callable"])
def test_odd_links_converge_at_large_task_norms(link):
    """The moment E[(g² − 1) f(√r g)] of an odd link cancels to 0; the convergence test measures it against the
    size of its terms, so the kernel learner's error is accepted at task norms √r = 2, 4, 8 whether the link is the
    exact polynomial or a plain callable going through the composite rule (the callable used to be refused there,
    "did not converge to 1e-12 … 1.8e-12", depending on the machine's last bits), and both agree."""
    from linattn.kernel_learner import kernel_test_error, n_features

    D = 3
    G = np.random.default_rng(1).standard_normal((n_features(D), n_features(D)))
    tasks = np.array([[2.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 8.0]]) * np.sqrt(D)
    got = kernel_test_error(linattn.Problem(D, 6, 0.2, link), G, pool=tasks, N_test=9)
    ref = kernel_test_error(linattn.Problem(D, 6, 0.2, "cubic"), G, pool=tasks, N_test=9)
    assert np.isfinite(got) and got == pytest.approx(ref, rel=1e-10)


# ----------------------------------------------------------------------------- refusals and extreme arguments
TL = links.as_link("tanh")


REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    # a linear slope (or a link's scale) whose a⁴ over- or underflows float64
    ("slope-1e100", lambda: linattn.Problem(4, 8, 0.0, link=Link.linear(1e100)).feature_variance_v, "slope"),
    ("slope-1e78", lambda: Link.linear(1e78), "slope"),
    ("slope-1e41", lambda: Link.linear(-1e41), "slope"),
    ("polynomial-1e50", lambda: Link.polynomial([0.0, 1e50]), "coefficients"),
    ("scaled-callable", lambda: linattn.Problem(4, 8, 0.0, link=lambda z: 1e60 * np.tanh(z)), "link"),
    ("slope-1e-100", lambda: linattn.Problem(4, 8, 0.0, link=Link.linear(1e-100)).test_metric_ratio(16), "slope"),
    ("slope-1e-41", lambda: Link.linear(1e-41), "slope"),
    ("tiny-callable", lambda: linattn.Problem(4, 8, 0.0, link=lambda z: 1e-90 * np.tanh(z)), "link"),
    ("radial-moments", lambda: links.radial_moments(Link.linear(1e100), 4), "slope"),
    ("sample-slope", lambda: linattn.Problem(4, 8, 0.0, link=Link.linear(1e100)).sample(5, rng=0), "slope"),
    # the argument of a link (the quadrature's building blocks until_converged, moment_table and power_size trust
    # their callers: the library's own orders, powers and arrays)
    ("link-call-str", lambda: TL("abc"), "z"),
    ("link-call-complex", lambda: TL(np.ones(2) * 1j), "z"),
    ("link-call-ragged", lambda: TL([[1.0], [1.0, 2.0]]), "z"),
]) + refusals(name_as_word, [


    ("power-size", lambda: links.power_size(np.array([1e300]), np.array([1e300]), 2), "values"),

    ("moment-table-scales", lambda: links.moment_table(TL, np.ones(10**6), 20, [(1, 2)]), "scales"),
]) + refusals(name_not_within_letters, [
    ("radial-moments-D", lambda: linattn.links.radial_moments("tanh", [1, 2]), "D"),
    # Link.__call__ documents real z (±inf allowed) but returned NaN for NaN (every link: silent non-finite values)
    ("link-nan", lambda: linattn.Problem(3, 6, 0.1, link="relu").link(np.array([0.0, np.nan])), "z"),
    ("link-nan-scalar", lambda: linattn.Problem(3, 6, 0.1, link="hermite:3").link(float("nan")), "z"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("slope", [1e40, -1e40, 1e-40, -1e-40])
@pytest.mark.parametrize("noise", [0.0, 1.0, 1e6])
def test_the_edges_of_the_slope_range_give_finite_nonzero_moments(slope, noise):
    """At the ends of SLOPE_RANGE every exact moment is finite and non-zero (a⁴ at 1e100 overflowed, c_v at
    1e-100 underflowed to 0), also at the largest sizes D, N."""
    for D, N in ((1, 1), (4, 8), (2**20, 2**53)):
        pb = linattn.Problem(D, N, noise, link=Link.linear(slope))
        values = [pb.feature_variance, pb.feature_variance_v, pb.label_variance, pb.teacher_strength,
                  pb.teacher_norm2, *pb.test_metric_ratio(3)]
        assert np.all(np.isfinite(values)) and np.all(np.asarray(values) > 0), (D, N, values)
    pb = linattn.Problem(4, 8, noise, link=Link.linear(slope))
    m = links.radial_moments(pb.link, 4)
    assert all(np.isfinite(x) and x > 0 for x in (m.phi1_sq, m.phi2, m.phi22, m.phi4, m.phi2_sq))
    u = np.array([[1e-300] * 8, [0.5] * 8, [1 - 1e-16] * 8])
    inv = invariants.from_uniforms(pb, u)
    assert all(np.all(np.isfinite(x)) for x in (inv.xi1, inv.xi2, inv.f, inv.y))
    assert np.isfinite(pb.test_error(np.eye(4), np.ones(4)))
    assert np.all(np.isfinite(pb.sample(50, rng=0).y2))


@pytest.mark.parametrize("scale", [1e39, 1e-39])
def test_the_edges_of_the_link_scale_give_finite_nonzero_moments(scale):
    """A nonlinear link of scale 1e±39 (within LINK_SCALE) has finite, non-zero moments and test-metric ratios
    (1e-90·tanh gave c_v = 0 and a ZeroDivisionError)."""
    pb = linattn.Problem(4, 8, 0.0, link=lambda z: scale * np.tanh(z))
    values = [pb.feature_variance, pb.feature_variance_v, *pb.test_metric_ratio(16)]
    assert np.all(np.isfinite(values)) and np.all(np.asarray(values) > 0)
    inv = invariants.from_uniforms(pb, np.full((3, invariants.n_primitives(pb)), 0.5))
    assert np.all(np.isfinite(inv.xi2))


@pytest.mark.parametrize("link, z, expected", [
    # He₃(1e300)/√6 ≈ 4e899 is beyond float64: inf is its float64 rounding (the docstring's ±inf for polynomials)
    ("hermite:3", 1e300, np.inf), ("hermite:3", -1e300, -np.inf),
    # at ±inf (documented as accepted) the Hermite recurrence formed inf − inf: NaN; now the leading term's limit
    ("hermite:3", np.inf, np.inf), ("hermite:3", -np.inf, -np.inf),
    # He₄, He₅, He₆ at 1e160 overflowed inside the recurrence: NaN (a silent non-finite value)
    ("hermite:4", 1e160, np.inf), ("hermite:4", -1e160, np.inf), ("hermite:5", -1e160, -np.inf),
    ("hermite:6", 1e100, np.inf), ("hermite:40", -np.inf, np.inf), ("cubic", -1e300, -np.inf),
])
def test_polynomial_link_far_out_is_its_leading_terms_limit(link, z, expected):
    f = linattn.Problem(3, 6, 0.1, link=link).link
    assert f(z) == expected
    out = f(np.array([z, 2.0]))
    assert out[0] == expected and np.isfinite(out[1])


def test_polynomial_link_near_the_origin_is_unchanged():
    f = linattn.Problem(3, 6, 0.1, link="hermite:3").link
    z = np.array([-2.0, 0.0, 0.5, 3.0])
    assert np.allclose(f(z), (z**3 - 3 * z) / np.sqrt(6.0))


def test_links_must_be_real_and_may_be_float32():
    with pytest.raises(ValueError, match="link"):
        linattn.Problem(6, 12, link=lambda z: z + 0j)
    h = linattn.Problem(6, 12, link=lambda z: (z**3).astype(np.float32)).hermite   # its own precision, ~1e-7
    assert h.mu1 == pytest.approx(3.0, rel=1e-5) and h.mu_star2 == pytest.approx(6.0, rel=1e-5)


def test_a_link_that_fails_or_leaves_float64_is_refused_by_name():
    """A callable link's own exception, a degree that is not a decimal integer, and values whose fourth powers leave
    float64 (the moments would be 0 or inf: teacher_norm2 divided 0 by 0) are ValueErrors naming the link."""
    for link, words in ((lambda z: 1 / 0, "raised ZeroDivisionError"), (lambda z: z + "a", "raised UFuncTypeError"),
                        (lambda z: 1e-200 * z, "magnitude between"), (lambda z: 1e200 + 0 * z, "magnitude between"),
                        ("hermite:\u00b2", "k an integer"), ("hermite:" + "9" * 5000, "k an integer")):
        with pytest.raises(ValueError, match=rf"^linattn\.Problem: link must .*{words}"):
            linattn.Problem(3, 4, link=link)
    with pytest.raises(ValueError, match=r"^linattn\.Problem: noise must be > 0 when the link is 0"):
        linattn.Problem(3, 4, link=lambda z: 0 * z)
    assert linattn.Problem(3, 4, 0.1, link=lambda z: 0 * z).teacher_norm2 == 0.0


def test_radial_moments_converge_at_large_D():
    """The task-norm rule covers the window ±40/√D around ρ = 1 (tanh at D = 10⁷ was refused as not converged): the
    moments tend to the D → ∞ values, μ₁² for E_r φ₁² up to O(1/D) = 1e-7."""
    mu1 = linattn.links.as_link("tanh").hermite.mu1
    assert linattn.links.radial_moments("tanh", 10**7).phi1_sq == pytest.approx(mu1**2, abs=1e-6)


@pytest.mark.parametrize("call, name", [
    (lambda: linattn.links.Link.linear(1e200), "slope"),
    (lambda: linattn.links.Link.linear(1e-200), "slope"),
    (lambda: linattn.links.Link("linear", None, slope=np.nan), "slope"),
])
def test_invalid_input_that_was_accepted_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{CALLED}{name} must"):
        call()
