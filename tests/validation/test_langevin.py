"""The Langevin sampler against its stationary law (rung 4), its exact discrete-time properties,
the random-number generator, the autocorrelation estimator, and bad input (rung 5)."""
import functools

import numpy as np
import pytest
from helpers import assert_refused, name_as_word, refusals
from scipy import stats

import linattn
import validation
from validation import chain, integrated_time, langevin, mean_and_se
from validation.simulators import _langevin_kernels as _kernels

PB = linattn.Problem(10, 100)


ZX, ZF = _kernels.ZIG_X, _kernels.ZIG_F


def test_ziggurat_tables():
    """256 strips of equal area v under exp(−x²/2): x·(f(x_{i+1}) − f(x_i)) = v for every layer."""
    v = ZX[1] * ZF[1] + np.sqrt(np.pi / 2) * __import__("scipy.special").special.erfc(ZX[1] / np.sqrt(2))
    areas = ZX[1:-1] * (ZF[2:] - ZF[1:-1])
    assert np.allclose(areas, v, rtol=1e-10)
    assert ZX[-1] == 0 and ZF[-1] == 1.0 and ZX[0] * ZF[1] == pytest.approx(v)


@pytest.mark.parametrize("sampler", ["ziggurat", "polar"])
def test_rng_is_standard_normal_and_reproducible(sampler):
    def fill(state, out):
        if sampler == "ziggurat":
            _kernels.fill_normal(state, out, ZX, ZF)
        else:
            _kernels.fill_normal_polar(state, out)

    state = np.empty(4, np.uint64)
    _kernels.seed_state(7, 3, state)
    x = np.empty(400_001)
    fill(state, x)
    assert stats.kstest(x, "norm").pvalue > 1e-3
    assert abs(x.mean()) < 4 / np.sqrt(x.size)
    assert abs(x.var() - 1) < 4 * np.sqrt(2 / x.size)
    tail = np.mean(np.abs(x) > 3.6541528853610088)   # the ziggurat's tail branch, P = 2.6e-4
    assert abs(tail - 2 * stats.norm.sf(3.6541528853610088)) < 4 * np.sqrt(2.6e-4 / x.size)
    _kernels.seed_state(7, 3, state)
    y = np.empty(10)
    fill(state, y)
    assert np.array_equal(x[:10], y)
    _kernels.seed_state(7, 4, state)
    fill(state, y)
    assert not np.array_equal(x[:10], y)


def test_integrated_time_of_an_ar1_process():
    """τ = (1 + φ)/(1 − φ) for AR(1); 64 chains of 4000 steps estimate it within 10 %."""
    rng = np.random.default_rng(1)
    phi = 0.8
    x = np.zeros((64, 4000))
    e = rng.standard_normal(x.shape)
    for t in range(1, 4000):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    assert integrated_time(x[:, 500:]) == pytest.approx((1 + phi) / (1 - phi), rel=0.1)
    iid = rng.standard_normal((8, 500))
    assert integrated_time(iid) == pytest.approx(1.0, abs=0.2)
    est = mean_and_se(iid)
    assert est.se == pytest.approx(iid.std(ddof=1) / np.sqrt(iid.size), rel=0.25)
    assert est.reliable                                   # 500 samples per chain >= 50 τ
    assert not mean_and_se(x[:, 500:540]).reliable        # 40 samples < 50 τ ≈ 450: flagged


