r"""Theoretical laws of the rescaled Hessian spectrum ``H/c``: Stieltjes transform, density, CDF, atom.

``law="mp"`` is Marchenko–Pastur with ratio ``q = M/P`` (for the full model: MP with population
covariance ``diag(I_{D²}, (c_v/c) I_D)``); ``law="finite"`` is the finite-D random-scale law of
conventions §3.1, whose per-prompt scale ``ξ`` has the exact law of one prompt at the given
``(D, N, σ)`` (``spectra/_prompt_law.py``). Both are solved by the one fixed-point implementation of
``spectra/_resolvent.py``; the density is ``Im m(x + i0)/π`` on the physical branch.

Normalisation: densities are per parameter (all ``M`` eigenvalues), so the continuous part
integrates to ``1 − zero_atom`` (the convention of the seed's Figure 1). ``α = P/D²`` for both models.

References
----------
Marchenko & Pastur (1967); for tensor-product sample covariances Ambainis, Harrow & Hastings
(2012) and Collins, Yao & Yuan (2022); elliptical (random-scale) laws: El Karoui (2009),
Couillet & Liao, "Random Matrix Methods for Machine Learning" (2022), §2.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

import linattn
from linattn import _check as check
from linattn._arguments import array, boolean, choice, instance, integer, public, tolerance
from linattn._errors import ConvergenceError
from linattn._results import short_repr
from linattn._validate import PROBLEM

from ._prompt_law import LAWS, fresh_law
from ._resolvent import _block_resolvent, away_from_zero

#: relative resolution of ``Im m`` on the real axis: the fixed point is solved to a relative
#: residual of 1e-11, so an imaginary part below 1e-9 |m| is not resolved from zero (it is the
#: round-off of the real part, which near an atom's pole ``−atom/x`` is huge). Such points lie
#: outside the support and get density 0.
IM_RESOLUTION = 1e-9

#: smallest positive eigenvalue of ``H/c`` (mean 1) the fixed point resolves: below, the real-axis
#: limit is taken at ``Im z ≈ 1e-12``, which is not small against ``x``.
X_MIN = 1e-10

#: largest sample ratio ``α = P/D²`` at which :func:`density` evaluates the real-axis fixed point: its peaks, of
#: width ``~α^{-1/2}`` around the population spectrum, are then so sharp that Newton's method misses its 1e-11
#: residual (measured: from ``α = 1e10``, tanh link, ``law="mp"``, full model; ``1e11`` for the others), so the
#: accepted range stops a factor 100 below.
ALPHA_MAX = 1e8


#: the rules of the arguments every law takes (``alpha`` and ``model`` by the table of :mod:`linattn._arguments`)
LAW_ARGUMENTS = dict(pb=PROBLEM, law=choice(LAWS))
#: the rule of a tabulation grid: 10⁷ points are ~1 GiB of work arrays
N_GRID = integer(minimum=16, maximum=10**7)


def _continuous_density(x, P, lw):
    """``Im m(x + i0)/π`` at real ``x > 0``, zero where ``Im m`` is below the solver's resolution."""
    m = _block_resolvent(x.astype(complex), P, lw).m
    return np.where(m.imag > IM_RESOLUTION * np.abs(m), m.imag / np.pi, 0.0)


@public(pb=instance((type(None), linattn.Problem), "None or a linattn.Problem"))
def zero_atom(alpha, model="reduced", pb=None) -> float:
    """Mass of the exact zero eigenvalues, ``max(0, 1 − P/M)`` with ``P = α D²``.

    The full model (``M = D² + D``) needs ``pb`` for ``D``.

    Parameters
    ----------
    alpha : float
        ``P / D² > 0``.
    model : {"reduced", "full"}
    pb : linattn.Problem, optional
        Needed for the full model.

    Returns
    -------
    float
    """
    return _zero_atom(alpha, model, pb)


def _zero_atom(alpha, model, pb):
    """:func:`zero_atom` of checked arguments (``pb`` a Problem or ``None``)."""
    if model == "reduced":
        return max(0.0, 1.0 - alpha)
    if not isinstance(pb, linattn.Problem):
        raise ValueError(f"pb must be a linattn.Problem when model='full' (M = D² + D depends on D); got {pb!r}")
    D = pb.D
    return max(0.0, 1.0 - alpha * D * D / (D * D + D))


