"""Task pools at large D: replica.ridge against the peer's route (Lu et al.'s released code, re-implemented in numpy).

Setting: D = 64, α = 10 (N = 640), noise² = 0.01, pool κ = 1 (sphere tasks), peer ridge λ_L = 1e-4 (ours:
lam = (λ_L/D, λ_L)), τ = P/D² ∈ {0.5, 2, 10}. The machine has 2 cores that other jobs may share, so every
ratio is measured in one run, the two routes interleaved (best of several rounds), the load average printed
with each table, and section 1 is repeated with one BLAS thread for both routes (1b, a subprocess with
OPENBLAS_NUM_THREADS=1 — how the figure workers of `make run` compute).

1. **Solve only** on the same sufficient statistics — goal ≥ 10× at every τ. Peer: H_Z (P × D × (D+1)),
   H_Zᵀ H_Z, + (P/D) λ_L I, np.linalg.solve (2PM² + ⅔M³ flops, M = D² + D). Ours: replica.ridge(data, pb,
   (λ_L/D, λ_L), "full"): at τ = 0.5 the Gram route (float32 syrk + Cholesky of the 2048² Gram matrix, ≈ P³/3
   flops, refined in float64 to a float64 solve's backward error); at τ = 2 and 10 certified CG (float32
   Hessian–vector products, float64 reliable updates and stopping rule), 80–82 and 25–26 iterations — set by the
   Marchenko–Pastur spread of the preconditioned Hessian (condition ≈ ((1+√q)/(1−√q))², q = M/P: 35 at τ = 2,
   3.7 at τ = 10), not by the preconditioner, so at τ = 2 the route's flop ratio is ≈ D²/(4 × 82) ≈ 12 at equal
   flop rates, more with float32 products. End to end from tokens (peer, batches of 512 prompts as in their code)
   vs pb.sample (exact, O(D) per prompt) + replica.ridge: information.
2. **The peer's quick figure**: g_task at 12 κ ∈ geomspace(0.2, 32) × 20 datasets, α = τ = 10, D = 64, sampling
   included — goal ≤ 3 min (it took 4 min 02 s – 4 min 24 s before this version); the peer's route estimated as
   240 × its measured end-to-end time at τ = 10; the split between pb.sample and replica.ridge is printed.
   Repeated with one BLAS thread (2b).
3. **One CG product against the memory-bandwidth limit** (D = 64, τ = 10, P = 40 960): the float32 product of the
   CG iterations and the float64 one of the reliable updates. Bytes: Zᵀ = [S, y2]ᵀ and X_qᵀ read once
   (P (2D + 1) numbers, the least any product must move) and as written ((8D + 4) P numbers: both read twice, the
   D × P and (D+1) × P temporaries written and read once); bandwidth: a 256 MiB numpy copy (read + write) in the
   same run; ratio = measured time / (bytes / bandwidth). Also against the flop rate of a 2048³ GEMM of the same
   precision: the product (4 P D (D+1) flops, about D/2 flops per byte of data) is compute-bound.
4. Peak memory of one dataset at D = 100, τ = 10 (P = 100 000) in a fresh process: required < 4 GB.

Measured on a quiet machine (2026-11, 2-core AMD EPYC, `--rounds 3`, nothing else running; load average 1.0–2.0
is this benchmark):

* 1, default BLAS threads: 12.0×, 19.3×, 48.2× at τ = 0.5, 2, 10 (0.15 / 0.19 / 0.43 s against 1.8 / 3.6 / 20.8 s).
* 1b, one BLAS thread: 41.8×, 24.7×, 46.7× (0.070 / 0.22 / 0.60 s against 2.9 / 5.4 / 28.1 s).
* 2: 146 s with the default threads, 180 s with one (one core idle) — goal ≤ 3 min; pb.sample 15–20 %.
* 3: float32 product 7.95 ms = 11.6× the bandwidth limit with the data read once (30.9 GB/s), 2.9× as written,
  2.1× the sgemm flop-rate limit; float64 15.5 ms (11.3×, 2.8×, 1.9×).
* 4: 0.77 GiB.

Decision: the library does not pin BLAS threads (two threads win on an idle machine); on a shared machine use one
(OPENBLAS_NUM_THREADS=1 or threadpoolctl), as the numbers under load below show.

Measured (2026-11, same machine; other jobs on the machine, load average 2.3–6.4 on 2 cores):

* 1b, one BLAS thread: 41×, 22×, 43× at τ = 0.5, 2, 10 (0.060 / 0.22 / 0.49 s against 2.5 / 5.0 / 21 s; load 3.8–4.3);
  35×, 27×, 40× at load 6.4. Goal met at every τ.
* 1, default BLAS threads: 16.6×, 19.9×, 41.2× at load 2.3 (0.079 / 0.14 / 0.31 s). At load 3–7 our route
  collapses at τ ≤ 2 (1.0–6.7×; 20–34× at τ = 10): a τ = 2 solve makes ~170 multi-threaded BLAS calls and each can
  wait a scheduler slice for its second thread (the same solve takes 0.22 s on one thread, 2.7 s on two); the
  peer's few large calls lose less. The benchmark prints both.
* 2: 138 s and 141 s with one BLAS thread (load 2.6–4.3; pb.sample 15 %); with default threads 265 s at load 2.5 and
  566 s at load 4–4.8. Estimated on an idle machine: 240 × (0.31 s + 0.09 s) ≈ 100 s. 25–26 CG iterations for
  every κ. Before: 4 min 02 s – 4 min 24 s.
* 3: float32 product 16–17 ms at load 4 (7 ms inside a solve at load 2, 30 ms at load 7): 15–25× the bandwidth
  limit with the data read once, 4–6× counting the temporaries, 2.2–2.4× the time a 2048³ sgemm needs for the same
  flops — compute-bound, not bandwidth-bound; float64: 32–37 ms, the same ratios. (Bandwidth 19–32 GB/s under
  that load, 35 GB/s at load 2; the float32 data, 20 MiB, fits the 32 MiB L3.)
* 4: 0.77 GiB.

Run: .venv/bin/python benchmarks/bench_pools.py [--skip-figure] [--rounds R]
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import report  # noqa: E402

import linattn  # noqa: E402
import replica  # noqa: E402

D, ALPHA, NOISE, RIDGE = 64, 10, 0.1, 1e-4
_ridge_module = sys.modules["replica._ridge"]


def peer_route(data, ridge_L):
    """The peer's normal equations in their layout and scaling (conventions §6.1): with their tokens x/√D,
    H_Z[μ] = x_q [sᵀ, y2/√D] in our variables, their Γ is D × (D+1), Γ_ours = Γ[:, :D]ᵀ, v_ours = Γ[:, D]/√D."""
    P, D = data.P, data.D
    H = np.empty((P, D, D + 1))
    H[:, :, :D] = data.xq[:, :, None] * data.s[:, None, :]
    H[:, :, D] = data.xq * data.y2[:, None] / np.sqrt(D)
    Hv = H.reshape(P, -1)
    A = Hv.T @ Hv + (P / D) * ridge_L * np.eye(Hv.shape[1])
    return np.linalg.solve(A, Hv.T @ data.yq)


def peer_end_to_end(pb, P, ridge_L, seed, batch=512):
    """Their route from the tokens: their x has variance 1/D; y = x·w + noise; H_Z from the tokens."""
    rng = np.random.default_rng(seed)
    D, N, K = pb.D, pb.N, pb.tasks
    w_set = rng.standard_normal((K, D))
    w_set *= np.sqrt(D) / np.linalg.norm(w_set, axis=1, keepdims=True)
    A = np.zeros((D * (D + 1), D * (D + 1)))
    rhs = np.zeros(D * (D + 1))
    for a in range(0, P, batch):
        n = min(batch, P - a)
        x = rng.standard_normal((n, N + 1, D)) / np.sqrt(D)
        w = w_set[rng.integers(0, K, n)]
        y = np.einsum("nij,nj->ni", x, w) + pb.noise * rng.standard_normal((n, N + 1))
        H = np.empty((n, D, D + 1))
        H[:, :, :D] = x[:, N, :, None] * (D / N) * np.einsum("nij,ni->nj", x[:, :N], y[:, :N])[:, None, :]
        H[:, :, D] = x[:, N] * (np.sum(y[:, :N] ** 2, axis=1) / N)[:, None]
        Hv = H.reshape(n, -1)
        A += Hv.T @ Hv
        rhs += Hv.T @ y[:, N]
    A[np.diag_indices_from(A)] += (P / D) * ridge_L
    return np.linalg.solve(A, rhs)


def fast_route(data, pb, ridge_L):
    return replica.ridge(data, pb, (ridge_L / pb.D, ridge_L), "full")


def interleaved(fns, rounds):
    """Best wall time (s) of each callable over ``rounds`` rounds that call them in turn (so that a burst of load
    from other jobs hits both routes alike)."""
    best = [np.inf] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def load():
    return "load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def figure(ridge_L=RIDGE):
    """The peer's quick figure with replica._ridge: total wall time and the part spent in pb.sample."""
    kappas = np.geomspace(0.2, 32, 12)
    P = 10 * D * D
    t_sample = 0.0
    its = []
    t0 = time.perf_counter()
    for kappa in kappas:
        pb = linattn.Problem(D, ALPHA * D, NOISE, tasks=int(round(kappa * D)), task_law="sphere")
        for i in range(20):
            ts = time.perf_counter()
            data = pb.sample(P, rng=(0, i))
            t_sample += time.perf_counter() - ts
            its.append(fast_route(data, pb, ridge_L).iterations)
    return time.perf_counter() - t0, t_sample, its


