"""Issue "No silent wrong answer, round 3": replica's extreme but valid arguments."""
import numpy as np
import pytest

import linattn
import replica
from linattn.numerics import quadrature
from replica import pool_finite
from replica.kernel_ridge import kernel_data, kernel_ridge

PB = linattn.Problem(D=4, N=8, noise=0.1)
EPS = float(np.finfo(float).eps)


def _theta(sol):
    return np.concatenate([sol.Gamma.ravel()] + ([sol.v] if sol.v is not None else []))


def _repeated(P_distinct, times, rng, labels=None):
    d = PB.sample(P_distinct, rng=rng)
    idx = np.tile(np.arange(P_distinct), times)
    yq = d.yq[idx] if labels is None else labels
    return linattn.Prompts(s=d.s[idx], xq=d.xq[idx], yq=yq, y2=d.y2[idx])


def _min_norm(data, model):
    """``F⁺y`` by numpy's SVD least squares; its error is ``O(κ ε)`` relative (κ the nonzero spectrum's condition
    number, printed by the caller's tolerance)."""
    F = data.features(model)
    theta, _, rank, sv = np.linalg.lstsq(F, data.yq, rcond=None)
    return theta, sv[0] / sv[rank - 1]


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("distinct, times", [(5, 5), (10, 3), (3, 3), (12, 4)])
def test_min_norm_with_repeated_prompts(model, distinct, times):
    """Defect 1: repeated prompts (rank-deficient features, P >= M or P < M) give the min-norm solution F⁺y, on
    both routes; the before-fix CG route returned another interpolant (D = 4, 5 prompts x 5: |Γ| = 5.15 vs 2.71)."""
    data = _repeated(distinct, times, rng=distinct)
    sol = replica.ridge(data, PB, 0.0, model)
    ref, kappa = _min_norm(data, model)
    tol = 1e3 * kappa * EPS                    # backward-stable solvers: relative error <= O(κ ε)
    assert np.linalg.norm(_theta(sol) - ref) <= tol * np.linalg.norm(ref)
    assert sol.certified


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_min_norm_with_inconsistent_repeated_labels_is_lambda_limit(model):
    """Defect 1: duplicated prompts with different labels: least squares of least norm, which is also the λ → 0
    limit of ridge (|θ_λ − θ⁺| <= (λ/e_min)|θ⁺|, e_min the least nonzero eigenvalue of H)."""
    labels = np.random.default_rng(0).standard_normal(48)
    data = _repeated(12, 4, rng=4, labels=labels)
    sol = replica.ridge(data, PB, 0.0, model)
    ref, kappa = _min_norm(data, model)
    assert np.linalg.norm(_theta(sol) - ref) <= 1e3 * kappa * EPS * np.linalg.norm(ref)
    F = data.features(model)
    e = np.linalg.eigvalsh(F.T @ F / data.P)
    e_min = e[e > 1e-10 * e[-1]][0]
    lam = 1e-9
    small = replica.ridge(data, PB, lam, model)
    assert np.linalg.norm(_theta(small) - ref) <= (2 * lam / e_min + 1e-7) * np.linalg.norm(ref)
    resid = data.yq - F @ ref
    assert sol.train == pytest.approx(0.5 * float(resid @ resid) / data.P, rel=1e-10)


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_min_norm_with_queries_in_a_subspace(model):
    """Defect 1 (Kronecker null space): every query with x_q[D-1] = 0, P >= M: the CG route at λ = 0 stays in
    span(z) ⊗ span(x_q) and returns F⁺y."""
    d = PB.sample(40, rng=1)
    xq = d.xq.copy()
    xq[:, -1] = 0.0
    data = linattn.Prompts(s=d.s, xq=xq, yq=d.yq, y2=d.y2)
    sol = replica.ridge(data, PB, 0.0, model)
    assert sol.method == "cg"
    ref, kappa = _min_norm(data, model)
    assert np.linalg.norm(_theta(sol) - ref) <= 1e3 * kappa * EPS * np.linalg.norm(ref)


@pytest.mark.parametrize("P", [5, 30])
@pytest.mark.parametrize("lam", [0.0, 0.1])
@pytest.mark.parametrize("model", ["reduced", "full"])
def test_zero_labels_give_zero(P, lam, model):
    """Defect 2: all-zero labels (ZeroDivisionError on the Gram route, ConvergenceError on CG before): θ* = 0."""
    d = PB.sample(P, rng=0)
    data = linattn.Prompts(s=d.s, xq=d.xq, yq=np.zeros(P), y2=d.y2)
    sol = replica.ridge(data, PB, lam, model)
    assert not np.any(_theta(sol)) and sol.train == 0.0 and sol.certified
    assert sol.test == pytest.approx(0.5 * (1 + PB.noise**2), rel=1e-15)


