r"""Structured tasks: a task covariance ``S`` (``w ~ N(0, S)``) and the exact errors it changes.

``Problem(task_covariance=S)`` draws every task from ``N(0, S)`` instead of ``N(0, I_D)`` (a pool of ``K`` of them
with ``tasks=K``). The low-rank tasks of Takanami, Takahashi & Kabashima [1]_, ``w = √(D/r) A v`` with
``A ∈ R^{D×r}`` orthonormal and ``v ~ N(0, I_r)``, are ``S = (D/r) A Aᵀ`` (``tr S = D``). The inputs stay isotropic
and the link linear (``f(u) = a u``); the query is then still rotation invariant, so every exact moment below is
a function of ``S`` alone.

Exact test error for fresh tasks from any covariance ``T``
----------------------------------------------------------
Fix a task and write ``a_w = a w/√D``, ``V_w = |a_w|² + σ²``. Given the task, ``(y_i, x_i)`` are jointly Gaussian, so
(:mod:`linattn._idg`) ``E s = a_w``, ``E[s sᵀ] = (V_w/N) I + (1 + 1/N) a_w a_wᵀ``, ``E y2 = V_w``,
``E[y2 s] = (1 + 2/N) V_w a_w``, ``E[y2²] = (1 + 2/N) V_w²``, and the query gives
``E(y_q − ŷ)² = σ² + E|a_w − Γᵀs − y2 v|²``. Averaging over ``w ~ N(0, T)`` needs

.. math::
   R = E[a_w a_wᵀ] = \frac{a²}{D} T,\quad ā² = \frac{a²}{D}\operatorname{tr} T,\quad m = E[V_w a_w] = 0,\quad
   v₂ = E V_w² = \Big(\frac{a²}{D}\operatorname{tr} T + σ²\Big)² + \frac{2a⁴}{D²}\operatorname{tr} T²

(``m = 0``: ``V_w a_w`` is odd in ``w``; ``v₂`` from Isserlis, ``Var(wᵀw) = 2 tr T²``). Hence, exactly,

.. math::
   E_g(Γ, v; T) = ½\Big[σ² + \frac{a²}{D}\operatorname{tr}\big((I − Γ)(I − Γ)ᵀ T\big)
      + \frac{1}{N}\Big(\big(\tfrac{a²}{D}\operatorname{tr} T + σ²\big)‖Γ‖_F²
      + \tfrac{a²}{D}\operatorname{tr}(ΓΓᵀT)\Big) + \big(1 + \tfrac2N\big) v₂ |v|²\Big],

the in-distribution formula of :mod:`linattn._idg` with the Gaussian moments above (the ``Γ``–``v`` cross term
vanishes with ``m``). ``T = I`` gives conventions §2 (``c = (N + D + 1)/(ND) + σ²/N``, ``c_v = (1 + 2/N)v₂``).

Three errors of a trained model (:func:`task_error`): ``test`` on fresh tasks from ``S`` (the problem's own law),
``test_odg`` on fresh tasks from the isotropic law of the same power, ``T = (tr S/D) I`` (out of distribution), and
with a pool ``test_idg`` on the pool's own tasks (:func:`linattn.pools.idg_error`, unchanged).

The minimiser of ``E_g(·; S)`` is ``Γ_* = [(ā² + σ²)/N · I + (1 + 1/N) R]⁻¹ R`` with ``v = 0``: it projects on the
span of ``S``; the context's finite length ``N`` enters as the ridge ``(ā² + σ²)/N`` on the second moment ``R``.

What is refused (by the argument ``task_covariance``): a nonlinear link (the exact moments of a nonlinear link use
the law of ``|w|²/D``, which ``S`` couples to the task direction), anisotropic inputs ``covariance`` (the exact
sampler and errors rotate the inputs, not the tasks, and the theories assume isotropic queries), and
``task_law="sphere"`` (a task covariance is a Gaussian law).

References
----------
.. [1] K. Takanami, T. Takahashi and Y. Kabashima, "Learning linear regression with low-rank tasks in-context",
   arXiv:2510.04548 (2025).
"""
from __future__ import annotations

import numpy as np

from . import _check as check
from ._arguments import boolean, instance, integer, public, public_class
from ._task_moments import TaskMoments, error_from_moments

