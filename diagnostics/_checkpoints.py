r"""Weight trajectories from checkpoints, and the attention circuits the diagnostics look at.

:func:`load_checkpoints` reads a training run saved as a folder (or a list) of ``.npz`` / ``.npy`` files,
or PyTorch ``state_dict`` files (``.pt`` / ``.pth``, only when torch is installed), into one stacked array
per weight name, ordered by training step. :func:`qk_circuit` and :func:`ov_circuit` form the per-head
circuits of multi-head attention (Elhage et al., "A mathematical framework for transformer circuits",
2021) from the usual ``nn.Linear`` layout, weights of shape ``(out, in)``:

* ``QK_h = W_{Q,h}ᵀ W_{K,h}`` (``d_model × d_model``): the bilinear form ``x_qᵀ QK_h x_k`` of the attention
  scores of head ``h``, with ``W_{Q,h} = W_Q[h d_h:(h+1) d_h]``;
* ``OV_h = W_O[:, h d_h:(h+1) d_h] W_{V,h}`` (``d_model × d_model``): what head ``h`` writes for what it reads.

Each circuit has rank ``<= d_h``, so the subspace distance of ``diagnostics/_measures.py`` is informative
whenever ``d_h < d_model``.
"""
from __future__ import annotations

import os
import re
import zipfile
from dataclasses import dataclass

import numpy as np

from linattn import _arrayfiles as arrayfiles
from linattn import _check as check
from linattn._arguments import integer, public

_SUFFIXES = (".npz", ".npy", ".pt", ".pth")


@dataclass(frozen=True)
class Checkpoints:
    """A training run as arrays.

    Attributes
    ----------
    steps : ndarray (T,)
        Training step of each checkpoint (how it was read from the file names: :func:`load_checkpoints`).
    weights : dict of str to ndarray (T, ...)
        Each weight stacked over checkpoints.
    files : tuple of str
        The files, in step order.
    """

    steps: np.ndarray
    weights: dict
    files: tuple = ()

    def __post_init__(self):
        steps = check.finite_array("steps", self.steps, ndim=1)
        if not isinstance(self.weights, dict) or not all(isinstance(k, str) for k in self.weights):
            check.fail("weights", self.weights, "a dict of weight names to arrays")
        for name, w in self.weights.items():
            if np.ndim(w) < 1 or np.shape(w)[0] != steps.size:
                check.fail("weights", f"<{name!r} of shape {np.shape(w)}>",
                           f"arrays with one frame per step ({steps.size} steps)")
        if not isinstance(self.files, tuple) or self.files and len(self.files) != steps.size:
            check.fail("files", self.files, f"a tuple of {steps.size} file names (or empty)")
        object.__setattr__(self, "steps", steps)

    def __getitem__(self, name):
        if not isinstance(name, str) or name not in self.weights:
            check.fail("name", name, f"one of the weight names {sorted(self.weights)}")
        return self.weights[name]

    def __repr__(self):
        names = ", ".join(f"{k}{tuple(v.shape[1:])}" for k, v in list(self.weights.items())[:4])
        more = f", … {len(self.weights) - 4} more" if len(self.weights) > 4 else ""
        steps = f"{self.steps[0]:g} … {self.steps[-1]:g}" if len(self.steps) else "none"
        return f"Checkpoints(T={len(self.steps)}, steps {steps}, weights: {names}{more})"


#: the progress words of the default step rule, strongest first, each followed by its number (``step=500``,
#: ``step_500``, ``step500``, ``step-500``): a global step beats an iteration, which beats an epoch, which beats a
#: checkpoint counter — so Lightning's ``epoch=2-step=500`` is step 500 and ``ckpt_epoch=103_loss=9.79`` epoch 103.
#: A word counts only where no letter precedes it (``split3`` has no ``it`` 3).
STEP_WORDS = (("global_step", "global-step", "globalstep", "step"), ("iteration", "iter", "it"), ("epoch",),
              ("checkpoint", "ckpt"))
_STEP_RULES = tuple(re.compile(r"(?<![A-Za-z])(?:" + "|".join(map(re.escape, words)) + r")s?[=_\-.]?(\d+)",
                               re.IGNORECASE) for words in STEP_WORDS)


