r"""Spectral diagnostics of weight trajectories: effective rank, stable rank, subspace stability.

Framework-neutral (numpy in, numpy out). Every measure takes one matrix ``(m, n)`` or a trajectory of them
``(T, m, n)`` (any leading axes) and returns one number per matrix. They follow the macroscopic measures
that Mainali & Teixeira (arXiv 2504.12916) derive from the exact linear theory: in staged
learning each learned mode adds one singular value, so the spectrum of a circuit (``QK = W_Qᵀ W_K``,
``OV = W_O W_V``, or the merged ``Γ`` of linear attention) steps through ranks, and its row space settles on
that of the final weights.

With singular values ``σ_1 ≥ σ_2 ≥ … ≥ σ_r`` of ``M``:

* effective rank (Roy & Vetterli 2007): ``erank(M) = exp(−Σ_i p_i ln p_i)``, ``p_i = σ_i / Σ_j σ_j``;
  it lies in ``[1, r]``, equals ``k`` for ``k`` equal non-zero singular values, and is continuous in ``M``;
* marginalised effective rank: the same with the top ``skip`` singular values removed (Mainali &
  Teixeira's measure of what lies beneath the dominant components);
* stable rank (Rudelson & Vershynin 2007): ``srank(M) = ‖M‖_F² / ‖M‖_2² = Σ σ_i² / σ_1²``;
* subspace distance: ``d(t) = ‖M_ref (I − M_t⁺ M_t)‖_F / ‖M_ref‖_F ∈ [0, 1]``, the fraction (in Frobenius
  norm) of the reference (e.g. the final weights ``M(∞)``) that lies outside the row space of ``M_t``;
  ``M_t⁺ M_t = V_r V_rᵀ`` projects on the right singular vectors with ``σ_i > rtol · σ_1``;
* principal angles (Björck & Golub 1973) between the ``k``-dimensional row (or column) spaces of ``M_t``
  and ``M_ref``: ``cos θ_i`` = singular values of ``V_tᵀ V_ref``.

For matrices too large for a full SVD per time, ``k`` asks for the top ``k`` singular triplets only, by the
randomised range finder of Halko, Martinsson & Tropp (SIAM Review 2011) with power iterations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn._arguments import choice, optional, public, real

#: below this size the full (LAPACK) SVD is used even when only ``k`` singular values are asked for
_RANDOMIZED_MIN = 256
#: the rules of the arguments several measures share (``rng`` and ``progress``: the library's table)
_SIDE = choice(("row", "column"))
_RTOL = optional(real(low=0.0, high=1.0, low_open=True, high_open=True))


def _stack(name, M):
    """``M`` as a float array with at least two axes (matrices along the last two)."""
    M = check.finite_array(name, M)
    if M.ndim < 2 or M.shape[-1] == 0 or M.shape[-2] == 0:
        check.fail(name, f"<array with shape {M.shape}>", "a matrix (m, n) or a stack of matrices (..., m, n)")
    return M


def _top_k(name, k, M):
    r = min(M.shape[-2:])
    return r if k is None else check.positive_int(name, k, maximum=r)


def _progress_iter(n, progress, what):
    if not progress:
        return range(n)
    from tqdm.auto import tqdm
    return tqdm(range(n), desc=what, leave=False)


def _randomized_svd(A, k, rng, n_iter=4, oversample=10):
    """Top-``k`` SVD of one matrix by a randomised range finder (Halko, Martinsson & Tropp 2011, Alg. 4.4)."""
    m, n = A.shape
    ell = min(k + oversample, min(m, n))
    Y = A @ rng.standard_normal((n, ell))
    Q, _ = np.linalg.qr(Y)
    for _ in range(n_iter):                     # subspace iteration with re-orthonormalisation
        Q, _ = np.linalg.qr(A.T @ Q)
        Q, _ = np.linalg.qr(A @ Q)
    U, s, Vt = np.linalg.svd(Q.T @ A, full_matrices=False)
    return (Q @ U)[:, :k], s[:k], Vt[:k]


def _svd(M, k, vectors, rng, progress, what):
    """Per matrix of the stack ``M`` (..., m, n): the top ``k`` singular values (and right/left vectors)."""
    lead = M.shape[:-2]
    flat = M.reshape((-1,) + M.shape[-2:])
    r = min(M.shape[-2:])
    randomized = k < r and r >= _RANDOMIZED_MIN
    if not randomized and not progress:
        if not vectors:
            return np.linalg.svd(M, compute_uv=False)[..., :k]
        U, s, Vt = np.linalg.svd(M, full_matrices=False)
        return U[..., :k], s[..., :k], Vt[..., :k, :]
    gen = np.random.default_rng(rng)
    out_s = np.empty((flat.shape[0], k))
    out_u = np.empty((flat.shape[0], flat.shape[1], k)) if vectors else None
    out_v = np.empty((flat.shape[0], k, flat.shape[2])) if vectors else None
    for i in _progress_iter(flat.shape[0], progress, what):
        if randomized:
            U, s, Vt = _randomized_svd(flat[i], k, gen)
        else:
            U, s, Vt = np.linalg.svd(flat[i], full_matrices=False)
        out_s[i] = s[:k]
        if vectors:
            out_u[i], out_v[i] = U[:, :k], Vt[:k]
    if not vectors:
        return out_s.reshape(lead + (k,))
    return out_u.reshape(lead + out_u.shape[1:]), out_s.reshape(lead + (k,)), out_v.reshape(lead + out_v.shape[1:])


@public
def singular_values(M, k=None, rng=0, progress=False) -> np.ndarray:
    r"""Singular values ``σ_1 ≥ … ≥ σ_k`` of each matrix of a trajectory.

    Parameters
    ----------
    M : array_like (..., m, n)
        One matrix or a stack (e.g. ``(T, m, n)``: one matrix per checkpoint).
    k : int, optional
        Only the top ``k`` (``1 <= k <= min(m, n)``; default all). For ``min(m, n) >= 256`` and
        ``k < min(m, n)`` a randomised SVD (Halko, Martinsson & Tropp 2011; 4 power iterations, 10 extra
        columns) is used: relative error ``~(σ_{k+11}/σ_k)^9`` per value.
    rng : int or numpy.random.Generator
        Seed of the randomised SVD.
    progress : bool
        Progress bar over the stack.

    Returns
    -------
    ndarray (..., k)
    """
    M = _stack("M", M)
    return _svd(M, _top_k("k", k, M), False, rng, progress, "singular values")


def _entropy_rank(s):
    """``exp(−Σ p ln p)``, ``p = s / Σ s`` along the last axis (0 for an all-zero row)."""
    total = s.sum(axis=-1, keepdims=True)
    p = np.divide(s, total, out=np.zeros_like(s), where=total > 0)
    logp = np.log(p, out=np.zeros_like(p), where=p > 0)
    out = np.exp(-(p * logp).sum(axis=-1))
    return np.where(total[..., 0] > 0, out, 0.0)


@public
def effective_rank(M, skip=0, k=None, rng=0, progress=False) -> np.ndarray:
    r"""Effective rank ``exp(−Σ_i p_i ln p_i)``, ``p_i = σ_i/Σ_j σ_j`` (Roy & Vetterli, EUSIPCO 2007).

    With ``skip = s > 0`` the top ``s`` singular values are removed before normalising: the *marginalised*
    effective rank of Mainali & Teixeira (arXiv 2504.12916), ``exp(H(σ_{s+1}, …, σ_r))``, which shows the
    spread of the spectrum beneath its dominant components (it dips when the bulk collapses onto a few
    new directions). A zero matrix (or a zero remainder) has effective rank 0.

    Parameters
    ----------
    M : array_like (..., m, n)
        One matrix or a trajectory of matrices.
    skip : int
        Number of top singular values removed, ``0 <= skip < min(m, n)``.
    k : int, optional
        Use the top ``k`` singular values only (randomised SVD for large matrices, :func:`singular_values`);
        the entropy then ignores the tail beyond ``k`` (a lower bound when the tail is flat).
    rng : int or numpy.random.Generator
    progress : bool

    Returns
    -------
    float or ndarray (...)
        ``1 <= erank <= min(m, n) − skip`` for non-zero input.
    """
    M = _stack("M", M)
    r = min(M.shape[-2:])
    skip = check.nonneg_int("skip", skip, maximum=r - 1)
    kk = _top_k("k", k, M)
    if kk <= skip:
        check.fail("k", k, f"an integer > skip = {skip}")
    s = _svd(M, kk, False, rng, progress, "effective rank")
    out = _entropy_rank(s[..., skip:])
    return out if out.ndim else float(out)


@public
def stable_rank(M) -> np.ndarray:
    r"""Stable rank ``‖M‖_F² / ‖M‖_2² = Σ_i σ_i² / σ_1²`` (Rudelson & Vershynin 2007); 0 for a zero matrix.

    Parameters
    ----------
    M : array_like (..., m, n)

    Returns
    -------
    float or ndarray (...)
    """
    M = _stack("M", M)
    s = np.linalg.svd(M, compute_uv=False)
    top = s[..., :1]
    r = np.divide(s, top, out=np.zeros_like(s), where=top > 0)     # scale-free: no overflow of s² at 1e200
    out = np.sum(r * r, axis=-1)
    return out if out.ndim else float(out)


def _oriented(M, side):
    """Matrices whose row space is the requested space of ``M`` (transpose for ``side="column"``)."""
    return M if side == "row" else np.swapaxes(M, -1, -2)


@public(rtol=_RTOL, side=_SIDE)
def subspace_distance(M_t, M_ref, rtol=None, rank=None, side="row") -> np.ndarray:
    r"""Normalised subspace distance ``d = ‖M_ref (I − M_t⁺ M_t)‖_F / ‖M_ref‖_F`` (Mainali & Teixeira 2025).

    ``M_t⁺ M_t`` is the orthogonal projector on the row space of ``M_t``, so ``d`` is the fraction (in
    Frobenius norm) of ``M_ref`` outside it: ``d = 0`` when the row space of ``M_t`` contains that of
    ``M_ref``, ``d = 1`` when the two are orthogonal. It is informative only when ``M_t`` is (numerically)
    rank-deficient: the row space counts singular directions with ``σ_i > rtol · σ_1`` (or the top
    ``rank``). For ``side="column"`` the column spaces are compared: ``‖(I − M_t M_t⁺) M_ref‖_F/‖M_ref‖_F``.

    Parameters
    ----------
    M_t : array_like (..., m, n)
        One matrix or a trajectory.
    M_ref : array_like (m, n)
        Reference, e.g. the final weights ``M(∞)``; non-zero.
    rtol : float, optional
        Relative cutoff in ``(0, 1)`` of the pseudo-inverse; default ``max(m, n) · ε_machine`` (numpy's
        ``matrix_rank`` rule: the exact pseudo-inverse). Exclusive with ``rank``.
    rank : int, optional
        Use the top ``rank`` right singular vectors of ``M_t`` (``1 <= rank <= min(m, n)``).
    side : {"row", "column"}

    Returns
    -------
    float or ndarray (...)
        In ``[0, 1]``.
    """
    M_t = _stack("M_t", M_t)
    M_ref = check.finite_array("M_ref", M_ref, ndim=2, shape=M_t.shape[-2:])
    if not np.any(M_ref):
        check.fail("M_ref", "<zero matrix>", "a non-zero matrix")
    if rtol is not None and rank is not None:
        check.fail("rank", rank, "None when rtol is given (one cutoff rule)")
    # d and the row spaces do not depend on the matrices' scales: divided by their largest entries (no overflow of
    # ‖M‖² for entries ~ 1e200, no underflow for ~ 1e-200)
    peak = np.abs(M_t).max(axis=(-2, -1), keepdims=True)
    A = _oriented(M_t / np.where(peak > 0, peak, 1.0), side)
    R = _oriented(M_ref / np.abs(M_ref).max(), side)
    _, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = _keep(s, rtol, rank, A.shape[-2:])
    out = _distance(Vt, keep, R)
    return out if out.ndim else float(out)


def _distance(Vt, keep, R):
    """``‖R (I − V Vᵀ)‖_F / ‖R‖_F`` for the kept rows ``V`` of ``Vt`` (..., r, n)."""
    V = Vt * keep[..., :, None]
    inside = (R @ np.swapaxes(V, -1, -2)) @ V      # R Vᵀ V (batched GEMMs; an einsum here is 30x slower)
    out = np.linalg.norm(R - inside, axis=(-2, -1)) / np.linalg.norm(R)
    return np.minimum(out, 1.0)                # ‖R(I − P)‖ <= ‖R‖ exactly; this removes rounding only


def _keep(s, rtol, rank, shape):
    """Mask of the singular directions that span the numerical row space (cutoff ``rtol``, checked by the caller's
    decorator, or top ``rank``)."""
    if rank is not None:
        keep = np.arange(s.shape[-1]) < check.positive_int("rank", rank, maximum=min(shape))
        return np.broadcast_to(keep, s.shape)
    tol = max(shape) * np.finfo(float).eps if rtol is None else rtol
    return s > tol * s[..., :1]


@public(side=_SIDE)
def principal_angles(M_t, M_ref, k=None, side="row") -> np.ndarray:
    r"""Principal angles between the top-``k`` row (or column) spaces of ``M_t`` and ``M_ref``.

    ``cos θ_i = σ_i(V_tᵀ V_ref)``, ``V`` the top ``k`` right singular vectors (Björck & Golub 1973), in
    ascending order of ``θ``. ``θ_max → 0`` when the learned subspace has settled on the reference one.

    Parameters
    ----------
    M_t : array_like (..., m, n)
    M_ref : array_like (m, n)
    k : int, optional
        Dimension compared, ``1 <= k <= min(m, n)``; default: the numerical rank of ``M_ref``
        (``σ_i > max(m, n) ε σ_1``).
    side : {"row", "column"}

    Returns
    -------
    ndarray (..., k)
        Angles in ``[0, π/2]`` (radians), ascending.
    """
    M_t = _stack("M_t", M_t)
    M_ref = check.finite_array("M_ref", M_ref, ndim=2, shape=M_t.shape[-2:])
    A, R = _oriented(M_t, side), _oriented(M_ref, side)
    _, s_ref, V_ref = np.linalg.svd(R, full_matrices=False)
    if s_ref[0] == 0:
        check.fail("M_ref", "<zero matrix>", "a non-zero matrix")
    if k is None:
        k = _reference_rank(s_ref, R.shape)
    else:
        k = check.positive_int("k", k, maximum=min(R.shape))
    _, s_t, V_t = np.linalg.svd(A, full_matrices=False)
    if np.any(s_t[..., 0] == 0):
        check.fail("M_t", "<a zero matrix>", "non-zero matrices (a zero matrix has no row space to compare)")
    return _angles(V_t[..., :k, :], V_ref[:k])


def _reference_rank(s_ref, shape):
    return int(np.sum(s_ref > max(shape) * np.finfo(float).eps * s_ref[0]))


def _angles(B, Vr):
    """Principal angles between the row spaces of the orthonormal rows ``B`` (..., k, n) and ``Vr`` (k, n)."""
    C = B @ Vr.T
    cos = np.linalg.svd(C, compute_uv=False)                                    # descending
    sin = np.sort(np.linalg.svd(B - C @ Vr, compute_uv=False), axis=-1)         # ascending: same order of θ
    # arccos loses half the digits near θ = 0 and arcsin near π/2: take each where it is accurate
    # (Björck & Golub 1973; the rounding of |cos|, |sin| > 1 is removed by the minimum)
    theta = np.where(sin < np.sqrt(0.5), np.arcsin(np.minimum(sin, 1.0)), np.arccos(np.minimum(cos, 1.0)))
    return theta


@dataclass(frozen=True)
class TrajectoryDiagnostics:
    """All spectral measures of one trajectory of matrices (:func:`diagnose`).

    Attributes
    ----------
    times : ndarray (T,)
    singular_values : ndarray (T, r)
    effective_rank : ndarray (T,)
    marginalised_rank : ndarray (T,)
        Effective rank without the top ``skip`` singular values.
    stable_rank : ndarray (T,)
    distance : ndarray (T,)
        Subspace distance to the reference (row spaces).
    max_angle : ndarray (T,)
        Largest principal angle between the top-``k_ref`` row spaces (``k_ref`` = rank of the reference), in
        radians.
    skip : int
    rtol : float or None
    """

    times: np.ndarray
    singular_values: np.ndarray
    effective_rank: np.ndarray
    marginalised_rank: np.ndarray
    stable_rank: np.ndarray
    subspace_distance: np.ndarray
    max_angle: np.ndarray
    skip: int
    rtol: float | None

    MEASURES = ("effective_rank", "marginalised_rank", "stable_rank", "subspace_distance", "max_angle")

    def __repr__(self):
        return (f"TrajectoryDiagnostics(T={self.times.size}, times {self.times[0]:g} … {self.times[-1]:g}, "
                f"effective rank {self.effective_rank[0]:.3g} → {self.effective_rank[-1]:.3g}, subspace distance "
                f"{self.subspace_distance[0]:.3g} → {self.subspace_distance[-1]:.3g}, max angle (rad) "
                f"{self.max_angle[0]:.3g} → {self.max_angle[-1]:.3g})")

    @public(measure=choice(MEASURES), method=choice(("steepest", "step")))
    def transitions(self, measure, n=1, method="steepest", scale="log", window=None) -> np.ndarray:
        """Transition times of one measure (:func:`diagnostics.steepest_changes` or
        :func:`~diagnostics.change_points`).

        Parameters
        ----------
        measure : str
            One of :attr:`MEASURES`.
        n : int
        method : {"steepest", "step"}
        scale : {"log", "linear"}
        window : int, optional
            Smoothing window of the ``"steepest"`` method.

        Returns
        -------
        ndarray (n,)
        """
        from ._transitions import change_points, steepest_changes

        series = getattr(self, measure)
        if method == "step":
            return change_points(series, self.times, n=n, scale=scale)
        return steepest_changes(series, self.times, n=n, scale=scale, window=window)


@public(rtol=_RTOL)
def diagnose(M, times=None, reference=None, skip=1, rtol=None, k=None, rng=0, progress=False) -> TrajectoryDiagnostics:
    r"""Every spectral measure of a trajectory ``M(t)`` from one SVD per matrix.

    Effective rank, marginalised effective rank (top ``skip`` removed), stable rank, subspace distance
    ``‖M_ref(I − M_t⁺M_t)‖_F/‖M_ref‖_F`` and the largest principal angle to the reference (definitions:
    module docstring; Roy & Vetterli 2007, Mainali & Teixeira 2025).

    Parameters
    ----------
    M : array_like (T, m, n)
        The trajectory, e.g. a circuit of one head over checkpoints.
    times : array_like (T,), optional
        Strictly increasing times or steps (default ``1, …, T``).
    reference : array_like (m, n), optional
        Non-zero. Default: the last matrix ``M(T)`` (the trained weights), which must then be non-zero
        (``ValueError`` naming ``M``).
    skip : int
        Top singular values removed by the marginalised rank, ``0 <= skip < min(m, n)``.
    rtol : float, optional
        Cutoff of the pseudo-inverse in the subspace distance (:func:`subspace_distance`).
    k : int, optional
        Top singular triplets only (``skip < k <= min(m, n)``), by a randomised SVD for ``min(m, n) >= 256``
        (:func:`singular_values`): for long trajectories of large matrices. The ranks are then those of the top
        ``k`` (the stable rank stays exact: ``‖M‖_F²`` is summed directly), and the row spaces of the distance and
        the angles have dimension at most ``k``.
    rng : int or numpy.random.Generator
        Seed of the randomised SVD.
    progress : bool
        Progress bar (one SVD per checkpoint).

    Returns
    -------
    TrajectoryDiagnostics
        Per record (``T`` of them): the singular values, effective, marginalised and stable ranks, the subspace
        distance to the reference and the largest principal angle; ``.transitions(measure)`` locates the steepest
        changes of any of them.

    Examples
    --------
    >>> import numpy as np, diagnostics
    >>> times = np.geomspace(1e-4, 100, 50)
    >>> M = np.zeros((50, 4, 4))                   # a second direction grows in: rank 1 → 2
    >>> M[:, 0, 0], M[:, 1, 1] = 1.0, 1 - np.exp(-times / 10)
    >>> d = diagnostics.diagnose(M, times, rtol=0.01)   # rtol: directions below 1 % of the largest are dropped
    >>> round(float(d.subspace_distance[0]), 3), float(d.subspace_distance[-1])   # to the final subspace
    (0.707, 0.0)
    >>> round(float(d.stable_rank[0]), 3), round(float(d.stable_rank[-1]), 3)
    (1.0, 2.0)
    """
    M = _stack("M", M)
    if M.ndim != 3 or M.shape[0] < 2:
        check.fail("M", f"<array with shape {M.shape}>", "a trajectory (T, m, n) with T >= 2")
    T = M.shape[0]
    t = np.arange(1.0, T + 1) if times is None else check.finite_array("times", times, ndim=1, shape=(T,))
    if np.any(np.diff(t) <= 0):
        check.fail("times", "<array>", "strictly increasing times")
    R = M[-1] if reference is None else check.finite_array("reference", reference, ndim=2, shape=M.shape[1:])
    ref_name = "M" if reference is None else "reference"        # the default reference is the last matrix M[-1]
    if not np.any(R):
        check.fail(ref_name, "<zero matrix>" if reference is not None else "<trajectory whose last matrix is zero>",
                   "a non-zero matrix" if reference is not None else
                   "a trajectory whose last matrix M[-1] (the default reference) is non-zero, or pass reference")
    r = min(M.shape[1:])
    skip = check.nonneg_int("skip", skip, maximum=r - 1)
    kk = _top_k("k", k, M)
    if kk <= skip:
        check.fail("k", k, f"an integer > skip = {skip}")
    gen = rng
    _, s, Vt = _svd(M, kk, True, gen, progress, "diagnose")
    _, s_ref, V_ref = _svd(R[None], kk, True, gen, False, "")
    s_ref, V_ref = s_ref[0], V_ref[0]
    if s_ref[0] == 0:
        check.fail(ref_name, "<matrix whose singular values are all 0>", "a non-zero matrix" if reference is not None
                   else "a trajectory whose last matrix M[-1] (the default reference) is non-zero, or pass reference")
    k_ref = _reference_rank(s_ref, R.shape)
    # scale-free measures from matrices divided by their largest entries (no overflow of ‖M‖² at 1e200, no
    # underflow at 1e-300): ‖M‖_F²/σ₁² exact also when only the top k are computed
    peak = np.abs(M).max(axis=(1, 2))
    peak = np.where(peak > 0, peak, 1.0)
    fro2 = np.sum((M / peak[:, None, None]) ** 2, axis=(1, 2))
    s1 = s[:, 0] / peak
    distance = _distance(Vt, _keep(s, rtol, None, M.shape[1:]), R / np.abs(R).max())
    if rtol is None and np.all(distance <= 1e-12):
        import warnings

        warnings.warn("diagnose: the subspace distance is 0 at every record — the matrices have full row rank at "
                      "the default cutoff, so every row space is the whole space and the distance says nothing; pass "
                      "rtol (e.g. rtol=0.01: singular values below 1 % of the largest are dropped) to compare their "
                      "dominant subspaces", UserWarning, stacklevel=2)
    return TrajectoryDiagnostics(
        times=t, singular_values=s, effective_rank=_entropy_rank(s), marginalised_rank=_entropy_rank(s[:, skip:]),
        stable_rank=np.divide(fro2, s1**2, out=np.zeros_like(fro2), where=s1 > 0),
        subspace_distance=distance, max_angle=_angles(Vt[:, :k_ref], V_ref[:k_ref])[:, -1], skip=skip,
        rtol=None if rtol is None else float(rtol))
