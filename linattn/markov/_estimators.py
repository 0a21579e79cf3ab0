r"""Ideal estimators of the Markov-chain task: 1-mem, 2-mem, 1-gen, 2-gen and the Bayes predictor.

Gibson, Cui & Reddy, arXiv:2604.12151, compare a trained transformer with four ideal next-token predictors
(their code: ``transformer/base/estimators/markov_model_ar.py`` of GitHub
``cole-gibson/context-adaptive-transformer``). At position ``n`` (context ``x_0 … x_n``) a predictor gives
``p̂(· | x_{0:n})`` and pays the log-loss ``ℓ_n = −log p̂(x_{n+1} | x_{0:n})`` (nats), ``n = 0 … L−2``.
With the pool ``T_1 … T_K``, its stationary laws ``π_k`` and the first-state laws ``φ_k = p(x_0 | T_k)``:

* **1-mem** (retrieval from unigram statistics):
  ``w_k ∝ Π_{i≤n} π_k(x_i)``, ``p̂(y) = Σ_k w_k T_k(x_n, y)`` (the authors' definition: unigram likelihood
  of the whole context, including ``x_n``, uniform prior, prediction with the transition rows).
* **2-mem** (retrieval from bigram statistics, the authors' version): at ``n = 0`` as 1-mem
  (``w_k ∝ π_k(x_0)``); for ``n ≥ 1`` ``w_k ∝ Π_{i<n} T_k(x_i, x_{i+1})`` — the first state's law is
  *dropped*, so 2-mem is not the Bayes predictor of the pool (see **bayes**).
* **1-gen** (unigram counts): ``p̂(y) = (N_y + β)/(n + 1 + Cβ)``, ``N_y = #{i ≤ n : x_i = y}``; the authors use
  ``β = α`` (and doubt it). A Markov path is not i.i.d., so no pseudocount makes 1-gen Bayes; for i.i.d.
  draws from a ``Dirichlet(β·1)`` law matched in variance to the stationary law of a random chain,
  ``β* ≈ Cα + 1 − 1/C`` (:func:`matched_pseudocount`; docs/markov.md derives it and measures both).
* **2-gen** (bigram counts): ``p̂(y) = (N_{x_n→y} + α)/(N_{x_n} + Cα)``, the Dirichlet posterior predictive of
  the row ``x_n`` from the transitions ``x_i → x_{i+1}``, ``i < n`` (at ``n = 0``: uniform).
* **bayes**: the exact posterior predictive of the law :class:`~linattn.markov.Chains`. Finite ``K``:
  ``w_k ∝ φ_k(x_0) Π_{i<n} T_k(x_i, x_{i+1})``, ``p̂(y) = Σ_k w_k T_k(x_n, y)``. ``K = ∞`` (fresh chains): with
  ``first_state="uniform"`` ``x_0`` carries no information and bayes = 2-gen exactly; with ``"onestep"``
  (``φ_T(j) = (1/C) Σ_i T_ij``, linear in ``T``) the Dirichlet size-bias identity
  ``E_D[T_{ay} h(T)] = E_D[T_{ay}] E_{D + e_{ay}}[h(T)]`` gives the exact closed form
  ``p̂(y) = p̂_{2-gen}(y) g(N + e_{x_n y})/g(N)``, ``g(N) = Σ_i (α + N_{i→x_0})/(N_i + Cα)``; with
  ``"stationary"`` ``g(N) = E_{D(N)}[π_T(x_0)]`` has no closed form and is estimated by ``n_mc`` draws from the
  Dirichlet posterior ``D(N)`` (a ratio estimate: bias ``O(1/n_mc)`` in ``ℓ_n``). In every case the total gain
  over 2-gen telescopes: ``Σ_{n<L−1} (ℓ^{2gen}_n − ℓ^{bayes}_n) = log(C g(N_{L−1}))`` per sequence, whose mean
  tends to ``log C − E[H(π_T)]`` (``"stationary"``) as ``L → ∞``.

Also **true**: ``−log T(x_n, x_{n+1})`` with the sequence's own chain (the oracle; :func:`losses` only).

The numba kernels: :mod:`linattn.markov._estimator_kernels`; the mean losses over sampled sequences (the estimators'
loss curves): :mod:`linattn.markov._loss_curves`.
"""
from __future__ import annotations

