r"""The exact two-parameter minimal model of the 1-point → 2-point transition (Gibson, Cui & Reddy 2026).

The minimal model of C. Gibson, W. Cui & G. Reddy, *Distinct mechanisms underlying in-context learning in
transformers*, arXiv:2604.12151 (their released code: ``minimal_models/ICL_mini_2paras.py`` with
``minimal_models/src/data_generator.py`` and ``config/config_mini_2params.yaml`` of
``github.com/cole-gibson/context-adaptive-transformer``), evaluated exactly.

Data. A fresh Markov chain on ``C`` states per sequence, its rows i.i.d. ``Dirichlet(α·1_C)``; the
sequence ``s_0 … s_N``: the context ``s_0 … s_{N−1}`` and the target ``s_N``. ``first_state="onestep"``
(the authors' generator): ``s_0`` is one step from a hidden uniform state ``h``; ``"uniform"``: ``s_0``
uniform; ``"stationary"``: ``s_0`` from the chain's stationary law (no closed form: Monte Carlo only).

Model. The query is ``q = s_{N−1}``, ``m_k = 1[s_k = q]``; the keys ``i = 1 … N−1`` carry the value
``s_i`` and the score

.. math:: \mathrm{score}_i = β\,a_i(δ),\qquad
          a_i(δ) = \frac{f(δ)\,m_{i−1} + S_i}{e^δ + i − 1},\qquad S_i = \sum_{k < i−1} m_k,

with ``f(δ) = e^δ − 1`` (``variant="released"``: the authors' code) or ``f(δ) = e^δ``
(``variant="attention"``: a layer-1 softmax of position ``i`` over the positions ``0 … i−1`` with logit
``δ`` on the previous token ``i−1`` and ``0`` on the others gives the weights ``e^δ/(e^δ + i − 1)`` and
``1/(e^δ + i − 1)``, and the layer-2 score ``β × (the overlap of that mixture with q)``). The prediction
is ``p(c) = Σ_{i: s_i = c} softmax(score)_i``.

Loss. ``p(s_N) = 0`` exactly, whatever ``(β, δ)``, when the target does not appear among the values
``s_1 … s_{N−1}`` (*unseen*, probability ``p_unseen``). ``loss_seen = E[−log p(s_N) | seen]`` (no ε);
the reported loss is the authors' training objective ``E[−log(p(s_N) + ε)]`` with ``ε = eps`` (their
``1e-10``) evaluated as

.. math:: L = (1 − p_\mathrm{unseen})\,L_\mathrm{seen} + p_\mathrm{unseen} \log(1/ε),

which differs from theirs only by ``−log(1 + ε/p)`` on seen sequences (below ``1e-9`` for ``p > 0.1``).
The unseen part is a constant, so ``∇L = (1 − p_unseen) ∇L_seen`` (``grad``, ``hessian``).

Exact evaluation. The law of a sequence is a product of Dirichlet–multinomial (Pólya) factors per row
of transition counts ``n_{rc}`` (``n_r = Σ_c n_{rc}``):

.. math:: P(s) = \frac{1}{C}\prod_r \frac{Γ(Cα)}{Γ(Cα + n_r)}\prod_c\frac{Γ(α + n_{rc})}{Γ(α)}
          \times\begin{cases} 1 & \text{uniform}\\
          \sum_h \frac{α + n_{h s_0}}{Cα + n_h} & \text{onestep}\end{cases}

(onestep: the hidden transition ``h → s_0`` is one more draw from row ``h``, whose Pólya predictive
probability is the factor). The law and the model are invariant under relabelling the states, so only
canonical sequences (restricted growth strings: labels in order of first appearance) are enumerated,
each with multiplicity ``C!/(C − k)!`` (``k`` labels used); the model sees a sequence only through the
bits ``(m_0 … m_{N−2}, 1[s_1 = s_N] … 1[s_{N−1} = s_N])``, so the weights are summed per pattern.
Derivatives are analytic: with ``log p = LSE_A(score) − LSE(score)`` (``A`` the keys whose value is
the target), ``∂ LSE_B = E_B[∂ score]`` and ``∂² LSE_B = E_B[∂² score] + Cov_B(∂ score, ∂ score)``
(softmax weights restricted to ``B``), ``∂_β score = a``, ``∂_δ score = β a'``, ``∂²_{βδ} score = a'``,
``∂²_δ score = β a''``, ``a' = e^δ u/d²``, ``a'' = a'(1 − 2e^δ/d)``, ``d = e^δ + i − 1``, and
``u = m_{i−1} d − (f m_{i−1} + S_i)`` independent of ``δ`` (``i m_{i−1} − S_i`` released,
``(i − 1) m_{i−1} − S_i`` attention).

Gradient flow and the transition: :func:`markov_minimal_flow`, :func:`markov_minimal_theory` and
``docs/markov_minimal.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numba
import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln

from linattn import check
from linattn.errors import ConvergenceError
from linattn.markov.chains import guard_memory
from linattn.results import python_scalars, short_repr

from ._ode import integrate

VARIANTS = ("released", "attention")
FIRST_STATES = ("onestep", "uniform", "stationary")
METHODS = ("auto", "exact", "mc")
#: ``method="auto"`` enumerates exactly when the number of canonical sequences is at most this
MAX_EXACT = 300_000
_CHUNK = 1 << 15


# ----------------------------------------------------------------------------- enumeration
def n_canonical(C, L):
    """Number of canonical sequences (restricted growth strings) of length ``L`` on at most ``C`` labels:
    ``Σ_{k ≤ C} S(L, k)`` (Stirling numbers of the second kind).

    Parameters
    ----------
    C, L : int

    Returns
    -------
    int

    Examples
    --------
    >>> n_canonical(2, 4), n_canonical(3, 3)
    (8, 5)
    """
    C = check.positive_int("C", C)
    L = check.positive_int("L", L, maximum=100_000)    # the count has up to L log10(C) digits
    return _count_canonical(C, L)


def _count_canonical(C, L, cap=None):
    """:func:`n_canonical`, stopping with ``cap + 1`` as soon as the count exceeds ``cap`` (the counts grow with
    ``L``)."""
    row = [1] + [0] * C          # S(n, k) for k = 0..C, starting at n = 0
    for _ in range(L):
        row = [0] + [k * row[k] + row[k - 1] for k in range(1, C + 1)]
        if cap is not None and sum(row) > cap:
            return cap + 1
    return int(sum(row))


def _canonical_sequences(C, L):
    """All restricted growth strings of length ``L`` with labels ``< C`` and the number of labels each uses."""
    seq = np.zeros((1, 1), dtype=np.int8)
    top = np.ones(1, dtype=np.int64)     # labels used so far
    for _ in range(1, L):
        reps = np.minimum(top + 1, C)    # next label in 0 … min(top, C − 1)
        idx = np.repeat(np.arange(len(seq)), reps)
        lab = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        seq = np.concatenate([seq[idx], lab[:, None].astype(np.int8)], axis=1)
        top = np.maximum(top[idx], lab + 1)
    return seq, top


#: above this ``α`` the Pólya factors are sums of logarithms (:func:`_log_law`): ``log Γ(α + n) − log Γ(α)`` loses
#: ``~1e-16 α log α`` to cancellation (1e-10 at α = 1e5; the law was garbage at α = 1e15)
_ALPHA_LARGE = 1e5


def _log_law(seq, C, concentration, first_state):
    """Log-probability of each sequence (rows of ``seq``) under a fresh Dirichlet(α) chain (module docstring).

    For ``α > 1e5`` the rising factorials ``Γ(a + n)/Γ(a) = Π_{j<n} (a + j)`` (``a = α`` and ``Cα``, ``n`` a count)
    are summed as logarithms, ``log(Cα + j) = log C + log(α + j/C)``, which neither cancels nor overflows."""
    n_seq, L = seq.shape
    rows = np.arange(n_seq)
    counts = np.zeros((n_seq, C, C))
    for t in range(L - 1):
        np.add.at(counts, (rows, seq[:, t].astype(np.int64), seq[:, t + 1].astype(np.int64)), 1.0)
    n_row = counts.sum(axis=2)
    first = counts[rows, :, seq[:, 0].astype(np.int64)]
    if concentration > _ALPHA_LARGE:
        j = np.arange(L)
        rise = np.concatenate([[0.0], np.cumsum(np.log(concentration + j))])                 # log Γ(α + n)/Γ(α)
        rise_c = np.concatenate([[0.0], np.cumsum(math.log(C) + np.log(concentration + j / C))])  # the same for Cα
        logp = (rise[counts.astype(np.int64)].sum(axis=(1, 2)) - rise_c[n_row.astype(np.int64)].sum(axis=1)
                - math.log(C))
        if first_state == "onestep":      # (α + n_{h s0})/(Cα + n_h) = (1 + n_{h s0}/α)/(C + n_h/α)
            logp = logp + np.log(((1.0 + first / concentration) / (C + n_row / concentration)).sum(axis=1))
        return logp
    logp = (C * gammaln(C * concentration) - gammaln(C * concentration + n_row).sum(axis=1)
            + (gammaln(concentration + counts) - gammaln(concentration)).sum(axis=(1, 2)) - math.log(C))
    if first_state == "onestep":
        predictive = (concentration + first) / (C * concentration + n_row)
        logp = logp + np.log(predictive.sum(axis=1))
    return logp


def _features(seq, N):
    """The bits the model sees: ``m`` (n, N−1) = ``1[s_k = s_{N−1}]``, k = 0 … N−2, and ``A`` (n, N−1) =
    ``1[s_i = s_N]``, i = 1 … N−1."""
    q = seq[:, N - 1:N]
    y = seq[:, N:N + 1]
    return seq[:, :N - 1] == q, seq[:, 1:N] == y


def _aggregate(m, A, weight):
    """Sum ``weight`` over identical ``(m, A)`` patterns; also return the pattern index of every row."""
    packed = np.packbits(np.concatenate([m, A], axis=1), axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    w = np.bincount(inverse.ravel(), weights=weight, minlength=len(first))
    return m[first], A[first], w, inverse.ravel()


@dataclass(frozen=True)
class _Patterns:
    """Distinct model inputs with their total probability (exact) or sample count (Monte Carlo)."""

    m: np.ndarray         # (P, N−1) bool: m_{i−1} for key i = 1 … N−1
    A: np.ndarray         # (P, N−1) bool: key i carries the target
    weight: np.ndarray    # (P,) probability (exact, sums to 1) or number of samples (mc)
    seen: np.ndarray      # (P,) bool: the target is among the values
    inverse: np.ndarray   # (n,) pattern of each sample (mc) or empty (exact)
    n_sequences: int      # canonical sequences enumerated, or samples drawn
    total: float          # Σ weight before normalisation (exact: Σ_s P(s), 1 up to rounding)


@lru_cache(maxsize=16)
def _exact_patterns(C, N, concentration, first_state):
    L = N + 1
    m_parts, a_parts, w_parts = [], [], []
    seq_all, top_all = _canonical_sequences(C, L)
    total = 0.0
    for start in range(0, len(seq_all), 4 * _CHUNK):
        seq = seq_all[start:start + 4 * _CHUNK]
        top = top_all[start:start + 4 * _CHUNK]
        mult = np.exp(gammaln(C + 1) - gammaln(C - top + 1))        # C!/(C − k)!
        prob = mult * np.exp(_log_law(seq, C, concentration, first_state))
        total += float(prob.sum())
        m, A = _features(seq, N)
        m, A, w, _ = _aggregate(m, A, prob)
        m_parts.append(m)
        a_parts.append(A)
        w_parts.append(w)
    m, A, w, _ = _aggregate(np.concatenate(m_parts), np.concatenate(a_parts), np.concatenate(w_parts))
    seen = A.any(axis=1)     # (the cached arrays stay writable: one numba signature for every caller)
    return _Patterns(m=m, A=A, weight=w, seen=seen, inverse=np.zeros(0, dtype=np.int64), n_sequences=len(seq_all),
                     total=total)


def _mc_patterns(C, N, concentration, first_state, n_mc, rng):
    from linattn import markov
    sample = markov.Chains(C=C, concentration=concentration, K=None, first_state=first_state).sample(n_mc, N + 1, rng)
    m, A = _features(np.asarray(sample.states), N)
    m, A, w, inverse = _aggregate(m, A, np.ones(len(m)))
    return _Patterns(m=m, A=A, weight=w, seen=A.any(axis=1), inverse=inverse, n_sequences=int(n_mc), total=float(n_mc))


# ----------------------------------------------------------------------------- the model and its derivatives
@numba.njit(cache=True)
def _kernel(score_scale, delta, m, A, released, order, ell, grad, hess):  # pragma: no cover - compiled
    """Fill ``ell[p] = −log p(target)``, ``grad[p] = ∂ell``, ``hess[p] = (∂_ββ, ∂_βδ, ∂_δδ) ell`` for every
    pattern ``p`` whose target is seen (the others are left at 0). Formulas: module docstring."""
    P, K = m.shape
    pos = delta > 0.0
    e = 0.0 if pos else math.exp(delta)          # e^δ <= 1 (δ <= 0)
    t = math.exp(-delta) if pos else 0.0         # e^{−δ} < 1 (δ > 0): the form without overflow for large δ
    tk0 = math.exp(-delta)                       # e^{−δ} for the first key (d = e^δ); inf only for δ < −709
    f = e - 1.0 if released else e
    a = np.empty(K)
    a1 = np.empty(K)
    a2 = np.empty(K)
    sc = np.empty(K)
    ex = np.empty(K)
    exA = np.empty(K)
    for p in range(P):
        seen = False
        for k in range(K):
            if A[p, k]:
                seen = True
        if not seen:
            continue
        S = 0.0
        top = -np.inf
        topA = -np.inf
        for k in range(K):
            mk = 1.0 if m[p, k] else 0.0
            # u = m_{i−1} d − (f m_{i−1} + S_i), exactly (module docstring; no cancellation at large e^δ)
            u = ((k + 1.0) * mk - S) if released else (k * mk - S)
            if k == 0:                      # d = e^δ, S = 0: a = f m/e^δ, a' = u/e^δ, a'' = −a'
                a[k] = ((1.0 - tk0) * mk if released else mk) if mk != 0.0 else 0.0
                a1[k] = u * tk0 if u != 0.0 else 0.0
                a2[k] = -a1[k]
            elif pos:                       # in e^{−δ}: r = e^δ/d = 1/(1 + k e^{−δ})
                r = 1.0 / (1.0 + k * t)
                a[k] = ((mk * (1.0 - t) if released else mk) + S * t) * r
                a1[k] = u * t * r * r
                a2[k] = a1[k] * (1.0 - 2.0 * r)
            else:
                d = e + k                   # e^δ + i − 1 with i = k + 1 (>= 1)
                a[k] = (f * mk + S) / d
                a1[k] = e * u / (d * d)
                a2[k] = a1[k] * (1.0 - 2.0 * e / d)
            sc[k] = score_scale * a[k]
            S += mk
            if sc[k] > top:
                top = sc[k]
            if A[p, k] and sc[k] > topA:
                topA = sc[k]
        z = 0.0
        zA = 0.0
        for k in range(K):
            ex[k] = math.exp(sc[k] - top)
            z += ex[k]
            exA[k] = math.exp(sc[k] - topA) if A[p, k] else 0.0
            zA += exA[k]
        ell[p] = -(math.log(zA) + topA - math.log(z) - top)
        if order == 0:
            continue
        # first moments under the full softmax (w) and the softmax restricted to A (wA)
        ea = 0.0
        ea1 = 0.0
        ea2 = 0.0
        eaA = 0.0
        ea1A = 0.0
        ea2A = 0.0
        for k in range(K):
            w = ex[k] / z
            ea += w * a[k]
            ea1 += w * a1[k]
            ea2 += w * a2[k]
            if A[p, k]:
                wA = exA[k] / zA
                eaA += wA * a[k]
                ea1A += wA * a1[k]
                ea2A += wA * a2[k]
        grad[p, 0] = -(eaA - ea)
        grad[p, 1] = -score_scale * (ea1A - ea1)
        if order == 1:
            continue
        vaa = 0.0
        va1 = 0.0
        v11 = 0.0
        vaaA = 0.0
        va1A = 0.0
        v11A = 0.0
        for k in range(K):
            w = ex[k] / z
            x = a[k] - ea
            y = a1[k] - ea1
            vaa += w * x * x
            va1 += w * x * y
            v11 += w * y * y
            if A[p, k]:
                wA = exA[k] / zA
                x = a[k] - eaA
                y = a1[k] - ea1A
                vaaA += wA * x * x
                va1A += wA * x * y
                v11A += wA * y * y
        hess[p, 0, 0] = -(vaaA - vaa)
        hess[p, 0, 1] = -((ea1A - ea1) + score_scale * (va1A - va1))
        hess[p, 1, 0] = hess[p, 0, 1]
        hess[p, 1, 1] = -(score_scale * (ea2A - ea2) + score_scale * score_scale * (v11A - v11))


def _per_pattern(score_scale, delta, m, A, variant, order=2):
    """``−log p(target)`` and its gradient and Hessian in ``(β, δ)`` for every pattern with a seen target.

    Returns ``(ell (P,), grad (P, 2), hess (P, 2, 2))``; rows whose target is unseen hold 0.
    """
    P = m.shape[0]
    ell = np.zeros(P)
    grad = np.zeros((P, 2))
    hess = np.zeros((P, 2, 2))
    _kernel(float(score_scale), float(delta), np.ascontiguousarray(m), np.ascontiguousarray(A), variant == "released",
            int(order), ell, grad, hess)
    return ell, grad, hess


def _evaluate(score_scale, delta, pat, variant, eps, order=2):
    """Population averages over the patterns (exact) or sample means with standard errors (mc)."""
    ell, grad, hess = _per_pattern(score_scale, delta, pat.m, pat.A, variant, order)
    seen = pat.seen
    if not seen.any():
        raise ValueError(f"n_mc too small: none of the {pat.n_sequences} sampled sequences has its target among "
                         "s_1 … s_{N−1}, so loss_seen is undefined; sample more sequences")
    w = pat.weight / pat.weight.sum()
    p_unseen = float(w[~seen].sum())
    const = math.log(1.0 / eps)
    per_loss = np.where(seen, ell, const)
    out = {"p_unseen": p_unseen,
           "loss": float(w @ per_loss),
           "loss_seen": float(w[seen] @ ell[seen] / (1.0 - p_unseen)),
           "grad": w @ grad, "hessian": np.tensordot(w, hess, axes=1)}
    if pat.inverse.size == 0:
        zero = {"loss_se": 0.0, "loss_seen_se": 0.0, "p_unseen_se": 0.0,
                "grad_se": np.zeros(2), "hessian_se": np.zeros((2, 2))}
        return {**out, **zero}
    n = pat.inverse.size
    n_seen = float(pat.weight[seen].sum())

    def se(values, mean, mask=None):    # standard error of a sample mean from the per-pattern values
        dev = (values - mean) ** 2
        wt = pat.weight if mask is None else pat.weight * mask
        count = float(wt.sum())
        var = np.tensordot(wt, dev, axes=1) / max(count - 1.0, 1.0)
        return np.sqrt(var / count)

    out["loss_se"] = float(se(per_loss, out["loss"]))
    out["loss_seen_se"] = float(se(ell, out["loss_seen"], seen)) if n_seen > 1 else math.inf
    out["p_unseen_se"] = math.sqrt(max(p_unseen * (1 - p_unseen), 0.0) / n)
    out["grad_se"] = se(grad, out["grad"])
    out["hessian_se"] = se(hess, out["hessian"])
    return out


# ----------------------------------------------------------------------------- public API
def _check_common(C, N, concentration, first_state, variant, method, eps, n_mc):
    C = check.positive_int("C", C, minimum=2, maximum=127)
    N = check.positive_int("N", N, minimum=2)
    concentration = check.positive("concentration", concentration)
    first_state = check.choice("first_state", first_state, FIRST_STATES)
    variant = check.choice("variant", variant, VARIANTS)
    method = check.choice("method", method, METHODS)
    eps = check.real("eps", eps, low=0.0, high=1.0, low_open=True, high_open=True)
    n_mc = check.positive_int("n_mc", n_mc, minimum=2)
    if method == "auto":
        method = ("exact" if first_state != "stationary" and _count_canonical(C, N + 1, MAX_EXACT) <= MAX_EXACT
                  else "mc")
    if method == "exact" and first_state == "stationary":
        check.fail("method", method, "'mc' or 'auto' for first_state='stationary' (no closed-form law)")
    if method == "exact":
        n_can = _count_canonical(C, N + 1, cap=int(check.memory_limit() // (8 * 4 * (N + 1))))
        check.memory(n_can * (N + 1) * 8.0 * 4, "the enumeration of canonical sequences", f"C={C}, N={N}")
    else:   # the states and the model's bits of each sequence; its fresh C x C chain with the sampler's copies
        guard_memory([(48.0, [("n_mc", n_mc), ("N", N + 1)]), (32.0, [("n_mc", n_mc), ("C", C * C)])],
                     f"the Monte Carlo sample of {n_mc} sequences of {N + 1} states (each with a fresh {C} x {C} "
                     "chain)")
    return C, N, concentration, first_state, variant, method, eps, n_mc


def _patterns(C, N, concentration, first_state, method, n_mc, rng):
    rng = check.rng(rng)          # validated even where the exact enumeration does not use it
    if method == "exact":
        return _exact_patterns(C, N, concentration, first_state)
    return _mc_patterns(C, N, concentration, first_state, n_mc, rng)


def _finite_evaluate(score_scale, delta, pat, variant, eps, names):
    """:func:`_evaluate` with its gradient and Hessian, refused (``ValueError`` naming ``names[0]`` or ``names[1]``,
    the larger in magnitude) where they are not finite in float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = _evaluate(score_scale, delta, pat, variant, eps)
    values = np.concatenate([[out["loss"], out["loss_seen"]], np.ravel(out["grad"]), np.ravel(out["hessian"])])
    check.finite_result(values, dict(zip(names, (score_scale, delta))), "the loss with its gradient and Hessian")
    return out


