r"""The representational bottleneck of the Markov-chain task: how much the pooled bigram embedding of a
sequence says about which of the ``K`` chains of the pool generated it, and the pool size ``K₂*`` beyond which
it can no longer tell them apart.

Gibson, Cui & Reddy, *Distinct mechanisms underlying in-context learning in transformers*, arXiv:2604.12151,
set the second memorization boundary ``K₂*`` by a representational bottleneck. Their measure (code: GitHub
``cole-gibson/context-adaptive-transformer``, ``transformer/pd/bigram_embd.py``, ``Utility.I``): every bigram
``(a, b)`` has an embedding row ``E[a·C + b] ∈ R^d``; a sequence is summarized by the mean over its ``n``
bigrams (``minimal_models/ICL_retrieval_find_K2.py``, ``PoolingLayer``)

.. math::
   m = \frac1n \sum_{t=0}^{n-1} E[x_t C + x_{t+1}] = E^\top f, \qquad f = \text{empirical bigram frequencies},

and the task ``k`` (uniform on the pool) is treated as the label of a Gaussian mixture

.. math::
   m \mid k \sim \mathcal N(c_k, Σ_k),\quad c_k = E^\top p_k,\quad
   Σ_k = \frac1n E^\top\big(\mathrm{diag}\,p_k − p_k p_k^\top\big) E,\quad
   p_k[a C + b] = π_k(a)\, T_k(a, b),

(``p_k`` the stationary bigram law of chain ``k``, ``Σ_k`` the multinomial covariance of ``n`` independent
bigrams). The information is ``I(k; m) = H(m) − (1/K) Σ_k H(m | k)``, in **bits** (as the authors). The
authors evaluate it at ``n = context_len/2`` (mid-sequence) and estimate ``H(m)`` by Monte Carlo.

Estimator (:func:`information`). The same mixture and the same definition, with a lower-variance Monte Carlo:
draw ``k_s`` (balanced over the pool) and ``m_s ~ N(c_{k_s}, Σ_{k_s})``; then

.. math::
   I = E\big[\log p(m \mid k) − \log p(m)\big] = \log K + E\big[\log P(k \mid m)\big],

so every sample contributes ``log K + log P(k_s | m_s) ≤ log K``: the estimate never exceeds ``log₂ K``, and its
standard error is the sample standard deviation over ``√S``. The noise ``m_s − c_k = E^\top g`` is drawn in
bigram space, ``g = (\sqrt{p} ∘ z − p\,(\sqrt{p}·z))/\sqrt n`` with ``z ~ N(0, I_{C²})`` (covariance exactly
``(diag p − p pᵀ)/n``; for ``covariance="markov"`` the symmetric square root of ``n Σ_f`` below), so for a
fixed seed the estimate is *exactly* invariant under ``E → E M + 1 hᵀ``
(``M`` invertible): ``m`` undergoes an invertible affine map and the log-densities shift by a common constant.
Directions of ``R^d`` in which ``m`` is constant (``E v ∝ 1``: ``Σ_k`` singular, no information) are removed
first: ``m`` is expressed in an orthonormal basis ``W`` of the row space of the row-centred ``E``.

``covariance="markov"`` replaces the multinomial ``Σ_k`` by the exact large-``n`` covariance of the bigram
frequencies of a stationary Markov path (consecutive bigrams are dependent), from the fundamental matrix of the
bigram chain ``P[(a,b) → (b,c)] = T(b, c)``: ``n Σ_f = D Z + Zᵀ D − D − p pᵀ``, ``D = diag p``,
``Z = (I − P + 1 pᵀ)^{-1}``. This is a deviation from the authors' definition, measured in
docs/markov_bottleneck.md; the default is theirs.

K₂* (:func:`k2`). The authors find ``K₂*`` by training (the ``K`` beyond which the minimal model's loss stays
above a threshold, ``ICL_retrieval_find_K2.py``); their repository states no information criterion. We define
the pool size the bottleneck predicts as the ``K`` at which the information falls **one bit** (``gap``) short of
its maximum, ``log₂ K − I(K) = 1``: beyond it the pooled embedding confuses each chain with one other on
average. Found on a grid ``K = 2^{j·step}`` with nested pools per seed (a pool of ``K_max`` chains; the first
``K`` of them), linear interpolation of the deficit in ``log₂ K`` (from ``K = 1``, deficit 0, below the grid), and
the mean ± s.e. of ``log₂ K₂*`` over seeds.

Deterministic approximation: the theory of ``I_K`` and ``K₂*`` from the Gaussian channel of an embedding
(``replica/_bottleneck_theory.py``: ``channel``, ``projection_channel``, ``information_theory``, ``k2_theory``),
built on the prior's moments of this module (:func:`prior_moments`) and on :func:`reduced_embedding`.

Measured accuracy of these approximations: docs/markov_bottleneck.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from linattn import _check as check

from .._arguments import choice, integer, optional, positive, public, real
from .._errors import ConvergenceError
from .._numerics.stats import mean_se
from .._results import python_scalars, short_repr
from ._chains import Chains, blame_concentration, guard_memory, named_stationary, transition_matrices

COVARIANCES = ("multinomial", "markov")
_RANK_TOL = 1e-10          # relative singular-value cutoff of the row-centred embedding
_LN2 = math.log(2.0)
_SAFE_SCALE = (1e-100, 1e100)              # embeddings whose largest entry is outside are rescaled (:func:`_rescaled`)


# ----------------------------------------------------------------------------- embeddings
def _embedding(E, C=None):
    """Check a bigram embedding (C², d); return it as float64 and ``C``."""
    E = check.finite_array("E", E, ndim=2)
    c = int(round(math.sqrt(E.shape[0])))
    if E.shape[0] < 4 or c * c != E.shape[0] or E.shape[1] < 1:
        check.fail("E", f"<array with shape {E.shape}>", "an array of shape (C**2, d) with C >= 2 and d >= 1")
    if C is not None and c != C:
        check.fail("E", f"<array with shape {E.shape}>", f"an array of shape ({C * C}, d) (C = {C})")
    return E, c


def _rescaled(E):
    """``E`` times the power of 2 that brings its largest entry into ``[1/2, 1)`` when that entry is outside
    ``[1e-100, 1e100]`` (else ``E`` itself, unchanged): the information and the channel are invariant under
    ``E → cE``, while the squares of entries beyond ``1e154`` (below ``1e-154``) overflow (underflow)."""
    top = float(np.max(np.abs(E)))
    if top == 0.0 or _SAFE_SCALE[0] <= top <= _SAFE_SCALE[1]:
        return E
    return np.ldexp(E, -math.frexp(top)[1])


@public
def one_hot_embedding(C):
    """The one-hot bigram embedding ``E = I_{C²}`` (``d = C²``: no bottleneck), row ``a·C + b`` for ``(a, b)``.

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.

    Returns
    -------
    ndarray, shape (C², C²)
    """
    check.memory(8.0 * C**4, f"the {C * C} x {C * C} identity", "C")
    return np.eye(C * C)


@public(d=integer())
def random_projection(C, d, rng):
    """A random projection of the one-hot bigrams: ``E = R``, ``R_{ij} ~ N(0, 1/d)`` i.i.d., shape (C², d).

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    d : int
        Embedding dimension, ``>= 1``.
    rng : None, int, tuple of ints or numpy.random.Generator

    Returns
    -------
    ndarray, shape (C², d)
    """
    check.memory(8.0 * C * C * d, f"a {C * C} x {d} embedding", "C, d")
    return rng.normal(size=(C * C, d)) / math.sqrt(d)


@public(d=integer())
def unigram_embedding(C, d, rng):
    """A unigram-only embedding (the baseline): bigram ``(a, b)`` is embedded as ``U[b]`` with
    ``U_{bj} ~ N(0, 1/d)``, so the pooled embedding depends on the state counts only (rank ``<= C``).

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    d : int
        Embedding dimension, ``>= 1``.
    rng : None, int, tuple of ints or numpy.random.Generator

    Returns
    -------
    ndarray, shape (C², d)
    """
    check.memory(8.0 * (C * C + C) * d, f"a {C * C} x {d} embedding", "C, d")
    U = rng.normal(size=(C, d)) / math.sqrt(d)
    return np.tile(U, (C, 1))


@public
def pooled_embedding(states, E):
    r"""The pooled bigram embedding of each sequence: ``m = (1/n) Σ_t E[x_t C + x_{t+1}]``, ``n = L − 1``.

    The mean over positions of the bigram embeddings (the pooling of arXiv:2604.12151's minimal retrieval
    model, ``PoolingLayer``, up to their constant factor ``n/L``), computed as ``f @ E`` from the bigram
    frequencies ``f`` of each sequence.

    Parameters
    ----------
    states : array_like of int, shape (n_seq, L)
        States in ``0 … C−1``, ``L >= 2``.
    E : array_like, shape (C², d)
        Bigram embedding, row ``a·C + b`` for the bigram ``(a, b)``.

    Returns
    -------
    ndarray, shape (n_seq, d)

    Examples
    --------
    >>> import numpy as np
    >>> from linattn.markov import bottleneck
    >>> bottleneck.pooled_embedding(np.array([[0, 1, 1]]), np.eye(4))   # bigrams (0,1), (1,1)
    array([[0. , 0.5, 0. , 0.5]])
    """
    E, C = _embedding(E)
    raw = check.asarray("states", states, "an integer array of shape (n_seq, L) with n_seq >= 1 and L >= 2")
    if raw.dtype.kind not in "iu" or raw.ndim != 2 or raw.shape[1] < 2 or raw.shape[0] < 1:
        check.fail("states", f"<array of dtype {raw.dtype} with shape {raw.shape}>",
                   "an integer array of shape (n_seq, L) with n_seq >= 1 and L >= 2")
    if raw.min() < 0 or raw.max() >= C:
        check.fail("states", f"<array with entries in [{raw.min()}, {raw.max()}]>", f"states in 0..{C - 1} (C = {C})")
    n_seq, L = raw.shape
    check.memory(8.0 * n_seq * (C * C + L), f"bigram counts of {n_seq} sequences", "states")
    s = raw.astype(np.int64)
    idx = s[:, :-1] * C + s[:, 1:] + (C * C) * np.arange(n_seq)[:, None]
    f = np.bincount(idx.ravel(), minlength=n_seq * C * C).reshape(n_seq, C * C) / (L - 1)
    return f @ E


@public
def bigram_laws(pool):
    """Stationary bigram laws ``p_k[a·C + b] = π_k(a) T_k(a, b)`` of the chains of a pool, shape (K, C²).

    Parameters
    ----------
    pool : array_like, shape (K, C, C)
        Irreducible row-stochastic matrices.

    Returns
    -------
    ndarray, shape (K, C²)
    """
    try:
        shape = np.shape(pool)
    except (ValueError, TypeError):  # ragged: refused below, naming pool
        shape = ()
    if len(shape) == 3:              # its copies (checked, censored) and the laws, before the first copy
        guard_memory([(40.0, [("pool", float(shape[0]) * shape[1] * shape[2])])],
                     f"the bigram laws of {shape[0]} chains of {shape[1]} x {shape[2]}")
    T = transition_matrices("pool", pool, min_ndim=3)
    if T.ndim != 3:
        check.fail("pool", f"<array with shape {T.shape}>", "an array of shape (K, C, C)")
    return _bigram_laws(T)


def _bigram_laws(T):
    """:func:`bigram_laws` of checked matrices ``T`` (K, C, C)."""
    pi = named_stationary("pool", T)
    return (pi[:, :, None] * T).reshape(T.shape[0], -1)


def _basis(E):
    """Orthonormal basis ``W`` (d, r) of the row space of the row-centred ``E``: ``m ↦ Wᵀ m`` keeps all the
    variation of ``m = Eᵀ f`` (``Σ f = 1``); the discarded part is constant."""
    Ec = E - E.mean(axis=0)
    _, s, Vt = np.linalg.svd(Ec, full_matrices=False)
    if s[0] <= 0.0:
        raise ValueError("E must give different embeddings to some bigrams; got an embedding whose rows are all "
                         "equal (the pooled embedding is constant and carries no information)")
    return Vt[s > _RANK_TOL * s[0]].T


@public(C=optional(integer(minimum=2)))
def reduced_embedding(E, C=None):
    """The embedding ``E`` (checked; rescaled by a power of 2 when its largest entry is outside ``[1e-100, 1e100]``)
    in an orthonormal basis ``W`` of the row space of the row-centred ``E``: ``E W`` (C², r), the rows that
    :func:`information` and the Gaussian channel (:func:`replica.channel`) work with (module
    docstring; the discarded directions carry a constant ``m``).

    Parameters
    ----------
    E : array_like, shape (C², d)
    C : int, optional
        The number of states ``E`` must match.

    Returns
    -------
    ndarray, shape (C², r)
    """
    return _reduced(_embedding(E, C)[0])


def _reduced(E):
    """:func:`reduced_embedding` of a checked ``E``."""
    E = _rescaled(E)
    return E @ _basis(E)


def _markov_covariance(T, p):
    """``n ×`` the large-``n`` covariance of the bigram frequencies of stationary paths of chains ``T`` (K, C, C):
    ``D Z + Zᵀ D − D − p pᵀ`` with the fundamental matrix ``Z = (I − P + 1 pᵀ)^{-1}`` of the bigram chain."""
    K, C, _ = T.shape
    n2 = C * C
    out = np.empty((K, n2, n2))
    eye = np.eye(n2)
    for k in range(K):
        # P[(a, b), (b', c)] = δ_{b b'} T(b, c): rows indexed a·C + b, columns b·C + c
        P = np.zeros((C, C, C, C))
        for b in range(C):
            P[:, b, b, :] = T[k, b, :]
        P = P.reshape(n2, n2)
        Z = np.linalg.inv(eye - P + p[k][None, :])
        DZ = p[k][:, None] * Z
        out[k] = DZ + DZ.T - np.diag(p[k]) - np.outer(p[k], p[k])
    # Σ_f 1 = 0 exactly (Σ f = 1): remove the roundoff along 1 so that constant shifts of E stay exact
    out -= out.mean(axis=2, keepdims=True)
    out -= out.mean(axis=1, keepdims=True)
    return out


# ----------------------------------------------------------------------------- the information
@dataclass(frozen=True)
class Information:
    """Information that the pooled bigram embedding carries about the task (:func:`information`), in bits.

    Attributes
    ----------
    bits : float
        Estimate of ``I(k; m)`` (bits).
    bits_se : float
        Its Monte Carlo standard error (bits).
    max_bits : float
        ``log₂ K``, the maximum (``bits <= max_bits`` always).
    K, d, rank : int
        Pool size, embedding dimension, dimension of the informative subspace used (``<= min(d, C² − 1)``).
    n_bigrams : int
        ``n = length − 1``, the bigrams pooled.
    n_samples : int
        Monte Carlo samples.
    covariance : str
        ``"multinomial"`` (the authors') or ``"markov"``.
    """

    __repr__ = short_repr

    bits: float
    bits_se: float
    max_bits: float
    K: int
    d: int
    rank: int
    n_bigrams: int
    n_samples: int
    covariance: str

    def __post_init__(self):
        python_scalars(self)


def _class_gaussians(T, E, n_bigrams, covariance):
    """Means (K, r), covariances (K, r, r), reduced embedding (C², r), bigram laws (K, C²) and, for
    ``"markov"``, the bigram-space covariances ``n Σ_f`` (K, C², C²) (else ``None``), of checked chains ``T``
    (K, C, C) and embedding ``E`` (C², d)."""
    p = _bigram_laws(T)
    if np.any(p <= 0.0):
        raise ValueError("pool must have chains with every bigram probability > 0 (otherwise the Gaussian model "
                         f"is singular); got {int(np.sum(np.any(p <= 0.0, axis=1)))} chain(s) with a zero entry")
    Er = _reduced(E)
    c = p @ Er
    M = None
    if covariance == "multinomial":
        S = np.einsum("ia,ki,ib->kab", Er, p, Er) - np.einsum("ka,kb->kab", c, c)
    else:
        M = _markov_covariance(T, p)
        S = np.einsum("ia,kij,jb->kab", Er, M, Er)
    S = 0.5 * (S + np.swapaxes(S, 1, 2)) / n_bigrams
    return c, S, Er, p, M


def _information_memory(K, C, d, n_samples, covariance, k_name, c_name):
    """Memory terms of :func:`information` (:func:`~linattn.markov._chains.guard_memory`), ``K`` named ``k_name``
    and ``C`` named ``c_name``."""
    r = min(d, C * C - 1)
    s = [("n_samples", n_samples)]
    terms = [(56.0, s + [(c_name, C * C)]),          # noise z, its roots and products in bigram space
             (72.0, s + [("E", r)]),                 # means, embedded noise, y, and the whitened u (chunked)
             (32.0, s + [(k_name, K)]),              # log-densities and their log-sum-exp
             (32.0, s),
             (80.0, [(k_name, K), (c_name, C * C)]),  # the pool's copies: checked, censored, bigram laws
             (8.0, [(k_name, K), (c_name, C * C), ("E", r)]),   # the einsum of the class covariances
             (24.0, [(k_name, K), ("E", d * d)]),
             (48e6, [])]                             # the chunks of 2e6 numbers
    if covariance == "markov":
        terms += [(8.0, s + [(c_name, C**4)]),       # each sample's square root of its chain's covariance
                  (48.0, [(k_name, K), (c_name, C**4)])]
    return terms


@public(n_samples=integer(minimum=2), covariance=choice(COVARIANCES))
def information(pool, E, length, n_samples=2048, rng=None, covariance="multinomial"):
    r"""``I(k; m)`` (bits) between the chain ``k`` of a pool (uniform) and the pooled bigram embedding ``m``
    of a sequence of ``length`` states, in the Gaussian model of arXiv:2604.12151 (module docstring).

    ``I = log₂ K + E[log₂ P(k | m)]``, estimated with ``n_samples`` draws ``(k_s, m_s)`` (tasks balanced over
    the pool, or a random subset of distinct tasks when ``n_samples < K``); cost ``O(n_samples · K · r²)``.
    ``I`` does not depend on the scale of ``E``: an ``E`` whose largest entry is outside ``[1e-100, 1e100]`` is
    first multiplied by a power of 2 that brings it near 1.

    Parameters
    ----------
    pool : array_like, shape (K, C, C)
        The chains (irreducible, every bigram probability ``> 0``), ``K >= 1``.
    E : array_like, shape (C², d)
        Bigram embedding (row ``a·C + b``).
    length : int
        States per sequence ``L >= 2``; ``n = L − 1`` bigrams are pooled. (The authors evaluate at
        ``n = context_len/2``.)
    n_samples : int
        Monte Carlo samples, ``>= 2``.
    rng : None, int, tuple of ints or numpy.random.Generator
    covariance : {"multinomial", "markov"}
        The authors' multinomial covariance of ``n`` independent bigrams, or the exact large-``n`` covariance
        of a stationary Markov path.

    Returns
    -------
    Information

    Examples
    --------
    >>> from linattn import markov
    >>> from linattn.markov import bottleneck
    >>> pool = markov.Chains(C=3, concentration=1.0, K=2).draw_pool(0)
    >>> r = bottleneck.information(pool, bottleneck.one_hot_embedding(3), length=400, rng=1)
    >>> r.max_bits, r.bits <= r.max_bits
    (1.0, True)
    """
    E, C = _embedding(E)
    shape = check.asarray("pool", pool, f"an array of shape (K, {C}, {C}) with K >= 1 (C from E)").shape
    if len(shape) != 3 or shape[0] < 1 or shape[1:] != (C, C):
        check.fail("pool", f"<array with shape {shape}>", f"an array of shape (K, {C}, {C}) with K >= 1 (C from E)")
    K = shape[0]
    d = E.shape[1]
    guard_memory(_information_memory(K, C, d, n_samples, covariance, "pool", "E"),
                 f"{n_samples} samples against {K} chains")
    return _information(transition_matrices("pool", pool, min_ndim=3), E, length, n_samples, rng, covariance)


def _information(T, E, length, n_samples, gen, covariance):
    """:func:`information` of checked chains ``T`` (K, C, C) and embedding ``E`` (C², d), from the Generator ``gen``
    (the loops of :func:`information_mean` and :func:`k2`, whose guards cover its memory)."""
    K, C, n = T.shape[0], T.shape[1], length - 1
    c, S, Er, p, M = _class_gaussians(T, E, n, covariance)
    r = Er.shape[1]
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        raise ValueError("pool and E give a singular class covariance (a chain with a bigram of probability ~0 in "
                         "the informative subspace); use chains with every bigram probability > 0") from None
    Linv = np.linalg.inv(L)
    half_logdet = np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
    if n_samples >= K:
        k = np.arange(n_samples) % K
    else:
        k = gen.choice(K, size=n_samples, replace=False)
    # noise drawn in bigram space (exact invariance under E -> E M + 1 h^T, module docstring)
    if covariance == "multinomial":
        z = gen.normal(size=(n_samples, C * C))
        sp = np.sqrt(p[k])
        g = (sp * z - p[k] * np.sum(sp * z, axis=1, keepdims=True)) / math.sqrt(n)
        y = c[k] + g @ Er
    else:
        # symmetric square root of each chain's bigram-space covariance (PSD; roundoff negatives set to 0)
        w, V = np.linalg.eigh(0.5 * (M + np.swapaxes(M, 1, 2)))
        root = (V * np.sqrt(np.maximum(w, 0.0))[:, None, :]) @ np.swapaxes(V, 1, 2)
        z = gen.normal(size=(n_samples, C * C))
        g = np.einsum("sij,sj->si", root[k], z) / math.sqrt(n)
        g -= g.mean(axis=1, keepdims=True)   # Σ_t g_t = 0 exactly (the null eigenvalue's root is ~1e-9, not 0)
        y = c[k] + g @ Er
    logp = np.empty((n_samples, K))
    chunk = max(1, int(2e6 // (n_samples * r)))
    for a in range(0, K, chunk):
        u = (y[None, :, :] - c[a:a + chunk, None, :]) @ np.swapaxes(Linv[a:a + chunk], 1, 2)
        logp[:, a:a + chunk] = (-0.5 * np.sum(u * u, axis=-1) - half_logdet[a:a + chunk, None]).T
    terms = (logp[np.arange(n_samples), k] - special.logsumexp(logp, axis=1) + math.log(K)) / _LN2
    bits, bits_se = mean_se(terms)
    return Information(bits=bits, bits_se=bits_se,
                       max_bits=math.log2(K), K=K, d=E.shape[1], rank=r, n_bigrams=n, n_samples=n_samples,
                       covariance=covariance)


@dataclass(frozen=True)
class InformationMean:
    """``I(k; m)`` averaged over random pools (:func:`information_mean`), in bits.

    Attributes
    ----------
    bits_mean, bits_se : float
        Mean over pools and its standard error (pool-to-pool and Monte Carlo scatter).
    max_bits : float
        ``log₂ K``.
    bits : ndarray (n_pools,)
        Per-pool estimates.
    K, n_pools : int
    """

    __repr__ = short_repr

    bits_mean: float
    bits_se: float
    max_bits: float
    bits: np.ndarray
    K: int
    n_pools: int

    def __post_init__(self):
        python_scalars(self)


@public(K=integer(), n_pools=integer(minimum=2), n_samples=integer(minimum=2), covariance=choice(COVARIANCES))
def information_mean(C, concentration, K, E, length, n_pools=4, rng=None, n_samples=2048, covariance="multinomial"):
    """:func:`information` averaged over ``n_pools`` independent pools of ``K`` ``Dirichlet(α)`` chains.

    Pool ``i`` is drawn with the seed tuple ``(seed, i)``, ``seed`` from ``rng``.

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration, ``> 0``.
    K : int
        Pool size, ``>= 1``.
    E : array_like, shape (C², d)
    length : int
        ``L >= 2``.
    n_pools : int
        ``>= 2`` (for a standard error).
    rng : None, int, tuple of ints or numpy.random.Generator
    n_samples : int
    covariance : {"multinomial", "markov"}

    Returns
    -------
    InformationMean
    """
    ch = Chains(C=C, concentration=concentration, K=K)     # K: a pool of K chains (None, fresh chains, has no pool)
    E, _ = _embedding(E, ch.C)
    guard_memory(_information_memory(ch.K, ch.C, E.shape[1], n_samples, covariance, "K", "C")
                 + [(8.0, [("K", ch.K), ("C", ch.C**2)])], f"pools of {ch.K} chains and {n_samples} samples")
    check.work(float(n_pools) * (n_samples * ch.K * E.shape[1] ** 2 + check.PYTHON_TRIP),
               f"{n_pools} pools x {n_samples} samples", "n_pools or n_samples")
    seed = check.seed_int("rng", rng)
    with blame_concentration(concentration):     # a drawn pool that underflowed to a reducible chain
        vals = np.array([_information(ch._draw(ch.K, np.random.default_rng([seed, i])), E, length, n_samples,
                                      np.random.default_rng([seed, i, 1]), covariance).bits for i in range(n_pools)])
    bits_mean, bits_se = mean_se(vals)
    return InformationMean(bits_mean=bits_mean, bits_se=bits_se,
                           max_bits=math.log2(ch.K), bits=vals, K=ch.K, n_pools=n_pools)


# ----------------------------------------------------------------------------- K2*
@dataclass(frozen=True)
class K2:
    """The pool size ``K₂*`` at which ``log₂ K − I(K) = gap`` (:func:`k2`).

    Attributes
    ----------
    k2 : float
        ``2^{log2_k2}`` (geometric mean over seeds).
    log2_k2, log2_k2_se : float
        Mean of ``log₂ K₂*`` over seeds and its standard error.
    log2_k2_seeds : ndarray (n_pools,)
        Per-seed ``log₂ K₂*``.
    Ks : ndarray of int (n_K,)
        The grid of pool sizes evaluated.
    bits : ndarray (n_pools, n_K)
        ``I(K)`` per seed (NaN past the seed's crossing, where it was not evaluated).
    gap : float
        The criterion (bits).
    """

    __repr__ = short_repr

    k2: float
    log2_k2: float
    log2_k2_se: float
    log2_k2_seeds: np.ndarray
    Ks: np.ndarray
    bits: np.ndarray
    gap: float

    def __post_init__(self):
        python_scalars(self)


@public(gap=positive(), n_pools=integer(minimum=2), n_samples=integer(minimum=2), K_max=integer(minimum=2),
        step=real(low=0.0, high=2.0, low_open=True), covariance=choice(COVARIANCES))
def k2(C, concentration, E, length, gap=1.0, n_pools=4, rng=None, n_samples=1024, K_max=4096, step=0.5,
       covariance="multinomial"):
    r"""``K₂*``: the pool size at which the information falls ``gap`` bits short of ``log₂ K`` (module docstring).

    Per seed, one pool of ``K_max`` chains is drawn and its first ``K`` chains form the pool of size ``K``, for
    ``K = round(2^{j·step})`` (``j = 1, 2, …``, distinct values) until ``log₂ K − I(K) > gap``; ``log₂ K₂*`` is
    the linear interpolation of the deficit in ``log₂ K`` between the last two grid points. The result is the
    mean ± s.e. of ``log₂ K₂*`` over ``n_pools`` seeds.

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration, ``> 0``.
    E : array_like, shape (C², d)
    length : int
        ``L >= 2``.
    gap : float
        Deficit criterion in bits, ``> 0`` (default 1 bit).
    n_pools : int
        Seeds, ``>= 2``.
    rng : None, int, tuple of ints or numpy.random.Generator
    n_samples : int
        Monte Carlo samples per evaluation of :func:`information`.
    K_max : int
        Largest pool size tried, ``>= 2``.
    step : float
        Grid step in ``log₂ K``, in ``(0, 2]``.
    covariance : {"multinomial", "markov"}

    Returns
    -------
    K2

    Raises
    ------
    linattn.ConvergenceError
        If the deficit of some seed stays ``<= gap`` up to ``K_max``.
    """
    ch = Chains(C=C, concentration=concentration, K=K_max)
    E, _ = _embedding(E, ch.C)
    seed = check.seed_int("rng", rng)
    n_grid = int(math.log2(K_max) / step)
    guard_memory(_information_memory(K_max, ch.C, E.shape[1], n_samples, covariance, "K_max", "C")
                 + [(8.0, [("K_max", K_max), ("C", ch.C**2)])], f"pools of up to {K_max} chains")
    check.memory(8.0 * 4 * n_grid * (n_pools + 1), f"a grid of {n_grid} pool sizes x {n_pools} pools",
                 "step or n_pools")
    check.work(float(n_pools) * min(n_grid, K_max) * (n_samples * K_max * E.shape[1] ** 2 + check.PYTHON_TRIP),
               f"{n_pools} pools x {min(n_grid, K_max)} pool sizes", "n_pools, step or K_max")
    Ks = np.unique(np.round(2.0 ** (step * np.arange(1, n_grid + 1))).astype(np.int64))
    Ks = Ks[(Ks >= 2) & (Ks <= K_max)]
    bits = np.full((n_pools, Ks.size), np.nan)
    out = np.empty(n_pools)
    for i in range(n_pools):
        big = ch._draw(K_max, np.random.default_rng([seed, i]))
        x0, d0 = 0.0, 0.0                      # K = 1: I = 0 = log2 K exactly
        for j, K in enumerate(Ks):
            with blame_concentration(concentration):     # a drawn pool that underflowed to a reducible chain
                bits[i, j] = _information(big[:K], E, length, n_samples, np.random.default_rng([seed, i, int(K)]),
                                          covariance).bits
            deficit = math.log2(K) - bits[i, j]
            if deficit > gap:
                out[i] = x0 + (gap - d0) / (deficit - d0) * (math.log2(K) - x0)
                break
            x0, d0 = math.log2(K), deficit
        else:
            raise ConvergenceError(f"K2* not reached: log2 K - I(K) <= gap = {gap} bits up to K_max = {K_max} "
                                   f"(seed {i}); raise K_max or lower length")
    m, m_se = mean_se(out)
    return K2(k2=2.0 ** m, log2_k2=m, log2_k2_se=m_se,
              log2_k2_seeds=out, Ks=Ks, bits=bits, gap=gap)


# ----------------------------------------------------------------------------- the prior's moments
@dataclass(frozen=True)
class PriorMoments:
    """Moments of the stationary bigram law ``p`` of a ``Dirichlet(α)`` chain (:func:`prior_moments`).

    Attributes
    ----------
    mean : ndarray (C²,)
        ``E p``.
    between : ndarray (C², C²)
        ``Cov(p)`` (between-task covariance of ``f``).
    within : ndarray (C², C²)
        ``E[diag p − p pᵀ]`` (``n ×`` the mean multinomial covariance of ``f``).
    C : int
    concentration : float
    n_chains : int
        Chains averaged (0: the ``π ≈ 1/C`` closed form).
    samples : ndarray (n_chains, C²) or None
        The sampled bigram laws (``None`` for the closed form); :func:`channel` uses them for ``E log det Σ_k``.
    """

    __repr__ = short_repr

    mean: np.ndarray
    between: np.ndarray
    within: np.ndarray
    C: int
    concentration: float
    n_chains: int
    samples: np.ndarray | None = None

    def __post_init__(self):
        python_scalars(self)


@public(n_chains=integer(minimum=0))
def prior_moments(C, concentration, n_chains=20000, rng=0):
    r"""Moments of the stationary bigram law ``p[a·C + b] = π(a) T(a, b)`` of a chain with ``Dirichlet(α·1_C)``
    rows: sample averages over ``n_chains`` chains (relative error ``~ √(2/n_chains)``), or for ``n_chains=0``
    the closed form with ``π ≈ 1/C``:

    .. math::
       \mathrm{Cov}(p) ≈ \frac{1}{C²(Cα + 1)}\, I_C ⊗ \Big(\frac{I_C}{C} − \frac{\mathbf 1 \mathbf 1^\top}{C²}\Big),
       \qquad E[\mathrm{diag}\,p − p p^\top] ≈ \frac{I}{C²} − \mathrm{Cov}(p) − \frac{\mathbf 1 \mathbf 1^\top}{C⁴}.

    (The fluctuations of ``π`` are dropped; they enlarge ``Cov(p)`` — measured in docs/markov_bottleneck.md.)

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration, ``> 0``.
    n_chains : int
        ``0`` (closed form) or ``>= 100``.
    rng : None, int, tuple of ints or numpy.random.Generator

    Returns
    -------
    PriorMoments
    """
    ch = Chains(C=C, concentration=concentration, K=None)
    C, concentration = ch.C, ch.concentration
    if n_chains != 0 and n_chains < 100:
        check.fail("n_chains", n_chains, "0 (closed form) or an integer >= 100")
    # the C² x C² moments (Cov p, E[diag p − p pᵀ] and their temporaries) and the sampled chains with their copies
    guard_memory([(40.0, [("C", C**4)]), (48.0, [("n_chains", n_chains), ("C", C * C)])],
                 f"the moments of the {C * C} bigrams" + (f" from {n_chains} chains" if n_chains else ""))
    if n_chains == 0:
        blk = (np.eye(C) / C - 1.0 / C ** 2) / ((C * concentration + 1.0) * C ** 2)
        A = np.kron(np.eye(C), blk)
        return PriorMoments(mean=np.full(C * C, 1.0 / C ** 2), between=A,
                            within=np.eye(C * C) / C ** 2 - A - 1.0 / C ** 4, C=C, concentration=concentration,
                            n_chains=0)
    with blame_concentration(concentration):
        p = _bigram_laws(ch._draw(n_chains, rng))
    mean = p.mean(axis=0)
    second = p.T @ p / n_chains
    return PriorMoments(mean=mean, between=second - np.outer(mean, mean), within=np.diag(mean) - second,
                        C=C, concentration=concentration, n_chains=n_chains, samples=p)
