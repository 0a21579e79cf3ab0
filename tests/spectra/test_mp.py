"""The Marchenko–Pastur law (:mod:`spectra.mp`): its Stieltjes transform near zero."""
import pytest


def test_marchenko_pastur_transform_near_zero():
    """m(z) from the root without cancellation: at q = 1/2 (no atom) m(z) = 1/(1 − q) + z/(1 − q)³ + O(z²) (the
    earlier form gave 2.0000007 at z = 1e-10 and −4 − 1e300 i at z = 1e-300 i); z = 0 is refused where it is the
    atom's pole (q > 1) or the divergent edge (q = 1)."""
    from spectra import mp

    for z in (0.0, 1e-300j, 1e-10, -1e-10):
        assert abs(mp.stieltjes(z, 0.5) - (2.0 + 8.0 * z)) < 1e-15, z
    assert mp.stieltjes(1e-300j, 0.5).imag >= 0.0
    for q in (1.0, 2.0):
        with pytest.raises(ValueError, match=r"^spectra\.mp\.stieltjes: z must be"):
            mp.stieltjes(0.0, q)
