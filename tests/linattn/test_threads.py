"""linattn._threads: BLAS threads chosen per routine, the user's choice kept."""
import os

import numpy as np
import pytest
from helpers import assert_refused, name_as_word, refusals
from threadpoolctl import ThreadpoolController, threadpool_limits

import linattn
import replica
from linattn import _threads as threads


def _blas_counts():
    return tuple(lib.num_threads for lib in ThreadpoolController().select(user_api="blas").lib_controllers)


@pytest.fixture
def pristine(monkeypatch):
    """A session as a user starts one: no thread variable, the BLAS at its default, here 2 cores."""
    for v in threads.THREAD_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    blas = ThreadpoolController().select(user_api="blas")
    monkeypatch.setattr(threads, "cores", lambda: 2)
    monkeypatch.setattr(threads, "_own_runnable", lambda: 0)          # none of this process's threads polls
    with threadpool_limits(limits=2, user_api="blas"):
        first = _blas_counts()                                          # what the module saw when it first looked
        monkeypatch.setattr(threads, "_blas", lambda: (blas, first))
        yield


def test_small_work_runs_on_one_thread_and_large_on_the_free_cores(pristine, monkeypatch):
    monkeypatch.setattr(threads, "_read_loadavg", lambda: "0.00 0.00 0.00 1/120 999")     # only the caller runs
    assert threads.choose(threads.PARALLEL_WORK / 2) == 1
    assert threads.choose(threads.PARALLEL_WORK) == 2
    assert threads.choose(threads.MIN_MANAGED_WORK / 2) is None
    monkeypatch.setattr(threads, "_read_loadavg", lambda: "1.00 1.00 1.00 2/120 999")     # one other busy thread
    assert threads.choose(threads.PARALLEL_WORK) == 1
    monkeypatch.setattr(threads, "_read_loadavg", lambda: "9.00 9.00 9.00 9/120 999")
    assert threads.choose(threads.PARALLEL_WORK) == 1                                       # never below one
    with threads.blas_threads(threads.PARALLEL_WORK / 2):
        assert set(_blas_counts()) == {1}
        assert threads.choose(threads.PARALLEL_WORK) is None                                # the outermost decides
    assert set(_blas_counts()) == {2}                                                       # restored


def test_this_process_polling_workers_are_not_other_work(pristine, monkeypatch):
    """Right after a multi-threaded BLAS call, this process's idle BLAS worker keeps polling (runnable) for a while:
    it is not counted as a busy core; another process's runnable thread is."""
    monkeypatch.setattr(threads, "_read_loadavg", lambda: "1.00 1.00 1.00 2/120 999")     # the caller + one more
    monkeypatch.setattr(threads, "_own_runnable", lambda: 1)                                # ... which is our own
    assert threads.free_cores() == 2 and threads.choose(threads.PARALLEL_WORK) == 2
    monkeypatch.setattr(threads, "_own_runnable", lambda: 0)                                # ... another process's
    assert threads.free_cores() == 1 and threads.choose(threads.PARALLEL_WORK) == 1


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc/self/task (Linux)")
def test_own_runnable_threads_are_read():
    """The count of this process's other runnable threads sees a thread that computes (in BLAS, without the GIL)."""
    import threading
    import time

    A = np.ones((400, 400))
    done = threading.Event()

    def compute():
        while not done.is_set():
            A @ A

    t = threading.Thread(target=compute)
    t.start()
    try:
        counts = []
        deadline = time.perf_counter() + 5.0
        while time.perf_counter() < deadline and not any(counts):
            counts.append(threads._own_runnable())
            time.sleep(0.002)
    finally:
        done.set()
        t.join()
    assert any(c >= 1 for c in counts), counts


def test_without_proc_loadavg_all_cores(pristine, monkeypatch):
    def missing():
        raise OSError("no /proc here")
    monkeypatch.setattr(threads, "_read_loadavg", missing)
    assert threads.free_cores() == 2