#: relative asymmetry accepted for a task covariance matrix (symmetrised), and the relative size
#: ``|s| <= PSD_TOL · max s`` below which an eigenvalue is the round-off of an exact zero (set to 0; a more negative
#: one is refused)
PSD_TOL = 1e-10
#: positive eigenvalues of ``S``: the exact errors use ``tr S²`` and the theory fourth moments of the tasks
EIGENVALUE_RANGE = (1e-50, 1e50)


@public_class
class TaskCovariance:
    """A task covariance ``S = U diag(s) Uᵀ``, positive semi-definite (immutable; build with
    :func:`as_task_covariance`).

    Attributes
    ----------
    spectrum : ndarray (D,)
        Eigenvalues ``s >= 0`` (not all zero), in the order given (a vector) or ascending (a matrix).
    basis : ndarray (D, D) or None
        Eigenvectors ``U`` as columns; ``None``: ``S = diag(s)`` in the standard basis.
    """

    __slots__ = ("spectrum", "basis", "_key")

    def __init__(self, spectrum, basis=None):
        spectrum = np.array(check.finite_array("spectrum", spectrum, ndim=1), dtype=float)
        D = spectrum.size
        if D == 0 or np.any(spectrum < 0) or not np.any(spectrum > 0):
            check.fail("spectrum", f"<vector of {D} entries>", "a non-empty vector of eigenvalues >= 0, not all 0")
        _in_range(spectrum, "spectrum")
        spectrum.setflags(write=False)
        if basis is not None:
            basis = np.array(check.finite_array("basis", basis, ndim=2), dtype=float)
            if basis.shape != (D, D) or np.abs(basis.T @ basis - np.eye(D)).max() > 1e-8:
                check.fail("basis", f"<array of shape {basis.shape}>",
                           f"an orthogonal {D} x {D} matrix (eigenvectors as columns; |UᵀU − I| <= 1e-08)")
            basis.setflags(write=False)
        object.__setattr__(self, "spectrum", spectrum)
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "_key", (spectrum.tobytes(), None if basis is None else basis.tobytes()))

    def __setattr__(self, name, value):
        raise AttributeError("TaskCovariance is immutable")

    def __reduce__(self):
        return (TaskCovariance, (self.spectrum, self.basis))

    def __eq__(self, other):
        return isinstance(other, TaskCovariance) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        s = np.array2string(self.spectrum, precision=4, threshold=6)
        return f"TaskCovariance(spectrum={s}{'' if self.basis is None else ', rotated'}, rank={self.rank})"

    @property
    def D(self) -> int:
        """The dimension."""
        return self.spectrum.size

    @property
    def rank(self) -> int:
        """The number of positive eigenvalues ``r``."""
        return int(np.count_nonzero(self.spectrum))

    @property
    def trace(self) -> float:
        """``tr S``."""
        return float(self.spectrum.sum())

    @property
    def trace2(self) -> float:
        """``tr S²``."""
        return float(self.spectrum @ self.spectrum)

    @property
    def matrix(self) -> np.ndarray:
        """``S`` as a dense ``D × D`` matrix."""
        if self.basis is None:
            return np.diag(self.spectrum)
        return (self.basis * self.spectrum) @ self.basis.T

    @property
    def factor(self) -> np.ndarray:
        """``F`` (``D × r``) with ``F Fᵀ = S``: the columns ``√s_i u_i`` of the positive eigenvalues."""
        keep = self.spectrum > 0
        U = np.eye(self.D)[:, keep] if self.basis is None else self.basis[:, keep]
        return U * np.sqrt(self.spectrum[keep])

    @public(g=None)
    def tasks(self, g) -> np.ndarray:
        """Tasks ``w = F g`` (one row per row of ``g``) from standard normals ``g`` of shape ``(n, r)``: ``N(0, S)``."""
        g = check.finite_array("g", g, shape=(None, self.rank))
        return g @ self.factor.T

    @public(gen=instance(np.random.Generator, "a numpy.random.Generator"), n=integer(minimum=0))
    def draw(self, gen, n) -> np.ndarray:
        """``n`` tasks ``w ~ N(0, S)`` (shape ``(n, D)``) from the generator ``gen`` (``n · r`` standard normals)."""
        check.memory(8.0 * n * (self.rank + self.D), f"{n} tasks of dimension {self.D}", "n")
        return self.tasks(gen.standard_normal((n, self.rank)))


