"""Bad-input sweep of validation (rung 5): every public callable, every argument."""
import tempfile

import numpy as np
import pytest
from helpers import Row, sweep_tests

import linattn
import validation
from linattn import _sampling as sampling
from validation import gallery as plots
from validation._app import report
from validation.experiments import _learners_scaling as learners_scaling

PB = linattn.Problem(3, 4, 0.1)
DATA = PB.sample(20, rng=0)
CH = validation.chain(DATA, PB, 100.0, 0.1)
TOK = sampling.sample_tokens(PB, 5, rng=0)
X = np.random.default_rng(0).standard_normal((2, 50))
FAST = dict(n_equilibrate=2000, n_samples=3, stride=10)

PB_RELU = linattn.Problem(3, 4, 0.1, link="relu")

PBA = linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25])
PARF = linattn.factorized.Parametrization("value_kq", 3)

ROWS = [
    Row("factorized_descent", validation.factorized_descent,
        dict(pb=PBA, parametrization=PARF, theta0=PARF.init(0.1, 0), n_steps=3, lr=0.01, data=DATA, batch=4,
             lam=0.0, beta=100.0, record=1, n_chains=2, rng=0),
        dict(pb="problem", theta0="array", n_steps="posint", lr="positive", data="prompts", batch="posint",
             lam="nonneg", beta="positive_inf", record="posint", n_chains="posint", rng="seed")),
    Row("kernel_learner", validation.kernel_learner,
        dict(pb=PB_RELU, P=20, lam=0.1, rng=0, features="hermite2", N_test=5),
        dict(pb="problem", P="posint", lam="positive", rng="rng", features="choice", N_test="posint")),
    Row("feature_learner", validation.feature_learner,
        dict(pb=PB_RELU, P=20, lam=0.1, rng=0, n_knots=3, max_steps=50, tol=1e-6, n_test_prompts=50),
        dict(pb="problem", P="posint", lam="positive", rng="rng", n_knots="nonnegint", max_steps="posint",
             tol="tol", n_test_prompts="posint")),
    Row("binned_readout_error", validation.binned_readout_error,
        dict(pb=PB_RELU, Gamma=np.eye(3), n=2000, bins=20, rng=0, N_test=6),
        dict(pb="problem", Gamma="array_shape", n="posint", bins="posint", rng="rng", N_test="posint")),
    Row("hermite_features", validation.hermite_features, dict(X=np.ones((2, 3)), features="linear"),
        dict(X="array", features="choice")),
    Row("readout", validation.readout, dict(t=np.ones(4), a=np.ones(4), knots=np.zeros(2)),
        dict(t="array", a="array_shape", knots="array")),
    Row("langevin", validation.simulators.langevin, dict(data=DATA, pb=PB, beta=100.0, lam=0.1, gamma=1.0, dt=None,
                                              n_chains=2, rng=0, model="reduced", basis="eigen", init=None,
                                              progress=False, on_unequilibrated="raise", **FAST),
        dict(data="prompts", pb="problem", beta="positive", lam="nonneg", gamma="positive", n_equilibrate="nonnegint",
             n_samples="posint", stride="posint", n_chains="posint", rng="seed", model="model", basis="choice",
             init="array_shape", progress="bool", on_unequilibrated="choice")),
    Row("chain", validation.chain, dict(data=DATA, pb=PB, beta=100.0, lam=0.1, gamma=1.0, model="reduced"),
        dict(data="prompts", pb="problem", beta="positive", lam="nonneg", gamma="positive", model="model")),
    Row("choose_dt", validation.choose_dt, dict(ch=CH, n_samples=3, stride=10, n_chains=2),
        dict(n_samples="posint", stride="posint", n_chains="posint")),
    Row("attention_gradient_descent", validation.attention_gradient_descent,
        dict(Z=TOK.embed(), yq=TOK.yq, lam=0.1, n_steps=3, lr=0.01, W0=np.zeros((4, 4)), record=[0, 3]),
        dict(Z="array_shape", yq="array_shape", lam="nonneg", n_steps="nonnegint", lr="positive", W0="array_shape")),
    Row("descent_from_random_inits", validation.descent_from_random_inits,
        dict(data=DATA, pb=PB, lam=0.1, steps=[0, 2], lr=0.01, init_sd=0.1, n_init=2, rng=0, model="reduced",
             progress=False),
        dict(data="prompts", pb="problem", lam="nonneg", steps="array", lr="positive", init_sd="nonneg",
             n_init="posint", rng="rng", model="model", progress="bool")),
    Row("stationary_sweep", validation.stationary_sweep,
        dict(pb=PB, model="reduced", beta=100.0, lam=0.1, P_theory=[5.0, 20.0], P_exact=[5, 20], n_exact=2,
             P_sim=[20, 40], n_sim=2, langevin_kw=FAST, rng=0, progress=False),
        dict(pb="problem", model="model", beta="positive", lam="nonneg", P_theory="array", P_exact="intlist",
             P_sim="intlist", n_exact="posint",
             n_sim="posint", rng="seed", progress="bool")),
    Row("boundary_from_means", validation.boundary_from_means,
        dict(P=[1.0, 10.0, 100.0], train_mean=[0.01, 0.1, 0.2], test_mean=[1.0, 0.5, 0.21], level=5.0),
        dict(P="array", train_mean="array", test_mean="array", level="positive")),
    Row("mean_and_se", validation.mean_and_se, dict(x=X, tol=50.0), dict(x="array_shape", tol="positive")),
    Row("integrated_time", validation.integrated_time, dict(x=X, c=5.0), dict(x="array_shape", c="positive")),
    Row("autocorrelation", validation.autocorrelation, dict(x=X), dict(x="array_shape")),
    Row("run_experiment", validation.run_experiment, dict(experiment="pools_phase", mode="smoke", progress=False,
                                                         workers=1),      # any experiment; this one runs in 0.3 s
        dict(experiment="choice", mode="choice", progress="bool", workers="posint")),
    Row("rank_dynamics", validation.rank_dynamics,
        dict(spectrum=[1.0, 0.5], N=5, a0=1e-2, rtol=0.05, span=1.5, lr=0.1, batch=4, n_chains=1, record=5,
             n_grid=16, rng=0),
        dict(spectrum="array", N="posint", a0="positive", rtol="tol", span="positive", lr="positive", batch="posint",
             n_chains="posint", record="posint", n_grid="posint", rng="seed")),
    Row("pool_average", validation.pool_average,
        dict(pb=linattn.Problem(3, 4, 0.1, tasks=2), P=12, lam=0.1, n_datasets=2, model="full", rng=0, progress=False),
        dict(pb="problem", P="posint", n_datasets="posint", model="model", rng="seed", progress="bool")),
]

