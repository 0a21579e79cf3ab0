"""Staged learning: closed forms vs exact mean-flow ODE, fixed points, escape times, saddles, finite P."""
import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

import dynamics
import linattn
from dynamics import escape_times, logistic_modes, mean_flow, mode_constants, mode_flow, saddle_losses
from linattn import _parametrizations as factorized
from linattn.factorized import Parametrization

SPEC = np.array([1.0, 0.5, 0.25])
PB = linattn.Problem(3, 10, 0.0, covariance=SPEC)
RTOL = 1e-10


def test_logistic_law_is_the_exact_flow_from_balanced_aligned_starts():
    """Closed form a(t) = a∞a0/(a0 + (a∞ − a0)e^{−2bt}) against the full 2D² ODE of Γ = PQ and the per-mode
    ODE, in a rotated basis (tolerance: 1e-6 for an integrator at rtol 1e-10 over ~20 e-folds of growth)."""
    U = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    pb = linattn.Problem(3, 10, 0.1, covariance=U @ np.diag(SPEC) @ U.T)
    mc = mode_constants(pb)
    par = Parametrization("value_kq_modes", 3)
    a0 = 1e-3
    t = np.linspace(0.0, 12 * mc.tau.max(), 400)
    closed = logistic_modes(pb, a0, t)
    full = mean_flow(pb, par, par.aligned(np.full(3, a0), mc.basis), t, rtol=RTOL)
    per_mode = mode_flow(pb, np.sqrt(a0), np.sqrt(a0), t, rtol=RTOL)
    order = np.argsort(mc.spectrum)       # eigh of the matrix: ascending eigenvalues
    assert np.abs(full.modes - closed).max() < 1e-6
    assert np.abs(per_mode.modes - closed).max() < 1e-6
    assert np.allclose(closed[-1], mc.a_inf, rtol=1e-6)
    assert np.allclose(np.sort(mc.a_inf), np.sort(np.diag(mc.basis.T @ pb.icl_solution().Gamma @ mc.basis)), rtol=1e-12)
    assert np.abs(full.conserved - full.conserved[0]).max() < 1e-9
    assert np.all(np.diff(mc.tau[order]) < 0)          # slow modes are the small eigenvalues


def test_a_inf_and_time_scales():
    """a∞ = 1/s∞ with s∞ = ((N+1)s + tr S)/N and τ = D/s² (Mainali & Teixeira, σ = 0, slope 1), to 1e-14."""
    mc = mode_constants(PB)
    assert np.allclose(mc.a_inf, 10 / (11 * SPEC + SPEC.sum()), rtol=1e-14)
    assert np.allclose(mc.tau, 3 / SPEC**2, rtol=1e-14)


def test_escape_times_match_the_integrated_flow():
    """Half-rise times of the exact per-mode flow (interpolated on a fine grid) equal the closed form to 1e-4."""
    a0 = 1e-4
    t_half = escape_times(PB, a0)
    t = np.linspace(0.0, 1.5 * t_half.max(), 20001)
    mf = mode_flow(PB, np.sqrt(a0), np.sqrt(a0), t, rtol=RTOL)
    mc = mode_constants(PB)
    for k in range(3):
        crossed = np.interp(0.5 * mc.a_inf[k], mf.modes[:, k], t)
        assert abs(crossed / t_half[k] - 1) < 1e-4


def test_unbalanced_start_conserves_p2_minus_q2_and_is_not_logistic():
    t = np.linspace(0.0, 200.0, 300)
    mf = mode_flow(PB, 0.3, 0.01, t, rtol=RTOL)
    assert np.abs((mf.p**2 - mf.q**2) - (0.09 - 1e-4)).max() < 1e-7
    closed = logistic_modes(PB, 0.003, t)
    assert np.abs(mf.modes - closed).max() > 1e-2


@pytest.mark.parametrize("kind, H", [("merged", 1), ("value_kq", 1), ("value_kq_modes", 1), ("separate_kq", 3),
                                     ("merged_heads", 2)])
