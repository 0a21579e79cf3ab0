"""Kernel learner vs feature learner (Gu, Xu & Zdeborová): which wins, from the theories, with simulated points.

Setting of every ``learners*`` experiment: ``D = 6``, noise-free labels, weight decay ``λ = 0.01``, two links —
``relu`` (``μ₁ = ½``: most of the signal linear in ``u``) and ``quad`` ``f(z) = z/2 + He₂(z)/√2`` (a strong degree-2
part, which the kernel learner's Hermite features can represent and the feature learner's linear attention cannot
see). Errors are in units of ``E_g(ŷ = 0) = V/2`` (``V`` the label variance).

* Theories (the fine grids): the kernel learner's :func:`replica.learner_theory` (random-scale law,
  ``2¹²`` contexts; with a pool, random pools) and the feature learner's
  :func:`replica.learner_theory` with ``learner="feature"`` (optimal readout of the ridge ``Γ``, finite-``D`` mixture,
  ``1024`` contexts; with a pool, the ridge ``Γ`` of the pool), both through :func:`kernel_theory` and
  :func:`feature_theory` of this module.
* Simulations (a sparse subset of cells): :func:`simulate_cell` trains ``n_sets`` independent training sets of both
  learners (:mod:`validation.simulators.learners`; the kernel learner's test errors are exact, the feature learner's
  are Monte Carlo) and reports mean ± s.e. over the sets (the Monte-Carlo error included).

Experiments: ``learners`` (the ``(P, N)`` diagram with fresh tasks, figure ``learners``, and the report section
``learners``, :class:`Learners`), ``learners_pools`` (the ``(P, K)`` diagram with task pools, ICL and IDG, figure
``learners_pools``); ``learners_scaling`` (:mod:`validation.experiments.learners_scaling`). Their presets carry ``D``
and ``λ`` (the figures read them from the result); the functions of this module take them as keywords, defaulting to
this setting.

Report section ``learners`` (the points ``check_*`` of :class:`Learners`, at ``N = check_N = 12``, a context length
of no figure's grid: the theories are judged at one ``N`` with more training sets than a figure cell has). Rows and
criteria (each error estimate stated):

* **Kernel learner** (exact test errors per training set, ridge solution): theory (random-scale law) vs the average
  over ``check_n_kernel`` training sets, train and test errors; passes when ``|theory − exact| ≤ E/M + 3 s.e.``
  (``M = F²`` parameters: the ``O(1/M)`` accuracy of a deterministic equivalent; s.e. of the average and of the
  theory's own sampling combined), as in ``docs/kernel_learner.md`` §7. Beside it: the deviation of the baseline
  (``law="mp"``, the linear-attention equivalence).
* **Feature learner, given the trained Γ**: the theory's optimal-readout error vs the exact (binned Monte Carlo,
  :func:`validation.simulators.learners.binned_readout_error`) optimal-readout error of each trained ``Γ``; tolerance
  ``3 s.e. + 2 %`` (2 %: the measured accuracy of the finite-``D`` mixture for a fixed ``Γ``, ≤ 1.2 % in
  ``docs/feature_learner.md`` §4, plus the overlap of the trained ``Γ`` with the ridge ``Γ``, 0.003 in ``r``). Beside
  it: the Gaussian formula (``law="gaussian"``).
* **Feature learner, trained** (its 5-knot readout): the theory (of the optimal readout) is a lower bound up to its
  own accuracy; passes when ``theory (1 − 2 %) − 3 s.e. ≤ sim ≤ theory (1 + 2 % + ε_r) + 3 s.e.``
  with ``ε_r = 10 %``, the excess of the trained 5-knot readout (weight decay included) over the exact optimal
  readout of its own ``Γ``, measured on training sets independent of this check's (``N = 12``, ``P = 2000``, 4 sets,
  seeds ``(1234, P, s)``: quad 5.1 ± 1.3 %, relu 3.0 ± 0.2 %; tanh 4.8–6.0 % at ``P = 500, 2000``,
  ``docs/learners.md``): the largest mean plus 3 s.e. of a 4-set mean is 9.1 %, rounded up. Beside it: the best
  linear readout's error.
* **Feature learner, memorisation** (``P = 100 < M``-ish; a known failure, marked as such): the simulated error exceeds
  the theory by more than 3 s.e. — the theory does not model the readout's fit on ``P`` training values of ``t``; the
  row passes when that known gap is present (it would flag a change if the gap closed).
"""
from __future__ import annotations