def _example(files):
    """One file name for a message, shortened to 60 characters."""
    name = os.path.basename(files[0])
    return repr(name if len(name) <= 60 else name[:57] + "...")


def _default_step(stem):
    """The step of a file name by the default rule (:data:`STEP_WORDS`), or ``None`` without a progress word."""
    for rule in _STEP_RULES:
        m = rule.search(stem)
        if m is not None:
            return float(m.group(1))
    return None


def _steps(files, step):
    """The step of every file and, when the rule had to guess, one line saying how the order was decided."""
    stems = [os.path.splitext(os.path.basename(f))[0] for f in files]
    if callable(step):
        out = []
        for f in files:
            try:
                value = step(f)
            except (Exception, SystemExit) as err:
                check.fail("step", step, f"a callable that reads the step of every file; on {f!r} it raised "
                           f"{type(err).__name__}: {err}")
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or abs(value) > check.MAX_INT or not np.isfinite(value):
                check.fail("step", step, f"a callable returning a finite number for every file; got {value!r} "
                           f"for {f!r}")
            out.append(float(value))
        return np.array(out), None
    if step is not None:
        try:
            pattern = re.compile(step)
        except (re.error, TypeError) as err:
            check.fail("step", step, f"a regular expression (its first group, or the whole match, is the step): {err}")
        out = []
        for f, stem in zip(files, stems):
            m = pattern.search(stem)
            if m is None:
                check.fail("step", step, f"a regular expression that matches every file name; it does not match {f!r}")
            text = m.group(1) if m.groups() else m.group(0)
            try:
                value = float(text)
            except (ValueError, OverflowError):
                value = np.nan
            if not np.isfinite(value):
                check.fail("step", step, f"a pattern whose match is a finite number; {f!r} gives {text!r}")
            out.append(value)
        return np.array(out), None
    values, guessed, unnumbered = [], [], []
    for f, stem in zip(files, stems):
        value = _default_step(stem)
        digits = re.findall(r"\d+", stem)
        if value is None and digits:
            value = float(digits[0])
            if len(digits) > 1:
                guessed.append(f)
        if value is None:
            unnumbered.append(f)
        values.append(np.nan if value is None else value)
    notes = []
    if guessed:
        notes.append(f"{len(guessed)} file name(s) with several numbers and no step word (e.g. {_example(guessed)}) "
                     "took their first number as the step")
    if unnumbered:               # files without a number (final.npz) come last, in name order
        top = np.nanmax(values) if len(unnumbered) < len(files) else 0.0
        for k, f in enumerate(sorted(unnumbered)):
            values[files.index(f)] = top + 1 + k
        notes.append(f"{len(unnumbered)} file(s) without a step number (e.g. {_example(sorted(unnumbered))}) "
                     "were placed last, in name order")
    return np.array(values), "; ".join(notes) or None


def _tensor_array(path, key, tensor):
    """A torch tensor of a state_dict as a numpy array holding exactly its values: sparse layouts are made dense, and
    floating-point types numpy lacks (bfloat16, the float8 types) are widened to float32, which holds every one of
    their values. Quantized tensors (integers with a scale) and types without a numpy counterpart are refused,
    naming the file, the weight and the dtype."""
    import torch

    t = tensor.detach().cpu()
    if t.is_quantized:
        check.fail("source", path, f"real weights; {key!r} is a quantized tensor of dtype {t.dtype} (integers with a "
                   "scale: save tensor.dequantize() to state what its values are)")
    if t.is_complex():
        check.fail("source", path, f"real weights; {key!r} is complex, dtype {t.dtype} (the diagnostics are of real "
                   "matrices)")
    if t.layout != torch.strided:
        check.memory(8.0 * t.numel(), f"the dense form of the sparse weight {key!r}", f"source file {path!r}")
        t = t.to_dense()
    if t.is_floating_point() and t.dtype not in (torch.float16, torch.float32, torch.float64):
        t = t.to(torch.float32)                  # bfloat16, float8_*: exact (their values are float32 values)
    try:
        return t.resolve_conj().numpy()
    except (TypeError, RuntimeError) as err:
        check.fail("source", path, f"numeric weights; {key!r} has dtype {t.dtype} with no numpy counterpart "
                   f"({type(err).__name__}: {err})")


