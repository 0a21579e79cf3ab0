r"""Training diagnostics validated on the exact model: rank dynamics of staged learning.

For ``Γ = P Q`` (``"value_kq_modes"``) on an anisotropic spectrum the exact population flow from a small
balanced aligned start is the logistic law of ``dynamics/_staged.py``, ``Γ(t) = U diag(a(t)) Uᵀ``, so the
singular values of ``Γ(t)`` are the mode amplitudes ``a_α(t)`` and every spectral diagnostic of
``diagnostics/_measures.py`` has a closed-form prediction:

* the effective rank steps up once per mode; the step of mode ``α`` lies in its rise window
  ``[t_½ − τ_α, t_½ + τ_α]`` (``a_α`` from 12 % to 88 % of ``a^∞_α``; ``τ_α = 1/(γ b_α)``);
* the subspace distance to ``Γ_* = U diag(a^∞) Uᵀ`` with cutoff ``rtol`` falls when mode ``α`` enters the
  numerical row space, at the time ``t^r_α`` where ``a_α(t) = rtol · max_β a_β(t)``; it falls *before* the
  loss drops when ``rtol · max_β a^∞_β < a^∞_α / 2``, and at each fall it takes the exact value
  ``(Σ_{β ∉ row space} (a^∞_β)²)^{1/2} / ‖a^∞‖``.

:func:`rank_dynamics` computes the diagnostics of the closed form, of the exact ODE from the aligned start
and from a small random start, and of online SGD, on the same time grid (the figure ``rank_dynamics``,
the report and the tests share it); :func:`checks` are the report's rows.

One experiment, ``rank_dynamics`` (:class:`StagedDiagnostics`): one run of :func:`rank_dynamics` (one point — the
SGD chains and the random start come from one seed) draws the figure ``rank_dynamics`` and gives the report section
``diagnostics`` (:func:`checks` of the same run).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import diagnostics
import dynamics
import linattn
from diagnostics import crossing_times
from linattn import _check as check
from linattn._covariance import EIGENVALUE_RANGE
from linattn._numerics.stats import mean_se
from linattn._parametrizations import Parametrization

from ..simulators._factorized_sims import factorized_descent
from ._base import Check, Experiment
from ._data import ExperimentData
from ._staged_runs import n_steps_covering, noise_free_problem


@dataclass(frozen=True)
class RankDynamics:
    """Spectral diagnostics of staged learning: closed form, exact ODEs and online SGD.

    Attributes
    ----------
    problem : linattn.Problem
    a0, rtol : float
        Start amplitude and cutoff of the subspace distance.
    times : ndarray (T,)
        Positive record times (SGD step × η).
    test_closed : ndarray (T,)
        Exact test error along the logistic law.
    closed, flow, random : diagnostics.TrajectoryDiagnostics
        Closed form; exact ODE from the balanced aligned start; exact ODE from a small random start.
    sgd : list of diagnostics.TrajectoryDiagnostics
        Online SGD from the aligned start, one per chain.
    test_sgd : ndarray (n_chains, T)
    t_half, tau : ndarray (D,)
        Half-rise times and time constants of the modes (in decreasing ``s_α``).
    t_enter : ndarray (D,)
        Closed-form time at which mode ``α`` enters the numerical row space (``a_α = rtol · max a``;
        ``nan`` for a mode that is inside from the start).
    distance_levels : ndarray (D + 1,)
        Exact subspace distance with the top ``m`` learned modes in the row space, ``m = 0 … D``.
    """

    problem: linattn.Problem
    a0: float
    rtol: float
    times: np.ndarray
    test_closed: np.ndarray
    closed: diagnostics.TrajectoryDiagnostics
    flow: diagnostics.TrajectoryDiagnostics
    random: diagnostics.TrajectoryDiagnostics
    sgd: list
    test_sgd: np.ndarray
    t_half: np.ndarray
    tau: np.ndarray
    t_enter: np.ndarray
    distance_levels: np.ndarray


def _enter_times(times, closed_modes, rtol):
    """First time each mode reaches ``rtol · max_β a_β(t)`` after having been below it (closed form)."""
    ratio = closed_modes / closed_modes.max(axis=1, keepdims=True)
    out = np.full(closed_modes.shape[1], np.nan)
    for a in range(closed_modes.shape[1]):
        below = np.flatnonzero(ratio[:, a] <= rtol)
        if below.size:
            k = below[-1]
            out[a] = crossing_times(times[k:], ratio[k:, a], rtol)
    return out


def rank_dynamics(spectrum, N, a0=1e-3, rtol=0.01, span=3.0, lr=0.05, batch=128, n_chains=3, record=20,
                  n_grid=400, rng=0) -> RankDynamics:
    """Run :class:`RankDynamics` for input eigenvalues ``spectrum`` (noise-free, identity basis).

    Parameters
    ----------
    spectrum : array_like (D,)
        Positive eigenvalues in non-increasing order (equal ones allowed), ``D >= 2``.
    N : int
    a0 : float
        Start amplitude (``p_α = q_α = √a0``; the random start has ``‖Γ(0)‖_F ≈ a0 √D``).
    rtol : float
        Cutoff of the subspace distance, in ``(0, 1)``.
    span : float
        The run lasts ``span × t_½`` of the slowest mode (``> 1``).
    lr : float
        SGD step ``η``.
    batch, n_chains, record : int
        SGD batch, chains, record interval (steps).
    n_grid : int
        Log-spaced times of the exact trajectories (``>= 16``); SGD records are interpolated on it.
    rng : int

    Returns
    -------
    RankDynamics

    Raises
    ------
    ValueError
        Naming the argument out of its range; a run whose SGD steps (``span × t_½ / lr``) or diagnostics
        (``n_chains + 3`` trajectories of ``n_grid`` ``D × D`` matrices) exceed the work or memory limits
        (:func:`linattn._check.work`, :func:`linattn._check.memory`) names ``span, lr, n_chains or batch`` and
        ``spectrum, n_grid or n_chains``.
    """
    values = check.real_array("spectrum", spectrum, low=0.0, low_open=True)
    if values.ndim != 1 or values.size < 2 or np.any(np.diff(values) > 0):
        check.fail("spectrum", spectrum, "at least two eigenvalues in decreasing order")
    lo, hi = EIGENVALUE_RANGE
    if values.min() < lo or values.max() > hi:       # the problem's covariance: named here as the caller's spectrum
        check.fail("spectrum", f"<eigenvalues from {values.min():.3g} to {values.max():.3g}>",
                   f"eigenvalues in [{lo:g}, {hi:g}] (the exact errors use their fourth powers)")
    pb = noise_free_problem(values, N)
    a0 = check.positive("a0", a0)
    rtol = check.real("rtol", rtol, low=0.0, high=1.0, low_open=True, high_open=True)
    span = check.real("span", span, low=1.0, low_open=True)
    n_grid = check.positive_int("n_grid", n_grid, minimum=16, maximum=10**7)
    n_chains = check.positive_int("n_chains", n_chains)
    D = pb.D                        # the diagnostics: n_chains + 3 trajectories of n_grid D x D matrices, one SVD each
    check.memory(8.0 * 4 * (n_chains + 3) * n_grid * D * D, f"{n_chains + 3} trajectories of {n_grid} {D} x {D} "
                 "matrices and their SVDs", "spectrum, n_grid or n_chains")
    check.work((n_chains + 3.0) * n_grid * D**3 + float(n_chains) * D * D * (n_grid + check.PYTHON_TRIP),
               f"the SVDs of {n_chains + 3} trajectories of {n_grid} {D} x {D} matrices",
               "spectrum, n_grid or n_chains")
    mc = dynamics.mode_constants(pb)
    t_half = dynamics.escape_times(pb, a0)
    par = Parametrization("value_kq_modes", pb.D)
    ref = np.diag(mc.a_inf)                                    # Γ_* (identity basis)
    batch = check.positive_int("batch", batch)
    record = check.positive_int("record", record)
    needed = n_steps_covering(span * t_half.max(), lr, 1, culprit="span")
    if record > needed:
        check.fail("record", record, f"a record interval of at most the {needed} SGD steps the span needs (span x "
                                     f"t_half / lr, lr = {lr:g})")
    n_steps = n_steps_covering(span * t_half.max(), lr, record, culprit="span")
    n_rec = n_steps // record + 1       # the SGD run, guarded here: factorized_descent's guards name n_steps
    check.work(float(n_chains) * n_steps * (batch * (pb.N * D + D * D + par.n_params) + par.n_params),
               f"{n_chains} chains x {n_steps} SGD steps (span x t_half / lr) on batches of {batch} prompts of "
               f"N = {pb.N} tokens", "N, span, lr, n_chains or batch")
    check.memory(8.0 * n_chains * n_rec * (par.n_params + 1 + 3 * D * D + D),
                 f"{n_chains} x {n_rec} SGD records of {D} x {D} matrices", "span, lr, record or n_chains")
    sgd = factorized_descent(pb, par, par.aligned(np.full(pb.D, a0)), n_steps, lr, batch=batch, record=record,
                             n_chains=n_chains, rng=rng)
    t = np.geomspace(max(t_half.min() / 20.0, record * lr), n_steps * lr, n_grid)   # inside the SGD records
    closed_modes = dynamics.logistic_modes(pb, a0, t)
    G_closed = closed_modes[:, :, None] * np.eye(pb.D)
    flow = dynamics.mean_flow(pb, par, par.aligned(np.full(pb.D, a0)), t)
    gen = np.random.default_rng(rng)
    th = gen.standard_normal(par.n_params)
    th *= np.sqrt(a0 * np.sqrt(pb.D)) / np.linalg.norm(th[: pb.D**2])
    random = dynamics.mean_flow(pb, par, th, t)
    t_sgd = sgd.steps[1:] * lr
    G_sgd = par.gamma(sgd.theta[:, 1:])                         # (chains, T_sgd, D, D)
    G_sgd = np.stack([[np.interp(t, t_sgd, g[:, i, j]) for i in range(pb.D) for j in range(pb.D)]
                      for g in G_sgd]).transpose(0, 2, 1).reshape(n_chains, t.size, pb.D, pb.D)
    test_sgd = np.array([np.interp(t, t_sgd, te[1:]) for te in sgd.test])

    def diag(G):
        return diagnostics.diagnose(G, t, reference=ref, rtol=rtol)

    w = mc.a_inf ** 2
    levels = np.sqrt(np.concatenate([[w.sum()], w.sum() - np.cumsum(w)]).clip(0.0) / w.sum())
    return RankDynamics(problem=pb, a0=a0, rtol=rtol, times=t, test_closed=dynamics.mode_loss(pb, closed_modes),
                        closed=diag(G_closed), flow=diag(par.gamma(flow.theta)), random=diag(par.gamma(random.theta)),
                        sgd=[diag(g) for g in G_sgd], test_sgd=test_sgd, t_half=t_half, tau=mc.tau,
                        t_enter=_enter_times(t, closed_modes, rtol), distance_levels=levels)


_NO_DIAG = object()


def _checked(r, diag=_NO_DIAG):
    if not isinstance(r, RankDynamics):
        check.fail("r", r, "a RankDynamics (from rank_dynamics)")
    if diag is not _NO_DIAG and not isinstance(diag, diagnostics.TrajectoryDiagnostics):
        check.fail("diag", diag, "a diagnostics.TrajectoryDiagnostics of r (r.closed, r.flow, r.random or r.sgd[i])")


def step_ups(r: RankDynamics, diag, window=None) -> np.ndarray:
    """Times at which the effective rank steps up as modes ``2 … D`` are learned.

    The steepest rises of ``erank`` in ``ln t`` (:func:`diagnostics.steepest_changes`) after the first mode is
    learned (``t >= t_½,1 + τ_1``; before that the rank *falls* from the isotropic start to one mode).

    Parameters
    ----------
    r : RankDynamics
    diag : diagnostics.TrajectoryDiagnostics
        One of ``r.closed``, ``r.flow``, ``r.random``, ``r.sgd[i]``.
    window : int, optional
        Savitzky–Golay smoothing (SGD trajectories).

    Returns
    -------
    ndarray (D − 1,)
    """
    _checked(r, diag)
    keep = r.times >= r.t_half[0] + r.tau[0]
    return diagnostics.steepest_changes(diag.effective_rank[keep], r.times[keep], n=r.problem.D - 1, window=window)


def distance_falls(r: RankDynamics, diag) -> np.ndarray:
    """Times at which the subspace distance falls as each mode with a finite ``t_enter`` enters the row space.

    The first downward crossing, after the distance's maximum, of the midpoint between its exact levels
    before and after (:attr:`RankDynamics.distance_levels`), in the order of ``t_enter``.

    Parameters
    ----------
    r : RankDynamics
    diag : diagnostics.TrajectoryDiagnostics

    Returns
    -------
    ndarray (n_entering,)
    """
    _checked(r, diag)
    entering = np.flatnonzero(np.isfinite(r.t_enter))
    start = int(np.argmax(diag.subspace_distance))
    out = []
    for a in entering[np.argsort(r.t_enter[entering])]:
        mid = 0.5 * (r.distance_levels[a] + r.distance_levels[a + 1])
        out.append(crossing_times(r.times[start:], diag.subspace_distance[start:], mid, below=True))
    return np.array(out, dtype=float)


def curvature_onsets(r: RankDynamics, loss) -> np.ndarray:
    """Onsets of the ``D`` loss drops: the ``D`` deepest local minima of ``d² ln E / d(ln t)²``
    (:func:`diagnostics.loss_curvature`), in time order.

    Parameters
    ----------
    r : RankDynamics
    loss : array_like (T,)
        A loss curve on ``r.times`` (``r.test_closed`` or a row of ``r.test_sgd``).

    Returns
    -------
    ndarray (D,)
    """
    _checked(r)
    c = diagnostics.loss_curvature(loss, r.times)
    idx = np.flatnonzero((c[1:-1] < c[:-2]) & (c[1:-1] <= c[2:])) + 1
    return np.sort(r.times[idx[np.argsort(c[idx])[: r.problem.D]]])


def rise_windows(r: RankDynamics, half_width=None) -> np.ndarray:
    """Rise windows ``[t_½ − τ, t_½ + τ]`` of modes ``2 … D`` (shape (D − 1, 2)); ``half_width`` overrides ``τ_α``
    (for baselines)."""
    _checked(r)
    half_width = r.tau if half_width is None else check.real_array("half_width", half_width, low=0.0, low_open=True)
    t_half = r.t_half if half_width is r.tau else r.t_half * half_width / r.tau      # t_½ ∝ τ at fixed a0, a^∞
    return np.stack([t_half[1:] - half_width[1:], t_half[1:] + half_width[1:]], axis=1)


def checks(r: RankDynamics, lr=0.05, record=20, parameters="") -> list:
    """Acceptance of the diagnostics against the closed form (report section ``diagnostics`` and tests).

    Tolerances: the exact ODE integrates to ``rtol = 1e-9`` (effective ranks to 1e-6); a detected step or
    crossing is located to one log-grid spacing ``g``; SGD adds one record (``record · η``) of interpolation
    and its discretisation drift ``η b_α t`` (the logistic rate is ``b_α(1 + O(η b_α))``), and the chains'
    spread (4 s.e.).

    Parameters
    ----------
    r : RankDynamics
    lr : float
        SGD step used by :func:`rank_dynamics`.
    record : int
        Record interval used by :func:`rank_dynamics`.
    parameters : str
        The setting written in each row.

    Returns
    -------
    list of validation.experiments.base.Check
        Section ``"diagnostics"``; no relative error (``"—"``).
    """
    _checked(r)
    lr, record = check.positive("lr", lr), check.positive_int("record", record)
    g = r.times[1] / r.times[0] - 1.0
    mc = dynamics.mode_constants(r.problem)
    out = []

    def row(quantity, theory, measured, passed, rule):
        out.append(Check("diagnostics", quantity, parameters, theory, measured, "—", passed, rule))

    d_er = np.abs(r.closed.effective_rank - r.flow.effective_rank).max()
    row("effective rank: exact ODE = closed form", "0", f"max |Δ| {d_er:.1e}", d_er < 1e-6,
        "≤ 1e-6 (ODE tolerance 1e-9)")
    win = rise_windows(r)
    sgd_steps = np.array([step_ups(r, d, window=31) for d in r.sgd])
    flow_steps = step_ups(r, r.flow)
    for k, (lo, hi) in enumerate(win):
        a = k + 1
        m, se = mean_se(sgd_steps[:, k], single=np.nan)   # one chain: nan
        slack = 4 * se + lr * mc.b[a] * hi + record * lr + g * hi
        ok = lo <= flow_steps[k] <= hi and lo - slack <= m <= hi + slack
        row(f"effective rank steps up in the rise window of mode {a + 1}",
            f"[{lo:.1f}, {hi:.1f}] (t½ ± τ)", f"exact ODE {flow_steps[k]:.1f}; SGD {m:.1f} ± {se:.1f}", ok,
            "ODE inside; SGD inside ± (4 s.e. + ηb·t + one record + one grid step)")
    falls_flow = distance_falls(r, r.flow)
    falls_sgd = np.array([distance_falls(r, d) for d in r.sgd])
    entering = np.sort(r.t_enter[np.isfinite(r.t_enter)])
    order = np.argsort(r.t_enter[np.isfinite(r.t_enter)])
    modes = np.flatnonzero(np.isfinite(r.t_enter))[order]
    for j, (te, a) in enumerate(zip(entering, modes)):
        m, se = mean_se(falls_sgd[:, j], single=np.nan)   # one chain: nan
        slack = 4 * se + lr * mc.b[a] * te + record * lr + 2 * g * te
        ok = abs(falls_flow[j] / te - 1) <= g and abs(m - te) <= slack and te < r.t_half[a] and m < r.t_half[a]
        row(f"subspace distance falls when mode {a + 1} enters (before its t½ = {r.t_half[a]:.1f})",
            f"{te:.2f} (a_α = rtol·max a)", f"exact ODE {falls_flow[j]:.2f}; SGD {m:.2f} ± {se:.2f}", ok,
            "ODE within one grid step; SGD within 4 s.e. + ηb·t + one record + two grid steps; both < t½")
    onset_closed = curvature_onsets(r, r.test_closed)
    onset_sgd = np.array([curvature_onsets(r, y) for y in r.test_sgd])
    for a, te in enumerate(onset_closed):
        m, se = mean_se(onset_sgd[:, a], single=np.nan)   # one chain: nan
        slack = 4 * se + lr * mc.b[a] * te + record * lr + 2 * g * te
        row(f"loss curvature: onset of drop {a + 1} (deepest minimum of d²lnE/d(ln t)²)",
            f"{te:.2f} (closed form; t½ − τ = {r.t_half[a] - r.tau[a]:.2f})", f"SGD {m:.2f} ± {se:.2f}",
            abs(m - te) <= slack, "SGD within 4 s.e. + ηb·t + one record + two grid steps")
    after = [np.interp(falls_flow[j] * (1 + 3 * g), r.times, r.flow.subspace_distance) for j in range(len(entering))]
    levels = r.distance_levels[modes + 1]
    dev = np.max(np.abs(np.array(after) - levels)) if len(after) else 0.0
    row("subspace distance plateaus after each entry", ", ".join(f"{v:.4f}" for v in levels),
        ", ".join(f"{v:.4f}" for v in after), dev < 1e-6, "exact levels ‖a^∞ outside‖/‖a^∞‖ to 1e-6")
    return out


def baseline_rejected(r: RankDynamics) -> bool:
    """``True`` if the step-up criterion of :func:`checks` rejects the baseline time scale ``τ ∝ 1/s_α``
    (plain linear regression, ``τ_α = D/(γ s_α)``, instead of the attention's ``D/(γ s_α²)``).

    Parameters
    ----------
    r : RankDynamics

    Returns
    -------
    bool
    """
    _checked(r)
    spectrum = r.problem.covariance.spectrum
    base = r.tau * spectrum                  # D/(γ s) = τ_α s_α
    win = rise_windows(r, half_width=base)
    steps = step_ups(r, r.flow)
    return not np.all((win[:, 0] <= steps) & (steps <= win[:, 1]))


# ----------------------------------------------------------------------------- experiments
_TRAJECTORIES = ("closed", "flow", "random")


def rank_arrays(r: RankDynamics) -> dict:
    """The numbers of ``r`` as a flat dict of arrays (:func:`rank_from_arrays` rebuilds it).

    Parameters
    ----------
    r : RankDynamics

    Returns
    -------
    dict of str to ndarray
    """
    _checked(r)
    out = dict(spectrum=r.problem.covariance.spectrum, N=np.array(r.problem.N), a0=np.array(r.a0),
               rtol=np.array(r.rtol), times=r.times, test_closed=r.test_closed, test_sgd=r.test_sgd, t_half=r.t_half,
               tau=r.tau, t_enter=r.t_enter, distance_levels=r.distance_levels)
    fields = [f for f in diagnostics.TrajectoryDiagnostics.__dataclass_fields__ if f != "rtol"]
    for tag in _TRAJECTORIES:
        out.update({f"{tag}_{f}": np.asarray(getattr(getattr(r, tag), f)) for f in fields})
    out.update({f"sgd_{f}": np.array([getattr(x, f) for x in r.sgd]) for f in fields})
    return out


def rank_from_arrays(d) -> RankDynamics:
    """The :class:`RankDynamics` written by :func:`rank_arrays`.

    Parameters
    ----------
    d : mapping of str to ndarray

    Returns
    -------
    RankDynamics
    """
    rtol = float(d["rtol"])
    fields = [f for f in diagnostics.TrajectoryDiagnostics.__dataclass_fields__ if f != "rtol"]

    def traj(values):
        values = dict(values, skip=int(values["skip"]))
        return diagnostics.TrajectoryDiagnostics(**values, rtol=rtol)

    sgd = [traj({f: d[f"sgd_{f}"][i] for f in fields}) for i in range(len(d["sgd_times"]))]
    return RankDynamics(problem=noise_free_problem(d["spectrum"], int(d["N"])), a0=float(d["a0"]), rtol=rtol,
                        times=d["times"], test_closed=d["test_closed"], sgd=sgd, test_sgd=d["test_sgd"],
                        t_half=d["t_half"], tau=d["tau"], t_enter=d["t_enter"], distance_levels=d["distance_levels"],
                        **{tag: traj({f: d[f"{tag}_{f}"] for f in fields}) for tag in _TRAJECTORIES})


@dataclass(frozen=True, eq=False, repr=False)
class RankDynamicsData(ExperimentData):
    """Data of ``rank_dynamics``: the numbers of one :class:`RankDynamics` run (:meth:`run` rebuilds it).

    Attributes
    ----------
    spectrum : ndarray (D,)
        Input eigenvalues (noise-free problem, identity basis).
    N : int
        Context length.
    a0, rtol : float
        Start amplitude and cutoff of the subspace distance.
    times : ndarray (T,)
        Positive record times (SGD step × η).
    test_closed : ndarray (T,)
        Exact test error along the closed-form logistic law.
    test_sgd : ndarray (n_chains, T)
        Exact test error of each online-SGD chain.
    t_half, tau : ndarray (D,)
        Half-rise times and time constants of the modes (in decreasing ``s_α``).
    t_enter : ndarray (D,)
        Closed-form time at which each mode enters the numerical row space (``nan``: inside from the start).
    distance_levels : ndarray (D + 1,)
        Exact subspace distance with the top ``m`` learned modes in the row space, ``m = 0 … D``.
    closed, flow, random : diagnostics.TrajectoryDiagnostics
        Spectral measures of the closed form, of the exact ODE from the aligned start and from a small random start.
    sgd : tuple of diagnostics.TrajectoryDiagnostics
        The same for each online-SGD chain.
    """

    spectrum: np.ndarray
    N: int
    a0: float
    rtol: float
    times: np.ndarray
    test_closed: np.ndarray
    test_sgd: np.ndarray
    t_half: np.ndarray
    tau: np.ndarray
    t_enter: np.ndarray
    distance_levels: np.ndarray
    closed: diagnostics.TrajectoryDiagnostics
    flow: diagnostics.TrajectoryDiagnostics
    random: diagnostics.TrajectoryDiagnostics
    sgd: tuple[diagnostics.TrajectoryDiagnostics, ...]

    @classmethod
    def from_run(cls, r: RankDynamics) -> RankDynamicsData:
        """The data of the run ``r``.

        Parameters
        ----------
        r : RankDynamics

        Returns
        -------
        RankDynamicsData
        """
        _checked(r)
        return cls(spectrum=r.problem.covariance.spectrum, N=r.problem.N, a0=r.a0, rtol=r.rtol, times=r.times,
                   test_closed=r.test_closed, test_sgd=r.test_sgd, t_half=r.t_half, tau=r.tau, t_enter=r.t_enter,
                   distance_levels=r.distance_levels, closed=r.closed, flow=r.flow, random=r.random, sgd=tuple(r.sgd))

    def run(self) -> RankDynamics:
        """The :class:`RankDynamics` run of these data.

        Returns
        -------
        RankDynamics
        """
        return RankDynamics(problem=noise_free_problem(self.spectrum, self.N), a0=self.a0, rtol=self.rtol,
                            times=self.times, test_closed=self.test_closed, closed=self.closed, flow=self.flow,
                            random=self.random, sgd=list(self.sgd), test_sgd=self.test_sgd, t_half=self.t_half,
                            tau=self.tau, t_enter=self.t_enter, distance_levels=self.distance_levels)

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: :func:`rank_arrays` (the trajectories as ``{closed,flow,random}_{field}``, the chains
        stacked as ``sgd_{field}``; the cutoff ``rtol`` once)."""
        out = dict(arrays)
        fields = [f for f in diagnostics.TrajectoryDiagnostics.__dataclass_fields__ if f != "rtol"]
        for tag in _TRAJECTORIES:
            out.update({f"{tag}.{f}": out.pop(f"{tag}_{f}") for f in fields})
            out[f"{tag}.rtol"] = out["rtol"]
        stacked = {f: out.pop(f"sgd_{f}") for f in fields}
        for i in range(len(stacked["times"])):
            out.update({f"sgd[{i}].{f}": v[i] for f, v in stacked.items()})
            out[f"sgd[{i}].rtol"] = out["rtol"]
        return out


class StagedDiagnostics(Experiment):
    """Diagnostics of staged learning: one :func:`rank_dynamics` run (one point; the SGD chains and the random start
    share the seed) draws the figure ``rank_dynamics`` and gives the report section ``diagnostics`` (:func:`checks`
    of that run). The point's outputs are :func:`rank_arrays` of the run; the data are :class:`RankDynamicsData`."""

    name = "rank_dynamics"
    title = "Effective rank and subspace distance of staged learning: theory vs ODE vs SGD"
    data_class = RankDynamicsData
    presets = {"smoke": dict(spectrum=np.geomspace(1.0, 0.5, 3).tolist(), N=15, n_chains=2, batch=32, n_grid=60,
                             seed=3),
               "quick": dict(spectrum=np.geomspace(1.0, 0.25, 4).tolist(), N=31, n_chains=3, batch=128, n_grid=400,
                             seed=3),
               "full": dict(spectrum=np.geomspace(1.0, 0.125, 5).tolist(), N=31, n_chains=8, batch=256, n_grid=600,
                            seed=3)}
    report_order = 80

    def compute(self, s, point):
        return rank_arrays(rank_dynamics(s.spectrum, s.N, n_chains=s.n_chains, batch=s.batch, n_grid=s.n_grid,
                                         rng=s.seed))

    def assemble(self, s, outputs):
        data = RankDynamicsData.from_run(rank_from_arrays(outputs[0]))
        meta = {"N": s.N, "a0": data.a0, "rtol": data.rtol, "spectrum": list(map(float, s.spectrum))}
        return data, meta

    def checks(self, result):
        s = result.settings
        r = result.data.run()
        setting = (f"Γ=PQ, D={r.problem.D}, N={r.problem.N}, a0={r.a0:g}, rtol={r.rtol}; exact ODE and online SGD "
                   f"η=0.05, batch {s['batch']}, {s['n_chains']} chains")
        return checks(r, parameters=setting)
