r"""Errors over a set of tasks in the modes of a per-dataset eigensystem (:class:`spectra.Eigensystem`).

With fresh tokens and noise, the exact error of ``θ = [vec Γ, v]`` averaged over any set of tasks — a pool, or a
Gaussian task law ``N(0, T)`` — is a quadratic form ``E(θ) = ½[k₀ − 2ℓ·θ + θᵀCθ]`` whose pieces depend on the tasks
only through their moments (:class:`linattn.pools.TaskMoments`; :class:`linattn.pools.IDGMetric` applies ``C``).
For a Gaussian law ``C = Σ̃_T ⊗ I_D`` and ``ℓ = vec B_T`` (:func:`linattn.pools.moment_matrices` of the law's exact
moments, :func:`linattn._task_covariance.gaussian_moments`). An eigensystem holds modes ``V`` (orthonormal columns,
in the coordinates ``θ'`` with ``θ = Sθ'``, ``S`` = :attr:`~spectra.Eigensystem.param_scale`); in them the form
becomes ``½[k₀ − 2a·V'ᵀℓ' + aᵀ(V'ᵀC'V')a]`` with ``C' = SCS`` and ``ℓ' = Sℓ`` for ``θ' = V a``.

Two uses:

* :class:`EigenIDG` (:func:`eigen_metric`): the error of one set of tasks in the modes (the pool's in-distribution
  error :attr:`spectra.Eigensystem.idg`; with structured tasks the out-of-distribution error
  :attr:`spectra.Eigensystem.odg` on fresh tasks from the isotropic law of the same power ``(tr S/D) I``).
* :class:`LawMetric` (:func:`law_metric`): the *test* metric of a structured problem (``Problem(task_covariance=S)``,
  the law ``T = S``), with everything the exact engines read from the eigensystem's metric: ``W = V'ᵀC'V'``,
  ``W2 = V'ᵀC'²V'``, ``u = V'ᵀℓ'``, ``Cu = V'ᵀC'ℓ'`` (for the spread of gradient flow over initialisations),
  ``|ℓ'|²``, ``tr C'`` and ``tr C'²`` (the parts off the modes). Isotropic tasks keep the eigensystem's closed forms
  (``W = cI + (c_v − c)V_2ᵀV_2``, ``u = b Vᵀvec(I)/D``) bit for bit; this path serves ``S`` only.

Cost: ``O(k M D)`` for ``C'V'`` and ``O(k² M)`` for ``W`` and ``W2``, from the modes as rows (``k × M``), which the
Gram path builds from the prompts (``O(k P D²)``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._idg import metric_from_moments
from linattn._results import short_repr
from linattn._task_covariance import gaussian_moments
from linattn._task_moments import moment_matrices


@dataclass(frozen=True, eq=False)
class EigenIDG:
    """The error over a set of tasks in eigen coordinates: ``metric`` (:class:`linattn.pools.IDGMetric`),
    ``linear = Vᵀℓ`` (k,), ``Q = VᵀC_W V`` (k, k) and ``trace = tr C_W`` (with ``V`` → ``SV`` and
    ``C_W`` → ``S C_W S`` for a rescaled eigensystem)."""

    __repr__ = short_repr

    metric: object
    linear: np.ndarray
    Q: np.ndarray
    trace: float

    def error(self, a) -> np.ndarray:
        """``½[k₀ − 2a·Vᵀℓ + aᵀQa]`` for coefficients ``a`` (..., k) of parameters in the modes held.

        Raises
        ------
        ValueError
            ``a`` not a finite array of shape ``(..., k)``, or so large that the error overflows float64.
        """
        k = self.linear.shape[0]
        a = check.finite_array("a", a)
        if a.ndim < 1 or a.shape[-1] != k:
            check.fail("a", f"<array with shape {a.shape}>", f"an array of shape (..., k), k = {k}")
        with np.errstate(over="ignore", invalid="ignore"):
            out = 0.5 * (self.metric.const - 2.0 * a @ self.linear + np.einsum("...k,kl,...l->...", a, self.Q, a))
        check.finite_result(out, {"a": a}, "the in-distribution error")
        return out

    def thermal_trace(self, weights, null_weight, null_dim) -> np.ndarray:
        """``tr(C_W B)`` for ``B = V diag(weights) Vᵀ + null_weight (I − VVᵀ)``: ``weights`` (..., k)."""
        dq = np.diag(self.Q)
        out = np.asarray(weights) @ dq
        if null_dim:
            out = out + np.asarray(null_weight) * (self.trace - dq.sum())
        return out


def modes_as_rows(es) -> np.ndarray:
    """The modes of ``es`` as rows (``k × M``, coordinates ``θ'``): the dense path's eigenvectors, or ``V a`` for
    ``a = I`` on the Gram path."""
    return es._V.T if es._V is not None else es._lift(np.eye(es.k))


def eigen_metric(es, met) -> EigenIDG:
    """The quadratic form ``met`` (:class:`linattn.pools.IDGMetric`, on the parameters ``θ``) in the modes of ``es``
    (module docstring)."""
    check.memory(8.0 * 3 * es.k * es.M, f"an error metric in {es.k} modes (M = {es.M})", "P or D")
    V = modes_as_rows(es)
    trace = met.trace
    if es.v_scale != 1.0:     # E(θ) with θ = S θ': the metric S C S and the linear term S ℓ
        V = V * es.param_scale
        D = es.problem.D
        unit_v = np.eye(es.M)[D * D:]
        trace += (es.v_scale - 1.0) * float(np.trace(met.apply(unit_v)[:, D * D:]))
    Q = V @ met.apply(V).T
    return EigenIDG(metric=met, linear=V @ met.linear, Q=0.5 * (Q + Q.T), trace=float(trace))


@dataclass(frozen=True, eq=False)
class LawMetric:
    """The test metric of a structured problem in the modes of an eigensystem (module docstring; coordinates ``θ'``).

    Attributes
    ----------
    metric : linattn.pools.IDGMetric
        The error of the problem's task law on the parameters ``θ``.
    scale : ndarray (M,)
        ``S`` (``θ = Sθ'``).
    W, W2 : ndarray (k, k)
        ``V'ᵀC'V'`` and ``V'ᵀC'²V'``.
    u, Cu : ndarray (k,)
        ``V'ᵀℓ'`` and ``V'ᵀC'ℓ'``.
    ell : ndarray (M,)
        ``ℓ' = Sℓ``.
    u_norm2, trC, trC2 : float
        ``|ℓ'|²``, ``tr C'``, ``tr C'²``.
    """

    __repr__ = short_repr

    metric: object
    scale: np.ndarray
    W: np.ndarray
    W2: np.ndarray
    u: np.ndarray
    Cu: np.ndarray
    ell: np.ndarray
    u_norm2: float
    trC: float
    trC2: float

    def apply(self, theta) -> np.ndarray:
        """``C'θ'`` for parameter vectors in the coordinates of the modes (..., M)."""
        return self.metric._apply(theta * self.scale) * self.scale


def law_metric(pb, model, v_scale, rows) -> LawMetric:
    """The :class:`LawMetric` of the task law of ``pb`` (``N(0, S)``) in the modes ``rows`` (``k × M``, coordinates
    ``θ'`` of an eigensystem whose ``v`` block is rescaled by ``v_scale``)."""
    mo = gaussian_moments(pb)
    met = metric_from_moments(pb, mo, model)
    D = pb.D
    scale = np.ones(pb.n_params(model))
    rs = np.ones(D + (1 if model == "full" else 0))
    if model == "full":
        scale[D * D:] = np.sqrt(v_scale)
        rs[-1] = np.sqrt(v_scale)
    CV = met._apply(rows * scale) * scale                   # C'V' (k, M)
    W = rows @ CV.T
    ell = met.linear * scale
    St, _, _ = moment_matrices(pb, model, mo)
    St = St * np.outer(rs, rs)                              # C' = Σ̃' ⊗ I_D
    return LawMetric(metric=met, scale=scale, W=0.5 * (W + W.T), W2=CV @ CV.T, u=rows @ ell, Cu=CV @ ell, ell=ell,
                     u_norm2=float(ell @ ell), trC=D * float(np.trace(St)), trC2=D * float(np.sum(St * St)))
