"""Swap the library's laws for their baselines and run the discriminating acceptance tests: each must fail.

Run from the repository root: .venv/bin/python docs/scripts/swap_baselines.py  (~3 minutes)
Monkeypatches replica.stationary and dynamics.averaged_curves so that the default law (finite-D,
correlated channel) returns Marchenko-Pastur or the decoupled channel, then calls the test functions
of tests/replica/test_theory.py and tests/dynamics/test_averaged.py and prints PASSED/FAILS per case.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))              # the packages (before tests/validation, a test folder)
sys.path.append(str(ROOT / "tests"))       # tests/helpers.py
import importlib.util  # noqa: E402

import dynamics  # noqa: E402
import replica  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

th = load(ROOT / "tests/replica/test_theory.py", "tt")
av = load(ROOT / "tests/dynamics/test_averaged.py", "ta")
orig_st, orig_av = replica.stationary, dynamics.averaged_curves
for base, kw in (("mp", dict(law="mp")), ("decoupled", dict(channel="decoupled"))):
    def st(pb, P, beta, lam, model="reduced", law="finite", channel="correlated", _kw=kw):
        if law == "finite" and channel == "correlated":       # the library's law -> the baseline
            return orig_st(pb, P, beta, lam, model, **{"law": "finite", "channel": "correlated", **_kw})
        return orig_st(pb, P, beta, lam, model, law, channel)
    def ac(pb, P, lam, times, gamma=1.0, init=None, law="finite", channel="correlated", model="reduced", _kw=kw):
        if law == "finite" and channel == "correlated":
            return orig_av(pb, P, lam, times, gamma, init, **{"law": "finite", "channel": "correlated", **_kw},
                           model=model)
        return orig_av(pb, P, lam, times, gamma, init, law, channel, model)
    th.replica.stationary = st
    av.dynamics.averaged_curves = ac
    for prob, model, n in th.SETTINGS:
        try:
            th.test_theory_against_dataset_averaged_exact_values(prob, model, n)
            print(base, "stationary", prob, model, "PASSES")
        except AssertionError as e:
            print(base, "stationary", prob, model, "FAILS:", str(e).splitlines()[0][:150])
    for model, P in av.CASES:
        try:
            av.test_theory_against_exact_dataset_means(P, model)
            print(base, "curves", model, P, "PASSES")
        except AssertionError as e:
            print(base, "curves", model, P, "FAILS:", str(e).splitlines()[0][:150])
th.replica.stationary = orig_st
av.dynamics.averaged_curves = orig_av
