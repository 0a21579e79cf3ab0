"""linattn.kernel_learner — exact test errors of the kernel learner (a fixed Hermite feature map, then linear
attention; Gu, Xu & Zdeborová).

:func:`hermite_features` is the feature map (``"hermite2"`` or ``"linear"``, :data:`FEATURES`; ``F`` features,
:func:`n_features`), :func:`kernel_test_error` the exact ``E_g`` of any ``Γ`` on fresh prompts and
:func:`kernel_moments` (:class:`KernelMoments`) the exact second moments it is made of. Derivations on the
kernel-learner page (``docs/kernel_learner.md``); the trained learner's theory is :func:`replica.learner_theory`.
"""
from ._kernel_errors import FEATURES, KernelMoments, hermite_features, kernel_moments, kernel_test_error, n_features

__all__ = ["hermite_features", "n_features", "kernel_test_error", "kernel_moments", "KernelMoments", "FEATURES"]