def bandwidth_rows(rounds):
    """One CG Hessian–vector product at D = 64, τ = 10 against the memory bandwidth and the GEMM flop rate.

    Bytes: the data read once (Zᵀ, X_qᵀ: the least any product must move), and what the product as written moves
    (Zᵀ and X_qᵀ read twice, the D × P and (D+1) × P temporaries written and read once: (8D + 4) P numbers)."""
    pb = linattn.Problem(D, ALPHA * D, NOISE, tasks=D, task_law="sphere")
    P = 10 * D * D
    data = pb.sample(P, rng=3)
    op = _ridge_module._Operator(data, "full", RIDGE / D, RIDGE)
    single = _ridge_module._Single(op.ZT, op.XT)                  # the float32 product of the CG iterations
    theta = np.random.default_rng(0).standard_normal(D * (D + 1))
    big = np.ones(2**25)                                          # 256 MiB
    out = np.empty_like(big)
    g32 = np.random.default_rng(1).standard_normal((2048, 2048)).astype(np.float32)
    g64 = g32.astype(np.float64)
    single(theta)
    op.hess(theta)
    t32, t64, tcopy, tg32, tg64 = interleaved([lambda: single(theta), lambda: op.hess(theta),
                                               lambda: np.copyto(out, big), lambda: g32 @ g32, lambda: g64 @ g64],
                                              3 * rounds)
    bw = 2 * big.nbytes / tcopy
    flops = 4.0 * P * D * (D + 1)
    rows = []
    for name, t, size, tg in (("float32", t32, 4, tg32), ("float64", t64, 8, tg64)):
        once, moved = P * (2 * D + 1) * size, P * (8 * D + 4) * size
        rows.append((name, t, once / bw, moved / bw, flops / (2.0 * 2048**3 / tg)))
    return bw, rows


