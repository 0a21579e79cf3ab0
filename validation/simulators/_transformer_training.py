r"""Nonlinear transformers trained on CPU, with their attention circuits recorded (optional extra ``[torch]``); the
record (:class:`diagnostics.TransformerRun`) and its measures (:func:`diagnostics.emergence`)
are ``diagnostics/_transformer_runs.py``.

The applications of the training diagnostics (``diagnostics/_measures.py``) in Mainali & Teixeira
(arXiv 2504.12916), rebuilt here at CPU scale:

* attention-only transformers (``L`` layers of causal softmax multi-head attention on a residual stream,
  no MLP, no LayerNorm; Elhage et al. 2021, Olsson et al. 2022) trained online on

  - ``"regression"``: in-context linear regression with this library's prompts (:func:`linattn.sample_tokens`):
    tokens ``[x_i; y_i]`` and a query ``[x_q; 0]``, mean squared error on ``y_q``;
  - ``"copy"``: induction-style sequence copying — a block of ``m`` distinct random tokens from a
    vocabulary of ``V``, repeated until the sequence of length ``2·half`` is full, with a period ``m`` drawn
    per sequence in ``[half/2, half]``; cross-entropy of the next token after the first block. The varying
    period defeats positional shortcuts (with a fixed period one layer copies by position): the task is
    solvable only in context, by an induction head, which needs two layers (Olsson et al. 2022);

* modular addition ``(a + b) mod p`` (Power et al. 2022; Nanda et al. 2023): a one-layer transformer with
  an MLP, AdamW with weight decay, a fixed fraction of the ``p²`` pairs for training — it memorises first and
  generalises much later (grokking).

Every ``record`` steps the per-head circuits ``QK_h = W_{Q,h}ᵀ W_{K,h}`` and ``OV_h = W_O[:, h] W_{V,h}``
(:func:`diagnostics.qk_circuit`, :func:`diagnostics.ov_circuit`) of every layer are stored with the losses (and
accuracies), so the diagnostics can be computed afterwards. torch is imported only inside these functions:
the rest of the library, and its tests, run without it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import linattn
from diagnostics._checkpoints import ov_circuit, qk_circuit
from diagnostics._transformer_runs import TransformerRun, emergence
from linattn import _check as check
from linattn import _sampling as sampling
from linattn._results import short_repr

TASKS = ("regression", "copy")


def torch_available() -> bool:
    """``True`` if PyTorch can be imported (the optional extra ``[torch]``).

    Returns
    -------
    bool
    """
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def require_torch():
    """The ``torch`` module, or an ``ImportError`` saying how to install the optional extra ``[torch]``."""
    try:
        import torch
    except ImportError as err:                       # the message says how to get it
        raise ImportError("this needs PyTorch, the optional extra: pip install -e '.[torch]' "
                          "(CPU build: pip install torch --index-url https://download.pytorch.org/whl/cpu)") from err
    return torch


def _modules():
    """The torch modules (defined lazily so that importing this file does not import torch)."""
    torch = require_torch()
    nn = torch.nn

    class Attention(nn.Module):
        """Causal softmax multi-head attention with separate ``W_Q, W_K, W_V, W_O`` (``nn.Linear`` layout)."""

        def __init__(self, d_model, heads):
            super().__init__()
            self.heads, self.d_head = heads, d_model // heads
            self.W_Q, self.W_K, self.W_V = (nn.Linear(d_model, d_model, bias=False) for _ in range(3))
            self.W_O = nn.Linear(d_model, d_model, bias=False)

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v = (w(x).view(B, T, self.heads, self.d_head).transpose(1, 2) for w in (self.W_Q, self.W_K, self.W_V))
            s = (q @ k.transpose(-1, -2)) / np.sqrt(self.d_head)
            mask = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), 1)
            a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
            return self.W_O((a @ v).transpose(1, 2).reshape(B, T, -1))

    class Transformer(nn.Module):
        """Embedding (linear for vectors, table for token ids) + positions, ``L`` residual attention layers
        (each optionally followed by a residual ReLU MLP), linear readout."""

        def __init__(self, n_in, n_out, seq_len, d_model, heads, layers, mlp=0, tokens=False):
            super().__init__()
            self.embed = nn.Embedding(n_in, d_model) if tokens else nn.Linear(n_in, d_model, bias=False)
            self.pos = nn.Parameter(0.02 * torch.randn(seq_len, d_model))
            self.attn = nn.ModuleList(Attention(d_model, heads) for _ in range(layers))
            self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(d_model, mlp), nn.ReLU(), nn.Linear(mlp, d_model))
                                     for _ in range(layers)) if mlp else None
            self.unembed = nn.Linear(d_model, n_out, bias=False)

        def forward(self, x):
            h = self.embed(x) + self.pos[: x.shape[1]]
            for i, att in enumerate(self.attn):
                h = h + att(h)
                if self.mlp is not None:
                    h = h + self.mlp[i](h)
            return self.unembed(h)

    return torch, Transformer


def _width(d_model, heads):
    """Checked ``(d_model, heads)``: ``heads`` divides ``d_model``."""
    d_model = check.positive_int("d_model", d_model, minimum=2)
    heads = check.positive_int("heads", heads, maximum=d_model)
    if d_model % heads:
        check.fail("heads", heads, f"a divisor of d_model = {d_model}")
    return d_model, heads


def _schedule(steps, record):
    """Checked ``(steps, record)``: at least two records, ``steps`` a multiple of ``record``."""
    record = check.positive_int("record", record)
    steps = check.positive_int("steps", steps, minimum=2 * record)
    if steps % record:
        check.fail("steps", steps, f"a multiple of record = {record}")
    return steps, record


def _steps(steps, progress, desc):
    """Steps ``1 … steps``, with a progress bar if asked."""
    it = range(1, steps + 1)
    if check.boolean("progress", progress):
        from tqdm.auto import tqdm
        it = tqdm(it, desc=desc, leave=False)
    return it


def build_model(n_in, n_out, seq_len, d_model=32, heads=4, layers=2, mlp=0, tokens=False):
    """A small transformer as a ``torch.nn.Module`` (the one trained by this module).

    Token embedding (``tokens=True``: a table of ``n_in`` ids; else a linear map of ``n_in``-vectors),
    learned positions, ``layers`` residual blocks of causal softmax attention with separate ``W_Q, W_K, W_V,
    W_O`` (``state_dict`` keys ``attn.{l}.W_Q.weight`` …) each followed by a residual ReLU MLP of width ``mlp``
    (0: attention only), and a linear readout to ``n_out``.

    Parameters
    ----------
    n_in, n_out, seq_len : int
    d_model, heads, layers, mlp : int
        ``heads`` divides ``d_model``; ``mlp >= 0``.
    tokens : bool

    Returns
    -------
    torch.nn.Module
    """
    for name, v in (("n_in", n_in), ("n_out", n_out), ("seq_len", seq_len), ("layers", layers)):
        check.positive_int(name, v)
    d_model, heads = _width(d_model, heads)
    _, Transformer = _modules()
    return Transformer(n_in, n_out, seq_len, d_model, heads, layers, mlp=check.nonneg_int("mlp", mlp),
                       tokens=check.boolean("tokens", tokens))


def _circuits(torch, model, heads):
    """``(QK, OV)`` of every layer: arrays (layers, heads, d, d)."""
    qk, ov = [], []
    with torch.no_grad():
        for att in model.attn:
            WQ, WK, WV, WO = (w.weight.detach().double().numpy() for w in (att.W_Q, att.W_K, att.W_V, att.W_O))
            qk.append(qk_circuit(WQ, WK, heads=heads))
            ov.append(ov_circuit(WO, WV, heads=heads))
    return np.array(qk), np.array(ov)


def _regression_batch(torch, pb, batch, gen):
    tok = sampling.sample_tokens(pb, batch, rng=gen)
    Z = np.concatenate([np.concatenate([tok.X, tok.y[..., None]], axis=2),
                        np.concatenate([tok.xq, np.zeros((batch, 1))], axis=1)[:, None]], axis=1)
    return torch.tensor(Z, dtype=torch.float32), torch.tensor(tok.yq, dtype=torch.float32)


def copy_batch(torch, vocab, half, batch, gen):
    """Sequences (batch, 2 half) repeating a block of distinct tokens with a random period, and the mask of
    the positions whose next token is predictable (after the first block).

    Parameters
    ----------
    torch : module
        The ``torch`` module (the optional extra ``[torch]``, imported by the caller).
    vocab : int
        Vocabulary size (``>= half``).
    half : int
        Half the sequence length: the longest period.
    batch : int
        Number of sequences.
    gen : numpy.random.Generator

    Returns
    -------
    (torch.Tensor, torch.Tensor)
        Token ids, shape ``(batch, 2 half)``, and the boolean mask of predictable next tokens,
        shape ``(batch, 2 half − 1)``.
    """
    period = gen.integers(max(2, half // 2), half + 1, size=batch)
    blocks = np.argsort(gen.random((batch, vocab)), axis=1)[:, :half]       # distinct tokens per row
    pos = np.arange(2 * half)
    seq = np.take_along_axis(blocks, pos[None] % period[:, None], axis=1)
    target_ok = pos[None, 1:] >= period[:, None]                               # next token already seen
    return torch.tensor(seq, dtype=torch.long), torch.tensor(target_ok)


def train_attention_only(task, layers, steps=3000, d_model=32, heads=4, lr=1e-3, batch=64, record=50, rng=0,
                         D=5, N=20, noise=0.0, vocab=32, half=12, progress=False) -> TransformerRun:
    r"""Train an attention-only transformer online (fresh batches every step) with Adam, recording circuits.

    ``"regression"``: ``D``-dimensional in-context linear regression, ``N`` examples per prompt
    (:class:`linattn.Problem`), loss ``½(y_q − ŷ)²`` (the library's ``E_g`` units; predicting 0 gives
    ``½(1 + σ²)``, the optimal ridge estimator ``metrics["baseline"]``). ``"copy"``: sequences of ``half``
    distinct random tokens repeated with a random period (module docstring); loss = cross-entropy of the
    next token where it is determined by the context (chance level ``ln V``).

    Parameters
    ----------
    task : {"regression", "copy"}
    layers : int
        1 to 4.
    steps : int
        Adam steps (multiple of ``record``).
    d_model, heads : int
        Width and heads (``heads`` divides ``d_model``; head size ``d_model / heads``).
    lr : float
        Adam learning rate.
    batch, record : int
    rng : int or numpy.random.Generator
    D, N : int
        Regression: dimension and context length.
    noise : float
        Regression: label-noise std σ.
    vocab, half : int
        Copy: vocabulary size and the longest period (``4 <= half <= vocab``); sequences have ``2·half`` tokens.
    progress : bool

    Returns
    -------
    TransformerRun
    """
    task = check.choice("task", task, TASKS)
    layers = check.positive_int("layers", layers, maximum=4)
    steps, record = _schedule(steps, record)
    d_model, heads = _width(d_model, heads)
    lr = check.positive("lr", lr)
    batch = check.positive_int("batch", batch)
    rng = check.seed_int("rng", rng)
    torch, Transformer = _modules()
    torch.manual_seed(rng)
    gen = np.random.default_rng(rng)
    if task == "regression":
        pb = linattn.Problem(check.positive_int("D", D), check.positive_int("N", N), check.nonnegative("noise", noise))
        model = Transformer(pb.D + 1, 1, pb.N + 1, d_model, heads, layers)
        baseline = pb.icl_solution().test_error
    else:
        vocab = check.positive_int("vocab", vocab, minimum=2)
        half = check.positive_int("half", half, minimum=4, maximum=vocab)
        model = Transformer(vocab, vocab, 2 * half, d_model, heads, layers, tokens=True)
        baseline = 0.0
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    rec_steps, losses, qks, ovs = [], [], [], []
    running = 0.0
    it = _steps(steps, progress, f"{task}, {layers} layer(s)")
    for step in it:
        if task == "regression":
            Z, yq = _regression_batch(torch, pb, batch, gen)
            loss = 0.5 * torch.mean((model(Z)[:, -1, 0] - yq) ** 2)
        else:
            x, ok = copy_batch(torch, vocab, half, batch, gen)
            logits = model(x[:, :-1])                               # next-token predictions
            loss = torch.nn.functional.cross_entropy(logits[ok], x[:, 1:][ok])
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.item()
        if step % record == 0:
            if not np.isfinite(running):
                raise linattn.ConvergenceError(f"train_attention_only: the loss is not finite at step {step} "
                                               f"(lower lr = {lr})")
            rec_steps.append(step)
            losses.append(running / record)
            running = 0.0
            qk, ov = _circuits(torch, model, heads)
            qks.append(qk)
            ovs.append(ov)
    return TransformerRun(task=task, layers=layers, heads=heads, d_model=d_model, seed=rng, steps=np.array(rec_steps),
                          loss=np.array(losses), qk=np.array(qks), ov=np.array(ovs),
                          metrics={"baseline": np.full(len(rec_steps), baseline)})


def train_modular_addition(p=31, train_fraction=0.5, steps=6000, d_model=64, heads=4, mlp=256, lr=3e-3,
                           lam=1.0, record=50, rng=0, progress=False) -> TransformerRun:
    r"""Train a one-layer transformer (attention + MLP) on ``(a + b) mod p`` with full-batch AdamW.

    Inputs ``(a, b, =)`` as three tokens of a vocabulary of ``p + 1``; the logits at the last position
    predict the sum. The recipe of Nanda et al. (ICLR 2023: ``p = 113``, ``d_model = 128``, 30 % of the pairs,
    AdamW ``betas = (0.9, 0.98)``, weight decay 1, learning rate 1e-3) scaled down to grok on one CPU core in
    about two minutes: ``p = 31``, ``d_model = 64``, MLP 256, half of the pairs, learning rate 3e-3 (measured:
    train accuracy 1 after ~250 steps, test accuracy from 0.5 to 0.95 between steps ~2500 and ~3000; with
    learning rate 1e-3, or ``p = 53`` at ``d_model = 128``, it takes several times longer). ``metrics`` holds
    the train/test accuracy and the test loss at each record.

    Parameters
    ----------
    p : int
        Modulus (prime, ``>= 3``).
    train_fraction : float
        Fraction of the ``p²`` pairs used for training, in ``(0, 1)``.
    steps : int
        Full-batch steps (multiple of ``record``).
    d_model, heads, mlp : int
        Width, heads, MLP width.
    lr, lam : float
        Learning rate and the weight decay of AdamW.
    record : int
    rng : int or numpy.random.Generator
    progress : bool

    Returns
    -------
    TransformerRun
    """
    p = check.positive_int("p", p, minimum=3)
    if any(p % k == 0 for k in range(2, int(p**0.5) + 1)):
        check.fail("p", p, "a prime number")
    frac = check.real("train_fraction", train_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    steps, record = _schedule(steps, record)
    d_model, heads = _width(d_model, heads)
    mlp = check.positive_int("mlp", mlp)
    lr = check.positive("lr", lr)
    lam = check.nonnegative("lam", lam)
    rng = check.seed_int("rng", rng)
    torch, Transformer = _modules()
    torch.manual_seed(rng)
    gen = np.random.default_rng(rng)
    a, b = np.divmod(np.arange(p * p), p)
    X = torch.tensor(np.stack([a, b, np.full(p * p, p)], axis=1), dtype=torch.long)
    Y = torch.tensor((a + b) % p, dtype=torch.long)
    perm = gen.permutation(p * p)
    n_train = int(round(frac * p * p))
    tr, te = torch.tensor(perm[:n_train]), torch.tensor(perm[n_train:])
    model = Transformer(p + 1, p, 3, d_model, heads, 1, mlp=mlp, tokens=True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=lam, betas=(0.9, 0.98))
    ce = torch.nn.functional.cross_entropy
    out = {k: [] for k in ("steps", "loss", "test_loss", "train_acc", "test_acc", "qk", "ov")}
    it = _steps(steps, progress, f"modular addition p={p}")
    for step in it:
        logits = model(X[tr])[:, -1]
        loss = ce(logits, Y[tr])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % record == 0:
            if not np.isfinite(loss.item()):
                raise linattn.ConvergenceError(f"train_modular_addition: the loss is not finite at step {step}")
            with torch.no_grad():
                lt = model(X[te])[:, -1]
                out["steps"].append(step)
                out["loss"].append(loss.item())
                out["test_loss"].append(float(ce(lt, Y[te])))
                out["train_acc"].append(float((logits.argmax(-1) == Y[tr]).double().mean()))
                out["test_acc"].append(float((lt.argmax(-1) == Y[te]).double().mean()))
            qk, ov = _circuits(torch, model, heads)
            out["qk"].append(qk)
            out["ov"].append(ov)
    return TransformerRun(task="modular", layers=1, heads=heads, d_model=d_model, seed=rng,
                          steps=np.array(out["steps"]), loss=np.array(out["loss"]), qk=np.array(out["qk"]),
                          ov=np.array(out["ov"]),
                          metrics={k: np.array(out[k]) for k in ("test_loss", "train_acc", "test_acc")})


@dataclass(frozen=True)
class EmergenceStudy:
    """Attention-only transformers of several depths, several seeds each, on one in-context task.

    Attributes
    ----------
    task : str
    depths : tuple of int
    seeds : tuple of int
    steps : ndarray (T,)
    loss : dict of int to ndarray (seeds, T)
        Per depth ``L``.
    events : dict of int to list of Emergence
        Per depth, one per seed (QK circuits, top singular value removed).
    baseline : float
        Regression: the error of the best single-layer *linear* attention ``E_g(Γ_ICL)``; copy: 0.
    """

    __repr__ = short_repr

    task: str
    depths: tuple
    seeds: tuple
    steps: np.ndarray
    loss: dict
    events: dict
    baseline: float

    def table(self) -> list:
        """Rows ``(depth, layer, quantity, mean, sd)`` over seeds: loss step, distance step, dip step and depth
        (``sd`` is ``nan`` for one seed, which has no spread to estimate).

        Returns
        -------
        list of tuple
        """
        rows = []
        for L in self.depths:
            ev = self.events[L]
            ls = np.array([e.loss_step for e in ev])
            rows.append((L, None, "loss half-way step", ls.mean(), ls.std(ddof=1) if ls.size > 1 else np.nan))
            st = np.array([e.loss_steepest for e in ev])
            rows.append((L, None, "loss steepest step", st.mean(), st.std(ddof=1) if st.size > 1 else np.nan))
            for q in ("distance_step", "dip_step", "dip_depth"):
                v = np.array([getattr(e, q) for e in ev])                       # (seeds, layers)
                for layer in range(L):
                    sd = v[:, layer].std(ddof=1) if len(ev) > 1 else np.nan     # one seed: no spread
                    rows.append((L, layer + 1, q.replace("_", " "), v[:, layer].mean(), sd))
        return rows


def emergence_study(task, depths=(1, 2), seeds=(0, 1, 2), steps=2000, record=25, progress=False,
                    **train_kw) -> EmergenceStudy:
    """Train :func:`train_attention_only` for each depth and seed and read the transitions
    (:func:`diagnostics.emergence`).

    Parameters
    ----------
    task : {"regression", "copy"}
    depths : tuple of int
        Numbers of layers (1 to 4).
    seeds : tuple of int
        At least one.
    steps, record : int
    progress : bool
    **train_kw
        Further arguments of :func:`train_attention_only` (``D``, ``N``, ``d_model``, ``lr``, …).

    Returns
    -------
    EmergenceStudy
    """
    task = check.choice("task", task, TASKS)
    if isinstance(depths, (str, bytes)) or not np.iterable(depths) or len(depths) == 0:
        check.fail("depths", depths, "a non-empty tuple of layer counts (1 to 4)")
    if isinstance(seeds, (str, bytes)) or not np.iterable(seeds) or len(seeds) == 0:
        check.fail("seeds", seeds, "a non-empty tuple of integer seeds")
    depths = tuple(check.positive_int("depths", L, maximum=4) for L in depths)
    seeds = tuple(check.seed_int("seeds", s) for s in seeds)
    loss, events, baseline, rec = {}, {}, 0.0, None
    for L in depths:
        runs = [train_attention_only(task, L, steps=steps, record=record, rng=s, progress=progress, **train_kw)
                for s in seeds]
        rec = runs[0].steps
        baseline = float(runs[0].metrics["baseline"][0])
        loss[L] = np.array([r.loss for r in runs])
        events[L] = [emergence(r) for r in runs]
    return EmergenceStudy(task=task, depths=depths, seeds=seeds, steps=rec, loss=loss, events=events, baseline=baseline)
