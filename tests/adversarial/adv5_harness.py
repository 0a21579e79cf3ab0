# ruff: noqa  (a throwaway adversarial harness, not part of the suite: one-line statements kept short on purpose)
import sys; import os; sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
"""Adversarial pass 5: mutate each argument of a baseline call with a battery; classify outcomes (not collected by
pytest). Usage: python tests/adversarial/adv5_harness.py [group ...] > out.jsonl"""
import dataclasses
import json
import os
import signal
import sys
import time
import traceback

os.environ.setdefault("LINATTN_MEMORY_LIMIT", str(2 << 30))
import numpy as np

import diagnostics
import dynamics
import linattn
import replica
import spectra
import validation
from linattn import factorized, markov
from linattn import readout as ro
from validation import gallery, sweeps


class Hang(Exception): pass
def _alarm(*a): raise Hang()
signal.signal(signal.SIGALRM, _alarm)

BATTERY = [("0", 0), ("neg", -1), ("nan", float("nan")), ("inf", float("inf")), ("-inf", float("-inf")),
           ("1e300", 1e300), ("1e-300", 1e-300), ("1e12", 10**12), ("2.5", 2.5), ("True", True), ("str", "x"),
           ("None", None), ("list", []), ("empty", np.array([])), ("2d", np.ones((2, 2))), ("1e400", 10**400),
           ("cplx", 1 + 1j), ("arr3", np.array([1.0, 2.0, 3.0]))]

def finite_walk(x, depth=0):
    if depth > 4: return True
    if x is None or isinstance(x, (str, bool)): return True
    if isinstance(x, (int, float, complex, np.number)):
        return bool(np.isfinite(x))
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "fc" or bool(np.all(np.isfinite(x)))
    if dataclasses.is_dataclass(x):
        return all(finite_walk(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x))
    if isinstance(x, (tuple, list)):
        return all(finite_walk(v, depth + 1) for v in x)
    if isinstance(x, dict):
        return all(finite_walk(v, depth + 1) for v in x.values())
    return True

def run(fid, fn, kw, param, label, timeout=10):
    t0 = time.time()
    signal.alarm(timeout)
    try:
        r = fn(**kw)
        signal.alarm(0)
        out = "ok-finite" if finite_walk(r) else "DEFECT-nonfinite"
        msg = repr(r)[:150]
    except Hang:
        out, msg = "DEFECT-hang", ""
    except (ValueError, TypeError) as e:
        signal.alarm(0)
        m = str(e)
        import re
        named = param is None or re.search(rf"(?<![A-Za-z_]){re.escape(param)}(?![A-Za-z_])", m)
        out = "named-refusal" if named else "CAND-wrong-name"
        msg = f"{type(e).__name__}: {m[:200]}"
    except linattn.ConvergenceError as e:
        signal.alarm(0)
        out, msg = "convergence", str(e)[:150]
    except BaseException as e:
        signal.alarm(0)
        if isinstance(e, KeyboardInterrupt): raise
        out = "DEFECT-raw"
        tb = traceback.extract_tb(e.__traceback__)[-1]
        msg = f"{type(e).__name__}: {str(e)[:150]} @ {tb.filename.split('wt-adv5/')[-1]}:{tb.lineno}"
    finally:
        signal.alarm(0)
    print(json.dumps(dict(f=fid, p=param, v=label, out=out, msg=msg, s=round(time.time() - t0, 2))), flush=True)
    return out

def mutate(fid, fn, base, skip=(), extra=None, timeout=10):
    run(fid, fn, base, None, "BASELINE", timeout=30)
    for p in base:
        if p in skip: continue
        for label, val in BATTERY + (extra or {}).get(p, []):
            run(fid, fn, {**base, p: val}, p, label, timeout=timeout)

