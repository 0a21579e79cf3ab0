"""Training diagnostics on long trajectories against naive baselines.

1. A trajectory of T = 500 matrices 64 × 64 (a circuit recorded every few steps): diagnostics.diagnose (one batched
   SVD per matrix, every measure from it) against the naive route — per matrix, a separate SVD for the effective
   rank, the marginalised rank and the stable rank, numpy.linalg.pinv for the subspace distance and
   scipy.linalg.subspace_angles for the principal angles.
2. The top 16 singular values of a 2000 × 2000 matrix with a decaying spectrum (a large embedding-sized circuit):
   randomised SVD (diagnostics.singular_values(k=16)) against the full LAPACK SVD.
Run: .venv/bin/python benchmarks/bench_diagnostics.py
"""
import os
import sys

import numpy as np
from scipy.linalg import subspace_angles

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, report  # noqa: E402

import diagnostics  # noqa: E402


def naive(traj, ref):
    out = []
    for M in traj:
        s = np.linalg.svd(M, compute_uv=False)
        p = s / s.sum()
        er = np.exp(-np.sum(p * np.log(p)))
        s2 = np.linalg.svd(M, compute_uv=False)[1:]
        q = s2 / s2.sum()
        mr = np.exp(-np.sum(q * np.log(q)))
        sr = np.linalg.norm(M) ** 2 / np.linalg.norm(M, 2) ** 2
        d = np.linalg.norm(ref @ (np.eye(M.shape[1]) - np.linalg.pinv(M) @ M)) / np.linalg.norm(ref)
        ang = subspace_angles(M.T, ref.T).max()
        out.append((er, mr, sr, d, ang))
    return np.array(out)


def main():
    rng = np.random.default_rng(0)
    T, n = 500, 64
    traj = rng.standard_normal((T, n, n)) * np.geomspace(1.0, 1e-3, n)      # full rank, decaying columns
    ref = traj[-1]
    fast = diagnostics.diagnose(traj, reference=ref)
    slow = naive(traj, ref)
    assert np.allclose(fast.effective_rank, slow[:, 0]) and np.allclose(fast.marginalised_rank, slow[:, 1])
    assert np.allclose(fast.stable_rank, slow[:, 2]) and np.allclose(fast.subspace_distance, slow[:, 3], atol=1e-8)
    rows = [(f"diagnose, T={T}, {n}x{n}", best_time(lambda: naive(traj, ref), repeat=2),
             best_time(lambda: diagnostics.diagnose(traj, reference=ref), repeat=2), ">= 3x")]
    m = 2000
    U = np.linalg.qr(rng.standard_normal((m, m)))[0]
    V = np.linalg.qr(rng.standard_normal((m, m)))[0]
    A = (U * 0.8 ** np.arange(m)) @ V.T
    top = diagnostics.singular_values(A, k=16)
    assert np.allclose(top, 0.8 ** np.arange(16), rtol=1e-8)
    rows.append((f"top-16 singular values, {m}x{m}", best_time(lambda: np.linalg.svd(A, compute_uv=False), repeat=1),
                 best_time(lambda: diagnostics.singular_values(A, k=16), repeat=1), ">= 10x"))
    report("Training diagnostics", rows)


if __name__ == "__main__":
    main()
