r"""The sequences of the two-parameter minimal model (Gibson, Cui & Reddy 2026): their exact law, the enumeration of
canonical sequences and the Monte Carlo sample, reduced to the patterns of bits the model sees.

The minimal model of C. Gibson, W. Cui & G. Reddy, *Distinct mechanisms underlying in-context learning in
transformers*, arXiv:2604.12151 (their released code: ``minimal_models/ICL_mini_2paras.py`` with
``minimal_models/src/data_generator.py`` and ``config/config_mini_2params.yaml`` of
``github.com/cole-gibson/context-adaptive-transformer``). The model, its loss and their derivatives:
:mod:`dynamics._minimal_loss`.

Data. A fresh Markov chain on ``C`` states per sequence, its rows i.i.d. ``Dirichlet(α·1_C)``; the
sequence ``s_0 … s_N``: the context ``s_0 … s_{N−1}`` and the target ``s_N``. ``first_state="onestep"``
(the authors' generator): ``s_0`` is one step from a hidden uniform state ``h``; ``"uniform"``: ``s_0``
uniform; ``"stationary"``: ``s_0`` from the chain's stationary law (no closed form: Monte Carlo only).

Exact evaluation. The law of a sequence is a product of Dirichlet–multinomial (Pólya) factors per row
of transition counts ``n_{rc}`` (``n_r = Σ_c n_{rc}``):

.. math:: P(s) = \frac{1}{C}\prod_r \frac{Γ(Cα)}{Γ(Cα + n_r)}\prod_c\frac{Γ(α + n_{rc})}{Γ(α)}
          \times\begin{cases} 1 & \text{uniform}\\
          \sum_h \frac{α + n_{h s_0}}{Cα + n_h} & \text{onestep}\end{cases}

(onestep: the hidden transition ``h → s_0`` is one more draw from row ``h``, whose Pólya predictive
probability is the factor). The law and the model are invariant under relabelling the states, so only
canonical sequences (restricted growth strings: labels in order of first appearance) are enumerated,
each with multiplicity ``C!/(C − k)!`` (``k`` labels used); the model (:mod:`dynamics._minimal_loss`) sees a
sequence only through the bits ``(m_0 … m_{N−2}, 1[s_1 = s_N] … 1[s_{N−1} = s_N])``, so the weights are summed
per pattern.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from linattn import _check as check

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
    return count_canonical(C, L)


def count_canonical(C, L, cap=None):
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


def sequence_patterns(C, N, concentration, first_state, method, n_mc, rng):
    """The patterns of the model's inputs with their probabilities (``method="exact"``, the enumeration, cached) or
    sample counts (``"mc"``: ``n_mc`` sequences of fresh chains drawn with the Generator ``rng``); arguments checked
    by the public callers."""
    if method == "exact":
        return _exact_patterns(C, N, concentration, first_state)
    return _mc_patterns(C, N, concentration, first_state, n_mc, rng)