NOT_INPUTS = {"PoolAverage", "LangevinResult", "Chain", "AttentionRun", "DescentRun", "StationarySweep", "MeanEstimate",
              "LearnerRun", "BinnedError", "FactorizedRun", "RankDynamics", "Check", "Experiment", "Result",
              "ExperimentData"}

try:                         # the sweep runner needs the optional extra [dask]
    import xarray  # noqa: F401
    import zarr  # noqa: F401
    GRID = {"D": [3], "N": [5], "P": [6], "beta": [50.0], "lam": [0.1]}
    ROWS += [
        Row("sweep", validation.sweep, dict(fn="gibbs", grid=GRID, replicates=1, rng=0, client=None, store=None,
                                            workers=1, allow_mixed=False, progress=False),
            dict(replicates="posint", rng="seed", workers="posint", allow_mixed="bool", progress="bool")),
        Row("load_sweep", validation.load_sweep, dict(store=tempfile.mkdtemp(prefix="linattn-sweep-")), {}),
        Row("sweep_summary", validation.sweep_summary, dict(ds=validation.sweep("gibbs", GRID, workers=1)), {}),
        Row("local_cluster", validation.local_cluster, dict(workers=1), dict(workers="posint")),
    ]
    ROWS.append(Row("open_store", validation.open_store, dict(store=ROWS[-3].kwargs["store"]), {}))
    validation.sweep("gibbs", GRID, workers=1, store=ROWS[-4].kwargs["store"])
