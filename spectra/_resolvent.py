r"""Block resolvent of the random-scale law, and the spectral transforms of the data vector.

This module holds the one implementation of the Stieltjes-transform fixed point used by the
whole library (densities, CDFs, the replica saddle point, the averaged learning curves).

Deterministic equivalent (conventions §3.1, extended to parameter blocks)
--------------------------------------------------------------------
In ``H/c`` units, with the features of block ``i`` (dimension ``D_i``) having per-prompt scale
``ξ_i`` and ``q_i = D_i / P``, the resolvent ``(H/c − z)^{-1}`` is equivalent to
``diag(r_1 I_{D_1}, …)`` with

.. math:: r_i(z) = \frac{1}{−z + E[ξ_i ω]},\qquad ω = \frac{1}{1 + Σ_j q_j ξ_j r_j(z)},

and the normalised Stieltjes transform is ``m(z) = Σ_i D_i r_i(z) / M``. For one block this is
``m = 1/(−z + E[ξ/(1 + q ξ m)])`` (conventions §3.1); ``ξ ≡ 1`` gives Marchenko–Pastur. The block
structure is exact in expectation for the full model: the ensemble is invariant under
``(s, w) → −(s, w)``, which flips the ``Γ`` features and not the ``v`` features, so the
off-diagonal block of ``E[(H − z)^{-1}]`` vanishes; within a block it is a multiple of the
identity by the ``O(D) × O(D)`` invariance ``s → O_1 s``, ``x_q → O_2 x_q``.

Transforms of the data vector (``docs/replica.md``)
------------------------------------------------------------------
With ``b = (1/P) Σ_μ y_μ h_μ/√c`` and ``θ̂_0 = vec(I)/√D``, the cavity/replica theory gives, at
``λ' = −z``,

.. math:: ρ(z) = E[θ̂_0ᵀ (H/c − z)^{-1} b] = \frac{E[f y ω]}{−z + E[f² ω]},\qquad
          T(z) = E[bᵀ (H/c − z)^{-1} b] = E[y² (1 − ω)] + ρ(z) E[f y ω],

whose imaginary parts on the real axis are the densities of the spectral measures ``μ_0b`` and
``μ_bb`` that drive the learning curves (``dynamics/_averaged.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from linattn import _check as check
from linattn._arguments import array, instance, integer, nonnegative, positive, public, tolerance
from linattn._errors import ConvergenceError
from linattn._results import short_repr

from . import _resolvent_kernels as _kernels
from ._prompt_law import PromptLaw

TOL = 1e-11
MAXIT = 100
#: smallest ``|z|`` solved when ``P <= M``: ``z = 0`` is then the pole of the zero atom (``m ≈ −(1 − P/M)/z``) or,
#: at ``P = M``, the edge where ``m`` diverges like ``z^{-1/2}``; the fixed point is resolved down to this distance
#: (checked against the closed forms near the pole and the edge)
Z_MIN = 1e-20
#: ``λ'`` beyond which :func:`ridge_resolvent` starts Newton's method from the large-ridge limit ``q a = L + E[ξ]/ε``
#: (exact to ``1/λ'`` relative, below float64's resolution there) instead of the complex-plane solution, whose
#: homotopy starts at ``Im z = 2(1 + λ')`` and overflows near float64's top
LARGE_RIDGE = 1e154


def _cmatmul(a, b):
    """``a @ b`` for complex ``a`` (…, K) and real ``b`` (K,) or (K, m), as one real product on
    the interleaved storage of ``a`` (numpy's mixed complex-real product is ~100x slower here).

    Parameters
    ----------
    a : ndarray (..., K)
        Complex (or real: then a plain product).
    b : ndarray (K,) or (K, m)
        Real.

    Returns
    -------
    ndarray
        ``a @ b``.
    """
    if not np.iscomplexobj(a):
        return a @ b
    a = np.ascontiguousarray(a, dtype=np.complex128)
    pairs = np.moveaxis(a.view(np.float64).reshape(a.shape + (2,)), -1, -2)  # (…, 2, K): re, im rows
    x = pairs @ b
    return x[..., 0] + 1j * x[..., 1] if b.ndim == 1 else x[..., 0, :] + 1j * x[..., 1, :]


@public(b=array())
def cmatmul(a, b):
    """``a @ b`` for a complex ``a`` (…, K) and a real ``b`` (K,) or (K, m), fast (the validated entry point of
    the product the fixed-point solvers use internally).

    Parameters
    ----------
    a : array_like (..., K)
        Complex or real, finite.
    b : array_like (K,) or (K, m)
        Real, finite.

    Returns
    -------
    ndarray
        ``a @ b``.

    Raises
    ------
    ValueError
        Arrays of the wrong kind or shape, or a product that overflows float64 (the larger of ``a`` and ``b`` is
        named).
    """
    a = np.asarray(a)
    if a.dtype.kind not in "biufc" or a.ndim < 1 or not np.all(np.isfinite(a)):
        check.fail("a", f"<array with shape {a.shape}, dtype {a.dtype}>", "a finite numeric array (..., K)")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[-1]:
        check.fail("b", f"<array with shape {b.shape}>", f"a real array ({a.shape[-1]},) or ({a.shape[-1]}, m)")
    with np.errstate(over="ignore", invalid="ignore"):
        out = _cmatmul(a, b)
    check.finite_result(out, {"a": np.abs(a), "b": b}, "a @ b")
    return out


@dataclass(frozen=True, eq=False)
class Resolvent:
    """Block resolvent ``r_i(z)`` at many points.

    Attributes
    ----------
    z : ndarray (n,) complex
    r, dr : ndarray (n, B) complex
        ``r_i(z)`` and ``dr_i/dz``.
    m, dm : ndarray (n,) complex
        Normalised Stieltjes transform ``m(z) = Σ_i D_i r_i / M`` and its derivative.
    omega : ndarray (n, K) complex
        ``ω_k(z) = 1/(1 + Σ_j q_j ξ_jk r_j)`` at every node.
    converged : bool
    iterations : ndarray (n,) int
        Newton iterations (summed over the homotopy levels).
    residual : ndarray (n,)
        ``max_i |r_i(−z + E[ξ_i ω]) − 1|``.
    """

    __repr__ = short_repr

    z: np.ndarray
    r: np.ndarray
    dr: np.ndarray
    m: np.ndarray
    dm: np.ndarray
    omega: np.ndarray
    converged: bool
    iterations: np.ndarray
    residual: np.ndarray


#: the rule of a ``law`` argument: the discrete law of :func:`spectra.prompt_law`
LAW = instance(PromptLaw, "a spectra.PromptLaw (see spectra.prompt_law)")
#: the rules of the solvers' ``tol`` and ``maxit`` (the kernels count iterations in int32)
SOLVER = dict(tol=tolerance(), maxit=integer(maximum=10**6))


def away_from_zero(name, z, P, law):
    """``z`` as a complex array, refused (naming ``name``) closer than :data:`Z_MIN` to 0 when ``P <= M``."""
    zz = check.finite_array(name, z, allow_complex=True)
    if P <= law.M and np.any(np.abs(zz) < Z_MIN):
        bad = zz.ravel()[np.abs(zz.ravel()) < Z_MIN][0]
        check.fail(name, complex(bad), f"complex numbers with |{name}| >= {Z_MIN:g} when P <= M = {law.M} (P = {P:g}): "
                   "0 is the pole of the zero atom (or, at P = M, the edge where m diverges), resolved down to that "
                   "distance")
    return zz


@public(P=positive(), law=LAW, **SOLVER)
def block_resolvent(z, P, law: PromptLaw, tol: float = TOL, maxit: int = MAXIT) -> Resolvent:
    """Solve the block fixed point at every ``z`` (module docstring).

    Parameters
    ----------
    z : complex or array_like of complex
        Points; ``Im z >= 0`` is solved by continuation from the upper half plane (the physical
        branch), ``Im z < 0`` by conjugate symmetry ``r(z̄) = conj r(z)``. Real ``z`` means the
        limit ``z + i0``. For ``P <= M``, ``|z| >= Z_MIN = 1e-20`` (``z = 0`` is the pole of the zero atom, or the
        divergent edge at ``P = M``).
    P : float
        Number of prompts (``P > 0``; ``q_i = D_i/P``).
    law : PromptLaw
    tol : float
        Residual tolerance of Newton's method.
    maxit : int
        Newton iterations per homotopy level.

    Raises
    ------
    ConvergenceError
        If a point does not converge or ends on the wrong branch.

    Returns
    -------
    Resolvent
    """
    return _block_resolvent(away_from_zero("z", z, P, law), P, law, tol, maxit)


def _block_resolvent(z, P, law, tol=TOL, maxit=MAXIT):
    """:func:`block_resolvent` of checked arguments (``z`` a complex array, away from 0 when ``P <= M``)."""
    zz = np.asarray(z, dtype=np.complex128)
    shape = zz.shape
    zz = zz.ravel()
    lower = zz.imag < 0
    x = np.ascontiguousarray(zz.real)
    eta = np.ascontiguousarray(np.abs(zz.imag))
    n, B = zz.size, law.n_blocks
    r = np.empty((n, B), np.complex128)
    dr = np.empty((n, B), np.complex128)
    status = np.empty(n, np.int64)
    residual = np.empty(n)
    iterations = np.empty(n, np.int64)
    q = law._ratios(P)
    # writable C-ordered copies: one compiled signature of the kernels (a law's read-only xi compiled a second one)
    w, xi = (np.array(a, dtype=float, order="C") for a in (law.weights, law.xi))
    _kernels.resolvent_many(x, eta, w, xi, q, float(tol), int(maxit), r, dr, status, residual, iterations)
    bad = np.flatnonzero(status != _kernels.STATUS_OK)
    if bad.size:
        j = bad[0]
        why = "did not converge" if status[j] == _kernels.STATUS_NO_CONVERGENCE else "left the physical branch"
        raise ConvergenceError(
            f"block resolvent {why} at z = {zz[j]!r} (P = {P}, law = {law.law!r}, model = {law.model!r}): "
            f"residual {residual[j]:.3g} > tol {tol:.1g} after {iterations[j]} Newton iterations "
            f"({bad.size} of {n} points failed)")
    r[lower] = np.conj(r[lower])
    dr[lower] = np.conj(dr[lower])
    dims = np.asarray(law.block_dims, float)
    m = _cmatmul(r, dims) / law.M
    dm = _cmatmul(dr, dims) / law.M
    if not (np.all(np.isfinite(m)) and np.all(np.isfinite(dm))):      # e.g. a singular Jacobian exactly at an edge
        j = int(np.flatnonzero(~(np.isfinite(m) & np.isfinite(dm)))[0])
        raise ConvergenceError(f"block resolvent is not finite at z = {zz[j]!r} (P = {P}, law = {law.law!r}, "
                               f"model = {law.model!r}): m = {m[j]!r}, dm/dz = {dm[j]!r}")
    omega = 1.0 / (1.0 + _cmatmul(r * q, law.xi.T))
    return Resolvent(z=zz.reshape(shape), r=r, dr=dr, m=m.reshape(shape), dm=dm.reshape(shape), omega=omega,
                     converged=True, iterations=iterations, residual=residual)


@dataclass(frozen=True, eq=False)
class DataTransforms:
    """Transforms of the data vector at many ``z`` (module docstring).

    ``rho(z) = E[θ̂_0ᵀ(H/c − z)^{-1} b]`` and ``T(z) = E[bᵀ(H/c − z)^{-1} b]``; ``resolvent`` holds
    the block resolvent they were computed from.

    Attributes
    ----------
    z : ndarray
        Spectral parameters.
    rho, T : ndarray
        ``ρ(z)`` and ``T(z)`` at each ``z``.
    resolvent : Resolvent
        The block resolvent they were computed from.
    """

    __repr__ = short_repr

    z: np.ndarray
    rho: np.ndarray
    T: np.ndarray
    resolvent: Resolvent


@public(L=array(allow_complex=True), omega=array(allow_complex=True), law=LAW)
def teacher_overlap(L, omega, law: PromptLaw):
    r"""``ρ = E[f y ω] / (L + E[f² ω])`` — overlap of the ridge solution with the ICL direction.

    ``L = λ' = −z`` with the physical weights ``ω``; in the scaled parametrisation of
    :class:`RidgeResolvent` the same formula holds with ``(L, ω̃)`` (``ε`` cancels).
    ``omega`` has the node axis last.

    Parameters
    ----------
    L : float
        ``λ' >= 0`` (or the scaled ``L`` of :class:`RidgeResolvent`).
    omega : array_like (..., K)
        Node weights ``ω`` (complex allowed).
    law : PromptLaw

    Returns
    -------
    ndarray (...)
    """
    if np.any(L.real < 0) and not np.any(L.imag):
        check.fail("L", L, "a number >= 0 (or complex)")
    if not np.any(L.imag) and not np.any(omega.imag):   # real axis: stay real
        L, omega = L.real, omega.real
    if omega.shape[-1:] != law.weights.shape:
        check.fail("omega", f"<array with shape {omega.shape}>",
                   f"an array whose last axis has {law.weights.size} nodes")
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        rho = _teacher_overlap(L, omega, law)
    if np.any(L + _cmatmul(omega, law.weights * law.f2) == 0):      # 0/0 or x/0: no overlap, not NaN or inf
        check.fail("omega", "<node weights with L + E[f² ω] = 0>", "node weights with L + E[f² ω] != 0 (the "
                   "denominator of the overlap)")
    return check.finite_result(rho, {"omega": omega, "L": L}, "the overlap")


def _teacher_overlap(L, omega, law):
    """:func:`teacher_overlap` without the checks, for any ``L = −z`` (:func:`data_transforms`: ``z`` on the real
    axis, ``z + i0``, is a point of the spectral measures)."""
    w = law.weights
    return _cmatmul(omega, w * law.fy) / (L + _cmatmul(omega, w * law.f2))


@public(law=LAW, P=positive())
def block_overlaps(nu1, nu2, om1, om2, rho1, rho2, law: PromptLaw, P):
    r"""Block overlaps ``S_i = θ_1ᵀ P_i^⊥ θ_2`` of two ridge solutions on the same data.

    ``θ_a = (H/c − z_a)^{-1} b``; ``P_i^⊥`` projects on block ``i`` orthogonally to the ICL
    direction. The cavity/replica theory of two coupled systems (``docs/replica.md`` §4) gives
    the linear equations

    .. math:: q_i ν_{1i} ν_{2i} S_i = E\big[ξ_i \big((y − fρ_1)(y − fρ_2) + Σ_j ξ_j S_j\big) ω_1 ω_2\big],

    with ``ν_{ai} = 1/(q_i r_i(z_a))``. At ``z_1 = z_2 = −λ'`` this is the replica saddle-point
    equation of the norms ``σ_i²``; it holds unchanged in the scaled variables ``(a, ω̃)``.

    All pairs: ``nu1`` (n1, B), ``om1`` (n1, K), ``rho1`` (n1,) and likewise for system 2;
    returns ``S`` of shape (n1, n2, B). The node sums are ``ω_1 diag(X) ω_2ᵀ`` products.

    Parameters
    ----------
    nu1, nu2 : array_like (n1, B), (n2, B)
    om1, om2 : array_like (n1, K), (n2, K)
    rho1, rho2 : array_like (n1,), (n2,)
    law : PromptLaw
    P : float
        Number of prompts ``> 0``.

    Returns
    -------
    ndarray (n1, n2, B)
    """
    B, K = law.n_blocks, law.weights.size
    nu1 = check.finite_array("nu1", nu1, shape=(None, B), allow_complex=True, min_ndim=2)
    nu2 = check.finite_array("nu2", nu2, shape=(None, B), allow_complex=True, min_ndim=2)
    om1 = check.finite_array("om1", om1, shape=(nu1.shape[0], K), allow_complex=True, min_ndim=2)
    om2 = check.finite_array("om2", om2, shape=(nu2.shape[0], K), allow_complex=True, min_ndim=2)
    rho1 = check.finite_array("rho1", rho1, shape=(nu1.shape[0],), allow_complex=True, min_ndim=1)
    rho2 = check.finite_array("rho2", rho2, shape=(nu2.shape[0],), allow_complex=True, min_ndim=1)
    return _block_overlaps(nu1, nu2, om1, om2, rho1, rho2, law, P)


def _block_overlaps(nu1, nu2, om1, om2, rho1, rho2, law, P, guard=True):
    """:func:`block_overlaps` of checked arrays (``nu`` (n, B), ``om`` (n, K), ``rho`` (n,), real or complex).
    ``guard=False``: the caller tests the finiteness of what it builds from the result and calls again with the
    guard to name the culprit (a non-finite system gives a non-finite solution or a ``LinAlgError``)."""
    w, xi, q = law.weights, law.xi, law._ratios(P)
    B = law.n_blocks
    cplx = any(np.any(a.imag != 0) for a in (nu1, nu2, om1, om2, rho1, rho2))
    dtype = np.complex128 if cplx else np.float64
    if not cplx:
        nu1, nu2, rho1, rho2 = nu1.real, nu2.real, rho1.real, rho2.real
    om1 = np.ascontiguousarray(om1 if cplx else om1.real, dtype=dtype)
    om2T = np.ascontiguousarray((om2 if cplx else om2.real).T, dtype=dtype)
    wx = w[:, None] * xi

    def node_sum(x):  # E[x ω1 ω2] for every pair: (n1, n2)
        return om1 @ np.ascontiguousarray(x[:, None] * om2T)

    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):     # overflow: refused below, by name
        Y2 = np.stack([node_sum(law.y2 * wx[:, i]) for i in range(B)], -1)
        FY = np.stack([node_sum(law.fy * wx[:, i]) for i in range(B)], -1)
        F2 = np.stack([node_sum(law.f2 * wx[:, i]) for i in range(B)], -1)
        r1, r2 = rho1[:, None, None], rho2[None, :, None]
        rhs = Y2 - (r1 + r2) * FY + r1 * r2 * F2                      # E[ξ_i Y12 ω1 ω2]
        G = np.stack([np.stack([node_sum(wx[:, i] * xi[:, j]) for j in range(B)], -1) for i in range(B)], -2)
        # row i is divided by max(1, |ν_1i ν_2i|) (the solution is unchanged): at a large ridge (ν ~ λ') the product
        # q ν_1 ν_2 would overflow, and the scaled rows give S → 0, the limit, instead of inf/inf
        half = np.exp(-0.5 * np.maximum(0.0, np.log(np.abs(nu1))[:, None, :] + np.log(np.abs(nu2))[None, :, :]))
        A = -G * (half * half)[..., None]
        idx = np.arange(B)
        A[..., idx, idx] += q * (nu1[:, None, :] * half) * (nu2[None, :, :] * half)
        b = (rhs * half * half)[..., None]
    culprits = {"om1": om1, "om2": om2, "nu1": nu1, "nu2": nu2, "rho1": rho1, "rho2": rho2}
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            S = np.linalg.solve(A, b)[..., 0]
    except np.linalg.LinAlgError:        # e.g. ν = 0 and ω = 0: q ν₁ν₂ S − G S = rhs has no unique solution
        check.finite_results((A, b), culprits, "the block overlaps' linear system")
        check.fail("nu1", "<a pair (nu1, nu2, om1, om2) whose linear system is singular>",
                   "values for which q_i nu1_i nu2_i S_i - E[xi_i xi_j omega1 omega2] S_j = rhs_i has one solution")
    if guard and not check.all_finite(A, b, S):     # one test of the system and its solution; the culprit named
        check.finite_results((A, b), culprits, "the block overlaps' linear system")
        check.finite_result(S, culprits, "the block overlaps")
    return S


@public(P=positive(), law=LAW)
def data_transforms(z, P, law: PromptLaw) -> DataTransforms:
    """``ρ(z)`` and ``T(z)`` of the data vector ``b`` (module docstring, ``docs/replica.md``).

    Parameters
    ----------
    z : complex or array_like
    P : float
        Number of prompts ``> 0``.
    law : PromptLaw

    Returns
    -------
    DataTransforms
    """
    return _data_transforms(away_from_zero("z", z, P, law), P, law)


def _data_transforms(z, P, law):
    """:func:`data_transforms` of checked arguments (``z`` as in :func:`_block_resolvent`)."""
    res = _block_resolvent(z, P, law)
    zz = np.asarray(res.z).ravel()
    om = res.omega
    rho = _teacher_overlap(-zz, om, law)
    T = _cmatmul(1.0 - om, law.weights * law.y2) + rho * _cmatmul(om, law.weights * law.fy)
    shape = np.shape(res.z)
    return DataTransforms(z=res.z, rho=rho.reshape(shape), T=T.reshape(shape), resolvent=res)


@public(P=positive(), law=LAW)
def pair_overlaps(z1, z2, P, law: PromptLaw):
    """``E[θ(z_1)·θ(z_2)]`` split as ``(ρ_1 ρ_2, S)`` with ``S`` the block overlaps (n, B), for
    ``θ(z) = (H/c − z)^{-1} b``; ``z1``, ``z2`` arrays of equal shape (n,), paired elementwise.

    Parameters
    ----------
    z1, z2 : array_like (n,) complex
    P : float
    law : PromptLaw

    Returns
    -------
    rho_product : ndarray (n,)
        ``ρ(z_1) ρ(z_2)``.
    S : ndarray (n, B)
        Block overlaps.
    """
    z1, z2 = away_from_zero("z1", z1, P, law), away_from_zero("z2", z2, P, law)
    if z1.shape != z2.shape:
        check.fail("z2", f"<array with shape {z2.shape}>", f"an array of the shape of z1, {z1.shape}")
    d1, d2 = _data_transforms(z1, P, law), _data_transforms(z2, P, law)
    q = law._ratios(P)
    nu1, nu2 = 1.0 / (q * d1.resolvent.r), 1.0 / (q * d2.resolvent.r)
    S = _block_overlaps(nu1, nu2, d1.resolvent.omega, d2.resolvent.omega, np.ravel(d1.rho), np.ravel(d2.rho), law, P)
    n = np.arange(S.shape[0])
    return np.ravel(d1.rho) * np.ravel(d2.rho), S[n, n]


# ----------------------------------------------------------------------------- real axis, z = −λ' <= 0
@dataclass(frozen=True, eq=False)
class RidgeResolvent:
    r"""Solution of the fixed point at ``z = −λ'`` in a parametrisation regular at ``λ' = 0``.

    With ``ν_i = 1/(q_i r_i)`` the fixed point reads ``q_i ν_i = λ' + E[ξ_i/(1 + Σ_j ξ_j/ν_j)]``.
    Writing ``ν_i = ε a_i`` it becomes

    .. math:: q_i a_i = L + E[ξ_i \tilde ω],\qquad \tilde ω = 1/(ε + Σ_j ξ_j / a_j),

    with ``(ε, L) = (1, λ')`` when ``P >= M`` (regular down to ``λ' = 0``) and ``(ε, L) = (λ', 1)``
    when ``P < M`` (then ``ν → 0`` as ``λ' → 0`` but ``a`` stays finite: the min-norm limit).
    The physical weights are ``ω = ε ω̃`` and ``r_i = 1/(q_i ε a_i)``.

    Attributes
    ----------
    lam : float
        ``λ'`` (in ``H/c`` units).
    a : ndarray (B,)
    eps, L : float
    omega_t : ndarray (K,)
        ``ω̃`` at every node.
    converged : bool
    iterations : int
    residual : float
    """

    __repr__ = short_repr

    lam: float
    q: np.ndarray
    a: np.ndarray
    eps: float
    L: float
    omega_t: np.ndarray
    converged: bool
    iterations: int
    residual: float

    @property
    def r(self) -> np.ndarray:
        """``r_i(−λ')``; infinite when ``ε = 0`` (``λ' = 0`` with fewer prompts than parameters)."""
        with np.errstate(divide="ignore", over="ignore"):
            r = 1.0 / (self.q * self.eps * self.a)
            if self.eps > 1.0 and np.any(r == 0):       # q ε overflows at λ' near float64's top: divide in steps
                r = np.where(r == 0, 1.0 / (self.q * self.a) / self.eps, r)
        return r


def _ridge_equations(a, q, eps, L, law):
    om = 1.0 / (eps + law.xi @ (1.0 / a))
    F = q * a - L - (law.weights * om) @ law.xi
    return F, om


@public(P=positive(), lam=nonnegative(), law=LAW, **SOLVER)
def ridge_resolvent(P, lam, law: PromptLaw, tol: float = 1e-13, maxit: int = 200) -> RidgeResolvent:
    """Solve the fixed point at ``z = −λ'`` (``λ' >= 0``), including the min-norm limit ``λ' = 0``.

    One block: ``brentq`` on a proven bracket (the function is increasing, or convex with one
    positive root). Two blocks: Newton's method in ``log a`` with backtracking, started from the
    complex-plane solution (continuation from ``λ' > 0`` when ``λ' = 0`` and ``P < M``).

    Raises
    ------
    ValueError
        For ``λ' = 0`` at ``P = M`` (the min-norm solution has infinite norm there); naming ``P`` or ``lam`` outside
        the ranges below.
    ConvergenceError
        If the residual stays above ``tol`` (relative).

    Parameters
    ----------
    P : float
        Number of prompts, ``P >= 1e-300 M`` (``M = law.M``: the ratios ``M/P`` stay within float64).
    lam : float
        ``λ' >= 0`` in ``H/c`` units (``λ' P/M <= 1e305`` when ``P >= M``).
    law : PromptLaw
    tol : float
        Relative residual tolerance in ``(0, 1)``.
    maxit : int
        Iteration limit.

    Returns
    -------
    RidgeResolvent
    """
    return _ridge_resolvent(P, lam, law, tol, maxit)


def _ridge_resolvent(P, lam, law, tol=1e-13, maxit=200):
    """:func:`ridge_resolvent` of checked arguments, with its refusals of the ranges that depend on ``M``."""
    M = law.M
    if P < M * 1e-300:      # the ratios M/P (and 1/a ~ M/P as P → 0) beyond float64's range
        check.fail("P", P, f"a real number in [{M * 1e-300!r}, inf) (M/P <= 1e300, with M = {M})")
    if P >= M and lam * (P / M) > 1e305:     # a ≈ (λ' + E[ξ]) P/M near float64's largest value (1.8e308)
        check.fail("lam", lam, f"a real number in [0, {1e305 * M / P!r}] at P = {P!r} >= M = {M} (λ' P/M <= 1e305)")
    q = law._ratios(P)
    interp = P < M
    if lam == 0.0 and abs(P - M) <= 1e-9 * M:
        raise ValueError(f"lam must be > 0 when P = M = {M}: the min-norm (lam = 0) solution diverges at the "
                         "interpolation threshold; got lam = 0")
    eps, L = (lam, 1.0) if interp else (1.0, lam)
    if law.n_blocks == 1:
        a, it = _ridge_one_block(q[0], eps, L, law, interp, maxit, P, lam)
    else:
        a, it = _ridge_two_blocks(q, eps, L, law, _two_block_start(P, lam, law, interp), tol, maxit)
    F, om = _ridge_equations(a, q, eps, L, law)
    residual = float(np.max(np.abs(F) / (q * a)))
    if not residual <= max(tol, 1e-10):
        raise ConvergenceError(f"ridge resolvent did not converge (P={P}, lam={lam}, law={law.law!r}, "
                               f"model={law.model!r}): relative residual {residual:.3g} after {it} iterations")
    return RidgeResolvent(lam=lam, q=q, a=a, eps=eps, L=L, omega_t=om, converged=True, iterations=int(it),
                          residual=residual)


def _ridge_one_block(q, eps, L, law, interp, maxit, P, lam):
    """One block: ``brentq`` on a proven bracket of ``g(a) = q a − L − E[ξ a/(ε a + ξ)]``, which is
    increasing (``P < M``) or convex with one positive root (``P >= M``). Returns ``(a, iterations)``."""
    w, x = law.weights, law.xi[:, 0]

    def g(a):
        return q * a - L - w @ (x * a / (eps * a + x))

    if interp:
        lo, hi = 0.0, 1.0 / (q - 1.0) * (1.0 + 1e-12) + 1e-300
        hi = max(hi, (L + 1.0) / q)
        while g(hi) <= 0:
            hi *= 2.0
    else:
        hi = (L + w @ x) / q * (1 + 1e-12)
        lo = 0.0
        if L == 0.0:  # g(0) = 0 and g'(0) = q − 1 < 0: find a point with g < 0
            lo = 0.5 * (1.0 - q) / (w @ (1.0 / x))
            for _ in range(200):
                if g(lo) < 0:
                    break
                lo *= 0.5
            else:
                raise ConvergenceError(f"ridge resolvent: no sign change found below the root (P={P}, lam={lam})")
    try:
        # xtol far below the root, which is ~1/q as P → 0 (an absolute 1e-300 stopped at a = 0 for q > 1e300)
        a0, info = optimize.brentq(g, lo, hi, xtol=1e-3 * min(1e-300, 1.0 / q), rtol=4 * np.finfo(float).eps,
                                   full_output=True, maxiter=maxit)
    except RuntimeError as err:          # scipy's "failed to converge after maxit iterations"
        raise ConvergenceError(f"ridge resolvent: Brent's method did not converge in maxit = {maxit} iterations "
                               f"({err}; P={P}, lam={lam})") from None
    if not info.converged:
        raise ConvergenceError(f"ridge resolvent: Brent's method did not converge ({info.flag}; P={P}, lam={lam})")
    return np.array([a0]), info.iterations


def _ridge_two_blocks(q, eps, L, law, a, tol, maxit):
    """Two blocks: Newton's method in ``log a`` with backtracking from the start ``a``.
    Returns ``(a, iterations)``."""
    w, xi = law.weights, law.xi
    la = np.log(a)
    F, _ = _ridge_equations(a, q, eps, L, law)
    res = np.max(np.abs(F) / (q * a))
    it = 0
    while res > tol and it < maxit:
        it += 1
        a = np.exp(la)
        F, om = _ridge_equations(a, q, eps, L, law)
        # J_ij = dF_i/d(log a_j) = q_i a_i δ_ij − E[ξ_i ω̃² ξ_j] / a_j
        J = np.diag(q * a) - (xi * (w * om**2)[:, None]).T @ (xi / a)
        step = np.linalg.solve(J, F)
        t = 1.0
        for _ in range(40):
            trial = la - t * step
            Ft, _ = _ridge_equations(np.exp(trial), q, eps, L, law)
            rt = np.max(np.abs(Ft) / (q * np.exp(trial)))
            if rt < res:
                la, res = trial, rt
                break
            t *= 0.5
        else:
            break
    return np.exp(la), it


def _two_block_start(P, lam, law, interp):
    """Initial guess for the two-block Newton iteration from the complex-plane solver."""
    q = law._ratios(P)
    if lam > LARGE_RIDGE:        # ω̃ ≈ 1/ε → 0 (P < M) or ω̃ <= 1 against L = λ' (P >= M): q a = L + E[ξ ω̃] ≈ L
        eps, L = (lam, 1.0) if interp else (1.0, lam)
        return (L + (law.weights / eps) @ law.xi) / q
    # below Z_MIN the complex-plane solver does not resolve z = −λ' (P <= M): start from the min-norm limit's point
    lam_s = lam if lam > 0 and (lam >= Z_MIN or not interp) else (1e-6 if interp else 0.0)
    res = _block_resolvent(np.array([complex(-lam_s, 0.0)]), P, law)
    nu = 1.0 / (q * res.r[0].real)
    return nu / lam_s if interp else nu
