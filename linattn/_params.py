"""Parameter vectors ``θ = [vec(Γ) row-major, v]`` and their blocks (conventions §1)."""
from __future__ import annotations

import numpy as np

from . import _check as check
from ._arguments import array, public


@public(Gamma=array(ndim=2))
def pack(Gamma, v=None) -> np.ndarray:
    """``θ = [vec(Γ), v]`` (row-major ``vec``); ``v=None`` gives the reduced-model vector.

    Parameters
    ----------
    Gamma : array_like (D, D)
        A square matrix, ``D >= 1``.
    v : array_like (D,), optional

    Returns
    -------
    ndarray (M,)
    """
    G = Gamma
    if G.shape[0] != G.shape[1] or G.shape[0] == 0:
        check.fail("Gamma", f"<array with shape {G.shape}>", "a square matrix of shape (D, D), D >= 1")
    if v is None:
        return G.ravel().copy()
    vv = check.finite_array("v", v, shape=(G.shape[0],))
    return np.concatenate([G.ravel(), vv])


@public(theta=array())
def unpack(theta, D, model="reduced"):
    """Split ``θ`` into ``(Γ, v)``; ``v`` is ``None`` for the reduced model.

    Parameters
    ----------
    theta : array_like, shape (..., M)
        Parameter vectors (at least one axis; leading batch axes allowed), ``M = D²`` or ``D² + D``.
    D : int
        Token dimension.
    model : {"reduced", "full"}

    Returns
    -------
    Gamma : ndarray (..., D, D)
    v : ndarray (..., D) or None
    """
    M = D * D + (D if model == "full" else 0)
    if theta.ndim == 0 or theta.shape[-1] != M:
        check.fail("theta", theta if theta.ndim == 0 else f"<array with shape {theta.shape}>",
                   f"an array whose last axis has length M = {M} (D = {D}, model = {model!r})")
    Gamma = theta[..., : D * D].reshape(theta.shape[:-1] + (D, D))
    v = theta[..., D * D:] if model == "full" else None
    return Gamma, v


@public(Gamma=array())
def contrast_ratio(Gamma) -> np.ndarray:
    r"""Contrast ratio ``C = tr Γ / (‖Γ‖_F √D)``: cosine similarity of ``Γ`` with the identity.

    ``C = 1`` at ``Γ_ICL``; ``Gamma`` may have leading batch axes ``(..., D, D)``.

    Parameters
    ----------
    Gamma : array_like (..., D, D)
        Square matrices, none of them zero.

    Returns
    -------
    float or ndarray (...)
    """
    G = Gamma
    if G.ndim < 2 or G.shape[-1] != G.shape[-2] or G.shape[-1] == 0:
        check.fail("Gamma", f"<array with shape {G.shape}>", "an array of square matrices (..., D, D)")
    D = G.shape[-1]
    peak = np.max(np.abs(G), axis=(-2, -1), keepdims=True)
    if np.any(peak == 0):
        raise ValueError("Gamma must be a nonzero matrix (the contrast ratio is undefined at Gamma = 0)")
    G = G / peak                      # C is scale-free: no overflow of ‖Γ‖² at |Γ| ~ 1e200, no underflow at 1e-200
    tr = np.trace(G, axis1=-2, axis2=-1)
    fro = np.sqrt(np.sum(G * G, axis=(-2, -1)))
    out = tr / (fro * np.sqrt(D))
    return float(out) if np.ndim(out) == 0 else out
