"""The exact two-parameter minimal model (Gibson, Cui & Reddy 2026): enumeration, derivatives, Monte Carlo,
the saddle on the 1-point line and the escape time of the gradient flow."""
import itertools
import math

import numpy as np
import pytest
from helpers import (
    assert_refused,
    name_as_escaped_word,
    name_as_word,
    name_not_within_letters,
    name_starts_too_large,
    refusals,
)

import dynamics
from dynamics import _minimal_loss as loss_module
from dynamics import _minimal_sequences as sequences
from dynamics import markov_minimal_flow, markov_minimal_loss, markov_minimal_theory
from dynamics._minimal_sequences import n_canonical


def _brute(C, N, concentration, first_state, score_scale, delta, variant, law="dirichlet"):
    """All C^(N+1) sequences, no symmetry reduction: (Σ P, E[ℓ; seen], E[∇ℓ; seen])."""
    seqs = np.array(list(itertools.product(range(C), repeat=N + 1)), dtype=np.int8)
    if law == "dirichlet":
        w = np.exp(sequences._log_law(seqs, C, concentration, first_state))
    else:                                  # i.i.d. uniform states: the baseline law
        w = np.full(len(seqs), float(C) ** -(N + 1))
    m, A = sequences._features(seqs, N)
    ell, g, _ = loss_module._per_pattern(score_scale, delta, m, A, variant)
    return w.sum(), w @ ell, w @ g


@pytest.mark.parametrize("first_state", ["uniform", "onestep"])
def test_enumeration_is_a_probability_law_and_matches_brute_force(first_state):
    """The canonical enumeration (restricted growth strings × C!/(C−k)!) sums to 1, as does the brute force
    over all C^(N+1) sequences (1e-12: float64 sums of ~10³ terms), and gives the same loss and gradient."""
    C, N, concentration = 3, 5, 0.7
    pat = sequences._exact_patterns(C, N, concentration, first_state)
    assert pat.n_sequences == n_canonical(C, N + 1) == 1 + 31 + 90    # Σ_{k≤3} S(6, k)
    assert abs(pat.total - 1) < 1e-12 and abs(pat.weight.sum() - 1) < 1e-12
    total, loss_part, grad_part = _brute(C, N, concentration, first_state, 0.9, 0.4, "released")
    assert abs(total - 1) < 1e-12
    r = markov_minimal_loss(0.9, 0.4, C, N, concentration, first_state=first_state)
    assert abs(r.loss_seen * (1 - r.p_unseen) - loss_part) < 1e-12
    assert np.abs(r.grad - grad_part).max() < 1e-12


def test_first_state_law_closed_forms():
    """p(s_0 = j) = 1/C for both laws by symmetry, and the two laws differ on the joint law of (s_0, s_1):
    onestep makes s_0 → s_1 the second draw of row s_0 only if h = s_0 (Pólya: P(s_0 = s_1) =
    (1/C)[(1 + α)/(Cα + 1)·(1/C) + (1 − 1/C)·(1/C)] · C ... checked numerically against uniform's
    P(s_0 = s_1) = 1/C exactly)."""
    C, concentration = 3, 0.5
    seqs = np.array(list(itertools.product(range(C), repeat=2)), dtype=np.int8)
    for fs in ("uniform", "onestep"):
        p = np.exp(sequences._log_law(seqs, C, concentration, fs)).reshape(C, C)
        assert np.allclose(p.sum(axis=1), 1 / C, atol=1e-15)
    p_u = np.exp(sequences._log_law(seqs, C, concentration, "uniform")).reshape(C, C)
    assert abs(np.trace(p_u) - 1 / C) < 1e-15
    # onestep: P(s0 = s1) = Σ_h P(h) [h = s0: (α+1)/(Cα+1) · ... ] — exact value by direct Pólya sums
    p_o = np.exp(sequences._log_law(seqs, C, concentration, "onestep")).reshape(C, C)
    direct = (1 / C) * (1 / C) * ((concentration + 1) / (C * concentration + 1)) + (1 / C) * (1 - 1 / C) * (1 / C)
    assert abs(np.trace(p_o) - C * direct) < 1e-15


