r"""Exact test errors of the kernel learner (fixed Hermite feature map, then linear attention).

The kernel learner of Gu, Xu & Zdeborová (conventions §5, §6.3; simulated in ``validation/simulators/_learner_sims.py``)
embeds every token through a fixed feature map ``φ : R^D → R^F`` and applies linear attention to the features:

.. math:: ŷ = s_φᵀ Γ φ(x_q),\qquad s_φ = \frac1N \sum_{i=1}^N y_i φ(x_i),\qquad Γ ∈ R^{F×F},

with labels ``y = f(w·x/√D) + σε`` (any link ``f``, ``pb.link``). Two maps (:data:`FEATURES`):

* ``"hermite2"``: ``φ(x) = [x, (x_a² − 1)/√2 (a = 1..D), x_a x_b (a < b, row-major)]``, ``F = D + D(D+1)/2`` — the
  Hermite polynomials of degree 1 and 2, orthonormal under ``N(0, I_D)`` (:func:`hermite_features`, the map of
  ``validation.simulators.learners``);
* ``"linear"``: ``φ(x) = x`` (``F = D``), the library's reduced model.

:func:`hermite_features` is the map itself. :func:`kernel_test_error` returns the exact ``E_g = ½ E(y_q − ŷ)²`` on a
fresh prompt — no Monte Carlo — and :func:`kernel_moments` the exact second moments it is made of
(``S̄ = E_w S(w)``, ``B = E_w m mᵀ``, ``V``: the moments of the ridge problem of the trained learner,
``replica/_kernel_theory.py``).

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
``F² × F²`` tensor. As a matrix (:func:`kernel_moments`), with ``a = α·θ = u·ŵ``, ``β = β_w·θ = ŵᵀBŵ`` and the map
``T_w θ = Bŵ ∈ R^D``, the same form reads
``M₄ = e₀ I + (e₂ − e₀) ααᵀ + (√2/2)(e₃ − 3e₁)(αβ_wᵀ + β_wαᵀ) + √2 e₁ (E_LᵀT_w + T_wᵀE_L) + 2(e₂ − e₀) T_wᵀT_w
+ ½(e₄ − 6e₂ + 3e₀) β_wβ_wᵀ`` (``E_L θ = u``; :func:`_m4_coefficients` is its one place), and ``m = μ₁α + μ₂β_w/√2``.

*Averaging over the task.* A pool (``pool=W``): the uniform average of the expression above over the rows of
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
``\bar e_2`` from :func:`linattn.links.radial_moments`). Equivalently, the fresh-task moments are invariant under
rotations and have three eigenspaces: the linear block ``L`` (dimension ``D``), the trace direction
``t = [0, 1_D/√D, 0]`` of the quadratic block (``n_T = D|tᵀΓ|²``) and its orthogonal complement ``Q⊥`` in the
quadratic block (dimension ``D(D+1)/2 − 1``); ``S̄ = E_w S`` and ``B = E_w m mᵀ`` have the eigenvalues

.. math::
   b_L = \frac{\bar μ_1^2}{D},\quad b_{Q⊥} = \frac{\bar μ_2^2}{D(D+2)},\quad b_T = \frac{\bar μ_2^2}{2D},\qquad
   S̄_X = (1 − \tfrac1N) b_X + \tfrac1N M_X,

   M_L = \bar e_0 + \frac{\bar e_2 − \bar e_0}{D},\quad
   M_{Q⊥} = \bar e_0 + \frac{2(\bar e_2 − \bar e_0)}{D} + \frac{\bar e_4 − 6\bar e_2 + 3\bar e_0}{D(D+2)},\quad
   M_T = \bar e_0 + \frac{2(\bar e_2 − \bar e_0)}{D} + \frac{\bar e_4 − 6\bar e_2 + 3\bar e_0}{2D}

(from ``E ααᵀ = Π_L/D``, ``E T_wᵀT_w = Π_Q/D``, ``E β_wβ_wᵀ = (D ttᵀ + 2Π_Q)/(D(D+2))``), and
``E_g = ½[V − 2⟨B, Γ⟩ + tr(ΓᵀS̄Γ)]`` is the formula above (:func:`fresh_blocks`). For ``φ(x) = x`` only the ``L``
terms remain and this is
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
from dataclasses import dataclass

import numpy as np

from . import _check as check
from . import _links as links
from ._arguments import array, choice, integer, optional, public
from ._numerics import quadrature
from ._results import short_repr
from ._validate import PROBLEM

#: the feature maps: degree-2 Hermite features, or the identity (the reduced model)
FEATURES = ("hermite2", "linear")
#: Gaussian moments E g^k, k = 0..6
_GAUSS = (1.0, 0.0, 1.0, 0.0, 3.0, 0.0, 15.0)
#: task rows processed together (bounds the (rows, D, F) workspace of B_j ŵ)
_CHUNK_NUMBERS = 1 << 21


@public(features=choice(FEATURES))
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
    return _n_features(D, features)


def _n_features(D, features="hermite2"):
    """:func:`n_features` of checked arguments."""
    return D if features == "linear" else D + D * (D + 1) // 2


@public(X=array(), features=choice(FEATURES))
def hermite_features(X, features="hermite2"):
    """The fixed feature map ``φ`` of the kernel learner, applied to the last axis (module docstring).

    Parameters
    ----------
    X : array_like (..., D)
        Tokens.
    features : {"hermite2", "linear"}
        ``"hermite2"``: ``[x_a, (x_a² − 1)/√2, x_a x_b (a < b, row-major)]`` (``F = D + D(D+1)/2``, orthonormal under
        ``N(0, I_D)``); ``"linear"``: ``x`` itself.

    Returns
    -------
    ndarray (..., F)

    Raises
    ------
    ValueError
        ``X`` not a finite array with a token axis of length ``D >= 1``; ``features`` unknown; quadratic features that
        overflow float64.
    """
    if X.ndim < 1 or X.shape[-1] < 1:
        check.fail("X", X if X.ndim < 1 else f"<array with shape {X.shape}>",
                   "an array whose last axis is the token dimension D >= 1")
    if features == "linear":
        return X
    D = X.shape[-1]
    check.memory(8.0 * 3 * (X.size // max(D, 1)) * _n_features(D), f"the {_n_features(D)} features of "
                 f"{X.size // max(D, 1)} tokens", "X")
    with np.errstate(over="ignore"):
        out = feature_map(X, features)
    return check.finite_result(out, {"X": X}, "its quadratic features")


def feature_map(X, features):
    """:func:`hermite_features` of a checked array (sampled tokens: the library's own calls)."""
    if features == "linear":
        return X
    a, b = np.triu_indices(X.shape[-1], 1)
    return np.concatenate([X, (X * X - 1.0) / np.sqrt(2.0), X[..., a] * X[..., b]], axis=-1)


def context_features(X, y, features):
    """``s_φ = (1/N) Σ_n y_n φ(x_n)`` of each context (tokens ``X`` (P, N, D), labels ``y`` (P, N)), without the
    ``(P, N, F)`` features: the quadratic block from ``M = Xᵀ diag(y) X / N`` per context (``M_aa − ȳ`` over ``√2`` on
    the diagonal, ``M_ab`` above it, row-major as :func:`hermite_features`). Sampled tokens: not checked."""
    N = X.shape[-2]
    linear = np.einsum("...n,...nd->...d", y, X) / N
    if features == "linear":
        return linear
    D = X.shape[-1]
    M = np.matmul((X * y[..., None]).swapaxes(-1, -2), X) / N
    a, b = np.triu_indices(D, 1)
    diag = (np.einsum("...aa->...a", M) - y.mean(axis=-1)[..., None]) / np.sqrt(2.0)
    return np.concatenate([linear, diag, M[..., a, b]], axis=-1)


def trace_direction(D) -> np.ndarray:
    """The unit vector ``t = [0, 1_D/√D, 0] ∈ R^F`` of the ``"hermite2"`` features: the trace of the quadratic block
    (``t·φ(x) = (|x|² − D)/√(2D)``; module docstring).

    Parameters
    ----------
    D : int

    Returns
    -------
    ndarray (F,)
    """
    F = _n_features(D)
    check.memory(8.0 * F, f"a direction of {F} features", "D")
    t = np.zeros(F)
    t[D:2 * D] = 1.0 / np.sqrt(D)
    return t


# --------------------------------------------------------------------------- radial moments
#: ``(j, p)`` of the moments ``E[g^j f(s g)^p]`` behind :func:`_moments_at`
_POWERS = ((1, 1), (2, 1), (0, 1), (0, 2), (1, 2), (2, 2), (3, 2), (4, 2))


def _moments_at(link, scales, n):
    """``[μ₁, μ₂, E f², E g f², E g² f², E g³ f², E g⁴ f²]`` of ``f(s g)`` for each scale ``s`` (noise-free;
    ``μ₂ = E[(g² − 1) f]``) and the sizes of their terms (:func:`linattn.links.moment_table`)."""
    m, size = links.moment_table(link, scales, n, _POWERS)
    keep = [0, 3, 4, 5, 6, 7]
    values = np.column_stack([m[:, 0], m[:, 1] - m[:, 2], *m[:, keep[1:]].T])
    sizes = np.column_stack([size[:, 0], size[:, 1] + size[:, 2], *size[:, keep[1:]].T])
    return values, sizes


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
        m = links.until_converged(lambda n: _moments_at(pb.link, np.sqrt(uniq), n), links.gauss_orders(pb.link),
                                  "the label moments at the tasks' norms", pb.link)[0][inverse]
    except ValueError as err:       # the link passed at the Gaussian task norms: blame the tasks' norms
        top = float(np.sqrt(uniq[-1]))
        raise ValueError(f"pool must have rows with norms at which the label moments of link {pb.link.name} exist and "
                         f"the quadrature converges; got rows with √r = |w|/√D up to {top:.4g}") from err
    out = m.T.copy()
    for k in range(5):
        out[2 + k] += s2 * _GAUSS[k]
    return out


@functools.lru_cache(maxsize=256)
def _gaussian_extra(link, D):
    """``(E_r μ₂(r)², E_r E[g⁴ f(√r g)²])`` for ``r ~ χ²_D/D`` (noise-free), converged in both rules like
    :func:`linattn.links.radial_moments`."""
    def average(n_r):
        r, w = quadrature.chi_square_rule(D, n_r)
        keep = w > 0.0
        r, w = r[keep], w[keep]

        def at_order(n):
            m, size = _moments_at(link, np.sqrt(r), n)
            return (np.array([w @ m[:, 1] ** 2, w @ m[:, 6]]),
                    np.array([w @ links.power_size(m[:, 1], size[:, 1], 2), w @ size[:, 6]]))
        return links.until_converged(at_order, links.gauss_orders(link), f"the label moments at D = {D}", link)

    out, _ = links.until_converged(average, links.R_ORDERS, f"the average over the task norm χ²_{D}/{D}", link)
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
    rm = links._radial_moments(pb.link, pb.D)
    mu2_sq, e4 = _gaussian_extra(pb.link, pb.D) if quadratic else (np.nan, np.nan)
    return rm.phi1_sq, mu2_sq, rm.phi2 + s2, rm.phi22 + s2, e4 + 3.0 * s2


# --------------------------------------------------------------------------- the moments
def _m4_coefficients(e0, e1, e2, e3, e4):
    """Coefficients of ``θᵀM₄θ = c_I|θ|² + c_aa a² + c_ab aβ + c_uT u·(Bŵ) + c_TT |Bŵ|² + c_bb β²`` (``a = u·ŵ``,
    ``β = ŵᵀBŵ``; module docstring): the one place of the fourth-moment matrix."""
    r2 = np.sqrt(2.0)
    return (e0, e2 - e0, r2 * (e3 - 3.0 * e1), 2.0 * r2 * e1, 2.0 * (e2 - e0), 0.5 * (e4 - 6.0 * e2 + 3.0 * e0))


@dataclass(frozen=True)
class FreshBlocks:
    """Eigenvalues of the fresh-task moments on the three invariant subspaces of the features (module docstring):
    the linear block ``L`` (dimension ``D``), the trace direction ``T`` of the quadratic block (dimension 1) and its
    complement ``Q⊥`` (dimension ``D(D+1)/2 − 1``); ``("hermite2")`` or ``L`` alone (``"linear"``: ``T``, ``Q⊥`` fields
    are 0 with dimension 0).

    Attributes
    ----------
    dims : tuple of int
        ``(D, 1, D(D+1)/2 − 1)`` or ``(D, 0, 0)``.
    S : tuple of float
        Eigenvalues of ``S̄ = E_w E[s_φ s_φᵀ | w]`` at the context length ``N``.
    B : tuple of float
        Eigenvalues of ``E_w m mᵀ``.
    M4 : tuple of float
        Eigenvalues of ``E_w M₄(w)`` (``S̄ = (1 − 1/N) B + M₄/N``).
    V : float
        ``E y² = ē₀``.
    N : int
    """

    __repr__ = short_repr

    dims: tuple
    S: tuple
    B: tuple
    M4: tuple
    V: float
    N: int


def fresh_blocks(pb, features="hermite2", N=None) -> FreshBlocks:
    """The exact fresh-task moments of the kernel learner in their eigenspaces (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs; the task law ``pb.task_law`` (Gaussian or sphere) sets the ``r``-averages.
    features : {"hermite2", "linear"}
    N : None or int
        Context length of ``s_φ`` (default ``pb.N``).

    Returns
    -------
    FreshBlocks
    """
    N = pb.N if N is None else N
    D = pb.D
    quadratic = features == "hermite2"
    a1, a2, e0, e2, e4 = _fresh_coefficients(pb, quadratic)
    cI, caa, _, _, cTT, cbb = _m4_coefficients(e0, 0.0, e2, 0.0, e4)
    mL = cI + caa / D
    bL = a1 / D
    if quadratic:   # E ααᵀ = Π_L/D, E TᵀT = Π_Q/D, E ββᵀ = (D ttᵀ + 2Π_Q)/(D(D + 2))
        mQ = cI + cTT / D + 2.0 * cbb / (D * (D + 2))
        mT = cI + cTT / D + cbb / D
        bQ, bT = a2 / (D * (D + 2)), a2 / (2.0 * D)
        dims, B, M4 = (D, 1, D * (D + 1) // 2 - 1), (bL, bT, bQ), (mL, mT, mQ)
    else:
        dims, B, M4 = (D, 0, 0), (bL, 0.0, 0.0), (mL, 0.0, 0.0)
    S = tuple(float((1.0 - 1.0 / N) * b + m / N) for b, m in zip(B, M4))
    return FreshBlocks(dims=dims, S=S, B=tuple(map(float, B)), M4=tuple(map(float, M4)), V=float(e0), N=N)


def _block_forms(G, D, quadratic):
    """Per eigenspace ``X ∈ (L, T, Q⊥)``: ``tr(Π_X Γ)`` and ``‖Π_X Γ‖_F²`` (the rows of ``Γ`` projected)."""
    nL, trL = float(np.sum(G[:D] ** 2)), float(np.trace(G[:D, :D]))
    if not quadratic:
        return (trL, 0.0, 0.0), (nL, 0.0, 0.0)
    tG = np.sum(G[D:2 * D], axis=0) / np.sqrt(D)               # tᵀΓ
    nT, trT = float(tG @ tG), float(np.sum(tG[D:2 * D]) / np.sqrt(D))
    return (trL, trT, float(np.trace(G[D:, D:])) - trT), (nL, nT, float(np.sum(G[D:] ** 2)) - nT)


# --------------------------------------------------------------------------- the error
def _fresh_error(pb, G, D, quadratic, N):
    """Fresh-task error ``½[V − 2⟨B, Γ⟩ + tr(ΓᵀS̄Γ)]`` with the moments in their eigenspaces (module docstring)."""
    fb = fresh_blocks(pb, "hermite2" if quadratic else "linear", N)
    traces, norms = _block_forms(G, D, quadratic)
    overlap = sum(b * x for b, x in zip(fb.B, traces))
    norm = sum(s * x for s, x in zip(fb.S, norms))
    return 0.5 * (fb.V - 2.0 * overlap + norm)


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
    r, what = _task_directions(tasks)
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
        cI, caa, cab, cuT, cTT, cbb = _m4_coefficients(e0[sl], e1[sl], e2[sl], e3[sl], e4[sl])
        fourth = cI * total + caa * np.einsum("kj,kj->k", t, t)
        if quadratic:
            Bw = np.einsum("abj,kb->kaj", B, wh)              # B_j ŵ
            beta = np.einsum("kaj,ka->kj", Bw, wh)            # ŵᵀ B_j ŵ
            uBw = np.einsum("aj,kaj->kj", GL, Bw)             # u_jᵀ B_j ŵ
            fourth += (cab * np.einsum("kj,kj->k", t, beta) + cuT * np.sum(uBw, axis=1)
                       + cTT * np.einsum("kaj,kaj->k", Bw, Bw) + cbb * np.einsum("kj,kj->k", beta, beta))
        out[sl] = 0.5 * (e0[sl] - 2.0 * overlap + (1.0 - 1.0 / N) * mean_sq + fourth / N)
    return out


def _isotropic(pb):
    """Refuse an anisotropic problem (the kernel learner's moments are of isotropic inputs)."""
    if pb.covariance is not None:
        check.fail("pb", pb, "a Problem with isotropic inputs (covariance=None) for the kernel learner's exact moments")
    return pb


def _task_directions(W):
    """Norm ratios ``r = |w|²/D`` and unit directions ``ŵ`` (0 for ``w = 0``) of the rows of ``W``."""
    D = W.shape[1]
    norm = np.sqrt(np.einsum("kd,kd->k", W, W))
    what = np.divide(W, norm[:, None], out=np.zeros_like(W), where=norm[:, None] > 0)
    return norm**2 / D, what


def _beta_vectors(what):
    """``β_w`` (module docstring) on the quadratic block: ``[ŵ_a², √2 ŵ_a ŵ_b (a < b)]``, shape (K, F − D)."""
    a, b = np.triu_indices(what.shape[1], 1)
    return np.concatenate([what * what, np.sqrt(2.0) * what[:, a] * what[:, b]], axis=1)


def _t_maps(what):
    """``T_w`` (``θ ↦ Bŵ``) restricted to the quadratic block, shape (K, D, F − D)."""
    K, D = what.shape
    a, b = np.triu_indices(D, 1)
    T = np.zeros((K, D, D + a.size))
    idx = np.arange(D)
    T[:, idx, idx] = what
    col = D + np.arange(a.size)
    T[:, a, col] = what[:, b] / np.sqrt(2.0)
    T[:, b, col] = what[:, a] / np.sqrt(2.0)
    return T


def block_directions(what, features="hermite2"):
    """Unit directions ``u_k(w)`` in feature space of the three invariant blocks ``(L, T, Q⊥)`` for each task direction
    ``ŵ`` (rows of ``what``): ``u_L = (ŵ, 0)``, ``u_T = t`` (:func:`trace_direction`), ``u_Q`` the coordinates of
    ``(ŵŵᵀ − I/D)/√(1 − 1/D)``. ``m(w) = μ₁ u_L + (μ₂/√2)(√(1 − 1/D) u_Q + u_T/√D)``.

    Parameters
    ----------
    what : ndarray (K, D)
        Task directions (the caller's, not checked here): rows of norm 1, or 0 for a zero task (then ``u_L = 0``, and
        ``u_Q`` is the formula's ``−(I/D)/√(1 − 1/D)``, as the callers of ``replica/_kernel_theory.py`` expect).
    features : {"hermite2", "linear"}

    Returns
    -------
    ndarray (K, n_blocks, F)
        ``n_blocks = 3`` (``1`` for ``"linear"``: ``u_L = ŵ``). At ``D = 1`` the block ``Q⊥`` is empty (its
        dimension ``D(D+1)/2 − 1`` is 0; ``m(w)`` gives it the weight ``√(1 − 1/D) = 0``): its direction is 0.

    Raises
    ------
    ValueError
        The ``(K, 3, F)`` result beyond the memory limit (naming ``what``).
    """
    K, D = what.shape
    if features == "linear":
        return what[:, None, :]
    F = _n_features(D)
    check.memory(8.0 * K * 3 * F + 8.0 * K * (F - D), f"the directions of {K} tasks in {F} features", "what")
    U = np.zeros((K, 3, F))
    U[:, 0, :D] = what
    U[:, 1] = trace_direction(D)
    if D == 1:
        return U
    b = _beta_vectors(what)
    b[:, :D] -= 1.0 / D
    U[:, 2, D:] = b / np.sqrt(1.0 - 1.0 / D)
    return U


@dataclass(frozen=True, eq=False)
class KernelMoments:
    """Exact second moments of the kernel learner's ridge problem, averaged over tasks (module docstring).

    Attributes
    ----------
    S : ndarray (F, F)
        ``S̄ = E_w E[s_φ s_φᵀ | w]`` at context length ``N`` (``E[h hᵀ] = S̄ ⊗ I_F`` for ``h = s_φ ⊗ φ(x_q)``).
    B : ndarray (F, F)
        ``E_w m(w) m(w)ᵀ`` (``E[h y_q] = vec B``).
    V : float
        ``E y²``.
    m : ndarray (K, F) or None
        The per-task means ``m(w_k) = E[y φ(x) | w_k]`` (``None`` for fresh tasks).
    N : int
    features : str
    """

    __repr__ = short_repr

    S: np.ndarray
    B: np.ndarray
    V: float
    m: np.ndarray | None
    N: int
    features: str


@public(pb=PROBLEM, features=choice(FEATURES), N=optional(integer()))
def kernel_moments(pb, features="hermite2", pool=None, N=None) -> KernelMoments:
    r"""``S̄``, ``B`` and ``V`` of the kernel learner (module docstring), exact: for a fresh task of the problem's
    law (``pool=None``; from :func:`fresh_blocks`) or averaged uniformly over the rows of ``pool``.

    .. math:: S̄ = E_w\big[(1 − \tfrac1N) m mᵀ + \tfrac1N M_4\big],\qquad B = E_w[m mᵀ],\qquad V = E_w e_0,

    so that ``E_g(Γ) = ½[V − 2⟨B, Γ⟩ + tr(ΓᵀS̄Γ)]`` (:func:`kernel_test_error`). Cost ``O(K D F²)`` for ``K`` tasks.

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs, any link and noise.
    features : {"hermite2", "linear"}
    pool : None or array_like (K, D)
    N : None or int
        Context length of ``s_φ`` (default ``pb.N``).

    Returns
    -------
    KernelMoments

    Raises
    ------
    ValueError
        A bad argument; or ``F × F`` moments (``F = D + D(D+1)/2``) that do not fit in memory (naming ``pb.D``, or
        ``pool`` for the per-task moments).
    """
    _isotropic(pb)
    N = pb.N if N is None else N
    D = pb.D
    F = _n_features(D, features)
    quadratic = features == "hermite2"
    if pool is None:
        # S, B and the two outer products of the trace direction: F x F each, set by the dimension of pb
        check.memory(8.0 * 4 * F * F, f"the fresh-task moments (F = {F} features of D = {D})", "pb.D")
        fb = fresh_blocks(pb, features, N)
        S, B = np.zeros((F, F)), np.zeros((F, F))
        idx = np.arange(D)
        S[idx, idx], B[idx, idx] = fb.S[0], fb.B[0]
        if quadratic:
            t = trace_direction(D)
            iq = np.arange(D, F)
            S[iq, iq], B[iq, iq] = fb.S[2], fb.B[2]
            S += (fb.S[1] - fb.S[2]) * np.outer(t, t)
            B += (fb.B[1] - fb.B[2]) * np.outer(t, t)
        return KernelMoments(S=S, B=B, V=fb.V, m=None, N=N, features=features)
    W = check.finite_array("pool", pool, shape=(None, D))
    if W.shape[0] < 1:
        check.fail("pool", f"<array with shape {W.shape}>", f"an array of shape (K, {D}) with K >= 1")
    K = W.shape[0]
    check.memory(8.0 * (K * F * (D + 3) + 3 * F * F), f"the moments of {K} tasks (F = {F})", "pool or D")
    r, what = _task_directions(W)
    mu1, mu2, e0, e1, e2, e3, e4 = _task_coefficients(pb, r)
    cI, caa, cab, cuT, cTT, cbb = (np.broadcast_to(c, (K,)) / K for c in _m4_coefficients(e0, e1, e2, e3, e4))
    m = mu1[:, None] * what
    M4 = np.zeros((F, F))
    M4[np.arange(F), np.arange(F)] = np.sum(cI)
    M4[:D, :D] += (what.T * caa) @ what
    if quadratic:
        beta = _beta_vectors(what)
        m = np.concatenate([m, (mu2[:, None] / np.sqrt(2.0)) * beta], axis=1)
        LQ = 0.5 * (what.T * cab) @ beta
        QQ = (beta.T * cbb) @ beta
        step = max(1, _CHUNK_NUMBERS // (D * F))
        for lo in range(0, K, step):
            sl = slice(lo, min(K, lo + step))
            T = _t_maps(what[sl])
            LQ += 0.5 * np.einsum("k,kaq->aq", cuT[sl], T)
            Tw = T * np.sqrt(np.abs(cTT[sl]))[:, None, None]
            Ts = T * (np.sign(cTT[sl]) * np.sqrt(np.abs(cTT[sl])))[:, None, None]
            QQ += Tw.reshape(-1, F - D).T @ Ts.reshape(-1, F - D)
        M4[:D, D:] += LQ
        M4[D:, :D] += LQ.T
        M4[D:, D:] += QQ
    B = m.T @ m / K
    S = (1.0 - 1.0 / N) * B + M4 / N
    S = 0.5 * (S + S.T)
    out = KernelMoments(S=S, B=B, V=float(np.mean(e0)), m=m, N=N, features=features)
    check.finite_result(S, {"pool": W}, "the kernel learner's moments")
    return out


@public(pb=PROBLEM, features=choice(FEATURES))
def kernel_test_error(pb, Gamma, features="hermite2", pool=None, N_test=None) -> float:
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
    pool : None or array_like, shape (K, D)
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
        ``pool`` not a finite ``K × D`` array (``K >= 1``) or with norms at which the label moments do not exist;
        ``N_test`` not a positive integer; a result that overflows float64.

    Examples
    --------
    >>> import numpy as np, linattn
    >>> pb = linattn.Problem(D=4, N=8, noise=0.1, link="tanh")
    >>> round(kernel_test_error(pb, np.zeros((14, 14))), 6) == round(0.5 * pb.label_variance, 6)
    True
    """
    _isotropic(pb)
    D = pb.D
    F = _n_features(D, features)
    G = check.finite_array("Gamma", Gamma, shape=(F, F))
    N = pb.N if N_test is None else N_test
    quadratic = features == "hermite2"
    with np.errstate(over="ignore", invalid="ignore"):
        if pool is None:
            out = _fresh_error(pb, G, D, quadratic, N)
            culprits = {"Gamma": G}
        else:
            W = check.finite_array("pool", pool, shape=(None, D))
            if W.shape[0] < 1:
                check.fail("pool", f"<array with shape {W.shape}>", f"an array of shape (K, {D}) with K >= 1")
            out = float(np.mean(_per_task_errors(pb, G, W, quadratic, N)))
            culprits = {"Gamma": G, "pool": W}
    check.finite_result(out, culprits, "the kernel learner's test error")
    return float(out)