@dataclass(frozen=True)
class MarkovMinimalLoss:
    """The loss of the two-parameter minimal model at one ``(β, δ)`` (module docstring).

    Attributes
    ----------
    score_scale, delta : float
        The parameters.
    C, N : int
        States and context length (the sequence is ``s_0 … s_N``).
    concentration : float
        Dirichlet concentration of every row.
    first_state, variant, method : str
        The law of ``s_0``, the model's factor ``f(δ)``, and ``"exact"`` or ``"mc"``.
    loss : float
        ``L = (1 − p_unseen) loss_seen + p_unseen log(1/eps)`` (the authors' objective, module docstring).
    loss_seen : float
        ``E[−log p(s_N) | s_N ∈ {s_1 … s_{N−1}}]`` (no ε).
    p_unseen : float
        ``P(s_N ∉ {s_1 … s_{N−1}})``.
    grad : ndarray (2,)
        ``(∂L/∂β, ∂L/∂δ)``; ``∇ loss_seen = grad/(1 − p_unseen)``.
    hessian : ndarray (2, 2)
        Second derivatives of ``L`` in ``(β, δ)``.
    loss_se, loss_seen_se, p_unseen_se : float
        Monte Carlo standard errors (0 for ``method="exact"``).
    grad_se : ndarray (2,)
    hessian_se : ndarray (2, 2)
    eps : float
        The floor inside the log for unseen targets (the authors' ``1e-10``).
    n_sequences : int
        Canonical sequences enumerated (exact) or sequences sampled (mc).
    n_patterns : int
        Distinct model inputs ``(m, A)`` the average runs over.
    """

    __repr__ = short_repr

    score_scale: float
    delta: float
    C: int
    N: int
    concentration: float
    first_state: str
    variant: str
    method: str
    loss: float
    loss_seen: float
    p_unseen: float
    grad: np.ndarray
    hessian: np.ndarray
    loss_se: float
    loss_seen_se: float
    p_unseen_se: float
    grad_se: np.ndarray
    hessian_se: np.ndarray
    eps: float
    n_sequences: int
    n_patterns: int

    def __post_init__(self):
        python_scalars(self)


