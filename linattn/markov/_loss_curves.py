r"""Loss curves of the ideal estimators of the Markov-chain task: the mean log-loss at each position over sequences
sampled from a pool or from fresh chains (Gibson, Cui & Reddy, arXiv:2604.12151, their figure of estimator losses).

The estimators are defined in :mod:`linattn.markov._estimators`; the sums run in its numba kernels
(:mod:`linattn.markov._estimator_kernels`) over blocks of sequences, without an ``(n_seq, L, C)`` array.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from linattn import _check as check
from linattn._check import PROGRESS_DELAY

from .._arguments import choice, instance, integer, optional, positive, public
from .._numerics.stats import mean_se
from .._results import python_scalars, short_repr
from ._chains import (
    Chains,
    blame_concentration,
    chain_cost,
    draw_chains_kernel,
    guard_memory,
    guard_work,
    named_first_law,
    path_cost,
    paths_kernel,
)
from ._estimator_kernels import FIRST_CODES, KIND_CODES, run_estimator
from ._estimators import NAMES, estimator_cost, fail_kernel, kernel_concentration, pool_layout

_BLOCK = 4096   # sequences per block in losses() (results do not depend on it)


#: the estimators that need a finite pool: with ``K = None`` (a fresh chain per sequence) there is none to remember
MEMORISING = ("1-mem", "2-mem")


def _names(names, K, first_state):
    allowed = NAMES if K is not None else tuple(nm for nm in NAMES if nm not in MEMORISING)
    if names is None:
        # bayes is Monte Carlo only for fresh chains with stationary first states (linattn.markov._estimators):
        # named only
        return tuple(nm for nm in allowed if not (nm == "bayes" and K is None and first_state == "stationary"))
    if isinstance(names, str):
        names = (names,)
    if not isinstance(names, (list, tuple)) or not names:
        check.fail("names", names, f"a non-empty sequence of distinct names from {allowed}")
    names = tuple(names)
    for nm in names:
        if K is None and isinstance(nm, str) and nm in MEMORISING:
            check.fail("names", list(names), f"names from {allowed} for chains with K=None: {nm!r} is a memorising "
                       "estimator, which retrieves the sequence's chain from a finite pool, and with K=None (K = ∞) "
                       "every sequence has a fresh chain and there is no pool (give Chains a finite K for it)")
        check.choice("names", nm, allowed)
    return check.distinct("names", names)


@dataclass(frozen=True)
class LossCurves:
    r"""Mean log-loss of the estimators at each position (:func:`losses`).

    Attributes
    ----------
    mean, se : dict of str -> ndarray (length − 1,)
        ``E ℓ_n`` (nats) for ``n = 0 … L−2`` and its standard error (over pools if ``n_pools > 1``, else over
        sequences), per estimator name.
    names : tuple of str
    chains : Chains
    n_seq, length, n_pools : int
        Sequences per pool, states per sequence, pools.
    on : str
        ``"pool"`` or ``"fresh"`` (the chains the sequences come from).
    pseudocount : float
        1-gen's ``β``.
    n_mc : int
    diff, diff_se : dict of (str, str) -> ndarray (length − 1,)
        Paired differences ``E[ℓ^a_n − ℓ^b_n]`` of every two estimators ``a`` before ``b`` in :attr:`names`, taken on
        the same sequences, and their standard errors (over pools if ``n_pools > 1``, else over sequences): far
        smaller than ``se[a]`` and ``se[b]`` where the two losses move together (:meth:`difference`).
    """

    __repr__ = short_repr

    mean: dict = field(repr=False)
    se: dict = field(repr=False)
    names: tuple
    chains: Chains
    n_seq: int
    length: int
    n_pools: int
    on: str
    pseudocount: float
    n_mc: int
    diff: dict = field(default_factory=dict, repr=False)
    diff_se: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        python_scalars(self)

    @public(a=None, b=None)
    def difference(self, a, b):
        """The paired difference ``E[ℓ^a_n − ℓ^b_n]`` per position and its standard error (:attr:`diff`; either order).

        Parameters
        ----------
        a, b : str
            Two distinct names of :attr:`names`.

        Returns
        -------
        mean, se : ndarray (length − 1,)

        Examples
        --------
        >>> from linattn import markov
        >>> r = markov.losses(markov.Chains(C=3, concentration=1.0, K=4), n_seq=200, length=20, rng=0)
        >>> d, se = r.difference("2-mem", "bayes")
        >>> bool((d >= -4 * se).all())              # bayes is the Bayes predictor of the pool
        True
        """
        for arg, value in (("a", a), ("b", b)):
            check.choice(arg, value, self.names)
        if a == b:
            check.fail("b", b, f"a name other than a = {a!r}")
        if (a, b) in self.diff:
            return self.diff[a, b], self.diff_se[a, b]
        return 0.0 - self.diff[b, a], self.diff_se[b, a]


def work_terms(chains, n_seq, length, n_pools, on, names, n_mc):
    """The work of :func:`losses` in ns (measured: :data:`~linattn.markov._chains.COST_NS`), as monomials of
    :func:`~linattn.markov._chains.guard_work`: the estimators, the paths, the fresh chains of each sequence or the
    pools, and the Python-level trips per pool and per block."""
    C, K, first = chains.C, chains.K or 0, chains.first_state
    sequences = [("n_pools", n_pools), ("n_seq", n_seq)]
    positions = sequences + [("length", length - 1)]
    trips = check.PYTHON_TRIP * len(names)
    fresh = chains.K is None or on == "fresh"
    sampling = (path_cost(sequences + [("length", length)], C, "chains.C")
                + (chain_cost(sequences, C, first, "chains.C") if fresh else [])
                + (chain_cost([("n_pools", n_pools), ("chains.K", K)], C, "stationary", "chains.C") if K else []))
    return ([t for nm in names for t in estimator_cost(nm, positions, sequences, C, K, first, n_mc, "chains.C",
                                                        "chains.K")]
            + sampling + [(trips, [("n_pools", n_pools)]), (trips, [("n_pools", n_pools), ("n_seq", n_seq // _BLOCK)])])


@public(chains=instance(Chains, "a linattn.markov.Chains"), n_seq=None, on=choice(("pool", "fresh")),
        pseudocount=optional(positive()), n_mc=integer())
def losses(chains, n_seq, length, rng, n_pools=1, on="pool", names=None, pseudocount=None, n_mc=64, progress=True):
    r"""Mean log-loss vs position of the ideal estimators on sequences of the Markov-chain task
    (:mod:`linattn.markov._estimators`; arXiv:2604.12151, their Fig. of estimator losses).

    Finite ``K``: each of ``n_pools`` pools is drawn fresh; ``on="pool"``: ``n_seq`` sequences from the pool's
    chains (exactly ``chains.sample(n_seq, length, rng)`` for one pool); ``on="fresh"``: from fresh chains
    (the pool drawn first, then ``Chains(C, α, None, first_state).sample`` from the same generator), the
    memorizing estimators and bayes still using the pool (bayes is then the Bayes predictor of the
    *training* law, evaluated out of distribution). ``K = None``: fresh chains, ``n_pools = 1``.
    The sums run in numba over blocks of sequences; the numbers do not depend on the block size. Cost: linear in
    ``n_pools · n_seq · (length − 1)`` for each estimator, the Monte Carlo bayes ``n_mc C⁴`` times more per position
    (``names``: 0.1 s for the default estimators at ``C = 10``, ``L = 102``, 2000 sequences; 89 s with it).

    Parameters
    ----------
    chains : Chains
    n_seq : int
        Sequences per pool (``>= 2`` if ``n_pools == 1``).
    length : int
        States per sequence, ``L >= 2``.
    rng : None, int, tuple of ints or numpy.random.Generator
    n_pools : int
        Pools (finite ``K``); the s.e. is over pools if ``>= 2``.
    on : {"pool", "fresh"}
    names : sequence of str, optional
        Distinct estimator names (a repeated name is refused: its sums would be added twice). ``K = None`` has no
        ``"1-mem"``/``"2-mem"``: they retrieve a sequence's chain from a finite pool, and fresh chains have none.
        Default: every estimator that is exact, at ``O(K)`` (pool) or ``O(C)`` (fresh chains) work per position:
        all of ``("1-mem", "2-mem", "1-gen", "2-gen", "bayes", "true")`` (finite ``K``), or
        ``("1-gen", "2-gen", "bayes", "true")`` (``K = None``) — but without ``"bayes"`` for ``K = None`` with
        ``first_state="stationary"``, where it is a Monte Carlo over ``n_mc`` posterior draws of a ``C × C`` chain
        and the ``C`` stationary laws of its one-row updates per position (``O(n_mc C⁴)``; measured: ``C = 10``,
        ``L = 102``, 2000 sequences, ``n_mc = 64``: 89 s on one core, against 0.1 s for the default estimators):
        name it to get it. "true" is the oracle ``−log T(x_n, x_{n+1})``. The work of the estimators and of the
        sampling is counted in measured nanoseconds before anything runs, and work beyond
        ``LINATTN_WORK_LIMIT`` (default ``1e13`` ns, about three hours) is refused naming its largest argument.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``).
    n_mc : int
        Posterior draws per position of bayes for ``K = None``, ``first_state="stationary"``.
    progress : bool
        Show a progress bar (over the sequences of all pools, once per estimator; it advances a block of up to
        4096 sequences at a time) when the call lasts more than two seconds.

    Returns
    -------
    LossCurves

    Examples
    --------
    >>> from linattn import markov
    >>> r = markov.losses(markov.Chains(C=3, concentration=1.0, K=4), n_seq=200, length=20, rng=0)
    >>> r.mean["bayes"].shape
    (19,)
    """
    n_pools = check.positive_int("n_pools", n_pools, maximum=None if chains.K is not None else 1)
    n_seq = check.positive_int("n_seq", n_seq, minimum=2 if n_pools == 1 else 1)
    names = _names(names, chains.K, chains.first_state)
    pseudo = chains.concentration if pseudocount is None else pseudocount
    C, concentration, first = chains.C, chains.concentration, chains.first_state
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    block = max(1, min(_BLOCK, (1 << 23) // (length * (1 + len(names)))))
    K = chains.K or 0
    # a block of paths with the losses of each estimator and its chains (fresh: five (block, C, C) arrays with the
    # copies of first_law); the pool with its state-major layout and logs
    guard_memory([(8.0 * block * (1 + len(names)), [("length", length)]), (40.0 * block, [("chains.C", C * C)]),
                  (48.0, [("chains.K", K), ("chains.C", C * C)])],
                 f"blocks of {block} sequences and the pool of {K} chains of {C} x {C}")
    guard_memory([(16.0 * (len(names) + len(pairs)), [("n_pools", n_pools), ("length", length - 1)])],
                 f"the loss sums of {n_pools} pools at {length - 1} positions")
    if chains.K is not None and on == "pool":
        check.memory(24.0 * n_seq, f"the task index of each of {n_seq} sequences", "n_seq")
    guard_work(work_terms(chains, n_seq, length, n_pools, on, names, n_mc),
               f"{len(names)} estimator(s) on {n_pools} x {n_seq} sequences of {length} states")
    gen = rng
    alpha_run, beta_run = kernel_concentration(concentration, C), kernel_concentration(pseudo, C)
    sums = {nm: np.zeros((n_pools, length - 1)) for nm in names}
    sq = {nm: np.zeros((n_pools, length - 1)) for nm in names}
    d_sums = {pr: np.zeros((n_pools, length - 1)) for pr in pairs}      # of ℓ^a − ℓ^b, paired on each sequence
    d_sq = {pr: np.zeros((n_pools, length - 1)) for pr in pairs}
    kept = np.empty((len(names), block, length - 1))                  # each estimator's losses of the block
    with tqdm(total=n_pools * n_seq * len(names), desc=f"markov losses, {n_pools} x {n_seq} sequences",
              disable=not progress, leave=False, delay=PROGRESS_DELAY) as bar:
        for p in range(n_pools):
            fresh = chains.K is None or on == "fresh"
            if chains.K is not None:
                pool = chains._draw(chains.K, gen)          # its memory is in the guard above
                with blame_concentration(concentration):
                    layout = pool_layout(pool, C, first)
            else:
                pool, layout = None, pool_layout(None, C, first)
            if fresh:
                seed_chain = check.seed_int("rng", gen)
            else:
                task = gen.integers(chains.K, size=n_seq).astype(np.int64)
                pool_cum, first_cum = np.cumsum(pool, axis=-1), np.cumsum(named_first_law("T", pool, first), axis=-1)
            seed_path = check.seed_int("rng", gen)
            seed_mc = check.seed_int("rng", gen)
            for start in range(0, n_seq, block):
                stop = min(n_seq, start + block)
                x = np.empty((stop - start, length), dtype=np.int64)
                if fresh:
                    own = np.empty((stop - start, C, C))
                    draw_chains_kernel(concentration, seed_chain, start, own)
                    own_task = np.arange(stop - start, dtype=np.int64)
                    with blame_concentration(concentration):
                        first_own = named_first_law("T", own, first)
                    paths_kernel(np.cumsum(own, axis=-1), np.cumsum(first_own, axis=-1), own_task, seed_path, start, x)
                else:
                    own, own_task = pool, task[start:stop]
                    paths_kernel(pool_cum, first_cum, own_task, seed_path, start, x)
                dummy = np.empty((1, 1, C))
                for i, nm in enumerate(names):
                    code = run_estimator(x, KIND_CODES[nm], C, alpha_run, beta_run, FIRST_CODES[first], n_mc, seed_mc,
                                         start, *layout, own, own_task, kept[i, :stop - start], dummy, False,
                                         sums[nm][p], sq[nm][p], True)
                    if code != -1:
                        fail_kernel(code, nm, chains, offset=start)
                    bar.update(stop - start)
                for a, b in pairs:
                    d = kept[names.index(a), :stop - start] - kept[names.index(b), :stop - start]
                    d_sums[a, b][p] += d.sum(0)
                    d_sq[a, b][p] += (d * d).sum(0)
    mean, se = {}, {}
    for nm in names:
        m = sums[nm] / n_seq                                   # mean of ℓ_n − log C, per pool
        if n_pools == 1:
            var = (sq[nm][0] - n_seq * m[0] ** 2) / (n_seq - 1)
            mean[nm], se[nm] = np.log(C) + m[0], np.sqrt(np.maximum(var, 0.0) / n_seq)
        else:
            m_mean, se[nm] = mean_se(m, 0)
            mean[nm] = np.log(C) + m_mean
    diff, diff_se = {}, {}
    for pr in pairs:
        m = d_sums[pr] / n_seq
        if n_pools == 1:
            var = (d_sq[pr][0] - n_seq * m[0] ** 2) / (n_seq - 1)
            diff[pr], diff_se[pr] = m[0], np.sqrt(np.maximum(var, 0.0) / n_seq)
        else:
            diff[pr], diff_se[pr] = mean_se(m, 0)
    return LossCurves(mean=mean, se=se, names=names, chains=chains, length=length, n_seq=n_seq, n_pools=n_pools,
                      on=on, pseudocount=pseudo, n_mc=n_mc, diff=diff, diff_se=diff_se)
