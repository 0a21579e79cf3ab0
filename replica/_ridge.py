r"""Fast exact ridge solution of one dataset at zero temperature (single ``λ``, ``β = ∞``).

``θ* = argmin E_t = A⁻¹b`` with ``A = H + Λ``, ``H = FᵀF/P``, ``b = Fᵀy/P`` and a weight decay ``Λ`` that may
differ between the blocks (``λ_Γ`` on ``Γ``, ``λ_v`` on ``v``: the peer's ridge of Lu et al. is
``λ_Γ = λ_L/D``, ``λ_v = λ_L``, conventions §6.1). No ``M × M`` eigendecomposition and no ``P × M`` feature
matrix are formed. Two exact routes:

* **Gram** (``P < M``): push-through, ``θ* = Λ_r⁻¹Fᵀγ`` with ``(K_r + λ_Γ I)γ = y/P`` and
  ``K_r = FΛ_r⁻¹Fᵀ/P = (SSᵀ + y2 y2ᵀ λ_Γ/λ_v) ∘ (X_qX_qᵀ)/P`` (``Λ = λ_Γ Λ_r``; a Hadamard product,
  conventions §2): ``O(P²D + P³)``. For ``λ > 0`` the ``P × P`` matrix is built and Cholesky-factored in
  float32 and the solution refined in float64 (mixed-precision iterative refinement, as LAPACK's ``dsposv``):
  each step computes the residual ``r = y/P − (K_r + λ_Γ I)γ`` in float64 *without* the matrix
  (``K_rγ = FΛ_r⁻¹Fᵀγ/P``, two products), until a step no longer halves it; the result is accepted if its
  normwise backward error is that of a float64 direct solve, ``‖r‖ ≤ √P ε₆₄ (‖K‖‖γ‖ + ‖y‖/P)``, with
  ``‖K_r‖ ≤ max_μ|x_μ|² ‖Λ_r^{-1/2}ZᵀZΛ_r^{-1/2}‖/P`` (Schur's bound for the Hadamard product of two PSD
  matrices). Otherwise (or if the float32 factor fails) the float64 Cholesky factor is used. At ``λ = 0`` it
  is the min-norm interpolator (pseudo-inverse of ``K_r``, float64).
* **Conjugate gradients** (``P >= M``): the Hessian–vector product ``Aθ = Fᵀ(Fθ)/P + Λθ`` is two GEMMs
  of size ``P × D × D`` (``Fθ = rowsum((SΓ) ∘ X_q) + y2 (X_q v)``, ``Fᵀr = Sᵀ diag(r) X_q``), preconditioned
  by the Kronecker factors of the dataset's own Hessian (:class:`_Preconditioner`, applied as a change of
  variables, so that an iteration needs no other product). The iteration's products are computed in float32
  on power-of-two scaled copies of the (transformed) data; the residual is recomputed in float64
  ("reliable updates") whenever the recursive residual has fallen by ``10⁻⁴`` since the last recomputation
  (or after 50 iterations), and always before stopping — so the stopping rule below is checked on the true
  float64 residual, and the float32 products only choose the search directions. If a segment of float32
  iterations fails to halve the true residual, or a float32 product is not finite, the iteration continues
  in float64. **Stopping rule** (proven): for SPD ``A``,
  ``‖θ − θ*‖ = ‖A⁻¹r‖ ≤ ‖r‖/λ_min(A) ≤ ‖r‖/min(λ_Γ, λ_v)``, so iterating until
  ``‖r‖ ≤ rtol · min λ · ‖θ‖`` (the true residual, recomputed at the end in float64) certifies a relative error
  ``≤ rtol``. The test error then moves by at most ``|∇E_g|δ + ½ max(c, c_v) δ²`` (``δ`` the bound),
  reported as ``test_bound``. With ``λ = 0`` no bound exists; CG stops at relative residual ``1e-13``
  and ``certified`` is ``False``.

**Minimum-norm limit** (``λ = 0``): the answer is ``θ⁺ = F⁺y = lim_{λ→0} (H + λ)⁻¹b``, the least-squares solution of
least norm (also the limit of gradient flow from ``θ = 0``), i.e. the solution in ``range(Fᵀ)``. A prompt repeated
``n_k`` times enters ``E_t`` as one prompt ``(√n_k z_k, x_k, √n_k ȳ_k)`` (``ȳ_k`` its mean label) up to a constant, so
the solve runs on the ``P'`` distinct prompts (:func:`_distinct`): the Gram route (pseudo-inverse of the ``P' × P'``
Gram matrix, exact for any rank) when ``P' < M``, CG otherwise. Preconditioned CG from ``θ = 0`` converges, on a
singular system, to the solution of least ``θᵀCθ`` (``C`` the preconditioner), not of least norm; the ``λ = 0``
preconditioner is therefore the pseudo-inverse of ``A_z ⊗ A_x`` on ``R = span(z) ⊗ span(x_q) ⊇ range(H)``, whose
iterates stay in ``R``: the result is ``θ⁺`` whenever ``H`` is nonsingular on ``R`` (``rank F = dim R``; true for
``P' >= M`` prompts in general position). The checks: ``numpy.linalg.lstsq`` and the ``λ → 0`` limit
(``tests/replica/test_ridge.py``). All-zero labels (``b = 0``): ``θ* = 0`` for every ``λ``, returned exactly.

Use :func:`replica.gibbs` (one eigendecomposition, then any ``β``, ``λ`` at once) for many
temperatures or weight decays of one dataset, and this function for one ``λ`` at large ``D``
(``docs/pools.md`` has the measured break-even; ``benchmarks/bench_pools.py`` the speed against the peer's
normal equations).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from linattn import _check as check
from linattn import _idg as pools
from linattn import _validate as validate
from linattn._arguments import choice, integer, public, tolerance
from linattn._errors import ConvergenceError
from linattn._numerics.cg import NotCertified, certified_cg
from linattn._results import ToXarray, short_repr
from linattn._task_covariance import gaussian_moments, structured_error
from linattn._task_moments import moment_matrices
from linattn._threads import blas_threads


@dataclass(frozen=True, eq=False)
class RidgeSolution(ToXarray, xarray_coords=("lam",), xarray_dims={"Gamma": ("i", "j"), "v": ("i",)}):
    """The ridge solution of one dataset and its exact errors.

    Attributes
    ----------
    Gamma : ndarray (D, D)
    v : ndarray (D,) or None
        ``None`` for the reduced model.
    train : float
        ``E_t(θ*)`` with the weight decay included.
    test : float
        Fresh-task error ``E_g(θ*)`` (exact, conventions §2) at the context length ``N_test``.
    test_idg : float or None
        In-distribution error over the dataset's pool at ``N_test`` (``None`` without a pool).
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
    N_test : int or None
        The context length of the test prompts (``None``: the training length ``N``).
    test_odg : float or None
        Structured tasks (``pb.task_covariance = S``): the exact error on fresh tasks from the isotropic law of the
        same power ``(tr S/D) I`` (:func:`linattn.pools.task_error`; ``test`` is on fresh tasks from ``N(0, S)``).
        ``None`` for isotropic tasks.
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
    N_test: int | None = None
    test_odg: float | None = None