def _in_range(s, name):
    lo, hi = EIGENVALUE_RANGE
    pos = s[s > 0]
    if pos.size and (pos.min() < lo or pos.max() > hi):
        check.fail(name, f"<positive eigenvalues from {pos.min():.3g} to {pos.max():.3g}>",
                   f"positive eigenvalues in [{lo:g}, {hi:g}] (the errors use their squares, the theory their "
                   "fourth powers)")


def as_task_covariance(value, D, name="task_covariance"):
    """Validate a task covariance and return a :class:`TaskCovariance`, or ``None`` for ``S = I``.

    Parameters
    ----------
    value : None, TaskCovariance, array_like (D,) or array_like (D, D)
        ``None``: isotropic tasks ``N(0, I_D)``. A vector: the eigenvalues, ``S = diag(value)`` (entries ``>= 0``,
        not all 0). A matrix: finite, symmetric (asymmetry up to ``PSD_TOL`` of its largest entry is symmetrised) and
        positive semi-definite: eigenvalues of magnitude ``<= PSD_TOL · λ_max`` are round-off of 0 and set to 0, a
        more negative one is refused.
    D : int
        The token dimension (a checked one: a Problem's ``D``).
    name : str
        The argument's name in messages.

    Returns
    -------
    TaskCovariance or None
        ``None`` whenever ``S`` is exactly the identity, so that the isotropic code paths run bit for bit.

    Raises
    ------
    ValueError
        Naming ``name``: a wrong shape, a non-finite, asymmetric or indefinite matrix, negative or all-zero
        eigenvalues, positive eigenvalues outside ``EIGENVALUE_RANGE``.
    """
    if value is None:
        return None
    if isinstance(value, TaskCovariance):
        if value.D != D:
            check.fail(name, value, f"a task covariance of dimension D = {D} (this one has {value.D})")
        return None if value.basis is None and np.all(value.spectrum == 1.0) else value
    arr = check.finite_array(name, value)
    if arr.shape == (D,):
        if np.any(arr < 0) or not np.any(arr > 0):
            check.fail(name, f"<vector from {arr.min():.3g} to {arr.max():.3g}>",
                       f"a vector of {D} eigenvalues >= 0, not all 0")
        _in_range(arr, name)
        return None if np.all(arr == 1.0) else TaskCovariance(arr)
    if arr.shape == (D, D):
        scale = float(np.abs(arr).max())
        if scale == 0.0:
            check.fail(name, "<zero matrix>", f"a symmetric positive semi-definite {D} x {D} matrix, not 0")
        if np.abs(arr - arr.T).max() > PSD_TOL * scale:
            check.fail(name, "<asymmetric matrix>", f"a symmetric positive semi-definite {D} x {D} matrix")
        if np.array_equal(arr, np.eye(D)):
            return None
        s, U = np.linalg.eigh(0.5 * (arr + arr.T))
        tol = PSD_TOL * max(float(s[-1]), 0.0)
        if s[0] < -tol or not s[-1] > 0:
            check.fail(name, f"<matrix with eigenvalues from {s[0]:.3g} to {s[-1]:.3g}>",
                       f"a symmetric positive semi-definite {D} x {D} matrix (eigenvalues >= −{PSD_TOL:g} λ_max)")
        s = np.where(np.abs(s) <= tol, 0.0, s)
        _in_range(s, name)
        return TaskCovariance(s, U)
    check.fail(name, f"<array with shape {arr.shape}>", f"None, a vector of {D} eigenvalues or a {D} x {D} matrix")