def _claimed_sizes(path):
    """``(elements, bytes)`` the arrays of one checkpoint file claim, read from the ``.npy`` headers and the zip's
    declared sizes before anything is decompressed or allocated (:mod:`linattn._arrayfiles`, the one reader of the
    library's array files; a ``.pt`` file: its declared sizes, at 4 bytes per element). A file that is not a readable
    checkpoint is a ``ValueError`` naming it; a zip declaring more than the memory limit is refused
    (:func:`linattn._check.memory`)."""
    suffix = os.path.splitext(path)[1]
    where, what = f"source file {path!r}", f"a readable {suffix} checkpoint"
    if suffix in (".npy", ".npz"):
        members = arrayfiles.claims(path, where, what, suffix[1:])
        arrayfiles.held(members, where, what)
        return sum(m.elements for m in members), sum(m.nbytes for m in members)
    try:
        if not zipfile.is_zipfile(path):
            return os.path.getsize(path) / 4.0, float(os.path.getsize(path))      # a legacy torch file
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except Exception as err:          # OSError, zipfile.BadZipFile, …
        raise ValueError(f"{where} is not {what} ({type(err).__name__}: {err})") from None
    declared = float(sum(info.file_size for info in infos))
    check.memory(declared, f"its {len(infos)} members, uncompressed (sizes declared by the zip)", where)
    return declared / 4.0, declared


def _read(path):
    """``{name: array}`` of one checkpoint file; a damaged or unreadable file is a ``ValueError`` naming it."""
    suffix = os.path.splitext(path)[1]
    arrays = None
    if suffix in (".npy", ".npz"):
        arrays = arrayfiles.read(path, f"source file {path!r}", f"a readable {suffix} checkpoint")
        if suffix == ".npy":
            arrays = {"weight": arrays[""]}
    if arrays is None:
        try:
            import torch
        except ImportError:
            check.fail("source", path, "a .npz/.npy checkpoint (reading .pt/.pth state_dicts needs torch: "
                       "pip install -e '.[torch]')")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:      # torch raises many types for damaged or hostile files
            raise ValueError(f"source file {path!r} is not a readable state_dict ({type(err).__name__}: "
                             f"{str(err)[:200]})") from None
        if not isinstance(state, dict):
            check.fail("source", path, "a file holding a state_dict (a dict of tensors)")
        arrays = {k: _tensor_array(path, k, v) for k, v in state.items() if hasattr(v, "detach")}
    out = {}
    for k, v in arrays.items():
        if v.dtype.kind == "c":
            check.fail("source", path, f"real weights; {k!r} is complex (the diagnostics are of real matrices)")
        if v.dtype.kind not in "biuf":
            check.fail("source", path, f"numeric weights; {k!r} has dtype {v.dtype}")
        out[k] = v.astype(float)
    return out


