"""Experiment ``markov_bottleneck`` (bigram-embedding information and K₂*): a smoke run, the assembled
arrays, the nested standard error, and the checks — including that each check rejects a wrong result."""
import dataclasses
import math

import numpy as np
import pytest

from validation.experiments import _base as base
from validation.experiments._markov_bottleneck import _nested_mean


@pytest.fixture(scope="module")
def smoke():
    return base.run("markov_bottleneck", "smoke", progress=False)


def test_smoke_run_assembles_consistent_arrays(smoke):
    d, s = smoke.data, smoke.settings
    for L, ds in zip(s["lengths"], s["ds"]):
        scan = d.k2[L]
        seeds = scan.bigram.seeds
        assert seeds.shape == (len(ds), s["n_proj"], s["n_pools"])
        assert np.allclose(scan.bigram.measured, seeds.mean(axis=(1, 2)), rtol=0, atol=1e-12)   # balanced design
        assert np.all(scan.bigram.measured_se > 0) and np.all(np.isfinite(scan.unigram.measured))
        # the paired difference is the difference of the means (exact identity)
        assert np.allclose(scan.bigram.diff, scan.bigram.measured - scan.bigram.approx, rtol=0, atol=1e-12)
        assert np.all(scan.closed > 0)
    Ks = d.Ks
    for dd in s["curve_ds"]:
        assert np.all(d.curves[dd].bits <= np.log2(Ks) + 1e-12)        # the estimator never exceeds log2 K
        assert np.all(d.curves[dd].approx <= np.log2(Ks) + 1e-12)
    assert d.unigram_curve.bits.shape == Ks.shape


def test_checks_are_report_rows(smoke):
    rows = base.get("markov_bottleneck").checks(smoke)
    s = smoke.settings
    assert len(rows) == len(s["curve_ds"]) + len(s["lengths"]) + 1
    assert all(isinstance(r, base.Check) and r.section == "markov" and r.criterion for r in rows)


def _with(result, arrays):
    """``result`` with some arrays replaced (by member name of its data)."""
    return dataclasses.replace(result, data=type(result.data).from_arrays({**result.data.to_arrays(), **arrays}))


def test_checks_reject_wrong_results(smoke):
    """Each check passes on a result that satisfies its claim and fails on one that violates it (the same
    assertion both times; the smoke numbers themselves are not judged)."""
    exp, d, s = base.get("markov_bottleneck"), smoke.data, smoke.settings
    n_info = len(s["curve_ds"])
    # 1. approximation of I(K): equal to the estimate passes; off by 1 bit at one K fails
    dd = s["curve_ds"][0]
    good = d.curves[dd].bits.copy()
    assert exp.checks(_with(smoke, {f"curves[{dd}].approx": good}))[0].passed
    bad = good.copy()
    bad[-1] += 1.0
    assert not exp.checks(_with(smoke, {f"curves[{dd}].approx": bad}))[0].passed
    # 2. measured − approx of log2 K2*: +0.5 passes; −1 − 4 s.e. (not a lower bound) and +2 (too low) fail
    L = s["lengths"][0]
    se = d.k2[L].bigram.diff_se
    diff = f"k2[{L}].bigram.diff"
    assert exp.checks(_with(smoke, {diff: np.full_like(se, 0.5)}))[n_info].passed
    assert not exp.checks(_with(smoke, {diff: -1.0 - 4 * se}))[n_info].passed
    assert not exp.checks(_with(smoke, {diff: 2.0 + 4 * se}))[n_info].passed
    # 3. baseline: 3 bits below the bigram embedding passes; a baseline that carries as much fails
    top = max(s["curve_ds"])
    bits = d.curves[top].bits
    assert exp.checks(_with(smoke, {"unigram_curve.bits": bits - 3.0}))[-1].passed
    assert not exp.checks(_with(smoke, {"unigram_curve.bits": bits.copy()}))[-1].passed


def test_nested_standard_error():
    """Exact values on a hand example: the between-projection estimate, and the within-projection floor when the
    projection means agree."""
    x = np.array([[0.0, 0.2], [10.0, 10.2]])        # J = 2 projections × P = 2 pools; means 0.1, 10.1
    m, se = _nested_mean(x)
    assert m == pytest.approx(5.1, abs=1e-14)
    assert se == pytest.approx(5.0, abs=1e-14)      # Var(0.1, 10.1)/J = 50/2 = 25 > floor MSW/(J P) = 0.02/4
    y = np.array([[1.0, 3.0], [3.0, 1.0]])          # equal means: between = 0, floor MSW/(J P) = 2/4
    assert _nested_mean(y)[1] == pytest.approx(math.sqrt(0.5), abs=1e-15)
