r"""Simulators of factorized linear attention: gradient descent, online SGD and Langevin (numba).

For every parametrization of :mod:`linattn.factorized` (``θ ↦ Γ(θ)``, reduced model ``ŷ = sᵀΓ(θ)x_q``):

* **gradient descent** on one training set, ``θ ← θ − η(∇_θ E_t + λθ)``;
* **online SGD** on the population: a fresh batch of ``B`` exact prompts every step (the exact ``O(D)``
  sampler of ``linattn/_sampling.py``, anisotropic form, re-implemented in the kernel with χ²_N drawn by
  the Marsaglia–Tsang gamma sampler); its mean flow is :func:`dynamics.mean_flow` with ``data=None``;
* **Langevin** on one training set, ``θ ← θ − η(∇_θ E_t + λθ) + √(2η/β) ξ``, whose stationary law (as
  ``η → 0``) is the Gibbs measure ``∝ exp(−β E_t(θ))`` of the *factorized* parameters — not Gaussian,
  because ``E_t`` is quadratic in ``Γ``, not in ``θ``.

Kernels (:mod:`validation.simulators._factorized_kernels`) take an explicit random state per chain, seeded by
``(seed, chain)``: results are reproducible and do not depend on thread scheduling; chains run in parallel
threads (the kernel releases the GIL), as many as numba's thread count allows (``NUMBA_NUM_THREADS``).
A run whose parameters become non-finite raises :class:`linattn.ConvergenceError` (reduce ``step``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from linattn import _check as check
from linattn import _validate as validate
from linattn._errors import ConvergenceError
from linattn._parametrizations import Parametrization, dataset_objective, population_objective
from linattn._results import short_repr

from . import _factorized_kernels as _fk
from . import _langevin_kernels as _kernels


@dataclass(frozen=True, eq=False)
class FactorizedRun:
    """Recorded trajectory of :func:`factorized_descent`.

    Attributes
    ----------
    steps : ndarray (n_rec,)
        Step numbers of the records.
    theta : ndarray (n_chains, n_rec, n_params)
    loss : ndarray (n_chains, n_rec)
        Data term of the loss at each record: the fresh batch's (online) or the training set's
        (``E_t`` without weight decay).
    test : ndarray (n_chains, n_rec)
        Exact test error ``E_g(Γ(θ))``.
    modes : ndarray (n_chains, n_rec, D)
        ``u_αᵀ Γ u_α`` in the eigenbasis of ``Σ``.
    parametrization : linattn.factorized.Parametrization
    lr, lam, beta : float
    online : bool
    """

    __repr__ = short_repr

    steps: np.ndarray
    theta: np.ndarray
    loss: np.ndarray
    test: np.ndarray
    modes: np.ndarray
    parametrization: Parametrization
    lr: float
    lam: float
    beta: float
    online: bool

    @property
    def Gamma(self) -> np.ndarray:
        """``Γ`` of every chain at the last record (n_chains, D, D)."""
        return self.parametrization.gamma(self.theta[:, -1])


def factorized_descent(pb, parametrization, theta0, n_steps, lr, data=None, batch=256, beta=np.inf,
                       lam=0.0, record=100, n_chains=None, rng=0) -> FactorizedRun:
    """Run gradient descent, online SGD or Langevin dynamics on a factorized model (module docstring).

    Parameters
    ----------
    pb : linattn.Problem
        Linear link, any input covariance.
    parametrization : linattn.factorized.Parametrization
    theta0 : array_like (n_params,) or (n_chains, n_params)
        Start(s); one start is shared by ``n_chains`` chains. A start whose test error overflows float64 is refused
        (``ValueError`` naming ``theta0``).
    n_steps : int
        Steps (``>= 1``).
    lr : float
        ``η = γ dt > 0``.
    data : linattn.Prompts, optional
        Training set (gradient descent / Langevin). ``None``: online SGD with fresh batches.
    batch : int
        Fresh prompts per step (online only).
    beta : float
        Inverse temperature; ``inf`` (default) is noiseless descent. Finite ``β`` needs ``data``.
    lam : float
        Weight decay ``λ >= 0`` on ``θ``.
    record : int
        Record every ``record`` steps (and step 0).
    n_chains : int, optional
        Number of chains (default: the number of starts).
    rng : int
        Seed of the per-chain random states.

    Returns
    -------
    FactorizedRun

    Raises
    ------
    ConvergenceError
        If the parameters become non-finite (the step is too large for this trajectory).
    """
    pb = validate.problem(pb)
    par = Parametrization.checked(parametrization, pb.D)
    if not pb.link.is_linear:
        check.fail("pb.link", pb.link.name, "a linear link (factorized simulators)")
    theta0 = check.finite_array("theta0", theta0)
    if theta0.ndim == 1:
        theta0 = theta0[None]
    if theta0.ndim != 2 or theta0.shape[1] != par.n_params:
        check.fail("theta0", f"<array with shape {theta0.shape}>",
                   f"shape ({par.n_params},) or (n_chains, {par.n_params})")
    n_steps = check.positive_int("n_steps", n_steps)
    lr = check.positive("lr", lr)
    lam = check.nonnegative("lam", lam)
    beta = check.positive("beta", beta, allow_inf=True)
    record = check.positive_int("record", record)
    rng = check.seed_int("rng", rng)
    if n_chains is None:
        n_chains = theta0.shape[0]
    n_chains = check.positive_int("n_chains", n_chains)
    if theta0.shape[0] not in (1, n_chains):
        check.fail("theta0", f"<{theta0.shape[0]} starts>", f"1 or n_chains = {n_chains} starts")
    online = data is None
    batch = check.positive_int("batch", batch)
    n_rec = n_steps // record + 1
    if not online:
        validate.problem_data(data, pb)
    # per step: the batch's prompts drawn (N D normals each, online) and the gradient of each
    work_per_step = (batch * (pb.N * pb.D + pb.D * pb.D + par.n_params) if online
                     else data.P * (pb.D * pb.D + par.n_params)) + par.n_params
    check.work(float(n_chains) * n_steps * work_per_step, f"{n_chains} chains x {n_steps} steps"
               + ("" if not online else f" on batches of {batch} prompts"),
               "n_steps, n_chains or batch" if online else "n_steps or n_chains")
    check.memory(8.0 * n_chains * n_rec * (par.n_params + 1 + 2 * pb.D * pb.D + pb.D),
                 f"{n_chains} x {n_rec} records of {par.n_params} parameters", "n_steps, record or n_chains")
    if online:      # each running chain holds a batch of prompts (s, x_q, y_q); offline chains use no batch
        running = min(n_chains, os.cpu_count() or 1, _numba_threads())
        check.memory(8.0 * running * batch * (2 * pb.D + 1),
                     f"the prompt batches of {running} chain(s) running at once", "batch")
    try:                        # a start beyond float64 is the start's fault, not lr's (ConvergenceError below)
        population_objective(pb).values(par.gamma(theta0))
    except ValueError:          # their overflow refusals name theta and Gamma, which the caller did not pass
        check.fail("theta0", f"<values up to {float(np.max(np.abs(theta0))):.3g}>",
                   "small enough that the test error at the start is finite in float64")
    theta0 = np.array(np.broadcast_to(theta0, (n_chains, par.n_params)), order="C")   # writable: one numba signature
    if online:
        if np.isfinite(beta):
            check.fail("beta", beta, "inf for online SGD (Langevin needs a training set: pass data)")
        S = XQ = np.zeros((1, pb.D))
        YQ = np.zeros(1)
    else:
        S, XQ, YQ = (np.array(a, dtype=float, order="C") for a in (data.s, data.xq, data.yq))   # writable copies:
        # numba compiles a separate (slow, ~30 s cold) specialisation for read-only arrays
    cov = pb.covariance
    root = np.ones(pb.D) if cov is None else np.sqrt(cov.spectrum)
    rotate = cov is not None and cov.basis is not None
    U = np.array(cov.basis, order="C") if rotate else np.eye(pb.D)
    out_theta = np.zeros((n_chains, n_rec, par.n_params))
    out_loss = np.zeros((n_chains, n_rec))
    noise = 0.0 if not np.isfinite(beta) else float(np.sqrt(2.0 * lr / beta))
    args = (par.code, pb.D, par.heads, par.rank, theta0, online, S, XQ, YQ, int(batch) if online else 1, root, U,
            rotate, pb.N, float(pb.link.slope), pb.noise, lam, lr, noise, n_steps, record, rng,
            np.arange(n_chains, dtype=np.int64), out_theta, out_loss, _kernels.ZIG_X, _kernels.ZIG_F)
    _run_chains(n_chains, args)
    if not (np.all(np.isfinite(out_theta)) and np.all(np.isfinite(out_loss))):
        raise ConvergenceError(f"factorized_descent diverged (non-finite parameters) with lr = {lr}; reduce lr")
    G = par.gamma(out_theta)
    test = population_objective(pb).values(G)
    basis = np.eye(pb.D) if not rotate else U
    modes = np.einsum("ia,crij,ja->cra", basis, G, basis)
    return FactorizedRun(steps=np.arange(n_rec) * record, theta=out_theta, loss=out_loss, test=test, modes=modes,
                         parametrization=par, lr=lr, lam=lam, beta=beta, online=online)


def _run_chains(n_chains, args):
    """Run the chains of :func:`validation.simulators._factorized_kernels.run_chain` on a thread pool (the kernel
    releases the GIL; each chain owns its random state and its output rows, so threads never share data)."""
    from concurrent.futures import ThreadPoolExecutor

    workers = min(n_chains, os.cpu_count() or 1, _numba_threads())
    if workers <= 1:
        for c in range(n_chains):
            _fk.run_chain(c, *args)
        return
    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(lambda c: _fk.run_chain(c, *args), range(n_chains)))


def _numba_threads():
    import numba

    return numba.config.NUMBA_NUM_THREADS


def _kernel_prompts(pb, n, seed=0):
    """``n`` prompts from the kernel's exact sampler (for tests against :func:`linattn._sampling.sample`)."""
    pb = validate.problem(pb)
    n = check.positive_int("n", n)
    cov = pb.covariance
    root = np.ones(pb.D) if cov is None else np.sqrt(cov.spectrum)
    rotate = cov is not None and cov.basis is not None
    U = np.array(cov.basis, order="C") if rotate else np.eye(pb.D)
    state = np.empty(4, dtype=np.uint64)
    _kernels.seed_state(check.seed_int("seed", seed), 0, state)
    S, XQ, YQ = np.empty((n, pb.D)), np.empty((n, pb.D)), np.empty(n)
    _fk.sample_prompts(state, _kernels.ZIG_X, _kernels.ZIG_F, root, U, rotate, pb.N, float(pb.link.slope), pb.noise,
                       S, XQ, YQ)
    return S, XQ, YQ


def _descent_reference(pb, parametrization, theta0, n_steps, step, data, lam=0.0):
    """Plain-numpy gradient descent on one training set (the reference the kernel is tested against).

    Returns the parameters after ``n_steps`` steps (``θ ← θ − η(∇_θ E_t + λθ)``).
    """
    obj = dataset_objective(data, pb)
    theta = np.array(theta0, dtype=float)
    for _ in range(check.positive_int("n_steps", n_steps)):
        theta = theta - step * (parametrization.pullback(theta, obj.gradient(parametrization.gamma(theta)))
                                + lam * theta)
    return theta
