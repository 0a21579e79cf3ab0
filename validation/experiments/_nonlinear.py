"""Nonlinear single-index links ``y = f(w·x/√D)`` at ``D = 10``, ``N = 100`` (full model): stationary
errors, the memorization → generalization boundary, and the report section ``nonlinear``.

Two experiments:

* ``nonlinear_errors`` (figure ``nonlinear_errors`` and report section ``nonlinear``): stationary train and test
  errors against ``P`` (``β = 10³``, ``λ = 0.01``) for the links ``tanh``, ``relu``, ``sign`` and ``cubic``: exact
  dataset averages (one point per link and ``P``; dataset ``i`` uses ``rng = (81, P, i)``), and per link one
  point with the theory curves (the ``D → ∞`` nonlinearity–noise equivalence ``pb.surrogate()`` and
  the replica theory with the exact finite-``D`` label law), plus the linear link. Errors are stored
  in units of ``E_g(Γ = 0) = V/2`` (``V`` = label variance). The report's points (field ``checks``): per link,
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

from dataclasses import dataclass

import numpy as np

import dynamics
import linattn
import replica
import spectra
from linattn import _sampling as sampling
from linattn._numerics.stats import mean_se

from ..simulators._langevin import langevin
from ._base import Check, Experiment
from ._data import ExperimentData
from ._stationary import boundary_from_means

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


@dataclass(frozen=True, eq=False, repr=False)
class LinkErrors(ExperimentData):
    """Stationary errors of one link against ``P`` (units of ``E_g(Γ = 0) = V/2``).

    Attributes
    ----------
    train, train_se, test, test_se : ndarray (n_P,)
        Exact dataset averages (``n_datasets`` datasets, ``rng = (81, P, i)``) and their standard errors.
    surrogate_train, surrogate_test : ndarray (n_theory,)
        The ``D → ∞`` nonlinearity–noise equivalence (``pb.surrogate()``) on ``P_theory``.
    law_train, law_test : ndarray (n_theory,)
        The replica theory with the exact finite-``D`` label law.
    """

    train: np.ndarray
    train_se: np.ndarray
    test: np.ndarray
    test_se: np.ndarray
    surrogate_train: np.ndarray
    surrogate_test: np.ndarray
    law_train: np.ndarray
    law_test: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class LinkCheck(ExperimentData):
    """The report's points of one link (section ``nonlinear``; raw errors, not in units).

    Attributes
    ----------
    mc_exact : float
        Exact test error of ``0.8 Γ_ICL``.
    mc_mean, mc_se : float
        Its raw-token Monte Carlo and the s.e.
    mc_size : int
        Monte-Carlo prompts.
    tol : ndarray (n_check_P,)
        The theory's stated accuracy, ``1/M`` + the label law's largest moment error.
    theory_train, theory_test : ndarray (n_check_P,)
        The exact-law theory at ``check_P``.
    exact_train, exact_train_se, exact_test, exact_test_se : ndarray (n_check_P,)
        Exact dataset averages (``check_datasets`` datasets, ``rng = (103, P, i)``) and their standard errors.
    equivalence_train, equivalence_test : ndarray (n_check_P,)
        The equivalence there (the baseline).
    """

    mc_exact: float
    mc_mean: float
    mc_se: float
    mc_size: int
    tol: np.ndarray
    theory_train: np.ndarray
    theory_test: np.ndarray
    exact_train: np.ndarray
    exact_train_se: np.ndarray
    exact_test: np.ndarray
    exact_test_se: np.ndarray
    equivalence_train: np.ndarray
    equivalence_test: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class LangevinCheck(ExperimentData):
    """Langevin on a tanh-label dataset against its exact Gibbs average (report section ``nonlinear``).

    Attributes
    ----------
    test_mean : float
        Langevin estimate of ``⟨E_g⟩``.
    exact_test, test_se_exact : float
        The exact Gibbs average and the exact s.e. of the estimate.
    bias_test : float
        The exact ``O(dt)`` bias.
    """

    test_mean: float
    exact_test: float
    test_se_exact: float
    bias_test: float


@dataclass(frozen=True, eq=False, repr=False)
class NonlinearErrorsData(ExperimentData):
    """Data of ``nonlinear_errors`` (figure and report section ``nonlinear``).

    Attributes
    ----------
    P : ndarray (n_P,)
        ``P`` of the exact averages.
    P_theory : ndarray (n_theory,)
        ``P`` of the theory curves.
    linear_train, linear_test : ndarray (n_theory,)
        The replica theory of the linear link (units of ``E_g(Γ = 0)``).
    links : dict of str to LinkErrors
        Each link of :data:`LINKS`.
    checks : dict of str to LinkCheck
        The report's points of each link.
    langevin : LangevinCheck
    """

    P: np.ndarray
    P_theory: np.ndarray
    linear_train: np.ndarray
    linear_test: np.ndarray
    links: dict[str, LinkErrors]
    checks: dict[str, LinkCheck]
    langevin: LangevinCheck

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``{link}_{train,…}``, ``{link}_{surrogate,law}_{train,test}``, ``check_mc_*`` (one value per
        link), ``check_{quantity}`` (rows: links), ``check_langevin_*``."""
        out = dict(arrays)
        for i, name in enumerate(LINKS):
            for field in LinkErrors.__dataclass_fields__:
                out[f"links[{name}].{field}"] = out.pop(f"{name}_{field}")
            for k in ("exact", "mean", "se", "size"):
                out[f"checks[{name}].mc_{k}"] = np.asarray(out[f"check_mc_{k}"])[i]
            for k in _AVERAGE_KEYS:
                out[f"checks[{name}].{k}"] = np.asarray(out[f"check_{k}"])[i]
        for k in ("exact", "mean", "se", "size"):
            out.pop(f"check_mc_{k}")
        for k in _AVERAGE_KEYS:
            out.pop(f"check_{k}")
        for k in LangevinCheck.__dataclass_fields__:
            out[f"langevin.{k}"] = out.pop(f"check_langevin_{k}")
        return out


