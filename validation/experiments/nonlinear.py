"""Nonlinear single-index links ``y = f(w·x/√D)`` at ``D = 10``, ``N = 100`` (full model): stationary
errors, the memorization → generalization boundary, and the report section ``nonlinear``.

Two experiments:

* ``nonlinear_errors`` (figure ``nonlinear_errors`` and report section ``nonlinear``): stationary train and test
  errors against ``P`` (``β = 10³``, ``λ = 0.01``) for the links ``tanh``, ``relu``, ``sign`` and ``cubic``: exact
  dataset averages (one point per link and ``P``; dataset ``i`` uses ``rng = (81, P, i)``), and per link one
  point with the theory curves (the ``D → ∞`` nonlinearity–noise equivalence ``pb.surrogate()`` and
  the replica theory with the exact finite-``D`` label law), plus the linear link. Errors are stored
  in units of ``E_g(Γ = 0) = V/2`` (``V`` = label variance). The report's points (arrays ``check_*``): per link,
  the exact test error of ``0.8 Γ_ICL`` against a raw-token Monte Carlo, and the exact-law theory against exact
  dataset averages at ``check_P`` (``rng = (103, P, i)``, ``check_datasets`` datasets; one point per link and
  ``P``: more datasets per ``P`` than the figure's, so that the theory is judged at 1/M + law error); Langevin on a
  tanh-label dataset against its exact Gibbs averages (one point). The Monte Carlo of all links draws from ONE
  generator (``default_rng(101)``, links in turn), so it is one point.
* ``nonlinear_boundary`` (figure ``nonlinear_boundary``): ``P*`` (``ΔEr = 5``, ``λ = 0.01``,
  ``β = ∞``) against the effective noise-to-signal ratio ``(μ_*² + μ₀²)/μ₁²``: the equivalence line
  (one point per ratio), the two Hermite families ``f = z + a He_k/√(k!)`` (one point per ``(k, a)``:
  the exact-law theory and the exact boundary from dataset averages on a ``P`` grid around it, training
  sets ``rng = (91, P, j)``, with a bootstrap standard error over the training sets) and the named links (one
  point each).
"""
from __future__ import annotations

import numpy as np

import dynamics
import linattn
import replica
import spectra
from linattn import sampling
from linattn.numerics.stats import mean_se

from ..simulators.langevin import langevin
from .base import Check, Experiment
from .stationary import boundary_from_means

LINKS = ("tanh", "relu", "sign", "cubic")
#: the setting of both experiments (their presets carry D, N, β, λ: the figures read them from the result)
D, N, BETA, LAM, MODEL = 10, 100, 1e3, 0.01, "full"
#: prompts of the Langevin dataset of the report (tanh labels)
LANGEVIN_P = 100


def hermite_family(k, a):
    """The link ``f(z) = z + a He_k(z)/√(k!)`` (``μ₁ = 1``, ``μ_*² = a²`` for ``k >= 2``).

    Parameters
    ----------
    k : int
        Hermite degree (2 or 3 here).
    a : float
        Amplitude of the nonlinear part.

    Returns
    -------
    linattn.links.Link
    """
    he = linattn.links.as_link(f"hermite:{k}")
    return linattn.links.Link(f"z+{a:g}He{k}", lambda z: z + a * he(z))


def _problem(link, D, N):
    """The problem ``D``, ``N`` (noise-free) with ``link`` (``"linear"``: the library's default link)."""
    return linattn.Problem(D, N) if link == "linear" else linattn.Problem(D, N, link=link)


def _fmt(x, se=None, digits=4):
    """``x`` (± ``se``) as the report prints it."""
    return f"{x:.{digits}g}" if se is None else f"{x:.{digits}g} ± {se:.2g}"


#: quantities of a dataset-average point of the report (arrays ``check_<key>`` of shape (links, check_P))
_AVERAGE_KEYS = ("tol", "theory_train", "theory_test", "exact_train", "exact_train_se", "exact_test", "exact_test_se",
                 "equivalence_train", "equivalence_test")


