r"""The law of the training prompts: the exact sampler of a :class:`~linattn.Problem` (no argument checks).

:meth:`linattn.Problem.sample` and the public samplers of ``linattn/_sampling.py`` validate their arguments and
call :func:`draw` (private: it checks nothing); this module stands below both and imports neither (the ground
floor has no import circle).

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
``O(N + D)`` construction, which keeps one Gaussian column ``g = Xŵ``:
here ``g`` is integrated out, because only ``|y|²`` and ``g·y`` enter.)

A linear link ``f(u) = a u`` is the same construction with ``r → a² r``. For any other link the
labels are not Gaussian, but still only two numbers of the context enter along ``ŵ``: with
``g_i = ŵ·x_i ~ N(0, 1)`` (explicit, ``N`` per prompt) and ``y_i = f(√r g_i) + σ ε_i``, the
orthogonal parts ``x_i − g_i ŵ`` are independent of the labels, so

.. math:: N s = ŵ\,Σ_i y_i g_i + \sqrt{Σ_i y_i^2}\; ζ_⊥,\qquad y2 = Σ_i y_i^2 / N,

exactly, in ``O(N + D)`` per prompt (conventions §6.3; the O(N + D) construction asked for by the
nonlinear links).

Anisotropic inputs ``x = U diag(√s) z`` (linear links): in the eigenbasis of ``Σ`` the labels are
``y_i = a w̃·z_i/√D + σ ε_i`` with ``w̃ = √s ∘ w``, so the construction above runs on ``z`` with the task
``w̃`` and returns ``s = √s ∘ s_z`` and ``x_q = √s ∘ z_q``; every vector (and the task) is finally rotated
by ``U``. Still exact, ``O(D)`` per prompt plus one ``D × D`` rotation per batch.

Structured tasks (``Problem(task_covariance=S)``): each task is ``w = F g`` with ``F Fᵀ = S`` (``F`` of shape
``D × r``, ``r = rank S``) and ``g ~ N(0, I_r)``; the construction above runs unchanged on it (it holds for any
fixed task).

Task pools (``Problem(tasks=K)``): the pool ``w_1 … w_K`` is drawn first (Gaussian, or on the
sphere ``|w|² = D``), then each prompt's task index (uniform, or balanced: every task ``⌊P/K⌋`` or
``⌈P/K⌉`` times in random order); the construction above then runs unchanged on ``w = w_{task}``,
still ``O(D)`` per prompt.

The naive sampler (:func:`linattn._sampling.sample_naive`) builds ``X`` explicitly (``O(N D)`` per prompt) and is
kept as the reference for tests and benchmarks.
"""
from __future__ import annotations

import numpy as np

from . import _check as check
from ._prompts import FEATURE_LIMIT, Prompts


def batches(P, batch_size):
    """``(start, stop)`` of consecutive blocks of at most ``batch_size`` of ``P`` items."""
    for start in range(0, P, batch_size):
        yield start, min(P, start + batch_size)


def pool_and_tasks(pb, P, gen):
    """The task pool of ``pb`` (``K × D``) and the task index of each of ``P`` prompts, drawn from ``gen``
    (:func:`linattn.pools.draw_pool` is the checked entry)."""
    K, D = pb.tasks, pb.D
    check.memory(8.0 * K * D, f"a pool of {K} tasks in dimension D = {D}", "tasks")
    check.memory(24.0 * P, f"the task indices of {P} prompts (three arrays while drawn)", "P")
    pool = gen.standard_normal((K, D)) if pb.task_covariance is None else pb.task_covariance.draw(gen, K)
    if pb.task_law == "sphere":
        pool *= np.sqrt(D) / np.linalg.norm(pool, axis=1, keepdims=True)
    if pb.assignment == "balanced":
        task = gen.permutation(np.arange(P) % K)
    else:
        task = gen.integers(0, K, size=P)
    return pool, task


def draw(pb, P, gen, keep_tasks=False):
    """``P`` prompts of ``pb`` drawn from the generator ``gen`` (module docstring), and their tasks ``(P, D)`` if
    ``keep_tasks`` (else ``None``). ``pb`` is a Problem and ``P >= 1`` an int, both already checked."""
    linear = pb.link.is_linear
    width = pb.D if linear else max(pb.D, 2 * pb.N)
    batch_size = max(64, (1 << 17) // width)    # the random stream is drawn in these blocks whatever batch_size says
    D, N, sig = pb.D, pb.N, pb.noise
    a2 = float(pb.link.slope) ** 2 if linear else None
    block = min(batch_size, P)
    # one prompt (its three vectors and the block buffers ζ, w, ŵ of one row) is set by the dimension alone
    check.memory(8.0 * (3 * D + 2 + 4 * D), f"one prompt of dimension D = {D}", "pb.D (the token dimension)")
    check.memory(8.0 * (P * (3 * D + 2) + 4 * block * D), f"{P} prompts of dimension D = {D}", "P")
    if not linear:      # the labels of a batch's contexts, (batch, N), a few times over
        check.memory(8.0 * 4 * batch_size * width, f"a batch of {batch_size} prompts of a nonlinear link (N = {N})",
                     "pb.N (the context length)")
    tasks = np.empty((P, D)) if keep_tasks else None
    pool, task = pool_and_tasks(pb, P, gen) if pb.tasks is not None else (None, None)
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
    zeta = np.empty((block, D))           # the rows used: zeta[:n], n <= min(batch_size, P)
    for a, b in batches(P, batch_size):
        n = b - a
        if pool is None:
            w = gen.standard_normal((n, D)) if pb.task_covariance is None else pb.task_covariance.draw(gen, n)
        else:
            idx = task[a:b]
            w = pool[idx]
        if keep_tasks:
            tasks[a:b] = w if cov is None else cov._rotate_rows(w)
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
        yq[a:b] = labels(pb, np.einsum("pd,pd->p", wq, xb) / np.sqrt(D)) + sig * gen.standard_normal(n)
        if cov is not None and cov.basis is not None:
            s[a:b] = cov._rotate_rows(sb)
            xq[a:b] = cov._rotate_rows(xb)
    _check_drawn(pb, s, xq, yq, y2)      # the one check the drawn prompts need (the constructor's would repeat it)
    return Prompts._trusted(s, xq, yq, y2, pool, task), tasks


def _check_drawn(pb, s, xq, yq, y2):
    """Refuse, naming the problem (its link), prompts whose features or labels :class:`~linattn.Prompts` would
    refuse (non-finite, or beyond ``FEATURE_LIMIT``): the link, noise and covariance of ``pb`` made them, not an
    argument ``s``."""
    with np.errstate(over="ignore", invalid="ignore"):
        xmax = float(np.max(np.abs(xq)))
        size = max(float(np.max(np.abs(s))) * xmax, float(np.max(np.abs(yq))), float(np.max(y2)) * xmax)
    if not size <= FEATURE_LIMIT:
        where = "" if pb.covariance is None else f", covariance eigenvalues up to {pb.covariance.spectrum.max():.3g}"
        check.fail("pb", f"<link {pb.link.name}, noise {pb.noise!r}{where}: drawn features or labels up to "
                   f"{size:.3g}>", f"a problem whose link (scale), noise and covariance keep the features "
                   f"(s x_qᵀ, y2 x_q) and labels below {FEATURE_LIMIT:g} in magnitude")


def labels(pb, u):
    """Noise-free labels ``f(u)`` (``u`` itself for the default link, bit for bit)."""
    if pb.link.is_linear:
        return u if pb.link.slope == 1.0 else pb.link.slope * u
    return pb.link(u)
