r"""The ridge law of the reduced linear attention: the mean and covariance over datasets of the ridge ``Γ̂`` on any
link's labels, from the random-scale theory of the kernel learner with the linear map ``φ(x) = x``
(:mod:`replica._kernel_theory`); the trained ``Γ`` of the feature learner's theory (:mod:`replica._feature_theory`).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn import _links as links
from linattn._kernel_errors import fresh_blocks
from linattn._numerics import quadrature
from linattn._results import short_repr

from ._kernel_solver import matrix_finite, solve_fresh
from ._kernel_types import block_dims, contexts_memory, fresh_types, label_moments, pool_types, query_scales
from ._learner_common import learner_arguments


@functools.lru_cache(maxsize=64)
def centred_link(link, mean):
    """The link ``f − mean`` (cached, so that equal arguments give one :class:`linattn.links.Link` and the caches keyed
    on it hit).

    Parameters
    ----------
    link : linattn.links.Link
    mean : float

    Returns
    -------
    linattn.links.Link
    """
    if not isinstance(link, links.Link):
        check.fail("link", link, "a linattn.links.Link")
    mean = check.real("mean", mean)
    if mean == 0.0:
        return link
    return links.Link(f"custom:{link.name}-centred{mean!r}", lambda z: link(z) - mean)


def _checked_centre(link, centre):
    """``centre`` if the centred link ``f − centre`` keeps its values within :data:`linattn.links.LINK_SCALE` (the
    bounds every link's values must meet: its moments use the fourth power), else a ``ValueError`` naming centre
    (a float)."""
    z = quadrature.gauss_panels(links.ORDERS[0])[0]
    z = z[np.abs(z) < 8]
    with np.errstate(all="ignore"):
        F = np.asarray(link(z), dtype=float)
    if not np.all(np.isfinite(F)):
        return centre                   # the link itself is refused with its own message
    top = float(np.max(np.abs(F - centre)))
    low, high = links.LINK_SCALE
    if top != 0.0 and not low <= top <= high:
        check.fail("centre", centre, f"a real number with max |f(z) − centre| on |z| < 8 between {low:g} and {high:g} "
                   f"(the centred labels' moments use (f − centre)⁴; max |f(z)| = {float(np.max(np.abs(F))):.3g})")
    return centre


_TYPES_CACHE: dict = {}


def _linear_types(pb, pool, n, rng):
    """The sampled contexts of :func:`ridge_law` (linear map), cached (a fixed point in ``λ`` reuses them): fresh
    :func:`fresh_types` or the pool's :func:`pool_types`."""
    key = (pb, None if pool is None else (pool.shape, pool.tobytes()), n, rng)
    if key not in _TYPES_CACHE:
        if len(_TYPES_CACHE) >= 16:
            _TYPES_CACHE.pop(next(iter(_TYPES_CACHE)))
        if pool is None:
            _TYPES_CACHE[key] = fresh_types(pb, n, np.random.default_rng([rng, pb.D, 3]), "linear", 1)
        else:
            _TYPES_CACHE[key] = pool_types(pb, pool, n, np.random.default_rng([rng, pb.D, 4]), "linear")
    return _TYPES_CACHE[key]


@dataclass(frozen=True, eq=False)
class RidgeLaw:
    """Mean and covariance of the ridge ``Γ̂`` of the reduced linear attention over datasets (:func:`ridge_law`).

    Attributes
    ----------
    mean : ndarray (D, D)
        ``Γ̄ = E Γ̂``.
    cov : ndarray (D, D)
        ``C`` with ``Cov(vec Γ̂) = C ⊗ I_D`` (row-major ``vec``: ``Cov(Γ̂_ij, Γ̂_kl) = C_ik δ_jl``).
    fit : float
        ``E_t[ω_t² e_t]``: twice the training mean-squared residual (without the weight decay).
    norm2 : float
        ``E‖Γ̂‖_F² = ‖Γ̄‖² + D tr C``.
    iterations : int
    residual : float
    resolvent : ndarray (D, D)
        ``A = (λ + E_t[ω_t s sᵀ])^{-1}`` (fresh tasks: ``a I``): a training prompt's leverage is ``h = |x_q|² sᵀAs/P``
        and its in-sample residual ``ω = 1/(1 + h)`` times its leave-one-out residual
        (:mod:`replica._kernel_theory`).
    """

    __repr__ = short_repr

    mean: np.ndarray
    cov: np.ndarray
    fit: float
    norm2: float
    iterations: int
    residual: float
    resolvent: np.ndarray


def ridge_law(pb, P, lam, pool=None, centre=0.0, n_contexts=None, rng=0) -> RidgeLaw:
    r"""The random-scale theory (:mod:`replica._kernel_theory`) with the linear map ``φ(x) = x``: the mean and
    covariance of the ridge ``Γ̂`` of ``(1/2P) Σ_μ (y_μ − c − s_μᵀΓx_μ)² + (λ/2)‖Γ‖_F²`` (the reduced linear attention
    on ``pb``'s prompts, any link), the query labels centred by ``c`` (``centre``) and the contexts
    ``s = (1/N) Σ_i y_i x_i`` built from the raw labels.

    With ``φ(x) = x`` there is one block: for fresh tasks ``Γ̄ = γ I`` and ``Cov(vec Γ̂) = c I ⊗ I`` from the scalar
    equations (:func:`replica._kernel_solver.solve_fresh`); for a pool ``Γ̄`` and ``C`` are ``D × D`` matrices
    (``Cov(vec Γ̂) = C ⊗ I_D``) from the matrix equations on the pool's tasks. With a linear link this is the
    finite-``D`` theory of ``replica/_pool_finite.py`` (measured equal within its sampling error).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs, ``D >= 2``; ``pb.tasks`` is ignored (``pool`` decides).
    P : float
        Prompts (``>= 1``).
    lam : float
        Weight decay ``λ >= 1e-20`` (:data:`replica._learner_common.LAM_MIN`).
    pool : None or array_like (K, D)
        ``None``: fresh tasks; else the tasks of the pool (each context draws them in turn).
    centre : float
        ``c``: subtracted from the query labels (the readout's intercept); the centred labels ``f − c`` must stay
        within the magnitudes of a link (:data:`linattn.links.LINK_SCALE` on ``|z| < 8``).
    n_contexts : None or int
        Sampled contexts (default ``2**16`` fresh, ``2**12`` with a pool).
    rng : int
        Seed of the sampled contexts.

    Returns
    -------
    RidgeLaw

    Raises
    ------
    ValueError
        Bad input.
    linattn.ConvergenceError
        A fixed point or the covariance equation was not solved.
    """
    pb, P, lam = learner_arguments(pb, P, lam)
    centre = check.real("centre", centre)
    rng = check.seed_int("rng", rng)
    if pool is not None:
        pool = check.finite_array("pool", pool, shape=(None, pb.D))
    n = check.positive_int("n_contexts", n_contexts or (2**16 if pool is None else 2**12), minimum=64, maximum=2**22)
    return _ridge_law(pb, P, lam, pool, centre, n, rng)


def _ridge_law(pb, P, lam, pool, centre, n, rng):
    """:func:`ridge_law` of checked arguments (``n`` contexts), with its refusals of a centre that takes the labels
    beyond a link's range and of contexts beyond the memory limit."""
    centre = _checked_centre(pb.link, centre)
    D = pb.D
    label_pb = dataclasses.replace(pb, link=centred_link(pb.link, centre), tasks=None)
    context_pb = dataclasses.replace(pb, tasks=None)
    if pool is None:
        contexts_memory(D, n, "linear")
        types = _linear_types(context_pb, None, n, rng)
        d = block_dims(D, "linear")
        R, wR, rho = query_scales(D, "linear")
        mco, Ey2 = label_moments(label_pb, types["r"], R, "linear")
        ft = fresh_blocks(label_pb, "linear")
        metric = tuple(np.array(x)[:1] for x in (ft.S, ft.B)) + (ft.V,)
        node = types["node"]
        out = solve_fresh(types["sig"], types["p"], node, mco, Ey2, types["weight"], rho, wR, d, metric, P, lam)
        mean, cov = float(out["gamma"][0]) * np.eye(D), float(out["C"][0, 0]) * np.eye(D)
        resolvent = float(out["a"][0, 0]) * np.eye(D)
    else:
        contexts_memory(D, n, "linear")
        s, task = _linear_types(context_pb, pool, n, rng)
        out = matrix_finite(label_pb, P, lam, "linear", s, pool, task, [])
        mean, cov, resolvent = out["G"], out["C"][0], out["A"][0]
    return RidgeLaw(mean=mean, cov=cov, fit=float(out["fit"]), norm2=float(out["norm2"]),
                    iterations=int(out["iterations"]), residual=float(out["residual"]), resolvent=resolvent)
