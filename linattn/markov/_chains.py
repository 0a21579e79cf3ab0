r"""Random Markov chains as an in-context learning task.

The task family of Gibson, Cui & Reddy, *Distinct mechanisms underlying in-context learning in
transformers*, arXiv:2604.12151 (code: GitHub ``cole-gibson/context-adaptive-transformer``,
``transformer/base/tasks/markov_model.py`` and ``minimal_models/src/data_generator.py``): every sequence
``x_0 … x_{L−1}`` over ``C`` states is a path of a Markov chain whose transition matrix ``T`` has i.i.d. rows

.. math::
   T_{i\cdot} \sim \mathrm{Dirichlet}(α\,\mathbf 1_C), \qquad p(x_{n+1} = j \mid x_n = i) = T_{ij}.

With a finite pool (``K`` chains ``T_1 … T_K`` drawn once) each sequence uses a chain of the pool chosen
uniformly at random; with ``K = None`` (``K = ∞``) each sequence has its own fresh chain. The first state is
drawn from the chain's stationary law ``π`` (``first_state="stationary"``), uniformly (``"uniform"``), or one
step from a hidden uniform state, ``p(x_0 = j) = (1/C) Σ_i T_ij`` (``"onestep"``, the authors'
minimal-model data).

Sampling is exact and reproducible: the chains and the paths are drawn by numba kernels with a
xoshiro256+ generator (the explicit-state streams of ``linattn/_random_kernels.py``) seeded from
``(seed, sequence)`` by splitmix64, so a sequence's path depends only on the seed and its index, never on how
the work is batched. Categorical draws compare one uniform ``u ∈ [0, 1)`` times the row total with the running
cumulative sum in float64 and fall back to the last state of nonzero probability, so a state of
probability 0 is never drawn and no index overruns. Dirichlet rows are normalized Gamma draws
(Marsaglia & Tsang, ACM TOMS 26, 2000), in log space for ``α < 1`` via
``Gamma(α) = Gamma(α + 1) U^{1/α}`` so that tiny ``α`` cannot give a zero row.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numba
import numpy as np
from scipy import special

from linattn import _check as check

from .._arguments import choice, integer, public, public_class
from .._random_kernels import next_normal_polar, next_uniform, seed_state
from .._results import python_scalars, short_repr

FIRST_STATES = ("stationary", "uniform", "onestep")
_ROW_TOL = 1e-9  # accepted |row sum − 1| of a given transition matrix (float64 roundoff of C terms ~1e-15)


# ----------------------------------------------------------------------------- Dirichlet rows and paths (numba)
@numba.njit(cache=True)
def log_gamma_variate(shape, state):
    """``log G`` with ``G ~ Gamma(shape, 1)``: Marsaglia–Tsang for ``shape ≥ 1``; for ``shape < 1``
    ``log G = log Gamma(shape + 1) + log(U)/shape`` (exact, and finite however small ``shape`` is)."""
    boost = 0.0
    a = shape
    if shape < 1.0:
        u = 1.0 - next_uniform(state)  # in (0, 1]
        boost = np.log(u) / shape
        a = shape + 1.0
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        z = next_normal_polar(state)
        v = 1.0 + c * z
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - next_uniform(state)
        if np.log(u) < 0.5 * z * z + d - d * v + d * np.log(v):
            return np.log(d * v) + boost


@numba.njit(cache=True)
def draw_chains_kernel(concentration, seed, stream0, out):
    """Fill ``out`` (n, C, C) with chains of i.i.d. Dirichlet(α·1) rows; chain ``t`` uses stream ``stream0 + t``."""
    n, C = out.shape[0], out.shape[1]
    state = np.empty(4, np.uint64)
    logg = np.empty(C)
    for t in range(n):
        seed_state(seed, stream0 + t, state)
        for i in range(C):
            top = -np.inf
            for j in range(C):
                logg[j] = log_gamma_variate(concentration, state)
                if logg[j] > top:
                    top = logg[j]
            total = 0.0
            for j in range(C):
                out[t, i, j] = np.exp(logg[j] - top)
                total += out[t, i, j]
            for j in range(C):
                out[t, i, j] /= total


@numba.njit(cache=True, inline="always")
def _categorical(cum, u):
    """Index ``j`` with ``cum[j−1] ≤ u·cum[−1] < cum[j]`` (``cum``: running sums of the probabilities),
    found as the number of ``cum`` entries ``≤ u·cum[−1]`` (branch-free); if roundoff leaves no such ``j``,
    the last index of nonzero probability."""
    C = cum.shape[0]
    target = u * cum[C - 1]
    j = 0
    for i in range(C):
        j += cum[i] <= target
    if j < C:
        return j
    for j in range(C - 1, 0, -1):
        if cum[j] > cum[j - 1]:
            return j
    return 0


@numba.njit(cache=True)
def paths_kernel(cum, first_cum, task, seed, stream0, out):
    """Fill ``out`` (n_seq, L): sequence ``s`` follows chain ``task[s]`` (rows' running sums ``cum``), first
    state from ``first_cum[task[s]]``; its generator is seeded from ``(seed, stream0 + s)``."""
    n_seq, L = out.shape
    state = np.empty(4, np.uint64)
    for s in range(n_seq):
        seed_state(seed, stream0 + s, state)
        k = task[s]
        x = _categorical(first_cum[k], next_uniform(state))
        out[s, 0] = x
        for n in range(1, L):
            x = _categorical(cum[k, x], next_uniform(state))
            out[s, n] = x


# ----------------------------------------------------------------------------- size guards
def _plan(terms):
    """Total of ``terms`` (monomials ``(coefficient, [(argument, factor), ...])`` worth ``coefficient × Π factors``)
    and the argument to blame: in the largest monomial, the argument with the largest factor (factors of one
    argument multiplied together)."""
    sizes, blame = [], []
    for coef, factors in terms:
        merged = {}
        for name, value in factors:
            merged[name] = merged.get(name, 1.0) * float(value)
        sizes.append(float(coef) * math.prod(merged.values()))
        blame.append(max(merged, key=merged.get) if merged else None)
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    name = next((blame[i] for i in order if blame[i] is not None), "arguments")
    return sum(sizes), name


def guard_memory(terms, what):
    """:func:`linattn._check.memory` of the sum of ``terms`` (bytes; :func:`_plan`), naming the argument that
    dominates it: the one a user must lower, not every argument that enters the size."""
    total, name = _plan(terms)
    check.memory(total, what, name)


#: the measured cost (ns) of the Markov-chain kernels, by the unit each counts: CPU time of one thread
#: (``time.process_time``, best of three runs of 0.1–1 s after compilation, on the development machine) of
#: :func:`~linattn.markov.log_losses`, :func:`~linattn.markov.predict`, :func:`~linattn.markov.losses` and
#: :meth:`Chains.sample`, divided by the units of the run, rounded up; measured ranges in the comments. The work
#: guards add them up in ns, the unit of :data:`linattn.check.WORK_LIMIT` (an operation ≈ 1 ns).
COST_NS = {
    "sequence": 300.0,      # per sequence and estimator: the kernel's call and set-up (290–460 at length 2)
    "true": 8.0,            # per position: the oracle's −log T(x_n, x_{n+1}) (5–8)
    "counts": 16.0,         # per position: 1-gen, 2-gen, bayes of fresh chains (15–17)
    "reset": 0.35,          # per sequence and C²: the count tables of 1-gen, 2-gen, bayes of fresh chains (0.22–0.32)
    "onestep": 4.2,         # per position and state: bayes of fresh chains with first_state="onestep" (3.9–4.1)
    "memory": 40.0,         # per position: 2-mem, bayes of a pool (39)
    "memory_1": 55.0,       # per position: 1-mem (54)
    "chain": 1.8,           # per position and pool chain: 2-mem, bayes of a pool (1.7–1.8)
    "chain_1": 2.2,         # per position and pool chain: 1-mem (2.1)
    "chain_start": 15.0,    # per sequence and pool chain: the posterior's set-up (1-mem, 2-mem, bayes; 9–15)
    "row": 2.0,             # predict: per position and state of a row (1.9 at C = 100)
    "row_chain": 0.5,       # predict: per position, state and pool chain (0.47)
    "gamma": 75.0,          # one Gamma variate and its exp (Marsaglia–Tsang): a Dirichlet entry (69–85)
    "fresh": 400.0,         # per fresh chain: its set-up (a sequence of C = 2 states: 850 in all)
    "mc_state": 100.0,      # Monte Carlo bayes: per draw, position and state (a stationary solve's setup)
    "mc_solve": 0.3,        # Monte Carlo bayes: per draw, position and C⁴ (C stationary laws of C × C; 0.25–0.3)
    "step": 12.0,           # a path step (12)
    "category": 0.5,        # per state of a step's categorical draw (0.42)
    "law": 0.8,             # the stationary law of a chain (numpy state reduction): per C³ (0.8 at C = 200)
    "law_rows": 20.0,       # … and per C² of it (the per-state overhead: 6.6 C³ at C = 5, 2.1 C³ at C = 30)
}


def chain_cost(count, C, first_state, c_name):
    """ns of drawing chains with their first-state laws (:data:`COST_NS`), as monomials of :func:`guard_work`:
    ``count`` a list of ``(argument, factor)`` (the number of chains), ``C`` named ``c_name``."""
    ns = COST_NS
    terms = [(ns["fresh"], count), (ns["gamma"], count + [(c_name, C * C)])]
    if first_state == "stationary":
        terms += [(ns["law"], count + [(c_name, C**3)]), (ns["law_rows"], count + [(c_name, C * C)])]
    else:
        terms.append((1.0, count + [(c_name, C * C)]))
    return terms


def path_cost(steps, C, c_name):
    """ns of drawing ``steps`` path steps (a list of ``(argument, factor)``) over ``C`` states (:data:`COST_NS`)."""
    return [(COST_NS["step"], steps), (COST_NS["category"], steps + [(c_name, C)])]


def guard_work(terms, what):
    """:func:`linattn._check.work` of the sum of ``terms`` (operations; :func:`_plan`), naming the argument that
    dominates it."""
    total, name = _plan(terms)
    check.work(total, what, name)


# ----------------------------------------------------------------------------- public helpers
def transition_matrices(name, T, min_ndim=2):
    """``T`` checked, the argument called ``name``: a finite array of row-stochastic matrices ``(..., C, C)``."""
    T = check.finite_array(name, T)
    if T.ndim < min_ndim or T.shape[-1] != T.shape[-2] or T.size == 0:
        check.fail(name, f"<array with shape {T.shape}>", "a non-empty array of square matrices, shape (..., C, C)")
    if np.any(T < 0):
        check.fail(name, f"<array with min {T.min():.3g}>", "row-stochastic matrices (entries >= 0)")
    dev = np.max(np.abs(T.sum(-1) - 1.0))
    if dev > _ROW_TOL:
        check.fail(name, f"<array with max |row sum - 1| = {dev:.3g}>",
                   f"row-stochastic matrices (|row sum - 1| <= {_ROW_TOL})")
    return T


class ReducibleChainError(ValueError):
    """A transition matrix without a unique stationary law (:func:`stationary`)."""


@contextlib.contextmanager
def blame_concentration(concentration):
    """Chains drawn from ``Dirichlet(α)`` rows that turn out reducible: name ``concentration`` (their entries
    underflowed to exact zeros, which a positive Dirichlet draw never has)."""
    try:
        yield
    except ReducibleChainError:
        check.fail("concentration", concentration,
                   "large enough that the Dirichlet(concentration) rows drawn keep every transition probability "
                   "above 0 in float64 (a smaller concentration underflows to zeros: a reducible chain, no "
                   "stationary law; about concentration >= 0.05)")


@public
def stationary(T):
    r"""Stationary laws ``π`` with ``π T = π``, ``Σ_j π_j = 1`` of irreducible transition matrices.

    Computed by the Grassmann–Taksar–Heyman state reduction (Grassmann, Taksar & Heyman, Oper. Res. 33,
    1107 (1985)), which uses no subtraction and is accurate to roundoff for any irreducible chain,
    vectorized over the leading axes. Used for the first-state law of the Markov-chain task of
    arXiv:2604.12151.

    Parameters
    ----------
    T : array_like, shape (..., C, C)
        Row-stochastic matrices (entries ``>= 0``, ``|row sum − 1| <= 1e-9``), each irreducible (a reducible
        matrix raises ``ValueError`` when the reduction meets a state that cannot reach the lower ones, e.g. two
        closed classes; otherwise, e.g. one absorbing state 0, its unique stationary law is returned).

    Returns
    -------
    ndarray, shape (..., C)

    Examples
    --------
    >>> import numpy as np
    >>> from linattn import markov
    >>> T = np.array([[0.9, 0.1], [0.3, 0.7]])
    >>> markov.stationary(T)
    array([0.75, 0.25])
    """
    return named_stationary("T", transition_matrices("T", T))


def named_stationary(name, T):
    """:func:`stationary` of checked matrices (:func:`transition_matrices`), the argument called ``name`` by the
    caller (the name a reducible chain's refusal gives; the library's estimators pass ``"pool"``).

    Parameters
    ----------
    name : str
    T : ndarray, shape (..., C, C)

    Returns
    -------
    ndarray, shape (..., C)
    """
    A = np.array(T, dtype=np.float64, copy=True)
    C = A.shape[-1]
    for n in range(C - 1, 0, -1):
        s = A[..., n, :n].sum(-1)
        if np.any(s <= 0.0):
            raise ReducibleChainError(f"{name} must be irreducible (every state reachable from every other); got a "
                                      f"matrix whose state {n} cannot reach states 0..{n - 1} once states > {n} are "
                                      "censored")
        A[..., :n, n] /= s[..., None]
        A[..., :n, :n] += A[..., :n, n, None] * A[..., n, None, :n]
    pi = np.zeros(A.shape[:-1])
    pi[..., 0] = 1.0
    for j in range(1, C):
        pi[..., j] = np.sum(pi[..., :j] * A[..., :j, j], axis=-1)
    return pi / pi.sum(-1, keepdims=True)


@public
def expected_row_entropy(C, concentration):
    r"""Mean entropy (nats) of a row ``p ~ Dirichlet(α·1_C)``: ``E[H(p)] = ψ(Cα + 1) − ψ(α + 1)``.

    From ``E[p_j log p_j] = (α/Cα) [ψ(α + 1) − ψ(Cα + 1)]`` (the size-biased Beta law), summed over ``j``.
    It is the late-position loss of the true chain averaged over rows drawn uniformly; the loss at a state
    visited with the stationary frequency weights rows differently (docs/markov.md). arXiv:2604.12151.

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration, ``> 0`` and finite.

    Returns
    -------
    float
        In ``[0, log C]``; ``log C`` where ``Cα`` exceeds float64 (the correction ``−(1 − 1/C)/(2α)`` is then
        below ``1e-290``).

    Examples
    --------
    >>> from linattn import markov
    >>> round(markov.expected_row_entropy(2, 1.0), 12)  # uniform p on [0, 1]: E H = 1/2
    0.5
    """
    if not math.isfinite(C * concentration):     # ψ(Cα + 1) − ψ(α + 1) = log C − (1 − 1/C)/(2α) + O(α⁻²), α > 1e292
        return math.log(C)
    return float(special.digamma(C * concentration + 1.0) - special.digamma(concentration + 1.0))


@public(first_state=choice(FIRST_STATES))
def first_law(T, first_state):
    """The first-state law ``p(x_0 | T)`` of each chain: stationary ``π``, uniform ``1/C``, or ``"onestep"``
    ``(1/C) Σ_i T_ij`` (module docstring).

    Parameters
    ----------
    T : array_like, shape (..., C, C)
    first_state : {"stationary", "uniform", "onestep"}

    Returns
    -------
    ndarray, shape (..., C)
    """
    return named_first_law("T", transition_matrices("T", T), first_state)


def named_first_law(name, T, first_state):
    """:func:`first_law` of checked matrices and law, the argument called ``name`` by the caller (the name its
    refusals give).

    Parameters
    ----------
    name : str
    T : ndarray, shape (..., C, C)
    first_state : {"stationary", "uniform", "onestep"}

    Returns
    -------
    ndarray, shape (..., C)
    """
    if first_state == "stationary":
        return named_stationary(name, T)
    if first_state == "uniform":
        return np.full(T.shape[:-1], 1.0 / T.shape[-1])
    return T.mean(axis=-2)


@dataclass(frozen=True)
class Sample:
    """Sequences of Markov-chain states (:meth:`Chains.sample`).

    Attributes
    ----------
    states : ndarray of int64, shape (n_seq, length)
        ``x_0 … x_{L−1}`` in ``0 … C−1``.
    pool : ndarray of float64, shape (n_tasks, C, C)
        The chains: the pool (finite ``K``) or one fresh chain per sequence (``K = None``).
    task : ndarray of int64, shape (n_seq,)
        Index into ``pool`` of each sequence's chain (``arange(n_seq)`` for ``K = None``).
    """

    __repr__ = short_repr

    states: np.ndarray
    pool: np.ndarray
    task: np.ndarray


@public_class
@dataclass(frozen=True)
class Chains:
    r"""The law of the Markov-chain task of arXiv:2604.12151 (module docstring).

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    concentration : float
        Dirichlet concentration of the rows, ``> 0`` and finite.
    K : int or None
        Pool size (``>= 1``); ``None``: a fresh chain for every sequence (``K = ∞``).
    first_state : {"stationary", "uniform", "onestep"}
        Law of ``x_0`` given the chain: ``π``, uniform, or ``(1/C) Σ_i T_ij``.

    Examples
    --------
    >>> from linattn import markov
    >>> ch = markov.Chains(C=3, concentration=1.0, K=4)
    >>> s = ch.sample(5, 8, rng=0)
    >>> s.states.shape, s.pool.shape, s.task.shape
    ((5, 8), (4, 3, 3), (5,))
    """

    __repr__ = short_repr

    C: int
    concentration: float
    K: int | None = None
    first_state: str = "stationary"

    def __post_init__(self):
        object.__setattr__(self, "C", check.positive_int("C", self.C, minimum=2))
        object.__setattr__(self, "concentration", check.positive("concentration", self.concentration))
        if self.K is not None:
            object.__setattr__(self, "K", check.positive_int("K", self.K, minimum=1))
        check.choice("first_state", self.first_state, FIRST_STATES)
        python_scalars(self)

    @public(n=integer())
    def draw_chains(self, n, rng):
        """``n`` transition matrices with i.i.d. ``Dirichlet(α·1_C)`` rows (any ``K``); matrix ``t`` uses the
        generator stream ``(seed, t)``, so the first matrices do not depend on ``n``.

        Parameters
        ----------
        n : int
            Number of matrices, ``>= 1``.
        rng : None, int, tuple of ints or numpy.random.Generator

        Returns
        -------
        ndarray, shape (n, C, C)
        """
        guard_memory([(8.0, [("n", n), ("C", self.C**2)])], f"{n} chains of {self.C} x {self.C}")
        return self._draw(n, rng)

    def _draw(self, n, gen):
        """:meth:`draw_chains` of a checked ``n`` from the Generator ``gen``."""
        seed = check.seed_int("rng", gen)
        out = np.empty((n, self.C, self.C))
        draw_chains_kernel(self.concentration, seed, 0, out)
        return out

    @public
    def draw_pool(self, rng):
        """The pool: ``K`` transition matrices with i.i.d. ``Dirichlet(α·1_C)`` rows, shape (K, C, C).

        Parameters
        ----------
        rng : None, int, tuple of ints or numpy.random.Generator

        Returns
        -------
        ndarray, shape (K, C, C)
        """
        if self.K is None:
            raise ValueError("K must be an integer >= 1 to draw a pool; got None (a fresh chain per sequence)")
        guard_memory([(8.0, [("K", self.K), ("C", self.C**2)])], f"a pool of {self.K} chains of {self.C} x {self.C}")
        return self._draw(self.K, rng)

    @public(length=integer())
    def sample(self, n_seq, length, rng, pool=None):
        """Draw ``n_seq`` sequences of ``length`` states.

        Finite ``K``: the pool is ``pool`` if given, else drawn first from ``rng`` (:meth:`draw_pool`); each
        sequence's chain is uniform over the pool. ``K = None``: a fresh chain per sequence (``pool`` must be
        ``None``). The first state follows ``first_state``. Paths are reproducible for a fixed ``rng`` and
        independent of batching (module docstring).

        Parameters
        ----------
        n_seq : int
            Number of sequences, ``>= 1``.
        length : int
            States per sequence ``L``, ``>= 1``.
        rng : None, int, tuple of ints or numpy.random.Generator
        pool : array_like, shape (K, C, C), optional
            Row-stochastic irreducible matrices (finite ``K`` only).

        Returns
        -------
        Sample
        """
        C = self.C
        n_tasks = n_seq if self.K is None else self.K
        # the paths, and the chains with their copies (checked, censored, cumulated): four (n_tasks, C, C) arrays
        guard_memory([(8.0, [("n_seq", n_seq), ("length", length + 1)]),
                      (32.0, [("n_seq" if self.K is None else "K", n_tasks), ("C", C * C)])],
                     f"{n_seq} sequences of {length} states and {n_tasks} chains of {C} x {C}")
        gen = rng
        if self.K is None:
            if pool is not None:
                raise ValueError("pool must be None when K is None (a fresh chain per sequence); got an array")
            chains = np.empty((n_seq, C, C))
            draw_chains_kernel(self.concentration, check.seed_int("rng", gen), 0, chains)
            task = np.arange(n_seq, dtype=np.int64)
        else:
            if pool is None:
                chains = self._draw(self.K, gen)
            else:
                chains = transition_matrices("pool", pool)
                if chains.shape != (self.K, C, C):
                    check.fail("pool", f"<array with shape {chains.shape}>", f"an array of shape ({self.K}, {C}, {C})")
            task = gen.integers(self.K, size=n_seq).astype(np.int64)
        with blame_concentration(self.concentration) if pool is None else contextlib.nullcontext():
            first = named_first_law("pool", chains, self.first_state)
        states = np.empty((n_seq, length), dtype=np.int64)
        paths_kernel(np.cumsum(chains, axis=-1), np.cumsum(first, axis=-1), task, check.seed_int("rng", gen), 0, states)
        return Sample(states=states, pool=chains, task=task)
