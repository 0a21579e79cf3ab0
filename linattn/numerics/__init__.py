"""The numerics room: the solvers the theory floors share, each written once and tested on its own.

* :mod:`linattn.numerics.cg` — certified conjugate gradients (pluggable operator, preconditioner, precision);
  ``replica.ridge`` and ``replica.kernel_ridge`` solve on it.
* :mod:`linattn.numerics.fixed_point` — Anderson mixing; the finite-D pool theory and the learners' theories.
* :mod:`linattn.numerics.stats` — mean ± standard error.

It imports nothing of the library above :mod:`linattn.errors` and :mod:`linattn.results`.
"""
