r"""The in-context regression problem: dimensions, noise and its exact population quantities.

Conventions follow docs/conventions.md §1–2 (binding for the whole library): tokens ``x_i ~ N(0, I_D)``,
one task ``w ~ N(0, I_D)`` per prompt, labels ``y_i = f(w·x_i/√D) + σ ε_i`` (``f`` the link;
``f(u) = u`` by default), linear-attention prediction ``ŷ = sᵀ Γ x_q + y2 v·x_q`` with
``s = (1/N) Σ y_i x_i`` and ``y2 = (1/N) Σ y_i²``.

Exact population quantities for any link (derived in ``docs/nonlinear.md``). Condition on the task:
``r = |w|²/D``, ``ŵ = w/|w|``, ``g = ŵ·x``. Then ``E[y x | w] = φ₁(r) ŵ`` and, because the joint law
is invariant under ``(w, x) → (−w, −x)`` and under rotations, every cross moment between the ``Γ``
and ``v`` features vanishes and the feature covariance stays ``diag(c I, c_v I)``, with the
``r``-averaged moments of :mod:`linattn.links`:

.. math::
    b &= E_r φ_1(r)^2, \qquad V = E_r φ_2(r) + σ^2 = E y_q^2,\\
    c &= \frac{1}{N}\Big[(φ_2 + σ^2)\big(1 − \tfrac1D\big) + \frac{φ_{22} + σ^2}{D}\Big]
         + \big(1 − \tfrac1N\big)\frac{φ_1^2}{D},\\
    c_v &= \frac{φ_4 + 6σ^2 φ_2 + 3σ^4}{N} + \big(1 − \tfrac1N\big) E_r(φ_2 + σ^2)^2,

and ``E_g(Γ, v) = ½ [V − 2 b tr Γ/D + c ‖Γ‖_F² + c_v |v|²]``. For ``f(u) = u``: ``b = 1``,
``V = 1 + σ²`` and the closed forms of conventions §2.

References
----------
.. [1] Seed paper: "in-context learning in single-layer linear attention
   trained on finite data" — exact gradient-flow solution and data-dependent free energy.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from . import _check as check
from . import _law
from ._arguments import array, boolean, public, public_class
from ._covariance import Covariance, as_covariance
from ._links import SLOPE_RANGE, Link, _as_link, _radial_moments
from ._results import short_repr
from ._task_covariance import TaskCovariance, as_task_covariance

#: largest accepted label-noise s.d. (see :class:`Problem`)
MAX_NOISE = 1e6


@dataclass(frozen=True)
class ICLSolution:
    """The population minimiser of the test error (the in-context-learning solution).

    Attributes
    ----------
    Gamma : ndarray, shape (D, D)
        ``Γ_ICL = b I / (D c)`` (``b = 1`` for the default linear link).
    v : ndarray, shape (D,)
        Zero: the ``W21`` block does not help on fresh tasks.
    test_error : float
        ``E_g(Γ_ICL) = ½ (V − b²/(D c))`` (``½ (1 + σ² − 1/(D c))`` for the default link).
    """

    __repr__ = short_repr

    Gamma: np.ndarray
    v: np.ndarray
    test_error: float


@public_class
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
    link : str, callable or linattn.links.Link
        The link ``f`` of the labels ``y = f(w·x/√D) + σ ε``: ``"linear"`` (default), ``"tanh"``,
        ``"relu"``, ``"sign"``, ``"cubic"``, ``"hermite:k"`` or a vectorised callable
        (:func:`linattn.links.as_link`; refused if not square-integrable under the Gaussian, or if its values —
        a linear link's slope — are of magnitude outside ``[1e-40, 1e40]``, :data:`linattn.links.SLOPE_RANGE`,
        where its exact moments ``a⁴``, ``E f⁴`` would over- or underflow float64).
    tasks : None or int
        Task diversity. ``None`` (default): every prompt has its own fresh task ``w ~ N(0, I_D)``
        (the seed's setting). ``K >= 1``: each dataset draws a pool of ``K`` tasks and gives every
        prompt one of them (Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025; conventions §6.1).
        The exact test error :meth:`test_error` stays the fresh-task (ICL) error; a pool ``W``
        gives the in-distribution (IDG) error (:func:`linattn.pools.idg_error`).
    task_law : {"gaussian", "sphere"}
        Law of the pool's tasks: ``w ~ N(0, I_D)`` (default) or uniform on the sphere ``|w|² = D``
        (the peer's simulations). Needs ``tasks``.
    assignment : {"random", "balanced"}
        How prompts get their task: uniformly at random (default), or balanced, every task
        ``⌊P/K⌋`` or ``⌈P/K⌉`` times in a random order (the peer's ``P/K`` per task when ``K``
        divides ``P``). Needs ``tasks``.
    covariance : None, array_like (D,) or (D, D)
        Input covariance ``Σ`` of the tokens, ``x ~ N(0, Σ)``: ``None`` (identity, default), a vector
        of eigenvalues (``Σ = diag``) or a symmetric positive-definite matrix
        (``linattn/_covariance.py``). ``Σ = I`` given explicitly is stored as ``None`` (bit-for-bit the
        isotropic problem). Anisotropic inputs are supported with linear links; the exact sampler,
        :meth:`test_error` and :meth:`icl_solution` know ``Σ``, while the isotropic theories (spectral laws,
        replica theory, per-dataset eigensystems) refuse an anisotropic problem (their feature
        covariance ``c I`` no longer exists: :attr:`feature_variance` raises).
    task_covariance : None, array_like (D,) or (D, D)
        Covariance ``S`` of the tasks, ``w ~ N(0, S)`` (structured tasks; the low-rank tasks of Takanami,
        Takahashi & Kabashima are ``S = (D/r) A Aᵀ``): ``None`` (``S = I``, default; ``S = I`` given explicitly is
        stored as ``None``), a vector of ``D`` eigenvalues ``>= 0`` or a symmetric positive semi-definite matrix
        (:mod:`linattn._task_covariance`). With ``tasks=K`` the pool is drawn from ``N(0, S)``. Needs a linear link,
        isotropic inputs and ``task_law="gaussian"``. The sampler, :meth:`test_error` (fresh tasks from ``S``),
        :meth:`icl_solution`, :func:`linattn.pools.task_error` and :func:`replica.stationary` know ``S``; the
        isotropic theories refuse it (:attr:`feature_variance` raises: the feature covariance is no longer ``c I``).

    Examples
    --------
    >>> pb = Problem(D=10, N=100)
    >>> round(pb.feature_variance, 6)
    0.111
    """

    __repr__ = short_repr

    D: int
    N: int
    noise: float = 0.0
    link: Link = "linear"
    covariance: Covariance | None = None
    tasks: int | None = None
    task_law: str = "gaussian"
    assignment: str = "random"
    task_covariance: TaskCovariance | None = None

    def __post_init__(self):
        object.__setattr__(self, "D", check.positive_int("D", self.D))
        object.__setattr__(self, "N", check.positive_int("N", self.N))
        object.__setattr__(self, "noise", check.real("noise", self.noise, low=0.0, high=MAX_NOISE))
        object.__setattr__(self, "link", _as_link(self.link))
        if not self.link.is_linear:
            _radial_moments(self.link, self.D)    # validates the link at this D (quadrature converges)
        object.__setattr__(self, "covariance", as_covariance(self.covariance, self.D))
        if self.covariance is not None and not self.link.is_linear:
            raise ValueError(f"covariance must be None (isotropic inputs) for a nonlinear link; got "
                             f"{self.covariance!r} with link {self.link.name!r}")
        if self.tasks is not None:
            object.__setattr__(self, "tasks", check.positive_int("tasks", self.tasks))
            if self.covariance is not None:
                raise ValueError(f"tasks must be None (fresh tasks) for anisotropic inputs; got {self.tasks!r} "
                                 "with a covariance (task pools are implemented for Σ = I)")
        check.choice("task_law", self.task_law, ("gaussian", "sphere"))
        check.choice("assignment", self.assignment, ("random", "balanced"))
        if self.tasks is None and (self.task_law != "gaussian" or self.assignment != "random"):
            raise ValueError(f"task_law and assignment need a task pool (tasks=K); got task_law={self.task_law!r}, "
                             f"assignment={self.assignment!r} with tasks=None")
        object.__setattr__(self, "task_covariance", as_task_covariance(self.task_covariance, self.D))
        if self.task_covariance is not None:
            why = ("a nonlinear link" if not self.link.is_linear else "anisotropic inputs"
                   if self.covariance is not None else "task_law='sphere'" if self.task_law != "gaussian" else None)
            if why is not None:
                raise ValueError(f"task_covariance must be None (isotropic tasks) with {why}; got "
                                 f"{self.task_covariance!r} (structured tasks are implemented for a linear link, "
                                 "isotropic inputs and Gaussian tasks)")
        if self.noise == 0.0 and self.label_variance == 0.0:     # a linear link of slope 0, or a link that is 0
            raise ValueError("noise must be > 0 when the link is 0 (slope 0); got noise = 0.0 with link "
                             f"{self.link.name!r}: every label would be 0 (no features, no task)")

    @property
    def isotropic(self) -> bool:
        """``True`` when the inputs have covariance ``Σ = I``."""
        return self.covariance is None

    def _require_isotropic(self, what):
        if self.covariance is not None:
            raise ValueError(f"covariance must be None (Σ = I) for {what}; got {self.covariance!r}. "
                             "Anisotropic problems support the exact sampler, test_error, icl_solution "
                             "and the factorized-attention dynamics (dynamics._staged)")

    @property
    def context_covariance(self) -> np.ndarray:
        r"""``S_2 = E[s sᵀ]`` (exact; :mod:`linattn._covariance`): ``c I`` for ``Σ = I``."""
        if self.task_covariance is not None:     # (ā² + σ²)/N I + (1 + 1/N) a² S/D
            a2, S, N, D = float(self.link.slope) ** 2, self.task_covariance, self.N, self.D
            return (a2 * S.trace / D + self.noise**2) / N * np.eye(D) + (1.0 + 1.0 / N) * a2 * S.matrix / D
        if self.covariance is None:
            return self.feature_variance * np.eye(self.D)
        a2 = float(self.link.slope) ** 2
        cov, N, D = self.covariance, self.N, self.D
        vals = ((a2 / D) * ((N + 1) / N * cov.spectrum**2 + cov.trace / N * cov.spectrum)
                + self.noise**2 / N * cov.spectrum)
        return cov._function(vals)

    # ------------------------------------------------------------------ the link
    @property
    def hermite(self):
        """Hermite coefficients ``(μ₀, μ₁, μ_*²)`` of the link (:class:`linattn.links.Hermite`)."""
        return self.link.hermite

    @public(finite_size=boolean())
    def surrogate(self, finite_size=False) -> "Problem":
        r"""The linear problem of the nonlinearity–noise equivalence (Letey, Rysmakhanov, Lu et al.).

        Labels ``y = μ₁ u + σ_eff ε`` with ``σ_eff² = σ² + μ_*² + μ₀²``. The mean ``μ₀`` is counted as
        noise: the prediction is odd in ``x_q`` so it can never fit a constant, and in the training
        data a constant offset has exactly the law of a random-sign offset (``(w, x) → (−w, −x)``
        symmetry). Every theory of the library evaluated on this problem is the equivalence's
        prediction; evaluated on ``self`` it uses the exact finite-``D`` label law instead
        (``docs/nonlinear.md`` compares the two with exact dataset averages).

        Parameters
        ----------
        finite_size : bool
            ``False`` (default): the ``D → ∞`` equivalence above. ``True``: match the two exact
            finite-``D`` moments that enter the test error: slope ``√b`` (``b`` =
            :attr:`teacher_strength`, the ``r``-average of ``φ₁(r)²`` instead of ``μ₁²``) and
            ``σ_eff² = V − b`` (:attr:`label_variance`).

        Returns
        -------
        Problem
            ``self`` for a linear link.

        Raises
        ------
        ValueError
            When the surrogate is not a valid :class:`Problem`: its slope (``μ₁``, or ``√b``) is neither 0 nor of
            magnitude in ``[1e-40, 1e40]`` (naming ``link``), or its noise ``σ_eff`` exceeds ``MAX_NOISE`` = 1e6
            (naming ``noise`` when ``σ`` alone brings it there, else ``link``).
        """
        if self.link.is_linear:
            return self
        pool = dict(tasks=self.tasks, task_law=self.task_law, assignment=self.assignment)   # the task law is kept
        if finite_size:
            b = self.teacher_strength
            slope, noise = float(np.sqrt(b)), float(np.sqrt(max(self.label_variance - b, 0.0)))
        else:
            mu0, mu1, mu2 = self.hermite
            slope, noise = mu1, float(np.sqrt(self.noise**2 + mu0**2 + mu2))
        low, high = SLOPE_RANGE
        if slope != 0.0 and not low <= abs(slope) <= high:
            check.fail("link", f"<{self.link.name} with surrogate slope {slope:.3g}>",
                       f"a link whose surrogate slope is 0 or of magnitude in [{low:g}, {high:g}]")
        if not noise <= MAX_NOISE:
            name = "noise" if self.noise**2 > 0.5 * noise**2 else "link"
            check.fail(name, f"<{self.link.name}, noise {self.noise!r}: surrogate noise {noise:.6g}>",
                       f"a problem whose surrogate noise σ_eff <= {MAX_NOISE:g} (the largest noise of a Problem)")
        return Problem(self.D, self.N, noise, Link._linear(slope), **pool)

    @property
    def teacher_strength(self) -> float:
        """``b = E_r φ₁(r)²``: ``E[ŷ y_q] = b tr Γ / D`` (``a²`` for ``f(u) = a u``; 1 by default)."""
        if self.link.is_linear:
            return float(self.link.slope) ** 2
        return _radial_moments(self.link, self.D).phi1_sq

    @property
    def label_variance(self) -> float:
        """``V = E y_q² = E f(u)² + σ²`` (``1 + σ²`` by default)."""
        if self.link.is_linear:
            trace = 1.0 if self.covariance is None else self.covariance.trace / self.D
            if self.task_covariance is not None:
                trace = self.task_covariance.trace / self.D
            return float(self.link.slope) ** 2 * trace + self.noise**2
        return _radial_moments(self.link, self.D).phi2 + self.noise**2

    # ------------------------------------------------------------------ population moments
    @property
    def feature_variance(self) -> float:
        r"""``c = E[h_j²] = (N + D + 1)/(N D) + σ²/N`` for every entry of ``h = vec(s x_qᵀ)``.

        Exact (conventions §2): ``E[s sᵀ] = c I`` and ``x_q`` is independent with unit covariance. For a
        linear link ``f(u) = a u``: ``a²(N + D + 1)/(N D) + σ²/N``; any link: module docstring.
        """
        self._require_isotropic("feature_variance (the isotropic feature covariance c I)")
        if self.task_covariance is not None:
            raise ValueError(f"task_covariance must be None (isotropic tasks) for feature_variance (the isotropic "
                             f"feature covariance c I); got {self.task_covariance!r}: the features' covariance is "
                             "context_covariance ⊗ I (structured tasks: linattn.pools.task_error, replica.stationary)")
        D, N, s2 = self.D, self.N, self.noise**2
        if self.link.is_linear:
            return float(self.link.slope) ** 2 * (N + D + 1) / (N * D) + s2 / N
        m = _radial_moments(self.link, D)
        return ((m.phi2 + s2) * (1.0 - 1.0 / D) + (m.phi22 + s2) / D) / N + (1.0 - 1.0 / N) * m.phi1_sq / D

    @public
    def test_metric_ratio(self, N_test=None) -> np.ndarray:
        r"""``[c(N_test)/c(N), c_v(N_test)/c_v(N)]``: how the test-error metric of the ``Γ`` and ``v`` blocks
        changes when a model trained at context length ``N`` is evaluated on prompts of length ``N_test``.

        The moments of ``s`` and ``y2`` depend on the context length (conventions §2), the teacher term ``u`` does
        not; so the test error at ``N_test`` is the same quadratic form with ``C_t = diag(c(N_test) I, c_v(N_test) I)``.

        Parameters
        ----------
        N_test : int, optional
            Context length of the test prompts (``>= 1``; ``None``: ``N``, ratios 1).

        Returns
        -------
        ndarray (2,)

        Raises
        ------
        ValueError
            A bad ``N_test``, or anisotropic inputs (``c`` of :attr:`feature_variance` is defined for isotropic ones).
        """
        return self._test_metric_ratio(N_test)

    def _test_metric_ratio(self, N_test):
        """:meth:`test_metric_ratio` of a checked ``N_test`` (the library's own calls)."""
        if N_test is None or N_test == self.N:
            return np.ones(2)
        other = dataclasses.replace(self, N=N_test)
        return np.array([other.feature_variance / self.feature_variance,
                         other.feature_variance_v / self.feature_variance_v])

    @property
    def feature_variance_v(self) -> float:
        r"""``c_v = E[(y2 x_q)_j²] = (1 + 2/N)((1 + σ²)² + 2/D)`` for the ``v`` block (exact).

        Linear link ``f(u) = a u``: ``(1 + 2/N)((a² + σ²)² + 2a⁴/D)``; any link: module docstring.
        """
        D, N, s2 = self.D, self.N, self.noise**2
        if self.link.is_linear:
            a2 = float(self.link.slope) ** 2
            if self.task_covariance is not None:     # (1 + 2/N)[(a² tr S/D + σ²)² + 2a⁴ tr S²/D²] (Isserlis)
                S = self.task_covariance
                return (1.0 + 2.0 / N) * ((a2 * S.trace / D + s2) ** 2 + 2.0 * a2 * a2 * S.trace2 / D**2)
            if self.covariance is not None:     # (1 + 2/N)[(a² tr Σ/D + σ²)² + 2a⁴ tr Σ²/D²]
                cov = self.covariance
                return (1.0 + 2.0 / N) * ((a2 * cov.trace / D + s2) ** 2 + 2.0 * a2 * a2 * cov.trace2 / D**2)
            return (1.0 + 2.0 / N) * ((a2 + s2) ** 2 + 2.0 * a2 * a2 / D)
        m = _radial_moments(self.link, D)
        return ((m.phi4 + 6.0 * s2 * m.phi2 + 3.0 * s2 * s2) / N
                + (1.0 - 1.0 / N) * (m.phi2_sq + 2.0 * s2 * m.phi2 + s2 * s2))

    @property
    def teacher_norm2(self) -> float:
        """``t² = b²/(D c)``: squared norm of ``Γ_ICL`` in units where features have unit variance."""
        b = self.teacher_strength
        return b * b / (self.D * self.feature_variance)

    @property
    def icl_residual(self) -> float:
        """``s² = V − b²/(D c) = 2 E_g(Γ_ICL)``: label variance a linear predictor cannot explain."""
        return self.label_variance - self.teacher_norm2

    @public
    def n_params(self, model: str = "reduced") -> int:
        """``M``: ``D²`` for the reduced model, ``D² + D`` for the full model.

        Parameters
        ----------
        model : {"reduced", "full"}

        Returns
        -------
        int
        """
        return self.D**2 + (self.D if model == "full" else 0)

    # ------------------------------------------------------------------ exact errors
    @public(overlap=array(), norm=array())
    def test_error_from_moments(self, overlap, norm):
        r"""The exact test error as a function of the two moments of the parameters it depends on.

        .. math:: E_g = ½ [V − 2\,\mathrm{overlap} + \mathrm{norm}],\qquad
                  \mathrm{overlap} = u·θ = b \operatorname{tr} Γ / D,\quad
                  \mathrm{norm} = θᵀ C θ = c ‖Γ‖_F² + c_v |v|²

        (conventions §2). This is the one place where the formula is written: the exact per-parameter
        error (:meth:`test_error`), the per-dataset engines (eigen coordinates) and the replica
        theory (order parameters ``overlap = tρ``, ``norm = ρ² + Σ_i κ_i σ_i²``) all call it.

        Parameters
        ----------
        overlap : float or ndarray
            ``u·θ`` with ``u = [b vec(I)/D, 0]`` (``b`` = :attr:`teacher_strength`, 1 for the default link).
        norm : float or ndarray
            ``θᵀ C θ``, ``C = diag(c I_{D²}, c_v I_D)``; ``>= 0``, of a shape that broadcasts with ``overlap``.

        Returns
        -------
        float or ndarray

        Raises
        ------
        ValueError
            Non-finite or mismatched arguments, a negative ``norm``, or moments so large that the error overflows
            float64 (naming ``overlap`` or ``norm``).
        """
        return self._error_from_moments(overlap, norm)

    def _error_from_floats(self, overlap, norm):
        """:meth:`test_error_from_moments` of two finite floats with ``norm >= 0`` (the theories' own scalar calls:
        the caller tests that the result is finite, and calls the public method to name the culprit when not)."""
        out = 0.5 * (self.label_variance - 2.0 * overlap + norm)
        return out if math.isfinite(out) else 0.5 * self.label_variance - overlap + 0.5 * norm

    def _error_from_moments(self, overlap, norm):
        """:meth:`test_error_from_moments` of float64 arrays (the library's own calls)."""
        if (norm < 0).any():
            check.fail("norm", norm if norm.size <= 8 else "<array>", "θᵀCθ >= 0 (C is positive definite)")
        try:
            if overlap.shape != norm.shape:
                np.broadcast_shapes(overlap.shape, norm.shape)
        except ValueError:
            check.fail("norm", f"<array with shape {norm.shape}>",
                       f"an array whose shape broadcasts with overlap's {overlap.shape}")
        with np.errstate(over="ignore", invalid="ignore"):
            out = 0.5 * (self.label_variance - 2.0 * overlap + norm)
            if not check.all_finite(out):       # 2·overlap overflowed although the error itself may be finite
                out = np.where(np.isfinite(out), out, 0.5 * self.label_variance - overlap + 0.5 * norm)
                check.finite_result(out, {"overlap": overlap, "norm": norm}, "the test error")
        return float(out) if out.ndim == 0 else out

    @public
    def test_error(self, Gamma, v=None, N_test=None) -> float:
        r"""Exact generalization error of the parameters on a fresh task (the ICL error; conventions §2).

        .. math:: E_g(Γ, v) = ½ [V − (2b/D) \operatorname{tr} Γ + c ‖Γ‖_F² + c_v |v|²]

        (``V = 1 + σ²``, ``b = 1`` for the default link; exact for any link, module docstring; anisotropic inputs:
        ``linattn/_covariance.py``). The error averaged over the tasks of a pool (the in-distribution error) is
        :func:`linattn.pools.idg_error`; the kernel learner's error on its Hermite features is
        :func:`linattn.kernel_learner.kernel_test_error`.

        Parameters
        ----------
        Gamma : array_like, shape (D, D)
        v : array_like, shape (D,), optional
            ``None`` means ``v = 0`` (reduced model).
        N_test : int, optional
            Context length of the test prompts (default: ``N``). The moments of ``s`` and ``y2`` depend on the
            context length, so a model trained at ``N`` has another exact error at ``N_test``: this is the error
            of the same problem with ``N = N_test``.

        Returns
        -------
        float
        """
        G = check.finite_array("Gamma", Gamma, shape=(self.D, self.D))
        vv = None if v is None else check.finite_array("v", v, shape=(self.D,))
        pb = self if N_test is None or N_test == self.N else dataclasses.replace(self, N=N_test)
        if pb.task_covariance is not None:     # fresh tasks from N(0, S): linattn._task_covariance
            from ._task_covariance import structured_error

            return structured_error(pb, G, vv)
        return pb._test_error(G, vv)

    def _test_error(self, G, vv):
        """:meth:`test_error` of checked ``Γ`` and ``v`` (the library's own calls)."""
        with np.errstate(over="ignore", invalid="ignore"):
            if self.covariance is not None:
                overlap, norm = self._anisotropic_moments(G, vv)
            else:
                overlap = self.teacher_strength * np.trace(G) / self.D
                norm = self.feature_variance * np.sum(G * G)
                if vv is not None:
                    norm += self.feature_variance_v * float(vv @ vv)
        check.finite_result([overlap, norm], {"Gamma": G, "v": vv}, "the test error")
        return float(self._error_from_moments(np.asarray(overlap, dtype=float), np.asarray(norm, dtype=float)))

    def _anisotropic_moments(self, G, v):
        r"""``overlap = a² tr(ΓΣ²)/D`` and ``norm = tr(ΓΣΓᵀS₂) + c_v vᵀΣv`` (:mod:`linattn._covariance`)."""
        cov, a = self.covariance, float(self.link.slope)
        overlap = a * a * float(np.sum(G * cov._apply(np.eye(self.D), 2.0))) / self.D
        norm = float(np.sum((G @ cov.matrix) * (self.context_covariance @ G)))
        if v is not None:
            norm += self.feature_variance_v * float(v @ cov._apply(v))
        return overlap, norm

    @public
    def icl_solution(self) -> ICLSolution:
        """The in-context-learning solution ``Γ_ICL = b I/(D c)``, ``v = 0`` and its test error.

        Returns
        -------
        ICLSolution
        """
        check.memory(8.0 * (self.D**2 + self.D), f"Gamma_ICL (D = {self.D})", "D")
        if self.task_covariance is not None:    # Γ_* = [(ā² + σ²)/N I + (1 + 1/N) R]⁻¹ R, R = a² S/D
            S, a2, N, D = self.task_covariance, float(self.link.slope) ** 2, self.N, self.D
            vals = a2 * S.spectrum / D
            vals = vals / ((a2 * S.trace / D + self.noise**2) / N + (1.0 + 1.0 / N) * vals)
            G = np.diag(vals) if S.basis is None else (S.basis * vals) @ S.basis.T
            overlap = float(np.sum(G * (a2 * S.matrix / D)))         # E_g(Γ_*) = ½[V − tr(Γ_*ᵀR)]
            return ICLSolution(Gamma=G, v=np.zeros(D), test_error=0.5 * (self.label_variance - overlap))
        if self.covariance is not None:    # Γ_* = a² [a²(N+1)/N Σ + (a² tr Σ + D σ²)/N I]⁻¹
            cov, a, N = self.covariance, float(self.link.slope), self.N
            vals = np.zeros(self.D) if a == 0 else a * a / (a * a * (N + 1) / N * cov.spectrum
                                                            + (a * a * cov.trace + self.D * self.noise**2) / N)
            G = cov._function(vals)
            overlap, _ = self._anisotropic_moments(G, None)
            return ICLSolution(Gamma=G, v=np.zeros(self.D), test_error=0.5 * (self.label_variance - overlap))
        b = self.teacher_strength
        G = np.eye(self.D) / (self.D * self.feature_variance / b) if b != 0 else np.zeros((self.D, self.D))
        return ICLSolution(Gamma=G, v=np.zeros(self.D), test_error=0.5 * self.icl_residual)

    # ------------------------------------------------------------------ sampling
    @public
    def sample(self, P, rng=None):
        """Draw ``P`` training prompts exactly, in ``O(P D)`` time (see :func:`linattn._sampling.sample`).

        Parameters
        ----------
        P : int
            Number of prompts (the task diversity when ``tasks=None``), ``P >= 1``.
        rng : None, int or numpy.random.Generator
            Source of randomness; an int seed makes the draw reproducible. With a task pool the
            pool is drawn first, from the same generator.

        Returns
        -------
        linattn.Prompts
            With ``.pool`` (``K × D``) and ``.task`` (``P`` indices into the pool) when
            ``tasks=K``; both ``None`` for fresh tasks.
        """
        return _law.draw(self, P, rng)[0]
