"""Inference context length N_test ≠ training length N in the stationary theories (fresh tasks and task pools)."""
import dataclasses

import numpy as np
import pytest

import linattn
import replica


@pytest.mark.parametrize("tasks", [None, 6])
def test_theory_at_another_context_length_against_exact_averages(tasks):
    """Models trained at N = 20 (ridge, D = 10, σ = 0.1, λ = 0.005, full model) evaluated at N_test ∈ {5, 80}: the
    exact errors of each dataset's solution (Problem(N=N_test).test_error, with tasks= its pool for the IDG error)
    averaged over 40 datasets, against replica.stationary(..., N_test=N_test). Tolerance E/M + 3 s.e. (as the
    theories' other acceptance tests; the pool theory's own s.e. added). The theory evaluated at the training
    length (the baseline) must miss the N_test = 5 errors."""
    D, N, lam, model = 10, 20, 0.005, "full"
    pb = linattn.Problem(D, N, 0.1, tasks=tasks)
    M = pb.n_params(model)
    for P in (100, 400):
        data = [pb.sample(P, rng=(11, i)) for i in range(40)]
        sols = [replica.ridge(d, pb, lam, model) for d in data]
        for Nt in (5, 80):
            pbt = dataclasses.replace(pb, N=Nt)
            th = replica.stationary(pb, P, np.inf, lam, model, N_test=Nt, n_pools=8)
            base = replica.stationary(pb, P, np.inf, lam, model, n_pools=8)
            rows = [("test", np.array([pbt.test_error(s.Gamma, s.v) for s in sols]))]
            if tasks:
                rows.append(("test_idg", np.array([linattn.pools.idg_error(pbt, d.pool, s.Gamma, s.v)
                                                   for s, d in zip(sols, data)])))
            for name, vals in rows:
                m, se = vals.mean(), vals.std(ddof=1) / np.sqrt(vals.size)
                tse = getattr(th, name + "_se")                 # 0 where nothing is sampled (fresh tasks)
                tol = m / M + 3 * np.hypot(se, tse)
                assert abs(getattr(th, name) - m) <= tol, (P, Nt, name, getattr(th, name), m, se)
                if Nt == 5:
                    assert abs(getattr(base, name) - m) > m / M + 3 * se, (P, name)
            assert th.N_test == Nt


def test_n_test_equal_to_n_is_the_default():
    """Identities (exact at any number of pools: 2 where it can be chosen; the default 16 costs 8 times as much)."""
    for tasks in (None, 4):
        pb = linattn.Problem(8, 12, 0.1, tasks=tasks)
        a = replica.stationary(pb, 100, 50.0, 0.01, "full", n_pools=2)
        b = replica.stationary(pb, 100, 50.0, 0.01, "full", N_test=12, n_pools=2)
        assert (a.train, a.test, a.test_idg) == (b.train, b.test, b.test_idg)
        for law in (("finite", "mp", "factor") if tasks else ("finite",)):     # training errors ignore N_test
            c = replica.stationary(pb, 100, 50.0, 0.01, "full", law=law, n_pools=2)
            d = replica.stationary(pb, 100, 50.0, 0.01, "full", law=law, N_test=40, n_pools=2)
            assert c.train == d.train and c.test != d.test, law
        with pytest.raises(ValueError, match="N_test"):
            replica.stationary(pb, 100, 50.0, 0.01, "full", N_test=0, n_pools=2)
        curve = replica.stationary_curve(pb, [300], 50.0, 0.01, "full", N_test=40)   # the curve passes it on
        point = replica.stationary(pb, 300, 50.0, 0.01, "full", N_test=40)         # (at its default pools)
        assert curve.N_test == 40 and (curve.test[0], curve.train[0]) == (point.test, point.train)
        if tasks:
            assert curve.test_idg[0] == point.test_idg
        with pytest.raises(ValueError, match="N_test"):
            replica.stationary_curve(pb, [100], 50.0, 0.01, "full", N_test=2.5)


