"""replica.ridge's mixed-precision routes against dense float64 solves (replica/ridge.py module docstring).

CG: float32 Hessian–vector products choose the directions, the stopping rule is checked on the float64 residual,
so ``‖θ − θ*‖ ≤ error_bound`` must hold as proven — at ``rtol = 1e-10``, far below the float32 rounding (~1e-7) that a
solver certifying with float32 products would leave. Gram: a float32 Cholesky factor refined in float64 to the
backward error ``√P ε₆₄`` of a float64 direct solve. Tolerances: the dense reference's own error is at most
``8 cond ε₆₄`` relative (a backward-stable solve, ``cond`` computed in the test), and the Gram route's forward error
follows from its backward error by ``‖δγ‖ ≤ cond · 2√P ε₆₄ ‖γ‖``.
"""
import importlib

import numpy as np
import pytest

import linattn
import replica
from linattn import ConvergenceError

ridge_module = importlib.import_module("replica._ridge")       # the module (replica.ridge is the function)

EPS = np.finfo(np.float64).eps


def _dense(d, model, lam):
    """θ* by numpy on the M × M normal equations; returns θ*, cond(A) and the per-parameter decays."""
    F = d.features(model)
    P, M = F.shape
    D = d.D
    lv = np.full(M, lam if np.ndim(lam) == 0 else lam[0], dtype=float)
    if np.ndim(lam):
        lv[D * D:] = lam[1]
    A = F.T @ F / P + np.diag(lv)
    ev = np.linalg.eigvalsh(A)
    return np.linalg.solve(A, F.T @ d.yq / P), ev[-1] / ev[0], lv


def _theta(sol):
    return np.concatenate([sol.Gamma.ravel()] + ([sol.v] if sol.v is not None else []))


@pytest.mark.parametrize("D,tasks,tau,model,ridge_L", [(10, 2, 2.0, "full", 1e-4), (10, 10, 10.0, "full", 1e-4),
                                                       (10, None, 1.5, "reduced", 1e-3), (12, 40, 3.0, "full", 1e-2)])
def test_cg_with_float32_products_meets_its_certified_bound(D, tasks, tau, model, ridge_L):
    """The peer's per-block decay (λ_L/D, λ_L) (full) or λ_L/D (reduced), pools of K < D and K > D tasks."""
    pb = linattn.Problem(D, 4 * D, 0.1, tasks=tasks, task_law="sphere" if tasks else "gaussian")
    d = pb.sample(int(tau * D * D), rng=(11, D))
    lam = (ridge_L / D, ridge_L) if model == "full" else ridge_L / D
    sol = replica.ridge(d, pb, lam, model, rtol=1e-10)
    ref, cond, _ = _dense(d, model, lam)
    assert sol.method == "cg" and sol.certified and sol.error_bound <= 1e-10 * np.linalg.norm(_theta(sol))
    err = np.linalg.norm(_theta(sol) - ref)
    assert err <= sol.error_bound + 8 * cond * EPS * np.linalg.norm(ref), (err, sol.error_bound, cond)


@pytest.mark.parametrize("scale", [1e-25, 1e25])
def test_cg_float32_products_survive_extreme_data_scales(scale):
    """Without the power-of-two scaling the float32 products under- or overflow (|s x_q|² ~ scale⁴)."""
    D = 8
    pb = linattn.Problem(D, 20, 0.2, tasks=5)
    d0 = pb.sample(3 * (D * D + D), rng=4)
    d = linattn.Prompts(s=d0.s * scale, xq=d0.xq * scale, yq=d0.yq, y2=d0.y2 * scale, pool=d0.pool, task=d0.task)
    lam = (1e-3 * scale**4, 1e-2 * scale**4)
    sol = replica.ridge(d, pb, lam, "full", rtol=1e-10)
    ref, cond, _ = _dense(d, "full", lam)
    assert sol.certified
    assert np.linalg.norm(_theta(sol) - ref) <= sol.error_bound + 8 * cond * EPS * np.linalg.norm(ref)


def test_float32_product_is_the_float64_product_to_float32_rounding():
    """|fl₃₂(FᵀFθ) − FᵀFθ| ≤ γ_n (|Z|ᵀ diag(|Z||Θ||X_q| row sums) |X_q|)/P elementwise, n = 2D + 2 + P (Higham's
    bound for the longest accumulation, plus the rounding of the data to float32; the power-of-two scalings are
    exact)."""
    D = 9
    pb = linattn.Problem(D, 30, 0.3, tasks=4)
    d = pb.sample(700, rng=8)
    op = ridge_module._Operator(d, "full", 0.01, 0.1)
    theta = np.random.default_rng(1).standard_normal(D * D + D)
    exact = op.hess(theta)
    fast = ridge_module._Single(op.ZT, op.XT)(theta)
    u32 = np.finfo(np.float32).eps / 2
    n = 2 * D + 2 + d.P
    absu = np.einsum("pd,pd->p", np.abs(op.ZT.T) @ np.abs(theta.reshape(-1, D)), np.abs(op.X))
    bound = n * u32 / (1 - n * u32) * (np.abs(op.ZT.T).T @ (absu[:, None] * np.abs(op.X))).ravel() / d.P
    assert np.all(np.abs(fast - exact) <= bound)
    assert np.max(np.abs(fast - exact)) > 0            # the float32 path is really taken


