"""BLAS threads for every public entry that takes over half a second at its documented sizes.

``bench_threads.py`` times chosen cases. This benchmark finds its cases: it runs every page of the docs (README.md and
docs/*.md, their ``python`` blocks in order, as ``tests/test_docs_run.py`` does) in this process with every public
function and method of the public modules (``docs/conventions.md`` §8) wrapped by a timer of the user's outermost
calls. Each public name whose longest such call took over ``--threshold`` seconds (0.5) is a case, replayed with the
same arguments: with the library's default (no thread variable, no limit), then inside ``threadpool_limits(1)`` and
``threadpool_limits(cores)``, idle and beside one busy-loop process that this benchmark starts. Goal: default ÷ best of
the three ≤ 1.10 in every case and both conditions.

Calls that only start other processes (the sweep runners) are timed too, but their workers choose their own threads.
A replayed call draws new random numbers where its ``rng`` argument is a ``Generator`` (the same sizes, so the same
cost). Pages whose blocks need an extra that is not installed stop there, as in the tests.

Run: .venv/bin/python benchmarks/bench_public_threads.py [--threshold S] [--rounds R] [--pages a.md b.md ...]
[--only idle|busy] (no thread variable may be set).
"""
import argparse
import contextlib
import functools
import importlib
import inspect
import os
import pathlib
import shutil
import sys
import tempfile
import time
import traceback

from threadpoolctl import threadpool_limits

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]                      # the packages before tests/, which has folders of the same names
sys.path.append(str(ROOT / "tests"))
from test_docs_run import blocks, missing_extras  # noqa: E402
from test_public_face import PUBLIC  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _common import conditions  # noqa: E402

from linattn import _threads as threads  # noqa: E402

#: the calls of the table "Defaults that cost" in docs/performance.md that are not in a code block, run as one more
#: page (``markov.change_points``-like scans and the M = 10⁴ spectrum are in bench_threads.py)
COSTS_TABLE = """
import linattn, replica
from linattn import markov
markov.losses(markov.Chains(C=10, concentration=1.0, K=None), n_seq=2000, length=102, rng=0, progress=False)
markov.losses(markov.Chains(C=10, concentration=1.0, K=None), n_seq=200, length=102, rng=0, progress=False,
              names=["bayes"])
replica.learner_theory(linattn.Problem(6, 12, 0.01, link="relu"), 200, 0.01, learner="feature")
replica.learner_theory(linattn.Problem(6, 12, 0.01, link="relu"), 200, 0.01, learner="kernel")
replica.stationary(linattn.Problem(20, 20, 0.1, tasks=16), 800, 1e3, 0.01)
"""
#: (public name) -> [longest seconds, args, kwargs, page]
CALLS: dict = {}
_depth = [0]