except ImportError:          # without the extra these are tested in test_sweep.py (skipped)
    NOT_INPUTS |= {"sweep", "load_sweep", "open_store", "sweep_summary", "local_cluster"}
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, validation, NOT_INPUTS)

OUT = tempfile.mkdtemp(prefix="linattn-bad-input-")   # only bad calls are made (they fail before writing)
EXTRA = [
    Row("plots.make", plots.make, dict(selected=["fig4"], out_dir=OUT, mode="smoke", progress=False, jobs=1,
                                       exclude=()),
        dict(mode="choice", progress="bool", jobs="posint")),
    Row("report.run", report.run, dict(out_dir=OUT, mode="smoke", progress=False),
        dict(mode="choice", progress="bool")),
]
_, test_figure_and_report_arguments, _ = sweep_tests([r for r in EXTRA], validation, NOT_INPUTS)

_NS = np.array([4, 8, 16, 32.0])
SCALING = [
    Row("learners_scaling.gamma_check", learners_scaling.gamma_check,
        dict(N=_NS, sim=1.0 / _NS, sim_se=0.01 / _NS, th=1.0 / _NS, th_se=0.001 / _NS, rng=0, n_boot=3),
        dict(N="array", sim="array", sim_se="array", th="array", th_se="array", rng="seed", n_boot="posint")),
    Row("learners_scaling.student_t", learners_scaling.student_t, dict(n_sets=6), dict(n_sets="posint")),
]
_, test_scaling_helpers_arguments, _ = sweep_tests(SCALING, validation, NOT_INPUTS)


# ----------------------------------------------------------------------------- refusals and extreme arguments
def test_validation_statistics_and_simulators_name_their_arguments():
    import validation

    x = np.random.default_rng(0).standard_normal((2, 50))
    ref = validation.mean_and_se(x)
    for k in (1e300, 1e-300):
        est = validation.mean_and_se(k * x)
        assert est.mean / k == pytest.approx(ref.mean, rel=1e-14) and est.se / k == pytest.approx(ref.se, rel=1e-14)
        assert np.allclose(validation.autocorrelation(k * x), validation.autocorrelation(x), rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"^linattn\.kernel_learner\.hermite_features: X must be small enough"):
        validation.hermite_features(np.full((2, 3), 1e200))
    pb = linattn.Problem(3, 4, 0.1)
    t = sampling.sample_tokens(pb, 5, rng=0)
    for kw, name in ((dict(n_steps=3, lr=0.01, record=[1.5]), "record"), (dict(n_steps=3, lr=0.01, record=[5]),
                     "record"), (dict(n_steps=2000, lr=1e3, record=[2000]), "lr")):
        with pytest.raises(ValueError, match=f"^{name} must be"):
            validation.attention_gradient_descent(t.embed(), t.yq, 0.1, **kw)
    with pytest.raises(ValueError, match="^init_sd must be small enough"):
        validation.descent_from_random_inits(pb.sample(6, rng=0), pb, 0.1, [0, 3], 0.01, 1e300, 2, rng=0)
    with pytest.raises(ValueError, match="^span must be small enough"):
        validation.rank_dynamics([1.0, 0.5], 5, span=1e300, lr=0.1, batch=4, n_chains=1, record=5, n_grid=16)
    with pytest.raises(ValueError, match="^train_mean must be an array of shape"):
        validation.boundary_from_means([1.0, 10.0], [0.1], [1.0, 0.2])
    with pytest.raises(ValueError, match=r"^langevin_kw must be .*\(not: \['bogus'\]\)"):
        validation.stationary_sweep(pb, P_theory=[5.0], P_exact=[5], n_exact=2, P_sim=[20], n_sim=2,
                                    langevin_kw=dict(bogus=1))
