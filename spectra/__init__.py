"""spectra — Hessian eigenspectra of the empirical risk: exact eigenvalues, matrix-free estimates,
and the theoretical laws (Marchenko–Pastur and the finite-D random-scale law).

Public names
------------
hessian_eigenvalues, hessian_dense            exact spectra (Gram/Hadamard path for P <= M)
slq_spectrum, hessian_matvec                  matrix-free stochastic Lanczos quadrature
density, cdf, spectral_cdf, stieltjes,        laws: law in {"finite", "mp"}, model in {"reduced", "full"}
zero_atom, support_edges, kolmogorov_distance
prompt_law, PromptLaw                         the finite-D law of one prompt's invariants
block_resolvent, data_transforms,             the one fixed-point implementation (complex z; z = −λ'),
cmatmul                                       complex @ real matrix products without complex BLAS
ridge_resolvent, teacher_overlap,
block_overlaps, pair_overlaps
eigensystem, Eigensystem                      the exact per-dataset engine of dynamics, replica, validation
symmetric_eigenvalues                         all eigenvalues of a dense symmetric matrix (LAPACK two-stage)
mp                                            Marchenko–Pastur closed forms (reference)
"""
from . import mp
from ._density import (
    SpectralCDF,
    cdf,
    density,
    kolmogorov_distance,
    spectral_cdf,
    stieltjes,
    support_edges,
    zero_atom,
)
from ._eigensystem import Eigensystem, as_eigensystem, eigensystem
from ._eigenvalues import hessian_dense, hessian_eigenvalues
from ._matrix_free import SpectralEstimate, hessian_matvec, slq_spectrum
from ._prompt_law import LAWS, PromptLaw, prompt_law
from ._resolvent import (
    DataTransforms,
    Resolvent,
    RidgeResolvent,
    block_overlaps,
    block_resolvent,
    cmatmul,
    data_transforms,
    pair_overlaps,
    ridge_resolvent,
    teacher_overlap,
)
from ._symmetric import symmetric_eigenvalues

__all__ = [
    "hessian_eigenvalues", "hessian_dense", "slq_spectrum", "hessian_matvec", "SpectralEstimate",
    "density", "cdf", "spectral_cdf", "support_edges", "SpectralCDF", "stieltjes", "zero_atom", "kolmogorov_distance",
    "prompt_law", "PromptLaw", "LAWS", "block_resolvent", "data_transforms", "ridge_resolvent",
    "Resolvent", "DataTransforms", "RidgeResolvent", "teacher_overlap", "block_overlaps", "pair_overlaps",
    "eigensystem", "as_eigensystem", "Eigensystem", "mp", "cmatmul", "symmetric_eigenvalues",
]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
