"""Nonlinear single-index links: stationary errors and the memorization → generalization boundary.

``nonlinear_errors``: stationary train and test error against ``P`` for the links ``tanh``, ``relu``,
``sign`` and ``cubic`` at ``D = 10``, ``N = 100`` (full model, ``β = 10³``, ``λ = 0.01``): exact dataset
averages (markers, ± 1 s.e.), the ``D → ∞`` nonlinearity–noise equivalence (``pb.surrogate()``, solid),
the replica theory with the exact finite-``D`` label law (``replica.stationary(pb, ...)``, dashed) and
the linear link for reference (grey). Errors in units of ``E_g(Γ = 0) = V/2`` (``V`` = label variance),
so that the links share an axis.

``nonlinear_boundary``: ``P*`` (``ΔEr = 5``, full model, ``λ = 0.01``, long-time limit ``β = ∞``) against
the link's effective noise-to-signal ratio ``(μ_*² + μ₀²)/μ₁²``: for links with ``μ₁ = 1`` the
equivalence predicts one curve (a linear problem with noise ``σ²`` = the ratio, solid black); the
exact-law theory for two one-parameter families ``f = z + a He₂(z)/√2`` and ``f = z + a He₃(z)/√6``
(ratio ``a²``, lines) with exact boundaries from dataset averages (open circles; the ratio of the mean
errors on a ``P`` grid, :func:`validation.experiments.boundary_from_means`), and the four named links:
exact (large open symbols), exact-law theory (small red) and their surrogate (small black; ``μ₁ ≠ 1``
moves them off the black curve, since ``λ`` is not rescaled with the labels).
"""
from __future__ import annotations

import numpy as np

import dynamics
import linattn
import replica

from ..experiments.stationary import boundary_from_means
from . import register, save, style

LINKS = ("tanh", "relu", "sign", "cubic")
D, N, BETA, LAM, MODEL = 10, 100, 1e3, 0.01, "full"

SETTINGS = {"smoke": dict(n_P=3, n_datasets=4, amplitudes=[0.0, 1.0], n_grid=3, n_boundary=3, families=(3,),
                          named=("sign",), n_scan=12),
            "quick": dict(n_P=6, n_datasets=30, amplitudes=[0.0, 0.7, 1.5], n_grid=7, n_boundary=20, families=(2, 3),
                          named=LINKS, n_scan=80),
            "full": dict(n_P=11, n_datasets=300, amplitudes=[0.0, 0.2, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0], n_grid=13,
                         n_boundary=100, families=(2, 3), named=LINKS, n_scan=80)}


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


def compute_errors(mode="quick", progress=True):
    s = SETTINGS[mode]
    P = np.unique(np.round(np.geomspace(10, 1000, s["n_P"])).astype(int))
    Pt = np.geomspace(10, 1000, 24 if mode != "smoke" else 5)
    data = {"P": P, "P_theory": Pt}
    lin = linattn.Problem(D, N)
    cur = replica.stationary_curve(lin, Pt, BETA, LAM, MODEL)
    data["linear_train"], data["linear_test"] = cur.train / (lin.label_variance / 2), cur.test / (lin.label_variance / 2)
    rows = []
    for name in LINKS:
        pb = linattn.Problem(D, N, link=name)
        unit = pb.label_variance / 2
        avg = [replica.dataset_average(pb, int(p), BETA, LAM, s["n_datasets"], MODEL, seed=81) for p in P]
        data[f"{name}_train"] = np.array([a.train_mean for a in avg]) / unit
        data[f"{name}_train_se"] = np.array([a.train_se for a in avg]) / unit
        data[f"{name}_test"] = np.array([a.test_mean for a in avg]) / unit
        data[f"{name}_test_se"] = np.array([a.test_se for a in avg]) / unit
        for tag, q in (("surrogate", pb.surrogate()), ("law", pb)):
            c = replica.stationary_curve(q, Pt, BETA, LAM, MODEL)
            data[f"{name}_{tag}_train"], data[f"{name}_{tag}_test"] = c.train / unit, c.test / unit
        for tag, q in (("surrogate", pb.surrogate()), ("law", pb)):
            at = replica.stationary_curve(q, P.astype(float), BETA, LAM, MODEL)
            rows.append(dict(link=name, theory=tag, worst_test=float(np.max(np.abs(at.test / unit / data[f"{name}_test"] - 1))),
                             worst_train=float(np.max(np.abs(at.train / unit / data[f"{name}_train"] - 1)))))
    return data, rows


