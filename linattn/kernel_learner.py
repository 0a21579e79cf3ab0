r"""Exact test errors of the kernel learner (fixed Hermite feature map, then linear attention).

The kernel learner of Gu, Xu & Zdeborová (conventions §5, §6.3; simulated in :mod:`validation.simulators.learners`)
embeds every token through a fixed feature map ``φ : R^D → R^F`` and applies linear attention to the features:

.. math:: ŷ = s_φᵀ Γ φ(x_q),\qquad s_φ = \frac1N \sum_{i=1}^N y_i φ(x_i),\qquad Γ ∈ R^{F×F},

with labels ``y = f(w·x/√D) + σε`` (any link ``f``, ``pb.link``). Two maps (:data:`FEATURES`):

* ``"hermite2"``: ``φ(x) = [x, (x_a² − 1)/√2 (a = 1..D), x_a x_b (a < b, row-major)]``, ``F = D + D(D+1)/2`` — the
  Hermite polynomials of degree 1 and 2, orthonormal under ``N(0, I_D)`` (the order of
  ``validation.simulators.learners.hermite_features``);
* ``"linear"``: ``φ(x) = x`` (``F = D``), the library's reduced model.

:func:`kernel_test_error` returns the exact ``E_g = ½ E(y_q − ŷ)²`` on a fresh prompt — no Monte Carlo.

Derivation (the full text, with the checks, is ``docs/kernel_learner.md``)
------------------------------------------------------------------------------
*Matrix notation for the quadratic block.* The quadratic features are the isometric image of the symmetric-matrix
feature ``Φ_Q(x) = (x xᵀ − I)/√2``: a coordinate vector ``q ∈ R^{D(D+1)/2}`` corresponds to the symmetric matrix
``B`` with ``B_aa = q_a``, ``B_ab = B_ba = q_{ab}/√2``, so that ``q·φ_Q(x) = ⟨B, Φ_Q(x)⟩_F`` and ``|q| = ‖B‖_F``.
A feature-space vector ``θ ∈ R^F`` is a pair ``(u, B)``, ``u ∈ R^D``; each column ``γ_j`` of ``Γ`` is a pair
``(u_j, B_j)``.

*Conditioning on the task.* Let ``r = |w|²/D``, ``ŵ = w/|w|``, ``g = ŵ·x ~ N(0, 1)``, ``z = x − gŵ`` (independent
of ``g``, covariance ``P_⊥ = I − ŵŵᵀ``), so ``y = f(√r g) + σε``. The query is independent of the context given
``w`` and ``E[φ(x_q)φ(x_q)ᵀ] = I_F``, hence

.. math:: E_g = ½\,E_w\big[V(w) − 2\,mᵀΓm + \operatorname{tr}(Γᵀ S Γ)\big],\qquad
          S = E[s_φ s_φᵀ | w] = \big(1 − \tfrac1N\big) m mᵀ + \tfrac1N M_4,

with ``V(w) = E[y² | w]``, ``m = E[y φ(x) | w]`` and ``M_4 = E[y² φ(x)φ(x)ᵀ | w]``. Only ``g`` carries the label,
so with the radial moments

.. math:: μ_1(r) = E[g f(√r g)],\quad μ_2(r) = E[(g² − 1) f(√r g)],\quad
          e_k(r) = E[g^k f(√r g)²] + σ² E g^k\quad (k = 0..4)

(``μ₁(1) = μ₁`` of ``pb.hermite``; ``μ₂(1)/√2`` is the degree-2 Hermite coefficient; ``V = e₀``):

.. math::
   m &= \big(μ_1 ŵ,\; μ_2\, ŵŵᵀ/√2\big)
      \quad\text{(coordinates } [μ_1 ŵ_a,\ μ_2 ŵ_a²/√2,\ μ_2 ŵ_a ŵ_b]\text{)},\\
   θᵀ M_4 θ &= e_0 (|u|² + ‖B‖²) + (e_2 − e_0)(u·ŵ)² + √2 (e_3 − e_1)(u·ŵ)(ŵᵀBŵ)
      + 2√2\, e_1\, uᵀ P_⊥ B ŵ \\
      &\quad + 2 (e_2 − e_0) |Bŵ|² + ½ (e_4 − 6 e_2 + 3 e_0)(ŵᵀBŵ)²,

the last from ``⟨B, xxᵀ − I⟩ = (g² − 1) ŵᵀBŵ + 2g ŵᵀBz + (zᵀBz − tr BP_⊥)`` and Isserlis' theorem in ``z``. The
terms odd in ``g`` (``e₁``, ``e₃``) couple the linear and quadratic blocks when ``f²`` is not even (``relu``).
``tr(ΓᵀM₄Γ) = Σ_j γ_jᵀ M₄ γ_j`` is evaluated column by column with ``Bŵ`` (``O(D² F)`` per task), never as an
``F² × F²`` tensor.

*Averaging over the task.* A pool (``tasks=W``): the uniform average of the expression above over the rows of
``W``. Fresh tasks: ``ŵ`` is uniform on the sphere and independent of ``r`` (``r ~ χ²_D/D`` for Gaussian tasks,
``r = 1`` for ``task_law="sphere"``); with ``E ŵ_aŵ_b = δ_ab/D``, odd moments 0 and
``E ŵ_aŵ_bŵ_cŵ_d = (δ_abδ_cd + δ_acδ_bd + δ_adδ_bc)/(D(D + 2))``, and ``n_L = ‖Γ_{L·}‖²``, ``n_Q = ‖Γ_{Q·}‖²``
(rows of the linear / quadratic block), ``n_T = Σ_j (tr B_j)²``, ``I_Q = Σ_{a,c ≤ D} Γ_{Q_aQ_c} + 2 tr Γ_{QQ}``
(the diagonal features ``Q_a``):

.. math::
   E_g = ½\Big[V − 2\Big(\bar μ_1^2 \frac{\operatorname{tr}Γ_{LL}}{D} + \bar μ_2^2 \frac{I_Q}{2D(D+2)}\Big)
        + \big(1 − \tfrac1N\big)\Big(\bar μ_1^2 \frac{n_L}{D} + \bar μ_2^2 \frac{n_T + 2n_Q}{2D(D+2)}\Big)
        + \frac1N\Big(\bar e_0 (n_L + n_Q) + (\bar e_2 − \bar e_0)\frac{n_L + 2 n_Q}{D}
        + (\bar e_4 − 6\bar e_2 + 3\bar e_0)\frac{n_T + 2n_Q}{2D(D+2)}\Big)\Big],

bars denoting ``r``-averages (``\bar μ_1^2 = E_r μ_1(r)²``: ``pb.teacher_strength``; ``\bar e_0 = V``,
``\bar e_2`` from :func:`linattn.links.radial_moments`). For ``φ(x) = x`` only the ``L`` terms remain and this is
``½[V − 2b trΓ/D + c‖Γ‖²]`` of conventions §6.3 (:meth:`linattn.Problem.test_error`), with ``N`` the context
length of the evaluation prompts (``N_test``).

Quadrature: the ``g``-integrals use the converged composite Gauss–Legendre rule of :mod:`linattn.links` (panels
with an edge at 0, so the kinks of ``relu`` and ``sign`` cost nothing; plain Gauss–Hermite converges only
algebraically there) and the ``r``-average its composite rule for the ``χ_D/√D`` density (Gauss–Laguerre in ``r``
converges only algebraically for ``tanh``); both are refined until two orders agree to ``links.TOL``. Linear links
``f(u) = a u`` use closed forms (``μ₁ = a√r``, ``μ₂ = 0``, ``e_k = a² r E g^{k+2} + σ² E g^k``).

References
----------
.. [1] H. Gu, Y. Xu, L. Zdeborová, kernel vs feature learners of nonlinear in-context learning (2026): the two
   learners and the Hermite expansion of the link.
.. [2] M. Letey, A. Rysmakhanov, Y. M. Lu et al., the nonlinearity–noise equivalence (2025): the linear block.
"""
from __future__ import annotations

