"""Exceptions raised by linattn."""


class ConvergenceError(RuntimeError):
    """An iterative solver (fixed point, root finding) did not reach its tolerance.

    The message states the solver, the number of iterations, the final residual and the
    tolerance, so that a user can decide whether to change the inputs or the solver options.
    """
