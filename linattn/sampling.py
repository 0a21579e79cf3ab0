r"""Samplers of training prompts.

Exact sampler in ``O(D)`` per prompt
------------------------------------
The sufficient statistics ``(s, x_q, y_q, y2)`` of a prompt can be drawn without building the
``N × D`` token matrix ``X``. Condition on the task ``w`` (with ``r = |w|²/D`` and ``ŵ = w/|w|``).
Given ``w`` the labels ``y = Xw/√D + σε`` are ``N(0, (r + σ²) I_N)``, so ``K = |y|²/(r + σ²) ~ χ²_N``
independently of ``w``. Given ``(w, y)``, each token is Gaussian with
``E[x_i | y_i] = ŵ √r y_i /(r + σ²)`` and covariance ``I − ŵŵᵀ r/(r + σ²)``. Hence

.. math:: N s = Xᵀ y = ŵ\,(√r K + σ √K ζ_1) + √((r + σ²) K)\, ζ_⊥,

with ``ζ ~ N(0, I_D)``, ``ζ_1 = ŵ·ζ`` and ``ζ_⊥ = ζ − ζ_1 ŵ``; and ``y2 = (r + σ²) K / N``.
The query ``x_q ~ N(0, I_D)`` and ``y_q = w·x_q/√D + σ ε_q`` are drawn directly. This is exact
(no approximation) and costs ``O(D)`` per prompt, independent of ``N``. (It refines the
``O(N + D)`` construction of the foundation issue, which keeps one Gaussian column ``g = Xŵ``:
here ``g`` is integrated out, because only ``|y|²`` and ``g·y`` enter.)

A linear link ``f(u) = a u`` is the same construction with ``r → a² r``. For any other link the
labels are not Gaussian, but still only two numbers of the context enter along ``ŵ``: with
``g_i = ŵ·x_i ~ N(0, 1)`` (explicit, ``N`` per prompt) and ``y_i = f(√r g_i) + σ ε_i``, the
orthogonal parts ``x_i − g_i ŵ`` are independent of the labels, so

.. math:: N s = ŵ\,Σ_i y_i g_i + \sqrt{Σ_i y_i^2}\; ζ_⊥,\qquad y2 = Σ_i y_i^2 / N,

exactly, in ``O(N + D)`` per prompt (conventions §6.3; the O(N + D) construction asked for by the
nonlinear-link issue).

Anisotropic inputs ``x = U diag(√s) z`` (linear links): in the eigenbasis of ``Σ`` the labels are
``y_i = a w̃·z_i/√D + σ ε_i`` with ``w̃ = √s ∘ w``, so the construction above runs on ``z`` with the task
``w̃`` and returns ``s = √s ∘ s_z`` and ``x_q = √s ∘ z_q``; every vector (and the task) is finally rotated
by ``U``. Still exact, ``O(D)`` per prompt plus one ``D × D`` rotation per batch.

Task pools (``Problem(tasks=K)``): the pool ``w_1 … w_K`` is drawn first (Gaussian, or on the
sphere ``|w|² = D``), then each prompt's task index (uniform, or balanced: every task ``⌊P/K⌋`` or
``⌈P/K⌉`` times in random order); the construction above then runs unchanged on ``w = w_{task}``,
still ``O(D)`` per prompt.

The naive sampler builds ``X`` explicitly (``O(N D)`` per prompt) and is kept as the
reference for tests and benchmarks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import check
from .prompts import Prompts
from .results import short_repr


def _batches(P, batch_size):
    for start in range(0, P, batch_size):
        yield start, min(P, start + batch_size)


def sample(pb, P, rng=None, batch_size: int | None = None) -> Prompts:
    """Draw ``P`` prompts exactly in ``O(P D)`` time (module docstring for the derivation).

    Parameters
    ----------
    pb : Problem
    P : int
        Number of prompts, ``P >= 1``.
    rng : None, int or numpy.random.Generator
    batch_size : int, optional
        Accepted for compatibility and ignored: prompts are drawn in blocks of about 2^17 numbers (temporaries stay
        that small), always the same blocks, so the prompts of a seed never depend on how they are batched.

    Returns
    -------
    Prompts
        With ``y2`` filled (serves both models), and ``pool``, ``task`` for a task pool.
    """
    return _sample(pb, P, rng, batch_size, keep_tasks=False)[0]


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
        ``w_k ~ N(0, I_D)``, or uniform on ``|w|² = D`` (``task_law="sphere"``).
    task : ndarray (P,) int
        Uniform indices, or balanced (each task ``⌊P/K⌋`` or ``⌈P/K⌉`` times, random order).
    """
    pb = check.problem(pb)
    if pb.tasks is None:
        raise ValueError("pb.tasks must be an integer K >= 1 to draw a task pool; got None")
    P = check.positive_int("P", P)
    gen = check.rng(rng)
    K, D = pb.tasks, pb.D
    check.memory(8.0 * K * D, f"a pool of {K} tasks in dimension D = {D}", "tasks")
    check.memory(24.0 * P, f"the task indices of {P} prompts (three arrays while drawn)", "P")
    pool = gen.standard_normal((K, D))
    if pb.task_law == "sphere":
        pool *= np.sqrt(D) / np.linalg.norm(pool, axis=1, keepdims=True)
    if pb.assignment == "balanced":
        task = gen.permutation(np.arange(P) % K)
    else:
        task = gen.integers(0, K, size=P)
    return pool, task


