r"""BLAS threads chosen per routine: one thread for small products, the free cores for large ones.

A multi-threaded BLAS call is fast when its threads find idle cores and its work is large enough to pay for waking
and joining them. Neither holds by default on a user's machine: OpenBLAS starts as many threads as there are cores,
for every call above a small size, whatever else runs. Measured on 2 cores (``benchmarks/bench_threads.py``): a
``replica.ridge`` solve of ~170 mid-sized products at ``D = 48`` took 0.07–0.34 s with the default threads beside
one other busy process and 0.03–0.04 s on one thread, while a dense eigendecomposition at ``M = 10⁴`` is 1.6× faster
on two idle cores than on one.

The library's hot routines therefore run inside :func:`blas_threads`, which they give the work of one of their BLAS
calls in flops:

* below :data:`PARALLEL_WORK` flops per call, one thread (many small calls: CG products at moderate ``D``, per-``λ``
  and per-``β`` solves, the pool theories' ``D × D`` algebra);
* above it, the *free* cores: the cores this process may run on minus the other runnable threads of the machine,
  read from the kernel's instantaneous count (``/proc/loadavg``, field 4; at least 1). On systems without it (macOS,
  Windows), all cores, as the BLAS default. Inside a container ``/proc/loadavg`` counts the host's threads, so a busy
  host makes this choose fewer threads than the container has (never more).

Decide per entry point, not per BLAS call. The work of one call is the right measure only where the routine's time
is its BLAS calls. Where the routine runs its own parallel loops between them — numba ``prange`` loops, e.g. the
resolvent solves of :func:`dynamics.averaged_curves` between its mid-sized complex products — a multi-threaded BLAS
call costs more than its own time: after each call OpenBLAS's idle worker threads keep polling for new work for a
while (busy-waiting) and take the cores the next parallel loop needs, so every such loop waits for its slowest thread.
On a loaded 2-core machine ``dynamics.averaged_curves`` at 131 times (``D = 10``, ``N = 50``, ``P = 30``) took 37–87 s
with the default BLAS threads and 5.7–10 s with ``OPENBLAS_NUM_THREADS=1``, though every one of its BLAS calls is
below :data:`PARALLEL_WORK`: none of them was inside :func:`blas_threads`, so OpenBLAS used all cores for each. Such an
entry point therefore runs as a whole inside one :func:`blas_threads`, given the work of its largest BLAS call (one
decision, one switch); the routines it calls are then left alone (the outermost decides).

A user's choice stays in charge: nothing is changed when a thread variable (``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``BLIS_NUM_THREADS``, ``VECLIB_MAXIMUM_THREADS``) is set, when a BLAS thread
count differs from the one found when this module first looked or is below the number of cores
(``threadpoolctl.threadpool_limits`` around the call, or ``set_num_threads``), or inside another
:func:`blas_threads` (the outermost routine decides). The switch itself (``threadpoolctl``) costs about 40 µs;
routines whose calls are all below ``MIN_MANAGED_WORK`` flops are left alone.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading

from ._arguments import nonnegative, public

#: flops per BLAS call from which several threads pay (``benchmarks/bench_threads.py``: at ``D = 48``, a CG product of
#: ``2 P M`` flops is faster on two idle cores from ``P M ≈ 2·10⁷`` on)
PARALLEL_WORK = 4e7
#: below this many flops per call the switch (~40 µs) is not worth making: BLAS runs such calls on one thread anyway
MIN_MANAGED_WORK = 1e4
#: the environment variables through which a user sets BLAS threads
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS")

_local = threading.local()


@functools.lru_cache(maxsize=1)
def _blas():
    """The BLAS libraries loaded now (threadpoolctl) and their thread counts when first looked at."""
    from threadpoolctl import ThreadpoolController

    blas = ThreadpoolController().select(user_api="blas")
    return blas, tuple(lib.num_threads for lib in blas.lib_controllers)


@public
def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system reports it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@public
def free_cores() -> int:
    """Cores not taken by other runnable threads: ``cores() − (runnable − 1)``, at least 1 (module docstring).

    The kernel's count of runnable threads includes the caller; this process's other runnable threads are not
    counted: after a multi-threaded BLAS call its worker threads keep polling for new work for a while (50–350 ms
    measured with OpenBLAS on 2 cores), and they are the threads the next call runs on, not other work. (Threads of
    this process that compute beside the call, e.g. a threaded scheduler's, are not counted either: that is the
    process's own choice.) The smallest of three reads is used (a thread that wakes for a moment does not count).
    """
    n = cores()
    try:
        running = min(int(_read_loadavg().split()[3].split("/")[0]) - _own_runnable() for _ in range(3))
    except (OSError, ValueError, IndexError):
        return n
    return max(1, min(n, n - (running - 1)))


def _own_runnable() -> int:
    """This process's threads other than the caller that are running or runnable now (``/proc/self/task``; 0 where
    it cannot be read)."""
    me = threading.get_native_id()
    count = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            if int(tid) == me:
                continue
            try:
                with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:             # the thread ended meanwhile
                continue
            count += stat[stat.rindex(b")") + 2:stat.rindex(b")") + 3] == b"R"
    except (OSError, ValueError):
        return 0
    return count


def _read_loadavg() -> str:
    with open("/proc/loadavg") as f:
        return f.read()


@public
def user_controls() -> bool:
    """Whether the user has chosen the BLAS threads: a thread variable is set, or a BLAS thread count changed since
    first looked or is below :func:`cores` (a BLAS built for fewer threads than the machine has is thus left alone)."""
    return _user_controls()


def _user_controls():
    if any(os.environ.get(v) for v in THREAD_VARIABLES):
        return True
    blas, first = _blas()
    now = tuple(lib.num_threads for lib in blas.lib_controllers)
    return now != first or min(now, default=cores()) < cores()


@public(work=nonnegative())
def choose(work: float) -> int | None:
    """The thread count :func:`blas_threads` uses for calls of ``work`` flops, or ``None`` to leave BLAS as it is."""
    return _choose(work)


def _choose(work):
    if getattr(_local, "depth", 0) > 0 or work < MIN_MANAGED_WORK or _user_controls():
        return None
    return 1 if work < PARALLEL_WORK else free_cores()


@public(work=nonnegative())
def blas_threads(work: float):
    """Run the block with the BLAS threads chosen for calls of ``work`` flops (module docstring).

    Parameters
    ----------
    work : float
        Flops of one of the block's typical BLAS calls.

    Examples
    --------
    >>> import numpy as np
    >>> from linattn.threads import blas_threads
    >>> A = np.ones((300, 300))
    >>> with blas_threads(2 * 300**3):
    ...     B = A @ A
    """
    return _threads(_choose(work))


def whole_call():
    """The BLAS threads of an entry point made of many mid-sized BLAS calls with Python work between them (a theory
    averaged over contexts, pools or readouts): one decision for the whole call, the free cores — all of them on an
    idle machine, where its larger products gain from a second thread, and never more than are free beside other
    work, where every call would otherwise wait for a busy core (``benchmarks/bench_public_threads.py``: the kernel
    learner's theory over task pools at ``D = 10`` took 15 s with OpenBLAS's default beside one busy process and
    7 s on one thread). Nothing changes under the user's control or inside another decision."""
    return _threads(_choose(PARALLEL_WORK))


@contextlib.contextmanager
def _threads(n):
    """The block of :func:`blas_threads` with ``n`` threads (``None``: BLAS as it is)."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        if n is None:
            yield
        else:
            blas, _ = _blas()
            with blas.limit(limits=n):
                yield
    finally:
        _local.depth -= 1
