"""A two-layer transformer trained on pools of ``K`` random Markov chains (optional extra ``[torch]``;
Gibson, Cui & Reddy, arXiv:2604.12151): experiment ``markov_transformer`` (figure ``markov_transformer``,
:mod:`validation.gallery.markov_transformer`).

One point per run ``(K, L, seed)`` of
:func:`validation.simulators.train_markov_transformer` (``K = None``
is ``K = ∞``, a fresh chain per sequence). Per run: the per-position losses of the model and of the estimators on
pool and fresh-chain evaluation sequences, ``KL(estimator ‖ model)`` and the phase along training, the order
parameters (layer-1 previous-token attention, layer-2 induction attention), and the per-sequence terms of the
identity ``E[ℓ_model − ℓ_bayes] = E[KL(bayes ‖ model)]`` (finite ``K``). Assembled: the phase diagram over
``K × L`` (the last record's phase of each run). Quick: 6 runs, ``C = 3``, ``L ∈ {16, 32}``, ``K ∈ {2, 16, ∞}``,
1500 steps each (measured 2 min 47 s of CPU with the torch import); full: ``K ∈ {2, 4, …, 512, ∞} ×
L ∈ {16, 32, 64}`` × 2 seeds, 6000 steps, resumable point by point through the sweep store
(``linattn figures markov_transformer --full --store DIR``).

Torch is imported only when a point is computed (one thread per run: points run in parallel processes).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linattn._numerics.stats import mean_se

from ._base import Check, Experiment
from ._data import ExperimentData

PHASES = ("1-mem", "2-mem", "1-gen", "2-gen")
ESTIMATORS = PHASES + ("bayes",)
COMMON = dict(C=3, concentration=1.0, d_model=32, lr=3e-3, batch=32, n_eval=256, positions="rotary")


def _k_label(K):
    return "inf" if K is None else str(int(K))


def _late(L):
    """The last quarter of the ``L − 1`` predicted positions (where the estimators have seen most context)."""
    return slice(3 * (L - 1) // 4, None)


@dataclass(frozen=True, eq=False, repr=False)
class TransformerRun(ExperimentData):
    """One training run of the transformer (``R`` records along training, ``L − 1`` predicted positions).

    Attributes
    ----------
    K : float
        Pool size (``inf``: a fresh chain per sequence).
    length : int
        Sequence length ``L``.
    seed : int
    steps : ndarray (R,)
        Training steps of the records.
    train_loss : ndarray (R,)
        Training loss.
    loss_pool, loss_fresh : ndarray (R, L − 1)
        Per-position loss (nats) on the pool's and on fresh chains' evaluation sequences.
    pta, iha, iha_total : ndarray
        Order parameters along training: layer-1 previous-token attention, layer-2 induction attention (per key
        and total).
    phase : ndarray of int (R,)
        The phase of each record: the index in :data:`PHASES` of the smallest position-averaged KL.
    est_loss_pool, est_loss_fresh : ndarray (n_estimators, L − 1)
        Per-position loss of each estimator of :data:`ESTIMATORS` (``nan`` where not defined).
    kl_pool, kl_fresh : ndarray (R, n_estimators, L − 1)
        ``KL(estimator ‖ model)`` along training.
    late_gap_2gen, late_gap_1gen_2gen : ndarray (n_eval,)
        Per fresh sequence, the late-position loss of the model − 2-gen, and of 1-gen − 2-gen.
    identity : ndarray (n_eval,)
        Per pool sequence, ``ℓ_model − ℓ_bayes − KL(bayes ‖ model)`` (mean over positions; ``nan`` for ``K = ∞``).
    identity_kl : float
        The mean ``KL(bayes ‖ model)`` (``nan`` for ``K = ∞``).
    """

    K: float
    length: int
    seed: int
    steps: np.ndarray
    train_loss: np.ndarray
    loss_pool: np.ndarray
    loss_fresh: np.ndarray
    pta: np.ndarray
    iha: np.ndarray
    iha_total: np.ndarray
    phase: np.ndarray
    est_loss_pool: np.ndarray
    kl_pool: np.ndarray
    est_loss_fresh: np.ndarray
    kl_fresh: np.ndarray
    late_gap_2gen: np.ndarray
    late_gap_1gen_2gen: np.ndarray
    identity: np.ndarray
    identity_kl: float


@dataclass(frozen=True, eq=False, repr=False)
class MarkovTransformerData(ExperimentData):
    """Data of ``markov_transformer``.

    Attributes
    ----------
    K : ndarray (n_K,)
        Pool sizes (``inf``: a fresh chain per sequence).
    lengths : ndarray (n_L,)
        Sequence lengths.
    phase_grid : ndarray of int (n_K, n_L, n_seeds)
        The last record's phase of each run (index in :data:`PHASES`).
    kl_grid : ndarray (n_K, n_L, n_seeds, 4)
        The last record's position-averaged ``KL(estimator ‖ model)`` on pool sequences, per phase estimator.
    late_gap_grid : ndarray (n_K, n_L, n_seeds, 5)
        The last record's late-position loss on fresh chains minus each estimator's (:data:`ESTIMATORS`).
    runs : tuple of TransformerRun
        Every run, in the order of the points (``K``, then ``L``, then the seed).
    """

    K: np.ndarray
    lengths: np.ndarray
    phase_grid: np.ndarray
    kl_grid: np.ndarray
    late_gap_grid: np.ndarray
    runs: tuple[TransformerRun, ...]

    def run(self, K, length, seed) -> TransformerRun:
        """The run of pool size ``K`` (``None`` or ``inf``: fresh chains), length and seed.

        Parameters
        ----------
        K : int, float or None
        length, seed : int

        Returns
        -------
        TransformerRun
        """
        K = np.inf if K is None else float(K)
        return next(r for r in self.runs if r.K == K and r.length == length and r.seed == seed)

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: the grids, and every run's arrays as ``K{K or inf}_L{L}_s{seed}_{field}`` (the tags in
        ``meta["runs"]``)."""
        out = dict(arrays)
        for i, tag in enumerate(meta["runs"]):
            k, L, seed = tag.split("_")
            at = f"runs[{i}]."
            out[at + "K"] = np.inf if k == "Kinf" else float(k[1:])
            out[at + "length"], out[at + "seed"] = int(L[1:]), int(seed[1:])
            for key in list(out):
                if key.startswith(tag + "_"):
                    out[at + key[len(tag) + 1:]] = out.pop(key)
        return out


