"""Numba kernels of the simulators (private; the validated wrappers are in validation.simulators.langevin).

Random numbers: the explicit-state xoshiro256+ streams of ``linattn/_random_kernels.py`` (one state per chain,
seeded by ``(seed, chain)``), Gaussians by its ziggurat.
"""
import numpy as np
from numba import njit, prange

from linattn._random_kernels import (  # noqa: F401  (the generator's tables and draws, re-exported for the simulators)
    ZIG_F,
    ZIG_X,
    fill_normal,
    fill_normal_polar,
    next_normal,
    next_u64,
    next_uniform,
    seed_state,
    ziggurat_tables,
)


@njit(cache=True, inline="always")
def _record(step, n_equilibrate, stride, x, out, j):
    """Store ``x`` as sample ``j`` if ``step`` is a sampling step (``n_equilibrate + j·stride``);
    return the index of the next sample."""
    if step >= n_equilibrate and (step - n_equilibrate) % stride == 0:
        out[j, :] = x
        return j + 1
    return j


@njit(cache=True, parallel=True)
def langevin_eigen(decay, drift, noise, eta0, n_equilibrate, n_samples, stride, seed, chain_ids, samples, xs, fs):
    """Euler–Maruyama Langevin in the eigenbasis of ``A``: per mode ``k``

        η_k ← decay_k η_k + drift_k + noise · ξ_k,   decay_k = 1 − γ dt a_k,  drift_k = γ dt b_k,

    for every chain ``c`` (parallel; its random state is seeded by ``(seed, chain_ids[c])``).
    Sample ``j`` is taken after ``n_equilibrate + j·stride`` steps (j = 0..n_samples−1) into
    ``samples[c, j, :]``.
    """
    n_chains = samples.shape[0]
    M = decay.shape[0]
    for c in prange(n_chains):
        state = np.empty(4, np.uint64)
        seed_state(seed, chain_ids[c], state)
        eta = eta0[c].copy()
        total = n_equilibrate + (n_samples - 1) * stride
        j = 0
        for stp in range(total + 1):
            j = _record(stp, n_equilibrate, stride, eta, samples[c], j)
            if j == n_samples:
                break
            for k in range(M):
                eta[k] = decay[k] * eta[k] + drift[k] + noise * next_normal(state, xs, fs)


@njit(cache=True, parallel=True)
def langevin_dense(A, b, step, noise, theta0, n_equilibrate, n_samples, stride, seed, chain_ids, samples, xs, fs):
    """The same chain in the parameter basis: ``θ ← θ − step (A θ − b) + noise ξ`` (O(M²) per step)."""
    n_chains = samples.shape[0]
    M = b.shape[0]
    for c in prange(n_chains):
        state = np.empty(4, np.uint64)
        seed_state(seed, chain_ids[c], state)
        th = theta0[c].copy()
        total = n_equilibrate + (n_samples - 1) * stride
        j = 0
        for stp in range(total + 1):
            j = _record(stp, n_equilibrate, stride, th, samples[c], j)
            if j == n_samples:
                break
            grad = A @ th - b   # BLAS dgemv
            for k in range(M):
                th[k] += -step * grad[k] + noise * next_normal(state, xs, fs)