def test_the_users_choice_is_kept(pristine, monkeypatch):
    assert not threads.user_controls()
    with threadpool_limits(limits=1, user_api="blas"):                  # the user's own limit around a call
        assert threads.user_controls() and threads.choose(threads.PARALLEL_WORK) is None
    with threadpool_limits(limits=3, user_api="blas"):                  # more than the default: also the user's
        assert threads.user_controls()
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert threads.user_controls() and threads.choose(1e12) is None


def test_the_numbers_do_not_depend_on_the_threads(pristine):
    """ridge on the managed route (one thread here) and on two threads: the same solution within what CG proves.

    Another thread count sums the products in another order, so the CG iterates differ by round-off that
    the iteration carries; each solution is within its proven ``error_bound`` of the exact one, so the two
    are within the sum of the bounds (the oldest-dependencies environment measured 1.3e-11 against bounds of 2.1e-8).
    """
    pb = linattn.Problem(20, 20, 0.1)
    data = pb.sample(800, rng=0)
    managed = replica.ridge(data, pb, 0.01)
    with threadpool_limits(limits=2, user_api="blas"), threads.blas_threads(0.0):   # depth > 0: left as is
        both = replica.ridge(data, pb, 0.01)
    assert managed.certified and both.certified
    assert np.linalg.norm(managed.Gamma - both.Gamma) <= managed.error_bound + both.error_bound
    assert abs(managed.test - both.test) <= managed.test_bound + both.test_bound


# ----------------------------------------------------------------------------- refusals and extreme arguments
REFUSED = refusals(name_as_word, [
    ("threads-nan", lambda: linattn.threads.choose(float("nan")), "work"),
    ("threads-str", lambda: linattn.threads.choose("a"), "work"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_averaged_curves_decides_once_for_the_whole_call(pristine, monkeypatch):
    """dynamics.averaged_curves runs its theory (numba resolvent loops between complex products of ~10⁷ flops) and
    its band on one BLAS thread at these sizes: every product and solve inside sees one thread, and the count is
    restored after (without the decision OpenBLAS would run each product on both cores)."""
    import dynamics
    from dynamics import _averaged, _band

    seen = []

    def watch(name, module):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: seen.append(_blas_counts()) or real(*a, **k))

    watch("_data_transforms", _averaged)
    watch("_block_overlaps", _averaged)
    watch("_eigensystem", _band)
    monkeypatch.setattr(threads, "_read_loadavg", lambda: "0.00 0.00 0.00 1/120 999")     # two idle cores
    pb = linattn.Problem(5, 10, 0.1)           # M = 30 <= P: the band's eigensystems, 30³ flops, are managed too
    dynamics.averaged_curves(pb, 40, 0.01, [0.5, 1.0], model="full", n_datasets=2, progress=False)
    assert len(seen) >= 4 and set(seen) == {(1,) * len(seen[0])}
    assert set(_blas_counts()) == {2}


def test_the_learner_theories_decide_once_for_the_whole_call(pristine, monkeypatch):
    """The learners' theories are many mid-sized products over contexts, readouts and pools (at D = 10 each below the
    threshold of a managed call on its own): one decision for the whole call, the free cores — two on an idle
    machine, one beside a busy process (OpenBLAS's default took 2.1x the one-thread time there) — and the count is
    restored after."""
    from replica import _feature_theory, _kernel_theory

    seen = []
    for module, name in ((_feature_theory, "_one_pool"), (_kernel_theory, "matrix_finite")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, real=real, **k: seen.append(_blas_counts()) or real(*a, **k))
    pb = linattn.Problem(4, 8, 0.01, link="relu", tasks=4)
    for load, expected in (("0.00 0.00 0.00 1/120 999", 2), ("1.00 1.00 1.00 2/120 999", 1)):
        monkeypatch.setattr(threads, "_read_loadavg", lambda load=load: load)
        seen.clear()
        replica.feature_learner_theory(pb, 100, 0.01, n_pools=1, progress=False)
        replica.learner_theory(pb, 100, 0.01, n_pools=1, n_contexts=2**10, progress=False)
        assert seen and set(seen) == {(expected,) * len(seen[0])}, (load, seen)
        assert set(_blas_counts()) == {2}
