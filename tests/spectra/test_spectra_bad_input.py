"""Bad-input sweep of spectra (rung 5): every public callable, every argument, and silent
wrong answers that are now refused or corrected."""
import numpy as np
import pytest
from helpers import Row, sweep_tests

import linattn
import spectra
from spectra import _matrix_free as matrix_free
from spectra import mp

PB = linattn.Problem(3, 4, 0.1)
DATA = PB.sample(6, rng=0)
LAW = spectra.prompt_law(PB, n_nodes=64, log2_points=10)
ES = spectra.eigensystem(DATA, PB)
EST = spectra.slq_spectrum(DATA, PB, steps=4, n_probes=2, rng=0)
EV = spectra.hessian_eigenvalues(DATA, PB)
RR = spectra.ridge_resolvent(6.0, 0.1, LAW)
OM = RR.omega_t[None]

ROWS = [
    Row("hessian_eigenvalues", spectra.hessian_eigenvalues, dict(data=DATA, pb=PB, rescale=True, model="reduced",
                                                                method="auto"),
        dict(data="prompts", pb="problem", rescale="bool", model="model", method="choice")),
    Row("hessian_dense", spectra.hessian_dense, dict(data=DATA, model="reduced", max_bytes=1 << 20),
        dict(data="prompts", model="model", max_bytes="posint")),
    Row("hessian_matvec", spectra.hessian_matvec, dict(data=DATA, theta=np.ones(9), model="reduced"),
        dict(data="prompts", theta="array_shape", model="model")),
    Row("slq_spectrum", spectra.slq_spectrum, dict(data=DATA, pb=PB, steps=4, n_probes=2, rescale=True,
                                                  model="reduced", rng=0, progress=False),
        dict(data="prompts", pb="problem", steps="posint", n_probes="posint", rescale="bool", model="model",
             rng="rng", progress="bool")),
    Row("SpectralEstimate", spectra.SpectralEstimate, dict(nodes=EST.nodes, weights=EST.weights, n_probes=2, steps=4,
                                                          matvecs=8), dict(nodes="array", weights="array")),
    Row("SpectralEstimate.density", EST.density, dict(x=[0.5, 1.0], width=0.1), dict(x="array", width="positive")),
    Row("SpectralEstimate.cdf", EST.cdf, dict(x=[0.5, 1.0], nonzero=True, zero_tol=1e-8),
        dict(x="array", nonzero="bool", zero_tol="tol")),
    Row("SpectralEstimate.atom", EST.atom, dict(zero_tol=1e-8), dict(zero_tol="tol")),
    Row("matrix_free.kolmogorov_distance", matrix_free.kolmogorov_distance, dict(estimate=EST, eigenvalues=EV),
        dict(eigenvalues="array_shape")),
    Row("matrix_free.lanczos_quadrature", matrix_free.lanczos_quadrature,
        dict(matvec=lambda v: 2 * v, M=4, steps=3, rng=0), dict(M="posint", steps="posint", rng="rng")),
    Row("density", spectra.density, dict(x=[0.5, 1.0], alpha=0.5, pb=PB, law="finite", model="reduced"),
        dict(x="array", alpha="positive", pb="problem", law="choice", model="model")),
    Row("cdf", spectra.cdf, dict(x=[0.5, 1.0], alpha=0.5, pb=PB, law="mp", model="reduced", n_grid=200),
        dict(x="array", alpha="positive", pb="problem", law="choice", model="model", n_grid="posint")),
    Row("spectral_cdf", spectra.spectral_cdf, dict(alpha=0.5, pb=PB, law="mp", model="reduced", n_grid=200),
        dict(alpha="positive", pb="problem", law="choice", model="model", n_grid="posint")),
    Row("support_edges", spectra.support_edges, dict(alpha=0.5, pb=PB, law="mp", model="reduced", n_grid=200),
        dict(alpha="positive", pb="problem", law="choice", model="model", n_grid="posint")),
    Row("stieltjes", spectra.stieltjes, dict(z=[0.5 + 0.1j], alpha=0.5, pb=PB, law="mp", model="reduced",
                                            derivative=False),
        dict(alpha="positive", pb="problem", law="choice", model="model", derivative="bool")),
    Row("zero_atom", spectra.zero_atom, dict(alpha=0.5, model="full", pb=PB),
        dict(alpha="positive", model="model", pb="problem")),
    Row("kolmogorov_distance", spectra.kolmogorov_distance, dict(eigenvalues=EV, alpha=6 / 9, pb=PB, law="mp",
                                                               model="reduced", zero_tol=1e-9),
        dict(eigenvalues="array_shape", alpha="positive", pb="problem", law="choice", model="model",
             zero_tol="tol")),
    Row("prompt_law", spectra.prompt_law, dict(pb=PB, model="reduced", law="finite", channel="correlated",
                                              n_nodes=64, log2_points=10, rng=0),
        dict(pb="problem", model="model", law="choice", channel="choice", n_nodes="posint",
             log2_points="posint", rng="seed")),
    Row("block_resolvent", spectra.block_resolvent, dict(z=[0.5 + 0.1j], P=6.0, law=LAW, tol=1e-11, maxit=100),
        dict(P="positive", tol="tol", maxit="posint")),
    Row("data_transforms", spectra.data_transforms, dict(z=[-0.5], P=6.0, law=LAW), dict(P="positive")),
    Row("ridge_resolvent", spectra.ridge_resolvent, dict(P=6.0, lam=0.1, law=LAW, tol=1e-13, maxit=200),
        dict(P="positive", lam="nonneg", tol="tol", maxit="posint")),
    Row("teacher_overlap", spectra.teacher_overlap, dict(L=RR.L, omega=OM, law=LAW),
        dict(L="nonneg", omega="array_complex")),
    Row("block_overlaps", spectra.block_overlaps, dict(nu1=RR.a[None], nu2=RR.a[None], om1=OM, om2=OM,
                                                      rho1=[0.3], rho2=[0.3], law=LAW, P=6.0),
        dict(nu1="array_complex", om1="array_complex", rho1="array_complex", P="positive")),
    Row("pair_overlaps", spectra.pair_overlaps, dict(z1=[-0.5], z2=[-0.7], P=6.0, law=LAW), dict(P="positive")),
    Row("eigensystem", spectra.eigensystem, dict(data=DATA, pb=PB, model="reduced", null_space=False),
        dict(data="prompts", pb="problem", model="model", null_space="bool")),
    Row("as_eigensystem", spectra.as_eigensystem, dict(data=ES, pb=PB, model="reduced"),
        dict(pb="problem", model="model")),
    Row("Eigensystem.ridge_coefficients", ES.ridge_coefficients, dict(lam=0.1), dict(lam="nonneg")),
    Row("Eigensystem.theta_star", ES.theta_star, dict(lam=0.1), dict(lam="nonneg")),
    Row("Eigensystem.train_at_ridge", ES.train_at_ridge, dict(lam=0.1), dict(lam="nonneg")),
    Row("Eigensystem.test_error", ES.test_error, dict(a=np.zeros(ES.k)), dict(a="array")),
    Row("Eigensystem.project", ES.project, dict(theta=np.ones(9)), dict(theta="array")),
    Row("Eigensystem.lift", ES.lift, dict(a=np.ones(ES.k)), dict(a="array")),
    Row("cmatmul", spectra.cmatmul, dict(a=np.ones((2, 3)) + 1j, b=np.ones(3)), dict(b="array_shape")),
    Row("mp.edges", mp.edges, dict(ratio=2.0), dict(ratio="positive")),
    Row("mp.atom", mp.atom, dict(ratio=2.0), dict(ratio="positive")),
    Row("mp.density", mp.density, dict(x=[0.5], ratio=2.0), dict(x="array", ratio="positive")),
    Row("mp.stieltjes", mp.stieltjes, dict(z=[0.5 + 1j], ratio=2.0), dict(ratio="positive")),
    Row("mp.cdf", mp.cdf, dict(x=[0.5], ratio=2.0), dict(x="array", ratio="positive")),
    Row("symmetric_eigenvalues", spectra.symmetric_eigenvalues, dict(A=np.eye(3), overwrite=False, method="auto"),
        dict(A="array", overwrite="bool", method="choice")),
]

