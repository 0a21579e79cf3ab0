r"""The kernel learner's theory, its prompt types: the query scales ``R = |x_q|²`` with the block norms of ``φ(x_q)``,
the label moments given ``(w, R)``, and the contexts ``s_φ`` sampled from raw tokens — fresh tasks stratified over the
task norm, or a pool's tasks in turn (Gu, Xu & Zdeborová; derivation: :mod:`replica._kernel_theory`).

The irreducible blocks of ``φ`` under rotations of the query: the linear block ``L`` (dimension ``D``), the trace
direction ``T`` of the quadratic block (dimension 1) and its traceless complement ``Q`` (``D(D+1)/2 − 1``); one block
``L`` for the linear map ``φ(x) = x``.
"""
from __future__ import annotations

import numpy as np
from scipy import special

from linattn import _check as check
from linattn import _sampling as sampling
from linattn._kernel_errors import block_directions, context_features, n_features
from linattn._numerics import quadrature

#: Gauss–Jacobi nodes per half of c ∈ [−1, 1] (the label moments given |x_q|²)
N_COSINE = 48


def block_dims(D, features):
    """Dimensions ``d_k`` of the irreducible blocks ``(L, T, Q)`` (``(L,)`` for the linear map)."""
    return np.array([D], float) if features == "linear" else np.array([D, 1.0, D * (D + 1) / 2 - 1.0])


def _chi_square_nodes(D, per_panel=6):
    """Nodes and weights of ``χ²_D/D``: the library's composite Gauss–Legendre rule in ``√r`` for the ``χ_D/√D`` density
    (:func:`linattn.links.radial_moments`; exponentially convergent for functions of ``√r``, where Gauss–Laguerre in
    ``r`` converges only algebraically), nodes of relative weight ``< 1e-12`` dropped."""
    r, w = quadrature.chi_square_rule(D, per_panel)
    keep = w > 1e-12 * w.max()
    return r[keep], w[keep] / w[keep].sum()


def query_scales(D, features="hermite2"):
    r"""Nodes ``R`` of ``|x_q|² ~ χ²_D`` (:func:`_chi_square_nodes`), their weights, and the squared block norms
    ``ρ_k(R)`` of ``φ(x_q)`` (:mod:`replica._kernel_theory`): ``ρ_L = R``, ``ρ_T = (R − D)²/(2D)``,
    ``ρ_Q = R²(1 − 1/D)/2``.

    Parameters
    ----------
    D : int
    features : {"hermite2", "linear"}
        ``"linear"``: one block, ``ρ_L = R``.

    Returns
    -------
    R, w : ndarray (n,)
    rho : ndarray (n, n_blocks)
    """
    D = check.positive_int("D", D)
    check.choice("features", features, ("hermite2", "linear"))
    r, w = _chi_square_nodes(D)
    R = D * r
    if features == "linear":
        return R, w, R[:, None]
    return R, w, np.stack([R, (R - D) ** 2 / (2.0 * D), R * R * (1.0 - 1.0 / D) / 2.0], axis=1)


def _cosine_rule(D, n=N_COSINE):
    """Nodes ``c ∈ (0, 1]`` and weights with ``E g(c) = Σ w (g(c) + g(−c))/2`` for ``c = ŵ·x̂`` (density
    ``∝ (1 − c²)^{(D−3)/2}``): Gauss–Jacobi in ``(1 − c)^α`` on ``[0, 1]`` times ``(1 + c)^α``."""
    al = (D - 3) / 2.0
    x, w = special.roots_jacobi(n, al, 0.0)
    c = 0.5 * (x + 1.0)
    w = w * (1.0 + c) ** al
    return c, w / w.sum()