import numpy as np

import linattn
from linattn.kernel_learner import n_features
from linattn.links import Link
from linattn.numerics.stats import mean_se
from replica.feature_theory import feature_learner_theory
from replica.learner_theory import learner_theory

from ..simulators.learners import binned_readout_error, feature_learner, feature_test_error, kernel_learner
from .base import Check, Experiment

D, LAM = 6, 0.01
LINKS = {"relu": "relu", "quad": Link("z/2+He2/sqrt2", lambda z: 0.5 * z + (z * z - 1.0) / np.sqrt(2.0))}
#: contexts of the theories' own Monte Carlo (kernel: fresh tasks / per pool; feature: the readout mixture)
KERNEL_CONTEXTS, POOL_CONTEXTS, FEATURE_CONTEXTS = 2**12, 2**11, 1024
#: relative accuracy of the feature learner's theory given Γ, and the measured excess of the trained readout (report)
THEORY_ACCURACY, READOUT_EXCESS = 0.02, 0.10


def problem(link, N, K=None, D=D):
    """The problem of a cell: dimension ``D`` (default 6), noise-free, link ``link`` (a key of :data:`LINKS`), pool
    size ``K``."""
    return linattn.Problem(D, int(N), 0.0, link=LINKS[link], tasks=None if K is None else int(K))


def kernel_theory(pb, P, N_test=None, law="finite", n_pools=1, lam=LAM):
    """The kernel learner's theory at one cell (weight decay ``lam``, default 0.01): ``dict(test, test_se, test_idg,
    test_idg_se)`` (``test_idg`` NaN without a pool), from :func:`replica.learner_theory`."""
    n = KERNEL_CONTEXTS if pb.tasks is None else POOL_CONTEXTS
    th = learner_theory(pb, P, lam, learner="kernel", N_test=N_test, law=law, n_pools=n_pools,
                        n_contexts=None if law == "mp" else n)
    return _theory_dict(th)


def feature_theory(pb, P, N_test=None, law="finite", n_pools=1, lam=LAM):
    """The feature learner's theory at one cell, in the format of :func:`kernel_theory`, from
    :func:`replica.learner_theory` with ``learner="feature"`` (optimal readout; fresh tasks or ``n_pools`` pools)."""
    th = learner_theory(pb, P, lam, learner="feature", N_test=N_test, law=law, n_contexts=FEATURE_CONTEXTS,
                        n_pools=n_pools)
    return _theory_dict(th)


def _theory_dict(th):
    idg = getattr(th, "test_idg", None)
    idg_se = getattr(th, "test_idg_se", None)
    return dict(test=float(th.test), test_se=float(getattr(th, "test_se", 0.0) or 0.0),
                test_idg=np.nan if idg is None else float(idg), test_idg_se=np.nan if idg_se is None else float(idg_se))


def _mean_se(values, mc_se=None):
    """Mean over training sets and its s.e. (spread between sets, plus the Monte-Carlo error of each set)."""
    v = np.asarray(values, float)
    var = v.var(ddof=1) / v.size if v.size > 1 else 0.0
    if mc_se is not None:
        var += float(np.mean(np.asarray(mc_se, float) ** 2)) / v.size
    return float(v.mean()), float(np.sqrt(var))


