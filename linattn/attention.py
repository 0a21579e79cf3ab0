"""linattn.attention — the single-layer linear-attention network itself, on embedded prompts.

:func:`embed` builds ``Z ∈ R^{(D+1)×(N+1)}`` (columns ``[x_i; y_i]``, last column ``[x_q; 0]``), :func:`forward`
computes ``f(Z) = Z Zᵀ W Z / N``, :func:`predict` its last entry ``ŷ`` and :func:`prediction_gradient` the gradient
of ``ŷ`` in ``W`` (conventions §1). These are the ground truth the reduced features ``(s, x_q, y2)`` are checked
against, and they drive the gradient-descent simulation of the whole matrix ``W``
(:func:`validation.simulators.attention_gradient_descent`).
"""
from ._attention import embed, forward, predict, prediction_gradient

__all__ = ["embed", "forward", "predict", "prediction_gradient"]
