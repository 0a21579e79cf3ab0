"""Factorized parametrizations: chain rule, objectives, conservation laws, the attention forward pass."""
import numpy as np
import pytest
from helpers import (
    assert_refused,
    name_as_word,
    name_not_within_letters,
    name_not_within_words_or_after_a_dot,
    refusals,
)

import linattn
from linattn import _attention as attention
from linattn import _parametrizations as factorized
from linattn import _sampling as sampling
from linattn.factorized import Parametrization, dataset_objective, population_objective

D = 4
PB = linattn.Problem(D, 10, 0.2, covariance=[1.0, 0.5, 0.25, 0.1])
CASES = [("merged", 1, 1), ("value_kq", 1, 1), ("value_kq_modes", 1, 1), ("separate_kq", 3, 2), ("merged_heads", 2, 1)]


@pytest.mark.parametrize("kind, H, R", CASES)
def test_pullback_is_the_gradient(kind, H, R):
    """Chain rule against central differences of the population objective (rung 2; error O(ε²) ≈ 1e-10)."""
    par = Parametrization(kind, D, H, R)
    th = par.init(0.7, 1)
    obj = population_objective(PB)
    g = par.pullback(th, obj.gradient(par.gamma(th)))
    eps = 1e-5
    num = np.array([(obj.value(par.gamma(th + eps * e)) - obj.value(par.gamma(th - eps * e))) / (2 * eps)
                    for e in np.eye(par.n_params)])
    assert np.abs(g - num).max() < 1e-8
    assert par.join(**par.split(th)).tolist() == th.tolist()


def test_objectives_are_the_library_errors():
    """Population objective = Problem.test_error; dataset objective = train_energy (λ = 0), to 1e-13."""
    rng = np.random.default_rng(0)
    G = rng.standard_normal((D, D))
    Gs = rng.standard_normal((3, D, D))
    obj = population_objective(PB)
    assert abs(obj.value(G) - PB.test_error(G)) < 1e-13
    assert np.allclose(obj.values(Gs), [PB.test_error(g) for g in Gs], atol=1e-13)
    data = PB.sample(40, rng=1)
    dob = dataset_objective(data, PB)
    assert abs(dob.value(G) - linattn.train_energy(data, G, 0.0)) < 1e-13
    assert np.allclose(dob.values(Gs), [linattn.train_energy(data, g, 0.0) for g in Gs], atol=1e-13)
    iso = linattn.Problem(D, 10, 0.2)
    assert abs(population_objective(iso).value(G) - iso.test_error(G)) < 1e-13


def test_conserved_quantities_have_zero_derivative():
    """d/dt C(θ(t)) = ∇C · (−∇L) = 0 for every parametrization and any G (exact algebra, to 1e-12)."""
    rng = np.random.default_rng(3)
    for kind, H, R in CASES[1:]:
        par = Parametrization(kind, D, H, R)
        th = par.init(0.8, 2)
        G = rng.standard_normal((D, D))
        flow = -par.pullback(th, G)
        eps = 1e-6
        dC = (par.conserved(th + eps * flow) - par.conserved(th - eps * flow)) / (2 * eps)
        assert np.abs(dC).max() < 1e-7, kind
        assert par.conserved(th).size > 0


def test_value_kq_on_the_attention_forward_pass():
    """f(Z) = W_V Z Zᵀ W_KQ Z / N with the null blocks of Mainali & Teixeira at zero predicts p₂ sᵀ q₁ x_q
    (to 1e-12), and the population gradient of the null blocks vanishes: its Monte Carlo mean over
    2·10⁵ prompts is within 4 s.e. of 0, while the p₂ and q₁ gradients agree with the pullback of the
    exact objective within 4 s.e. (they are many s.e. away from 0)."""
    pb = linattn.Problem(3, 5, 0.1, covariance=[1.0, 0.6, 0.3])
    rng = np.random.default_rng(4)
    p2, q1 = 0.8, 0.3 * rng.standard_normal((3, 3))
    u = np.zeros(4)
    u[3] = p2
    W = np.zeros((4, 4))
    W[:3, :3] = q1
    tk = sampling.sample_tokens(pb, 200_000, rng=5)
    yhat, du, dW = attention.predict_value_kq(tk.embed(), u, W)
    pr = tk.prompts()
    assert np.allclose(yhat, p2 * np.einsum("pi,ij,pj->p", pr.s, q1, pr.xq), atol=1e-12)
    r = (yhat - pr.yq)[:, None]
    grads = {"p1": r * du[:, :3], "q2": r * dW[:, 3, :3], "p2": r[:, 0] * du[:, 3],
             "q1": (r[:, :, None] * dW[:, :3, :3]).reshape(-1, 9)}
    mean = {k: g.mean(0) for k, g in grads.items()}
    se = {k: g.std(0) / np.sqrt(len(g)) for k, g in grads.items()}
    for k in ("p1", "q2"):
        assert np.all(np.abs(mean[k]) < 4 * se[k]), k
    par = Parametrization("value_kq", 3)
    exact = par.pullback(np.concatenate([[p2], q1.ravel()]), population_objective(pb).gradient(p2 * q1))
    assert abs(mean["p2"] - exact[0]) < 4 * se["p2"] and abs(exact[0]) > 10 * se["p2"]
    assert np.all(np.abs(mean["q1"] - exact[1:]) < 4 * se["q1"])


