"""The share of argument validation in the hot paths: the sampler (``Problem.sample``), ``replica.ridge``, the
Langevin entry (``validation.langevin``), and the cheap theory calls ``replica.stationary``,
``replica.stationary_curve``, ``replica.phase_boundary``, ``spectra.ridge_resolvent`` and ``replica.asymptotic``.

The cases (:func:`cases`): one call each, with the arguments a user writes.

- ``Problem.sample``: 2000 prompts of ``D = N = 40``.
- ``replica.ridge``: the ridge solution on those prompts, ``λ = 0.1``.
- ``validation.langevin``: a short Langevin run (``D = 8``, ``N = 16``, ``P = 200``, 20 000 equilibration steps).
- ``replica.stationary``: the replica theory of fresh tasks at ``D = 10``, ``N = 20``, ``β = ∞``, ``λ = 0.1`` and a
  new ``P ≈ 400`` at each call (a call of about a millisecond).
- ``replica.stationary_curve``: the same theory at three values of ``P``.
- ``replica.phase_boundary``: ``P*`` of the same problem (``λ ≈ 0.01``, a scan of 20 points and Brent's steps).
- ``spectra.ridge_resolvent``: the resolvent at ``z = −λ'`` of that problem's prompt law, a new ``P ≈ 400`` each call.
- ``replica.asymptotic``: the ``D → ∞`` errors at one point.

Arguments are checked once, where the user calls in (``linattn/_arguments.py``: the ``@public`` decorator and its
rules; ``linattn/_check.py`` and ``linattn/_validate.py``: the checks the rules and a few bodies call, the checks of
results included). Measured directly: every function of ``linattn._check`` and ``linattn._validate`` is wrapped in
a timer that counts the outermost entry only (a check calling a check is counted once), and each call of a
``@public`` wrapper adds the wrapper's own overhead, measured on a decorated no-op in the same run (a profile counts
the wrapper calls). Share = validation seconds / seconds of the same calls, the median of five repetitions, each a
batch of calls of about 50 ms (a call of a millisecond is timed over many, not as one sample of the scheduler's
pauses). A random generator built from a seed inside a check (``numpy.random.default_rng``: the call needs it with
or without the check) counts as the call's work, not as validation. Two shares are printed: ``upper``, with the
timers' own cost counted as validation, and ``share``, with the part of each timer that falls inside the interval
it measures (a clock read, the ``try``, the extra call layer) subtracted: that part is calibrated in the same run
on a timed no-op (the seconds the timer books for it, less the no-op's own call) and multiplied by the outermost
checks counted. Goal: ``share`` < 2 % in every case.

Run: ``python benchmarks/bench_validation_share.py`` (under a minute on 2 cores).
"""
import cProfile
import functools
import inspect
import itertools
import pstats
import statistics
import time

import numpy as np

import linattn
import replica
import spectra
import validation
from linattn import _arguments, _check, _validate

GOAL = 0.02
_SPENT = [0.0]
_DEPTH = [0]
_ENTRIES = [0]


def _timed(fn):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        if _DEPTH[0]:
            return fn(*args, **kwargs)
        _DEPTH[0] += 1
        _ENTRIES[0] += 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _SPENT[0] += time.perf_counter() - t0
            _DEPTH[0] -= 1
    return timed


def _work(fn):
    """``fn`` (work that a check hands back, e.g. the random generator that the ``rng`` rule builds from a seed: the
    call needs it with or without a check): its seconds inside a timed check are taken off the validation seconds."""
    @functools.wraps(fn)
    def work(*args, **kwargs):
        if not _DEPTH[0]:
            return fn(*args, **kwargs)
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _SPENT[0] -= time.perf_counter() - t0
    return work


def instrument():
    """Wrap every function of the validation modules in a timer (module globals: the rules and the bodies look
    them up at call time), and the random generator's construction (``numpy.random.default_rng``, the work a seed
    stands for) in :func:`_work`."""
    for module in (_check, _validate):
        for name, obj in list(vars(module).items()):
            if inspect.isfunction(obj) and obj.__module__ == module.__name__:
                setattr(module, name, _timed(obj))
    np.random.default_rng = _work(np.random.default_rng)


def wrapper_overhead(n=200_000):
    """Seconds per call of the ``@public`` wrapper itself (no rules): a decorated no-op against the bare one."""
    def noop(x):
        return x
    checked = _arguments.public(noop)
    best = []
    for f in (noop, checked):
        t0 = time.perf_counter()
        for _ in range(n):
            f(1)
        best.append((time.perf_counter() - t0) / n)
    return max(best[1] - best[0], 0.0)


