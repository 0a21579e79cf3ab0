r"""Dataset-averaged learning curves from the spectral theory (conventions §3.3, extended).

From ``θ_0 = 0``, gradient flow in rescaled time ``τ = γ c t`` gives (``H/c`` units)
``θ(τ) = φ_τ(H/c) b`` with the filter ``φ_τ(x) = (1 − e^{−(x+λ')τ})/(x + λ')``. Hence, exactly,

.. math::
   E_t(τ) = ½ [Ȳ² − ⟨b, φ_{2τ}(H/c) b⟩],\qquad
   E_g(τ) = ½ [1 + σ² − 2t ⟨θ̂_0, φ_τ b⟩ + ⟨φ_τ b, K φ_τ b⟩],

(``2φ_τ − (x+λ')φ_τ² = φ_{2τ}``; ``K = diag(1, c_v/c)`` weights the ``v`` block of the test error).
The averages of these spectral functionals follow from the theory of the data vector at complex
spectral parameter (``spectra/_resolvent.py``): ``ρ(z)``, ``T(z)`` and the two-system block
overlaps ``S_i(z_1, z_2)``. To use them, ``φ_τ`` is written as a sum of simple poles: a
contour quadrature of the Laplace inversion ``e^{−y} = (1/2πi)∫_Γ e^{s} ds/(s + y)`` on the
parabola ``s(u) = μ(1 + iu)²`` (31 nodes, ``μ = 4.54``, ``h = 0.18``) gives
``e^{−y} ≈ Σ_k w_k/(s_k + y)`` with a uniform error below ``1e-14`` on ``y ∈ [0, ∞)`` (tested),
and then ``φ_τ(x) = Σ_j c_j/(x + a_j)`` with ``a_0 = λ'``, ``c_0 = 1 − Σ_k w_k/s_k`` and
``a_k = λ' + s_k/τ``, ``c_k = w_k/s_k``. Every average is then a finite sum of the theory's
transforms at the complex points ``z = −a_j``, off the real axis: no density is integrated, the
atom and the spectral edges need no special treatment, and the curve is as accurate as the
theory itself.

A Gaussian initialisation ``θ_0 ~ N(0, σ_0² I)`` adds ``(c σ_0²/2) Σ_i κ_i D_i r̄_i`` terms with
``∫ e^{−2(x+λ')τ} dρ_i`` (per-block spectral measures) to the mean errors.

Test prompts of another context length ``N_test`` (the model trained at ``N``): the filters and ``E_t`` are
unchanged; the test metric of each block is multiplied by ``c(N_test)/c(N)`` (``Γ``) and ``c_v(N_test)/c_v(N)``
(``v``), in the norm ``⟨φ_τ b, K φ_τ b⟩`` (teacher part included) and in the initial-spread term; the overlap
``b tr Γ/D`` does not depend on the context length.

Structured tasks (``Problem(task_covariance=S)``) are refused. The mean trajectory would follow from the structured
theory at complex decays (``Θ̄(τ) = Σ_j c_j Θ̄(a_j)``), but the errors are quadratic in ``θ(τ)`` and need the
covariance of two ridge solutions at two decays ``a_j ≠ a_k`` of one dataset (the two-system overlaps
``S_i(z_1, z_2)`` of the isotropic theory); the type equations of :mod:`replica._pool_finite` give the covariance at
one real decay only. The exact per-dataset flow (:func:`dynamics.gradient_flow`) knows ``S``.

The band (``n_datasets > 0``): the spread of one dataset's curve over datasets and initialisations, estimated from
that many sampled datasets, each solved exactly (:func:`averaged_curves`, Notes).

``law="mp"`` uses Marchenko–Pastur with decoupled labels (conventions §3.2/§3.3 baseline);
``law="finite"`` the finite-D prompt law with the scale–label correlations (``channel="decoupled"``
drops them: the second baseline).

Very short times: for ``0 < τ < 10^{-10}`` the poles ``s_k/τ`` approach overflow, and the curve is
the chord between ``τ = 0`` (exact) and ``τ = 10^{-10}``; its error, ``O(τ · 10^{-10} E'')`` plus
the contour's uniform ``10^{-14}``, is below ``10^{-13}`` absolute.

Very long times: for ``τ > 10^{15}`` the curve is evaluated at ``τ = 10^{15}`` (``TAU_MAX``): the poles ``λ' + s_k/τ``
would otherwise approach the zero atom's pole at 0 closer than the resolvent resolves (``spectra.resolvent.Z_MIN``).
The curve has then reached its long-time limit: the rest decays like ``e^{−2 x₋ τ}`` with ``x₋`` the lower edge of the
continuous spectrum, below ``e^{−100}`` unless ``x₋ < 5·10^{-14}`` (``P`` within ~``10^{-6}`` relative of ``M``; at
``P = M`` the resolvent fails near 0 with a ``ConvergenceError``). Likewise a weight decay with ``λ' = λ/c`` below
``Z_MIN`` drops the pole ``a_0 = λ'`` as at ``λ = 0`` (its weight ``c_0`` is the contour's quadrature error, and the
data vector has no component on the zero atom).

Huge weight decay: for ``λ' > 10^{300}`` (``LAM_LIMIT``) the curves at ``τ > 0`` are their ``λ' → ∞`` limit,
``E_t = ½ Ȳ²`` and ``E_g = E_g(θ = 0)``, with no initial-spread term: ``φ_τ <= 1/λ'`` and ``e^{−2λ'τ}``
(``τ >= 10^{-10}``) change them by less than ``10^{-280}`` relative, while the poles ``−a_j`` would approach
float64's top, where the resolvent is not resolved.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from linattn import _check as check
from linattn._arguments import Rule, array, choice, nonnegative, optional, public, real, seed
from linattn._check import PROGRESS_DELAY
from linattn._results import ToXarray, short_repr
from linattn._threads import blas_threads
from linattn._validate import PROBLEM
from spectra._prompt_law import CHANNELS, LAWS, fresh_law
from spectra._resolvent import Z_MIN, _block_overlaps, _cmatmul, _data_transforms

from ._band import dataset_band

# parabolic contour for e^{-y} (tuned for a uniform error < 1e-14 on [0, inf); tests/dynamics)
CONTOUR_NODES = 31
CONTOUR_MU = 4.54
CONTOUR_H = 0.18
#: rescaled time below which the curve is the chord from τ = 0 (module docstring)
TAU_CHORD = 1e-10
#: rescaled time beyond which the curve is its value at TAU_MAX, the long-time limit (module docstring)
TAU_MAX = 1e15
#: ``λ'`` beyond which the curves at ``τ > 0`` are their infinite-decay limit (module docstring)
LAM_LIMIT = 1e300


def exp_contour(n=CONTOUR_NODES, mu=CONTOUR_MU, h=CONTOUR_H):
    """Nodes ``s_k`` and weights ``w_k`` with ``e^{−y} ≈ Σ_k w_k/(s_k + y)`` for ``y >= 0``.

    Parameters
    ----------
    n : int
        Number of nodes (odd).
    mu, h : float
        Parabola scale and step (``> 0``).

    Returns
    -------
    s, w : ndarray (n,) complex
    """
    n = check.positive_int("n", n)
    mu, h = check.positive("mu", mu), check.positive("h", h)
    if n % 2 == 0:
        check.fail("n", n, "an odd integer")
    return _exp_contour(n, mu, h)


@functools.lru_cache(maxsize=4)
def _exp_contour(n, mu, h):
    K = (n - 1) // 2
    u = h * np.arange(-K, K + 1)
    s = mu * (1 + 1j * u) ** 2
    w = h * np.exp(s) * (2j * mu * (1 + 1j * u)) / (2j * np.pi)
    return s, w


def filter_poles(rescaled_time, lam):
    """``(c_j, a_j)`` with ``φ_τ(x) = Σ_j c_j/(x + a_j)`` (module docstring).

    Parameters
    ----------
    rescaled_time : float
        Rescaled time ``τ > 0``.
    lam : float
        ``λ' >= 0``.

    Returns
    -------
    c, a : ndarray complex
    """
    return _filter_poles(check.positive("rescaled_time", rescaled_time), check.nonnegative("lam", lam))


def _filter_poles(rescaled_time, lam):
    """:func:`filter_poles` of checked arguments."""
    s, w = _exp_contour(CONTOUR_NODES, CONTOUR_MU, CONTOUR_H)
    a = np.concatenate([[lam + 0j], lam + s / rescaled_time])
    c = np.concatenate([[1.0 - np.sum(w / s)], w / s])
    if lam < Z_MIN:  # the pole at x = −λ' ≈ 0 carries only the quadrature error (|c_0| < 1e-14): drop it
        a, c = a[1:], c[1:]
    return c, a


@dataclass(frozen=True, eq=False)
class AveragedCurves(ToXarray, xarray_dim="times", xarray_coords=("P", "lam")):
    """Dataset-averaged learning curves (theory), and their band when datasets were sampled for it. ``times`` in units
    of ``t`` (not ``τ``).

    Attributes
    ----------
    times : ndarray
        Times ``t``.
    train, test : ndarray
        Dataset-averaged ``E_t(t)`` and ``E_g(t)`` (means over initialisations too, for a random one).
    P, lam : float
        Prompts and weight decay.
    law, model : str
        Prompt law and model.
    N_test : int or None
        Context length of the test prompts (``None``: the training length).
    train_sd, test_sd : ndarray or None
        The band: the standard deviation of one dataset's curve over datasets and initialisations, estimated from
        ``n_datasets`` exact per-dataset flows (:func:`averaged_curves`, Notes; ``None`` when ``n_datasets = 0``).
    train_sd_se, test_sd_se : ndarray or None
        The standard error of ``train_sd``, ``test_sd`` (their sampling error: about ``sd/√(2 n_datasets)``, more
        for heavy-tailed curves).
    train_sd_init, test_sd_init : ndarray or None
        The part of the band from the initialisations: the root mean square over the datasets of the s.d. over
        ``θ_0`` (zero for ``θ_0 = 0``); the part from the datasets is ``√(sd² − sd_init²)``.
    n_datasets : int
        The datasets behind the band (0: no band).
    """

    __repr__ = short_repr

    times: np.ndarray
    train: np.ndarray
    test: np.ndarray
    P: float
    lam: float
    law: str
    model: str
    N_test: int | None = None
    train_sd: np.ndarray | None = None
    test_sd: np.ndarray | None = None
    train_sd_se: np.ndarray | None = None
    test_sd_se: np.ndarray | None = None
    train_sd_init: np.ndarray | None = None
    test_sd_init: np.ndarray | None = None
    n_datasets: int = 0


def _datasets(name, value):
    n = check.positive_int(name, value, minimum=0, maximum=MAX_DATASETS)
    if n == 1:
        check.fail(name, value, f"0 (no band) or an integer >= 2 and <= {MAX_DATASETS} (a spread needs two datasets)")
    return n


#: the most datasets a band may sample
MAX_DATASETS = 10**6
#: the rule of ``n_datasets``
DATASETS = Rule(f"0 (no band) or an integer >= 2 and <= {MAX_DATASETS}", _datasets)
#: distinct rescaled times whose poles are solved in one parallel call (memory: about 2 × CHUNK × 32 points × the law's
#: nodes complex numbers, 16 MiB at 1024 nodes)
CHUNK = 16
#: operations one sampled dataset of the band counts for its Python-level work (sampling, the eigensystem, the flow)
TRIP_OPS = 10 * check.PYTHON_TRIP


@public(pb=PROBLEM, P=real(low=1.0), lam=nonnegative(), times=array(min_ndim=1), init=optional(nonnegative()),
        law=choice(LAWS), channel=choice(CHANNELS), n_datasets=DATASETS, rng=seed())
def averaged_curves(pb, P, lam, times, gamma=1.0, init=None, law="finite", channel="correlated",
                    model="reduced", N_test=None, n_datasets=0, rng=0, progress=True) -> AveragedCurves:
    """Theory of the dataset-averaged gradient-flow curves (module docstring), and their band over datasets and
    initialisations.

    Parameters
    ----------
    pb : linattn.Problem
    P : float
        Number of prompts, a real number ``P >= 1`` (the theory is continuous in ``P``; an integer when
        ``n_datasets > 0``).
    lam : float
        Weight decay ``λ >= 0``.
    times : array_like
        Times ``t >= 0`` of the flow ``dθ/dt = −γ ∇E_t``.
    gamma : float
    init : None or float
        ``None`` (``θ_0 = 0``) or the s.d. ``σ_0`` of a Gaussian initialisation (mean errors; the band then includes
        the spread over initialisations).
    law : {"finite", "mp"}
    channel : {"correlated", "decoupled"}
        With ``law="finite"``: keep (default) or drop the scale–label correlations (the baseline
        of conventions §3.3).
    model : {"reduced", "full"}
    N_test : int, optional
        Context length of the test prompts (``>= 1``; default ``None``: the training length ``N``): ``test`` is
        the error at ``N_test`` of the model trained at ``N`` (module docstring).
    n_datasets : int
        Datasets sampled for the band (0, the default: the means only; else ``>= 2``; Notes). It does not depend
        on ``law`` or ``channel``.
    rng : int
        Dataset ``i`` of the band is ``pb.sample(P, rng=(rng, P, i))``.
    progress : bool
        Show a progress bar (over the times and the datasets) when the call lasts more than two seconds.

    Returns
    -------
    AveragedCurves
        ``N_test`` records the test prompts' context length (``None``: ``N``); ``train_sd``, ``test_sd`` (and their
        standard errors and initialisation parts) the band, ``None`` without one.

    Notes
    -----
    The band. The curve of one dataset varies with the dataset and, from a random start, with ``θ_0``. Each of the
    ``n = n_datasets`` sampled datasets is solved exactly (:func:`dynamics.gradient_flow`: its mean ``m_i(t)`` and
    variance ``v_i(t)`` over ``θ_0`` in closed form), and by the law of total variance the variance of one
    dataset's curve is ``V = Var_i m_i + E_i v_i``, estimated without bias by ``s²(m) + mean(v)``; ``train_sd``,
    ``test_sd`` are its square roots. Their standard errors come from the same datasets by the delta method
    (``V̂ = mean(u)``, ``u_i = n/(n − 1)(m_i − m̄)² + v_i``, ``se(sd) = s(u)/(2 sd √n)``: the fourth moment of the
    curves is in it; about ``sd/√(2n)`` for Gaussian curves). The band is a sampled estimate, not an asymptotic
    theory of the fluctuations; it is drawn around the theory's mean. Checked against the spread of 200 other
    datasets' exact curves in ``tests/dynamics/test_averaged.py`` (within 4 standard errors; the band of the
    initialisations alone and of the datasets alone are both rejected).

    Cost. Each distinct rescaled time ``τ`` needs the law's block resolvent at the 32 poles of the flow filters
    ``φ_τ`` and ``φ_{2τ}`` (numba, in parallel over the poles, :data:`CHUNK` times at once; a random start adds no
    solve, its terms use the poles of ``φ_{2τ}``), and the test error the two-system overlaps at the poles of
    ``φ_τ`` (complex ``32 × K × 32`` products, ``K = 1024`` nodes: 10 for the full model, 4 for the reduced). A
    time grid that holds ``2t`` with every ``t`` (e.g. ``t_{j+1} = 2 t_j``) shares the poles of ``2τ`` with
    another time: one solve per time instead of two. Measured: 131 geometric times from ``θ_0 = 0``, full model,
    ``D = 10``, ``N = 50``, ``P = 30``, 6.8 s on a 2-core machine under a load average of 10 (about 50 ms a time);
    the law of ``pb`` (built once per problem and model, then cached) about 2 s. ``law="mp"`` has one node: a few
    ms a time. The band adds one sampled dataset's eigensystem (``O(min(P, M)³)``) and flow per dataset, a few ms
    each at ``D = 10``. Calls beyond :func:`linattn._check.work`'s limit are refused.

    Threads: the BLAS threads are decided once for the whole call (:mod:`linattn.threads`), by its largest BLAS
    call — for the theory a ``32 × K × 32`` complex product, one thread at the default law — so that the BLAS
    threads do not take the cores from the numba loop over the poles that runs between the products.
    """
    if pb.task_covariance is not None:
        check.fail("pb", pb, "a Problem with isotropic tasks (task_covariance=None): the dataset-averaged flow of "
                   "structured tasks needs covariances of ridge solutions at two complex decays, which the "
                   "structured-task theory does not provide (module docstring); per dataset, exactly: "
                   "dynamics.gradient_flow")
    sigma0 = 0.0 if init is None else init
    t = times
    if t.ndim != 1 or t.size == 0 or np.any(t < 0):
        check.fail("times", f"<array with shape {t.shape}{f', minimum {t.min()!r}' if t.size else ''}>",
                   "a non-empty 1-d array of times >= 0")
    # each time point solves the law's resolvent (a few ms): 10⁸ points would be days
    check.work(1e7 * t.size, f"the curves at {t.size} times (a resolvent solve each)", "times")
    if n_datasets:
        if P != np.round(P) or P > check.MAX_INT:
            check.fail("P", P, f"an integer >= 1 and <= {check.MAX_INT} when n_datasets > 0 (the band samples "
                       "datasets of P prompts)")
        M, n_prompts = pb.n_params(model), int(P)
        check.work(float(n_datasets) * (min(n_prompts, M) ** 3 + n_prompts * M * pb.D + t.size * M * M + TRIP_OPS),
                   f"the band of {n_datasets} datasets (an eigensystem and a flow each)", "n_datasets or P")
        check.memory(8.0 * 6 * n_datasets * t.size, f"the band of {n_datasets} datasets at {t.size} times",
                     "n_datasets or times")
    lw = fresh_law(pb, model, law, channel)
    c = pb.feature_variance
    ratio = None if N_test in (None, pb.N) else pb.test_metric_ratio(N_test)[:lw.n_blocks]    # None: untouched
    with np.errstate(over="ignore"):
        lp = float(check.finite_result(np.float64(lam) / c, {"lam": lam}, "λ/c (the weight decay in H/c units)"))
        rescaled = np.minimum(gamma * c * t, TAU_MAX)      # beyond TAU_MAX: the long-time limit (module docstring)
    bar = tqdm(total=t.size + n_datasets, desc=f"averaged curves {model}, P = {P:g}", disable=not progress,
               leave=False, delay=PROGRESS_DELAY)
    try:
        # one decision for the call (docstring, Threads): its largest BLAS call, a node sum of the overlaps
        with blas_threads(8.0 * (CONTOUR_NODES + 1) ** 2 * lw.weights.size):
            train, test = _theory(pb, P, lam, lp, rescaled, sigma0, lw, ratio, bar)
        band = {}
        if n_datasets:
            band = dataset_band(pb, int(P), lam, t, gamma, sigma0, model, N_test, n_datasets, rng, bar)
    finally:
        bar.close()
    return AveragedCurves(times=t, train=train, test=test, P=P, lam=lam, law=law, model=model, N_test=N_test,
                          n_datasets=n_datasets, **band)


@dataclass(frozen=True, eq=False)
class _Poles:
    """The poles ``(c_j, a_j)`` of ``φ_τ`` and the data transforms at ``z = −a_j`` (``ρ``, ``T``, the block
    resolvent ``r`` and the node weights ``ω``)."""

    c: np.ndarray
    a: np.ndarray
    rho: np.ndarray
    T: np.ndarray
    r: np.ndarray
    omega: np.ndarray


class _PoleSets:
    """The poles of the filters of several rescaled times, solved together and kept while needed."""

    def __init__(self, P, lp, lw):
        self.P, self.lp, self.lw, self.sets = P, lp, lw, {}

    def solve(self, taus):
        """Solve every ``τ`` of ``taus`` not held yet, all in one call of the resolvent (parallel over the poles)."""
        new = [tau for tau in taus if tau not in self.sets]
        if not new:
            return
        poles = [_filter_poles(tau, self.lp) for tau in new]
        tr = _data_transforms(np.concatenate([-a for _, a in poles]), self.P, self.lw)
        res, start = tr.resolvent, 0
        for tau, (cj, aj) in zip(new, poles):
            at = slice(start, start + aj.size)
            start += aj.size
            self.sets[tau] = _Poles(c=cj, a=aj, rho=tr.rho[at], T=tr.T[at], r=res.r[at], omega=res.omega[at])

    def drop_below(self, tau):
        """Forget the poles of the times below ``τ``."""
        for key in [k for k in self.sets if k < tau]:
            del self.sets[key]


def _theory(pb, P, lam, lp, rescaled, sigma0, lw, ratio, bar):
    """``(train, test)`` at the rescaled times ``rescaled`` (``0 <= τ <= TAU_MAX``): each distinct ``τ`` once, the
    poles of ``τ`` and ``2τ`` solved :data:`CHUNK` times at a time (shared where ``2τ`` is another time of the grid);
    below ``TAU_CHORD`` the chord from ``τ = 0`` (module docstring)."""
    c = pb.feature_variance
    chord = (rescaled > 0.0) & (rescaled < TAU_CHORD)
    evaluated = np.where(chord, TAU_CHORD, rescaled)
    distinct, counts = np.unique(evaluated, return_counts=True)
    limit = 0.5 * pb.label_variance, pb.test_error_from_moments(0.0, 0.0)

    def with_spread(tau, tr, te, poles2):
        if sigma0 > 0:
            init_tr, init_te = _init_terms(tau, lp, lw, ratio, poles2)
            with np.errstate(over="ignore", invalid="ignore"):
                spread = 0.5 * c * np.float64(sigma0) ** 2 * np.array([init_tr, init_te])
            spread = check.finite_result(spread, {"init": sigma0, "lam": lam},
                                         "the initial spread of the errors (its weight decay included)")
            tr, te = tr + spread[0], te + spread[1]
        return tr, te

    values = {}
    if distinct[0] == 0.0 or np.any(chord):
        values[0.0] = with_spread(0.0, *limit, None)
    positive = distinct > 0.0
    if lp > LAM_LIMIT:          # the infinite-decay limit at every τ > 0 (module docstring)
        values.update((tau, limit) for tau in distinct[positive])
        bar.update(int(counts[positive].sum()))
    else:
        sets = _PoleSets(P, lp, lw)
        taus, n_times = distinct[positive], counts[positive]
        for start in range(0, taus.size, CHUNK):
            chunk = taus[start:start + CHUNK]
            sets.drop_below(chunk[0])
            sets.solve(sorted(set(chunk) | set(2.0 * chunk)))
            for tau in chunk:
                p1, p2 = sets.sets[tau], sets.sets[2.0 * tau]
                tr = 0.5 * (pb.label_variance - np.sum(p2.c * p2.T).real)
                overlap, norm = _moments(p1, P, lw, pb, ratio)
                values[tau] = with_spread(tau, tr, pb.test_error_from_moments(overlap, norm), p2)
            bar.update(int(n_times[start:start + CHUNK].sum()))
    out = np.array([values[tau] for tau in evaluated]).reshape(rescaled.size, 2)
    if np.any(chord):           # the chord from τ = 0 to TAU_CHORD
        zero, end = np.array(values[0.0]), np.array(values[TAU_CHORD])
        out[chord] = zero + (rescaled[chord] / TAU_CHORD)[:, None] * (end - zero)
    return out[:, 0].copy(), out[:, 1].copy()


def _moments(poles, P, lw, pb, ratio=None):
    """The two moments of ``θ(τ)`` the test error depends on (:meth:`linattn.Problem.test_error_from_moments`):
    ``overlap = t⟨θ̂_0, φ_τ b⟩`` and ``norm = ⟨φ_τ b, K φ_τ b⟩``, from ``ρ`` and the two-system
    block overlaps at the poles of ``φ_τ``; ``ratio`` (per block) rescales ``K`` to the test prompts' context
    length."""
    cj, rho = poles.c, poles.rho
    nu = 1.0 / (lw._ratios(P) * poles.r)
    S = _block_overlaps(nu, nu, poles.omega, poles.omega, rho, rho, lw, P)   # all pairs (n, n, B)
    if ratio is None:
        pair = np.outer(rho, rho) + S @ lw.metric
    else:       # the teacher direction lies in the Γ block
        pair = ratio[0] * np.outer(rho, rho) + S @ (lw.metric * ratio)
    return np.sqrt(pb.teacher_norm2) * np.sum(cj * rho).real, (cj @ pair @ cj).real


def _init_terms(tau, lp, lw, ratio=None, poles2=None):
    """``Σ_i D_i ∫(x+λ') e^{−2(x+λ')τ} dρ_i`` (train) and ``Σ_i κ_i D_i ∫ e^{−2(x+λ')τ} dρ_i`` (test; ``κ`` times
    ``ratio`` at another context length), from the resolvent at the poles of ``φ_{2τ}`` (``poles2``; its contour
    poles ``λ' + s_k/(2τ)`` are the last ones)."""
    dims = np.asarray(lw.block_dims, float)
    kappa = lw.metric if ratio is None else lw.metric * ratio
    if tau == 0.0:
        mean_x = np.array([lw.weights @ lw.xi[:, i] for i in range(lw.n_blocks)])  # E[x] per block = E ξ_i
        return float(dims @ (mean_x + lp)), float((kappa * dims).sum())
    s, w = _exp_contour(CONTOUR_NODES, CONTOUR_MU, CONTOUR_H)
    r, omega = poles2.r[-s.size:], poles2.omega[-s.size:]          # ∫ dρ_i/(x + a) = r_i(−a), a = λ' + s/(2τ)
    wk = (w / (2 * tau))[:, None]
    exp_int = np.sum(wk * r, axis=0).real                # ∫ e^{−2(x+λ')τ} dρ_i
    # ∫ (x+λ')/(x+a) dρ_i = 1 − (a−λ') r_i = (λ' + E[ξ_i ω]) r_i by the fixed point r_i = 1/(a + E[ξ_i ω]):
    # the second form has no cancellation when a is large (short times)
    xi_omega = _cmatmul(omega, lw.weights[:, None] * lw.xi)
    lin_int = np.sum(wk * (lp + xi_omega) * r, axis=0).real
    return float(dims @ lin_int), float((kappa * dims) @ exp_int)
