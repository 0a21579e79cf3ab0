r"""The exact two-parameter minimal model of the 1-point → 2-point transition (Gibson, Cui & Reddy 2026).

The minimal model of C. Gibson, W. Cui & G. Reddy, *Distinct mechanisms underlying in-context learning in
transformers*, arXiv:2604.12151 (their released code: ``minimal_models/ICL_mini_2paras.py`` with
``minimal_models/src/data_generator.py`` and ``config/config_mini_2params.yaml`` of
``github.com/cole-gibson/context-adaptive-transformer``), evaluated exactly.

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

Exact evaluation. The loss, its gradient and its Hessian are averages over the patterns of bits
``(m_0 … m_{N−2}, 1[s_1 = s_N] … 1[s_{N−1} = s_N])`` of the sequences, weighted by their exact law (the enumeration
of canonical sequences) or counted in a Monte Carlo sample (:mod:`dynamics._minimal_sequences`).
Derivatives are analytic: with ``log p = LSE_A(score) − LSE(score)`` (``A`` the keys whose value is
the target), ``∂ LSE_B = E_B[∂ score]`` and ``∂² LSE_B = E_B[∂² score] + Cov_B(∂ score, ∂ score)``
(softmax weights restricted to ``B``), ``∂_β score = a``, ``∂_δ score = β a'``, ``∂²_{βδ} score = a'``,
``∂²_δ score = β a''``, ``a' = e^δ u/d²``, ``a'' = a'(1 − 2e^δ/d)``, ``d = e^δ + i − 1``, and
``u = m_{i−1} d − (f m_{i−1} + S_i)`` independent of ``δ`` (``i m_{i−1} − S_i`` released,
``(i − 1) m_{i−1} − S_i`` attention).

Gradient flow and the transition: :func:`dynamics._minimal_flow.markov_minimal_flow`,
:func:`dynamics._minimal_theory.markov_minimal_theory` and ``docs/markov_minimal.md``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from linattn import _check as check
from linattn._arguments import choice, integer, public, real, tolerance
from linattn._results import python_scalars, short_repr
from linattn.markov._chains import guard_memory

from ._minimal_sequences import FIRST_STATES, MAX_EXACT, METHODS, count_canonical, sequence_patterns

VARIANTS = ("released", "attention")


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


def evaluate(score_scale, delta, pat, variant, eps, order=2):
    """Population averages over the patterns (exact) or sample means with standard errors (mc) of the loss, its
    gradient and (``order=2``) its Hessian: a dict of ``loss``, ``loss_seen``, ``p_unseen``, ``grad``, ``hessian``
    and their ``*_se``."""
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
    out["loss_seen_se"] = float(se(ell, out["loss_seen"], seen)) if n_seen > 1 else math.nan   # one seen: no spread
    out["p_unseen_se"] = math.sqrt(max(p_unseen * (1 - p_unseen), 0.0) / n)
    out["grad_se"] = se(grad, out["grad"])
    out["hessian_se"] = se(hess, out["hessian"])
    return out


# ----------------------------------------------------------------------------- the arguments and the loss
#: the rules of the arguments the loss, the flow and the theory share (``concentration``, ``rng`` and ``gamma`` by the
#: table of :mod:`linattn._arguments`)
COMMON = dict(C=integer(minimum=2, maximum=127), N=integer(minimum=2), first_state=choice(FIRST_STATES),
              variant=choice(VARIANTS), method=choice(METHODS), eps=tolerance(), n_mc=integer(minimum=2))


def resolve_method(C, N, first_state, method, n_mc):
    """``method`` of checked arguments with ``"auto"`` resolved to ``"exact"`` or ``"mc"``; ``"exact"`` refused for
    ``first_state="stationary"``, and the memory of the enumeration or of the sample checked."""
    if method == "auto":
        method = ("exact" if first_state != "stationary" and count_canonical(C, N + 1, MAX_EXACT) <= MAX_EXACT
                  else "mc")
    if method == "exact" and first_state == "stationary":
        check.fail("method", method, "'mc' or 'auto' for first_state='stationary' (no closed-form law)")
    if method == "exact":
        n_can = count_canonical(C, N + 1, cap=int(check.memory_limit() // (8 * 4 * (N + 1))))
        check.memory(n_can * (N + 1) * 8.0 * 4, "the enumeration of canonical sequences", f"C={C}, N={N}")
    else:   # the states and the model's bits of each sequence; its fresh C x C chain with the sampler's copies
        guard_memory([(48.0, [("n_mc", n_mc), ("N", N + 1)]), (32.0, [("n_mc", n_mc), ("C", C * C)])],
                     f"the Monte Carlo sample of {n_mc} sequences of {N + 1} states (each with a fresh {C} x {C} "
                     "chain)")
    return method


def finite_evaluate(score_scale, delta, pat, variant, eps, names):
    """:func:`evaluate` with its gradient and Hessian, refused (``ValueError`` naming ``names[0]`` or ``names[1]``,
    the larger in magnitude) where they are not finite in float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = evaluate(score_scale, delta, pat, variant, eps)
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
        Monte Carlo standard errors (0 for ``method="exact"``, which samples nothing); ``loss_seen_se`` is ``nan``
        where one sampled sequence only has its target among the context (no spread to estimate it from).
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


@public(score_scale=real(), delta=real(), **COMMON)
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
    method = resolve_method(C, N, first_state, method, n_mc)
    pat = sequence_patterns(C, N, concentration, first_state, method, n_mc, rng)
    out = finite_evaluate(score_scale, delta, pat, variant, eps, ("score_scale", "delta"))
    return MarkovMinimalLoss(score_scale=score_scale, delta=delta, C=C, N=N, concentration=concentration,
                             first_state=first_state,
                             variant=variant, method=method, eps=eps, n_sequences=pat.n_sequences,
                             n_patterns=len(pat.weight), **out)