import math

import numpy as np

from linattn import _check as check

from .._arguments import choice, instance, integer, optional, positive, public
from ._chains import (
    COST_NS,
    Chains,
    guard_memory,
    guard_work,
    named_first_law,
    named_stationary,
    transition_matrices,
)
from ._estimator_kernels import FIRST_CODES, KIND_CODES, run_estimator

NAMES = ("1-mem", "2-mem", "1-gen", "2-gen", "bayes", "true")
#: the rules of the estimators' common arguments (:func:`log_losses`, :func:`predict`, :func:`log_losses_naive`)
_RULES = dict(name=choice(NAMES[:5]), chains=instance((Chains, type(None)), "a linattn.markov.Chains or None"),
              pseudocount=optional(positive()))


# ----------------------------------------------------------------------------- public functions
@public
def matched_pseudocount(C, concentration):
    r"""Pseudocount ``β* = Cα + 1 − 1/C`` of 1-gen: the symmetric Dirichlet whose variance matches the
    stationary law of a random chain to leading order (docs/markov.md).

    The stationary law of ``T`` with i.i.d. ``Dirichlet(α·1_C)`` rows is, to leading order in the fluctuations,
    the column mean ``π_j ≈ (1/C) Σ_i T_ij``: ``Var π_j ≈ (1/C)(1 − 1/C)/(C(Cα + 1))``; a ``Dirichlet(β·1_C)``
    law has ``Var = (1/C)(1 − 1/C)/(Cβ + 1)``, equal for ``β = Cα + 1 − 1/C``. For i.i.d. draws from that
    law the Bayes predictive is ``(N_y + β)/(n + 1 + Cβ)``. The authors of arXiv:2604.12151 use ``β = α``.

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration of the rows, ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``C·α`` exceeds float64 (``concentration`` above ``1.8e308/C``).
    """
    if not math.isfinite(C * concentration):
        check.fail("concentration", concentration,
                   f"a real number in (0, {np.finfo(float).max / C:.4g}] (C * concentration finite in float64; "
                                   f"C = {C})")
    return C * concentration + 1.0 - 1.0 / C


def pool_layout(pool, C, first_state):
    """State-major pool arrays for the kernels (``K = 0`` arrays if ``pool`` is None)."""
    if pool is None:
        z = np.zeros((C, C, 0))
        return z, z, np.zeros((1, C, 0)), np.zeros((1, C, 0)), np.zeros((C, 0))
    with np.errstate(divide="ignore"):
        Tp = np.ascontiguousarray(pool.transpose(1, 2, 0))
        pi = np.ascontiguousarray(named_stationary("pool", pool).T)[None]
        phi = np.ascontiguousarray(named_first_law("pool", pool, first_state).T)
        return Tp, np.log(Tp), pi, np.log(pi), np.log(phi)


def _states(states, C, plan=None):
    """``states`` as a contiguous int64 array (n_seq, L) of states in ``0 … C−1``. ``plan(n_seq, L)``: the memory
    terms of the caller's work (:func:`~linattn.markov._chains.guard_memory`), checked with the copies made here before
    any of them (a broadcast view of a few bytes may stand for gigabytes)."""
    try:
        shape = np.shape(states)
    except (ValueError, TypeError):     # ragged: refused below, naming states
        shape = ()
    if plan is not None and len(shape) == 2:
        n = float(shape[0]) * shape[1]
        terms, what = plan(shape[0], shape[1])
        # the float64 copy, its rounding and the int64 result (check.finite_array, then here)
        guard_memory([(40.0, [("states", n)])] + terms, what)
    x = check.finite_array("states", states, ndim=2)
    if x.shape[1] < 2 or x.shape[0] < 1:
        check.fail("states", f"<array with shape {x.shape}>", "an array of shape (n_seq >= 1, length >= 2)")
    if np.any(x != np.round(x)) or np.any(x < 0) or np.any(x > C - 1):
        check.fail("states", f"<array with values in [{x.min():g}, {x.max():g}]>", f"integers in 0 … {C - 1}")
    return np.ascontiguousarray(x, dtype=np.int64)


