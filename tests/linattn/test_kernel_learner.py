"""Exact test errors of the kernel learner (linattn.kernel_learner).

Three layers of checks:

* deterministic, to rounding: ``features="linear"`` is :meth:`linattn.Problem.test_error`; the error on one task
  equals a tensor quadrature of ``m`` and ``M₄`` built from the feature map of ``validation.simulators.learners``
  (the link's direction by the library's converged rule, the orthogonal directions by 3-point Gauss–Hermite,
  exact for the degree-4 polynomials there); the fresh-task averages equal the pool average over a spherical
  5-design (the icosahedron, exact for the degree-4 sphere moments used), integrated over ``r ~ χ²_D/D``
  by adaptive quadrature;
* statistical: raw-token Monte Carlo (prompts built token by token like ``learners._kernel_prompts``) within
  4 s.e. for four links, fresh and pooled tasks, ``N_test ≠ N``, random and trained ``Γ``;
* input validation (the library's bad-input sweep).
"""
import numpy as np
import pytest
from helpers import (
    Row,
    assert_refused,
    check_case,
    name_as_word,
    name_not_within_words_or_after_a_dot,
    refusals,
    sweep_cases,
)
from scipy import integrate, stats

import linattn
from linattn import _kernel_errors as kernel_errors
from linattn import _sampling as sampling
from linattn._kernel_errors import block_directions, context_features
from linattn._numerics import quadrature
from linattn.kernel_learner import kernel_test_error, n_features
from validation import hermite_features, kernel_learner


# ----------------------------------------------------------------------------- helpers
def _icosahedron():
    """The 12 unit vertices of the icosahedron: a spherical 5-design in R³ (averages every polynomial of degree
    ≤ 5 over the sphere exactly)."""
    gold = (1.0 + np.sqrt(5.0)) / 2.0
    base = np.array([[0.0, s1, s2 * gold] for s1 in (1.0, -1.0) for s2 in (1.0, -1.0)])
    v = np.concatenate([np.roll(base, k, axis=1) for k in range(3)])
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _quadrature_error(pb, G, w, N):
    """½[V − 2mᵀΓm + tr(ΓᵀSΓ)] for one task ``w``, with ``m``, ``M₄`` and ``V`` from a tensor quadrature of the
    feature map itself (independent of the structure derived in the module)."""
    D = pb.D
    z, logw = quadrature.gauss_panels(48)
    wg = np.exp(logw)
    z, wg = z[wg > 1e-300], wg[wg > 1e-300]
    gh, ghw = np.polynomial.hermite_e.hermegauss(3)
    ghw = ghw / ghw.sum()
    Z = np.stack([a.ravel() for a in np.meshgrid(*([gh] * (D - 1)), indexing="ij")], axis=1)
    Wz = np.prod(np.meshgrid(*([ghw] * (D - 1)), indexing="ij"), axis=0).ravel()
    what = w / np.linalg.norm(w)
    Q, _ = np.linalg.qr(np.column_stack([what, np.eye(D)[:, : D - 1] + 0.1]))
    X = z[:, None, None] * what + (Z @ Q[:, 1:].T)[None]
    weight = wg[:, None] * Wz[None]
    phi = hermite_features(X)
    f = np.broadcast_to(pb.link(np.sqrt(w @ w / D) * z)[:, None], weight.shape)
    y2 = f * f + pb.noise**2
    m = np.einsum("gz,gz,gzf->f", weight, f, phi)
    M4 = np.einsum("gz,gz,gzf,gzh->fh", weight, y2, phi, phi)
    S = (1.0 - 1.0 / N) * np.outer(m, m) + M4 / N
    return 0.5 * (np.sum(weight * y2) - 2.0 * m @ G @ m + np.trace(G.T @ S @ G))