PB = linattn.Problem(4, 8, 0.1)
PBK = linattn.Problem(4, 8, 0.1, tasks=3)
RELU = linattn.Problem(4, 8, 0.01, link="relu")
TANH = linattn.Problem(3, 6, 0.0, link="tanh")
rng = np.random.default_rng(0)
T = rng.normal(size=40); Y = rng.normal(size=40)
DATA = PB.sample(30, rng=0)
KD = replica.kernel_data(RELU, 50, rng=0)
ES = spectra.eigensystem(DATA, PB)
M3 = rng.normal(size=(6, 4, 3))
GROUPS = {}
def group(f): GROUPS[f.__name__] = f; return f

@group
def readout_fns():
    mutate("hinge_features", ro.hinge_features, dict(t=T, knots=np.array([-1.0, 0.0, 1.0])))
    mutate("readout", ro.readout, dict(t=T, a=np.ones(5), knots=np.array([-1.0, 0.0, 1.0])))
    mutate("quantile_knots", ro.quantile_knots, dict(t=T, n_knots=5))
    mutate("fit_readout", ro.fit_readout, dict(t=T, y=Y, knots=np.array([-1.0, 0.0, 1.0]), lam=0.01))
    mutate("validation.readout", validation.readout, dict(t=T, a=np.ones(5), knots=np.array([-1.0, 0.0, 1.0])))

@group
def learner_th():
    mutate("learner_theory", replica.learner_theory, dict(pb=RELU, P=100.0, lam=0.01, n_contexts=256), timeout=20)
    mutate("feature_learner_theory", replica.feature_learner_theory,
           dict(pb=TANH, P=100.0, lam=0.01, n_contexts=64, n_pools=2, max_iter=10, n_knots=3), timeout=20)

@group
def kernel():
    mutate("kernel_ridge", replica.kernel_ridge, dict(data=KD, pb=RELU, lam=0.01))
    mutate("kernel_data", replica.kernel_data, dict(pb=RELU, P=50, rng=0))

@group
def diversity():
    mutate("diversity_transition", replica.diversity_transition,
           dict(pb=PB, P=200.0, beta=np.inf, lam=0.01, K_values=[2, 5], n_pools=2), timeout=20)

@group
def spectra_fns():
    mutate("hessian_eigenvalues", spectra.hessian_eigenvalues, dict(data=DATA, pb=PB))
    mutate("hessian_dense", spectra.hessian_dense, dict(data=DATA))
    mutate("slq_spectrum", spectra.slq_spectrum, dict(data=DATA, pb=PB, steps=10, n_probes=2, rng=0))
    mutate("hessian_matvec", spectra.hessian_matvec, dict(data=DATA, theta=np.ones(16)))
    mutate("density", spectra.density, dict(x=np.array([0.5, 1.0]), alpha=2.0, pb=PB))
    mutate("cdf", spectra.cdf, dict(x=np.array([0.5, 1.0]), alpha=2.0, pb=PB, n_grid=301))
    mutate("spectral_cdf", spectra.spectral_cdf, dict(alpha=2.0, pb=PB, n_grid=301))
    mutate("support_edges", spectra.support_edges, dict(alpha=2.0, pb=PB, n_grid=301))
    mutate("stieltjes", spectra.stieltjes, dict(z=np.array([-1.0, 1.0 + 0.1j]), alpha=2.0, pb=PB))
    mutate("zero_atom", spectra.zero_atom, dict(alpha=2.0))
    mutate("kolmogorov_distance", spectra.kolmogorov_distance,
           dict(eigenvalues=spectra.hessian_eigenvalues(DATA, PB), alpha=30 / 16, pb=PB))
    LAW = spectra.prompt_law(PB, n_nodes=64, log2_points=10)
    mutate("prompt_law", spectra.prompt_law, dict(pb=PB, n_nodes=64, log2_points=10, rng=0))
    mutate("block_resolvent", spectra.block_resolvent, dict(z=np.array([-1.0]), P=30.0, law=LAW))
    mutate("data_transforms", spectra.data_transforms, dict(z=np.array([-1.0]), P=30.0, law=LAW))
    mutate("ridge_resolvent", spectra.ridge_resolvent, dict(P=30.0, lam=0.1, law=LAW))
    mutate("pair_overlaps", spectra.pair_overlaps, dict(z1=-1.0, z2=-2.0, P=30.0, law=LAW))
    mutate("eigensystem", spectra.eigensystem, dict(data=DATA, pb=PB))
    mutate("as_eigensystem", spectra.as_eigensystem, dict(data=DATA, pb=PB))
    mutate("cmatmul", spectra.cmatmul, dict(a=np.ones((2, 3)), b=np.ones((3, 2))))