def fail_kernel(code, name, chains, offset=0):
    """Raise the ``ValueError`` of a kernel's failure ``code`` (``4 s + kind`` of :func:`run_estimator`: sequence
    ``s + offset`` met a transition of probability 0 in the pool, or a reducible Monte Carlo draw)."""
    s, kind = divmod(code, 4)
    if kind == 1:
        raise ValueError(f"bayes: a Monte Carlo draw from the Dirichlet posterior was a reducible chain (entries "
                         f"underflowed to 0) for sequence {s + offset}; concentration = {chains.concentration} is "
                         "too small for first_state='stationary' with K=None")
    raise ValueError(f"{name}: the pool gives probability 0 to a transition observed in sequence {s + offset} "
                     "(transition-matrix entries that underflowed to 0, concentration too small): the log-loss is "
                     "infinite")


def kernel_concentration(a, C):
    """A Dirichlet concentration (``α`` or 1-gen's ``β``) as the estimator kernels use it: ``a`` itself, or where
    ``C·a`` overflows float64 (``a > 1.8e308/C``, the counts negligible: every predictive is ``1/C``) the
    largest value that keeps ``C·a`` finite, with the same predictive ``1/C`` to roundoff."""
    return a if math.isfinite(C * a) else float(np.finfo(float).max) / (4.0 * C)


def _setup(name, pool, chains, pseudocount, n_mc):
    """The arguments of an estimator that depend on each other (the rest is checked by the decorator: ``_RULES``)."""
    if name in ("1-gen", "2-gen", "bayes") and chains is None:
        raise ValueError(f"chains must be a linattn.markov.Chains for name={name!r} (it sets concentration and the "
                         "first-state law); got None")
    needs_pool = name in ("1-mem", "2-mem") or name == "bayes" and chains.K is not None
    if needs_pool:
        if pool is None:
            raise ValueError(f"pool must be an array of shape (K, C, C) for name={name!r}; got None")
        try:
            shape = np.shape(pool)
        except (ValueError, TypeError):  # ragged: refused below, naming pool
            shape = ()
        if len(shape) == 3:              # its copies and state-major layout, before the first copy
            guard_memory([(48.0, [("pool", float(shape[0]) * shape[1] * shape[2])])],
                         f"the pool of {shape[0]} chains of {shape[1]} x {shape[2]} and its layout")
        pool = transition_matrices("pool", pool, min_ndim=3)
        if pool.ndim != 3 or chains is not None and pool.shape[1] != chains.C:
            want = "(K, C, C)" if chains is None else f"(K, {chains.C}, {chains.C})"
            check.fail("pool", f"<array with shape {pool.shape}>", f"an array of shape {want}")
        if name == "bayes" and pool.shape[0] != chains.K:
            check.fail("pool", f"<array with shape {pool.shape}>", f"the pool of chains.K = {chains.K} chains")
    else:                                # not used by this estimator; a pool given anyway must still be a pool
        if pool is not None:
            transition_matrices("pool", pool, min_ndim=3)
        pool = None
    C = chains.C if chains is not None else pool.shape[1]
    concentration = chains.concentration if chains is not None else 1.0
    first = chains.first_state if chains is not None else "stationary"
    pseudo = concentration if pseudocount is None else pseudocount
    return pool, C, kernel_concentration(concentration, C), first, kernel_concentration(pseudo, C), n_mc