def sample_with_tasks(pb, P, rng=None, batch_size: int | None = None):
    """As :func:`sample`, also returning the tasks ``w`` (shape (P, D)) of the prompts.

    Parameters
    ----------
    pb : Problem
    P : int
    rng : None, int or numpy.random.Generator
    batch_size : int, optional

    Returns
    -------
    prompts : Prompts
    tasks : ndarray (P, D)
    """
    return _sample(pb, P, rng, batch_size, keep_tasks=True)


def _sample(pb, P, rng, batch_size, keep_tasks):
    pb = check.problem(pb)
    P = check.positive_int("P", P)
    linear = pb.link.is_linear
    width = pb.D if linear else max(pb.D, 2 * pb.N)
    if batch_size is not None:
        check.positive_int("batch_size", batch_size)
    batch_size = max(64, (1 << 17) // width)    # the random stream is drawn in these blocks whatever batch_size says
    gen = check.rng(rng)
    D, N, sig = pb.D, pb.N, pb.noise
    a2 = float(pb.link.slope) ** 2 if linear else None
    check.memory(8.0 * P * (3 * D + 2), f"{P} prompts of dimension D = {D}", "P")
    if not linear:      # the labels of a batch's contexts, (batch, N), a few times over
        check.memory(8.0 * 4 * batch_size * width, f"a batch of {batch_size} prompts of a nonlinear link (N = {N})",
                     "pb.N (the context length)")
    tasks = np.empty((P, D)) if keep_tasks else None
    pool, task = draw_pool(pb, P, gen) if pb.tasks is not None else (None, None)
    s = np.empty((P, D))
    xq = np.empty((P, D))
    yq = np.empty(P)
    y2 = np.empty(P)
    cov = pb.covariance
    root = None if cov is None else np.sqrt(cov.spectrum)
    if pool is not None:    # a pool's norms and directions once per task, not once per prompt (same arithmetic)
        pw = pool if cov is None else pool * root
        pool_norm = np.sqrt(np.einsum("pd,pd->p", pw, pw))
        pool_hat = pw / pool_norm[:, None]
    zeta = np.empty((batch_size, D))
    for a, b in _batches(P, batch_size):
        n = b - a
        if pool is None:
            w = gen.standard_normal((n, D))
        else:
            idx = task[a:b]
            w = pool[idx]
        if keep_tasks:
            tasks[a:b] = w if cov is None else cov.rotate_rows(w)
        wq = w                  # task as seen by the query: y_q = a w·x_q/√D in the (eigen)basis used here
        if pool is None:
            if cov is not None:     # anisotropic: run on z with the task w̃ = √s ∘ w (module docstring)
                w = w * root
            wn = np.sqrt(np.einsum("pd,pd->p", w, w))
            what = w / wn[:, None]
        else:
            wn = pool_norm[idx]
            what = pool_hat[idx]
        r = wn**2 / D
        zb = zeta[:n]
        if linear:
            r = a2 * r     # f(u) = a u: Gaussian labels with signal variance a² r
            K = gen.chisquare(N, size=n)
            gen.standard_normal(out=zb)
            z1 = np.einsum("pd,pd->p", zb, what)
            along = np.sqrt(r) * K + sig * np.sqrt(K) * z1
            Y2 = (r + sig**2) * K
        else:
            g = gen.standard_normal((n, N))
            y = pb.link(np.sqrt(r)[:, None] * g)
            if sig > 0:
                y = y + sig * gen.standard_normal((n, N))
            along = np.einsum("pn,pn->p", y, g)
            Y2 = np.einsum("pn,pn->p", y, y)
            gen.standard_normal(out=zb)
            z1 = np.einsum("pd,pd->p", zb, what)
        perp = np.sqrt(Y2)
        # N s = ŵ along + perp (ζ − ζ_1 ŵ) = ŵ (along − perp ζ_1) + perp ζ   (assembled in place)
        sb = s[a:b]
        np.multiply(((along - perp * z1) / N)[:, None], what, out=sb)
        zb *= (perp / N)[:, None]
        sb += zb
        y2[a:b] = Y2 / N
        xb = xq[a:b]
        gen.standard_normal(out=xb)
        if cov is not None:
            sb *= root
            xb *= root
        yq[a:b] = _labels(pb, np.einsum("pd,pd->p", wq, xb) / np.sqrt(D)) + sig * gen.standard_normal(n)
        if cov is not None and cov.basis is not None:
            s[a:b] = cov.rotate_rows(sb)
            xq[a:b] = cov.rotate_rows(xb)
    return Prompts(s=s, xq=xq, yq=yq, y2=y2, pool=pool, task=task), tasks


def _labels(pb, u):
    """Noise-free labels ``f(u)`` (``u`` itself for the default link, bit for bit)."""
    if pb.link.is_linear:
        return u if pb.link.slope == 1.0 else pb.link.slope * u
    return pb.link(u)


@dataclass(frozen=True, eq=False)
class Tokens:
    """Raw prompts: tokens ``X`` (P, N, D), labels ``y`` (P, N), queries, targets and tasks."""

    __repr__ = short_repr

    X: np.ndarray
    y: np.ndarray
    xq: np.ndarray
    yq: np.ndarray
    w: np.ndarray

    def prompts(self) -> Prompts:
        """Sufficient statistics ``s = Xᵀy/N``, ``y2 = |y|²/N``."""
        N = self.X.shape[1]
        s = np.einsum("pnd,pn->pd", self.X, self.y) / N
        y2 = np.einsum("pn,pn->p", self.y, self.y) / N
        return Prompts(s=s, xq=self.xq, yq=self.yq, y2=y2)

    def embed(self) -> np.ndarray:
        """Embedded prompts ``Z`` of shape (P, D+1, N+1) (see :func:`linattn.attention.embed`)."""
        from .attention import embed

        return embed(self.X, self.y, self.xq)


def sample_tokens(pb, P, rng=None, tasks=None) -> Tokens:
    """Draw ``P`` prompts token by token (the definition of the data; ``O(P N D)`` memory).

    Parameters
    ----------
    pb : Problem
    P : int
    rng : None, int or numpy.random.Generator
    tasks : array_like (P, D), optional
        The task of each prompt (default: fresh ``w ~ N(0, I_D)``; :func:`sample_naive` passes a
        pool's tasks here).

    Returns
    -------
    Tokens
    """
    pb = check.problem(pb)
    P = check.positive_int("P", P)
    gen = check.rng(rng)
    D, N, sig = pb.D, pb.N, pb.noise
    check.memory(8.0 * P * (2 * N * D + N + 3 * D), f"the tokens of {P} prompts (N = {N}, D = {D})", "P")
    w = gen.standard_normal((P, D)) if tasks is None else check.finite_array("tasks", tasks, shape=(P, D))
    X = gen.standard_normal((P, N, D))
    cov = pb.covariance
    if cov is not None:   # x = U diag(√s) z
        X = cov.rotate_rows(X * np.sqrt(cov.spectrum))
    y = _labels(pb, np.einsum("pnd,pd->pn", X, w) / np.sqrt(D)) + sig * gen.standard_normal((P, N))
    xq = gen.standard_normal((P, D))
    if cov is not None:
        xq = cov.rotate_rows(xq * np.sqrt(cov.spectrum))
    yq = _labels(pb, np.einsum("pd,pd->p", w, xq) / np.sqrt(D)) + sig * gen.standard_normal(P)
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
    pb = check.problem(pb)
    P = check.positive_int("P", P)
    batch_size = check.positive_int("batch_size", batch_size)
    D, N = pb.D, pb.N
    check.memory(8.0 * P * (3 * D + 2) + 8.0 * min(P, batch_size) * (2 * N * D + N + 3 * D),
                 f"{P} prompts of dimension D = {D} (tokens in batches of {min(P, batch_size)})", "P")
    gen = check.rng(rng)
    pool, task = draw_pool(pb, P, gen) if pb.tasks is not None else (None, None)
    parts = [sample_tokens(pb, b - a, gen, None if pool is None else pool[task[a:b]]).prompts()
             for a, b in _batches(P, batch_size)]
    return Prompts(s=np.concatenate([p.s for p in parts]), xq=np.concatenate([p.xq for p in parts]),
                   yq=np.concatenate([p.yq for p in parts]), y2=np.concatenate([p.y2 for p in parts]),
                   pool=pool, task=task)
