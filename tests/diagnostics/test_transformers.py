"""Transformer demos of the diagnostics: the analysis without torch, the training with it (skipped when absent)."""
import sys

import numpy as np
import pytest
from helpers import Row, check_case, sweep_cases

from diagnostics import TransformerRun, emergence
from validation.simulators import torch_available


def _synthetic_run(T=60, heads=2, d=6, dh=3):
    """QK circuits (rank dh < d) whose row space turns from a random start to a fixed final one, with a transient
    collapse of the singular values beneath the top one (a dip of the marginalised rank) at records 15–25."""
    rng = np.random.default_rng(0)
    steps = np.arange(1, T + 1) * 10.0
    final = np.linalg.qr(rng.standard_normal((d, d)))[0][:, :dh]
    start = np.linalg.qr(rng.standard_normal((d, d)))[0][:, :dh]
    qk = np.empty((T, 1, heads, d, d))
    for i in range(T):
        w = min(1.0, i / 30.0)                                   # reaches the final space at record 30
        basis = np.linalg.qr((1 - w) * start + w * final)[0]
        sv = np.array([3.0, 1.0, 1.0])
        if 15 <= i <= 25:
            sv[1:] = 0.2                                         # spectrum beneath the top collapses
        for h in range(heads):
            qk[i, 0, h] = basis @ np.diag(sv) @ basis.T
    loss = np.exp(-np.clip((steps - 200.0) / 50.0, 0.0, 4.0))  # ln loss linear from step 200 to 400
    return TransformerRun(task="copy", layers=1, heads=heads, d_model=d, seed=0, steps=steps, loss=loss, qk=qk, ov=qk)


def test_emergence_reads_known_times_from_a_synthetic_run():
    run = _synthetic_run()
    e = emergence(run, smooth=1)
    # ln loss goes linearly from 0 (step 200) to −4 (step 400): half-way at step 300
    assert e.loss_step == pytest.approx(300.0, abs=1e-9)
    # beneath the top the singular values are (1, 1), and (0.2, 0.2) at records 15–25: the effective rank is
    # scale-free, so a uniform shrink of the bulk is no dip (marginalised rank 2 throughout)
    assert e.dip_depth[0] == pytest.approx(0.0, abs=1e-9)
    # the distance is 0 from record 30 on and falls monotonically before: half-way before record 30
    assert e.subspace_distance[30:, 0] == pytest.approx(0.0, abs=1e-12)
    assert 10.0 <= e.distance_step[0] < 310.0


def test_emergence_sees_a_dip_of_the_spectrum_beneath_the_top():
    run = _synthetic_run()
    qk = run.qk.copy()
    # make the bulk unequal during the dip: the third singular value collapses to 0.01
    for i in range(15, 26):
        for h in range(run.heads):
            U, s, Vt = np.linalg.svd(qk[i, 0, h])
            s[2] = 0.01
            qk[i, 0, h] = (U * s) @ Vt
    e = emergence(TransformerRun(**{**run.__dict__, "qk": qk}), smooth=1)
    p = np.array([0.2, 0.01]) / 0.21
    expected_min = np.exp(-np.sum(p * np.log(p)))                 # effective rank of the bulk (0.2, 0.01)
    assert e.marginalised[20, 0] == pytest.approx(expected_min, rel=1e-9)
    assert e.dip_depth[0] == pytest.approx(2.0 - expected_min, rel=1e-9)
    assert 150.0 <= e.dip_step[0] <= 260.0


def test_without_torch_the_training_says_how_to_install_it(monkeypatch):
    from validation.simulators import _transformer_training as transformers

    monkeypatch.setitem(sys.modules, "torch", None)            # import torch now raises ImportError
    assert not transformers.torch_available()
    with pytest.raises(ImportError, match=r"\[torch\]"):
        transformers.train_attention_only("copy", 1, steps=20, record=10)


# ----------------------------------------------------------------------------- with torch
torch_only = pytest.mark.skipif(not torch_available(), reason="optional extra [torch] not installed")


@torch_only
def test_a_short_run_records_circuits_of_rank_at_most_the_head_size():
    from validation.simulators import train_attention_only

    run = train_attention_only("copy", 2, steps=40, record=10, d_model=16, heads=4, half=6, vocab=12, rng=1)
    assert run.qk.shape == (4, 2, 4, 16, 16) and run.ov.shape == run.qk.shape
    assert np.all(np.isfinite(run.loss))
    assert np.all(np.linalg.matrix_rank(run.qk[-1, 0]) <= 4)
    # the same seed gives the same run
    again = train_attention_only("copy", 2, steps=40, record=10, d_model=16, heads=4, half=6, vocab=12, rng=1)
    np.testing.assert_array_equal(run.loss, again.loss)


@torch_only
def test_regression_loss_starts_at_the_null_predictor():
    from validation.simulators import train_attention_only

    run = train_attention_only("regression", 1, steps=20, record=10, D=4, N=8, lr=1e-6, batch=512, rng=0)
    # with a tiny learning rate the model barely moves from a small output: loss ≈ ½ E[y_q²] = ½ (s.e. ~ 0.5/√(512·10))
    assert run.loss[0] == pytest.approx(0.5, abs=0.1)


def test_emergence_bad_input():
    run = _synthetic_run()
    for kwargs, name in ((dict(run=None), "run"), (dict(run=run, circuit="vo"), "circuit"),
                         (dict(run=run, skip=-1), "skip"), (dict(run=run, skip=6), "skip"),
                         (dict(run=run, smooth=0), "smooth"), (dict(run=run, smooth=1.5), "smooth")):
        with pytest.raises(ValueError, match=name):
            emergence(**kwargs)


