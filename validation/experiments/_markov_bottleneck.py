r"""The bigram-embedding bottleneck of the Markov-chain task and its ``K₂*``: experiment
``markov_bottleneck`` (figure ``markov_bottleneck``, docs/markov_bottleneck.md).

Gibson, Cui & Reddy (arXiv:2604.12151) set the second memorization boundary ``K₂*`` by a representational
bottleneck, measured as the information ``I(k; m)`` (bits) that the pooled bigram embedding
``m = (1/n) Σ_t E[x_t C + x_{t+1}]`` of a sequence carries about which of the ``K`` chains of the pool generated
it (their code: GitHub ``cole-gibson/context-adaptive-transformer``, ``transformer/pd/bigram_embd.py``).
:mod:`linattn.markov.bottleneck` computes it; ``K₂*`` is the ``K`` with ``log₂ K − I(K) = 1`` bit.

``C = 10`` states, rows ``~ Dirichlet(α = 1)``, embedding ``E = R`` a random projection
(``R_{ij} ~ N(0, 1/d)``, :func:`~linattn.markov.bottleneck.random_projection`). Points:

* ``k2`` (per context length ``L`` and embedding dimension ``d``): ``n_proj`` projections
  ``R_j`` (seed ``(24, d, j)``, the same at every ``L``), for each the measured ``log₂ K₂*`` of
  :func:`~linattn.markov.bottleneck.k2` over ``n_pools`` pools (seed ``(24, L, j)``: the same pools at every
  ``d`` and for the baseline — common random numbers), the deterministic
  approximation ``log₂ k2_theory(channel(R_j, L, moments))`` (prior moments from ``n_chains`` sampled chains,
  seed ``(24, 0)``), and the closed form ``log₂ k2_theory(projection_channel(C, α, d, L))``. The same for the
  unigram-only baseline ``U_j`` (:func:`~linattn.markov.bottleneck.unigram_embedding`, seed ``(25, d, j)``).
  Measured ``log₂ K₂*``: mean over projections of the per-projection mean over pools, s.e. from the scatter
  of the per-projection means, floored by the pool-to-pool scatter (:func:`_nested_mean`). The measured −
  approximation difference is paired (same ``R_j``), s.e. the same way. For ``d ≥ C − 1`` the baseline's
  estimates are the same at every ``d`` (same pools; the estimator is exactly invariant under ``E → E M``).
* ``curve`` (per ``d`` of ``curve_ds``, at ``curve_L``): ``I(K)`` on the grid ``Ks`` averaged over
  ``curve_pools`` pools (:func:`~linattn.markov.bottleneck.information_mean`, ``E = R_0``, seed
  ``(24, L, K)``, the same pools at every ``d``), the approximation ``information_theory(K, channel(R_0, …))``
  beside it, and for the largest ``d`` the unigram baseline ``U_0`` (seed ``(25, d, 0)``) at every ``K``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from linattn import ConvergenceError
from linattn.markov import _bottleneck as bn
from replica import _bottleneck_theory as bt

from ._base import Check, Experiment
from ._data import ExperimentData

#: states of the chains and the Dirichlet concentration of their rows
C, CONCENTRATION = 10, 1.0
#: stated accuracy of the approximation of I(K) (docs/markov_bottleneck.md §4: within 0.29 bits everywhere measured)
INFO_TOL_BITS = 0.3
#: stated accuracy of the approximation's log₂ K₂* (docs/markov_bottleneck.md §4: low by 0.1–0.85 where measured)
K2_TOL = 1.0
#: the unigram baseline must carry at least this many bits less than the bigram projection (check 3)
BASELINE_BITS = 2.0


@functools.lru_cache(maxsize=4)
def _moments(n_chains):
    """Prior moments of the stationary bigram law (sampled; seed ``(24, 0)``), once per process."""
    return bn.prior_moments(C, CONCENTRATION, n_chains=n_chains, rng=(24, 0))


def _nested_mean(x):
    r"""Mean and standard error over the last two axes of ``x`` (..., n_proj, n_pools): pools nested in
    projections. ``s.e.² = max(Var_j(x̄_j)/J, MSW/(J P))``: the first (between-projection scatter of the
    projection means) is the unbiased estimate of the variance of the grand mean but has only ``J − 1`` degrees of
    freedom; the second (within-projection, pool-to-pool scatter, ``J(P − 1)`` degrees of freedom) is a lower
    bound of it, used as a floor so that projection means that agree by chance do not shrink the error bar."""
    J, P = x.shape[-2:]
    means = x.mean(axis=-1)
    between = means.var(axis=-1, ddof=1) / J
    within = ((x - means[..., None]) ** 2).sum(axis=(-2, -1)) / (J * (P - 1)) / (J * P)
    return means.mean(axis=-1), np.sqrt(np.maximum(between, within))


def _fmt(x, se=None):
    return f"{x:.3g}" if se is None else f"{x:.3g} ± {se:.2g}"


@dataclass(frozen=True, eq=False, repr=False)
class K2Estimates(ExperimentData):
    """``log₂ K₂*`` of one embedding family against ``d`` at one length ``L``.

    Attributes
    ----------
    seeds : ndarray (n_d, n_proj, n_pools)
        Measured ``log₂ K₂*`` per projection and pool.
    measured, measured_se : ndarray (n_d,)
        Their mean and s.e. (pools nested in projections, :func:`_nested_mean`).
    approx : ndarray (n_d,)
        The deterministic approximation, averaged over the projections.
    diff, diff_se : ndarray (n_d,)
        Measured − approximation, paired over the projections, and its s.e.
    capacity : ndarray (n_d,)
        The channel capacity (bits), averaged over the projections.
    """

    seeds: np.ndarray
    measured: np.ndarray
    measured_se: np.ndarray
    approx: np.ndarray
    diff: np.ndarray
    diff_se: np.ndarray
    capacity: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class K2Scan(ExperimentData):
    """``log₂ K₂*`` against the embedding dimension at one length ``L``.

    Attributes
    ----------
    d : ndarray (n_d,)
        Embedding dimensions.
    closed : ndarray (n_d,)
        The random-projection closed form.
    bigram, unigram : K2Estimates
        The random projection of the bigrams and the unigram-only baseline.
    """

    d: np.ndarray
    closed: np.ndarray
    bigram: K2Estimates
    unigram: K2Estimates


@dataclass(frozen=True, eq=False, repr=False)
class InformationCurve(ExperimentData):
    """The information ``I(k; m)`` (bits) against the pool size ``K`` for one embedding.

    Attributes
    ----------
    bits, bits_se : ndarray (n_K,)
        The Monte-Carlo estimate, mean ± s.e. over pools.
    approx : ndarray (n_K,)
        The deterministic approximation.
    closed : ndarray (n_K,) or None
        The random-projection closed form (bigram projections only).
    capacity : float or None
        The channel capacity (bigram projections only).
    """

    bits: np.ndarray
    bits_se: np.ndarray
    approx: np.ndarray
    closed: np.ndarray | None
    capacity: float | None


@dataclass(frozen=True, eq=False, repr=False)
class MarkovBottleneckData(ExperimentData):
    """Data of ``markov_bottleneck`` (figure and report rows of section ``markov``).

    Attributes
    ----------
    lengths : ndarray (n_L,)
        Sequence lengths ``L`` of the ``K₂*`` scans.
    Ks : ndarray (n_K,)
        Pool sizes of the information curves.
    curve_ds : ndarray (n_curves,)
        Embedding dimensions of the information curves (at ``curve_L``).
    k2 : dict of int to K2Scan
        The ``K₂*`` scans by ``L``.
    curves : dict of int to InformationCurve
        The information curves of the random projection by ``d``.
    unigram_curve : InformationCurve
        The unigram-only baseline's curve at the largest ``d``.
    """

    lengths: np.ndarray
    Ks: np.ndarray
    curve_ds: np.ndarray
    k2: dict[int, K2Scan]
    curves: dict[int, InformationCurve]
    unigram_curve: InformationCurve

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``L{L}_{d,closed}``, ``L{L}_[uni_]{seeds,meas,meas_se,approx,diff,diff_se,capacity}``,
        ``curve_d{d}_{bits,bits_se,approx,closed,capacity}``, ``curve_uni_{bits,bits_se,approx}``."""
        out = dict(arrays)
        names = {"meas": "measured", "meas_se": "measured_se"}
        for L in np.asarray(out["lengths"]).ravel():
            at = f"k2[{int(L)}]."
            out[at + "d"], out[at + "closed"] = out.pop(f"L{L}_d"), out.pop(f"L{L}_closed")
            for tag, family in (("", "bigram"), ("uni_", "unigram")):
                for k in ("seeds", "meas", "meas_se", "approx", "diff", "diff_se", "capacity"):
                    out[f"{at}{family}.{names.get(k, k)}"] = out.pop(f"L{L}_{tag}{k}")
        for d in np.asarray(out["curve_ds"]).ravel():
            for k in InformationCurve.__dataclass_fields__:
                out[f"curves[{int(d)}].{k}"] = out.pop(f"curve_d{d}_{k}")
        for k in ("bits", "bits_se", "approx"):
            out[f"unigram_curve.{k}"] = out.pop(f"curve_uni_{k}")
        return out