def simulate_cell(pb, P, n_sets, seed, n_test, N_tests=(), max_steps=20_000, lam=LAM):
    """Train ``n_sets`` training sets of both learners at one cell (weight decay ``lam``, default 0.01; set ``r``
    seeded by ``(seed, r)``, the same training prompts' seed for both learners).

    Returns a dict of floats: ``kernel``, ``kernel_se``, ``feature``, ``feature_se`` (fresh-task errors); with a pool
    also ``kernel_idg``, ``feature_idg`` and their s.e.; for each ``n`` of ``N_tests`` the same at context length
    ``n`` (``kernel_N{n}``, …, the trained models evaluated without retraining); ``unconverged`` (feature runs that
    missed their tolerance).
    """
    runs_k, runs_f = [], []
    for r in range(n_sets):
        runs_k.append(kernel_learner(pb, P, lam, rng=(*seed, r)))
        runs_f.append(feature_learner(pb, P, lam, rng=(*seed, r), n_test=n_test, max_steps=max_steps))
    out = {"unconverged": float(sum(not f.converged for f in runs_f))}
    out["kernel"], out["kernel_se"] = _mean_se([k.test for k in runs_k])
    out["feature"], out["feature_se"] = _mean_se([f.test for f in runs_f], [f.test_se for f in runs_f])
    if pb.tasks is not None:
        out["kernel_idg"], out["kernel_idg_se"] = _mean_se([k.test_idg for k in runs_k])
        out["feature_idg"], out["feature_idg_se"] = _mean_se([f.test_idg for f in runs_f],
                                                             [f.test_idg_se for f in runs_f])
    from linattn.kernel_learner import kernel_test_error

    for n in N_tests:
        n = int(n)
        out[f"kernel_N{n}"], out[f"kernel_N{n}_se"] = _mean_se([kernel_test_error(pb, k.params["Gamma"], N_test=n)
                                                                for k in runs_k])
        ev = [feature_test_error(pb, f, N_test=n, n_test=n_test, rng=(*seed, r, n)) for r, f in enumerate(runs_f)]
        out[f"feature_N{n}"], out[f"feature_N{n}_se"] = _mean_se([e[0] for e in ev], [e[1] for e in ev])
    return out


def winner_agreement(log_ratio_theory, k, k_se, f, f_se):
    """Where the simulation resolves a winner, does it agree with the theory's?

    ``log_ratio_theory = ln(E_kernel/E_feature)`` of the theory; the simulated ratio's s.e. is
    ``√((s.e._k/E_k)² + (s.e._f/E_f)²)``. Returns ``(decided, agrees)``: ``decided`` where both the theory's and the
    simulation's ``|ln ratio|`` exceed 2 s.e. of the simulated ratio, ``agrees`` where their signs are equal.
    """
    sim = np.log(np.asarray(k) / np.asarray(f))
    se = np.hypot(np.asarray(k_se) / np.asarray(k), np.asarray(f_se) / np.asarray(f))
    decided = (np.abs(sim) > 2 * se) & (np.abs(log_ratio_theory) > 2 * se)
    return decided, np.sign(sim) == np.sign(log_ratio_theory)


