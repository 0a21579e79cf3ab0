"""Bad-input sweep of dynamics (rung 5): every public callable, every argument."""
import os
import tempfile

import numpy as np
import pytest
from helpers import Row, sweep_tests

import diagnostics
import dynamics
import linattn
import spectra
from dynamics._averaged import exp_contour, filter_poles

PB = linattn.Problem(3, 4, 0.1)
DATA = PB.sample(6, rng=0)
ES = spectra.eigensystem(DATA, PB)
PBA = linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25])
PAR = linattn.factorized.Parametrization("value_kq", 3)
NPZ = os.path.join(tempfile.mkdtemp(prefix="linattn-ckpt-"), "ckpt_1.npz")
np.savez(NPZ, W=np.eye(2))

ROWS = [
    Row("gradient_flow", dynamics.gradient_flow, dict(data=DATA, pb=PB, lam=0.1, times=[0.0, 1.0], gamma=1.0,
                                                     init=0.1, model="reduced", return_params=False),
        dict(data="prompts", pb="problem", lam="nonneg", times="array", gamma="positive", model="model",
             return_params="bool")),
    Row("gradient_descent", dynamics.gradient_descent, dict(data=ES, pb=PB, lam=0.1, steps=[0, 3], lr=0.01,
                                                           init=None, model="reduced", return_params=False),
        dict(pb="problem", lam="nonneg", steps="array", lr="positive", model="model", return_params="bool")),
    Row("long_time_limit", dynamics.long_time_limit, dict(data=DATA, pb=PB, lam=0.1, model="reduced", init=np.ones(9)),
        dict(data="prompts", pb="problem", lam="nonneg", model="model", init="array_shape")),
    Row("averaged_curves", dynamics.averaged_curves, dict(pb=PB, P=6, lam=0.1, times=[0.0, 1.0], gamma=1.0, init=0.1,
                                                         law="mp", channel="correlated", model="reduced",
                                                         n_datasets=2, rng=0, progress=False),
        dict(pb="problem", P="positive", lam="nonneg", times="array", gamma="positive", init="nonneg", law="choice",
             channel="choice", model="model", n_datasets="nonnegint", rng="seed", progress="bool")),
    Row("gap_sweep", dynamics.gap_sweep, dict(pb=PB, P_values=[4, 8], lam=0.1, n_datasets=2, model="reduced",
                                             time=None, rng=0, progress=False),
        dict(pb="problem", P_values="array", lam="nonneg", n_datasets="posint", model="model", rng="seed",
             progress="bool")),
    Row("mean_flow", dynamics.mean_flow, dict(pb=PBA, parametrization=PAR, theta0=PAR.init(0.1, 0), times=[0.0, 1.0],
                                             data=None, lam=0.01, gamma=1.0, rtol=1e-6, method="DOP853"),
        dict(pb="problem", theta0="array_shape", times="array", lam="nonneg", gamma="positive", rtol="tol",
             method="choice")),
    Row("mode_flow", dynamics.mode_flow, dict(pb=PBA, p0=0.1, q0=[0.1, 0.2, 0.1], times=[0.0, 1.0], lam=0.0,
                                             gamma=1.0, rtol=1e-6),
        dict(pb="problem", p0="array", q0="array", times="array", lam="nonneg", gamma="positive", rtol="tol")),
    Row("mode_constants", dynamics.mode_constants, dict(pb=PBA), dict(pb="problem")),
    Row("mode_loss", dynamics.mode_loss, dict(pb=PBA, modes=[0.1, 0.2, 0.3]), dict(pb="problem", modes="array")),
    Row("logistic_modes", dynamics.logistic_modes, dict(pb=PBA, a0=1e-3, times=[0.0, 1.0], gamma=1.0),
        dict(pb="problem", a0="array", times="array", gamma="positive")),
    Row("escape_times", dynamics.escape_times, dict(pb=PBA, a0=[1e-3, 1e-3, 1e-3], fraction=0.5, gamma=1.0),
        dict(pb="problem", a0="array", fraction="tol", gamma="positive")),
    Row("saddle_losses", dynamics.saddle_losses, dict(spectrum=[0.4, 0.3, 0.2], N=31, noise=0.1),
        dict(spectrum="array", N="posint", noise="nonneg")),
    Row("exp_contour", exp_contour, dict(n=31, mu=4.54, h=0.18), dict(n="posint", mu="positive", h="positive")),
    Row("filter_poles", filter_poles, dict(rescaled_time=1.0, lam=0.1), dict(rescaled_time="positive", lam="nonneg")),
    Row("effective_rank", diagnostics.effective_rank, dict(M=np.eye(3)[None].repeat(2, 0), skip=1, k=3, rng=0,
                                                           progress=False),
        dict(M="array", skip="nonnegint", k="posint", rng="rng", progress="bool")),
    Row("singular_values", diagnostics.singular_values, dict(M=np.eye(3), k=2, rng=0, progress=False),
        dict(M="array", k="posint", rng="rng", progress="bool")),
    Row("stable_rank", diagnostics.stable_rank, dict(M=np.eye(3)), dict(M="array")),
    Row("subspace_distance", diagnostics.subspace_distance, dict(M_t=np.eye(3), M_ref=np.diag([1.0, 2, 0]), rtol=0.1,
                                                             side="row"),
        dict(M_t="array", M_ref="array_shape", rtol="tol", side="choice")),
    Row("principal_angles", diagnostics.principal_angles, dict(M_t=np.eye(3), M_ref=np.diag([1.0, 2, 0]), k=2,
                                                               side="row"),
        dict(M_t="array", M_ref="array_shape", k="posint", side="choice")),
    Row("diagnose", diagnostics.diagnose, dict(M=np.stack([np.eye(3), 2 * np.eye(3)]), times=[1.0, 2.0],
                                            reference=np.eye(3), skip=1, rtol=0.1, k=3, rng=0, progress=False),
        dict(M="array_shape", times="array_shape", reference="array_shape", skip="nonnegint", rtol="tol",
             k="posint", rng="rng", progress="bool")),
    Row("steepest_changes", diagnostics.steepest_changes, dict(series=np.tanh(np.linspace(-3, 3, 20)),
                                                            times=np.geomspace(1, 10, 20), n=1, scale="log", window=5),
        dict(series="array_shape", times="array_shape", n="posint", scale="choice", window="posint")),
    Row("change_points", diagnostics.change_points, dict(series=np.repeat([0.0, 1.0], 10),
                                                         times=np.geomspace(1, 10, 20), n=1, scale="log", min_size=2),
        dict(series="array_shape", times="array_shape", n="posint", scale="choice", min_size="posint")),
    Row("loss_curvature", diagnostics.loss_curvature, dict(loss=np.geomspace(1, 0.1, 20), times=np.geomspace(1, 10, 20),
                                                        scale="log", window=5),
        dict(loss="array_shape", times="array_shape", scale="choice", window="posint")),
    Row("rolling_autocorrelation", diagnostics.rolling_autocorrelation, dict(series=np.sin(np.arange(20.0)), window=8,
                                                                             lag=1),
        dict(series="array_shape", window="posint", lag="posint")),
    Row("load_checkpoints", diagnostics.load_checkpoints, dict(source=[NPZ], names=["W"]),
        dict(source="choice", names="strlist")),
    Row("qk_circuit", diagnostics.qk_circuit, dict(W_Q=np.ones((4, 3)), W_K=np.ones((4, 3)), heads=2),
        dict(W_Q="array", W_K="array_shape", heads="posint")),
    Row("ov_circuit", diagnostics.ov_circuit, dict(W_O=np.ones((3, 4)), W_V=np.ones((4, 3)), heads=2),
        dict(W_O="array", W_V="array_shape", heads="posint")),
    Row("split_in_proj", diagnostics.split_in_proj, dict(in_proj_weight=np.ones((6, 2))), dict(in_proj_weight="array")),
    Row("markov_minimal_loss", dynamics.markov_minimal_loss, dict(score_scale=1.0, delta=0.5, C=2, N=3,
                                                                  concentration=0.5),
        dict(score_scale="real", delta="real", C="posint", N="posint", concentration="positive", first_state="choice",
             variant="choice", method="choice", n_mc="posint", rng="rng", eps="positive")),
    Row("markov_minimal_flow", dynamics.markov_minimal_flow,
        dict(score_scale0=0.01, delta0=0.01, C=2, N=3, concentration=0.5, times=[0.0, 1.0]),
        dict(score_scale0="real", delta0="real", C="posint", N="posint", concentration="positive", times="array",
             first_state="choice", variant="choice", method="choice", gamma="positive", n_mc="posint", rng="rng",
             eps="positive", rtol="tol", radius="positive")),
    Row("markov_minimal_theory", dynamics.markov_minimal_theory, dict(C=2, N=3, concentration=0.5),
        dict(C="posint", N="posint", concentration="positive", first_state="choice", variant="choice", method="choice",
             gamma="positive", n_mc="posint", rng="rng", eps="positive")),
]

