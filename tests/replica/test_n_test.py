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
            th_se = (replica.pool_theory.pool_errors(pb, P, np.inf, lam, model, n_pools=8, N_test=Nt)
                     if tasks else None)
            base = replica.stationary(pb, P, np.inf, lam, model, n_pools=8)
            rows = [("test", np.array([pbt.test_error(s.Gamma, s.v) for s in sols]))]
            if tasks:
                rows.append(("test_idg", np.array([pbt.test_error(s.Gamma, s.v, tasks=d.pool)
                                                   for s, d in zip(sols, data)])))
            for name, vals in rows:
                m, se = vals.mean(), vals.std(ddof=1) / np.sqrt(vals.size)
                tse = getattr(th_se, name + "_se") if tasks else 0.0
                tol = m / M + 3 * np.hypot(se, tse)
                assert abs(getattr(th, name) - m) <= tol, (P, Nt, name, getattr(th, name), m, se)
                if Nt == 5:
                    assert abs(getattr(base, name) - m) > m / M + 3 * se, (P, name)
            assert th.N_test == Nt


def test_n_test_equal_to_n_is_the_default():
    for tasks in (None, 4):
        pb = linattn.Problem(8, 12, 0.1, tasks=tasks)
        a = replica.stationary(pb, 100, 50.0, 0.01, "full")
        b = replica.stationary(pb, 100, 50.0, 0.01, "full", N_test=12)
        assert (a.train, a.test, a.test_idg) == (b.train, b.test, b.test_idg)
        for law in (("finite", "mp", "factor") if tasks else ("finite",)):     # training errors ignore N_test
            c = replica.stationary(pb, 100, 50.0, 0.01, "full", law=law)
            d = replica.stationary(pb, 100, 50.0, 0.01, "full", law=law, N_test=40)
            assert c.train == d.train and c.test != d.test, law
        with pytest.raises(ValueError, match="N_test"):
            replica.stationary(pb, 100, 50.0, 0.01, "full", N_test=0)


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
