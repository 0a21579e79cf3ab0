"""Kernel learner vs feature learner (Gu, Xu & Zdeborová) over ``(P, N)``: experiment ``learners``
(figure ``learners``).

Two single-index links at ``D = 6``, noise-free, ``λ = 0.01``: ``relu`` and ``f(z) = z/2 + He₂(z)/√2``.
Per cell ``(link, N, P)`` (one point each): the Monte-Carlo test errors (in units of ``E_g(ŷ = 0)``)
of the kernel learner and the feature learner (:mod:`validation.simulators.learners`) averaged over
``n_datasets`` training sets (set ``r`` uses ``rng = (N, P, r)``), their standard errors, and at the
largest ``P`` linear attention (the library's reduced model, ``rng = (N, 0)``).
"""
from __future__ import annotations

import numpy as np

import linattn
from linattn.links import Link

from ..simulators.learners import feature_learner, kernel_learner
from .base import Experiment

D, LAM = 6, 0.01
LINKS = {"relu": "relu", "quad": Link("z/2+He2/sqrt2", lambda z: 0.5 * z + (z * z - 1.0) / np.sqrt(2.0))}


class Learners(Experiment):
    """Kernel vs feature learner: test errors per cell ``(link, N, P)`` (module docstring)."""

    name = "learners"
    title = "Kernel vs feature learner on nonlinear single-index tasks over (P, N)"
    #: quick: 3 training sets per cell, ≈ 45 s single-threaded (32 cells; the largest P and N cost most)
    presets = {"smoke": dict(P=[50, 200], N=[4, 16], n_datasets=2, n_test_kernel=500, n_test_feature=2000),
               "quick": dict(P=[100, 400, 1600, 6400], N=[4, 16, 64, 256], n_datasets=3, n_test_kernel=4000,
                             n_test_feature=20000),
               "full": dict(P=[50, 100, 200, 400, 800, 1600, 3200, 6400, 12800], N=[2, 4, 8, 16, 32, 64, 128, 256],
                            n_datasets=3, n_test_kernel=20000, n_test_feature=100000)}

    def points(self, s):
        return [dict(link=name, i=i, j=j) for name in LINKS for i in range(len(s.N)) for j in range(len(s.P))]

    def compute(self, s, point):
        N, P, last = int(s.N[point["i"]]), int(s.P[point["j"]]), point["j"] == len(s.P) - 1
        pb = linattn.Problem(D, N, 0.0, link=LINKS[point["link"]])
        ks, fs = [], []
        for r in range(s.n_datasets):
            seed = (N, P, r)
            ks.append(kernel_learner(pb, P, LAM, rng=seed, n_test=s.n_test_kernel))
            fs.append(feature_learner(pb, P, LAM, rng=seed, n_test=s.n_test_feature))
        out = {"unconverged": np.int64(sum(not f.converged for f in fs))}
        for tag, runs in (("kernel", ks), ("feature", fs)):
            vals = np.array([x.relative_test for x in runs])
            out[tag] = vals.mean()
            out[f"{tag}_se"] = np.sqrt(np.mean([(x.test_se / (0.5 * pb.label_variance)) ** 2 for x in runs]) / len(runs)
                                       + (vals.var(ddof=1) / len(runs) if len(runs) > 1 else 0.0))
        out["linear"] = kernel_learner(pb, P, LAM, rng=(N, 0), features="linear").relative_test if last else np.nan
        return out

    def assemble(self, s, outputs):
        P, N = np.array(s.P), np.array(s.N)
        data = {"P": P, "N": N}
        for name in LINKS:
            for tag in ("kernel", "feature", "kernel_se", "feature_se"):
                data[f"{name}_{tag}"] = np.zeros((N.size, P.size))
            data[f"{name}_linear"] = np.zeros(N.size)
        unconverged = 0
        for p, out in zip(self.points(s), outputs):
            name, i, j = p["link"], p["i"], p["j"]
            for tag in ("kernel", "feature", "kernel_se", "feature_se"):
                data[f"{name}_{tag}"][i, j] = out[tag]
            if j == P.size - 1:
                data[f"{name}_linear"][i] = out["linear"]
            unconverged += int(out["unconverged"])
        data["unconverged"] = np.array(unconverged)
        return data, {}
