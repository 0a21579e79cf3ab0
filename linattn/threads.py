"""linattn.threads — how the library chooses its BLAS threads, and how a user stays in charge.

The library's hot routines run inside :func:`blas_threads`: one thread for small products, the free cores for
large ones. Nothing is changed when a thread variable (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, …) is set or a
``threadpoolctl`` limit is active (:func:`user_controls`). :func:`cores` and :func:`free_cores` are what the choice
reads. The measurements are on the performance page (``docs/performance.md``).
"""
from ._threads import blas_threads, choose, cores, free_cores, user_controls

__all__ = ["blas_threads", "choose", "cores", "free_cores", "user_controls"]