import functools

import numpy as np

from . import check, links

#: the feature maps: degree-2 Hermite features, or the identity (the reduced model)
FEATURES = ("hermite2", "linear")
#: Gaussian moments E g^k, k = 0..6
_GAUSS = (1.0, 0.0, 1.0, 0.0, 3.0, 0.0, 15.0)
#: task rows processed together (bounds the (rows, D, F) workspace of B_j ŵ)
_CHUNK_NUMBERS = 1 << 21


def n_features(D, features="hermite2") -> int:
    """Dimension ``F`` of the feature map: ``D + D(D+1)/2`` (``"hermite2"``) or ``D`` (``"linear"``).

    Parameters
    ----------
    D : int
    features : {"hermite2", "linear"}

    Returns
    -------
    int
    """
    D = check.positive_int("D", D)
    check.choice("features", features, FEATURES)
    return D if features == "linear" else D + D * (D + 1) // 2


# --------------------------------------------------------------------------- radial moments
def _moments_at(link, scales, n):
    """``[μ₁, μ₂, E f², E g f², E g² f², E g³ f², E g⁴ f²]`` of ``f(s g)`` for each scale ``s`` (noise-free), with the
    half-line composite rule of :mod:`linattn.links` at ``n`` nodes per unit panel."""
    z, logw = links.half_rule(n)
    z2 = z * z
    with np.errstate(all="ignore"):
        F = link(np.multiply.outer(scales, z))
        w = np.exp(logw)
        Fw, F2w = F * w, F * F * w
        terms = [z * Fw, (z2 - 1.0) * Fw, F2w, z * F2w, z2 * F2w, z2 * z * F2w, z2 * z2 * F2w]
        if not all(np.isfinite(t).all() for t in terms) and np.isfinite(F).all():
            # f² g⁴ overflowed where the Gaussian weight is negligible (a polynomial link at a large scale):
            # f^p g^k w = sign · exp(p log|f| + log w) · g^k instead (log|0| = −inf gives an exact 0)
            sign, logf = np.sign(F), np.log(np.abs(F))
            one, two = sign * np.exp(logf + logw), np.exp(2.0 * logf + logw)
            terms = [z * one, (z2 - 1.0) * one, two, z * two, z2 * two, z2 * z * two, z2 * z2 * two]
        out = np.stack([t.sum(axis=-1) for t in terms], axis=1)
        tail = np.abs(z) > links.CUTOFF - 1
        tails = np.stack([np.abs(t[:, tail]).sum(axis=-1) for t in terms], axis=1)
    if not (np.all(np.isfinite(out)) and np.all(tails <= links.link_tolerance(link) * np.maximum(np.abs(out), 1.0))):
        big = float(np.max(scales))
        raise ValueError(f"link must have finite label moments E[g⁴ f(√r g)²] at √r = |w|/√D = {big:.4g}; {link.name} "
                         f"does not (the integrand does not decay by |g| = {links.CUTOFF}, or overflows float64)")
    return out


