"""Parameter vectors ``θ = [vec(Γ) row-major, v]`` and their blocks (DESIGN.md)."""
from __future__ import annotations

import numpy as np

from . import _validate as check


def pack(Gamma, v=None) -> np.ndarray:
    """``θ = [vec(Γ), v]`` (row-major ``vec``); ``v=None`` gives the reduced-model vector."""
    G = check.finite_array("Gamma", Gamma, ndim=2)
    if G.shape[0] != G.shape[1]:
        raise ValueError(f"Gamma must be square; got shape {G.shape}")
    if v is None:
        return G.ravel().copy()
    vv = check.finite_array("v", v, shape=(G.shape[0],))
    return np.concatenate([G.ravel(), vv])


def unpack(theta, D, model="reduced"):
    """Split ``θ`` into ``(Γ, v)``; ``v`` is ``None`` for the reduced model.

    ``theta`` may carry leading batch axes: shape ``(..., M)``.
    """
    check.model(model)
    theta = np.asarray(theta, dtype=float)
    M = D * D + (D if model == "full" else 0)
    if theta.shape[-1] != M:
        raise ValueError(f"theta must have last axis of length M={M} for D={D}, model={model!r}; "
                         f"got shape {theta.shape}")
    Gamma = theta[..., : D * D].reshape(theta.shape[:-1] + (D, D))
    v = theta[..., D * D:] if model == "full" else None
    return Gamma, v


def contrast_ratio(Gamma) -> np.ndarray:
    r"""Contrast ratio ``C = tr Γ / (‖Γ‖_F √D)``: cosine similarity of ``Γ`` with the identity.

    ``C = 1`` at ``Γ_ICL``; ``Gamma`` may have leading batch axes ``(..., D, D)``.
    """
    G = np.asarray(Gamma, dtype=float)
    D = G.shape[-1]
    tr = np.trace(G, axis1=-2, axis2=-1)
    fro = np.sqrt(np.sum(G * G, axis=(-2, -1)))
    if np.any(fro == 0):
        raise ValueError("contrast ratio is undefined for Gamma = 0 (accepted: a nonzero matrix)")
    return tr / (fro * np.sqrt(D))