def plot_errors(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(13, 3.8), sharey=False)
    for ax, name in zip(axes, LINKS):
        ax.plot(d["P_theory"], d["linear_test"], color="0.6", lw=1.0, ls=":", label="linear link (theory)")
        ax.plot(d["P_theory"], d["linear_train"], color="0.6", lw=1.0, ls=":")
        for part, col, mk in (("test", "C3", "o"), ("train", "C0", "s")):
            ax.errorbar(d["P"], d[f"{name}_{part}"], yerr=d[f"{name}_{part}_se"], color=col, marker=mk, ms=4, ls="none",
                        label=f"exact {part} (dataset average)")
            ax.plot(d["P_theory"], d[f"{name}_surrogate_{part}"], color=col, lw=1.2, label=f"{part}: equivalence (D → ∞)")
            ax.plot(d["P_theory"], d[f"{name}_law_{part}"], color=col, lw=1.2, ls="--", label=f"{part}: exact-law theory")
        ax.set_xscale("log")
        ax.set_title(f"link: {name}")
        ax.set_xlabel("task diversity P")
        ax.set_ylim(bottom=0)
    axes[0].set_ylabel(r"error / $E_g(\Gamma = 0)$")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(rf"full model, D = {D}, N = {N}, $\beta$ = 10³, $\lambda$ = {LAM}")
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


@register("nonlinear_errors", "Stationary errors vs P for nonlinear links: exact averages, D → ∞ equivalence, exact-law theory",
          caption="Beyond the seed (nonlinear single-index targets y = f(w·x/√D)). Stationary train (blue) and test (red) "
                  "errors against P for four links at D = 10, N = 100 (full model, β = 10³, λ = 0.01), in units of "
                  "E_g(Γ = 0). Markers: exact dataset averages (± 1 s.e.; 30 datasets per point, full: 300). Solid: the "
                  "nonlinearity–noise equivalence (linear surrogate, exact only as D → ∞). Dashed: the replica theory "
                  "with the exact finite-D label law. Dotted grey: the linear link.")
def make_errors(out_dir, mode="quick", progress=True):
    d, rows = compute_errors(mode, progress)
    with style():
        fig = plot_errors(d)
    return save(fig, out_dir, "nonlinear_errors", d, {"rows": rows, "mode": mode})


def _theory_boundary(pb, n_scan=80):
    p = replica.phase_boundary(pb, np.inf, LAM, model=MODEL, n_scan=n_scan)
    return np.nan if p is None else p


def compute_boundary(mode="quick", progress=True):
    s = SETTINGS[mode]
    amps = np.array(s["amplitudes"], float)
    ratio = np.geomspace(1e-3, max(amps.max() ** 2, 1e-2) * 1.5, 12 if s["n_scan"] >= 80 else 4)
    ns = s["n_scan"]
    data = {"amplitudes": amps, "ratio_line": ratio,
            "Pstar_equivalence": np.array([_theory_boundary(linattn.Problem(D, N, float(np.sqrt(r))), ns) for r in ratio])}
    def exact_boundary(pb, guess):
        if not np.isfinite(guess):
            return np.nan
        grid = np.unique(np.round(np.geomspace(max(guess / 2.5, 2.0), guess * 2.5, s["n_grid"])).astype(int))
        sw = dynamics.gap_sweep(pb, grid, LAM, s["n_boundary"], MODEL, seed=91, progress=progress)
        b = boundary_from_means(sw.P, sw.train_mean, sw.test_mean)
        return np.nan if b is None else b

    for k in s["families"]:
        pbs = [linattn.Problem(D, N, link=hermite_family(k, a)) if a > 0 else linattn.Problem(D, N) for a in amps]
        data[f"Pstar_He{k}"] = np.array([_theory_boundary(pb, ns) for pb in pbs])
        data[f"Pstar_He{k}_exact"] = np.array([exact_boundary(pb, g) for pb, g in zip(pbs, data[f"Pstar_He{k}"])])
    named = []
    for name in s["named"]:
        pb = linattn.Problem(D, N, link=name)
        mu0, mu1, mu2 = pb.hermite
        guess = _theory_boundary(pb, ns)
        named.append(((mu2 + mu0**2) / mu1**2, guess, _theory_boundary(pb.surrogate(), ns), exact_boundary(pb, guess)))
    data["named"] = np.array(named)
    data["named_links"] = np.array(s["named"])
    return data


