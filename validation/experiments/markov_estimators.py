r"""Ideal estimators of the Markov-chain task (Gibson, Cui & Reddy, arXiv:2604.12151): experiment
``markov_estimators`` (figure ``markov_estimators``, docs/markov.md).

``C = 10`` states, rows ``~ Dirichlet(α = 1)``, first state from the chain's stationary law (the authors'
transformer data) unless stated. Mean log-loss vs position ``n`` of 1-mem, 2-mem, 1-gen, 2-gen, bayes and the
oracle ("true") (:func:`linattn.markov.losses`):

* ``K = ∞`` (fresh chains): 1-gen, 2-gen, true over ``L`` positions; bayes (Monte Carlo over the Dirichlet
  posterior, ``n_mc`` draws) on the first ``L_bayes`` positions; 1-gen with the authors' ``β = α``, with
  ``β* = Cα + 1 − 1/C`` and on a grid of ``β`` (same sequences).
* ``K = ∞`` with a uniform first state (bayes = 2-gen exactly): the 2-gen excess over the oracle at every
  position against the exact i.i.d. Dirichlet–multinomial formula evaluated at the realized visit counts
  ``N_{x_n}`` and against its leading order ``(C − 1)/(2 N_{x_n})``.
* finite ``K`` (``pools``), ``n_pools`` pools of ``n_seq`` sequences each, on the pool's chains and on fresh
  chains.
* Chain averages (``n_chains`` chains): ``E_T[Σ_i π_i H(T_i·)]`` (the oracle's loss on a stationary path) and
  ``log C − E_T[H(π_T)]`` (the limit of bayes' total gain over 2-gen from the first state, docs/markov.md).
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from linattn import markov
from linattn.numerics.stats import mean_se

from .base import Check, Experiment

C, ALPHA = 10, 1.0


def _fmt(x, se=None):
    return f"{x:.4g}" if se is None else f"{x:.4g} ± {se:.2g}"


def excess_iid(m, C, concentration):
    r"""Exact mean excess log-loss of the Dirichlet posterior predictive over the true row after ``m`` i.i.d.
    draws from a ``Dirichlet(α·1_C)`` row: the next symbol ``y`` is size-biased, so its count is
    ``N_y ~ BetaBinomial(m, α + 1, (C − 1)α)`` and
    ``E[ℓ_2gen − ℓ_true] = −E log(N_y + α) + log(m + Cα) − [ψ(Cα + 1) − ψ(α + 1)]``.

    Parameters
    ----------
    m : int
        Earlier transitions from the current state, ``>= 0``.
    C : int
    concentration : float

    Returns
    -------
    float
    """
    k = np.arange(m + 1)
    pk = stats.betabinom.pmf(k, m, concentration + 1, (C - 1) * concentration)
    return float(-(pk * np.log(k + concentration)).sum() + np.log(m + C * concentration)
                 - markov.expected_row_entropy(C, concentration))


C_FS, ALPHA_FS, L_FS = 3, 0.25, 24   # the first state's information: a case where it is large


def _first_state_gain(s):
    """K = ∞, x_0 ~ π_T, C = 3, α = 0.25: per sequence, the total gain Σ_{n<L−1} (ℓ_2gen − ℓ_bayes) of the Monte
    Carlo bayes (``n_mc_fs`` posterior draws per position), the exact telescoped value ``log(C g)``, ``g =
    E_{D(N_{L−1})}[π_T(x_0)]`` (``n_final_mc`` posterior draws: numpy Gamma variates and the vectorized stationary
    law), and the chain average ``log C − E H(π_T)`` (its limit as L → ∞)."""
    ch = markov.Chains(C=C_FS, concentration=ALPHA_FS, first_state="stationary")
    smp = ch.sample(s.n_seq_fs, L_FS, rng=(24, 8))
    x = smp.states
    gain = (markov.log_losses(x, "2-gen", chains=ch)
            - markov.log_losses(x, "bayes", chains=ch, n_mc=s.n_mc_fs, rng=(24, 9))).sum(1)
    gen = np.random.default_rng((24, 10))
    exact = np.empty(len(x))
    for i, seq in enumerate(x):
        N = np.zeros((C_FS, C_FS))
        np.add.at(N, (seq[:-1], seq[1:]), 1)
        G = gen.gamma(ALPHA_FS + N, size=(s.n_final_mc, C_FS, C_FS))
        T = G / G.sum(-1, keepdims=True)
        exact[i] = np.log(C_FS * markov.stationary(T)[:, seq[0]].mean())
    T = ch.draw_chains(s.n_chains, rng=(24, 11))
    pi = markov.stationary(T)
    H_mean, H_se = mean_se(-np.sum(pi * np.log(pi), axis=-1), single=np.nan)      # one chain: nan
    return {"fs_gain": gain, "fs_exact": exact, "fs_limit": np.array([np.log(C_FS) - H_mean, H_se])}


class MarkovEstimators(Experiment):
    """Loss curves of the ideal estimators and their exact checks (module docstring)."""

    name = "markov_estimators"
    title = "Markov-chain ICL: ideal estimators (1-mem, 2-mem, 1-gen, 2-gen, Bayes) vs position"
    #: quick: ≈ 10–15 s on one core (numba kernels compiled); the Monte Carlo bayes of K = ∞ is the costly part
    presets = {"smoke": dict(length=40, n_seq=200, pools=[4], n_pools=2, n_seq_pool=100, L_bayes=6, n_seq_bayes=10,
                             n_mc=4, n_chains=2000, n_beta=3, n_seq_fs=20, n_mc_fs=8, n_final_mc=200),
               "quick": dict(length=500, n_seq=3000, pools=[4, 32], n_pools=8, n_seq_pool=500, L_bayes=24,
                             n_seq_bayes=120, n_mc=16, n_chains=100_000, n_beta=9, n_seq_fs=300, n_mc_fs=64,
                             n_final_mc=4000),
               "full": dict(length=1000, n_seq=20_000, pools=[2, 4, 16, 64, 256], n_pools=16, n_seq_pool=2000,
                            L_bayes=64, n_seq_bayes=1000, n_mc=32, n_chains=400_000, n_beta=13, n_seq_fs=2000,
                            n_mc_fs=128, n_final_mc=20_000)}
    report_order = 94

    def points(self, s):
        return ([dict(part="fresh"), dict(part="uniform"), dict(part="chains"), dict(part="first_state")]
                + [dict(part="pool", K=int(k), on=on) for k in s.pools for on in ("pool", "fresh")])

    def compute(self, s, point):
        part = point["part"]
        if part == "fresh":
            ch = markov.Chains(C=C, concentration=ALPHA, first_state="stationary")
            r = markov.losses(ch, s.n_seq, s.length, rng=(24, 1), names=["1-gen", "2-gen", "true"])
            star = markov.matched_pseudocount(C, ALPHA)
            out = {f"fresh_{k}": r.mean[k] for k in r.names} | {f"fresh_{k}_se": r.se[k] for k in r.names}
            betas = np.geomspace(ALPHA / 4, 16 * star, s.n_beta)
            out["beta"] = betas
            out["beta_total"] = np.array([markov.losses(ch, s.n_seq, s.length, rng=(24, 1), names=["1-gen"],
                                                        pseudocount=b).mean["1-gen"].sum() for b in betas])
            rs = markov.losses(ch, s.n_seq, s.length, rng=(24, 1), names=["1-gen"], pseudocount=star)
            out["fresh_1-gen*"], out["fresh_1-gen*_se"] = rs.mean["1-gen"], rs.se["1-gen"]
            # the oracle per sequence, averaged over positions (s.e. over sequences, not positions)
            smp = ch.sample(s.n_seq, s.length, rng=(24, 2))
            x = smp.states
            out["true_per_seq"] = (-np.log(smp.pool[np.arange(len(x))[:, None], x[:, :-1], x[:, 1:]])).mean(1)
            # bayes by Monte Carlo over the Dirichlet posterior, paired with 2-gen on the same sequences
            b = ch.sample(s.n_seq_bayes, s.L_bayes, rng=(24, 3))
            lb = markov.log_losses(b.states, "bayes", chains=ch, n_mc=s.n_mc, rng=(24, 4))
            l2 = markov.log_losses(b.states, "2-gen", chains=ch)
            out["bayes_early"], out["bayes_early_se"] = mean_se(lb, 0, single=np.nan)      # one sequence: nan
            # paired: far less noisy than bayes itself
            out["bayes_minus_2gen"], out["bayes_minus_2gen_se"] = mean_se(lb - l2, 0, single=np.nan)
            out["gain_per_seq"] = (l2 - lb).sum(1)
            return out
        if part == "uniform":
            ch = markov.Chains(C=C, concentration=ALPHA, first_state="uniform")
            smp = ch.sample(s.n_seq, s.length, rng=(24, 5))
            x = smp.states
            ex = (markov.log_losses(x, "2-gen", chains=ch)
                  + np.log(smp.pool[np.arange(len(x))[:, None], x[:, :-1], x[:, 1:]]))
            onehot = np.eye(C)[x[:, :-1]]
            m = np.take_along_axis(np.cumsum(onehot, 1) - onehot, x[:, :-1, None], axis=-1)[..., 0].astype(int)
            table = np.array([excess_iid(k, C, ALPHA) for k in range(s.length)])
            lead = np.where(m > 0, (C - 1) / (2 * np.maximum(m, 1)), 0.0)
            seen = np.maximum((m > 0).sum(0), 1)
            late = slice(s.length // 2, None)
            uni_excess, uni_excess_se = mean_se(ex, 0)
            return {"uni_excess": uni_excess, "uni_excess_se": uni_excess_se,
                    "uni_iid": table[m].mean(0), "uni_lead": lead.sum(0) / seen,
                    "uni_true0": -np.log(smp.pool[np.arange(len(x)), x[:, 0], x[:, 1]]),
                    "uni_late_diff": (ex[:, late] - table[m[:, late]]).mean(1),
                    "uni_late_lead_diff": (ex[:, late] - lead[:, late]).mean(1)}
        if part == "first_state":
            return _first_state_gain(s)
        if part == "chains":
            T = markov.Chains(C=C, concentration=ALPHA).draw_chains(s.n_chains, rng=(24, 6))
            pi = markov.stationary(T)
            with np.errstate(divide="ignore", invalid="ignore"):
                H_rows = -np.sum(np.where(T > 0, T * np.log(T), 0.0), axis=-1)
                H_pi = -np.sum(np.where(pi > 0, pi * np.log(pi), 0.0), axis=-1)
            return {"chain_weighted_entropy": np.sum(pi * H_rows, axis=-1), "chain_pi_entropy": H_pi}
        ch = markov.Chains(C=C, concentration=ALPHA, K=point["K"], first_state="stationary")
        r = markov.losses(ch, s.n_seq_pool, s.length, rng=(24, 7, point["K"]), n_pools=s.n_pools, on=point["on"])
        tag = f"K{point['K']}_{point['on']}"
        return {f"{tag}_{k}": r.mean[k] for k in r.names} | {f"{tag}_{k}_se": r.se[k] for k in r.names}

    def assemble(self, s, outputs):
        data = {}
        for out in outputs:
            data.update(out)
        data["n"] = np.arange(s.length - 1)
        data["pools"] = np.array(s.pools)
        data["row_entropy"] = np.array(markov.expected_row_entropy(C, ALPHA))
        w, h = data.pop("chain_weighted_entropy"), data.pop("chain_pi_entropy")
        data["weighted_entropy"] = np.array(mean_se(w, single=np.nan))          # one chain: nan
        h_mean, h_se = mean_se(h, single=np.nan)
        data["first_state_limit"] = np.array([np.log(C) - h_mean, h_se])
        return data, {"C": C, "concentration": ALPHA}

    def checks(self, r):
        d, s = r.data, r.settings
        out = []
        par = f"C={C}, α={ALPHA:g}"
        # 1. oracle at n = 0 with a uniform first state: E H(row) = ψ(Cα+1) − ψ(α+1) exactly
        t0 = d["uni_true0"]
        m0, se0 = mean_se(t0)
        H = float(d["row_entropy"])
        out.append(Check("markov", "oracle loss at n = 0, uniform x_0: E H(row) = ψ(Cα+1) − ψ(α+1)",
                         f"{par}, {t0.size} sequences", _fmt(H), _fmt(m0, se0), f"{m0 / H - 1:+.2%}",
                         abs(m0 - H) <= 4 * se0, "within 4 s.e. (Monte Carlo over chains and x_0, x_1)"))
        # 2. oracle on stationary paths: E_T[Σ π_i H(T_i)], not E H(row)
        tp = d["true_per_seq"]
        mt, st = mean_se(tp)
        wt, wse = d["weighted_entropy"]
        se = float(np.hypot(st, wse))
        ok = abs(mt - wt) <= 4 * se
        rejects = abs(mt - H) > 4 * se
        out.append(Check("markov", "oracle loss on stationary paths = E_T[Σ_i π_i H(T_i·)] "
                         "(the uniform-weight E H(row) rejected)" if rejects else
                         "oracle loss on stationary paths = E_T[Σ_i π_i H(T_i·)] (E H(row) not resolved)",
                         f"{par}, {tp.size} sequences × {s['length'] - 1} positions; {s['n_chains']} chains",
                         f"{_fmt(wt, wse)} (E H(row) = {H:.4g})", _fmt(mt, st), f"{mt / wt - 1:+.2%}", ok,
                         "within 4 s.e. (s.e. over sequences and over chains)"))
        # 3. 2-gen excess vs the exact i.i.d. formula at the realized counts, late positions
        dl = d["uni_late_diff"]
        md, sd = mean_se(dl)
        late = slice(s["length"] // 2, None)
        ex, iid, lead = d["uni_excess"][late].mean(), d["uni_iid"][late].mean(), d["uni_lead"][late].mean()
        lead_mean, lead_se = mean_se(d["uni_late_lead_diff"])
        lead_off = abs(lead_mean) > 4 * lead_se
        out.append(Check("markov", "2-gen excess over the oracle, n ≥ L/2: exact i.i.d. Dirichlet–"
                         f"multinomial at the realized N_x (leading order (C−1)/(2N_x) = {lead:.4g}"
                         f"{', resolved as off' if lead_off else ''})",
                         f"{par}, uniform x_0, L={s['length']}, {dl.size} sequences", _fmt(iid), _fmt(ex, sd),
                         f"{ex / iid - 1:+.2%}", abs(md) <= 4 * sd,
                         "paired difference within 4 s.e. (per-sequence means)"))
        # 4. bayes ≤ every estimator, finite K on its own law; bayes = 2-mem at n = 0
        for K in d["pools"]:
            tag = f"K{int(K)}_pool"
            worst, ok = np.inf, True
            for nm in ("1-mem", "2-mem", "1-gen", "2-gen"):
                z = (d[f"{tag}_{nm}"] - d[f"{tag}_bayes"]) / np.hypot(d[f"{tag}_{nm}_se"], d[f"{tag}_bayes_se"])
                worst = min(worst, float(z.min()))
                ok &= bool(np.all(z >= -4))
            same0 = abs(float(d[f"{tag}_bayes"][0] - d[f"{tag}_2-mem"][0])) <= 1e-12
            gap = float((d[f"{tag}_2-mem"] - d[f"{tag}_bayes"]).sum())
            out.append(Check("markov", f"K = {int(K)} on the pool: bayes ≤ every estimator at every n; "
                             f"bayes = 2-mem at n = 0 (exact); Σ_n (2-mem − bayes) = {gap:.3g} nats",
                             f"{par}, {s['n_pools']} pools × {s['n_seq_pool']} sequences, L={s['length']}",
                             "min over n, estimators of (other − bayes)/s.e. ≥ −4", f"{worst:.2f}", "—",
                             ok and same0, "4 s.e. (over pools); identity to 1e-12"))
        # 5. the first state's information, K = ∞, x_0 ~ π: Σ_n (ℓ_2gen − ℓ_bayes) = log(C g) per sequence, ≤ limit
        g, ex = d["fs_gain"], d["fs_exact"]
        diff = g - ex
        md, sd = mean_se(diff, single=np.nan)          # one sequence: nan, the check fails
        mg, sg = mean_se(g, single=np.nan)
        lim, lse = d["fs_limit"]
        ok = abs(md) <= 4 * sd and -4 * sg <= mg <= lim + 4 * np.hypot(sg, lse)
        out.append(Check("markov", "K = ∞, x_0 ~ π: bayes' total gain over 2-gen Σ_{n<L−1} "
                         "(Monte Carlo bayes) = log(C E_post[π_T(x_0)]) per sequence (telescoped, exact), and ≤ "
                         f"its L → ∞ limit log C − E H(π) = {lim:.4g}",
                         f"C={C_FS}, α={ALPHA_FS:g}, L={L_FS}, {g.size} sequences, n_mc={s['n_mc_fs']} per position, "
                         f"{s['n_final_mc']} draws for the exact value", _fmt(ex.mean()), _fmt(mg, sg),
                         f"{mg / ex.mean() - 1:+.2%} (paired {md:+.2g} ± {sd:.2g})", bool(ok),
                         "paired difference within 4 s.e.; 0 ≤ gain ≤ limit within 4 s.e."))
        # 6. 1-gen pseudocount: β* vs the authors' α
        a, b = d["fresh_1-gen"].sum(), d["fresh_1-gen*"].sum()
        betas, tot = d["beta"], d["beta_total"]
        best = float(betas[np.argmin(tot)])
        out.append(Check("markov", "1-gen total loss Σ_n: β* = Cα+1−1/C vs the authors' β = α "
                         f"(grid optimum β ≈ {best:.3g})", f"{par}, K = ∞, L={s['length']}, {s['n_seq']} sequences",
                         f"β = α: {a:.5g}", f"β*: {b:.5g}", f"{b / a - 1:+.3%}", b < a,
                         "β* lower (same sequences: common random numbers)"))
        return out