def block_lambdas(lam, model):
    """``(λ_Γ, λ_v)`` from a scalar or a pair (:func:`linattn._check.block_lambdas`)."""
    return check.block_lambdas(lam, model)


_EPS = float(np.finfo(np.float64).eps)


def _pow2(a):
    """The power of two at or above ``max|a|`` (1 for a zero array): scaling by it is exact."""
    m = float(np.max(np.abs(a))) if a.size else 0.0
    return 2.0 ** np.ceil(np.log2(m)) if m > 0 else 1.0


class _Operator:
    """``F``, ``Fᵀ`` and ``A = FᵀF/P + Λ`` on parameter vectors, from the prompts (no feature matrix), in float64.

    With ``z = [s; y2]`` (``z = s`` reduced) and ``Θ = [Γ; vᵀ]`` ((D+1) × D, so that ``θ = vec Θ`` row-major):
    ``Fθ = rowsum((ZΘ) ∘ X_q)`` and ``Fᵀr = vec(Zᵀ diag(r) X_q)`` — one GEMM each, for both blocks at once, on
    the transposed copies ``Zᵀ``, ``X_qᵀ`` (the faster layouts). Whole-matrix GEMMs, not blocks of rows: blocked
    products are as fast on an idle machine, but each multi-threaded BLAS call waits for its slowest thread, and
    on a shared machine the blocked products were 4–7× slower (measured).
    """

    def __init__(self, data, model, lg, lv):
        self.P, self.D = data.P, data.D
        self.full = model == "full"
        self.X = data.xq
        D, Dz = self.D, self.D + (1 if self.full else 0)
        WT = np.empty((Dz + D, self.P))                 # [Zᵀ; X_qᵀ] in one array: Zᵀ (Dz, P), X_qᵀ (D, P)
        WT[:D] = data.s.T
        if self.full:
            WT[D] = data.y2
        WT[Dz:] = data.xq.T
        self.ZT, self.XT = WT[:Dz], WT[Dz:]
        self.lam = np.full(self.D * self.D + (self.D if self.full else 0), lg)
        if self.full:
            self.lam[self.D * self.D:] = lv
        self.u = None           # Fθ of the last hess(θ), for the training residual

    def F(self, theta):
        return np.einsum("dp,dp->p", theta.reshape(-1, self.D).T @ self.ZT, self.XT)

    def FT(self, r):
        return ((self.ZT * r) @ self.X).ravel()

    def hess(self, theta):
        """``FᵀFθ/P``."""
        self.u = self.F(theta)
        return self.FT(self.u) / self.P

    def A(self, theta):
        return self.hess(theta) + self.lam * theta

    def gram(self, gam, ratio):
        """``K_r γ = FΛ_r⁻¹Fᵀγ/P`` (module docstring), without the matrix."""
        t = self.FT(gam)
        if self.full:
            t[self.D * self.D:] *= ratio
        return self.F(t) / self.P


