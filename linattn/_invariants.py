r"""Exact law of the scalar invariants of one prompt.

The Hessian spectrum and the stationary errors depend on a prompt through a few scalars
(all in units where the features have unit variance, i.e. after dividing by ``c``):

* ``xi1 = |s|² |x_q|² / (D² c)`` — the scale of the ``Γ`` features, ``|h|² = c D² xi1``;
* ``xi2 = y2² |x_q|² / (D c)``  — the scale of the ``v`` features (mean ``c_v / c``);
* ``f = s·x_q / √(D c)``        — the feature's projection on the ICL direction ``vec(I)/√D``;
* ``y = y_q``                   — the label.

Writing a prompt with the exact ``O(D)`` representation of ``linattn/_sampling.py`` and
decomposing ``x_q`` along ``ŵ``, along the orthogonal part of ``s`` and the rest, the four
invariants are functions of eight independent primitive variables with elementary laws:

``r D ~ χ²_D`` (task norm), ``K ~ χ²_N``, ``ζ_1 ~ N(0,1)``, ``Z ~ χ²_{D−1}``, ``g_1, g_2 ~ N(0,1)``,
``R ~ χ²_{D−2}``, ``ε_q ~ N(0,1)``:

.. math::
   a = √r K + σ√K ζ_1,\quad b² = (r+σ²)K,\quad N² |s|² = a² + b² Z,\quad
   N s·x_q = a g_1 + b √Z g_2,\quad |x_q|² = g_1² + g_2² + R,

   y_q = √r g_1 + σ ε_q,\qquad y2 = (r + σ²) K / N.

(χ² with zero degrees of freedom is 0; for ``D = 1`` the ``g_2`` direction does not exist.)
A linear link ``f(u) = a u`` replaces ``r`` by ``a² r``. Any other link (:mod:`linattn.links`) keeps
the context explicit along ``ŵ``: the primitives are ``r, Z, g_1, g_2, R, ε_q`` and the ``N``
context coordinates ``γ_i = ŵ·x_i ~ N(0, 1)`` (and ``N`` label noises ``ε_i`` when ``σ > 0``), with

.. math:: a = Σ_i y_i γ_i,\quad b² = Σ_i y_i²,\quad y_i = f(√r γ_i) + σ ε_i,\quad y_q = f(√r g_1) + σ ε_q

(:func:`n_primitives` gives the count: ``6 + N`` or ``6 + 2N``).
Feeding uniform variables through the inverse CDFs gives an exact transport map, so a
(randomised) quasi-Monte-Carlo design in eight dimensions integrates any smooth function of
the invariants with an error estimated from independent scramblings.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _validate as validate
from ._results import short_repr

N_PRIMITIVES = 8


def n_primitives(pb) -> int:
    """Number of primitive variables of the transport map: 8 for a linear link, ``6 + N`` (``6 + 2N``
    with label noise) otherwise.

    Parameters
    ----------
    pb : linattn.Problem

    Returns
    -------
    int
    """
    if pb.link.is_linear:
        return N_PRIMITIVES
    return 6 + pb.N * (2 if pb.noise > 0 else 1)


@dataclass(frozen=True, eq=False)
class Invariants:
    """Per-prompt scalar invariants (arrays of equal length); see the module docstring."""

    __repr__ = short_repr

    xi1: np.ndarray
    xi2: np.ndarray
    f: np.ndarray
    y: np.ndarray


def _chi2_ppf(dof, u):
    from scipy import special

    if dof <= 0:
        return np.zeros_like(u)
    return 2.0 * special.gammaincinv(0.5 * dof, u)


def from_uniforms(pb, u) -> Invariants:
    """Map uniforms to invariants by the exact transport of the module docstring.

    Parameters
    ----------
    pb : linattn.Problem
    u : ndarray (n, n_primitives(pb))
        Points of the open unit cube (one primitive variable per column: 8 for a linear link; the caller's design,
        not checked here).

    Returns
    -------
    Invariants
    """
    from scipy import special

    D, N, sig = pb.D, pb.N, pb.noise
    r = _chi2_ppf(D, u[:, 0]) / D
    if pb.link.is_linear:
        r = float(pb.link.slope) ** 2 * r
        K = _chi2_ppf(N, u[:, 1])
        z1 = special.ndtri(u[:, 2])
        a = np.sqrt(r) * K + sig * np.sqrt(K) * z1
        b2 = (r + sig**2) * K
        Z, g1, R, eps = (_chi2_ppf(D - 1, u[:, 3]), special.ndtri(u[:, 4]),
                         _chi2_ppf(D - 2, u[:, 6]), special.ndtri(u[:, 7]))
        g2 = special.ndtri(u[:, 5]) if D >= 2 else np.zeros(len(u))
        yq = np.sqrt(r) * g1 + sig * eps
    else:
        Z, g1, R, eps = (_chi2_ppf(D - 1, u[:, 1]), special.ndtri(u[:, 2]),
                         _chi2_ppf(D - 2, u[:, 4]), special.ndtri(u[:, 5]))
        g2 = special.ndtri(u[:, 3]) if D >= 2 else np.zeros(len(u))
        gam = special.ndtri(u[:, 6:6 + N])
        y = pb.link(np.sqrt(r)[:, None] * gam)
        if sig > 0:
            y = y + sig * special.ndtri(u[:, 6 + N:6 + 2 * N])
        a = np.einsum("pn,pn->p", y, gam)
        b2 = np.einsum("pn,pn->p", y, y)
        yq = pb.link(np.sqrt(r) * g1) + sig * eps
    return _assemble(pb, a, b2, Z, g1, g2, R, yq)


def _assemble(pb, a, b2, Z, g1, g2, R, yq) -> Invariants:
    D, N = pb.D, pb.N
    c = pb.feature_variance
    s2 = (a * a + b2 * Z) / N**2
    sxq = (a * g1 + np.sqrt(b2 * Z) * g2) / N
    xq2 = g1 * g1 + g2 * g2 + R
    y2 = b2 / N
    return Invariants(
        xi1=s2 * xq2 / (D * D * c),
        xi2=y2 * y2 * xq2 / (D * c),
        f=sxq / np.sqrt(D * c),
        y=yq,
    )


def from_prompts(pb, data) -> Invariants:
    """Invariants computed directly from prompts (for tests against the transport map).

    Parameters
    ----------
    pb : linattn.Problem
    data : linattn.Prompts
        ``xi2`` is NaN for prompts without ``y2`` (reduced-model prompts).

    Returns
    -------
    Invariants
    """
    validate.problem_data(data, pb, "reduced")
    c = pb.feature_variance
    D = pb.D
    s2 = np.einsum("pd,pd->p", data.s, data.s)
    xq2 = np.einsum("pd,pd->p", data.xq, data.xq)
    y2 = data.y2 if data.y2 is not None else np.full(data.P, np.nan)
    return Invariants(xi1=s2 * xq2 / (D * D * c), xi2=y2 * y2 * xq2 / (D * c),
                      f=np.einsum("pd,pd->p", data.s, data.xq) / np.sqrt(D * c), y=data.yq.copy())