def label_moments(pb, r, R, features="hermite2", n=N_COSINE):
    r"""Coefficients of ``m_R(w)`` on the block directions ``u_k(w)`` and ``E[y² | w, R]``
    (:mod:`replica._kernel_theory`).

    Parameters
    ----------
    pb : linattn.Problem
    r : ndarray (n_r,)
        Task norm ratios ``|w|²/D``.
    R : ndarray (n_R,)
        Query norms ``|x_q|²``.
    features : {"hermite2", "linear"}
    n : int
        Gauss–Jacobi nodes per half of ``c ∈ [−1, 1]``.

    Returns
    -------
    mco : ndarray (n_r, n_R, n_blocks)
        ``m_R(w) = Σ_k mco_k u_k(w)`` with ``u_L = ŵ``, ``u_T = t``, ``u_Q = b̂_w``.
    Ey2 : ndarray (n_r, n_R)
    """
    D = pb.D
    rR = np.multiply.outer(r, R)
    if pb.link.is_linear:
        a = float(pb.link.slope)
        F0 = F2 = np.zeros_like(rR)
        F1, F00 = a * np.sqrt(rR) / D, a * a * rR / D
    else:
        if D < 2:
            check.fail("pb", pb, "a problem with D >= 2 for the kernel learner's theory")
        c, w = _cosine_rule(D, n)
        sc = np.sqrt(rR)[..., None] * c
        with np.errstate(all="ignore"):
            fp, fm = pb.link(sc), pb.link(-sc)
            F0 = 0.5 * (fp + fm) @ w
            F1 = 0.5 * ((fp - fm) * c) @ w
            F2 = 0.5 * ((fp + fm) * c * c) @ w
            F00 = 0.5 * (fp * fp + fm * fm) @ w
    mL = np.sqrt(R) * F1
    if features == "linear":
        mco = mL[..., None]
    else:
        A = R * F2 - R * (F0 - F2) / (D - 1)
        mco = np.stack([mL, (R - D) * F0 / np.sqrt(2.0 * D), A * np.sqrt((1.0 - 1.0 / D) / 2.0)], axis=-1)
    out = (mco, F00 + pb.noise**2)
    check.finite_result(np.concatenate([out[0].ravel(), out[1].ravel()]), {"pb.noise": pb.noise},
                        "the label moments given |x_q|²")
    return out


def unit_rows(W):
    """The rows of ``W`` divided by their norms (zero rows stay zero)."""
    norm = np.linalg.norm(W, axis=1, keepdims=True)
    return np.divide(W, norm, out=np.zeros_like(W), where=norm > 0)