def _closed_linear(link, r, noise2):
    """Per-task coefficients ``(μ₁, μ₂, e₀..e₄)`` of a linear link ``f(u) = a u`` (closed forms), shape (7, K)."""
    a2 = float(link.slope) ** 2
    mu1 = float(link.slope) * np.sqrt(r)
    e = [a2 * r * _GAUSS[k + 2] + noise2 * _GAUSS[k] for k in range(5)]
    return np.stack([mu1, np.zeros_like(r), *e])


def _task_coefficients(pb, r):
    """``(μ₁, μ₂, e₀, …, e₄)`` (module docstring; ``e_k`` with the noise) at each norm ratio ``r``, shape (7, K)."""
    s2 = pb.noise**2
    if pb.link.is_linear:
        return _closed_linear(pb.link, r, s2)
    uniq, inverse = np.unique(r, return_inverse=True)
    try:
        m = links.until_converged(lambda n: _moments_at(pb.link, np.sqrt(uniq), n), links.ORDERS,
                                   "the label moments at the tasks' norms", pb.link)[inverse]
    except ValueError as err:       # the link passed at the Gaussian task norms: blame the tasks' norms
        top = float(np.sqrt(uniq[-1]))
        raise ValueError(f"tasks must have norms at which the label moments of link {pb.link.name} exist and the "
                         f"quadrature converges; got rows with √r = |w|/√D up to {top:.4g}") from err
    out = m.T.copy()
    for k in range(5):
        out[2 + k] += s2 * _GAUSS[k]
    return out


@functools.lru_cache(maxsize=256)
def _gaussian_extra(link, D):
    """``(E_r μ₂(r)², E_r E[g⁴ f(√r g)²])`` for ``r ~ χ²_D/D`` (noise-free), converged in both rules like
    :func:`linattn.links.radial_moments`."""
    def average(n_r):
        r, w = links.r_rule(D, n_r)
        keep = w > 0.0
        r, w = r[keep], w[keep]

        def at_order(n):
            m = _moments_at(link, np.sqrt(r), n)
            return np.array([w @ m[:, 1] ** 2, w @ m[:, 6]])
        return links.until_converged(at_order, links.ORDERS, f"the label moments at D = {D}", link)

    out = links.until_converged(average, links.R_ORDERS, f"the average over the task norm χ²_{D}/{D}", link)
    return float(out[0]), float(out[1])