def test_every_parametrization_reaches_the_population_minimiser(kind, H):
    """From a small random start, every product parametrization converges to Γ_* (the same predictor):
    ‖Γ(T) − Γ_*‖ < 1e-5 and E_g(T) − E_g(Γ_*) < 1e-9."""
    par = Parametrization(kind, 3, heads=H)
    th = par.init(0.3 if kind == "separate_kq" else 0.05, 1)
    fl = mean_flow(PB, par, th, [1.0, 3e4], rtol=RTOL)
    ic = PB.icl_solution()
    assert np.abs(fl.Gamma - ic.Gamma).max() < 1e-5
    assert fl.test[-1] - ic.test_error < 1e-9
    if fl.conserved.size:
        assert np.abs(fl.conserved - fl.conserved[0]).max() < 1e-6


@pytest.mark.parametrize("kind, H", [("merged", 1), ("value_kq", 1), ("value_kq_modes", 1), ("merged_heads", 2)])
def test_a_start_far_below_the_old_absolute_tolerance_reaches_the_minimiser(kind, H):
    """From a random start of scale 1e-15 (below the absolute tolerance ``rtol · 1e-3`` the flows had) the product
    parametrizations escape the saddle and reach ``Γ_*`` by t = 1e9. With ``atol = 1e-12`` the tiny start was not
    error-controlled: ``value_kq_modes`` (D = 2) stopped at a test error 0.0989 against the minimum 0.0916, and
    Radau stepped over the unstable direction and stayed on the plateau (0.325)."""
    pb = linattn.Problem(2, 5, covariance=[1.0, 0.3])
    par = Parametrization(kind, 2, heads=H)
    ic = pb.icl_solution()
    for method in ("LSODA", "Radau") if kind == "value_kq" else ("LSODA",):
        times = np.geomspace(1.0, 1e4 if method == "Radau" else 1e9, 20)
        fl = mean_flow(pb, par, par.init(1e-15, 0), times, method=method)
        assert fl.test[-1] - ic.test_error < 1e-9, method
        assert np.abs(fl.Gamma - ic.Gamma).max() < 1e-5, method


def test_mode_flow_from_a_tiny_start_is_the_logistic_law():
    """Balanced start ``a0 = 1e-30`` (``p0 = q0 = 1e-15``, below the old absolute tolerance 1e-13): the per-mode flow
    is the closed form to 1e-7 (1000 × rtol: the local errors of the ~10² steps carried through ~70 e-folds of
    growth); with the old tolerance it was off by 3.7e-4."""
    t = np.geomspace(1.0, 1e5, 40)
    for a0 in (1e-30, 1e-20):
        closed = logistic_modes(PB, a0, t)
        mf = mode_flow(PB, np.sqrt(a0), np.sqrt(a0), t, rtol=RTOL)
        assert np.abs(mf.modes - closed).max() / closed.max() < 1e3 * RTOL


def test_weight_decay_shrinks_the_conserved_quantity_exponentially():
    """With weight decay λ, d(p² − |q|²)/dt = −2γλ(p² − |q|²) for value_kq: C(t) = C(0)e^{−2γλt}."""
    par = Parametrization("value_kq", 3)
    th = par.init(0.5, 3)
    t = np.array([0.0, 5.0, 20.0])
    fl = mean_flow(PB, par, th, t, lam=0.05, gamma=0.7, rtol=RTOL)
    assert np.allclose(fl.conserved[:, 0], fl.conserved[0, 0] * np.exp(-2 * 0.7 * 0.05 * t), rtol=1e-6)


def test_saddle_losses_zhang_form_and_restricted_optimum():
    """E_g(M_m) = ½[V − Σ_{α≤m} b a∞] equals (i) Zhang et al.'s Eq. 19 form in their units,
    trΛ + σ_Z² − Σ_{α≤m} Nλ²/((N+1)λ + trΛ + σ_Z²) (÷ 2D), and (ii) the minimum of the exact test error over
    Γ restricted to the top-m eigenspace (solved numerically), to 1e-12."""
    lam = np.array([0.1, 0.2, 0.3, 0.4])
    N, sig = 31, 0.2
    sl = saddle_losses(lam, N, sig)
    D, sz2 = 4, 4 * sig**2
    order = np.sort(lam)[::-1]
    zhang = lam.sum() + sz2 - np.concatenate([[0.0], np.cumsum(N * order**2 / ((N + 1) * order + lam.sum() + sz2))])
    assert np.allclose(sl, zhang / (2 * D), rtol=1e-12)
    pb = linattn.Problem(4, N, sig, covariance=lam)
    obj = linattn.factorized.population_objective(pb)
    for m in range(5):
        idx = np.argsort(lam)[::-1][:m]
        basis = np.eye(4)[:, idx]
        # minimise over Γ = B X Bᵀ: a linear least-squares problem in the m² entries of X
        cols = [basis @ E.reshape(m, m) @ basis.T for E in np.eye(m * m)] if m else []
        if m:
            Hm = np.array([[np.sum(ci * obj.apply(cj)) for cj in cols] for ci in cols])
            rhs = np.array([np.sum(ci * obj.B) for ci in cols])
            X = np.linalg.solve(Hm, rhs)
            best = obj.value(sum(x * c for x, c in zip(X, cols)))
        else:
            best = obj.value(np.zeros((4, 4)))
        assert abs(best - sl[m]) < 1e-12


