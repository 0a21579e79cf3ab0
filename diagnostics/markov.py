"""diagnostics.markov — the read-outs of a model trained on pools of random Markov chains, against the ideal
estimators (numpy; Gibson, Cui & Reddy, arXiv:2604.12151).

:func:`kl_per_position` (``KL_t(e ‖ model)`` per estimator and position), :func:`phase` (the estimator of
:data:`PHASES` closest to the model) and :func:`attention_order_parameters` (previous-token and induction-head
attention). They need no torch; the transformer that produces the inputs is trained by
:func:`validation.simulators.train_markov_transformer` (optional extra ``[torch]``). See ``docs/markov_transformer.md``.
"""
from ._markov_readouts import ESTIMATORS, PHASES, attention_order_parameters, kl_per_position, phase

__all__ = ["kl_per_position", "phase", "attention_order_parameters", "PHASES", "ESTIMATORS"]
