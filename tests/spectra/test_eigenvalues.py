"""Exact spectra: Gram/Hadamard and dense (syrk) paths against the plain dense reference (rung 2)."""
import numpy as np
import pytest

import linattn
import spectra


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [7, 36, 42, 90])  # below, at and above M = 36 (reduced) / 42 (full)
def test_paths_agree(model, P, rng):
    pb = linattn.Problem(6, 9, 0.3)
    data = pb.sample(P, rng)
    M = pb.n_params(model)
    ref = spectra.hessian_eigenvalues(data, pb, model=model, method="naive")
    scale = ref.max()
    for method in ("gram", "dense", "auto"):
        ev = spectra.hessian_eigenvalues(data, pb, model=model, method=method)
        assert ev.shape == (M,)
        assert np.all(np.diff(ev) >= 0)
        assert np.max(np.abs(ev - ref)) <= 1e-10 * scale, method
    gram = spectra.hessian_eigenvalues(data, pb, model=model, method="gram")
    assert np.count_nonzero(gram == 0.0) == max(0, M - P)  # exact zeros, exact count
    raw = spectra.hessian_eigenvalues(data, pb, model=model, rescale=False)
    assert np.allclose(raw / pb.feature_variance, spectra.hessian_eigenvalues(data, pb, model=model), rtol=1e-13)


def test_dense_batches(rng):
    pb = linattn.Problem(4, 5)
    data = pb.sample(50, rng)
    H1 = spectra.hessian_dense(data, max_bytes=7 * 16 * 8)   # batches of 7 rows
    F = data.features()
    assert np.allclose(H1, F.T @ F / 50, rtol=1e-12, atol=1e-15)


def test_bad_input(rng):
    pb = linattn.Problem(3, 4)
    data = pb.sample(5, rng)
    with pytest.raises(ValueError, match="model"):
        spectra.hessian_eigenvalues(data, pb, model="nope")
    with pytest.raises(ValueError, match="method"):
        spectra.hessian_eigenvalues(data, pb, method="magic")
    with pytest.raises(ValueError, match="D"):
        spectra.hessian_eigenvalues(data, linattn.Problem(4, 4))
    reduced_only = linattn.Prompts(s=data.s, xq=data.xq, yq=data.yq)
    with pytest.raises(ValueError, match="y2"):
        spectra.hessian_eigenvalues(reduced_only, pb, model="full")