def test_preconditioner_change_of_variables():
    """θ = Qψ, r' = Qᵀr, QᵀAQ = H' + I (ridge) with H' the Hessian of the transformed features, and the two norms
    computed without forming Qψ and Q⁻ᵀr' — against dense matrices, to float64 rounding (‖Q‖ ‖Q⁻¹‖ ≲ 10³ here)."""
    D = 6
    pb = linattn.Problem(D, 12, 0.2, tasks=3)
    d = pb.sample(200, rng=1)
    lam = (1e-3, 0.05)
    op = ridge_module._Operator(d, "full", *lam)
    pre = ridge_module._Preconditioner(op)
    M = D * D + D
    Q = np.stack([pre.Q(e) for e in np.eye(M)], axis=1)
    assert np.allclose(np.stack([pre.Qt(e) for e in np.eye(M)], axis=1), Q.T, rtol=0, atol=1e-12 * np.abs(Q).max())
    F = d.features("full")
    A = F.T @ F / d.P + np.diag(op.lam)
    Fp = F @ Q
    Ht = ridge_module._Single(pre.Wz @ op.ZT, pre.Ux.T @ op.XT)
    psi = np.random.default_rng(2).standard_normal(M)
    assert np.allclose(Q.T @ A @ Q, Fp.T @ Fp / d.P + np.eye(M), rtol=0, atol=1e-10)
    assert np.allclose(Ht(psi), Fp.T @ (Fp @ psi) / d.P, rtol=0, atol=1e-5 * np.abs(Fp.T @ (Fp @ psi) / d.P).max())
    assert pre.norm_theta(psi) == pytest.approx(np.linalg.norm(Q @ psi), rel=1e-12)
    assert pre.norm_residual(psi) == pytest.approx(np.linalg.norm(np.linalg.solve(Q.T, psi)), rel=1e-10)
    assert np.all(pre.inv > 0) and np.all(pre.inv <= 1)  # 1/(e_b ⊗ e_x + 1): SPD, and ≤ 1 as QᵀAQ ⪰ I


def test_cg_turns_to_float64_when_float32_directions_fail(monkeypatch):
    """Corrupted float32 products (30 % relative noise): a segment that fails to halve the float64 residual switches
    the iteration to float64, which then certifies; without the switch CG would not converge in maxiter."""
    D = 8
    pb = linattn.Problem(D, 16, 0.1, tasks=3)
    d = pb.sample(4 * (D * D + D), rng=2)
    lam = (1e-4 / D, 1e-4)
    single, hess = ridge_module._Single.__call__, ridge_module._Operator.hess
    noise = np.random.default_rng(0)
    calls = {"single": 0, "double": 0}

    def corrupted(self, theta):
        calls["single"] += 1
        out = single(self, theta)
        return out * (1 + 0.3 * noise.standard_normal(out.size))

    def counted(self, theta):
        calls["double"] += 1
        return hess(self, theta)

    monkeypatch.setattr(ridge_module._Single, "__call__", corrupted)
    monkeypatch.setattr(ridge_module._Operator, "hess", counted)
    sol = replica.ridge(d, pb, lam, "full", rtol=1e-10, maxiter=300)
    ref, cond, _ = _dense(d, "full", lam)
    assert sol.certified and calls["single"] >= 1 and calls["double"] > 10
    assert np.linalg.norm(_theta(sol) - ref) <= sol.error_bound + 8 * cond * EPS * np.linalg.norm(ref)


def test_cg_raises_when_products_are_not_finite(monkeypatch):
    """A float32 product that is not finite is recomputed in float64; a float64 direction with pᵀAp <= 0 raises."""
    D = 6
    pb = linattn.Problem(D, 12, 0.1)
    d = pb.sample(3 * D * D, rng=5)
    monkeypatch.setattr(ridge_module._Single, "__call__", lambda self, theta: np.full(theta.size, np.nan))
    monkeypatch.setattr(ridge_module._Operator, "hess", lambda self, theta: -2.0 * theta / np.abs(theta).max())
    with pytest.raises(ConvergenceError, match="positive definite"):
        replica.ridge(d, pb, 0.01, "reduced")


