"""Helpers for the ratio benchmarks: best-of-k wall time of a callable, a printed table, and the idle and busy
conditions of the thread benchmarks."""
import contextlib
import os
import subprocess
import sys
import time


def best_time(fn, repeat=3, warmup=True):
    """Best wall time (s) of ``fn()`` over ``repeat`` runs, after one untimed warm-up call."""
    if warmup:
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def report(title, rows):
    """Print ``rows`` of (label, baseline_s, fast_s, target) with the speed-up ratio."""
    print(f"\n{title}")
    print(f"{'case':38s} {'baseline [s]':>13s} {'fast [s]':>10s} {'ratio':>8s}  target")
    for label, base, fast, target in rows:
        print(f"{label:38s} {base:13.4f} {fast:10.4f} {base / fast:8.1f}x  {target}")


def conditions(only=None):
    """Yield ``"idle"`` and then ``"busy"`` (or only ``only``); while the caller measures ``"busy"``, one busy-loop
    process runs beside it (started 2 s before, killed after). Prints a header with the cores and the load."""
    from linattn import _threads as threads

    for condition in ("idle", "busy"):
        if only and condition != only:
            continue
        with contextlib.ExitStack() as stack:
            if condition == "busy":
                busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                stack.callback(busy.kill)
                time.sleep(2.0)
            print(f"\n{condition} ({threads.cores()} cores; load average {os.getloadavg()[0]:.2f}; "
                  f"free cores now {threads.free_cores()})")
            yield condition
