r"""The single-layer linear-attention network itself, on embedded prompts.

Embedding (THEORY §1): ``Z ∈ R^{(D+1)×(N+1)}`` with columns ``[x_i; y_i]`` and last column
``[x_q; 0]``. Merged key-query matrix ``W ∈ R^{(D+1)×(D+1)}``; the layer computes

.. math:: f(Z) = Z Zᵀ W Z / N, \qquad ŷ = f(Z)_{D+1, N+1}.

Writing ``W = [[W11, W12], [W21, W22]]``, the prediction reduces to ``sᵀ W11 x_q + y2 W21 x_q``
(``W12`` and ``W22`` drop out because the query's label slot is zero). These functions are the
ground truth the reduced features are checked against, and drive the explicit
gradient-descent simulation of the whole matrix ``W``.
"""
from __future__ import annotations

import numpy as np

from . import _validate as check


def embed(X, y, xq) -> np.ndarray:
    """Embedded prompts ``Z`` of shape ``(P, D+1, N+1)`` from tokens ``X`` (P, N, D), labels
    ``y`` (P, N) and queries ``xq`` (P, D)."""
    X = check.finite_array("X", X, ndim=3)
    P, N, D = X.shape
    y = check.finite_array("y", y, shape=(P, N))
    xq = check.finite_array("xq", xq, shape=(P, D))
    Z = np.zeros((P, D + 1, N + 1))
    Z[:, :D, :N] = np.swapaxes(X, 1, 2)
    Z[:, D, :N] = y
    Z[:, :D, N] = xq
    return Z


def _check_ZW(Z, W):
    Z = check.finite_array("Z", Z)
    if Z.ndim == 2:
        Z = Z[None]
    if Z.ndim != 3:
        raise ValueError(f"Z must have shape (D+1, N+1) or (P, D+1, N+1); got {Z.shape}")
    d1 = Z.shape[1]
    W = check.finite_array("W", W, shape=(d1, d1))
    return Z, W


def forward(Z, W) -> np.ndarray:
    """The layer output ``f(Z) = Z Zᵀ W Z / N`` for every prompt (shape of ``Z``)."""
    Z, W = _check_ZW(Z, W)
    N = Z.shape[2] - 1
    return np.einsum("pij,pkj,kl,plm->pim", Z, Z, W, Z, optimize=True) / N


def predict(Z, W) -> np.ndarray:
    """Predictions ``ŷ = f(Z)[D+1, N+1]`` (last row, last column), shape (P,)."""
    return forward(Z, W)[:, -1, -1]


def prediction_gradient(Z) -> np.ndarray:
    r"""``∂ŷ/∂W`` for every prompt, from the forward pass (shape (P, D+1, D+1)).

    ``ŷ = Σ_{jk} (Z Zᵀ/N)_{D+1, j} W_{jk} Z_{k, N+1}``, hence
    ``∂ŷ/∂W_{jk} = (Z Zᵀ/N)_{D+1, j} Z_{k, N+1}``. The columns belonging to ``W12`` and ``W22``
    (``k = D+1``) vanish because ``Z_{D+1, N+1} = 0``.
    """
    Z = check.finite_array("Z", Z)
    if Z.ndim == 2:
        Z = Z[None]
    N = Z.shape[2] - 1
    row = np.einsum("pj,pkj->pk", Z[:, -1, :], Z) / N  # (Z Zᵀ/N)[D+1, :]
    return row[:, :, None] * Z[:, None, :, -1]


def assemble(Gamma, v=None) -> np.ndarray:
    """The attention matrix ``W`` with ``W11 = Γ``, ``W21 = vᵀ`` and ``W12 = W22 = 0``."""
    G = check.finite_array("Gamma", Gamma, ndim=2)
    D = G.shape[0]
    W = np.zeros((D + 1, D + 1))
    W[:D, :D] = G
    if v is not None:
        W[D, :D] = check.finite_array("v", v, shape=(D,))
    return W


def blocks(W):
    """Split ``W`` into ``(W11, W12, W21, W22)``."""
    W = check.finite_array("W", W, ndim=2)
    D = W.shape[0] - 1
    return W[:D, :D], W[:D, D], W[D, :D], W[D, D]
