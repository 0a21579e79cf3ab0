"""The feature-learner theory (replica.feature_theory): the readout formulas against exact Monte Carlo, the overlaps
of the trained Γ against the simulated feature learner."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import linattn
import replica
from linattn import _links as links
from replica import _feature_mixture as feature_mixture
from replica import _feature_overlaps as feature_overlaps
from replica import _feature_theory as ft
from replica import _ridge_law as ridge_law_module
from validation import binned_readout_error


def test_hermite_coefficients_match_the_library():
    for link in ("tanh", "relu", "sign"):
        c, ef2 = feature_overlaps.hermite_coefficients(link)
        mu0, mu1, mu2 = linattn.links.as_link(link).hermite
        assert c[0] == pytest.approx(mu0, abs=1e-12) and c[1] == pytest.approx(mu1, abs=1e-12)
        assert ef2 == pytest.approx(mu0**2 + mu1**2 + mu2, abs=1e-12)
        assert np.sum(c**2) <= ef2 + 1e-12                       # Parseval: partial sums from below
    c, _ = feature_overlaps.hermite_coefficients("relu")
    assert c[2] == pytest.approx(1 / np.sqrt(4 * np.pi), abs=1e-12)   # relu: E[f He_2]/√2 = 1/√(4π)
    c, ef2 = feature_overlaps.hermite_coefficients("tanh")
    assert np.sum(c**2) == pytest.approx(ef2, abs=1e-9)         # tanh: analytic, fast decay


def test_gaussian_formula_against_exact_gaussian_quadrature():
    """(u, t) exactly jointly Gaussian: E[E[f(u)|τ]²] by quadrature against the Hermite sum (sign: the conditional
    mean in closed form, erf(rτ/√(2(1 − r²))); tanh: Gauss–Hermite in both variables, smooth, converged to 1e-12)."""
    from scipy.special import erf

    z, w = np.polynomial.hermite_e.hermegauss(150)
    w = w / w.sum()
    for r in (0.3, 0.7, 0.9):
        cond = np.tanh(r * z[:, None] + np.sqrt(1 - r * r) * z[None, :]) @ w
        assert feature_overlaps.gaussian_readout_power("tanh", r) == pytest.approx(float(w @ cond**2), abs=1e-9)
        cond = erf(r * z / np.sqrt(2 * (1 - r * r)))
        assert feature_overlaps.gaussian_readout_power("sign", r) == pytest.approx(float(w @ cond**2), abs=1e-9)


def test_linear_link_optimal_equals_linear_and_the_library_error():
    pb = linattn.Problem(8, 16, 0.3)
    G = np.eye(8) * 0.5 + 0.05 * np.random.default_rng(0).standard_normal((8, 8))
    ov = feature_overlaps.gamma_overlaps(pb, G)
    best = 0.5 * (pb.label_variance - ov.yt**2 / ov.tt)
    a = ov.yt / ov.tt                                           # the optimal scale of a linear readout
    assert pb.test_error(a * G) == pytest.approx(best, rel=1e-12)
    assert feature_overlaps.readout_error(pb, ov, "optimal") == pytest.approx(best, rel=1e-12)
    assert feature_overlaps.readout_error(pb, ov, "linear") == pytest.approx(best, rel=1e-12)


def test_overlaps_are_exact_against_monte_carlo():
    pb = linattn.Problem(6, 12, 0.2, link="relu")
    G = np.eye(6) / 3 + 0.1 * np.random.default_rng(1).standard_normal((6, 6))
    ov = feature_overlaps.gamma_overlaps(pb, G)
    d = pb.sample(200_000, 3)
    t, y = d.predict(G), np.asarray(d.yq)
    for mc, exact in ((t * t, ov.tt), (y * t, ov.yt), (y, feature_overlaps.label_mean(pb))):
        assert abs(mc.mean() - exact) < 4 * mc.std() / np.sqrt(mc.size)


def test_readout_error_of_a_fixed_gamma_against_binned_monte_carlo():
    """The error of the optimal readout of a fixed Γ: exact Monte Carlo (binning) against the Gaussian formula and the
    finite-D mixture. At D = 6 the Gaussian formula misses by the non-Gaussianity of (u, t) (measured ~1-2 %); the
    mixture, which is exact given (w, s), agrees within its Monte-Carlo error plus the binning bias (tanh; for sign
    the mixture's Gauss–Hermite inner integral over a kink is off by ~1 %: docs/feature_learner.md)."""
    D, link = 6, "tanh"
    pb = linattn.Problem(D, 2 * D, 0.0, link=link)
    rng = np.random.default_rng(5)
    alpha, delta = 0.3, 0.05
    G = alpha * np.eye(D) + delta * rng.standard_normal((D, D))
    mc = binned_readout_error(pb, G, n=200_000, bins=100, rng=11)
    ov = feature_overlaps.gamma_overlaps(pb, G)
    gauss = feature_overlaps.readout_error(pb, ov, "optimal")
    # the mixture with Γ's own trace and off-identity norm; its scatter over seeds is its error estimate
    a = np.trace(G) / D
    d2 = (np.sum(G * G) - D * a * a) / D**2
    mix = [0.5 * (pb.label_variance - feature_mixture.mixture_readout_power(pb, a, d2, n_contexts=2048, rng=s))
           for s in range(2)]
    mix_err = np.std(mix, ddof=1) / np.sqrt(2)
    tol = 4 * np.hypot(mc.test_se, mix_err) + mc.bias_bound + 0.002 * mc.test   # + isotropic-Δ model of Γ − αI
    assert abs(np.mean(mix) - mc.test) < tol
    assert gauss < mc.test + 4 * mc.test_se                      # Gaussianising the mixture loses information


def test_theory_limits_and_bad_input():
    pb = linattn.Problem(6, 12, 0.0, link="tanh")
    th = ft.feature_learner_theory(pb, 2000, 0.01, law="gaussian")
    assert th.test_optimal <= th.test_linear <= 0.5 * pb.label_variance
    assert 0 < th.overlaps.r < 1
    lin = linattn.Problem(6, 12, 0.5)
    tl = ft.feature_learner_theory(lin, 500, 0.01, law="gaussian")
    assert tl.test_optimal == pytest.approx(tl.test_linear, rel=1e-12)
    longer = ft.feature_learner_theory(pb, 2000, 0.01, N_test=48, law="gaussian")
    assert longer.overlaps.r > th.overlaps.r                    # a longer test context estimates u better
    with pytest.raises(ValueError, match="readout"):
        ft.feature_learner_theory(pb, 100, 0.01, readout="best")
    with pytest.raises(ValueError, match="lam"):
        ft.feature_learner_theory(pb, 100, 0.0)
    with pytest.raises(ValueError, match="P"):
        ft.feature_learner_theory(pb, 0.5, 0.01)
    with pytest.raises(ValueError, match="N_test"):
        ft.feature_learner_theory(pb, 100, 0.01, N_test=0)
    with pytest.raises(ValueError, match="pool"):
        ft.feature_learner_theory(pb, 100, 0.01, pool=np.ones((4, 6)))
    with pytest.raises(ValueError, match="Gamma"):
        feature_overlaps.gamma_overlaps(pb, np.eye(5))


@pytest.mark.slow
def test_trained_feature_learner_against_theory():
    """D = 6, N = 12, tanh, P = 2000, λ = 0.01, 4 training sets: the trained Γ's correlation r matches the theory's
    ridge Γ (measured 0.7905 ± 0.002 vs 0.7898), and the simulated error lies between the theory's optimal and
    linear readout errors (the simulator's 5-knot readout, with weight decay, is not the optimal one)."""
    from validation import feature_learner

    pb = linattn.Problem(6, 12, 0.0, link="tanh")
    th = ft.feature_learner_theory(pb, 2000, 0.01)
    runs = [feature_learner(pb, 2000, 0.01, rng=(6, 2000, s), n_test_prompts=50_000) for s in range(4)]
    r = np.array([feature_overlaps.gamma_overlaps(pb, x.params["Gamma"]).r for x in runs])
    test = np.array([x.test for x in runs])
    se_r = r.std(ddof=1) / 2
    assert abs(r.mean() - th.overlaps.r) < 4 * se_r + 1.0 / pb.D**2   # + the O(1/M) replica error
    se = np.hypot(test.std(ddof=1) / 2, np.mean([x.test_se for x in runs]))
    assert th.test_optimal - 4 * se < test.mean() < th.test_linear + 4 * se


def test_ridge_law_against_exact_ridge_with_raw_contexts():
    """The ridge Γ̂ of the feature learner's attention (query labels centred by the readout's intercept, contexts built
    from the raw labels, as trained): replica.kernel_theory.ridge_law against exact ridge solutions, relu, D = 6,
    P = 2000, λ = 0.01, 8 datasets (measured: tr Γ/D 0.4020 vs 0.4004 ± 0.0060, E‖Γ‖² 1.031 vs 1.031 ± 0.029). The
    earlier theory centred the context labels too (replica.stationary on the centred link: 0.480, 1.449, 13 and 14
    s.e. off) and must fail the same criterion: 4 s.e. + the relative O(1/M) of the replica-symmetric theory."""
    import dataclasses

    from replica import stationary
    from replica._ridge_law import centred_link, ridge_law

    pb = linattn.Problem(6, 12, 0.0, link="relu")
    P, lam, M = 2000, 0.01, 36
    m = feature_overlaps.label_mean(pb)
    tr, n2 = [], []
    for seed in range(8):
        d = pb.sample(P, seed)
        H = d.features()
        th = np.linalg.solve(H.T @ H / P + lam * np.eye(M), H.T @ (np.asarray(d.yq) - m) / P)
        tr.append(th[:: 7].sum() / 6)                            # the diagonal of Γ (row-major)
        n2.append(th @ th)
    law = ridge_law(pb, P, lam, centre=m)
    pc = dataclasses.replace(pb, link=centred_link(pb.link, m))
    old = stationary(pc, P, np.inf, lam)
    old_tr, old_n2 = old.order.rho / np.sqrt(6 * pc.feature_variance), (old.order.rho**2 + np.sum(old.order.sigma2)) \
        / pc.feature_variance
    for exact, theory, baseline in ((tr, np.trace(law.mean) / 6, old_tr), (n2, law.norm2, old_n2)):
        mean, se = np.mean(exact), np.std(exact, ddof=1) / np.sqrt(len(exact))
        tol = 4 * se + abs(mean) / M
        assert abs(theory - mean) < tol
        assert abs(baseline - mean) > tol


@pytest.mark.slow
def test_pool_theory_against_the_trained_gamma():
    """A small pool (D = 6, N = 12, tanh, K = 3, κ = 0.5, P = 2000, λ = 0.01), 3 training sets: the theory conditioned
    on each set's pool against the exact (binned Monte-Carlo) optimal readout of the set's trained Γ, on the pool's
    tasks (IDG) and on fresh tasks with the readout fitted on the pool (ICL); paired differences (measured: IDG 0.0306
    vs 0.0308, ICL 0.1353 vs 0.1362). The fresh-task theory (0.0677 for both) must fail the same criterion: 4 s.e. of
    the paired difference (theory and binned Monte Carlo) + the binning bias + 2 % (the O(1/M) of the ridge theory
    and the trained Γ's lag behind the ridge Γ, docs/feature_learner.md)."""
    from validation import feature_learner

    pb = linattn.Problem(6, 12, 0.0, link="tanh", tasks=3)
    fresh = ft.feature_learner_theory(linattn.Problem(6, 12, 0.0, link="tanh"), 2000, 0.01,
                                       readout="optimal").test
    diff = {"idg": [], "icl": []}
    ref = {"idg": [], "icl": []}
    bias, se_th = 0.0, {"idg": [], "icl": []}
    for seed in range(3):
        run = feature_learner(pb, 2000, 0.01, rng=(6, 3, 2000, seed), n_test_prompts=1000)
        pool, G = run.params["pool"], run.params["Gamma"]
        th = ft.feature_learner_theory(pb, 2000, 0.01, pool=pool, rng=seed, readout="optimal")
        bi = binned_readout_error(pb, G, n=200_000, bins=100, rng=seed, pool=pool)
        bc = binned_readout_error(pb, G, n=200_000, bins=100, rng=seed + 10, fit_pool=pool)
        for key, t, b in (("idg", th.test_idg, bi), ("icl", th.test, bc)):
            diff[key].append(t - b.test)
            ref[key].append(b.test)
        se_th["idg"].append(th.test_idg_se)
        se_th["icl"].append(th.test_se)
        bias = max(bias, bi.bias_bound, bc.bias_bound)
    for key in ("idg", "icl"):
        d = np.array(diff[key])
        se = np.hypot(d.std(ddof=1) / np.sqrt(d.size), np.mean(se_th[key]) / np.sqrt(d.size))
        tol = 4 * se + bias + 0.02 * np.mean(ref[key])
        assert abs(d.mean()) < tol, (key, d, tol)
        assert abs(fresh - np.mean(ref[key])) > tol, (key, fresh, tol)


def test_leverage_of_the_ridge_law_against_exact_leave_one_out():
    """The trained readout's in-sample law rests on the leverage ``h = |x_q|² sᵀAs/P`` of the ridge law
    (``RidgeLaw.resolvent``): its mean over a dataset's prompts against the exact leave-one-out leverage
    ``h_μ = l_μ/(1 − l_μ)`` (``l_μ`` the hat-matrix diagonal) of exact ridges, relu, D = 6, λ = 0.01, 12 datasets each
    at P = 20 (memorisation, h ≈ 20) and P = 500 (h ≈ 0.08). Measured: 20.2 ± 1.4 vs 20.0, 0.0798 ± 0.0005 vs 0.0786.
    Tolerance: 3 s.e. + the relative 1/M (M = 36) of the deterministic equivalent. A leverage-free readout (h = 0:
    training outputs distributed as test outputs, the optimal-readout theory's assumption) fails it at both P."""
    from replica._ridge_law import ridge_law

    pb = linattn.Problem(6, 12, 0.0, link="relu")
    for P in (20, 500):
        law = ridge_law(pb, P, 0.01)
        exact, theory = [], []
        for seed in range(12):
            d = pb.sample(P, (P, seed))
            H = d.features()
            hat = np.einsum("pi,ij,pj->p", H, np.linalg.inv(H.T @ H / P + 0.01 * np.eye(36)), H) / P
            exact.append(np.mean(hat / (1.0 - hat)))
            s, xq = np.asarray(d.s), np.asarray(d.xq)
            theory.append(np.mean(np.sum(xq**2, axis=1) * np.einsum("pd,de,pe->p", s, law.resolvent, s) / P))
        mean, se = np.mean(exact), np.std(exact, ddof=1) / np.sqrt(len(exact))
        tol = 3 * se + mean / 36
        assert abs(np.mean(theory) - mean) < tol
        assert abs(0.0 - mean) > tol


def test_readouts_fall_monotonically_with_the_test_context():
    """relu, D = 6, N = 16, P = 2000: a longer test context estimates the task better, and both the trained and the
    optimal readout's ICL errors fall with N_test = 2, 4, 8, 16, 64 (each step by more than 3 s.e.). An earlier
    version integrated narrow mixture components (contexts with a tiny s, P(s = 0) = 2^−N for relu) on the shared
    grid and gave 0.235, 0.079, 0.134, 0.101, 0.066 for the optimal readout."""
    pb = linattn.Problem(6, 16, 0.0, link="relu")
    ths = [ft.feature_learner_theory(pb, 2000, 0.01, N_test=n) for n in (2, 4, 8, 16, 64)]
    for key in ("trained", "optimal"):
        values = [getattr(th, "test_" + key) for th in ths]
        ses = [th.test_se if key == "trained" else 0.0 for th in ths]
        for k in range(4):
            assert values[k] - values[k + 1] > 3 * np.hypot(ses[k], ses[k + 1]), (key, values)
    assert ths[1].test_trained > ths[1].test_optimal      # the trained readout extrapolates to the wider t


#: the trained-readout theory's measured accuracy: the largest excess of |sim − theory| over 3 s.e., relative to the
#: theory, over the D = 6 grid of docs/feature_learner.md §7 (2.9 % in 50 cells; none at D = 10, 60 cells), rounded up
TRAINED_ACCURACY = 0.05


@pytest.mark.slow
def test_feature_learner_as_trained_against_simulation():
    """The feature learner as trained: relu, D = 6, N = 12, λ = 0.01 — memorisation (P = 20, 48 training
    sets; P = 100, 16 sets) and generalisation (P = 2000, 4 sets), each at the training context N_test = 12 and at
    N_test = 3 and 48 (the same trained runs, evaluated without retraining). The theory (``readout="trained"``) lies
    within 3 s.e. + 5 % (TRAINED_ACCURACY) of every simulated test error, and its training loss within 3 s.e. + 12 %
    (the weight-decay term's measured excess, docs/feature_learner.md §7). The baseline it replaces — the optimal
    readout of the training distribution — fails the same test criterion in the four memorisation cells at
    N_test ≤ N (measured 22–75 % below the simulation there); at P = 2000 and N_test = 3 it is 13 % low, at the edge
    of the criterion, and at N_test = 4N the test outputs lie within the training range and the two readouts agree."""
    from validation import feature_learner
    from validation.simulators._learner_sims import feature_test_error

    pb = linattn.Problem(6, 12, 0.0, link="relu")
    baseline_fails = set()
    for P, n_sets in ((20, 48), (100, 16), (2000, 4)):
        runs = [feature_learner(pb, P, 0.01, rng=(38, P, r), n_test_prompts=20_000) for r in range(n_sets)]
        assert all(r.converged for r in runs)
        for N_test in (3, 12, 48):
            th = ft.feature_learner_theory(pb, P, 0.01, N_test=None if N_test == 12 else N_test)
            sim = np.array([r.test if N_test == 12 else
                            feature_test_error(pb, r, N_test=N_test, n_test_prompts=20_000, rng=(38, k))[0]
                            for k, r in enumerate(runs)])
            se = np.hypot(sim.std(ddof=1) / np.sqrt(n_sets), th.test_se)
            assert abs(sim.mean() - th.test) <= 3 * se + TRAINED_ACCURACY * th.test, (P, N_test, sim.mean(), th.test)
            if abs(sim.mean() - th.test_optimal) > 3 * se + TRAINED_ACCURACY * th.test_optimal:
                baseline_fails.add((P, N_test))
        train = np.array([r.train for r in runs])
        se = np.hypot(train.std(ddof=1) / np.sqrt(n_sets), th.train_se)
        assert abs(train.mean() - th.train) <= 3 * se + 0.12 * th.train, (P, train.mean(), th.train)
    assert {(20, 3), (20, 12), (100, 3), (100, 12)} <= baseline_fails


def test_balanced_decay_near_the_interpolation_threshold():
    """relu, D = 6, N = 4, P = 20 (near P = D²): the balanced decay's lower bracket was searched by doubling steps in
    log λ_eff, down to λ_eff ≈ e^{−1000}, where the ridge law's resolvent overflowed (a raw LinAlgError). Steps of e
    find the bracket; the errors are finite and the training loss lies below the test error."""
    th = ft.feature_learner_theory(linattn.Problem(6, 4, 0.0, link="relu"), 20, 0.01)
    assert np.isfinite(th.test) and np.isfinite(th.train) and 0 < th.train < th.test
    assert 0 < th.lam_effective < 0.01 * 1e3


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)
TANH = linattn.Problem(4, 8, 0.0, link="tanh")
RELU = linattn.Problem(4, 8, 0.01, link="relu")
ANISO = linattn.Problem(3, 6, 0.1, covariance=[1, 0.5, 0.25])
MiB = 1 << 20


