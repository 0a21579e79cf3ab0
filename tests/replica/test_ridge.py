"""The exact ridge solver (:func:`replica.ridge`): the min-norm solution of rank-deficient data, zero labels
and contexts, extreme decays, prompts near the top of float64."""
import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

import linattn
import replica

PB = linattn.Problem(D=4, N=8, noise=0.1)
DATA = PB.sample(20, rng=0)
EPS = float(np.finfo(float).eps)
RAGGED = [[1.0], [1.0, 2.0]]


def _data():
    return PB.sample(12, rng=0)


def _theta(sol):
    return np.concatenate([sol.Gamma.ravel()] + ([sol.v] if sol.v is not None else []))


def _repeated(P_distinct, times, rng, labels=None):
    d = PB.sample(P_distinct, rng=rng)
    idx = np.tile(np.arange(P_distinct), times)
    yq = d.yq[idx] if labels is None else labels
    return linattn.Prompts(s=d.s[idx], xq=d.xq[idx], yq=yq, y2=d.y2[idx])


def _min_norm(data, model):
    """``F⁺y`` by numpy's SVD least squares; its error is ``O(κ ε)`` relative (κ the nonzero spectrum's condition
    number, printed by the caller's tolerance)."""
    F = data.features(model)
    theta, _, rank, sv = np.linalg.lstsq(F, data.yq, rcond=None)
    return theta, sv[0] / sv[rank - 1]


REFUSED = refusals(name_not_within_letters, [
    ("ridge-lam", lambda: replica.ridge(_data(), PB, RAGGED, model="full"), "lam"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("model", ["reduced", "full"])
@pytest.mark.parametrize("distinct, times", [(5, 5), (10, 3), (3, 3), (12, 4)])
def test_min_norm_with_repeated_prompts(model, distinct, times):
    """Repeated prompts (rank-deficient features, P >= M or P < M) give the min-norm solution F⁺y, on
    both routes; the before-fix CG route returned another interpolant (D = 4, 5 prompts x 5: |Γ| = 5.15 vs 2.71)."""
    data = _repeated(distinct, times, rng=distinct)
    sol = replica.ridge(data, PB, 0.0, model)
    ref, kappa = _min_norm(data, model)
    tol = 1e3 * kappa * EPS                    # backward-stable solvers: relative error <= O(κ ε)
    assert np.linalg.norm(_theta(sol) - ref) <= tol * np.linalg.norm(ref)
    assert sol.certified


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_min_norm_with_inconsistent_repeated_labels_is_lambda_limit(model):
    """Duplicated prompts with different labels: least squares of least norm, which is also the λ → 0
    limit of ridge (|θ_λ − θ⁺| <= (λ/e_min)|θ⁺|, e_min the least nonzero eigenvalue of H)."""
    labels = np.random.default_rng(0).standard_normal(48)
    data = _repeated(12, 4, rng=4, labels=labels)
    sol = replica.ridge(data, PB, 0.0, model)
    ref, kappa = _min_norm(data, model)
    assert np.linalg.norm(_theta(sol) - ref) <= 1e3 * kappa * EPS * np.linalg.norm(ref)
    F = data.features(model)
    e = np.linalg.eigvalsh(F.T @ F / data.P)
    e_min = e[e > 1e-10 * e[-1]][0]
    lam = 1e-9
    small = replica.ridge(data, PB, lam, model)
    assert np.linalg.norm(_theta(small) - ref) <= (2 * lam / e_min + 1e-7) * np.linalg.norm(ref)
    resid = data.yq - F @ ref
    assert sol.train == pytest.approx(0.5 * float(resid @ resid) / data.P, rel=1e-10)


@pytest.mark.parametrize("model", ["reduced", "full"])
def test_min_norm_with_queries_in_a_subspace(model):
    """Kronecker null space: every query with x_q[D-1] = 0, P >= M: the CG route at λ = 0 stays in
    span(z) ⊗ span(x_q) and returns F⁺y."""
    d = PB.sample(40, rng=1)
    xq = d.xq.copy()
    xq[:, -1] = 0.0
    data = linattn.Prompts(s=d.s, xq=xq, yq=d.yq, y2=d.y2)
    sol = replica.ridge(data, PB, 0.0, model)
    assert sol.method == "cg"
    ref, kappa = _min_norm(data, model)
    assert np.linalg.norm(_theta(sol) - ref) <= 1e3 * kappa * EPS * np.linalg.norm(ref)


@pytest.mark.parametrize("P", [5, 30])
@pytest.mark.parametrize("lam", [0.0, 0.1])
@pytest.mark.parametrize("model", ["reduced", "full"])
def test_zero_labels_give_zero(P, lam, model):
    """All-zero labels (ZeroDivisionError on the Gram route, ConvergenceError on CG before): θ* = 0."""
    d = PB.sample(P, rng=0)
    data = linattn.Prompts(s=d.s, xq=d.xq, yq=np.zeros(P), y2=d.y2)
    sol = replica.ridge(data, PB, lam, model)
    assert not np.any(_theta(sol)) and sol.train == 0.0 and sol.certified
    assert sol.test == pytest.approx(0.5 * (1 + PB.noise**2), rel=1e-15)


def test_zero_contexts_give_zero():
    """b = Fᵀy/P = 0 with nonzero labels (every s = 0): θ* = 0, not a ConvergenceError."""
    d = PB.sample(30, rng=1)
    data = linattn.Prompts(s=np.zeros_like(d.s), xq=d.xq, yq=d.yq)
    for lam in (0.0, 0.1):
        sol = replica.ridge(data, PB, lam)
        assert not np.any(sol.Gamma) and sol.train == pytest.approx(0.5 * np.mean(d.yq**2), rel=1e-14)


@pytest.mark.parametrize("P", [10, 30])
def test_ridge_huge_lambda_without_warning(P):
    """λ = 1e300: θ* = b/λ + O(λ⁻²), test error V/2 (the float32 Gram shift overflowed before, with a warning)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = replica.ridge(PB.sample(P, rng=1), PB, 1e300)
    assert sol.test == pytest.approx(0.5 * (1 + PB.noise**2), rel=1e-15)


def test_ridge_gram_route_at_huge_prompts():
    """Prompts with s ~ 1e90: the Gram route solves the rescaled system; with λ = 0.1 negligible against
    ‖K‖ ~ 1e180, Γ·1e90 is the min-norm solution of the unscaled data (to 1e-10 of its size). Beyond features of
    1e100 the prompts themselves are refused (their squares enter every route: 1e300 gave LinAlgError or NaN)."""
    big = linattn.Prompts(s=DATA.s * 1e90, xq=DATA.xq, yq=DATA.yq, y2=DATA.y2)
    sol = replica.ridge(big, PB, 0.1, method="gram")
    ref = replica.ridge(DATA, PB, 0.0)
    assert sol.certified and np.abs(sol.Gamma * 1e90 - ref.Gamma).max() <= 1e-10 * np.abs(ref.Gamma).max()
    with pytest.raises(ValueError, match=r"\bs\b"):
        linattn.Prompts(s=DATA.s * 1e300, xq=DATA.xq, yq=DATA.yq, y2=DATA.y2)


def test_ridge_at_a_vanishing_pair_reports_no_certificate():
    """λ = (1e-300, 1e-300) on the CG route: the solution is computed, and its certified bound, beyond float64, is
    reported as inf (certified False) instead of an OverflowError."""
    pb = linattn.Problem(3, 4, 0.1)
    r = replica.ridge(pb.sample(20, rng=0), pb, (1e-300, 1e-300), "full")
    assert np.isfinite(r.test) and r.test_bound == np.inf and not r.certified