@public
def load_checkpoints(source, names=None, step=None) -> Checkpoints:
    r"""Read a trajectory of weights from checkpoint files.

    Parameters
    ----------
    source : str or list of str
        A folder (every ``.npz``, ``.npy``, ``.pt``, ``.pth`` file in it) or a list of files.
    names : list of str, optional
        Weights to keep, each named once (default, ``None``: all names present in every file).
    step : None, str or callable
        How a file's training step is read. ``None``: the number after a progress word, the strongest present
        (:data:`STEP_WORDS`: ``global_step`` / ``step``, then ``iteration`` / ``iter`` / ``it``, then ``epoch``,
        then ``checkpoint`` / ``ckpt``; joined by ``=``, ``_``, ``-``, ``.`` or nothing):
        ``epoch=2-step=500.ckpt.npz`` → 500 (Lightning), ``ckpt_epoch=103_loss=9.79.npz`` → 103,
        ``run2_epoch=10.npz`` → 10, ``checkpoint-500.pt`` → 500; else the only number in the name; a name with
        several numbers and no such word takes its first number, and files without a number (``final.npz``) go
        after the numbered ones — both with a one-line warning that says so. A regular expression: its first group
        (or whole match) in the file name (without suffix) is the step. A callable: ``step(path) -> number``.

    Returns
    -------
    Checkpoints

    Raises
    ------
    ValueError
        No checkpoint files; a damaged, empty, complex or non-numeric file, or a kept weight holding NaN or inf
        (the message names the file); two files with the same step; no weight name common to every file; weights
        whose sizes, claimed by the files' headers and checked before any array is read, exceed the memory limit
        (:func:`linattn._check.memory`, naming ``source``).

    Examples
    --------
    >>> run = load_checkpoints("ckpts/", step=r"step(\d+)")     # doctest: +SKIP
    """
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        files = sorted(os.path.join(source, f) for f in os.listdir(source) if f.endswith(_SUFFIXES))
        if not files:
            check.fail("source", source, "a folder holding .npz/.npy/.pt/.pth checkpoint files; this folder has none")
    elif isinstance(source, (list, tuple)) and all(isinstance(f, (str, os.PathLike)) for f in source):
        files = [os.fspath(f) for f in source]
    else:
        files = None
    if not files or not all(os.path.isfile(f) and f.endswith(_SUFFIXES) for f in files):
        check.fail("source", source, "a folder or a list of existing .npz/.npy/.pt/.pth checkpoint files")
    steps, note = _steps(files, step)
    order = np.argsort(steps, kind="stable")
    sorted_steps = steps[order]
    dup = np.flatnonzero(np.diff(sorted_steps) == 0)
    if dup.size:
        i = order[dup[0]]
        j = order[dup[0] + 1]
        check.fail("source", source, f"files with distinct steps; {files[i]!r} and {files[j]!r} both read as step "
                   f"{sorted_steps[dup[0]]:g} (pass step=REGEX or a callable)")
    if note:
        import warnings

        warnings.warn(f"load_checkpoints: {note}; pass step=REGEX or a callable to decide", UserWarning,
                      stacklevel=2)
    claims = [_claimed_sizes(f) for f in files]      # before anything is read: the weights as float64, stacked
    check.memory(16.0 * sum(c[0] for c in claims) + max(c[1] for c in claims), f"the weights of {len(files)} "
                 "checkpoint file(s) as float64 arrays, stacked over steps (sizes claimed by their headers)", "source")
    loaded = [_read(files[i]) for i in order]
    common = set(loaded[0]).intersection(*loaded[1:])
    if names is None:
        if not common:
            check.fail("source", source, "checkpoints sharing at least one weight name (these files have none in "
                       "common; mixed .npz/.npy files name their weights differently)")
        keep = sorted(common)
    else:
        if (isinstance(names, str) or not isinstance(names, (list, tuple)) or not names
                or not all(isinstance(n, str) for n in names)):
            check.fail("names", names, "a non-empty list of weight names")
        check.distinct("names", names)
        missing = [n for n in names if n not in common]
        if missing:
            check.fail("names", missing, f"names present in every checkpoint: {sorted(common)}")
        keep = list(names)
    weights = {}
    for n in keep:
        shapes = {w[n].shape for w in loaded}
        if len(shapes) != 1:
            check.fail("source", source, f"checkpoints whose weight {n!r} has one shape (found {sorted(shapes)})")
        for w, i in zip(loaded, order):
            if not np.all(np.isfinite(w[n])):
                check.fail("source", source, f"finite weights; {n!r} in {files[i]!r} holds NaN or inf (a diverged "
                           "run: pass names= without it, or the files before the divergence)")
        weights[n] = np.stack([w[n] for w in loaded])
    if np.all(sorted_steps == np.round(sorted_steps)) and np.all(np.abs(sorted_steps) < 2**62):
        sorted_steps = sorted_steps.astype(np.int64)
    return Checkpoints(steps=sorted_steps, weights=weights, files=tuple(files[i] for i in order))


def _heads(W, heads, name, axis):
    """Split axis ``axis`` (−2: rows, −1: columns) of ``W`` (..., a, b) into ``heads`` blocks → (..., H, ·, ·)."""
    n = W.shape[axis]
    if n % heads:
        check.fail("heads", heads, f"a divisor of {name}.shape[{axis}] = {n}")
    d = n // heads
    if axis == -2:
        return W.reshape(W.shape[:-2] + (heads, d, W.shape[-1]))
    return np.moveaxis(W.reshape(W.shape[:-1] + (heads, d)), -2, -3)


def _weight(name, W):
    W = check.finite_array(name, W)
    if W.ndim < 2:
        check.fail(name, f"<array with shape {W.shape}>", "a weight matrix (out, in) or a stack (T, out, in)")
    return W