NOT_INPUTS = {"LearningCurves", "LongTimeLimit", "AveragedCurves", "Sweep", "StagedFlow", "ModeFlow", "ModeConstants",
              "TrajectoryDiagnostics", "Checkpoints", "MarkovMinimalLoss", "MarkovMinimalFlow", "MarkovMinimalTheory"}
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, dynamics, NOT_INPUTS)


def test_special_cases():
    """Special cases that returned NaN or a raw exception."""
    cur = dynamics.averaged_curves(PB, 6, 0.1, [0.0, 1e-300, 1e-155, 1e-20, 1e-3])    # was NaN below 1e-155
    assert np.all(np.isfinite(cur.test)) and np.all(np.isfinite(cur.train))
    assert np.all(np.diff(cur.train) <= 0)
    with pytest.raises(ValueError, match="pb"):
        dynamics.gradient_flow(ES, linattn.Problem(3, 5), 0.1, [1.0])       # other problem
    with pytest.raises(ValueError, match="init"):
        dynamics.long_time_limit(ES, PB, 0.1, init=0.3)                     # random init has no single limit
    with pytest.raises(ValueError, match="steps"):
        dynamics.gradient_descent(ES, PB, 0.1, [1.5], 0.01)
    with pytest.raises(ValueError, match="time"):
        dynamics.gap_sweep(PB, [4], 0.1, 2, time=-1.0)


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_3_10 = linattn.Problem(3, 10, 0.1)


@pytest.mark.parametrize("call", [
    lambda t: dynamics.mode_flow(PB_3_10, 0.1, 0.1, t),
    lambda t: dynamics.logistic_modes(PB_3_10, 0.1, t),
    lambda t: dynamics.gradient_flow(PB_3_10.sample(5, rng=0), PB_3_10, 0.1, t),
    lambda t: dynamics.averaged_curves(PB_3_10, 20, 0.1, t),
])
def test_two_dimensional_times_refused(call):
    with pytest.raises(ValueError, match="times"):
        call([[0.0, 1.0]])
