r"""The single-layer linear-attention network itself, on embedded prompts.

Embedding (conventions §1): ``Z ∈ R^{(D+1)×(N+1)}`` with columns ``[x_i; y_i]`` and last column
``[x_q; 0]``. Merged key-query matrix ``W ∈ R^{(D+1)×(D+1)}``; the layer computes

.. math:: f(Z) = Z Zᵀ W Z / N, \qquad ŷ = f(Z)_{D+1, N+1}.

Writing ``W = [[W11, W12], [W21, W22]]``, the prediction reduces to ``sᵀ W11 x_q + y2 W21 x_q``
(``W12`` and ``W22`` drop out because the query's label slot is zero). These functions are the
ground truth the reduced features are checked against, and drive the explicit
gradient-descent simulation of the whole matrix ``W``.
"""
from __future__ import annotations

import numpy as np

from . import _check as check
from ._arguments import public


@public
def embed(X, y, xq) -> np.ndarray:
    """Embedded prompts ``Z`` (columns ``[x_i; y_i]``, last column ``[x_q; 0]``).

    Parameters
    ----------
    X : array_like (P, N, D)
        Tokens: ``P, N, D >= 1`` (a prompt has at least one context token).
    y : array_like (P, N)
        Labels.
    xq : array_like (P, D)
        Queries.

    Returns
    -------
    ndarray (P, D+1, N+1)

    Raises
    ------
    ValueError
        Bad shapes or non-finite entries; or ``Z`` (and the float copy of ``X``) would not fit in memory
        (:func:`linattn._check.memory`, checked before anything is copied), naming ``X``.
    """
    shape = np.shape(X) if isinstance(X, np.ndarray) else None
    if shape is not None and len(shape) == 3:     # before finite_array copies X (a zero-stride view costs nothing)
        P, N, D = shape
        check.memory(8.0 * (P * N * D + P * (D + 1) * (N + 1)),
                     f"the embedded prompts Z of {P} prompts (N = {N}, D = {D})", "X")
    X = check.finite_array("X", X, ndim=3)
    P, N, D = X.shape
    if min(P, N, D) < 1:
        check.fail("X", f"<array with shape {X.shape}>", "an array of shape (P, N, D) with P, N, D >= 1")
    check.memory(8.0 * P * (D + 1) * (N + 1), f"the embedded prompts Z of {P} prompts (N = {N}, D = {D})", "X")
    y = check.finite_array("y", y, shape=(P, N))
    xq = check.finite_array("xq", xq, shape=(P, D))
    Z = np.zeros((P, D + 1, N + 1))
    Z[:, :D, :N] = np.swapaxes(X, 1, 2)
    Z[:, D, :N] = y
    Z[:, :D, N] = xq
    return Z


def _check_Z(Z):
    Z = check.finite_array("Z", Z)
    if Z.ndim == 2:
        Z = Z[None]
    if Z.ndim != 3 or Z.shape[1] < 2 or Z.shape[2] < 2:
        check.fail("Z", f"<array with shape {Z.shape}>", "an array of shape (D+1, N+1) or (P, D+1, N+1), D, N >= 1")
    return Z


def _check_ZW(Z, W):
    Z = _check_Z(Z)
    d1 = Z.shape[1]
    W = check.finite_array("W", W, shape=(d1, d1))
    return Z, W


@public
def forward(Z, W) -> np.ndarray:
    """The layer output ``f(Z) = Z Zᵀ W Z / N`` for every prompt.

    Parameters
    ----------
    Z : array_like (P, D+1, N+1) or (D+1, N+1)
        Embedded prompts.
    W : array_like (D+1, D+1)
        Merged key-query matrix.

    Returns
    -------
    ndarray (P, D+1, N+1)
    """
    return _forward(*_check_ZW(Z, W))


def _forward(Z, W):
    """:func:`forward` of checked ``Z`` (P, D+1, N+1) and ``W``."""
    N = Z.shape[2] - 1
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.einsum("pij,pkj,kl,plm->pim", Z, Z, W, Z, optimize=True) / N
    return check.finite_result(out, {"Z": Z, "W": W}, "the layer output")


@public
def predict(Z, W) -> np.ndarray:
    """Predictions ``ŷ = f(Z)[D+1, N+1]`` (last row, last column).

    Parameters
    ----------
    Z : array_like (P, D+1, N+1) or (D+1, N+1)
    W : array_like (D+1, D+1)

    Returns
    -------
    ndarray (P,)
    """
    return _forward(*_check_ZW(Z, W))[:, -1, -1]