#: result types (constructed by the library) and constants
NOT_INPUTS = {"PromptLaw", "SpectralCDF", "Resolvent", "DataTransforms", "RidgeResolvent", "Eigensystem", "LAWS"}
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, spectra, NOT_INPUTS)


def test_problem_and_data_must_agree():
    other = linattn.Problem(4, 4)
    for call in (lambda: spectra.hessian_eigenvalues(DATA, other), lambda: spectra.slq_spectrum(DATA, other),
                 lambda: spectra.eigensystem(DATA, other)):
        with pytest.raises(ValueError, match="pb.D"):
            call()
    with pytest.raises(ValueError, match="theta"):
        spectra.hessian_matvec(linattn.Problem(5, 20).sample(60, rng=1), np.ones(30))   # was uninitialised memory


def test_no_silent_wrong_answers(monkeypatch):
    """Special cases: each returned garbage or a raw numba error before."""
    pb = linattn.Problem(5, 20, 0.1)
    dens = spectra.density([1e-30, 1e-13, 1e-6], 0.9, pb)     # zero atom leaked in: 1e18 at 1e-30
    assert np.all(dens == 0.0)                                  # below the support's lower edge
    with pytest.raises(ValueError, match="z"):
        spectra.stieltjes(0.0, 0.5, pb)                         # the atom's pole
    assert np.all(spectra.density([1e-300, 1e-100], 0.5, pb, law="mp") == 0.0)   # was SystemError
    with pytest.raises(ValueError, match="tol"):
        spectra.block_resolvent([1.0 + 0.1j], 5.0, LAW, tol=np.nan)
    with pytest.raises(ValueError, match="log2_points"):
        spectra.prompt_law(PB, log2_points=40)                  # memory guard
    monkeypatch.setenv("LINATTN_MEMORY_LIMIT", str(2**30))   # a 1 GiB machine
    big = linattn.Problem(100, 100)
    data = big.sample(20_000, rng=0)
    for call in (lambda: spectra.eigensystem(data, big), lambda: spectra.hessian_eigenvalues(data, big),
                 lambda: data.features()):
        with pytest.raises(ValueError, match="GiB"):           # refused before allocating
            call()


# ----------------------------------------------------------------------------- refusals and extreme arguments
def test_spectral_tabulation_and_matvec_failures_are_named():
    import spectra

    pb = linattn.Problem(3, 4, 0.1)
    for alpha in (1e-300, 1e8):
        with pytest.raises(ValueError, match=r"^spectra\.support_edges: alpha must be a sample ratio whose continuous "
                                             "spectrum"):
            spectra.support_edges(alpha, pb, law="mp")
    for matvec, words in ((lambda v: 1 / 0, "raised ZeroDivisionError"), (lambda v: v * np.nan, "non-finite"),
                          (lambda v: np.ones(3), "shape"), (lambda v: v + 0j, "complex")):
        with pytest.raises(ValueError, match=f"^matvec must be .*{words}"):
            matrix_free.lanczos_quadrature(matvec, 4, 3, rng=0)
