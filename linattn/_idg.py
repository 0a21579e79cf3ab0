r"""Task pools: the exact in-distribution error of a set of tasks (conventions §6.1).

With a finite pool ``w_1 … w_K`` (Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025) a trained
model is scored twice: on fresh tasks (the ICL error, :meth:`linattn.Problem.test_error`) and on the
pool's own tasks with fresh tokens and noise (the in-distribution error, IDG). Both are exact.

Derivation (linear link ``f(u) = b u``, ``Σ = I``). Fix a task and write ``a = b w/√D`` and
``V_w = |a|² + σ²``. The query is independent of the context, so
``E_{x_q}(y_q − ŷ)² = σ² + |a − Γᵀs − y2 v|²``; the context moments given the task are those of
jointly Gaussian ``(y_i, x_i)``:

.. math::
   E s = a,\quad E[s sᵀ] = \frac{V_w}{N} I + \big(1 + \tfrac1N\big) a aᵀ,\quad
   E y2 = V_w,\quad E[y2\, s] = \big(1 + \tfrac2N\big) V_w a,\quad E[y2²] = \big(1 + \tfrac2N\big) V_w².

Averaged over the tasks (``R = ⟨a aᵀ⟩``, ``ā² = ⟨|a|²⟩``, ``m = ⟨V_w a⟩``, ``v₂ = ⟨V_w²⟩``):

.. math::
   E_{\rm IDG}(Γ, v) = ½\Big[σ² + ā² − 2\,\mathrm{tr}(ΓᵀR) − 2 m·v
        + \frac{ā² + σ²}{N}‖Γ‖_F² + \big(1 + \tfrac1N\big)\mathrm{tr}(ΓᵀRΓ)
        + 2\big(1 + \tfrac2N\big) mᵀΓv + \big(1 + \tfrac2N\big) v₂ |v|²\Big].

The fourth moments of the tasks enter only through ``v₂`` (the ``v`` block). Averaging over
``w ~ N(0, I_D)`` (``R = I/D``, ``m = 0``, ``v₂ = (1 + σ²)² + 2/D``) gives back conventions §2 exactly.
In parameter-vector form ``θ = [vec Γ, v]``: ``E = ½[k₀ − 2ℓ·θ + θᵀ C_W θ]`` with
``ℓ = [vec R, m]`` and ``C_W`` built from ``(ā² + σ²)/N · I + (1 + 1/N) R ⊗ I`` on the ``Γ`` block
(:class:`IDGMetric`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from . import _check as check
from . import _task_covariance as tc
from ._arguments import array, public
from ._kernel_errors import kernel_test_error
from ._results import short_repr
from ._task_covariance import structured_error
from ._task_moments import TaskMoments, error_from_moments, pool_moments
from ._validate import PROBLEM


@public(pb=PROBLEM)
def task_moments(pb, pool) -> TaskMoments:
    """Moments of the rows of ``pool`` (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs and a linear link (the derivation needs Gaussian labels).
    pool : array_like (K, D)

    Returns
    -------
    TaskMoments
    """
    _require_linear(pb)
    return pool_moments(pb, _pool(pb, pool))


def _pool(pb, pool):
    """``pool`` checked: a finite ``(K, D)`` array of the dimension of ``pb``, ``K >= 1``."""
    W = check.finite_array("pool", pool, ndim=2)
    if W.shape[1] != pb.D or W.shape[0] < 1:
        check.fail("pool", f"<array with shape {W.shape}>", f"an array of shape (K, {pb.D}) with K >= 1")
    return W


@public(pb=PROBLEM, w=array(ndim=2))
def context_statistics(pb, w, chi2, zeta):
    r"""The context statistics ``(s, y2)`` of prompts with the given tasks ``w`` (one row per prompt), as an
    exact function of normals.

    For a linear link ``f(u) = a u`` and isotropic inputs, given the task ``w`` (``ŵ = w/|w|``, ``ρ = a²|w|²/D``) the
    ``N`` context pairs enter only through ``K = Σ_i g_i² ~ χ²_N`` and one standard normal vector ``ζ ∈ R^D``
    (rotation invariance of the tokens around ``ŵ``):

    .. math::
       N\,y2 = (ρ + σ²) K,\qquad
       N s = ŵ\,\big(\sqrt{ρ} K + σ\sqrt{K} ζ_1 − \sqrt{N y2}\, ζ_1\big) + \sqrt{N y2}\, ζ,
       \quad ζ_1 = ζ·ŵ .

    The sampler draws ``K`` and ``ζ`` at random; the pool theory feeds quasi-random points through it
    (:func:`replica._pool_finite.prompt_types`).

    Parameters
    ----------
    pb : linattn.Problem
        Linear link, isotropic inputs.
    w : ndarray (n, D)
        The task of each prompt (nonzero rows).
    chi2 : ndarray (n,)
        ``K ~ χ²_N``.
    zeta : ndarray (n, D)
        Standard normals.

    Returns
    -------
    s : ndarray (n, D)
    y2 : ndarray (n,)
    """
    _require_linear(pb)
    D, N, sig = pb.D, pb.N, pb.noise
    n = w.shape[0]
    if w.shape[1] != D or n < 1:
        check.fail("w", f"<array with shape {w.shape}>", f"an array of shape (n, {D}) with n >= 1")
    chi2 = check.finite_array("chi2", chi2, shape=(n,))
    zeta = check.finite_array("zeta", zeta, shape=(n, D))
    if np.any(chi2 < 0):
        check.fail("chi2", "<array with negative entries>", "χ²_N values >= 0")
    top = np.max(np.abs(w), axis=1)                           # scaled norms: no underflow of |w|² for tiny rows
    if np.any(top == 0):
        check.fail("w", f"<array whose row {int(np.argmax(top == 0))} is zero>",
                   f"an array of shape (n, {D}) without a zero row (every task's direction enters)")
    unit = w / top[:, None]
    scaled = np.sqrt(np.einsum("pd,pd->p", unit, unit))       # in [1, √D]
    what = unit / scaled[:, None]
    wn = top * scaled
    with np.errstate(over="ignore", invalid="ignore"):
        rho = float(pb.link.slope) ** 2 * wn**2 / D
        z1 = np.einsum("pd,pd->p", zeta, what)
        Y2 = (rho + sig**2) * chi2
        perp = np.sqrt(Y2)
        along = np.sqrt(rho) * chi2 + sig * np.sqrt(chi2) * z1
        s = ((along - perp * z1) / N)[:, None] * what + (perp / N)[:, None] * zeta
    check.finite_result(np.concatenate([s.ravel(), Y2]), {"w": w, "chi2": chi2, "zeta": zeta},
                        "the context statistics")
    return s, Y2 / N


def _require_linear(pb):
    if not pb.link.is_linear or pb.covariance is not None:
        raise ValueError("pb must have a linear link and isotropic inputs for the in-distribution error; got "
                         f"link {pb.link.name!r}, covariance {pb.covariance!r}")


@public(pb=PROBLEM)
def idg_error(pb, pool, Gamma, v=None, N_test=None) -> float:
    """Exact error of ``(Γ, v)`` averaged over the tasks in the rows of ``pool`` (fresh tokens and noise): the
    in-distribution error when ``pool`` is the training pool (the formula of :func:`_idg_from_moments`, from
    the exact moments :func:`task_moments`). A nonlinear link (reduced model, isotropic inputs) is the kernel
    learner's exact error with the features ``φ(x) = x`` (:func:`linattn.kernel_learner.kernel_test_error`).

    Parameters
    ----------
    pb : linattn.Problem
        Linear link and isotropic inputs, or a nonlinear link with ``v=None`` and isotropic inputs.
    pool : array_like (K, D)
    Gamma : array_like (D, D)
    v : array_like (D,), optional
        ``None``: the reduced model.
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``): the error of the same problem at ``N = N_test``.

    Returns
    -------
    float
    """
    if N_test is not None and N_test != pb.N:
        pb = dataclasses.replace(pb, N=N_test)
    if not pb.link.is_linear and v is None and pb.covariance is None:
        return kernel_test_error(pb, Gamma, "linear", pool=pool)
    _require_linear(pb)
    W = _pool(pb, pool)
    with np.errstate(over="ignore", invalid="ignore"):
        moments = pool_moments(pb, W)
    G = check.finite_array("Gamma", Gamma, shape=(pb.D, pb.D))
    vv = None if v is None else check.finite_array("v", v, shape=(pb.D,))
    with np.errstate(over="ignore", invalid="ignore"):
        out = error_from_moments(pb, moments, G, vv)
    check.finite_result(out, {"pool": W, "Gamma": G, "v": vv}, "the in-distribution error")
    return float(out)


@dataclass(frozen=True, eq=False)
class IDGMetric:
    """``E_IDG(θ) = ½[k₀ − 2ℓ·θ + θᵀC_Wθ]`` on parameter vectors ``θ = [vec Γ, v]`` (module docstring).

    Attributes
    ----------
    problem : linattn.Problem
    model : str
    moments : TaskMoments
    const : float
        ``k₀ = σ² + ā²``.
    linear : ndarray (M,)
        ``ℓ = [vec R, m]``.
    trace : float
        ``tr C_W``.
    """

    __repr__ = short_repr

    problem: object
    model: str
    moments: TaskMoments
    const: float
    linear: np.ndarray
    trace: float

    def _theta(self, theta):
        """``theta`` checked: finite real numbers, last axis of length ``M``."""
        theta = check.finite_array("theta", theta)
        M = self.linear.size
        if theta.ndim == 0 or theta.shape[-1] != M:
            check.fail("theta", theta if theta.ndim == 0 else f"<array with shape {theta.shape}>",
                       f"an array of parameter vectors of shape (..., {M}) (model {self.model!r})")
        return theta

    @public
    def apply(self, theta) -> np.ndarray:
        """``C_W θ`` for parameter vectors ``theta`` of shape (..., M).

        Parameters
        ----------
        theta : ndarray (..., M)
            Finite real numbers.

        Returns
        -------
        ndarray (..., M)

        Raises
        ------
        ValueError
            A bad ``theta``, or one so large that ``C_W θ`` overflows float64.
        """
        theta = self._theta(theta)
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._apply(theta)
        return check.finite_result(out, {"theta": theta}, "C_W θ")

    def _apply(self, theta):
        pb, mo = self.problem, self.moments
        D, N, s2 = pb.D, pb.N, pb.noise**2
        G = theta[..., : D * D].reshape(theta.shape[:-1] + (D, D))
        out_G = (mo.mean_sq + s2) / N * G + (1.0 + 1.0 / N) * np.einsum("ik,...kj->...ij", mo.R, G)
        if self.model == "reduced":
            return out_G.reshape(theta.shape[:-1] + (D * D,))
        v = theta[..., D * D:]
        k = 1.0 + 2.0 / N
        out_G = out_G + k * mo.m[:, None] * v[..., None, :]                   # ∂(mᵀΓv)/∂Γ = m vᵀ
        out_v = k * np.einsum("i,...ij->...j", mo.m, G) + k * mo.v2 * v      # ∂/∂v: Γᵀm
        return np.concatenate([out_G.reshape(theta.shape[:-1] + (D * D,)), out_v], axis=-1)

    @public
    def error(self, theta) -> np.ndarray:
        """``E_IDG`` of parameter vectors (..., M).

        Parameters
        ----------
        theta : ndarray (..., M)
            Finite real numbers.

        Returns
        -------
        ndarray (...)

        Raises
        ------
        ValueError
            A bad ``theta``, or one so large that the error overflows float64.
        """
        theta = self._theta(theta)
        with np.errstate(over="ignore", invalid="ignore"):
            out = 0.5 * (self.const - 2.0 * theta @ self.linear
                         + np.einsum("...m,...m->...", theta, self._apply(theta)))
        check.finite_result(out, {"theta": theta}, "the in-distribution error")
        return out


@public(pb=PROBLEM)
def idg_metric(pb, pool, model="reduced") -> IDGMetric:
    """The in-distribution error of the rows of ``pool`` as a quadratic form on ``θ``.

    Parameters
    ----------
    pb : linattn.Problem
    pool : array_like (K, D)
    model : {"reduced", "full"}

    Returns
    -------
    IDGMetric
    """
    _require_linear(pb)
    mo = pool_moments(pb, _pool(pb, pool))
    D, N, s2 = pb.D, pb.N, pb.noise**2
    lin = mo.R.ravel()
    trace = D * D * (mo.mean_sq + s2) / N + (1.0 + 1.0 / N) * D * float(np.trace(mo.R))
    if model == "full":
        lin = np.concatenate([lin, mo.m])
        trace += D * (1.0 + 2.0 / N) * mo.v2
    return IDGMetric(problem=pb, model=model, moments=mo, const=s2 + mo.mean_sq, linear=lin, trace=float(trace))


@public(pb=PROBLEM, Gamma=None, v=None, task_covariance=None)
def task_error(pb, Gamma, v=None, task_covariance=None, N_test=None) -> float:
    r"""Exact error of ``(Γ, v)`` on fresh tasks ``w ~ N(0, T)`` with fresh tokens and noise (module docstring):

    .. math:: E_g(Γ, v; T) = ½\Big[σ² + \tfrac{a²}{D}\operatorname{tr}\big((I − Γ)(I − Γ)ᵀT\big)
              + \tfrac1N\big((\tfrac{a²}{D}\operatorname{tr}T + σ²)‖Γ‖_F² + \tfrac{a²}{D}\operatorname{tr}(ΓΓᵀT)\big)
              + (1 + \tfrac2N) v₂|v|²\Big].

    Parameters
    ----------
    pb : linattn.Problem
        Linear link and isotropic inputs (any task law).
    Gamma : array_like (D, D)
    v : array_like (D,), optional
        ``None``: the reduced model.
    task_covariance : None, "isotropic", array_like (D,) or (D, D)
        The law of the test tasks: ``None`` (default) the problem's own (``pb.task_covariance``: the ``test`` error),
        ``"isotropic"`` the isotropic law of the same power ``(tr S/D) I`` (``test_odg``), or any covariance ``T``
        (checked as ``Problem(task_covariance=T)`` is).
    N_test : int, optional
        Context length of the test prompts (default ``pb.N``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A nonlinear link or anisotropic inputs (naming ``pb``), or a bad argument (named).
    """
    if not pb.link.is_linear or pb.covariance is not None:
        check.fail("pb", pb, "a Problem with a linear link and isotropic inputs (the exact errors of a task law)")
    if N_test is not None and N_test != pb.N:
        pb = dataclasses.replace(pb, N=N_test)
    if isinstance(task_covariance, str):
        check.choice("task_covariance", task_covariance, ("isotropic",))
        T = "isotropic"
    else:
        T = tc.as_task_covariance(task_covariance, pb.D)
        if T is None and task_covariance is not None:       # the identity given explicitly
            T = "isotropic" if pb.task_covariance is None else tc.TaskCovariance(np.ones(pb.D))
    G = check.finite_array("Gamma", Gamma, shape=(pb.D, pb.D))
    vv = None if v is None else check.finite_array("v", v, shape=(pb.D,))
    return structured_error(pb, G, vv, T)