@public(n_mc=integer(), **_RULES)
def log_losses(states, name, pool=None, chains=None, pseudocount=None, n_mc=64, rng=None):
    r"""Per-token log-losses ``ℓ_n = −log p̂(x_{n+1} | x_{0:n})`` of one estimator (module docstring).

    Parameters
    ----------
    states : array_like of int, shape (n_seq, length)
        Sequences (``length >= 2``), states in ``0 … C−1``.
    name : {"1-mem", "2-mem", "1-gen", "2-gen", "bayes"}
    pool : array_like, shape (K, C, C), optional
        The pool: required by 1-mem, 2-mem, and by bayes when ``chains.K`` is finite.
    chains : Chains, optional
        The task law (``α``, first-state law); required by 1-gen, 2-gen and bayes.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``, the authors'; :func:`matched_pseudocount`).
    n_mc : int
        Posterior draws per position of bayes with ``K = None`` and ``first_state="stationary"``.
    rng : None, int, tuple of ints or numpy.random.Generator
        Seeds that Monte Carlo only.

    Returns
    -------
    ndarray, shape (n_seq, length − 1)
    """
    return _evaluate(states, name, pool, chains, pseudocount, n_mc, rng, want=False)[0]


@public(n_mc=integer(), **_RULES)
def predict(states, name, pool=None, chains=None, pseudocount=None, n_mc=64, rng=None):
    r"""Predictive probabilities ``p̂(y | x_{0:n})`` of one estimator for ``n = 0 … L−2`` (module docstring),
    e.g. for the KL divergence of a trained transformer to each estimator (arXiv:2604.12151).

    Parameters
    ----------
    states : array_like of int, shape (n_seq, length)
        Sequences (``length >= 2``), states in ``0 … C−1``.
    name : {"1-mem", "2-mem", "1-gen", "2-gen", "bayes"}
    pool : array_like, shape (K, C, C), optional
        The pool: required by 1-mem, 2-mem, and by bayes when ``chains.K`` is finite.
    chains : Chains, optional
        The task law (``α``, first-state law); required by 1-gen, 2-gen and bayes.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``, the authors'; :func:`matched_pseudocount`).
    n_mc : int
        Posterior draws per position of bayes with ``K = None`` and ``first_state="stationary"``.
    rng : None, int, tuple of ints or numpy.random.Generator
        Seeds that Monte Carlo only.

    Returns
    -------
    ndarray, shape (n_seq, length − 1, C)
        Rows sum to 1; ``−log`` of the entry at ``x_{n+1}`` is :func:`log_losses`.

    Examples
    --------
    >>> import numpy as np
    >>> from linattn import markov
    >>> ch = markov.Chains(C=3, concentration=1.0)
    >>> s = ch.sample(2, 5, rng=0)
    >>> p = markov.predict(s.states, "2-gen", chains=ch)
    >>> p.shape, bool(np.allclose(p.sum(-1), 1.0))
    ((2, 4, 3), True)
    """
    return _evaluate(states, name, pool, chains, pseudocount, n_mc, rng, want=True)[1]