@public(r=integer(), rotate=boolean())
def low_rank_covariance(D, r, rng=None, rotate=True) -> TaskCovariance:
    r"""The low-rank task law of Takanami, Takahashi & Kabashima [1]_: ``S = (D/r) A Aᵀ``.

    Their tasks ``w = √(D/r) A v`` with ``A ∈ R^{D×r}`` orthonormal (``AᵀA = I_r``) and ``v ~ N(0, I_r)`` are
    ``w ~ N(0, S)``: ``r`` eigenvalues ``D/r`` and ``D − r`` zeros, ``tr S = D`` (the power of the isotropic law,
    ``E|w|²/D = 1``). For ``Problem(D, N, noise, task_covariance=low_rank_covariance(D, r))``.

    Parameters
    ----------
    D : int
        Token dimension.
    r : int
        Task rank, ``1 <= r <= D`` (``r = D`` is the isotropic law ``S = I``).
    rng : None, int or numpy.random.Generator
        The randomness of ``A`` (``rotate=True``): ``A`` is the first ``r`` columns of a Haar-random orthogonal
        matrix (QR of a Gaussian matrix, signs fixed by ``R``'s diagonal).
    rotate : bool
        ``False``: ``A`` spans the first ``r`` coordinate axes, ``S = diag(D/r, …, D/r, 0, …, 0)`` (``rng`` unused).
        With isotropic inputs every error of the model is invariant under ``S → OSOᵀ``, so the choice changes no
        dataset average, only the coordinates of the trained ``Γ``.

    Returns
    -------
    TaskCovariance
        Exact zeros off the span of ``A`` (no round-off of a product ``A Aᵀ``).

    Raises
    ------
    ValueError
        ``r`` outside ``[1, D]`` (named).

    Examples
    --------
    >>> import numpy as np, linattn
    >>> S = linattn.pools.low_rank_covariance(16, 4, rng=0)
    >>> S.rank, S.trace
    (4, 16.0)
    >>> pool = linattn.Problem(16, 32, 0.25, tasks=8, task_covariance=S).sample(1, rng=1).pool
    >>> float(np.abs(pool @ S.basis[:, S.spectrum == 0]).max()) < 1e-12     # every task in the span of A
    True
    """
    if r > D:
        check.fail("r", r, f"an integer in [1, D = {D}] (the rank of the task covariance)")
    check.memory(8.0 * 2 * D, f"a spectrum of {D} eigenvalues", "D")
    spectrum = np.r_[np.full(r, D / r), np.zeros(D - r)]
    if not rotate or r == D:          # r = D: S = I in any basis (the isotropic problem, stored as None)
        return TaskCovariance(spectrum)
    gen = check.rng(rng)
    check.memory(8.0 * 3 * D * D, f"a random orthogonal {D} x {D} matrix", "D")
    Q, R = np.linalg.qr(gen.standard_normal((D, D)))
    Q = Q * np.where(np.diag(R) < 0, -1.0, 1.0)
    return TaskCovariance(spectrum, Q)


def gaussian_moments(pb, T=None):
    r"""The task moments (:class:`linattn.pools.TaskMoments`) of fresh tasks ``w ~ N(0, T)`` (module docstring):
    ``R = a²T/D``, ``ā² = a² tr T/D``, ``m = 0``, ``v₂ = (ā² + σ²)² + 2a⁴ tr T²/D²``.

    Parameters
    ----------
    pb : linattn.Problem
        Linear link, isotropic inputs.
    T : None, "isotropic", TaskCovariance
        ``None``: the problem's own law (``S``, or ``I``); ``"isotropic"``: ``(tr S/D) I``; a checked covariance.

    Returns
    -------
    TaskMoments
    """
    D = pb.D
    a2 = float(pb.link.slope) ** 2
    if T is None:
        T = pb.task_covariance
    elif isinstance(T, str):
        S = pb.task_covariance
        power = 1.0 if S is None else S.trace / D
        T = None if power == 1.0 else TaskCovariance(np.full(D, power))
    if T is None:       # N(0, I): the library's fresh-task moments, same arithmetic
        return TaskMoments(K=0, mean_sq=a2, R=a2 * np.eye(D) / D, m=np.zeros(D),
                           v2=(a2 + pb.noise**2) ** 2 + 2.0 * a2 * a2 / D)
    with np.errstate(over="ignore", invalid="ignore"):
        mean_sq = a2 * T.trace / D
        out = dict(mean_sq=mean_sq, R=a2 * T.matrix / D, m=np.zeros(D),
                   v2=(mean_sq + pb.noise**2) ** 2 + 2.0 * a2 * a2 * T.trace2 / D**2)
    check.finite_result(np.array([out["mean_sq"], out["v2"]]), {"task_covariance": T.spectrum},
                        "the moments of the task law")
    return TaskMoments(K=0, **out)


def structured_error(pb, Gamma, v=None, T=None) -> float:
    """The exact error of checked ``(Γ, v)`` (float arrays) on fresh tasks ``w ~ N(0, T)`` (``T`` as in
    :func:`gaussian_moments`; ``None``: the problem's own law), refused by name where it overflows float64 — the
    formula of :func:`linattn.pools.task_error` (module docstring), for the library's own calls."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = error_from_moments(pb, gaussian_moments(pb, T), Gamma, v)
    check.finite_result(out, {"Gamma": Gamma, "v": v}, "the test error")
    return float(out)