def test_aligned_start_and_bad_kinds():
    par = Parametrization("value_kq_modes", 3)
    U = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    th = par.aligned([0.1, 0.2, 0.3], U)
    assert np.allclose(par.gamma(th), U @ np.diag([0.1, 0.2, 0.3]) @ U.T, atol=1e-14)
    assert np.allclose(par.conserved(th), 0.0, atol=1e-14)     # balanced
    with pytest.raises(ValueError, match="kind"):
        Parametrization("separate_kq", 3, heads=2).aligned([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="heads"):
        Parametrization("value_kq", 3, heads=2)
    with pytest.raises(ValueError, match="rank"):
        Parametrization("separate_kq", 3, rank=4)


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB_4_8 = linattn.Problem(4, 8, 0.1)
DATA = PB_4_8.sample(20, rng=0)


REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("objective-data-str", lambda: factorized.Objective(1.0, np.eye(2), data="x").value(np.eye(2)), "data"),
    ("objective-nothing", lambda: factorized.Objective(1.0, np.eye(2)).value(np.eye(2)), "left"),
    ("objective-left-only", lambda: factorized.Objective(1.0, np.eye(2), left=np.eye(2)), "right"),
    ("objective-data-D", lambda: factorized.Objective(1.0, np.eye(3), data=DATA).value(np.eye(3)), "data"),
    ("objective-data-and-left", lambda: factorized.Objective(1.0, np.eye(4), data=DATA, left=np.eye(4)), "left"),
    ("apply-overflow", lambda: factorized.dataset_objective(DATA).apply(np.ones((4, 4)) * 1e307), "Gamma"),
    ("objective-empty", lambda: factorized.Objective(1.0, np.zeros((0, 0))), "B"),
    ("pullback-batch", lambda: Parametrization("merged", 2).pullback(np.ones((3, 4)), np.eye(2)), "theta"),
    ("pullback-batch-modes", lambda: Parametrization("value_kq_modes", 2).pullback(np.ones((3, 8)), np.eye(2)),
     "theta"),
    ("pullback-batch-heads", lambda: Parametrization("separate_kq", 2, heads=2).pullback(
        np.ones((3, Parametrization("separate_kq", 2, heads=2).n_params)), np.eye(2)), "theta"),
    ("join-unknown", lambda: Parametrization("merged", 2).join(Gamma=np.eye(2), junk=5), "blocks"),
]) + refusals(name_as_word, [
    ("objective-nan", lambda: factorized.population_objective(PB_4_8).value(np.full((4, 4), np.nan)), "Gamma"),
    ("objective-shape", lambda: factorized.population_objective(PB_4_8).gradient(np.ones((3, 3))), "Gamma"),
    ("objective-y2", lambda: factorized.Objective(np.nan, np.eye(4)), "y2"),
    ("objective-B", lambda: factorized.Objective(1.0, np.ones((2, 3))), "B"),
]) + refusals(name_not_within_letters, [
    # Objective.values refused its stack under the name of the single-matrix methods, "Gamma"
    ("objective-values-nan", lambda: population_objective(PB_4_8).values(np.full((2, 4, 4), np.nan)), "Gammas"),
    ("objective-values-shape", lambda: population_objective(PB_4_8).values(np.ones(48)), "Gammas"),
    ("objective-values-overflow", lambda: population_objective(PB_4_8).values(np.full((2, 4, 4), 1e300)), "Gammas"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_parametrization_memory_guard():
    with pytest.raises(ValueError, match=r"heads=1000000000.*too large.*GiB"):
        factorized.Parametrization("separate_kq", 3, heads=10**9)
    with pytest.raises(ValueError, match=r"D=1000000.*too large.*GiB"):
        factorized.Parametrization("merged", 10**6)


def test_aligned_refuses_non_orthogonal_basis():
    par = factorized.Parametrization("value_kq_modes", 2)
    with pytest.raises(ValueError, match="basis"):
        par.aligned([1.0, 2.0], [[1.0, 1.0], [0.0, 1.0]])
    U = np.array([[0.6, -0.8], [0.8, 0.6]])
    theta = par.aligned([1.0, 2.0], U)
    np.testing.assert_allclose(par.gamma(theta), U @ np.diag([1.0, 2.0]) @ U.T, atol=1e-14)


def test_conserved_quantities_of_an_empty_batch():
    """``conserved`` of an empty batch of parameters raised numpy's "cannot reshape array of size 0 into shape
    (0,newaxis)"; it is the empty batch of the quantities, as ``split`` and ``gamma`` give."""
    for kind, kw in (("value_kq_modes", {}), ("separate_kq", {"heads": 2, "rank": 2})):
        par = Parametrization(kind, 3, **kw)
        one = par.conserved(np.full(par.n_params, 0.1))
        out = par.conserved(np.empty((0, par.n_params)))
        assert out.shape == (0,) + one.shape


def test_factorized_products_that_overflow_name_their_argument():
    par = linattn.factorized.Parametrization("value_kq", 3)
    big = np.full(par.n_params, 1e200)
    for call, name, method in ((lambda: par.init(1e300, rng=0), "scale", "init"),
                               (lambda: par.gamma(big), "theta", "gamma"),
                               (lambda: par.conserved(big), "theta", "conserved"),
                               (lambda: par.pullback(big, 1e200 * np.eye(3)), "theta", "pullback")):
        called = rf"linattn\.factorized\.Parametrization\.{method}: "
        with pytest.raises(ValueError, match=f"^{called}{name} must be small enough"):
            call()
    with pytest.raises(ValueError, match=r"^linattn\.relative_gap: test must be an array of the shape of train"):
        linattn.relative_gap([1.0, 2.0], [1.0, 2.0, 3.0])


def test_checked_names_a_bad_dimension():
    """Parametrization.checked compared D as given: an array D raised numpy's 'truth value of an array is
    ambiguous'."""
    par = Parametrization("merged", 3)
    assert Parametrization.checked(par, 3) is par
    for D in (np.ones(3), np.array([]), "x", 0):
        with pytest.raises(ValueError, match=r"^linattn\.factorized\.Parametrization\.checked: D must be an integer"):
            Parametrization.checked(par, D)
