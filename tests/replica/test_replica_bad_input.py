"""Bad-input sweep of replica (rung 5): every public callable, every argument."""
import numpy as np
import pytest
from helpers import Row, sweep_tests

import linattn
import replica
import spectra

PB = linattn.Problem(3, 4, 0.1)
DATA = PB.sample(12, rng=0)
ES = spectra.eigensystem(DATA, PB)

ROWS = [
    Row("gibbs", replica.gibbs, dict(data=DATA, pb=PB, beta=100.0, lam=0.1, model="reduced"),
        dict(data="prompts", pb="problem", beta="positive_inf", lam="array", model="model")),
    Row("dataset_average", replica.dataset_average, dict(pb=PB, P=5, beta=100.0, lam=0.1, n_datasets=3,
                                                        model="reduced", rng=0, progress=False),
        dict(pb="problem", P="posint", beta="positive_inf", lam="nonneg", n_datasets="posint", model="model",
             rng="seed", progress="bool")),
    Row("stationary", replica.stationary, dict(pb=PB, P=5, beta=100.0, lam=0.1, model="reduced", law="mp",
                                              channel="correlated"),
        dict(pb="problem", P="positive", beta="positive_inf", lam="nonneg", model="model", law="choice",
             channel="choice")),
    Row("stationary_curve", replica.stationary_curve, dict(pb=PB, P_values=[5, 10], beta=100.0, lam=0.1,
                                                          model="reduced", law="mp", progress=False),
        dict(pb="problem", P_values="array", beta="positive_inf", lam="nonneg", model="model", law="choice",
             progress="bool")),
    Row("rs_functional", replica.rs_functional, dict(pb=PB, P=5, beta=100.0, lam=0.1, rho=0.2, norm2=[0.3],
                                                    Delta=[0.1], model="reduced", law="mp"),
        dict(pb="problem", P="positive", beta="positive", lam="nonneg", rho="real", norm2="array", Delta="array",
             model="model", law="choice")),
    Row("rs_constant", replica.rs_constant, dict(pb=PB, model="full"), dict(pb="problem", model="model")),
    Row("phase_boundary", replica.phase_boundary, dict(pb=PB, beta=np.inf, lam=0.1, level=5.0, model="reduced",
                                                      law="mp", P_range=(1.0, 100.0), n_scan=4),
        dict(pb="problem", beta="positive_inf", lam="nonneg", level="positive", model="model", law="choice",
             n_scan="posint")),
    Row("diversity_transition", replica.diversity_transition,
        dict(pb=PB, P=20, beta=np.inf, lam=0.1, K_values=[1, 2, 4], level=0.5, model="full", law="mp", n_pools=2,
             rng=0),
        dict(pb="problem", P="positive", beta="positive_inf", lam="nonneg", K_values="intlist", level="positive",
             model="model", law="choice", n_pools="posint", rng="seed")),
]

ROWS += [
    Row("asymptotic", replica.asymptotic, dict(context_ratio=1.0, sample_ratio=0.5, task_ratio=2.0, noise=0.1,
                                               ridge=0.1),
        dict(context_ratio="positive", sample_ratio="positive", task_ratio="positive_inf", noise="nonneg",
             ridge="nonneg")),
    Row("pool_resolvent", replica.pool_resolvent, dict(x=1.0, task_ratio=2.0),
        dict(x="array", task_ratio="positive_inf")),
    Row("ridge", replica.ridge, dict(data=DATA, pb=PB, lam=0.1, model="reduced", method="auto", rtol=1e-8, maxiter=100),
        dict(data="prompts", pb="problem", lam="nonneg", model="model", method="choice", rtol="tol", maxiter="posint")),
    # N_test (the test prompts' context length) of the per-dataset engines
    Row("ridge_N_test", replica.ridge, dict(data=DATA, pb=PB, lam=0.1, N_test=7), dict(N_test="posint")),
    Row("gibbs_N_test", replica.gibbs, dict(data=DATA, pb=PB, beta=100.0, lam=0.1, N_test=7), dict(N_test="posint")),
    Row("dataset_average_N_test", replica.dataset_average, dict(pb=PB, P=5, beta=100.0, lam=0.1, n_datasets=2,
                                                              N_test=7), dict(N_test="posint")),
]

# the kernel and feature learners (tiny: D = 3, the Gaussian laws or 64 sampled contexts)
PB_TANH = linattn.Problem(3, 4, 0.1, link="tanh")
PB_POOL = linattn.Problem(3, 4, 0.1, link="tanh", tasks=2)
KDATA = replica.kernel_data(PB, 12, rng=0, features="linear")
ROWS += [
    Row("kernel_data", replica.kernel_data, dict(pb=PB, P=12, rng=0, features="linear"),
        dict(pb="problem", P="posint", rng="rng", features="choice")),
    Row("kernel_ridge", replica.kernel_ridge, dict(data=KDATA, pb=PB, lam=0.1, rtol=1e-8, maxiter=100, N_test=7),
        dict(data="prompts", pb="problem", lam="positive", rtol="tol", maxiter="posint", N_test="posint")),
    Row("learner_theory", replica.learner_theory, dict(pb=PB_TANH, P=20, lam=0.1, learner="kernel", law="gaussian",
                                                       N_test=7, progress=False),
        dict(pb="problem", P="positive", lam="positive", learner="choice", law="choice", N_test="posint",
             progress="bool")),
    Row("learner_theory_feature", replica.learner_theory,
        dict(pb=PB_POOL, P=20, lam=0.1, learner="feature", law="finite", n_pools=1, n_contexts=64, rng=0),
        dict(pb="problem", P="positive", lam="positive", learner="choice", law="choice", n_pools="posint",
             n_contexts="posint", rng="seed")),
    Row("feature_learner_theory", replica.feature_learner_theory,
        dict(pb=PB_POOL, P=20, lam=0.1, N_test=5, readout="optimal", law="finite", decay="balanced", n_pools=1,
             n_contexts=64, rng=0, max_iter=50, tol=1e-8, progress=False),
        dict(pb="problem", P="positive", lam="positive", N_test="posint", readout="choice", law="choice",
             decay="choice", n_pools="posint", n_contexts="posint", rng="seed", max_iter="posint", tol="tol",
             progress="bool")),
]

