"""Where the tasks run: in this process, on local worker processes (loky) or on a Dask cluster.

Worker processes started here get one BLAS/OpenMP/numba thread each (:data:`WORKER_ENV`), end when the driver dies
and leave Ctrl-C to the driver (:func:`die_with_parent`), which kills them (:func:`process_pool`, the one process
pool of the sweeps, the experiments' points and the figures). A worker that dies takes no other point with it, and a
point may be stopped at a timeout (:func:`execute`).
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import hashlib
import logging
import os
import re
import sys

from tqdm import tqdm

from linattn import _check as check

from ._grid import require, run_point, run_task

#: environment of worker processes started here: one thread each
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


@contextlib.contextmanager
def worker_env():
    """Environment inherited by worker processes started in this block: one thread each (:data:`WORKER_ENV`); the
    variables are restored on exit.

    Returns
    -------
    contextmanager
        Yields nothing.
    """
    saved = {k: os.environ.get(k) for k in WORKER_ENV}
    os.environ.update(WORKER_ENV)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


#: local worker processes at most (``workers`` of :func:`sweep`, :func:`run_points`, :func:`local_cluster`): each is a
#: Python process of its own, and a pool never starts more of them than it has points
MAX_WORKERS = 1024


def checked_client(client):
    """``client`` if it is ``None`` or a ``dask.distributed.Client`` (or a subclass); else a ValueError naming
    ``client``. A string or a number reached ``client.submit`` (a raw ``AttributeError``); an object with a ``submit``
    of its own, such as a ``concurrent.futures`` executor, passed and failed later inside Dask's ``as_completed``.

    Parameters
    ----------
    client : None or dask.distributed.Client
        The client of :func:`sweep`, :func:`run_points` and :func:`validation.run_experiment`.

    Returns
    -------
    None or dask.distributed.Client
        ``client`` unchanged.

    Raises
    ------
    ValueError
        ``client`` neither ``None`` nor a ``dask.distributed.Client`` (or the ``[dask]`` extra is not installed).
    """
    if client is None:
        return None
    try:
        from distributed import Client
    except ImportError:
        check.fail("client", client, "None: a Dask client needs the [dask] extra (pip install 'linattn[dask]'), which "
                   "is not installed")
    if not isinstance(client, Client):
        check.fail("client", client, "None or a dask.distributed.Client (the points run through its submit, "
                   "as_completed and cancel; for local processes pass workers=N instead)")
    return client


def local_cluster(workers):
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker processes and its client.

    Worker processes inherit one BLAS/OpenMP/numba thread each (no oversubscription) and never see a Ctrl-C (it
    stops the run in this process, which closes the cluster: one line, no worker tracebacks). The cluster's own log
    messages below ``ERROR`` are silenced (its warnings about cancelled tasks and killed workers after a Ctrl-C would
    bury the one line that says how to resume); errors of the cluster and the points' own warnings still show. Its
    HTTP server listens on a free port (two clusters at once: no "port 8787 is already in use" warning).

    Parameters
    ----------
    workers : int

    Returns
    -------
    contextmanager
        Yields a ``dask.distributed.Client``; the cluster is closed on exit.
    """
    workers = check.positive_int("workers", workers, maximum=MAX_WORKERS)
    return _local_cluster(workers, require("distributed"))


@contextlib.contextmanager
def _local_cluster(workers, distributed):
    with contextlib.ExitStack() as stack:
        with worker_env(), _ctrl_c_stays_here():
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                silence_logs=logging.ERROR))
        yield stack.enter_context(distributed.Client(cluster))