@pytest.mark.parametrize("variant", ["released", "attention"])
def test_gradient_and_hessian_against_finite_differences(variant):
    """Analytic ∇L, H vs central differences with step h = 1e-4: truncation h²|L'''|/6 ≲ 1e-9 and rounding
    1e-16/h ≈ 1e-12, so 1e-7 is a safe bound."""
    C, N, concentration, h = 3, 5, 0.5, 1e-4
    b, d = 0.8, -0.3
    r = markov_minimal_loss(b, d, C, N, concentration, variant=variant)

    def L(x, y):
        return markov_minimal_loss(x, y, C, N, concentration, variant=variant).loss

    def G(x, y):
        return markov_minimal_loss(x, y, C, N, concentration, variant=variant).grad
    fd_grad = [(L(b + h, d) - L(b - h, d)) / (2 * h), (L(b, d + h) - L(b, d - h)) / (2 * h)]
    fd_hess = np.array([(G(b + h, d) - G(b - h, d)) / (2 * h), (G(b, d + h) - G(b, d - h)) / (2 * h)])
    assert np.abs(r.grad - fd_grad).max() < 1e-7
    assert np.abs(r.hessian - fd_hess).max() < 1e-7
    assert abs(r.hessian[0, 1] - r.hessian[1, 0]) == 0.0


def test_exact_identities():
    """β = 0: uniform attention, ∂_δ L = ∂²_δ L = 0 exactly; L = (1 − p_u) L_seen + p_u log(1/ε); p_unseen at
    N = 2 equals P(s_2 ≠ s_1) = 1 − E[T_{s_1 s_1}] (1e-12)."""
    r = markov_minimal_loss(0.0, 0.7, 3, 5, 0.5)
    assert r.grad[1] == 0.0 and r.hessian[1, 1] == 0.0
    assert abs(r.loss - ((1 - r.p_unseen) * r.loss_seen + r.p_unseen * math.log(1e10))) < 1e-12
    r2 = markov_minimal_loss(0.3, 0.1, 3, 2, 0.5)         # one key (i = 1, value s_1): seen iff s_2 = s_1
    # P(s_2 = s_1) = E over the visit of s_1: the second draw of row s_1 equals the first w.p. (α+1)/(Cα+1)
    # unless the hidden/onestep chain already used row s_1 — exact value from the brute-force law
    seqs = np.array(list(itertools.product(range(3), repeat=3)), dtype=np.int8)
    w = np.exp(sequences._log_law(seqs, 3, 0.5, "onestep"))
    assert abs(r2.p_unseen - w[seqs[:, 2] != seqs[:, 1]].sum()) < 1e-12
    assert abs(r2.loss_seen) < 1e-12                      # one key carrying the target: p = 1


def test_exact_agrees_with_monte_carlo_and_iid_baseline_is_rejected():
    """Exact vs Monte Carlo (linattn.markov.Chains, 40 000 fresh chains) within 4 s.e. for L_seen, p_unseen and
    ∇L; the i.i.d.-states law (a wrong data law) is rejected by the same 4 s.e. criterion."""
    pytest.importorskip("linattn.markov")
    C, N, concentration, b, d = 3, 5, 0.5, 0.9, 0.4
    ex = markov_minimal_loss(b, d, C, N, concentration, method="exact")
    mc = markov_minimal_loss(b, d, C, N, concentration, method="mc", n_mc=40_000, rng=7)
    assert mc.method == "mc" and mc.loss_seen_se > 0
    assert abs(ex.loss_seen - mc.loss_seen) < 4 * mc.loss_seen_se
    assert abs(ex.p_unseen - mc.p_unseen) < 4 * mc.p_unseen_se
    assert np.all(np.abs(ex.grad - mc.grad) < 4 * mc.grad_se)
    total, _, _ = _brute(C, N, concentration, "onestep", b, d, "released", law="iid")
    seqs = np.array(list(itertools.product(range(C), repeat=N + 1)), dtype=np.int8)
    _, A = sequences._features(seqs, N)
    p_unseen_iid = float((~A.any(axis=1)).sum()) / len(seqs)
    assert abs(total - 1) < 1e-12
    assert abs(p_unseen_iid - mc.p_unseen) > 4 * mc.p_unseen_se


