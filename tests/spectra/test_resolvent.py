"""The resolvents of the rescaled Hessian (:func:`spectra.block_resolvent`, :func:`spectra.ridge_resolvent`,
:func:`spectra.data_transforms`, :func:`spectra.teacher_overlap`, :func:`spectra.block_overlaps`,
:func:`spectra.cmatmul`): extreme arguments, the zero atom, non-convergence reported as such."""
import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import linattn
import spectra

LAW = spectra.prompt_law(linattn.Problem(4, 8, 0.1), n_nodes=64, log2_points=10)
K, B = LAW.weights.size, LAW.n_blocks
RAGGED = [[1.0], [1.0, 2.0]]


def _law():
    return spectra.prompt_law(linattn.Problem(4, 8, 0.1), model="full")


REFUSED = refusals(name_as_word, [
    ("cmatmul", lambda: spectra.cmatmul(np.ones((1, 3)) * 1e308, np.ones(3) * 10), "a", None),
]) + refusals(name_not_within_letters, [
    # silent NaN: 0/0 where the overlap's denominator L + E[f² ω] vanishes
    ("teacher-overlap-zero", lambda: spectra.teacher_overlap(0.0, np.zeros(K), LAW), "omega"),
    # NaN from inputs whose node sums overflow (inf · 0); numpy's LinAlgError for a singular system
    ("block-overlaps-huge", lambda: spectra.block_overlaps(np.full(B, 1e300), np.full(B, 1e300), np.full(K, 1e300),
                                                           np.full(K, 1e300), 1e300, 1e300, LAW, 30.0), "om1"),
    ("block-overlaps-singular", lambda: spectra.block_overlaps(np.zeros(B), np.zeros(B), np.zeros(K), np.zeros(K),
                                                               0.0, 0.0, LAW, 30.0), "nu1"),
    # ConvergenceError out of the meaningful range: M/P beyond float64 (brentq's absolute xtol = 1e-300 stopped at
    # a = 0 for M/P > 1e300)
    ("ridge-resolvent-tiny-P", lambda: spectra.ridge_resolvent(1e-300, 0.1, LAW), "P"),
    # raw scipy ValueError ("The function value at x=inf is NaN") / NaN residual: a ≈ λ' P/M beyond float64
    ("ridge-resolvent-huge-lam-P", lambda: spectra.ridge_resolvent(1e300, 1e300, LAW), "lam"),
    ("block-overlaps-nu1", lambda: spectra.block_overlaps(RAGGED, [[1.0, 1.0]], np.ones((1, 4)), np.ones((1, 4)),
                                                           [1.0], [1.0], _law(), 10.0), "nu1"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_ridge_resolvent_down_to_the_smallest_P():
    """One block, ``P → 0``: ``a → P/M``; at ``M/P = 1e300`` it returned a = 0 (ConvergenceError, residual inf)."""
    for P in (LAW.M * 1e-300, 1e-250, 1e-20):
        r = spectra.ridge_resolvent(P, 0.1, LAW)
        assert np.allclose(r.a, P / LAW.M, rtol=1e-12) and np.all(np.isfinite(r.omega_t))


def test_the_ridge_resolvent_reports_non_convergence_as_such():
    import spectra

    law = spectra.prompt_law(linattn.Problem(3, 4, 0.1))
    with pytest.raises(linattn.ConvergenceError, match="maxit = 1"):
        spectra.ridge_resolvent(6.0, 0.1, law, maxit=1)


def test_block_resolvent_near_the_zero_atom():
    """P < M: m(z) ≈ −(1 − P/M)/z near the atom's pole, resolved down to |z| = Z_MIN = 1e-20; closer (it returned
    m(i·1e-15) for z = 0 and z = 1e-300) is refused naming z. Real z on the support is the limit z + i0 in
    data_transforms too (it was refused naming its internal L)."""
    import spectra
    from spectra._resolvent import Z_MIN

    law = spectra.prompt_law(linattn.Problem(3, 4, 0.1), law="mp")
    for z in (0.0, 1e-300):
        with pytest.raises(ValueError, match=r"^spectra\.block_resolvent: z must be complex numbers with "
                                             r"\|z\| >= 1e-20"):
            spectra.block_resolvent([z], 6.0, law)
    m = spectra.block_resolvent([Z_MIN, -Z_MIN, 1j * Z_MIN], 6.0, law).m
    assert np.allclose(m * np.array([Z_MIN, -Z_MIN, 1j * Z_MIN]), -1.0 / 3.0, rtol=1e-12, atol=0)
    x = np.array([0.5, 2.0])
    on, above = spectra.data_transforms(x, 6.0, law), spectra.data_transforms(x + 1e-9j, 6.0, law)
    assert np.allclose(on.T, above.T, rtol=1e-7) and np.all(on.T.imag > 0)       # O(η) = 1e-9 apart