def markov_minimal_loss(score_scale, delta, C, N, concentration, first_state="onestep", variant="released",
                        method="auto",
                        n_mc=200_000, rng=None, eps=1e-10):
    r"""Loss, gradient and Hessian of the minimal model at ``(β, δ)``, exact or Monte Carlo.

    ``score_i = β [f(δ) m_{i−1} + Σ_{k<i−1} m_k]/(e^δ + i − 1)``, ``p(c) = Σ_{i: s_i = c} softmax(score)_i``,
    ``L = (1 − p_unseen) L_seen + p_unseen log(1/ε)`` (module docstring; Gibson, Cui & Reddy 2026,
    arXiv:2604.12151, their ``minimal_models/ICL_mini_2paras.py``).

    Parameters
    ----------
    score_scale, delta : float
        The layer-2 inverse temperature ``β`` and the layer-1 previous-token logit ``δ``.
    C : int
        Number of states, 2 … 127.
    N : int
        Context length (>= 2): context ``s_0 … s_{N−1}``, target ``s_N``.
    concentration : float
        Dirichlet concentration ``α > 0`` of each row of the fresh chain.
    first_state : {"onestep", "uniform", "stationary"}
        Law of ``s_0`` (``"stationary"``: Monte Carlo only).
    variant : {"released", "attention"}
        ``f(δ) = e^δ − 1`` (the authors' code) or ``e^δ`` (the layer-1 softmax derivation).
    method : {"auto", "exact", "mc"}
        ``"auto"``: exact when the number of canonical sequences :func:`n_canonical` ``(C, N+1)`` is at most
        ``MAX_EXACT`` (300 000) and the law has a closed form, else Monte Carlo.
    n_mc : int
        Sequences sampled (Monte Carlo; one fresh chain each, :class:`linattn.markov.Chains`).
    rng : int, tuple of ints, numpy.random.Generator or None
        Randomness of the Monte Carlo sample.
    eps : float
        The floor of the authors' ``log(p + ε)``, in ``(0, 1)``; only the constant unseen part uses it.

    Returns
    -------
    MarkovMinimalLoss

    Examples
    --------
    One key (``N = 2``): the target is seen iff ``s_2 = s_1``, and then ``p = 1``; at ``β = 0`` nothing
    depends on ``δ``.

    >>> r = markov_minimal_loss(0.0, 0.0, C=2, N=2, concentration=1.0)
    >>> round(12 * r.p_unseen, 9), abs(r.loss_seen) < 1e-15, float(r.grad[1])
    (5.0, True, 0.0)
    """
    score_scale = check.real("score_scale", score_scale)
    delta = check.real("delta", delta)
    C, N, concentration, first_state, variant, method, eps, n_mc = _check_common(
        C, N, concentration, first_state, variant, method, eps, n_mc)
    pat = _patterns(C, N, concentration, first_state, method, n_mc, rng)
    out = _finite_evaluate(score_scale, delta, pat, variant, eps, ("score_scale", "delta"))
    return MarkovMinimalLoss(score_scale=score_scale, delta=delta, C=C, N=N, concentration=concentration,
                             first_state=first_state,
                             variant=variant, method=method, eps=eps, n_sequences=pat.n_sequences,
                             n_patterns=len(pat.weight), **out)


