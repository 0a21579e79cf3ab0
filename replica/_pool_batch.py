r"""The Gaussian-feature pool theory of many random pools at once (private; the theory is
:func:`replica._pool_theory.gaussian_errors`, one pool at a time).

The pool average of :mod:`replica._pool_theory` evaluates the Gaussian theory on ``32 n_pools`` pools (the control
variate of ``law="finite"``) or ``n_pools`` (``law="mp"``/``"factor"``). One pool is a ``D_z × D_z`` eigenproblem and
a scalar root, ~0.5 ms of Python and small-array overhead; here the pools are a leading axis: the task moments,
``Σ̃``, ``B``, the eigendecompositions and the error formulas are batched, and the effective ridge of every pool is
found at once by Newton's method on ``g(δ) = δ − (λ + δ)(D/P) Σ_j σ_j/(σ_j + λ + δ)`` from the upper end of its
bracket, ``δ₀ = (D/P) Σ_j σ_j``: ``g`` is convex (``g'' = 2(D/P) Σ_j σ_j²/(σ_j + κ)³ > 0``) with
``g(0) <= 0 < g(δ₀)``, so from ``δ₀`` each tangent's zero lies between the root and the last iterate: the iterates
decrease monotonically to the root (quadratically near it) and stop when they no longer decrease. Pools
outside that case (``λ = 0``, or ``λ`` so large that ``g(δ₀) > 0`` is lost to rounding), and any that Newton's
method does not settle (a flat ``g`` at the interpolation threshold), take the scalar root of
:func:`effective_ridge` (Brent's method on the same bracket; the theories of one pool use it). Equal to the
pool-by-pool theory within ``1e-12`` relative (``tests/replica/test_pool_batch.py``; Brent's root stops at ``1e-14``
relative).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from scipy import optimize

from linattn import _check as check
from linattn._errors import ConvergenceError

#: Newton steps of the batched effective ridge at most (from the bracket's end it takes 5–12; a pool that has not
#: settled by then takes Brent's root)
NEWTON_STEPS = 100


def pool_moments(pb, pools):
    """The task moments of a stack of pools ``(n, K, D)``: ``ā² (n,)``, ``R (n, D, D)``, ``m (n, D)``, ``v₂ (n,)``
    (:func:`linattn._task_moments.pool_moments` of each pool)."""
    a = pools * (float(pb.link.slope) / np.sqrt(pb.D))
    sq = np.einsum("nkd,nkd->nk", a, a)
    Vw = sq + pb.noise**2
    K = pools.shape[1]
    with np.errstate(over="ignore", invalid="ignore"):
        out = (sq.mean(axis=1), np.einsum("nkd,nke->nde", a, a) / K, np.einsum("nk,nkd->nd", Vw, a) / K,
               np.mean(Vw**2, axis=1))
    for value in out:
        check.finite_result(value, {"pool": pools}, "the moments of the pools' tasks (fourth powers)")
    return out


def moment_matrices(pb, model, moments, N=None):
    """``(Σ̃, B, E y²)`` of each pool (:func:`linattn._task_moments.moment_matrices`), at the context length ``N``
    (default ``pb.N``)."""
    mean_sq, R, m, v2 = moments
    D, s2 = pb.D, pb.noise**2
    N = pb.N if N is None else N
    k = 1.0 + 2.0 / N
    Ss = ((mean_sq + s2) / N)[:, None, None] * np.eye(D) + (1.0 + 1.0 / N) * R
    if model == "full":
        n = R.shape[0]
        St = np.empty((n, D + 1, D + 1))
        St[:, :D, :D] = Ss
        St[:, :D, D] = St[:, D, :D] = k * m
        St[:, D, D] = k * v2
        B = np.concatenate([R, m[:, None, :]], axis=1)
        return St, B, mean_sq + s2
    return Ss, R, mean_sq + s2


def spectra(pb, model, moments, v_scale=1.0, N_test=None):
    """The pools' ``Σ̃`` in their eigenbases (the batched :func:`~replica._pool_theory._matrix_spectrum`): a dict of
    ``s (n, D_z)``, ``G``, ``Cu`` ``(n, D_z, D_z)``, ``t (n, D_z)``, ``Ey2 (n,)`` and ``Su`` (``s`` itself, or
    ``(n, D_z, D_z)`` at another test length)."""
    D = pb.D
    other = N_test is not None and N_test != pb.N
    pbt = dataclasses.replace(pb, N=N_test) if other else pb
    St, B, Ey2 = moment_matrices(pb, model, moments)
    St_test = moment_matrices(pb, model, moments, N=N_test)[0] if other else St
    Cd = np.full(D, pbt.feature_variance)
    if model == "full":
        Cd = np.append(Cd, pbt.feature_variance_v * v_scale)
        if v_scale != 1.0:
            r = np.append(np.ones(D), np.sqrt(v_scale))
            St, B, St_test = St * np.outer(r, r), B * r[:, None], St_test * np.outer(r, r)
    sj, U = np.linalg.eigh(St)
    Bt = np.matmul(np.swapaxes(U, 1, 2), B)
    sj = np.maximum(sj, 0.0)
    return dict(s=sj, G=np.matmul(Bt, np.swapaxes(Bt, 1, 2)),
                t=pb.teacher_strength * np.einsum("nij,nji->nj", U[:, :D], Bt),
                Cu=np.matmul(np.swapaxes(U, 1, 2) * Cd, U), Ey2=Ey2,
                Su=sj if not other else np.matmul(np.matmul(np.swapaxes(U, 1, 2), St_test), U))


def effective_ridge(s, n, D, P, lam):
    r"""``κ``: root of ``g(κ) = κ − λ − κ (D/P) Σ_j n_j σ_j/(σ_j + κ)``, solved for ``δ = κ − λ`` in the bracket
    ``[0, (D/P) Σ n_j σ_j]`` (so that ``λ ≫ (D/P) Σ n σ`` loses no digits):
    ``g(λ) <= 0 <= g(λ + (D/P)Σ n σ)``, and ``g`` crosses zero once (``g/κ`` increases). At ``λ = 0`` the root of
    ``g/κ = 1 − (D/P)Σ nσ/(σ + κ)`` is ``κ > 0`` when ``P < M`` and ``κ = 0`` when ``P > M``.

    Parameters
    ----------
    s, n : ndarray
        Eigenvalues ``σ_j >= 0`` of the feature covariance's factor and their multiplicities ``n_j`` (each times ``D``).
    D : int
        The multiplicity of the Kronecker factor.
    P : float
        Number of prompts.
    lam : float
        Weight decay ``λ >= 0``.

    Returns
    -------
    kappa, residual : float
    iterations : int
        Brent iterations of the root (0 where ``κ`` is closed-form).
    """
    M = D * float(n.sum())
    if lam == 0:
        if P > M:
            return 0.0, 0.0, 0

        def h(kap):
            return 1.0 - (D / P) * float(np.sum(n * s / (s + kap)))

        hi = (D / P) * float(np.sum(n * s))
        lo = hi
        while h(lo) >= 0:
            lo *= 1e-3
            if lo < 1e-300:
                raise ConvergenceError("pool theory: no bracket for the effective ridge at lam = 0")
        kap, steps = _root(h, lo, hi)
        return kap, abs(h(kap)), steps

    def g(delta):         # g(λ + δ) in the shift δ = κ − λ itself: no cancellation when λ ≫ (D/P) Σ n σ
        return delta - (lam + delta) * (D / P) * float(np.sum(n * s / (s + lam + delta)))

    hi = (D / P) * float(np.sum(n * s))
    if not hi > 0:
        return float(lam), 0.0, 0
    if g(hi) > 0:
        delta, steps = _root(g, 0.0, hi)
        return lam + delta, abs(g(delta)) / (lam + delta), steps

    # λ ≫ σ: g(λ + hi) = (D/P)Σ nσ²/(σ + λ + hi) > 0 is lost to cancellation in δ − (λ + δ)(D/P)Σ nσ/(σ + λ + δ);
    # in ε = hi − δ, g = −ε + (D/P)Σ nσ²/(σ + λ + hi − ε) has no cancellation at ε = 0 and is < 0 at ε = hi
    def e(eps):
        return -eps + (D / P) * float(np.sum(n * s * s / (s + lam + hi - eps)))

    eps, steps = _root(e, 0.0, hi) if e(hi) < 0 else (hi, 0)
    return lam + (hi - eps), abs(e(eps)) / (lam + hi - eps), steps


def _root(f, lo, hi):
    """The root of ``f`` in ``[lo, hi]`` by Brent's method and the iterations it took."""
    root, info = optimize.brentq(f, lo, hi, xtol=1e-300, rtol=1e-14, maxiter=300, full_output=True)
    return root, int(info.iterations)


