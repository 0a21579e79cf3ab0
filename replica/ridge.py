r"""Fast exact ridge solution of one dataset at zero temperature (single ``λ``, ``β = ∞``).

``θ* = argmin E_t = A⁻¹b`` with ``A = H + Λ``, ``H = FᵀF/P``, ``b = Fᵀy/P`` and a weight decay ``Λ`` that may
differ between the blocks (``λ_Γ`` on ``Γ``, ``λ_v`` on ``v``: the peer's ridge of Lu et al. is
``λ_Γ = λ_L/D``, ``λ_v = λ_L``, conventions §6.1). No ``M × M`` eigendecomposition and no ``P × M`` feature
matrix are formed. Two exact routes:

* **Gram** (``P < M``): push-through, ``θ* = Λ_r⁻¹Fᵀγ`` with ``(K_r + λ_Γ I)γ = y/P`` and
  ``K_r = FΛ_r⁻¹Fᵀ/P = (SSᵀ + y2 y2ᵀ λ_Γ/λ_v) ∘ (X_qX_qᵀ)/P`` (``Λ = λ_Γ Λ_r``; a Hadamard product,
  conventions §2): ``O(P²D + P³)``. At ``λ = 0`` it is the min-norm interpolator (pseudo-inverse of ``K_r``).
* **Conjugate gradients** (``P >= M``): the Hessian–vector product ``Aθ = Fᵀ(Fθ)/P + Λθ`` is two GEMMs
  of size ``P × D × D`` (``Fθ = rowsum((SΓ) ∘ X_q) + y2 (X_q v)``, ``Fᵀr = Sᵀ diag(r) X_q``), preconditioned
  by the Kronecker factors of the dataset's own Hessian (:class:`_Preconditioner`). **Stopping rule** (proven):
  for SPD ``A``, ``‖θ − θ*‖ = ‖A⁻¹r‖ ≤ ‖r‖/λ_min(A) ≤ ‖r‖/min(λ_Γ, λ_v)``, so iterating until
  ``‖r‖ ≤ rtol · min λ · ‖θ‖`` (the true residual, recomputed at the end) certifies a relative error
  ``≤ rtol``. The test error then moves by at most ``|∇E_g|δ + ½ max(c, c_v) δ²`` (``δ`` the bound),
  reported as ``test_bound``. With ``λ = 0`` no bound exists; CG stops at relative residual ``1e-13``
  and ``certified`` is ``False``.

Use :func:`replica.gibbs` (one eigendecomposition, then any ``β``, ``λ`` at once) for many
temperatures or weight decays of one dataset, and this function for one ``λ`` at large ``D``
(``docs/pools.md`` has the measured break-even).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from linattn import check
from linattn.errors import ConvergenceError
from linattn.results import short_repr


@dataclass(frozen=True, eq=False)
class RidgeSolution:
    """The ridge solution of one dataset and its exact errors.

    Attributes
    ----------
    Gamma : ndarray (D, D)
    v : ndarray (D,) or None
        ``None`` for the reduced model.
    train : float
        ``E_t(θ*)`` with the weight decay included.
    test : float
        Fresh-task error ``E_g(θ*)`` (exact, conventions §2).
    test_idg : float or None
        In-distribution error over the dataset's pool (``None`` without a pool).
    lam : tuple of float
        ``(λ_Γ, λ_v)``.
    method : str
        ``"gram"`` or ``"cg"``.
    iterations : int
        CG iterations (0 for the Gram route).
    residual : float
        CG: ``‖Aθ − b‖`` (the true residual). Gram: the residual of the ``P × P`` system (or of the
        pseudo-inverse solve), relative to ``|y|/P``.
    error_bound : float
        Proven bound on ``‖θ − θ*‖`` on the CG route (``inf`` when ``λ = 0``); ``0`` for the direct Gram
        route (exact up to round-off, checked by ``residual``).
    test_bound : float
        Proven bound on ``|E_g(θ) − E_g(θ*)|`` that follows from ``error_bound``.
    certified : bool
        ``error_bound <= rtol · |θ|``.
    """

    __repr__ = short_repr

    Gamma: np.ndarray
    v: np.ndarray | None
    train: float
    test: float
    test_idg: float | None
    lam: tuple
    method: str
    iterations: int
    residual: float
    error_bound: float
    test_bound: float
    certified: bool


def block_lambdas(lam, model):
    """``(λ_Γ, λ_v)`` from a scalar or a pair (:func:`linattn.check.block_lambdas`)."""
    return check.block_lambdas(lam, model)


class _Operator:
    """``F``, ``Fᵀ`` and ``A = FᵀF/P + Λ`` on parameter vectors, from the prompts (no feature matrix).

    With ``z = [s; y2]`` (``z = s`` reduced) and ``Θ = [Γ; vᵀ]`` ((D+1) × D, so that ``θ = vec Θ`` row-major):
    ``Fθ = rowsum((ZΘ) ∘ X_q)`` and ``Fᵀr = vec(Zᵀ diag(r) X_q)`` — one GEMM each, for both blocks at once.
    """

    def __init__(self, data, model, lg, lv):
        self.S, self.X, self.y2 = data.s, data.xq, data.y2
        self.P, self.D = data.P, data.D
        self.full = model == "full"
        self.Z = np.concatenate([data.s, data.y2[:, None]], axis=1) if self.full else data.s
        self.ZT = np.ascontiguousarray(self.Z.T)        # (D+1, P) and (D, P): the faster GEMM layouts (measured)
        self.XT = np.ascontiguousarray(self.X.T)
        self.lam = np.full(self.D * self.D + (self.D if self.full else 0), lg)
        if self.full:
            self.lam[self.D * self.D:] = lv

    def F(self, theta):
        return np.einsum("dp,dp->p", theta.reshape(-1, self.D).T @ self.ZT, self.XT)

    def FT(self, r):
        return ((self.ZT * r) @ self.X).ravel()

    def A(self, theta):
        return self.FT(self.F(theta)) / self.P + self.lam * theta


def ridge(data, pb, lam, model="reduced", method="auto", rtol=1e-8, maxiter=10_000) -> RidgeSolution:
    r"""Exact ridge (or min-norm) solution of one dataset without an eigendecomposition (module docstring).

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    lam : float or (float, float)
        Weight decay ``λ >= 0``, or ``(λ_Γ, λ_v)`` per block (full model; both ``> 0`` or both 0).
        The peer's ridge ``λ_L``: ``lam=(λ_L/D, λ_L)``.
    model : {"reduced", "full"}
    method : {"auto", "gram", "cg"}
        ``"auto"``: Gram when ``P < M``, else CG. ``"gram"`` needs ``P < M`` or ``λ > 0``;
        ``"cg"`` needs ``P >= M`` or ``λ > 0``.
    rtol : float
        Certified relative accuracy of ``θ`` on the CG route (``0 < rtol < 1``).
    maxiter : int
        CG iteration limit.

    Returns
    -------
    RidgeSolution

    Raises
    ------
    linattn.ConvergenceError
        If CG does not reach its stopping rule within ``maxiter`` iterations.
    """
    check.problem_data(data, pb, model)
    lg, lv = block_lambdas(lam, model)
    method = check.choice("method", method, ("auto", "gram", "cg"))
    rtol = check.real("rtol", rtol, low=0.0, high=1.0, low_open=True, high_open=True)
    maxiter = check.positive_int("maxiter", maxiter)
    P, D = data.P, data.D
    M = pb.n_params(model)
    if method == "auto":
        method = "gram" if P < M else "cg"
    if lg == 0 and ((method == "gram" and P >= M) or (method == "cg" and P < M)):
        check.fail("method", method, f"'{'cg' if P >= M else 'gram'}' at lam = 0 with P = {P}, M = {M} "
                                     "(the min-norm solution needs the Gram route when P < M and CG when P >= M)")
    op = _Operator(data, model, lg, lv)
    if method == "gram":
        theta, res = _gram(data, op, lg, lv)
        its, bound = 0, 0.0
    else:
        check.memory(8.0 * (6 * M + 6 * P * (D + 1)), f"conjugate gradients (P = {P}, M = {M})", "P or D")
        theta, its, res = _cg(op, op.FT(data.yq) / P, pb, model, min(lg, lv), rtol, maxiter)
        bound = res / min(lg, lv) if lg > 0 else np.inf
    Gamma = theta[: D * D].reshape(D, D)
    v = theta[D * D:] if model == "full" else None
    resid = data.yq - op.F(theta)
    train = 0.5 * float(resid @ resid) / P + 0.5 * float(theta @ (op.lam * theta))
    test = pb.test_error(Gamma, v)
    idg = pb.test_error(Gamma, v, tasks=data.pool) if data.pool is not None else None
    cmax = max(pb.feature_variance, pb.feature_variance_v if model == "full" else 0.0)
    grad = np.linalg.norm(np.concatenate([pb.feature_variance * Gamma.ravel()
                                          - pb.teacher_strength * np.eye(D).ravel() / D]
                                         + ([pb.feature_variance_v * v] if v is not None else [])))
    with np.errstate(over="ignore"):     # a bound beyond float64 (λ ~ 1e-300) is no certificate: inf
        test_bound = float(grad * np.float64(bound) + 0.5 * cmax * np.float64(bound) ** 2)
    norm = float(np.linalg.norm(theta))
    return RidgeSolution(Gamma=Gamma, v=v, train=float(train), test=float(test),
                         test_idg=None if idg is None else float(idg), lam=(lg, lv), method=method,
                         iterations=int(its), residual=res, error_bound=float(bound), test_bound=test_bound,
                         certified=bool(np.isfinite(bound) and (method == "gram" or bound <= rtol * max(norm, 1e-300))))


def _gram(data, op, lg, lv):
    """Push-through solve ``θ = Λ_r⁻¹Fᵀγ``, ``(K_r + λ_Γ I)γ = y/P`` (module docstring); returns ``θ`` and
    the relative residual of the ``P × P`` system."""
    P = data.P
    check.memory(8.0 * 3 * P * P, f"the {P} x {P} Gram matrix", "P")
    ratio = 1.0 if lg == 0 else lg / lv
    if op.full:     # S Sᵀ + ratio y2 y2ᵀ as one product of (P, D + 1) factors
        Sy = np.concatenate([data.s, np.sqrt(ratio) * data.y2[:, None]], axis=1)
        K = Sy @ Sy.T
    else:
        K = data.s @ data.s.T
    K *= data.xq @ data.xq.T
    K /= P
    rhs = data.yq / P
    if lg > 0:
        K[np.diag_indices(P)] += lg
        factor = linalg.cho_factor(K, lower=True, check_finite=False, overwrite_a=False)
        gam = linalg.cho_solve(factor, rhs, check_finite=False)
        res = float(np.linalg.norm(K @ gam - rhs) / np.linalg.norm(rhs))
    else:   # min-norm: pseudo-inverse of K (exact zeros below 1e-12 of the largest eigenvalue)
        g, U = np.linalg.eigh(K)
        keep = g > 1e-12 * g[-1]
        gam = U[:, keep] @ ((U[:, keep].T @ rhs) / g[keep])
        res = float(np.linalg.norm(K @ gam - U[:, keep] @ (U[:, keep].T @ rhs)) / np.linalg.norm(rhs))
    theta = op.FT(gam)
    if op.full:
        theta[op.D * op.D:] *= ratio
    return theta, res


class _Preconditioner:
    r"""Kronecker-factored inverse of the dataset's Hessian (the preconditioner of :func:`_cg`).

    The features are ``h = z ⊗ x_q`` with ``z = [s; y2]`` (``z = s`` for the reduced model), and ``z`` and ``x_q``
    are independent, so ``E H = E[z zᵀ] ⊗ E[x xᵀ]``. The dataset's own factors ``A_z = ZᵀZ/P`` and
    ``A_x = X_qᵀX_q/P`` carry its anisotropy — a pool of ``K < D`` tasks makes ``A_z`` nearly singular off the
    pool's span, and makes the ``v`` feature ``y2 x_q`` nearly collinear with ``Γ`` features along the pool (so
    the ``Γ``–``v`` cross block must be kept). With ``Λ = Λ̃ ⊗ I``:
    ``(A_z ⊗ A_x + Λ)⁻¹ = Λ̃^{-1/2} (B ⊗ A_x + I)⁻¹ Λ̃^{-1/2}``, ``B = Λ̃^{-1/2} A_z Λ̃^{-1/2}``, applied in the eigenbases
    of ``B`` and ``A_x`` (``O(D³)``). Any SPD preconditioner leaves the solution and the stopping rule unchanged.
    """

    def __init__(self, op):
        P = op.P
        Z = op.Z
        lam_rows = op.lam[:: op.D]                       # Λ̃: one decay per row of Θ = [Γ; vᵀ]
        ridge = bool(lam_rows[0] > 0)                   # λ = 0 (min-norm, P >= M): (A_z ⊗ A_x)⁻¹
        self.scale = 1.0 / np.sqrt(lam_rows) if ridge else np.ones(lam_rows.size)
        B = (Z.T @ Z / P) * np.outer(self.scale, self.scale)
        self.eb, self.Ub = np.linalg.eigh(B)
        self.ex, self.Ux = np.linalg.eigh(op.X.T @ op.X / P)
        prod = np.outer(np.maximum(self.eb, 0.0), np.maximum(self.ex, 0.0))
        self.inv = 1.0 / (prod + 1.0) if ridge else 1.0 / np.maximum(prod, 1e-300)
        self.shape = (Z.shape[1], op.D)

    def __call__(self, r):
        Y = r.reshape(self.shape) * self.scale[:, None]
        Y = self.Ub @ ((self.Ub.T @ Y @ self.Ux) * self.inv) @ self.Ux.T
        return (Y * self.scale[:, None]).ravel()


def _cg(op, b, pb, model, lam_lo, rtol, maxiter):
    """Preconditioned CG on ``Aθ = b`` with the certified stopping rule of the module docstring."""
    pre = _Preconditioner(op)
    theta = np.zeros_like(b)
    r = b.copy()
    z = pre(r)
    p = z.copy()
    rz = float(r @ z)
    bnorm = float(np.linalg.norm(b))
    for it in range(1, maxiter + 1):
        Ap = op.A(p)
        step = rz / float(p @ Ap)
        theta += step * p
        r -= step * Ap
        rn = float(np.linalg.norm(r))
        target = rtol * lam_lo * float(np.linalg.norm(theta)) if lam_lo > 0 else 1e-13 * bnorm
        if rn <= target or rn <= 1e-15 * bnorm:
            r_true = b - op.A(theta)          # the recursion drifts: certify with the true residual
            rt = float(np.linalg.norm(r_true))
            if rt <= max(target, 1e-15 * bnorm) * 1.0000001:
                return theta, it, rt
            r = r_true
            z = pre(r)
            p = z.copy()
            rz = float(r @ z)
            continue
        z = pre(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    raise ConvergenceError(f"ridge: conjugate gradients did not reach |r| <= {target:.3g} in {maxiter} iterations "
                           f"(|r| = {rn:.3g}); raise maxiter, or use replica.gibbs (eigendecomposition)")