@pytest.mark.parametrize("alpha_test,tau,ridge_L", [(0.25, 2.0, 0.1), (4.0, 0.5, 0.1), (4.0, 3.0, 0.0)])
def test_asymptotic_test_context_ratio_is_the_limit_of_the_finite_d_theory(alpha_test, tau, ridge_L):
    """replica.asymptotic(..., test_context_ratio=α_test) (the norm term reweighted by ξ_test + 1) against the Gaussian
    pool theory with N_test = α_test D, quadratically extrapolated in 1/D over D = 1000 … 8000 (the check of the
    N_test = N case in tests/replica/test_pools.py, 1e-8): measured within 1e-10. Asserted: 1e-8, and the errors
    at N_test differ from those at N (the baseline) by more than that."""
    alpha, kappa, noise = 1.0, 0.5, 0.1
    th = replica.asymptotic(alpha, tau, kappa, noise, ridge_L, test_context_ratio=alpha_test)
    same = replica.asymptotic(alpha, tau, kappa, noise, ridge_L)
    Ds = np.array([1000, 2000, 4000, 8000])
    vals = np.array([(lambda st: (st.test, st.test_idg))(replica.stationary(
        linattn.Problem(int(D), int(alpha * D), noise, tasks=int(kappa * D), task_law="sphere"), tau * D * D, np.inf,
        ridge_L / D, "reduced", law="mp", pool="mp", N_test=int(alpha_test * D))) for D in Ds])
    for k, (ref, base) in enumerate(((th.test, same.test), (th.test_idg, same.test_idg))):
        extrap = np.polyval(np.polyfit(1.0 / Ds, vals[:, k], 2), 0.0)
        assert abs(extrap - ref) < 1e-8 < abs(base - ref), (k, extrap, ref, base)


# ----------------------------------------------------------------------------- per-dataset engines at N_test
def _dense_reference(data, pb, beta, lam, model, N_test):
    """``(⟨E_g⟩, ⟨E_IDG⟩ or None)`` at ``N_test`` from dense matrices: ``θ* = A⁻¹b`` with ``A = FᵀF/P + Λ``, the error
    of ``θ*`` by ``pb.test_error(Γ, v, N_test=)`` and the thermal part ``tr(C_t A⁻¹)/(2β)`` with the diagonal metric
    ``C_t = diag(c(N_test), c_v(N_test))`` (the pool's: ``tr(C_W A⁻¹)``, :func:`linattn.pools.idg_metric`)."""
    D, P = pb.D, data.P
    F = data.features(model)
    M = F.shape[1]
    lg, lv = (lam, lam) if np.ndim(lam) == 0 else lam
    A = F.T @ F / P + np.diag(np.r_[np.full(D * D, lg), np.full(M - D * D, lv)])
    theta = np.linalg.solve(A, F.T @ data.yq / P)
    G, v = linattn.unpack(theta, D, model)
    test = pb.test_error(G, v, N_test=N_test)
    idg = linattn.pools.idg_error(pb, data.pool, G, v, N_test=N_test) if data.pool is not None else None
    if np.isfinite(beta):
        pbt = dataclasses.replace(pb, N=N_test)
        Ainv = np.linalg.inv(A)
        metric = np.r_[np.full(D * D, pbt.feature_variance), np.full(M - D * D, pbt.feature_variance_v)]
        test += float(metric @ np.diag(Ainv)) / (2 * beta)
        if idg is not None:
            idg += float(np.trace(linattn.pools.idg_metric(pbt, data.pool, model).apply(Ainv))) / (2 * beta)
    return test, idg


GIBBS_CASES = [(model, lam, tasks, P) for model, lam in (("reduced", 0.02), ("full", 0.02), ("full", (0.02, 0.1)))
               for tasks in (None, 3) for P in (12, 40)]


