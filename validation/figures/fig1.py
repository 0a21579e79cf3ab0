"""Figure 1: rescaled-Hessian eigenvalue histograms against the Marchenko–Pastur and the
finite-size random-scale laws (seed ``003``, Fig. 1; THEORY §3.1, §4.1).

Three independent datasets per ``α ∈ {0.5, 1, 2}``; top row ``D = N = 100``, bottom row
``D = N = 20``. One exact spectrum at ``M = 10⁴`` and ``α >= 1`` takes 1–2 minutes on two cores
(a dense ``10⁴ × 10⁴`` eigenproblem), so the quick mode uses one dataset for those two panels. Histograms exclude the exact zero eigenvalues
but are normalised by all ``M`` eigenvalues, so their area is ``1 − atom``; the atom is written on
the panel. The ``α = 1`` density diverges at the origin; its axis is truncated.
"""
from __future__ import annotations

import numpy as np
from tqdm import tqdm

import linattn
import spectra

from . import register, save, style

ALPHAS = (0.5, 1.0, 2.0)
N_DATASETS = 3


#: sizes (D = N) and datasets per panel in each mode
SETTINGS = {"smoke": dict(sizes=[20], n_datasets=1), "quick": dict(sizes=[100, 20], n_datasets=N_DATASETS),
            "full": dict(sizes=[100, 20], n_datasets=N_DATASETS)}


def compute(sizes, n_datasets=N_DATASETS, progress=True, seed=0, quick=False):
    """Exact spectra and both laws for every (size, α); returns a dict of arrays and summaries."""
    data, rows = {}, []
    jobs = [(D, a) for D in sizes for a in ALPHAS]

    def count(D, alpha):
        return 1 if (quick and D * D >= 10_000 and alpha >= 1) else n_datasets

    bar = tqdm(total=sum(count(D, a) for D, a in jobs), desc="fig1 spectra", disable=not progress, leave=False)
    for D, alpha in jobs:
        pb = linattn.Problem(D, D)
        P = int(round(alpha * D * D))
        evs = []
        for i in range(count(D, alpha)):
            evs.append(spectra.hessian_eigenvalues(pb.sample(P, rng=(seed, D, i, int(100 * alpha))), pb))
            bar.update()
        pooled = np.concatenate(evs)
        x = np.linspace(1e-3, np.quantile(pooled, 0.999) * 1.05, 400)
        key = f"D{D}_a{alpha:g}"
        for i, e in enumerate(evs):
            data[f"eigenvalues_{key}_set{i}"] = e
        data[f"x_{key}"] = x
        for law in ("finite", "mp"):
            data[f"density_{law}_{key}"] = spectra.density(x, alpha, pb, law=law)
        row = dict(D=D, N=D, alpha=alpha, P=P, atom=spectra.zero_atom(alpha),
                   ks_finite=[spectra.kolmogorov_distance(e, alpha, pb, "finite") for e in evs],
                   ks_mp=[spectra.kolmogorov_distance(e, alpha, pb, "mp") for e in evs],
                   ks_finite_pooled=spectra.kolmogorov_distance(pooled, alpha, pb, "finite"),
                   ks_mp_pooled=spectra.kolmogorov_distance(pooled, alpha, pb, "mp"))
        rows.append(row)
    bar.close()
    return data, rows


def plot(data, rows, sizes):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(sizes), len(ALPHAS), figsize=(10, 3.2 * len(sizes)), squeeze=False)
    for row in rows:
        i, j = sizes.index(row["D"]), ALPHAS.index(row["alpha"])
        ax = axes[i, j]
        key = f"D{row['D']}_a{row['alpha']:g}"
        evs = [data[k] for k in sorted(data) if k.startswith(f"eigenvalues_{key}_")]
        pooled = np.concatenate(evs)
        nz = pooled[pooled > 1e-9 * pooled.max()]
        x = data[f"x_{key}"]
        bins = np.linspace(0, x[-1], 70)
        counts, edges = np.histogram(nz, bins=bins)
        dens = counts / (pooled.size * np.diff(edges))  # normalised by all eigenvalues
        ax.stairs(dens, edges, fill=True, color="#6f9fd8", alpha=0.55,
                  label=f"exact, {len(evs)} dataset{'s' if len(evs) > 1 else ''}")
        ax.plot(x, data[f"density_finite_{key}"], color="#c0392b", label="finite-size law")
        ax.plot(x, data[f"density_mp_{key}"], color="k", ls="--", lw=1.0, label="Marchenko–Pastur")
        if row["alpha"] == 1.0:
            ax.set_ylim(0, 1.6)
        ax.set_title(f"D = N = {row['D']},  α = {row['alpha']:g}  (P = {row['P']}, {len(evs)} dataset"
                     f"{'s' if len(evs) > 1 else ''})")
        ax.text(0.97, 0.95, f"zero atom: {row['atom']:.2g}\nKS finite: {row['ks_finite_pooled']:.3f}\n"
                f"KS MP: {row['ks_mp_pooled']:.3f}", transform=ax.transAxes, ha="right", va="top", fontsize=7.5)
        ax.set_xlabel("eigenvalue of H/c")
        if j == 0:
            ax.set_ylabel("density")
    axes[0, 0].legend(loc="center right")
    fig.tight_layout()
    return fig


@register("fig1", "Rescaled-Hessian eigenvalue histograms with the MP and finite-size laws",
          caption="Seed 003, Fig. 1. Histograms of the nonzero eigenvalues of the rescaled Hessian H/c (exact, Gram "
                  "path for P < M) of three datasets per α ∈ {0.5, 1, 2} (quick mode: one dataset for the two D = 100, "
                  "α ≥ 1 panels), reduced model, D = N = 100 (top) and D = N = 20 (bottom); normalised by all M "
                  "eigenvalues, so the zero atom (stated on each panel) is left out. Red: the finite-size "
                  "random-scale law (theory); dashed: Marchenko–Pastur. The Kolmogorov distances of both laws to the "
                  "pooled exact spectrum are written on each panel.")
def make(out_dir, mode="quick", progress=True):
    s = SETTINGS[mode]
    data, rows = compute(s["sizes"], s["n_datasets"], progress=progress, quick=mode != "full")
    with style():
        fig = plot(data, rows, s["sizes"])
    meta = {"rows": rows, "mode": mode,
            "note": "histograms exclude exact zeros, normalised by all M eigenvalues"}
    return save(fig, out_dir, "fig1", data, meta)