def estimator_cost(name, positions, sequences, C, K, first, n_mc, c_name, k_name, want=False):
    """ns of one estimator (:data:`~linattn.markov._chains.COST_NS`, measured) over ``positions`` positions of
    ``sequences`` sequences (lists of ``(argument, factor)``), as monomials of :func:`guard_work`: ``O(K)`` per
    position over a pool (1-mem, 2-mem, bayes of a pool), ``O(1)`` (1-gen, 2-gen, true, bayes of fresh chains with a
    uniform first state) or ``O(C)`` (onestep) per position with ``O(C²)`` count tables per sequence, and
    ``O(n_mc (C² + C⁴))`` per position for the Monte Carlo bayes (fresh chains, stationary first state: per draw a
    ``C × C`` Dirichlet matrix and ``C`` stationary laws of ``C × C``); ``want``: the predicted rows too. ``C`` is
    named ``c_name``, ``K`` ``k_name``."""
    ns = COST_NS
    if name in ("1-mem", "2-mem") or name == "bayes" and K > 0:
        one = name == "1-mem"
        terms = [(ns["sequence"], sequences), (ns["chain_start"], sequences + [(k_name, K)]),
                 (ns["memory_1" if one else "memory"], positions),
                 (ns["chain_1" if one else "chain"], positions + [(k_name, K)])]
        return terms + ([(ns["row_chain"], positions + [(k_name, K), (c_name, C)])] if want else [])
    if name == "true":
        return [(ns["sequence"], sequences), (ns["true"], positions)]
    terms = [(ns["sequence"], sequences), (ns["counts"], positions), (ns["reset"], sequences + [(c_name, C * C)])]
    if name == "bayes" and first == "onestep":
        terms.append((ns["onestep"], positions + [(c_name, C)]))
    elif name == "bayes" and first == "stationary":
        draws = positions + [("n_mc", n_mc)]
        terms += [(ns["gamma"], draws + [(c_name, C * C)]), (ns["mc_solve"], draws + [(c_name, float(C) ** 4)]),
                  (ns["mc_state"], draws + [(c_name, C)])]
    return terms + ([(ns["row"], positions + [(c_name, C)])] if want else [])


def _evaluate(states, name, pool, chains, pseudocount, n_mc, rng, want):
    pool, C, concentration, first, pseudo, n_mc = _setup(name, pool, chains, pseudocount, n_mc)
    c_name = "pool" if chains is None else "chains.C"

    def plan(n_seq, L):
        pos = [("states", n_seq * (L - 1.0))]
        scratch = (40.0, [(c_name, C * C)])     # the kernel's four C x C work arrays and the placeholder chain
        return ([(8.0, pos), scratch] + ([(8.0, pos + [(c_name, C)])] if want else []),
                f"predictions of {n_seq} sequences")
    x = _states(states, C, plan)
    n_seq, L = x.shape
    guard_work(estimator_cost(name, [("states", n_seq * (L - 1.0))], [("states", n_seq)], C,
                              0 if pool is None else pool.shape[0], first, n_mc, c_name, "pool", want),
               f"{name} on {n_seq} sequences of {L} states")
    gen = rng                            # a Generator (the decorator's), whether or not this estimator draws from it
    seed = check.seed_int("rng", gen) if name == "bayes" and first == "stationary" else 0
    Tp, logTp, pip, logpip, logfp = pool_layout(pool, C, first)
    loss = np.empty((n_seq, L - 1))
    probs = np.empty((n_seq, L - 1, C) if want else (1, L - 1, C))
    dummy = np.ones((1, C, C))
    code = run_estimator(x, KIND_CODES[name], C, concentration, pseudo, FIRST_CODES[first], n_mc, seed, 0, Tp, logTp,
                         pip, logpip, logfp, dummy, np.zeros(n_seq, np.int64), loss, probs, want, np.zeros(1),
                         np.zeros(1), False)
    if code != -1:
        fail_kernel(code, name, chains)
    return loss, probs