@pytest.mark.parametrize("model, lam, tasks, P", GIBBS_CASES)
def test_gibbs_and_ridge_at_another_context_length_are_exact(model, lam, tasks, P):
    """replica.gibbs(..., N_test=) at β ∈ {∞, 20, 10³} and replica.ridge(..., N_test=) against the dense reference
    (θ* by a dense solve, its error by pb.test_error(Γ, v, N_test=), the thermal trace of the metric at N_test), D = 4,
    N = 6, N_test ∈ {2, 15}: P = 12 < M (Gram path with a null space) and P = 40 >= M (dense / CG), fresh tasks and a
    3-task pool (test_idg). Relative 1e-10 (measured ≤ 1e-14; the reference inverts A in float64). The errors at the
    training length differ from the references by far more (the test can fail)."""
    pb = linattn.Problem(4, 6, 0.3, tasks=tasks)
    data = pb.sample(P, rng=(5, P))
    betas = [np.inf, 20.0, 1e3]
    for Nt in (2, 15):
        g = replica.gibbs(data, pb, betas, lam, model, N_test=Nt)
        base = replica.gibbs(data, pb, betas, lam, model)
        r = replica.ridge(data, pb, lam, model, N_test=Nt)
        assert g.N_test == Nt and r.N_test == Nt
        for i, beta in enumerate(betas):
            test, idg = _dense_reference(data, pb, beta, lam, model, Nt)
            assert g.test[i] == pytest.approx(test, rel=1e-10), (Nt, beta)
            assert abs(base.test[i] / test - 1) > 1e-3, (Nt, beta)
            if tasks:
                assert g.test_idg[i] == pytest.approx(idg, rel=1e-10), (Nt, beta)
                assert abs(base.test_idg[i] / idg - 1) > 1e-3, (Nt, beta)
        assert g.test_ridge[0] == g.test[0]
        # ridge: its own parameters through pb.test_error at N_test, and the dense reference (CG certified to 1e-8)
        assert r.test == pytest.approx(pb.test_error(r.Gamma, r.v, N_test=Nt), rel=1e-10)
        assert r.test == pytest.approx(g.test[0], rel=1e-6)
        if tasks:
            idg = linattn.pools.idg_error(pb, data.pool, r.Gamma, r.v, N_test=Nt)
            assert r.test_idg == pytest.approx(idg, rel=1e-10)
        assert r.train == replica.ridge(data, pb, lam, model).train
        assert np.array_equal(g.train, base.train) and np.array_equal(g.free_energy, base.free_energy)


def test_gibbs_accepts_the_eigensystem_of_h_plus_lambda_at_n_test():
    """The per-block decay's other representation (spectra.eigensystem(..., lam=(λ_Γ, λ_v)), the Langevin
    simulator's) gives the same Gibbs averages at N_test as the rescaled one (relative 1e-10)."""
    import spectra

    pb = linattn.Problem(4, 6, 0.3, tasks=3)
    data = pb.sample(40, rng=9)
    lam = (0.02, 0.1)
    es = spectra.eigensystem(data, pb, "full", lam=lam)
    a = replica.gibbs(es, pb, [np.inf, 20.0], lam, "full", N_test=15)
    b = replica.gibbs(data, pb, [np.inf, 20.0], lam, "full", N_test=15)
    np.testing.assert_allclose(a.test, b.test, rtol=1e-10)
    np.testing.assert_allclose(a.test_idg, b.test_idg, rtol=1e-10)


def test_dataset_average_at_n_test_averages_gibbs():
    pb = linattn.Problem(4, 6, 0.3)
    avg = replica.dataset_average(pb, 30, 50.0, 0.02, n_datasets=3, model="full", rng=4, N_test=15)
    each = [float(replica.gibbs(pb.sample(30, rng=(4, 30, i)), pb, 50.0, 0.02, "full", N_test=15).test)
            for i in range(3)]
    assert avg.N_test == 15 and np.array_equal(avg.test, each)