def solve_only(rounds):
    """Section 1's solve-only rows: the peer's normal equations vs replica._ridge on the same sufficient statistics."""
    rows, ratios = [], {}
    for tau in (0.5, 2, 10):
        pb = linattn.Problem(D, ALPHA * D, NOISE, tasks=D, task_law="sphere")
        data = pb.sample(int(tau * D * D), rng=1)
        fast_route(data, pb, RIDGE)                                  # warm-up
        sol = fast_route(data, pb, RIDGE)
        ref = peer_route(data, RIDGE)
        G_peer = ref.reshape(D, D + 1)
        err = max(np.linalg.norm(G_peer[:, :D].T - sol.Gamma) / np.linalg.norm(sol.Gamma),
                  np.linalg.norm(G_peer[:, D] / np.sqrt(D) - sol.v) / np.linalg.norm(sol.v))
        t_peer, t_fast = interleaved([lambda: peer_route(data, RIDGE), lambda: fast_route(data, pb, RIDGE)], rounds)
        ratios[tau] = t_peer / t_fast
        route = "gram" if sol.method == "gram" else f"cg {sol.iterations} it"
        rows.append((f"tau = {tau}: solve only, {route}, rel. diff {err:.0e}", t_peer, t_fast, ">= 10x"))
    return rows, ratios


def print_ratios(ratios):
    print("   solve-only ratios: " + ", ".join(f"tau = {t}: {r:.1f}x" for t, r in ratios.items())
          + "  (goal >= 10x at every tau)")