@group
def diag():
    mutate("effective_rank", diagnostics.effective_rank, dict(M=M3))
    mutate("stable_rank", diagnostics.stable_rank, dict(M=M3))
    mutate("singular_values", diagnostics.singular_values, dict(M=M3))
    mutate("subspace_distance", diagnostics.subspace_distance, dict(M_t=M3, M_ref=M3[-1]))
    mutate("principal_angles", diagnostics.principal_angles, dict(M_t=M3, M_ref=M3[-1]))
    mutate("diagnose", diagnostics.diagnose, dict(M=M3))
    s = np.r_[np.ones(20), np.zeros(20)] + 0.01 * rng.normal(size=40); t = np.arange(1.0, 41.0)
    mutate("steepest_changes", diagnostics.steepest_changes, dict(series=s, times=t))
    mutate("change_points", diagnostics.change_points, dict(series=s, times=t))
    mutate("loss_curvature", diagnostics.loss_curvature, dict(loss=s + 2, times=t))
    mutate("rolling_autocorrelation", diagnostics.rolling_autocorrelation, dict(series=s, window=5))
    mutate("crossing_times", diagnostics.crossing_times, dict(times=t, values=s, level=0.5, below=True))
    W = rng.normal(size=(4, 4))
    mutate("qk_circuit", diagnostics.qk_circuit, dict(W_Q=W, W_K=W, heads=2))
    mutate("ov_circuit", diagnostics.ov_circuit, dict(W_O=W, W_V=W, heads=2))
    mutate("split_in_proj", diagnostics.split_in_proj, dict(in_proj_weight=rng.normal(size=(12, 4))))

@group
def sims():
    mutate("kernel_learner", validation.kernel_learner, dict(pb=RELU, P=50, lam=0.01, rng=0))
    mutate("feature_learner", validation.feature_learner,
           dict(pb=TANH, P=30, lam=0.1, rng=0, max_steps=50, n_test_prompts=500, n_knots=3), timeout=20)
    mutate("binned_readout_error", validation.binned_readout_error, dict(pb=TANH, Gamma=np.eye(3) * 0.1, n=2000, bins=10))
    mutate("hermite_features", validation.hermite_features, dict(X=rng.normal(size=(5, 3))))
    x = rng.normal(size=200)
    mutate("autocorrelation", validation.autocorrelation, dict(x=x))
    mutate("integrated_time", validation.integrated_time, dict(x=x))
    mutate("mean_and_se", validation.mean_and_se, dict(x=x))
    mutate("boundary_from_means", validation.boundary_from_means,
           dict(P=np.array([10.0, 20.0, 40.0]), train_mean=np.array([0.1, 0.5, 0.9]), test_mean=np.array([1.0, 1.0, 1.0])))

