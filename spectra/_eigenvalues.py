r"""Exact eigenvalues of the empirical Hessian ``H = (1/P) Σ_μ h_μ h_μᵀ``.

Two exact paths (conventions §2):

* ``P <= M`` — the nonzero spectrum of ``H`` equals that of the ``P × P`` Gram matrix
  ``G = F Fᵀ / P``, built without features as a Hadamard product
  ``(S Sᵀ [+ y2 y2ᵀ]) ∘ (X_q X_qᵀ) / P`` in ``O(P² D)``; the other ``M − P`` eigenvalues are
  exactly zero and are returned as zeros. At ``P = M`` both matrices are ``M × M``: the Gram matrix costs
  ``O(M² D)`` to form instead of the ``O(M³)`` of ``Fᵀ F`` (at ``D = 100``, ``M = 10⁴``: ~1 s instead of ~35 s on
  one core).
* ``P > M`` — ``H = Fᵀ F / P`` itself (numpy evaluates ``Fᵀ F`` as a symmetric rank-k update,
  BLAS ``syrk``), with the feature rows processed in batches of at most ``max_bytes`` so that
  memory stays bounded for large ``P``; then all eigenvalues by LAPACK's two-stage reduction
  (:func:`spectra.symmetric_eigenvalues`; ``numpy.linalg.eigvalsh`` where it is not available).

The naive reference (``method="naive"``) forms ``F``, then ``Fᵀ F / P``; it exists for tests
and benchmarks.
"""
from __future__ import annotations

import numpy as np

from linattn import _check as check
from linattn import _validate as validate
from linattn._arguments import boolean, choice, integer, public
from linattn._threads import blas_threads
from linattn._validate import PROMPTS

from . import _device as on_device
from ._device import device_memory, torch_device
from ._symmetric import _symmetric_eigenvalues

METHODS = ("auto", "gram", "dense", "naive")


@public(data=PROMPTS, max_bytes=integer())
def hessian_dense(data, model="reduced", max_bytes: int = 1 << 31) -> np.ndarray:
    """``H = Fᵀ F / P`` (symmetric, ``M × M``), feature rows in batches of at most ``max_bytes``.

    Parameters
    ----------
    data : linattn.Prompts
    model : {"reduced", "full"}
    max_bytes : int
        Largest feature batch in bytes (at least one row is processed at a time).

    Returns
    -------
    ndarray (M, M)
    """
    data.require(model)
    return _hessian_dense(data, model, max_bytes)


def _hessian_dense(data, model, max_bytes=1 << 31):
    """:func:`hessian_dense` of checked arguments (prompts that serve ``model``), with its memory guard."""
    P, D = data.P, data.D
    M = D * D + (D if model == "full" else 0)
    rows = max(1, max_bytes // (8 * M))
    check.memory(8.0 * (M * M + 2 * min(rows, P) * M), f"the dense {M} x {M} Hessian", "D")
    with blas_threads(2.0 * min(rows, P) * M * M):      # syrk of a feature batch (linattn.threads)
        if rows >= P:
            F = data.features(model)
            H = F.T @ F
        else:
            H = np.zeros((M, M))
            for a in range(0, P, rows):
                Fb = data.take(slice(a, min(P, a + rows))).features(model)
                H += Fb.T @ Fb
    H /= P
    return H


@public(rescale=boolean(), method=choice(METHODS))
def hessian_eigenvalues(data, pb, rescale=True, model="reduced", method="auto", device=None) -> np.ndarray:
    """All ``M`` eigenvalues of the Hessian ``H`` (or ``H/c``), ascending, exact zeros included.

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
        Supplies ``c`` for the rescaling (``c`` of the ``Γ`` block, also for the full model).
    rescale : bool
        Divide by ``c`` (mean eigenvalue → 1 for the reduced model).
    model : {"reduced", "full"}
    method : {"auto", "gram", "dense", "naive"}
        ``auto`` picks ``gram`` for ``P <= M`` and ``dense`` otherwise.
    device : None, str or torch.device
        ``None``: numpy/LAPACK on this machine's cores. ``"cuda"``, ``"cuda:N"`` or ``"cpu"``: the torch route
        (``spectra/_device.py``; the ``[torch]`` extra): the Gram or dense matrix formed and diagonalised there in
        float64 — the same eigenvalues to ``1e-12`` of the largest. Not with ``method="naive"``.

    Returns
    -------
    ndarray (M,)
        ``max(0, M − P)`` entries are exactly 0.0 on the Gram path.

    Examples
    --------
    >>> import linattn, spectra
    >>> pb = linattn.Problem(8, 8)                      # D = N = 8: M = 64 parameters (reduced model)
    >>> ev = spectra.hessian_eigenvalues(pb.sample(128, rng=0), pb)
    >>> ev.shape, bool(ev.min() >= 0)
    ((64,), True)
    """
    validate.problem_data(data, pb, model)
    P, M = data.P, pb.n_params(model)
    if method == "auto":
        method = "gram" if P <= M else "dense"
    n = P if method == "gram" else M
    if device is not None:
        if method == "naive":
            check.fail("method", method, "'auto', 'gram' or 'dense' with a device (the naive route is numpy's)")
        dev = torch_device(device)
        device_memory(dev, 8.0 * 3 * n * n, f"the {n} x {n} eigenvalue problem", "P or D")
        check.memory(8.0 * n, f"{n} eigenvalues", "P or D")
        ev = _device_eigenvalues(data, model, method, dev, P, M)
        return ev / pb.feature_variance if rescale else ev
    check.memory(8.0 * 3 * n * n + (8.0 * P * M if method == "naive" else 0.0),
                 f"the {n} x {n} eigenvalue problem", "P or D")
    with blas_threads(float(n) ** 3):                    # a few large calls: the free cores (linattn.threads)
        if method == "gram":
            nz = _symmetric_eigenvalues(data.gram(model), overwrite=True)
            k = max(0, M - P)
            ev = np.concatenate([np.zeros(k), nz[max(0, P - M):]]) if P <= M else nz[P - M:]
            ev = np.sort(ev)
        elif method == "dense":
            ev = _symmetric_eigenvalues(_hessian_dense(data, model), overwrite=True)
        else:
            F = data.features(model)
            ev = np.linalg.eigvalsh(F.T @ F / P)
    return ev / pb.feature_variance if rescale else ev


def _device_eigenvalues(data, model, method, dev, P, M):
    """The eigenvalues on a torch device (:mod:`spectra._device`), with the Gram route's exact zeros."""
    if method == "dense":
        return on_device.eigenvalues(on_device.hessian(data, model, dev))
    nz = on_device.eigenvalues(on_device.gram(data, model, dev))
    ev = np.concatenate([np.zeros(max(0, M - P)), nz[max(0, P - M):]])
    return np.sort(ev)
