r"""Gradient descent on the whole attention matrix ``W`` through the real forward pass.

The training loss of the network itself,

.. math:: E_t(W) = \frac{1}{2P} Σ_μ \big(y_q^μ − f(Z^μ)_{D+1, N+1}\big)² + \frac{λ}{2} ‖W‖_F²,

is minimised by plain gradient descent on all ``(D+1)²`` entries of ``W``, computing every
prediction with the forward pass ``f(Z) = Z Zᵀ W Z / N`` on the embedded prompts
(:mod:`linattn.attention`). Because ``ŷ`` is linear in ``W``, ``∂ŷ/∂W`` (taken from the forward
pass) is the same at every step. The loss gradient of ``W12`` and ``W22`` is exactly zero (the
query's label slot is zero), so those blocks only decay by ``(1 − ηλ)`` per step; ``W11 = Γ`` and
``W21 = vᵀ`` follow the closed-form solution of :func:`dynamics.gradient_descent` (full model).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import _attention as attention
from linattn import _check as check
from linattn._results import short_repr


@dataclass(frozen=True, eq=False)
class AttentionRun:
    """``W`` at the recorded steps (``len(steps) × (D+1) × (D+1)``) and the training losses.

    Attributes
    ----------
    steps : ndarray (T,)
        Recorded steps.
    W : ndarray (T, D+1, D+1)
        The attention matrix at each recorded step.
    train : ndarray (T,)
        Training losses.
    loss_gradient_W12_W22 : float
        The largest ``|∂(data loss)/∂W12|``, ``|∂/∂W22|`` seen over the run.
    """

    __repr__ = short_repr

    steps: np.ndarray
    W: np.ndarray
    train: np.ndarray
    loss_gradient_W12_W22: float   # max |∂(data loss)/∂W12, ∂/∂W22| seen over the run


def attention_gradient_descent(Z, yq, lam, n_steps, lr, W0=None, record=None) -> AttentionRun:
    """Run ``n_steps`` of gradient descent on ``W`` (module docstring).

    Parameters
    ----------
    Z : ndarray (P, D+1, N+1)
        Embedded prompts (:meth:`linattn._sampling.Tokens.embed`).
    yq : ndarray (P,)
        Targets.
    lam : float
        Weight decay on all of ``W``.
    n_steps : int
    lr : float
    W0 : ndarray (D+1, D+1), optional
        Initial matrix (zeros by default); one whose training loss overflows float64 is refused (``ValueError`` naming
        ``W0``).
    record : array_like of int, optional
        Steps at which to store ``W`` (default: every step).

    Returns
    -------
    AttentionRun
    """
    Z = check.finite_array("Z", Z, ndim=3)
    P, d1, _ = Z.shape
    yq = check.finite_array("yq", yq, shape=(P,))
    lam = check.nonnegative("lam", lam)
    n_steps = check.nonneg_int("n_steps", n_steps)
    lr = check.positive("lr", lr)
    W = np.zeros((d1, d1)) if W0 is None else check.finite_array("W0", W0, shape=(d1, d1)).copy()
    if record is None:      # every step: the record (and W at each) grows with n_steps — checked before it is built
        check.memory(8.0 * (n_steps + 1) * (1 + d1 * d1), f"W at {n_steps + 1} recorded steps (record=None: every "
                     "step)", "n_steps (or pass record)")
    rec = np.arange(n_steps + 1) if record is None else np.unique(check.counts("record", record))
    if rec.size == 0 or rec.max() > n_steps:
        check.fail("record", record, f"a non-empty list of integer steps in [0, n_steps = {n_steps}]")
    check.memory(8.0 * rec.size * d1 * d1, f"W at {rec.size} recorded steps", "record or n_steps")
    check.work(float(n_steps) * (Z.shape[0] * d1**4 + check.PYTHON_TRIP),
               f"{n_steps} steps of gradient descent on {Z.shape[0]} prompts",
               "n_steps")
    dyhat = attention.prediction_gradient(Z)            # (P, D+1, D+1), independent of W
    Ws, losses = [], []
    worst = 0.0
    for n in range(n_steps + 1):
        try:
            yhat = attention.predict(Z, W)              # the real forward pass
        except ValueError:
            if n == 0:
                raise                                   # the inputs themselves (Z, W0)
            check.fail("lr", lr, f"a step size for which gradient descent stays finite (the prediction overflowed "
                       f"float64 at step {n}: the descent diverges)")
        r = yhat - yq
        if n in rec or n == 0:
            with np.errstate(over="ignore", invalid="ignore"):
                loss = 0.5 * np.mean(r * r) + 0.5 * lam * np.sum(W * W)
            if not np.isfinite(loss):
                if n == 0:                              # the start itself: W0 (or labels yq) beyond float64's range
                    check.finite_result(loss, {"W0": W, "yq": yq}, "the training loss at the start")
                check.fail("lr", lr, f"a step size for which gradient descent stays finite (the loss overflowed "
                           f"float64 at step {n}: the descent diverges)")
        if n in rec:
            Ws.append(W.copy())
            losses.append(loss)
        if n == n_steps:
            break
        data_grad = np.einsum("p,pjk->jk", r, dyhat) / P
        worst = max(worst, float(np.max(np.abs(data_grad[:, -1]))))
        with np.errstate(over="ignore", invalid="ignore"):
            W = W - lr * (data_grad + lam * W)
        if not np.all(np.isfinite(W)):
            check.fail("lr", lr, f"a step size for which gradient descent stays finite (W overflowed float64 at step "
                       f"{n + 1}: the descent diverges)")
    return AttentionRun(steps=rec, W=np.array(Ws), train=np.array(losses), loss_gradient_W12_W22=worst)