def plot_boundary(d):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.plot(d["ratio_line"], d["Pstar_equivalence"], color="k", lw=1.3, label="equivalence: linear link, σ² = ratio")
    a2 = np.maximum(d["amplitudes"] ** 2, 1e-3)
    for k, col in ((2, "C0"), (3, "C1")):
        if f"Pstar_He{k}" not in d:
            continue
        ax.plot(a2, d[f"Pstar_He{k}"], color=col, lw=1.2,
                label=rf"exact-law theory, $f = z + a\,\mathrm{{He}}_{k}/\sqrt{{{k}!}}$")
        ax.plot(a2, d[f"Pstar_He{k}_exact"], color=col, marker="o", mfc="w", ms=6, ls="none", label="  exact P*")
    marks = dict(zip(("tanh", "relu", "sign", "cubic"), ("^", "s", "D", "v")))
    for (ratio, theory, equiv, exact), name in zip(d["named"], d["named_links"]):
        ax.plot([ratio], [exact], marker=marks[name], mfc="w", mec="C3", ms=8, ls="none", label=f"{name}: exact P*")
        ax.plot([ratio], [theory], marker=marks[name], color="C3", ms=4, ls="none")
        ax.plot([ratio], [equiv], marker=marks[name], color="k", ms=4, ls="none")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"effective noise-to-signal ratio $(\mu_*^2 + \mu_0^2)/\mu_1^2$ (a² for the families)")
    ax.set_ylabel(r"$P^*$ ($\Delta E_r = 5$)")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(rf"full model, D = {D}, N = {N}, $\lambda$ = {LAM}, long-time limit" "\n"
                 "small symbols: exact-law theory (red), equivalence (black)", fontsize=9)
    fig.tight_layout()
    return fig


@register("nonlinear_boundary", "Memorization → generalization boundary P* vs the link's noise-to-signal ratio",
          caption="Beyond the seed. P* (ΔEr = 5; full model, D = 10, N = 100, λ = 0.01, long-time limit) against the "
                  "effective noise-to-signal ratio (μ_*² + μ₀²)/μ₁² of the link. Black: what the nonlinearity–noise "
                  "equivalence predicts (a linear link with σ² equal to the ratio). Coloured: the replica theory with "
                  "the exact finite-D label law for f = z + a He₂/√2 and f = z + a He₃/√6 (ratio a²), with exact P* "
                  "(open circles). Large open symbols: exact P* of four named links from dataset averages (20 training "
                  "sets per P, full: 100); small red / black symbols: the exact-law theory / the equivalence for them.")
def make_boundary(out_dir, mode="quick", progress=True):
    d = compute_boundary(mode, progress)
    with style():
        fig = plot_boundary(d)
    rows = [dict(link=str(n), ratio=float(r), P_star_law=float(t), P_star_equivalence=float(e), P_star_exact=float(x))
            for n, (r, t, e, x) in zip(d["named_links"], d["named"])]
    return save(fig, out_dir, "nonlinear_boundary", d, {"rows": rows, "mode": mode})