# ----------------------------------------------------------------------------- gradient flow
@dataclass(frozen=True)
class MarkovMinimalFlow:
    """Gradient flow ``d(β, δ)/dt = −γ ∇L`` of the minimal model (:func:`markov_minimal_flow`).

    Attributes
    ----------
    times : ndarray (T,)
    score_scale, delta : ndarray (T,)
        The trajectory.
    loss, loss_seen : ndarray (T,)
        ``L`` and ``L_seen`` along it (module docstring).
    escape_time : float
        First time ``|δ(t) − δ_s| = radius`` (``δ_s``: the saddle of :func:`markov_minimal_theory` if
        given, else ``delta0``), located by an integrator event; ``inf`` if not reached by ``times[-1]`` or
        if the start is already at least ``radius`` from ``δ_s``.
    transition_time : float
        First time the loss falls half-way from the 1-point loss ``L(0, ·)`` to ``loss[-1]``; ``inf`` if the
        loss never falls below ``L(0, ·)`` by more than ``1e-9`` (no transition).
    loss_1point : float
        ``L(β = 0, δ)`` (uniform attention: the in-context unigram estimator; independent of ``δ``).
    delta_saddle, radius : float
        The reference ``δ_s`` and the radius of :attr:`escape_time`.
    C, N, concentration, first_state, variant, method, gamma, rtol : as given
    """

    __repr__ = short_repr

    times: np.ndarray
    score_scale: np.ndarray
    delta: np.ndarray
    loss: np.ndarray
    loss_seen: np.ndarray
    escape_time: float
    transition_time: float
    loss_1point: float
    delta_saddle: float
    radius: float
    C: int
    N: int
    concentration: float
    first_state: str
    variant: str
    method: str
    gamma: float
    rtol: float

    def __post_init__(self):
        python_scalars(self)


