r"""The feature learner's readout: a piecewise-linear function of the attention output, fitted by ridge.

The feature learner (Gu, Xu & Zdeborová) computes ``t = sᵀΓx_q`` and predicts ``ŷ = g(t)`` with

.. math:: g(t) = a_0 + a_1 t + Σ_{j=1}^{J} a_{j+1} \max(0, t − b_j) = ψ(t)ᵀ a,
          \qquad ψ(t) = [1,\ t,\ (t − b_1)_+, …, (t − b_J)_+],

a one-hidden-layer ReLU network with fixed knots ``b_j``, placed at the quantiles ``(j − ½)/J`` of the training
values of ``t`` (:func:`quantile_knots`). For a fixed ``Γ`` the readout is linear in ``a``: its weight-decayed fit on
``P`` pairs ``(t_μ, y_μ)`` is the ridge ``a = (ΨᵀΨ/P + λ I)^{-1} Ψᵀy/P`` (:func:`fit_readout`; every coefficient is
decayed, as in the learner's loss ``(1/2P) Σ_μ (y_μ − g(t_μ))² + (λ/2)|a|²``).

One place for the class: the simulator (:func:`validation.feature_learner`) trains it and the
theory (``replica/_feature_theory.py``, ``readout="trained"``) fits it to the training law of ``t``. Both check what
their users give (``n_knots``, ``lam``) and call these with arrays they made: only :func:`readout`, which
:mod:`validation` exports (``validation.readout``), checks its arguments.
"""
from __future__ import annotations

import numpy as np

from . import _check as check
from ._arguments import array, public


def hinge_features(t, knots):
    """The readout's features ``ψ(t) = [1, t, (t − b_1)_+, …, (t − b_J)_+]``.

    Parameters
    ----------
    t : ndarray (n,)
        Attention outputs ``sᵀΓx_q``.
    knots : ndarray (J,)
        Knots ``b_j``.

    Returns
    -------
    ndarray (n, J + 2)
    """
    t = np.asarray(t, dtype=float)
    return np.concatenate([np.ones((t.size, 1)), t[:, None], np.maximum(0.0, t[:, None] - knots)], axis=1)


@public(t=array(), knots=array(ndim=1))
def readout(t, a, knots):
    """The feature learner's readout ``g(t) = a_0 + a_1 t + Σ_j a_{j+2} max(0, t − b_j)``.

    Parameters
    ----------
    t : array_like
        Attention outputs ``sᵀ Γ x_q``.
    a : array_like (J + 2,)
        Readout coefficients.
    knots : array_like (J,)
        Knots ``b_j``.

    Returns
    -------
    ndarray
        ``g(t)``, of the shape of ``t``.
    """
    a = check.finite_array("a", a, shape=(knots.size + 2,))
    return a[0] + a[1] * t + np.maximum(0.0, t[..., None] - knots) @ a[2:]


def quantile_knots(t, n_knots):
    """Knots at the quantiles ``(j + ½)/J``, ``j = 0..J−1``, of the training attention outputs ``t``.

    Parameters
    ----------
    t : ndarray (P,)
        Training values of ``t = sᵀΓx_q`` (``P >= 1``).
    n_knots : int
        ``1 <= J <= 64``.

    Returns
    -------
    ndarray (J,)
        Strictly increasing knots: ties (e.g. ``t ≡ 0``) are spread by ``1e-12`` times the scale of ``t`` (at least
        one float step), so that every hinge is distinct.
    """
    q = np.quantile(t, (np.arange(n_knots) + 0.5) / n_knots)
    scale = max(float(np.max(np.abs(t))), 1.0)
    for j in range(1, n_knots):     # spread ties by at least one ulp of the knot, whatever the scale of t
        q[j] = max(q[j], np.nextafter(q[j - 1], np.inf), q[j - 1] + 1e-12 * scale)
    return q


def fit_readout(t, y, knots, lam):
    r"""The weight-decayed least-squares readout of fixed knots: ``a = (ΨᵀΨ/P + λI)^{-1} Ψᵀy/P``, the minimiser of
    ``(1/2P) Σ_μ (y_μ − ψ(t_μ)ᵀa)² + (λ/2)|a|²``.

    Parameters
    ----------
    t, y : array_like (P,)
        Training attention outputs and labels.
    knots : array_like (J,)
    lam : float
        Weight decay ``λ > 0`` (every coefficient, the intercept included).

    Returns
    -------
    ndarray (J + 2,)
        Computed from the SVD ``Ψ/√P = U diag(s) Vᵀ`` as ``a = V diag(s/(s² + λ)) Uᵀy/√P``, the same ridge written
        so that it stays finite for every ``λ > 0``: singular values below rounding (``s <= s_max · ε · max(P,
        J + 2)``, a direction ``Ψ`` does not see) contribute 0, their value at exact ``s = 0`` — so a ``λ`` below
        float64's resolution of ``ΨᵀΨ/P`` gives the minimum-norm least-squares readout, the ``λ → 0`` limit.
    """
    Psi = hinge_features(t, knots)
    y = np.asarray(y, dtype=float)
    P = y.size
    u, s, vt = np.linalg.svd(Psi / np.sqrt(P), full_matrices=False)
    seen = s > s[0] * np.finfo(float).eps * max(Psi.shape)
    gain = np.divide(s, s * s + lam, out=np.zeros_like(s), where=seen)
    return vt.T @ (gain * (u.T @ y)) / np.sqrt(P)
