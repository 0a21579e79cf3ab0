r"""The optional torch route for the dense work: Hessians, Gram matrices and their eigensystems on a GPU.

The dense spectra cost ``O(P M²)`` to form ``H = FᵀF/P`` (``O(P² D)`` for the Gram matrix ``G = FFᵀ/P``) and
``O(n³)`` to diagonalise; both are what a GPU does best. With ``device="cuda"`` (or ``"cuda:1"``, ``"mps"`` is not
offered: it has no float64) :func:`spectra.hessian_eigenvalues` and :func:`spectra.eigensystem` form the matrix on
the device from the prompts (``S``, ``X_q``, ``y2``: ``O(P D)`` numbers moved, not ``O(M²)``) and diagonalise it there
with ``torch.linalg.eigvalsh`` / ``eigh`` in float64, then bring back the eigenvalues (and the eigenvectors the
eigensystem needs). ``device="cpu"`` runs the same code on torch's CPU backend (what the tests use: CI has no GPU).

Why torch rather than CuPy: torch is already the library's ``[torch]`` extra (the nonlinear transformer demos),
ships CUDA in its wheels (CuPy needs a wheel matched to the CUDA toolkit), and its CPU build runs this very code in
the tests. Same numbers: eigenvalues equal the numpy route's to ``1e-12`` of the largest in float64
(``tests/spectra/test_device.py``; on an H200 a reference run measured 3.6e-14).

Memory: the dense route holds ``H`` (``8 M²`` bytes) and ``eigh`` its eigenvectors (another ``8 M²`` and LAPACK /
cuSOLVER workspace): checked against the device's free memory (``torch.cuda.mem_get_info``) before anything is
allocated; the feature batches that form ``H`` are kept below 1 GiB.
"""
from __future__ import annotations

import re

import numpy as np

from linattn import _check as check

#: feature rows per batch when forming H on the device: at most this many bytes of features
BATCH_BYTES = 1 << 30


#: the device names the torch route accepts (float64 devices: torch's CPU backend and CUDA)
DEVICE_NAME = re.compile(r"^(cpu|cuda(:\d+)?)$")
#: what the names are, for the messages
DEVICES = "None (numpy), 'cpu', 'cuda' or 'cuda:N' (torch's float64 devices)"
#: what a CUDA device needs, for the messages: ``make torch`` installs a CPU build
CUDA_BUILD = ("a CUDA build of torch (the build that `make torch` installs is a CPU build: it serves 'cpu' only; "
              "see https://pytorch.org/get-started/locally for a CUDA build)")


def torch_device(device):
    """The ``torch.device`` for a ``device`` argument (``"cpu"``, ``"cuda"``, ``"cuda:N"`` or a ``torch.device``).

    An unknown name is refused as such before torch is looked for (``"gpu"`` is not a device name: ``"cuda"``
    is); a known one without torch names the ``[torch]`` extra, and ``"cuda"`` also says that it needs a CUDA build
    of torch (``make torch`` installs a CPU build).

    Raises
    ------
    ValueError
        An unknown device name; torch not installed (the ``[torch]`` extra); a CUDA device that this torch cannot
        serve (a CPU build, or no CUDA device here).
    """
    if isinstance(device, str):
        if not DEVICE_NAME.match(device):
            hint = " ('gpu' is not a torch device name: a GPU is 'cuda')" if device.lower() == "gpu" else \
                " ('mps' has no float64)" if device.startswith("mps") else ""
            check.fail("device", device, DEVICES + hint)
    elif type(device).__module__.split(".")[0] != "torch" or type(device).__name__ != "device":
        check.fail("device", device, DEVICES + " or a torch.device")
    try:
        import torch
    except ImportError:
        need = "pip install 'linattn[torch]'"
        if device.startswith("cuda"):
            need += f", with {CUDA_BUILD}"
        check.fail("device", device, f"None (numpy): a torch device needs the [torch] extra, {need}")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        check.fail("device", device, DEVICES)
    if dev.type not in ("cpu", "cuda"):
        check.fail("device", device, DEVICES)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            if getattr(torch.version, "cuda", None) is None:
                check.fail("device", device, f"'cpu' or None: this torch ({torch.__version__}) is a CPU build; "
                                             f"'cuda' needs {CUDA_BUILD}")
            check.fail("device", device, "'cpu' or None: torch sees no CUDA device on this machine")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            check.fail("device", device, f"'cuda:0' … 'cuda:{torch.cuda.device_count() - 1}'")
    return dev


def device_memory(dev, n_bytes, what, arguments):
    """Refuse work that needs more than the free memory of a CUDA device (host memory: the library's memory
    guard)."""
    if dev.type != "cuda":
        check.memory(n_bytes, what, arguments)
        return
    import torch

    free, _ = torch.cuda.mem_get_info(dev)
    if n_bytes > free:
        raise ValueError(f"{arguments} too large: {what} would need {n_bytes / 2**30:.3g} GiB on {dev}, more than "
                         f"its {free / 2**30:.3g} GiB free")


def _prompts(data, dev):
    import torch

    def put(a):
        return None if a is None else torch.tensor(np.asarray(a, dtype=np.float64), device=dev)   # a copy
    return put(data.s), put(data.xq), put(data.y2)


def gram(data, model, dev):
    """``G = (S Sᵀ [+ y2 y2ᵀ]) ∘ (X_q X_qᵀ) / P`` on ``dev`` (a torch tensor; :meth:`linattn.Prompts.gram`)."""
    s, xq, y2 = _prompts(data, dev)
    G = s @ s.T
    if model == "full":
        G += y2[:, None] * y2[None, :]
    G *= xq @ xq.T
    G /= data.P
    return G


def hessian(data, model, dev):
    """``H = FᵀF / P`` on ``dev`` (a torch tensor), the feature rows ``vec(s x_qᵀ) [, y2 x_q]`` formed there in
    batches of at most :data:`BATCH_BYTES` (:func:`spectra.hessian_dense`)."""
    import torch

    s, xq, y2 = _prompts(data, dev)
    P, D = data.P, data.D
    M = D * D + (D if model == "full" else 0)
    rows = max(1, BATCH_BYTES // (8 * M))
    H = torch.zeros((M, M), dtype=torch.float64, device=dev)
    for a in range(0, P, rows):
        b = min(P, a + rows)
        F = (s[a:b, :, None] * xq[a:b, None, :]).reshape(b - a, D * D)
        if model == "full":
            F = torch.cat([F, y2[a:b, None] * xq[a:b]], dim=1)
        H.addmm_(F.T, F)
    H /= P
    return H


def eigenvalues(A):
    """All eigenvalues of the symmetric torch tensor ``A``, ascending, as a float64 numpy array."""
    import torch

    return torch.linalg.eigvalsh(A).cpu().numpy()


def eigh(A):
    """Eigenvalues (ascending) and eigenvectors of the symmetric torch tensor ``A``, as float64 numpy arrays."""
    import torch

    g, V = torch.linalg.eigh(A)
    return g.cpu().numpy(), V.cpu().numpy()