class NonlinearErrors(Experiment):
    """Stationary errors against ``P`` for four links: exact averages and two theories (the figure), and the report
    section ``nonlinear``: the exact test error against a Monte Carlo, the exact-law theory against dataset averages
    at ``check_P``, Langevin against exact Gibbs averages (module docstring)."""

    name = "nonlinear_errors"
    title = "Stationary errors vs P for nonlinear links: exact averages, D → ∞ equivalence, exact-law theory"
    data_class = NonlinearErrorsData
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
            a = replica.dataset_average(pb, point["P"], s.beta, s.lam, s.n_datasets, MODEL, rng=81, progress=False)
            return {"train": a.train_mean, "train_se": a.train_se, "test": a.test_mean, "test_se": a.test_se}
        P, Pt = self.grids(s)
        out = {"unit": pb.label_variance / 2}
        if point["link"] == "linear":
            cur = replica.stationary_curve(pb, Pt, s.beta, s.lam, MODEL, progress=False)
            return {**out, "train": cur.train, "test": cur.test}
        for tag, q in (("surrogate", pb.surrogate()), ("law", pb)):
            c = replica.stationary_curve(q, Pt, s.beta, s.lam, MODEL, progress=False)
            at = replica.stationary_curve(q, P.astype(float), s.beta, s.lam, MODEL, progress=False)
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
        avg = replica.dataset_average(pb, P, s.beta, s.lam, s.check_datasets, MODEL, rng=103, progress=False)
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
        rows, links = [], {}
        for name in LINKS:
            theory = out[name][None]
            unit = theory["unit"]
            sims = {q: np.array([out[name][int(p)][q] for p in P]) / unit for q in ("train", "train_se", "test",
                                                                                      "test_se")}
            links[name] = LinkErrors(**sims, **{f"{tag}_{q}": theory[f"{tag}_{q}"] / unit
                                                for tag in ("surrogate", "law") for q in ("train", "test")})
            for tag in ("surrogate", "law"):
                worst = {q: float(np.max(np.abs(theory[f"{tag}_at_P_{q}"] / unit / sims[q] - 1)))
                         for q in ("test", "train")}
                rows.append(dict(link=name, theory=tag, worst_test=worst["test"], worst_train=worst["train"]))
        mc = check["mc"][0]
        shape = (len(LINKS), len(s.check_P))
        averages = {k: np.array([o[k] for o in check["average"]], float).reshape(shape) for k in _AVERAGE_KEYS}
        checks = {name: LinkCheck(**{f"mc_{k}": mc[k][i] for k in ("exact", "mean", "se", "size")},
                                  **{k: v[i] for k, v in averages.items()}) for i, name in enumerate(LINKS)}
        data = NonlinearErrorsData(P=P, P_theory=Pt, linear_train=lin["train"] / lin["unit"],
                                   linear_test=lin["test"] / lin["unit"], links=links, checks=checks,
                                   langevin=LangevinCheck(**check["langevin"][0]))
        return data, {"rows": rows}

    def checks(self, r):
        s, d = r.settings, r.data
        where = f"D={s['D']}, N={s['N']}"
        rows = []
        for link in LINKS:
            c = d.checks[link]
            exact, mc, se = c.mc_exact, c.mc_mean, c.mc_se
            rows.append(Check("nonlinear", f"exact E_g(0.8 Γ_ICL), link {link}",
                              f"{where}, {c.mc_size} token-built prompts", _fmt(exact), _fmt(mc, se),
                              f"{mc / exact - 1:+.2%}", abs(mc - exact) <= 4 * se, "|Δ| ≤ 4 s.e."))
            tol = c.tol[0]
            worst, worst_eq, ok, row = -1.0, 0.0, True, None
            for j, P in enumerate(s["check_P"]):
                for name in ("train", "test"):
                    a, b = getattr(c, f"theory_{name}")[j], getattr(c, f"exact_{name}")[j]
                    se_, e = getattr(c, f"exact_{name}_se")[j], getattr(c, f"equivalence_{name}")[j]
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
        lg = d.langevin
        ok = abs(lg.test_mean - lg.exact_test) <= 3 * lg.test_se_exact + abs(lg.bias_test)
        rows.append(Check("nonlinear", "Langevin ⟨E_g⟩ on a tanh-label dataset",
                          f"{MODEL}, {where}, P={LANGEVIN_P}, β={s['beta']:g}, λ={s['lam']:g}, "
                          f"{s['langevin_chains']} chains",
                          _fmt(lg.exact_test),
                          _fmt(lg.test_mean, lg.test_se_exact),
                          f"{(lg.test_mean - lg.exact_test) / lg.exact_test:+.2%}", ok,
                          "|Δ| ≤ 3 exact s.e. + |dt bias| (exact Gibbs)"))
        return rows


