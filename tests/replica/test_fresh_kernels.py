"""The loops of the fresh-task kernel equations (replica._fresh_kernels) against the same sums written as numpy
array expressions (the form they replaced), on random inputs: equal to round-off."""
import numpy as np
import pytest

from replica import _fresh_kernels as kernels


def _inputs(nb, n=257, m=13, n_nodes=5, seed=0):
    rng = np.random.default_rng(seed)
    sig = rng.uniform(0.1, 2.0, (n, nb))
    p = rng.standard_normal((n, nb))
    node = np.sort(rng.integers(0, n_nodes, n))
    mco = rng.standard_normal((n_nodes, m, nb))
    Ey2 = rng.uniform(0.5, 3.0, (n_nodes, m))
    wc = rng.uniform(0.0, 1.0, n)
    wc /= wc.sum()
    rho = rng.uniform(0.1, 2.0, (m, nb))
    wR = rng.uniform(0.0, 1.0, m)
    a = rng.uniform(0.1, 1.0, (nb, nb))
    gam = rng.standard_normal(nb)
    d = rng.integers(1, 20, nb).astype(float)
    return sig, p, node, mco, Ey2, wc, rho, wR, a, gam, d


def _contexts_last(*arrays):
    return [np.ascontiguousarray(np.moveaxis(x, 0, -1)) for x in arrays]


@pytest.mark.parametrize("nb", [1, 3])
def test_the_sums_equal_their_array_expressions(nb):
    """Every sum of the kernels equals its numpy expression within 1e-12 relative (the kernels add in another
    order; round-off is ~1e-15 per term at these sizes)."""
    P = 37.0
    sig, p, node, mco, Ey2, wc, rho, wR, a, gam, d = _inputs(nb)
    sigT, pT, mcoT, Ey2T = _contexts_last(sig, p, mco, Ey2)
    om = 1.0 / (1.0 + sig @ a @ rho.T / P)                              # (n, m)
    wt = wc[:, None] * wR
    Y = p[:, None, :] * mco[node]                                       # (n, m, nb)
    e0 = Ey2[node] - 2.0 * Y @ gam + (sig * (gam**2 / d)) @ rho.T
    W = om * om * wt
    expected = {
        "E": sig.T @ (om * wt) @ rho,
        "h": np.einsum("nj,njl->l", om * wt, Y),
        "b0": sig.T @ (W * e0) @ rho,
        "T": np.einsum("nj,nl,nm,jk,jo->lmko", W, sig, sig, rho, rho),
        "S": sig.T @ W @ rho,
        "f0": np.sum(W * e0),
    }
    got = {"E": kernels.resolvent_sums(sigT, a, rho, wc, wR, P),
           "h": kernels.label_sums(sigT, a, rho, wc, wR, pT, node, mcoT, P)}
    got["b0"], got["T"], got["S"], got["f0"] = kernels.residual_moments(sigT, a, rho, wc, wR, pT, node, mcoT, Ey2T,
                                                                         gam, d, P)
    for key, want in expected.items():
        np.testing.assert_allclose(got[key], want, rtol=1e-12, atol=1e-12 * np.max(np.abs(want)), err_msg=key)


def _solve_fresh_arrays(sig, p, node, mco, Ey2, wc, rho, wR, d, metric, P, lam):
    """The fresh-task equations written with ``(contexts × query scales)`` arrays (the form the loops replaced):
    the reference of :func:`test_solve_fresh_equals_its_array_form`."""
    from linattn._numerics.fixed_point import anderson

    nb = d.size
    dd = np.outer(d, d)
    Y, Ey2 = p[:, None, :] * mco[node], Ey2[node]
    wt = wc[:, None] * wR

    def omega(a):
        return 1.0 / (1.0 + (sig @ a @ rho.T) / P)

    def resolvent(loga):
        return -np.log(lam + sig.T @ (omega(np.exp(loga).reshape(nb, nb)) * wt) @ rho / dd).ravel()

    fp = anderson(resolvent, -np.log(lam + np.outer(wc @ sig, d) / dd).ravel(), 1e-11, 3000)
    a = np.exp(fp.x).reshape(nb, nb)
    om = omega(a)
    gam = np.diag(a) * np.einsum("nj,njl->l", om * wt, Y) / d
    e0 = Ey2 - 2.0 * Y @ gam + (sig * (gam**2 / d)) @ rho.T
    w2 = om * om * wt
    b0 = sig.T @ (w2 * e0) @ rho / dd
    n = sig.shape[0]
    X = (sig[:, :, None] * sig[:, None, :]).reshape(n, nb * nb)
    Z = (rho[:, :, None] * rho[:, None, :]).reshape(-1, nb * nb)
    T = (X.T @ w2 @ Z).reshape(nb, nb, nb, nb).transpose(0, 2, 1, 3) / dd[:, :, None, None]
    coef = a * a / P
    C = np.linalg.solve(np.eye(nb * nb) - (coef[:, :, None, None] * T).reshape(nb * nb, nb * nb),
                        (coef * b0).ravel()).reshape(nb, nb)
    fit = float(np.sum(w2 * (e0 + sig @ C @ rho.T)))
    St, Bt, Vt = metric
    test = 0.5 * (Vt - 2.0 * float(np.sum(Bt * gam * d)) + float(np.sum(St * gam**2 * d))
                  + float(np.sum(St[:, None] * C * dd)))
    return dict(gamma=gam, C=C, fit=fit, test=test, a=a)


@pytest.mark.parametrize("nb", [1, 3])
def test_solve_fresh_equals_its_array_form(nb):
    """replica._kernel_solver.solve_fresh (the loops, contexts last, per-node label moments) against the same
    equations with (contexts × query scales) arrays, on random inputs with fewer nodes than query scales: the fixed
    point, the mean, the covariance, the fit and the test error agree within 1e-9 relative (both solve to 1e-11)."""
    from replica._kernel_solver import solve_fresh

    sig, p, node, mco, Ey2, wc, rho, wR, _, _, d = _inputs(nb, seed=3)
    wR = wR / wR.sum()
    metric = (np.random.default_rng(4).uniform(0.5, 1.5, nb), np.random.default_rng(5).uniform(0.1, 0.5, nb), 1.3)
    P, lam = 50.0, 0.05
    got = solve_fresh(sig, p, node, mco, Ey2, wc, rho, wR, d, metric, P, lam)
    want = _solve_fresh_arrays(sig, p, node, mco, Ey2, wc, rho, wR, d, metric, P, lam)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-9, atol=1e-12, err_msg=key)
