"""No silent wrong answer, round 8: what the sixth adversarial pass (non-default configurations, methods, sweeps,
the command line, and pass 5's leftovers) found — each case as found, with the argument its message must name (or
the value it must return)."""
import tempfile

import numpy as np
import pytest

import diagnostics
import linattn
import replica
import spectra
import validation

PB = linattn.Problem(4, 8, 0.1)
RELU = linattn.Problem(4, 8, 0.01, link="relu")
PBK = linattn.Problem(4, 8, 0.1, tasks=3)
LAW = spectra.prompt_law(PB, n_nodes=64, log2_points=10)


def _bad_checkpoints():
    d = tempfile.mkdtemp(prefix="round8")
    np.savez(f"{d}/step1.npz", W=np.ones((2, 2)), b=np.ones(2))
    np.savez(f"{d}/step2.npz", W=np.array([[1.0, np.nan], [0.0, 1.0]]), b=np.ones(2))
    return d


# (id, call, the argument the ValueError must name)
REFUSED = [
    # pass 5's leftovers — accepted nonsense: NaN weights loaded; a non-str data key accepted until save; E_g < 0
    ("checkpoints-nan", lambda: diagnostics.load_checkpoints(_bad_checkpoints()), "source"),
    ("result-int-key", lambda: validation.Result("x", "smoke", {}, {1: np.ones(2)}), "data"),
    ("result-reserved-key", lambda: validation.Result("x", "smoke", {}, {"__result__": np.ones(2)}), "data"),
    ("relative-gap-negative-test", lambda: linattn.relative_gap(1.0, -0.5), "test"),
    # pass 5's leftovers — ConvergenceError out of the meaningful range: M/P beyond float64 (brentq's absolute
    # xtol = 1e-300 stopped at a = 0 for M/P > 1e300); a density peak too sharp for the real-axis fixed point; the
    # learner theories' fixed point below lam = 1e-20 (where the test errors are already their ridgeless limit)
    ("ridge-resolvent-tiny-P", lambda: spectra.ridge_resolvent(1e-300, 0.1, LAW), "P"),
    ("density-huge-alpha", lambda: spectra.density(np.array([0.5, 1.0]), 1e12, PB), "alpha"),
    ("learner-theory-tiny-lam", lambda: replica.learner_theory(RELU, 100.0, 1e-300, n_contexts=256), "lam"),
    ("feature-theory-tiny-lam", lambda: replica.learner_theory(RELU, 10.0, 1e-300, learner="feature"), "lam"),
    # raw scipy ValueError ("The function value at x=inf is NaN") / NaN residual: a ≈ λ' P/M beyond float64
    ("ridge-resolvent-huge-lam-P", lambda: spectra.ridge_resolvent(1e300, 1e300, LAW), "lam"),
]


@pytest.mark.parametrize("call, name", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"):
        call()


def test_pool_learner_theory_at_tiny_lam_was_silently_wrong():
    """The pool theory at ``lam = 1e-300`` returned a test error of 0.430 where its ridgeless limit (``lam = 1e-50``,
    ``1e-30``) is 0.529: silent wrong values; now the smallest accepted ``lam`` is 1e-20, at that limit."""
    th = replica.learner_theory(PBK, 10.0, 1e-20, n_contexts=256, n_pools=2)
    assert np.isfinite(th.test) and th.train < 1e-18


def test_ridge_resolvent_down_to_the_smallest_P():
    """One block, ``P → 0``: ``a → P/M``; at ``M/P = 1e300`` it returned a = 0 (ConvergenceError, residual inf)."""
    for P in (LAW.M * 1e-300, 1e-250, 1e-20):
        r = spectra.ridge_resolvent(P, 0.1, LAW)
        assert np.allclose(r.a, P / LAW.M, rtol=1e-12) and np.all(np.isfinite(r.omega_t))


def test_result_keys_are_checked_once_and_save_still_refuses_a_changed_dict():
    res = validation.Result("x", "smoke", {}, {"": np.ones(2), "a": np.ones(1)})      # '' is a valid npz member
    res.data[2] = np.ones(1)
    with pytest.raises(ValueError, match=r"(?<![A-Za-z_])data(?![A-Za-z_])"):
        res.save(tempfile.mkdtemp(prefix="round8") + "/r.npz")


def test_load_checkpoints_keeps_finite_weights_of_a_diverged_run():
    assert diagnostics.load_checkpoints(_bad_checkpoints(), names=["b"]).weights["b"].shape == (2, 2)
