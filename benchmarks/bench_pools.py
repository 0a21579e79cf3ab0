"""Task pools at large D: replica.ridge against the peer's route (Lu et al.'s released code, re-implemented in numpy).

1. One dataset at D = 64, α = 10 (N = 640), noise² = 0.01, pool κ = 1 (sphere tasks), peer ridge λ_L = 1e-4,
   τ ∈ {0.5, 2, 10}. The peer's route, end to end as in their released code: draw the tokens (P × (N+1) × D, in
   batches of 512 prompts), build H_Z (P × D × (D+1)), accumulate H_Zᵀ H_Z and H_Zᵀ y, add (P/D) λ_L I, solve the
   normal equations. Ours: pb.sample (exact O(D) per prompt) then replica.ridge(data, pb, (λ_L/D, λ_L), "full")
   (Gram route for P < M, certified CG for P >= M). Also the solve alone on the same sufficient statistics.
   Required ≥ 10×, goal ≥ 30×.
2. The peer's quick figure: g_task = e_ICL − e_IDG at 12 values of κ ∈ [0.2, 32], 20 datasets each, α = τ = 10,
   noise² = 0.01, D = 64: wall time with replica.ridge (sampling included), and the peer's route estimated as
   240 × its measured per-dataset time at τ = 10. Required ≤ 10 min, goal ≤ 3 min.
3. Peak memory of one dataset at D = 100, τ = 10 (P = 100 000) in a fresh process: required < 4 GB.
Run: .venv/bin/python benchmarks/bench_pools.py [--skip-figure]
"""
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, report  # noqa: E402

import linattn  # noqa: E402
import replica  # noqa: E402

D, ALPHA, NOISE, RIDGE = 64, 10, 0.1, 1e-4


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


def figure(ridge_L=RIDGE):
    kappas = np.geomspace(0.2, 32, 12)
    P = 10 * D * D
    t0 = time.perf_counter()
    for kappa in kappas:
        pb = linattn.Problem(D, ALPHA * D, NOISE, tasks=int(round(kappa * D)), task_law="sphere")
        for i in range(20):
            fast_route(pb.sample(P, rng=(0, i)), pb, ridge_L)
    return time.perf_counter() - t0


def memory_child():
    pb = linattn.Problem(100, 1000, NOISE, tasks=100, task_law="sphere")
    fast_route(pb.sample(10 * 100 * 100, rng=0), pb, RIDGE)
    # VmHWM (peak resident memory of this process, KiB); ru_maxrss would report the forking parent's peak
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
    print(hwm / 2**20)


def main():
    if "--memory-child" in sys.argv:
        memory_child()
        return
    rows, per_peer = [], {}
    for tau in (0.5, 2, 10):
        pb = linattn.Problem(D, ALPHA * D, NOISE, tasks=D, task_law="sphere")
        P = int(tau * D * D)
        data = pb.sample(P, rng=1)
        t_peer_all = best_time(lambda: peer_end_to_end(pb, P, RIDGE, 1), repeat=1, warmup=False)
        t_fast_all = best_time(lambda: fast_route(pb.sample(P, rng=2), pb, RIDGE), repeat=3)
        rows.append((f"tau = {tau}: end to end (tokens / O(D) sampler)", t_peer_all, t_fast_all, ">= 10x (goal 30x)"))
        t_peer = best_time(lambda: peer_route(data, RIDGE), repeat=1, warmup=False)
        t_fast = best_time(lambda: fast_route(data, pb, RIDGE), repeat=3)
        sol = fast_route(data, pb, RIDGE)
        ref = peer_route(data, RIDGE)
        G_peer = ref.reshape(D, D + 1)
        err = max(np.linalg.norm(G_peer[:, :D].T - sol.Gamma) / np.linalg.norm(sol.Gamma),
                  np.linalg.norm(G_peer[:, D] / np.sqrt(D) - sol.v) / np.linalg.norm(sol.v))
        per_peer[tau] = t_peer_all
        rows.append((f"tau = {tau}: solve only, {sol.method} ({sol.iterations} it), rel. diff {err:.1e}",
                     t_peer, t_fast, "(information)"))
    report(f"One dataset, P = tau D^2, D = {D}, alpha = {ALPHA}, noise^2 = {NOISE**2}, lambda_L = {RIDGE}", rows)
    if "--skip-figure" not in sys.argv:
        t_fig = figure()
        est = 240 * per_peer[10]
        report("The peer's quick figure (12 kappa x 20 datasets, D = 64, alpha = tau = 10)",
               [("whole figure (peer: 240 x one dataset end to end)", est, t_fig, "<= 10 min (goal 3 min)")])
    out = subprocess.run([sys.executable, __file__, "--memory-child"], capture_output=True, text=True, check=True)
    print(f"\nPeak memory of one dataset at D = 100, tau = 10 (P = 100000): {float(out.stdout):.2f} GiB "
          "(required < 4 GB)")


if __name__ == "__main__":
    main()