@public(derivative=boolean(), **LAW_ARGUMENTS)
def stieltjes(z, alpha, pb, law="finite", model="reduced", derivative=False):
    """Normalised Stieltjes transform ``m(z) = (1/M) E tr (H/c − z)^{-1}`` (atom included).

    Parameters
    ----------
    z : complex or array_like
        Real ``z`` means ``z + i0`` (physical branch); real ``z < 0`` is ``m(−λ')`` of ridge theory.
    alpha : float
        ``P / D²``.
    pb : linattn.Problem
    law : {"finite", "mp"}
    model : {"reduced", "full"}
    derivative : bool
        Also return ``dm/dz``.

    Returns
    -------
    m : ndarray complex (shape of ``z``)
    dm : ndarray complex, only with ``derivative=True``
    """
    P, lw = alpha * pb.D**2, fresh_law(pb, model, law)
    res = _block_resolvent(away_from_zero("z", z, P, lw), P, lw)       # z = 0 refused for P <= M (the atom's pole)
    return (res.m, res.dm) if derivative else res.m


@public(x=array(), **LAW_ARGUMENTS)
def density(x, alpha, pb, law="finite", model="reduced") -> np.ndarray:
    """Continuous part of the spectral density of ``H/c`` at real ``x`` (``Im m(x + i0)/π``).

    Zero for ``x < 0`` and outside the support (where ``Im m`` is below the solver's resolution,
    :data:`IM_RESOLUTION`); at ``x = 0`` it is ``inf`` exactly at ``P = M`` (where the density
    diverges like ``x^{-1/2}``) and 0 otherwise (the zero eigenvalues are the separate atom).

    Parameters
    ----------
    x : array_like
        Real points.
    alpha : float
        ``P / D²`` in ``(0, 1e8]`` (:data:`ALPHA_MAX`: beyond, the peaks are too sharp for the real-axis fixed point).
    pb : linattn.Problem
    law : {"finite", "mp"}
    model : {"reduced", "full"}

    Returns
    -------
    ndarray (shape of ``x``)
        Per-parameter density (it integrates to ``1 − zero_atom``).

    Raises
    ------
    ValueError
        Naming the argument out of its range.

    Examples
    --------
    >>> import numpy as np, linattn, spectra
    >>> pb = linattn.Problem(20, 20)
    >>> x = np.linspace(1e-3, 6.0, 4000)
    >>> rho = spectra.density(x, 2.0, pb)                 # α = P/D² = 2: no atom at zero
    >>> bool(abs(np.sum(rho) * (x[1] - x[0]) - 1.0) < 0.01)
    True
    """
    if alpha > ALPHA_MAX:
        check.fail("alpha", alpha, f"a real number in (0, {ALPHA_MAX!r}] (beyond, the density's peaks are too sharp "
                   "for the real-axis fixed point)")
    P, lw = alpha * pb.D**2, fresh_law(pb, model, law)
    xs = x
    out = np.zeros(xs.shape)
    pos = xs > 0
    tiny = pos & (xs < X_MIN)
    pos = pos & ~tiny
    if np.any(pos):
        out[pos] = _continuous_density(xs[pos], P, lw)
    if np.any(tiny):   # zero if X_MIN lies below the support; otherwise not resolvable
        if _continuous_density(np.array([X_MIN]), P, lw)[0] > 0:
            check.fail("x", float(xs[tiny].min()), f"0 or >= {X_MIN} here (alpha = {alpha} is so close to "
                       "P = M that the spectrum reaches below the resolution of the fixed point)")
        out[tiny] = 0.0
    if np.any(xs == 0) and abs(P - lw.M) <= 1e-9 * lw.M:
        out[xs == 0] = np.inf
    return out


@dataclass(frozen=True, eq=False)
class SpectralCDF:
    """Tabulated CDF of a law: ``grid`` (x values), ``cumulative`` (continuous mass up to x),
    ``atom``, and ``mass_error = |atom + continuous mass − 1|`` (the integration check).

    Attributes
    ----------
    grid : ndarray
        ``x`` values.
    cumulative : ndarray
        Continuous mass up to each ``x``.
    density : ndarray
        The density at each ``x``.
    atom : float
        The mass of the atom at zero.
    mass_error : float
        ``|atom + continuous mass − 1|``, the integration check.
    """

    __repr__ = short_repr

    grid: np.ndarray
    cumulative: np.ndarray
    density: np.ndarray
    atom: float
    mass_error: float

    @public(rel_tol=tolerance())
    def edges(self, rel_tol=1e-5):
        """Support of the continuous part: list of ``(lower, upper)`` intervals where the tabulated
        density exceeds ``rel_tol`` times its maximum, each end located to the grid spacing. (Inside
        gaps the fixed-point solution carries round-off of ~1e-7 of the maximum density, hence the
        default threshold; next to a square-root edge the density is ~1e-2 of its maximum one grid
        step inside the support.)

        Parameters
        ----------
        rel_tol : float
            Threshold relative to the maximum density.

        Returns
        -------
        list of (float, float)

        Raises
        ------
        ValueError
            ``rel_tol`` not a number in ``(0, 1)``.
        """
        return self._edges(rel_tol)

    def _edges(self, rel_tol=1e-5):
        """:meth:`edges` of a checked ``rel_tol``."""
        pos = self.density > rel_tol * np.max(self.density[np.isfinite(self.density)])
        change = np.flatnonzero(np.diff(pos.astype(int)))
        starts = list(change[pos[change + 1]] + 1) + ([0] if pos[0] else [])
        ends = list(change[pos[change]]) + ([pos.size - 1] if pos[-1] else [])
        return [(float(self.grid[max(a - 1, 0)]), float(self.grid[min(b + 1, pos.size - 1)]))
                for a, b in zip(sorted(starts), sorted(ends))]

    @public(x=array())
    def __call__(self, x):
        """The CDF at ``x`` (atom included).

        Parameters
        ----------
        x : array_like
            Finite real numbers.

        Returns
        -------
        ndarray (shape of ``x``)

        Raises
        ------
        ValueError
            ``x`` not an array of finite real numbers.
        """
        return self._cdf(x)

    def _cdf(self, x):
        """The CDF at a checked ``x`` (a float array)."""
        cont = np.interp(x, self.grid, self.cumulative, left=0.0, right=self.cumulative[-1])
        return np.where(x < 0, 0.0, self.atom + cont)


