"""linattn.markov — in-context learning of random Markov chains (Gibson, Cui & Reddy, arXiv:2604.12151).

Public names: :class:`Chains` (the task law: ``C`` states, Dirichlet(α) rows, pool size ``K`` or fresh chains,
first-state law), :class:`Sample` (sequences with their chains), :func:`stationary`, :func:`first_law`,
:func:`expected_row_entropy`, and the ideal estimators (1-mem, 2-mem, 1-gen, 2-gen, bayes):
:func:`losses` (:class:`LossCurves`), :func:`log_losses` (and :func:`log_losses_naive`), :func:`predict`,
:func:`matched_pseudocount`; and the module :mod:`linattn.markov.bottleneck` (the information a pooled bigram
embedding carries about the task, measured, and the pool size ``K₂*`` it sets; its theory, the Gaussian channel, is
``replica/_bottleneck_theory.py``).
See docs/markov.md.
"""
from . import bottleneck
from ._chains import FIRST_STATES, Chains, Sample, expected_row_entropy, first_law, stationary
from ._estimators import NAMES, log_losses, log_losses_naive, matched_pseudocount, predict
from ._loss_curves import LossCurves, losses

__all__ = ["Chains", "Sample", "stationary", "first_law", "expected_row_entropy", "FIRST_STATES",
           "NAMES", "LossCurves", "losses", "log_losses", "log_losses_naive", "predict", "matched_pseudocount",
           "bottleneck"]

from linattn import _deprecated

_deprecated.install(__name__)     # the module paths of 0.1.0, for one release
