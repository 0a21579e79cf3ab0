"""Round 3 of "no silent wrong answer" (spectra): the memory guard of the dense eigensolver."""
import numpy as np
import pytest

from spectra.symmetric import symmetric_eigenvalues


@pytest.mark.parametrize("method", ["auto", "eigvalsh"])
def test_symmetric_eigenvalues_memory_guard(method):
    """A 10⁵ × 10⁵ input (a zero-stride view: no memory of its own) is refused before any copy, finiteness mask or
    workspace is allocated (the finiteness check alone took 10 GB)."""
    A = np.broadcast_to(np.zeros(1), (10**5, 10**5))
    with pytest.raises(ValueError, match=r"^A too large.*GiB"):
        symmetric_eigenvalues(A, method=method)


def test_symmetric_eigenvalues_small_still_exact():
    A = np.diag([3.0, 1.0, 2.0])
    np.testing.assert_array_equal(symmetric_eigenvalues(A), [1.0, 2.0, 3.0])
