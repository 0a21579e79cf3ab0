"""Diagnostics of nonlinear transformers (optional extra ``[torch]``; Mainali & Teixeira, seed paper): the
experiments of the figures ``icl_emergence`` and ``grokking`` (:mod:`validation.gallery.transformers`).

Every training run seeds torch and its data generator from its own seed, so each run is a point:

* ``icl_emergence``: one point per ``(task, depth, seed)`` —
  :func:`validation.simulators.train_attention_only`
  and its transitions (:func:`diagnostics.emergence`), as in
  :func:`validation.simulators.emergence_study`;
* ``grokking``: one point per seed of :func:`validation.simulators.train_modular_addition`.

Torch is imported only when a point is computed: without it the experiments are registered but cannot run
(the figures are skipped).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import diagnostics

from ._base import Experiment
from ._data import ExperimentData

TASKS = ("copy", "regression")


@dataclass(frozen=True, eq=False, repr=False)
class EmergenceDepth(ExperimentData):
    """The runs of one depth on one task (``R`` records, ``n_layers`` layers, 4 heads averaged).

    Attributes
    ----------
    loss : ndarray (n_seeds, R)
        Training loss of each seed.
    marginalised : ndarray (n_seeds, R, n_layers)
        Marginalised effective rank of the QK circuits (top singular value removed, mean over heads).
    distance : ndarray (n_seeds, R, n_layers)
        Subspace distance of the QK circuits to their final value (mean over heads).
    loss_step, loss_steepest : ndarray (n_seeds,)
        The step at which the loss is half-way from its first to its last value, and where it falls fastest.
    distance_step : ndarray (n_seeds, n_layers)
        The half-way step of the distance.
    dip_step, dip_depth : ndarray (n_seeds, n_layers)
        Where and how deep the marginalised rank dips.
    """

    loss: np.ndarray
    marginalised: np.ndarray
    distance: np.ndarray
    loss_step: np.ndarray
    loss_steepest: np.ndarray
    distance_step: np.ndarray
    dip_step: np.ndarray
    dip_depth: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class EmergenceTask(ExperimentData):
    """The runs of one task (``"copy"`` or ``"regression"``).

    Attributes
    ----------
    steps : ndarray (R,)
        Recorded steps (those of the last depth's first seed, as :func:`emergence_study`).
    baseline : float
        The task's reference loss (regression: ``E_g`` of the best linear attention).
    depths : dict of int to EmergenceDepth
        By number of layers.
    """

    steps: np.ndarray
    baseline: float
    depths: dict[int, EmergenceDepth]


@dataclass(frozen=True, eq=False, repr=False)
class ICLEmergenceData(ExperimentData):
    """Data of ``icl_emergence``.

    Attributes
    ----------
    by_task : dict of str to EmergenceTask
        By task (:data:`TASKS`).
    """

    by_task: dict[str, EmergenceTask]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``{task}_steps``, ``{task}_baseline`` and ``{task}_L{L}_{field}``."""
        out = dict(arrays)
        for task in TASKS:
            out[f"by_task[{task}].steps"], out[f"by_task[{task}].baseline"] = (out.pop(f"{task}_steps"),
                                                                           out.pop(f"{task}_baseline"))
            for L in settings["depths"]:
                for f in EmergenceDepth.__dataclass_fields__:
                    out[f"by_task[{task}].depths[{int(L)}].{f}"] = out.pop(f"{task}_L{L}_{f}")
        return out


class ICLEmergence(Experiment):
    """Attention-only transformers on in-context copying and regression: loss and QK diagnostics."""

    name = "icl_emergence"
    title = "Attention-only transformers: loss, marginalised effective rank and subspace distance of QK"
    data_class = ICLEmergenceData
    presets = {
        "smoke": dict(depths=[1, 2], seeds=[0, 1], copy=dict(steps=100, record=10, half=6, vocab=12),
                      regression=dict(steps=100, record=10, D=3, N=6)),
        "quick": dict(depths=[1, 2], seeds=[0, 1, 2], copy=dict(steps=2000, record=25, half=12, vocab=32),
                      regression=dict(steps=3000, record=25, D=12, N=24)),
        "full": dict(depths=[1, 2, 3], seeds=[0, 1, 2, 3, 4], copy=dict(steps=4000, record=25, half=12, vocab=32),
                     regression=dict(steps=6000, record=25, D=12, N=24)),
    }

    def points(self, s):
        return [dict(task=task, layers=L, seed=seed) for task in TASKS for L in s.depths for seed in s.seeds]

    def compute(self, s, point):
        from diagnostics._transformer_runs import emergence

        from ..simulators._transformer_training import train_attention_only

        run = train_attention_only(point["task"], point["layers"], rng=point["seed"], **s[point["task"]])
        ev = emergence(run)
        return dict(steps=run.steps, baseline=float(run.metrics["baseline"][0]), loss=run.loss,
                    marginalised=ev.marginalised, distance=ev.subspace_distance, loss_step=ev.loss_step,
                    loss_steepest=ev.loss_steepest, distance_step=ev.distance_step, dip_step=ev.dip_step,
                    dip_depth=ev.dip_depth)

    def assemble(self, s, outputs):
        runs = list(zip(self.points(s), outputs))
        tasks = {}
        for task in TASKS:
            mine = [(p, o) for p, o in runs if p["task"] == task]
            last = [o for p, o in mine if p["layers"] == s.depths[-1]][0]     # as emergence_study: the last depth's
            depths = {}                                                        # first seed
            for L in s.depths:
                outs = [o for p, o in mine if p["layers"] == L]
                depths[int(L)] = EmergenceDepth(**{key: np.array([o[key] for o in outs])
                                                   for key in EmergenceDepth.__dataclass_fields__})
            tasks[task] = EmergenceTask(steps=last["steps"], baseline=float(last["baseline"]), depths=depths)
        meta = {"depths": list(s.depths), "seeds": list(s.seeds), **{task: dict(s[task]) for task in TASKS}}
        return ICLEmergenceData(by_task=tasks), meta


@dataclass(frozen=True, eq=False, repr=False)
class GrokkingData(ExperimentData):
    """Data of ``grokking`` (``R`` records, one row per seed).

    Attributes
    ----------
    steps : ndarray (R,)
        Recorded steps.
    train_acc, test_acc : ndarray (n_seeds, R)
        Accuracies.
    test_loss, loss : ndarray (n_seeds, R)
        Test loss and training loss.
    ov_distance, qk_distance : ndarray (n_seeds, R)
        Subspace distance of the OV and QK circuits to their final values (mean over heads).
    ov_marginalised, qk_marginalised : ndarray (n_seeds, R)
        Their marginalised effective ranks (mean over heads).
    train_half : ndarray (n_seeds,)
        The step at which the train accuracy first reaches 0.99 (memorised; ``nan``: never).
    test_half : ndarray (n_seeds,)
        The step at which the test accuracy first reaches 0.9 (generalised).
    ov_distance_half : ndarray (n_seeds,)
        The half-way step of the OV distance.
    """

    steps: np.ndarray
    train_acc: np.ndarray
    test_acc: np.ndarray
    test_loss: np.ndarray
    loss: np.ndarray
    ov_distance: np.ndarray
    ov_marginalised: np.ndarray
    qk_distance: np.ndarray
    qk_marginalised: np.ndarray
    train_half: np.ndarray
    test_half: np.ndarray
    ov_distance_half: np.ndarray


class Grokking(Experiment):
    """One-layer transformer on modular addition: accuracies and OV/QK diagnostics, one point per seed."""

    name = "grokking"
    title = "Grokking in modular addition: train/test accuracy and the OV subspace distance"
    data_class = GrokkingData
    presets = {"smoke": dict(p=7, steps=100, record=10, seeds=[0], d_model=16, mlp=32),
               "quick": dict(p=31, steps=6000, record=50, seeds=[0, 1], d_model=64, mlp=256),
               "full": dict(p=31, steps=10000, record=50, seeds=[0, 1, 2, 3], d_model=64, mlp=256)}
    PER_SEED = ("train_acc", "test_acc", "test_loss", "loss", "ov_distance", "ov_marginalised", "qk_distance",
                "qk_marginalised")

    def points(self, s):
        return [dict(seed=seed) for seed in s.seeds]

    def compute(self, s, point):
        from ..simulators._transformer_training import train_modular_addition

        r = train_modular_addition(p=s.p, steps=s.steps, record=s.record, rng=point["seed"], d_model=s.d_model,
                                   mlp=s.mlp)
        out = {"steps": r.steps, "loss": r.loss, **{k: r.metrics[k] for k in ("train_acc", "test_acc", "test_loss")}}
        for c in ("ov", "qk"):
            C = getattr(r, c)[:, 0]
            out[f"{c}_distance"] = np.mean([diagnostics.subspace_distance(C[:, h], C[-1, h]) for h in range(r.heads)],
                                           axis=0)
            out[f"{c}_marginalised"] = diagnostics.effective_rank(C, skip=1).mean(axis=1)
        return out

    def assemble(self, s, outputs):
        from diagnostics._transformer_runs import halfway_step

        d = {"steps": np.asarray(outputs[-1]["steps"])}
        d.update({k: np.array([o[k] for o in outputs]) for k in self.PER_SEED})
        # memorised: train accuracy 0.99; generalised: test accuracy 0.9 (the test accuracy sits near 0.5 during
        # memorisation: the mirror (b, a) of half the test pairs is in the training set)
        d["train_half"] = diagnostics.crossing_times(d["steps"], d["train_acc"], 0.99)
        d["test_half"] = diagnostics.crossing_times(d["steps"], d["test_acc"], 0.9)
        d["ov_distance_half"] = np.array([halfway_step(d["steps"], x, 5) for x in d["ov_distance"]])
        return GrokkingData(**d), dict(s)