def _theory_boundary(pb, lam, n_scan=80):
    """The theory's ``P*`` of ``pb`` at weight decay ``lam`` (``nan`` without a crossing)."""
    p = replica.phase_boundary(pb, np.inf, lam, model=MODEL, n_scan=n_scan)
    return np.nan if p is None else p


@dataclass(frozen=True, eq=False, repr=False)
class FamilyBoundary(ExperimentData):
    """``P*`` of a Hermite family ``f = z + a He_k/√(k!)`` against the amplitudes ``a``.

    Attributes
    ----------
    theory : ndarray (n_a,)
        The exact-law theory's ``P*`` (``nan``: no crossing).
    exact, exact_se : ndarray (n_a,)
        ``P*`` from dataset averages and its bootstrap standard error (``nan``: no crossing).
    """

    theory: np.ndarray
    exact: np.ndarray
    exact_se: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class NamedBoundary(ExperimentData):
    """``P*`` of a named link.

    Attributes
    ----------
    ratio : float
        Its effective noise-to-signal ratio ``(μ_*² + μ₀²)/μ₁²``.
    theory, equivalence : float
        ``P*`` of the exact-law theory and of its surrogate (``nan``: no crossing).
    exact, exact_se : float
        ``P*`` from dataset averages and its bootstrap standard error.
    """

    ratio: float
    theory: float
    equivalence: float
    exact: float
    exact_se: float


@dataclass(frozen=True, eq=False, repr=False)
class NonlinearBoundaryData(ExperimentData):
    """Data of ``nonlinear_boundary``: ``P*`` (``ΔEr = 5``, ``β = ∞``) against the noise-to-signal ratio.

    Attributes
    ----------
    amplitudes : ndarray (n_a,)
        Amplitudes ``a`` of the Hermite families (ratio ``a²``).
    ratio_line : ndarray (n_line,)
        Ratios of the equivalence line.
    Pstar_equivalence : ndarray (n_line,)
        ``P*`` of the linear link with noise ``σ² =`` the ratio.
    families : dict of int to FamilyBoundary
        By Hermite degree ``k``.
    named : dict of str to NamedBoundary
        By link name.
    """

    amplitudes: np.ndarray
    ratio_line: np.ndarray
    Pstar_equivalence: np.ndarray
    families: dict[int, FamilyBoundary]
    named: dict[str, NamedBoundary]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``Pstar_He{k}``, ``Pstar_He{k}_exact``, ``Pstar_He{k}_exact_se``, ``named`` (columns:
        ratio, theory, equivalence, exact), ``named_exact_se`` and ``named_links``."""
        out = dict(arrays)
        for k in settings["families"]:
            for field, old in (("theory", ""), ("exact", "_exact"), ("exact_se", "_exact_se")):
                out[f"families[{int(k)}].{field}"] = out.pop(f"Pstar_He{k}{old}")
        named, named_se = out.pop("named"), out.pop("named_exact_se")
        for name, row, se in zip(out.pop("named_links"), named, named_se):
            out.update({f"named[{name}].{f}": v for f, v in zip(("ratio", "theory", "equivalence", "exact"), row)})
            out[f"named[{name}].exact_se"] = se
        return out


class NonlinearBoundary(Experiment):
    """``P*`` against the link's effective noise-to-signal ratio (module docstring)."""

    name = "nonlinear_boundary"
    title = "Memorization → generalization boundary P* vs the link's noise-to-signal ratio"
    data_class = NonlinearBoundaryData
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
        families = {int(k): FamilyBoundary(**{f: np.array([float(o[f]) for o in by_kind[("family", k)]])
                                              for f in ("theory", "exact", "exact_se")}) for k in s.families}
        named = {str(n): NamedBoundary(*o["named"], exact_se=float(o["named_se"]))
                 for n, o in zip(s.named, by_kind[("named", None)])}
        data = NonlinearBoundaryData(
            amplitudes=np.array(s.amplitudes, float), ratio_line=self.ratio_line(s),
            Pstar_equivalence=np.array([float(o["Pstar"]) for o in by_kind[("equivalence", None)]]),
            families=families, named=named)
        rows = [dict(link=n, ratio=b.ratio, P_star_law=b.theory, P_star_equivalence=b.equivalence, P_star_exact=b.exact)
                for n, b in named.items()]
        return data, {"rows": rows}
