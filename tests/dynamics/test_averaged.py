"""Dataset-averaged learning curves: the contour representation, consistency with the stationary
theory, and the theory against the mean of exact per-dataset curves (rungs 1–3)."""
import numpy as np
import pytest

import dynamics
import linattn
import spectra
from dynamics.averaged import exp_contour, filter_poles

PB = linattn.Problem(10, 100)
LAM = 0.01
TIMES = np.logspace(-1, 5, 13)
N_DATASETS = 60


def test_exponential_contour_is_uniformly_accurate():
    s, w = exp_contour()
    y = np.concatenate([[0.0], np.logspace(-10, 10, 20001)])
    approx = (w[None, :] / (s[None, :] + y[:, None])).sum(axis=1)
    assert np.max(np.abs(approx - np.exp(-y))) < 1e-13


@pytest.mark.parametrize("lam", [0.0, 0.09])
def test_filter_poles_reproduce_the_flow_filter(lam):
    x = np.concatenate([[0.0, 1e-6], np.logspace(-4, 2, 300)]) if lam else np.logspace(-3, 2, 300)
    for tau in (1e-3, 0.7, 50.0, 1e4):
        c, a = filter_poles(tau, lam)
        approx = (c[None, :] / (x[:, None] + a[None, :])).sum(axis=1).real
        y = x + lam
        exact = -np.expm1(-y * tau) / y
        assert np.max(np.abs(approx - exact) / np.maximum(exact, 1e-300)) < 1e-9


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_long_time_limit_is_the_ridge_theory(model):
    """τ → ∞: E_g(τ) and E_t(τ) approach the ridge values of the same theory at z = −λ'."""
    lw = spectra.prompt_law(PB, model)
    c = PB.feature_variance
    for P in (30, 300):
        cur = dynamics.averaged_curves(PB, P, LAM, [1e8], model=model)
        z = np.array([-LAM / c + 0j])
        rr, S = spectra.resolvent.pair_overlaps(z, z, P, lw)
        dt = spectra.data_transforms(z, P, lw)
        kappa = np.array([1.0, PB.feature_variance_v / c])[: lw.n_blocks]
        eg = 0.5 * (1 + PB.noise**2 - 2 * np.sqrt(PB.teacher_norm2) * dt.rho[0] + rr[0] + S[0] @ kappa)
        et = 0.5 * (1 + PB.noise**2 - dt.T[0])
        assert cur.test[0] == pytest.approx(eg.real, rel=1e-10)
        assert cur.train[0] == pytest.approx(et.real, rel=1e-10)


def _exact_mean(P, model, init=None):
    runs = [dynamics.gradient_flow(PB.sample(P, rng=(11, P, i)), PB, LAM, TIMES, model=model, init=init)
            for i in range(N_DATASETS)]
    tr = np.array([r.train for r in runs])
    te = np.array([r.test for r in runs])
    return tr.mean(0), tr.std(0, ddof=1) / np.sqrt(N_DATASETS), te.mean(0), te.std(0, ddof=1) / np.sqrt(N_DATASETS)


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [10, 100, 1000])
def test_theory_against_exact_dataset_means(P, model):
    """Acceptance (dynamics issue): at every time point the finite-size theory is within the goal
    of 3 % of the mean of 60 exact per-dataset curves, up to 4 standard errors of that mean.
    (Measured: ≤ 1.1 % for the test error; the train error at P = 10 fluctuates by ~6 % between
    datasets.) MP with decoupled labels misses by 5–9 % at P = 100 and is reported beside it."""
    tr, se_tr, te, se_te = _exact_mean(P, model)
    th = dynamics.averaged_curves(PB, P, LAM, TIMES, model=model)
    for name, theory, mean, se in (("train", th.train, tr, se_tr), ("test", th.test, te, se_te)):
        rel = np.abs(theory / mean - 1)
        assert np.all(rel <= 0.03 + 4 * se / mean), f"{name}: max rel error {rel.max():.4f}"
    if P == 100:
        mp = dynamics.averaged_curves(PB, P, LAM, TIMES, model=model, law="mp")
        assert np.max(np.abs(mp.test / te - 1)) > 0.04  # the baseline this theory improves on


def test_random_init_terms():
    """Averaged curves with a Gaussian init (σ0 = 0.3) against the exact means over datasets
    (each already averaged exactly over initialisations)."""
    P = 100
    tr, se_tr, te, se_te = _exact_mean(P, "reduced", init=0.3)
    th = dynamics.averaged_curves(PB, P, LAM, TIMES, init=0.3)
    assert np.all(np.abs(th.test / te - 1) <= 0.03 + 4 * se_te / te)
    assert np.all(np.abs(th.train / tr - 1) <= 0.03 + 4 * se_tr / tr)


def test_memorization_signature():
    """Full model, D = 10, N = 100, λ = 0.01, θ0 = 0: at P = 10 the mean test error has an interior
    minimum and then rises well above it; at P = 100 it decreases monotonically."""
    t = np.concatenate([[0.0], np.logspace(-2, 4, 25)])
    means = {}
    for P in (10, 100):
        runs = np.array([dynamics.gradient_flow(PB.sample(P, rng=(12, P, i)), PB, LAM, t, model="full").test
                         for i in range(N_DATASETS)])
        means[P] = (runs.mean(0), runs.std(0, ddof=1) / np.sqrt(N_DATASETS), runs)
    m10, se10, _ = means[10]
    k = int(np.argmin(m10))
    assert 0 < k < t.size - 1
    assert m10[-1] - m10[k] > 10 * se10[-1]          # the rise is far beyond sampling error
    m100, _, runs100 = means[100]
    steps = np.diff(runs100, axis=1)                 # per-dataset increments, paired across times
    inc_mean = steps.mean(0)
    inc_se = steps.std(0, ddof=1) / np.sqrt(N_DATASETS)
    assert np.all(inc_mean <= 3 * inc_se + 1e-12)
    assert m100[-1] < 0.5 * m100[0]