MASS_TOL = 2e-3
#: grid doublings tried before a mass loss is reported
MAX_REFINE = 3


def _integrate_on_sqrt_grid(x_max, n_grid, P, lw, at_threshold):
    """Density on ``x = u²`` (u uniform on [0, √x_max]) and its cumulative integral in ``u``:
    the ``x^{-1/2}`` divergence at ``P = M`` becomes bounded in ``u``; √-edges cost O(h^1.5)."""
    u = np.linspace(0.0, np.sqrt(x_max), n_grid)
    x = u * u
    rho = np.zeros(n_grid)
    rho[1:] = _continuous_density(x[1:], P, lw)
    g = rho * 2.0 * u
    if at_threshold:  # ρ(u²)·2u has a finite limit at u = 0: extrapolate
        g[0] = 2 * g[1] - g[2]
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (g[1:] + g[:-1]) * np.diff(u))])
    return x, cum, rho


def _require_resolved(rho, alpha, q, atom, n_grid):
    """Refuse a sample ratio whose continuous spectrum the tabulation grid does not see at all (its support, of width
    ``~4√q`` for ``q = M/P → 0``, or of mass ``P/M`` for ``q → ∞``, falls between grid points): the CDF would be the
    atom alone and the density 0/0, or the refinement would miss the whole mass."""
    if not np.any(rho > 0):
        check.fail("alpha", alpha, f"a sample ratio whose continuous spectrum the tabulation grid resolves (M/P = "
                   f"{q:.3g}: no grid point of {rho.size} falls inside its support, of mass {1 - atom:.3g}; "
                   f"n_grid = {n_grid})")