ROWS = [
    Row("build_model", "build_model", dict(n_in=3, n_out=2, seq_len=4, d_model=8, heads=2, layers=1, mlp=0,
                                           tokens=False),
        dict(n_in="posint", n_out="posint", seq_len="posint", d_model="posint", heads="posint", layers="posint",
             mlp="nonnegint", tokens="bool")),
    Row("emergence_study", "emergence_study", dict(task="copy", depths=(1,), seeds=(0,), steps=20, record=10,
                                                    d_model=8, heads=2, half=4, vocab=6),
        dict(task="choice", depths="intlist", seeds="intlist", steps="posint", record="posint")),
    Row("train_attention_only", "train_attention_only",
        dict(task="copy", layers=1, steps=20, d_model=8, heads=2, lr=1e-3, batch=4, record=10, rng=0, half=4, vocab=6),
        dict(task="choice", layers="posint", steps="posint", d_model="posint", heads="posint", lr="positive",
             batch="posint", record="posint", rng="seed", half="posint", vocab="posint")),
    Row("train_modular_addition", "train_modular_addition",
        dict(p=5, train_fraction=0.5, steps=20, d_model=8, heads=2, mlp=8, lr=1e-3, lam=1.0, record=10, rng=0),
        dict(p="posint", train_fraction="tol", steps="posint", d_model="posint", heads="posint", mlp="posint",
             lr="positive", lam="nonneg", record="posint", rng="seed")),
]


@torch_only
@pytest.mark.parametrize("case", sweep_cases(ROWS), ids=lambda c: c[0])
def test_bad_input(case):
    from validation.simulators import _transformer_training as transformers

    _, row, arg, value = case
    check_case(Row(row.name, getattr(transformers, row.func), row.kwargs, row.kinds), arg, value)


@torch_only
@pytest.mark.slow
def test_copy_task_dip_and_early_distance_fall_over_three_seeds():
    """Mainali & Teixeira's signatures on in-context copying (about 2 min): the marginalised effective rank of QK dips
    in every layer of 2-layer models and never in 1-layer ones (whose rank only falls), and the QK subspace distance
    is half-way down before the loss is — in the 2-layer models only. Measured (quick figure, seeds 0–2): dip depth
    0.13–0.38, in 1 layer exactly 0; distance half-way at 430–690 vs loss half-way at 720–940."""
    from validation.simulators import emergence_study

    st = emergence_study("copy", depths=(1, 2), seeds=(0, 1, 2), steps=2000, record=25, half=12, vocab=32)
    one, two = st.events[1], st.events[2]
    assert all(e.dip_depth[0] == 0.0 for e in one)
    assert all(np.all(e.dip_depth > 0.05) for e in two)          # 0.05: a third of the smallest depth measured
    assert all(np.all(e.distance_step < e.loss_step) for e in two)
    assert all(np.all(e.dip_step < e.loss_step) for e in two)
    # the 1-layer model cannot copy in context (loss ≈ 2 nats); the 2-layer one can (< 0.2)
    assert np.all(st.loss[1][:, -5:].mean(1) > 1.0) and np.all(st.loss[2][:, -5:].mean(1) < 0.2)


def _run(T=6, D=3):
    traj = np.stack([np.eye(D) * (1 + 0.1 * k) + 0.01 * k * np.ones((D, D)) for k in range(T)])
    return TransformerRun(task="x", layers=1, heads=1, d_model=D, seed=0, steps=np.arange(1, T + 1),
                          loss=np.linspace(1, 0.1, T), qk=traj[:, None, None], ov=traj[:, None, None])


def test_halfway_step_and_emergence_check_their_arguments():
    """halfway_step took its arrays unchecked (a scalar x raised IndexError, an empty one IndexError, k = 1e12 a
    MemoryError, a float k numpy's TypeError), and emergence read a TransformerRun of misshapen circuits (AxisError)
    or more smoothing records than records: each is a ValueError naming the argument."""
    import dataclasses

    from diagnostics import halfway_step

    steps, x = np.arange(6.0), np.linspace(0.0, 1.0, 6)
    assert halfway_step(steps, x, 1) == pytest.approx(2.5)
    assert halfway_step(steps, x, -1) == halfway_step(steps, x, 0) == halfway_step(steps, x, 1)
    for bad, name in (((steps, 0.5, 1), "x"), ((steps, x[:5], 1), "x"), ((steps, [], 1), "x"),
                      ((steps, x, 10**12), "k"), ((steps, x, 2.5), "k"), ((steps, x, None), "k"),
                      ((0.0, x, 1), "steps")):
        with pytest.raises(ValueError, match=rf"^diagnostics\.halfway_step: {name} must be"):
            halfway_step(*bad)
    run = _run()
    assert np.isfinite(emergence(run, smooth=1).loss_step)
    for kw, smooth, name in ((dict(qk=run.qk[:, 0]), 1, r"run\.qk"), (dict(loss=np.zeros(6)), 1, r"run\.loss"),
                             (dict(steps=np.arange(5)), 1, r"run\.loss"), ({}, 7, "smooth")):
        with pytest.raises(ValueError, match=rf"^diagnostics\.emergence: {name} must be"):
            emergence(dataclasses.replace(run, **kw), smooth=smooth)


def test_study_table_of_one_seed_has_nan_spreads():
    """EmergenceStudy.table reported sd = 0 over a single seed, a spread it cannot estimate."""
    from validation.simulators import EmergenceStudy

    ev = emergence(_run(), smooth=1)
    for seeds, finite in (((0,), False), ((0, 1), True)):
        study = EmergenceStudy(task="x", depths=(1,), seeds=seeds, steps=np.arange(1, 7), loss={1: np.ones((1, 6))},
                               events={1: [ev] * len(seeds)}, baseline=0.0)
        assert all(np.isfinite(sd) == finite for *_, sd in study.table())
