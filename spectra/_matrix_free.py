r"""Matrix-free estimate of the Hessian spectrum: stochastic Lanczos quadrature (SLQ).

The Hessian is applied without forming any ``M × M`` (or ``P × M``) matrix: for
``θ = [vec(Θ), v]``, ``h_μ·θ = s_μᵀ Θ x_{q,μ} + y2_μ v·x_{q,μ}`` and

.. math:: H θ = \frac1P Σ_μ (h_μ·θ) h_μ = \Big[\tfrac1P Sᵀ \operatorname{diag}(a) X_q,\;
          \tfrac1P X_qᵀ (a ∘ y2)\Big],\qquad a_μ = h_μ·θ,

two matrix products of cost ``O(P D²)``. Lanczos with full re-orthogonalisation run ``k``
steps from a random unit vector ``u`` gives the Gauss quadrature of the spectral measure
``Σ_j (u·e_j)² δ(x − λ_j)``: nodes = eigenvalues of the tridiagonal matrix, weights = squared
first components of its eigenvectors. Averaging over probes estimates the eigenvalue
distribution (Ubaru, Chen & Saad, SIAM J. Matrix Anal. Appl. 38, 1075 (2017); Lin, Saad &
Yang, SIAM Review 58, 34 (2016)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from tqdm import tqdm

from linattn import _check as check
from linattn import _validate as validate
from linattn._arguments import array, boolean, integer, positive, public, tolerance
from linattn._check import PROGRESS_DELAY
from linattn._results import short_repr
from linattn._validate import PROMPTS


@public(data=PROMPTS)
def hessian_matvec(data, theta, model="reduced") -> np.ndarray:
    """``H θ`` in ``O(P D²)`` without forming features (module docstring).

    Parameters
    ----------
    data : linattn.Prompts
    theta : array_like (M,)
    model : {"reduced", "full"}

    Returns
    -------
    ndarray (M,)
    """
    data.require(model)
    D = data.D
    return _hessian_matvec(data, check.finite_array("theta", theta, shape=(D * D + (D if model == "full" else 0),)),
                           model)


def _hessian_matvec(data, theta, model):
    """:func:`hessian_matvec` of checked arguments (a float array ``theta`` of length ``M``)."""
    D, P = data.D, data.P
    Theta = theta[: D * D].reshape(D, D)
    a = np.einsum("pd,pd->p", data.s @ Theta, data.xq)
    if model == "full":
        v = theta[D * D:]
        a = a + data.y2 * (data.xq @ v)
    out = np.empty_like(theta)
    out[: D * D] = (data.s.T @ (a[:, None] * data.xq)).ravel() / P
    if model == "full":
        out[D * D:] = data.xq.T @ (a * data.y2) / P
    return out


@dataclass(frozen=True, eq=False)
class SpectralEstimate:
    """Quadrature estimate of the eigenvalue distribution: ``nodes`` and ``weights`` (sum 1).

    ``cdf(x)`` is the step-function estimate; ``density(x, width)`` a Gaussian-broadened one.

    Attributes
    ----------
    nodes, weights : ndarray
        Quadrature nodes (eigenvalue estimates) and their weights (sum 1).
    n_probes : int
        Random probe vectors averaged.
    steps : int
        Lanczos steps per probe.
    matvecs : int
        Hessian-vector products spent.
    """

    __repr__ = short_repr

    nodes: np.ndarray
    weights: np.ndarray
    n_probes: int
    steps: int
    matvecs: int

    def __post_init__(self):
        nodes = check.finite_array("nodes", self.nodes, ndim=1)
        weights = check.finite_array("weights", self.weights, shape=nodes.shape)
        if nodes.size == 0 or np.any(weights < 0) or abs(weights.sum() - 1.0) > 1e-9:
            check.fail("weights", f"<{weights.size} weights summing to {weights.sum()!r}>",
                       "non-negative weights summing to 1, one per node")
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "weights", weights)
        for name in ("n_probes", "steps", "matvecs"):
            object.__setattr__(self, name, check.positive_int(name, getattr(self, name)))

    @public(zero_tol=tolerance())
    def atom(self, zero_tol=1e-8):
        """Estimated mass at zero: the weight of nodes below ``zero_tol · max(nodes)``.

        Parameters
        ----------
        zero_tol : float
            Relative threshold in ``(0, 1)``.

        Returns
        -------
        float
        """
        return float(self.weights[self.nodes <= zero_tol * self.nodes.max()].sum())

    @public(x=array(), nonzero=boolean(), zero_tol=tolerance())
    def cdf(self, x, nonzero=False, zero_tol=1e-8):
        """Step-function CDF; ``nonzero=True`` drops the zero atom and renormalises.

        Parameters
        ----------
        x : array_like
        nonzero : bool
        zero_tol : float
            Relative threshold in ``(0, 1)`` below which a node counts as zero.

        Returns
        -------
        ndarray (shape of ``x``)
        """
        return self._cdf(x, nonzero, zero_tol)

    def _cdf(self, x, nonzero, zero_tol):
        """:meth:`cdf` of checked arguments."""
        nodes, weights = self.nodes, self.weights
        if nonzero:
            keep = nodes > zero_tol * nodes.max()
            nodes, weights = nodes[keep], weights[keep] / weights[keep].sum()
        order = np.argsort(nodes)
        cum = np.cumsum(weights[order])
        idx = np.searchsorted(nodes[order], x, side="right")
        return np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0.0)

    @public(x=array(), width=positive())
    def density(self, x, width):
        """Gaussian-broadened density ``Σ_j w_j N(x; node_j, width²)``.

        Parameters
        ----------
        x : array_like
        width : float
            Broadening ``> 0``.

        Returns
        -------
        ndarray (shape of ``x``)
        """
        x = x[..., None]
        g = np.exp(-0.5 * ((x - self.nodes) / width) ** 2) / (np.sqrt(2 * np.pi) * width)
        return g @ self.weights


def kolmogorov_distance(estimate: SpectralEstimate, eigenvalues, zero_tol=1e-8) -> float:
    """Kolmogorov distance between the nonzero parts of an SLQ estimate and exact eigenvalues.

    Parameters
    ----------
    estimate : SpectralEstimate
    eigenvalues : array_like (n,)
        With at least one nonzero eigenvalue.
    zero_tol : float
        Relative threshold in ``(0, 1)`` below which an eigenvalue or node counts as zero.

    Returns
    -------
    float
    """
    if not isinstance(estimate, SpectralEstimate):
        raise ValueError(f"estimate must be a spectra.SpectralEstimate; got {type(estimate).__name__}")
    zero_tol = check.tolerance("zero_tol", zero_tol)
    ev = np.sort(check.finite_array("eigenvalues", eigenvalues, ndim=1))
    if ev.size == 0 or ev[-1] <= 0:
        check.fail("eigenvalues", "<no positive eigenvalue>", "an array with at least one positive eigenvalue")
    ev = ev[ev > zero_tol * ev[-1]]
    pts = np.concatenate([ev, estimate.nodes])
    exact_hi = np.searchsorted(ev, pts, side="right") / ev.size
    exact_lo = np.searchsorted(ev, pts, side="left") / ev.size
    est = estimate._cdf(pts, True, zero_tol)
    est_lo = estimate._cdf(pts - 1e-12 * np.abs(pts).max(), True, zero_tol)
    return float(max(np.max(np.abs(est - exact_hi)), np.max(np.abs(est_lo - exact_lo))))


def _apply(matvec, v):
    """``matvec(v)`` as a finite real vector of ``v``'s length; anything else (an exception of the callable, another
    shape, complex or non-finite values) is a ``ValueError`` naming ``matvec``."""
    accepted = f"a callable v ↦ A v returning a finite real vector of length {v.size}"
    try:
        raw = np.asarray(matvec(v))
    except Exception as err:
        raise ValueError(f"matvec must be {accepted}; it raised {type(err).__name__}: {err}") from err
    if raw.dtype.kind not in "biuf" or raw.shape != v.shape or not np.all(np.isfinite(raw)):
        what = (f"dtype {raw.dtype}" if raw.dtype.kind not in "biuf" else f"shape {raw.shape}" if raw.shape != v.shape
                else f"{int(np.size(raw) - np.count_nonzero(np.isfinite(raw)))} non-finite entries")
        check.fail("matvec", f"<callable returning an array with {what}>", accepted)
    return raw.astype(float)


def lanczos_quadrature(matvec, M, steps, rng) -> tuple[np.ndarray, np.ndarray]:
    """Gauss quadrature (nodes, weights) of the spectral measure of one random unit probe.

    Parameters
    ----------
    matvec : callable
        ``v ↦ A v`` for a symmetric ``M × M`` operator ``A``.
    M : int
        Dimension.
    steps : int
        Lanczos steps, ``1 <= steps <= M``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    nodes, weights : ndarray
    """
    if not callable(matvec):
        raise ValueError(f"matvec must be callable; got {type(matvec).__name__}")
    M = check.positive_int("M", M)
    steps = check.positive_int("steps", steps, maximum=M)
    rng = check.rng(rng)
    check.memory(8.0 * steps * M, f"{steps} Lanczos vectors of length {M}", "steps")
    return _lanczos(lambda v: _apply(matvec, v), M, steps, rng)


def _lanczos(matvec, M, steps, rng):
    """:func:`lanczos_quadrature` of checked arguments (``matvec`` returns finite real vectors of length ``M``,
    ``1 <= steps <= M``, ``rng`` a Generator)."""
    V = np.empty((steps, M))
    alpha = np.zeros(steps)
    beta = np.zeros(steps)
    u = rng.standard_normal(M)
    V[0] = u / np.linalg.norm(u)
    k = steps
    for j in range(steps):
        w = matvec(V[j])
        alpha[j] = V[j] @ w
        w -= V[: j + 1].T @ (V[: j + 1] @ w)  # full re-orthogonalisation (twice is enough)
        w -= V[: j + 1].T @ (V[: j + 1] @ w)
        b = np.linalg.norm(w)
        if j + 1 == steps:
            break
        if b <= 1e-12 * max(1.0, abs(alpha[j])):  # invariant subspace found: quadrature is exact
            k = j + 1
            break
        beta[j] = b
        V[j + 1] = w / b
    nodes, vecs = sla.eigh_tridiagonal(alpha[:k], beta[: k - 1])
    return nodes, vecs[0] ** 2


@public(steps=integer(minimum=2), n_probes=integer(), rescale=boolean())
def slq_spectrum(data, pb, steps=80, n_probes=4, rescale=True, model="reduced", rng=None,
                 progress=True) -> SpectralEstimate:
    """Stochastic Lanczos quadrature estimate of the spectrum of ``H`` (or ``H/c``).

    Cost: ``n_probes × steps`` Hessian-vector products, each ``O(P M)`` (``M`` parameters), linear in the probes;
    measured at ``D = N = 200`` (``M = 4·10⁴``), ``P = 400``, default settings (4 probes of 80 steps): 81 s on a
    shared 2-core machine under a load average of about 9 (about 20 s a probe).

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    steps : int
        Lanczos steps per probe (quadrature nodes per probe).
    n_probes : int
        Independent random unit probes averaged.
    rescale : bool
        Divide by ``c``.
    model : {"reduced", "full"}
    rng : None, int or Generator
    progress : bool
        Show a progress bar (over the probes) when the call lasts more than two seconds.

    Returns
    -------
    SpectralEstimate
    """
    validate.problem_data(data, pb, model)
    M = pb.n_params(model)
    k = min(steps, M)
    check.memory(16.0 * n_probes * k + 8.0 * (k + 4) * M, f"{n_probes} probes x {k} Lanczos nodes", "n_probes")
    check.work(n_probes * k * (4.0 * data.P * M + k * M + check.PYTHON_TRIP), f"{n_probes} probes x {k} Lanczos steps",
               "n_probes or steps")
    scale = 1.0 / pb.feature_variance if rescale else 1.0
    nodes, weights = [], []
    for _ in tqdm(range(n_probes), desc=f"slq spectrum, M = {M}", disable=not progress, leave=False,
                  delay=PROGRESS_DELAY):
        n, w = _lanczos(lambda t: scale * _hessian_matvec(data, t, model), M, min(steps, M), rng)
        nodes.append(n)
        weights.append(w / n_probes)
    return SpectralEstimate(nodes=np.concatenate(nodes), weights=np.concatenate(weights), n_probes=n_probes,
                            steps=steps, matvecs=n_probes * min(steps, M))