def markov_minimal_flow(score_scale0, delta0, C, N, concentration, times, first_state="onestep", variant="released",
                        method="auto", gamma=1.0, n_mc=200_000, rng=None, eps=1e-10, rtol=1e-9,
                        delta_saddle=None, radius=0.5):
    r"""Integrate the gradient flow ``d(β, δ)/dt = −γ ∇L(β, δ)`` of the minimal model.

    ``L`` is exact (enumeration) or, with ``method="mc"``, the mean over one fixed Monte Carlo sample of
    ``n_mc`` sequences (a deterministic sample-average loss, so the flow is an ODE). scipy ``solve_ivp``
    (LSODA with the analytic Jacobian ``−γ H``), relative tolerance ``rtol`` and absolute ``rtol·1e-3``.
    The authors' released run is gradient descent with step 5 from ``(0.01, 0.01)`` (Gibson, Cui & Reddy
    2026, arXiv:2604.12151, ``ICL_mini_2paras.py``): ``t = 5 × steps`` at ``γ = 1``.

    Parameters
    ----------
    score_scale0, delta0 : float
        Initial condition.
    C, N, concentration, first_state, variant, method, n_mc, rng, eps
        As in :func:`markov_minimal_loss`.
    times : array_like
        Increasing times ``>= 0`` at which to report the state.
    gamma : float
        Learning rate ``γ > 0``.
    rtol : float
        Relative tolerance of the integrator, in ``(0, 1)``.
    delta_saddle : float, optional
        ``δ_s`` for :attr:`MarkovMinimalFlow.escape_time` (default ``delta0``).
    radius : float
        ``r > 0`` of :attr:`MarkovMinimalFlow.escape_time`.

    Returns
    -------
    MarkovMinimalFlow

    Raises
    ------
    linattn.ConvergenceError
        If the integrator fails.
    """
    score_scale0 = check.real("score_scale0", score_scale0)
    delta0 = check.real("delta0", delta0)
    C, N, concentration, first_state, variant, method, eps, n_mc = _check_common(
        C, N, concentration, first_state, variant, method, eps, n_mc)
    t = check.finite_array("times", times, ndim=1)
    if t.size == 0 or np.any(t < 0) or np.any(np.diff(t) <= 0):
        check.fail("times", times, "a non-empty increasing 1-d array of times >= 0")
    gamma = check.positive("gamma", gamma)
    rtol = check.tolerance("rtol", rtol)
    d_s = delta0 if delta_saddle is None else check.real("delta_saddle", delta_saddle)
    radius = check.positive("radius", radius)
    pat = _patterns(C, N, concentration, first_state, method, n_mc, rng)
    _finite_evaluate(score_scale0, delta0, pat, variant, eps, ("score_scale0", "delta0"))  # a start in float64's range

    def rhs(_, th):
        return -gamma * _evaluate(th[0], th[1], pat, variant, eps, order=1)["grad"]

    def jac(_, th):
        return -gamma * _evaluate(th[0], th[1], pat, variant, eps)["hessian"]

    def hit(_, th):
        return abs(th[1] - d_s) - radius
    hit.terminal = False
    sol = integrate("markov_minimal_flow", rhs, (0.0, float(t[-1])), [score_scale0, delta0], method="LSODA", jac=jac,
                    t_eval=t, rtol=rtol, atol=rtol * 1e-3, events=hit)
    score_scale, delta = sol.y
    vals = [_evaluate(b, d, pat, variant, eps, order=0) for b, d in zip(score_scale, delta)]
    loss = np.array([v["loss"] for v in vals])
    loss_seen = np.array([v["loss_seen"] for v in vals])
    up = [te for te in sol.t_events[0] if abs(delta0 - d_s) < radius]
    escape = float(up[0]) if up else math.inf
    l1 = _evaluate(0.0, 0.0, pat, variant, eps, order=0)["loss"]
    transition = math.inf
    if loss[-1] < l1 - 1e-9:
        half = 0.5 * (l1 + loss[-1])
        below = np.nonzero(loss <= half)[0]
        k = int(below[0])
        if k == 0:
            transition = float(t[0])
        else:   # linear interpolation between the bracketing report times
            transition = float(t[k - 1] + (half - loss[k - 1]) * (t[k] - t[k - 1]) / (loss[k] - loss[k - 1]))
    return MarkovMinimalFlow(times=t, score_scale=score_scale, delta=delta, loss=loss, loss_seen=loss_seen,
                             escape_time=escape,
                             transition_time=transition, loss_1point=l1, delta_saddle=d_s, radius=radius, C=C, N=N,
                             concentration=concentration, first_state=first_state, variant=variant, method=method,
                             gamma=gamma,
                             rtol=rtol)