def test_theory_escape_time_matches_the_flow_and_naive_rate_is_rejected():
    """Linear escape from the saddle (0, δ_s) of the 1-point line: the released variant at C = 3, N = 5,
    α = 0.5, from (0, δ_s + 10⁻³) to |δ − δ_s| = r = 0.1. The cubic terms change the time by a relative O(r)
    amount spent near |δ − δ_s| ≈ r, i.e. ≲ r/λ₊ out of ~ log(r/10⁻³)/λ₊: tolerance 2 %. The naive rate
    |H_βδ| (ignoring H_ββ, the β relaxation) fails the same tolerance."""
    C, N, concentration, r, eps = 3, 5, 0.5, 0.1, 1e-3
    th = markov_minimal_theory(C, N, concentration, variant="released")
    assert th.delta_saddle > 0.01          # the authors' start (0.01, 0.01) lies below the saddle
    assert abs(markov_minimal_loss(0.0, th.delta_saddle, C, N, concentration).grad[0]) < 1e-12
    assert th.rate > 0 > th.rate_stable
    t = np.linspace(0.0, 4 * math.log(r / eps) / th.rate, 50)
    fl = markov_minimal_flow(0.0, th.delta_saddle + eps, C, N, concentration, t, delta_saddle=th.delta_saddle, radius=r)
    t_theory = th.escape_time(0.0, th.delta_saddle + eps, r)
    assert abs(fl.escape_time - t_theory) < 0.02 * fl.escape_time
    vdelta = th.unstable[1]
    t_naive = math.log(r / (eps * vdelta**2)) / abs(th.hessian[0, 1])
    assert abs(fl.escape_time - t_naive) > 0.02 * fl.escape_time
    assert fl.delta[-1] > th.delta_saddle + r and fl.transition_time < t[-1]


def test_released_start_falls_below_the_saddle():
    """From the released run's start (0.01, 0.01) the released variant leaves the saddle downwards (δ < 0, β < 0,
    loss barely below the 1-point loss) while the attention variant (saddle at δ_s < 0) rises to δ > 1."""
    C, N, concentration = 3, 5, 0.5
    t = np.geomspace(1.0, 3e4, 30)
    rel = markov_minimal_flow(0.01, 0.01, C, N, concentration, t, variant="released")
    att = markov_minimal_flow(0.01, 0.01, C, N, concentration, t, variant="attention")
    assert rel.delta[-1] < 0 and rel.score_scale[-1] < 0
    assert att.delta[-1] > 1 and att.score_scale[-1] > 0
    assert att.loss[-1] < rel.loss[-1] < rel.loss_1point


def test_bad_input():
    for kwargs, name in [({"C": 1}, "C"), ({"N": 1}, "N"), ({"concentration": 0.0}, "concentration"),
                         ({"variant": "softmax"}, "variant"), ({"first_state": "x"}, "first_state"),
                         ({"method": "exactly"}, "method"), ({"eps": 0.0}, "eps"), ({"score_scale": math.nan},
                                                                                    "score_scale"),
                         ({"first_state": "stationary", "method": "exact"}, "method"), ({"n_mc": 1}, "n_mc")]:
        args = {"score_scale": 0.1, "delta": 0.1, "C": 3, "N": 4, "concentration": 0.5, **kwargs}
        with pytest.raises(ValueError, match=name):
            markov_minimal_loss(**args)
    with pytest.raises(ValueError, match="times"):
        markov_minimal_flow(0.0, 0.0, 3, 4, 0.5, [1.0, 0.5])
    with pytest.raises(ValueError, match="gamma"):
        markov_minimal_flow(0.0, 0.0, 3, 4, 0.5, [1.0], gamma=-1.0)
    with pytest.raises(ValueError, match="bracket"):
        markov_minimal_theory(3, 4, 0.5, bracket=(1.0, -1.0))
    with pytest.raises(ValueError, match="radius"):
        markov_minimal_theory(3, 4, 0.5).escape_time(0.0, 0.0, radius=0.0)


