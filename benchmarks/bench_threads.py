"""BLAS threads: the library's own choice (linattn.threads) against one thread and all threads, idle and under load.

Cases (each timed with the library's default, i.e. no thread variable and no limit, then inside
``threadpool_limits(1)`` and ``threadpool_limits(cores)``, which the library leaves alone):

1. ``replica.ridge`` at ``D = 48``, ``Problem(48, 48, 0.1, tasks=48)``, ``λ = 0.1/D``, ``model="full"``,
   ``τ = P/D² = 0.5`` (Gram route), 2 and 10 (certified CG): best of ``--rounds``.
2. A dense spectrum: ``spectra.hessian_eigenvalues`` at ``M = 2500`` (``D = 50``, reduced, ``P = 2M``: forming ``H``
   and its eigenvalues) and, unless ``--skip-large``, the eigenvalues of a symmetric ``M = 10⁴`` matrix (the
   eigenproblem of the seed's Fig. 1 at ``D = 100``; ``spectra.symmetric_eigenvalues``; one run each).
3. The task-pool figure of ``benchmarks/bench_pools.py`` reduced to 12 κ × ``--datasets`` datasets (``D = 64``,
   ``τ = α = 10``; sampling included).
4. ``dynamics.averaged_curves`` at 131 times, ``D = 10``, ``N = 50``, ``P = 30``, full model (numba resolvent loops
   between mid-sized complex products; one run; not in the table below, which was measured before it was added).
5. End to end at ``D = 48``, ``τ = 2``: the peer's route (Lu et al.'s normal equations from tokens,
   ``bench_pools.peer_end_to_end``) against ``pb.sample`` + ``replica.ridge`` with the default threads — goal ≥ 10×.

Conditions: an idle machine, then with one busy-loop process that this benchmark starts (``while True: pass``).
Goal: the default within 10 % of the best of the three in both conditions.

Measured (2-core AMD EPYC, OpenBLAS; seconds default / one / all, then default ÷ best):

    case                          idle                          busy
    ridge tau = 0.5 (Gram)        0.012 / 0.012 / 0.013  1.03   0.012 / 0.012 / 0.012  1.02
    ridge tau = 2 (CG)            0.051 / 0.051 / 0.051  1.00   0.050 / 0.050 / 0.050  1.01
    ridge tau = 10 (CG)           0.122 / 0.145 / 0.121  1.01   0.133 / 0.132 / 0.131  1.02
    spectrum M = 2500             1.153 / 1.608 / 1.169  1.00   1.508 / 1.414 / 1.407  1.07
    eigenvalues M = 10^4          28.17 / 47.72 / 28.22  1.00   47.15 / 46.94 / 46.65  1.01
    task-pool figure 12 x 2       11.62 / 13.52 / 12.03  1.00   13.84 / 13.60 / 13.63  1.02
    end to end vs peer (D = 48)   13.9x                         21.1x

Run: .venv/bin/python benchmarks/bench_threads.py [--rounds R] [--datasets K] [--skip-large] [--only idle|busy]
(no thread variable may be set: the benchmark refuses to run with one, since the library would then leave the
threads to it).
"""
import argparse
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(__file__))
import bench_pools  # noqa: E402
from _common import conditions  # noqa: E402

import linattn  # noqa: E402
import replica  # noqa: E402
import spectra  # noqa: E402
from linattn import _threads as threads  # noqa: E402

D = 48


def ridge_cases():
    pb = linattn.Problem(D, D, 0.1, tasks=D)
    out = []
    for tau in (0.5, 2, 10):
        data = pb.sample(int(tau * D * D), rng=1)
        out.append((f"ridge D = 48, tau = {tau}", lambda data=data: replica.ridge(data, pb, 0.1 / D, "full")))
    return out


def spectrum_case(Dn, P):
    pb = linattn.Problem(Dn, Dn, 0.1)
    data = pb.sample(P, rng=2)
    return f"spectrum M = {Dn * Dn}, P = {P}", lambda: spectra.hessian_eigenvalues(data, pb)


def eigenvalue_case(M):
    A = np.random.default_rng(3).standard_normal((M, M))
    A += A.T
    return f"eigenvalues M = {M}", lambda: spectra.symmetric_eigenvalues(A)


def pool_figure(n_datasets):
    def run():
        for kappa in np.geomspace(0.2, 32, 12):
            pb = linattn.Problem(64, 640, 0.1, tasks=int(round(kappa * 64)), task_law="sphere")
            for i in range(n_datasets):
                bench_pools.fast_route(pb.sample(10 * 64 * 64, rng=(0, i)), pb, bench_pools.RIDGE)
    return f"task-pool figure, 12 kappa x {n_datasets}", run


def averaged_curves_case():
    import dynamics

    pb = linattn.Problem(10, 50)
    times = np.geomspace(1e-2, 1e4, 131)
    return ("averaged_curves, 131 times", lambda: dynamics.averaged_curves(pb, 30, 0.01, times, model="full",
                                                                           progress=False))


def timed(fn, rounds):
    best = np.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(cases, rounds):
    rows = []
    n = threads.cores()
    for label, fn, r in cases:
        fn()                                                  # warm-up (numba, caches)
        t_default = timed(fn, r)
        with threadpool_limits(limits=1, user_api="blas"):
            t_one = timed(fn, r)
        with threadpool_limits(limits=n, user_api="blas"):
            t_all = timed(fn, r)
        best = min(t_default, t_one, t_all)
        rows.append((label, t_default, t_one, t_all, t_default / best))
        print(f"{label:34s} {t_default:9.3f} {t_one:9.3f} {t_all:9.3f}   {t_default / best:5.2f}"
              f"{'' if t_default <= 1.1 * best else '  <- above 1.1'}", flush=True)
    return rows


def end_to_end(rounds):
    pb = linattn.Problem(D, D, 0.1, tasks=D)
    P = 2 * D * D
    ridge_L = 0.1
    t_peer = timed(lambda: bench_pools.peer_end_to_end(pb, P, ridge_L, 0), max(1, rounds // 2))
    ours = timed(lambda: replica.ridge(pb.sample(P, rng=0), pb, (ridge_L / D, ridge_L), "full"), rounds)
    print(f"end to end D = 48, tau = 2: peer {t_peer:.3f} s, ours {ours:.3f} s: {t_peer / ours:.1f}x (goal >= 10x)")
    return t_peer / ours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--datasets", type=int, default=4)
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--only", choices=("idle", "busy"))
    a = ap.parse_args()
    if threads.user_controls():
        sys.exit("bench_threads: a thread variable is set or the BLAS threads were changed; unset "
                 + ", ".join(threads.THREAD_VARIABLES))
    cases = [(lb, fn, a.rounds) for lb, fn in ridge_cases()]
    cases.append((*spectrum_case(50, 5000), 1))
    if not a.skip_large:
        cases.append((*eigenvalue_case(10_000), 1))
    cases.append((*pool_figure(a.datasets), 1))
    cases.append((*averaged_curves_case(), 1))
    for _ in conditions(a.only):
        print(f"{'case':34s} {'default':>9s} {'one':>9s} {'all':>9s}   default/best [s]")
        measure(cases, a.rounds)
        end_to_end(a.rounds)


if __name__ == "__main__":
    main()
