"""Bad-input sweep of the model package (rung 5): every public callable, every argument."""
import fractions

import numpy as np
import pytest
from helpers import Row, sweep_tests

import linattn
from linattn import Covariance
from linattn import _attention as attention
from linattn import _check as check
from linattn import _covariance as covariance
from linattn import _idg as pools
from linattn import _invariants as invariants
from linattn import _kernel_errors as kernel_learner
from linattn import _links as links
from linattn import _parametrizations as factorized
from linattn import _readout as readout
from linattn import _sampling as sampling
from linattn import _validate as validate
from linattn._numerics import quadrature
from linattn._task_moments import moment_matrices
from linattn.markov import _bottleneck as bottleneck

PB = linattn.Problem(3, 4, 0.1)
PB_TANH = linattn.Problem(3, 4, 0.1, link="tanh")
PB_POOL = linattn.Problem(3, 4, 0.1, tasks=2)
DATA = PB.sample(6, rng=0)
G = 0.1 * np.eye(3)
V = np.ones(3)
TOK = sampling.sample_tokens(PB, 2, rng=0)
Z = TOK.embed()
W = np.eye(4)

PAR = factorized.Parametrization("separate_kq", 3, heads=2, rank=2)

ROWS = [
    Row("Problem", linattn.Problem, dict(D=3, N=4, noise=0.1, link="relu"),
        dict(D="posint", N="posint", noise="nonneg", link="link")),
    Row("Problem(covariance)", linattn.Problem, dict(D=3, N=4, noise=0.1, covariance=[1.0, 0.5, 0.2]),
        dict(covariance="array_shape")),
    Row("covariance.as_covariance", covariance.as_covariance, dict(covariance=np.diag([1.0, 2.0, 3.0]), D=3),
        dict(covariance="array_shape")),
    Row("factorized.Parametrization", factorized.Parametrization, dict(kind="separate_kq", D=3, heads=2, rank=2),
        dict(kind="choice", D="posint", heads="posint", rank="posint")),
    Row("factorized.Parametrization.init", PAR.init, dict(scale=0.1, rng=0), dict(scale="positive", rng="rng")),
    Row("factorized.Parametrization.gamma", PAR.gamma, dict(theta=np.ones(PAR.n_params)), dict(theta="array")),
    Row("factorized.Parametrization.pullback", PAR.pullback, dict(theta=np.ones(PAR.n_params), G=G),
        dict(theta="array", G="array_shape")),
    Row("factorized.Parametrization.aligned", factorized.Parametrization("value_kq_modes", 3).aligned,
        dict(modes=[0.1, 0.2, 0.3], basis=np.eye(3)), dict(modes="array", basis="array_shape")),
    # private building blocks of the theories (replica.kernel_theory, replica.feature_theory) and simulators: they
    # trust their inputs, which the public entries check (n_knots, lam) or make themselves: a valid call each
    Row("kernel_learner.block_directions", kernel_learner.block_directions,
        dict(what=np.array([[0.6, 0.8, 0.0]]), features="hermite2"), {}),
    Row("markov.bottleneck.one_hot_embedding", bottleneck.one_hot_embedding, dict(C=3), dict(C="posint")),
    Row("readout.hinge_features", readout.hinge_features, dict(t=np.linspace(-1, 1, 5), knots=np.array([0.0, 0.5])),
        {}),
    Row("readout.readout", readout.readout, dict(t=np.linspace(-1, 1, 5), a=np.ones(4), knots=np.array([0.0, 0.5])),
        dict(t="array", a="array_shape", knots="array")),          # validation.readout: checked
    Row("readout.quantile_knots", readout.quantile_knots, dict(t=np.linspace(-1, 1, 9), n_knots=3), {}),
    Row("readout.fit_readout", readout.fit_readout,
        dict(t=np.linspace(-1, 1, 9), y=np.linspace(0, 1, 9), knots=np.array([0.0, 0.5]), lam=0.01), {}),
    Row("factorized.population_objective", factorized.population_objective, dict(pb=PB), dict(pb="problem")),
    Row("factorized.dataset_objective", factorized.dataset_objective, dict(data=DATA, pb=PB),
        dict(data="prompts")),
    Row("attention.predict_value_kq", attention.predict_value_kq, dict(Z=Z, value_row=np.ones(4), W_KQ=W),
        dict(Z="array", value_row="array_shape", W_KQ="array_shape")),
    Row("Problem.surrogate", PB_TANH.surrogate, dict(finite_size=True), dict(finite_size="bool")),
    Row("links.as_link", links.as_link, dict(link="hermite:3"), dict(link="link")),
    Row("links.radial_moments", links.radial_moments, dict(link="sign", D=3), dict(link="link", D="posint")),
    Row("links.Link.linear", links.Link.linear, dict(slope=0.5), dict(slope="real")),
    # the link quadrature's building blocks (shared by linattn.kernel_learner and replica.feature_theory, which
    # validate the link and the problem first): a valid call each, no sweep
    Row("links.gauss_moments", links.gauss_moments, dict(link=links.as_link("tanh"), scales=np.ones(2), n=8), {}),
    Row("links.link_tolerance", links.link_tolerance, dict(link=links.as_link("tanh")), {}),
    Row("links.moment_table", links.moment_table,
        dict(link=links.as_link("cubic"), scales=np.ones(2), n=9, powers=((0, 2),)), {}),
    Row("links.gauss_orders", links.gauss_orders, dict(link=links.as_link("cubic")), {}),
    Row("links.gauss_rule", links.gauss_rule, dict(link=links.as_link("tanh"), n=8), {}),
    Row("check.n_test", check.n_test, dict(N_test=7), dict(N_test="posint")),
    # the numerics room's rules: called with the library's own orders (a valid call each)
    Row("quadrature.gauss_hermite", quadrature.gauss_hermite, dict(n=8), {}),
    Row("quadrature.gauss_panels", quadrature.gauss_panels, dict(n=8), {}),
    Row("quadrature.chi_square_rule", quadrature.chi_square_rule, dict(D=3, n=8), {}),
    Row("quadrature.normalised_hermite", quadrature.normalised_hermite, dict(z=np.ones(3), order=4), {}),
    Row("links.power_size", links.power_size, dict(values=np.ones(2), sizes=np.ones(2), p=2), {}),
    Row("links.Link.polynomial", links.Link.polynomial, dict(coefficients=[0.5, 0.0, 1.0]),
        dict(coefficients="array")),
    Row("links.until_converged", links.until_converged,
        dict(estimate=lambda n: (np.ones(1), np.ones(1)), orders=links.ORDERS, what="a constant",
             link=links.as_link("tanh")), {}),
    Row("invariants.n_primitives", invariants.n_primitives, dict(pb=PB_TANH), {}),     # spectra's, checked there
    Row("Problem.test_error", PB.test_error, dict(Gamma=G, v=V), dict(Gamma="array_shape", v="array_shape")),
    Row("Problem.test_error(N_test)", PB.test_error, dict(Gamma=G, v=V, N_test=7), dict(N_test="posint")),
    Row("validate.problem", validate.problem, dict(pb=PB), dict(pb="problem")),
    Row("validate.prompts", validate.prompts, dict(data=PB.sample(4, rng=0)), dict(data="prompts")),
    Row("validate.problem_data", validate.problem_data, dict(data=PB.sample(4, rng=0), pb=PB, model="full"),
        dict(data="prompts", pb="problem", model="model")),
    Row("Problem(tasks)", linattn.Problem, dict(D=3, N=4, noise=0.1, tasks=5, task_law="sphere", assignment="balanced"),
        dict(tasks="posint", task_law="choice", assignment="choice")),
    Row("Problem(task_covariance)", linattn.Problem, dict(D=3, N=4, noise=0.1, task_covariance=[1.5, 1.5, 0.0]),
        dict(task_covariance="array_shape")),
    Row("pools.task_error", linattn.pools.task_error,
        dict(pb=linattn.Problem(3, 4, 0.1, task_covariance=[1.5, 1.5, 0.0]), Gamma=G, v=V, task_covariance="isotropic",
             N_test=5), dict(pb="problem", Gamma="array_shape", v="array_shape", N_test="posint")),
    Row("pools.low_rank_covariance", linattn.pools.low_rank_covariance, dict(D=4, r=2, rng=0, rotate=True),
        dict(D="posint", r="posint", rng="rng", rotate="bool")),
    Row("pools.task_moments", pools.task_moments, dict(pb=PB, pool=np.ones((2, 3))),
        dict(pb="problem", pool="array_shape")),
    Row("pools.context_statistics", pools.context_statistics,
        dict(pb=PB, w=np.ones((2, 3)), chi2=np.full(2, 4.0), zeta=np.ones((2, 3))),
        dict(pb="problem", w="array_shape", chi2="array_shape", zeta="array_shape")),
    Row("pools.moment_matrices", moment_matrices,          # the pool theories', which check pb and model
        dict(pb=PB, model="full", moments=pools.task_moments(PB, np.ones((2, 3)))), {}),
    Row("pools.idg_error", pools.idg_error, dict(pb=PB, pool=np.ones((2, 3)), Gamma=G, v=V, N_test=5),
        dict(pb="problem", pool="array_shape", Gamma="array_shape", v="array_shape", N_test="posint")),
    Row("pools.idg_metric", pools.idg_metric, dict(pb=PB, pool=np.ones((2, 3)), model="full"),
        dict(pb="problem", pool="array_shape", model="model")),
    Row("pools.draw_pool", sampling.draw_pool, dict(pb=PB_POOL, P=4, rng=0),
        dict(pb="problem", P="posint", rng="rng")),
    Row("Problem.test_error_from_moments", PB.test_error_from_moments, dict(overlap=0.1, norm=0.2), {}),
    Row("Problem.sample", PB.sample, dict(P=5, rng=1), dict(P="posint", rng="rng")),
    Row("Problem.n_params", PB.n_params, dict(model="full"), dict(model="model")),
    Row("Problem.icl_solution", PB.icl_solution, {}, {}),
    Row("Prompts", linattn.Prompts, dict(s=DATA.s, xq=DATA.xq, yq=DATA.yq, y2=DATA.y2),
        dict(s="array_shape", xq="array_shape", yq="array_shape", y2="array_shape")),
    Row("Prompts.features", DATA.features, dict(model="full"), dict(model="model")),
    Row("Prompts.gram", DATA.gram, dict(model="full"), dict(model="model")),
    Row("Prompts.predict", DATA.predict, dict(Gamma=G, v=V), dict(Gamma="array_shape", v="array_shape")),
    Row("Prompts.require", DATA.require, dict(model="full"), dict(model="model")),
    Row("Prompts.take", DATA.take, dict(index=np.array([0, 2])), {}),
    Row("train_energy", linattn.train_energy, dict(data=DATA, Gamma=G, lam=0.1, v=V),
        dict(data="prompts", Gamma="array_shape", lam="nonneg", v="array_shape")),
    Row("train_gradient", linattn.train_gradient, dict(data=DATA, Gamma=G, lam=0.1, v=V),
        dict(data="prompts", Gamma="array_shape", lam="nonneg", v="array_shape")),
    Row("pack", linattn.pack, dict(Gamma=G, v=V), dict(Gamma="array_shape", v="array_shape")),
    Row("unpack", linattn.unpack, dict(theta=np.ones(12), D=3, model="full"),
        dict(theta="array", D="posint", model="model")),
    Row("contrast_ratio", linattn.contrast_ratio, dict(Gamma=G), dict(Gamma="array")),
    Row("relative_gap", linattn.relative_gap, dict(train=[0.1, 0.2], test=[0.3, 0.2]),
        dict(train="array", test="array")),
    Row("transition_point", linattn.transition_point, dict(P=[1.0, 10.0, 100.0], gap=[50.0, 8.0, 1.0], level=5.0),
        dict(P="array", level="positive")),
    Row("sampling.sample", sampling.sample, dict(pb=PB, P=4, rng=0), dict(pb="problem", P="posint", rng="rng")),
    Row("sampling.sample_with_tasks", sampling.sample_with_tasks, dict(pb=PB, P=4, rng=0),
        dict(pb="problem", P="posint", rng="rng")),
    Row("sample_tokens", linattn.sample_tokens, dict(pb=PB, P=4, rng=0),
        dict(pb="problem", P="posint", rng="rng")),
    Row("sample_tokens(w)", linattn.sample_tokens, dict(pb=PB, P=2, rng=0, w=np.ones((2, 3))), dict(w="array_shape")),
    Row("Covariance", linattn.Covariance, dict(spectrum=[1.0, 2.0, 3.0], basis=np.eye(3)),
        dict(spectrum="array", basis="array_shape")),
    Row("Covariance.apply", linattn.Covariance([1.0, 2.0, 3.0]).apply, dict(A=np.eye(3), power=0.5),
        dict(A="array_shape", power="real")),
    Row("sampling.sample_naive", sampling.sample_naive, dict(pb=PB, P=4, rng=0, batch_size=2),
        dict(pb="problem", P="posint", rng="rng", batch_size="posint")),
    Row("attention.embed", attention.embed, dict(X=TOK.X, y=TOK.y, xq=TOK.xq),
        dict(X="array_shape", y="array_shape", xq="array_shape")),
    Row("attention.forward", attention.forward, dict(Z=Z, W=W), dict(Z="array_shape", W="array_shape")),
    Row("attention.predict", attention.predict, dict(Z=Z, W=W), dict(Z="array_shape", W="array_shape")),
    Row("attention.prediction_gradient", attention.prediction_gradient, dict(Z=Z), dict(Z="array_shape")),
    Row("attention.blocks", attention.blocks, dict(W=W), dict(W="array_shape")),
    Row("invariants.from_uniforms", invariants.from_uniforms, dict(pb=PB, u=np.full((3, 8), 0.5)), {}),
    Row("invariants.from_uniforms[tanh]", invariants.from_uniforms, dict(pb=PB_TANH, u=np.full((3, 14), 0.5)), {}),
    Row("invariants.from_prompts", invariants.from_prompts, dict(pb=PB, data=DATA), dict(pb="problem", data="prompts")),
]

