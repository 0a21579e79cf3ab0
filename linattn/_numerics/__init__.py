"""The numerics room: the solvers the theory floors share, each written once and tested on its own.

* :mod:`linattn.numerics.cg` — certified conjugate gradients (pluggable operator, preconditioner, precision);
  ``replica.ridge`` and ``replica.kernel_ridge`` solve on it.
* :mod:`linattn.numerics.fixed_point` — Anderson mixing; the finite-D pool theory and the learners' theories.
* :mod:`linattn.numerics.stats` — mean ± standard error.
* :mod:`linattn.numerics.quadrature` — the quadrature rules of the standard normal law (composite Gauss–Legendre and
  Gauss–Hermite), of the task norm ``χ²_D/D``, and the normalised Hermite polynomials; :mod:`linattn.links`, the
  learners' theories, the pool theory and the bottleneck theory integrate with them.

It imports nothing of the library above :mod:`linattn.check`, :mod:`linattn.errors` and :mod:`linattn.results`. Its
callers are the library's own routines, which check what their users give (tolerances, iteration budgets) where
the users call in: the room trusts its arguments.
"""
