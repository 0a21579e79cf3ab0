"""Replica-symmetric theory: its saddle point, special cases, limits, solver robustness, and the
acceptance tables against dataset-averaged exact Gibbs values (rungs 1, 3, 5)."""
import numpy as np
import pytest
from scipy.optimize import approx_fprime

import linattn
import replica
import spectra
from validation import boundary_from_means
from linattn.errors import ConvergenceError  # noqa: F401  (documented failure mode)

N_DATASETS = 100
P_GRID = (10, 20, 50, 100, 200, 500, 1000)
SETTINGS = [((10, 100, 0.0), "reduced"), ((10, 100, 0.0), "full"), ((20, 40, 0.25), "reduced"),
            ((20, 40, 0.25), "full")]


@pytest.mark.slow
@pytest.mark.parametrize("problem, model", SETTINGS)
def test_theory_against_dataset_averaged_exact_values(problem, model):
    """Acceptance (replica issue): β = 10³, λ = 0.01, ≥ 100 datasets per point. The test asserts
    the goal — relative error ≤ 1 % — up to 4 standard errors of the exact average (measured:
    ≤ 0.5 % everywhere). The MP law is reported beside it and must be clearly worse somewhere
    (THEORY §3.2: off by up to ~10 %)."""
    pb = linattn.Problem(*problem)
    worst_mp = 0.0
    for P in P_GRID:
        tr, se_tr, te, se_te = replica.dataset_average(pb, P, 1e3, 0.01, N_DATASETS, model, seed=5)
        th = replica.stationary(pb, P, 1e3, 0.01, model)
        assert abs(th.train - tr) <= 0.01 * tr + 4 * se_tr, (P, th.train, tr, se_tr)
        assert abs(th.test - te) <= 0.01 * te + 4 * se_te, (P, th.test, te, se_te)
        mp = replica.stationary(pb, P, 1e3, 0.01, model, law="mp")
        worst_mp = max(worst_mp, abs(mp.train / tr - 1), abs(mp.test / te - 1))
    assert worst_mp > 0.04


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_saddle_point_of_the_rs_functional(model):
    pb = linattn.Problem(10, 100, 0.2)
    for P in (30, 300):
        st = replica.stationary(pb, P, 1e3, 0.01, model)
        o = st.order
        dims = np.array([100.0] + ([10.0] if model == "full" else []))
        q = o.sigma2.copy()
        q[0] += o.rho**2
        x0 = np.concatenate([[o.rho], q, dims * o.r / 1e3])
        B = dims.size
        f = lambda x: replica.rs_functional(pb, P, 1e3, 0.01, x[0], x[1:1 + B], x[1 + B:], model)
        grad = approx_fprime(x0, f, 1e-7 * np.maximum(np.abs(x0), 1e-3))
        scale = np.abs(f(x0))
        assert np.max(np.abs(grad * x0)) < 1e-6 * scale                     # extremal
        assert f(x0) + replica.rs_constant(pb, model) == pytest.approx(-1e3 * st.free_energy, rel=1e-12)


@pytest.mark.parametrize("law", ["finite", "mp"])
def test_random_matrix_formulas_are_a_special_case(law):
    """With decoupled labels the saddle point equals THEORY §3.2's formulas with m(−λ'), m'(−λ')."""
    pb = linattn.Problem(10, 100, 0.3)
    c, lam = pb.feature_variance, 0.01
    lp, t2, s2 = lam / c, pb.teacher_norm2, pb.icl_residual
    for P in (20, 100, 700):
        q = 100 / P
        m, dm = spectra.stieltjes(-lp, P / 100, pb, law=law, derivative=True)
        m, dm = m.real, dm.real
        et = lp / 2 * (s2 * (q * m + (1 - q) / lp) + t2 * (1 - lp * m))
        eg = s2 / 2 + 0.5 * (lp**2 * t2 * dm + s2 * q * (m - lp * dm))
        th = replica.stationary(pb, P, np.inf, lam, law=law, channel="decoupled")
        assert th.train == pytest.approx(et, rel=1e-10)
        assert th.test == pytest.approx(eg, rel=1e-10)


def test_dF_dlam_is_half_the_mean_norm():
    """A non-trivial consistency check of E_t(θ*) against the norm equations: ∂F/∂λ = ½⟨|θ|²⟩."""
    pb = linattn.Problem(8, 30, 0.2)
    for model in ("reduced", "full"):
        for P in (25, 200):
            beta, lam, h = 500.0, 0.02, 1e-5
            st = replica.stationary(pb, P, beta, lam, model)
            dF = (replica.stationary(pb, P, beta, lam * (1 + h), model).free_energy
                  - replica.stationary(pb, P, beta, lam * (1 - h), model).free_energy) / (2 * lam * h)
            o = st.order
            c = pb.feature_variance
            dims = np.array([64.0] + ([8.0] if model == "full" else []))
            mean_norm2_tilde = o.rho**2 + o.sigma2.sum() + dims @ o.r / beta
            assert dF == pytest.approx(0.5 * mean_norm2_tilde / c, rel=1e-6)


