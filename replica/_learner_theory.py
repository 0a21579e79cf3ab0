r"""The one entry point of the learners' theories: :func:`learner_theory` dispatches to the kernel learner's
(``replica/_kernel_theory.py``) or the feature learner's (``replica/_feature_theory.py``) theory and returns one result
type, :class:`replica.LearnerTheory` (Gu, Xu & Zdeborová; ``docs/learners.md``). The result type and the argument
checks the two theories share live in ``replica/_learner_common.py``.
"""
from __future__ import annotations

from linattn import _check as check
from linattn._arguments import choice, integer, optional, public, seed
from linattn._threads import whole_call

from ._feature_theory import LAWS as FEATURE_LAWS
from ._feature_theory import _feature_learner_theory
from ._kernel_theory import kernel_learner_theory
from ._learner_common import LEARNER, LEARNERS, LearnerTheory


def _feature(pb, P, lam, N_test, law, pool, n_pools, n_contexts, rng, progress):
    """``learner="feature"``: :func:`replica.feature_learner_theory` (the readout as trained, balanced
    decay, its default solver settings) as a :class:`LearnerTheory`."""
    check.choice("law", law, FEATURE_LAWS)
    th = _feature_learner_theory(pb, P, lam, N_test, "trained", law, "balanced", pool, n_pools, n_contexts, rng, 50,
                                 1e-8, 5, progress)
    return LearnerTheory(problem=pb, P=P, lam=lam, learner="feature", law=law, train=th.train, test=th.test,
                         test_idg=th.test_idg, train_se=th.train_se, test_se=th.test_se, test_idg_se=th.test_idg_se,
                         kappa_eff=None, iterations=0, residual=0.0, N_test=N_test, train_linear=th.train_linear,
                         readout=th.readout)


@public(learner=choice(LEARNERS), n_pools=optional(integer(maximum=10_000)), rng=seed(), **LEARNER)
def learner_theory(pb, P, lam, learner="kernel", N_test=None, law="finite", pool=None, n_pools=None,
                   n_contexts=None, rng=0, progress=True) -> LearnerTheory:
    r"""Dataset-averaged train and test errors of the trained kernel or feature learner (``replica/_kernel_theory.py``,
    ``replica/_feature_theory.py``).

    ``learner="feature"`` dispatches to :func:`replica.feature_learner_theory` (the learner as
    trained: the ridge ``Γ̂`` at the balanced weight decay, then its 5-hinge readout fitted on ``P`` in-sample values of
    ``t``, ``docs/feature_learner.md``): ``test`` and ``test_idg`` are its ICL and IDG errors at ``N_test``,
    ``train`` its training loss (weight decay included), ``train_linear`` the training loss of the linear-readout
    learner; ``law`` (``"finite"`` or ``"gaussian"``) only matters for the optimal readout of
    :func:`replica.feature_learner_theory`.

    Cost: with a task pool, linear in the pools: one sampled theory of ``n_contexts`` contexts per pool (the kernel
    learner adds its Gaussian theory on :data:`replica._pool_theory.GAUSS_POOLS` times as many pools). Measured at
    ``D = 10``, ``N = 20``, ``K = 10``, ``P = 2500`` (relu, ``N_test = 40``), default settings, on a shared 2-core
    machine under a load average of about 9: the kernel learner's 8 pools 136 s (about 17 s a pool), the feature
    learner's 4 pools 64 s (about 16 s a pool, caches cold). Fresh tasks: one theory (kernel learner at ``D = 20``,
    ``N = 40``, ``P = 10⁴``, tanh: 3.1 s on a quiet 2-core machine, 2026-12-07).

    Parameters
    ----------
    pb : linattn.Problem
        Isotropic inputs (``covariance=None``), ``D >= 2``, any link and noise; a task pool ``tasks=K`` adds the
        in-distribution error.
    P : float
        Prompts (``P >= 1``).
    lam : float
        Weight decay ``λ >= 1e-20`` (:data:`replica._learner_common.LAM_MIN`, the ridgeless limit of the test errors).
    learner : {"kernel", "feature"}
        The kernel learner (``replica/_kernel_theory.py``) or the feature learner (``replica/_feature_theory.py``).
    N_test : None or int
        Context length of the test prompts (default ``pb.N``); the trained ``Γ̂`` is that of context length ``pb.N``.
    law : {"finite", "gaussian", "mp"}
        ``"finite"``: random scales (default); ``"gaussian"``: Gaussian features with the exact moments; ``"mp"``:
        the baseline (linear-attention equivalence with isotropic features; :func:`replica.stationary` with
        ``law="mp"`` on the equivalent linear problem of dimension ``F``). The feature learner takes ``"finite"``
        (its readout's scale mixture) and ``"gaussian"``.
    pool : None or array_like (K, D)
        With ``pb.tasks = K``: average over ``n_pools`` random pools (``None``; pool ``j`` is
        :func:`replica._pool_theory.draw_theory_pool`) or condition on the given pool.
    n_pools : None or int
        Random pools averaged (``pool=None``; default 8 for the kernel learner, 4 for the feature learner).
    n_contexts : None or int
        Sampled contexts of ``law="finite"`` (kernel learner: default ``2**16`` for fresh tasks, ``2**13`` per pool;
        feature learner: the components of each readout mixture, default 2048 fresh, 1024 per pool); the standard
        errors ``*_se``
        include their sampling error. Refused (naming ``n_contexts``) where the theory's arrays would exceed the
        memory limit (:func:`linattn._check.memory`; ~6 kB per context for the kernel learner at ``D = 4``, ~2.5 MB
        per component for the feature learner with a smooth link).
    rng : int or numpy.random.Generator
        Seed of the sampled contexts and of the pools (an int seed; a Generator is reduced to one draw of it,
        :func:`linattn._check.seed_int`).
    progress : bool
        Show a progress bar (over the pools of a task-pool problem) when the call lasts more than two seconds.

    Returns
    -------
    LearnerTheory

    Raises
    ------
    ValueError
        Bad input.
    linattn.ConvergenceError
        A fixed point or the covariance equation was not solved.

    Examples
    --------
    >>> import linattn, replica
    >>> th = replica.learner_theory(linattn.Problem(4, 8, 0.01, link="relu"), 100, 0.01)   # the kernel learner
    >>> bool(th.train < th.test), th.learner
    (True, 'kernel')
    """
    if n_pools is None:
        n_pools = 8 if learner == "kernel" else 4
    with whole_call():                      # many mid-sized products over contexts and pools (linattn.threads)
        if learner == "feature":
            return _feature(pb, P, lam, N_test, law, pool, n_pools, n_contexts, rng, progress)
        return kernel_learner_theory(pb, P, lam, N_test=N_test, law=law, pool=pool, n_pools=n_pools,
                                     n_contexts=n_contexts, rng=rng, progress=progress)
