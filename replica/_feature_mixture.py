r"""The feature learner's theory, its finite-``D`` scale mixtures: the optimal readout ``g = E_train[f(u) | t]`` of a
mixture of jointly Gaussian components ``(u, t)`` and its error on another mixture, by quadrature on a grid of ``t``
with a delta-method standard error (derivation: :mod:`replica._feature_theory`; Gu, Xu & Zdeborová).
"""
from __future__ import annotations

import numpy as np
from scipy import special

from linattn import _check as check
from linattn import _links as links
from linattn import _sampling as sampling
from linattn._numerics import quadrature

from ._feature_overlaps import at_length, label_mean, require_isotropic

# --------------------------------------------------------------------------- finite-D mixture
#: readout grid: points in t and its half-width in standard deviations of t
N_T = 241
T_WIDTH = 8.0
#: Gauss–Hermite nodes of the conditional mean of a smooth link (error < 3e-5 for tanh at conditional s.d. 1.2)
N_Z = 24
#: Gauss–Hermite nodes in ``t`` of each test component's own law (:func:`_component_terms`)
N_GH_T = 64


def _normal_rule(n):
    """Nodes and weights of the ``n``-node Gauss–Hermite rule of ``N(0, 1)``
    (:func:`linattn._numerics.quadrature.gauss_hermite`)."""
    z, logw = quadrature.gauss_hermite(n)
    return z, np.exp(logw)


def _conditional_mean(link, mean, sd, n_z):
    """``E f(mean + sd z)``, ``z ~ N(0, 1)``: closed forms for the linear, ``relu`` and ``sign`` links (their kinks
    defeat Gauss–Hermite quadrature), Gauss–Hermite with ``n_z`` nodes otherwise (smooth links)."""
    if link.is_linear:
        return float(link.slope) * mean
    if link.name in ("relu", "sign"):
        safe = np.where(sd > 0, sd, 1.0)
        x = mean / safe
        if link.name == "relu":
            out = mean * special.ndtr(x) + safe * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
            return np.where(sd > 0, out, np.maximum(mean, 0.0))
        return np.where(sd > 0, special.erf(x / np.sqrt(2.0)), np.sign(mean))
    zn, zw = _normal_rule(n_z)
    return np.asarray(link.fn(mean[..., None] + sd[..., None] * zn), float) @ zw   # link validated by the caller


def _mixture_fields(link, comp, t, n_z):
    """Density ``N(t; 0, v_k)`` and conditional mean ``m_k(t) = E[f(u) | t, k]`` of each component on the grid ``t``,
    and the atom (components with ``v = 0``: ``t = 0`` exactly) with its conditional mean ``E f(√r z)``."""
    r, kap, v = comp
    atom = v <= 0.0
    zn, zw = _normal_rule(max(n_z, 4))
    m_atom = link(np.sqrt(r[atom])[:, None] * zn) @ zw if atom.any() else np.zeros(0)
    r, kap, v = r[~atom], kap[~atom], v[~atom]
    dens = np.exp(-0.5 * t[None, :] ** 2 / v[:, None]) / np.sqrt(2 * np.pi * v[:, None])
    cond = np.sqrt(np.maximum(r - kap**2 / v, 0.0))
    m = _conditional_mean(link, (kap / v)[:, None] * t[None, :], np.broadcast_to(cond[:, None], dens.shape), n_z)
    return dens, m, atom, m_atom


def mixture_error(link, train, test, V, same=False, n_t=N_T, n_z=N_Z):
    r"""Error of the readout ``g = E_train[f(u) | t]`` on a test distribution, both scale mixtures of Gaussians.

    A *component* ``k`` is a jointly Gaussian ``(u, t)`` with ``Var u = r_k``, ``Cov(u, t) = κ_k``, ``Var t = v_k``
    (given a test task and context ``(w, s)``, and ``Γ``: ``r = |w|²/D``, ``κ = sᵀΓw/√D``, ``v = |Γᵀs|²``; module
    docstring). With ``den(t) = mean_k N(t; 0, v_k)`` and ``num(t) = mean_k N(t; 0, v_k) m_k(t)``,
    ``m_k(t) = E f(κ_k t/v_k + \sqrt{r_k − κ_k²/v_k}\, z)``, the readout is ``g = num_train/den_train`` and

    .. math:: E = ½\Big[V − 2∫ num_{test}\, g\, dt + ∫ den_{test}\, g²\, dt\Big]

    (``= ½(V − ∫ num²/den)`` when the two samples are one, ``same=True``). Trapezoid on ``±8`` s.d. of ``t`` (``g``
    held constant beyond the training support); the inner mean in closed form for ``relu``, ``sign`` and linear links,
    else Gauss–Hermite. Components with ``v = 0`` (a context with ``s = 0``) form an atom at ``t = 0`` with its own
    readout value. The standard error is the delta method on the components (influence functions; the two samples
    independent unless ``same``).

    Parameters
    ----------
    link : linattn.links.Link
    train, test : tuple of ndarray (r, kappa, v)
        The components of the training and of the test distribution.
    V : float
        ``E y²`` of the test distribution (label noise included).
    same : bool
        ``test`` is ``train`` (the readout's own distribution).
    n_t, n_z : int
        Grid points in ``t``; Gauss–Hermite nodes.

    Returns
    -------
    error, standard_error : float
    """
    link = links.as_link(link)
    train = _mixture_components("train", train)
    same = check.boolean("same", same)
    test = None if same else _mixture_components("test", test)
    V = check.nonnegative("V", V)
    n_t = check.positive_int("n_t", n_t, minimum=3, maximum=1 << 20)
    n_z = check.positive_int("n_z", n_z, maximum=quadrature.MAX_HERMITE_NODES)
    mixture_memory(link, max(train[0].size, 0 if test is None else test[0].size), n_t, n_z,
                   "the components (train, test), n_t or n_z")
    return mixture_errors(link, train, [(test, V)], n_t, n_z)[0]


