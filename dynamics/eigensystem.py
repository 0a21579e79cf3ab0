r"""Per-dataset eigensystem of the training energy, computed once and reused.

``E_t(θ) = ½ Ȳ² − b·θ + ½ θᵀ A θ`` with ``A = H + λ I``, ``H = Fᵀ F / P``, ``b = Fᵀ y / P``
(THEORY §2). Every exact result of :mod:`dynamics` and :mod:`replica` (gradient flow,
gradient descent, ridge and min-norm solutions, Gibbs averages for any ``β`` and ``λ``) is a
function of the eigenvalues ``g_k`` of ``H`` on its range and of a few projections on its
eigenvectors ``v_k``; this class holds them.

Gram path (``P < M``). With the Gram matrix ``K = F Fᵀ / P = U diag(g) Uᵀ`` the range
eigenvectors are ``v_k = Fᵀ U_k / √(P g_k)``; every projection is computed from ``U`` and the
prompts in ``O(P² D + P³)`` without forming an ``M``-dimensional basis:
``b_k = √(g_k/P) (Uᵀ y)_k``, ``v_kᵀ u = (Uᵀ F u)_k / √(P g_k)``, and for the full model the
``v``-block rows ``V_2 = (y2 x_q)ᵀ U / √(P g)``. Dense path (``P >= M``): ``eigh`` of ``H``.

Test-error metric ``C = diag(c I_{D²}, c_v I_D)``: ``W = Vᵀ C V = c I + (c_v − c) V_2ᵀ V_2``.
The label energy per mode ``e_k = b_k²/g_k`` (``= (Uᵀy)_k²/P`` on the Gram path) and the
least-squares residual ``e_⊥ = Ȳ² − Σ_k e_k`` (exactly 0 when ``P < M``) give the stable form
``E_t(θ*_λ) = ½ [e_⊥ + Σ_k e_k λ/(g_k + λ)]`` with no cancellation at small ``λ``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _validate as check
from spectra import hessian_dense

#: eigenvalues of H below this fraction of the largest are treated as exact zeros (null space)
NULL_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class Eigensystem:
    """Eigen-data of one dataset (module docstring). Build with :func:`eigensystem`.

    Attributes
    ----------
    problem : linattn.Problem
    data : linattn.Prompts
    model : str
    P, M, k : int
        Prompts, parameters, dimension of ``range(H)``.
    g : ndarray (k,)
        Nonzero eigenvalues of ``H`` (not rescaled), ascending.
    b, u : ndarray (k,)
        ``Vᵀ b`` and ``Vᵀ u`` with ``u = [vec(I)/D, 0]`` (so that ``(2/D) tr Γ = 2 u·θ``).
    e : ndarray (k,)
        Label energy per mode ``b_k²/g_k``.
    e_perp : float
        Least-squares residual energy ``Ȳ² − Σ e_k`` (0 for ``P < M``).
    W, W2 : ndarray (k, k)
        ``Vᵀ C V`` and ``Vᵀ C² V``.
    y2bar : float
        ``Ȳ² = (1/P) Σ y_q²``.
    """

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
    _U: np.ndarray | None = None   # Gram path: U / √(P g)   (P, k)
    _V: np.ndarray | None = None   # dense path: eigenvectors (M, k)

    # ------------------------------------------------------------------ metric constants
    @property
    def trC(self) -> float:
        D = self.problem.D
        return self.problem.feature_variance * D * D + (self.problem.feature_variance_v * D if self.model == "full" else 0)

    @property
    def trC2(self) -> float:
        D = self.problem.D
        return self.problem.feature_variance**2 * D * D + (self.problem.feature_variance_v**2 * D if self.model == "full" else 0)

    @property
    def u_norm2(self) -> float:
        return 1.0 / self.problem.D

    @property
    def c_u(self) -> float:
        """``C u = c u`` (``u`` lives in the ``Γ`` block)."""
        return self.problem.feature_variance

    @property
    def lambda_max(self) -> float:
        """Largest eigenvalue of ``H``."""
        return float(self.g[-1]) if self.k else 0.0

    # ------------------------------------------------------------------ bases
    @property
    def basis(self) -> np.ndarray | None:
        """Eigenvectors ``V`` (M × k) when held explicitly (dense path, ``P >= M``), else ``None``."""
        return self._V

    def project(self, theta) -> np.ndarray:
        """``Vᵀ θ`` for ``θ`` of shape (M,) or (n, M)."""
        theta = np.asarray(theta, dtype=float)
        if self._V is not None:
            return theta @ self._V
        F_theta = _apply_features(self.data, theta, self.model)  # (…, P): h_μ·θ
        return F_theta @ self._U

    def lift(self, a) -> np.ndarray:
        """``V a`` for coefficients ``a`` of shape (k,) or (n, k): parameter vectors (…, M)."""
        a = np.asarray(a, dtype=float)
        if self._V is not None:
            return a @ self._V.T
        return _apply_features_T(self.data, a @ self._U.T, self.model)

    def theta_star(self, lam) -> np.ndarray:
        """Ridge solution ``θ* = A⁻¹ b`` (min-norm solution for ``λ = 0``)."""
        lam = check.nonnegative("lam", lam)
        return self.lift(self.b / (self.g + lam))

    def train_at_ridge(self, lam) -> float:
        """``E_t(θ*_λ) = ½ [e_⊥ + Σ_k e_k λ/(g_k + λ)]`` (stable at small ``λ``)."""
        return 0.5 * (self.e_perp + float(np.sum(self.e * lam / (self.g + lam))))


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


def eigensystem(data, pb, model="reduced") -> Eigensystem:
    """Eigendecompose the Hessian of one dataset (Gram path for ``P < M``, dense otherwise).

    Eigenvalues below ``1e-12 · g_max`` are treated as exact zeros (null space of ``H``).
    """
    if not isinstance(data, linattn.Prompts):
        raise ValueError(f"data must be a linattn.Prompts; got {type(data).__name__}")
    if not isinstance(pb, linattn.Problem):
        raise ValueError(f"pb must be a linattn.Problem; got {type(pb).__name__}")
    check.model(model)
    data.require(model)
    if data.D != pb.D:
        raise ValueError(f"data.D must equal pb.D = {pb.D}; got {data.D}")
    P, D = data.P, data.D
    M = pb.n_params(model)
    c, cv = pb.feature_variance, pb.feature_variance_v
    y = data.yq
    y2bar = float(y @ y / P)
    if P < M:
        g, U = np.linalg.eigh(data.gram(model))
        keep = g > NULL_TOL * max(g[-1], 1e-300)
        g, U = g[keep], U[:, keep]
        Us = U / np.sqrt(P * g)
        yt = U.T @ y
        b = np.sqrt(g / P) * yt
        e = yt**2 / P
        e_perp = 0.0 if keep.all() else float(y2bar - e.sum())
        u = Us.T @ (np.einsum("pd,pd->p", data.s, data.xq) / D)
        if model == "full":
            V2 = (data.y2[:, None] * data.xq).T @ Us  # (D, k)
        V, Uout = None, Us
    else:
        g, V = np.linalg.eigh(hessian_dense(data, model))
        keep = g > NULL_TOL * max(g[-1], 1e-300)
        g, V = g[keep], V[:, keep]
        bvec = _apply_features_T(data, y / P, model)
        b = V.T @ bvec
        e = b**2 / g
        e_perp = float(y2bar - e.sum())
        uvec = np.zeros(M)
        uvec[: D * D] = np.eye(D).ravel() / D
        u = V.T @ uvec
        if model == "full":
            V2 = V[D * D:, :]
        Uout = None
    k = g.size
    if model == "full":
        G2 = V2.T @ V2
        W = c * np.eye(k) + (cv - c) * G2
        W2 = c * c * np.eye(k) + (cv * cv - c * c) * G2
    else:
        W = c * np.eye(k)
        W2 = c * c * np.eye(k)
    return Eigensystem(problem=pb, data=data, model=model, P=P, M=M, k=k, g=g, b=b, u=u, e=e, e_perp=e_perp,
                       W=W, W2=W2, y2bar=y2bar, _U=Uout, _V=V)

