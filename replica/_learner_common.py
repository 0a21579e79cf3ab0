r"""The learners' room: what the theories of the kernel learner (``replica/_kernel_theory.py``) and of the feature
learner (``replica/_feature_theory.py``) share — their one result type :class:`LearnerTheory` and the checks of their
common arguments (:func:`learner_arguments`). The entry point that dispatches to either is
:func:`replica.learner_theory.learner_theory` (exported as ``replica.learner_theory``).

Both learners are those of H. Gu, Y. Xu and L. Zdeborová, kernel vs feature learners of nonlinear in-context learning
(2026); ``docs/learners.md``, ``docs/kernel_learner.md``, ``docs/feature_learner.md``.
"""
from __future__ import annotations

from dataclasses import dataclass

import linattn
from linattn import _check as check
from linattn import _validate as validate
from linattn._arguments import Rule, real
from linattn._results import short_repr

#: the learners with a theory
LEARNERS = ("kernel", "feature")

#: smallest weight decay the learner theories accept. Their resolvent equations are solved for ``log a`` with
#: ``a ~ 1/λ`` in the blocks that interpolate (``P`` below the block's dimension), so a smaller ``λ`` only moves the
#: fixed point further out: below ``1e-20`` the iteration ran out of steps or overflowed (ConvergenceError, or a
#: feature-learner solve over a minute, at ``λ = 1e-300``) and the pool theory returned a different, wrong test error,
#: while the test errors at ``1e-50 <= λ <= 1e-20`` agree to 1e-12 relative: ``λ = 1e-20`` is already the ridgeless
#: limit of the test errors, and the training loss is ``O(λ)`` there.
LAM_MIN = 1e-20


@dataclass(frozen=True, eq=False)
class LearnerTheory:
    """Dataset-averaged errors of the trained kernel learner (:func:`replica._kernel_theory.kernel_learner_theory`) or
    feature learner (:func:`replica.feature_learner_theory`), as :func:`replica.learner_theory` returns
    them.

    Attributes
    ----------
    problem : linattn.Problem
    P : float
    lam : float
    learner : str
    law : str
    train : float or None
        The training loss with the weight decay: ``E_t(Γ̂)`` (kernel learner), or the feature learner's as trained
        (its readout fitted on ``P`` in-sample values of ``t``, :class:`replica.FeatureTheory`).
    test : float
        Fresh-task (ICL) error at ``N_test`` (the feature learner: of its readout as trained at the training length).
    test_idg : float or None
        In-distribution error (``pb.tasks = K``), else ``None``.
    train_se, test_se, test_idg_se : float or None
        Standard errors of the theory's own averages (sampled contexts, random pools); 0 where nothing is sampled
        (``law="gaussian"`` and ``"mp"`` with fresh tasks or a given pool); ``nan`` where the spread over random
        pools is not computable: one random pool (``n_pools=1``) without a control variate (the kernel learner's
        ``law="gaussian"``, the feature learner's every law); ``train_se`` is ``None`` when ``train`` is.
    kappa_eff : float or None
        Effective ridge ``κ`` of the Gaussian theory (mean over pools); ``None`` for ``law="mp"``.
    iterations : int
        Largest fixed-point iteration count.
    residual : float
        Largest relative residual of the equations solved (0 for the feature learner, whose solvers raise
        :class:`linattn.ConvergenceError` instead).
    N_test : int or None
    train_linear : float or None
        Feature learner: the training loss of the linear-readout learner; ``None`` for the kernel learner.
    readout : str or None
        Feature learner: ``"trained"``; ``None`` for the kernel learner.
    """

    __repr__ = short_repr

    problem: linattn.Problem
    P: float
    lam: float
    learner: str
    law: str
    train: float | None
    test: float
    test_idg: float | None
    train_se: float | None
    test_se: float
    test_idg_se: float | None
    kappa_eff: float | None
    iterations: int
    residual: float
    N_test: int | None
    train_linear: float | None = None
    readout: str | None = None


def _learner_problem(name, pb):
    """``pb`` if it is a :class:`linattn.Problem` with isotropic inputs and ``D >= 2``."""
    validate.problem(pb, name)
    if pb.covariance is not None:
        check.fail(name, pb, "a Problem with isotropic inputs (covariance=None) for the learners' theory")
    if pb.D < 2:
        check.fail(name, pb, "a Problem with D >= 2 for the learners' theory")
    return pb


#: the rules of the arguments every learner theory takes: the problem, ``P >= 1`` prompts and a weight decay
#: ``λ >= LAM_MIN``
LEARNER = dict(pb=Rule("a linattn.Problem with isotropic inputs (covariance=None) and D >= 2", _learner_problem),
               P=real(low=1.0), lam=real(low=LAM_MIN))


def learner_arguments(pb, P, lam):
    """The checks of every learner theory: a :class:`linattn.Problem` with isotropic inputs and ``D >= 2``,
    ``P >= 1`` prompts and a weight decay ``λ >= LAM_MIN`` (:data:`LAM_MIN`, ``1e-20``: the ridgeless limit of the
    test errors).

    Parameters
    ----------
    pb : linattn.Problem
    P : float
    lam : float

    Returns
    -------
    (linattn.Problem, float, float)

    Raises
    ------
    ValueError
        Naming the argument.
    """
    return tuple(LEARNER[name](name, value) for name, value in (("pb", pb), ("P", P), ("lam", lam)))