class NonlinearErrors(Experiment):
    """Stationary errors against ``P`` for four links: exact averages and two theories (the figure), and the report
    section ``nonlinear``: the exact test error against a Monte Carlo, the exact-law theory against dataset averages
    at ``check_P``, Langevin against exact Gibbs averages (module docstring)."""

    name = "nonlinear_errors"
    title = "Stationary errors vs P for nonlinear links: exact averages, D → ∞ equivalence, exact-law theory"
    positive = ("beta",)
    presets = {mode: dict(D=D, N=N, beta=BETA, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(n_P=3, n_datasets=4, n_theory=5, check_datasets=3, check_P=[30], mc_prompts=2000,
                       langevin_chains=2)),
        ("quick", dict(n_P=6, n_datasets=30, n_theory=24, check_datasets=60, check_P=[30, 100, 300],
                       mc_prompts=40_000, langevin_chains=8)),
        ("full", dict(n_P=11, n_datasets=300, n_theory=24, check_datasets=200, check_P=[30, 100, 300],
                      mc_prompts=400_000, langevin_chains=32)))}
    report_order = 60

    @staticmethod
    def grids(s):
        """The ``P`` of the exact averages and of the theory curves.

        Parameters
        ----------
        s : Settings

        Returns
        -------
        tuple of ndarray
        """
        return np.unique(np.round(np.geomspace(10, 1000, s.n_P)).astype(int)), np.geomspace(10, 1000, s.n_theory)

    def points(self, s):
        P, _ = self.grids(s)
        return ([dict(link="linear")] + [dict(link=name) for name in LINKS]
                + [dict(link=name, P=int(p)) for name in LINKS for p in P]
                + [dict(check="mc")] + [dict(check="average", link=link, P=int(P)) for link in LINKS
                                        for P in s.check_P]
                + [dict(check="langevin")])

    def compute(self, s, point):
        if "check" in point:
            return self._check_point(s, point)
        pb = _problem(point["link"], s.D, s.N)
        if "P" in point:
            a = replica.dataset_average(pb, point["P"], s.beta, s.lam, s.n_datasets, MODEL, rng=81)
            return {"train": a.train_mean, "train_se": a.train_se, "test": a.test_mean, "test_se": a.test_se}
        P, Pt = self.grids(s)
        out = {"unit": pb.label_variance / 2}
        if point["link"] == "linear":
            cur = replica.stationary_curve(pb, Pt, s.beta, s.lam, MODEL)
            return {**out, "train": cur.train, "test": cur.test}
        for tag, q in (("surrogate", pb.surrogate()), ("law", pb)):
            c = replica.stationary_curve(q, Pt, s.beta, s.lam, MODEL)
            at = replica.stationary_curve(q, P.astype(float), s.beta, s.lam, MODEL)
            out.update({f"{tag}_train": c.train, f"{tag}_test": c.test, f"{tag}_at_P_train": at.train,
                        f"{tag}_at_P_test": at.test})
        return out

    def _check_point(self, s, point):
        """A point of the report: the Monte Carlo of every link, one dataset average, or the Langevin run."""
        if point["check"] == "mc":
            return self._monte_carlo(s)
        if point["check"] == "langevin":
            pb = linattn.Problem(s.D, s.N, 0.0, link="tanh")
            r = langevin(pb.sample(LANGEVIN_P, rng=(105, 1)), pb, s.beta, s.lam, n_chains=s.langevin_chains,
                         model=MODEL, rng=106)
            return {"test_mean": r.test_mean, "exact_test": r.exact_test, "test_se_exact": r.test_se_exact,
                    "bias_test": r.bias_test}
        pb, P = linattn.Problem(s.D, s.N, 0.0, link=point["link"]), point["P"]
        law = spectra.prompt_law(pb, MODEL)
        tol = 1.0 / pb.n_params(MODEL) + max(abs(v) for v in law.moment_errors.values())
        avg = replica.dataset_average(pb, P, s.beta, s.lam, s.check_datasets, MODEL, rng=103)
        th = replica.stationary(pb, P, s.beta, s.lam, MODEL)
        eq = replica.stationary(pb.surrogate(), P, s.beta, s.lam, MODEL)
        values = (tol, th.train, th.test, avg.train_mean, avg.train_se, avg.test_mean, avg.test_se, eq.train, eq.test)
        return dict(zip(_AVERAGE_KEYS, values))

    @staticmethod
    def _monte_carlo(s):
        """Exact ``E_g(0.8 Γ_ICL)`` and its raw-token Monte Carlo for every link, from one generator."""
        rng = np.random.default_rng(101)
        out = {k: np.zeros(len(LINKS)) for k in ("exact", "mean", "se")}
        out["size"] = np.zeros(len(LINKS), dtype=np.int64)
        for i, link in enumerate(LINKS):
            pb = linattn.Problem(s.D, s.N, 0.0, link=link)
            G = 0.8 * pb.icl_solution().Gamma
            loss = []
            for _ in range(max(1, s.mc_prompts // 20_000)):
                d = sampling.sample_tokens(pb, min(20_000, s.mc_prompts), rng).prompts()
                loss.append(0.5 * (d.yq - d.predict(G)) ** 2)
            loss = np.concatenate(loss)
            out["exact"][i], out["size"][i] = pb.test_error(G), loss.size
            out["mean"][i], out["se"][i] = mean_se(loss, single=np.nan)      # one prompt: nan
        return out

    def assemble(self, s, outputs):
        out, check = {}, {}
        for p, o in zip(self.points(s), outputs):
            if "check" in p:
                check.setdefault(p["check"], []).append(o)
            else:
                out.setdefault(p["link"], {})[p.get("P")] = o
        P, Pt = self.grids(s)
        lin = out["linear"][None]
        data = {"P": P, "P_theory": Pt, "linear_train": lin["train"] / lin["unit"],
                "linear_test": lin["test"] / lin["unit"]}
        rows = []
        for name in LINKS:
            theory = out[name][None]
            unit = theory["unit"]
            for q in ("train", "train_se", "test", "test_se"):
                data[f"{name}_{q}"] = np.array([out[name][int(p)][q] for p in P]) / unit
            for tag in ("surrogate", "law"):
                data[f"{name}_{tag}_train"], data[f"{name}_{tag}_test"] = (theory[f"{tag}_train"] / unit,
                                                                           theory[f"{tag}_test"] / unit)
            for tag in ("surrogate", "law"):
                worst = {q: float(np.max(np.abs(theory[f"{tag}_at_P_{q}"] / unit / data[f"{name}_{q}"] - 1)))
                         for q in ("test", "train")}
                rows.append(dict(link=name, theory=tag, worst_test=worst["test"], worst_train=worst["train"]))
        data.update({f"check_mc_{k}": v for k, v in check["mc"][0].items()})
        data.update({f"check_langevin_{k}": v for k, v in check["langevin"][0].items()})
        shape = (len(LINKS), len(s.check_P))
        data.update({f"check_{k}": np.array([o[k] for o in check["average"]], float).reshape(shape)
                     for k in _AVERAGE_KEYS})
        return data, {"rows": rows}

    def checks(self, r):
        s, d = r.settings, r.data
        where = f"D={s['D']}, N={s['N']}"
        rows = []
        for i, link in enumerate(LINKS):
            exact, mc, se = d["check_mc_exact"][i], d["check_mc_mean"][i], d["check_mc_se"][i]
            rows.append(Check("nonlinear", f"exact E_g(0.8 Γ_ICL), link {link}",
                              f"{where}, {d['check_mc_size'][i]} token-built prompts", _fmt(exact), _fmt(mc, se),
                              f"{mc / exact - 1:+.2%}", abs(mc - exact) <= 4 * se, "|Δ| ≤ 4 s.e."))
            tol = d["check_tol"][i, 0]
            worst, worst_eq, ok, row = -1.0, 0.0, True, None
            for j, P in enumerate(s["check_P"]):
                for name in ("train", "test"):
                    a, b = d[f"check_theory_{name}"][i, j], d[f"check_exact_{name}"][i, j]
                    se_, e = d[f"check_exact_{name}_se"][i, j], d[f"check_equivalence_{name}"][i, j]
                    ok = ok and abs(a - b) <= tol * abs(b) + 3 * se_
                    worst_eq = max(worst_eq, abs(e / b - 1))
                    if abs(a / b - 1) > worst:
                        worst, row = abs(a / b - 1), (name, P, a, b, se_)
            name, P, a, b, se_ = row
            rows.append(Check("nonlinear", f"stationary {name} error (worst P), link {link}",
                              f"{MODEL}, {where}, β={s['beta']:g}, λ={s['lam']:g}, P∈{list(s['check_P'])}, "
                              f"{s['check_datasets']} datasets",
                              _fmt(a), _fmt(b, se_), f"{worst:.2%} (equivalence worst {worst_eq:.1%})", ok,
                              f"exact-law theory within 1/M + law error ({tol:.2%}) + 3 s.e. at every P"))
        lg = {k[len("check_langevin_"):]: v for k, v in d.items() if k.startswith("check_langevin_")}
        ok = abs(lg["test_mean"] - lg["exact_test"]) <= 3 * lg["test_se_exact"] + abs(lg["bias_test"])
        rows.append(Check("nonlinear", "Langevin ⟨E_g⟩ on a tanh-label dataset",
                          f"{MODEL}, {where}, P={LANGEVIN_P}, β={s['beta']:g}, λ={s['lam']:g}, "
                          f"{s['langevin_chains']} chains",
                          _fmt(lg["exact_test"]),
                          _fmt(lg["test_mean"], lg["test_se_exact"]),
                          f"{(lg['test_mean'] - lg['exact_test']) / lg['exact_test']:+.2%}", ok,
                          "|Δ| ≤ 3 exact s.e. + |dt bias| (exact Gibbs)"))
        return rows


def _theory_boundary(pb, lam, n_scan=80):
    """The theory's ``P*`` of ``pb`` at weight decay ``lam`` (``nan`` without a crossing)."""
    p = replica.phase_boundary(pb, np.inf, lam, model=MODEL, n_scan=n_scan)
    return np.nan if p is None else p


class NonlinearBoundary(Experiment):
    """``P*`` against the link's effective noise-to-signal ratio (module docstring)."""

    name = "nonlinear_boundary"
    title = "Memorization → generalization boundary P* vs the link's noise-to-signal ratio"
    presets = {mode: dict(D=D, N=N, lam=LAM, **rest) for mode, rest in (
        ("smoke", dict(amplitudes=[0.0, 1.0], n_grid=3, n_boundary=3, families=[3], named=["sign"], n_scan=12)),
        ("quick", dict(amplitudes=[0.0, 0.7, 1.5], n_grid=7, n_boundary=20, families=[2, 3], named=list(LINKS),
                       n_scan=80)),
        ("full", dict(amplitudes=[0.0, 0.2, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0], n_grid=13, n_boundary=100,
                      families=[2, 3], named=list(LINKS), n_scan=80)))}

    @staticmethod
    def ratio_line(s):
        """The noise-to-signal ratios of the equivalence line.

        Parameters
        ----------
        s : Settings

        Returns
        -------
        ndarray
        """
        amps = np.array(s.amplitudes, float)
        return np.geomspace(1e-3, max(amps.max() ** 2, 1e-2) * 1.5, 12 if s.n_scan >= 80 else 4)

    def points(self, s):
        return ([dict(kind="equivalence", i=i) for i in range(self.ratio_line(s).size)]
                + [dict(kind="family", k=int(k), i=i) for k in s.families for i in range(len(s.amplitudes))]
                + [dict(kind="named", link=name) for name in s.named])

    def _exact(self, s, pb, guess, n_boot=200):
        """The boundary from dataset averages on a ``P`` grid around ``guess`` and its bootstrap standard error
        (training sets resampled with replacement at every ``P``, ``n_boot`` times); ``nan`` without one."""
        if not np.isfinite(guess):
            return np.nan, np.nan
        grid = np.unique(np.round(np.geomspace(max(guess / 2.5, 2.0), guess * 2.5, s.n_grid)).astype(int))
        sw = dynamics.gap_sweep(pb, grid, s.lam, s.n_boundary, MODEL, rng=91)
        b = boundary_from_means(sw.P, sw.train_mean, sw.test_mean)
        if b is None:
            return np.nan, np.nan
        rng = np.random.default_rng(92)
        train, test = np.asarray(sw.train_all), np.asarray(sw.test_all)
        boot = []
        for _ in range(n_boot):
            idx = rng.integers(0, train.shape[1], size=train.shape)
            bb = boundary_from_means(sw.P, np.take_along_axis(train, idx, 1).mean(1),
                                     np.take_along_axis(test, idx, 1).mean(1))
            if bb is not None:
                boot.append(bb)
        return b, (np.std(boot, ddof=1) if len(boot) > 1 else np.nan)

    def compute(self, s, point):
        if point["kind"] == "equivalence":
            r = self.ratio_line(s)[point["i"]]
            return {"Pstar": _theory_boundary(linattn.Problem(s.D, s.N, float(np.sqrt(r))), s.lam, s.n_scan)}
        if point["kind"] == "family":
            a = np.array(s.amplitudes, float)[point["i"]]
            pb = linattn.Problem(s.D, s.N, link=hermite_family(point["k"], a)) if a > 0 else linattn.Problem(s.D, s.N)
            guess = _theory_boundary(pb, s.lam, s.n_scan)
            exact, se = self._exact(s, pb, guess)
            return {"theory": guess, "exact": exact, "exact_se": se}
        pb = linattn.Problem(s.D, s.N, link=point["link"])
        mu0, mu1, mu2 = pb.hermite
        guess = _theory_boundary(pb, s.lam, s.n_scan)
        exact, se = self._exact(s, pb, guess)
        equivalence = _theory_boundary(pb.surrogate(), s.lam, s.n_scan)
        return {"named": np.array([(mu2 + mu0**2) / mu1**2, guess, equivalence, exact]), "named_se": se}

    def assemble(self, s, outputs):
        pts = self.points(s)
        by_kind = {}
        for p, o in zip(pts, outputs):
            by_kind.setdefault((p["kind"], p.get("k")), []).append(o)
        data = {"amplitudes": np.array(s.amplitudes, float), "ratio_line": self.ratio_line(s),
                "Pstar_equivalence": np.array([float(o["Pstar"]) for o in by_kind[("equivalence", None)]])}
        for k in s.families:
            fam = by_kind[("family", k)]
            data[f"Pstar_He{k}"] = np.array([float(o["theory"]) for o in fam])
            data[f"Pstar_He{k}_exact"] = np.array([float(o["exact"]) for o in fam])
            data[f"Pstar_He{k}_exact_se"] = np.array([float(o["exact_se"]) for o in fam])
        data["named"] = np.array([o["named"] for o in by_kind[("named", None)]])
        data["named_exact_se"] = np.array([float(o["named_se"]) for o in by_kind[("named", None)]])
        data["named_links"] = np.array(s.named)
        rows = [dict(link=str(n), ratio=float(r), P_star_law=float(t), P_star_equivalence=float(e),
                     P_star_exact=float(x)) for n, (r, t, e, x) in zip(data["named_links"], data["named"])]
        return data, {"rows": rows}
