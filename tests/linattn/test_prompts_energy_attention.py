"""Prompts, features, energies and the real attention forward pass (rung 2 and error paths)."""
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
from linattn import Problem, Prompts, train_energy, train_gradient
from linattn import _attention as attention


def test_prompts_validation():
    s = np.ones((3, 2))
    with pytest.raises(ValueError, match="xq"):
        Prompts(s=s, xq=np.ones((3, 3)), yq=np.ones(3))
    with pytest.raises(ValueError, match="yq"):
        Prompts(s=s, xq=np.ones((3, 2)), yq=np.ones(4))
    with pytest.raises(ValueError, match="s"):
        Prompts(s=np.ones(3), xq=np.ones((3, 2)), yq=np.ones(3))
    with pytest.raises(ValueError, match="xq"):
        Prompts(s=s, xq=np.full((3, 2), np.inf), yq=np.ones(3))
    with pytest.raises(ValueError, match="y2"):
        Prompts(s=s, xq=s, yq=np.ones(3), y2=np.array([1.0, np.nan, 1.0]))
    d = Prompts(s=s, xq=s, yq=np.ones(3))
    with pytest.raises(ValueError, match="y2"):
        d.features("full")
    with pytest.raises(ValueError, match="model"):
        d.features("huge")
    with pytest.raises(ValueError, match="Gamma"):
        train_energy(d, np.eye(3), 0.1)
    with pytest.raises(ValueError, match="lam"):
        train_energy(d, np.eye(2), -0.1)
    assert not d.s.flags.writeable


def test_features_gram_and_predictions(rng):
    pb = Problem(4, 6, 0.3)
    d = pb.sample(50, rng)
    G = rng.standard_normal((4, 4))
    v = rng.standard_normal(4)
    for model in ("reduced", "full"):
        F = d.features(model)
        assert F.shape == (50, pb.n_params(model))
        assert np.allclose(d.gram(model), F @ F.T / 50, rtol=1e-12, atol=1e-14)
        theta = linattn.pack(G, v if model == "full" else None)
        assert np.allclose(F @ theta, d.predict(G, v if model == "full" else None), rtol=1e-12)


def test_gradient_against_finite_differences(rng):
    pb = Problem(3, 5, 0.2)
    d = pb.sample(40, rng)
    G, v, lam = rng.standard_normal((3, 3)), rng.standard_normal(3), 0.3
    g = train_gradient(d, G, lam, v)
    h = 1e-6
    for i, j in [(0, 0), (1, 2), (2, 1)]:
        E = np.zeros((3, 3))
        E[i, j] = h
        fd = (train_energy(d, G + E, lam, v) - train_energy(d, G - E, lam, v)) / (2 * h)
        assert fd == pytest.approx(g.dGamma[i, j], rel=1e-6, abs=1e-9)
    e = np.zeros(3)
    e[1] = h
    fd = (train_energy(d, G, lam, v + e) - train_energy(d, G, lam, v - e)) / (2 * h)
    assert fd == pytest.approx(g.dv[1], rel=1e-6, abs=1e-9)


def test_forward_pass_equals_reduced_prediction(rng):
    pb = Problem(5, 9, 0.4)
    tok = linattn.sample_tokens(pb, 30, rng)
    Z = tok.embed()
    assert Z.shape == (30, 6, 10)
    W = rng.standard_normal((6, 6))
    W11, W12, W21, W22 = attention.blocks(W)
    d = tok.prompts()
    expected = d.predict(W11, W21)
    assert np.allclose(attention.predict(Z, W), expected, rtol=1e-11, atol=1e-12)
    # W12 and W22 drop out of the prediction
    W2 = W.copy()
    W2[:5, 5] = 7.0
    W2[5, 5] = -3.0
    assert np.allclose(attention.predict(Z, W2), expected, rtol=1e-11, atol=1e-12)