def test_separate_heads_pass_through_every_saddle():
    """Separate K/Q rank-one heads from a small start (Zhang et al.'s defaults D = 4, N = 31, Λ = (1,2,3,4)/10):
    the loss plateaus at each saddle value of saddle_losses — closest approach below 1e-6 (relative) at
    start scale 0.02, and no farther than at scale 0.1 (the plateaus approach the saddles as the start
    shrinks) — and ends at E_g(Γ_*); the merged single head drops once (it spends < 5 % of log-time within
    2e-3 of any intermediate saddle)."""
    lam = np.array([0.4, 0.3, 0.2, 0.1])
    pb = linattn.Problem(4, 31, 0.0, covariance=lam)
    sl = saddle_losses(lam, 31)
    t = np.logspace(-1, 6, 4000)
    gaps = []
    for scale in (0.1, 0.02):
        par = Parametrization("separate_kq", 4, heads=4)
        fl = mean_flow(pb, par, par.init(scale, 0), t, rtol=1e-9)
        gaps.append([np.min(np.abs(fl.test / s - 1)) for s in sl[1:-1]])
        assert abs(fl.test[-1] / sl[-1] - 1) < 1e-9
    gaps = np.array(gaps)
    assert np.all(gaps[1] < 1e-6) and np.all(gaps[1] <= gaps[0])
    merged = mean_flow(pb, Parametrization("merged_heads", 4), Parametrization("merged_heads", 4).init(0.05, 0), t,
                       rtol=1e-9)
    near = np.array([np.abs(merged.test / s - 1) < 2e-3 for s in sl[1:-1]])
    assert near.mean(axis=1).max() < 0.05


def test_merged_single_head_plateau_scale():
    """ATTN_M with one head and Λ = I converges to Γ = σ(∞) I with σ(∞) = N/(N + D + 1) (to 1e-6)."""
    pb = linattn.Problem(4, 31, 0.0)
    assert np.allclose(mode_constants(pb).a_inf, 31 / 36, rtol=1e-14)
    par = Parametrization("merged_heads", 4)
    fl = mean_flow(pb, par, par.init(0.05, 2), [1.0, 2e4], rtol=RTOL)
    assert np.abs(fl.Gamma - 31 / 36 * np.eye(4)).max() < 1e-6


def test_finite_p_flow_matches_the_exact_merged_solution():
    """On one training set (isotropic, λ = 0.01), the ODE of the merged model equals the exact eigenbasis
    solution of dynamics.gradient_flow (to 1e-7), so the finite-P objective is the library's E_t."""
    pb = linattn.Problem(3, 6, 0.2)
    data = pb.sample(12, rng=3)
    par = Parametrization("merged", 3)
    th0 = par.init(0.2, 5)
    times = np.array([0.0, 1.0, 10.0, 100.0])
    fl = mean_flow(pb, par, th0, times, data=data, lam=0.01, rtol=RTOL)
    ref = dynamics.gradient_flow(data, pb, 0.01, times, init=th0)
    assert np.allclose(fl.loss, ref.train, atol=1e-7) and np.allclose(fl.test, ref.test, atol=1e-7)