def _gram_case(D, P, tasks, model, lam, seed):
    pb = linattn.Problem(D, 3 * D, 0.2, tasks=tasks, task_law="sphere" if tasks else "gaussian")
    d = pb.sample(P, rng=(seed, D))
    lg, lv = (lam, lam) if np.ndim(lam) == 0 else lam
    ratio = lg / lv
    Z = d.s if model == "reduced" else np.concatenate([d.s, np.sqrt(ratio) * d.y2[:, None]], axis=1)
    K = (Z @ Z.T) * (d.xq @ d.xq.T) / P + lg * np.eye(P)
    ev = np.linalg.eigvalsh(K)
    rhs = d.yq / P
    gam = np.linalg.solve(K, rhs)
    F = d.features(model)
    scale_v = np.ones(F.shape[1])
    scale_v[D * D:] = ratio
    FT = F.T * scale_v[:, None]                   # θ = Λ_r⁻¹ Fᵀ γ
    return pb, d, FT @ gam, ev[-1] / ev[0], np.linalg.norm(FT, 2) * np.linalg.norm(gam), ev[-1], rhs, gam


@pytest.mark.parametrize("D,P,tasks,model,lam", [(12, 70, 3, "full", (1e-4 / 12, 1e-4)),
                                                 (12, 140, 40, "full", (1e-3, 0.1)), (10, 60, None, "reduced", 1e-5),
                                                 (16, 200, 16, "full", (1e-6, 1e-4))])
def test_gram_float32_factor_with_float64_refinement_is_a_float64_solve(D, P, tasks, model, lam):
    """Backward error ≤ √P ε₆₄ (the reported residual), hence forward error ≤ cond · 2√P ε₆₄ (+ the reference's)."""
    pb, d, ref, cond, scale, knorm, rhs, gam = _gram_case(D, P, tasks, model, lam, 3)
    sol = replica.ridge(d, pb, lam, model)
    assert sol.method == "gram"
    assert sol.residual * np.linalg.norm(rhs) <= np.sqrt(P) * EPS * (knorm * np.linalg.norm(gam) + np.linalg.norm(rhs))
    err = np.linalg.norm(_theta(sol) - ref)
    assert err <= cond * (2 * np.sqrt(P) + 8) * EPS * scale * 1.01, (err, cond, scale)


def test_gram_falls_back_to_float64_cholesky(monkeypatch):
    """A failed float32 factor (spotrf info > 0) sends the Gram route to the float64 factor: same solution."""
    lam = (1e-4 / 10, 1e-4)
    pb, d, ref, cond, scale, *_ = _gram_case(10, 80, 4, "full", lam, 6)
    monkeypatch.setattr(ridge_module.lapack, "spotrf", lambda a, **kw: (a, 1))
    sol = replica.ridge(d, pb, lam, "full")
    assert sol.method == "gram" and sol.residual < 1e-12
    assert np.linalg.norm(_theta(sol) - ref) <= cond * 16 * EPS * scale


def test_gram_refinement_refuses_a_numerically_singular_system():
    """Duplicated prompts and λ far below float32 resolution: the float32 factor cannot serve (refinement stagnates or
    the factor fails), _gram_mixed declines, and ridge still returns the float64 solution."""
    D = 8
    pb = linattn.Problem(D, 16, 0.1, tasks=3)
    d0 = pb.sample(30, rng=9)
    idx = np.r_[np.arange(30), np.arange(30)]
    d = linattn.Prompts(s=d0.s[idx], xq=d0.xq[idx], yq=d0.yq[idx], y2=d0.y2[idx], pool=d0.pool, task=d0.task[idx])
    lg = 1e-13
    op = ridge_module._Operator(d, "reduced", lg, lg)
    assert ridge_module._gram_mixed(op, op.ZT.T.copy(), lg, 1.0, d.yq / d.P) is None
    sol = replica.ridge(d, pb, lg, "reduced", method="gram")
    assert sol.method == "gram" and sol.residual < 1e-6


def test_auto_falls_back_to_the_gram_route_when_cg_cannot_certify(monkeypatch):
    """A CG that stops at maxiter (its certificate below float64's resolution: OpenBLAS's Sandybridge kernels met it
    at λ = 1e-9 on a rank-deficient H) hands the same system to the Gram route under method='auto'; asked for
    explicitly, CG still raises."""
    pb = linattn.Problem(4, 8, 0.1)
    d = pb.sample(60, rng=2)
    ref = replica.ridge(d, pb, 1e-3, "reduced", method="gram")

    def stuck(*args, **kwargs):
        raise ridge_module._NotReached("did not reach")
    monkeypatch.setattr(ridge_module, "_cg", stuck)
    sol = replica.ridge(d, pb, 1e-3, "reduced")
    assert sol.method == "gram" and np.array_equal(sol.Gamma, ref.Gamma) and sol.certified
    with pytest.raises(ConvergenceError, match="did not reach"):
        replica.ridge(d, pb, 1e-3, "reduced", method="cg")
