r"""A two-layer transformer trained on pools of random Markov chains, read against the ideal estimators
(optional extra ``[torch]``).

Gibson, Cui & Reddy, *Distinct mechanisms underlying in-context learning in transformers*, arXiv:2604.12151 (the
paper, its code and the data: ``diagnostics/_markov_readouts.py``), rebuilt at CPU scale.

**Model** (the authors' architecture, smaller): token embedding ``C → d``, then two blocks
``[attention, MLP]`` with pre-LayerNorm residuals

.. math::
   h ← h + \mathrm{Att}(\mathrm{LN}(h)), \qquad h ← h + W_2\,\mathrm{GELU}(W_1\,\mathrm{LN}(h)),

a final LayerNorm and a linear readout to ``C`` logits. Each attention layer has a single head of size ``d``
(keys, queries and values ``d × d``, no output matrix), causal softmax weights
``A_{ij} ∝ \exp(q_i·k_j/\sqrt d + b_{i−j})`` for ``j ≤ i``, and positions either by rotary embeddings of ``q, k``
(``positions="rotary"``, base 10⁴) or by a learned relative bias ``b_{i−j}`` (``positions="relative"``; the
authors' RePE); the MLP has width ``4d``. Weights start ``N(0, 1/d)``, the residual outputs (values and the
second MLP matrix) ``N(0, 1/(4d))`` (the GPT-2 correction for four residual writes). Training: AdamW
(``β = (0.9, 0.95)``, no weight decay, constant learning rate), fresh batches every step, cross-entropy of every
next state ``x_{t+1}`` given ``x_0 … x_t``, ``t = 0 … L−2``.

**Read-outs** (per-position losses beside the estimators', KL to each estimator and the phase, the order
parameters ``PTA``, ``IHA``, ``IHA_tot``): ``diagnostics/_markov_readouts.py``, on ``n_eval`` fixed sequences from
the pool and ``n_eval`` from fresh chains.

torch is imported only inside the functions: the library and its tests run without it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
from diagnostics._markov_readouts import ESTIMATORS, attention_order_parameters, kl_per_position, phase
from linattn import _check as check
from linattn._results import python_scalars, short_repr

from ._transformer_training import require_torch

POSITIONS = ("rotary", "relative")


def _modules():
    """The torch modules (defined lazily so that importing this file does not import torch)."""
    torch = require_torch()
    nn = torch.nn

    class Head(nn.Module):
        """Single causal softmax head of size ``d`` with rotary positions or a learned relative bias."""

        def __init__(self, d, length, positions):
            super().__init__()
            self.d, self.positions = d, positions
            self.key, self.query, self.value = (nn.Linear(d, d, bias=False) for _ in range(3))
            offset = torch.arange(length)[:, None] - torch.arange(length)[None, :]
            self.register_buffer("mask", offset < 0, persistent=False)
            if positions == "rotary":
                freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
                angle = torch.arange(length, dtype=torch.float32)[:, None] * freq[None, :]
                self.register_buffer("cos", torch.cos(angle), persistent=False)
                self.register_buffer("sin", torch.sin(angle), persistent=False)
            else:
                self.bias = nn.Parameter(torch.zeros(length))
                self.register_buffer("offset", offset.clamp(min=0), persistent=False)

        def _rotate(self, x):
            T = x.shape[1]
            a, b = x[..., 0::2], x[..., 1::2]
            c, s = self.cos[:T], self.sin[:T]
            return torch.stack([a * c - b * s, a * s + b * c], dim=-1).flatten(-2)

        def forward(self, x):
            T = x.shape[1]
            q, k, v = self.query(x), self.key(x), self.value(x)
            if self.positions == "rotary":
                q, k = self._rotate(q), self._rotate(k)
            s = (q @ k.transpose(-1, -2)) / np.sqrt(self.d)
            if self.positions == "relative":
                s = s + self.bias[self.offset[:T, :T]]
            a = torch.softmax(s.masked_fill(self.mask[:T, :T], float("-inf")), dim=-1)
            return a @ v, a

    class MarkovTransformer(nn.Module):
        """Embedding, ``[attention, MLP] × layers`` with pre-LayerNorm residuals, final LayerNorm, readout."""

        def __init__(self, C, length, d, layers, positions):
            super().__init__()
            self.embed = nn.Embedding(C, d)
            self.heads = nn.ModuleList(Head(d, length, positions) for _ in range(layers))
            self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d, bias=False), nn.GELU(),
                                                    nn.Linear(4 * d, d, bias=False)) for _ in range(layers))
            self.ln_att = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
            self.ln_mlp = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))
            self.ln_out = nn.LayerNorm(d)
            self.readout = nn.Linear(d, C, bias=False)
            std = d ** -0.5
            residual = [h.value.weight for h in self.heads] + [m[2].weight for m in self.mlps]
            with torch.no_grad():
                for p in self.parameters():
                    if p.dim() == 2:
                        p.normal_(0.0, std)
                for p in residual:
                    p.normal_(0.0, std / np.sqrt(len(residual)))

        def forward(self, x, attention=False):
            h = self.embed(x)
            pats = []
            for head, mlp, la, lm in zip(self.heads, self.mlps, self.ln_att, self.ln_mlp):
                out, a = head(la(h))
                h = h + out
                h = h + mlp(lm(h))
                pats.append(a)
            logits = self.readout(self.ln_out(h))
            return (logits, pats) if attention else logits

    return torch, MarkovTransformer


def build_markov_model(C, length, d_model=32, layers=2, positions="rotary"):
    """The transformer trained by :func:`train_markov_transformer`, as a ``torch.nn.Module`` (module docstring).

    ``model(x)`` maps states ``x`` (int64, shape (B, T), ``T <= length``) to next-state logits (B, T, C);
    ``model(x, attention=True)`` also returns the attention weights of each layer, a list of (B, T, T).

    Parameters
    ----------
    C : int
        Number of states, ``>= 2``.
    length : int
        Longest input, ``>= 2`` (sets the position tables).
    d_model : int
        Width (and head size), even, ``>= 2``.
    layers : int
        Number of ``[attention, MLP]`` blocks, 1 to 4.
    positions : {"rotary", "relative"}

    Returns
    -------
    torch.nn.Module
    """
    C = check.positive_int("C", C, minimum=2)
    length = check.positive_int("length", length, minimum=2)
    d_model = check.positive_int("d_model", d_model, minimum=2)
    if d_model % 2:
        check.fail("d_model", d_model, "an even integer >= 2 (rotary embeddings rotate pairs of coordinates)")
    layers = check.positive_int("layers", layers, maximum=4)
    positions = check.choice("positions", positions, POSITIONS)
    _, Model = _modules()
    return Model(C, length, d_model, layers, positions)


# ----------------------------------------------------------------------------- training
@dataclass(frozen=True)
class MarkovTransformerRun:
    r"""A transformer trained on Markov chains, with its read-outs along training (module docstring).

    Attributes
    ----------
    C, K, length : int
        States, pool size (``None``: a fresh chain per sequence, ``K = ∞``), states per sequence ``L``.
    concentration : float
    d_model, seed : int
    lr : float
    batch : int
    positions : str
    steps : ndarray (R,)
        Recorded steps.
    train_loss : ndarray (R,)
        Training loss averaged over the steps since the previous record.
    loss_pool, loss_fresh : ndarray (R, L−1)
        Per-position model loss on the fixed pool / fresh-chain evaluation sequences at each record.
    est_loss_pool, est_loss_fresh : dict of str to ndarray (L−1,)
        Per-position losses of the estimators on the same sequences (memorizing ones and Bayes: finite ``K``).
    kl_pool, kl_fresh : dict of str to ndarray (R, L−1)
        ``KL_t(estimator ‖ model)`` at each record.
    phases : tuple of str
        :func:`diagnostics.markov.phase` of ``kl_pool`` at each record.
    pta, iha, iha_total : ndarray (R,)
        :func:`diagnostics.markov.attention_order_parameters` on the pool evaluation sequences at each
        record.
    n_eval : int
        Evaluation sequences of each kind.
    pool : ndarray (K, C, C) or None
        The training pool (``None`` for ``K = ∞``).
    eval_pool, eval_fresh : ndarray of int64 (n_eval, L)
        The evaluation sequences.
    prob_pool, prob_fresh : ndarray (n_eval, L−1, C)
        The trained model's predictive probabilities on them (last record).
    """

    __repr__ = short_repr

    C: int
    K: int | None
    length: int
    concentration: float
    d_model: int
    seed: int
    lr: float
    batch: int
    positions: str
    steps: np.ndarray
    train_loss: np.ndarray
    loss_pool: np.ndarray
    loss_fresh: np.ndarray
    est_loss_pool: dict
    est_loss_fresh: dict
    kl_pool: dict
    kl_fresh: dict
    phases: tuple
    pta: np.ndarray
    iha: np.ndarray
    iha_total: np.ndarray
    n_eval: int
    pool: np.ndarray | None
    eval_pool: np.ndarray
    eval_fresh: np.ndarray
    prob_pool: np.ndarray
    prob_fresh: np.ndarray

    def __post_init__(self):
        python_scalars(self)

    @property
    def phase(self) -> str:
        """The phase at the last record (:func:`diagnostics._markov_readouts.phase` of ``kl_pool``)."""
        return self.phases[-1]


def _nll(prob, targets):
    """Per-position ``−mean_s ln p[s, t, x_{s,t+1}]``: (n, T, C), (n, T) → (T,)."""
    p = np.take_along_axis(prob, targets[..., None], axis=-1)[..., 0]
    return -np.log(p).mean(0)


def _estimator_probs(chains, states, pool, seed):
    """Predictive probabilities of the estimators (the memorizing ones only with a pool); the Bayes predictor
    of fresh chains with a stationary first state is a Monte-Carlo ratio, seeded from ``(seed, 5)``."""
    from linattn import markov

    names = ESTIMATORS if chains.K is not None else ("1-gen", "2-gen", "bayes")
    return {n: markov.predict(states, n, pool=pool, chains=chains, rng=(seed, 5)) for n in names}


def train_markov_transformer(chains, length, steps, rng, d_model=32, lr=1e-3, batch=32, record=None, n_eval=256,
                             positions="rotary", layers=2, progress=False) -> MarkovTransformerRun:
    r"""Train the two-layer transformer online on ``chains`` and read it against the estimators (module docstring).

    Every step draws ``batch`` fresh sequences of ``length`` states from the pool (drawn once, ``K`` finite) or
    from fresh chains (``K = None``) and takes one AdamW step on the mean next-state cross-entropy over all
    ``L − 1`` positions. Every ``record`` steps the model is evaluated on fixed sequences — ``n_eval`` from the
    pool, ``n_eval`` from fresh chains — against :func:`linattn.markov.predict`.

    Seeds: torch from ``seed``; the pool from ``(seed, 1)``, step ``k``'s batch from ``(seed, 2, k)``, the
    evaluation sequences from ``(seed, 3)`` (pool) and ``(seed, 4)`` (fresh), the Monte-Carlo Bayes predictor of
    fresh chains (``K = ∞``) from ``(seed, 5)``: a run is reproducible for a fixed seed on one thread.

    Parameters
    ----------
    chains : linattn.markov.Chains
        The task law (``C``, ``α``, ``K``, first state).
    length : int
        States per sequence ``L`` (``>= 3``); the model sees ``x_0 … x_{L−2}`` and predicts ``x_1 … x_{L−1}``.
    steps : int
        AdamW steps, a multiple of ``record``.
    rng : int or numpy.random.Generator
        The seed (a Generator gives one draw of it).
    d_model : int
        Width, even.
    lr : float
        Learning rate.
    batch : int
        Sequences per step.
    record : int, optional
        Steps between records (default ``steps // 20``, at least 1); at least 2 records.
    n_eval : int
        Evaluation sequences of each kind.
    positions : {"rotary", "relative"}
    layers : int
        ``[attention, MLP]`` blocks; the order parameters need 2 (with 1, ``iha`` reads layer 1).
    progress : bool

    Returns
    -------
    MarkovTransformerRun

    Raises
    ------
    linattn.ConvergenceError
        If the training loss stops being finite (lower ``lr``).
    """
    from linattn import markov

    if not isinstance(chains, markov.Chains):
        check.fail("chains", chains, "a linattn.markov.Chains")
    length = check.positive_int("length", length, minimum=3)
    steps = check.positive_int("steps", steps, minimum=2)
    record = max(1, steps // 20) if record is None else record
    record = check.positive_int("record", record, maximum=steps // 2)
    if steps % record:
        check.fail("steps", steps, f"a multiple of record = {record}")
    seed = check.seed_int("rng", rng)
    d_model = check.positive_int("d_model", d_model, minimum=2)
    lr = check.positive("lr", lr)
    batch = check.positive_int("batch", batch)
    n_eval = check.positive_int("n_eval", n_eval)
    positions = check.choice("positions", positions, POSITIONS)
    layers = check.positive_int("layers", layers, maximum=4)
    progress = check.boolean("progress", progress)
    torch, _ = _modules()
    torch.manual_seed(seed)
    model = build_markov_model(chains.C, length - 1, d_model=d_model, layers=layers, positions=positions)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)

    pool = chains.draw_pool((seed, 1)) if chains.K is not None else None
    fresh = markov.Chains(chains.C, chains.concentration, None, chains.first_state)
    ev_pool = chains.sample(n_eval, length, (seed, 3), pool=pool).states
    ev_fresh = fresh.sample(n_eval, length, (seed, 4)).states
    est = {k: _estimator_probs(chains, v, pool, seed) for k, v in (("pool", ev_pool), ("fresh", ev_fresh))}
    sets = {"pool": ev_pool, "fresh": ev_fresh}
    est_loss = {k: {n: _nll(p, sets[k][:, 1:]) for n, p in est[k].items()} for k in sets}
    inputs = {k: torch.tensor(v[:, :-1]) for k, v in sets.items()}

    out = {k: [] for k in ("steps", "train", "loss_pool", "loss_fresh", "pta", "iha", "iha_total")}
    kls = {k: {n: [] for n in est[k]} for k in sets}
    phases, final = [], {}
    it = range(1, steps + 1)
    if progress:
        from tqdm.auto import tqdm
        it = tqdm(it, desc=f"Markov transformer K={chains.K} L={length}", leave=False)
    running = 0.0
    for step in it:
        x = torch.tensor(chains.sample(batch, length, (seed, 2, step), pool=pool).states)
        logits = model(x[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, chains.C), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item()
        if step % record:
            continue
        if not np.isfinite(running):
            raise linattn.ConvergenceError(f"train_markov_transformer: the loss is not finite at step {step} "
                                           f"(lower lr = {lr})")
        out["steps"].append(step)
        out["train"].append(running / record)
        running = 0.0
        with torch.no_grad():
            for k in sets:
                logits, pats = model(inputs[k], attention=True)
                prob = torch.softmax(logits.double(), dim=-1).numpy()
                final[k] = prob
                out[f"loss_{k}"].append(_nll(prob, sets[k][:, 1:]))
                for n, p in est[k].items():
                    kls[k][n].append(kl_per_position(p, prob))
                if k == "pool":
                    A1, A2 = pats[0].double().numpy(), pats[min(1, layers - 1)].double().numpy()
                    pta, iha, tot = attention_order_parameters(A1, A2, sets[k][:, :-1])
                    out["pta"].append(pta)
                    out["iha"].append(iha)
                    out["iha_total"].append(tot)
        phases.append(phase({n: v[-1] for n, v in kls["pool"].items()}))
    return MarkovTransformerRun(
        C=chains.C, K=chains.K, length=length, concentration=chains.concentration, d_model=d_model, seed=seed, lr=lr,
        batch=batch,
        positions=positions, steps=np.array(out["steps"]), train_loss=np.array(out["train"]),
        loss_pool=np.array(out["loss_pool"]), loss_fresh=np.array(out["loss_fresh"]),
        est_loss_pool=est_loss["pool"], est_loss_fresh=est_loss["fresh"],
        kl_pool={n: np.array(v) for n, v in kls["pool"].items()},
        kl_fresh={n: np.array(v) for n, v in kls["fresh"].items()}, phases=tuple(phases),
        pta=np.array(out["pta"]), iha=np.array(out["iha"]), iha_total=np.array(out["iha_total"]), n_eval=n_eval,
        pool=pool, eval_pool=ev_pool, eval_fresh=ev_fresh, prob_pool=final["pool"], prob_fresh=final["fresh"])