def _timed(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _depth[0]:
            return fn(*args, **kwargs)
        _depth[0] += 1
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _depth[0] -= 1
            dt = time.perf_counter() - t0
            if dt > CALLS.get(name, (0.0,))[0]:
                CALLS[name] = [dt, args, kwargs, _page[0]]
    wrapper.__bench_wrapped__ = True
    return wrapper


_page = [""]


def wrap_public():
    """Wrap every public function and public method of a public class; returns how many names were wrapped."""
    done = {}
    for modname in PUBLIC:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                for attr, value in list(vars(obj).items()):
                    if attr.startswith("_") or not inspect.isfunction(value) or getattr(value, "__bench_wrapped__", 0):
                        continue
                    setattr(obj, attr, done.setdefault(id(value), _timed(f"{modname}.{name}.{attr}", value)))
            elif inspect.isfunction(obj) and not getattr(obj, "__bench_wrapped__", False):
                setattr(mod, name, done.setdefault(id(obj), _timed(f"{modname}.{name}", obj)))
    return len(done)


def run_pages(pages):
    """Run the python blocks of each page in order, in a fresh namespace and a temporary folder (``None``: the calls of
    :data:`COSTS_TABLE`)."""
    cwd = os.getcwd()
    for page in pages:
        code = []
        for block in (blocks(page) if page is not None else [COSTS_TABLE]):
            if missing_extras(block):
                break
            code.append(block)
        if page is None:
            page = pathlib.Path("performance.md costs table")
        if not code:
            print(f"  {page.name}: skipped (needs an extra that is not installed)", flush=True)
            continue
        _page[0] = page.name
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            try:
                exec(compile("\n".join(code), str(page), "exec"), {"__name__": "__main__"})
                status = "ran"
            except Exception:
                status = "FAILED: " + traceback.format_exc(limit=1).strip().splitlines()[-1]
            finally:
                os.chdir(cwd)
        print(f"  {page.name}: {status} in {time.perf_counter() - t0:.1f} s", flush=True)


def _in_fresh_folder(fn):
    """``fn()`` in a new temporary working folder: a call that writes a store writes a new one each time."""
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0
        finally:
            os.chdir(cwd)


def _call(name, args, kwargs):
    return lambda: CALLS_ENTRY[name](*args, **kwargs)


def warm_cases(candidates, threshold):
    """The candidates whose call, made again (warm: numba compiled, caches filled), still takes over ``threshold``
    seconds; the others are reported as first-call costs."""
    cases = []
    for name, (first, args, kwargs, page) in candidates:
        warm = _in_fresh_folder(_call(name, args, kwargs))
        kind = "case" if warm > threshold else "first call only"
        print(f"  {name:48s} first {first:7.2f} s, again {warm:7.2f} s  {page:22s} {kind}", flush=True)
        if warm > threshold:
            cases.append((name, args, kwargs, page, warm))
    return cases


def measure(cases, rounds):
    """Default, one thread and all threads for each case: the best of ``rounds`` (at least 3; 5 for calls under 1 s)
    of each, the three settings interleaved round by round in a rotating order, so that a drift of the machine's
    condition, or a first timing in a quieter or busier moment, does not fall on one setting. Timed one setting after
    the other, with one round for calls over 2 s, the same call differed by up to 25 % between settings that do not
    change its arithmetic (``markov.losses`` is numba and numpy with no BLAS product: 1.23 in one run, 1.00 in the
    next)."""
    n = threads.cores()
    settings = {"default": contextlib.nullcontext, "one": lambda: threadpool_limits(limits=1, user_api="blas"),
                "all": lambda: threadpool_limits(limits=n, user_api="blas")}
    order = list(settings)
    worst = 0.0
    for name, args, kwargs, page, warm in cases:
        call, r = _call(name, args, kwargs), max(rounds, 5 if warm < 1.0 else 3)
        call()                                                  # warm again (and the machine's condition settles)
        best = dict.fromkeys(settings, float("inf"))
        for k in range(r):
            for key in order[k % len(order):] + order[: k % len(order)]:
                with settings[key]():
                    best[key] = min(best[key], _in_fresh_folder(call))
        t_default, t_one, t_all = best["default"], best["one"], best["all"]
        ratio = t_default / min(t_default, t_one, t_all)
        worst = max(worst, ratio)
        print(f"{name:48s} {page:22s} {t_default:8.3f} {t_one:8.3f} {t_all:8.3f}   {ratio:5.2f}"
              f"{'' if ratio <= 1.10 else '  <- above 1.10'}", flush=True)
    return worst


#: public name -> the wrapped callable (module function or class method)
CALLS_ENTRY: dict = {}


def _entries():
    for modname in PUBLIC:
        mod = importlib.import_module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if getattr(value, "__bench_wrapped__", False):
                        CALLS_ENTRY.setdefault(f"{modname}.{name}.{attr}", getattr(obj, attr))
            elif getattr(obj, "__bench_wrapped__", False):
                CALLS_ENTRY.setdefault(f"{modname}.{name}", obj)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--pages", nargs="*")
    ap.add_argument("--only", choices=("idle", "busy"))
    a = ap.parse_args()
    if threads.user_controls():
        sys.exit("bench_public_threads: a thread variable is set or the BLAS threads were changed; unset "
                 + ", ".join(threads.THREAD_VARIABLES))
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    if a.pages:
        pages = [p for p in pages if p.name in a.pages]
    else:
        pages.append(None)
    workspace = tempfile.mkdtemp(prefix="bench-public-threads-")
    os.chdir(workspace)                     # nothing a page or a replay writes lands in the source tree
    print(f"wrapped {wrap_public()} public functions and methods; running {len(pages)} pages", flush=True)
    t0 = time.perf_counter()
    run_pages(pages)
    print(f"pages ran in {time.perf_counter() - t0:.0f} s; {len(CALLS)} public names called", flush=True)
    _entries()
    candidates = sorted(((k, v) for k, v in CALLS.items() if v[0] > a.threshold), key=lambda kv: -kv[1][0])
    print(f"\n{len(candidates)} public names with a call over {a.threshold} s; each called again:")
    cases = warm_cases(candidates, a.threshold)
    print(f"runnable threads now: {threads._read_loadavg().split()[3]} (this process counts one)")
    for _ in conditions(a.only):
        print(f"{'case':48s} {'page':22s} {'default':>8s} {'one':>8s} {'all':>8s}   default/best [s]")
        worst = measure(cases, a.rounds)
        print(f"worst default/best: {worst:.2f} (goal <= 1.10)")
    os.chdir(ROOT)
    shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    main()