def _monte_carlo(pb, G, P, rng, features="hermite2", tasks=None, N_test=None, sphere=False, batch=20_000):
    """Per-prompt losses ½(y_q − ŷ)² of ``P`` token-built prompts (context length ``N_test``): fresh Gaussian tasks,
    fresh tasks on the sphere ``|w|² = D`` (``sphere``), or tasks drawn uniformly from the rows of ``tasks``."""
    pbt = pb if N_test is None else linattn.Problem(pb.D, N_test, pb.noise, pb.link)
    out = []
    for start in range(0, P, batch):
        n = min(batch, P - start)
        W = None
        if tasks is not None:
            W = tasks[rng.integers(0, len(tasks), n)]
        elif sphere:
            W = rng.standard_normal((n, pb.D))
            W *= np.sqrt(pb.D) / np.linalg.norm(W, axis=1, keepdims=True)
        tok = sampling.sample_tokens(pbt, n, rng, w=W)
        phi = hermite_features(tok.X, features)
        s = np.einsum("pn,pnf->pf", tok.y, phi) / pbt.N
        yhat = np.einsum("pf,fg,pg->p", s, G, hermite_features(tok.xq, features))
        out.append(0.5 * (tok.yq - yhat) ** 2)
    return np.concatenate(out)


def _assert_within(losses, exact, label, k=4.0):
    mean, se = losses.mean(), losses.std(ddof=1) / np.sqrt(losses.size)
    assert abs(mean - exact) <= k * se, (f"{label}: MC {mean:.6g} ± {se:.2g} vs exact {exact:.6g} "
                                         f"({(mean - exact) / se:+.2f} s.e.)")


def _random_gamma(rng, F, D):
    return rng.standard_normal((F, F)) / F + 0.3 * np.eye(F) / D


# ----------------------------------------------------------------------------- exact checks
LINKS = ["linear", "tanh", "relu", "sign", "cubic", "hermite:2", lambda z: np.exp(-z * z)]


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("D", [3, 7])
def test_linear_features_are_the_library_test_error(link, D):
    """φ(x) = x: the reduced model, so pb.test_error(Γ) (the same closed form in another order: rounding only)."""
    rng = np.random.default_rng(D)
    pb = linattn.Problem(D, 6, 0.4, link)
    G = rng.standard_normal((D, D))
    assert kernel_test_error(pb, G, features="linear") == pytest.approx(pb.test_error(G), rel=1e-13)
    # and a model trained at N evaluated at N_test is the problem of context length N_test
    pb9 = linattn.Problem(D, 9, 0.4, link)
    assert kernel_test_error(pb, G, features="linear", N_test=9) == pytest.approx(pb9.test_error(G), rel=1e-13)


@pytest.mark.parametrize("link, D", [("linear", 2), ("tanh", 2), ("relu", 2), ("sign", 3), ("cubic", 3),
                                     (LINKS[-1], 3)])
def test_one_task_against_tensor_quadrature(link, D):
    """The closed-form m and M₄ (module docstring) against a quadrature of the feature map, one task at a time:
    agreement to 1e-12 (the quadratures are converged to links.TOL = 1e-12; observed ≤ 2e-14)."""
    rng = np.random.default_rng(10 + D)
    pb = linattn.Problem(D, 8, 0.3, link)
    F = n_features(D)
    G = rng.standard_normal((F, F))
    for w in rng.standard_normal((3, D)) * 1.2:
        exact = kernel_test_error(pb, G, pool=w[None], N_test=7)
        assert exact == pytest.approx(_quadrature_error(pb, G, w, 7), rel=1e-12)


@pytest.mark.parametrize("link", ["linear", "tanh", "relu", "cubic"])
@pytest.mark.parametrize("features", ["hermite2", "linear"])
def test_fresh_tasks_are_the_sphere_and_norm_average_of_the_pool_formula(link, features):
    """D = 3. Sphere task law: the fresh-task error equals the pool error over the icosahedron (a 5-design), to
    rounding. Gaussian tasks: it equals the icosahedron pool error integrated over r ~ χ²₃/3 by scipy's adaptive
    quad up to the 1e-17 upper quantile (an independent r rule; tolerance 1e-9 from quad's error estimate)."""
    D = 3
    rng = np.random.default_rng(5)
    F = n_features(D, features)
    G = rng.standard_normal((F, F))
    ico = _icosahedron()
    sphere = linattn.Problem(D, 6, 0.2, link, tasks=12, task_law="sphere")
    assert kernel_test_error(sphere, G, features, N_test=9) == pytest.approx(
        kernel_test_error(sphere, G, features, pool=np.sqrt(D) * ico, N_test=9), rel=1e-13)
    pb = linattn.Problem(D, 6, 0.2, link)
    law = stats.chi2(D, scale=1.0 / D)
    val, err = integrate.quad(lambda r: law.pdf(r) * kernel_test_error(pb, G, features, pool=np.sqrt(D * r) * ico,
                                                                       N_test=9),
                              0.0, law.isf(1e-17), epsabs=1e-12, epsrel=1e-12, limit=200)
    assert err < 1e-10 * abs(val)
    assert kernel_test_error(pb, G, features, N_test=9) == pytest.approx(val, rel=1e-9)


