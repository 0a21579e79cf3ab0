"""All eigenvalues of a dense symmetric matrix through LAPACK's two-stage reduction (spectra._symmetric)."""
import numpy as np
import pytest

from spectra import symmetric_eigenvalues
from spectra._symmetric import two_stage_routine

needs_two_stage = pytest.mark.skipif(two_stage_routine() is None, reason="numpy's BLAS does not export dsyevd_2stage")


def _wishart(n, m, seed):
    X = np.random.default_rng(seed).standard_normal((m, n))
    return X.T @ X / m


@pytest.mark.parametrize("n, m", [(1, 3), (2, 5), (17, 40), (300, 200), (513, 1200)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_equals_eigvalsh_to_rounding(n, m, order):
    """Same eigenvalues as numpy's dsyevd to a few ulps of the largest (backward-stable methods: |Δλ| ≤ c n ε ‖A‖);
    rank-deficient (m < n) included, so exact zeros come out as O(ε‖A‖)."""
    A = np.asarray(_wishart(n, m, n), order=order)
    ref = np.linalg.eigvalsh(A)
    methods = ("auto", "eigvalsh") + (("two_stage",) if two_stage_routine() is not None else ())
    for method in methods:
        ev = symmetric_eigenvalues(A, method=method)
        assert ev.shape == (n,) and np.all(np.diff(ev) >= 0)
        assert np.max(np.abs(ev - ref)) <= 50 * n * np.finfo(float).eps * ref[-1]
    np.testing.assert_array_equal(A, np.asarray(_wishart(n, m, n), order=order))      # not overwritten by default


@needs_two_stage
def test_two_stage_reads_the_lower_triangle_and_may_overwrite():
    """Only the lower triangle is read (as numpy's eigvalsh does), for both memory orders; overwrite=True destroys
    the input instead of copying it, and gives the same eigenvalues."""
    A = _wishart(50, 80, 1)
    ref = np.linalg.eigvalsh(A)
    for order in ("C", "F"):
        B = np.array(A, order=order)
        B[np.triu_indices(50, 1)] = 1e6                # garbage above the diagonal
        ev = symmetric_eigenvalues(B, method="two_stage")
        assert np.max(np.abs(ev - ref)) < 1e-12 * ref[-1]
        work = np.array(A, order=order)
        ev2 = symmetric_eigenvalues(work, overwrite=True, method="two_stage")
        assert np.max(np.abs(ev2 - ref)) < 1e-12 * ref[-1]
        assert not np.array_equal(work, A)


@pytest.mark.parametrize("A, arg", [(np.zeros((2, 3)), "A"), (np.zeros(3), "A"), (np.zeros((0, 0)), "A"),
                                    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "A"), (np.eye(2) * 1j, "A"),
                                    (np.array([["a"]]), "A")])
def test_bad_input_names_the_argument(A, arg):
    for method in ("auto", "eigvalsh") + (("two_stage",) if two_stage_routine() is not None else ()):
        with pytest.raises(ValueError, match=arg):
            symmetric_eigenvalues(A, method=method)


def test_bad_method_and_overwrite():
    with pytest.raises(ValueError, match="method"):
        symmetric_eigenvalues(np.eye(2), method="qr")
    with pytest.raises(ValueError, match="overwrite"):
        symmetric_eigenvalues(np.eye(2), overwrite="yes")


# ----------------------------------------------------------------------------- refusals and extreme arguments
@pytest.mark.parametrize("method", ["auto", "eigvalsh"])
def test_symmetric_eigenvalues_memory_guard(method):
    """A 10⁵ × 10⁵ input (a zero-stride view: no memory of its own) is refused before any copy, finiteness mask or
    workspace is allocated (the finiteness check alone took 10 GB)."""
    A = np.broadcast_to(np.zeros(1), (10**5, 10**5))
    with pytest.raises(ValueError, match=r"^spectra\.symmetric_eigenvalues: A too large.*GiB"):
        symmetric_eigenvalues(A, method=method)


def test_symmetric_eigenvalues_small_still_exact():
    A = np.diag([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(symmetric_eigenvalues(A), [1.0, 2.0, 3.0])


def test_ragged_matrix_is_named():
    """symmetric_eigenvalues of a ragged nested list raised numpy's 'setting an array element with a sequence'."""
    with pytest.raises(ValueError, match=r"^spectra\.symmetric_eigenvalues: A must be a non-empty square matrix"):
        symmetric_eigenvalues([[1.0], [1.0, 2.0]])
