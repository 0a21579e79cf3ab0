"""Per-block weight decay ``lam=(λ_Γ, λ_v)`` in the Langevin simulator and the sweep grid functions,
and the simulator's extreme inputs.

The chain's drift is ``(H + Λ)θ − b``, run in the eigenbasis of ``H + Λ``; its reference values are
``replica.gibbs`` with the same pair (computed there through the rescaled ``v`` block: two independent exact
routes). Sampling tolerance: 4 exact standard errors of the protocol's sample mean (the discrete chain's
autocovariances are known exactly, ``Chain.standard_errors``: autocorrelation-aware) plus the exact O(dt) bias.
"""
import warnings

import numpy as np
import pytest

import linattn
import replica
import validation
from validation import chain, langevin
from validation.experiments import _grid_functions as grid_points

PB = linattn.Problem(4, 10, 0.2)
D, M = 4, 20
LAM = (0.005, 0.3)


def dense_A(data, lam):
    F = data.features("full")
    return F.T @ F / data.P + np.diag(np.r_[np.full(D * D, lam[0]), np.full(D, lam[1])])


def test_the_chain_runs_on_H_plus_Lambda_with_exact_gibbs_references():
    data = PB.sample(40, rng=1)
    A = dense_A(data, LAM)
    ch = chain(data, PB, 200.0, LAM, model="full")
    assert ch.lam == LAM and ch.es.block_decay == LAM
    assert np.max(np.abs(ch.V @ (ch.a[:, None] * ch.V.T) - A)) <= 1e-12 * np.abs(A).max()
    assert ch.lambda_max == pytest.approx(np.linalg.eigvalsh(A).max(), rel=1e-12)
    g = replica.gibbs(data, PB, 200.0, LAM, "full")                      # the rescaled route
    assert ch.gibbs_train == pytest.approx(g.train, rel=1e-10) and ch.gibbs_test == pytest.approx(g.test, rel=1e-10)
    bound = 2.0 / np.linalg.eigvalsh(A).max()                          # γ = 1
    with pytest.raises(ValueError, match="dt"):
        langevin(data, PB, 200.0, LAM, dt=1.001 * bound, model="full")
    eq = chain(data, PB, 200.0, (0.05, 0.05), model="full")             # an equal pair: the common decay
    assert eq.lam == 0.05 and eq.es.block_decay is None
    with pytest.raises(ValueError, match="lam"):
        chain(data, PB, 200.0, LAM, model="reduced")


def test_per_block_langevin_matches_the_exact_gibbs_averages():
    """The seed's protocol (10⁵ equilibration steps, 20 samples 5000 steps apart), 16 chains, dt=None (D = 4,
    N = 10, P = 40, M = 20, β = 200). Measured: train −0.6 s.e., test −0.1 s.e. from the exact values of the pair;
    the exact test error of the common decay λ_Γ is 20 s.e. away, so the test rejects a drift that ignores λ_v."""
    data = PB.sample(40, rng=(2, 40))
    r = langevin(data, PB, 200.0, LAM, n_chains=16, model="full", rng=5)
    assert r.equilibrated and r.lam == LAM
    common = replica.gibbs(data, PB, 200.0, LAM[0], "full")
    for mean, se, exact, bias, other in ((r.train_mean, r.train_se_exact, r.exact_train, r.bias_train, common.train),
                                         (r.test_mean, r.test_se_exact, r.exact_test, r.bias_test, common.test)):
        assert abs(bias) <= 0.25 * se
        assert abs(mean - exact) <= 4 * se + abs(bias), (mean, exact, se)
    assert abs(r.test_mean - common.test) > 4 * r.test_se_exact + abs(r.bias_test)


def test_extreme_decay_and_start():
    """λ = 1e300: A ≈ λI, so at dt = 1/(γλ) every mode is drawn afresh each step (φ = 0) with
    variance 2/(βλ); the sample means agree with the exact discrete-chain means ⟨E⟩ + bias within 4 exact s.e.
    A start of 1e200 whose sampled errors would overflow names ``init``."""
    pb = linattn.Problem(4, 8, 0.1)
    data = pb.sample(10, rng=3)
    beta = 100.0
    r = langevin(data, pb, beta, 1e300, dt=1e-300, n_equilibrate=5, n_samples=200, stride=1, n_chains=4, rng=1)
    assert r.exact_train == pytest.approx(0.5 * data.yq @ data.yq / data.P + 16 / (2 * beta), rel=1e-12)
    assert r.bias_train == pytest.approx(16 / (2 * beta), rel=1e-12)             # v_k = 2/(βa_k): twice Gibbs
    assert abs(r.train_mean - r.exact_train - r.bias_train) <= 4 * r.train_se_exact
    assert r.test_mean == pytest.approx(0.5 * (1 + 0.01), rel=1e-12)            # θ ≈ 0 (|θ|² ~ 1e-302)
    kw = dict(init=np.full(16, 1e200), n_equilibrate=10, n_samples=2, stride=1)
    with pytest.raises(ValueError, match="n_equilibrate"):
        langevin(data, pb, beta, 0.1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="init"):
            langevin(data, pb, beta, 0.1, on_unequilibrated="warn", **kw)
    with pytest.raises(ValueError, match="stride"):      # more steps than the kernels' int64 counter holds
        langevin(data, pb, beta, 0.1, n_equilibrate=10, n_samples=2**20, stride=2**53)


def test_grid_functions_take_the_pair():
    pytest.importorskip("xarray", reason="the sweep grid functions need the optional extra [dask]")
    rng = np.random.default_rng
    got = grid_points.gibbs_point(3, 5, 20, 50.0, 0.01, model="full", lam_v=0.2, rng=rng(0))
    g = replica.gibbs(linattn.Problem(3, 5).sample(20, rng=rng(0)), linattn.Problem(3, 5), 50.0, (0.01, 0.2), "full")
    assert got == {"train": g.train, "test": g.test}
    assert grid_points.gibbs_point(3, 5, 20, 50.0, (0.01, 0.2), model="full", rng=rng(0)) == got
    lim = grid_points.long_time_point(3, 5, 20, 0.01, model="full", lam_v=0.2, rng=rng(0))
    sol = replica.ridge(linattn.Problem(3, 5).sample(20, rng=rng(0)), linattn.Problem(3, 5), (0.01, 0.2), "full")
    assert abs(lim["test"] - sol.test) <= sol.test_bound + 1e-13      # ridge's certified bound (CG route, P > M)
    with pytest.raises(ValueError, match="lam_v"):
        grid_points.gibbs_point(3, 5, 20, 50.0, (0.01, 0.2), model="full", lam_v=0.2, rng=rng(0))
    ds = validation.sweep("gibbs", {"D": [3], "N": [5], "P": [20], "beta": [50.0], "lam": [0.01], "lam_v": [0.01, 0.2],
                                    "model": ["full"]}, workers=1)
    assert ds.test.sel(lam_v=0.01).item() != ds.test.sel(lam_v=0.2).item()