@group
def misc():
    mutate("relative_gap", linattn.relative_gap, dict(train=0.5, test=1.0))
    mutate("transition_point", linattn.transition_point, dict(P=np.array([10.0, 20.0, 40.0]), gap=np.array([10.0, 6.0, 1.0])))
    mutate("contrast_ratio", linattn.contrast_ratio, dict(Gamma=np.eye(4)))
    mutate("pack", linattn.pack, dict(Gamma=np.eye(4), v=np.ones(5)))
    mutate("unpack", linattn.unpack, dict(theta=np.ones(16), D=4))
    mutate("matched_pseudocount", markov.matched_pseudocount, dict(C=3, concentration=1.0))
    mutate("expected_row_entropy", markov.expected_row_entropy, dict(C=3, concentration=1.0))
    mutate("markov.stationary", markov.stationary, dict(T=np.array([[0.5, 0.5], [0.2, 0.8]])))
    mutate("first_law", markov.first_law, dict(T=np.array([[0.5, 0.5], [0.2, 0.8]]), first_state="stationary"))
    mutate("asymptotic", replica.asymptotic, dict(context_ratio=2.0, sample_ratio=3.0, task_ratio=4.0, noise=0.1, ridge=0.01))
    mutate("pool_resolvent", replica.pool_resolvent, dict(x=0.5, task_ratio=2.0))
    mutate("saddle_losses", dynamics.saddle_losses, dict(spectrum=np.array([1.0, 0.5]), N=8))
    mutate("mode_loss", dynamics.mode_loss, dict(pb=PB, modes=np.ones((3, 4))))
    mutate("escape_times", dynamics.escape_times, dict(pb=PB, a0=0.01))
    mutate("logistic_modes", dynamics.logistic_modes, dict(pb=PB, a0=0.01, times=np.array([0.0, 1.0])))
    mutate("rs_constant", replica.rs_constant, dict(pb=PB))
    mutate("zero_atom_pb", spectra.zero_atom, dict(alpha=2.0, model="full", pb=PB))

@group
def sweepsg():
    mutate("task_seed", sweeps.task_seed, dict(seed=0, name="f", point={"a": 1}, replicate=0))
    mutate("grid_function", sweeps.grid_function, dict(name="linattn.relative_gap"))
    mutate("gallery.points", gallery.points, dict(name="fig2", mode="quick"))
    mutate("experiments.get", validation.experiments.get, dict(name="fig2"))



# ----------------------------------------------------------------------------- batch 2
DATA_F = PB.sample(30, rng=0, model="full") if "model" in __import__("inspect").signature(PB.sample).parameters else DATA
DK = PBK.sample(30, rng=0)

@group
def core():
    mutate("Problem", linattn.Problem, dict(D=4, N=8, noise=0.1, tasks=3))
    mutate("train_energy", linattn.train_energy, dict(data=DATA, Gamma=np.eye(4) * 0.1, lam=0.01))
    mutate("train_gradient", linattn.train_gradient, dict(data=DATA, Gamma=np.eye(4) * 0.1, lam=0.01))
    mutate("Problem.sample", PB.sample, dict(P=30, rng=0))
    mutate("Chains", markov.Chains, dict(C=3, concentration=1.0, K=4))

@group
def replica2():
    mutate("gibbs", replica.gibbs, dict(data=DATA, pb=PB, beta=10.0, lam=0.01))
    mutate("dataset_average", replica.dataset_average, dict(pb=PB, P=30, beta=10.0, lam=0.01, n_datasets=3))
    mutate("stationary", replica.stationary, dict(pb=PB, P=30.0, beta=10.0, lam=0.01))
    mutate("stationary_curve", replica.stationary_curve, dict(pb=PB, P_values=[20.0, 40.0], beta=10.0, lam=0.01))
    mutate("rs_functional", replica.rs_functional, dict(pb=PB, P=30.0, beta=10.0, lam=0.01, rho=0.5, norm2=1.0, Delta=0.5))
    mutate("phase_boundary", replica.phase_boundary, dict(pb=PB, beta=np.inf, lam=0.01, n_scan=20), timeout=20)
    mutate("ridge", replica.ridge, dict(data=DATA, pb=PB, lam=0.01))
    mutate("ridge_pool", replica.ridge, dict(data=DK, pb=PBK, lam=0.01, N_test=5))

