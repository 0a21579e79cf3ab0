"""Training energy and its gradient (conventions §1).

.. math:: E_t(Γ, v) = \frac{1}{2P} Σ_μ (y_q^μ − ŷ^μ)² + \frac{λ}{2}(‖Γ‖_F² + |v|²)

(or ``(λ_Γ/2)‖Γ‖_F² + (λ_v/2)|v|²`` with a weight decay per block),

with ``ŷ = sᵀ Γ x_q + y2 v·x_q``. The training loss reported everywhere includes the
weight-decay term.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check as check
from ._arguments import public
from ._prompts import Prompts
from ._results import short_repr
from ._validate import PROMPTS


def _check(data, Gamma, lam, v):
    """The arguments that depend on each other: ``lam`` (a pair only with ``v``), ``Gamma`` and ``v`` of the
    dimension of ``data``."""
    if check.asarray("lam", lam, "a number >= 0, or a pair (lam_Gamma, lam_v) when v is given").ndim == 0:
        lam = check.nonnegative("lam", lam)
        lam = (lam, lam)
    elif v is None or np.shape(lam) != (2,):
        check.fail("lam", lam, "a number >= 0, or a pair (lam_Gamma, lam_v) when v is given")
    else:
        lam = (check.nonnegative("lam[0]", lam[0]), check.nonnegative("lam[1]", lam[1]))
    G = check.finite_array("Gamma", Gamma, shape=(data.D, data.D))
    if v is not None:
        data._require("full")
        v = check.finite_array("v", v, shape=(data.D,))
    return lam, G, v


@public(data=PROMPTS)
def train_energy(data: Prompts, Gamma, lam, v=None) -> float:
    r"""Training energy ``E_t(Γ, v)`` including weight decay ``(λ/2)(‖Γ‖_F² + |v|²)``.

    Parameters
    ----------
    data : Prompts
    Gamma : array_like, shape (D, D)
    lam : float or (float, float)
        Weight decay ``λ >= 0``, or ``(λ_Γ, λ_v)`` per block when ``v`` is given (the peer's ridge ``λ_L`` of
        Lu et al. is ``(λ_L/D, λ_L)``, ``docs/pools.md``).
    v : array_like, shape (D,), optional
        ``None`` for the reduced model (``v = 0``).

    Returns
    -------
    float
    """
    lam, G, v = _check(data, Gamma, lam, v)
    with np.errstate(over="ignore", invalid="ignore"):
        r = data.yq - data._predict(G, v)
        reg = lam[0] * float(np.sum(G * G)) + (0.0 if v is None else lam[1] * float(v @ v))
        out = 0.5 * float(np.mean(r * r)) + 0.5 * reg
    check.finite_result(out, {"Gamma": G, "v": v, "lam": np.asarray(lam)}, "the training energy")
    return out


@dataclass(frozen=True)
class Gradient:
    """Gradient of ``E_t``: ``dGamma`` (D×D) and ``dv`` (D, or ``None`` for the reduced model).

    Attributes
    ----------
    dGamma : ndarray (D, D)
        ``∂E_t/∂Γ``.
    dv : ndarray (D,) or None
        ``∂E_t/∂v`` (``None`` for the reduced model).
    """

    __repr__ = short_repr

    dGamma: np.ndarray
    dv: np.ndarray | None


@public(data=PROMPTS)
def train_gradient(data: Prompts, Gamma, lam, v=None) -> Gradient:
    r"""Gradient of ``E_t``.

    .. math:: ∂E_t/∂Γ = −\frac1P Σ_μ r_μ s_μ x_{q,μ}ᵀ + λΓ,\quad
              ∂E_t/∂v = −\frac1P Σ_μ r_μ y2_μ x_{q,μ} + λ v,\quad r = y_q − ŷ.

    Parameters
    ----------
    data : Prompts
    Gamma : array_like, shape (D, D)
    lam : float or (float, float)
        Weight decay ``λ >= 0``, or ``(λ_Γ, λ_v)`` per block when ``v`` is given.
    v : array_like, shape (D,), optional
        ``None`` for the reduced model.

    Returns
    -------
    Gradient

    Raises
    ------
    ValueError
        Bad arguments, or arguments so large that the gradient overflows float64 (naming the largest of ``Gamma``,
        ``v``, ``lam``), as :func:`train_energy` does.
    """
    lam, G, v = _check(data, Gamma, lam, v)
    with np.errstate(over="ignore", invalid="ignore"):
        r = data.yq - data._predict(G, v)
        dG = -(data.s * r[:, None]).T @ data.xq / data.P + lam[0] * G
        dv = None
        if v is not None:
            dv = -(data.xq * (r * data.y2)[:, None]).sum(axis=0) / data.P + lam[1] * v
    culprits = {"Gamma": G, "v": v, "lam": np.asarray(lam)}
    check.finite_result(dG, culprits, "the gradient")
    if dv is not None:
        check.finite_result(dv, culprits, "the gradient")
    return Gradient(dGamma=dG, dv=dv)