def test_zero_contexts_give_zero():
    """b = Fᵀy/P = 0 with nonzero labels (every s = 0): θ* = 0, not a ConvergenceError."""
    d = PB.sample(30, rng=1)
    data = linattn.Prompts(s=np.zeros_like(d.s), xq=d.xq, yq=d.yq)
    for lam in (0.0, 0.1):
        sol = replica.ridge(data, PB, lam)
        assert not np.any(sol.Gamma) and sol.train == pytest.approx(0.5 * np.mean(d.yq**2), rel=1e-14)


@pytest.mark.parametrize("P", [10, 30])
def test_ridge_huge_lambda_without_warning(P):
    """λ = 1e300: θ* = b/λ + O(λ⁻²), test error V/2 (the float32 Gram shift overflowed before, with a warning)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = replica.ridge(PB.sample(P, rng=1), PB, 1e300)
    assert sol.test == pytest.approx(0.5 * (1 + PB.noise**2), rel=1e-15)


def test_kernel_ridge_extreme_lambda():
    """Defect 3: λ = 1e300 (ConvergenceError before) gives Γ ≈ b/λ and E = V/2; λ = 1e-300 is refused naming
    lam (it asked to raise maxiter)."""
    data = kernel_data(PB, 20, rng=0)
    sol = kernel_ridge(data, PB, 1e300)
    assert sol.certified and np.max(np.abs(sol.Gamma)) < 1e-290
    assert sol.test == pytest.approx(0.5 * (1 + PB.noise**2), rel=1e-15)
    with pytest.raises(ValueError, match="lam"):
        kernel_ridge(data, PB, 1e-300)


def test_kernel_ridge_zero_labels():
    data = kernel_data(PB, 20, rng=0)
    zero = type(data)(s=data.s, phi=data.phi, yq=np.zeros(20), pool=None, features=data.features, N=data.N)
    sol = kernel_ridge(zero, PB, 0.1)
    assert not np.any(sol.Gamma) and sol.certified


def test_kernel_ridge_refuses_another_link():
    """Defect 8: data made with the linear link, problem with tanh (or another noise): refused, naming pb."""
    data = kernel_data(PB, 20, rng=0)
    with pytest.raises(ValueError, match="pb.*link"):
        kernel_ridge(data, linattn.Problem(D=4, N=8, noise=0.1, link="tanh"), 0.1)
    with pytest.raises(ValueError, match="pb.*noise"):
        kernel_ridge(data, linattn.Problem(D=4, N=8, noise=0.2), 0.1)


PB_POOL = linattn.Problem(D=4, N=8, noise=0.1, tasks=3)


@pytest.mark.parametrize("law", ["finite", "mp", "factor"])
def test_pool_theory_lambda_zero_at_finite_beta(law):
    """Defect 4: λ = 0, P > M, finite β (ZeroDivisionError before): the limit κ/λ → P/(P − M); continuous in λ
    (|E(λ) − E(0)| = O(λ), checked at λ = 1e-9 within 1e-6 relative)."""
    at0 = replica.stationary(PB_POOL, 40, 100.0, 0.0, law=law, n_pools=2)
    near = replica.stationary(PB_POOL, 40, 100.0, 1e-9, law=law, n_pools=2)
    for k in ("train", "test", "test_idg"):
        assert getattr(at0, k) == pytest.approx(getattr(near, k), rel=1e-6)


@pytest.mark.parametrize("law", ["finite", "mp", "factor"])
@pytest.mark.parametrize("lam", [1e30, 1e100, 1e300])
def test_pool_theory_huge_lambda_is_the_trivial_limit(law, lam):
    """Defect 4: λ → ∞ (OverflowError / brentq sign error / NaN before): Γ → 0, so test = V/2 = ½(1 + σ²) exactly,
    train = test_idg = ½ E_pool[y²] (the decay term λ|Θ̄|² ~ 1/λ vanishes) and finite β adds M/(2β) to train."""
    th = replica.stationary(PB_POOL, 10, np.inf, lam, law=law, n_pools=2)
    assert th.test == pytest.approx(0.5 * (1 + PB_POOL.noise**2), rel=1e-14)
    # law="finite": the training fit is the average over 8192 Sobol prompt types, test_idg the exact pool moment;
    # they differ by that quadrature's error (measured 1e-4 relative at D = 4), hence 1e-3 there
    assert th.train == pytest.approx(th.test_idg, rel=1e-3 if law == "finite" else 1e-12)
    hot = replica.stationary(PB_POOL, 10, 10.0, lam, law=law, n_pools=2)
    assert hot.train == pytest.approx(th.train + 16 / 20.0, rel=1e-12)
    assert hot.test == pytest.approx(th.test, rel=1e-12)


def test_pool_theory_refuses_a_pool_beyond_float64():
    """Defect 4: a pool of entries 1e200 (LinAlgError before) is refused, naming pool."""
    with pytest.raises(ValueError, match="pool"):
        replica.stationary(PB_POOL, 10, np.inf, 0.1, pool=np.full((3, 4), 1e200))


def test_pool_finite_validates_its_arguments():
    """Defect 5: radial_nodes(0) returned NaN nodes (now linattn.numerics.quadrature.chi_square_rule); every public
    function of pool_finite checks its arguments."""
    with pytest.raises(ValueError, match="D"):
        quadrature.chi_square_rule(0, 8)
    with pytest.raises(ValueError, match="n"):
        quadrature.chi_square_rule(4, 0)
    r, w = quadrature.chi_square_rule(4, 8)
    assert np.all(np.isfinite(r)) and w.sum() == pytest.approx(1.0, rel=1e-14)
    pool = np.random.default_rng(0).standard_normal((3, 4))
    with pytest.raises(ValueError, match="pb"):
        pool_finite.prompt_types(PB, pool, "reduced", 256, 0)
    with pytest.raises(ValueError, match="pool"):
        pool_finite.prompt_types(PB_POOL, np.ones((3, 5)), "reduced", 256, 0)
    with pytest.raises(ValueError, match="model"):
        pool_finite.prompt_types(PB_POOL, pool, "xl", 256, 0)
    Z, U = pool_finite.prompt_types(PB_POOL, pool, "reduced", 256, 0)
    from linattn.pools import task_moments

    mom = task_moments(PB_POOL, pool)
    for kwargs, name in ((dict(P=0.5), "P"), (dict(lam=-1.0), "lam"), (dict(beta=0.0), "beta"),
                         (dict(Z=Z[:, :3]), "Z"), (dict(U=U[:10]), "U"), (dict(N_test=0), "N_test"),
                         (dict(model="xl"), "model")):
        args = dict(pb=PB_POOL, P=10.0, beta=np.inf, lam=0.1, model="reduced", Z=Z, U=U, moments=mom)
        args.update(kwargs)
        with pytest.raises(ValueError, match=name):
            pool_finite.solve(**args)
    with pytest.raises(ValueError, match="n_types"):
        pool_finite.check_types(100)


def test_feature_theory_names_n_test():
    """Defect 7: N_test = 10⁹ is refused naming N_test (the message blamed P)."""
    with pytest.raises(ValueError, match="N_test"):
        replica.learner_theory(PB, 20, 0.1, learner="feature", N_test=10**9)


@pytest.mark.parametrize("link", ["tanh", "relu"])
def test_feature_theory_large_decay_is_the_constant_readout(link):
    """Defect 7: at λ = 1 … 1e300 the balanced decay λ/‖W‖ has no fixed point (λ above λ* = lim λ_eff‖Γ̂‖, 0.16 for
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
    ft = replica.feature_theory                             # the Γ̂ law of that call (cached): tol = 1e-8 on log λ_eff
    law, lam_eff = ft._balanced(pb, 200.0, 0.01, None, ft.label_mean(pb), 0, "balanced", 50, 1e-8)
    assert np.isfinite(below.lam_effective) and below.test < 0.5 * (V - Ey**2)
    assert lam_eff * np.sqrt(law.norm2) == pytest.approx(0.01, rel=1e-7)      # the fixed point λ_eff‖Γ̂‖ = λ


def test_huge_pool_average_is_refused_not_run_for_minutes():
    """Class 5 (hangs): a pool average over 16 × 32 drawn pools of K = 10⁶ tasks (D = 20: 10¹⁰ task entries, about
    ten minutes) ran; it is refused naming pb.tasks and the largest K, and the suggested large-D route answers."""
    pb = linattn.Problem(20, 40, 0.1, tasks=10**6)
    with pytest.raises(ValueError, match=r"pb\.tasks.*K <= 104857 "):
        replica.stationary(pb, 1000, np.inf, 0.01, "reduced")
    mp = replica.stationary(pb, 1000, np.inf, 0.01, "reduced", law="mp", pool="mp")
    assert np.isfinite(mp.test) and np.isfinite(mp.train)
