r"""The measures of a recorded transformer run (numpy; Mainali & Teixeira, arXiv 2504.12916): the record
:class:`TransformerRun` (losses and the per-head circuits ``QK_h = W_{Q,h}ᵀ W_{K,h}``, ``OV_h = W_O[:, h] W_{V,h}``
at every record, :func:`diagnostics.qk_circuit`, :func:`diagnostics.ov_circuit`) and its transition times
(:func:`emergence`: the loss, the marginalised effective rank and the subspace distance of the circuits).

The runs themselves — attention-only transformers on in-context regression and copying, and modular addition
(grokking) — are trained by ``validation/simulators/_transformer_training.py`` (optional extra ``[torch]``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linattn import _check as check
from linattn._arguments import array, choice, instance, integer, public
from linattn._results import short_repr

from ._measures import effective_rank, subspace_distance
from ._transitions import steepest_changes


@dataclass(frozen=True)
class TransformerRun:
    """A training run with its recorded circuits.

    Attributes
    ----------
    task : str
        ``"regression"``, ``"copy"`` or ``"modular"``.
    layers, heads, d_model, seed : int
    steps : ndarray (T,)
        Recorded steps (``record, 2 record, …``).
    loss : ndarray (T,)
        Training loss, averaged over the ``record`` steps before each record (online tasks) or the full
        training set (modular).
    qk, ov : ndarray (T, layers, heads, d_model, d_model)
        Per-head circuits at each record.
    metrics : dict of str to ndarray (T,)
        Task-specific curves (``"test_loss"``, ``"train_acc"``, ``"test_acc"``, ``"baseline"``…).
    """

    __repr__ = short_repr

    task: str
    layers: int
    heads: int
    d_model: int
    seed: int
    steps: np.ndarray
    loss: np.ndarray
    qk: np.ndarray
    ov: np.ndarray
    metrics: dict = field(default_factory=dict)


def _smooth(x, k):
    """Centred moving average over ``k`` records (shrinking at the ends)."""
    if k <= 1:
        return np.asarray(x, float)
    c = np.convolve(np.ones(len(x)), np.ones(k), mode="same")
    return np.convolve(x, np.ones(k), mode="same") / c


@public(steps=array(ndim=1), x=array(ndim=1), k=integer(minimum=-check.MAX_INT))
def halfway_step(steps, x, k):
    """First step at which the smoothed ``x`` has covered half of its way from its first to its last value.

    Parameters
    ----------
    steps : array_like (T,)
        Strictly increasing steps of the records.
    x : array_like (T,)
        The recorded curve.
    k : int
        Records of the centred moving average (``<= 1``: no smoothing).

    Returns
    -------
    float
        The step (linear interpolation between records), ``nan`` if never reached.
    """
    from ._transitions import crossing_times

    if x.shape != steps.shape or x.size < 1:
        check.fail("x", f"<array with shape {x.shape}>", f"a non-empty array of the shape of steps, {steps.shape}")
    if k > x.size:
        check.fail("k", k, f"an integer <= the number of records, {x.size}")
    s = _smooth(x, k)
    below = s[-1] < s[0]
    return float(crossing_times(steps, s, 0.5 * (s[0] + s[-1]), below=below))


@dataclass(frozen=True)
class Emergence:
    """Transition times of one run (:func:`emergence`).

    Attributes
    ----------
    loss_step : float
        First step at which the smoothed ``ln loss`` is half-way from its first to its last value.
    loss_steepest : float
        Step of the steepest fall of the smoothed ``ln loss`` against ``ln step``.
    distance_step : ndarray (layers,)
        Same for the head-mean subspace distance of the circuit to its final value.
    dip_step, dip_depth : ndarray (layers,)
        Step of the minimum of the head-mean marginalised effective rank, and the dip's depth
        ``min(first, last) − minimum`` (0 for a monotone curve: no dip).
    marginalised, subspace_distance : ndarray (T, layers)
        The head-mean curves.
    """

    __repr__ = short_repr

    loss_step: float
    loss_steepest: float
    distance_step: np.ndarray
    dip_step: np.ndarray
    dip_depth: np.ndarray
    marginalised: np.ndarray
    subspace_distance: np.ndarray


@public(run=instance(TransformerRun, "a TransformerRun"), circuit=choice(("qk", "ov")), smooth=integer())
def emergence(run: TransformerRun, circuit="qk", skip=1, smooth=5) -> Emergence:
    r"""Transition times of the loss and of the diagnostics of a recorded run.

    The loss: the half-way step of ``ln loss`` and the step of its steepest fall against ``ln step``.
    Per layer, the head-mean marginalised effective rank (top ``skip`` singular values removed) and the
    head-mean subspace distance ``‖C_h(∞)(I − C_h(t)⁺C_h(t))‖/‖C_h(∞)‖`` of the circuit ``C = QK`` or ``OV``
    to its final value (exact pseudo-inverse: each circuit has rank ``<= d_head < d_model``). Curves are
    smoothed by a centred moving average of ``smooth`` records before the times are read.

    Parameters
    ----------
    run : TransformerRun
    circuit : {"qk", "ov"}
    skip : int
        ``0 <= skip < d_model``.
    smooth : int
        ``>= 1`` records.

    Returns
    -------
    Emergence
    """
    steps = check.finite_array("run.steps", run.steps, ndim=1)
    T = steps.size
    loss = check.finite_array("run.loss", run.loss, shape=(T,))
    if T < 1 or np.any(loss <= 0):
        check.fail("run.loss", "<array>", f"a non-empty array of {T} losses > 0 (their logarithm is read)")
    C = check.finite_array(f"run.{circuit}", getattr(run, circuit),
                           shape=(T, run.layers, run.heads, run.d_model, run.d_model))
    if smooth > T:
        check.fail("smooth", smooth, f"an integer <= the number of records, {T}")
    skip = check.nonneg_int("skip", skip, maximum=run.d_model - 1)
    marg = effective_rank(C, skip=skip).mean(axis=2)                     # (T, layers)
    dist = np.stack([np.mean([subspace_distance(C[:, l, h], C[-1, l, h]) for h in range(run.heads)], axis=0)
                     for l in range(run.layers)], axis=1)
    ms = np.stack([_smooth(marg[:, l], smooth) for l in range(run.layers)], axis=1)
    ln_loss = _smooth(np.log(loss), smooth)
    return Emergence(loss_step=halfway_step(steps, np.log(loss), smooth),
                     loss_steepest=float(steepest_changes(ln_loss, steps, n=1)[0]),
                     distance_step=np.array([halfway_step(steps, dist[:, l], smooth) for l in range(run.layers)]),
                     dip_step=steps[np.argmin(ms, axis=0)].astype(float),
                     dip_depth=np.minimum(ms[0], ms[-1]) - ms.min(axis=0), marginalised=marg, subspace_distance=dist)
