"""The torch route (``device=``) against the numpy/numba route: dense spectra and batched Langevin chains.

Cases (``--device``, default ``cuda``; ``cpu`` runs torch's CPU backend, for a check of the script without a GPU):

1. ``spectra.hessian_eigenvalues`` (reduced model, rescaled, the dense route ``P >= M``) at ``D = N = 100``
   (``M = 10⁴``, ``P = 2·10⁴``) and, with ``--large``, ``D = N = 200`` (``M = 4·10⁴``, ``P = 8·10⁴``; the numpy
   route is not timed there unless ``--cpu-large``: hours on a few cores), forming ``H`` included; the largest
   difference of the two routes' eigenvalues relative to the largest (goal ``≤ 1e-12``).
2. ``validation.langevin`` with ``10⁴`` chains at ``D = 10``, ``N = 100`` (``M = 100``), ``P = 200``, ``β = 20``,
   ``λ = 0.05``, the seed's protocol (``10⁵`` equilibration steps, 20 samples 5000 apart): numba (all cores) against
   one torch batch; both means against the exact Gibbs value (in exact standard errors).

Measured: no GPU run of this benchmark is recorded yet. A reference measurement of the same route, on an H200 with torch
2.11 in float64, the rescaled-Hessian spectrum at
``D = N = 100`` in 0.85–1.5 s including ``FᵀF`` (the library's numpy route: 13.9–17.0 s on that machine's 16
cores, about 95 s on 2 cores here) and a random symmetric ``M = 4·10⁴`` in 34 s. On torch's CPU backend
(``--device cpu``, 2 cores here, other jobs running) case 1 at ``D = N = 40`` took 6.3 s against numpy's 1.5 s,
with eigenvalues equal to 5e-15 of the largest: the route is for GPUs; on a CPU the library's own route (two-stage
LAPACK, ``linattn.threads``) is the faster.

Run: .venv/bin/python benchmarks/bench_gpu.py [--device cuda|cpu] [--D 100] [--large] [--cpu-large] [--skip-langevin]
"""
import argparse
import time

import numpy as np

import linattn
import spectra
import validation


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def spectrum(D, device, cpu=True):
    pb = linattn.Problem(D, D, 0.1)
    data = pb.sample(2 * D * D, rng=0)
    spectra.hessian_eigenvalues(pb.sample(200, rng=1), pb, device=device)        # warm-up (kernels, handles)
    t_dev, ev_dev = timed(lambda: spectra.hessian_eigenvalues(data, pb, device=device))
    if not cpu:
        print(f"spectrum D = N = {D} (M = {D * D}): {device} {t_dev:.2f} s (numpy route not timed)")
        return
    t_cpu, ev_cpu = timed(lambda: spectra.hessian_eigenvalues(data, pb))
    diff = float(np.abs(ev_dev - ev_cpu).max() / ev_cpu.max())
    print(f"spectrum D = N = {D} (M = {D * D}): numpy {t_cpu:.2f} s, {device} {t_dev:.2f} s, "
          f"ratio {t_cpu / t_dev:.1f}x; max difference {diff:.1e} of the largest (goal <= 1e-12)")


def langevin(device, n_chains=10_000):
    pb = linattn.Problem(10, 100, 0.1)
    data = pb.sample(200, rng=0)
    kw = dict(n_chains=n_chains, rng=3)
    for label, dev in (("numba", None), (device, device)):
        validation.langevin(data, pb, 20.0, 0.05, n_equilibrate=100_000, n_samples=2, stride=10, n_chains=2,
                            device=dev)                                          # warm-up (compile, caches)
        t, r = timed(lambda dev=dev: validation.langevin(data, pb, 20.0, 0.05, device=dev, **kw))
        z = (r.train_mean - r.exact_train - r.bias_train) / r.train_se_exact
        print(f"langevin {n_chains} chains, D = 10, N = 100: {label} {t:.1f} s; train mean − exact = {z:+.2f} s.e.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--D", type=int, default=100)
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--cpu-large", action="store_true")
    ap.add_argument("--skip-langevin", action="store_true")
    a = ap.parse_args()
    import torch

    if a.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("bench_gpu: no CUDA device here (use --device cpu to run the script on torch's CPU backend)")
    print(f"torch {torch.__version__}, device {a.device}"
          + (f" ({torch.cuda.get_device_name(a.device)})" if a.device.startswith("cuda") else ""))
    spectrum(a.D, a.device)
    if a.large:
        spectrum(200, a.device, cpu=a.cpu_large)
    if not a.skip_langevin:
        langevin(a.device)


if __name__ == "__main__":
    main()
