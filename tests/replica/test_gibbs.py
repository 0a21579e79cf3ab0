"""Exact Gibbs averages and free energy (rung 1: identities against finite differences and Monte Carlo)."""
import numpy as np
import pytest
from helpers import assert_mean, assert_refused, name_as_word, refusals

import linattn
import replica
import spectra


@pytest.mark.parametrize("model, P", [("reduced", 10), ("reduced", 40), ("full", 12), ("full", 60)])
def test_free_energy_derivatives(model, P, rng):
    pb = linattn.Problem(4, 7, 0.3)
    es = spectra.eigensystem(pb.sample(P, rng), pb, model)
    beta, lam = 50.0, 0.07
    g = replica.gibbs(es, pb, beta, lam, model)
    h = 1e-4
    def bf(b):
        return b * replica.gibbs(es, pb, b, lam, model).free_energy
    assert (bf(beta * (1 + h)) - bf(beta * (1 - h))) / (2 * beta * h) == pytest.approx(float(g.train), rel=1e-7)
    def F(l):
        return replica.gibbs(es, pb, beta, l, model).free_energy
    assert (F(lam * (1 + h)) - F(lam * (1 - h))) / (2 * lam * h) == pytest.approx(float(g.dF_dlam), rel=1e-6)
    # a grid of (beta, lam) from the same eigensystem equals separate calls
    grid = replica.gibbs(es, pb, np.array([[10.0], [1e3]]), np.array([0.01, 0.1, 1.0]), model)
    assert grid.train.shape == (2, 3)
    single = replica.gibbs(es, pb, 1e3, 0.1, model)
    assert grid.test[1, 1] == pytest.approx(float(single.test), rel=1e-14)


@pytest.mark.parametrize("model, link", [("reduced", "linear"), ("full", "linear"), ("full", "sign")])
def test_gibbs_averages_against_sampling(model, link, rng):
    """Sample θ ~ N(θ*, A⁻¹/β) (the Gibbs law) and average E_t, E_g computed from the prompts."""
    pb = linattn.Problem(3, 5, 0.2, link=link)
    data = pb.sample(15, rng)
    beta, lam = 30.0, 0.05
    F = data.features(model)
    M = F.shape[1]
    A = F.T @ F / data.P + lam * np.eye(M)
    theta_star = np.linalg.solve(A, F.T @ data.yq / data.P)
    L = np.linalg.cholesky(np.linalg.inv(A) / beta)
    thetas = theta_star + rng.standard_normal((40_000, M)) @ L.T
    # per-sample energies, vectorised: E_t from the features, E_g from pb.test_error's formula
    et = 0.5 * np.mean((data.yq[None, :] - thetas @ F.T) ** 2, axis=1) + 0.5 * lam * np.sum(thetas**2, axis=1)
    D = 3
    G = thetas[:, : D * D].reshape(-1, D, D)
    norm = pb.feature_variance * np.sum(G * G, axis=(1, 2))
    if model == "full":
        norm = norm + pb.feature_variance_v * np.sum(thetas[:, D * D:] ** 2, axis=1)
    eg = pb.test_error_from_moments(pb.teacher_strength * np.trace(G, axis1=1, axis2=2) / D, norm)
    G0, v0 = linattn.unpack(thetas[0], D, model)
    assert et[0] == pytest.approx(linattn.train_energy(data, G0, lam, v0), rel=1e-12)
    assert eg[0] == pytest.approx(pb.test_error(G0, v0), rel=1e-12)
    g = replica.gibbs(data, pb, beta, lam, model)
    assert_mean(et, float(g.train), label="<E_t>")
    assert_mean(eg, float(g.test), label="<E_g>")