def test_reproducible_and_independent_of_grouping():
    data = PB.sample(30, rng=1)
    kw = dict(n_equilibrate=2000, n_samples=5, stride=100, rng=9, dt=1e-3, on_unequilibrated="warn")
    with pytest.warns(RuntimeWarning, match="n_equilibrate"):    # short chains: warned, and marked
        a = langevin(data, PB, 1e3, 0.01, n_chains=10, **kw)
        b = langevin(data, PB, 1e3, 0.01, n_chains=10, **kw)
        c = langevin(data, PB, 1e3, 0.01, n_chains=3, **kw)   # the first 3 chains are the same chains
    assert not a.equilibrated
    assert np.array_equal(a.train, b.train)
    assert np.array_equal(a.test[:3], c.test)


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [10, 100, 1000])
def test_stationary_means_match_exact_gibbs(model, P):
    """Acceptance: with the seed's protocol (10⁵ equilibration steps, 20 samples
    5000 steps apart) and the automatic dt, the sample means of 16 chains agree with the exact
    Gibbs averages. Tolerance: 4 exact standard errors of the discrete chain's sample mean (over
    all 16 chains) plus the exact O(dt) bias, which dt=None keeps below ¼ of that s.e.; the exact
    transient bias at the first sample is below ¼ s.e. too (the protocol equilibrates). The IAT
    estimate of the s.e. is flagged unreliable here (20 samples per chain < 50 τ)."""
    data = PB.sample(P, rng=(2, P))
    r = langevin(data, PB, 1e3, 0.01, n_chains=16, model=model, rng=P)
    assert r.equilibrated
    for mean, se, exact, bias, transient in (
            (r.train_mean, r.train_se_exact, r.exact_train, r.bias_train, r.transient_train),
            (r.test_mean, r.test_se_exact, r.exact_test, r.bias_test, r.transient_test)):
        assert abs(bias) <= 0.25 * se                       # dt=None criterion (s.e. of the reported mean)
        assert abs(transient) <= 0.25 * se
        assert abs(mean - exact) <= 4 * se + abs(bias), (mean, exact, se)
    assert not r.train_estimate.reliable


@pytest.mark.parametrize("link", ["tanh", "sign"])
def test_langevin_on_nonlinear_labels_matches_exact_gibbs(link):
    """Nonlinear-label datasets: the energy is still quadratic in
    θ, so the exact per-dataset Gibbs averages hold; the seed's protocol agrees within 4 exact s.e.
    (plus the exact O(dt) bias), full model, P = 100."""
    pb = linattn.Problem(10, 100, 0.0, link=link)
    data = pb.sample(100, rng=(3, 100))
    r = langevin(data, pb, 1e3, 0.01, n_chains=16, model="full", rng=11)
    assert r.equilibrated
    for mean, se, exact, bias in ((r.train_mean, r.train_se_exact, r.exact_train, r.bias_train),
                                  (r.test_mean, r.test_se_exact, r.exact_test, r.bias_test)):
        assert abs(mean - exact) <= 4 * se + abs(bias), (mean, exact, se)


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_structured_tasks_sample_every_error_law(model):
    """Structured tasks (rank-2 S in D = 4) with a pool of 3 tasks: the chain's samples of test (fresh tasks from
    N(0, S)), test_odg (isotropic tasks of the same power) and test_idg (the pool) against their exact Gibbs averages:
    test within 4 exact s.e. plus the exact O(dt) bias (dt=None keeps it below ¼ s.e.); test_odg and test_idg within
    4 s.e. estimated from the integrated autocorrelation time (2400 samples, flagged reliable) plus the same ¼ s.e.
    allowance for their own discretisation bias. Each sample equals the exact errors of its parameters."""
    from linattn import pools

    pb = linattn.Problem(4, 8, 0.2, tasks=3, task_covariance=pools.low_rank_covariance(4, 2, rng=0))
    data = pb.sample(40, rng=0)
    r = langevin(data, pb, 100.0, 0.02, n_equilibrate=3000, n_samples=600, stride=200, n_chains=4, model=model, rng=3)
    assert r.equilibrated
    assert abs(r.test_mean - r.exact_test) <= 4 * r.test_se_exact + abs(r.bias_test)
    for name in ("test_odg", "test_idg"):
        est = mean_and_se(getattr(r, name))
        assert est.reliable
        assert abs(est.mean - getattr(r, "exact_" + name)) <= 4.25 * est.se, (name, est, getattr(r, "exact_" + name))
    ch = chain(data, pb, 100.0, 0.02, model=model)
    eta = ch.eta_star + 0.1
    G, v = linattn.unpack(ch.V @ eta, 4, model)
    assert float(ch.es.odg.error(eta)) == pytest.approx(pools.task_error(pb, G, v, task_covariance="isotropic"),
                                                        rel=1e-11)
    assert float(ch.errors(eta)[1]) == pytest.approx(pb.test_error(G, v), rel=1e-11)