def _fresh_coefficients(pb, quadratic):
    """r-averaged ``(μ̄₁², μ̄₂², ē₀, ē₂, ē₄)`` (with the noise) for a fresh task of the problem's task law
    (``μ̄₂²``, ``ē₄`` only for the quadratic block: NaN otherwise)."""
    s2 = pb.noise**2
    if pb.task_law == "sphere":                 # r = 1 exactly
        mu1, mu2, e0, _, e2, _, e4 = _task_coefficients(pb, np.ones(1))[:, 0]
        return mu1 * mu1, mu2 * mu2, e0, e2, e4
    if pb.link.is_linear:                       # E r = 1
        a2 = float(pb.link.slope) ** 2
        return a2, 0.0, a2 + s2, 3.0 * a2 + s2, 15.0 * a2 + 3.0 * s2
    rm = links.radial_moments(pb.link, pb.D)
    mu2_sq, e4 = _gaussian_extra(pb.link, pb.D) if quadratic else (np.nan, np.nan)
    return rm.phi1_sq, mu2_sq, rm.phi2 + s2, rm.phi22 + s2, e4 + 3.0 * s2


# --------------------------------------------------------------------------- the error
def _fresh_error(pb, G, D, quadratic, N):
    """Fresh-task error (the sphere-averaged formula of the module docstring)."""
    a1, a2, e0, e2, e4 = _fresh_coefficients(pb, quadratic)
    nL = float(np.sum(G[:D] ** 2))
    overlap = a1 * np.trace(G[:D, :D]) / D
    mean_sq = a1 * nL / D
    fourth = e0 * nL + (e2 - e0) * nL / D
    if quadratic:
        nQ = float(np.sum(G[D:] ** 2))
        nT = float(np.sum(np.sum(G[D:2 * D], axis=0) ** 2))
        IQ = float(np.sum(G[D:2 * D, D:2 * D])) + 2.0 * np.trace(G[D:, D:])
        den = 2.0 * D * (D + 2)
        overlap += a2 * IQ / den
        mean_sq += a2 * (nT + 2.0 * nQ) / den
        fourth += e0 * nQ + 2.0 * (e2 - e0) * nQ / D + (e4 - 6.0 * e2 + 3.0 * e0) * (nT + 2.0 * nQ) / den
    return 0.5 * (e0 - 2.0 * overlap + (1.0 - 1.0 / N) * mean_sq + fourth / N)


def _sym_tensor(G, D):
    """The quadratic rows of ``Γ`` as symmetric matrices: ``B[:, :, j]`` of column ``j`` (module docstring)."""
    F = G.shape[1]
    B = np.empty((D, D, F))
    idx = np.arange(D)
    B[idx, idx] = G[D:2 * D]
    a, b = np.triu_indices(D, 1)
    off = G[2 * D:] / np.sqrt(2.0)
    B[a, b] = off
    B[b, a] = off
    return B


