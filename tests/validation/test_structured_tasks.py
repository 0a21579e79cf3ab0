"""The experiment ``structured_tasks`` (validation.experiments._structured_tasks): its effective ridge, its typed data
saved and read back, and report checks that fail when the theory is replaced by its isotropic baseline."""
import dataclasses

import numpy as np
import pytest

import linattn
from validation.experiments import Result, get, run
from validation.experiments._structured_tasks import kappa_of, low_rank_problem, sigma_parallel


@pytest.mark.parametrize("D, N, r, lam", [(16, 32, 4, 0.0), (8, 16, 2, 0.3), (10, 5, 1, 1e-3)])
def test_effective_ridge_of_the_population_solution_is_the_weight_decay(D, N, r, lam):
    """At P = ∞ the ridge solution is Γ = (Σ̃ + λ)⁻¹R (Σ̃ = pb.context_covariance, R = S/D): its κ is λ (to rounding);
    σ_∥ is the eigenvalue of Σ̃ on the span of S."""
    pb = low_rank_problem(D, N, r)
    St = pb.context_covariance
    R = pb.task_covariance.matrix / D
    G = np.linalg.solve(St + lam * np.eye(D), R)
    assert kappa_of(np.trace(G[:r, :r]), D, N, r) == pytest.approx(lam, abs=1e-12)
    assert np.linalg.eigvalsh(St)[-1] == pytest.approx(sigma_parallel(D, N, r), rel=1e-12)
    assert linattn.Problem(D, N, 0.25, task_covariance=np.r_[np.full(r, D / r), np.zeros(D - r)]) == pb


@pytest.fixture(scope="module")
def smoke():
    return run("structured_tasks", "smoke", progress=False)


def test_typed_data_save_and_load(smoke, tmp_path):
    back = Result.load(smoke.save(str(tmp_path / "r")))
    assert type(back.data) is type(smoke.data) and back.data == smoke.data
    exp = get("structured_tasks")
    assert [c.__dict__ for c in exp.checks(back)] == [c.__dict__ for c in exp.checks(smoke)]
    d = smoke.data
    assert d.fresh.test_idg is None and d.pool.test_idg is not None and set(d.transition) == {2}
    assert d.fresh.P.size == len(smoke.settings["P"]) and d.implicit.measured.shape == d.fresh.P.shape


def test_checks_reject_the_isotropic_theory(smoke):
    """The theory rows of the report can fail: with the theory curves of the fresh panel replaced by the isotropic
    problem's (the baseline), the test rows of the fresh panel fail the 5 % + 3 s.e. criterion."""
    d = smoke.data
    iso = dataclasses.replace(d.fresh, theory_test=d.isotropic.theory_test)
    fake = Result(smoke.experiment, smoke.mode, smoke.settings, dataclasses.replace(d, fresh=iso), smoke.meta)
    rows = [c for c in get("structured_tasks").checks(fake) if c.quantity == "finite-D theory, test, fresh tasks"]
    assert rows and not any(c.passed for c in rows)