def test_stationary_first_state_is_monte_carlo_and_reproducible():
    """first_state="stationary" has no closed-form law: "auto" samples; a fixed rng gives identical numbers."""
    pytest.importorskip("linattn.markov")
    a = markov_minimal_loss(0.5, 0.5, 3, 4, 0.5, first_state="stationary", n_mc=3000, rng=5)
    b = markov_minimal_loss(0.5, 0.5, 3, 4, 0.5, first_state="stationary", n_mc=3000, rng=5)
    assert a.method == "mc" and a.n_sequences == 3000 and a.loss_se > 0
    assert a.loss == b.loss and np.array_equal(a.grad, b.grad)


# ----------------------------------------------------------------------------- refusals and extreme arguments
MARKOV = dict(score_scale0=0.1, delta0=0.1, C=3, N=8, concentration=1.0, n_mc=2000, rng=0)


REFUSED = refusals(name_as_escaped_word, [
    # a bracket whose width overflows
    ("theory-bracket-width", lambda: dynamics.markov_minimal_theory(3, 4, 1.0, bracket=(-1e308, 1e308)), "bracket"),
], limit=2**31) + refusals(name_as_word, [
    ("markov-minimal-N", lambda: dynamics.markov_minimal_loss(0.5, 0.5, 3, 10**9, 1.0), "N"),
]) + refusals(name_not_within_letters, [
    # markov_minimal_flow from a start where the loss overflows: 1e5 integrator evaluations (~50 s) before a
    # ConvergenceError; markov_minimal_loss refuses the same point naming score_scale
    ("markov-flow-huge-start", lambda: dynamics.markov_minimal_flow(**{**MARKOV, "score_scale0": 1e300},
                                                                   times=[0.0, 1.0]), "score_scale0"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


TOO_LARGE = refusals(name_starts_too_large, [
    # neither n_seq nor length is an argument of markov_minimal_loss
    ("minimal-loss-n-mc", lambda: dynamics.markov_minimal_loss(0.5, 0.5, 127, 200, 1.0),
     "dynamics.markov_minimal_loss: n_mc"),
], limit=2**31)


@pytest.mark.parametrize("call, match, limit", TOO_LARGE)
def test_too_large_names_the_dominant_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("variant", ["released", "attention"])
def test_markov_minimal_loss_huge_delta_is_the_limit(variant):
    """e^δ overflowed float64 (NaN loss and gradient); the kernel now works in e^{−δ} for δ > 0 and gives the
    δ → ∞ limit, which δ = 50 already reaches to rounding."""
    far = dynamics.markov_minimal_loss(0.5, 1e300, 3, 4, 1.0, variant=variant)
    near = dynamics.markov_minimal_loss(0.5, 50.0, 3, 4, 1.0, variant=variant)
    for r in (far, near):
        assert np.isfinite(r.loss) and np.all(np.isfinite(r.grad)) and np.all(np.isfinite(r.hessian))
    assert far.loss == pytest.approx(near.loss, rel=1e-12)
    np.testing.assert_allclose(far.grad, near.grad, rtol=1e-12, atol=1e-18)


@pytest.mark.parametrize("variant", ["released", "attention"])
def test_markov_minimal_loss_continuous_across_zero(variant):
    """The two forms of the kernel (e^δ for δ <= 0, e^{−δ} for δ > 0) agree at δ = 0."""
    a = dynamics.markov_minimal_loss(0.7, 1e-12, 3, 5, 0.5, variant=variant)
    b = dynamics.markov_minimal_loss(0.7, -1e-12, 3, 5, 0.5, variant=variant)
    assert a.loss == pytest.approx(b.loss, abs=1e-10)
    np.testing.assert_allclose(a.grad, b.grad, atol=1e-10)
    np.testing.assert_allclose(a.hessian, b.hessian, atol=1e-10)


def test_markov_minimal_loss_large_delta_gradient_is_accurate():
    """u = m d − (f m + S) cancelled catastrophically at large e^δ; ∂_δ L ∝ e^{−δ} must scale exactly."""
    g30 = dynamics.markov_minimal_loss(0.5, 30.0, 3, 4, 1.0).grad[1]
    g40 = dynamics.markov_minimal_loss(0.5, 40.0, 3, 4, 1.0).grad[1]
    assert g30 != 0.0
    assert g40 / g30 == pytest.approx(np.exp(-10.0), rel=1e-6)


@pytest.mark.parametrize("score_scale, delta, name", [(0.5, -1e300, "delta"), (1e300, 0.1, "score_scale")])
def test_markov_minimal_loss_overflow_names_the_argument(score_scale, delta, name):
    with pytest.raises(ValueError, match=name):
        dynamics.markov_minimal_loss(score_scale, delta, 3, 4, 1.0, variant="released")


def test_markov_minimal_theory_bracket_overflow_is_refused():
    with pytest.raises(ValueError, match="bracket"):
        dynamics.markov_minimal_theory(3, 4, 1.0, bracket=(-1e300, 1.0))


def test_markov_minimal_flow_single_time():
    r = dynamics.markov_minimal_flow(0.01, 0.02, 3, 4, 1.0, [0.0])
    np.testing.assert_array_equal(r.score_scale, [0.01])
    np.testing.assert_array_equal(r.delta, [0.02])


@pytest.mark.usefixtures("two_gib_memory_limit")
def test_theory_wide_bracket_finds_the_saddle():
    """A bracket up to 1e40 (or 1e300) raised scipy's raw RuntimeError (100 iterations of brentq)."""
    ref = dynamics.markov_minimal_theory(3, 4, 1.0)
    for hi in (1e40, 1e300):
        wide = dynamics.markov_minimal_theory(3, 4, 1.0, bracket=(-6.0, hi))
        assert wide.delta_saddle == pytest.approx(ref.delta_saddle, abs=1e-10)
        assert wide.rate == pytest.approx(ref.rate, rel=1e-8)


@pytest.mark.usefixtures("two_gib_memory_limit")
@pytest.mark.parametrize("concentration", [1e15, 1e308])
def test_minimal_model_at_huge_concentration_is_the_iid_limit(concentration):
    """log Γ(α + n) − log Γ(α) cancelled (α = 1e15 gave p_unseen = 0.035, not 8/27) and Cα
    overflowed (α = 1e308 was refused naming beta); at α → ∞ the states are i.i.d. uniform."""
    limit = dynamics.markov_minimal_loss(0.5, 0.5, 3, 4, 1e20)
    for first_state in ("onestep", "uniform"):
        r = dynamics.markov_minimal_loss(0.5, 0.5, 3, 4, concentration, first_state=first_state)
        assert r.p_unseen == pytest.approx(8 / 27, abs=1e-12)
        assert r.loss == pytest.approx(limit.loss, abs=1e-10)
        np.testing.assert_allclose(r.grad, limit.grad, atol=1e-12)


def test_flow_refuses_a_rate_beyond_float64_at_once():
    """markov_minimal_flow at gamma = 1e300 ran its integrator for minutes (the Jacobian squared overflows) before
    failing; it is refused at once, naming gamma."""
    with pytest.raises(ValueError, match=r"^dynamics\.markov_minimal_flow: gamma must be a learning rate <= 1e\+150"):
        dynamics.markov_minimal_flow(0.1, 0.1, 3, 4, 1.0, np.array([0.0, 1.0]), gamma=1e300, n_mc=200, rng=0)