def test_limits_and_solver_grid():
    """The solver converges with tiny residual on the figure grids, both models; λ → 0 and
    β → ∞ are continuous; forbidden limits raise."""
    for D, N in ((10, 100), (5, 100), (20, 100), (10, 10)):
        pb = linattn.Problem(D, N)
        for model in ("reduced", "full"):
            for beta, lam in ((1e3, 0.01), (np.inf, 0.01), (np.inf, 0.0)):
                M = pb.n_params(model)
                Ps = [P for P in np.unique(np.round(np.geomspace(1, 1e4, 40))) if not (lam == 0 and P == M)]
                cur = replica.stationary_curve(pb, Ps, beta, lam, model)
                assert cur.converged and cur.max_residual < 1e-9
                assert np.all(np.isfinite(cur.test)) and np.all(cur.test > 0)
    pb = linattn.Problem(10, 100)
    for P in (50, 300):
        a = replica.stationary(pb, P, np.inf, 0.0)
        b = replica.stationary(pb, P, np.inf, 1e-9)
        assert a.test == pytest.approx(b.test, rel=1e-5)
        assert replica.stationary(pb, P, 1e14, 0.01).test == pytest.approx(
            replica.stationary(pb, P, np.inf, 0.01).test, rel=1e-9)
    assert replica.stationary(pb, 50, np.inf, 0.0).train == 0.0     # interpolation
    with pytest.raises(ValueError, match="lam"):
        replica.stationary(pb, 100, np.inf, 0.0)                     # P = M, min-norm diverges
    with pytest.raises(ValueError, match="lam"):
        replica.stationary(pb, 50, 1e3, 0.0)                         # P < M at finite beta


def test_bad_input():
    pb = linattn.Problem(5, 10)
    for kw, name in ((dict(beta=0.0), "beta"), (dict(beta=-2.0), "beta"), (dict(lam=-1e-3), "lam"),
                     (dict(P=0.5), "P"), (dict(model="xl"), "model"), (dict(law="gauss"), "law")):
        args = dict(P=20, beta=1e3, lam=0.01, model="reduced", law="finite")
        args.update(kw)
        with pytest.raises(ValueError, match=name):
            replica.stationary(pb, **args)


def test_phase_boundary():
    """P* exists, lies between the extremes of ΔEr, and decreases with N (longer contexts generalise
    with fewer tasks) — and matches the exact dataset-averaged crossing within the P-grid resolution."""
    Ps = []
    for N in (10, 100):
        pb = linattn.Problem(10, N)
        P_star = replica.phase_boundary(pb, np.inf, 0.01, model="full")
        assert P_star is not None
        assert replica.stationary(pb, P_star, np.inf, 0.01, "full").gap == pytest.approx(5.0, rel=1e-6)
        Ps.append(P_star)
    assert Ps[1] < Ps[0]
    pb = linattn.Problem(10, 100)
    grid = np.geomspace(40, 300, 9)
    means = [replica.dataset_average(pb, int(P), np.inf, 0.01, 60, "full", seed=2) for P in grid]
    P_exact = boundary_from_means(grid, [m.train_mean for m in means], [m.test_mean for m in means])
    assert P_exact == pytest.approx(Ps[1], rel=0.15)   # grid spacing 27 % and sampling noise


def test_resolvent_is_isotropic_along_the_icl_direction():
    """Finding (docs/replica.md §5): by the O(D)⊗O(D) symmetry, E[u_ICLᵀ (H/c + λ')⁻¹ u_ICL] equals
    (1/M) E tr (H/c + λ')⁻¹ exactly (THEORY §3.2(ii) reported 2 % below). 1000 datasets, D = 10,
    P = 100: the mean paired difference is within 4 standard errors of zero, and "2 % below" is
    excluded by more than 4 standard errors."""
    pb = linattn.Problem(10, 100)
    c, lp = pb.feature_variance, 0.01 / pb.feature_variance
    u = np.eye(10).ravel() / np.sqrt(10)
    diff, trace = [], []
    for i in range(1000):
        F = pb.sample(100, rng=(8, i)).features() / np.sqrt(c)
        Ai = np.linalg.inv(F.T @ F / 100 + lp * np.eye(100))
        diff.append(u @ Ai @ u - np.trace(Ai) / 100)
        trace.append(np.trace(Ai) / 100)
    diff = np.array(diff)
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    assert abs(diff.mean()) <= 4 * se
    assert abs(diff.mean() + 0.02 * np.mean(trace)) > 4 * se
