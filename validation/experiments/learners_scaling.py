"""Context-length scalings of the kernel and the feature learner: experiment ``learners_scaling`` (figure of the
same name). Setting of :mod:`validation.experiments.learners` (``D = 6``, noise-free, ``λ = 0.01``, links ``relu``
and ``quad``), a fixed number of training prompts ``P``.

* **Train = test length**: each learner's test error against ``N`` (theory on a fine grid of ``N``); the exponent
  ``γ`` of ``E(N) − E_∞ ≈ A N^{−γ}`` fitted to the theory over ``N_fit`` (least squares in ``log N`` for the three
  parameters :func:`fit_power_law`), and simulated points (``n_sets`` training sets at ``sim_N`` and ``N_train``: 5
  context lengths in quick mode, 7 in full).
* **Train ≠ inference length**: the models trained at ``N_train`` evaluated at ``N_test`` (theory on a grid of
  ``N_test``; the same simulated training sets evaluated at ``sim_N_test`` — 5 lengths in quick mode, 7 in full —
  without retraining: exact for the kernel learner, Monte Carlo for the feature learner).

The feature learner's theory is the learner as trained (:func:`validation.experiments.learners.feature_theory`): its
readout is the one fitted at the training length, applied to the ``t`` of the test length, so ``N_test ≠ N`` is in
the theory (the optimal-readout theory it replaces was off at ``N_test < N``, ``docs/learners.md``).
"""
from __future__ import annotations

import numpy as np
from scipy import optimize

from .base import Experiment
from .learners import LAM, LINKS, D, feature_theory, kernel_theory, problem, simulate_cell


def fit_power_law(N, E):
    """Least-squares fit of ``E(N) = E_∞ + A N^{−γ}`` in ``log E`` (``E_∞ >= 0``, ``A > 0``, ``0 < γ < 4``).

    Parameters
    ----------
    N, E : array_like
        Context lengths and errors (at least 4 points, errors positive).

    Returns
    -------
    (float, float, float)
        ``(γ, E_∞, A)``.
    """
    N, E = np.asarray(N, float), np.asarray(E, float)

    def resid(p):
        gam, einf, loga = p
        return np.log(einf + np.exp(loga) * N ** (-gam)) - np.log(E)

    best = None
    for gam0 in (0.5, 1.0, 2.0):
        start = (gam0, 0.5 * float(E.min()), np.log(max(float(E[0] - 0.5 * E.min()), 1e-12)) + gam0 * np.log(N[0]))
        res = optimize.least_squares(resid, start, bounds=([1e-3, 0.0, -50.0], [4.0, float(E.min()), 50.0]))
        if best is None or res.cost < best.cost:
            best = res
    gam, einf, loga = best.x
    return float(gam), float(einf), float(np.exp(loga))


class LearnersScaling(Experiment):
    """Test error against ``N`` (train = test) and against ``N_test`` at ``N_train`` (module docstring): one theory
    point per ``(link, kind)``, one simulation point per ``(link, N)``."""

    name = "learners_scaling"
    title = "Kernel vs feature learner: context-length scaling (train = test length, and train ≠ test length)"
    presets = {mode: dict(D=D, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(P=300, N=[4, 8, 16, 32], N_fit=[4, 32], sim_N=[8], N_train=8, N_test=[4, 8, 16, 32],
                       sim_N_test=[4, 16], n_sets=2, n_test_prompts=2000)),
        ("quick", dict(P=1000, N=[4, 8, 16, 32, 64, 128], N_fit=[8, 128], sim_N=[4, 8, 32, 64], N_train=16,
                       N_test=[2, 4, 16, 64, 256], sim_N_test=[2, 4, 16, 64, 256], n_sets=3, n_test_prompts=20_000)),
        ("full", dict(P=1000, N=[2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256], N_fit=[8, 256],
                      sim_N=[2, 4, 8, 16, 32, 64, 128], N_train=16,
                      N_test=[2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512],
                      sim_N_test=[2, 4, 8, 32, 64, 128, 256], n_sets=5, n_test_prompts=100_000)))}

    def points(self, s):
        return ([dict(kind="theory_N", link=name) for name in LINKS]
                + [dict(kind="theory_Ntest", link=name) for name in LINKS]
                + [dict(kind="sim", link=name, N=int(N)) for name in LINKS
                   for N in sorted(set(s.sim_N) | {s.N_train})])

    def compute(self, s, point):
        name = point["link"]
        if point["kind"] == "theory_N":
            k = [kernel_theory(problem(name, N, D=s.D), s.P, lam=s.lam) for N in s.N]
            f = [feature_theory(problem(name, N, D=s.D), s.P, lam=s.lam) for N in s.N]
        elif point["kind"] == "theory_Ntest":
            pb = problem(name, s.N_train, D=s.D)
            k = [kernel_theory(pb, s.P, N_test=n, lam=s.lam) for n in s.N_test]
            f = [feature_theory(pb, s.P, N_test=n, lam=s.lam) for n in s.N_test]
        else:
            N = point["N"]
            return simulate_cell(problem(name, N, D=s.D), s.P, s.n_sets, (N, s.P, 7), s.n_test_prompts,
                                 N_tests=s.sim_N_test if N == s.N_train else (), lam=s.lam)
        return {"kernel": np.array([x["test"] for x in k]), "kernel_se": np.array([x["test_se"] for x in k]),
                "feature": np.array([x["test"] for x in f])}

    def assemble(self, s, outputs):
        data = {"P": np.array(s.P), "N": np.array(s.N), "N_test": np.array(s.N_test), "N_train": np.array(s.N_train),
                "sim_N": np.array(sorted(set(s.sim_N) | {s.N_train})), "sim_N_test": np.array(s.sim_N_test),
                "N_fit": np.array(s.N_fit)}
        meta, sims = {}, {}
        lo, hi = s.N_fit
        sel = (data["N"] >= lo) & (data["N"] <= hi)
        for p, out in zip(self.points(s), outputs):
            name = p["link"]
            if p["kind"] == "theory_N":
                for tag in ("kernel", "kernel_se", "feature"):
                    data[f"{name}_N_{tag}"] = out[tag]
                for learner in ("kernel", "feature"):
                    gam, einf, A = fit_power_law(data["N"][sel], out[learner][sel])
                    data[f"{name}_{learner}_fit"] = np.array([gam, einf, A])
                    meta[f"{name}_{learner}_gamma"] = gam
            elif p["kind"] == "theory_Ntest":
                for tag in ("kernel", "kernel_se", "feature"):
                    data[f"{name}_Ntest_{tag}"] = out[tag]
            else:
                sims[(name, p["N"])] = out
        for name in LINKS:
            data[f"{name}_V2"] = np.array(0.5 * problem(name, s.N_train, D=s.D).label_variance)
            for tag in ("kernel", "kernel_se", "feature", "feature_se", "unconverged"):
                data[f"{name}_sim_{tag}"] = np.array([sims[(name, int(N))][tag] for N in data["sim_N"]], float)
            own = sims[(name, int(s.N_train))]           # the N_test evaluations of the N_train sets
            for tag in ("kernel", "feature"):
                data[f"{name}_simtest_{tag}"] = np.array([own[f"{tag}_N{int(n)}"] for n in s.sim_N_test])
                data[f"{name}_simtest_{tag}_se"] = np.array([own[f"{tag}_N{int(n)}_se"] for n in s.sim_N_test])
        return data, meta
