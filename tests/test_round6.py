"""No silent wrong answer, round 6: what the fourth adversarial pass over every public function and the command line
(session 45) found — each case as found, with the argument its message must name (or the value it must return)."""
import numpy as np
import pytest

import diagnostics
import dynamics
import linattn
import replica
import validation
from linattn import factorized, markov
from linattn.numerics import cg, fixed_point, stats
from replica import pool_theory
from validation import gallery, sweeps
from validation.experiments.base import point_coords

PB = linattn.Problem(4, 8, 0.1)
PBK = linattn.Problem(4, 8, 0.1, tasks=3)
TANH = linattn.Problem(3, 6, 0.0, link="tanh")
E9 = np.random.default_rng(0).normal(size=(9, 2))
A3 = np.diag([1.0, 2.0, 3.0])
CH = markov.Chains(C=3, concentration=1.0)
SMALL = CH.sample(6, 10, 0)


def _cg(**kw):
    args = dict(apply=lambda x: A3 @ x, b=np.ones(3), precondition=lambda r: r, lam=0.1, rtol=1e-8, maxiter=100)
    return cg.certified_cg(**{**args, **kw})


def _anderson(**kw):
    args = dict(g=lambda x: 0.5 * x + 1.0, x0=np.zeros(3), tol=1e-10, max_iterations=100)
    return fixed_point.anderson(**{**args, **kw})


def _pool_errors(**kw):
    args = dict(pb=PBK, P=50.0, beta=np.inf, lam=0.01, model="full", law="mp", n_pools=2)
    return pool_theory.pool_errors(**{**args, **kw})


# (id, call, the argument the ValueError must name)
REFUSED = [
    # raw exceptions
    ("pool-theory-threshold", lambda: replica.stationary(PBK, 20.0, np.inf, 1e-300, model="full", law="mp"), "lam"),
    ("pool-errors-pb", lambda: _pool_errors(pb="x"), "pb"),
    ("pool-errors-fresh-pb", lambda: _pool_errors(pb=PB), "pb"),
    ("pool-errors-P", lambda: _pool_errors(P=0), "P"),
    ("pool-errors-beta", lambda: _pool_errors(beta=0), "beta"),
    ("pool-errors-n-pools", lambda: _pool_errors(n_pools=0), "n_pools"),
    ("pool-errors-rng", lambda: _pool_errors(rng=-1), "rng"),
    ("pool-errors-n-types", lambda: _pool_errors(n_types=[1]), "n_types"),
    ("rs-functional-pool", lambda: replica.rs_functional(PBK, 50.0, 10.0, 0.1, 0.5, 1.0, 0.5), "pb"),
    ("task-seed-inf", lambda: sweeps.task_seed(float("inf"), "f", {"a": 1}, 0), "seed"),
    ("task-seed-point", lambda: sweeps.task_seed(0, "f", "x", 0), "point"),
    ("task-seed-replicate", lambda: sweeps.task_seed(0, "f", {"a": 1}, float("-inf")), "replicate"),
    ("gallery-points", lambda: gallery.points("nope", "quick"), "name"),
    ("crossing-times-scalar", lambda: diagnostics.crossing_times(np.arange(1.0, 4.0), 1.0, 0.5), "values"),
    ("anderson-x0", lambda: _anderson(x0=1.0), "x0"),
    ("anderson-g", lambda: _anderson(g="x"), "g"),
    ("anderson-g-shape", lambda: _anderson(g=lambda x: np.ones(4)), "g"),
    ("cg-b", lambda: _cg(b=1.0), "b"),
    ("cg-apply", lambda: _cg(apply=None), "apply"),
    ("cg-precondition", lambda: _cg(precondition=None), "precondition"),
    ("mean-se-axis", lambda: stats.mean_se(np.ones(3), axis=3), "axis"),
    ("mean-se-x", lambda: stats.mean_se(np.array(["a", "b"])), "x"),
    ("radial-moments-D", lambda: linattn.links.radial_moments("tanh", [1, 2]), "D"),
    # accepted nonsense
    ("mean-se-single", lambda: stats.mean_se([1.0, 2.0], single="x"), "single"),
    ("block-lambdas-model", lambda: linattn.check.block_lambdas(0.1, "nonsense"), "model"),
    ("grid-function-name", lambda: sweeps.grid_function(5), "name"),
    ("log-losses-unused-pool", lambda: markov.log_losses(SMALL.states, "1-gen", pool=np.full((2, 3, 3), np.nan),
                                                         chains=CH), "pool"),
    ("predict-unused-rng", lambda: markov.predict(SMALL.states, "2-gen", chains=CH, rng="x"), "rng"),
    ("pool-errors-law", lambda: _pool_errors(law="nonsense"), "law"),
    ("anderson-tol", lambda: _anderson(tol=float("nan")), "tol"),
    ("anderson-max-iterations", lambda: _anderson(max_iterations=0), "max_iterations"),
    ("anderson-depth", lambda: _anderson(depth=0.5), "depth"),
    ("cg-lam", lambda: _cg(lam=float("nan")), "lam"),
    ("cg-rtol", lambda: _cg(rtol=2.0), "rtol"),
    ("cg-maxiter", lambda: _cg(maxiter=0), "maxiter"),
    # the name in the message
    ("diversity-K-huge", lambda: replica.diversity_transition(PB, 200.0, np.inf, 0.01, K_values=[1, 10**15],
                                                              n_pools=2), "K_values"),
    ("pool-errors-N-test", lambda: _pool_errors(N_test=float("nan")), "N_test"),
    ("stationary-beta-tiny", lambda: replica.stationary(PB, 50.0, 1e-307, 0.01, model="full"), "beta"),
    ("stationary-pool-beta-tiny", lambda: replica.stationary(PBK, 50.0, 1e-307, 0.01, model="full", law="mp"),
     "beta"),
    ("rolling-autocorrelation-lag", lambda: diagnostics.rolling_autocorrelation(np.sin(np.arange(30.0)), 5,
                                                                                lag=10**9), "lag"),
    ("rolling-autocorrelation-series", lambda: diagnostics.rolling_autocorrelation(np.array([]), 5), "series"),
    ("feature-learner-N-test", lambda: validation.feature_learner(TANH, 30, 0.1, rng=0, max_steps=200,
                                                                  n_test_prompts=1000, N_test=10**12), "N_test"),
    ("information-mean-K", lambda: markov.bottleneck.information_mean(3, 1.0, None, E9, 10, n_pools=2, rng=0,
                                                                      n_samples=64), "K"),
    ("rank-dynamics-N", lambda: validation.rank_dynamics(np.array([1.0, 0.5]), 10**9, n_chains=2, batch=16,
                                                         record=5, n_grid=40), "N"),
    ("rank-dynamics-spectrum", lambda: validation.rank_dynamics(np.array([2e300, 1.5e300]), 8), "spectrum"),
    ("binned-bins", lambda: validation.binned_readout_error(TANH, np.eye(3) * 0.1, n=2000, bins=10**9), "bins"),
    # memory: sizes a user controls checked before the allocation
    ("attention-gd-every-step", lambda: validation.attention_gradient_descent(np.ones((3, 5, 4)), np.ones(3), 0.1,
                                                                              10**12, 0.01), "n_steps"),
    ("information-mean-concentration", lambda: markov.bottleneck.information_mean(3, 1e-300, 4, E9, 10, n_pools=2,
                                                                                  rng=0, n_samples=64),
     "concentration"),
    ("point-coords", lambda: point_coords("ab"), "points"),
    ("mean-flow-theta0", lambda: dynamics.mean_flow(PB, factorized.Parametrization("merged", 4), np.full(16, 2e300),
                                                    np.linspace(0.0, 5.0, 6)), "theta0"),
    # hangs: work guards that count what the work costs
    ("diversity-K-many", lambda: replica.diversity_transition(PB, 200.0, np.inf, 0.01, K_values=np.arange(1, 20000)),
     "K_values"),
    ("stationary-curve-pool", lambda: replica.stationary_curve(PBK, np.linspace(10, 100, 1000), np.inf, 0.01),
     "P_values"),
    ("phase-boundary-pool", lambda: replica.phase_boundary(PBK, np.inf, 0.01, n_scan=10**5), "n_scan"),
]