def _per_task_errors(pb, G, tasks, quadratic, N):
    """Exact error of ``Γ`` on each task (row of ``tasks``), fresh tokens and noise: an array of shape (K,)."""
    K, D = tasks.shape
    norm = np.sqrt(np.einsum("kd,kd->k", tasks, tasks))
    r = norm**2 / D
    what = np.divide(tasks, norm[:, None], out=np.zeros_like(tasks), where=norm[:, None] > 0)
    mu1, mu2, e0, e1, e2, e3, e4 = _task_coefficients(pb, r)
    GL = G[:D]
    total = float(np.sum(G * G))
    F = G.shape[1]
    B = _sym_tensor(G, D) if quadratic else None
    a, b = np.triu_indices(D, 1)
    out = np.empty(K)
    step = max(1, _CHUNK_NUMBERS // (D * F))
    for lo in range(0, K, step):
        sl = slice(lo, min(K, lo + step))
        wh = what[sl]
        t = wh @ GL                                           # u_j·ŵ
        m = mu1[sl, None] * wh                                # m = (μ₁ŵ, μ₂ q(ŵŵᵀ)/√2)
        if quadratic:
            m = np.concatenate([m, (mu2[sl, None] / np.sqrt(2.0)) * wh * wh,
                                mu2[sl, None] * wh[:, a] * wh[:, b]], axis=1)
        C = m @ G                                             # Γᵀm
        overlap = np.einsum("kj,kj->k", C, m)
        mean_sq = np.einsum("kj,kj->k", C, C)
        fourth = e0[sl] * total + (e2 - e0)[sl] * np.einsum("kj,kj->k", t, t)
        if quadratic:
            Bw = np.einsum("abj,kb->kaj", B, wh)              # B_j ŵ
            beta = np.einsum("kaj,ka->kj", Bw, wh)            # ŵᵀ B_j ŵ
            uBw = np.einsum("aj,kaj->kj", GL, Bw)             # u_jᵀ B_j ŵ
            t_beta = np.einsum("kj,kj->k", t, beta)
            fourth += (np.sqrt(2.0) * (e3 - e1)[sl] * t_beta
                       + 2.0 * np.sqrt(2.0) * e1[sl] * (np.sum(uBw, axis=1) - t_beta)
                       + 2.0 * (e2 - e0)[sl] * np.einsum("kaj,kaj->k", Bw, Bw)
                       + 0.5 * (e4 - 6.0 * e2 + 3.0 * e0)[sl] * np.einsum("kj,kj->k", beta, beta))
        out[sl] = 0.5 * (e0[sl] - 2.0 * overlap + (1.0 - 1.0 / N) * mean_sq + fourth / N)
    return out


def kernel_test_error(pb, Gamma, features="hermite2", tasks=None, N_test=None) -> float:
    r"""Exact test error ``E_g = ½ E(y_q − ŷ)²`` of the kernel learner ``ŷ = s_φᵀ Γ φ(x_q)`` (module docstring).

    .. math:: E_g = ½\,E_w\big[V − 2\,mᵀΓm + (1 − 1/N)\,|Γᵀm|² + \operatorname{tr}(Γᵀ M_4 Γ)/N\big]

    with ``m = E[yφ(x) | w]`` and ``M₄ = E[y²φ(x)φ(x)ᵀ | w]`` in closed form from the link's radial moments up to
    degree 2 in ``f`` and 4 in ``g`` (Gu, Xu & Zdeborová's kernel learner; derivation in ``docs/kernel_learner.md``).
    Cost ``O(F²)`` for fresh tasks, ``O(K D² F)`` for ``K`` tasks; no Monte Carlo.

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs (``covariance=None``), any link and noise.
    Gamma : array_like, shape (F, F)
        ``F = D + D(D+1)/2`` for ``"hermite2"``, ``D`` for ``"linear"`` (:func:`n_features`); rows and columns in
        the order of the feature map (module docstring).
    features : {"hermite2", "linear"}
        The feature map ``φ``.
    tasks : None or array_like, shape (K, D)
        ``None``: a fresh task of the problem's task law (``w ~ N(0, I_D)``, or uniform on ``|w|² = D`` when
        ``pb.task_law == "sphere"``) — the ICL error. Otherwise the uniform average over the rows ``w_k`` (fresh tokens
        and noise): the in-distribution error when the rows are the training pool.
    N_test : None or int
        Context length of the evaluation prompts (default ``pb.N``); ``s_φ``'s moments depend on it.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``pb`` not a Problem or anisotropic; ``features`` unknown; ``Gamma`` not a finite ``F × F`` array;
        ``tasks`` not a finite ``K × D`` array (``K >= 1``) or with norms at which the label moments do not exist;
        ``N_test`` not a positive integer; a result that overflows float64.

    Examples
    --------
    >>> import numpy as np, linattn
    >>> pb = linattn.Problem(D=4, N=8, noise=0.1, link="tanh")
    >>> round(kernel_test_error(pb, np.zeros((14, 14))), 6) == round(0.5 * pb.label_variance, 6)
    True
    """
    pb = check.problem(pb)
    if pb.covariance is not None:
        check.fail("pb", pb, "a Problem with isotropic inputs (covariance=None) for the kernel learner's exact error")
    check.choice("features", features, FEATURES)
    D = pb.D
    F = n_features(D, features)
    G = check.finite_array("Gamma", Gamma, shape=(F, F))
    N = pb.N if N_test is None else check.positive_int("N_test", N_test)
    quadratic = features == "hermite2"
    with np.errstate(over="ignore", invalid="ignore"):
        if tasks is None:
            out = _fresh_error(pb, G, D, quadratic, N)
            culprits = {"Gamma": G}
        else:
            W = check.finite_array("tasks", tasks, shape=(None, D))
            if W.shape[0] < 1:
                check.fail("tasks", f"<array with shape {W.shape}>", f"an array of shape (K, {D}) with K >= 1")
            out = float(np.mean(_per_task_errors(pb, G, W, quadratic, N)))
            culprits = {"Gamma": G, "tasks": W}
    check.finite_result(out, culprits, "the kernel learner's test error")
    return float(out)
