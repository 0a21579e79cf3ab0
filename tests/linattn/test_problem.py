"""Problem: validation, exact population quantities against Monte Carlo (test ladder rung 1)."""
import numpy as np
import pytest
from helpers import CALLED, assert_mean, assert_refused, name_as_word, name_not_within_words_or_after_a_dot, refusals

import linattn
from linattn import Covariance, Problem


@pytest.mark.parametrize("kwargs, name", [
    (dict(D=0, N=10), "D"), (dict(D=-3, N=10), "D"), (dict(D=2.5, N=10), "D"),
    (dict(D=5, N=0), "N"), (dict(D=5, N=10, noise=-0.1), "noise"),
    (dict(D=5, N=10, noise=float("nan")), "noise"), (dict(D=5, N=10, noise=float("inf")), "noise"),
])
def test_bad_problem(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Problem(**kwargs)


def test_bad_arguments():
    pb = Problem(4, 8)
    with pytest.raises(ValueError, match="P"):
        pb.sample(0)
    with pytest.raises(ValueError, match="Gamma"):
        pb.test_error(np.eye(3))
    with pytest.raises(ValueError, match="Gamma"):
        pb.test_error(np.full((4, 4), np.nan))
    with pytest.raises(ValueError, match="v"):
        pb.test_error(np.eye(4), v=np.ones(5))
    with pytest.raises(ValueError, match="model"):
        pb.n_params("big")


def test_frozen_and_hashable():
    pb = Problem(3, 7, 0.1)
    with pytest.raises(Exception):
        pb.D = 4
    assert hash(pb) == hash(Problem(3, 7, 0.1))


@pytest.mark.parametrize("D, N, noise", [(10, 100, 0.0), (5, 8, 0.5), (3, 2, 1.0)])
def test_feature_variances_and_cross_terms(D, N, noise, rng):
    """E[h hᵀ] = diag(c I, c_v I): diagonal against exact values, off-diagonal entries as z-scores."""
    pb = Problem(D, N, noise)
    F = pb.sample(200_000, rng).features("full")
    M1 = D * D
    assert_mean(np.mean(F[:, :M1] ** 2, axis=1), pb.feature_variance, label="c")
    assert_mean(np.mean(F[:, M1:] ** 2, axis=1), pb.feature_variance_v, label="c_v")
    # every off-diagonal second moment E[h_j h_k], j != k, must vanish; z-score each entry with
    # its own standard error. Under the null the z are ~N(0,1); with up to ~1.2e4 pairs, max|z| < 5.5
    # fails by chance with probability < 5e-4.
    n = F.shape[0]
    C = F.T @ F / n
    S = np.sqrt(np.maximum((F**2).T @ (F**2) / n - C**2, 1e-300) / n)
    z = C / S
    np.fill_diagonal(z, 0.0)
    assert np.max(np.abs(z)) < 5.5


@pytest.mark.parametrize("D, N, noise", [(6, 20, 0.0), (4, 5, 0.7)])
def test_test_error_formula_against_monte_carlo(D, N, noise, rng):
    pb = Problem(D, N, noise)
    Gamma = rng.standard_normal((D, D)) / D + np.eye(D) / (D * pb.feature_variance)
    v = rng.standard_normal(D) / D
    fresh = pb.sample(400_000, rng)
    loss = 0.5 * (fresh.yq - fresh.predict(Gamma, v)) ** 2
    assert_mean(loss, pb.test_error(Gamma, v), label="E_g(Γ, v)")
    loss0 = 0.5 * (fresh.yq - fresh.predict(Gamma)) ** 2
    assert_mean(loss0, pb.test_error(Gamma), label="E_g(Γ)")


def test_test_error_with_token_level_prompts(rng):
    """Same identity on prompts built from raw tokens (independent of the fast sampler)."""
    pb = Problem(5, 12, 0.3)
    Gamma = rng.standard_normal((5, 5)) / 5
    v = rng.standard_normal(5) / 5
    tok = linattn.sample_tokens(pb, 100_000, rng).prompts()
    loss = 0.5 * (tok.yq - tok.predict(Gamma, v)) ** 2
    assert_mean(loss, pb.test_error(Gamma, v), label="E_g tokens")


def test_icl_solution(rng):
    pb = Problem(8, 30, 0.4)
    icl = pb.icl_solution()
    c = pb.feature_variance
    assert np.allclose(icl.Gamma, np.eye(8) / (8 * c))
    assert icl.test_error == pytest.approx(0.5 * (1 + 0.16 - 1 / (8 * c)), rel=1e-14)
    assert pb.test_error(icl.Gamma) == pytest.approx(icl.test_error, rel=1e-12)
    # it is the minimiser: any perturbation increases the exact test error
    for _ in range(5):
        dG = 1e-3 * rng.standard_normal((8, 8))
        assert pb.test_error(icl.Gamma + dG, 1e-3 * rng.standard_normal(8)) > icl.test_error
    fresh = pb.sample(300_000, rng)
    assert_mean(0.5 * (fresh.yq - fresh.predict(icl.Gamma)) ** 2, icl.test_error, label="E_g(ICL)")


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)


REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("surrogate-noise", lambda: linattn.Problem(4, 8, 1e6, link="tanh").surrogate(), "noise"),
    ("surrogate-scale", lambda: linattn.Problem(4, 8, 0.0, link=lambda z: 1e39 * np.tanh(z)).surrogate(), "link"),
    ("moments-shapes", lambda: PB.test_error_from_moments(np.ones(3), np.ones(2)), "norm"),
    ("moments-overflow", lambda: PB.test_error_from_moments(-1.7e308, 1.7e308), "overlap"),
]) + refusals(name_as_word, [
    ("covariance-dimension", lambda: linattn.Problem(4, 8, 0.1, covariance=Covariance(np.ones(3))), "covariance"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_test_error_from_moments_is_finite_where_the_error_is():
    """½(V − 2·overlap + norm) with 2·overlap beyond float64 but the error itself representable."""
    assert PB.test_error_from_moments(-1e308, 1e308) == pytest.approx(1.5e308)
    assert PB.test_error_from_moments(1e308, 1e308) == pytest.approx(-5e307)
    assert PB.test_error_from_moments(0.1, 0.2) == pytest.approx(0.5 * (PB.label_variance - 0.2 + 0.2))


def test_the_surrogate_keeps_the_task_pool():
    pb = linattn.Problem(6, 12, 0.1, tasks=3, task_law="sphere", link="tanh")
    s = pb.surrogate()
    assert (s.tasks, s.task_law, s.link.is_linear) == (3, "sphere", True)
    assert pb.surrogate(finite_size=True).tasks == 3


def test_moments_indices_and_estimates_are_validated():
    """The one formula of the test error checks its moments; Prompts.take checks its index; a SpectralEstimate its
    counts (they raised raw TypeError/IndexError or were accepted)."""
    import spectra

    pb = linattn.Problem(3, 4, 0.1)
    for overlap, norm, name in ((0.0, -1.0, "norm"), (1j, 0.0, "overlap"), (np.nan, 0.0, "overlap"),
                                (None, 0.0, "overlap"), (10**400, 0.0, "overlap")):
        with pytest.raises(ValueError, match=rf"^linattn\.Problem\.test_error_from_moments: {name} must"):
            pb.test_error_from_moments(overlap, norm)
    assert pb.test_error_from_moments(0.5, 0.3) == pytest.approx(0.5 * (pb.label_variance - 1.0 + 0.3))
    data = pb.sample(6, rng=0)
    for index in (np.array([50]), np.array([1.5]), "a", np.array([], int)):
        with pytest.raises(ValueError, match=r"^linattn\.Prompts\.take: index must"):
            data.take(index)
    assert data.take(np.array([0, 2])).P == 2 and data.take(slice(1, 3)).P == 2
    with pytest.raises(ValueError, match="^n_probes must"):
        spectra.SpectralEstimate(nodes=np.ones(3), weights=np.ones(3) / 3, n_probes=-1, steps=3, matvecs=3)


@pytest.mark.parametrize("call, name", [
    (lambda: linattn.Problem(3, 4, 0.0, link=linattn.links.Link.linear(0.0)), "noise"),
])
def test_invalid_input_that_was_accepted_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=f"^{CALLED}{name} must"):
        call()


def test_constructors_name_their_class():
    """A refused constructor argument named the argument but not the class (Problem(0, 4): 'D must be …'): every
    public class that checks its arguments names itself first, as a function does."""
    from linattn import factorized, markov, pools

    for call, name in ((lambda: linattn.Problem(0, 4), r"linattn\.Problem: D"),
                       (lambda: linattn.Prompts(np.ones((2, 3)), np.ones((2, 2)), np.ones(2)), r"linattn\.Prompts: xq"),
                       (lambda: linattn.Covariance([-1.0, 2.0]), r"linattn\.Covariance: spectrum"),
                       (lambda: pools.TaskCovariance([-1.0]), r"linattn\.pools\.TaskCovariance: spectrum"),
                       (lambda: markov.Chains(1, 1.0), r"linattn\.markov\.Chains: C"),
                       (lambda: factorized.Parametrization("x", 3), r"linattn\.factorized\.Parametrization: kind")):
        with pytest.raises(ValueError, match=rf"^{name} must be"):
            call()
