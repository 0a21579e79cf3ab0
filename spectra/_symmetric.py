r"""All eigenvalues of a dense real symmetric matrix, through LAPACK's two-stage tridiagonal reduction when available.

``numpy.linalg.eigvalsh`` calls LAPACK ``dsyevd``, whose reduction to tridiagonal form (``dsytrd``) does half of its
``4n³/3`` flops as matrix–vector products: it reads the trailing matrix ``n/2`` times and is bound by memory
bandwidth for large ``n``. The *two-stage* reduction (``dsyevd_2stage``, LAPACK ≥ 3.7: dense → band with
matrix–matrix products, then band → tridiagonal by bulge chasing; Haidar, Ltaief & Dongarra, SC 2011) computes the
same eigenvalues, to the same backward error, mostly with matrix–matrix products. LAPACK implements it for
eigenvalues only (``jobz = "N"``), which is what the spectra need. numpy's wheels bundle an OpenBLAS that exports it
(as ``scipy_LAPACKE_dsyevd_2stage64_``); neither numpy nor scipy wraps it. When the symbol is not found (another
BLAS, another build), :func:`symmetric_eigenvalues` falls back to ``numpy.linalg.eigvalsh`` — the same numbers to
rounding.

Measured (``benchmarks/bench_spectra.py``; one BLAS thread): 1.6–1.8× faster than ``eigvalsh`` at ``n = 3000`` and
``6000``; eigenvalues agree to ``≤ 1.2e-14`` relative to the largest. Below ``n ≈ 2000`` the matrix fits the last-level
cache (32 MiB here), the one-stage reduction is not memory-bound and is faster (``eigvalsh`` 1.2–2.5× faster at
``n = 10 … 2000``; 1.23× slower at ``2500``), so ``method="auto"`` uses the two-stage routine from
:data:`TWO_STAGE_MIN_N` on.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np

from linattn import _check as check
from linattn._arguments import boolean, choice, public
from linattn._threads import blas_threads

#: LAPACKE's column-major layout code (``LAPACK_COL_MAJOR``)
_COL_MAJOR = 102
#: smallest ``n`` for which ``method="auto"`` takes the two-stage routine (the measured crossover, module docstring)
TWO_STAGE_MIN_N = 2400


@functools.lru_cache(maxsize=1)
def two_stage_routine():
    """``LAPACKE_dsyevd_2stage`` of numpy's bundled OpenBLAS (ILP64), or ``None`` when it is not available.

    Returns
    -------
    ctypes function or None
    """
    folder = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(folder, "libscipy_openblas64_*.so*"))):
        try:
            routine = ctypes.CDLL(path).scipy_LAPACKE_dsyevd_2stage64_
        except (OSError, AttributeError):
            continue
        routine.restype = ctypes.c_int64
        routine.argtypes = [ctypes.c_int, ctypes.c_char, ctypes.c_char, ctypes.c_int64, ctypes.c_void_p,
                            ctypes.c_int64, ctypes.c_void_p]
        return routine
    return None


@public(overwrite=boolean(), method=choice(("auto", "two_stage", "eigvalsh")))
def symmetric_eigenvalues(A, overwrite=False, method="auto") -> np.ndarray:
    """All eigenvalues of the real symmetric matrix ``A`` (its lower triangle is read), ascending.

    Parameters
    ----------
    A : array_like (n, n)
        Real, symmetric, finite.
    overwrite : bool
        Allow ``A`` (a C- or Fortran-contiguous float64 array) to be destroyed instead of copied — halves the memory
        of a large problem.
    method : {"auto", "two_stage", "eigvalsh"}
        ``"auto"``: the two-stage LAPACK routine for ``n >= TWO_STAGE_MIN_N`` when numpy's OpenBLAS exports it, else
        ``numpy.linalg.eigvalsh``;
        ``"two_stage"`` requires it (``ValueError`` if absent).

    Returns
    -------
    ndarray (n,)
        float64 whatever the input's dtype.

    Raises
    ------
    ValueError
        ``A`` not a finite square matrix or its eigenvalues overflow; ``method="two_stage"`` where the routine is not
        available.
    numpy.linalg.LinAlgError
        LAPACK did not converge.
    """
    A = check.asarray("A", A, "a non-empty square matrix")
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        check.fail("A", f"<array of shape {A.shape}>", "a non-empty square matrix")
    if not np.issubdtype(A.dtype, np.number) or np.iscomplexobj(A):
        check.fail("A", f"<array of dtype {A.dtype}>", "a real matrix")
    return _symmetric_eigenvalues(A, overwrite, method)


def _symmetric_eigenvalues(A, overwrite=False, method="auto"):
    """:func:`symmetric_eigenvalues` of a checked real square ndarray ``A``, with its memory guard and its refusals
    of non-finite entries or eigenvalues."""
    small = method == "auto" and A.shape[0] < TWO_STAGE_MIN_N
    routine = None if method == "eigvalsh" or small else two_stage_routine()
    if method == "two_stage" and routine is None:
        check.fail("method", method, "'auto' or 'eigvalsh': LAPACKE_dsyevd_2stage is not exported by numpy's BLAS here")
    n = A.shape[0]
    keep = (routine is not None and overwrite and A.dtype == np.float64
            and (A.flags.c_contiguous or A.flags.f_contiguous) and A.flags.writeable)
    # float64 copies of A: none (two-stage, overwritten), one (two-stage), or eigvalsh's own plus a conversion;
    # the finiteness mask (1 byte per entry) and O(n) eigenvalues and band workspace
    copies = 0 if keep else 1 if routine is not None else 1 + (A.dtype != np.float64)
    check.memory(n * n * (8.0 * copies + 1.0) + 8.0 * 256 * n, f"the eigenvalues of an {n} x {n} matrix "
                 f"({copies} float64 cop{'y' if copies == 1 else 'ies'} of it)", "A")
    with blas_threads(4.0 * n**3 / 3.0):                # the tridiagonal reduction's flops (linattn.threads)
        return _eigenvalues(A, routine, keep)


def _eigenvalues(A, routine, keep):
    """:func:`symmetric_eigenvalues` after its checks."""
    if routine is None:
        if not np.all(np.isfinite(A)):
            check.fail("A", "<array with non-finite entries>", "finite entries")
        return _finite(np.linalg.eigvalsh(np.asarray(A, dtype=np.float64)))
    # the lower triangle in column-major order is the upper one in row-major order: by symmetry the same numbers,
    # so a C-ordered array is passed as is (LAPACKE would otherwise transpose it into a copy)
    work = A if keep else np.array(A, dtype=np.float64, order="F", copy=True)
    if not np.all(np.isfinite(work)):
        check.fail("A", "<array with non-finite entries>", "finite entries")
    uplo = b"L" if work.flags.f_contiguous else b"U"
    n = work.shape[0]
    w = np.empty(n)
    info = routine(_COL_MAJOR, b"N", uplo, n, work.ctypes.data, n, w.ctypes.data)
    if info != 0:
        raise np.linalg.LinAlgError(f"LAPACKE_dsyevd_2stage returned info = {info} for an {n} x {n} matrix")
    return _finite(w)


def _finite(w):
    """The eigenvalues, or a ``ValueError`` when they overflowed float64 (entries near the largest float)."""
    if not np.all(np.isfinite(w)):
        check.fail("A", "<matrix whose eigenvalues overflow float64>", "entries well below 1e308 in magnitude")
    return w
