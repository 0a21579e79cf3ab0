"""The numerics room (linattn._numerics): the certified CG and Anderson mixing on problems with known solutions."""
import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

from linattn import ConvergenceError
from linattn._numerics.cg import NotCertified, certified_cg
from linattn._numerics.fixed_point import anderson


def _spd(n, lam, rng, cond=1e4):
    """``H + λ I`` with ``H`` PSD of condition ``cond`` (a known spectrum) and its exact inverse."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    h = np.geomspace(1.0, 1.0 / cond, n)
    h[-n // 4:] = 0.0                                  # a rank-deficient H: only λ makes A definite
    A = (Q * (h + lam)) @ Q.T
    return A, Q, h + lam


@pytest.mark.parametrize("lam", [1e-6, 1e-3, 1.0, 1e6])
@pytest.mark.parametrize("precondition", ["none", "jacobi", "exact"])
def test_the_certificate_holds(lam, precondition):
    """‖x − x*‖ <= rtol ‖x‖ (the promise of the stopping rule), for any SPD preconditioner."""
    rng = np.random.default_rng(1)
    A, Q, e = _spd(40, lam, rng)
    b = rng.standard_normal(40)
    exact = Q @ ((Q.T @ b) / e)
    pre = {"none": lambda r: r, "jacobi": lambda r: r / np.diag(A),
           "exact": lambda r: Q @ ((Q.T @ r) / e)}[precondition]
    rtol = 1e-8
    sol = certified_cg(lambda p: A @ p, b, pre, lam, rtol, 10_000)
    assert np.linalg.norm(sol.x - exact) <= rtol * np.linalg.norm(sol.x) * (1 + 1e-6)
    assert sol.residual == pytest.approx(np.linalg.norm(b - A @ sol.x), rel=1e-12, abs=1e-300)
    if precondition == "exact":                       # the exact inverse: one step
        assert sol.iterations == 1


def test_a_fast_product_is_used_while_it_helps_and_the_certificate_is_float64():
    rng = np.random.default_rng(2)
    A, Q, e = _spd(60, 1e-4, rng)
    b = rng.standard_normal(60)
    calls = {"fast": 0, "exact": 0}

    def fast(p):
        calls["fast"] += 1
        return (A.astype(np.float32) @ p.astype(np.float32)).astype(np.float64)

    def exact(p):
        calls["exact"] += 1
        return A @ p

    sol = certified_cg(exact, b, lambda r: r, 1e-4, 1e-8, 10_000, fast_apply=fast)
    assert calls["fast"] > 0
    truth = Q @ ((Q.T @ b) / e)
    assert np.linalg.norm(sol.x - truth) <= 1e-8 * np.linalg.norm(sol.x) * (1 + 1e-6)


def test_zero_right_hand_side_and_lambda_zero():
    A, Q, e = _spd(10, 0.0, np.random.default_rng(3))
    sol = certified_cg(lambda p: A @ p, np.zeros(10), lambda r: r, 0.0, 1e-8, 100)
    assert sol.iterations == 0 and not sol.x.any()
    b = A @ np.random.default_rng(4).standard_normal(10)      # in the range of the singular A: min-norm solution
    sol = certified_cg(lambda p: A @ p, b, lambda r: r, 0.0, 1e-8, 1000)
    assert np.linalg.norm(b - A @ sol.x) <= 1e-13 * np.linalg.norm(b) * (1 + 1e-6) + 1e-15 * np.linalg.norm(b)
    assert np.linalg.norm(sol.x - np.linalg.pinv(A) @ b) <= 1e-6 * np.linalg.norm(sol.x)


def test_refusals_name_the_solver():
    A = -np.eye(3)
    with pytest.raises(ConvergenceError, match="mine: .*pᵀAp"):
        certified_cg(lambda p: A @ p, np.ones(3), lambda r: r, 1.0, 1e-8, 10, name="mine")
    A, _, _ = _spd(50, 1e-8, np.random.default_rng(5), cond=1e8)
    with pytest.raises(NotCertified) as err:
        certified_cg(lambda p: A @ p, np.ones(50), lambda r: r, 1e-8, 1e-12, 3, name="mine")
    assert err.value.iterations == 3 and err.value.residual > err.value.target > 0


def test_anderson_finds_a_known_fixed_point_faster_than_the_plain_iteration():
    """x = cos(x) componentwise (the Dottie number) and a linear contraction with a known solution."""
    dottie = anderson(np.cos, np.zeros(3), 1e-13, 200)
    assert dottie.converged and np.allclose(dottie.x, 0.7390851332151607, rtol=0, atol=1e-12)
    rng = np.random.default_rng(6)
    M = rng.standard_normal((20, 20))
    M *= 0.95 / np.abs(np.linalg.eigvals(M)).max()            # spectral radius 0.95: the plain iteration is slow
    c = rng.standard_normal(20)
    truth = np.linalg.solve(np.eye(20) - M, c)
    fp = anderson(lambda x: M @ x + c, np.zeros(20), 1e-12, 2000)
    assert fp.converged and np.abs(fp.x - truth).max() <= 1e-9 * np.abs(truth).max()
    plain = anderson(lambda x: M @ x + c, np.zeros(20), 1e-12, 2000, depth=1)
    assert fp.iterations < plain.iterations


def test_anderson_keeps_the_iterates_valid_and_reports_non_convergence():
    """A matrix fixed point X = (I + X⁻¹)⁻¹ + B kept symmetric positive definite; a map without a fixed point."""
    B = np.diag([1.0, 2.0, 3.0])
    seen = []

    def valid(X):
        ok = bool(np.all(np.linalg.eigvalsh(X) > 0))
        seen.append(ok)
        return ok

    fp = anderson(lambda X: np.linalg.inv(np.eye(3) + np.linalg.inv(X)) + B, np.eye(3), 1e-12, 500,
                  project=lambda X: 0.5 * (X + X.T), valid=valid)
    X = fp.x
    assert fp.converged and np.abs(np.linalg.inv(np.eye(3) + np.linalg.inv(X)) + B - X).max() <= 1e-10
    stuck = anderson(lambda x: x + 1.0, np.zeros(2), 1e-12, 5)
    assert not stuck.converged and stuck.iterations == 5 and stuck.residual > 0


def test_anderson_reports_an_overflowing_map_as_not_converged():
    """A map that overflows (inf or NaN) ends the iteration as not converged — the caller raises ConvergenceError
    naming its equation — instead of a LinAlgError from the mixing's least squares (found at the feature learner's
    balanced decay near P = D², relu, N = 4)."""
    calls = []

    def g(x):
        calls.append(1)
        return np.full_like(x, np.inf) if len(calls) > 2 else 0.5 * x + 1.0

    fp = anderson(g, np.ones(3), 1e-12, 50)
    assert not fp.converged and fp.residual == float("inf") and np.all(np.isfinite(fp.x))


# ----------------------------------------------------------------------------- refusals and extreme arguments
A3 = np.diag([1.0, 2.0, 3.0])


def _cg(**kw):
    args = dict(apply=lambda x: A3 @ x, b=np.ones(3), precondition=lambda r: r, lam=0.1, rtol=1e-8, maxiter=100)
    return certified_cg(**{**args, **kw})


def _anderson(**kw):
    args = dict(g=lambda x: 0.5 * x + 1.0, x0=np.zeros(3), tol=1e-10, max_iterations=100)
    return anderson(**{**args, **kw})


REFUSED = refusals(name_not_within_letters, [
    ("anderson-g-shape", lambda: _anderson(g=lambda x: np.ones(4)), "g"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_anderson_stops_where_the_map_leaves_float64():
    """g(x) with NaN: numpy's lstsq raised LinAlgError; now not converged, the last finite iterate kept."""
    fp = _anderson(g=lambda x: x * np.nan)
    assert not fp.converged and np.all(np.isfinite(fp.x)) and fp.iterations == 1