def test_eigen_and_parameter_bases_are_the_same_chain():
    """Both bases simulate the same Markov chain: equal means within 4 s.e. at a coarse step,
    and both match the exact discrete-chain mean (which is biased away from Gibbs at this dt)."""
    pb = linattn.Problem(4, 10, 0.2)
    data = pb.sample(30, rng=5)
    ch = chain(data, pb, 200.0, 0.05, 1.0, "full")
    dt = 1.5 / ch.lambda_max
    kw = dict(dt=dt, n_equilibrate=3000, n_samples=50, stride=200, n_chains=32, model="full",
              on_unequilibrated="warn")
    e = langevin(data, pb, 200.0, 0.05, basis="eigen", rng=1, **kw)
    p = langevin(data, pb, 200.0, 0.05, basis="parameter", rng=2, **kw)
    disc_t, disc_g = ch.means(dt)
    for r in (e, p):
        assert abs(r.train_mean - disc_t) <= 4 * r.train_se_exact
        assert abs(r.test_mean - disc_g) <= 4 * r.test_se_exact
    assert abs(e.bias_train) > 8 * e.train_se_exact        # the O(dt) bias is resolved here
    assert abs(e.train_mean - p.train_mean) <= 4 * np.hypot(e.train_se_exact, p.train_se_exact)


def test_exact_chain_bias_is_first_order_in_dt():
    data = PB.sample(100, rng=3)
    ch = chain(data, PB, 1e3, 0.01, 1.0, "full")
    dts = np.array([0.2, 0.1, 0.05]) / ch.lambda_max
    b = np.array([ch.bias(dt)[0] for dt in dts])
    assert np.allclose(b[:-1] / b[1:], 2.0, rtol=0.06)


def test_bad_input():
    data = PB.sample(20, rng=4)
    with pytest.raises(ValueError, match="beta"):
        langevin(data, PB, 0.0, 0.01)
    with pytest.raises(ValueError, match="beta"):
        langevin(data, PB, np.inf, 0.01)
    with pytest.raises(ValueError, match="gamma"):
        langevin(data, PB, 1e3, 0.01, gamma=-1.0)
    with pytest.raises(ValueError, match="n_chains"):
        langevin(data, PB, 1e3, 0.01, n_chains=0)
    with pytest.raises(ValueError, match="n_equilibrate"):
        langevin(data, PB, 1e3, 0.01, n_equilibrate=-5)
    with pytest.raises(ValueError, match="stride"):
        langevin(data, PB, 1e3, 0.01, stride=0)
    with pytest.raises(ValueError, match="lam"):
        langevin(data, PB, 1e3, 0.0)               # P < M: not normalisable
    ch = chain(data, PB, 1e3, 0.01, 1.0, "reduced")
    with pytest.raises(ValueError, match="dt"):
        langevin(data, PB, 1e3, 0.01, dt=2.0 / ch.lambda_max)
    with pytest.raises(ValueError, match="dt"):
        langevin(data, PB, 1e3, 0.01, dt=-0.1)


def test_unequilibrated_protocols_are_refused():
    """λ = 1e-9 (relaxation time 1e9/dt steps) and dt = 1e-12 used to return
    unequilibrated chains silently. The exact transient bias now refuses them, naming
    n_equilibrate and the number of steps needed."""
    data = PB.sample(10, rng=0)
    with pytest.raises(ValueError, match="n_equilibrate"):
        langevin(data, PB, 1e3, 1e-9)
    with pytest.raises(ValueError, match="n_equilibrate"):
        langevin(data, PB, 1e3, 0.01, dt=1e-12)
    with pytest.raises(ValueError, match="n_samples"):
        langevin(data, PB, 1e3, 0.01, n_samples=1)            # no standard error from one sample
    with pytest.raises(ValueError, match="n_chains"):
        langevin(data, PB, 1e3, 0.01, n_chains=10**6)         # memory guard


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_4_8 = linattn.Problem(4, 8, 0.1)
DATA = PB_4_8.sample(20, rng=0)


@functools.cache
def _chain():
    """The exact chain of ``DATA`` at β = 100, λ = 0.1 (built on first use)."""
    return validation.chain(DATA, PB_4_8, 100.0, 0.1)


def _lmax():
    return _chain().lambda_max


def _eta():
    return np.zeros(_chain().M)


