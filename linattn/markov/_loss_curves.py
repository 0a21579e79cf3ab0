r"""Loss curves of the ideal estimators of the Markov-chain task: the mean log-loss at each position over sequences
sampled from a pool or from fresh chains (Gibson, Cui & Reddy, arXiv:2604.12151, their figure of estimator losses).

The estimators are defined in :mod:`linattn.markov._estimators`; the sums run in its numba kernels
(:mod:`linattn.markov._estimator_kernels`) over blocks of sequences, without an ``(n_seq, L, C)`` array.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linattn import _check as check

from .._arguments import choice, instance, integer, optional, positive, public
from .._numerics.stats import mean_se
from .._results import python_scalars, short_repr
from ._chains import (
    Chains,
    blame_concentration,
    draw_chains_kernel,
    guard_memory,
    guard_work,
    named_first_law,
    paths_kernel,
)
from ._estimator_kernels import FIRST_CODES, KIND_CODES, run_estimator
from ._estimators import NAMES, estimator_cost, fail_kernel, kernel_concentration, pool_layout

_BLOCK = 4096   # sequences per block in losses() (results do not depend on it)


def _names(names, K, first_state):
    allowed = NAMES if K is not None else ("1-gen", "2-gen", "bayes", "true")
    if names is None:
        # bayes is Monte Carlo only for fresh chains with stationary first states (linattn.markov._estimators):
        # named only
        return tuple(nm for nm in allowed if not (nm == "bayes" and K is None and first_state == "stationary"))
    if isinstance(names, str):
        names = (names,)
    if not isinstance(names, (list, tuple)) or not names:
        check.fail("names", names, f"a non-empty sequence of names from {allowed}")
    names = tuple(names)
    for nm in names:
        check.choice("names", nm, allowed)
    return names


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

    def __post_init__(self):
        python_scalars(self)


@public(chains=instance(Chains, "a linattn.markov.Chains"), n_seq=None, on=choice(("pool", "fresh")),
        pseudocount=optional(positive()), n_mc=integer())
def losses(chains, n_seq, length, rng, n_pools=1, on="pool", names=None, pseudocount=None, n_mc=64):
    r"""Mean log-loss vs position of the ideal estimators on sequences of the Markov-chain task
    (:mod:`linattn.markov._estimators`; arXiv:2604.12151, their Fig. of estimator losses).

    Finite ``K``: each of ``n_pools`` pools is drawn fresh; ``on="pool"``: ``n_seq`` sequences from the pool's
    chains (exactly ``chains.sample(n_seq, length, rng)`` for one pool); ``on="fresh"``: from fresh chains
    (the pool drawn first, then ``Chains(C, α, None, first_state).sample`` from the same generator), the
    memorizing estimators and bayes still using the pool (bayes is then the Bayes predictor of the
    *training* law, evaluated out of distribution). ``K = None``: fresh chains, ``n_pools = 1``.
    The sums run in numba over blocks of sequences; the numbers do not depend on the block size.

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
        Default: every estimator that is exact, at ``O(K)`` (pool) or ``O(C)`` (fresh chains) work per position:
        all of ``("1-mem", "2-mem", "1-gen", "2-gen", "bayes", "true")`` (finite ``K``), or
        ``("1-gen", "2-gen", "bayes", "true")`` (``K = None``) — but without ``"bayes"`` for ``K = None`` with
        ``first_state="stationary"``, where it is a Monte Carlo over ``n_mc`` posterior draws of a ``C × C`` chain
        and its stationary law per position (``O(n_mc C³)``; measured: ``C = 10``, ``L = 102``, 2000 sequences,
        ``n_mc = 64``: 89 s on one core, against 0.1 s for the default estimators): name it to get it.
        "true" is the oracle ``−log T(x_n, x_{n+1})``.
    pseudocount : float, optional
        1-gen's ``β`` (default ``α``).
    n_mc : int
        Posterior draws per position of bayes for ``K = None``, ``first_state="stationary"``.

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
    block = max(1, min(_BLOCK, (1 << 23) // length))
    K = chains.K or 0
    # a block of paths with its chains (fresh: five (block, C, C) arrays with the copies of first_law); the pool
    # with its state-major layout and logs
    guard_memory([(8.0 * block, [("length", length)]), (40.0 * block, [("chains.C", C * C)]),
                  (48.0, [("chains.K", K), ("chains.C", C * C)])],
                 f"blocks of {block} sequences and the pool of {K} chains of {C} x {C}")
    guard_memory([(16.0 * len(names), [("n_pools", n_pools), ("length", length - 1)])],
                 f"the loss sums of {n_pools} pools at {length - 1} positions")
    if chains.K is not None and on == "pool":
        check.memory(24.0 * n_seq, f"the task index of each of {n_seq} sequences", "n_seq")
    positions = [("n_pools", n_pools), ("n_seq", n_seq), ("length", length - 1)]
    trips = check.PYTHON_TRIP * len(names)
    guard_work([t for nm in names for t in estimator_cost(nm, positions, C, K, first, n_mc, "chains.C", "chains.K")]
               + [(1.0, [("n_pools", n_pools), ("n_seq", n_seq), ("length", length), ("chains.C", C)]),
                  (trips, [("n_pools", n_pools)]), (trips, [("n_pools", n_pools), ("n_seq", n_seq // _BLOCK)])],
               f"{len(names)} estimators on {n_pools} x {n_seq} sequences of {length} states")
    gen = rng
    alpha_run, beta_run = kernel_concentration(concentration, C), kernel_concentration(pseudo, C)
    sums = {nm: np.zeros((n_pools, length - 1)) for nm in names}
    sq = {nm: np.zeros((n_pools, length - 1)) for nm in names}
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
            buf = np.empty((1, length - 1))
            dummy = np.empty((1, 1, C))
            for nm in names:
                code = run_estimator(x, KIND_CODES[nm], C, alpha_run, beta_run, FIRST_CODES[first], n_mc, seed_mc,
                                     start, *layout, own, own_task, buf, dummy, False, sums[nm][p], sq[nm][p], True)
                if code != -1:
                    fail_kernel(code, nm, chains, offset=start)
    mean, se = {}, {}
    for nm in names:
        m = sums[nm] / n_seq                                   # mean of ℓ_n − log C, per pool
        if n_pools == 1:
            var = (sq[nm][0] - n_seq * m[0] ** 2) / (n_seq - 1)
            mean[nm], se[nm] = np.log(C) + m[0], np.sqrt(np.maximum(var, 0.0) / n_seq)
        else:
            m_mean, se[nm] = mean_se(m, 0)
            mean[nm] = np.log(C) + m_mean
    return LossCurves(mean=mean, se=se, names=names, chains=chains, length=length, n_seq=n_seq, n_pools=n_pools,
                      on=on, pseudocount=pseudo, n_mc=n_mc)
