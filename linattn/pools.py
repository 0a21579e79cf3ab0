"""linattn.pools — task pools: draw a pool, and the exact in-distribution error of a set of tasks.

With a finite pool ``w_1 … w_K`` (``Problem(tasks=K)``; Lu, Letey, Zavatone-Veth, Maiti & Pehlevan, PNAS 2025) a
trained model is scored on fresh tasks (the ICL error, :meth:`linattn.Problem.test_error`) and on the pool's own
tasks with fresh tokens and noise (the in-distribution error, :func:`idg_error`); both are exact. The derivation is
on the task-pools page (``docs/pools.md``).

Structured tasks (``Problem(task_covariance=S)``, ``w ~ N(0, S)``): :func:`task_error` is the exact error on fresh
tasks from any Gaussian task law (the problem's own, the isotropic law of the same power, or a given covariance),
:class:`TaskCovariance` the checked covariance, :func:`low_rank_covariance` the low-rank law of Takanami, Takahashi &
Kabashima (``S = (D/r) A Aᵀ``).

Public names: :func:`draw_pool`, :func:`idg_error`, :func:`idg_metric` (:class:`IDGMetric`), :func:`task_moments`
(:class:`TaskMoments`), :func:`context_statistics`, :func:`task_error`, :class:`TaskCovariance`,
:func:`low_rank_covariance`.
"""
from ._idg import IDGMetric, TaskMoments, context_statistics, idg_error, idg_metric, task_error, task_moments
from ._sampling import draw_pool
from ._task_covariance import TaskCovariance, low_rank_covariance

__all__ = ["draw_pool", "idg_error", "idg_metric", "IDGMetric", "task_moments", "TaskMoments", "context_statistics",
           "task_error", "TaskCovariance", "low_rank_covariance"]