def effective_ridges(s, D, P, lam):
    """``κ`` of every pool (rows of ``s``, multiplicities 1), its residual and the most steps taken (module
    docstring); the scalar :func:`effective_ridge` where Newton's case does not hold."""
    n = s.shape[0]
    kap, res, steps = np.empty(n), np.zeros(n), 0
    hi = (D / P) * s.sum(axis=1)
    newton = (hi > 0) & (g_rows(s, hi, D, P, lam) > 0) if lam > 0 else np.zeros(n, bool)
    if np.any(newton):
        sn, delta = s[newton], hi[newton]
        active = np.ones(delta.size, bool)
        failed = np.zeros(delta.size, bool)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for step in range(1, NEWTON_STEPS + 1):
                idx = np.flatnonzero(active)
                kn = (lam + delta[idx])[:, None]
                ratio = sn[idx] / (sn[idx] + kn)
                val = delta[idx] - kn[:, 0] * (D / P) * ratio.sum(axis=1)
                new = delta[idx] - val / (1.0 - (D / P) * np.sum(ratio * ratio, axis=1))
                moved = new < delta[idx]            # monotone from above: a step that does not decrease ends it
                delta[idx[moved]] = new[moved]
                active[idx[~moved]] = False
                failed[idx[~np.isfinite(new)]] = True
                steps = step
                if not np.any(active):
                    break
        failed |= active                # not settled (a flat g at the interpolation threshold): Brent's root
        where = np.flatnonzero(newton)
        newton[where[failed]] = False
        ok = ~failed
        kap[where[ok]] = lam + delta[ok]
        res[where[ok]] = np.abs(g_rows(sn[ok], delta[ok], D, P, lam)) / (lam + delta[ok])
    for i in np.flatnonzero(~newton):
        kap[i], res[i], it = effective_ridge(s[i], np.ones(s.shape[1]), D, P, lam)
        steps = max(steps, it)
    return kap, res, steps