@public(heads=integer())
def qk_circuit(W_Q, W_K, heads=1) -> np.ndarray:
    r"""Per-head key–query circuits ``QK_h = W_{Q,h}ᵀ W_{K,h}``.

    Parameters
    ----------
    W_Q, W_K : array_like (..., H d_h, d_model)
        Query and key weights in ``nn.Linear`` layout (rows = outputs); same shape.
    heads : int
        Number of heads ``H`` (divides the number of rows).

    Returns
    -------
    ndarray (..., H, d_model, d_model)

    Raises
    ------
    ValueError
        Naming ``W_Q`` or ``W_K`` (not finite, shapes that differ, entries so large that a circuit overflows float64)
        or ``heads`` (not a divisor of the rows); circuits beyond the memory limit (:func:`linattn._check.memory`).
    """
    W_Q, W_K = _weight("W_Q", W_Q), _weight("W_K", W_K)
    if W_K.shape != W_Q.shape:
        check.fail("W_K", f"<array with shape {W_K.shape}>", f"the shape of W_Q, {W_Q.shape}")
    Q, K = _heads(W_Q, heads, "W_Q", -2), _heads(W_K, heads, "W_K", -2)
    _circuit_memory(W_Q, heads, "W_Q or heads")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.swapaxes(Q, -1, -2) @ K
    return check.finite_result(out, {"W_Q": W_Q, "W_K": W_K}, "the circuit W_Q,hᵀ W_K,h")


@public(heads=integer())
def ov_circuit(W_O, W_V, heads=1) -> np.ndarray:
    r"""Per-head output–value circuits ``OV_h = W_O[:, h d_h:(h+1) d_h] W_{V,h}``.

    Parameters
    ----------
    W_O : array_like (..., d_model, H d_h)
        Output projection (``nn.Linear`` layout).
    W_V : array_like (..., H d_h, d_model)
        Value weights.
    heads : int

    Returns
    -------
    ndarray (..., H, d_model, d_model)

    Raises
    ------
    ValueError
        Naming ``W_O`` or ``W_V`` (not finite, shapes that do not match, entries so large that a circuit overflows
        float64) or ``heads``; circuits beyond the memory limit (:func:`linattn._check.memory`).
    """
    W_O, W_V = _weight("W_O", W_O), _weight("W_V", W_V)
    if W_O.shape[-1] != W_V.shape[-2] or W_O.shape[:-2] != W_V.shape[:-2]:
        check.fail("W_V", f"<array with shape {W_V.shape}>",
                   f"(..., {W_O.shape[-1]}, d_model) matching W_O {W_O.shape}")
    O, V = _heads(W_O, heads, "W_O", -1), _heads(W_V, heads, "W_V", -2)
    _circuit_memory(W_V, heads, "W_V or heads")
    with np.errstate(over="ignore", invalid="ignore"):
        out = O @ V
    return check.finite_result(out, {"W_O": W_O, "W_V": W_V}, "the circuit W_O,h W_V,h")


def _circuit_memory(W, heads, arguments):
    """Refuse circuits (..., H, d_model, d_model) of the stack ``W`` (..., H d_h, d_model) beyond the memory limit."""
    d_model = W.shape[-1]
    frames = float(np.prod(W.shape[:-2], dtype=float))
    check.memory(8.0 * frames * heads * d_model * d_model, f"{heads} head circuit(s) of {d_model} x {d_model} per "
                 f"frame ({frames:.0f} frames)", arguments)


@public
def split_in_proj(in_proj_weight) -> tuple:
    """``(W_Q, W_K, W_V)`` from the fused ``in_proj_weight`` (3 d_model × d_model) of ``torch.nn.MultiheadAttention``.

    Parameters
    ----------
    in_proj_weight : array_like (..., 3 d, d)

    Returns
    -------
    tuple of ndarray (..., d, d)
    """
    W = _weight("in_proj_weight", in_proj_weight)
    if W.shape[-2] % 3:
        check.fail("in_proj_weight", f"<array with shape {W.shape}>", "(..., 3 d, d)")
    d = W.shape[-2] // 3
    return W[..., :d, :], W[..., d:2 * d, :], W[..., 2 * d:, :]
