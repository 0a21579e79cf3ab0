r"""Per-dataset eigensystem of the training energy, computed once and reused.

``E_t(θ) = ½ Ȳ² − b·θ + ½ θᵀ A θ`` with ``A = H + λ I``, ``H = Fᵀ F / P``, ``b = Fᵀ y / P``
(conventions §2). Every exact result of :mod:`dynamics` and :mod:`replica` (gradient flow,
gradient descent, ridge and min-norm solutions, Gibbs averages for any ``β`` and ``λ``) is a
function of the eigenvalues ``g_k`` of ``H`` on its range and of a few projections on its
eigenvectors ``v_k``; this class holds them.

Gram path (``P < M``). With the Gram matrix ``K = F Fᵀ / P = U diag(g) Uᵀ`` the range
eigenvectors are ``v_k = Fᵀ U_k / √(P g_k)``; every projection is computed from ``U`` and the
prompts in ``O(P² D + P³)`` without forming an ``M``-dimensional basis:
``b_k = √(g_k/P) (Uᵀ y)_k``, ``v_kᵀ u = (Uᵀ F u)_k / √(P g_k)``, and for the full model the
``v``-block rows ``V_2 = (y2 x_q)ᵀ U / √(P g)``. Dense path (``P >= M``): ``eigh`` of ``H``.

Test-error metric ``C = diag(c I_{D²}, c_v I_D)``: ``W = Vᵀ C V = c I + (c_v − c) V_2ᵀ V_2``. Structured tasks
(``Problem(task_covariance=S)``): ``C = Σ̃ ⊗ I_D`` and ``u = Vᵀ vec(a²S/D)`` of the law ``N(0, S)``, computed in the
modes by :mod:`spectra._task_metric` (:attr:`Eigensystem.law`); the out-of-distribution error (fresh tasks from
``(tr S/D) I``) is :attr:`Eigensystem.odg`, a pool's in-distribution error :attr:`Eigensystem.idg`.
The label energy per mode ``e_k = b_k²/g_k`` (``= (Uᵀy)_k²/P`` on the Gram path) and the
least-squares residual ``e_⊥ = Ȳ² − Σ_k e_k`` (exactly 0 when ``P < M``) give the stable form
``E_t(θ*_λ) = ½ [e_⊥ + Σ_k e_k λ/(g_k + λ)]`` with no cancellation at small ``λ``.

With ``null_space=True`` the dense path keeps the null space of ``H`` as explicit modes with
``g_k = 0`` (and ``b_k = 0``): the complete eigenbasis of ``A = H + λI`` that the Langevin
simulator runs in. Every formula below holds unchanged (a null mode is a mode with ``g = 0``).

Per-block weight decay ``Λ = diag(λ_Γ I_{D²}, λ_v I_D)`` (full model), two exact representations:

* ``v_scale = s = λ_Γ/λ_v`` (for the Gibbs measure, :func:`replica.gibbs`): the eigensystem of the *rescaled*
  problem in the coordinates ``θ' = [vec Γ, v']``, ``v' = v/√s``, i.e. ``θ = S θ'`` with
  ``S = diag(I_{D²}, √s I_D)`` (:attr:`Eigensystem.param_scale`). Then ``λ_Γ‖Γ‖² + λ_v|v|² = λ_Γ|θ'|²``:
  the ``v`` features become ``√s · y2 x_q`` and the test-error weight of the ``v`` block ``s c_v``
  (:attr:`Eigensystem.c_v`), and every formula of the common decay ``λ_Γ`` applies to ``θ'`` (Gram path
  included). Everything the eigensystem holds or returns (``g``, ``b``, ``u``, ``W``, :meth:`project`,
  :meth:`lift`, :meth:`apply_metric`) is in ``θ'`` coordinates. Exact for the Gibbs measure and the ridge
  solution; *not* for gradient dynamics (the flow of ``θ'`` is not the flow of ``θ``).
* ``lam = (λ_Γ, λ_v)`` (for gradient flow, gradient descent and Langevin dynamics): the eigensystem of
  ``A = H + Λ`` itself (dense ``M × M``, all ``M`` modes, ``null_dim = 0``): ``g`` are the eigenvalues of
  ``A`` (the decay is absorbed) and the methods' ``lam`` is an extra common decay, which the engines pass
  as 0. ``e_⊥ = Ȳ² − Σ_k b_k²/g_k = 2 E_t(θ*)`` is computed from the residuals of ``θ*``, so that
  :meth:`Eigensystem.train_at_ridge` ``(0) = E_t(θ*)`` with both decay terms.

:func:`as_eigensystem` refuses an eigensystem built for another scale or decay (never reused silently).

This is the exact engine of :mod:`dynamics`, :mod:`replica` and :mod:`validation`; it lives in
:mod:`spectra` so that all three import it downwards.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import numpy as np

import linattn
from linattn import _check as check
from linattn import _validate as validate
from linattn._arguments import array, boolean, integer, nonnegative, public, real
from linattn._results import short_repr
from linattn._threads import blas_threads
from linattn._validate import PROBLEM

from . import _device as on_device
from ._device import device_memory, torch_device
from ._eigenvalues import _hessian_dense
from ._task_metric import EigenIDG, LawMetric, eigen_metric, law_metric, modes_as_rows

#: eigenvalues of H below this fraction of the largest are treated as exact zeros (null space)
NULL_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class Eigensystem:
    """Eigen-data of one dataset (module docstring). Build with :func:`eigensystem`.

    Vectors of parameters (``θ`` of :meth:`project`, :meth:`lift`, :meth:`apply_metric`) are in the
    coordinates of the modes, ``θ'`` with ``θ = S θ'`` (:attr:`param_scale`; ``S = I`` unless ``v_scale != 1``).

    Attributes
    ----------
    problem : linattn.Problem
    data : linattn.Prompts
    model : str
    P, M, k : int
        Prompts, parameters, number of modes held: ``dim range(H)``, or ``M`` when the null
        space is held explicitly (``null_space=True``).
    g : ndarray (k,)
        Eigenvalues of ``H`` (not rescaled) of the modes held, ascending (exact zeros for null modes).
    b, u : ndarray (k,)
        ``Vᵀ b`` and ``Vᵀ u`` with ``u = [b vec(I)/D, 0]`` (so that ``(2b/D) tr Γ = 2 u·θ``; ``b`` is the
        link's teacher strength, 1 for the default link).
    e : ndarray (k,)
        Label energy per mode ``b_k²/g_k``.
    e_perp : float
        Least-squares residual energy ``Ȳ² − Σ e_k`` (0 for ``P < M``; ``2 E_t(θ*)`` with a ``block_decay``).
    W, W2 : ndarray (k, k)
        ``Vᵀ C V`` and ``Vᵀ C² V``.
    y2bar : float
        ``Ȳ² = (1/P) Σ y_q²``.
    G2 : ndarray (k, k) or None
        ``V_2ᵀ V_2``, the Gram matrix of the ``v`` block of the modes (full model; ``None`` for the reduced one).
    v_scale : float
        ``s = λ_Γ/λ_v`` of a rescaled eigensystem (module docstring), 1 otherwise.
    block_decay : tuple of float or None
        ``(λ_Γ, λ_v)`` when ``g`` are the eigenvalues of ``A = H + Λ`` itself (module docstring), else ``None``.
    law : spectra._task_metric.LawMetric or None
        Structured tasks (``problem.task_covariance = S``): the test metric of the law ``N(0, S)`` in the modes, from
        which ``W``, ``W2`` and ``u`` come (module docstring); ``None`` for isotropic tasks.
    """

    __repr__ = short_repr

    problem: linattn.Problem
    data: linattn.Prompts
    model: str
    P: int
    M: int
    k: int
    g: np.ndarray
    b: np.ndarray
    u: np.ndarray
    e: np.ndarray
    e_perp: float
    W: np.ndarray
    W2: np.ndarray
    y2bar: float
    G2: np.ndarray | None = None
    v_scale: float = 1.0
    block_decay: tuple | None = None
    law: LawMetric | None = None
    _U: np.ndarray | None = None   # Gram path: U / √(P g)   (P, k)
    _V: np.ndarray | None = None   # dense path: eigenvectors (M, k)

    # ------------------------------------------------------------------ dimensions
    @property
    def null_dim(self) -> int:
        """Dimension of the null space of ``H`` that is *not* held as explicit modes (``M − k``)."""
        return self.M - self.k

    # ------------------------------------------------------------------ metric constants
    @property
    def c_v(self) -> float:
        """Test-error weight of the ``v`` block in the coordinates of the modes: ``s c_v`` (``c_v`` unscaled)."""
        return self.problem.feature_variance_v * self.v_scale

    @property
    def param_scale(self) -> np.ndarray:
        """``S`` (M,): parameters ``θ = S θ'`` from the coordinates ``θ'`` of the modes (ones, ``√s`` on ``v``)."""
        out = np.ones(self.M)
        if self.model == "full":
            out[self.problem.D ** 2:] = np.sqrt(self.v_scale)
        return out

    @property
    def trC(self) -> float:
        """``tr C`` of the test metric (coordinates of the modes)."""
        if self.law is not None:
            return self.law.trC
        D = self.problem.D
        return self.problem.feature_variance * D * D + (self.c_v * D if self.model == "full" else 0)

    @property
    def trC2(self) -> float:
        """``tr C²`` of the test metric (coordinates of the modes)."""
        if self.law is not None:
            return self.law.trC2
        D = self.problem.D
        return self.problem.feature_variance**2 * D * D + (self.c_v**2 * D if self.model == "full" else 0)

    @public(N_test=integer())
    def at_context_length(self, N_test) -> "Eigensystem":
        """The same eigensystem with the test metric of prompts of context length ``N_test``.

        A model trained at context length ``N`` and tested at ``N_test``: the modes, eigenvalues and data are
        unchanged (so are ``E_t``, the trajectories and the Gibbs measure); ``problem`` becomes ``pb`` at
        ``N = N_test`` and ``W = VᵀC_tV``, ``W2 = VᵀC_t²V`` with ``C_t = diag(c(N_test) I, s c_v(N_test) I)``, so that
        :meth:`test_error`, :attr:`idg`, :attr:`trC` and :attr:`trC2` are those of the test prompts
        (``u`` does not depend on the context length).

        Parameters
        ----------
        N_test : int
            ``>= 1``.

        Returns
        -------
        Eigensystem
            ``self`` when ``N_test`` is the training length.
        """
        return self._at_length(N_test)

    def _at_length(self, N_test):
        """:meth:`at_context_length` of a checked ``N_test`` (an int)."""
        if N_test == self.problem.N:
            return self
        pbt = dataclasses.replace(self.problem, N=N_test)
        if self.law is not None:        # structured tasks: the law's metric at N_test (u does not change)
            law = law_metric(pbt, self.model, self.v_scale, modes_as_rows(self))
            return dataclasses.replace(self, problem=pbt, W=law.W, W2=law.W2, law=law)
        W, W2 = _metric_from_gram(pbt.feature_variance, self.v_scale * pbt.feature_variance_v, self.k, self.G2)
        return dataclasses.replace(self, problem=pbt, W=W, W2=W2)

    @property
    def u_norm2(self) -> float:
        """``|u|² = b²/D`` (structured tasks: ``|ℓ'|²``, ``ℓ = vec(a²S/D)``)."""
        if self.law is not None:
            return self.law.u_norm2
        return self.problem.teacher_strength ** 2 / self.problem.D

    @property
    def c_u(self) -> float:
        """``C u = c u`` (``u`` lives in the ``Γ`` block); isotropic tasks only (structured tasks:
        :meth:`_metric_overlap`)."""
        return self.problem.feature_variance

    def _metric_overlap(self, a):
        """``(Vᵀ C u)·a`` for coefficients ``a`` (..., k): ``c u·a`` for isotropic tasks."""
        if self.law is not None:
            return a @ self.law.Cu
        return self.c_u * (a @ self.u)

    def _teacher_overlap(self, theta):
        """``u·θ`` of a parameter vector ``θ`` (M,) in the coordinates of the modes."""
        if self.law is not None:
            return float(theta @ self.law.ell)
        D = self.problem.D
        return float(np.trace(theta[: D * D].reshape(D, D))) / (D / self.problem.teacher_strength)

    @property
    def lambda_max(self) -> float:
        """Largest eigenvalue of ``H``."""
        return float(self.g[-1]) if self.k else 0.0

    @public(theta=array())
    def apply_metric(self, theta) -> np.ndarray:
        """``C θ`` with the test-error metric ``C = diag(c I_{D²}, c_v I_D)``.

        Parameters
        ----------
        theta : array_like (..., M)

        Returns
        -------
        ndarray (..., M)
        """
        if theta.shape[-1:] != (self.M,):
            check.fail("theta", f"<array with shape {theta.shape}>", f"an array of shape (..., {self.M})")
        return self._apply_metric(theta)

    def _apply_metric(self, theta):
        """:meth:`apply_metric` of a checked float array ``theta`` (..., M); a result that overflows names it."""
        with np.errstate(over="ignore", invalid="ignore"):
            if self.law is not None:
                out = self.law.apply(theta)
                check.finite_result(out, {"theta": theta}, "C θ")
                return out
            out = self.problem.feature_variance * theta
            if self.model == "full":
                D = self.problem.D
                out[..., D * D:] *= self.c_v / self.problem.feature_variance
        check.finite_result(out, {"theta": theta}, "C θ")
        return out

    @public(a=array())
    def v_norm2(self, a) -> np.ndarray:
        """``|v'|² = aᵀ G2 a`` of parameters ``θ' = V a`` (0 for the reduced model).

        Parameters
        ----------
        a : ndarray (..., k)

        Returns
        -------
        ndarray (...)

        Raises
        ------
        ValueError
            ``a`` so large that ``|v'|²`` overflows float64 (``a`` is named).
        """
        return self._v_norm2(self._coefficients(a, batch=True))

    def _v_norm2(self, a):
        """:meth:`v_norm2` of checked coefficients (..., k)."""
        if self.G2 is None:
            return np.zeros(a.shape[:-1])
        with np.errstate(over="ignore", invalid="ignore"):
            out = np.einsum("...k,kl,...l->...", a, self.G2, a)
        check.finite_result(out, {"a": a}, "|v'|² = aᵀ G2 a")
        return out

    # ------------------------------------------------------------------ in-distribution error
    @cached_property
    def idg(self) -> "EigenIDG | None":
        """The in-distribution error of the dataset's task pool in the modes held (``None`` without a pool).

        ``E_IDG(θ) = ½[k₀ − 2ℓ·θ + θᵀC_Wθ]`` (:mod:`linattn.pools`); for ``θ = V a``:
        ``½[k₀ − 2 a·(Vᵀℓ) + aᵀ(VᵀC_W V)a]``. Built once per eigensystem (``O(k M)`` memory).
        """
        if self.data.pool is None:
            return None
        from linattn._idg import idg_metric

        return eigen_metric(self, idg_metric(self.problem, self.data.pool, self.model))

    @cached_property
    def odg(self) -> "EigenIDG | None":
        """Structured tasks: the error on fresh tasks from the isotropic law of the same power ``(tr S/D) I`` (the
        out-of-distribution error, :func:`linattn.pools.task_error` with ``task_covariance="isotropic"``) in the
        modes held; ``None`` for isotropic tasks."""
        if self.problem.task_covariance is None:
            return None
        from linattn._idg import metric_from_moments
        from linattn._task_covariance import gaussian_moments

        pb = self.problem
        return eigen_metric(self, metric_from_moments(pb, gaussian_moments(pb, "isotropic"), self.model))

    # ------------------------------------------------------------------ bases
    @property
    def basis(self) -> np.ndarray | None:
        """Eigenvectors ``V`` (M × k) when held explicitly (dense path, ``P >= M``), else ``None``."""
        return self._V

    @public(theta=array())
    def project(self, theta) -> np.ndarray:
        """``Vᵀ θ``: coefficients of parameter vectors in the modes held.

        Parameters
        ----------
        theta : array_like (M,) or (n, M)

        Returns
        -------
        ndarray (k,) or (n, k)
        """
        if theta.ndim not in (1, 2) or theta.shape[-1] != self.M:
            check.fail("theta", f"<array with shape {theta.shape}>", f"an array of shape (M,) or (n, M), M = {self.M}")
        return self._project(theta)

    def _project(self, theta):
        """:meth:`project` of a checked float array ``theta`` (M,) or (n, M); a result that overflows names it."""
        with np.errstate(over="ignore", invalid="ignore"):
            if self._V is not None:
                out = theta @ self._V
            else:
                out = _apply_features(self._feature_data, theta, self.model) @ self._U   # (h_μ·θ) U
        check.finite_result(out, {"theta": theta}, "Vᵀ θ")
        return out

    @public(a=array())
    def lift(self, a) -> np.ndarray:
        """``V a``: parameter vectors from coefficients in the modes held.

        Parameters
        ----------
        a : array_like (k,) or (n, k)

        Returns
        -------
        ndarray (M,) or (n, M)
        """
        return self._lift(self._coefficients(a))

    def _lift(self, a):
        """:meth:`lift` of checked coefficients (k,) or (n, k); a result that overflows names ``a``."""
        with np.errstate(over="ignore", invalid="ignore"):
            if self._V is not None:
                out = a @ self._V.T
            else:
                out = _apply_features_T(self._feature_data, a @ self._U.T, self.model)
        check.finite_result(out, {"a": a}, "V a")
        return out

    @cached_property
    def _feature_data(self):
        """The prompts whose features span the modes (``y2`` scaled by ``√s`` for a rescaled eigensystem)."""
        return scaled_prompts(self.data, self.v_scale)

    def _coefficients(self, a, batch=False):
        """The shape check of coefficients ``a`` (a float array) against the modes held."""
        if a.ndim < 1 or (a.ndim > 2 and not batch) or a.shape[-1] != self.k:
            want = "(..., k)" if batch else "(k,) or (n, k)"
            check.fail("a", f"<array with shape {a.shape}>", f"an array of shape {want}, k = {self.k}")
        return a

    @public(lam=nonnegative())
    def ridge_coefficients(self, lam) -> np.ndarray:
        """Coefficients ``b_k/(g_k + λ)`` of the ridge solution in the modes held (min-norm
        solution for ``λ = 0``: null modes, where ``b_k = 0``, get 0).

        Parameters
        ----------
        lam : float
            Weight decay ``λ >= 0``.

        Returns
        -------
        ndarray (k,)
        """
        return self._ridge_coefficients(lam)

    def _ridge_coefficients(self, lam):
        """:meth:`ridge_coefficients` of a checked ``lam``."""
        gl = self.g + lam
        out = np.zeros(self.k)
        np.divide(self.b, gl, out=out, where=gl > 0)
        return out

    @public(lam=nonnegative())
    def theta_star(self, lam) -> np.ndarray:
        """Ridge solution ``θ* = A⁻¹ b`` (min-norm solution for ``λ = 0``).

        Parameters
        ----------
        lam : float
            Weight decay ``λ >= 0``.

        Returns
        -------
        ndarray (M,)
        """
        return self._lift(self._ridge_coefficients(lam))

    @public(lam=nonnegative())
    def train_at_ridge(self, lam) -> float:
        """``E_t(θ*_λ) = ½ [e_⊥ + Σ_k e_k λ/(g_k + λ)]`` (stable at small ``λ``).

        Parameters
        ----------
        lam : float
            Weight decay ``λ >= 0``.

        Returns
        -------
        float
        """
        return self._train_at_ridge(lam)

    def _train_at_ridge(self, lam):
        """:meth:`train_at_ridge` of a checked ``lam``."""
        gl = self.g + lam
        ratio = np.zeros(self.k)
        np.divide(lam * self.e, gl, out=ratio, where=gl > 0)
        return 0.5 * (self.e_perp + float(np.sum(ratio)))

    @public(a=array())
    def test_error(self, a) -> np.ndarray:
        """Exact test error of parameters ``θ = V a`` given by their coefficients in the modes held.

        ``E_g = ½ [1 + σ² − 2 a·(Vᵀu) + aᵀ W a]`` (:meth:`linattn.Problem.test_error_from_moments`);
        only valid for parameters in the span of the modes held.

        Parameters
        ----------
        a : ndarray (..., k)

        Returns
        -------
        ndarray (...)
        """
        return self._test_error(self._coefficients(a, batch=True))

    def _test_error(self, a):
        """:meth:`test_error` of checked coefficients (..., k); an error that overflows names ``a``."""
        with np.errstate(over="ignore", invalid="ignore"):
            overlap, norm = a @ self.u, np.einsum("...k,kl,...l->...", a, self.W, a)
        check.finite_result([overlap, norm], {"a": a}, "the test error")
        return self.problem.test_error_from_moments(overlap, norm)


def _apply_features(data, theta, model):
    D = data.D
    Gam = theta[..., : D * D].reshape(theta.shape[:-1] + (D, D))
    out = np.einsum("pa,...ab,pb->...p", data.s, Gam, data.xq, optimize=True)
    if model == "full":
        out = out + data.y2 * (theta[..., D * D:] @ data.xq.T)
    return out


def _apply_features_T(data, coef, model):
    """``Σ_μ coef_μ h_μ`` for coef of shape (…, P)."""
    D = data.D
    Gam = np.einsum("...p,pa,pb->...ab", coef, data.s, data.xq, optimize=True).reshape(coef.shape[:-1] + (D * D,))
    if model == "full":
        v = (coef * data.y2) @ data.xq
        return np.concatenate([Gam, v], axis=-1)
    return Gam


def scaled_prompts(data, v_scale):
    """The prompts with ``y2`` multiplied by ``√v_scale``: their full-model features are those of the rescaled
    problem, ``[vec(s x_qᵀ), √s · y2 x_q]`` (module docstring); ``data`` itself when ``v_scale = 1``.

    Parameters
    ----------
    data : linattn.Prompts
    v_scale : float
        ``s > 0``.

    Returns
    -------
    linattn.Prompts
    """
    if v_scale == 1.0 or data.y2 is None:
        return data
    return linattn.Prompts(s=data.s, xq=data.xq, yq=data.yq, y2=data.y2 * np.sqrt(v_scale), pool=data.pool,
                           task=data.task)


#: the rule of ``v_scale``: ``s`` enters squared (the v block's metric W2 ~ s² c_v²), kept where that is a float64
#: number
V_SCALE = real(low=1e-100, high=1e100)


def _scale_and_decay(model, v_scale, lam):
    """``(v_scale, (λ_Γ, λ_v) or None)`` of :func:`eigensystem`: ``v_scale`` (checked) and ``lam`` checked against
    ``model`` and each other."""
    if v_scale != 1.0 and model != "full":
        check.fail("v_scale", v_scale, "1 for model='reduced' (there is no v block to rescale)")
    if lam is None:
        return v_scale, None
    if check.asarray("lam", lam, "None or a pair (lam_Gamma, lam_v) of numbers > 0").ndim == 0:
        check.fail("lam", lam, "None or a pair (lam_Gamma, lam_v) of numbers > 0 (the eigensystem of H + diag(lam); "
                   "a common decay needs no eigensystem of its own)")
    lg, lv = check.block_lambdas(lam, model)
    if lg == 0:
        check.fail("lam", tuple(lam), "a pair (lam_Gamma, lam_v) of numbers > 0")
    if v_scale != 1.0:
        check.fail("v_scale", v_scale, "1 when lam is given (the eigensystem of H + diag(lam) is in the coordinates "
                   "of the parameters)")
    return v_scale, (lg, lv)


@public(pb=PROBLEM, v_scale=V_SCALE)
def as_eigensystem(data, pb, model="reduced", v_scale=1.0, lam=None) -> Eigensystem:
    """``data`` itself if it is an :class:`Eigensystem` of ``pb``, ``model``, ``v_scale`` and ``lam``, else its
    eigensystem.

    The one place where the exact engines (dynamics, replica, validation) accept either prompts or
    a precomputed eigensystem; an eigensystem built for another scale or per-block decay is refused with a
    ``ValueError`` (its modes belong to another quadratic form), never reused silently.

    Parameters
    ----------
    data : linattn.Prompts or Eigensystem
    pb : linattn.Problem
        Must equal the eigensystem's problem.
    model : {"reduced", "full"}
        Must equal the eigensystem's model.
    v_scale : float
        ``λ_Γ/λ_v`` of a rescaled eigensystem (module docstring; 1: none). An eigensystem's own scale must equal
        it to a relative ``1e-12`` (``λ_Γ/λ_v`` of different pairs with one ratio may differ in the last bit).
    lam : None or (float, float)
        ``(λ_Γ, λ_v)``: the eigensystem of ``A = H + Λ`` itself (:func:`eigensystem`); must equal the
        eigensystem's ``block_decay``.

    Returns
    -------
    Eigensystem
    """
    v_scale, pair = _scale_and_decay(model, v_scale, lam)
    return _as_eigensystem(data, pb, model, v_scale, pair)


def _as_eigensystem(data, pb, model="reduced", v_scale=1.0, pair=None):
    """:func:`as_eigensystem` of a checked problem, model, scale and pair; ``data`` (prompts or an eigensystem) is
    checked against them here."""
    if isinstance(data, Eigensystem):
        if model != data.model:
            raise ValueError(f"model must match the eigensystem's model {data.model!r}; got {model!r}")
        if pb != data.problem:
            raise ValueError(f"pb must match the eigensystem's problem {data.problem}; got {pb}")
        if pair != data.block_decay:
            have = ("the eigensystem of H (no per-block decay absorbed)" if data.block_decay is None
                    else f"the eigensystem of H + diag(lam) for lam = {data.block_decay}")
            want = "H" if pair is None else f"H + diag(lam), lam = {pair}"
            raise ValueError(f"data is {have}; this call needs the eigensystem of {want}: build it with "
                             f"spectra._eigensystem(data, pb, model{'' if pair is None else ', lam=' + str(pair)}) "
                             "or pass the prompts")
        if not np.isclose(data.v_scale, v_scale, rtol=1e-12, atol=0.0):
            raise ValueError(f"data is an eigensystem with v_scale = {data.v_scale!r} (lam_Gamma/lam_v of the "
                             f"rescaled v block); this call needs v_scale = {v_scale!r}: build it with "
                             f"spectra._eigensystem(data, pb, model, v_scale={v_scale!r}) or pass the prompts")
        return data
    validate.problem_data(data, pb, model)
    return _eigensystem(data, pb, model, False, v_scale, pair)


@public(null_space=boolean(), v_scale=V_SCALE)
def eigensystem(data, pb, model="reduced", null_space=False, v_scale=1.0, lam=None, device=None) -> Eigensystem:
    """Eigendecompose the Hessian of one dataset (Gram path for ``P < M``, dense otherwise).

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    model : {"reduced", "full"}
    null_space : bool
        Hold the null space of ``H`` as explicit modes with ``g = 0`` (forces the dense path;
        used by the Langevin simulator, which needs the complete eigenbasis of ``A``).
    v_scale : float
        ``s = λ_Γ/λ_v > 0`` (full model): the eigensystem of the rescaled problem, ``v`` features
        ``√s · y2 x_q`` and ``v`` test weight ``s c_v``, in the coordinates ``θ' = [vec Γ, v/√s]`` (module
        docstring). 1: the problem itself.
    lam : None or (float, float)
        A per-block decay ``(λ_Γ, λ_v)``, both ``> 0`` (full model): the eigensystem of ``A = H + Λ`` itself,
        dense (``O(M³)``), all ``M`` modes, ``g`` = eigenvalues of ``A`` (module docstring); its smallest
        eigenvalue must exceed ``1e-12`` times the largest (else ``ValueError`` naming ``lam``).
    device : None, str or torch.device
        ``None``: numpy/LAPACK. ``"cuda"``, ``"cuda:N"`` or ``"cpu"``: the Gram or dense Hessian formed and
        eigendecomposed by torch on that device in float64 (``spectra/_device.py``; the ``[torch]`` extra), the
        rest as on the numpy route. Not with ``lam`` (the per-block route stays on numpy).

    Returns
    -------
    Eigensystem
        Eigenvalues below ``1e-12 · g_max`` are exact zeros (null space of ``H``).

    Examples
    --------
    >>> import linattn, spectra
    >>> pb = linattn.Problem(6, 12, 0.1)
    >>> es = spectra.eigensystem(pb.sample(50, rng=0), pb)   # M = 36 parameters < P = 50 prompts: full rank
    >>> es.M, es.null_dim
    (36, 0)
    """
    validate.problem_data(data, pb, model)
    v_scale, pair = _scale_and_decay(model, v_scale, lam)
    dev = None if device is None else torch_device(device)
    if pair is not None and dev is not None:
        check.fail("device", device, "None with a per-block decay lam = (lam_gamma, lam_v)")
    return _eigensystem(data, pb, model, null_space, v_scale, pair, dev)


def _eigensystem(data, pb, model="reduced", null_space=False, v_scale=1.0, pair=None, dev=None):
    """:func:`eigensystem` of checked arguments (prompts of ``pb`` that serve ``model``, a checked scale and pair, a
    ``torch.device`` or ``None``), with its memory guards."""
    if pair is not None:
        return _block_decay_eigensystem(data, pb, model, pair)
    fdata = scaled_prompts(data, v_scale)            # the one place where the v features are rescaled
    P, D = data.P, data.D
    M = pb.n_params(model)
    structured = pb.task_covariance is not None        # the law's metric (spectra._task_metric), else c and c_v
    if not structured:
        c, cv = pb.feature_variance, pb.feature_variance_v * v_scale
    y = data.yq
    y2bar = float(y @ y / P)
    if P < M and not null_space:
        check.memory(8.0 * (3 * P * P + 4 * P * M), f"the Gram eigensystem (P = {P}, M = {M})", "P or D")
        if dev is not None:
            device_memory(dev, 8.0 * 3 * P * P, f"the Gram eigensystem (P = {P})", "P")
            g, U = on_device.eigh(on_device.gram(fdata, model, dev))
        else:
            with blas_threads(float(P) ** 3):       # a few large calls: the free cores (linattn.threads)
                g, U = np.linalg.eigh(fdata.gram(model))
        keep = g > NULL_TOL * max(g[-1], 1e-300)
        g, U = g[keep], U[:, keep]
        Us = U / np.sqrt(P * g)
        yt = U.T @ y
        b = np.sqrt(g / P) * yt
        e = yt**2 / P
        e_perp = 0.0 if keep.all() else float(y2bar - e.sum())
        u = None if structured else Us.T @ (np.einsum("pd,pd->p", data.s, data.xq) / (D / pb.teacher_strength))
        if model == "full":
            V2 = (fdata.y2[:, None] * fdata.xq).T @ Us  # (D, k)
        V, Uout = None, Us
    else:
        check.memory(8.0 * 4 * M * M, f"the dense eigensystem (M = {M} parameters)", "D")
        if dev is not None:
            device_memory(dev, 8.0 * 3 * M * M, f"the dense eigensystem (M = {M})", "D")
            g, V = on_device.eigh(on_device.hessian(fdata, model, dev))
        else:
            with blas_threads(float(M) ** 3):
                g, V = np.linalg.eigh(_hessian_dense(fdata, model))
        keep = g > NULL_TOL * max(g[-1], 1e-300)
        bvec = _apply_features_T(fdata, y / P, model)
        if null_space:   # null modes held explicitly: exact zeros, no data component
            g = np.where(keep, g, 0.0)
            b = np.where(keep, V.T @ bvec, 0.0)
        else:
            g, V = g[keep], V[:, keep]
            b = V.T @ bvec
        e = np.zeros(g.size)
        np.divide(b**2, g, out=e, where=g > 0)
        e_perp = float(y2bar - e.sum())
        u = None if structured else V.T @ _u_vector(pb, model)
        if model == "full":
            V2 = V[D * D:, :]
        Uout = None
    if not structured:
        W, W2, G2 = _metric(c, cv, g.size, V2 if model == "full" else None)
        return Eigensystem(problem=pb, data=data, model=model, P=P, M=M, k=g.size, g=g, b=b, u=u, e=e, e_perp=e_perp,
                           W=W, W2=W2, y2bar=y2bar, G2=G2, v_scale=v_scale, _U=Uout, _V=V)
    es = Eigensystem(problem=pb, data=data, model=model, P=P, M=M, k=g.size, g=g, b=b, u=np.zeros(g.size), e=e,
                     e_perp=e_perp, W=np.zeros((0, 0)), W2=np.zeros((0, 0)), y2bar=y2bar,
                     G2=None if model != "full" else V2.T @ V2, v_scale=v_scale, _U=Uout, _V=V)
    return _with_law(es)


def _with_law(es):
    """``es`` (of a structured problem) with the test metric of its task law in its modes (``law``, ``W``, ``W2``,
    ``u``: :func:`spectra._task_metric.law_metric`)."""
    check.memory(8.0 * 4 * es.k * es.M, f"the task law's metric in {es.k} modes (M = {es.M})", "P or D")
    law = law_metric(es.problem, es.model, es.v_scale, modes_as_rows(es))
    return dataclasses.replace(es, W=law.W, W2=law.W2, u=law.u, law=law)


def _u_vector(pb, model):
    """``u = [b vec(I)/D, 0]`` (``b``: the link's teacher strength)."""
    D = pb.D
    uvec = np.zeros(pb.n_params(model))
    uvec[: D * D] = np.eye(D).ravel() / (D / pb.teacher_strength)
    return uvec


def _metric(c, cv, k, V2):
    """``W = Vᵀ C V``, ``W2 = Vᵀ C² V`` and ``G2 = V_2ᵀ V_2`` from the ``v`` rows ``V_2`` of the modes."""
    G2 = None if V2 is None else V2.T @ V2
    return (*_metric_from_gram(c, cv, k, G2), G2)


def _metric_from_gram(c, cv, k, G2):
    """``W = c I + (c_v − c) G2`` and ``W2 = c² I + (c_v² − c²) G2`` (``c I`` and ``c² I`` for the reduced model)."""
    if G2 is None:
        return c * np.eye(k), c * c * np.eye(k)
    return c * np.eye(k) + (cv - c) * G2, c * c * np.eye(k) + (cv * cv - c * c) * G2


def _block_decay_eigensystem(data, pb, model, pair) -> Eigensystem:
    """The eigensystem of ``A = H + diag(λ_Γ I, λ_v I)`` itself (module docstring)."""
    lg, lv = pair
    P, D = data.P, data.D
    M = pb.n_params(model)
    check.memory(8.0 * 5 * M * M, f"the dense eigensystem of H + diag(lam) (M = {M} parameters)", "D")
    decay = np.r_[np.full(D * D, lg), np.full(M - D * D, lv)]
    A = _hessian_dense(data, model)
    A[np.diag_indices(M)] += decay
    g, V = np.linalg.eigh(A)
    if not g[0] > NULL_TOL * g[-1]:
        check.fail("lam", pair, f"a pair whose smaller entry exceeds {NULL_TOL:g} x lambda_max(H + diag(lam)) = "
                   f"{NULL_TOL * g[-1]:.3g} (below it the eigenvalues of H + diag(lam) are not resolved in float64)")
    y = data.yq
    b = V.T @ _apply_features_T(data, y / P, model)
    e = b**2 / g
    theta = V @ (b / g)
    resid = y - _apply_features(data, theta, model)
    e_perp = float(resid @ resid / P + theta @ (decay * theta))      # 2 E_t(θ*) = Ȳ² − Σ_k b_k²/g_k, no cancellation
    if pb.task_covariance is not None:      # structured tasks: the law's metric (spectra._task_metric)
        V2 = V[D * D:, :]
        es = Eigensystem(problem=pb, data=data, model=model, P=P, M=M, k=M, g=g, b=b, u=np.zeros(M), e=e,
                         e_perp=e_perp, W=np.zeros((0, 0)), W2=np.zeros((0, 0)), y2bar=float(y @ y / P),
                         G2=V2.T @ V2, block_decay=(lg, lv), _V=V)
        return _with_law(es)
    W, W2, G2 = _metric(pb.feature_variance, pb.feature_variance_v, M, V[D * D:, :] if model == "full" else None)
    return Eigensystem(problem=pb, data=data, model=model, P=P, M=M, k=M, g=g, b=b, u=V.T @ _u_vector(pb, model),
                       e=e, e_perp=e_perp, W=W, W2=W2, y2bar=float(y @ y / P), G2=G2, block_decay=(lg, lv), _V=V)