def print_figure(label, threads, peer=None):
    """Section 2: the figure's wall time (with the peer's estimate when given) and its sample / solve split."""
    t_fig, t_sample, its = figure()
    rows = [("whole figure (peer: 240 x one dataset end to end)", peer, t_fig, "<= 3 min")] if peer else []
    if rows:
        report(f"{label}. The peer's quick figure (12 kappa x 20 datasets, D = 64, alpha = tau = 10), {threads} "
               f"({load()})", rows)
    else:
        print(f"\n{label}. The peer's quick figure, {threads} ({load()}): {t_fig:.1f} s (goal <= 180 s)")
    print(f"   of which pb.sample {t_sample:.1f} s ({100 * t_sample / t_fig:.0f} %), replica._ridge and the rest "
          f"{t_fig - t_sample:.1f} s; CG iterations per dataset {min(its)}-{max(its)} (mean {np.mean(its):.1f})")


def main():
    if "--memory-child" in sys.argv:
        memory_child()
        return
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    title = (f"One dataset, P = tau D^2, D = {D}, alpha = {ALPHA}, noise^2 = {NOISE**2:.2g}, kappa = 1, "
             f"lambda_L = {RIDGE}, interleaved, best of {rounds}")
    if "--solve-child" in sys.argv:                                   # run with one BLAS thread (see main)
        rows, ratios = solve_only(rounds)
        report(f"1b. {title}, one BLAS thread for both routes ({load()})", rows)
        print_ratios(ratios)
        if "--skip-figure" not in sys.argv:
            print_figure("2b", "one BLAS thread")
        return
    print(load())
    rows, ratios = solve_only(rounds)
    per_peer = {}
    for tau in (0.5, 2, 10):
        pb = linattn.Problem(D, ALPHA * D, NOISE, tasks=D, task_law="sphere")
        P = int(tau * D * D)
        e2e_rounds = 1 if tau == 10 else 2                           # the peer's tokens at τ = 10 take ~1 min
        t_peer_all, t_fast_all = interleaved([lambda: peer_end_to_end(pb, P, RIDGE, 1),
                                              lambda: fast_route(pb.sample(P, rng=2), pb, RIDGE)], e2e_rounds)
        per_peer[tau] = t_peer_all
        rows.append((f"tau = {tau}: end to end (tokens / O(D) sampler)", t_peer_all, t_fast_all, "(information)"))
    report(f"1. {title} (end to end: best of 2, 1 at tau = 10), default BLAS threads ({load()})", rows)
    print_ratios(ratios)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if "--skip-figure" not in sys.argv:
        print_figure("2", "default BLAS threads", 240 * per_peer[10])
    child = [sys.executable, __file__, "--solve-child", "--rounds", str(rounds)] + [
        a for a in sys.argv[1:] if a == "--skip-figure"]
    print(subprocess.run(child, capture_output=True, text=True, check=True, env=env).stdout.rstrip())
    bw, brows = bandwidth_rows(rounds)
    print(f"\n3. One CG Hessian-vector product, D = {D}, tau = 10 (P = {10 * D * D}, 4 P D (D+1) = "
          f"{4e-6 * 10 * D**3 * (D + 1):.0f} Mflop); memory bandwidth (256 MiB numpy copy, read + write) "
          f"{bw / 1e9:.1f} GB/s; {load()}")
    print(f"{'product':8s} {'time [ms]':>10s} | {'bandwidth limit [ms]: data once':>32s} {'ratio':>6s} | "
          f"{'as written':>10s} {'ratio':>6s} | {'GEMM flop-rate limit [ms]':>25s} {'ratio':>6s}")
    for name, t, t_once, t_moved, t_flop in brows:
        print(f"{name:8s} {1e3 * t:10.2f} | {1e3 * t_once:32.2f} {t / t_once:5.1f}x | {1e3 * t_moved:10.2f} "
              f"{t / t_moved:5.1f}x | {1e3 * t_flop:25.2f} {t / t_flop:5.1f}x")
    out = subprocess.run([sys.executable, __file__, "--memory-child"], capture_output=True, text=True, check=True)
    print(f"\n4. Peak memory of one dataset at D = 100, tau = 10 (P = 100000): {float(out.stdout):.2f} GiB "
          "(required < 4 GB)")
    print(load())


def memory_child():
    pb = linattn.Problem(100, 1000, NOISE, tasks=100, task_law="sphere")
    fast_route(pb.sample(10 * 100 * 100, rng=0), pb, RIDGE)
    # VmHWM (peak resident memory of this process, KiB); ru_maxrss would report the forking parent's peak
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
    print(hwm / 2**20)


if __name__ == "__main__":
    main()
