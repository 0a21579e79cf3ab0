"""The numerics room: the solvers the theory floors share, each written once and tested on its own.

* ``linattn/_numerics/cg.py`` — certified conjugate gradients (pluggable operator, preconditioner, precision);
  ``replica.ridge`` and ``replica.kernel_ridge`` solve on it.
* ``linattn/_numerics/fixed_point.py`` — Anderson mixing; the finite-D pool theory and the learners' theories.
* ``linattn/_numerics/stats.py`` — mean ± standard error.
* ``linattn/_numerics/quadrature.py`` — the quadrature rules of the standard normal law (composite Gauss–Legendre and
  Gauss–Hermite), of the task norm ``χ²_D/D``, and the normalised Hermite polynomials; :mod:`linattn.links`, the
  learners' theories, the pool theory and the bottleneck theory integrate with them.

It imports nothing of the library above ``linattn/_check.py``, ``linattn/_errors.py`` and ``linattn/_results.py``. Its
callers are the library's own routines, which check what their users give (tolerances, iteration budgets) where
the users call in: the room trusts its arguments.
"""