class MarkovTransformer(Experiment):
    """Transformer on Markov chains: losses beside the estimators, phases, order parameters (module docstring)."""

    name = "markov_transformer"
    title = "A two-layer transformer on K Markov chains: losses beside the estimators, phases and order parameters"
    data_class = MarkovTransformerData
    positive = ("lr", "concentration")
    presets = {
        "smoke": dict(COMMON, K=[2, None], lengths=[8], seeds=[0], steps=20, record=10, d_model=8, batch=8,
                      n_eval=16),
        "quick": dict(COMMON, K=[2, 16, None], lengths=[16, 32], seeds=[0], steps=1500, record=50),
        "full": dict(COMMON, K=[2, 4, 8, 16, 32, 64, 128, 256, 512, None], lengths=[16, 32, 64], seeds=[0, 1],
                     steps=6000, record=100),
    }

    def points(self, s):
        return [dict(K=K, length=int(L), seed=int(seed)) for K in s.K for L in s.lengths for seed in s.seeds]

    def compute(self, s, point):
        from linattn import markov

        from ..simulators._markov_training import train_markov_transformer
        from ..simulators._transformer_training import require_torch

        torch = require_torch()             # without the extra: an ImportError that says how to install it

        torch.set_num_threads(1)
        chains = markov.Chains(s.C, s.concentration, point["K"])
        r = train_markov_transformer(chains, point["length"], s.steps, point["seed"], d_model=s.d_model, lr=s.lr,
                                     batch=s.batch, record=s.record, n_eval=s.n_eval, positions=s.positions)
        L1 = point["length"] - 1
        nan = np.full(L1, np.nan)
        out = dict(steps=r.steps, train_loss=r.train_loss, loss_pool=r.loss_pool, loss_fresh=r.loss_fresh,
                   pta=r.pta, iha=r.iha, iha_total=r.iha_total,
                   phase=np.array([PHASES.index(p) for p in r.phases]))
        for kind in ("pool", "fresh"):
            est = getattr(r, f"est_loss_{kind}")
            kl = getattr(r, f"kl_{kind}")
            out[f"est_loss_{kind}"] = np.array([est.get(n, nan) for n in ESTIMATORS])
            out[f"kl_{kind}"] = np.stack([kl[n] if n in kl else np.full(r.loss_pool.shape, np.nan)
                                          for n in ESTIMATORS], axis=1)          # (R, estimators, L−1)
        # per-sequence late-position losses on fresh chains, paired: model − 2-gen and 1-gen − 2-gen (K = ∞ check)
        late, tgt = _late(point["length"]), r.eval_fresh[:, 1:, None]

        def late_nll(p):
            return -np.log(np.take_along_axis(p, tgt, axis=-1)[..., 0])[:, late].mean(1)

        g2 = late_nll(markov.predict(r.eval_fresh, "2-gen", chains=chains))
        out["late_gap_2gen"] = late_nll(r.prob_fresh) - g2
        out["late_gap_1gen_2gen"] = late_nll(markov.predict(r.eval_fresh, "1-gen", chains=chains)) - g2
        # identity E[ℓ_model − ℓ_bayes] = E[KL(bayes ‖ model)] per sequence (finite K, pool sequences)
        if r.pool is not None:
            bayes = markov.predict(r.eval_pool, "bayes", pool=r.pool, chains=chains, rng=(point["seed"], 5))
            tgt = r.eval_pool[:, 1:, None]
            lm = -np.log(np.take_along_axis(r.prob_pool, tgt, axis=-1)[..., 0])
            lb = -np.log(np.take_along_axis(bayes, tgt, axis=-1)[..., 0])
            kl = np.sum(bayes * (np.log(bayes) - np.log(r.prob_pool)), axis=-1)
            out["identity"] = (lm - lb - kl).mean(1)                                    # (n_eval,) per sequence
            out["identity_kl"] = np.asarray(kl.mean())
        else:
            out["identity"] = np.full(r.n_eval, np.nan)
            out["identity_kl"] = np.asarray(np.nan)
        return out

    def assemble(self, s, outputs):
        pts = self.points(s)
        nK, nL, nS = len(s.K), len(s.lengths), len(s.seeds)
        d = {"K": np.array([np.inf if K is None else float(K) for K in s.K]), "lengths": np.array(s.lengths),
             "phase_grid": np.zeros((nK, nL, nS), dtype=np.int64), "kl_grid": np.zeros((nK, nL, nS, len(PHASES))),
             "late_gap_grid": np.zeros((nK, nL, nS, len(ESTIMATORS)))}
        runs, tags = [], []
        for i, (p, o) in enumerate(zip(pts, outputs)):
            a, b, c = s.K.index(p["K"]), s.lengths.index(p["length"]), s.seeds.index(p["seed"])
            tags.append(f"K{_k_label(p['K'])}_L{p['length']}_s{p['seed']}")
            runs.append(TransformerRun(K=np.inf if p["K"] is None else p["K"], length=p["length"], seed=p["seed"],
                                       **{key: np.asarray(v) for key, v in o.items()}))
            d["phase_grid"][a, b, c] = int(o["phase"][-1])
            d["kl_grid"][a, b, c] = np.asarray(o["kl_pool"])[-1, : len(PHASES)].mean(-1)
            late = _late(p["length"])
            d["late_gap_grid"][a, b, c] = (np.asarray(o["loss_fresh"])[-1, late].mean()
                                           - np.asarray(o["est_loss_fresh"])[:, late].mean(-1))
        meta = dict(s, runs=tags, phases=list(PHASES), estimators=list(ESTIMATORS),
                    K_labels=[_k_label(K) for K in s.K])
        return MarkovTransformerData(**d, runs=tuple(runs)), meta

    def checks(self, result):
        d, m = result.data, result.meta
        s = result.settings
        rows = []
        Ls = list(s["lengths"])
        L = max(Ls)
        seed = s["seeds"][0]
        par = (f"C = {s['C']}, α = {s['concentration']}, d = {s['d_model']}, {s['steps']} steps, lr {s['lr']}, "
               f"batch {s['batch']}")
        # 1. K = ∞: the late-position loss on fresh chains is closer to 2-gen than to 1-gen (uses 2-point statistics)
        if None in s["K"]:
            run = d.run(None, L, seed)
            gap, ref = run.late_gap_2gen, run.late_gap_1gen_2gen
            v_mean, se = mean_se(gap - 0.5 * ref, single=np.nan)      # one sequence: nan, the check fails
            rows.append(Check(self.name, "K = ∞: late-position loss on fresh chains, model − 2-gen",
                              f"{par}, L = {L}, last quarter of the positions, {gap.size} sequences",
                              f"< (1-gen − 2-gen)/2 = {0.5 * ref.mean():.4f}", f"{gap.mean():.4f}",
                              f"{gap.mean() / ref.mean():.2f} of the 1-gen − 2-gen gap", v_mean < 4 * se,
                              "closer to 2-gen than to 1-gen (the model uses 2-point statistics): "
                              "mean(gap − ref/2) < 4 s.e. (paired over the evaluation sequences)"))
        # 2. the smallest K: a memorizing phase at every length
        Kmin = min(k for k in s["K"] if k is not None)
        a = s["K"].index(Kmin)
        ph = [m["phases"][int(v)] for v in d.phase_grid[a].ravel()]
        rows.append(Check(self.name, f"K = {Kmin}: phase (smallest position-averaged KL(estimator ‖ model))",
                          f"{par}, L ∈ {Ls}", "1-mem or 2-mem", ", ".join(ph), "—",
                          all(p in ("1-mem", "2-mem") for p in ph),
                          "a pool this small is memorized (arXiv:2604.12151: memorization below K₁*)"))
        # 3. identity E[ℓ_model − ℓ_bayes] = E[KL(bayes ‖ model)] on pool sequences, every finite-K run
        for K in s["K"]:
            if K is None:
                continue
            for Lr in Ls:
                run = d.run(K, Lr, seed)
                v = run.identity
                mean, se = mean_se(v, single=np.nan)      # one sequence: nan, the check fails
                rows.append(Check(self.name, "E[ℓ_model − ℓ_bayes] − E[KL(bayes ‖ model)] (pool sequences)",
                                  f"K = {K}, L = {Lr}, {v.size} sequences", "0",
                                  f"{mean:.2e} ± {se:.1e} (KL {run.identity_kl:.3g})", "—",
                                  abs(mean) <= 4 * se,
                                  "exact in expectation (the targets follow the Bayes predictive): |mean| ≤ 4 s.e."))
        return rows