#: result types and exceptions (constructed by the library, not from user input)
NOT_INPUTS = {"ICLSolution", "Gradient", "Tokens", "ConvergenceError", "check"}
test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept = sweep_tests(
    ROWS, linattn, NOT_INPUTS)


def test_n_test_is_optional():
    """check.n_test: None (the training length) passes through, an integer comes back as int."""
    assert check.n_test(None) is None
    assert check.n_test(7.0) == 7 and type(check.n_test(7.0)) is int


def test_special_cases():
    """Inputs that used to pass silently."""
    with pytest.raises(ValueError, match="noise"):
        linattn.Problem(3, 4, noise=1e200)                      # overflows later
    with pytest.raises(ValueError, match="Gamma"):
        PB.test_error(G + 1j * G)                               # imaginary part dropped
    with pytest.raises(ValueError, match="Gamma"):
        linattn.contrast_ratio(np.ones((2, 3)))                 # not square
    with pytest.raises(ValueError, match="Gamma"):
        linattn.contrast_ratio(np.zeros((3, 3)))                # undefined at 0
    with pytest.raises(ValueError, match="y2"):
        linattn.Prompts(s=DATA.s, xq=DATA.xq, yq=DATA.yq, y2=-DATA.y2)
    with pytest.raises(ValueError, match="P"):
        linattn.Problem(10, 10).sample(10**12)                  # memory guard
    with pytest.raises(ValueError, match="gap"):
        linattn.transition_point([1, 2, 3], [np.nan, 1, 2])


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_4_8 = linattn.Problem(4, 8, 0.1)
DATA_4_8 = PB_4_8.sample(20, rng=0)
POOL_4_8 = linattn.Problem(4, 8, 0.1, tasks=3)
TL = links.as_link("tanh")