def test_n_test_none_or_n_is_bit_for_bit_the_training_length():
    """N_test=None and N_test=N run the unchanged code path (ridge, gibbs, dataset_average): identical values."""
    for tasks in (None, 3):
        pb = linattn.Problem(4, 6, 0.3, tasks=tasks)
        for P in (12, 40):
            data = pb.sample(P, rng=P)
            for lam in (0.02, (0.02, 0.1)):
                r0, r1, r2 = (replica.ridge(data, pb, lam, "full", **kw) for kw in ({}, dict(N_test=None),
                                                                                   dict(N_test=6)))
                for r in (r1, r2):
                    fields = ("test", "test_idg", "test_bound", "train")
                    assert [getattr(r, f) for f in fields] == [getattr(r0, f) for f in fields]
                g0, g1, g2 = (replica.gibbs(data, pb, [np.inf, 20.0], lam, "full", **kw)
                              for kw in ({}, dict(N_test=None), dict(N_test=6)))
                for g in (g1, g2):
                    for name in ("test", "test_ridge", "test_idg", "test_idg_ridge", "train", "free_energy"):
                        assert np.array_equal(getattr(g, name), getattr(g0, name)), name
        a0 = replica.dataset_average(pb, 20, 50.0, 0.02, n_datasets=2, model="full")
        a1 = replica.dataset_average(pb, 20, 50.0, 0.02, n_datasets=2, model="full", N_test=6)
        assert np.array_equal(a0.test, a1.test)


@pytest.mark.parametrize("bad", [0, -1, 2.5, "x", True, np.nan])
def test_bad_n_test_is_refused(bad):
    pb = linattn.Problem(3, 4, 0.1)
    data = pb.sample(12, rng=0)
    calls = [lambda: replica.ridge(data, pb, 0.1, N_test=bad), lambda: replica.gibbs(data, pb, 10.0, 0.1, N_test=bad),
             lambda: replica.dataset_average(pb, 5, 10.0, 0.1, n_datasets=2, N_test=bad)]
    for call in calls:
        with pytest.raises(ValueError, match="N_test"):
            call()


def test_gibbs_at_n_test_against_raw_token_monte_carlo():
    """Monte Carlo from the definition: parameters drawn from the Gibbs measure N(θ*, A⁻¹/β) of one dataset trained at
    N = 8 (D = 4, σ = 0.3, P = 40, full model, λ = 0.05, β = 30), one fresh draw per test prompt, each test prompt
    N_test = 3 raw tokens x_i ~ N(0, I), a fresh task, ŷ = sᵀΓx_q + y2 v·x_q from the tokens; 200 000 prompts.
    replica.gibbs(..., N_test=3) within 4 s.e. (measured +1.6 s.e.); the error at the training length (the baseline)
    is rejected (measured −38 s.e.)."""
    D, N, Nt, P, lam, beta, n = 4, 8, 3, 40, 0.05, 30.0, 200_000
    pb = linattn.Problem(D, N, 0.3)
    data = pb.sample(P, rng=21)
    F = data.features("full")
    A = F.T @ F / P + lam * np.eye(F.shape[1])
    theta_star = np.linalg.solve(A, F.T @ data.yq / P)
    gen = np.random.default_rng(22)
    thetas = theta_star + gen.standard_normal((n, F.shape[1])) @ np.linalg.cholesky(np.linalg.inv(A) / beta).T
    G, v = linattn.unpack(thetas, D, "full")
    tok = linattn.sample_tokens(dataclasses.replace(pb, N=Nt), n, rng=gen)
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / Nt
    y2 = np.einsum("pn,pn->p", tok.y, tok.y) / Nt
    pred = np.einsum("pa,pab,pb->p", s, G, tok.xq) + y2 * np.einsum("pd,pd->p", v, tok.xq)
    loss = 0.5 * (tok.yq - pred) ** 2
    mean, se = loss.mean(), loss.std(ddof=1) / np.sqrt(n)
    th = float(replica.gibbs(data, pb, beta, lam, "full", N_test=Nt).test)
    base = float(replica.gibbs(data, pb, beta, lam, "full").test)
    assert abs(th - mean) <= 4 * se, (th, mean, se)
    assert abs(base - mean) > 4 * se, (base, mean, se)