REFUSED = refusals(name_as_word, [
    ("query-overlap", lambda: feature_overlaps.query_overlap_strength(ANISO), "pb", None),
    ("label-mean", lambda: feature_overlaps.label_mean(ANISO), "pb", None),
    ("feature-contexts", lambda: replica.feature_learner_theory(TANH, 20, 0.1, law="finite", n_contexts=2048),
     "n_contexts", 16 * MiB),
    ("mixture-n-t", lambda: feature_mixture.mixture_readout_power(TANH, 1.0, 0.5, n_contexts=64, n_t=2**14),
     "n_t", 16 * MiB),
    ("mixture-contexts", lambda: feature_mixture.mixture_readout_power(TANH, 1.0, 0.5, n_contexts=5000),
     "n_contexts", 16 * MiB),
    ("ridge-law-centre", lambda: ridge_law_module.ridge_law(TANH, 20, 0.1, centre=1e300), "centre", None),
    ("gamma-overlaps", lambda: feature_overlaps.gamma_overlaps(TANH, np.eye(4) * 1e200), "Gamma"),
    ("mixture-error", lambda: feature_mixture.mixture_error(links.as_link("tanh"), 1.0, 1.0, np.nan), "train"),
    ("mixture-power-contexts", lambda: feature_mixture.mixture_readout_power(TANH, 1.0, 0.5, n_contexts=10**13),
     "n_contexts"),
    ("overlaps-nan", lambda: ft.Overlaps(1.0, np.nan, 1.0, 1.0), "yt"),
    ("feature-theory-max-iter", lambda: replica.feature_learner_theory(TANH, 10, 0.1, max_iter=2**31), "max_iter"),
]) + refusals(name_not_within_letters, [
    ("feature-theory-tiny-lam", lambda: replica.learner_theory(RELU, 10.0, 1e-300, learner="feature"), "lam"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_feature_theory_names_n_test():
    """N_test = 10⁹ is refused naming N_test (the message blamed P)."""
    with pytest.raises(ValueError, match="N_test"):
        replica.learner_theory(PB, 20, 0.1, learner="feature", N_test=10**9)


@pytest.mark.parametrize("link", ["tanh", "relu"])
def test_feature_theory_large_decay_is_the_constant_readout(link):
    """At λ = 1 … 1e300 the balanced decay λ/‖W‖ has no fixed point (λ above λ* = lim λ_eff‖Γ̂‖, 0.16 for
    tanh and 0.15 for relu here) and the trained W is exactly zero: every population readout is the constant E_train y,
    with the error ½(V − (E y)²) — not a ConvergenceError or a ValueError as before; the trained readout is the
    decayed intercept of the P training labels. V and E y are written here from the
    task-norm law: E y = E√r/√(2π) for relu (E√r = √(2/D) Γ((D+1)/2)/Γ(D/2)), 0 for tanh; V = E f(√r z)² (1/2 for
    relu; adaptive quadrature over r ~ χ²_D/D and z for tanh)."""
    from scipy import integrate, special, stats

    pb = linattn.Problem(6, 12, 0.0, link=link)
    D = pb.D
    if link == "relu":
        mean_sqrt_r = np.sqrt(2.0 / D) * np.exp(special.gammaln((D + 1) / 2) - special.gammaln(D / 2))
        Ey, V = mean_sqrt_r / np.sqrt(2 * np.pi), 0.5
    else:
        def inner(r):                                       # E tanh(√r z)², z ~ N(0, 1)
            return integrate.quad(lambda z: np.tanh(np.sqrt(r) * z) ** 2 * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi),
                                  -40, 40, epsabs=1e-15, epsrel=1e-13, limit=200)[0]

        Ey = 0.0
        V = integrate.quad(lambda r: D * stats.chi2.pdf(D * r, D) * inner(r), 0, np.inf, epsabs=1e-15, epsrel=1e-13,
                           limit=200)[0]
    for lam in (1.0, 1e5, 1e20, 1e300):
        th = replica.feature_learner_theory(pb, 200, lam, law="finite")
        assert th.lam_effective == np.inf and th.rho == 0.0 and th.sigma2 == 0.0
        for err in (th.test_linear, th.test_optimal):
            assert err == pytest.approx(0.5 * (V - Ey**2), rel=1e-10)
        # the learner as trained: t ≡ 0 and its readout is the decayed intercept a₀ = ȳ/(1 + λ) of P = 200 labels,
        # E = ½(V − 2 Ey E a₀ + E a₀²) with E a₀ = Ey/(1 + λ), E a₀² = (Ey² + (V − Ey²)/P)/(1 + λ)² (the theory
        # samples the labels: within 4 of its s.e.)
        shrink = 1.0 / (1.0 + lam)
        trained = 0.5 * (V - 2 * Ey**2 * shrink + (Ey**2 + (V - Ey**2) / 200) * shrink**2)
        assert abs(th.test - trained) <= 4 * th.test_se + 1e-12 * V
        b0 = Ey / (1.0 + lam)                               # the penalised intercept of the linear-readout learner
        assert th.test_ridge == pytest.approx(0.5 * (V - 2 * b0 * Ey + b0**2), rel=1e-10)
    below = replica.feature_learner_theory(pb, 200, 0.01, law="gaussian")
    ft = replica._feature_theory                             # the Γ̂ law of that call (cached): tol = 1e-8 on log λ_eff
    law, lam_eff = ft._balanced(pb, 200.0, 0.01, None, feature_overlaps.label_mean(pb), 0, "balanced", 50, 1e-8)
    assert np.isfinite(below.lam_effective) and below.test < 0.5 * (V - Ey**2)
    assert lam_eff * np.sqrt(law.norm2) == pytest.approx(0.01, rel=1e-7)      # the fixed point λ_eff‖Γ̂‖ = λ


def test_mixture_power_is_scale_free():
    """identity_weight = 1e300 overflowed (identity_weight**2); the power depends on the direction of Γ only."""
    ref = feature_mixture.mixture_readout_power(TANH, 1.0, 0.0, n_contexts=64)
    for identity_weight, delta2 in ((1e300, 0.5), (1e-300, 0.0), (-1e300, 0.0)):
        value = feature_mixture.mixture_readout_power(TANH, identity_weight, delta2, n_contexts=64)
        assert np.isfinite(value) and value == pytest.approx(ref, rel=1e-12)
    ref = feature_mixture.mixture_readout_power(TANH, 1.0, 0.5, n_contexts=64)
    assert feature_mixture.mixture_readout_power(TANH, 1e-120, 0.5e-240, n_contexts=64) == pytest.approx(ref, rel=1e-12)


def test_feature_theory_progress_bar_over_the_pools(monkeypatch, capsys):
    from replica import _feature_theory

    pb = linattn.Problem(4, 8, 0.0, link="tanh", tasks=3)
    kw = dict(law="gaussian", n_contexts=256, n_pools=2)
    monkeypatch.setattr(_feature_theory, "PROGRESS_DELAY", 0.0)           # every call counts as long
    shown = replica.feature_learner_theory(pb, 300, 0.01, **kw)
    assert "feature learner theory, 2 pools" in capsys.readouterr().err
    silent = replica.feature_learner_theory(pb, 300, 0.01, progress=False, **kw)
    assert capsys.readouterr().err == ""
    assert (shown.test, shown.test_idg, shown.train) == (silent.test, silent.test_idg, silent.train)