@public
def prediction_gradient(Z) -> np.ndarray:
    r"""``∂ŷ/∂W`` for every prompt, from the forward pass (shape (P, D+1, D+1)).

    ``ŷ = Σ_{jk} (Z Zᵀ/N)_{D+1, j} W_{jk} Z_{k, N+1}``, hence
    ``∂ŷ/∂W_{jk} = (Z Zᵀ/N)_{D+1, j} Z_{k, N+1}``. The columns belonging to ``W12`` and ``W22``
    (``k = D+1``) vanish because ``Z_{D+1, N+1} = 0``.

    Parameters
    ----------
    Z : array_like (P, D+1, N+1) or (D+1, N+1)

    Returns
    -------
    ndarray (P, D+1, D+1)
    """
    Z = _check_Z(Z)
    N = Z.shape[2] - 1
    with np.errstate(over="ignore", invalid="ignore"):
        row = np.einsum("pj,pkj->pk", Z[:, -1, :], Z) / N  # (Z Zᵀ/N)[D+1, :]
        out = row[:, :, None] * Z[:, None, :, -1]
    return check.finite_result(out, {"Z": Z}, "the prediction gradient (Z Zᵀ/N) Z")


def blocks(W):
    """Split ``W`` into ``(W11, W12, W21, W22)``.

    Parameters
    ----------
    W : array_like (D+1, D+1)

    Returns
    -------
    W11 : ndarray (D, D)
    W12 : ndarray (D,)
    W21 : ndarray (D,)
    W22 : float
    """
    W = check.finite_array("W", W, ndim=2)
    if W.shape[0] != W.shape[1] or W.shape[0] < 2:
        check.fail("W", f"<array with shape {W.shape}>", "a square matrix of size D+1 >= 2")
    D = W.shape[0] - 1
    return W[:D, :D], W[:D, D], W[D, :D], W[D, D]


def predict_value_kq(Z, value_row, W_KQ) -> np.ndarray:
    r"""Predictions of attention with separate value and key-query matrices, and their gradients.

    ``f(Z) = W_V Z Zᵀ W_KQ Z / N``; only the last row ``u = (W_V)_{D+1,:} = [p₁ᵀ, p₂]`` of the value matrix
    reaches ``ŷ = f(Z)_{D+1,N+1} = uᵀ C W_KQ z_q`` with ``C = Z Zᵀ/N`` and ``z_q = [x_q; 0]``. With the null
    blocks of Mainali & Teixeira (``p₁ = 0`` and the last row ``q₂ᵀ`` of ``W_KQ`` zero) this is
    ``ŷ = p₂ sᵀ q₁ x_q``, the ``"value_kq"`` parametrization of :mod:`linattn.factorized`.

    Parameters
    ----------
    Z : array_like (P, D+1, N+1) or (D+1, N+1)
    value_row : array_like (D+1,)
        ``u``.
    W_KQ : array_like (D+1, D+1)

    Returns
    -------
    yhat : ndarray (P,)
    d_value_row : ndarray (P, D+1)
        ``∂ŷ/∂u = C W_KQ z_q``.
    d_W_KQ : ndarray (P, D+1, D+1)
        ``∂ŷ/∂W_KQ = (C u) z_qᵀ``.

    Raises
    ------
    ValueError
        Bad shapes, non-finite entries, or arguments so large that a result overflows float64 (naming the largest
        of ``Z``, ``value_row``, ``W_KQ``).
    """
    Z = _check_Z(Z)
    d1 = Z.shape[1]
    u = check.finite_array("value_row", value_row, shape=(d1,))
    W = check.finite_array("W_KQ", W_KQ, shape=(d1, d1))
    N = Z.shape[2] - 1
    culprits = {"Z": Z, "value_row": u, "W_KQ": W}
    with np.errstate(over="ignore", invalid="ignore"):
        C = np.einsum("pij,pkj->pik", Z, Z) / N
        zq = Z[:, :, -1]
        d_u = np.einsum("pik,kl,pl->pi", C, W, zq)
        Cu = C @ u
        out = (d_u @ u, d_u, Cu[:, :, None] * zq[:, None, :])
    for part, what in zip(out, ("the predictions", "∂ŷ/∂value_row", "∂ŷ/∂W_KQ")):
        check.finite_result(part, culprits, what)
    return out
