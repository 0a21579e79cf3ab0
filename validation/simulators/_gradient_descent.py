r"""Explicit gradient descent on the training energy from sampled initialisations.

.. math:: θ_{n+1} = θ_n − η (A θ_n − b),\qquad θ_0 \sim N(0, σ_0² I),

run for ``n_init`` sampled initialisations at once, with ``E_t`` and ``E_g`` recorded at chosen
steps (the markers of the seed's Fig. 4, which check the closed-form mean ± s.d. of
:func:`dynamics.gradient_flow` with ``init=σ_0``). The errors are evaluated from the prompts and
the exact test-error formula, independently of the eigensystem that the closed form uses. With a task pool the
in-distribution error (:func:`linattn.pools.idg_error`) and with structured tasks (``Problem(task_covariance=S)``:
``test`` is then on fresh tasks from ``N(0, S)``) the out-of-distribution error on fresh tasks from the isotropic law of
the same power (:func:`linattn.pools.task_error`) are recorded too.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

import linattn
from linattn import _check as check
from linattn import _validate as validate
from linattn import pools
from linattn._check import PROGRESS_DELAY
from linattn._results import short_repr


@dataclass(frozen=True, eq=False)
class DescentRun:
    """``steps`` recorded; ``train``, ``test``: arrays (len(steps), n_init) over the initialisations;
    ``train_mean``, ``train_sd``, ``test_mean``, ``test_sd``: their statistics per step.

    Attributes
    ----------
    steps : ndarray (T,)
        Recorded steps.
    train, test : ndarray (T, n_init)
        Errors over the initialisations (properties ``train_mean``, ``train_sd``, ``test_mean``, ``test_sd``: their
        statistics per step).
    test_idg, test_odg : ndarray (T, n_init) or None
        The in-distribution error (a task pool) and the out-of-distribution error (structured tasks), else ``None``
        (properties ``*_mean``, ``*_sd``).
    """

    __repr__ = short_repr

    steps: np.ndarray
    train: np.ndarray
    test: np.ndarray
    test_idg: np.ndarray | None = None
    test_odg: np.ndarray | None = None

    @property
    def test_idg_mean(self):
        return None if self.test_idg is None else self.test_idg.mean(axis=1)

    @property
    def test_odg_mean(self):
        return None if self.test_odg is None else self.test_odg.mean(axis=1)

    @property
    def test_idg_sd(self):
        return None if self.test_idg is None else self.test_idg.std(axis=1, ddof=1)

    @property
    def test_odg_sd(self):
        return None if self.test_odg is None else self.test_odg.std(axis=1, ddof=1)

    @property
    def train_mean(self):
        return self.train.mean(axis=1)

    @property
    def test_mean(self):
        return self.test.mean(axis=1)

    @property
    def train_sd(self):
        return self.train.std(axis=1, ddof=1)

    @property
    def test_sd(self):
        return self.test.std(axis=1, ddof=1)


def descent_from_random_inits(data, pb, lam, steps, lr, init_sd, n_init, rng=None, model="reduced",
                              progress=True) -> DescentRun:
    """Gradient descent from ``n_init`` Gaussian initialisations (module docstring).

    Cost: one ``M × M`` by ``M × n_init`` product per step (``M`` parameters), up to the last recorded step, and the
    errors of each initialisation at the recorded steps; measured at ``D = 10``, ``N = 100``, ``model="full"``
    (``M = 110``), 40 initialisations, 14 recorded steps up to about 10⁴ (the ``full`` settings of the learning-curve
    experiment): 3.3–4.8 s on a shared 2-core machine under a load average of about 9.

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    lam : float
        Weight decay ``λ >= 0``.
    steps : array_like of int
        Steps ``n >= 0`` at which the errors are recorded (at least one).
    lr : float
        Step ``η`` with ``0 < η < 2/λ_max(A)``.
    init_sd : float
        ``σ_0 >= 0``.
    n_init : int
        Initialisations (``>= 2``, for a standard deviation).
    rng : None, int or numpy.random.Generator
    model : {"reduced", "full"}
    progress : bool
        Show a progress bar (over the steps) when the call lasts more than two seconds.

    Returns
    -------
    DescentRun
    """
    validate.problem_data(data, pb, model)
    lam = check.nonnegative("lam", lam)
    lr = check.positive("lr", lr)
    record = np.unique(check.counts("steps", steps))
    if record.size == 0:
        check.fail("steps", steps, "a non-empty list of integer steps >= 0 at which the errors are recorded")
    init_sd = check.nonnegative("init_sd", init_sd)
    n_init = check.positive_int("n_init", n_init, minimum=2)
    gen = check.rng(rng)
    progress = check.boolean("progress", progress)
    M = pb.n_params(model)
    check.memory(8.0 * (data.P * M + M * M + 2 * M * n_init), f"gradient descent with {n_init} initialisations",
                 "n_init")
    check.work(float(record.max()) * (n_init * M * M + check.PYTHON_TRIP),
               f"{int(record.max())} steps of {n_init} descents in {M} parameters", "steps")
    F = data.features(model)
    A = F.T @ F / data.P + lam * np.eye(M)
    b = F.T @ data.yq / data.P
    lmax = float(np.linalg.eigvalsh(A)[-1])
    if lr >= 2.0 / lmax:
        check.fail("lr", lr, f"< 2/lambda_max(A) = {2.0 / lmax:.6g} for stability")
    theta = init_sd * gen.standard_normal((M, n_init))
    train = np.empty((record.size, n_init))
    test = np.empty((record.size, n_init))
    idg = np.empty((record.size, n_init)) if data.pool is not None else None
    odg = np.empty((record.size, n_init)) if pb.task_covariance is not None else None
    j = 0
    bar = tqdm(total=int(record[-1]) + 1, desc=f"gradient descent, {n_init} initialisations", disable=not progress,
               leave=False, delay=PROGRESS_DELAY)
    try:
        for step in range(int(record[-1]) + 1):
            if step == record[j]:
                for i, th in enumerate(theta.T):
                    G, v = linattn.unpack(th, pb.D, model)
                    try:
                        train[j, i] = linattn.train_energy(data, G, lam, v)
                        test[j, i] = pb.test_error(G, v)
                        if idg is not None:
                            idg[j, i] = pools.idg_error(pb, data.pool, G, v)
                        if odg is not None:
                            odg[j, i] = pools.task_error(pb, G, v, task_covariance="isotropic")
                    except ValueError:      # an error beyond float64: the descent is stable, so only the start can be
                        check.fail("init_sd", init_sd, "small enough that the errors along the descent are finite in "
                                   f"float64 (they overflow at step {step})")
                j += 1
                if j == record.size:
                    break
            theta -= lr * (A @ theta - b[:, None])
            bar.update()
    finally:
        bar.close()
    return DescentRun(steps=record, train=train, test=test, test_idg=idg, test_odg=odg)