# ----------------------------------------------------------------------------- theory of the transition
@dataclass(frozen=True)
class MarkovMinimalTheory:
    r"""The saddle on the 1-point line and the linear escape from it (:func:`markov_minimal_theory`).

    Attributes
    ----------
    loss_1point : float
        ``L(0, δ)`` (any ``δ``): uniform attention, the in-context unigram estimator.
    delta_saddle : float
        ``δ_s``: the root of ``∂_β L(0, δ) = 0``; ``(0, δ_s)`` is the only fixed point on the line ``β = 0``.
    c_score_scale, c_score_scale_delta : float
        ``−∂_β L`` and ``−∂²_{βδ} L`` at the origin (the first-order expansion around the unigram solution).
    hessian : ndarray (2, 2)
        ``H`` at the saddle (``H_δδ = 0`` exactly: at ``β = 0`` the loss does not depend on ``δ``).
    rate : float
        ``λ₊ = γ(−H_ββ + √(H_ββ² + 4 H_βδ²))/2``: the growth rate of the unstable direction.
    rate_stable : float
        ``λ₋ = γ(−H_ββ − √(H_ββ² + 4 H_βδ²))/2 < 0``.
    unstable : ndarray (2,)
        Unit eigenvector ``v₊`` in ``(β, δ)``, with ``v₊[1] > 0``.
    gamma : float
    C, N, concentration, first_state, variant, method : as given
    delta_saddle_se, rate_se : float
        Monte Carlo standard errors (0 when exact): ``s.e.(∂_β L)/|H_βδ|`` at ``δ_s``, and the first-order
        propagation of the s.e. of ``H_ββ, H_βδ`` into ``λ₊`` at the estimated ``δ_s`` (the spread of ``δ_s``
        itself is not propagated into ``rate_se``).
    """

    __repr__ = short_repr

    loss_1point: float
    delta_saddle: float
    c_score_scale: float
    c_score_scale_delta: float
    hessian: np.ndarray
    rate: float
    rate_stable: float
    unstable: np.ndarray
    gamma: float
    C: int
    N: int
    concentration: float
    first_state: str
    variant: str
    method: str
    delta_saddle_se: float
    rate_se: float

    def __post_init__(self):
        python_scalars(self)

    def escape_time(self, score_scale0, delta0, radius=0.5):
        r"""Time for the linearised flow ``ẏ = −γ H y``, ``y = (β, δ − δ_s)``, to reach ``|y_δ| = r``.

        Exact for the linear dynamics (closed form ``y(t) = Σ_± v_± (w_±·y_0) e^{λ_± t}``, the time by root
        finding); the true flow differs by the cubic terms, a relative ``O(r)`` correction to the
        time spent near ``|y_δ| ≈ r``. Far from the saddle ``t ≈ (1/λ₊) log(r/|v₊δ (w₊·y₀)|)``.

        Parameters
        ----------
        score_scale0, delta0 : float
        radius : float

        Returns
        -------
        float
            ``inf`` if the unstable amplitude ``w₊·y₀`` is 0.
        """
        score_scale0 = check.real("score_scale0", score_scale0)
        delta0 = check.real("delta0", delta0)
        radius = check.positive("radius", radius)
        lam, vec = np.linalg.eigh(-self.gamma * self.hessian)    # symmetric: orthonormal eigenvectors
        y0 = np.array([score_scale0, delta0 - self.delta_saddle])
        amp = vec.T @ y0

        def y_delta(t):
            return float(vec[1] @ (amp * np.exp(lam * t)))
        if abs(y_delta(0.0)) >= radius:
            return 0.0
        if amp[1] * vec[1, 1] == 0.0:
            return math.inf
        hi = 1.0 / lam[1]
        while abs(y_delta(hi)) < radius:
            hi *= 2.0
            if hi > 1e12 / lam[1]:
                return math.inf
        return float(brentq(lambda t: abs(y_delta(t)) - radius, 0.0, hi, xtol=1e-12 * hi, rtol=1e-14))


