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
