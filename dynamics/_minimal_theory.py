r"""The 1-point saddle of the two-parameter minimal model and the linear escape from it (Gibson, Cui & Reddy 2026,
arXiv:2604.12151; ``docs/markov_minimal.md``).

On the line ``β = 0`` the loss of :mod:`dynamics._minimal_loss` is constant; the root ``δ_s`` of ``∂_β L(0, δ)`` is a
saddle of the gradient flow (:mod:`dynamics._minimal_flow`), left along its unstable direction at the rate ``λ₊``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from linattn import _check as check
from linattn._arguments import array, positive, public, real
from linattn._errors import ConvergenceError
from linattn._results import python_scalars, short_repr

from ._minimal_loss import COMMON, evaluate, resolve_method
from ._minimal_sequences import sequence_patterns


@dataclass(frozen=True)
class MarkovMinimalTheory:
    r"""The saddle on the 1-point line and the linear escape from it (:func:`markov_minimal_theory`).

    Attributes
    ----------
    loss_1point : float
        ``L(0, δ)`` (any ``δ``): uniform attention, the in-context unigram estimator.
    delta_saddle : float
        ``δ_s``: the root of ``∂_β L(0, δ) = 0``; ``(0, δ_s)`` is the only fixed point on the line ``β = 0``.
    c_score_scale, c_score_scale_delta : float
        ``−∂_β L`` and ``−∂²_{βδ} L`` at the origin (the first-order expansion around the unigram solution).
    hessian : ndarray (2, 2)
        ``H`` at the saddle (``H_δδ = 0`` exactly: at ``β = 0`` the loss does not depend on ``δ``).
    rate : float
        ``λ₊ = γ(−H_ββ + √(H_ββ² + 4 H_βδ²))/2``: the growth rate of the unstable direction.
    rate_stable : float
        ``λ₋ = γ(−H_ββ − √(H_ββ² + 4 H_βδ²))/2 < 0``.
    unstable : ndarray (2,)
        Unit eigenvector ``v₊`` in ``(β, δ)``, with ``v₊[1] > 0``.
    gamma : float
    C, N, concentration, first_state, variant, method : as given
    delta_saddle_se, rate_se : float
        Monte Carlo standard errors (0 when exact): ``s.e.(∂_β L)/|H_βδ|`` at ``δ_s``, and the first-order
        propagation of the s.e. of ``H_ββ, H_βδ`` into ``λ₊`` at the estimated ``δ_s`` (the spread of ``δ_s``
        itself is not propagated into ``rate_se``).
    """

    __repr__ = short_repr

    loss_1point: float
    delta_saddle: float
    c_score_scale: float
    c_score_scale_delta: float
    hessian: np.ndarray
    rate: float
    rate_stable: float
    unstable: np.ndarray
    gamma: float
    C: int
    N: int
    concentration: float
    first_state: str
    variant: str
    method: str
    delta_saddle_se: float
    rate_se: float

    def __post_init__(self):
        python_scalars(self)

    @public(score_scale0=real(), delta0=real(), radius=positive())
    def escape_time(self, score_scale0, delta0, radius=0.5):
        r"""Time for the linearised flow ``ẏ = −γ H y``, ``y = (β, δ − δ_s)``, to reach ``|y_δ| = r``.

        Exact for the linear dynamics (closed form ``y(t) = Σ_± v_± (w_±·y_0) e^{λ_± t}``, the time by root
        finding); the true flow differs by the cubic terms, a relative ``O(r)`` correction to the
        time spent near ``|y_δ| ≈ r``. Far from the saddle ``t ≈ (1/λ₊) log(r/|v₊δ (w₊·y₀)|)``.

        Parameters
        ----------
        score_scale0, delta0 : float
        radius : float

        Returns
        -------
        float
            ``inf`` if the unstable amplitude ``w₊·y₀`` is 0.
        """
        lam, vec = np.linalg.eigh(-self.gamma * self.hessian)    # symmetric: orthonormal eigenvectors
        y0 = np.array([score_scale0, delta0 - self.delta_saddle])
        amp = vec.T @ y0

        def y_delta(t):
            return float(vec[1] @ (amp * np.exp(lam * t)))
        if abs(y_delta(0.0)) >= radius:
            return 0.0
        if amp[1] * vec[1, 1] == 0.0:
            return math.inf
        hi = 1.0 / lam[1]
        while abs(y_delta(hi)) < radius:
            hi *= 2.0
            if hi > 1e12 / lam[1]:
                return math.inf
        return float(brentq(lambda t: abs(y_delta(t)) - radius, 0.0, hi, xtol=1e-12 * hi, rtol=1e-14))


@public(bracket=array(shape=(2,)), **COMMON)
def markov_minimal_theory(C, N, concentration, first_state="onestep", variant="released", method="auto", gamma=1.0,
                          n_mc=200_000, rng=None, eps=1e-10, bracket=(-6.0, 6.0)):
    r"""The 1-point saddle of the minimal model and the rate of escape from it (``docs/markov_minimal.md``).

    On the line ``β = 0`` (uniform attention: the in-context unigram, "1-point" predictor) the loss is the
    constant ``L_1``, ``∂_δ L = 0`` and ``∂²_δ L = 0``, and ``∂_β L(0, δ) = −E[⟨a(δ)⟩_A − ⟨a(δ)⟩]``
    (mean over the keys carrying the target minus the mean over all keys). Its root ``δ_s`` is the only
    fixed point of the flow on the line, a saddle with Hessian ``[[H_ββ, H_βδ], [H_βδ, 0]]`` (determinant
    ``−H_βδ² < 0``): the flow leaves it along ``v₊`` at the rate
    ``λ₊ = γ(−H_ββ + √(H_ββ² + 4H_βδ²))/2``, to the 2-point basin (``δ`` up) or away from it (``δ`` down).
    Every derivative is exact (analytic, on the enumeration), or Monte Carlo with standard errors.

    Parameters
    ----------
    C, N, concentration, first_state, variant, method, gamma, n_mc, rng, eps
        As in :func:`markov_minimal_flow`.
    bracket : (float, float)
        Interval of ``δ`` scanned (41 points) for the sign change of ``∂_β L(0, δ)``: two increasing real numbers
        whose difference is finite in float64.

    Returns
    -------
    MarkovMinimalTheory

    Raises
    ------
    linattn.ConvergenceError
        If ``∂_β L(0, δ)`` does not change sign on ``bracket``, or the root in the interval of the sign change is
        not found to ``1e-13`` (a ``bracket`` too wide).
    """
    br = bracket
    if not (br[0] < br[1] and math.isfinite(float(br[1]) - float(br[0]))):
        check.fail("bracket", br.tolist(), "two increasing real numbers whose difference is finite in float64")
    method = resolve_method(C, N, first_state, method, n_mc)
    pat = sequence_patterns(C, N, concentration, first_state, method, n_mc, rng)

    def slope(d):
        return evaluate(0.0, d, pat, variant, eps, order=1)["grad"][0]
    grid = np.linspace(br[0], br[1], 41)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.array([slope(d) for d in grid])
    check.finite_result(vals, {"bracket": br}, "∂L/∂β(0, δ) on the bracket")
    change = np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) <= 0)[0]
    if change.size == 0:
        raise ConvergenceError(f"markov_minimal_theory: ∂L/∂β(0, δ) has no sign change for δ in ({br[0]:g}, {br[1]:g}) "
                               f"(values {vals[0]:.3g} … {vals[-1]:.3g}); widen bracket")
    k = int(change[np.argmin(np.abs(grid[change]))])
    d_s = grid[k]
    if vals[k] != 0:
        # Brent halves the interval at least every other step: enough iterations for any width of the grid step
        span = grid[k + 1] - grid[k]
        maxiter = 100 + 4 * max(0, math.ceil(math.log2(span) - math.log2(1e-13)))
        d_s, info = brentq(slope, grid[k], grid[k + 1], xtol=1e-13, rtol=1e-13, maxiter=maxiter, full_output=True,
                           disp=False)
        if not info.converged:
            raise ConvergenceError(f"markov_minimal_theory: the root of ∂L/∂β(0, δ) in ({grid[k]:g}, {grid[k + 1]:g}) "
                                   f"was not found in {maxiter} iterations ({info.flag}); narrow bracket")
    at_s = evaluate(0.0, d_s, pat, variant, eps)
    at_0 = evaluate(0.0, 0.0, pat, variant, eps)
    H = at_s["hessian"].copy()
    H[1, 1] = 0.0          # exactly 0 at β = 0 (the kernel's value is 0 up to rounding)
    h, c = H[0, 0], H[0, 1]
    root = math.sqrt(h * h + 4 * c * c)
    lam_p = gamma * (-h + root) / 2
    lam_m = gamma * (-h - root) / 2
    v = np.array([c, -(h + lam_p / gamma)]) if c != 0 else np.array([0.0, 1.0])
    v = v / np.linalg.norm(v)
    v = v if v[1] > 0 else -v
    # Monte Carlo errors: δ_s from s.e.(∂_β L)/|∂²_βδ L|; λ₊ from the s.e. of H_ββ and H_βδ
    se_slope = at_s["grad_se"][0]
    d_se = float(se_slope / abs(c)) if c != 0 else math.inf
    dl_dh = gamma * (-1 + h / root) / 2
    dl_dc = gamma * 2 * c / root
    rate_se = math.hypot(dl_dh * at_s["hessian_se"][0, 0], dl_dc * at_s["hessian_se"][0, 1])
    return MarkovMinimalTheory(loss_1point=at_s["loss"], delta_saddle=d_s, c_score_scale=-at_0["grad"][0],
                               c_score_scale_delta=-at_0["hessian"][0, 1], hessian=H, rate=lam_p, rate_stable=lam_m,
                               unstable=v, gamma=gamma, C=C, N=N, concentration=concentration, first_state=first_state,
                               variant=variant, method=method, delta_saddle_se=d_se, rate_se=rate_se)
