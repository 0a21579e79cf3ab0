r"""The feature learner's theory, its readouts of the trained ``Γ̂``: the exact moments of a prompt distribution (fresh
tasks or a pool's, at a context length), its mixture components and sampled prompts for a ``Γ̂`` drawn from its law,
and the test errors of the linear readouts, of the Gaussian optimal readout and of the readout as the learner trains it
on ``P`` in-sample outputs (derivation: :mod:`replica._feature_theory`; Gu, Xu & Zdeborová).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from linattn import _links as links
from linattn import _readout as readout_class
from linattn import _sampling as sampling
from linattn._numerics.stats import mean_se

from ._feature_overlaps import gaussian_readout_power, label_mean, query_overlap_strength


# --------------------------------------------------------------------------- the distributions of (u, t)
def _task_radial(link, r):
    """``(φ₀(r), φ₁(r))`` per task norm ratio ``r``: ``E f(√r g)`` and ``E[g f(√r g)]``."""
    if link.is_linear:
        return np.zeros_like(r), float(link.slope) * np.sqrt(r)
    m = links.moment_table(link, np.sqrt(r), links.gauss_orders(link)[-1], ((0, 1), (1, 1)))[0]
    return m[:, 0], m[:, 1]


@dataclass(frozen=True, eq=False)
class _Distribution:
    """The exact moments of one prompt distribution (fresh tasks or a pool's, at a context length): ``S = E[s sᵀ]``,
    ``B = E[s yᵀ x_q]``-matrix (``E[y t] = ⟨B, Γ⟩``), ``Bu`` (``E[u t] = ⟨Bu, Γ⟩``), ``V = E y²``, ``Ey``, ``Eu2``,
    the problem at that length and the pool's tasks (``None``: fresh)."""

    pb: object
    tasks: object
    S: np.ndarray
    B: np.ndarray
    Bu: np.ndarray
    V: float
    Ey: float
    Eu2: float


def distribution(pb, pool, N):
    """The exact moments (a :class:`_Distribution`) of the prompts of fresh tasks (``pool=None``) or of the tasks of
    ``pool`` (K, D) in turn, at context length ``N``."""
    from linattn._kernel_errors import kernel_moments

    pbt = dataclasses.replace(pb, N=N, tasks=None)
    km = kernel_moments(pbt, "linear", pool=pool)
    D = pb.D
    if pool is None:
        Bu, Ey, Eu2 = query_overlap_strength(pbt) * np.eye(D) / D, label_mean(pbt), 1.0
    else:
        r = np.sum(pool * pool, axis=1) / D
        f0, f1 = _task_radial(pb.link, r)
        what = pool / np.sqrt(D * r)[:, None]
        Bu = (what.T * (f1 * np.sqrt(r))) @ what / pool.shape[0]
        Ey, Eu2 = float(f0.mean()), float(r.mean())
    return _Distribution(pb=pbt, tasks=pool, S=km.S, B=km.B, Bu=Bu, V=float(km.V), Ey=float(Ey), Eu2=Eu2)


def components(dist, law, n, gen):
    """``n`` components ``(r, κ, v)`` of ``dist`` for a ``Γ̂`` drawn from its law: ``Γ̂ᵀs = Γ̄ᵀs + g`` with
    ``g ~ N(0, (sᵀCs) I_D)`` (``Cov(vec Γ̂) = C ⊗ I_D``), one draw per component."""
    D = dist.pb.D
    w, s, a = _contexts(dist, law, n, gen)
    return (np.sum(w**2, axis=1) / D, np.einsum("pd,pd->p", a, w) / np.sqrt(D), np.einsum("pd,pd->p", a, a))


def _contexts(dist, law, n, gen):
    """``n`` contexts of ``dist`` from raw tokens (the pool's tasks in turn, or fresh): their tasks ``w``, statistics
    ``s`` and ``Γ̂ᵀs = Γ̄ᵀs + g`` for a ``Γ̂`` drawn from ``law`` (``g ~ N(0, (sᵀCs) I_D)``, one draw per context)."""
    rows = None if dist.tasks is None else dist.tasks[np.arange(n) % dist.tasks.shape[0]]
    tok = sampling.sample_tokens(dist.pb, n, gen, rows)
    s = np.einsum("pnd,pn->pd", tok.X, tok.y) / dist.pb.N
    a = s @ law.mean + np.sqrt(np.maximum(np.einsum("pd,pd->p", s @ law.cov, s), 0.0))[:, None] * \
        gen.standard_normal((n, dist.pb.D))
    return tok.w, s, a


def second_moments(dist, law):
    """``(E[u t], E[y t], E[t²])`` averaged over ``Γ̂`` (``E t² = tr(Γ̄ᵀSΓ̄) + D tr(SC)``)."""
    D = dist.pb.D
    G = law.mean
    return (float(np.sum(dist.Bu * G)), float(np.sum(dist.B * G)),
            float(np.sum(G * (dist.S @ G))) + D * float(np.sum(dist.S * law.cov)))


def linear_errors(train, test, law, lam):
    """Test errors of the two linear readouts on ``test`` (:mod:`replica._feature_theory`): the best linear readout of
    the training distribution ``a₀ + a₁t`` (``a₀ = E_train y``, ``a₁ = E_train[yt]/E_train[t²]`` per dataset) and the
    trained linear-readout learner (``Ŵ = a₁Γ̂`` the ridge, intercept ``E_train y/(1 + λ)``)."""
    D = train.pb.D
    _, X_tr, Y_tr = second_moments(train, law)
    _, X_te, Y_te = second_moments(test, law)
    cross = float(np.sum(train.B * (law.cov @ test.B)))       # Cov(⟨B_tr, Γ̂⟩, ⟨B_te, Γ̂⟩) = tr(B_trᵀ C B_te)
    var_tr = float(np.sum(train.B * (law.cov @ train.B)))
    a0 = train.Ey
    best = 0.5 * (test.V - 2 * a0 * test.Ey + a0**2)        # Γ̂ = 0 (t ≡ 0): the intercept alone
    if Y_tr > 0.0:
        best -= (X_tr * X_te + cross) / Y_tr - 0.5 * (X_tr**2 + var_tr) * Y_te / Y_tr**2
    b0 = train.Ey / (1.0 + lam)
    ridge = 0.5 * (test.V - 2 * b0 * test.Ey + b0**2 - 2 * X_te + Y_te)
    del D
    return float(best), float(ridge)


def gaussian_optimal(dist, law):
    """The Gaussian formula (:mod:`replica._feature_theory`) for ``dist``'s own optimal readout:
    ``½(V − Σ_k c_k² r^{2k})`` with the Hermite coefficients of ``z ↦ f(√(E u²) z)`` and ``r = E[ut]/√(E u² E t²)``."""
    ut, _, tt = second_moments(dist, law)
    r = float(np.clip(ut / np.sqrt(dist.Eu2 * tt), -1.0, 1.0)) if tt > 0 else 0.0
    link = dist.pb.link
    if dist.Eu2 != 1.0:
        link = _scaled_link(link, float(np.sqrt(dist.Eu2)))
    return float(0.5 * (dist.V - gaussian_readout_power(link, r)))


@functools.lru_cache(maxsize=64)
def _scaled_link(link, scale):
    return links.Link(f"custom:{link.name}*{scale!r}", lambda z: link(scale * np.asarray(z, float)))


# --------------------------------------------------------------------------- the readout as trained
#: queries drawn per sampled context for the trained readout's samples (:func:`_prompt_samples`)
N_QUERIES = 32
#: disjoint groups of contexts whose spread gives the trained readout's standard errors
N_GROUPS = 4
#: training sets of ``P`` prompts on which the readout is fitted (over all groups)
N_REPLICATES = 64


def _prompt_samples(dist, law, n, gen, P, centre, scale):
    r"""Exact samples ``(y, t, t_in)`` of ``dist``'s prompts for a ``Γ̂`` drawn from ``law`` (one draw per context,
    :data:`N_QUERIES` queries each; :mod:`replica._feature_theory`): the label, the attention output of a prompt
    independent of ``Γ̂`` (a test prompt) and the in-sample output of a *training* prompt,
    ``t_in = (h(y − c) + t)/(1 + h)`` with the leverage ``h = |x_q|² sᵀAs/P`` (``A`` the ridge's resolvent, ``c`` the
    centre of the ridge's labels), both divided by ``scale`` (the readout's units: ``Γ = Ŵ/a₁``)."""
    D = dist.pb.D
    w, s, a = _contexts(dist, law, n, gen)
    xq = gen.standard_normal((n, N_QUERIES, D))
    u = np.einsum("pqd,pd->pq", xq, w) / np.sqrt(D)
    y = dist.pb.link(u) + dist.pb.noise * gen.standard_normal(u.shape)
    t = np.einsum("pqd,pd->pq", xq, a)
    h = np.einsum("pqd,pqd->pq", xq, xq) * np.einsum("pd,pd->p", s @ law.resolvent, s)[:, None] / P
    return y, t / scale, (h * (y - centre) + t) / ((1.0 + h) * scale)


def _fit_errors(train, tests, P, lam, n_knots, replicates, gen):
    r"""The trained readout fitted, as the learner fits it (:func:`linattn._readout.quantile_knots`,
    :func:`linattn._readout.fit_readout`), to ``replicates`` training sets of ``P`` prompts drawn without replacement
    from the samples of the training law ``train = (y, t_in)`` (all of them where ``P`` exceeds their number), and
    evaluated on the samples ``tests = [(y, t), ...]``. Returns the means over replicates of the training loss's data
    term ``½ mean (y − g(t_in))²``, of the readout's decay ``½λ|a|²`` and of each test error ``½ mean (y − g(t))²``."""
    y, t_in = (x.ravel() for x in train)
    tests = [(yt.ravel(), tt.ravel()) for yt, tt in tests]
    m = min(int(P), y.size)
    fit, decay, errors = [], [], []
    for _ in range(replicates):
        idx = gen.choice(y.size, m, replace=False) if m < y.size else np.arange(y.size)
        knots = readout_class.quantile_knots(t_in[idx], n_knots)
        a = readout_class.fit_readout(t_in[idx], y[idx], knots, lam)
        fit.append(0.5 * float(np.mean((y[idx] - readout_class.readout(t_in[idx], a, knots)) ** 2)))
        decay.append(0.5 * lam * float(a @ a))
        errors.append([0.5 * float(np.mean((yt - readout_class.readout(tt, a, knots)) ** 2)) for yt, tt in tests])
    return float(np.mean(fit)), float(np.mean(decay)), [float(e) for e in np.mean(errors, axis=0)]


def trained_readout(train, tests, law, P, lam, n_knots, n, gen, decay):
    """The trained readout's training loss (data term, readout decay) and test errors on each distribution of
    ``tests``: the mean over :data:`N_GROUPS` disjoint groups of contexts (each with its own samples and
    :data:`N_REPLICATES` / groups training sets), with their spread / √groups as standard errors."""
    scale = law.norm2 ** 0.25 if decay == "balanced" and law.norm2 > 0 else 1.0
    tr = _prompt_samples(train, law, n, gen, P, train.Ey, scale)
    te = [_prompt_samples(dist, law, n, gen, P, train.Ey, scale)[:2] for dist in tests]
    groups = [_fit_errors((tr[0][b], tr[2][b]), [(y[b], t[b]) for y, t in te], P, lam, n_knots,
                          N_REPLICATES // N_GROUPS, gen) for b in np.array_split(np.arange(n), N_GROUPS)]
    train_fit = mean_se([g[0] for g in groups])
    decay_a = float(np.mean([g[1] for g in groups]))
    errors = [mean_se([g[2][i] for g in groups]) for i in range(len(te))]
    return train_fit, decay_a, errors
