r"""Weight trajectories from checkpoints, and the attention circuits the diagnostics look at.

:func:`load_checkpoints` reads a training run saved as a folder (or a list) of ``.npz`` / ``.npy`` files,
or PyTorch ``state_dict`` files (``.pt`` / ``.pth``, only when torch is installed), into one stacked array
per weight name, ordered by training step. :func:`qk_circuit` and :func:`ov_circuit` form the per-head
circuits of multi-head attention (Elhage et al., "A mathematical framework for transformer circuits",
2021) from the usual ``nn.Linear`` layout, weights of shape ``(out, in)``:

* ``QK_h = W_{Q,h}ᵀ W_{K,h}`` (``d_model × d_model``): the bilinear form ``x_qᵀ QK_h x_k`` of the attention
  scores of head ``h``, with ``W_{Q,h} = W_Q[h d_h:(h+1) d_h]``;
* ``OV_h = W_O[:, h d_h:(h+1) d_h] W_{V,h}`` (``d_model × d_model``): what head ``h`` writes for what it reads.

Each circuit has rank ``<= d_h``, so the subspace distance of :mod:`diagnostics.measures` is informative
whenever ``d_h < d_model``.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from linattn import check

_SUFFIXES = (".npz", ".npy", ".pt", ".pth")


@dataclass(frozen=True)
class Checkpoints:
    """A training run as arrays.

    Attributes
    ----------
    steps : ndarray (T,)
        Training step of each checkpoint (from the file name's last integer, else its position).
    weights : dict of str to ndarray (T, ...)
        Each weight stacked over checkpoints.
    """

    steps: np.ndarray
    weights: dict

    def __getitem__(self, name):
        return self.weights[name]


def _step_of(path, index):
    digits = re.findall(r"\d+", os.path.splitext(os.path.basename(path))[0])
    return int(digits[-1]) if digits else index


def _read(path):
    """``{name: array}`` of one checkpoint file."""
    suffix = os.path.splitext(path)[1]
    if suffix == ".npz":
        with np.load(path) as f:
            return {k: np.asarray(f[k], float) for k in f.files}
    if suffix == ".npy":
        return {"weight": np.asarray(np.load(path), float)}
    try:
        import torch
    except ImportError:
        check.fail("source", path, "a .npz/.npy checkpoint (reading .pt/.pth state_dicts needs torch: "
                   "pip install -e '.[torch]')")
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        check.fail("source", path, "a file holding a state_dict (a dict of tensors)")
    return {k: v.detach().cpu().double().numpy() for k, v in state.items() if hasattr(v, "detach")}


def load_checkpoints(source, names=None) -> Checkpoints:
    """Read a trajectory of weights from checkpoint files.

    Parameters
    ----------
    source : str or list of str
        A folder (every ``.npz``, ``.npy``, ``.pt``, ``.pth`` file in it) or a list of files. Files are
        ordered by the last integer in their name (``ckpt_000100.npz`` → step 100), else by name.
    names : list of str, optional
        Weights to keep (default, ``None``: all names present in every file).

    Returns
    -------
    Checkpoints
    """
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        files = sorted(os.path.join(source, f) for f in os.listdir(source) if f.endswith(_SUFFIXES))
    elif isinstance(source, (list, tuple)) and all(isinstance(f, (str, os.PathLike)) for f in source):
        files = [os.fspath(f) for f in source]
    else:
        files = None
    if not files or not all(os.path.isfile(f) and f.endswith(_SUFFIXES) for f in files):
        check.fail("source", source, "a folder or a list of existing .npz/.npy/.pt/.pth checkpoint files")
    steps = np.array([_step_of(f, i) for i, f in enumerate(files)])
    order = np.argsort(steps, kind="stable")
    loaded = [_read(files[i]) for i in order]
    common = set(loaded[0]).intersection(*loaded[1:])
    if names is None:
        keep = sorted(common)
    else:
        if isinstance(names, str) or not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            check.fail("names", names, "a list of weight names")
        missing = [n for n in names if n not in common]
        if missing:
            check.fail("names", missing, f"names present in every checkpoint: {sorted(common)}")
        keep = list(names)
    weights = {}
    for n in keep:
        shapes = {w[n].shape for w in loaded}
        if len(shapes) != 1:
            check.fail("source", source, f"checkpoints whose weight {n!r} has one shape (found {sorted(shapes)})")
        weights[n] = np.stack([w[n] for w in loaded])
    return Checkpoints(steps=steps[order], weights=weights)


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
    """
    W_Q, W_K = _weight("W_Q", W_Q), _weight("W_K", W_K)
    if W_K.shape != W_Q.shape:
        check.fail("W_K", f"<array with shape {W_K.shape}>", f"the shape of W_Q, {W_Q.shape}")
    heads = check.positive_int("heads", heads)
    Q, K = _heads(W_Q, heads, "W_Q", -2), _heads(W_K, heads, "W_K", -2)
    return np.swapaxes(Q, -1, -2) @ K


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
    """
    W_O, W_V = _weight("W_O", W_O), _weight("W_V", W_V)
    if W_O.shape[-1] != W_V.shape[-2] or W_O.shape[:-2] != W_V.shape[:-2]:
        check.fail("W_V", f"<array with shape {W_V.shape}>", f"(..., {W_O.shape[-1]}, d_model) matching W_O {W_O.shape}")
    heads = check.positive_int("heads", heads)
    return _heads(W_O, heads, "W_O", -1) @ _heads(W_V, heads, "W_V", -2)


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
