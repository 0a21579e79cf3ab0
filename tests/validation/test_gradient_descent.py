"""Gradient descent from random starts (:func:`validation.descent_from_random_inits`): steps refused by name."""
import pytest
from helpers import assert_refused, name_as_word, refusals

import linattn
import validation

PB = linattn.Problem(4, 8, 0.1)
DATA = PB.sample(20, rng=0)


REFUSED = refusals(name_as_word, [
    # no step to record
    ("descent-steps-empty", lambda: validation.descent_from_random_inits(DATA, PB, 0.1, [], 0.01, 0.1, 2, rng=0),
     "steps"),
    ("descent-steps", lambda: validation.descent_from_random_inits(DATA, PB, 0.1, [10**13], 0.01, 0.1, 2, rng=0),
     "steps"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_structured_tasks_record_every_error_law():
    """Structured tasks with a pool: the descents from random starts record test (fresh tasks from N(0, S)),
    test_odg and test_idg; their means over 400 starts agree with the exact closed form
    (dynamics.gradient_descent, init=σ0) within 4 s.e. at every recorded step."""
    import numpy as np

    import dynamics
    from linattn import pools

    pb = linattn.Problem(4, 8, 0.2, tasks=3, task_covariance=pools.low_rank_covariance(4, 2, rng=1))
    data = pb.sample(30, rng=1)
    steps, lr, s0 = [0, 5, 40], 0.2, 0.3
    run = validation.descent_from_random_inits(data, pb, 0.01, steps, lr, s0, 400, rng=2, model="full")
    exact = dynamics.gradient_descent(data, pb, 0.01, steps, lr, init=s0, model="full")
    for name in ("test", "test_odg", "test_idg"):
        x = getattr(run, name)
        se = x.std(axis=1, ddof=1) / np.sqrt(x.shape[1])
        assert np.all(np.abs(x.mean(axis=1) - getattr(exact, name)) <= 4 * se), name
    assert run.test_odg_mean.shape == (3,) and run.test_idg_sd.shape == (3,)
    iso = validation.descent_from_random_inits(DATA, PB, 0.1, [0, 3], 0.01, 0.1, 2, rng=0)
    assert iso.test_odg is None and iso.test_idg is None


def test_progress_bar_over_the_steps_shows_on_long_calls_only(monkeypatch, capsys):
    import numpy as np

    from validation.simulators import _gradient_descent

    data = PB.sample(20, rng=0)
    kw = dict(lam=0.1, steps=[0, 5, 50], lr=0.01, init_sd=0.1, n_init=3, rng=0)
    quiet = validation.descent_from_random_inits(data, PB, **kw)
    assert "gradient descent" not in capsys.readouterr().err            # short: silent
    monkeypatch.setattr(_gradient_descent, "PROGRESS_DELAY", 0.0)        # every call counts as long
    shown = validation.descent_from_random_inits(data, PB, **kw)
    assert "gradient descent, 3 initialisations" in capsys.readouterr().err
    silent = validation.descent_from_random_inits(data, PB, progress=False, **kw)
    assert capsys.readouterr().err == ""
    for run in (shown, silent):                                          # the bar changes no number
        np.testing.assert_array_equal(run.train, quiet.train)
        np.testing.assert_array_equal(run.test, quiet.test)