def test_special_values():
    """Γ = 0 gives V/2; a task w = 0 gives constant labels f(0) + σε, so m = 0, M₄ = (f(0)² + σ²) I and
    E_g = ½(f(0)² + σ²)(1 + ‖Γ‖²/N); the result is a Python float."""
    pb = linattn.Problem(4, 8, 0.3, "relu")
    F = n_features(4)
    out = kernel_test_error(pb, np.zeros((F, F)))
    assert type(out) is float and out == pytest.approx(0.5 * pb.label_variance, rel=1e-13)
    pb = linattn.Problem(4, 8, 0.3, lambda z: np.cos(z))     # f(0) = 1
    G = np.random.default_rng(0).standard_normal((F, F))
    assert kernel_test_error(pb, G, pool=np.zeros((1, 4)), N_test=5) == pytest.approx(
        0.5 * 1.09 * (1.0 + np.sum(G * G) / 5), rel=1e-13)


# ----------------------------------------------------------------------------- raw-token Monte Carlo
@pytest.mark.parametrize("link", ["linear", "tanh", "relu", "sign"])
def test_against_raw_tokens(link):
    """D = 4, N = 8, σ = 0.3 (F = 14). Within 4 s.e. of 100 000 token-built prompts each: a random Γ on fresh
    Gaussian tasks (N_test = N); the kernel learner's ridge solution (P = 400, λ = 0.01) on a pool of 3 tasks with
    N_test = 5, and on fresh tasks with N_test = 16. (Measured: within 0.34–1.54 s.e.; evaluating at N instead of
    N_test would miss by 12–72 s.e., and r = 1 instead of the χ²_D/D average of the task norm misses tanh by
    12.7–17 s.e.)"""
    D, N = 4, 8
    rng = np.random.default_rng(["linear", "tanh", "relu", "sign"].index(link))
    pb = linattn.Problem(D, N, 0.3, link)
    F = n_features(D)
    G = _random_gamma(rng, F, D)
    _assert_within(_monte_carlo(pb, G, 100_000, rng), kernel_test_error(pb, G), f"{link} random Γ fresh")
    trained = kernel_learner(pb, 400, 0.01, rng=rng).params["Gamma"]
    W = 1.2 * rng.standard_normal((3, D))
    _assert_within(_monte_carlo(pb, trained, 100_000, rng, tasks=W, N_test=5),
                   kernel_test_error(pb, trained, pool=W, N_test=5), f"{link} trained Γ pool N_test=5")
    _assert_within(_monte_carlo(pb, trained, 100_000, rng, N_test=16),
                   kernel_test_error(pb, trained, N_test=16), f"{link} trained Γ fresh N_test=16")


