"""One experiment per family: the figure experiments of the stationary physics (``stationary_N``, ``stationary_D``)
and of staged-learning diagnostics (``rank_dynamics``) also give the report sections ``replica``, ``langevin``,
``transition`` and ``diagnostics`` from their own results (smoke presets: the rows exist and their criteria decide
them; the numbers of smoke runs are not judged)."""
from dataclasses import replace

import numpy as np
import pytest

from validation import StationarySweep
from validation._app.report import report_sections
from validation.experiments import Result, get, run
from validation.experiments._stationary import sweeps_of


@pytest.fixture(scope="module")
def results():
    return {name: run(name, "smoke", progress=False) for name in ("stationary_N", "stationary_D", "rank_dynamics")}


def _with(result, arrays):
    """``result`` with some arrays replaced (by member name of its data, :meth:`ExperimentData.to_arrays`)."""
    return replace(result, data=type(result.data).from_arrays({**result.data.to_arrays(), **arrays}))


def test_each_section_comes_from_a_figure_experiment(results):
    from validation.gallery import registry

    drawn = {fig.experiment for fig in registry().values()}
    sections = {name: [c.section for c in get(name).checks(r)] for name, r in results.items()}
    assert sections["stationary_D"] == ["replica"] * 3
    assert sections["stationary_N"] == ["langevin"] * 5 + ["transition"] * 2
    assert sections["rank_dynamics"] and set(sections["rank_dynamics"]) == {"diagnostics"}
    assert set(results) <= drawn
    owners = {exp.name for exp in report_sections().values()}
    assert set(results) <= owners
    assert not owners & {"replica_check", "langevin_check", "transition_check", "diagnostics_check"}
    assert get("stationary").checks(run("stationary", "smoke", progress=False)) == []      # no section points


def test_the_figures_arrays_are_beside_the_sections(results):
    """The figure's sweeps are read back whole; the sections' data are fields of their own."""
    for name in ("stationary_N", "stationary_D"):
        r = results[name]
        sweeps = sweeps_of(r)
        assert [(s.D, s.N) for s in sweeps] == [tuple(p) for p in r.settings["problems"]]
        assert all(isinstance(s, StationarySweep) for s in r.data.sweeps)
    assert results["stationary_N"].data.transition.D == 10 and results["stationary_N"].data.replica is None
    assert results["stationary_D"].data.replica.test.shape == (3, len(results["stationary_D"].settings["replica"]
                                                                      ["P"]))


def test_replica_rows_follow_their_criterion(results):
    r = results["stationary_D"]
    d = r.data.replica
    exact = _with(r, {"replica.theory_train": d.train, "replica.theory_test": d.test})
    assert all(c.passed for c in get("stationary_D").checks(exact))
    off = _with(r, {"replica.theory_train": 1.1 * d.train, "replica.theory_test": d.test})
    assert not any(c.passed for c in get("stationary_D").checks(off))


def test_langevin_and_transition_rows_follow_their_criteria(results):
    r = results["stationary_N"]
    lg = r.data.langevin
    star = r.data.transition.P_star_theory
    agree = _with(r, {"langevin.train_exact": lg.train_mean, "langevin.test_exact": lg.test_mean,
                      "langevin.coarse.discrete_train": lg.coarse.train_mean, "transition.P_star_exact": star,
                      "transition.P_star_sim": star})
    assert all(c.passed for c in get("stationary_N").checks(agree))
    far = 20 * (lg.train_se_exact + np.abs(lg.train_bias))
    missing = {k: v for k, v in agree.data.to_arrays().items() if k != "transition.P_star_sim"}     # no crossing
    disagree = _with(replace(agree, data=type(agree.data).from_arrays(missing)),
                     {"langevin.train_exact": lg.train_mean + far, "transition.P_star_exact": 1.5 * star,
                      "langevin.coarse.discrete_train": lg.coarse.train_mean + 20 * lg.coarse.train_se_exact})
    rows = get("stationary_N").checks(disagree)
    failed = [(c.section, c.quantity) for c in rows if not c.passed]
    assert failed == [("langevin", "stationary train error")] * 2 + [("langevin", "O(dt) bias of ⟨E_t⟩ at γ·dt·λ_max "
                                                                                  "= 1.6")] + [
        ("transition", "P* (ΔEr = 5), exact Gibbs"), ("transition", "P* (ΔEr = 5), Langevin")]


def test_diagnostics_rows_come_from_the_figure_run(results):
    """The rows are :func:`checks` of the very run the figure draws: a result whose exact-ODE ranks are shifted fails
    the first row."""
    r = results["rank_dynamics"]
    first = get("rank_dynamics").checks(r)[0]
    assert first.quantity == "effective rank: exact ODE = closed form" and first.passed
    shifted = _with(r, {"flow.effective_rank": r.data.flow.effective_rank + 1e-3})
    assert not get("rank_dynamics").checks(shifted)[0].passed
    assert f"N={r.settings['N']}" in first.parameters and f"{r.settings['n_chains']} chains" in first.parameters


@pytest.mark.parametrize("key, value", [("replica", {"P": [10]}), ("langevin", [8]),
                                        ("transition", {"n_exact": 2, "n_sim": 2, "P_exact": [20], "P_sim": [20],
                                                        "seed": 1})])
def test_section_settings_are_checked(key, value):
    with pytest.raises(ValueError, match=f"{key} must be None or a dict with exactly the keys"):
        get("stationary").points(get("stationary").settings("smoke", **{key: value}))


def test_a_result_of_the_figure_round_trips_with_its_sections(results, tmp_path):
    r = results["stationary_N"]
    back = Result.load(r.save(str(tmp_path / "r")))
    assert [c.__dict__ for c in get("stationary_N").checks(back)] == [c.__dict__ for c in get("stationary_N").checks(r)]