def test_valid_calls_keep_their_values():
    """The argument checks leave valid calls as they are (types and values)."""
    met = pools.idg_metric(POOL_4_8, np.ones((2, 4)))
    assert isinstance(met.error(np.ones(16)), np.floating)
    assert met.error(np.ones((2, 16))).shape == (2,)
    assert check.positive_int("x", fractions.Fraction(8, 2)) == 4 and check.positive_int("x", 3.0) == 3
    assert linattn.transition_point([1.0, 10.0, 100.0], [np.inf, 8.0, 1.0], 5.0) is not None
    assert DATA_4_8.take(slice(None, None, -1)).P == DATA_4_8.P
    cov = Covariance(np.array([1.0, 2.0]), np.array([[0.6, 0.8], [-0.8, 0.6]]))
    A = np.arange(4.0).reshape(2, 2)
    assert np.allclose(cov.from_eigenbasis(cov.to_eigenbasis(A)), A)
    assert np.allclose(cov.apply(np.eye(2), 2.0), cov.matrix @ cov.matrix)
    assert np.allclose(cov.function([1.0, 2.0]), cov.matrix)
    assert links.moment_table(TL, np.ones(1), 12, [(0, 2)])[0].shape == (1, 1)
    assert TL(np.inf) == 1.0
    obj = factorized.dataset_objective(DATA_4_8)
    assert np.allclose(obj.apply(np.eye(4)), obj.gradient(np.eye(4)) + obj.B)
    g = linattn.train_gradient(DATA_4_8, np.eye(4), 0.1, v=np.ones(4))
    assert np.all(np.isfinite(g.dGamma)) and np.all(np.isfinite(g.dv))
    surrogate = linattn.Problem(4, 8, 0.1, link="tanh").surrogate()
    assert surrogate.link.is_linear and surrogate.noise > 0.1