def test_against_raw_tokens_sphere_law_coupling_and_linear_features():
    """relu (f² is not even: the linear–quadratic coupling e₁, e₃ of M₄ is on), within 4 s.e. of 100 000 prompts
    each: fresh tasks on the sphere (a sphere-law pool problem's ICL error), D = 5, N_test = 4; one task w with
    Γ = 0.3 v vᵀ, v = (−ŵ, q(ŵŵᵀ)) (its L rows negated), D = 4, N_test = 3, where dropping the coupling would be off by
    20 s.e.; the linear map on a pool of 2 tasks, N_test = 9."""
    D = 5
    rng = np.random.default_rng(7)
    pb = linattn.Problem(D, 6, 0.2, "relu", tasks=4, task_law="sphere")
    F = n_features(D)
    G = _random_gamma(rng, F, D)
    G[:D, D:] += 0.3 * rng.standard_normal((D, F - D)) / D        # a strong linear–quadratic block
    _assert_within(_monte_carlo(pb, G, 100_000, rng, sphere=True, N_test=4), kernel_test_error(pb, G, N_test=4),
                   "relu sphere-law fresh")
    pb4 = linattn.Problem(4, 6, 0.2, "relu")
    w = rng.standard_normal(4)
    wh = w / np.linalg.norm(w)
    a, b = np.triu_indices(4, 1)
    v = np.concatenate([wh, wh**2 / np.sqrt(2.0), wh[a] * wh[b]])
    G4 = 0.3 * np.outer(v, v)
    G4[:4] *= -1.0
    _assert_within(_monte_carlo(pb4, G4, 100_000, rng, tasks=w[None], N_test=3),
                   kernel_test_error(pb4, G4, pool=w[None], N_test=3), "relu coupling, one task")
    GL = 0.3 * np.eye(D) + 0.1 * rng.standard_normal((D, D))
    W = 1.5 * rng.standard_normal((2, D))
    _assert_within(_monte_carlo(pb, GL, 100_000, rng, features="linear", tasks=W, N_test=9),
                   kernel_test_error(pb, GL, "linear", pool=W, N_test=9), "relu linear features pool")


@pytest.mark.slow
def test_against_raw_tokens_D10():
    """D = 10, N = 20 (F = 65), tanh, σ = 0.2: the kernel learner's ridge solution (P = 2000, λ = 0.01) on fresh
    tasks with N_test = 30 and on a pool of 5 tasks, within 4 s.e. of 40 000 token-built prompts each."""
    D = 10
    rng = np.random.default_rng(11)
    pb = linattn.Problem(D, 20, 0.2, "tanh")
    G = kernel_learner(pb, 2000, 0.01, rng=rng).params["Gamma"]
    _assert_within(_monte_carlo(pb, G, 40_000, rng, N_test=30, batch=4000), kernel_test_error(pb, G, N_test=30),
                   "D=10 trained fresh")
    W = rng.standard_normal((5, D))
    _assert_within(_monte_carlo(pb, G, 40_000, rng, tasks=W, batch=4000), kernel_test_error(pb, G, pool=W),
                   "D=10 trained pool")


# ----------------------------------------------------------------------------- input validation
_PB = linattn.Problem(3, 5, 0.1, "tanh")
ROWS = [
    Row("kernel_test_error", kernel_test_error,
        dict(pb=_PB, Gamma=np.eye(9) * 0.1, features="hermite2", pool=np.ones((2, 3)), N_test=4),
        dict(pb="problem", Gamma="array_shape", features="choice", pool="array_shape", N_test="posint")),
    Row("n_features", n_features, dict(D=3, features="linear"), dict(D="posint", features="choice")),
]


@pytest.mark.parametrize("case", sweep_cases(ROWS), ids=lambda c: c[0])
def test_bad_argument_raises(case):
    _, row, arg, value = case
    check_case(row, arg, value)


def test_bad_shapes_and_problems():
    G = np.eye(9)
    with pytest.raises(ValueError, match="Gamma"):
        kernel_test_error(_PB, np.eye(3))                          # the linear map's shape for hermite2
    with pytest.raises(ValueError, match="Gamma"):
        kernel_test_error(_PB, G, features="linear")
    with pytest.raises(ValueError, match="pool"):
        kernel_test_error(_PB, G, pool=np.ones((2, 4)))
    with pytest.raises(ValueError, match="pool"):
        kernel_test_error(_PB, G, pool=np.ones((0, 3)))
    with pytest.raises(ValueError, match="pool"):                 # tanh moments do not converge at |w|²/D = 10⁴
        kernel_test_error(_PB, G, pool=np.full((1, 3), 100.0))
    with pytest.raises(ValueError, match="pb"):
        kernel_test_error(linattn.Problem(3, 5, covariance=[1.0, 2.0, 3.0]), G)
    with pytest.raises(ValueError, match="Gamma"):
        kernel_test_error(_PB, np.full((9, 9), 1e200))             # overflows: refused, not inf