class Learners(Experiment):
    """Which learner wins over ``(P, N)``, fresh tasks (module docstring): one theory point per ``(link, N)`` (every
    ``P`` of the grid), one simulation point per simulated cell ``(link, i_N, j_P)``; and the report section
    ``learners``: one point per ``(learner, link)`` at ``N = check_N`` (kinds ``check_kernel``, ``check_feature`` at
    ``check_P_feature`` and ``check_memo`` at ``check_P_memo``)."""

    name = "learners"
    title = "Kernel vs feature learner: which wins over (P, N), theory with simulated cells"
    presets = {mode: dict(D=D, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(P=[60, 300], N=[4, 16], sim=[[1, 1]], n_sets=2, n_test=2000,
                       check_N=12, check_P_kernel=300, check_n_kernel=3, check_P_feature=300, check_P_memo=60,
                       check_n_feature=2, check_n_test=2000, check_n_binned=20_000)),
        ("quick", dict(P=[100, 200, 400, 800, 1600, 3200, 6400], N=[4, 8, 16, 32, 64],
                       sim=[[0, 4], [2, 2], [2, 6], [4, 4]], n_sets=3, n_test=20_000,
                       check_N=12, check_P_kernel=1500, check_n_kernel=10, check_P_feature=2000, check_P_memo=100,
                       check_n_feature=4, check_n_test=50_000, check_n_binned=200_000)),
        ("full", dict(P=[50, 100, 200, 400, 800, 1600, 3200, 6400, 12800], N=[2, 4, 8, 16, 32, 64, 128],
                      sim=[[0, 4], [1, 2], [1, 6], [2, 3], [3, 1], [3, 5], [4, 2], [5, 4], [6, 0], [6, 6]],
                      n_sets=5, n_test=100_000,
                      check_N=12, check_P_kernel=1500, check_n_kernel=60, check_P_feature=2000, check_P_memo=100,
                      check_n_feature=12, check_n_test=200_000, check_n_binned=1_000_000)))}
    report_order = 62
    #: the kinds of the report's points
    CHECKS = ("check_kernel", "check_feature", "check_memo")

    def points(self, s):
        return ([dict(kind="theory", link=name, i=i) for name in LINKS for i in range(len(s.N))]
                + [dict(kind="sim", link=name, i=int(i), j=int(j)) for name in LINKS for i, j in s.sim]
                + [dict(kind=kind, link=name) for kind in self.CHECKS for name in LINKS])

    def compute(self, s, point):
        if point["kind"] in self.CHECKS:
            return self._check_point(s, point["kind"], point["link"])
        N = int(s.N[point["i"]])
        pb = problem(point["link"], N, D=s.D)
        if point["kind"] == "theory":
            k = [kernel_theory(pb, P, lam=s.lam) for P in s.P]
            f = [feature_theory(pb, P, lam=s.lam) for P in s.P]
            return {"kernel": np.array([x["test"] for x in k]), "kernel_se": np.array([x["test_se"] for x in k]),
                    "feature": np.array([x["test"] for x in f])}
        P = int(s.P[point["j"]])
        return simulate_cell(pb, P, s.n_sets, (N, P), s.n_test, lam=s.lam)

    @staticmethod
    def _check_point(s, kind, name):
        """One point of the report at ``N = check_N``: the kernel learner's training sets and theories, or the
        feature learner's at ``check_P_feature`` (with the binned optimal readout of each trained ``Γ``) or at
        ``check_P_memo``."""
        pb = problem(name, s.check_N, D=s.D)
        if kind == "check_kernel":
            P = s.check_P_kernel
            runs = [kernel_learner(pb, P, s.lam, rng=(62, P, r)) for r in range(s.check_n_kernel)]
            th = learner_theory(pb, P, s.lam, learner="kernel", n_contexts=2**14)
            mp = learner_theory(pb, P, s.lam, learner="kernel", law="mp")
            return {"test": np.array([r.test for r in runs]), "train": np.array([r.train for r in runs]),
                    "theory": np.array([th.test, th.train]), "theory_se": np.array([th.test_se, th.train_se]),
                    "mp": np.array([mp.test, mp.train])}
        P = s.check_P_feature if kind == "check_feature" else s.check_P_memo
        runs = [feature_learner(pb, P, s.lam, rng=(62, P, r), n_test=s.check_n_test) for r in range(s.check_n_feature)]
        out = {"test": np.array([r.test for r in runs]), "test_mc_se": np.array([r.test_se for r in runs]),
               "converged": np.array([r.converged for r in runs], float),
               "theory": np.array(feature_theory(pb, P, lam=s.lam)["test"]),
               "gaussian": np.array(feature_theory(pb, P, law="gaussian", lam=s.lam)["test"])}
        out["linear"] = np.array(feature_learner_theory(pb, P, s.lam, law="gaussian").test_linear)
        if kind == "check_feature":
            b = [binned_readout_error(pb, r.params["Gamma"], n=s.check_n_binned, bins=200, rng=(63, r_i))
                 for r_i, r in enumerate(runs)]
            out["optimal"] = np.array([x.test for x in b])
            out["optimal_mc_se"] = np.array([x.test_se for x in b])
        return out

    def assemble(self, s, outputs):
        P, N = np.array(s.P), np.array(s.N)
        data = {"P": P, "N": N, "sim_cells": np.array(s.sim, int).reshape(-1, 2)}
        unconverged = 0
        for name in LINKS:
            V2 = 0.5 * problem(name, N[0], D=s.D).label_variance
            data[f"{name}_V2"] = np.array(V2)
            for tag in ("kernel", "kernel_se", "feature"):
                data[f"{name}_theory_{tag}"] = np.zeros((N.size, P.size))
            for tag in ("kernel", "kernel_se", "feature", "feature_se"):
                data[f"{name}_sim_{tag}"] = np.zeros(len(s.sim))
        sims = {}
        for p, out in zip(self.points(s), outputs):
            if p["kind"] == "theory":
                for tag in ("kernel", "kernel_se", "feature"):
                    data[f"{p['link']}_theory_{tag}"][p["i"]] = out[tag]
            elif p["kind"] == "sim":
                sims.setdefault(p["link"], []).append(out)
            else:                                   # the report's points: check_<learner>_<link>_<quantity>
                for k, v in out.items():
                    data[f"{p['kind']}_{p['link']}_{k}"] = np.asarray(v)
        agree = decided = 0
        for name, outs in sims.items():
            for c, out in enumerate(outs):
                for tag in ("kernel", "kernel_se", "feature", "feature_se"):
                    data[f"{name}_sim_{tag}"][c] = out[tag]
                unconverged += int(out["unconverged"])
            i, j = data["sim_cells"][:, 0], data["sim_cells"][:, 1]
            lr = np.log(data[f"{name}_theory_kernel"][i, j] / data[f"{name}_theory_feature"][i, j])
            dec, agr = winner_agreement(lr, *(data[f"{name}_sim_{t}"] for t in ("kernel", "kernel_se", "feature",
                                                                                "feature_se")))
            data[f"{name}_decided"], data[f"{name}_agrees"] = dec, agr
            decided += int(dec.sum())
            agree += int((dec & agr).sum())
        data["unconverged"] = np.array(unconverged)
        return data, {"decided": decided, "agree": agree}

    def checks(self, r):
        s, d = r.settings, r.data
        rows = []
        M = n_features(s["D"], "hermite2") ** 2
        N, lam = s["check_N"], s["lam"]
        for name in LINKS:
            for k, what in enumerate(("test", "train")):
                v = d[f"check_kernel_{name}_{what}"]
                m, se = mean_se(v, single=np.nan)      # one training set: nan, the check fails
                th, th_se, mp = (float(d[f"check_kernel_{name}_{x}"][k]) for x in ("theory", "theory_se", "mp"))
                tol = m / M + 3 * float(np.hypot(se, th_se))
                rows.append(Check("learners", f"kernel learner theory, {what} error",
                                  f"link {name}, D={s['D']}, N={N}, P={s['check_P_kernel']}, λ={lam:g}, noise-free, "
                                  f"{v.size} training sets (exact errors)",
                                  f"{th:.4g} ± {th_se:.1g} (baseline mp {mp:.4g})", f"{m:.4g} ± {se:.2g}",
                                  f"{abs(th / m - 1):.2%} (mp {abs(mp / m - 1):.1%}, {abs(mp - m) / tol:.1f}× tol)",
                                  bool(abs(th - m) <= tol), f"≤ E/M + 3 s.e. (M = F² = {M}; exact and theory s.e.)"))
            v, mc = d[f"check_feature_{name}_test"], d[f"check_feature_{name}_test_mc_se"]
            m = float(v.mean())
            se = float(np.sqrt(v.var(ddof=1) / v.size + np.mean(mc**2) / v.size))
            th, ga, li = (float(d[f"check_feature_{name}_{x}"]) for x in ("theory", "gaussian", "linear"))
            o, omc = d[f"check_feature_{name}_optimal"], d[f"check_feature_{name}_optimal_mc_se"]
            om = float(o.mean())
            ose = float(np.sqrt(o.var(ddof=1) / o.size + np.mean(omc**2) / o.size))
            params = (f"link {name}, D={s['D']}, N={N}, P={s['check_P_feature']}, λ={lam:g}, {v.size} training sets "
                      f"({int(d[f'check_feature_{name}_converged'].sum())} converged)")
            rows.append(Check("learners", "feature learner theory: optimal readout of the trained Γ", params,
                              f"{th:.4g} (Gaussian {ga:.4g})", f"{om:.4g} ± {ose:.2g} (binned MC)",
                              f"{abs(th / om - 1):.2%} (Gaussian {abs(ga / om - 1):.1%})",
                              bool(abs(th - om) <= 3 * ose + THEORY_ACCURACY * th),
                              f"≤ 3 s.e. + {THEORY_ACCURACY:.0%} (the mixture's measured accuracy given Γ)"))
            lo, hi = th * (1 - THEORY_ACCURACY) - 3 * se, th * (1 + THEORY_ACCURACY + READOUT_EXCESS) + 3 * se
            rows.append(Check("learners", "feature learner theory vs the trained learner (5-knot readout)", params,
                              f"{th:.4g} (linear readout {li:.4g})", f"{m:.4g} ± {se:.2g}",
                              f"{m / th - 1:+.2%} (linear {m / li - 1:+.1%})", bool(lo <= m <= hi),
                              f"theory·(1 − {THEORY_ACCURACY:.0%}) − 3 s.e. ≤ sim ≤ theory·(1 + "
                              f"{THEORY_ACCURACY:.0%} + {READOUT_EXCESS:.0%}) + "
                              "3 s.e. (the readout's measured excess over the optimal one)"))
            v, mc = d[f"check_memo_{name}_test"], d[f"check_memo_{name}_test_mc_se"]
            m = float(v.mean())
            se = float(np.sqrt(v.var(ddof=1) / v.size + np.mean(mc**2) / v.size))
            th = float(d[f"check_memo_{name}_theory"])
            rows.append(Check("learners", "feature learner at small P: KNOWN FAILURE of the theory (readout fit "
                              "not modelled)", f"link {name}, D={s['D']}, N={N}, P={s['check_P_memo']}, {v.size} sets",
                              f"{th:.4g}", f"{m:.4g} ± {se:.2g}", f"{m / th - 1:+.1%}", bool(m > th + 3 * se),
                              "known failure present: sim > theory + 3 s.e."))
        return rows


