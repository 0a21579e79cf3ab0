"""The moments of a set of tasks and the exact error they determine (the ground floor of the task pools and of the
task laws: no argument checks; the public entries are :mod:`linattn.pools`).

With fresh tokens and noise, the error of ``(Γ, v)`` averaged over tasks depends on the tasks only through
``ā² = ⟨|a|²⟩``, ``R = ⟨a aᵀ⟩``, ``m = ⟨V_w a⟩`` and ``v₂ = ⟨V_w²⟩`` (``a = b w/√D``, ``V_w = |a|² + σ²``):
:class:`TaskMoments`, of a finite pool (:func:`pool_moments`) or of a Gaussian task law
(:func:`linattn._task_covariance.gaussian_moments`); the error is :func:`error_from_moments`, the second moments
of a prompt's context statistics :func:`moment_matrices` (derivations: the module docstring of
:mod:`linattn._idg`, ``docs/pools.md``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check as check
from ._results import short_repr


@dataclass(frozen=True)
class TaskMoments:
    """The moments of a set of tasks that enter the in-distribution error (module docstring).

    Attributes
    ----------
    K : int
        Number of tasks.
    mean_sq : float
        ``ā² = ⟨|a|²⟩`` with ``a = b w/√D``.
    R : ndarray (D, D)
        ``⟨a aᵀ⟩``.
    m : ndarray (D,)
        ``⟨V_w a⟩``, ``V_w = |a|² + σ²``.
    v2 : float
        ``⟨V_w²⟩``.
    """

    __repr__ = short_repr

    K: int
    mean_sq: float
    R: np.ndarray
    m: np.ndarray
    v2: float


def pool_moments(pb, W):
    """The :class:`TaskMoments` of the rows of a checked pool ``W`` (linear link, isotropic inputs; the public
    entry is :func:`linattn.pools.task_moments`)."""
    a = W * (float(pb.link.slope) / np.sqrt(pb.D))
    sq = np.einsum("kd,kd->k", a, a)
    Vw = sq + pb.noise**2
    K = W.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        out = dict(mean_sq=float(sq.mean()), R=a.T @ a / K, m=(Vw @ a) / K, v2=float(np.mean(Vw**2)))
    for value in out.values():
        check.finite_result(value, {"pool": W}, "the moments of the pool's tasks (fourth powers)")
    return TaskMoments(K=K, **out)


def moment_matrices(pb, model, moments: TaskMoments):
    r"""The second moments of a pooled prompt's context statistics ``z = [s; y2]`` (``z = s`` reduced) and its
    label: ``(Σ̃, B, E y²)`` with ``E[z zᵀ] = Σ̃``, ``E[z uᵀ] = B`` (``u = a w/√D``, the prompt's teacher):

    .. math::
       Σ̃ = \begin{pmatrix} \frac{ā² + σ²}{N} I + (1 + \frac1N) R & k\,m \\ k\,mᵀ & k\,v₂ \end{pmatrix},\quad
       B = \begin{pmatrix} R \\ mᵀ \end{pmatrix},\quad k = 1 + \tfrac2N,\quad E y² = ā² + σ²

    (module docstring). ``E[h hᵀ] = Σ̃ ⊗ I_D`` and ``E[h y] = vec B`` for the features ``h = z ⊗ x_q``.

    Parameters
    ----------
    pb : linattn.Problem
    model : {"reduced", "full"}
    moments : TaskMoments

    Returns
    -------
    Sigma : ndarray (D_z, D_z)
    B : ndarray (D_z, D)
    Ey2 : float
    """
    D, N, s2 = pb.D, pb.N, pb.noise**2
    k = 1.0 + 2.0 / N
    Ss = (moments.mean_sq + s2) / N * np.eye(D) + (1.0 + 1.0 / N) * moments.R
    if model == "full":
        St = np.block([[Ss, k * moments.m[:, None]], [k * moments.m[None, :], np.array([[k * moments.v2]])]])
        return St, np.vstack([moments.R, moments.m[None, :]]), float(moments.mean_sq + s2)
    return Ss, moments.R, float(moments.mean_sq + s2)


def error_from_moments(pb, moments: TaskMoments, Gamma, v=None) -> float:
    r"""Exact error averaged over a set of tasks (module docstring):

    .. math:: ½\big[σ² + ā² − 2\,\mathrm{tr}(ΓᵀR) − 2m·v + \tfrac{ā² + σ²}{N}‖Γ‖_F²
              + (1 + \tfrac1N)\mathrm{tr}(ΓᵀRΓ) + 2(1 + \tfrac2N) mᵀΓv + (1 + \tfrac2N) v₂|v|²\big].

    Parameters
    ----------
    pb : linattn.Problem
    moments : TaskMoments
    Gamma : ndarray (D, D)
    v : ndarray (D,) or None

    Returns
    -------
    float
    """
    N, s2 = pb.N, pb.noise**2
    G = np.asarray(Gamma, float)
    out = s2 + moments.mean_sq - 2.0 * float(np.sum(G * moments.R))
    out += (moments.mean_sq + s2) / N * float(np.sum(G * G)) + (1.0 + 1.0 / N) * float(np.sum(G * (moments.R @ G)))
    if v is not None:
        v = np.asarray(v, float)
        k = 1.0 + 2.0 / N
        out += -2.0 * float(moments.m @ v) + 2.0 * k * float(moments.m @ G @ v) + k * moments.v2 * float(v @ v)
    return 0.5 * out