def test_mode_flow_scales_to_64_modes():
    """D = 64 anisotropic modes over 10⁴ output times: closed form and per-mode ODE agree to 1e-6."""
    s = np.logspace(0, -1, 64)
    pb = linattn.Problem(64, 128, 0.0, covariance=s)
    a0 = 1e-4
    t = np.linspace(0.0, 1.2 * escape_times(pb, a0).max(), 10_000)
    mf = mode_flow(pb, np.sqrt(a0), np.sqrt(a0), t)
    assert np.abs(mf.modes - logistic_modes(pb, a0, t)).max() < 1e-6


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_ISOTROPIC = linattn.Problem(3, 10, 0.1)
PB_4_8 = linattn.Problem(4, 8, 0.1)


REFUSED = refusals(name_not_within_letters, [
    ("mean-flow-theta0", lambda: dynamics.mean_flow(PB_4_8, factorized.Parametrization("merged", 4), np.full(16, 2e300),
                                                    np.linspace(0.0, 5.0, 6)), "theta0"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_mode_flow_single_time():
    """times=[0.0] crashed with AttributeError (solve_ivp's y is a list on an empty span)."""
    r = dynamics.mode_flow(PB_ISOTROPIC, 0.1, 0.2, [0.0])
    np.testing.assert_array_equal(r.p, [[0.1] * 3])
    np.testing.assert_array_equal(r.q, [[0.2] * 3])


def test_mean_flow_single_time_and_list():
    par = Parametrization("value_kq_modes", 3)
    theta0 = par.init(0.1, rng=0)
    r = dynamics.mean_flow(PB_ISOTROPIC, par, theta0, [0.0])
    np.testing.assert_array_equal(r.theta, theta0[None])
    r2 = dynamics.mean_flow(PB_ISOTROPIC, par, theta0, [0.0, 0.5])
    assert r2.theta.shape == (2, theta0.size)


def test_mode_flow_wrong_shape_start_names_it():
    with pytest.raises(ValueError, match="p0"):
        dynamics.mode_flow(PB_ISOTROPIC, [0.1, 0.2], 0.1, [0.0, 1.0])


def test_staged_dynamics_name_their_arguments():
    import dynamics

    pb = linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25])
    with pytest.raises(ValueError, match=r"^dynamics\.mode_loss: modes must be small enough"):
        dynamics.mode_loss(pb, [1e200, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"^dynamics\.saddle_losses: spectrum must be eigenvalues in"):
        dynamics.saddle_losses([1e300, 1.0], 31)
    par = linattn.factorized.Parametrization("value_kq", 3)
    # the library's own diagnosis, whatever scipy's words ("Unexpected istate in LSODA" in scipy 1.18, "Repeated
    # convergence failures" in 1.17): depending on the solver's steps the state overflows (scipy 1.10) or stays
    # finite and the integrator stops short of the last time (1.17); either way the message names the flow, the
    # time it did not reach and the times to check
    with pytest.raises(linattn.ConvergenceError, match="^mean_flow: the integrator.* before t = 1e\\+300") as info:
        dynamics.mean_flow(pb, par, par.init(0.1, 0), [0.0, 1e300])
    assert "times" in str(info.value) and "LSODA" not in str(info.value)


def test_flows_refuse_rates_beyond_float64_at_once():
    """mode_flow and mean_flow at lam = 1e300 (or gamma = 1e300) ran 10⁵ integrator evaluations, minutes, before a
    ConvergenceError; a rate γλ up to 1e100 still computes (the modes collapse to 0), beyond 1e150 it is refused at
    once, naming lam or gamma."""
    from linattn import Covariance

    pb = linattn.Problem(3, 4, covariance=Covariance(np.array([1.0, 2.0, 0.5])))
    par = Parametrization("value_kq", 3)
    theta0, t = par.init(0.1, rng=0), np.array([0.0, 1.0, 2.0])
    p0 = np.full(3, 0.1)
    assert dynamics.mode_flow(pb, p0, p0, t, lam=1e100).test[-1] == pytest.approx(pb.test_error(np.zeros((3, 3))))
    for kw, name in ((dict(lam=1e300), "lam"), (dict(gamma=1e300), "gamma"), (dict(gamma=1e100, lam=1e100), "lam")):
        with pytest.raises(ValueError, match=rf"^dynamics\.mode_flow: {name} must be"):
            dynamics.mode_flow(pb, p0, p0, t, **kw)
        with pytest.raises(ValueError, match=rf"^dynamics\.mean_flow: {name} must be"):
            dynamics.mean_flow(pb, par, theta0, t, **kw)