class MarkovBottleneck(Experiment):
    """Information of the pooled bigram embedding vs ``K`` and ``K₂*`` vs ``d`` (module docstring)."""

    name = "markov_bottleneck"
    title = "Markov-chain ICL: bigram-embedding information and the bottleneck pool size K₂* vs embedding dimension"
    data_class = MarkovBottleneckData
    #: quick: ≈ 15 s of CPU on one core (measured on a shared machine); the k2 of the largest d and the K = 1024
    #: curve points cost most
    presets = {"smoke": dict(lengths=[51], ds=[[2, 4]], n_proj=2, n_pools=2, n_samples=128, K_max=256,
                             n_chains=500, curve_L=51, curve_ds=[2, 4], Ks=[2, 8, 32], curve_pools=2,
                             curve_samples=128),
               "quick": dict(lengths=[101], ds=[[2, 3, 4, 6, 8, 10, 12, 16]], n_proj=4, n_pools=2, n_samples=512,
                             K_max=4096, n_chains=3000, curve_L=101, curve_ds=[4, 8, 16],
                             Ks=[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], curve_pools=4, curve_samples=256),
               "full": dict(lengths=[101, 401], ds=[[2, 3, 4, 5, 6, 8, 10, 12, 14, 16], [2, 3, 4, 5, 6, 8, 10]],
                            n_proj=6, n_pools=3, n_samples=1024, K_max=8192, n_chains=20000, curve_L=101,
                            curve_ds=[4, 8, 16], Ks=[2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048],
                            curve_pools=6, curve_samples=1024)}
    report_order = 96.5

    def points(self, s):
        pts = [{"kind": "k2", "L": int(L), "d": int(d)} for L, ds in zip(s.lengths, s.ds) for d in ds]
        return pts + [{"kind": "curve", "L": int(s.curve_L), "d": int(d)} for d in s.curve_ds]

    def compute(self, s, point):
        L, d = point["L"], point["d"]
        mom = _moments(int(s.n_chains))
        if point["kind"] == "k2":
            return self._k2(s, L, d, mom)
        Ks = np.array(s.Ks, dtype=np.int64)
        R = bn.random_projection(C, d, rng=(24, d, 0))
        est = [bn.information_mean(C, CONCENTRATION, int(K), R, L, n_pools=s.curve_pools, rng=(24, L, int(K)),
                                   n_samples=s.curve_samples) for K in Ks]
        ch = bt.channel(R, L, mom)
        out = {"bits": np.array([e.bits_mean for e in est]), "bits_se": np.array([e.bits_se for e in est]),
               "approx": bt.information_theory(Ks, ch), "closed": bt.information_theory(Ks, bt.projection_channel(
                   C, CONCENTRATION, d, L)), "capacity": np.array(ch.capacity_bits)}
        if d == max(s.curve_ds):
            U = bn.unigram_embedding(C, d, rng=(25, d, 0))
            uni = [bn.information_mean(C, CONCENTRATION, int(K), U, L, n_pools=s.curve_pools, rng=(24, L, int(K)),
                                       n_samples=s.curve_samples) for K in Ks]
            out["uni_bits"] = np.array([e.bits_mean for e in uni])
            out["uni_bits_se"] = np.array([e.bits_se for e in uni])
            out["uni_approx"] = bt.information_theory(Ks, bt.channel(U, L, mom))
        return out

    @staticmethod
    def _k2(s, L, d, mom):
        """Measured ``log₂ K₂*`` per (projection, pool), its approximation per projection, the closed form; the
        same for the unigram baseline (no closed form)."""
        out = {"closed": np.array(math.log2(bt.k2_theory(bt.projection_channel(C, CONCENTRATION, d, L))))}
        for tag, make, salt in (("", bn.random_projection, 24), ("uni_", bn.unigram_embedding, 25)):
            seeds, approx, cap = np.empty((s.n_proj, s.n_pools)), np.empty(s.n_proj), np.empty(s.n_proj)
            for j in range(s.n_proj):
                E = make(C, d, rng=(salt, d, j))
                try:
                    r = bn.k2(C, CONCENTRATION, E, L, n_pools=s.n_pools, rng=(24, L, j), n_samples=s.n_samples,
                              K_max=s.K_max)
                except ConvergenceError as err:
                    raise ConvergenceError(f"markov_bottleneck: d = {d}, L = {L}: {err}") from None
                seeds[j] = r.log2_k2_seeds
                ch = bt.channel(E, L, mom)
                approx[j], cap[j] = math.log2(bt.k2_theory(ch)), ch.capacity_bits
            out[f"{tag}seeds"], out[f"{tag}approx"], out[f"{tag}capacity"] = seeds, approx, cap
        return out

    def assemble(self, s, outputs):
        by = {(p["kind"], p["L"], p["d"]): out for p, out in zip(self.points(s), outputs)}
        k2 = {}
        for L, ds in zip(s.lengths, s.ds):
            rows = [by[("k2", L, d)] for d in ds]
            families = {}
            for tag, family in (("", "bigram"), ("uni_", "unigram")):
                seeds = np.array([r[f"{tag}seeds"] for r in rows])          # (n_d, n_proj, n_pools)
                approx = np.array([r[f"{tag}approx"] for r in rows])         # (n_d, n_proj)
                measured, measured_se = _nested_mean(seeds)
                diff, diff_se = _nested_mean(seeds - approx[:, :, None])
                families[family] = K2Estimates(
                    seeds=seeds, measured=measured, measured_se=measured_se, approx=approx.mean(axis=1), diff=diff,
                    diff_se=diff_se, capacity=np.array([r[f"{tag}capacity"] for r in rows]).mean(axis=1))
            k2[int(L)] = K2Scan(d=np.array(ds), closed=np.array([float(r["closed"]) for r in rows]), **families)
        curves, unigram = {}, None
        for d in s.curve_ds:
            out = by[("curve", s.curve_L, d)]
            curves[int(d)] = InformationCurve(bits=out["bits"], bits_se=out["bits_se"], approx=out["approx"],
                                              closed=out["closed"], capacity=out["capacity"])
            if "uni_bits" in out:
                unigram = InformationCurve(bits=out["uni_bits"], bits_se=out["uni_bits_se"],
                                           approx=out["uni_approx"], closed=None, capacity=None)
        data = MarkovBottleneckData(lengths=np.array(s.lengths), Ks=np.array(s.Ks), curve_ds=np.array(s.curve_ds),
                                    k2=k2, curves=curves, unigram_curve=unigram)
        meta = {"C": C, "concentration": CONCENTRATION, "gap_bits": 1.0, "baseline_d": int(max(s.curve_ds))}
        return data, meta

    def checks(self, r):
        d, s = r.data, r.settings
        sec, out = "markov", []
        par = f"C={C}, α={CONCENTRATION:g}, E = random projection"
        # 1. the deterministic approximation of I(K) against the estimate, every K, each curve d
        for dd in s["curve_ds"]:
            cur = d.curves[int(dd)]
            est, se, th = cur.bits, cur.bits_se, cur.approx
            dev = est - th
            i = int(np.argmax(np.abs(dev) - 4 * se))
            ok = bool(np.all(np.abs(dev) <= INFO_TOL_BITS + 4 * se))
            out.append(Check(sec, f"I(K) (bits) vs its deterministic approximation, d = {dd}: every K of "
                             f"{int(d.Ks[0])}…{int(d.Ks[-1])} (K closest to failing shown: {int(d.Ks[i])}; "
                             f"max |est − approx| = {np.max(np.abs(dev)):.2f} bits)",
                             f"{par}, L = {s['curve_L']}, {s['curve_pools']} pools × {s['curve_samples']} samples",
                             _fmt(th[i]), _fmt(est[i], se[i]), f"{dev[i]:+.2f} bits", ok,
                             f"|est − approx| ≤ {INFO_TOL_BITS} bits (the approximation's stated accuracy, "
                             "docs/markov_bottleneck.md) + 4 s.e. (over pools)"))
        # 2. the approximation's K2* is a lower bound of the measured one (paired over projections)
        for L in s["lengths"]:
            scan = d.k2[int(L)]
            ds, diff, dse = scan.d, scan.bigram.diff, scan.bigram.diff_se
            margin = np.minimum(diff + 4 * dse, K2_TOL + 4 * dse - diff)      # < 0: fails
            i = int(np.argmin(margin))
            ok = bool(np.all(margin >= 0))
            out.append(Check(sec, "approximation's log₂ K₂* ≤ measured (Jensen lower bound; gap 1 bit) and low by at "
                             f"most {K2_TOL:g}; measured − approx over d = {', '.join(str(int(x)) for x in ds)}: "
                             f"{', '.join(f'{x:+.2f}' for x in diff)} (d closest to failing shown: {int(ds[i])})",
                             f"{par}, L = {L}, {s['n_proj']} projections × {s['n_pools']} pools, "
                             f"{s['n_samples']} samples, prior from {s['n_chains']} chains",
                             _fmt(scan.bigram.approx[i]), _fmt(scan.bigram.measured[i], scan.bigram.measured_se[i]),
                             f"{diff[i]:+.2f} ± {dse[i]:.2f} in log₂", ok,
                             f"−4 s.e. ≤ measured − approx ≤ {K2_TOL:g} + 4 s.e. at every d (the lower bound; "
                             "the stated accuracy, docs/markov_bottleneck.md; paired: same projections, s.e. over "
                             "projections)"))
        # 3. the unigram baseline carries far less information at the same d
        dd = int(max(s["curve_ds"]))
        b, bse = d.curves[dd].bits[-1], d.curves[dd].bits_se[-1]
        u, use = d.unigram_curve.bits[-1], d.unigram_curve.bits_se[-1]
        gap, gse = b - u, math.hypot(bse, use)
        th_gap = d.curves[dd].approx[-1] - d.unigram_curve.approx[-1]
        K = int(d.Ks[-1])
        out.append(Check(sec, f"baseline rejected: a unigram-only embedding carries ≥ {BASELINE_BITS:g} bits less "
                         f"than the bigram projection at d = {dd}, K = {K} ({u:.2f} ± {use:.2f} vs {b:.2f} ± {bse:.2f} "
                         f"bits of log₂ K = {math.log2(K):g})",
                         f"{par}, L = {s['curve_L']}, {s['curve_pools']} pools × {s['curve_samples']} samples",
                         f"approx. gap {th_gap:.2f} bits", _fmt(gap, gse), f"{(gap - BASELINE_BITS) / gse:.0f} s.e. "
                         f"above {BASELINE_BITS:g} bits", bool(gap - BASELINE_BITS >= 4 * gse),
                         f"measured gap ≥ {BASELINE_BITS:g} bits + 4 s.e. (over pools)"))
        return out