def test_prediction_gradient_from_forward_pass(rng):
    pb = Problem(3, 4, 0.1)
    Z = linattn.sample_tokens(pb, 5, rng).embed()
    W = rng.standard_normal((4, 4))
    grad = attention.prediction_gradient(Z)
    h = 1e-6
    for j, k in [(0, 0), (3, 1), (2, 3), (3, 3)]:
        E = np.zeros((4, 4))
        E[j, k] = h
        fd = (attention.predict(Z, W + E) - attention.predict(Z, W - E)) / (2 * h)
        assert np.allclose(fd, grad[:, j, k], rtol=1e-6, atol=1e-9)
    assert np.all(grad[:, :, 3] == 0.0)  # W12 and W22 columns: exactly zero


def test_pack_unpack_and_contrast_ratio(rng):
    G, v = rng.standard_normal((3, 3)), rng.standard_normal(3)
    th = linattn.pack(G, v)
    G2, v2 = linattn.unpack(th, 3, "full")
    assert np.array_equal(G, G2) and np.array_equal(v, v2)
    assert linattn.contrast_ratio(np.eye(4) * 2.5) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="theta"):
        linattn.unpack(th, 3, "reduced")


# ----------------------------------------------------------------------------- refusals and extreme arguments
PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)


def _data():
    return PB.sample(12, rng=0)


REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("train-gradient", lambda: linattn.train_gradient(DATA, np.eye(4) * 1e10, 1e300), "lam"),
    ("train-gradient-v", lambda: linattn.train_gradient(DATA, np.eye(4), 0.1, v=np.ones(4) * 1e307), "v"),
    ("value-kq-Z", lambda: attention.predict_value_kq(np.ones((2, 5, 4)) * 1e200, np.ones(5), np.eye(5)), "Z"),
    ("value-kq-W", lambda: attention.predict_value_kq(np.ones((2, 5, 4)), np.ones(5) * 1e300, np.eye(5) * 1e300),
     "value_row"),
    ("embed-no-context", lambda: attention.embed(np.ones((2, 0, 3)), np.ones((2, 0)), np.ones((2, 3))), "X"),
    ("embed-no-dimension", lambda: attention.embed(np.ones((2, 3, 0)), np.ones((2, 3)), np.ones((2, 0))), "X"),
    # a zero-stride view is refused before it is copied
    ("embed-broadcast", lambda: attention.embed(np.broadcast_to(np.zeros(1), (10**6, 10**3, 10)),
                                                np.broadcast_to(np.zeros(1), (10**6, 10**3)),
                                                np.broadcast_to(np.zeros(1), (10**6, 10))), "X"),
    ("take-zero-step", lambda: DATA.take(slice(0, 5, 0)), "index"),
    ("take-str-slice", lambda: DATA.take(slice("a", 5)), "index"),
]) + refusals(name_as_word, [
    ("prediction-gradient", lambda: linattn.attention.prediction_gradient(np.ones((2, 5, 4)) * 1e200), "Z"),
    ("prompts-1e300", lambda: linattn.Prompts(s=DATA.s * 1e300, xq=DATA.xq, yq=DATA.yq, y2=DATA.y2), "s"),
]) + refusals(name_not_within_letters, [
    ("prompts-take-index", lambda: _data().take([[0], [1, 2]]), "index"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_ragged_lam_and_oversized_queries_are_named():
    """A ragged lam reached train_energy and train_gradient as numpy's 'setting an array element with a sequence',
    and Prompts blamed s when the huge factor of the features s x_qᵀ was xq."""
    pb = Problem(3, 4, 0.1)
    data = pb.sample(5, rng=0)
    for fn in (train_energy, train_gradient):
        with pytest.raises(ValueError, match=rf"^linattn\.{fn.__name__}: lam must be .*uneven shape"):
            fn(data, np.eye(3), [[1.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match=r"^linattn\.Prompts: xq must be values whose features"):
        Prompts(data.s, data.xq * 1e200, data.yq, data.y2)
    with pytest.raises(ValueError, match=r"^linattn\.Prompts: s must be values whose features"):
        Prompts(data.s * 1e200, data.xq, data.yq, data.y2)
    with pytest.raises(ValueError, match=r"^linattn\.Prompts: task must be"):
        Prompts(data.s, data.xq, data.yq, pool=np.ones((2, 3)), task=[[0], [0, 1]])