def timer_overhead(n=200_000):
    """Seconds a timer books as validation beyond the check it wraps: the seconds booked for a timed no-op, less the
    no-op's own call (the best of three batches each)."""
    def noop():
        return None
    timed = _timed(noop)
    bare, booked = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            noop()
        bare.append((time.perf_counter() - t0) / n)
        _SPENT[0] = 0.0
        for _ in range(n):
            timed()
        booked.append(_SPENT[0] / n)
    return max(min(booked) - min(bare), 0.0)


def wrapper_calls(fn):
    """How many ``@public`` wrapper calls one call of ``fn`` makes."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    return sum(nc for (path, _, name), (_, nc, _, _, _) in pstats.Stats(prof).stats.items()
               if name == "checked" and path.replace("\\", "/").endswith("linattn/_arguments.py"))


def validation_share(fn, overhead, timer, repeats=5, batch_seconds=0.05):
    """``(validation seconds, timers' booked seconds, total seconds)`` of one call of ``fn`` (validation with the
    timers' booked seconds subtracted): the repetition of median share. A repetition
    is a batch of calls lasting about ``batch_seconds`` (one call of a slow ``fn``), so that a short call's share is
    not one sample of the scheduler's and the garbage collector's pauses."""
    t0 = time.perf_counter()
    fn()
    batch = max(1, round(batch_seconds / max(time.perf_counter() - t0, 1e-9)))
    calls = wrapper_calls(fn)
    runs = []
    for _ in range(repeats):
        _SPENT[0], _ENTRIES[0] = 0.0, 0
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        total = time.perf_counter() - t0
        booked = _ENTRIES[0] * timer
        runs.append(((_SPENT[0] - booked + batch * calls * overhead) / batch, booked / batch, total / batch))
    share = statistics.median(v / t for v, _, t in runs)
    return next(r for r in runs if r[0] / r[2] == share)


def cases():
    """``(label, call)`` of each case; problems, data and prompt laws are built once, outside the timed calls (a
    ``linattn.Problem`` checks its own arguments when it is built: that is not the share of the call timed)."""
    pb = linattn.Problem(40, 40, 0.1)
    data = pb.sample(2000, rng=0)
    small = linattn.Problem(8, 16, 0.1)
    small_data = small.sample(200, rng=1)
    yield "Problem.sample (D = N = 40, P = 2000)", lambda: pb.sample(2000, rng=0)
    yield "replica.ridge (D = N = 40, P = 2000)", lambda: replica.ridge(data, pb, 0.1)
    yield "validation.langevin (D = 8, N = 16, P = 200)", lambda: validation.langevin(
        small_data, small, 100.0, 0.1, n_equilibrate=20_000, n_samples=20, stride=500)
    theory = linattn.Problem(10, 20, 0.1)
    law = spectra.prompt_law(theory)
    fresh = itertools.count(400)          # a new P each call: the theory's cache is not what is measured
    yield "replica.stationary (D = 10, N = 20, P ≈ 400)", lambda: replica.stationary(theory, next(fresh), np.inf, 0.1)
    yield "replica.stationary_curve (3 values of P)", lambda: replica.stationary_curve(
        theory, [next(fresh), 1000.5, 2000.0], np.inf, 0.1)
    yield "replica.phase_boundary (n_scan = 20)", lambda: replica.phase_boundary(
        theory, np.inf, 0.01 + 1e-9 * next(fresh), n_scan=20)
    yield "spectra.ridge_resolvent (P ≈ 400)", lambda: spectra.ridge_resolvent(next(fresh), 0.1, law)
    yield "replica.asymptotic (one point)", lambda: replica.asymptotic(1.0 + 1e-9 * next(fresh), 2.0, 4.0, 0.1, 0.1)


def main():
    overhead = wrapper_overhead()
    instrument()
    timer = timer_overhead()
    print(f"@public wrapper: {overhead * 1e6:.2f} µs a call; a timer books {timer * 1e9:.0f} ns beyond its check")
    print(f"{'case':48s} {'validation [s]':>15s} {'total [s]':>10s} {'share':>8s} {'upper':>8s}  goal: share < "
          f"{GOAL:.0%}")
    worst = 0.0
    for label, fn in cases():
        spent, booked, total = validation_share(fn, overhead, timer)
        worst = max(worst, spent / total)
        print(f"{label:48s} {spent:15.6f} {total:10.4f} {spent / total:8.2%} {(spent + booked) / total:8.2%}")
    print(f"worst share {worst:.2%}: {'met' if worst < GOAL else 'NOT met'}")


if __name__ == "__main__":
    main()