@public(**_RULES)
def log_losses_naive(states, name, pool=None, chains=None, pseudocount=None):
    r"""The same log-losses as :func:`log_losses`, by the straightforward vectorized numpy route (cumulative
    one-hot counts and per-chain log-likelihoods over all positions at once, posteriors by log-sum-exp, as in
    the authors' ``markov_model_ar.py``): ``O(n_seq L (C² + K))`` memory. For tests and the benchmark; bayes of
    fresh chains only for ``first_state="uniform"`` (= 2-gen).

    Parameters
    ----------
    states : array_like of int, shape (n_seq, length)
        Sequences (``length >= 2``), states in ``0 … C−1``.
    name : {"1-mem", "2-mem", "1-gen", "2-gen", "bayes"}
    pool : array_like, shape (K, C, C), optional
        The pool: required by 1-mem, 2-mem, and by bayes when ``chains.K`` is finite.
    chains : Chains, optional
        The task law (``α``, first-state law); required by 1-gen, 2-gen and bayes.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``, the authors'; :func:`matched_pseudocount`).

    Returns
    -------
    ndarray, shape (n_seq, length − 1)
    """
    pool, C, concentration, first, pseudo, _ = _setup(name, pool, chains, pseudocount, 1)
    if name == "bayes" and pool is None and first != "uniform":
        raise ValueError(f"log_losses_naive covers bayes of fresh chains for first_state='uniform' only; got "
                         f"{first!r}")
    c_name = "pool" if chains is None else "chains.C"

    def plan(n_seq, L):
        pos = [("states", n_seq * (L - 1.0))]
        if name == "1-gen":         # one-hot states and their running counts
            terms = [(16.0, pos + [(c_name, C)])]
        elif pool is None:          # one-hot bigrams, running counts, counts before n; the rows N_{x_n → ·}
            terms = [(24.0, pos + [(c_name, C * C)]), (8.0, pos + [(c_name, C)])]
        else:                       # (n_seq, L − 1, K) log-likelihoods, weights and their products; the pool's logs
            terms = [(48.0, pos + [("pool", pool.shape[0])]), (32.0, [("pool", pool.shape[0] * C * C)])]
        return terms, f"the one-hot counts of {n_seq} sequences of {L} states"
    x = _states(states, C, plan)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = _naive(x, name, pool, C, concentration, first, pseudo)
    bad = ~np.isfinite(out)
    if bad.any():                   # the ValueError of log_losses: the pool gives probability 0 to a transition
        fail_kernel(int(np.argmax(bad.any(axis=1))) * 4, name, chains)
    return out


def _one_hot(index, size):
    """``np.eye(size)[index]`` without the ``size × size`` identity."""
    out = np.zeros(index.shape + (size,))
    np.put_along_axis(out, index[..., None], 1.0, axis=-1)
    return out


def _naive(x, name, pool, C, concentration, first, pseudo):
    """The vectorized log-losses of :func:`log_losses_naive` (``inf``/NaN where the pool gives a transition
    probability 0)."""
    n_seq, L = x.shape
    a, b = x[:, :-1], x[:, 1:]
    if name == "1-gen":
        counts = np.cumsum(_one_hot(a, C), axis=1)  # N_y over x_0 … x_n
        num = np.take_along_axis(counts, b[..., None], axis=-1)[..., 0] + pseudo
        return -np.log(num / (np.arange(1, L) + C * pseudo))
    if pool is None:  # 2-gen (and bayes of fresh chains with a uniform first state)
        onehot = _one_hot(a * C + b, C * C)
        before = (np.cumsum(onehot, axis=1) - onehot).reshape(n_seq, L - 1, C, C)  # transitions before n
        rows = np.take_along_axis(before, a[..., None, None], axis=2)[:, :, 0, :]  # N_{x_n → ·}
        num = np.take_along_axis(rows, b[..., None], axis=-1)[..., 0] + concentration
        return -np.log(num / (rows.sum(-1) + C * concentration))
    logT = np.log(pool)
    logpi = np.log(named_stationary("pool", pool))
    logphi = np.log(named_first_law("pool", pool, first))
    step = np.moveaxis(logT[:, a, b], 0, -1)  # (n_seq, L−1, K): log T_k(x_n, x_{n+1})
    if name == "1-mem":
        ll = np.cumsum(np.moveaxis(logpi[:, x[:, :-1]], 0, -1), axis=1)
    else:
        ll = np.concatenate([np.zeros_like(step[:, :1]), np.cumsum(step[:, :-1], axis=1)], axis=1)
        if name == "2-mem":
            ll[:, 0] = logpi[:, x[:, 0]].T
        else:
            ll += logphi[:, x[:, 0]].T[:, None, :]
    top = ll.max(-1, keepdims=True)
    w = np.exp(ll - top)
    w /= w.sum(-1, keepdims=True)
    return -np.log(np.sum(w * np.exp(step), axis=-1))