REFUSED = refusals(name_as_word, [
    # every public method of the exact Langevin chain checks its arguments
    ("chain-se-n-samples", lambda: _chain().standard_errors(0.001, 0, 10), "n_samples"),
    ("chain-se-n-chains", lambda: _chain().standard_errors(0.001, 10, 10, n_chains=0), "n_chains"),
    ("chain-se-stride", lambda: _chain().standard_errors(0.001, 10, -10), "stride"),
    ("chain-se-stride-huge", lambda: _chain().standard_errors(0.001, 10, 2**52), "stride"),
    ("chain-variances-nan", lambda: _chain().variances(np.nan), "dt"),
    ("chain-variances-bound", lambda: _chain().variances(2.0 / _lmax()), "dt"),
    ("chain-variances-beyond", lambda: _chain().variances(3.0 / _lmax()), "dt"),
    ("chain-variances-negative", lambda: _chain().variances(-1.0), "dt"),
    ("chain-variances-str", lambda: _chain().variances("a"), "dt"),
    ("chain-bias-bound", lambda: _chain().bias(2.0 / _lmax()), "dt"),
    ("chain-means-nan", lambda: _chain().means(np.nan), "dt"),
    ("chain-autocovariance-lag", lambda: _chain().autocovariance(0.001, [-1]), "lags"),
    ("chain-autocovariance-str", lambda: _chain().autocovariance(0.001, ["a"]), "lags"),
    ("chain-autocovariance-dt", lambda: _chain().autocovariance(5.0 / _lmax(), [1]), "dt"),
    ("chain-transient-steps", lambda: _chain().transient(0.001, -5, _eta()), "n_steps"),
    ("chain-transient-shape", lambda: _chain().transient(0.001, 5, np.zeros(3)), "eta0"),
    ("chain-transient-huge", lambda: _chain().transient(0.001, 5, np.ones(_chain().M) * 1e200), "eta0"),
    ("chain-equilibrate-nan", lambda: _chain().steps_to_equilibrate(0.001, _eta(), np.nan, 1e-3), "target_train"),
    ("chain-equilibrate-negative", lambda: _chain().steps_to_equilibrate(0.001, _eta(), 1e-3, -1.0), "target_test"),
    ("chain-equilibrate-start", lambda: _chain().steps_to_equilibrate(0.001, _eta(), 1e-3, 1e-3, start=0), "start"),
    ("chain-equilibrate-dt", lambda: _chain().steps_to_equilibrate(np.inf, _eta(), 1e-3, 1e-3), "dt"),
    ("chain-errors-shape", lambda: _chain().errors(np.ones(3)), "eta"),
    ("chain-errors-huge", lambda: _chain().errors(np.ones(_chain().M) * 1e300), "eta"),
    ("langevin-steps", lambda: validation.langevin(DATA, PB_4_8, 100.0, 0.1, n_equilibrate=10**13, n_samples=5,
                                                   stride=10), "n_equilibrate"),
    ("choose-dt", lambda: validation.choose_dt(validation.chain(DATA, PB_4_8, 100.0, 0.1), 10**13, 10**13),
     "n_samples"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_chain_dt_message_states_the_stable_range():
    CH, LMAX = _chain(), _lmax()
    with pytest.raises(ValueError, match=r"stable range \(0, 2/\(gamma\*lambda_max\(A\)\)\)"):
        CH.variances(2.0 / LMAX)


def test_chain_values_unchanged_inside_the_range():
    CH, LMAX, ETA = _chain(), _lmax(), _eta()
    dt = 0.5 / LMAX
    h = CH.gamma * dt * CH.a
    assert np.array_equal(CH.variances(dt), 1.0 / (CH.beta * CH.a * (1.0 - 0.5 * h)))
    assert CH.means(dt) == (CH.gibbs_train + CH.bias(dt)[0], CH.gibbs_test + CH.bias(dt)[1])
    ct, cg = CH.autocovariance(dt, 3)                         # one lag: an array of one value each
    assert ct.shape == cg.shape == (1,) and np.all(np.isfinite([ct, cg]))
    st, sg = CH.standard_errors(dt, 10, 5, 2)
    assert np.isfinite(st) and np.isfinite(sg) and st > 0 and sg > 0
    train, test = CH.errors(np.zeros((2, CH.M)))
    assert train.shape == test.shape == (2,)
    assert CH.steps_to_equilibrate(dt, ETA, np.inf, np.inf) == 1
