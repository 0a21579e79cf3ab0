"""Task pools (Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025): four figures.

``pools_double_descent``: ICL and IDG errors against ``τ = P/D²`` at ``κ = 0.5`` for ``α ∈ {1, 10, 100}``; exact
dataset averages (peer conventions: tasks on the sphere, ridge ``λ_L = 1e-4``, i.e. ``λ = λ_L/D`` on ``Γ`` and ``λ_L``
on ``v``), the ``D → ∞`` theory (lines) and the finite-``D`` pool theory at the simulated ``D`` (dashed).
``pools_gtask``: ``g_task = E_ICL − E_IDG`` against ``κ`` at ``α = τ = 10``, ``σ² = 0.01``: simulations at ``D = 32``
and ``64``, the ``D → ∞`` theory and the finite-``D`` theory; the memorization → ICL transition near ``κ = 1``.
``pools_finite_d``: exact averages at ``D = 20, 40, 64`` against ``1/D``, the finite-``D`` theory and the ``D → ∞``
formula (``α = 1``, ``τ = 2``, ``λ = 0.1/D``, full model, Gaussian tasks).
``pools_phase``: the ``(P, K)`` diagram at ``D = 10``, ``N = 100``, ``λ = 0.01`` (full model, long-time limit):
the seed's ``ΔEr`` and the task-generalization gap ``g_task/E_ICL``, exact dataset averages.
"""
from __future__ import annotations

import numpy as np

import linattn
import replica

from ..experiments.pools import pool_average
from . import register, save, style

NOISE = 0.1

SETTINGS = {
    "smoke": dict(dd_D=12, dd_alpha=(1.0,), dd_tau=[0.5, 2.0], dd_n=2, dd_theory=4, gt_D=(12,), gt_kappa=[0.5, 4.0], gt_n=(2,), gt_theory=6,
                  fd_D=(12, 16), fd_n=(2, 2), fd_theory=1, fd_Dmax=16, ph_P=[20, 200], ph_K=[2, 20], ph_n=2),
    "quick": dict(dd_D=32, dd_alpha=(1.0, 10.0, 100.0), dd_tau=[0.2, 0.5, 0.8, 1.25, 2.0, 4.0], dd_n=4, dd_theory=60, gt_D=(32, 64),
                  gt_kappa=[0.2, 0.4, 0.7, 1.0, 1.6, 4.0], gt_n=(4, 2), gt_theory=30, fd_D=(20, 40, 64), fd_n=(24, 8, 3), fd_theory=9, fd_Dmax=256,
                  ph_P=[10, 20, 40, 80, 160, 320, 640, 1280, 2560], ph_K=[1, 2, 4, 8, 16, 32, 64, 128, 256, 1024], ph_n=8),
    "full": dict(dd_D=100, dd_alpha=(1.0, 10.0, 100.0), dd_tau=[0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0], dd_n=10,
                 dd_theory=120, gt_D=(32, 64), gt_kappa=list(np.geomspace(0.2, 32, 12)), gt_n=(20, 20),
                 gt_theory=80, fd_D=(20, 40, 64),
                 fd_n=(100, 30, 10), fd_theory=20, fd_Dmax=256, ph_P=list(np.unique(np.geomspace(10, 5000, 16).astype(int))),
                 ph_K=[1, 2, 3, 5, 8, 12, 20, 32, 50, 80, 128, 256, 512, 1024, 4096], ph_n=30),
}