def g_rows(s, delta, D, P, lam):
    """``g(δ)`` of the module docstring, row by row."""
    return delta - (lam + delta) * (D / P) * np.sum(s / (s + (lam + delta)[:, None]), axis=1)


def gaussian_errors(pb, P, beta, lam, model, sp):
    """The Gaussian theory of every pool of the batched spectra ``sp`` (:func:`spectra`): a dict of arrays
    ``train, test, test_idg, train_ridge, test_ridge, test_idg_ridge, kappa_eff, df2`` (one entry per pool), and
    the largest ``residual`` and ``iterations`` (the batched :func:`~replica._pool_theory.gaussian_errors`)."""
    D = pb.D
    s = sp["s"]
    Dz = s.shape[1]
    M = D * Dz
    if lam == 0 and abs(P - M) < 0.5:
        check.fail("P", P, f"!= M = {M:g} at lam = 0 (the min-norm solution diverges at the interpolation threshold)")
    kap, res, iterations = effective_ridges(s, D, P, lam)
    G = sp["G"]
    Gd = np.einsum("njj->nj", G)
    inv = 1.0 / (s + kap[:, None])
    pos = s > 0
    ratio = np.where(pos, Gd / np.where(pos, s, 1.0), 0.0)
    se2 = sp["Ey2"] - ratio.sum(axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        shrunk = np.where(pos, ratio * (kap[:, None] / (s + kap[:, None])) ** 2, 0.0)
    bias = np.where(kap > 0, shrunk.sum(axis=1), 0.0)
    df2 = D * np.sum(s**2 * inv**2, axis=1)
    if not np.all(P - df2 > 0):
        check.fail("lam", lam, f"large enough that the variance factor 1/(P − df2) is finite at P = {P:g} (M = {M:g}: "
                               "at the interpolation threshold the min-norm solution diverges as lam → 0)")
    scale = (se2 + bias) / (P - df2)
    Cu, Su = sp["Cu"], sp["Su"]
    Cd = np.einsum("njj->nj", Cu)
    Sd = Su if Su.ndim == 2 else np.einsum("njj->nj", Su)
    overlap = np.einsum("nj,nj->n", sp["t"], inv) / D
    norm = np.einsum("nj,njl,nl->n", inv, Cu * G, inv)
    test = pb._error_from_moments(overlap, norm + scale * D * np.sum(Cd * s * inv**2, axis=1))

    def idg_at(Mu, Md):
        cn = (np.sum(Mu * Gd * inv * inv, axis=1) if Mu.ndim == 2
              else np.einsum("nj,njl,nl->n", inv, Mu * G, inv))
        return 0.5 * (sp["Ey2"] - 2.0 * np.sum(Gd * inv, axis=1) + cn + scale * D * np.sum(Md * s * inv**2, axis=1))

    idg = idg_at(Su, Sd)
    idg_train = idg if Su is s else idg_at(s, s)
    lam_inv = lam * inv
    decay = np.sum(Gd * lam_inv * inv, axis=1) + scale * D * np.sum(s * lam_inv * inv, axis=1)
    # λ/κ = 1 − (D/P) Σ s/(s + κ) at the fixed point: the identity, not the quotient (see ratio_k below)
    shrink = (np.where(kap > 0, 1.0 - (D / P) * np.sum(s * inv, axis=1), max(0.0, 1.0 - M / P)) if lam > 0
              else np.where(kap > 0, 0.0, max(0.0, 1.0 - M / P)))
    train = 0.5 * (shrink**2 * 2.0 * idg_train + decay)
    out = dict(train_ridge=train, test_ridge=test, test_idg_ridge=idg, kappa_eff=kap, df2=df2)
    if np.isinf(beta):
        out.update(train=train, test=test, test_idg=idg)
    else:
        # κ/λ from the fixed point, λ = κ (1 − (D/P) Σ s/(s + κ)): no division by λ, whose ratio to the absolute
        # accuracy of a tiny κ (the Newton steps stop at round-off of s) would be meaningless at λ ~ 1e-300
        # … except where that identity cancels to round-off: λ ≪ κ (P < M, where κ stays O(1) as λ → 0 and the
        # quotient κ/λ is exact to the accuracy of κ)
        if lam > 0:
            identity = 1.0 - (D / P) * np.sum(s * inv, axis=1)
            with np.errstate(divide="ignore", over="ignore"):
                ratio_k = np.where(identity > 1e-6, 1.0 / np.where(identity > 1e-6, identity, 1.0), kap / lam)
        else:
            ratio_k = np.full(kap.size, P / (P - M))
        with np.errstate(over="ignore"):      # ∝ 1/β beyond float64 at β ~ 1e-308: refused by the caller, named
            out.update(train=train + M / (2 * beta),
                       test=test + ratio_k * D * np.sum(Cd * inv, axis=1) / (2 * beta),
                       test_idg=idg + ratio_k * D * np.sum(Sd * inv, axis=1) / (2 * beta))
    return out, float(np.max(res)), int(iterations)
