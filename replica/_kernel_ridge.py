r"""Exact ridge solution of the kernel learner on one dataset (the long-time limit of gradient flow, ``β = ∞``).

The kernel learner (:mod:`linattn.kernel_learner`) predicts ``ŷ = s_φᵀ Γ φ(x_q)`` with the fixed feature map ``φ``
(``F`` features; ``F = D + D(D+1)/2`` for the degree-2 Hermite map) and ``s_φ = (1/N) Σ_i y_i φ(x_i)``. It is linear
in ``Γ ∈ R^{F×F}``, with the features ``h_μ = s_μ ⊗ φ_μ ∈ R^{F²}`` (``φ_μ = φ(x_q^μ)``); training minimises

.. math:: E_t(Γ) = \frac{1}{2P} \sum_μ \big(y_μ − s_μᵀ Γ φ_μ\big)^2 + \frac{λ}{2} ‖Γ‖_F^2 .

With ``S = [s_μᵀ]`` and ``Φ = [φ_μᵀ]`` (``P × F``) the Hessian ``A = H + λ`` acts as

.. math:: A Γ = \frac1P Sᵀ \operatorname{diag}(u) Φ + λΓ,\qquad u = \operatorname{rowsum}\big((SΓ) ∘ Φ\big),

two GEMMs of size ``P × F × F`` — the ``P × F²`` feature matrix is never formed (``D = 20``: ``F² = 52 900``
parameters). ``Γ* = A⁻¹b`` with ``b = Sᵀ diag(y) Φ / P`` is found by preconditioned conjugate gradients. The
preconditioner is the Kronecker factorisation of the dataset's own Hessian, ``(SᵀS/P) ⊗ (ΦᵀΦ/P) + λ``, inverted in the
two eigenbases (``U_s``, ``U_φ``; ``O(F³)`` per application): ``M⁻¹R = U_s [(U_sᵀ R U_φ) ⊘ (e_s e_φᵀ + λ)] U_φᵀ``
(the features factorise, ``E[h hᵀ] = S̄ ⊗ I_F``, so ``H`` is close to a Kronecker product when ``P ≫ F²``; like
:class:`replica.ridge._Preconditioner` for the linear model).

**Stopping rule** (proven, as in :func:`replica.ridge`): ``A ⪰ λ``, so ``‖Γ − Γ*‖_F = ‖A⁻¹R‖ ≤ ‖R‖_F/λ`` for the
true residual ``R = b − AΓ``; CG stops when ``‖R‖_F ≤ rtol · λ ‖Γ‖_F``, with ``R`` recomputed in float64 from the data
(not the recursion), which certifies a relative error ``≤ rtol``. The test error is a quadratic form with Hessian
``S̄ ⊗ I`` (:func:`linattn.kernel_learner.kernel_moments`), so it moves by at most
``‖S̄Γ − B‖_F δ + ½ λ_max(S̄) δ²`` (``δ`` the bound): ``test_bound`` (the larger of the ICL and IDG bounds).

The dataset is built from raw tokens (:func:`kernel_data`: :func:`linattn.sample_tokens`, the pool from
:func:`linattn.pools.draw_pool`), the definition of the data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn import _sampling as sampling
from linattn._arguments import choice, instance, integer, positive, public, tolerance
from linattn._errors import ConvergenceError
from linattn._kernel_errors import (
    FEATURES,
    context_features,
    feature_map,
    kernel_moments,
    kernel_test_error,
    n_features,
)
from linattn._numerics.cg import NotCertified, certified_cg
from linattn._results import short_repr
from linattn._threads import blas_threads
from linattn._validate import PROBLEM

#: numbers per batch of token features (bounds the (batch, N, F) workspace of :func:`kernel_data`)
_BATCH_NUMBERS = 1 << 22
_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class KernelData:
    """One training set of the kernel learner.

    Attributes
    ----------
    s : ndarray (P, F)
        ``s_φ = (1/N) Σ_i y_i φ(x_i)`` of each prompt.
    phi : ndarray (P, F)
        ``φ(x_q)``.
    yq : ndarray (P,)
        Query labels.
    pool : ndarray (K, D) or None
        The task pool (``None``: a fresh task per prompt).
    features : str
    N : int
        Context length.
    link : linattn.links.Link or None
        The link the labels were made with (``None``: unknown, for data built by hand); :func:`kernel_ridge`
        refuses a problem with another link.
    noise : float or None
        The label noise ``σ`` the labels were made with (``None``: unknown).
    """

    __repr__ = short_repr

    s: np.ndarray
    phi: np.ndarray
    yq: np.ndarray
    pool: np.ndarray | None
    features: str
    N: int
    link: object = None
    noise: float | None = None

    @property
    def P(self) -> int:
        return int(self.yq.size)


@public(pb=PROBLEM, features=choice(FEATURES))
def kernel_data(pb, P, rng=None, features="hermite2") -> KernelData:
    """Draw one training set of the kernel learner token by token.

    Fresh tasks are ``w ~ N(0, I_D)``; with ``pb.tasks = K`` the pool (Gaussian or on the sphere, ``pb.task_law``) and
    the task of each prompt come from :func:`linattn.pools.draw_pool`. Tokens, labels and queries:
    :func:`linattn.sample_tokens` (in batches).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs.
    P : int
        Prompts.
    rng : None, int, tuple or numpy.random.Generator
    features : {"hermite2", "linear"}

    Returns
    -------
    KernelData
    """
    if pb.covariance is not None:
        check.fail("pb", pb, "a Problem with isotropic inputs (covariance=None) for the kernel learner")
    gen = rng
    D, N = pb.D, pb.N
    F = n_features(D, features)
    check.memory(8.0 * P * (3 * F + D + 2), f"the kernel learner's data (P = {P}, F = {F})", "P or D")
    pool = None
    if pb.tasks is not None:
        pool, task = sampling.draw_pool(pb, P, gen)
        W = pool[task]
    else:
        W = gen.standard_normal((P, D))
    s, phi, yq = np.empty((P, F)), np.empty((P, F)), np.empty(P)
    batch = max(1, _BATCH_NUMBERS // (N * F + N * D))
    for lo in range(0, P, batch):
        hi = min(P, lo + batch)
        tok = sampling.sample_tokens(pb, hi - lo, gen, w=W[lo:hi])
        s[lo:hi] = context_features(tok.X, tok.y, features)
        phi[lo:hi] = feature_map(tok.xq, features)
        yq[lo:hi] = tok.yq
    return KernelData(s=s, phi=phi, yq=yq, pool=pool, features=features, N=N, link=pb.link, noise=float(pb.noise))


@dataclass(frozen=True, eq=False)
class KernelRidgeSolution:
    """The ridge solution of the kernel learner on one dataset and its exact errors.

    Attributes
    ----------
    Gamma : ndarray (F, F)
    train : float
        ``E_t(Γ)`` with the weight decay included.
    test : float
        Fresh-task (ICL) error (exact, :func:`linattn.kernel_learner.kernel_test_error`) at ``N_test``.
    test_idg : float or None
        In-distribution error over the dataset's pool (``None`` without a pool).
    lam : float
    iterations : int
        CG iterations.
    residual : float
        ``‖b − AΓ‖_F``, recomputed in float64 from the data.
    error_bound : float
        Proven bound ``‖R‖_F/λ`` on ``‖Γ − Γ*‖_F``.
    test_bound : float
        Proven bound on ``|E(Γ) − E(Γ*)|`` for the test errors (the larger of ICL and IDG).
    certified : bool
        ``error_bound <= rtol · ‖Γ‖_F``.
    N_test : int
        The context length of the test errors.
    """

    __repr__ = short_repr

    Gamma: np.ndarray
    train: float
    test: float
    test_idg: float | None
    lam: float
    iterations: int
    residual: float
    error_bound: float
    test_bound: float
    certified: bool
    N_test: int


class _Hessian:
    """``Γ ↦ HΓ = Sᵀ diag(rowsum((SΓ) ∘ Φ)) Φ / P`` (module docstring); ``fit`` keeps ``u`` of the last product."""

    def __init__(self, data):
        self.S, self.Phi, self.P = data.s, data.phi, data.P
        self.fit = None

    def predict(self, G):
        return np.einsum("pf,pf->p", self.S @ G, self.Phi)

    def transpose(self, u):
        return (self.S.T * u) @ self.Phi

    def __call__(self, G):
        self.fit = self.predict(G)
        return self.transpose(self.fit) / self.P


class _KroneckerPreconditioner:
    """``R ↦ U_s [(U_sᵀ R U_φ) ⊘ (e_s e_φᵀ + λ)] U_φᵀ``: the inverse of ``(SᵀS/P) ⊗ (ΦᵀΦ/P) + λ``."""

    def __init__(self, data, lam):
        es, self.Us = np.linalg.eigh(data.s.T @ data.s / data.P)
        ep, self.Up = np.linalg.eigh(data.phi.T @ data.phi / data.P)
        self.inv = 1.0 / (np.outer(np.maximum(es, 0.0), np.maximum(ep, 0.0)) + lam)

    def __call__(self, R):
        return self.Us @ ((self.Us.T @ R @ self.Up) * self.inv) @ self.Up.T


def _cg(hess, pre, b, lam, rtol, maxiter, scale=1.0, hnorm=0.0):
    """Preconditioned CG on ``(H + λ)Γ = b`` with the certified stopping rule (module docstring;
    :func:`linattn._numerics.cg.certified_cg`); returns ``(Γ, iterations, true residual norm)``.

    The iteration runs on the scaled system ``A'Γ' = b``, ``A' = (H + λ)/s``, ``Γ' = sΓ`` (``s = scale``, of the order
    of ``‖H + λ‖``), whose operator has norm ``O(1)`` for any ``λ``: no product overflows or underflows (at
    ``λ = 1e300`` the unscaled directions ``p ~ R/λ`` made ``pᵀAp`` underflow to 0). The residual ``R = b − A'Γ'`` is
    that of the original system, so the stopping rule ``‖R‖ <= rtol λ‖Γ‖ = rtol (λ/s)‖Γ'‖`` is unchanged.
    """
    lam_s = lam / scale
    try:
        sol = certified_cg(lambda X: hess(X) / scale + lam_s * X, b, lambda R: pre(R) * scale, lam_s, rtol, maxiter,
                           name="kernel_ridge")
    except NotCertified as exc:
        floor = _EPS * (hnorm / scale + lam_s) * exc.x_norm     # float64 resolution of the residual
        if exc.target < 1e3 * floor:
            raise ConvergenceError(f"{exc}: the certified bound |R|/lam <= rtol |Gamma| asks for a residual within a "
                                   f"factor {exc.target / floor:.3g} of float64's resolution {floor:.3g} of the "
                                   f"Hessian ({hnorm:.3g}) at lam = {lam!r}, rtol = {rtol!r}; raise lam or rtol"
                                   ) from None
        raise ConvergenceError(f"{exc}; raise maxiter") from None
    return sol.x / scale, sol.iterations, sol.residual


@public(data=instance(KernelData, "a KernelData (from replica.kernel_data)"), pb=PROBLEM, lam=positive(),
        rtol=tolerance(), maxiter=integer(maximum=10**7))
def kernel_ridge(data, pb, lam, rtol=1e-8, maxiter=5_000, N_test=None) -> KernelRidgeSolution:
    r"""Ridge solution of the kernel learner on one dataset, by Kronecker-preconditioned CG (module docstring).

    Parameters
    ----------
    data : KernelData
        From :func:`kernel_data` with the same problem.
    pb : linattn.Problem
    lam : float
        Weight decay ``λ > 0``.
    rtol : float
        Certified relative accuracy of ``Γ`` (``0 < rtol < 1``).
    maxiter : int
        CG iteration limit.
    N_test : None or int
        Context length of the test prompts (default: the training length ``data.N``).

    Returns
    -------
    KernelRidgeSolution

    Raises
    ------
    ValueError
        Bad input (``data`` not a :class:`KernelData` of ``pb``, ``λ <= 0``, …).
    linattn.ConvergenceError
        CG did not reach the stopping rule within ``maxiter`` iterations.

    Examples
    --------
    >>> import linattn, replica
    >>> pb = linattn.Problem(4, 8, 0.0, link="relu")
    >>> sol = replica.kernel_ridge(replica.kernel_data(pb, 300, rng=0), pb, 0.01)
    >>> bool(sol.train < sol.test)
    True
    """
    F = n_features(pb.D, data.features)
    if data.s.shape[1] != F or data.N != pb.N:
        check.fail("data", data, f"a KernelData of the problem (D = {pb.D}, N = {pb.N}: F = {F} features)")
    if data.link is not None and data.link != pb.link:     # the exact test errors use pb's link
        check.fail("pb", pb, f"a Problem with the link the data were made with ({data.link.name!r}, not "
                             f"{pb.link.name!r})")
    if data.noise is not None and data.noise != pb.noise:
        check.fail("pb", pb, f"a Problem with the noise the data were made with ({data.noise!r}, not {pb.noise!r})")
    N_test = data.N if N_test is None else N_test
    hess = _Hessian(data)
    b = hess.transpose(data.yq) / data.P
    # ‖H‖ <= max_μ|φ_μ|² ‖SᵀS‖/P (Schur: FFᵀ = (SSᵀ) ∘ (ΦΦᵀ), both PSD)
    hnorm = (float(np.max(np.einsum("pf,pf->p", data.phi, data.phi)))
             * float(np.linalg.eigvalsh(data.s.T @ data.s)[-1]) / data.P)
    if rtol * lam < _EPS * hnorm:     # the certificate would need a residual below one product's rounding
        check.fail("lam", lam, f">= {_EPS * hnorm / rtol:.3g} for this dataset and rtol = {rtol!r} (the certified "
                               f"bound |R|/lam <= rtol |Gamma| needs rtol lam above float64's resolution eps ‖H‖ = "
                               f"{_EPS * hnorm:.3g} of the Hessian)")
    with blas_threads(2.0 * data.P * data.s.shape[1] * data.phi.shape[1]):     # one product (linattn.threads)
        G, its, res = _cg(hess, _KroneckerPreconditioner(data, lam), b, lam, rtol, maxiter, scale=hnorm + lam,
                          hnorm=hnorm)
    resid = data.yq - hess.predict(G)
    train = 0.5 * float(resid @ resid) / data.P + 0.5 * lam * float(np.sum(G * G))
    bound = res / lam
    test = kernel_test_error(pb, G, data.features, N_test=N_test)
    metrics = [kernel_moments(pb, data.features, N=N_test)]
    idg = None
    if data.pool is not None:
        idg = kernel_test_error(pb, G, data.features, pool=data.pool, N_test=N_test)
        metrics.append(kernel_moments(pb, data.features, pool=data.pool, N=N_test))
    test_bound = max(float(np.linalg.norm(km.S @ G - km.B)) * bound + 0.5 * float(np.linalg.eigvalsh(km.S)[-1])
                     * bound**2 for km in metrics)
    norm = float(np.linalg.norm(G))
    return KernelRidgeSolution(Gamma=G, train=float(train), test=float(test),
                               test_idg=None if idg is None else float(idg), lam=lam, iterations=int(its),
                               residual=float(res), error_bound=float(bound), test_bound=float(test_bound),
                               certified=bool(bound <= rtol * max(norm, 1e-300)), N_test=N_test)