def _mixture_components(name, value):
    """Mixture components ``(r, kappa, v)``: three finite 1-d arrays of one length >= 2, ``r, v >= 0``."""
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        check.fail(name, value, "a tuple (r, kappa, v) of three 1-d arrays")
    r, kappa, v = (check.finite_array(name, a, ndim=1) for a in value)
    if not (r.size == kappa.size == v.size >= 2) or np.any(r < 0) or np.any(v < 0):
        check.fail(name, f"<arrays of sizes {r.size}, {kappa.size}, {v.size}>",
                   "three arrays of one size >= 2 with r >= 0 and v >= 0")
    return r, kappa, v


def mixture_memory(link, n, n_t, n_z, arguments):
    """Refuse (:func:`linattn._check.memory`, naming ``arguments``) mixture fields of ``n`` components on ``n_t`` grid
    points that would not fit: the densities and conditional means (``n × n_t``, a few held at once) and, for a smooth
    link, the Gauss–Hermite evaluations (``n × n_t × n_z``, twice: arguments and values; measured peak
    ``8 n n_t (2 n_z + 8)`` bytes, ``8 n n_t · 12`` for the closed-form links).

    Parameters
    ----------
    link : linattn.links.Link
    n, n_t, n_z : int
        Components (of the largest distribution), grid points in ``t``, Gauss–Hermite nodes.
    arguments : str
        The arguments that set ``n``, ``n_t`` and ``n_z`` (for the message).
    """
    closed = link.is_linear or link.name in ("relu", "sign")
    check.memory(8.0 * n * n_t * (12 if closed else 2 * n_z + 8),
                 f"the readout's fields of {n} mixture components on {n_t} points of t"
                 + ("" if closed else f" ({n_z} Gauss–Hermite nodes each)"), arguments)


def _component_terms(link, comp, t, g, n_z):
    """``E_k[g(t)² − 2 m_k(t) g(t)]`` over each component's own ``t ~ N(0, v_k)`` (components with ``v > 0``), by
    Gauss–Hermite on ``t/√v_k`` (``N_GH_T`` nodes), ``g`` interpolated on the grid ``t`` (constant beyond it).
    Per component, not on the shared grid: a component far narrower than the grid's spacing (a context with a tiny
    ``s``, frequent for ``relu`` at short test contexts: ``P(s = 0) = 2^{−N}``) would be integrated wrongly there —
    the cause of the jumps of the ICL error in ``N_test`` that an earlier version showed."""
    r, kap, v = comp
    keep = v > 0.0
    r, kap, v = r[keep], kap[keep], v[keep]
    zn, zw = _normal_rule(N_GH_T)
    tk = np.sqrt(v)[:, None] * zn[None, :]
    gk = np.interp(tk, t, g)
    cond = np.sqrt(np.maximum(r - kap**2 / v, 0.0))
    m = _conditional_mean(link, (kap / v)[:, None] * tk, np.broadcast_to(cond[:, None], tk.shape), n_z)
    return (gk * gk - 2.0 * m * gk) @ zw