class _Single:
    """``FᵀFθ/P`` in float32 for features ``z ⊗ x`` given as ``Zᵀ`` ((D+1) × P) and ``X_qᵀ`` (D × P), on copies scaled
    by powers of two (so that nothing overflows or underflows whatever the data's scale; the result is rescaled
    exactly)."""

    def __init__(self, ZT, XT):
        sz, sx = _pow2(ZT), _pow2(XT)
        self.ZT = (ZT * (1.0 / sz)).astype(np.float32)
        self.XT = (XT * (1.0 / sx)).astype(np.float32)
        self.scale = (sz * sx) ** 2 / ZT.shape[1]
        self.D = XT.shape[0]

    def __call__(self, theta):
        tn = _pow2(theta)
        Th = (theta * (1.0 / tn)).reshape(-1, self.D).astype(np.float32)
        u = np.einsum("dp,dp->p", Th.T @ self.ZT, self.XT)
        return ((self.ZT * u) @ self.XT.T).ravel().astype(np.float64) * (tn * self.scale)


@public(method=choice(("auto", "gram", "cg")), rtol=tolerance(), maxiter=integer(maximum=10**7))
def ridge(data, pb, lam, model="reduced", method="auto", rtol=1e-8, maxiter=10_000, N_test=None) -> RidgeSolution:
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
        ``"auto"``: Gram when ``P < M``, else CG — and the Gram route when CG does not reach its stopping rule
        (``λ`` below ``eps ‖H‖ / rtol`` on a rank-deficient ``H``, where the certificate is out of float64's reach)
        and the ``P × P`` Gram matrix fits in memory. ``"gram"`` needs ``P < M`` or ``λ > 0``;
        ``"cg"`` needs ``P >= M`` or ``λ > 0``.
    rtol : float
        Certified relative accuracy of ``θ`` on the CG route (``0 < rtol < 1``).
    maxiter : int
        CG iteration limit.
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: the training length ``N``). The model is
        trained at ``N`` and ``test``, ``test_idg`` and ``test_bound`` are exact at ``N_test``:
        ``E_g = ½[V − (2b/D) tr Γ + c(N_test)‖Γ‖_F² + c_v(N_test)|v|²]`` (:meth:`linattn.Problem.test_error`).

    Returns
    -------
    RidgeSolution

    Raises
    ------
    linattn.ConvergenceError
        If CG does not reach its stopping rule within ``maxiter`` iterations.

    Examples
    --------
    >>> import linattn, replica
    >>> pb = linattn.Problem(8, 16, 0.1)
    >>> sol = replica.ridge(pb.sample(200, rng=0), pb, 0.01)
    >>> bool(sol.train < sol.test)
    True
    """
    validate.problem_data(data, pb, model)
    lg, lv = block_lambdas(lam, model)
    P, D = data.P, data.D
    M = pb.n_params(model)
    # λ = 0: the min-norm least-squares solution depends on the distinct prompts only (module docstring)
    solve_data = _distinct(data, model) if lg == 0 else data
    Pd = solve_data.P
    auto = method == "auto"
    if auto:
        method = "gram" if Pd < M else "cg"
    if lg == 0 and ((method == "gram" and Pd >= M) or (method == "cg" and Pd < M)):
        check.fail("method", method, f"'{'cg' if Pd >= M else 'gram'}' at lam = 0 with {Pd} distinct prompts "
                                     f"(P = {P}), M = {M} (the min-norm solution needs the Gram route when the "
                                     "distinct prompts are fewer than M, and CG otherwise)")
    # flops of one BLAS call: the Gram matrix's Cholesky factor, or one CG product F θ (linattn.threads)
    with blas_threads(Pd**3 / 3.0 + 2.0 * Pd * Pd * D if method == "gram" else 2.0 * Pd * M):
        return _solve(data, pb, model, solve_data, method, lg, lv, rtol, maxiter, N_test, auto)


class _NotReached(ConvergenceError):
    """CG stopped at ``maxiter`` without reaching its stopping rule (not a breakdown)."""


def _solve(data, pb, model, solve_data, method, lg, lv, rtol, maxiter, N_test, auto):
    """:func:`ridge` after its checks."""
    P, D, Pd = data.P, data.D, solve_data.P
    M = pb.n_params(model)
    op = _Operator(data, model, lg, lv)
    sop = op if solve_data is data else _Operator(solve_data, model, lg, lv)
    if not np.any(data.yq):     # b = 0: θ* = 0 for every λ (also the min-norm solution at λ = 0), exactly
        theta, res, its, bound = np.zeros(op.lam.size), 0.0, 0, 0.0
        fitted = np.zeros(P)
    elif method == "gram":
        theta, res = _gram(solve_data, sop, lg, lv)
        its, bound, fitted = 0, 0.0, op.F(theta)
    else:   # [Zᵀ; X_qᵀ] (float64), its transform and float32 copy, the products' temporaries, the CG vectors
        check.memory(8.0 * (6 * M + 8 * P * (D + 1)), f"conjugate gradients (P = {P}, M = {M})", "P or D")
        try:
            theta, its, res, fitted = _cg(sop, sop.FT(solve_data.yq) / Pd, min(lg, lv), rtol, maxiter)
        except _NotReached:
            # the certificate |r|/λ <= rtol|θ| below float64's resolution of H (λ ≲ eps‖H‖/rtol, a rank-deficient H):
            # the direct route solves the same system exactly, when its P x P matrix fits
            if not (auto and lg > 0 and 8.0 * 3 * Pd * Pd <= check.memory_limit()):
                raise
            method = "gram"
        if method == "gram":
            theta, res = _gram(solve_data, sop, lg, lv)
            its, bound, fitted = 0, 0.0, op.F(theta)
        else:
            if sop is not op:
                fitted = op.F(theta)
            bound = res / min(lg, lv) if lg > 0 else (0.0 if its == 0 and res == 0.0 else np.inf)
    Gamma = theta[: D * D].reshape(D, D)
    v = theta[D * D:] if model == "full" else None
    resid = data.yq - fitted
    train = 0.5 * float(resid @ resid) / P + 0.5 * float(theta @ (op.lam * theta))
    pbt = pb if N_test is None or N_test == pb.N else dataclasses.replace(pb, N=N_test)   # the test prompts' problem
    test = pbt.test_error(Gamma, v)
    idg = pools.idg_error(pbt, data.pool, Gamma, v) if data.pool is not None else None
    odg = None
    if pb.task_covariance is None:
        cmax = max(pbt.feature_variance, pbt.feature_variance_v if model == "full" else 0.0)
        grad = np.linalg.norm(np.concatenate([pbt.feature_variance * Gamma.ravel()
                                              - pbt.teacher_strength * np.eye(D).ravel() / D]
                                             + ([pbt.feature_variance_v * v] if v is not None else [])))
    else:       # structured tasks: the metric Σ̃ ⊗ I of the law N(0, S) (linattn._task_covariance)
        odg = structured_error(pbt, Gamma, v, "isotropic")
        St, B, _ = moment_matrices(pbt, model, gaussian_moments(pbt))
        cmax = float(np.linalg.eigvalsh(St)[-1])
        Theta = np.vstack([Gamma, v[None, :]]) if v is not None else Gamma
        grad = float(np.linalg.norm(St @ Theta - B))
    with np.errstate(over="ignore"):     # a bound beyond float64 (λ ~ 1e-300) is no certificate: inf
        test_bound = float(grad * np.float64(bound) + 0.5 * cmax * np.float64(bound) ** 2)
    norm = float(np.linalg.norm(theta))
    return RidgeSolution(Gamma=Gamma, v=v, train=float(train), test=float(test),
                         test_idg=None if idg is None else float(idg), test_odg=odg, lam=(lg, lv), method=method,
                         iterations=int(its), residual=res, error_bound=float(bound), test_bound=test_bound,
                         certified=bool(np.isfinite(bound) and (res <= rtol if method == "gram"
                                                                else bound <= rtol * max(norm, 1e-300))),
                         N_test=N_test)


def _gram(data, op, lg, lv):
    """Push-through solve ``θ = Λ_r⁻¹Fᵀγ``, ``(K_r + λ_Γ I)γ = y/P`` (module docstring); returns ``θ`` and
    the relative residual of the ``P × P`` system."""
    P = data.P
    check.memory(8.0 * 3 * P * P, f"the {P} x {P} Gram matrix", "P")
    ratio = 1.0 if lg == 0 else lg / lv
    rhs = data.yq / P
    Sy = op.ZT.T.copy()         # (P, D + 1) row-major
    if op.full:                 # S Sᵀ + ratio y2 y2ᵀ as one product of (P, D + 1) factors
        Sy[:, -1] *= np.sqrt(ratio)
    out = _gram_mixed(op, Sy, lg, ratio, rhs) if lg > 0 else None
    if out is None:
        out = _gram_double(data, Sy, lg, rhs)
    theta = op.FT(out[0])
    if op.full:
        theta[op.D * op.D:] *= ratio
    return theta, out[1]


def _gram_mixed(op, Sy, lg, ratio, rhs):
    """``(K_r + λ_Γ I)γ = rhs`` by a float32 Cholesky factor and float64 refinement (module docstring); ``None``
    when the factor fails or the refinement stagnates (the caller then factors in float64)."""
    P = op.P
    sz, sx = _pow2(Sy), _pow2(op.X)
    Zs = (Sy / sz).astype(np.float32)
    Xs = (op.X / sx).astype(np.float32)
    scale = (sz * sx) ** 2 / P                  # K_r = scale · (Zs Zsᵀ) ∘ (Xs Xsᵀ)
    K = blas.ssyrk(1.0, Zs.T, trans=1, lower=1)                # lower triangles; P x P, Fortran order
    K *= blas.ssyrk(1.0, Xs.T, trans=1, lower=1)
    if not lg / scale < 1e30:       # the shift beyond float32's range (λ ≫ ‖K‖): the float64 factor
        return None
    K[np.diag_indices(P)] += np.float32(lg / scale)
    factor, info = lapack.spotrf(K, lower=1, clean=0, overwrite_a=1)
    if info != 0:
        return None

    def solve(r):
        y = blas.strsv(factor, (r / scale).astype(np.float32), lower=1)
        return blas.strsv(factor, y, lower=1, trans=1, overwrite_x=1).astype(np.float64)

    knorm = float(np.max(np.einsum("pd,pd->p", op.X, op.X))
                  * np.linalg.eigvalsh(Sy.T @ Sy)[-1] / P) + lg       # ‖K_r + λ_Γ I‖ (Schur)
    bnorm = float(np.linalg.norm(rhs))
    gam = solve(rhs)
    best = (np.inf, None)
    for _ in range(30):     # refine to round-off: until a step no longer halves the float64 residual
        r = rhs - op.gram(gam, ratio) - lg * gam
        rn = float(np.linalg.norm(r))
        if not rn <= 0.5 * best[0]:
            break
        best = (rn, gam.copy())
        gam += solve(r)
    rn, gam = best
    if rn <= np.sqrt(P) * _EPS * (knorm * float(np.linalg.norm(gam)) + bnorm):
        return gam, rn / bnorm
    return None


def _gram_double(data, Sy, lg, rhs):
    """The float64 Gram solve: Cholesky for ``λ_Γ > 0`` (the eigendecomposition when the shift is below the
    round-off of ``K``), the pseudo-inverse (eigendecomposition) at ``λ = 0``.

    Solved as ``(K/c + λ_Γ/c) γ' = rhs``, ``γ = γ'/c``, with ``c = (s_z s_x)²/P`` (``s_z``, ``s_x`` the powers of two
    of the factors' largest entries; exact scalings): ``K`` is never formed beyond float64 (prompts of size ~1e150)."""
    P = data.P
    sz, sx = _pow2(Sy), _pow2(data.xq)
    K = (Sy / sz) @ (Sy / sz).T
    K *= (data.xq / sx) @ (data.xq / sx).T
    shift = lg * P / sz / sz / sx / sx                   # λ_Γ / c, divided in steps (no overflow of c)
    b = rhs
    if lg > 0:
        K[np.diag_indices(P)] += shift
        try:
            factor = linalg.cho_factor(K, lower=True, check_finite=False, overwrite_a=False)
            gam = linalg.cho_solve(factor, b, check_finite=False)
        except np.linalg.LinAlgError:
            # λ_Γ/c below K's round-off: through K's eigenvalues, its numerical null space (below 1e-12 of the
            # largest, where Fᵀ vanishes to round-off) dropped as in the min-norm limit
            g, U = np.linalg.eigh(K)
            keep = g > 1e-12 * g[-1]
            U = U[:, keep]
            gam = U @ ((U.T @ b) / (g[keep] + shift))
            b = U @ (U.T @ b)
            K[np.diag_indices(P)] -= shift
            K = K + shift * (U @ U.T)
        res = float(np.linalg.norm(K @ gam - b) / np.linalg.norm(b))
    else:   # min-norm: pseudo-inverse of K (exact zeros below 1e-12 of the largest eigenvalue)
        g, U = np.linalg.eigh(K)
        keep = g > 1e-12 * g[-1]
        gam = U[:, keep] @ ((U[:, keep].T @ b) / g[keep])
        res = float(np.linalg.norm(K @ gam - U[:, keep] @ (U[:, keep].T @ b)) / np.linalg.norm(b))
    return gam * P / sz / sz / sx / sx, res


def _distinct(data, model):
    r"""The distinct prompts of ``data``, weighted: the min-norm least-squares problem of the ``λ = 0`` limit.

    A prompt repeated ``n_k`` times (identical ``(s, x_q[, y2])``, labels ``y_{k,1} … y_{k,n_k}``) enters the training
    energy as ``Σ_j (y_{k,j} − h_kᵀθ)² = n_k (ȳ_k − h_kᵀθ)² + const``, i.e. as the one prompt
    ``(√n_k z_k, x_k, √n_k ȳ_k)`` (``h = z ⊗ x_q`` is linear in ``z = [s; y2]``). The set of minimisers — hence the
    min-norm one — is unchanged, but the distinct prompts' features are fewer: with fewer than ``M`` distinct
    prompts the min-norm solution comes from the pseudo-inverse of their ``P' × P'`` Gram matrix, exactly, whatever
    ``P`` is. Returns ``data`` itself when every prompt is distinct.
    """
    cols = [data.s, data.xq] + ([data.y2[:, None]] if model == "full" else [])
    key = np.concatenate(cols, axis=1) + 0.0          # + 0.0: -0.0 and 0.0 are one value
    _, first, inverse, counts = np.unique(key, axis=0, return_index=True, return_inverse=True, return_counts=True)
    if counts.size == data.P:
        return data
    inverse = inverse.ravel()
    root = np.sqrt(counts.astype(np.float64))
    ybar = np.bincount(inverse, weights=data.yq, minlength=counts.size) / counts
    from linattn import Prompts

    return Prompts(s=data.s[first] * root[:, None], xq=data.xq[first], yq=ybar * root,
                   y2=None if model != "full" else data.y2[first] * root)


class _Preconditioner:
    r"""Kronecker-factored inverse of the dataset's Hessian (the preconditioner of :func:`_cg`), as a change of
    variables.

    The features are ``h = z ⊗ x_q`` with ``z = [s; y2]`` (``z = s`` for the reduced model), and ``z`` and ``x_q``
    are independent, so ``E H = E[z zᵀ] ⊗ E[x xᵀ]``. The dataset's own factors ``A_z = ZᵀZ/P`` and
    ``A_x = X_qᵀX_q/P`` carry its anisotropy — a pool of ``K < D`` tasks makes ``A_z`` nearly singular off the
    pool's span, and makes the ``v`` feature ``y2 x_q`` nearly collinear with ``Γ`` features along the pool (so
    the ``Γ``–``v`` cross block must be kept). With ``Λ = Λ̃ ⊗ I``:
    ``(A_z ⊗ A_x + Λ)⁻¹ = Λ̃^{-1/2} (B ⊗ A_x + I)⁻¹ Λ̃^{-1/2}``, ``B = Λ̃^{-1/2} A_z Λ̃^{-1/2} = U_b diag(e_b) U_bᵀ``,
    ``A_x = U_x diag(e_x) U_xᵀ``. CG runs on ``ψ`` with ``θ = Qψ``, ``Q = Λ̃^{-1/2}U_b ⊗ U_x``: then
    ``QᵀAQ = H' + I`` (``H'`` the Hessian of the transformed features ``z' = U_bᵀΛ̃^{-1/2}z``, ``x' = U_xᵀx``) and the
    preconditioner is the diagonal ``1/(e_b ⊗ e_x + 1)`` — the same iterates as preconditioned CG on ``θ``, with no
    ``D³`` products per iteration. At ``λ = 0``: ``Λ̃ = I`` and ``QᵀAQ = H'``. Any SPD preconditioner leaves the
    solution and the stopping rule unchanged.
    """

    def __init__(self, op):
        P = op.P
        lam_rows = op.lam[:: op.D]                       # Λ̃: one decay per row of Θ = [Γ; vᵀ]
        ridge = bool(lam_rows[0] > 0)                   # λ = 0 (min-norm, P >= M): (A_z ⊗ A_x)⁻¹
        self.scale = 1.0 / np.sqrt(lam_rows) if ridge else np.ones(lam_rows.size)
        B = (op.ZT @ op.ZT.T / P) * np.outer(self.scale, self.scale)
        eb, self.Ub = np.linalg.eigh(B)
        ex, self.Ux = np.linalg.eigh(op.XT @ op.XT.T / P)
        if ridge:
            prod = np.outer(np.maximum(eb, 0.0), np.maximum(ex, 0.0)).ravel()
            self.inv = 1.0 / (prod + 1.0)
        else:   # pseudo-inverse on R = span(z) ⊗ span(x_q) ⊇ range(H): the iterates stay in R (module docstring)
            eb = np.where(eb > 64 * _EPS * eb[-1] * eb.size, eb, 0.0)
            ex = np.where(ex > 64 * _EPS * ex[-1] * ex.size, ex, 0.0)
            prod = np.outer(eb, ex).ravel()
            self.inv = np.divide(1.0, prod, out=np.zeros_like(prod), where=prod > 0)
        self.shift = 1.0 if ridge else 0.0                # QᵀΛQ = shift · I
        self.shape = (lam_rows.size, op.D)
        self.Wz = self.Ub.T * self.scale                   # z' = Wz z
        w = self.scale**2                                  # ‖Qψ‖² = Σ_i w_i |(U_bΨ)_i|²; ‖Q⁻ᵀr'‖²: weights 1/w
        self.odd = np.nonzero(w != w[0])[0]                # rows whose weight differs from row 0's (the v row)
        self.w = w

    def Q(self, psi):
        """``θ = Qψ``."""
        return (self.scale[:, None] * (self.Ub @ psi.reshape(self.shape) @ self.Ux.T)).ravel()

    def Qt(self, r):
        """``r' = Qᵀr``."""
        return (self.Wz @ r.reshape(self.shape) @ self.Ux).ravel()

    def _norm(self, Y, w):
        """``sqrt(Σ_i w_i |(U_b Y)_i|²)`` with at most one row weight differing from ``w_0`` (``U_b`` orthogonal)."""
        Y = Y.reshape(self.shape)
        out = w[0] * float(np.sum(Y * Y))
        for i in self.odd:
            row = self.Ub[i] @ Y
            out += (w[i] - w[0]) * float(row @ row)
        return float(np.sqrt(max(out, 0.0)))

    def norm_theta(self, psi):
        """``‖Qψ‖`` without forming ``Qψ``."""
        return self._norm(psi, self.w)

    def norm_residual(self, rp):
        """``‖Q⁻ᵀr'‖`` (the residual in ``θ``'s coordinates) without forming it."""
        return self._norm(rp, 1.0 / self.w)


def _cg(op, b, lam_lo, rtol, maxiter):
    """Preconditioned CG on ``Aθ = b`` (in the coordinates ``ψ`` of :class:`_Preconditioner`) with float32 products,
    float64 reliable updates and the certified stopping rule of the module docstring
    (:func:`linattn._numerics.cg.certified_cg`); returns ``θ``, the iterations, the true residual and ``Fθ``."""
    pre = _Preconditioner(op)
    single = _Single(pre.Wz @ op.ZT, pre.Ux.T @ op.XT)     # the transformed features z', x' in float32
    bnorm = float(np.linalg.norm(b))
    if bnorm == 0.0:                    # Aθ = 0: θ* = 0 (the min-norm solution at λ = 0), exactly
        return np.zeros_like(b), 0, 0.0, np.zeros(op.P)
    # CG is linear in b: where Qᵀb is tiny (a huge weight decay: Qᵀb ~ b/√λ) it runs on b/s, s a power of two (exact:
    # the same iterates, scaled) that brings Qᵀb towards 1 — so that the products pᵀAp ~ |Qᵀb|² do not underflow —
    # without taking b/s beyond 2^500 (|b/s|² stays finite)
    s = 1.0
    qb = _pow2(pre.Qt(b))
    if qb < 2.0**-332:
        s = max(qb, _pow2(b) * 2.0**-500)
        b = b * (1.0 / s)
        bnorm = float(np.linalg.norm(b))

    def true_residual(psi):
        theta = pre.Q(psi)
        res = b - op.A(theta)           # from the data, in θ's coordinates (op.A keeps Fθ in op.u)
        return pre.Qt(res), float(np.linalg.norm(res)), float(np.linalg.norm(theta))

    try:
        sol = certified_cg(lambda p: pre.Qt(op.hess(pre.Q(p))) + pre.shift * p, pre.Qt(b), lambda r: pre.inv * r,
                           lam_lo, rtol, maxiter, true_residual=true_residual,
                           fast_apply=lambda p: single(p) + pre.shift * p,
                           x_norm=pre.norm_theta, r_norm=pre.norm_residual, b_norm=bnorm, name="ridge")
    except NotCertified as exc:
        raise _NotReached(f"{exc}; raise maxiter, or use replica._gibbs (eigendecomposition)") from None
    return pre.Q(sol.x) * s, sol.iterations, sol.residual * s, op.u * s