@contextlib.contextmanager
def _ctrl_c_stays_here():
    """Block SIGINT in this thread while the block starts threads and processes: the cluster's event-loop thread
    inherits the blocked signal, and so does every worker process it spawns (a blocked signal stays blocked across
    ``exec``), so a Ctrl-C — which a terminal sends to the whole process group — reaches this process only, and its
    ``KeyboardInterrupt`` stops the run in one line instead of one traceback per worker. A Ctrl-C during the block
    is not lost: it is delivered when the block ends."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):      # Windows: no process groups to share a Ctrl-C with
        yield
        return
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()     # started later, it would unblock SIGINT here (SIG_UNBLOCK, not a restore)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


_UNPICKLED = {}


def _by_value(fn):
    """``fn`` as cloudpickle bytes. cloudpickle sends a function of ``__main__`` by value and one of an importable
    module by reference (the worker imports it); a module that this process loaded from a file by path (pytest's
    importlib mode, ``runpy``, an ``exec``) is in ``sys.modules`` but not importable by name in a worker, so its
    functions are sent by value too (a ``functools.partial`` is looked through)."""
    import importlib.machinery

    cloudpickle = require("cloudpickle")
    modules = []
    f = fn
    while f is not None:
        name = getattr(f, "__module__", None)
        mod = sys.modules.get(name) if isinstance(name, str) else None
        if mod is not None and name != "__main__" and mod not in modules:
            # importable by name in a fresh process: its top-level package is found on sys.path (find_spec would
            # answer from sys.modules, where a module loaded by path also sits)
            importable = importlib.machinery.PathFinder.find_spec(name.partition(".")[0], sys.path) is not None
            if not importable:
                modules.append(mod)
        f = getattr(f, "func", None) if isinstance(f, functools.partial) else None
    for mod in modules:
        cloudpickle.register_pickle_by_value(mod)
    try:
        return cloudpickle.dumps(fn)
    finally:
        for mod in modules:
            cloudpickle.unregister_pickle_by_value(mod)


def _call_by_value(runner, blob, task):
    """Worker side: ``runner(fn, task)`` with ``fn`` unpickled (once per worker) from its cloudpickle bytes."""
    key = hashlib.sha256(blob).hexdigest()
    if key not in _UNPICKLED:
        import cloudpickle

        _UNPICKLED[key] = cloudpickle.loads(blob)
    return runner(_UNPICKLED[key], task)


def _marker(folder, kind, task):
    """The path of ``task``'s marker file of ``kind`` ("running", "timeout") in ``folder``."""
    return os.path.join(folder, f"{kind}-" + "_".join(map(str, task.index)))


def _call_marked(folder, runner, blob, task):
    """Worker side: :func:`_call_by_value` with a marker file in ``folder`` while the point runs. A worker that dies
    leaves its marker, so the driver knows which points were running when the pool broke (the others never ran, or
    finished: they cannot have killed a worker)."""
    path = _marker(folder, "running", task)
    open(path, "w").close()
    try:
        return _call_by_value(runner, blob, task)
    finally:             # not reached when the process dies: the marker stays for the driver
        with contextlib.suppress(OSError):
            os.remove(path)


#: the error recorded for a point whose worker process died (os._exit, a signal, the kernel's OOM killer)
WORKER_DIED = "WorkerDied: the worker process evaluating this point died (killed, out of memory, or os._exit)"


def die_with_parent(parent):
    """Worker initializer: end this worker when the driver ``parent`` dies (e.g. ``kill -9`` of the driver), so that
    no orphaned worker keeps computing, and leave Ctrl-C to the driver (which kills its workers: one message, not
    one traceback per worker). Linux: the kernel sends SIGKILL at the parent's death
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere, and as a fallback, a thread checks the parent once a second."""
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the driver's: it stops the workers (process_pool)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))    # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:            # the driver died before the signal was armed
        os._exit(1)

    def watch():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="linattn-parent-watch").start()


def _with_timeout(runner, timeout, folder, fn, task):
    """Worker side: ``runner(fn, task)`` stopped after ``timeout`` seconds. ``faulthandler``'s watchdog is a C thread:
    it ends the worker process even inside compiled code that never returns to the interpreter, after writing the
    point's Python traceback to its marker file, from which the driver records the timeout."""
    import faulthandler

    path = _marker(folder, "timeout", task)
    try:
        with open(path, "w") as fh:
            faulthandler.dump_traceback_later(timeout, exit=True, file=fh)
            try:
                return runner(fn, task)
            finally:
                faulthandler.cancel_dump_traceback_later()
    finally:             # not reached on a timeout: the process has exited, the marker stays for the driver
        os.remove(path)