@pytest.mark.parametrize("model, P, tasks", [("reduced", 12, None), ("full", 40, 3), ("reduced", 40, 2)])
def test_structured_gibbs_averages_against_sampling(model, P, tasks, rng):
    """Structured tasks (S of rank 2 in D = 3, a pool of K tasks or fresh tasks): sample θ ~ N(θ*, A⁻¹/β) and average
    the exact errors of each sample — test on fresh tasks from N(0, S), test_odg on the isotropic law of the same power,
    test_idg on the pool — against replica.gibbs and replica.dataset_average: within 4 s.e. of the 40 000 samples; at
    β = ∞ the Gibbs averages are the ridge solution's errors (replica.ridge, to rounding)."""
    from linattn import pools
    from linattn._idg import metric_from_moments
    from linattn._task_covariance import gaussian_moments

    D = 3
    pb = linattn.Problem(D, 5, 0.2, tasks=tasks, task_covariance=pools.low_rank_covariance(D, 2, rng=1))
    data = pb.sample(P, rng)
    beta, lam = 30.0, 0.05
    F = data.features(model)
    M = F.shape[1]
    A = F.T @ F / data.P + lam * np.eye(M)
    theta_star = np.linalg.solve(A, F.T @ data.yq / data.P)
    thetas = theta_star + rng.standard_normal((40_000, M)) @ np.linalg.cholesky(np.linalg.inv(A) / beta).T
    laws = {"test": metric_from_moments(pb, gaussian_moments(pb), model),
            "test_odg": metric_from_moments(pb, gaussian_moments(pb, "isotropic"), model)}
    if tasks:
        laws["test_idg"] = pools.idg_metric(pb, data.pool, model)
    G0, v0 = linattn.unpack(thetas[0], D, model)        # the vectorised forms are the exact errors of the parameters
    assert laws["test"].error(thetas[0]) == pytest.approx(pb.test_error(G0, v0), rel=1e-12)
    assert laws["test_odg"].error(thetas[0]) == pytest.approx(
        pools.task_error(pb, G0, v0, task_covariance="isotropic"), rel=1e-12)
    g = replica.gibbs(data, pb, beta, lam, model)
    for name, met in laws.items():
        assert_mean(met.error(thetas), float(getattr(g, name)), label=f"<{name}>")
    cold = replica.gibbs(data, pb, np.inf, lam, model)
    sol = replica.ridge(data, pb, lam, model)
    for name in laws:
        assert float(getattr(cold, name)) == pytest.approx(getattr(sol, name), rel=1e-9)
    avg = replica.dataset_average(pb, P, beta, lam, n_datasets=3, model=model, rng=5)
    one = replica.gibbs(pb.sample(P, rng=(5, P, 1)), pb, beta, lam, model)
    assert avg.test_odg[1] == float(one.test_odg) and avg.test_odg_mean == pytest.approx(avg.test_odg.mean())


def test_limits(rng):
    pb = linattn.Problem(4, 6, 0.1)
    data = pb.sample(9, rng)       # P < M = 16
    es = spectra.eigensystem(data, pb)
    F = data.features()
    zero_t = replica.gibbs(es, pb, np.inf, 0.0)
    G, _ = linattn.unpack(np.linalg.pinv(F) @ data.yq, 4)
    assert float(zero_t.train) == 0.0                       # min-norm interpolation, exactly
    assert float(zero_t.test) == pytest.approx(pb.test_error(G), rel=1e-10)
    near = replica.gibbs(es, pb, np.inf, 1e-9)
    assert float(near.test) == pytest.approx(float(zero_t.test), rel=1e-6)
    hot = replica.gibbs(es, pb, 1e12, 0.3)
    cold = replica.gibbs(es, pb, np.inf, 0.3)
    assert float(hot.train) == pytest.approx(float(cold.train), rel=1e-9)
    assert float(hot.test) == pytest.approx(float(cold.test), rel=1e-9)
    with pytest.raises(ValueError, match="lam"):
        replica.gibbs(es, pb, 100.0, 0.0)                   # not normalisable for P < M


def test_bad_input(rng):
    pb = linattn.Problem(3, 4)
    data = pb.sample(20, rng)
    for beta in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="beta"):
            replica.gibbs(data, pb, beta, 0.1)
    with pytest.raises(ValueError, match="lam"):
        replica.gibbs(data, pb, 1.0, -0.1)
    with pytest.raises(ValueError, match="model"):
        replica.gibbs(data, pb, 1.0, 0.1, model="giant")


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)
MiB = 1 << 20


REFUSED = refusals(name_as_word, [
    ("gibbs-beta", lambda: replica.gibbs(DATA, PB, np.ones(10**4), 0.1), "beta", 1 * MiB),
    ("gibbs-shapes", lambda: replica.gibbs(DATA, PB, [1.0, 10.0], [0.1, 0.2, 0.3]), "lam", None),
    ("dataset-average", lambda: replica.dataset_average(PB, 10, 10.0, 0.1, n_datasets=10**9), "n_datasets"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_dataset_average_progress_bar_shows_on_long_calls_only(monkeypatch, capsys):
    from replica import _gibbs

    pb = linattn.Problem(3, 4, 0.1)
    quiet = replica.dataset_average(pb, 10, 100.0, 0.1, n_datasets=3)
    assert "dataset average" not in capsys.readouterr().err          # short: silent
    monkeypatch.setattr(_gibbs, "PROGRESS_DELAY", 0.0)                  # every call counts as long
    shown = replica.dataset_average(pb, 10, 100.0, 0.1, n_datasets=3)
    assert "dataset average" in capsys.readouterr().err
    silent = replica.dataset_average(pb, 10, 100.0, 0.1, n_datasets=3, progress=False)
    assert capsys.readouterr().err == ""
    for r in (shown, silent):                                           # the bar changes no number
        np.testing.assert_array_equal(r.train, quiet.train)
        np.testing.assert_array_equal(r.test, quiet.test)


def test_ragged_block_pair_is_named():
    """gibbs with a tuple lam holding a ragged entry raised numpy's 'setting an array element with a sequence'."""
    pb = linattn.Problem(3, 4, 0.1)
    with pytest.raises(ValueError, match=r"^replica\.gibbs: lam must be a tuple"):
        replica.gibbs(pb.sample(5, rng=0), pb, 10.0, ([[1.0], [1.0, 2.0]], 1.0), model="full")