@functools.lru_cache(maxsize=64)
def _tabulate(alpha, pb, law, model, n_grid):
    P = alpha * pb.D**2
    lw = fresh_law(pb, model, law)
    q = lw.M / P
    at_threshold = abs(P - lw.M) <= 1e-9 * lw.M
    atom = _zero_atom(alpha, model, pb)
    if q > 1e200:       # the support lies at x ~ q, beyond the resolvent's float64 range (no grid resolves it anyway)
        check.fail("alpha", alpha, f"a sample ratio whose continuous spectrum the tabulation grid resolves (M/P = "
                   f"{q:.3g}: its support lies at x ~ M/P, of mass {1 - atom:.3g}, beyond the resolvent's float64 "
                   "range)")
    # stage 1: a coarse pass up to a bound beyond the largest eigenvalue the law allows
    x_max = 1.5 * float(np.max(lw.xi)) * (1.0 + np.sqrt(q)) ** 2 + 1.0
    x, cum, rho = _integrate_on_sqrt_grid(x_max, max(64, n_grid // 4), P, lw, at_threshold)
    _require_resolved(rho, alpha, q, atom, n_grid)
    # stage 2: the fine grid ends where the coarse pass has all but 1e-7 of the mass
    x_hi = x[min(len(x) - 1, np.searchsorted(cum, cum[-1] - 1e-7) + 1)]
    # stage 3: refine (double the grid, at most MAX_REFINE times) until the mass is accounted for;
    # small D (heavy-tailed prompt scales) needs it
    for _ in range(MAX_REFINE + 1):
        x, cum, rho = _integrate_on_sqrt_grid(1.05 * x_hi, n_grid, P, lw, at_threshold)
        err = abs(atom + cum[-1] - 1.0)
        if err <= MASS_TOL:
            break
        n_grid = 2 * n_grid - 1
    else:
        raise ConvergenceError(
            f"spectral CDF: the tabulated density holds mass {cum[-1]:.5f} + atom {atom:.5f}, off by {err:.2e} "
            f"> {MASS_TOL} (alpha={alpha}, law={law!r}, model={model!r}, x_max={x[-1]:.3g}) after refining to "
            f"{n_grid} grid points")
    _require_resolved(rho, alpha, q, atom, n_grid)
    # the law's total mass is exactly 1: the quadrature's error (<= MASS_TOL, reported as mass_error) is spread over
    # the continuous part, so that the CDF ends at exactly 1 and is a distribution function
    scale = (1.0 - atom) / cum[-1]
    cum, rho = cum * scale, rho * scale
    for a in (x, cum, rho):
        a.setflags(write=False)
    return SpectralCDF(grid=x, cumulative=cum, density=rho, atom=atom, mass_error=err)


@public(n_grid=N_GRID, **LAW_ARGUMENTS)
def spectral_cdf(alpha, pb, law="finite", model="reduced", n_grid: int = 3001) -> SpectralCDF:
    """Tabulate the CDF of ``H/c`` (cached).

    Parameters
    ----------
    alpha : float
        ``P / D² > 0``.
    pb : linattn.Problem
    law : {"finite", "mp"}
    model : {"reduced", "full"}
    n_grid : int
        Initial grid points (doubled up to three times until the mass is accounted for).

    Returns
    -------
    SpectralCDF

    Raises
    ------
    linattn.ConvergenceError
        If more than ``2e-3`` of the mass is still missing after refining.
    """
    return _tabulate(alpha, pb, law, model, n_grid)


@public(n_grid=N_GRID, **LAW_ARGUMENTS)
def support_edges(alpha, pb, law="finite", model="reduced", n_grid: int = 3001):
    """Edges of the continuous spectrum, ``[(lower, upper), …]`` (one interval per connected
    component, e.g. the ``v``-block cluster of the full model), to the resolution of the
    tabulation grid. For the reduced MP law they are ``(1 ± √q)²`` (:func:`spectra.mp.edges`).

    Parameters
    ----------
    alpha : float
    pb : linattn.Problem
    law : {"finite", "mp"}
    model : {"reduced", "full"}
    n_grid : int

    Returns
    -------
    list of (float, float)
    """
    return _tabulate(alpha, pb, law, model, n_grid)._edges()


@public(x=array(), n_grid=N_GRID, **LAW_ARGUMENTS)
def cdf(x, alpha, pb, law="finite", model="reduced", n_grid: int = 3001) -> np.ndarray:
    """Cumulative distribution of the eigenvalues of ``H/c`` at ``x`` (atom included).

    The density is integrated on a grid uniform in ``√x`` (``n_grid`` points up to beyond the
    largest eigenvalue the law allows); the total mass is checked to ``2e-3``.

    Parameters
    ----------
    x : array_like
    alpha : float
        ``P / D² > 0``.
    pb : linattn.Problem
    law : {"finite", "mp"}
    model : {"reduced", "full"}
    n_grid : int
        Initial tabulation grid (refined automatically, :func:`spectral_cdf`).

    Returns
    -------
    ndarray (shape of ``x``)
    """
    return _tabulate(alpha, pb, law, model, n_grid)._cdf(x)


@public(eigenvalues=array(ndim=1), zero_tol=tolerance(), **LAW_ARGUMENTS)
def kolmogorov_distance(eigenvalues, alpha, pb, law="finite", model="reduced", zero_tol=1e-9) -> float:
    """Kolmogorov distance between the nonzero eigenvalues and the law's continuous part.

    Both are normalised to the nonzero part: ``F_law(x) = (cdf(x) − atom)/(1 − atom)``;
    eigenvalues ``<= zero_tol · max`` count as the exact zeros.

    Parameters
    ----------
    eigenvalues : array_like (n,)
        Eigenvalues of ``H/c`` (zeros included or not).
    alpha : float
    pb : linattn.Problem
    law : {"finite", "mp"}
    model : {"reduced", "full"}
    zero_tol : float
        Relative threshold in ``(0, 1)``.

    Returns
    -------
    float
    """
    ev = np.sort(eigenvalues)
    if ev.size == 0 or ev[-1] <= 0:
        check.fail("eigenvalues", "<no positive eigenvalue>", "an array with at least one positive eigenvalue")
    nz = ev[ev > zero_tol * ev[-1]]
    tab = _tabulate(alpha, pb, law, model, 3001)
    F = (tab._cdf(nz) - tab.atom) / (1.0 - tab.atom)
    n = nz.size
    emp_hi = np.arange(1, n + 1) / n
    emp_lo = np.arange(0, n) / n
    return float(max(np.max(np.abs(emp_hi - F)), np.max(np.abs(F - emp_lo))))