@group
def dyn():
    mutate("gradient_flow", dynamics.gradient_flow, dict(data=DATA, pb=PB, lam=0.01, times=[0.0, 1.0, 10.0]))
    mutate("gradient_descent", dynamics.gradient_descent, dict(data=DATA, pb=PB, lam=0.01, steps=[0, 5, 10], lr=0.1))
    mutate("long_time_limit", dynamics.long_time_limit, dict(data=DATA, pb=PB, lam=0.01))
    mutate("averaged_curves", dynamics.averaged_curves, dict(pb=PB, P=30.0, lam=0.01, times=[0.0, 1.0, 10.0]))
    mutate("gap_sweep", dynamics.gap_sweep, dict(pb=PB, P_values=[20, 40], lam=0.01, n_datasets=2))
    mutate("mode_constants", dynamics.mode_constants, dict(pb=PB))
    mutate("mode_flow", dynamics.mode_flow, dict(pb=PB, p0=0.01, q0=0.01, times=[0.0, 1.0, 5.0]))
    par = factorized.Parametrization("merged", 4)
    mutate("mean_flow", dynamics.mean_flow, dict(pb=PB, parametrization=par, theta0=np.full(16, 0.01), times=[0.0, 1.0]))
    mutate("markov_minimal_loss", dynamics.markov_minimal_loss,
           dict(score_scale=0.5, delta=0.1, C=3, N=8, concentration=1.0, n_mc=1000, rng=0))
    mutate("markov_minimal_theory", dynamics.markov_minimal_theory,
           dict(C=3, N=8, concentration=1.0, n_mc=1000, rng=0), timeout=20)

@group
def markov2():
    CH = markov.Chains(C=3, concentration=1.0, K=4)
    S = CH.sample(6, 10, 0)
    mutate("losses", markov.losses, dict(chains=CH, n_seq=4, length=8, rng=0, n_pools=1, n_mc=8))
    mutate("log_losses", markov.log_losses, dict(states=S.states, name="1-gen", chains=CH))
    mutate("log_losses_naive", markov.log_losses_naive, dict(states=S.states, name="1-gen", chains=CH))
    mutate("predict", markov.predict, dict(states=S.states, name="2-gen", chains=CH, n_mc=8, rng=0))
    mutate("Chains.sample", CH.sample, dict(n_seq=6, length=10, rng=0))

@group
def sims2():
    mutate("chain", validation.chain, dict(data=DATA, pb=PB, beta=10.0, lam=0.01))
    ch = validation.chain(DATA, PB, 10.0, 0.01)
    mutate("choose_dt", validation.choose_dt, dict(ch=ch, n_samples=10, stride=10))
    mutate("langevin", validation.langevin, dict(data=DATA, pb=PB, beta=10.0, lam=0.01, n_equilibrate=100, n_samples=5,
                                                stride=10, on_unequilibrated="warn"), timeout=20)
    mutate("descent_from_random_inits", validation.descent_from_random_inits,
           dict(data=DATA, pb=PB, lam=0.01, steps=[0, 5], lr=0.1, init_sd=0.1, n_init=2, rng=0))
    par = factorized.Parametrization("merged", 4)
    mutate("factorized_descent", validation.factorized_descent,
           dict(pb=PB, parametrization=par, theta0=np.full(16, 0.01), n_steps=10, lr=0.01, batch=8, record=5))
    mutate("pool_average", validation.pool_average, dict(pb=PBK, P=30, lam=0.01, n_datasets=2))
    mutate("attention_gradient_descent", validation.attention_gradient_descent,
           dict(Z=np.ones((3, 5, 4)), yq=np.ones(3), lam=0.1, n_steps=5, lr=0.01))
    mutate("rank_dynamics", validation.rank_dynamics,
           dict(spectrum=np.array([1.0, 0.5]), N=8, n_chains=1, batch=8, record=3, n_grid=20), timeout=20)


if __name__ == "__main__":
    for g in sys.argv[1:] or GROUPS:
        GROUPS[g]()
