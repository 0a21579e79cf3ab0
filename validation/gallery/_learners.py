"""Kernel learner vs feature learner (Gu, Xu & Zdeborová): which wins, from the theories, with simulated cells.

``learners``: over ``(P, N)`` with fresh tasks, for ``relu`` and ``f(z) = z/2 + He₂(z)/√2``; colour = the theories'
``log10(E_kernel/E_feature)`` on a fine grid, markers = simulated cells (filled where the simulation resolves a winner
and agrees with the theory, crossed where it resolves the other winner, open where it is a tie within 2 s.e.).
``learners_pools``: over ``(P, K)`` with task pools (ICL and IDG errors of the kernel learner from its pool theory;
simulated cells of both learners). ``learners_scaling``: test error against ``N`` (train = test length) and against
``N_test`` at a fixed training length, theory lines and simulated points, with the fitted exponents.
Experiments: :mod:`validation.experiments._learners`, :mod:`validation.experiments._learners_scaling`;
the captions are computed from the results drawn.
"""
from __future__ import annotations

import numpy as np

from linattn._kernel_errors import n_features

from ..experiments._learners import LINKS, winner_agreement
from . import panel_letters, register

TITLES = {"relu": "relu", "quad": r"$z/2 + \mathrm{He}_2(z)/\sqrt{2}$"}


def _edges(x):
    """Cell edges of a log-spaced grid (geometric midpoints, mirrored at the ends)."""
    x = np.asarray(x, float)
    if x.size == 1:
        return np.array([x[0] / 1.5, x[0] * 1.5])
    mid = np.sqrt(x[1:] * x[:-1])
    return np.concatenate([[x[0] ** 2 / mid[0]], mid, [x[-1] ** 2 / mid[-1]]])