def _death_error(task, timeout, folder):
    """What to record for a point whose worker died: a timeout when its marker holds a traceback."""
    if timeout is not None:
        path = _marker(folder, "timeout", task)
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path, errors="replace") as fh:      # one block per thread, innermost frame first:
                blocks = re.split(r"\n(?=\S)", fh.read())   # the point's thread is the one in _with_timeout
            mine = [b for b in blocks if "_with_timeout" in b] or blocks
            where = [ln.strip() for ln in mine[0].splitlines() if ln.strip().startswith("File ")]
            return (f"Timeout: the point ran longer than timeout = {timeout:g} s and its worker was stopped"
                    + (f" (in {where[0]})" if where else ""))
    return WORKER_DIED


def execute(fn, todo, client, workers, sink, progress, runner=run_task, done_before=0, on_died=None,
            timeout=None, isolate=False):
    """Run the tasks ``todo``; ``runner(fn, task)`` returns what ``sink`` takes (``run_task``: the outputs,
    for the driver to keep or write; ``run_and_write``: a status, the worker having written).
    ``done_before``: evaluations of this run already done by the driver (counted by the progress bar).
    A worker that dies takes no other point with it: the points that were running when its pool broke run again
    alone, the others together on a fresh pool (:func:`_retry_lost`), and a point whose worker dies when it runs
    alone is recorded by ``on_died(task, error)`` (default: failed with :data:`WORKER_DIED`). ``timeout`` (seconds): a
    point still running after it is stopped with its worker (never in this process: with a timeout,
    ``workers = 1`` runs in one worker process) and recorded failed with a ``Timeout`` error, without a retry.
    ``isolate``: evaluate in worker processes even for ``workers = 1``."""
    if on_died is None:
        def on_died(task, error):
            sink(task.index, None, error)
    folder = None
    if timeout is not None:
        import tempfile

        folder = tempfile.mkdtemp(prefix="linattn-sweep-timeouts-")
        runner = functools.partial(_with_timeout, runner, float(timeout), folder)
    try:
        _dispatch(fn, todo, client, workers, sink, progress, runner, done_before, on_died, timeout, folder, isolate)
    finally:
        if folder is not None:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)


def _dispatch(fn, tasks, client, workers, sink, progress, runner, done_before, on_died, timeout, folder, isolate):
    bar = tqdm(total=len(tasks) + done_before, initial=done_before, desc="sweep", disable=not progress)
    if client is not None:
        futures = {client.submit(runner, fn, t, pure=False): t for t in tasks}
        from distributed import as_completed

        try:
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as err:           # KilledWorker: dask retried it on other workers, and they died too
                    if type(err).__name__ != "KilledWorker":
                        raise
                    on_died(futures[fut], _death_error(futures[fut], timeout, folder))
                else:
                    sink(*result)
                bar.update()
        except KeyboardInterrupt:                  # the points in flight are dropped, not left running
            client.cancel(list(futures), force=True)
            raise
    elif workers == 1 and timeout is None and not isolate:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):     # restored afterwards in this process
            for t in tasks:
                sink(*run_task(fn, t, limit_threads=False))
                bar.update()
    else:
        blob = _by_value(fn)                          # functions of a notebook, `python -c` or a loaded file work too
        lost, running = _in_processes(blob, runner, tasks, workers, sink, bar)
        _retry_lost(blob, runner, lost, running, workers, sink, bar, lambda t: _death_error(t, timeout, folder),
                    on_died)
    bar.close()