@pytest.mark.parametrize("call, name", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"):
        call()


def test_sweep_refuses_a_billion_workers():
    """``validation.sweep(..., workers=10**9)`` hung starting processes; refused naming ``workers`` (the sweep runner
    needs the [dask] extra: skipped without it)."""
    pytest.importorskip("xarray")
    with pytest.raises(ValueError, match=r"(?<![A-Za-z_])workers(?![A-Za-z_])"):
        validation.sweep(lambda a, rng=None: {"y": np.array(a)}, {"a": [1.0, 2.0]}, workers=10**9)


def test_statistics_of_huge_finite_values_are_finite():
    """mean_se of finite values whose squares (or sum) overflow: (inf, inf) before; now the same statistics of
    x / max|x| scaled back (and bit-identical to the plain formula where it does not overflow)."""
    m, se = stats.mean_se([1e308, 1e308, -1e308])
    assert m == pytest.approx(1e308 / 3) and se == pytest.approx(2 / 3 * 1e308)
    m, se = stats.mean_se(np.array([[1e300, 1.0], [3e300, 3.0]]), axis=0)
    assert np.allclose(m, [2e300, 2.0]) and np.allclose(se, [1e300, 1.0])
    x = np.random.default_rng(0).normal(size=50)
    assert stats.mean_se(x) == (float(x.mean()), float(x.std(ddof=1) / np.sqrt(50)))


def test_pool_theory_at_a_tiny_temperature_has_finite_standard_errors():
    """β = 1e-300 with a pool: errors ~ M/(2β) ~ 1e301 and their standard errors were inf (mean_se's squares)."""
    th = replica.stationary(PBK, 50.0, 1e-300, 0.01, model="full", n_pools=2)
    assert np.all(np.isfinite([th.train, th.test, th.test_idg, th.train_se, th.test_se, th.test_idg_se]))


def test_anderson_stops_where_the_map_leaves_float64():
    """g(x) with NaN: numpy's lstsq raised LinAlgError; now not converged, the last finite iterate kept."""
    fp = _anderson(g=lambda x: x * np.nan)
    assert not fp.converged and np.all(np.isfinite(fp.x)) and fp.iterations == 1
