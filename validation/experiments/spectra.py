"""Hessian spectra (seed paper, Fig. 1): exact rescaled-Hessian eigenvalues against the
Marchenko–Pastur and the finite-size random-scale laws.

Two experiments:

* ``spectra`` (figure ``fig1``): three independent datasets per ``α ∈ {0.5, 1, 2}`` at ``D = N = 100``
  and ``D = N = 20``; one point per dataset (an exact spectrum at ``M = 10⁴`` and ``α ≥ 1`` is a dense
  ``10⁴ × 10⁴`` eigenproblem, 1–2 minutes on two cores, so the quick mode uses one dataset there).
* ``spectra_check`` (report section ``spectra``): the Kolmogorov distance of the finite-size law to the
  pooled exact spectrum of several datasets at ``D = N = 20``.
"""
from __future__ import annotations

import numpy as np

import linattn
import spectra

from .base import Check, Experiment

ALPHAS = (0.5, 1.0, 2.0)


def _problem_P(D, alpha):
    return linattn.Problem(D, D), int(round(alpha * D * D))


class HessianSpectra(Experiment):
    """Exact spectra of independent datasets and both laws, per (size ``D = N``, ``α``)."""

    name = "spectra"
    title = "Rescaled-Hessian eigenvalues vs the Marchenko–Pastur and finite-size laws"
    presets = {"smoke": dict(sizes=[20], n_datasets=1, one_dataset_at_M_1e4=True, seed=0),
               "quick": dict(sizes=[100, 20], n_datasets=3, one_dataset_at_M_1e4=True, seed=0),
               "full": dict(sizes=[100, 20], n_datasets=3, one_dataset_at_M_1e4=False, seed=0)}

    def _count(self, s, D, alpha):
        return 1 if (s.one_dataset_at_M_1e4 and D * D >= 10_000 and alpha >= 1) else s.n_datasets

    def points(self, s):
        return [dict(D=D, alpha=a, i=i) for D in s.sizes for a in ALPHAS for i in range(self._count(s, D, a))]

    def compute(self, s, point):
        D, alpha, i = point["D"], point["alpha"], point["i"]
        pb, P = _problem_P(D, alpha)
        return {"eigenvalues": spectra.hessian_eigenvalues(pb.sample(P, rng=(s.seed, D, i, int(100 * alpha))), pb)}

    def assemble(self, s, outputs):
        data, rows = {}, []
        by_panel = {}
        for p, out in zip(self.points(s), outputs):
            by_panel.setdefault((p["D"], p["alpha"]), []).append(out["eigenvalues"])
        for (D, alpha), evs in by_panel.items():
            pb, P = _problem_P(D, alpha)
            pooled = np.concatenate(evs)
            x = np.linspace(1e-3, np.quantile(pooled, 0.999) * 1.05, 400)
            key = f"D{D}_a{alpha:g}"
            for i, e in enumerate(evs):
                data[f"eigenvalues_{key}_set{i}"] = e
            data[f"x_{key}"] = x
            for law in ("finite", "mp"):
                data[f"density_{law}_{key}"] = spectra.density(x, alpha, pb, law=law)
            rows.append(dict(D=D, N=D, alpha=alpha, P=P, atom=spectra.zero_atom(alpha),
                             ks_finite=[spectra.kolmogorov_distance(e, alpha, pb, "finite") for e in evs],
                             ks_mp=[spectra.kolmogorov_distance(e, alpha, pb, "mp") for e in evs],
                             ks_finite_pooled=spectra.kolmogorov_distance(pooled, alpha, pb, "finite"),
                             ks_mp_pooled=spectra.kolmogorov_distance(pooled, alpha, pb, "mp")))
        meta = {"rows": rows, "note": "histograms exclude exact zeros, normalised by all M eigenvalues"}
        return data, meta


class SpectraCheck(Experiment):
    """Report section ``spectra``: Kolmogorov distance of the finite-size law to pooled exact spectra."""

    name = "spectra_check"
    title = "Finite-size law vs exact spectra (Kolmogorov distance)"
    presets = {"smoke": dict(n_datasets=1, D=20), "quick": dict(n_datasets=10, D=20),
               "full": dict(n_datasets=30, D=20)}
    report_order = 10

    def points(self, s):
        return [dict(alpha=a) for a in ALPHAS]

    def compute(self, s, point):
        alpha = point["alpha"]
        pb = linattn.Problem(s.D, s.D)
        ev = np.concatenate([spectra.hessian_eigenvalues(pb.sample(int(alpha * s.D * s.D), rng=(31, i)), pb)
                             for i in range(s.n_datasets)])
        return {"ks": spectra.kolmogorov_distance(ev, alpha, pb), "ks_mp": spectra.kolmogorov_distance(ev, alpha, pb,
                                                                                                        law="mp")}

    def assemble(self, s, outputs):
        return {"alpha": np.array(ALPHAS), "ks": np.array([float(o["ks"]) for o in outputs]),
                "ks_mp": np.array([float(o["ks_mp"]) for o in outputs])}, {}

    def checks(self, r):
        s = r.settings
        return [Check("spectra", "Kolmogorov distance, finite-size law vs exact",
                      f"D=N={s['D']}, α={a:g}, {s['n_datasets']} datasets pooled", "law",
                      f"KS = {ks:.4f} (MP: {mp:.4f})", "—", ks <= 0.02, "KS ≤ 0.02")
                for a, ks, mp in zip(r.data["alpha"], r.data["ks"], r.data["ks_mp"])]