def mixture_errors(link, train, tests, n_t=N_T, n_z=N_Z):
    """:func:`mixture_error` for several test distributions ``[(components or None (= train), V), ...]`` sharing
    one readout (its fields computed once)."""
    v_all = np.concatenate([train[2]] + [c[2] for c, _ in tests if c is not None])
    sd = float(np.sqrt(np.mean(v_all)))
    if not sd > 0:
        raise ValueError("the attention output t is identically 0 (Γ = 0): no readout")
    t = np.linspace(-T_WIDTH * sd, T_WIDTH * sd, n_t)
    wt = np.full(n_t, t[1] - t[0])
    wt[[0, -1]] *= 0.5
    dtr, mtr, atr, matr = _mixture_fields(link, train, t, n_z)
    n_tr = train[0].size
    den = dtr.sum(axis=0) / n_tr
    num = (dtr * mtr).sum(axis=0) / n_tr
    ok = den > 1e-300 * max(float(den.max()), 1e-300)
    g = np.interp(t, t[ok], num[ok] / den[ok])                  # constant beyond the training support
    g_atom = float(matr.mean()) if matr.size else float(np.interp(0.0, t, g))
    out = []
    for comp, V in tests:
        same = comp is None
        if same:
            dte, mte, ate, mate, n_te = dtr, mtr, atr, matr, n_tr
        else:
            dte, mte, ate, mate = _mixture_fields(link, comp, t, n_z)
            n_te = comp[0].size
        phi = np.zeros(n_te)                                    # per test component: ∫ dens (g² − 2 m g)
        phi[~ate] = _component_terms(link, comp if not same else train, t, g, n_z)
        phi[ate] = g_atom**2 - 2.0 * mate * g_atom
        err = 0.5 * (V + float(phi.mean()))
        var = float(np.var(0.5 * phi, ddof=1)) / n_te
        if not same:                                            # the readout's own sampling error
            den_te = dte.sum(axis=0) / n_te
            num_te = (dte * mte).sum(axis=0) / n_te
            lever = np.where(ok, (den_te * g - num_te) / np.where(ok, den, 1.0), 0.0)
            psi = np.zeros(n_tr)
            psi[~atr] = (dtr * (mtr - g)) @ (lever * wt)
            var += float(np.var(psi, ddof=1)) / n_tr
        out.append((float(err), float(np.sqrt(var))))
    return out


def mixture_readout_power(pb, identity_weight, delta2, n_contexts=4096, rng=0, n_t=N_T, n_z=N_Z, N_test=None) -> float:
    r"""``E[E[f(u)|t]²]`` for ``Γ = α I + Δ`` (``Δ`` isotropic with ``E Δ_ij² = δ²``), keeping the exact scale mixture.

    Given a sampled test task and context ``(w, s)`` (raw tokens, :func:`linattn.sample_tokens`), ``(u, t)``
    is jointly Gaussian with ``Var u = |w|²/D``, ``Cov(u, t) = α s·w/√D`` and ``Var t = (α² + D δ²)|s|²`` (the
    isotropic ``Δ`` at its mean: ``sᵀΔw/√D`` is dropped from the covariance). The power is ``∫ num²/den dt``
    (:func:`mixture_error` with ``same=True``: ``E y² − 2E``).

    Parameters
    ----------
    pb : linattn.Problem
    identity_weight : float
        ``tr Γ/D``.
    delta2 : float
        ``δ² >= 0``, the per-entry variance of the part of ``Γ`` orthogonal to ``I``.
    n_contexts : int
        Sampled ``(w, s)`` (the mixture's components; bias ``O(1/n_contexts)``).
    rng : int or numpy.random.Generator
    n_t, n_z : int
        Grid points in ``t`` (``11 <= n_t <= 2**20``) and Gauss–Hermite nodes in ``z`` (smooth links).
    N_test : int, optional
        Context length of the test prompts.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad input, or sizes (``n_contexts`` × ``n_t``) whose arrays would not fit in memory.

    Notes
    -----
    The power depends on ``Γ`` only through its direction (``(u, t)`` and ``(u, ct)`` have the same conditional
    means): ``(α, δ²)`` of any scale are rescaled to ``max(|α|, √(D δ²)) = 1`` when that scale is outside
    ``[1e-100, 1e100]``, where ``α²`` or ``D δ²`` would over- or underflow.
    """
    require_isotropic(pb, "mixture_readout_power")
    identity_weight = check.real("identity_weight", identity_weight)
    delta2 = check.nonnegative("delta2", delta2)
    n_contexts = check.positive_int("n_contexts", n_contexts, minimum=2)
    check.memory(8.0 * n_contexts * (2 * pb.N * pb.D + pb.N + 4 * pb.D), f"the tokens of {n_contexts} contexts",
                 "n_contexts")
    n_t = check.positive_int("n_t", n_t, minimum=11, maximum=1 << 20)
    n_z = check.positive_int("n_z", n_z, minimum=4, maximum=200)
    mixture_memory(pb.link, n_contexts, n_t, n_z, "n_contexts or n_t")
    if identity_weight == 0 and delta2 == 0:
        check.fail("identity_weight", identity_weight, "nonzero, or delta2 > 0 (t is identically 0 otherwise)")
    scale = max(abs(identity_weight), float(np.sqrt(pb.D) * np.sqrt(delta2)))
    if not 1e-100 <= scale <= 1e100:        # scale-free (Notes): rescale where α² or D δ² would leave float64
        identity_weight, delta2 = identity_weight / scale, (float(np.sqrt(delta2)) / scale) ** 2
    pbt = at_length(pb, N_test)
    D = pb.D
    tok = sampling.sample_tokens(pbt, n_contexts, check.rng(rng))
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / pbt.N
    comp = (np.sum(tok.w**2, axis=1) / D, identity_weight * np.einsum("pd,pd->p", s, tok.w) / np.sqrt(D),
            (identity_weight**2 + D * delta2) * np.sum(s * s, axis=1))
    V = pbt.label_variance + label_mean(pbt) ** 2
    err, _ = mixture_error(pb.link, comp, comp, V, same=True, n_t=n_t, n_z=n_z)
    return float(V - 2.0 * err)