# ----------------------------------------------------------------------------- double descent in τ
def double_descent(mode, progress):
    s = SETTINGS[mode]
    D, kappa, ridge_L = s["dd_D"], 0.5, 1e-4
    taus_th = np.concatenate([np.geomspace(0.1, 0.97, s["dd_theory"] // 2), np.geomspace(1.03, 6.0, s["dd_theory"] // 2)])
    out = {"tau_theory": taus_th, "tau": np.array(s["dd_tau"]), "alpha": np.array(s["dd_alpha"]), "D": D}
    for alpha in out["alpha"]:
        key = f"a{alpha:g}"
        th = [replica.asymptotic(alpha, t, kappa, NOISE, ridge_L) for t in taus_th]
        out[f"{key}_icl_theory"] = np.array([a.icl for a in th])
        out[f"{key}_idg_theory"] = np.array([a.idg for a in th])
        pb = linattn.Problem(D, int(alpha * D), NOISE, tasks=int(kappa * D), task_law="sphere")
        fd = [replica.stationary(pb, t * D * D, np.inf, ridge_L / D, "full", n_pools=8) for t in taus_th]
        out[f"{key}_icl_finite"] = np.array([f.test for f in fd])
        out[f"{key}_idg_finite"] = np.array([f.test_idg for f in fd])
        sims = [pool_average(pb, int(round(t * D * D)), (ridge_L / D, ridge_L), s["dd_n"], seed=3, progress=progress)
                for t in s["dd_tau"]]
        for name in ("icl", "idg"):
            out[f"{key}_{name}"] = np.array([getattr(a, f"{name}_mean") for a in sims])
            out[f"{key}_{name}_se"] = np.array([getattr(a, f"{name}_se") for a in sims])
    return out


def plot_double_descent(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
    colors = ("#1b9e77", "#d95f02", "#7570b3")
    for ax, name, title in ((axes[0], "icl", "fresh tasks (ICL)"), (axes[1], "idg", "pool tasks (IDG)")):
        for alpha, col in zip(d["alpha"], colors):
            key = f"a{alpha:g}"
            ax.plot(d["tau_theory"], d[f"{key}_{name}_theory"], color=col, lw=1.5, label=rf"$\alpha$ = {alpha:g}: D → ∞")
            ax.plot(d["tau_theory"], d[f"{key}_{name}_finite"], color=col, lw=1, ls="--",
                    label=f"finite-D theory (D = {int(d['D'])})")
            ax.errorbar(d["tau"], d[f"{key}_{name}"], d[f"{key}_{name}_se"], fmt="o", color=col, mfc="w", ms=5,
                        label=f"exact, D = {int(d['D'])}")
        ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"$\tau = P/D^2$")
        ax.set_ylabel(r"error $E$ ($=e/2$)")
        ax.set_title(title)
    axes[1].legend(fontsize=7, ncol=1, loc="lower left")
    fig.suptitle(r"double descent at $\tau = 1$: $\kappa = K/D = 0.5$, $\sigma^2 = 0.01$, ridge $\lambda_L = 10^{-4}$")
    fig.tight_layout()
    return fig


@register("pools_double_descent", "Task pools: double descent in τ = P/D² (ICL and IDG), κ = 0.5, α ∈ {1, 10, 100}",
          caption="Beyond the seed (Lu et al., PNAS 2025, their Fig. 1). Fresh-task (a) and in-distribution (b) errors "
                  "of the ridge solution against τ = P/D² with a pool of K = D/2 tasks on the sphere, σ² = 0.01, the "
                  "peer's ridge λ_L = 1e-4 (λ_L/D on Γ, λ_L on v). Lines: the D → ∞ theory (replica.asymptotic; IDG = "
                  "−τ c_e). Dashed: the finite-D pool theory at the simulated D (8 random pools). Circles: exact averages (replica.ridge) "
                  "at D = 32 (full mode: D = 100), ± 1 s.e. The peak at τ = 1 is the interpolation threshold.")
def make_double_descent(out_dir, mode="quick", progress=True):
    d = double_descent(mode, progress)
    with style():
        fig = plot_double_descent(d)
    return save(fig, out_dir, "pools_double_descent", d, {"mode": mode})


# ----------------------------------------------------------------------------- g_task against κ
def gtask(mode, progress):
    s = SETTINGS[mode]
    alpha, tau, ridge_L = 10.0, 10.0, 1e-4
    kth = np.geomspace(0.1, 40, s["gt_theory"])
    out = {"kappa_theory": kth, "kappa": np.array(s["gt_kappa"], float), "Ds": np.array(s["gt_D"])}
    th = [replica.asymptotic(alpha, tau, k, NOISE, ridge_L) for k in kth]
    out["gtask_theory"] = np.array([a.icl - a.idg for a in th])
    for D, n in zip(s["gt_D"], s["gt_n"]):
        fin, sims, se = [], [], []
        for k in kth:
            pb = linattn.Problem(D, int(alpha * D), NOISE, tasks=max(1, int(round(k * D))), task_law="sphere")
            st = replica.stationary(pb, tau * D * D, np.inf, ridge_L / D, "full", n_pools=16)
            fin.append(st.test - st.test_idg)
        for k in s["gt_kappa"]:
            pb = linattn.Problem(D, int(alpha * D), NOISE, tasks=max(1, int(round(k * D))), task_law="sphere")
            a = pool_average(pb, int(tau * D * D), (ridge_L / D, ridge_L), n, seed=5, progress=progress)
            g = a.icl - a.idg
            sims.append(g.mean())
            se.append(g.std(ddof=1) / np.sqrt(g.size))
        out[f"D{D}_finite"], out[f"D{D}"], out[f"D{D}_se"] = np.array(fin), np.array(sims), np.array(se)
    return out


def plot_gtask(d):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(d["kappa_theory"], d["gtask_theory"], color="k", lw=1.5, label="D → ∞ theory")
    for D, col in zip(d["Ds"], ("#d95f02", "#1b9e77")):
        ax.plot(d["kappa_theory"], d[f"D{D}_finite"], color=col, lw=1, ls="--", label=f"finite-D theory, D = {D}")
        ax.errorbar(d["kappa"], d[f"D{D}"], d[f"D{D}_se"], fmt="o", color=col, mfc="w", ms=5, label=f"exact, D = {D}")
    ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel(r"task diversity $\kappa = K/D$")
    ax.set_ylabel(r"$g_{\rm task} = E_{\rm ICL} - E_{\rm IDG}$")
    ax.set_title(r"memorization $\to$ ICL: $\alpha = \tau = 10$, $\sigma^2 = 0.01$, $\lambda_L = 10^{-4}$")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


@register("pools_gtask", "Task pools: g_task = E_ICL − E_IDG against κ (α = τ = 10), D = 32 and 64 vs theory",
          caption="Beyond the seed (Lu et al., PNAS 2025, their Fig. 3). The task-generalization gap g_task = E_ICL − E_IDG "
                  "of the ridge solution against κ = K/D at α = τ = 10, σ² = 0.01, λ_L = 1e-4 (sphere tasks). Black: the "
                  "D → ∞ theory; dashed: the finite-D pool theory (16 random pools of the simulated size); circles: exact averages at D = 32 (4 datasets; full: 20) "
                  "and D = 64 (2; full: 20), ± 1 s.e. (quick: 6 values of κ; full: 12 in [0.2, 32]). For κ < 1 the model memorises the pool (large gap); past κ ≈ 1 it "
                  "learns in context (gap → 0).")
def make_gtask(out_dir, mode="quick", progress=True):
    d = gtask(mode, progress)
    with style():
        fig = plot_gtask(d)
    return save(fig, out_dir, "pools_gtask", d, {"mode": mode})


# ----------------------------------------------------------------------------- finite-D convergence
def finite_d(mode, progress):
    s = SETTINGS[mode]
    alpha, tau, ridge_L = 1.0, 2.0, 0.1
    out = {"Ds": np.array(s["fd_D"]), "kappas": np.array([0.5, 2.0])}
    Dth = np.unique(np.geomspace(16, s["fd_Dmax"], s["fd_theory"]).astype(int))
    out["D_theory"] = Dth
    for kappa in out["kappas"]:
        key = f"k{kappa:g}"
        a = replica.asymptotic(alpha, tau, kappa, NOISE, ridge_L)
        out[f"{key}_asym"] = np.array([a.icl, a.idg])
        fin = []
        for D in Dth:
            pb = linattn.Problem(int(D), int(alpha * D), NOISE, tasks=int(kappa * D))
            st = replica.stationary(pb, tau * D * D, np.inf, ridge_L / D, "full", n_pools=64)
            fin.append((st.test, st.test_idg))
        out[f"{key}_finite"] = np.array(fin)
        sims = []
        for D, n in zip(s["fd_D"], s["fd_n"]):
            pb = linattn.Problem(D, int(alpha * D), NOISE, tasks=int(kappa * D))
            av = pool_average(pb, int(tau * D * D), ridge_L / D, n, seed=9, progress=progress)
            sims.append((av.icl_mean, av.icl_se, av.idg_mean, av.idg_se))
        out[f"{key}_exact"] = np.array(sims)
    return out


def plot_finite_d(d):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, k, title in ((axes[0], 0, "fresh tasks (ICL)"), (axes[1], 1, "pool tasks (IDG)")):
        for kappa, col in zip(d["kappas"], ("#d95f02", "#1b9e77")):
            key = f"k{kappa:g}"
            ex = d[f"{key}_exact"]
            ax.errorbar(1.0 / d["Ds"], ex[:, 2 * k], ex[:, 2 * k + 1], fmt="o", color=col, mfc="w", ms=5,
                        label=rf"exact, $\kappa$ = {kappa:g}")
            ax.plot(1.0 / d["D_theory"], d[f"{key}_finite"][:, k], color=col, lw=1, ls="--", label="finite-D pool theory")
            ax.plot([0.0], [d[f"{key}_asym"][k]], "*", color=col, ms=11, label="D → ∞ (Lu et al.)")
        ax.set_xlim(0, 0.055)
        ax.set_xlabel("1/D")
        ax.set_ylabel("error E (= e/2)")
        ax.set_title(title)
    axes[0].legend(fontsize=7)
    fig.suptitle(r"finite-D convergence: $\alpha = 1$, $\tau = 2$, $\sigma^2 = 0.01$, $\lambda = 0.1/D$, full model")
    fig.tight_layout()
    return fig


@register("pools_finite_d", "Task pools: exact averages at D = 20, 40, 64 vs the finite-D pool theory vs the D → ∞ formula",
          caption="Beyond the seed. ICL (a) and IDG (b) errors of the ridge solution against 1/D at α = N/D = 1, τ = P/D² = 2, "
                  "σ² = 0.01, λ = 0.1/D on both blocks, Gaussian tasks, κ = K/D ∈ {0.5, 2}. Circles: exact averages "
                  "(24, 8 and 3 datasets at D = 20, 40, 64; full: 100, 30, 10), ± 1 s.e. Dashed: the finite-D pool theory "
                  "(replica.stationary with Problem(tasks=K): 64 random pools, finite-D factor), D = 16 … 256. Stars: "
                  "replica.asymptotic (D → ∞).")
def make_finite_d(out_dir, mode="quick", progress=True):
    d = finite_d(mode, progress)
    with style():
        fig = plot_finite_d(d)
    return save(fig, out_dir, "pools_finite_d", d, {"mode": mode})


# ----------------------------------------------------------------------------- (P, K) phase diagram
def phase(mode, progress):
    s = SETTINGS[mode]
    D, N, lam = 10, 100, 0.01
    Ps, Ks = np.array(s["ph_P"], int), np.array(s["ph_K"], int)
    gap = np.empty((Ks.size + 1, Ps.size))
    gt = np.empty((Ks.size + 1, Ps.size))
    for i, K in enumerate(list(Ks) + [None]):
        pb = linattn.Problem(D, N, tasks=None if K is None else int(K))
        for j, P in enumerate(Ps):
            a = pool_average(pb, int(P), lam, s["ph_n"], seed=11, progress=progress)
            gap[i, j] = linattn.relative_gap(a.train_mean, a.icl_mean)
            gt[i, j] = 1.0 - a.idg_mean / a.icl_mean if K is not None else 0.0
    fresh = linattn.Problem(D, N)
    pstar = replica.phase_boundary(fresh, np.inf, lam, model="full")
    return {"P": Ps, "K": Ks, "gap": gap, "gtask_rel": gt, "P_star_theory": np.nan if pstar is None else pstar}


def plot_phase(d):
    import matplotlib.pyplot as plt

    Ps, Ks = d["P"], d["K"]
    ylab = [str(k) for k in Ks] + ["∞"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    y = np.arange(Ks.size + 1)
    for ax, z, lab, cmap, vmin, vmax in (
            (axes[0], np.log10(1.0 + d["gap"]), r"$\log_{10}(1 + \Delta E_r)$ (fresh-task error)", "magma", -0.3, 3.0),
            (axes[1], d["gtask_rel"], r"$g_{\rm task}/E_{\rm ICL} = 1 - E_{\rm IDG}/E_{\rm ICL}$", "viridis", 0.0, 1.0)):
        im = ax.pcolormesh(np.arange(Ps.size + 1) - 0.5, np.arange(Ks.size + 2) - 0.5, z, cmap=cmap, vmin=vmin, vmax=vmax)
        if ax is axes[0]:
            ax.contour(np.arange(Ps.size), y, d["gap"], levels=[5.0], colors="#2ecc71", linewidths=1.5)
        ax.set_xticks(np.arange(Ps.size))
        ax.set_xticklabels([str(p) for p in Ps], rotation=60, fontsize=7)
        ax.set_yticks(y)
        ax.set_yticklabels(ylab, fontsize=7)
        ax.axhline(np.searchsorted(Ks, 10) - 0.5, color="w", lw=0.8, ls="--")        # K = D (κ = 1)
        kk = np.interp(np.log(Ps), np.log(Ks), np.arange(Ks.size))                      # the diagonal K = P
        ax.plot(np.arange(Ps.size), np.minimum(kk, Ks.size - 0.5), color="w", lw=0.8, ls=":")
        ax.set_xlabel("prompts P")
        ax.set_ylabel("pool size K (∞: a fresh task per prompt)")
        fig.colorbar(im, ax=ax, label=lab)
    if np.isfinite(d["P_star_theory"]):
        axes[0].plot(np.interp(np.log(d["P_star_theory"]), np.log(Ps), np.arange(Ps.size)), Ks.size, "*", color="#2ecc71",
                     ms=12, mec="k")
    fig.suptitle(r"D = 10, N = 100, $\lambda$ = 0.01, full model, long-time limit; green: $\Delta E_r = 5$ (star: the seed's "
                 r"P* for fresh tasks); dashed: K = D ($\kappa = 1$); dotted: K = P", fontsize=9)
    fig.tight_layout()
    return fig


@register("pools_phase", "Task pools: (P, K) phase diagram at D = 10 linking the seed's ΔEr = 5 transition to κ ≈ 1",
          caption="Beyond the seed. Exact dataset averages (8 datasets per cell; full: 30) of the ridge solution at D = 10, "
                  "N = 100, λ = 0.01 (full model, the seed's long-time limit) over the number of prompts P and the pool size "
                  "K (top row: a fresh task per prompt, the seed's setting). (a) log10(1 + ΔEr) with ΔEr = (E_ICL − E_t)/E_t; "
                  "green contour ΔEr = 5, star: the replica theory's P* for fresh tasks. (b) the relative task-generalization "
                  "gap 1 − E_IDG/E_ICL. Dashed: K = D; dotted: K = P (a pool as large as the data: every prompt nearly its "
                  "own task, the seed's regime).")
def make_phase(out_dir, mode="quick", progress=True):
    d = phase(mode, progress)
    with style():
        fig = plot_phase(d)
    rows = [dict(K="inf" if i == len(d["K"]) else int(d["K"][i]), gap=[float(x) for x in d["gap"][i]]) for i in range(len(d["K"]) + 1)]
    return save(fig, out_dir, "pools_phase", d, {"mode": mode, "rows": rows})
