"""The torch route (spectra.device): the same spectra, eigensystems and Langevin law as the numpy/numba route.

Run on torch's CPU backend where the [torch] extra is installed (CI has no GPU); skipped without torch, except the
test that the argument is refused by name when torch is missing.
"""
import sys

import numpy as np
import pytest

import linattn
import spectra
import validation


def test_a_device_without_torch_is_refused_by_name(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)            # import torch raises ImportError
    pb = linattn.Problem(4, 8, 0.1)
    with pytest.raises(ValueError, match=r"device.*\[torch\]"):
        spectra.hessian_eigenvalues(pb.sample(30, rng=0), pb, device="cpu")


@pytest.mark.parametrize("torch_installed", [True, False])
def test_an_unknown_device_name_is_not_a_missing_extra(monkeypatch, torch_installed):
    """'gpu' is not a device name, with or without torch: the message says what the names are, not to install the
    [torch] extra."""
    if not torch_installed:
        monkeypatch.setitem(sys.modules, "torch", None)
    pb = linattn.Problem(4, 8, 0.1)
    data = pb.sample(30, rng=0)
    for device, hint in (("gpu", "a GPU is 'cuda'"), ("mps", "no float64"), ("cuda:x", "'cuda:N'"),
                         (3, "torch.device")):
        with pytest.raises(ValueError, match="device must be None") as err:
            spectra.hessian_eigenvalues(data, pb, device=device)
        assert hint in str(err.value) and "[torch]" not in str(err.value), device


def test_cuda_without_torch_says_a_cuda_build_is_needed(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    pb = linattn.Problem(4, 8, 0.1)
    with pytest.raises(ValueError, match=r"\[torch\] extra.*CUDA build of torch.*`make torch` installs is a CPU build"):
        spectra.hessian_eigenvalues(pb.sample(30, rng=0), pb, device="cuda")


try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="needs the [torch] extra")


@needs_torch
@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("P", [40, 400])            # the Gram route (P < M) and the dense one
def test_eigenvalues_equal_the_numpy_route(model, P):
    """float64 on both routes: agreement to 1e-12 of the largest eigenvalue (measured ≤ 2e-15); the Gram route's
    exact zeros stay exact."""
    pb = linattn.Problem(12, 24, 0.1)
    data = pb.sample(P, rng=3)
    ref = spectra.hessian_eigenvalues(data, pb, model=model)
    for method in ("auto", "gram" if P < pb.n_params(model) else "dense"):
        ev = spectra.hessian_eigenvalues(data, pb, model=model, method=method, device="cpu")
        assert ev.shape == ref.shape and np.abs(ev - ref).max() <= 1e-12 * ref.max()
        assert np.count_nonzero(ev == 0.0) == np.count_nonzero(ref == 0.0)


@needs_torch
@pytest.mark.parametrize("null_space", [False, True])
@pytest.mark.parametrize("P", [30, 200])
def test_eigensystem_equals_the_numpy_route(P, null_space):
    """Eigenvalues, and the sign-free quantities built from the eigenvectors (b², e, u·b, the metric W in the
    modes' own frame), to 1e-10 relative (eigenvector round-off ~ eps/gap)."""
    pb = linattn.Problem(5, 10, 0.1)
    data = pb.sample(P, rng=4)
    a = spectra.eigensystem(data, pb, "full", null_space=null_space)
    b = spectra.eigensystem(data, pb, "full", null_space=null_space, device="cpu")
    assert a.k == b.k
    for x, y in ((a.g, b.g), (a.b**2, b.b**2), (a.e, b.e), (a.u * a.b, b.u * b.b), (np.diag(a.W), np.diag(b.W))):
        assert np.abs(x - y).max() <= 1e-10 * max(np.abs(x).max(), 1e-300)
    assert abs(a.e_perp - b.e_perp) <= 1e-10 * a.y2bar


@needs_torch
def test_bad_devices_are_refused_by_name():
    pb = linattn.Problem(4, 8, 0.1)
    data = pb.sample(30, rng=0)
    for bad in ("tpu", "meta", 3.5):
        with pytest.raises(ValueError, match="device"):
            spectra.hessian_eigenvalues(data, pb, device=bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device.*no CUDA"):
            spectra.eigensystem(data, pb, device="cuda")
    with pytest.raises(ValueError, match="method"):
        spectra.hessian_eigenvalues(data, pb, method="naive", device="cpu")
    with pytest.raises(ValueError, match="device"):
        spectra.eigensystem(data, pb, "full", lam=(0.1, 0.2), device="cpu")
    with pytest.raises(ValueError, match="device"):
        validation.langevin(data, pb, 10.0, 0.1, basis="parameter", device="cpu")


@needs_torch
@pytest.mark.slow
def test_batched_langevin_has_the_chains_law():
    """400 chains × 10 samples on torch's CPU backend: the sample means of E_t and E_g lie within 4 exact s.e. of
    the discrete chain's exact stationary means (Gibbs + the exact O(dt) bias), as the numba chains do; the same
    criterion rejects the Gibbs means at 2β (the test can fail)."""
    pb = linattn.Problem(3, 6, 0.1)
    data = pb.sample(30, rng=0)
    kw = dict(n_equilibrate=5000, n_samples=10, stride=200, n_chains=400, rng=1, device="cpu")
    r = validation.langevin(data, pb, 20.0, 0.05, **kw)
    assert r.equilibrated and r.train.shape == (400, 10)
    for mean, exact, bias, se in ((r.train_mean, r.exact_train, r.bias_train, r.train_se_exact),
                                  (r.test_mean, r.exact_test, r.bias_test, r.test_se_exact)):
        assert abs(mean - (exact + bias)) <= 4 * se
    cold = validation.langevin(data, pb, 40.0, 0.05, **{**kw, "n_chains": 2, "n_samples": 2})
    assert abs(r.train_mean - (cold.exact_train + r.bias_train)) > 4 * r.train_se_exact


@needs_torch
def test_cuda_on_a_cpu_build_of_torch_says_so(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.version, "cuda", None)
    pb = linattn.Problem(4, 8, 0.1)
    with pytest.raises(ValueError, match="is a CPU build; 'cuda' needs a CUDA build of torch"):
        spectra.hessian_eigenvalues(pb.sample(30, rng=0), pb, device="cuda")
