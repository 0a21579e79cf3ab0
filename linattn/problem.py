"""The in-context regression problem: dimensions, noise and its exact population quantities.

Conventions follow THEORY.md §1–2 (binding for the whole library): tokens ``x_i ~ N(0, I_D)``,
one task ``w ~ N(0, I_D)`` per prompt, labels ``y_i = w·x_i/√D + σ ε_i``, linear-attention
prediction ``ŷ = sᵀ Γ x_q + y2 v·x_q`` with ``s = (1/N) Σ y_i x_i`` and ``y2 = (1/N) Σ y_i²``.

References
----------
.. [1] Seed paper (``shared/seeds/003``): "in-context learning in single-layer linear attention
   trained on finite data" — exact gradient-flow solution and data-dependent free energy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as check


@dataclass(frozen=True)
class ICLSolution:
    """The population minimiser of the test error (the in-context-learning solution).

    Attributes
    ----------
    Gamma : ndarray, shape (D, D)
        ``Γ_ICL = I / (D c)``.
    v : ndarray, shape (D,)
        Zero: the ``W21`` block does not help on fresh tasks.
    test_error : float
        ``E_g(Γ_ICL) = ½ (1 + σ² − 1/(D c))``.
    """

    Gamma: np.ndarray
    v: np.ndarray
    test_error: float


@dataclass(frozen=True)
class Problem:
    """Dimensions and label noise of the in-context regression problem.

    Parameters
    ----------
    D : int
        Token dimension (``D >= 1``).
    N : int
        Context length (``N >= 1``).
    noise : float
        Label-noise standard deviation ``σ >= 0``.

    Examples
    --------
    >>> pb = Problem(D=10, N=100)
    >>> round(pb.feature_variance, 6)
    0.111
    """

    D: int
    N: int
    noise: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "D", check.positive_int("D", self.D))
        object.__setattr__(self, "N", check.positive_int("N", self.N))
        object.__setattr__(self, "noise", check.nonnegative("noise", self.noise))

    # ------------------------------------------------------------------ population moments
    @property
    def feature_variance(self) -> float:
        r"""``c = E[h_j²] = (N + D + 1)/(N D) + σ²/N`` for every entry of ``h = vec(s x_qᵀ)``.

        Exact (THEORY §2): ``E[s sᵀ] = c I`` and ``x_q`` is independent with unit covariance.
        """
        D, N, s2 = self.D, self.N, self.noise**2
        return (N + D + 1) / (N * D) + s2 / N

    @property
    def feature_variance_v(self) -> float:
        r"""``c_v = E[(y2 x_q)_j²] = (1 + 2/N)((1 + σ²)² + 2/D)`` for the ``v`` block (exact)."""
        D, N, s2 = self.D, self.N, self.noise**2
        return (1.0 + 2.0 / N) * ((1.0 + s2) ** 2 + 2.0 / D)

    @property
    def teacher_norm2(self) -> float:
        """``t² = 1/(D c)``: squared norm of ``Γ_ICL`` in units where features have unit variance."""
        return 1.0 / (self.D * self.feature_variance)

    @property
    def icl_residual(self) -> float:
        """``s² = 1 + σ² − 1/(D c) = 2 E_g(Γ_ICL)``: label variance a linear predictor cannot explain."""
        return 1.0 + self.noise**2 - self.teacher_norm2

    def n_params(self, model: str = "reduced") -> int:
        """``M``: ``D²`` for the reduced model, ``D² + D`` for the full model."""
        check.model(model)
        return self.D**2 + (self.D if model == "full" else 0)

    # ------------------------------------------------------------------ exact errors
    def test_error(self, Gamma, v=None) -> float:
        r"""Exact generalization error of the parameters (THEORY §2).

        .. math:: E_g(Γ, v) = ½ [1 + σ² − (2/D) \operatorname{tr} Γ + c ‖Γ‖_F² + c_v |v|²].

        Parameters
        ----------
        Gamma : array_like, shape (D, D)
        v : array_like, shape (D,), optional
            ``None`` means ``v = 0`` (reduced model).
        """
        G = check.finite_array("Gamma", Gamma, shape=(self.D, self.D))
        value = 1.0 + self.noise**2 - 2.0 * np.trace(G) / self.D + self.feature_variance * np.sum(G * G)
        if v is not None:
            vv = check.finite_array("v", v, shape=(self.D,))
            value += self.feature_variance_v * float(vv @ vv)
        return 0.5 * float(value)

    def icl_solution(self) -> ICLSolution:
        """The in-context-learning solution ``Γ_ICL = I/(D c)``, ``v = 0`` and its test error."""
        G = np.eye(self.D) / (self.D * self.feature_variance)
        return ICLSolution(Gamma=G, v=np.zeros(self.D), test_error=0.5 * self.icl_residual)

    # ------------------------------------------------------------------ sampling
    def sample(self, P, rng=None, batch_size=None):
        """Draw ``P`` training prompts exactly, in ``O(P D)`` time (see :func:`linattn.sampling.sample`).

        Parameters
        ----------
        P : int
            Number of prompts (task diversity), ``P >= 1``.
        rng : None, int or numpy.random.Generator
            Source of randomness; an int seed makes the draw reproducible.
        batch_size : int, optional
            Prompts drawn per batch (bounds the temporary memory; default cache-friendly).

        Returns
        -------
        linattn.Prompts
        """
        from .sampling import sample

        return sample(self, P, rng=rng, batch_size=batch_size)
