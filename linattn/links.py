"""linattn.links — link functions of single-index tasks ``y = f(u) + σ ε``, ``u = w·x/√D``, and their moments.

A problem takes its link by name or as a callable (``Problem(..., link="tanh")``); :func:`as_link` turns either
into a :class:`Link`, whose Hermite coefficients ``(μ₀, μ₁, μ_*²)`` (:class:`Hermite`, ``pb.hermite``) and exact
finite-``D`` radial moments (:func:`radial_moments`, :class:`RadialMoments`) the exact errors and the theories use.
The named links are :data:`NAMES`. See the nonlinear-links page (``docs/nonlinear.md``).
"""
from ._links import NAMES, Hermite, Link, RadialMoments, as_link, radial_moments

__all__ = ["Link", "as_link", "Hermite", "RadialMoments", "radial_moments", "NAMES"]