# the feature theory's overlaps of a given Γ; the Gaussian channel of the Markov-chain bottleneck (C = 3, d = 2)
PRIOR = linattn.markov.bottleneck.prior_moments(3, 1.0, n_chains=200, rng=0)
CHANNEL = replica.projection_channel(3, 1.0, 2, 20)
ROWS += [
    Row("gamma_overlaps", replica.gamma_overlaps, dict(pb=PB_TANH, Gamma=np.eye(3), N_test=7),
        dict(pb="problem", Gamma="array", N_test="posint")),
    Row("channel", replica.channel, dict(E=np.eye(9)[:, :2], length=20, moments=PRIOR, n_logdet=64),
        dict(E="array", length="posint", n_logdet="posint")),
    Row("projection_channel", replica.projection_channel, dict(C=3, concentration=1.0, d=2, length=20),
        dict(C="posint", concentration="positive", d="posint", length="posint")),
    Row("information_theory", replica.information_theory, dict(K=4, ch=CHANNEL), dict(K="positive")),
    Row("k2_theory", replica.k2_theory, dict(ch=CHANNEL, gap=1.0), dict(gap="positive")),
]

NOT_INPUTS = {"Channel", "AsymptoticErrors", "RidgeSolution", "GibbsAverages", "DatasetAverage", "StationaryTheory",
              "StationaryCurve", "OrderParameters", "PoolErrors", "LearnerTheory", "FeatureTheory",
              "KernelRidgeSolution", "DiversityTransition"}
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, replica, NOT_INPUTS)


def test_special_cases():
    """Special cases that returned garbage or a raw exception."""
    with pytest.raises(ValueError, match="pb"):
        replica.gibbs(ES, linattn.Problem(3, 5), 100.0, 0.1)             # answered for the eigensystem's problem
    with pytest.raises(ValueError, match="beta"):
        replica.gibbs(ES, PB, 1e-320, 0.1)                              # thermal terms overflow
    with pytest.raises(ValueError, match="Delta"):
        replica.rs_functional(PB, 5, 100.0, 0.1, 0.2, [0.3], [-0.1])
    with pytest.raises(ValueError, match="P_range"):
        replica.phase_boundary(PB, np.inf, 0.1, P_range=(10.0, 1.0))
    with pytest.raises(ValueError, match="tau"):
        replica.asymptotic(1.0, 1.0, 2.0, 0.0, 0.0)                      # ridgeless double-descent peak
    with pytest.raises(ValueError, match="lam"):
        replica.ridge(PB.sample(40, rng=0), PB, (0.1, 0.0), "full")       # one block without decay
    with pytest.raises(ValueError, match="lam"):
        replica.ridge(DATA, PB, (0.1, 0.2), "reduced")                   # a pair for the reduced model
    with pytest.raises(ValueError, match="method"):
        replica.ridge(DATA, PB, 0.0, "reduced", method="gram")           # min-norm with P >= M needs CG
    with pytest.raises(ValueError, match="pool"):                         # a pool for fresh tasks
        replica.feature_learner_theory(PB_TANH, 20, 0.1, pool=np.ones((2, 3)))
    with pytest.raises(ValueError, match="pool"):                         # a zero task has no direction
        replica.feature_learner_theory(PB_POOL, 20, 0.1, pool=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="pool"):
        replica.learner_theory(PB_POOL, 20, 0.1, learner="feature", pool=np.ones((3, 3)))


def test_asymptotic_never_fails_inside_its_documented_ranges():
    """The certified bracket holds at every corner of the accepted ranges (no ConvergenceError, finite errors)."""
    import itertools

    for a, t, k, s, r in itertools.product((1e-8, 1.0, 1e8), (1e-8, 0.5, 2.0, 1e8), (1e-8, 1.0, np.inf),
                                           (0.0, 1.0, 1e6), (0.0, 1e-3, 1e8)):
        if r == 0.0 and t == 1.0:
            continue
        out = replica.asymptotic(a, t, k, s, r)
        assert np.isfinite(out.test) and np.isfinite(out.test_idg), (a, t, k, s, r)


# ----------------------------------------------------------------------------- refusals and extreme arguments
def test_remaining_replica_and_flow_cases_name_their_argument():
    """Each names the argument at fault."""
    import dynamics
    pb = linattn.Problem(3, 4, 0.1)
    with pytest.raises(ValueError, match="rho"):
        replica.rs_functional(pb, 5, 100, 0.1, rho=1e300, norm2=[1e301], Delta=[1.0])
    for bad in ([], [-1.0]):
        with pytest.raises(ValueError, match="P_values"):
            replica.stationary_curve(pb, bad, np.inf, 0.1)
    with pytest.raises(ValueError, match="pool"):
        replica.stationary(linattn.Problem(3, 4, 0.1, tasks=2), 5, np.inf, 0.1, pool=np.zeros((2, 3)))
    d = pb.sample(6, rng=0)
    zero = linattn.Prompts(s=d.s, xq=d.xq, yq=np.zeros(6), y2=d.y2)
    with pytest.raises(ValueError, match="data"):
        dynamics.long_time_limit(zero, pb, 0.1)
