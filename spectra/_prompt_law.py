r"""Quadrature for the law of one prompt's scalar invariants (the finite-D random-scale law).

At finite ``D, N, σ`` the squared feature norm fluctuates strongly between prompts
(conventions §3.1): with ``h = √(c ξ) u`` (``u`` isotropic) the Hessian spectrum follows the
random-scale (elliptical) law whose only input is the law of ``ξ``. The stationary and dynamical
theories additionally need, per value of ``ξ``, the label moments ``E[f² | ξ]``, ``E[f y | ξ]``,
``E[y² | ξ]`` (``f`` = projection of the rescaled feature on the ICL direction, ``y`` = label):
these carry the correlation between a prompt's scale and its effective noise.

Construction (exact up to a measured quadrature error)
------------------------------------------------------
1. The invariants are an exact function of eight independent primitive variables
   (``linattn/_invariants.py``). A scrambled Sobol design of ``2^m`` points (default ``m = 17``)
   is pushed through the inverse CDFs: a randomised quasi-Monte-Carlo sample of the exact law.
2. The points are sorted by ``ξ1`` (and, for the full model, by ``ξ2`` inside each ``ξ1`` bin) and
   grouped into equal-mass bins; each bin becomes one node carrying the bin means of ``ξ``,
   ``f²``, ``f y`` and ``y²``. Within-bin variation enters only at second order.
3. Five exact moments are imposed by a multiplicative correction of order 1e-5:
   ``E ξ1 = 1``, ``E ξ2 = c_v/c``, ``E f² = 1``, ``E f y = t = b/√(D c)``, ``E y² = V`` (``b = 1``,
   ``V = 1 + σ²`` for the default link).

Accuracy (measured in ``tests/spectra/test_laws.py`` and ``tests/replica``): changing the
scrambling seed or halving the node count changes the CDF by < 2e-3, the density by < 2e-3 of
its maximum above the lowest 5% of the nonzero spectrum, and the stationary errors by < 1e-3
relative. For P < M the lowest ~2% of the nonzero spectrum is set by the small-``ξ`` tail of
the law, which 2^17 points resolve less well: there the density moves by up to ~2% of its
maximum (measured at D = 10, N = 20, α = 0.5); for P > M the whole density is stable to 2e-4.

Laws offered
------------
``law="finite"``  the construction above (``channel="correlated"``, the default, keeps the label
                  moments per node; ``channel="decoupled"`` replaces them by the isotropic
                  model ``y = t f + e`` with ``e`` independent of ``ξ``: ``E[f²|ξ] = ξ``,
                  ``E[f y|ξ] = t ξ``, ``E[y²|ξ] = t² ξ + s²`` — the assumption of conventions §3.2);
``law="mp"``      one node at ``ξ = E ξ`` (Marchenko–Pastur; for the full model, MP with a
                  two-valued population covariance ``diag(1, c_v/c)``) with decoupled labels.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from scipy.stats import qmc

import linattn
from linattn import _check as check
from linattn import _invariants as invariants
from linattn._arguments import choice, integer, positive, public, seed
from linattn._results import short_repr
from linattn._validate import PROBLEM

LAWS = ("finite", "mp")
MAX_SOBOL_DIM = 21201
CHANNELS = ("correlated", "decoupled")


@dataclass(frozen=True, eq=False)
class PromptLaw:
    """Discrete law of a prompt's invariants: nodes ``k`` with weights ``w_k`` (summing to 1).

    Attributes
    ----------
    problem : linattn.Problem
    model : {"reduced", "full"}
    law : {"finite", "mp"}
    channel : {"correlated", "decoupled"}
    weights : ndarray (K,)
    xi : ndarray (K, B)
        Block scales in ``H/c`` units (``B = 1`` reduced, ``B = 2`` full; column 2 has mean ``c_v/c``).
    f2, fy, y2 : ndarray (K,)
        Conditional label moments ``E[f²|node]``, ``E[f y|node]``, ``E[y²|node]``.
    block_dims : tuple
        Dimensions of the parameter blocks: ``(D²,)`` or ``(D², D)``.
    n_points : int
        Quasi-Monte-Carlo points behind the nodes (0 for ``law="mp"``).
    moment_errors : dict
        Relative error of the raw quasi-Monte-Carlo estimates of the five imposed moments before
        the correction of step 3 (empty for ``law="mp"``): the measured quadrature error.
    """

    __repr__ = short_repr

    problem: linattn.Problem
    model: str
    law: str
    channel: str
    weights: np.ndarray
    xi: np.ndarray
    f2: np.ndarray
    fy: np.ndarray
    y2: np.ndarray
    block_dims: tuple
    n_points: int
    moment_errors: dict
    v_weight: float = 1.0

    @property
    def M(self) -> int:
        """Number of parameters ``Σ_i D_i``."""
        return int(sum(self.block_dims))

    @property
    def n_blocks(self) -> int:
        """Number of parameter blocks (1 reduced, 2 full)."""
        return len(self.block_dims)

    @property
    def metric(self) -> np.ndarray:
        """Test-error weights of the blocks in ``H/c`` units, ``κ = (1, c_v/c)`` (reduced: ``(1,)``)."""
        return np.array([1.0, self.v_weight * self.problem.feature_variance_v
                         / self.problem.feature_variance])[: self.n_blocks]

    @public
    def with_block_decay(self, lam) -> "PromptLaw":
        """The law of the problem whose ``v`` block is rescaled so that a per-block weight decay ``(λ_Γ, λ_v)``
        becomes the common ``λ_Γ``: ``v' = v √(λ_v/λ_Γ)`` turns ``λ_v|v|²`` into ``λ_Γ|v'|²``, multiplies the
        ``v`` features' scale ``ξ_v`` and the test-error weight ``c_v`` by ``λ_Γ/λ_v`` (exact: the Gibbs measure,
        the ridge solution and both errors are the same functions of the rescaled parameters).

        Parameters
        ----------
        lam : (float, float)
            The per-block decay ``(λ_Γ, λ_v)`` (conventions §7), both ``> 0``, with a ratio ``λ_Γ/λ_v`` that keeps
            the rescaled ``ξ_v`` and ``c_v`` finite and nonzero.

        Returns
        -------
        PromptLaw

        Raises
        ------
        ValueError
            A decay ``<= 0``, or a ratio ``λ_Γ/λ_v`` under which ``ξ_v`` or ``c_v`` over- or underflows
            (``lam`` is named).
        """
        if self.n_blocks < 2:
            check.fail("model", self.model, "'full' for a per-block weight decay")
        if check.asarray("lam", lam, "a pair (lam_Gamma, lam_v) of numbers > 0").shape != (2,):
            check.fail("lam", lam, "a pair (lam_Gamma, lam_v) of numbers > 0")
        return self._with_block_decay(check.positive("lam[0]", lam[0]), check.positive("lam[1]", lam[1]))

    def _with_block_decay(self, lam_gamma, lam_v):
        """:meth:`with_block_decay` of a checked pair (two floats ``> 0``), with its refusal of a ratio that
        over- or underflows."""
        with np.errstate(over="ignore", under="ignore"):
            s = float(np.float64(lam_gamma) / lam_v)
            scaled = np.concatenate([self.xi[:, 1] * s, np.atleast_1d(self.v_weight * s)])
            given = np.concatenate([self.xi[:, 1], np.atleast_1d(self.v_weight)])
        if not (np.all(np.isfinite(scaled)) and np.all((scaled != 0) | (given == 0))):
            check.fail("lam", (lam_gamma, lam_v),
                       "a pair (lam_Gamma, lam_v) whose ratio keeps the rescaled v block (its scales ξ_v and "
                       "weight c_v times lam_Gamma / lam_v) finite and nonzero in float64")
        xi = self.xi.copy()
        xi[:, 1] *= s
        return dataclasses.replace(self, xi=xi, v_weight=self.v_weight * s)

    @public(P=positive())
    def ratios(self, P) -> np.ndarray:
        """Aspect ratios ``q_i = D_i / P`` per block (the ``q = 1/α`` of Marchenko–Pastur).

        Parameters
        ----------
        P : float
            Number of prompts ``> 0``.

        Returns
        -------
        ndarray (B,)
        """
        return self._ratios(P)

    def _ratios(self, P):
        """:meth:`ratios` of a checked ``P``."""
        return np.asarray(self.block_dims, dtype=float) / P


def _bin_means(order, arrays, sizes):
    """Means of ``arrays`` over consecutive groups (of the given ``sizes``) of ``order``;
    returns the means and the group weights."""
    idx = np.concatenate([[0], np.cumsum(sizes)])
    n = idx[-1]
    out = [np.add.reduceat(a[order[:n]], idx[:-1]) / sizes for a in arrays]
    return out, sizes / n


#: Sobol points per chunk when the design is wide (nonlinear links: 6 + N or 6 + 2N dimensions)
CHUNK = 1 << 12


def _design_invariants(pb, log2_points, seed):
    """The invariants of a scrambled Sobol design of ``2^log2_points`` points (chunked when wide)."""
    dim = invariants.n_primitives(pb)
    engine = qmc.Sobol(dim, scramble=True, seed=seed)
    if dim == invariants.N_PRIMITIVES:
        chunks = [engine.random_base2(log2_points)]
    else:
        n = 2**log2_points
        chunks = (engine.random(min(CHUNK, n)) for _ in range(max(1, n // CHUNK)))
    parts = [invariants.from_uniforms(pb, np.clip(u, 2.0**-60, 1 - 2.0**-53))  # open interval for the inverse CDFs
             for u in chunks]
    return invariants.Invariants(*(np.concatenate([getattr(p, k) for p in parts]) for k in ("xi1", "xi2", "f", "y")))


@functools.lru_cache(maxsize=64)
def _finite_nodes(pb, model, n_nodes, log2_points, seed):
    inv = _design_invariants(pb, log2_points, seed)
    npts = inv.xi1.size
    f2, fy, y2 = inv.f**2, inv.f * inv.y, inv.y**2
    if model == "reduced":
        order = np.argsort(inv.xi1, kind="stable")
        (xi1, F2, FY, Y2), w = _bin_means(order, [inv.xi1, f2, fy, y2], np.full(n_nodes, npts // n_nodes))
        xi = xi1[:, None]
    else:
        n1 = n_nodes // 8 if n_nodes >= 64 else max(1, n_nodes // 2)  # ξ1 bins, 8 ξ2 bins in each
        n2 = n_nodes // n1
        order1 = np.argsort(inv.xi1, kind="stable")
        per = npts // n1
        order = np.concatenate([
            order1[j * per:(j + 1) * per][np.argsort(inv.xi2[order1[j * per:(j + 1) * per]], kind="stable")]
            for j in range(n1)])
        (xi1, xi2, F2, FY, Y2), w = _bin_means(order, [inv.xi1, inv.xi2, f2, fy, y2],
                                               np.full(n1 * n2, npts // (n1 * n2)))
        xi = np.stack([xi1, xi2], axis=1)
    # exact first moments (multiplicative corrections of the quadrature's O(1e-5) error)
    c = pb.feature_variance
    exact_xi = np.array([1.0, pb.feature_variance_v / c])[: xi.shape[1]]
    exact = {"xi1": 1.0, "f2": 1.0, "fy": np.sqrt(pb.teacher_norm2), "y2": pb.label_variance}
    raw = {"xi1": w @ xi[:, 0], "f2": w @ F2, "fy": w @ FY, "y2": w @ Y2}
    if xi.shape[1] == 2:
        exact["xi2"], raw["xi2"] = exact_xi[1], w @ xi[:, 1]
    errors = {k: float(raw[k] / exact[k] - 1.0) if exact[k] != 0 else float(raw[k]) for k in exact}
    xi = xi / (w @ xi) * exact_xi
    F2 = F2 / raw["f2"]
    FY = FY / raw["fy"] * exact["fy"] if exact["fy"] != 0 else FY - raw["fy"]   # b = 0: a link with μ₁ = 0
    Y2 = Y2 / raw["y2"] * exact["y2"]
    return w, xi, F2, FY, Y2, npts, errors


@public(pb=PROBLEM, law=choice(LAWS), channel=choice(CHANNELS), n_nodes=integer(), log2_points=integer(maximum=40),
        rng=seed())
def prompt_law(pb, model="reduced", law="finite", channel="correlated",
               n_nodes: int = 1024, log2_points: int = 17, rng: int = 0) -> PromptLaw:
    """The discrete law of one prompt's invariants (module docstring for the construction).

    Parameters
    ----------
    pb : linattn.Problem
    model : {"reduced", "full"}
    law : {"finite", "mp"}
    channel : {"correlated", "decoupled"}
        Only for ``law="finite"``; ``"mp"`` is always decoupled.
    n_nodes : int
        Number of quadrature nodes (equal-mass bins).
    log2_points : int
        ``log2`` of the number of quasi-Monte-Carlo points (at least ``n_nodes``).
    rng : int
        Scrambling seed of the Sobol design.

    Returns
    -------
    PromptLaw
        Cached: equal arguments return the same object.
    """
    check.memory(8.0 * 30 * 2**log2_points, f"the quasi-Monte-Carlo design of 2^{log2_points} points", "log2_points")
    if 2**log2_points < n_nodes:
        raise ValueError(f"log2_points must give at least n_nodes={n_nodes} points; got {log2_points}")
    return fresh_law(pb, model, law, channel, n_nodes, log2_points, rng)


def fresh_law(pb, model, law, channel="correlated", n_nodes=1024, log2_points=17, seed=0):
    """:func:`prompt_law` of checked arguments (the default quadrature unless given), with its refusals of a
    problem it has no law for: a task pool, or a design wider than Sobol's (the problem is the user's, reaching here
    from every theory built on the law)."""
    if pb.tasks is not None:
        raise ValueError(f"pb.tasks must be None: the random-scale law is the law of fresh-task prompts; got tasks="
                         f"{pb.tasks} (the theory of task pools is replica._stationary, replica._asymptotic)")
    if invariants.n_primitives(pb) > MAX_SOBOL_DIM:
        raise ValueError(f"pb.N must be at most {(MAX_SOBOL_DIM - 6) // (2 if pb.noise > 0 else 1)} "
                         "for law='finite' with "
                         f"the nonlinear link {pb.link.name} (the design has 6 + N (+ N) dimensions, Sobol "
                         f"allows {MAX_SOBOL_DIM}); got N = {pb.N}")
    return _cached_law(pb, model, law, channel, n_nodes, log2_points, seed)


@functools.lru_cache(maxsize=128)
def _cached_law(pb, model, law, channel, n_nodes, log2_points, seed):
    D = pb.D
    dims = (D * D,) if model == "reduced" else (D * D, D)
    t2, s2 = pb.teacher_norm2, pb.icl_residual
    if law == "mp":
        xi = np.array([[1.0, pb.feature_variance_v / pb.feature_variance][: len(dims)]])
        w = np.ones(1)
        F2, FY, Y2 = np.ones(1), np.full(1, np.sqrt(t2)), np.full(1, t2 + s2)
        npts = 0
        channel = "decoupled"
        errors = {}
    else:
        w, xi, F2, FY, Y2, npts, errors = _finite_nodes(pb, model, n_nodes, log2_points, seed)
        if channel == "decoupled":
            x1 = xi[:, 0]
            F2, FY, Y2 = x1.copy(), np.sqrt(t2) * x1, t2 * x1 + s2
    for a in (w, xi, F2, FY, Y2):
        a.setflags(write=False)
    return PromptLaw(problem=pb, model=model, law=law, channel=channel, weights=w, xi=xi,
                     f2=F2, fy=FY, y2=Y2, block_dims=dims, n_points=npts, moment_errors=errors)