def _contexts(pb, W, rng, features):
    """``s_φ`` of one context per row of ``W`` (its task), from raw tokens (:func:`linattn.sample_tokens`), in
    batches: yields ``(lo, hi, s)``."""
    N, D = pb.N, pb.D
    F = n_features(D, features)
    batch = max(1, (1 << 22) // (N * (F + D)))
    for lo in range(0, W.shape[0], batch):
        hi = min(W.shape[0], lo + batch)
        tok = sampling.sample_tokens(pb, hi - lo, rng, w=W[lo:hi])
        yield lo, hi, context_features(tok.X, tok.y, features)


def _block_norms(s, D, features):
    """``σ_l = |Π_l s|²`` per row, blocks ``(L, T, Q)`` (``(L,)`` for the linear map)."""
    sL = np.einsum("nf,nf->n", s[:, :D], s[:, :D])
    if features == "linear":
        return sL[:, None]
    pT = np.sum(s[:, D:2 * D], axis=1) / np.sqrt(D)
    return np.stack([sL, pT * pT, np.einsum("nf,nf->n", s[:, D:], s[:, D:]) - pT * pT], axis=1)


def fresh_types(pb, n, rng, features="hermite2", n_groups=4):
    """A sample of context types for fresh Gaussian tasks, stratified over the nodes of ``r = |w|²/D ~ χ²_D/D``
    (:func:`_chi_square_nodes`):
    ``⌈n/(n_nodes n_groups)⌉ n_groups`` contexts per node, each from raw tokens with a uniformly random direction.

    Parameters
    ----------
    pb : linattn.Problem
    n : int
        Contexts wanted (rounded up to a multiple of ``n_nodes n_groups``).
    rng : numpy.random.Generator
    features : {"hermite2", "linear"}
    n_groups : int
        Disjoint groups (for the standard error).

    Returns
    -------
    dict
        ``r`` (nodes), ``node`` (per context), ``weight`` (per context, summing to 1), ``group`` (per context, the
        ``n_groups`` disjoint groups of the standard error), ``sig`` (``σ_l``, (n, n_blocks)) and ``p`` (the overlaps
        ``Π_l s · u_l(w)``, (n, n_blocks)).
    """
    D = pb.D
    r, w = _chi_square_nodes(D)
    per = n_groups * max(1, -(-n // (r.size * n_groups)))
    node = np.repeat(np.arange(r.size), per)
    what = unit_rows(rng.standard_normal((node.size, D)))
    W = what * np.sqrt(D * r[node])[:, None]
    nb = block_dims(D, features).size
    sig, p = np.empty((node.size, nb)), np.empty((node.size, nb))
    for lo, hi, s in _contexts(pb, W, rng, features):
        sig[lo:hi] = _block_norms(s, D, features)
        p[lo:hi] = np.einsum("nf,nkf->nk", s, block_directions(what[lo:hi], features))
    return dict(r=r, node=node, weight=w[node] / per, group=np.tile(np.arange(per) % n_groups, r.size), sig=sig, p=p)


def sample_contexts(pb, W, rng, features="hermite2"):
    """``s_φ`` of one context per row of ``W`` (its task), from raw tokens (:func:`linattn.sample_tokens`).

    Parameters
    ----------
    pb : linattn.Problem
    W : ndarray (n, D)
        The task of each context.
    rng : numpy.random.Generator
    features : {"hermite2", "linear"}

    Returns
    -------
    ndarray (n, F)
    """
    s = np.empty((W.shape[0], n_features(pb.D, features)))
    for lo, hi, sb in _contexts(pb, W, rng, features):
        s[lo:hi] = sb
    return s


def contexts_memory(D, n, features, arguments="n_contexts"):
    """Refuse (:func:`linattn._check.memory`, naming ``arguments``) a random-scale theory on ``n`` sampled contexts
    whose arrays would not fit: per context (and query scale ``R``, ``n_R`` nodes) the label coefficients, the
    weights ``ω`` and the residuals, ``n_R (2 n_b + 6)`` floats, and the context's features and block directions,
    ``(n_b + 2) F`` (measured: 594 floats per context at ``D = 4`` for fresh tasks, 775 with a pool; estimate 775).

    Parameters
    ----------
    D, n : int
        Dimension and sampled contexts (rounded up by :func:`fresh_types` to whole strata: counted).
    features : {"hermite2", "linear"}
    arguments : str
        For the message.
    """
    nb, F = block_dims(D, features).size, n_features(D, features)
    n_R = _chi_square_nodes(D)[0].size
    n_eff = n + n_R * 4                     # fresh_types: whole strata of n_nodes n_groups contexts (n_groups <= 4)
    check.memory(8.0 * n_eff * (n_R * (2 * nb + 6) + nb * nb + 4 * nb + (nb + 2) * F),
                 f"the theory's arrays on {n} sampled contexts ({n_R} query scales, {F} features)", arguments)


def pool_types(pb, pool, n, rng, features="hermite2"):
    """``n`` contexts drawn from the rows of ``pool`` in turn (task ``i mod K``: stratified), from raw tokens.

    Parameters
    ----------
    pb : linattn.Problem
    pool : ndarray (K, D)
    n : int
    rng : numpy.random.Generator
    features : {"hermite2", "linear"}

    Returns
    -------
    s : ndarray (n, F)
    task : ndarray (n,) int
    """
    task = np.arange(n) % pool.shape[0]
    return sample_contexts(pb, pool[task], rng, features), task
