"""Examples of the adversarial review's classes of silent wrong values and raw exceptions, each fixed at its root:
the call now returns the right value or raises a ValueError naming the argument."""
import numpy as np
import pytest

import diagnostics
import linattn
import replica


def test_principal_angles_of_a_zero_matrix_are_refused():
    with pytest.raises(ValueError, match="M_t"):
        diagnostics.principal_angles(np.zeros((3, 3)), np.eye(3))


def test_a_constant_series_has_no_transition():
    with pytest.raises(ValueError, match="series"):
        diagnostics.steepest_changes(np.ones(50), np.arange(1, 51.0))
    with pytest.raises(ValueError, match="series"):
        diagnostics.change_points(np.ones(50), np.arange(1, 51.0))


def test_change_points_do_not_cancel_at_a_large_offset():
    t, s = np.arange(1, 41.0), np.r_[np.zeros(20), np.ones(20)]
    for offset in (0.0, 1e9, -1e12):
        assert diagnostics.change_points(s + offset, t, scale="linear")[0] == 20.5


def test_stable_rank_is_scale_free():
    M = np.diag([3.0, 2.0, 1.0])
    assert diagnostics.stable_rank(M * 1e200) == pytest.approx(diagnostics.stable_rank(M), rel=1e-14)
    assert diagnostics.stable_rank(M * 1e-200) == pytest.approx(14 / 9, rel=1e-14)


def test_the_surrogate_keeps_the_task_pool():
    pb = linattn.Problem(6, 12, 0.1, tasks=3, task_law="sphere", link="tanh")
    s = pb.surrogate()
    assert (s.tasks, s.task_law, s.link.is_linear) == (3, "sphere", True)
    assert pb.surrogate(finite_size=True).tasks == 3


def test_links_must_be_real_and_may_be_float32():
    with pytest.raises(ValueError, match="link"):
        linattn.Problem(6, 12, link=lambda z: z + 0j)
    h = linattn.Problem(6, 12, link=lambda z: (z**3).astype(np.float32)).hermite   # its own precision, ~1e-7
    assert h.mu1 == pytest.approx(3.0, rel=1e-5) and h.mu_star2 == pytest.approx(6.0, rel=1e-5)


def test_the_prompts_of_a_seed_do_not_depend_on_batching():
    pb = linattn.Problem(6, 12, 0.1)
    a, b = pb.sample(300, rng=1, batch_size=7), pb.sample(300, rng=1)
    assert np.array_equal(a.s, b.s) and np.array_equal(a.yq, b.yq)


def test_pool_theory_at_zero_decay_is_the_min_norm_limit():
    pk = linattn.Problem(6, 12, 0.1, tasks=3)
    zero, small = replica.stationary(pk, 20, np.inf, 0.0), replica.stationary(pk, 20, np.inf, 1e-9)
    assert zero.train == 0.0 and zero.test == pytest.approx(small.test, rel=1e-6)


def test_covariance_eigenvalues_must_keep_fourth_moments_finite():
    with pytest.raises(ValueError, match="covariance"):
        linattn.Problem(3, 6, covariance=[1e200, 1.0, 1.0])
    assert np.isfinite(linattn.Problem(3, 6, covariance=[1e40, 1.0, 1.0]).icl_solution().test_error)
