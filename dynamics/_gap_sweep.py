"""Sweeps over the task diversity ``P``: relative generalization gap and contrast ratio.

For each ``P``, ``n_datasets`` independent training sets are drawn; each is solved exactly
(``dynamics/_flow.py``) at the end of training — the long-time limit of gradient flow by
default, or a finite flow time ``t`` (seed Fig. 6 trains for a fixed number of steps, which at
``λ = 0`` and ``P < M`` leaves a small nonzero training error). Reported: mean and s.d. over
training sets of ``ΔEr = (E_g − E_t)/E_t`` and ``C = tr Γ/(‖Γ‖_F √D)``, and of ``E_t``, ``E_g``;
and, because ``ΔEr`` spans many orders of magnitude when the model interpolates (``λ = 0``,
``P < M``: ``E_t → 0``), the median and the 16 % / 84 % quantiles of ``ΔEr``. ``ΔEr`` is ``inf``
when ``E_t`` is exactly zero or so small that the ratio overflows; a mean or s.d. over a set
containing ``inf`` is reported as ``inf``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
from linattn import _check as check
from linattn._arguments import array, integer, nonnegative, optional, positive, public, seed
from linattn._results import short_repr
from linattn._validate import PROBLEM
from spectra._eigensystem import _eigensystem

from ._flow import _gradient_flow, _long_time_limit

#: operations one (P, dataset) trip of :func:`gap_sweep` counts for its Python-level work (sampling, the eigensystem
#: and the long-time limit: ~0.6 ms measured, ten :data:`linattn._check.PYTHON_TRIP`)
TRIP_OPS = 10 * check.PYTHON_TRIP


@dataclass(frozen=True, eq=False)
class Sweep:
    """Per-``P`` statistics over training sets (arrays of length ``len(P)``; ``*_all`` keep
    every training set, shape (len(P), n_datasets)).

    Attributes
    ----------
    P : ndarray (n_P,)
        Prompts per training set.
    gap_mean, gap_sd, gap_median, gap_q16, gap_q84 : ndarray (n_P,)
        Mean, standard deviation, median and 16 %/84 % quantiles of ``ΔEr`` over the training sets (``gap_sd``:
        ``nan`` for one training set, which has no spread to estimate; ``inf`` where a gap is infinite).
    contrast_mean, contrast_sd : ndarray (n_P,)
        Mean and standard deviation of the contrast ratio (``contrast_sd``: ``nan`` for one training set).
    train_mean, test_mean : ndarray (n_P,)
        Mean ``E_t`` and ``E_g``.
    gap_all, contrast_all, train_all, test_all : ndarray (n_P, n_datasets)
        Every training set's values.
    lam : float
    model : str
    time : float or None
        Flow time (``None``: the long-time limit).
    """

    __repr__ = short_repr

    P: np.ndarray
    gap_mean: np.ndarray
    gap_sd: np.ndarray
    gap_median: np.ndarray
    gap_q16: np.ndarray
    gap_q84: np.ndarray
    contrast_mean: np.ndarray
    contrast_sd: np.ndarray
    train_mean: np.ndarray
    test_mean: np.ndarray
    gap_all: np.ndarray
    contrast_all: np.ndarray
    train_all: np.ndarray
    test_all: np.ndarray
    lam: float
    model: str
    time: float | None


@public(pb=PROBLEM, P_values=array(ndim=1, min_ndim=1), lam=nonnegative(), n_datasets=integer(maximum=10**6),
        time=optional(positive()), rng=seed())
def gap_sweep(pb, P_values, lam, n_datasets=100, model="reduced", time=None, rng=0, progress=False) -> Sweep:
    """ΔEr and contrast ratio against ``P`` (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
    P_values : array_like of int
        Prompts per training set: a non-empty 1-d array of integers ``>= 1``.
    lam : float
    n_datasets : int
        Training sets per ``P``.
    model : {"reduced", "full"}
    time : float, optional
        Flow time ``t > 0`` (``γ = 1``, ``θ_0 = 0``: at ``t = 0``, ``Γ = 0`` has no contrast ratio); ``None`` for the
        long-time limit.
    rng : int
        Training set ``i`` at ``P`` uses ``rng = (seed, P, i)``.
    progress : bool
        Show a progress bar.

    Returns
    -------
    Sweep

    Raises
    ------
    ValueError
        Bad input, or ``n_datasets`` × ``len(P_values)`` so large that the sweep would run for hours (beyond
        :func:`linattn._check.work`'s limit, ~0.6 ms a dataset at small ``P``) or its result arrays would not fit in
        memory (:func:`linattn._check.memory`).
    """
    Ps = P_values
    if Ps.size == 0 or np.any(Ps < 1) or np.any(Ps != np.round(Ps)) or np.any(Ps > check.MAX_INT):
        check.fail("P_values", P_values, f"a non-empty 1-d array of integers >= 1 and <= {check.MAX_INT}")
    Ps = Ps.astype(np.int64)
    shape = (Ps.size, n_datasets)
    M = pb.n_params(model)
    # per (P, dataset) trip: the eigensystem and the features, and the Python work of sampling, decomposing and
    # solving one dataset (~0.6 ms measured at D = 4: TRIP_OPS Python trips of linattn._check)
    check.work(float(n_datasets) * sum(min(P, M) ** 3 + P * M * pb.D + TRIP_OPS for P in Ps),
               f"{n_datasets} datasets at each of {Ps.size} P values (an eigensystem each)", "n_datasets or P_values")
    # the four per-dataset arrays, and the statistics' copies of them (quantiles, the scaled gap)
    check.memory(8.0 * 10 * Ps.size * n_datasets, f"the results of {n_datasets} datasets at each of {Ps.size} P "
                 "values", "n_datasets or P_values")
    gap, con, tr, te = (np.empty(shape) for _ in range(4))
    bar = tqdm(total=Ps.size * n_datasets, desc=f"sweep {model} D={pb.D} N={pb.N}", disable=not progress, leave=False)
    for i, P in enumerate(Ps):
        for j in range(n_datasets):
            es = _eigensystem(pb.sample(int(P), rng=(rng, int(P), j)), pb, model)
            if time is None:
                lim = _long_time_limit(es, lam, lam, None, None)
                tr[i, j], te[i, j], gap[i, j], con[i, j] = lim.train, lim.test, lim.gap, lim.contrast
            else:
                cv = _gradient_flow(es, lam, lam, np.array([time]), 1.0, None, 0.0, True, None, lam)
                G, _ = linattn.unpack(cv.params[0], pb.D, model)
                tr[i, j], te[i, j] = cv.train[0], cv.test[0]
                gap[i, j] = linattn.relative_gap(tr[i, j], te[i, j])
                if not np.any(G):     # Γ(t) = γ t b + … from θ0 = 0 underflows to 0 at t ~ 1e-300
                    check.fail("time", time, "a flow time > 0 at which Γ(t) is not 0 in float64 (the contrast ratio "
                               "is undefined at Γ = 0, the start θ0 = 0)")
                con[i, j] = linattn.contrast_ratio(G)
            bar.update()
    bar.close()
    finite = np.all(np.isfinite(gap), axis=1)
    safe = np.where(finite[:, None], gap, 0.0)
    scale = np.maximum(np.max(np.abs(safe), axis=1, keepdims=True), 1e-300)  # avoids overflow of x²
    gmean = np.where(finite, (safe / scale).mean(1) * scale[:, 0], np.inf)
    # one training set has no spread to estimate: nan, never 0
    gsd = (np.where(finite, (safe / scale).std(1, ddof=1) * scale[:, 0], np.inf) if n_datasets > 1
           else np.full(Ps.size, np.nan))
    q16, q50, q84 = np.quantile(gap, [0.16, 0.5, 0.84], axis=1, method="inverted_cdf")
    csd = con.std(1, ddof=1) if n_datasets > 1 else np.full(Ps.size, np.nan)
    return Sweep(P=Ps, gap_mean=gmean, gap_sd=gsd, gap_median=q50, gap_q16=q16, gap_q84=q84,
                 contrast_mean=con.mean(1), contrast_sd=csd,
                 train_mean=tr.mean(1), test_mean=te.mean(1), gap_all=gap, contrast_all=con, train_all=tr,
                 test_all=te, lam=lam, model=model, time=time)