def test_n_test_is_the_same_problem_at_that_context_length():
    """N_test is the same problem at N = N_test in every exact error: pb.test_error (any link), pools.idg_error
    (a pool, the nonlinear link through φ(x) = x) and kernel_test_error (the Hermite features)."""
    import dataclasses

    pb = linattn.Problem(4, 8, 0.3, link="tanh", tasks=3)
    rng = np.random.default_rng(0)
    G = rng.standard_normal((4, 4)) * 0.2
    pool = pb.sample(5, rng=1).pool
    other = dataclasses.replace(pb, N=20)
    assert pb.test_error(G, N_test=20) == other.test_error(G)
    assert linattn.pools.idg_error(pb, pool, G, N_test=20) == linattn.pools.idg_error(other, pool, G)
    assert linattn.pools.idg_error(pb, pool, G) == kernel_test_error(pb, G, "linear", pool=pool)
    F = n_features(4, "hermite2")
    Gk = rng.standard_normal((F, F)) * 0.05
    assert kernel_test_error(pb, Gk, "hermite2", N_test=20) == kernel_test_error(other, Gk, "hermite2")
    with pytest.raises(ValueError, match="N_test"):
        pb.test_error(G, N_test=0)
    with pytest.raises(ValueError, match="N_test"):
        linattn.pools.idg_error(pb, pool, G, N_test=0)
    with pytest.raises(ValueError, match="features"):
        kernel_test_error(pb, G, features="cubic")


# ----------------------------------------------------------------------------- refusals and extreme arguments
REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("kernel-moments-D", lambda: kernel_errors.kernel_moments(linattn.Problem(2000, 8, 0.1)), "pb.D"),
    ("hermite-features-D0", lambda: kernel_errors.hermite_features(np.ones((2, 0))), "X"),
]) + refusals(name_as_word, [
    ("trace-direction", lambda: kernel_errors.trace_direction(10**9), "D"),
    ("hermite-features", lambda: linattn.kernel_learner.hermite_features(np.ones((4000, 1000))), "X"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_block_directions_D1_has_an_empty_Q_block():
    """D = 1 divided by √(1 − 1/D) = 0 (NaN); the Q⊥ block has dimension 0 there: its direction is 0."""
    U = block_directions(np.array([[1.0], [-1.0]]))
    assert U.shape == (2, 3, n_features(1))
    assert np.all(np.isfinite(U))
    np.testing.assert_array_equal(U[:, 2], 0.0)
    np.testing.assert_array_equal(U[:, 0, 0], [1.0, -1.0])


def test_block_directions_unit_rows_unchanged():
    w = np.array([[0.6, 0.8, 0.0]])
    U = block_directions(w)
    np.testing.assert_allclose(np.linalg.norm(U, axis=-1), 1.0, rtol=1e-14)



@pytest.mark.parametrize("features", ["hermite2", "linear"])
def test_context_features_are_the_label_weighted_mean_of_the_features(features):
    """The theory and the data builders take ``s_φ = (1/N) Σ_n y_n φ(x_n)`` from ``Xᵀ diag(y) X`` without the
    ``(P, N, F)`` features: equal to the definition to round-off (bit for bit for the linear map, the baseline that
    must equal the linear-attention model)."""
    rng = np.random.default_rng(3)
    for D, N, P in ((1, 3, 4), (6, 7, 5), (20, 40, 8)):
        X, y = rng.standard_normal((P, N, D)), rng.standard_normal((P, N))
        defined = np.einsum("pn,pnf->pf", y, hermite_features(X, features)) / N
        got = context_features(X, y, features)
        assert got.shape == defined.shape
        if features == "linear":
            np.testing.assert_array_equal(got, defined)
        np.testing.assert_allclose(got, defined, rtol=0, atol=1e-14 * np.abs(defined).max())