def markov_minimal_theory(C, N, concentration, first_state="onestep", variant="released", method="auto", gamma=1.0,
                          n_mc=200_000, rng=None, eps=1e-10, bracket=(-6.0, 6.0)):
    r"""The 1-point saddle of the minimal model and the rate of escape from it (``docs/markov_minimal.md``).

    On the line ``β = 0`` (uniform attention: the in-context unigram, "1-point" predictor) the loss is the
    constant ``L_1``, ``∂_δ L = 0`` and ``∂²_δ L = 0``, and ``∂_β L(0, δ) = −E[⟨a(δ)⟩_A − ⟨a(δ)⟩]``
    (mean over the keys carrying the target minus the mean over all keys). Its root ``δ_s`` is the only
    fixed point of the flow on the line, a saddle with Hessian ``[[H_ββ, H_βδ], [H_βδ, 0]]`` (determinant
    ``−H_βδ² < 0``): the flow leaves it along ``v₊`` at the rate
    ``λ₊ = γ(−H_ββ + √(H_ββ² + 4H_βδ²))/2``, to the 2-point basin (``δ`` up) or away from it (``δ`` down).
    Every derivative is exact (analytic, on the enumeration), or Monte Carlo with standard errors.

    Parameters
    ----------
    C, N, concentration, first_state, variant, method, gamma, n_mc, rng, eps
        As in :func:`markov_minimal_flow`.
    bracket : (float, float)
        Interval of ``δ`` scanned (41 points) for the sign change of ``∂_β L(0, δ)``: two increasing real numbers
        whose difference is finite in float64.

    Returns
    -------
    MarkovMinimalTheory

    Raises
    ------
    linattn.ConvergenceError
        If ``∂_β L(0, δ)`` does not change sign on ``bracket``, or the root in the interval of the sign change is
        not found to ``1e-13`` (a ``bracket`` too wide).
    """
    C, N, concentration, first_state, variant, method, eps, n_mc = _check_common(
        C, N, concentration, first_state, variant, method, eps, n_mc)
    gamma = check.positive("gamma", gamma)
    br = check.finite_array("bracket", bracket, shape=(2,))
    if not (br[0] < br[1] and math.isfinite(float(br[1]) - float(br[0]))):
        check.fail("bracket", bracket, "two increasing real numbers whose difference is finite in float64")
    pat = _patterns(C, N, concentration, first_state, method, n_mc, rng)

    def slope(d):
        return _evaluate(0.0, d, pat, variant, eps, order=1)["grad"][0]
    grid = np.linspace(br[0], br[1], 41)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.array([slope(d) for d in grid])
    check.finite_result(vals, {"bracket": br}, "∂L/∂β(0, δ) on the bracket")
    change = np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) <= 0)[0]
    if change.size == 0:
        raise ConvergenceError(f"markov_minimal_theory: ∂L/∂β(0, δ) has no sign change for δ in ({br[0]:g}, {br[1]:g}) "
                               f"(values {vals[0]:.3g} … {vals[-1]:.3g}); widen bracket")
    k = int(change[np.argmin(np.abs(grid[change]))])
    d_s = grid[k]
    if vals[k] != 0:
        # Brent halves the interval at least every other step: enough iterations for any width of the grid step
        span = grid[k + 1] - grid[k]
        maxiter = 100 + 4 * max(0, math.ceil(math.log2(span) - math.log2(1e-13)))
        d_s, info = brentq(slope, grid[k], grid[k + 1], xtol=1e-13, rtol=1e-13, maxiter=maxiter, full_output=True,
                           disp=False)
        if not info.converged:
            raise ConvergenceError(f"markov_minimal_theory: the root of ∂L/∂β(0, δ) in ({grid[k]:g}, {grid[k + 1]:g}) "
                                   f"was not found in {maxiter} iterations ({info.flag}); narrow bracket")
    at_s = _evaluate(0.0, d_s, pat, variant, eps)
    at_0 = _evaluate(0.0, 0.0, pat, variant, eps)
    H = at_s["hessian"].copy()
    H[1, 1] = 0.0          # exactly 0 at β = 0 (the kernel's value is 0 up to rounding)
    h, c = H[0, 0], H[0, 1]
    root = math.sqrt(h * h + 4 * c * c)
    lam_p = gamma * (-h + root) / 2
    lam_m = gamma * (-h - root) / 2
    v = np.array([c, -(h + lam_p / gamma)]) if c != 0 else np.array([0.0, 1.0])
    v = v / np.linalg.norm(v)
    v = v if v[1] > 0 else -v
    # Monte Carlo errors: δ_s from s.e.(∂_β L)/|∂²_βδ L|; λ₊ from the s.e. of H_ββ and H_βδ
    se_slope = at_s["grad_se"][0]
    d_se = float(se_slope / abs(c)) if c != 0 else math.inf
    dl_dh = gamma * (-1 + h / root) / 2
    dl_dc = gamma * 2 * c / root
    rate_se = math.hypot(dl_dh * at_s["hessian_se"][0, 0], dl_dc * at_s["hessian_se"][0, 1])
    return MarkovMinimalTheory(loss_1point=at_s["loss"], delta_saddle=d_s, c_score_scale=-at_0["grad"][0],
                               c_score_scale_delta=-at_0["hessian"][0, 1], hessian=H, rate=lam_p, rate_stable=lam_m,
                               unstable=v, gamma=gamma, C=C, N=N, concentration=concentration, first_state=first_state,
                               variant=variant, method=method, delta_saddle_se=d_se, rate_se=rate_se)