class LearnersPools(Experiment):
    """Which learner wins over ``(P, K)`` with task pools at ``N = 16``, ICL and IDG (module docstring): the kernel
    learner's and the feature learner's pool theories on the grid (one point per ``(link, K)``), simulated cells for
    both."""

    name = "learners_pools"
    title = "Kernel vs feature learner with task pools: (P, K), ICL and IDG errors"
    presets = {mode: dict(D=D, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(P=[60, 300], K=[2, 12], N=8, sim=[[1, 1]], n_sets=2, n_test=2000, n_pools=1)),
        ("quick", dict(P=[250, 500, 1000, 2000, 4000], K=[2, 4, 6, 12, 24], N=16, sim=[[0, 2], [4, 2]], n_sets=3,
                       n_test=20_000, n_pools=1)),
        ("full", dict(P=[100, 250, 630, 1600, 4000, 10000], K=[1, 2, 4, 6, 12, 24, 96], N=16,
                      sim=[[0, 1], [1, 3], [2, 2], [3, 4], [4, 1], [5, 3], [6, 2], [6, 5]], n_sets=5,
                      n_test=100_000, n_pools=4)))}

    def points(self, s):
        return ([dict(kind="theory", link=name, i=i) for name in LINKS for i in range(len(s.K))]
                + [dict(kind="sim", link=name, i=int(i), j=int(j)) for name in LINKS for i, j in s.sim])

    def compute(self, s, point):
        K = int(s.K[point["i"]])
        pb = problem(point["link"], s.N, K, D=s.D)
        if point["kind"] == "theory":
            k = [kernel_theory(pb, P, n_pools=s.n_pools, lam=s.lam) for P in s.P]
            out = {f"kernel_{a}": np.array([x[a] for x in k]) for a in ("test", "test_se", "test_idg", "test_idg_se")}
            f = [feature_theory(pb, P, n_pools=s.n_pools, lam=s.lam) for P in s.P]
            out.update({f"feature_{a}": np.array([x[a] for x in f]) for a in ("test", "test_idg")})
            return out
        P = int(s.P[point["j"]])
        return simulate_cell(pb, P, s.n_sets, (K, P, s.N), s.n_test, lam=s.lam)

    def assemble(self, s, outputs):
        P, K = np.array(s.P), np.array(s.K)
        data = {"P": P, "K": K, "N": np.array(s.N), "sim_cells": np.array(s.sim, int).reshape(-1, 2)}
        sims = {}
        for p, out in zip(self.points(s), outputs):
            if p["kind"] == "theory":
                for tag, v in out.items():
                    data.setdefault(f"{p['link']}_theory_{tag}", np.zeros((K.size, P.size)))[p["i"]] = v
            else:
                sims.setdefault(p["link"], []).append(out)
        for name, outs in sims.items():
            data[f"{name}_V2"] = np.array(0.5 * problem(name, s.N, D=s.D).label_variance)
            for tag in ("kernel", "kernel_se", "feature", "feature_se", "kernel_idg", "kernel_idg_se", "feature_idg",
                        "feature_idg_se"):
                data[f"{name}_sim_{tag}"] = np.array([o[tag] for o in outs])
        return data, {}
