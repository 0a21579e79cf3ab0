"""Factorized attention (Mainali & Teixeira, seed ``000/004``; Zhang, Singh, Latham & Saxe 2025): the
experiments of the figures ``staged``, ``saddles`` and ``factorized_gap``, which also give the report section
``factorized`` (the library functions are in :mod:`validation.experiments.staged`).

* ``staged``: one point for the figure — :func:`~validation.experiments.staged.staged_run` draws its SGD
  chains and its random start from one seed — and one for the report's escape times (a spectrum of its own,
  ``check_spectrum``, ``rng=11``: the tolerance's discretisation term ``ηb·t½`` was set for it, not for the figure's
  longer spectrum).
* ``saddles``: one point per model (separate key/query heads, merged head); each seeds its own start and SGD. The
  report's SGD plateaus and the merged head's final error read these points; one more point per exact flow from a
  random start (``saddle_starts`` of them), and the saddles' stationarity is computed in :meth:`Saddles.assemble`.
* ``factorized_gap``: one point per dataset ``(P, r)`` (``rng=(3, P, r)``), and the report's two Langevin runs
  against exact Gibbs averages (merged kernel and ``Γ = PQ`` on one dataset ``D = 3``, ``N = 6``, ``P = 40``: a
  setting no figure has; this figure is the closest, the merged and the product parametrization on finite data).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

import dynamics
import linattn
from linattn._numerics.stats import mean_se

from ._base import Check, Experiment
from ._data import ExperimentData
from ._staged_runs import (
    SADDLE_MODELS,
    GibbsComparison,
    gap_arrays,
    gap_one,
    gibbs_comparison,
    noise_free_problem,
    saddle_run,
    staged_run,
)

#: input eigenvalues of Zhang, Singh, Latham & Saxe (2025)
ZHANG_SPECTRUM = (0.4, 0.3, 0.2, 0.1)


def _fmt(x, se=None, digits=4):
    """``x`` (± ``se``) with ``digits`` significant digits (the report's format)."""
    return f"{x:.{digits}g}" if se is None else f"{x:.{digits}g} ± {se:.2g}"


def _a_inf(pb):
    return dynamics.mode_constants(pb).a_inf


def _saddle_point(spectrum, N, tag, t_max, step, batch, n_chains, seed):
    """Outputs of model ``tag`` of the saddle experiment (start scale 0.3): record times, exact and SGD test error."""
    pb = noise_free_problem(spectrum, N)
    run, ode = saddle_run(pb, tag, t_max=t_max, lr=step, batch=batch, n_chains=n_chains, rng=seed)
    return {"times": run.steps * step, "ode": ode, "sgd": run.test}


@dataclass(frozen=True, eq=False, repr=False)
class EscapeCheck(ExperimentData):
    """The escape times of report section ``factorized`` (a spectrum of its own, ``rng=11``).

    Attributes
    ----------
    spectrum : ndarray (D,)
        Input eigenvalues ``s_α`` (the setting ``check_spectrum``).
    b : ndarray (D,)
        The logistic rates' constants ``b_α`` (:func:`dynamics.mode_constants`).
    t_half : ndarray (D,)
        Closed-form half-rise times.
    t_half_sgd : ndarray (n_chains, D)
        Half-rise times of each online-SGD chain.
    """

    spectrum: np.ndarray
    b: np.ndarray
    t_half: np.ndarray
    t_half_sgd: np.ndarray


@dataclass(frozen=True, eq=False, repr=False)
class StagedData(ExperimentData):
    """Data of ``staged``: staged learning of ``Γ = PQ``, closed form vs exact ODE vs online SGD.

    Attributes
    ----------
    times : ndarray (T,)
        Record times (SGD step × η).
    spectrum : ndarray (D,)
        Input eigenvalues ``s_α``.
    closed_modes : ndarray (T, D)
        Mode amplitudes ``a_α(t)`` of the closed-form logistic law (balanced aligned start ``a⁰``).
    closed_test : ndarray (T,)
        Its exact test error.
    ode_random_modes, ode_random_test : ndarray (T, D), (T,)
        The exact ODE from a random start of the same size.
    sgd_modes, sgd_test : ndarray (n_chains, T, D), (n_chains, T)
        Online SGD, per chain.
    t_half : ndarray (D,)
        Closed-form half-rise times ``ln[(a^∞ − a⁰)/a⁰]/(2b_α)``.
    t_half_sgd : ndarray (n_chains, D)
        Half-rise times of each SGD chain.
    t_half_random : ndarray (D,)
        Half-rise times of the random start.
    a_inf : ndarray (D,)
        Final amplitudes ``a^∞_α``.
    check : EscapeCheck
        The report's escape times.
    """

    times: np.ndarray
    spectrum: np.ndarray
    closed_modes: np.ndarray
    closed_test: np.ndarray
    ode_random_modes: np.ndarray
    ode_random_test: np.ndarray
    sgd_modes: np.ndarray
    sgd_test: np.ndarray
    t_half: np.ndarray
    t_half_sgd: np.ndarray
    t_half_random: np.ndarray
    a_inf: np.ndarray
    check: EscapeCheck

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: the same names, the check's as ``check_{spectrum,b,t_half,t_half_sgd}``."""
        return {("check." + k[len("check_"):] if k.startswith("check_") else k): v for k, v in arrays.items()}


class Staged(Experiment):
    """Staged learning of ``Γ = PQ``: closed form vs exact ODE vs online SGD (figure ``staged``), and the escape times
    of the report section ``factorized`` (its first rows)."""

    name = "staged"
    title = "Staged learning of value × key-query attention on an anisotropic spectrum"
    data_class = StagedData
    presets = {"smoke": dict(spectrum=np.geomspace(1.0, 0.5, 3).tolist(), N=15, n_chains=2, batch=32, seed=1,
                             check_spectrum=[1.0, 0.7], check_N=31, check_chains=3, check_batch=16),
               "quick": dict(spectrum=np.geomspace(1.0, 0.2, 6).tolist(), N=31, n_chains=4, batch=128, seed=1,
                             check_spectrum=[1.0, 0.6, 0.35, 0.2], check_N=31, check_chains=4, check_batch=128),
               "full": dict(spectrum=np.geomspace(1.0, 0.1, 8).tolist(), N=31, n_chains=8, batch=256, seed=1,
                            check_spectrum=[1.0, 0.7, 0.5, 0.35, 0.25, 0.18, 0.125, 0.09], check_N=31,
                            check_chains=16, check_batch=256)}
    report_order = 70
    STEP, RECORD = 0.05, 50            # the SGD step and record interval (defaults of staged_run)

    def points(self, s):
        return [dict(kind="figure"), dict(kind="check")]

    def compute(self, s, point):
        if point["kind"] == "check":
            ex = staged_run(s.check_spectrum, s.check_N, n_chains=s.check_chains, batch=s.check_batch, rng=11)
            return {"spectrum": ex.problem.covariance.spectrum, "b": dynamics.mode_constants(ex.problem).b,
                    "t_half": ex.t_half, "t_half_sgd": ex.t_half_sgd}
        ex = staged_run(s.spectrum, s.N, n_chains=s.n_chains, batch=s.batch, rng=s.seed)
        return dict(times=ex.times, spectrum=ex.problem.covariance.spectrum, closed_modes=ex.closed_modes,
                    closed_test=ex.closed_test, ode_random_modes=ex.ode_random_modes,
                    ode_random_test=ex.ode_random_test, sgd_modes=ex.sgd.modes, sgd_test=ex.sgd.test,
                    t_half=ex.t_half, t_half_sgd=ex.t_half_sgd, t_half_random=ex.t_half_random,
                    a_inf=_a_inf(ex.problem), a0=ex.a0)

    def assemble(self, s, outputs):
        figure = dict(outputs[0])
        a0 = float(figure.pop("a0"))
        return StagedData(**figure, check=EscapeCheck(**outputs[1])), {"N": s.N, "a0": a0}

    def checks(self, r):
        s, c = r.settings, r.data.check
        D, chains, batch = len(c.spectrum), s["check_chains"], s["check_batch"]
        out = []
        step, rec = self.STEP, self.RECORD
        for k, sk in enumerate(c.spectrum):
            m, sd = mean_se(c.t_half_sgd[:, k], single=np.nan)
            t_half = c.t_half[k]
            tol = 4 * sd + step * c.b[k] * t_half + rec * step
            out.append(Check("factorized", f"escape time t_1/2, mode s={sk:.2f}", f"Γ=PQ, D={D}, N={s['check_N']}, "
                             f"a0=1e-3, online SGD η={step}, batch {batch}, {chains} chains", _fmt(t_half), _fmt(m, sd),
                             f"{m / t_half - 1:+.2%}", abs(m - t_half) <= tol,
                             "|Δ| ≤ 4 s.e. + ηb·t½ (discretisation) + one record"))
        return out


@dataclass(frozen=True, eq=False, repr=False)
class SaddlesData(ExperimentData):
    """Data of ``saddles``: separate key/query heads vs one merged head (figure ``saddles`` and report rows).

    Attributes
    ----------
    times : ndarray (T,)
        Record times (SGD step × η).
    saddle_losses : ndarray (D + 1,)
        The losses of the saddles ``M_0 … M_D`` (:func:`dynamics.saddle_losses`, Zhang et al. Eq. 19).
    ode_separate, ode_merged : ndarray (T,)
        Test error of the exact population ODE, separate heads and merged head (start scale 0.3).
    sgd_separate, sgd_merged : ndarray (n_chains, T)
        Online SGD, per chain.
    optimum_test : float
        ``E_g(Γ_*)`` of the preconditioned estimator (the merged head's limit).
    saddle_point_loss : ndarray (D − 1,)
        ``E_g`` at the saddles ``M_1 … M_{D−1}`` of separate heads, built explicitly.
    saddle_point_gradient : ndarray (D − 1,)
        The largest gradient component there (0 at a fixed point).
    flow_closest : ndarray (D − 1,)
        The largest over the exact flows from random starts of their closest relative distance to each saddle loss.
    """

    times: np.ndarray
    saddle_losses: np.ndarray
    ode_separate: np.ndarray
    ode_merged: np.ndarray
    sgd_separate: np.ndarray
    sgd_merged: np.ndarray
    optimum_test: float
    saddle_point_loss: np.ndarray
    saddle_point_gradient: np.ndarray
    flow_closest: np.ndarray

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: ``saddles``, ``icl_test``, ``saddle_loss``, ``saddle_grad``, ``saddle_closest`` (the others
        as now)."""
        renames = {"saddles": "saddle_losses", "icl_test": "optimum_test", "saddle_loss": "saddle_point_loss",
                   "saddle_grad": "saddle_point_gradient", "saddle_closest": "flow_closest"}
        return {renames.get(k, k): v for k, v in arrays.items()}


class Saddles(Experiment):
    """Separate key/query heads vs one merged head: exact ODE and online SGD (figure ``saddles``), and the report's
    saddle rows (section ``factorized``): the SGD plateaus and the merged head's final error from the figure's runs,
    the saddles' loss and stationarity, and exact flows from ``saddle_starts`` random starts of scale
    ``saddle_scale`` (``saddle_points`` log-spaced times)."""

    name = "saddles"
    title = "Separate key/query heads learn saddle to saddle; a merged head drops once"
    data_class = SaddlesData
    positive = ("step", "saddle_scale")
    _common = dict(spectrum=list(ZHANG_SPECTRUM), N=31, seed=0)
    presets = {"smoke": dict(t_max=300.0, n_chains=2, batch=32, step=0.2, saddle_starts=1, saddle_scale=0.1,
                             saddle_points=800, **_common),
               "quick": dict(t_max=8000.0, n_chains=4, batch=128, step=0.25, saddle_starts=2, saddle_scale=0.02,
                             saddle_points=4000, **_common),
               "full": dict(t_max=8000.0, n_chains=8, batch=256, step=0.1, saddle_starts=10, saddle_scale=0.02,
                            saddle_points=4000, **_common)}
    report_order = 71

    def points(self, s):
        return [dict(tag=tag) for tag in SADDLE_MODELS] + [dict(flow=k) for k in range(s.saddle_starts)]

    def compute(self, s, point):
        if "flow" in point:
            from linattn._parametrizations import Parametrization

            pb = noise_free_problem(s.spectrum, s.N)
            D = len(s.spectrum)
            par = Parametrization("separate_kq", D, heads=D)
            return {"test": dynamics.mean_flow(pb, par, par.init(s.saddle_scale, (12, point["flow"])),
                                               np.logspace(-1, 6, s.saddle_points), rtol=1e-10).test}
        return _saddle_point(s.spectrum, s.N, point["tag"], s.t_max, s.step, s.batch, s.n_chains, s.seed)

    def assemble(self, s, outputs):
        pts = self.points(s)
        out = {p["tag"]: o for p, o in zip(pts, outputs) if "tag" in p}
        flows = [o["test"] for p, o in zip(pts, outputs) if "flow" in p]
        saddles = dynamics.saddle_losses(np.array(s.spectrum), s.N)
        data = SaddlesData(times=out["separate"]["times"], saddle_losses=saddles, ode_separate=out["separate"]["ode"],
                           ode_merged=out["merged"]["ode"], sgd_separate=out["separate"]["sgd"],
                           sgd_merged=out["merged"]["sgd"], **self._saddle_fields(s, saddles, flows))
        return data, {"spectrum": list(s.spectrum), "N": s.N}

    @staticmethod
    def _saddle_fields(s, saddles, flows):
        """The report's fields: ``E_g(Γ_*)`` (``optimum_test``) and, for the saddles ``M_1 … M_{D−1}`` of separate
        heads, their loss, the largest gradient there, and the closest passage of the exact flows."""
        from linattn._parametrizations import Parametrization, population_objective

        pb = noise_free_problem(s.spectrum, s.N)
        D = len(s.spectrum)
        # the saddles M_1 … M_{D−1} themselves: heads 1..m on the top-m eigenvectors at a∞ (v = 1, k = q = √a∞ u),
        # rest zero
        par = Parametrization("separate_kq", D, heads=D)
        mc = dynamics.mode_constants(pb)
        order = np.argsort(mc.spectrum)[::-1]
        obj = population_objective(pb)
        loss, grad, closest = [], [], []
        for m in range(1, D):
            v, K, Q = np.zeros(D), np.zeros((D, D, 1)), np.zeros((D, D, 1))
            for h, a in enumerate(order[:m]):
                u = np.sqrt(mc.a_inf[a]) * mc.basis[:, a]
                v[h], K[h, :, 0], Q[h, :, 0] = 1.0, u, u
            th = par.join(v=v, K=K, Q=Q)
            grad.append(np.abs(par.pullback(th, obj.gradient(par.gamma(th)))).max())
            loss.append(obj.value(par.gamma(th)))
            closest.append(max(np.min(np.abs(f / saddles[m] - 1)) for f in flows))
        return dict(optimum_test=pb.icl_solution().test_error, saddle_point_loss=np.array(loss),
                    saddle_point_gradient=np.array(grad), flow_closest=np.array(closest))

    def checks(self, r):
        s, d = r.settings, r.data
        D, N, step, batch, chains = len(s["spectrum"]), s["N"], s["step"], s["batch"], s["n_chains"]
        out = []
        saddles, ode, times = d.saddle_losses, d.ode_separate, d.times
        for m in range(1, D + 1):
            k = int(np.argmin(np.abs(ode / saddles[m] - 1)))
            ode_gap = abs(ode[k] / saddles[m] - 1)
            mean, se = mean_se(d.sgd_separate[:, k], single=np.nan)
            out.append(Check("factorized", f"SGD plateau at saddle M_{m} (separate K/Q)",
                             f"D={D}, N={N}, {D} rank-one heads, start scale 0.3, online SGD η={step:g}, "
                             f"batch {batch}, {chains} chains, t={times[k]:.0f}",
                             _fmt(saddles[m]), _fmt(mean, se), f"{mean / saddles[m] - 1:+.2%}",
                             abs(mean - saddles[m]) <= 4 * se + (ode_gap + 0.01) * saddles[m],
                             "≤ 4 s.e. + the ODE's own distance to the saddle + 1 % (SGD's O(η/B) stationary excess: "
                             "0.2 % measured at the merged head's fixed point with these settings)"))
        spectrum = "(" + ",".join(f"{x:g}".lstrip("0") for x in s["spectrum"]) + ")"
        for m in range(1, D):
            loss, grad, closest = (d.saddle_point_loss[m - 1], d.saddle_point_gradient[m - 1],
                                   d.flow_closest[m - 1])
            out.append(Check("factorized", f"saddle M_{m} of separate K/Q: loss, stationarity, passage",
                             f"D={D}, N={N}, Λ={spectrum}, {D} rank-one heads; exact ODE from "
                             f"{s['saddle_starts']} random start(s) of scale {s['saddle_scale']}",
                             _fmt(saddles[m], digits=8),
                             f"E_g at M_{m}: {loss:.8g}; max|∇θ| {grad:.0e}; flow passes within {closest:.1e}",
                             f"{loss / saddles[m] - 1:+.1e}",
                             abs(loss / saddles[m] - 1) < 1e-12 and grad < 1e-12 and closest < 1e-3,
                             "loss to 1e-12, gradient < 1e-12 (a fixed point); every flow passes within 1e-3 (how "
                             "close depends on the start: 1e-10 to 1e-4 measured over 10 starts)"))
        final, se = mean_se(d.sgd_merged[:, -1], single=np.nan)
        ic = d.optimum_test
        out.append(Check("factorized", "merged head: final E_g = E_g(Γ_*)", f"D={D}, N={N}, online SGD η={step:g}, "
                         f"{chains} chains", _fmt(ic), _fmt(final, se), f"{final / ic - 1:+.2%}",
                         abs(final - ic) <= 4 * se + 0.02 * ic, "≤ 4 s.e. + 2 % (SGD stationary excess O(η/B))"))
        return out


@dataclass(frozen=True, eq=False, repr=False)
class FactorizedGapData(ExperimentData):
    """Data of ``factorized_gap``: the merged and the product model trained on the same datasets, and the report's
    Langevin runs.

    Attributes
    ----------
    P : ndarray (n_P,)
        Training prompts.
    D : int
        Token dimension.
    gap_merged, gap_product : ndarray (n_P, n)
        ``ΔEr = (E_g − E_t)/E_t`` of each dataset, merged ``Γ`` (ridge, long-time limit) and ``Γ = PQ`` (exact ODE).
    contrast_merged, contrast_product : ndarray (n_P, n)
        Contrast ratio ``C = tr Γ/(‖Γ‖_F √D)``.
    test_merged, test_product : ndarray (n_P, n)
        Exact test error.
    gibbs : dict of str to GibbsComparison
        Langevin against exact Gibbs averages on one dataset (``D = 3``, ``N = 6``, ``P = 40``), by kind
        (``"merged"``, ``"value_kq_modes"``; :attr:`FactorizedGap.GIBBS`).
    """

    P: np.ndarray
    D: int
    gap_merged: np.ndarray
    gap_product: np.ndarray
    contrast_merged: np.ndarray
    contrast_product: np.ndarray
    test_merged: np.ndarray
    test_product: np.ndarray
    gibbs: dict[str, GibbsComparison]

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: the same names, the Langevin runs as ``gibbs_{kind}_{field}``."""
        out = {}
        for key, value in arrays.items():
            kind = next((k for k in FactorizedGap.GIBBS if key.startswith(f"gibbs_{k}_")), None)
            out[key if kind is None else f"gibbs[{kind}].{key[len(f'gibbs_{kind}_'):]}"] = value
        return out


class FactorizedGap(Experiment):
    """ΔEr and contrast ratio of the merged and the product model on the same datasets (figure ``factorized_gap``),
    and the report's Langevin rows (section ``factorized``, its last rows): Langevin against exact Gibbs averages on
    one dataset, merged kernel and ``Γ = PQ`` (``gibbs_steps`` steps; module docstring)."""

    name = "factorized_gap"
    title = "Finite P: ΔEr of the merged vs the product parametrization on the same datasets"
    data_class = FactorizedGapData
    presets = {"smoke": dict(D=3, N=10, P=[4, 30], n=2, t_max=5e3, lam=0.01, seed=3, gibbs_steps=2000),
               "quick": dict(D=5, N=20, P=[5, 10, 20, 40, 80, 160, 320], n=3, t_max=1e4, lam=0.01, seed=3,
                             gibbs_steps=40_000),
               "full": dict(D=8, N=40, P=[8, 16, 32, 64, 128, 256, 512, 1024], n=20, t_max=2e4, lam=0.01, seed=3,
                            gibbs_steps=100_000)}
    report_order = 72
    GIBBS = {"merged": dict(beta=200.0, step=0.005, seed=14), "value_kq_modes": dict(beta=2000.0, step=0.002, seed=15)}

    def points(self, s):
        return [dict(P=int(P), r=r) for P in s.P for r in range(s.n)] + [dict(gibbs=k) for k in self.GIBBS]

    def compute(self, s, point):
        if "gibbs" in point:
            pb, g = linattn.Problem(3, 6, 0.2), self.GIBBS[point["gibbs"]]
            res = gibbs_comparison(pb, pb.sample(40, rng=13), g["beta"], 0.05, kind=point["gibbs"],
                                   n_steps=s.gibbs_steps, dt=g["step"], rng=g["seed"])
            return {k: np.asarray(v) for k, v in dataclasses.asdict(res).items()}
        pb = linattn.Problem(s.D, s.N, 0.0)
        return gap_one(pb, point["P"], point["r"], s.lam, t_max=s.t_max, rng=s.seed)

    def assemble(self, s, outputs):
        P = np.asarray(s.P, dtype=int)
        pts = self.points(s)
        gaps = [o for p, o in zip(pts, outputs) if "gibbs" not in p]
        gibbs = {p["gibbs"]: GibbsComparison(**{f.name: o[f.name].item() for f in dataclasses.fields(GibbsComparison)})
                 for p, o in zip(pts, outputs) if "gibbs" in p}
        data = FactorizedGapData(P=P, D=s.D, **gap_arrays(gaps, P.size, s.n), gibbs=gibbs)
        return data, {"N": s.N, "lam": s.lam}

    def checks(self, r):
        d = r.data
        out = []
        g = dataclasses.asdict(d.gibbs["merged"])
        for name in ("train", "test"):
            est, se, exact = g[name], g[f"{name}_se"], g[f"exact_{name}"]
            out.append(Check("factorized", f"Langevin merged kernel: ⟨E_{'g' if name == 'test' else 't'}⟩ vs exact "
                             "Gibbs", "D=3, N=6, P=40, β=200, λ=0.05, η=0.005, 16 chains", _fmt(exact), _fmt(est, se),
                             f"{est / exact - 1:+.2%}", abs(est - exact) <= 4 * se + 1e-4,
                             "|Δ| ≤ 4 s.e. + 1e-4 (O(η) bias)"))
        g = d.gibbs["value_kq_modes"]
        train, train_se, equi = g.train, g.train_se, g.equipartition
        thermal = int(g.harmonic_dof) / 4000.0
        out.append(Check("factorized", "Langevin Γ=PQ: ⟨E_t⟩ = E_min + (2D² − D(D−1)/2)/(2β)",
                         "D=3, N=6, P=40, β=2000, "
                         f"λ=0.05, η=0.002, 16 chains; merged exact Gibbs: {g.exact_train:.4f}", _fmt(equi),
                         _fmt(train, train_se), f"{train / equi - 1:+.2%}",
                         abs(train - equi) <= 4 * train_se + 0.1 * thermal,
                         "≤ 4 s.e. + 10 % of the thermal part (anharmonic, O(η))"))
        return out