def _grid_axes(ax, x, y):
    """Log axes labelled at the grid's own values (no minor-tick labels crowding a coarse grid)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis, values in ((ax.xaxis, x), (ax.yaxis, y)):
        axis.set_ticks(np.asarray(values, float), labels=[f"{v:g}" for v in values])
        axis.set_minor_formatter(NullFormatter())


def _sim_marks(ax, x, y, k, k_se, f, f_se, theory_lr):
    """Simulated cells on a winner map: filled = resolved and agrees with the theory, ✕ = resolved and disagrees,
    open = not resolved (|ln ratio| < 2 s.e.)."""
    sim = np.log(k / f)
    se = np.hypot(k_se / k, f_se / f)
    for xi, yi, s, e, t in zip(x, y, sim, se, theory_lr):
        if abs(s) < 2 * e:
            ax.plot(xi, yi, "o", mfc="w", mec="k", ms=8)
        elif np.sign(s) == np.sign(t):
            ax.plot(xi, yi, "o", mfc="#d62728" if s > 0 else "#1f77b4", mec="k", ms=8)
        else:
            ax.plot(xi, yi, "X", color="k", ms=9)


def _memo_line(ax, D):
    """Dotted line at ``P = D²`` (the feature learner's ``Γ`` has ``D²`` parameters: memorisation to its left)."""
    ax.axvline(D**2, color="k", ls=":", lw=1.0)
    ax.annotate(r"$P = D^2$", (D**2, 1.0), xycoords=("data", "axes fraction"), xytext=(2, -10),
                textcoords="offset points", fontsize=7, va="top")


def _legend_marks():
    from matplotlib.lines import Line2D

    return [Line2D([], [], marker="o", ls="none", mfc="#d62728", mec="k", ms=8,
                   label="simulated: feature learner wins (agrees with theory)"),
            Line2D([], [], marker="o", ls="none", mfc="#1f77b4", mec="k", ms=8,
                   label="simulated: kernel learner wins (agrees with theory)"),
            Line2D([], [], marker="o", ls="none", mfc="w", mec="k", ms=8, label="simulated: tie within 2 s.e."),
            Line2D([], [], marker="X", ls="none", color="k", ms=9, label="simulated winner ≠ theory's")]


def plot(d, s):
    """(a, b) ``log10(E_kernel/E_feature)`` of the theories over ``(P, N)``, one colour scale; simulated cells on top;
    contour: ratio 1. ``d`` holds the arrays of experiment ``learners``, ``s`` its settings."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    P, N = d.P, d.N
    lr = {name: np.log10(m.theory_kernel / m.theory_feature) for name, m in d.links.items()}
    lim = max(0.05, max(float(np.nanmax(np.abs(z))) for z in lr.values()))
    norm = TwoSlopeNorm(0.0, -lim, lim)
    i, j = d.sim_N_index, d.sim_P_index
    for ax, (name, m) in zip(axes, d.links.items()):
        im = ax.pcolormesh(_edges(P), _edges(N), lr[name], shading="flat", cmap="coolwarm", norm=norm)
        if P.size > 1 and N.size > 1 and lr[name].min() < 0 < lr[name].max():
            ax.contour(P, N, lr[name], levels=[0.0], colors="k", linewidths=1.2)
        _sim_marks(ax, P[j], N[i], m.sim_kernel, m.sim_kernel_se, m.sim_feature, m.sim_feature_se, lr[name][i, j])
        _grid_axes(ax, P, N)
        _memo_line(ax, s["D"])
        ax.set_xlabel("training prompts P (= task diversity)")
        ax.set_ylabel("context length N (train = test)")
        ax.set_title(f"link {TITLES[name]}")
        ax.grid(False)
    fig.colorbar(im, ax=list(axes), shrink=0.9,
                 label="theory: $\\log_{10}(E_g^{\\rm kernel}/E_g^{\\rm feature})$\n(red: feature learner wins; "
                       "blue: kernel)")
    fig.legend(handles=_legend_marks(), loc="outside lower center", ncol=2, fontsize=8)
    panel_letters(axes)
    fig.suptitle(rf"kernel vs feature learner, D = {s['D']}, $\lambda$ = {s['lam']:g}, noise-free; black line: equal "
                 "errors")
    return fig


def _winners(ratio, P, Y, y_name):
    """Where the kernel learner wins (``ratio = E_kernel/E_feature < 1`` on the grid ``Y × P``), column by column."""
    cols = [f"P = {p:g} at {y_name} ∈ {{{', '.join(f'{y:g}' for y in Y[ratio[:, k] < 1])}}}"
            for k, p in enumerate(P) if np.any(ratio[:, k] < 1)]
    return "nowhere" if not cols else "; ".join(cols)


def _ratio_words(ratio, P, Y, y_name):
    """The range of the theories' ratio, at the smallest ``P`` too, and where the kernel learner wins."""
    return (f"E_kernel/E_feature from {np.nanmin(ratio):.2f} to {np.nanmax(ratio):.2f} (at P = {P[0]:g}: "
            f"{np.nanmin(ratio[:, 0]):.2f}–{np.nanmax(ratio[:, 0]):.2f}); the kernel learner wins "
            + _winners(ratio, P, Y, y_name))


def _learners_caption(result):
    s, d = result.settings, result.data
    M = n_features(s["D"], "hermite2") ** 2
    links = "; ".join(f"{name}: " + _ratio_words(m.theory_kernel / m.theory_feature, d.P, d.N, "N")
                      for name, m in d.links.items())
    decided = sum(int(m.decided.sum()) for m in d.links.values())
    agree = sum(int((m.decided & m.agrees).sum()) for m in d.links.values())
    cells = sum(m.decided.size for m in d.links.values())
    return (f"Beyond the seed (Gu, Xu & Zdeborová). D = {s['D']}, λ = {s['lam']:g}, noise-free, fresh task per "
            "prompt. Colour: log10 of the ratio of the test errors of the kernel learner (degree-2 Hermite features, "
            "then linear attention; ridge solution; theory replica.learner_theory, random-scale law) and the feature "
            "learner (linear attention on raw tokens, then a learned readout; theory replica.feature_learner_theory: "
            "the learner as trained — the ridge Γ and its 5-hinge readout fitted on the P training values of t, so "
            "the memorisation regime is in the theory) over (P, N), for relu (a) and f = z/2 + He₂/√2 (b), one "
            "colour scale: red where the feature learner has the lower error, blue where the kernel learner has; "
            f"black line: equal errors; dotted: P = D² = {s['D'] ** 2}, the parameters of Γ (memorisation to its "
            f"left). Circles: simulated cells ({s['n_sets']} training sets each), mean ± s.e. over the sets (the "
            "kernel learner's test errors exact per set, the feature learner's Monte Carlo over "
            f"{s['n_test_prompts']} prompts; its 5-hinge readout fitted on the frozen Γ at the quantiles of the "
            "trained attention outputs): filled in the winner's colour when the simulated ratio is resolved "
            "(|ln ratio| > 2 s.e.) and agrees with the theory, ✕ when it is resolved the other way, open when it is "
            f"a tie. Grid: {d.P.size} values of P from {d.P[0]:g} to {d.P[-1]:g}, {d.N.size} of N from {d.N[0]:g} to "
            f"{d.N[-1]:g}; the kernel learner has F² = {M} parameters. Theory: {links}. Simulation: {decided} of "
            f"{cells} cells resolve a winner and {agree} of them agree with the theories.")


@register("learners", "Kernel vs feature learner: which wins over (P, N), from theory with simulated cells",
          caption=_learners_caption, experiment="learners", order=22)
def draw(result):
    """Figure ``learners`` from the result of the experiment of the same name."""
    return plot(result.data, result.settings)


def plot_pools(d, s):
    """(P, K) diagrams: (a, b) log10 of the ratio of the kernel to the feature learner's ICL and IDG errors (theories)
    for relu, (c, d) for the second link; simulated cells on top (winner marks from the simulated errors of both
    learners). ``d`` holds the arrays of experiment ``learners_pools``, ``s`` its settings."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(d.links), 2, figsize=(10.5, 4.2 * len(d.links)), layout="constrained",
                             squeeze=False)
    P, K = d.P, d.K
    i, j = d.sim_K_index, d.sim_P_index
    for row, (name, m) in enumerate(d.links.items()):
        for col, (tag, title) in enumerate((("test", "ICL (fresh test task)"),
                                            ("test_idg", "IDG (task from the pool)"))):
            ax = axes[row, col]
            z = np.log10(getattr(m, f"theory_kernel_{tag}") / getattr(m, f"theory_feature_{tag}"))
            im = ax.pcolormesh(_edges(P), _edges(K), z, cmap="coolwarm", vmin=-1, vmax=1)
            label = "theory: log10(E_kernel/E_feature)"
            sfx = "" if tag == "test" else "_idg"
            lr = z[i, j] * np.log(10.0)
            _sim_marks(ax, P[j], K[i], *(getattr(m, f"sim_{x}{sfx}{se}") for x in ("kernel", "feature")
                                         for se in ("", "_se")), lr)
            _grid_axes(ax, P, K)
            _memo_line(ax, s["D"])
            ax.set_xlabel("training prompts P")
            ax.set_ylabel("task-pool size K")
            ax.set_title(f"link {TITLES[name]}: {title}")
            ax.grid(False)
            fig.colorbar(im, ax=ax, label=label)
    panel_letters(axes.ravel())
    fig.legend(handles=_legend_marks(), loc="outside lower center", ncol=2, fontsize=8)
    fig.suptitle(rf"kernel vs feature learner with task pools, D = {s['D']}, N = {s['N']}, $\lambda$ = {s['lam']:g}")
    return fig


def _pools_caption(result):
    s, d = result.settings, result.data
    words, decided, agree, total = [], 0, 0, 0
    i, j = d.sim_K_index, d.sim_P_index
    for name, m in d.links.items():
        for tag, what in (("test", "ICL"), ("test_idg", "IDG")):
            ratio = getattr(m, f"theory_kernel_{tag}") / getattr(m, f"theory_feature_{tag}")
            words.append(f"{name} {what}: " + _ratio_words(ratio, d.P, d.K, "K"))
            sfx = "" if tag == "test" else "_idg"
            dec, agr = winner_agreement(np.log(ratio[i, j]), *(getattr(m, f"sim_{x}{sfx}{se}")
                                                              for x in ("kernel", "feature") for se in ("", "_se")))
            decided, agree, total = decided + int(dec.sum()), agree + int((dec & agr).sum()), total + dec.size
    cells = ", ".join(f"({d.K[a]:g}, {d.P[b]:g})" for a, b in zip(i, j))
    return ("Beyond the seed (Gu, Xu & Zdeborová). "
            f"D = {s['D']}, N = {d.N}, λ = {s['lam']:g}, noise-free, a pool of K Gaussian tasks per training set. "
            "Colour: log10(E_kernel/E_feature) of the ICL (left) and IDG (right) errors from the two pool theories "
            "(replica.learner_theory with Problem(tasks=K), learner='kernel' and 'feature'; "
            f"{s['n_pools']} random pool(s) per cell; red: the feature learner wins). Circles: simulated cells "
            f"({s['n_sets']} training sets), filled in the winner's colour when the simulated ratio is resolved "
            "(|ln ratio| > 2 s.e.) and agrees with the theory, ✕ when resolved the other way, open for a tie; the "
            "kernel learner's errors exact per set, the feature learner's Monte Carlo; the feature learner's theory "
            "is the learner as trained (its readout fitted on the P training values of t). Rows: relu, "
            f"f = z/2 + He₂/√2. Dotted: P = D² = {s['D'] ** 2}. Grid: P ∈ {{{', '.join(f'{p:g}' for p in d.P)}}}, "
            f"K ∈ {{{', '.join(f'{k:g}' for k in d.K)}}}; simulated cells (K, P) = {cells}. Theory: "
            + "; ".join(words) + f". Simulation: {decided} of {total} comparisons resolve a winner and {agree} of them "
            "agree with the theories.")


@register("learners_pools", "Kernel vs feature learner with task pools: (P, K), ICL and IDG",
          caption=_pools_caption, experiment="learners_pools", order=22.2)
def draw_pools(result):
    return plot_pools(result.data, result.settings)


def plot_scaling(d, s):
    """(a) error vs N (train = test), theory lines and simulated points, both learners and links; (b) error vs N_test
    at the training length N_train; (c–f) ``log10(E_kernel/E_feature)`` of the theories over ``(N_test, N)`` at ``P``
    (c, d) and at ``P_memo`` (e, f), simulated cells on top. ``d`` holds the arrays of experiment
    ``learners_scaling``, ``s`` its settings."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(3, 2, figsize=(11.5, 13.5), layout="constrained")
    colors = dict(zip(LINKS, ("#2e8b57", "#7b3f9e")))
    styles = {"kernel": dict(ls="-", marker="s"), "feature": dict(ls="--", marker="o")}
    for name, col in colors.items():
        V2 = d.links[name].V2
        for learner, st in styles.items():
            c = d.links[name].learners[learner]
            axes[0, 0].plot(d.N, c.over_N / V2, color=col, ls=st["ls"], label=f"{name}, {learner}: γ = "
                            f"{c.fit_gamma:.2f}")
            axes[0, 0].errorbar(d.sim_N, c.sim_over_N / V2, c.sim_over_N_se / V2, color=col, marker=st["marker"],
                                ls="none", mfc="w", capsize=2)
            axes[0, 1].plot(d.N_test, c.over_N_test / V2, color=col, ls=st["ls"])
            axes[0, 1].errorbar(d.sim_N_test, c.sim_over_N_test / V2, c.sim_over_N_test_se / V2, color=col,
                                marker=st["marker"], ls="none", mfc="w", capsize=2)
    axes[0, 0].axvspan(d.N_fit_low, d.N_fit_high, color="0.92", zorder=0)
    axes[0, 1].axvline(d.N_train, color="0.5", lw=0.8, ls=":")
    for ax, xl, title in ((axes[0, 0], "context length N (train = test)", f"P = {d.P}: error vs N"),
                          (axes[0, 1], "test context length $N_{\\rm test}$",
                           f"trained at N = {d.N_train}, P = {d.P}: error vs $N_{{\\rm test}}$")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel(r"test error $E_g$ / $E_g(\hat y = 0)$")
        ax.set_title(title)
    axes[0, 0].legend(fontsize=7, title="theory; γ of E − E∞ ∝ N^−γ (shaded range)", title_fontsize=7)
    handles = [Line2D([], [], color="k", ls="-", marker="s", mfc="w", label="kernel learner"),
               Line2D([], [], color="k", ls="--", marker="o", mfc="w", label="feature learner"),
               Line2D([], [], color="k", marker="o", ls="none", mfc="w", label="simulated, ± 1 s.e.")]
    axes[0, 1].legend(handles=handles, fontsize=8)
    N, Nt, sN, sNt = d.plane_N, d.N_test, d.sim_N, d.sim_N_test
    lr = {(name, plane): np.log10(d.links[name].planes[plane].kernel / d.links[name].planes[plane].feature)
          for name in LINKS for plane in ("gen", "memo")}
    lim = max(0.05, max(float(np.nanmax(np.abs(z))) for z in lr.values()))
    norm = TwoSlopeNorm(0.0, -lim, lim)
    ii, jj = np.meshgrid(np.searchsorted(N, sN), np.searchsorted(Nt, sNt), indexing="ij")
    yy, xx = np.meshgrid(sN, sNt, indexing="ij")
    for row, plane in ((1, "gen"), (2, "memo")):
        P = d.P if plane == "gen" else d.P_memo
        for ax, name in zip(axes[row], LINKS):
            z = lr[(name, plane)]
            im = ax.pcolormesh(_edges(Nt), _edges(N), z, shading="flat", cmap="coolwarm", norm=norm)
            if min(z.shape) > 1 and z.min() < 0 < z.max():
                ax.contour(Nt, N, z, levels=[0.0], colors="k", linewidths=1.2)
            sim = [getattr(d.links[name].planes[plane], f"sim_{t}").ravel() for t in ("kernel", "kernel_se",
                                                                                      "feature", "feature_se")]
            _sim_marks(ax, xx.ravel(), yy.ravel(), *sim, z[ii, jj].ravel() * np.log(10.0))
            _grid_axes(ax, Nt, N)
            ax.plot(Nt, Nt, color="0.3", lw=0.8, ls=":")
            ax.set_xlim(_edges(Nt)[[0, -1]])
            ax.set_ylim(_edges(N)[[0, -1]])
            ax.set_xlabel("test context length $N_{\\rm test}$")
            ax.set_ylabel("training context length N")
            regime = "memorisation" if P < int(s["D"]) ** 2 else "generalisation"
            ax.set_title(f"link {TITLES[name]}, P = {P} ({regime})")
            ax.grid(False)
    fig.colorbar(im, ax=list(axes[1:].ravel()), shrink=0.6,
                 label="theory: $\\log_{10}(E_g^{\\rm kernel}/E_g^{\\rm feature})$\n(red: feature learner wins; "
                       "blue: kernel)")
    fig.legend(handles=_legend_marks(), loc="outside lower center", ncol=2, fontsize=8)
    panel_letters(axes.ravel())
    fig.suptitle(rf"context-length scaling, D = {s['D']}, $\lambda$ = {s['lam']:g}, noise-free (lines and colours: "
                 "theory; dotted diagonal: N_test = N)")
    return fig


def _scaling_caption(result):
    s, d = result.settings, result.data
    gammas = "; ".join(f"{name} {learner}: theory {c.fit_gamma:.2f} over N = {d.N_fit_low}…{d.N_fit_high}, and at the "
                       f"simulated lengths {c.gamma_theory:.2f} (theory) vs {c.gamma_sim:.2f} ± {c.gamma_se:.2f} "
                       "(simulation)" for name, link in d.links.items() for learner, c in link.learners.items())
    planes, decided, agree, total = [], 0, 0, 0
    for name, link in d.links.items():
        for plane, pl in link.planes.items():
            P = d.P if plane == "gen" else d.P_memo
            ratio = pl.kernel / pl.feature
            where = "nowhere" if not np.any(ratio < 1) else f"at {int(np.sum(ratio < 1))} of {ratio.size} points"
            planes.append(f"{name} at P = {P}: E_kernel/E_feature from {ratio.min():.2f} to {ratio.max():.2f}, the "
                          f"kernel learner wins {where}")
            decided += int(pl.decided.sum())
            agree += int((pl.decided & pl.agrees).sum())
            total += pl.decided.size
    lengths = ", ".join(f"{int(n)}" for n in d.sim_N)
    test_lengths = ", ".join(f"{int(n)}" for n in d.sim_N_test)
    return ("Beyond the seed (Gu, Xu & Zdeborová: 'different context-length scalings', 'training and inference context "
            f"lengths'). D = {s['D']}, λ = {s['lam']:g}, noise-free, fresh tasks. (a) Test error (units of "
            f"E_g(ŷ = 0)) against the context length N = N_test at P = {d.P}: kernel learner (solid, squares) and "
            "feature learner (dashed, circles) for relu (green) and f = z/2 + He₂/√2 (purple); lines: the theories "
            "(as in figure learners: the feature learner as trained), points: simulations at N ∈ "
            f"{{{lengths}}} ({s['n_sets']} training sets) ± 1 s.e. The legend gives the exponent γ of "
            "E(N) − E∞ ≈ A N^−γ fitted to the theory over the shaded range "
            f"(validation.experiments._learners_scaling.fit_power_law). (b) The models trained at N = {d.N_train} "
            "evaluated at other context lengths N_test, without retraining (exact for the kernel learner, Monte "
            f"Carlo over {s['n_test_prompts']} prompts for the feature learner, whose readout is the one trained at "
            f"N = {d.N_train} in the theory as in the simulation). (c–f) Which learner wins over (N_test, N): colour "
            f"log10(E_kernel/E_feature) of the theories (red: the feature learner wins), at P = {d.P} (c, d) and "
            f"P = {d.P_memo} (e, f); circles: every simulated training set evaluated at N_test ∈ {{{test_lengths}}} "
            f"({s['n_sets']} sets a cell at P = {d.P}, {s['n_sets_memo']} at P = {d.P_memo}), filled in the winner's "
            "colour when the simulated ratio is resolved (|ln ratio| > 2 s.e.) and agrees with the theory, ✕ when "
            "resolved the other way, open for a tie; dotted: N_test = N. The exponents γ: " + gammas + ". Theory: "
            + "; ".join(planes) + f". Simulation: {decided} of {total} cells resolve a winner and {agree} of them "
            "agree with the theories.")


@register("learners_scaling", "Kernel vs feature learner: context-length scaling, and which wins over (N, N_test)",
          caption=_scaling_caption, experiment="learners_scaling", order=22.1)
def draw_scaling(result):
    return plot_scaling(result.data, result.settings)
