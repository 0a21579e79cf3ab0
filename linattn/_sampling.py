"""Samplers of training prompts: the checked entries (:mod:`linattn._law` holds the exact sampler and its
derivation).

:func:`sample` is :meth:`linattn.Problem.sample` (exact, ``O(D)`` per prompt for linear links); :func:`sample_tokens`
draws the tokens themselves (the definition of the data) and :func:`sample_naive` reduces them (the reference of the
tests and benchmarks); :func:`draw_pool` draws a task pool.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check as check
from . import _law
from . import _validate as validate
from ._arguments import public
from ._prompts import Prompts
from ._results import short_repr
from ._validate import PROBLEM


def sample(pb, P, rng=None) -> Prompts:
    """Draw ``P`` prompts exactly in ``O(P D)`` time (module docstring for the derivation).

    Parameters
    ----------
    pb : Problem
    P : int
        Number of prompts, ``P >= 1``.
    rng : None, int or numpy.random.Generator
        The prompts are drawn in fixed blocks of about 2^17 numbers (temporaries stay that small), so the prompts
        of a seed depend only on the seed.

    Returns
    -------
    Prompts
        With ``y2`` filled (serves both models), and ``pool``, ``task`` for a task pool.
    """
    return _checked(pb, P, rng, keep_tasks=False)[0]


@public(pb=PROBLEM)
def draw_pool(pb, P, rng=None):
    """The task pool of one dataset and the task index of each of its ``P`` prompts.

    Parameters
    ----------
    pb : Problem
        With ``tasks=K``.
    P : int
    rng : None, int or numpy.random.Generator

    Returns
    -------
    pool : ndarray (K, D)
        ``w_k ~ N(0, I_D)`` (``N(0, S)`` with a task covariance), or uniform on ``|w|² = D``
        (``task_law="sphere"``).
    task : ndarray (P,) int
        Uniform indices, or balanced (each task ``⌊P/K⌋`` or ``⌈P/K⌉`` times, random order).
    """
    if pb.tasks is None:
        raise ValueError("pb.tasks must be an integer K >= 1 to draw a task pool; got None")
    return _law.pool_and_tasks(pb, P, rng)


def sample_with_tasks(pb, P, rng=None):
    """As :func:`sample`, also returning the tasks ``w`` (shape (P, D)) of the prompts.

    Parameters
    ----------
    pb : Problem
    P : int
    rng : None, int or numpy.random.Generator

    Returns
    -------
    prompts : Prompts
    tasks : ndarray (P, D)
    """
    return _checked(pb, P, rng, keep_tasks=True)


def _checked(pb, P, rng, keep_tasks):
    pb = validate.problem(pb)
    P = check.positive_int("P", P)
    return _law.draw(pb, P, check.rng(rng), keep_tasks)


@dataclass(frozen=True, eq=False)
class Tokens:
    """Raw prompts: tokens ``X`` (P, N, D), labels ``y`` (P, N), queries, targets and tasks.

    Attributes
    ----------
    X : ndarray (P, N, D)
        The context tokens of each prompt.
    y : ndarray (P, N)
        Their labels ``y = w·x/√D + σε`` (through the link, if any).
    xq : ndarray (P, D)
        The query token of each prompt.
    yq : ndarray (P,)
        The query's target.
    w : ndarray (P, D)
        The task of each prompt.
    """

    __repr__ = short_repr

    X: np.ndarray
    y: np.ndarray
    xq: np.ndarray
    yq: np.ndarray
    w: np.ndarray

    @public
    def prompts(self) -> Prompts:
        """Sufficient statistics ``s = Xᵀy/N``, ``y2 = |y|²/N``.

        Returns
        -------
        Prompts
        """
        s, y2 = self._statistics()
        return Prompts(s=s, xq=self.xq, yq=self.yq, y2=y2)

    def _statistics(self):
        N = self.X.shape[1]
        with np.errstate(over="ignore", invalid="ignore"):
            s = np.einsum("pnd,pn->pd", self.X, self.y) / N
            y2 = np.einsum("pn,pn->p", self.y, self.y) / N
        return s, y2

    @public
    def embed(self) -> np.ndarray:
        """Embedded prompts ``Z`` of shape (P, D+1, N+1) (see :func:`linattn.attention.embed`).

        Returns
        -------
        ndarray (P, D+1, N+1)
        """
        from ._attention import embed

        return embed(self.X, self.y, self.xq)


@public(pb=PROBLEM)
def sample_tokens(pb, P, rng=None, w=None) -> Tokens:
    """Draw ``P`` prompts token by token (the definition of the data; ``O(P N D)`` memory).

    Parameters
    ----------
    pb : Problem
    P : int
    rng : None, int or numpy.random.Generator
    w : array_like (P, D), optional
        The task of each prompt (default: fresh ``w ~ N(0, I_D)``, or ``N(0, S)`` with a task covariance;
        :func:`sample_naive` passes a pool's tasks here).

    Returns
    -------
    Tokens
    """
    D, N = pb.D, pb.N
    check.memory(8.0 * (2 * N * D + N + 3 * D), f"the tokens of one prompt (N = {N}, D = {D})", "pb.N and pb.D")
    check.memory(8.0 * P * (2 * N * D + N + 3 * D), f"the tokens of {P} prompts (N = {N}, D = {D})", "P")
    return _tokens(pb, P, rng, None if w is None else check.finite_array("w", w, shape=(P, D)))


def _tokens(pb, P, gen, w):
    """:func:`sample_tokens` of checked arguments (``gen`` a Generator, ``w`` None or a float (P, D) array)."""
    D, N, sig = pb.D, pb.N, pb.noise
    if w is None:
        w = gen.standard_normal((P, D)) if pb.task_covariance is None else pb.task_covariance.draw(gen, P)
    X = gen.standard_normal((P, N, D))
    cov = pb.covariance
    if cov is not None:   # x = U diag(√s) z
        X = cov._rotate_rows(X * np.sqrt(cov.spectrum))
    y = _law.labels(pb, np.einsum("pnd,pd->pn", X, w) / np.sqrt(D)) + sig * gen.standard_normal((P, N))
    xq = gen.standard_normal((P, D))
    if cov is not None:
        xq = cov._rotate_rows(xq * np.sqrt(cov.spectrum))
    yq = _law.labels(pb, np.einsum("pd,pd->p", w, xq) / np.sqrt(D)) + sig * gen.standard_normal(P)
    return Tokens(X=X, y=y, xq=xq, yq=yq, w=w)


def sample_naive(pb, P, rng=None, batch_size: int = 256) -> Prompts:
    """Reference sampler: build every token matrix ``X`` (``O(P N D)`` time), then reduce.

    Used by tests (agreement in distribution with :func:`sample`) and by the sampler benchmark.

    Parameters
    ----------
    pb : Problem
    P : int
    rng : None, int or numpy.random.Generator
    batch_size : int
        Prompts built per batch.

    Returns
    -------
    Prompts
    """
    pb = validate.problem(pb)
    P = check.positive_int("P", P)
    batch_size = check.positive_int("batch_size", batch_size)
    D, N = pb.D, pb.N
    check.memory(8.0 * (3 * D + 2) + 8.0 * (2 * N * D + N + 3 * D),
                 f"one prompt and its tokens (N = {N}, D = {D})", "pb.N and pb.D")
    check.memory(8.0 * P * (3 * D + 2) + 8.0 * min(P, batch_size) * (2 * N * D + N + 3 * D),
                 f"{P} prompts of dimension D = {D} (tokens in batches of {min(P, batch_size)})",
                 "P" if P <= batch_size else "P or batch_size")
    gen = check.rng(rng)
    pool, task = _law.pool_and_tasks(pb, P, gen) if pb.tasks is not None else (None, None)
    s, xq, yq, y2 = [], [], [], []
    for a, b in _law.batches(P, batch_size):
        tok = _tokens(pb, b - a, gen, None if pool is None else pool[task[a:b]])
        sb, y2b = tok._statistics()
        s.append(sb)
        xq.append(tok.xq)
        yq.append(tok.yq)
        y2.append(y2b)
    s, xq, yq, y2 = (np.concatenate(x) for x in (s, xq, yq, y2))
    _law._check_drawn(pb, s, xq, yq, y2)         # features the link made too large: named as the problem's
    return Prompts._trusted(s, xq, yq, y2, pool, task)
