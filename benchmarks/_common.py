"""Helpers for the ratio benchmarks: best-of-k wall time of a callable, and a printed table."""
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
