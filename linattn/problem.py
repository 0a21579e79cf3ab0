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

from . import check


#: largest accepted label-noise s.d. (see :class:`Problem`)
MAX_NOISE = 1e6


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
        Label-noise standard deviation ``0 <= σ <= 1e6``. (Beyond ``σ² ≈ 10^{15}`` the unit signal
        variance is lost in ``1 + σ²`` at double precision; ``10^6`` leaves three digits of margin.)

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
        object.__setattr__(self, "noise", check.real("noise", self.noise, low=0.0, high=MAX_NOISE))

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
        """``M``: ``D²`` for the reduced model, ``D² + D`` for the full model.

        Parameters
        ----------
        model : {"reduced", "full"}

        Returns
        -------
        int
        """
        check.model(model)
        return self.D**2 + (self.D if model == "full" else 0)

    # ------------------------------------------------------------------ exact errors
    def test_error_from_moments(self, overlap, norm):
        r"""The exact test error as a function of the two moments of the parameters it depends on.

        .. math:: E_g = ½ [1 + σ² − 2\,\mathrm{overlap} + \mathrm{norm}],\qquad
                  \mathrm{overlap} = u·θ = \operatorname{tr} Γ / D,\quad
                  \mathrm{norm} = θᵀ C θ = c ‖Γ‖_F² + c_v |v|²

        (THEORY §2). This is the one place where the formula is written: the exact per-parameter
        error (:meth:`test_error`), the per-dataset engines (eigen coordinates) and the replica
        theory (order parameters ``overlap = tρ``, ``norm = ρ² + Σ_i κ_i σ_i²``) all call it.

        Parameters
        ----------
        overlap : float or ndarray
            ``u·θ`` with ``u = [vec(I)/D, 0]``.
        norm : float or ndarray
            ``θᵀ C θ``, ``C = diag(c I_{D²}, c_v I_D)``.

        Returns
        -------
        float or ndarray
        """
        return 0.5 * (1.0 + self.noise**2 - 2.0 * np.asarray(overlap) + np.asarray(norm))

    def test_error(self, Gamma, v=None) -> float:
        r"""Exact generalization error of the parameters (THEORY §2).

        .. math:: E_g(Γ, v) = ½ [1 + σ² − (2/D) \operatorname{tr} Γ + c ‖Γ‖_F² + c_v |v|²].

        Parameters
        ----------
        Gamma : array_like, shape (D, D)
        v : array_like, shape (D,), optional
            ``None`` means ``v = 0`` (reduced model).

        Returns
        -------
        float
        """
        G = check.finite_array("Gamma", Gamma, shape=(self.D, self.D))
        norm = self.feature_variance * np.sum(G * G)
        if v is not None:
            vv = check.finite_array("v", v, shape=(self.D,))
            norm += self.feature_variance_v * float(vv @ vv)
        return float(self.test_error_from_moments(np.trace(G) / self.D, norm))

    def icl_solution(self) -> ICLSolution:
        """The in-context-learning solution ``Γ_ICL = I/(D c)``, ``v = 0`` and its test error.

        Returns
        -------
        ICLSolution
        """
        check.memory(8.0 * (self.D**2 + self.D), f"Gamma_ICL (D = {self.D})", "D")
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
