"""The staged-learning runs of the experiments (``validation.experiments._staged_runs``): the gap of one
dataset integrates on while the product model moves."""
import pytest


def test_gap_one_integrates_on_while_the_product_model_moves(monkeypatch):
    """``factorized_gap --full`` failed: one dataset's product model still moved by 3.4e-6 at ``t_max = 2e4``. The
    integration time doubles (at most GAP_DOUBLINGS times) while the loss moves: from ``t_max = 50``, which alone is
    refused, it reaches the long-time value of ``t_max = 1000``; too short a time is still refused, naming t_max."""
    import linattn as la
    from validation.experiments import _staged_runs as staged

    pb = la.Problem(3, 10)
    on = staged.gap_one(pb, 30, 0, 0.01, t_max=50.0, rng=3)
    far = staged.gap_one(pb, 30, 0, 0.01, t_max=1000.0, rng=3)
    assert abs(on["test_product"] / far["test_product"] - 1) < 1e-5      # both within the 1e-6 drift criterion
    with pytest.raises(la.ConvergenceError, match="t_max"):
        staged.gap_one(pb, 30, 0, 0.01, t_max=1.0, rng=3)
    monkeypatch.setattr(staged, "GAP_DOUBLINGS", 0)
    with pytest.raises(la.ConvergenceError, match="t_max"):
        staged.gap_one(pb, 30, 0, 0.01, t_max=50.0, rng=3)