def _retry_lost(blob, runner, lost, running, workers, sink, bar, error_of, on_died):
    """Evaluate again the points ``lost`` with a dead worker (a dead worker breaks its whole pool: every point in
    flight or waiting is lost with it); ``running``: those of them that were running when it broke (at most one per
    worker; only they can have killed it). A timed-out point is recorded at once (``on_died``, not run again). Each
    running point runs again alone, on a pool of its own, and is recorded if its worker dies again; the others run
    together on a fresh pool, and if that pool breaks too (another point that kills its worker), the same again.
    Where no lost point was marked running, each runs alone; where a point timed out, the others run together.
    One point that kills its worker while it runs costs at most ``workers + 1`` more pool starts, whatever the
    number of points lost with it (one that dies after its point, sending a result back, is found by more)."""
    def record(t, error):
        on_died(t, error)
        bar.update()

    while lost:
        alone, together = [], []
        errors = [error_of(t) for t in lost]
        if any(e != WORKER_DIED for e in errors):
            suspects = set()       # a timeout broke the pool: the points running beside it are not suspects
        else:                      # none marked (a worker that died before it started a point): each runs alone
            suspects = {id(t) for t in (running or lost)}
        for t, error in zip(lost, errors):
            if error != WORKER_DIED:                   # stopped at its timeout: not again
                record(t, error)
            else:
                (alone if id(t) in suspects else together).append(t)
        for t in alone:
            if _in_processes(blob, runner, [t], 1, sink, bar)[0]:     # its worker died again: the culprit
                record(t, error_of(t))
        lost, running = _in_processes(blob, runner, together, workers, sink, bar) if together else ([], [])


@contextlib.contextmanager
def process_pool(workers, n_tasks):
    """A pool of ``min(workers, n_tasks)`` fresh worker processes (at least one) for the block: loky's, started without
    re-running the caller's ``__main__`` (a plain script needs no ``if __name__ == "__main__"`` guard), each with one
    BLAS/OpenMP/numba thread (:func:`worker_env`: several threads per worker oversubscribe the cores, and OpenBLAS
    threads spin while they wait), ending with the driver and ignoring Ctrl-C (:func:`die_with_parent`).

    On any exception in the block (Ctrl-C, a failure, a generator closed early) the workers are killed at once and
    the exception goes on; otherwise the pool is shut down after its work.

    Parameters
    ----------
    workers : int
        Processes at most.
    n_tasks : int
        The number of tasks the block submits: never more processes than tasks.

    Yields
    ------
    loky.ProcessPoolExecutor
    """
    import loky

    with worker_env():
        pool = loky.ProcessPoolExecutor(min(workers, max(n_tasks, 1)), initializer=die_with_parent,
                                        initargs=(os.getpid(),))
        try:
            yield pool
        except BaseException:                 # the workers ignore Ctrl-C (die_with_parent): stop them now
            pool.shutdown(wait=False, kill_workers=True)
            raise
        pool.shutdown(wait=True)


def _in_processes(blob, runner, tasks, workers, sink, bar):
    """Evaluate ``tasks`` on ``workers`` fresh processes (:func:`process_pool`); return the tasks lost to a dead
    worker and, of those, the ones that were running when the pool broke (both in the order of ``tasks``)."""
    import shutil
    import tempfile

    broken = set()
    folder = tempfile.mkdtemp(prefix="linattn-sweep-running-")
    try:
        with process_pool(workers, len(tasks)) as pool:
            futures = {pool.submit(_call_marked, folder, runner, blob, t): i for i, t in enumerate(tasks)}
            for fut in cf.as_completed(futures):
                try:
                    result = fut.result()
                except cf.process.BrokenProcessPool:
                    broken.add(futures[fut])
                    continue
                sink(*result)
                bar.update()
        lost = [tasks[i] for i in sorted(broken)]
        return lost, [t for t in lost if os.path.exists(_marker(folder, "running", t))]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def serial_points(fn, todo, write, progress):
    """Evaluate the points of an experiment in this process, BLAS on one thread, and ``write`` each."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        for t in tqdm(todo, desc="points", disable=not progress):
            write(*run_point(fn, t, limit_threads=False))

