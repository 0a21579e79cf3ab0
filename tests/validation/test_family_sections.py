"""One experiment per family: the report sections ``nonlinear``, ``pools`` and ``factorized`` come from the
experiments that draw the figures (``learners``: tests/validation/test_learners.py), and no experiment exists
only to check another of these families."""
import numpy as np
import pytest

from validation.experiments import get, registry, run
from validation.gallery import registry as figure_registry

#: section -> (the figure experiments that give its rows, in report order; the number of rows in smoke mode)
SECTIONS = {"nonlinear": (("nonlinear_errors",), 9),
            "pools": (("pools_finite_d",), 8),
            "factorized": (("staged", "saddles", "factorized_gap"), 13)}


def test_the_check_only_experiments_are_gone():
    """The experiments that recomputed a figure's physics for the report are no longer registered; every experiment
    of these sections is drawn by a figure."""
    names = registry()
    for gone in ("nonlinear_check", "learners_check", "pools_check", "factorized_check"):
        assert gone not in names
    drawn = {fig.experiment for fig in figure_registry().values()}
    for exps, _ in SECTIONS.values():
        for name in exps:
            assert name in drawn and get(name).report_order is not None, name
    assert "learners" in drawn and get("learners").report_order is not None


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_section_rows_come_from_the_figure_experiments(section):
    """Smoke mode: each figure experiment of the section yields its rows (section name, every field filled) from its
    own result; the result's numbers are finite where the rows read them (smoke numbers are not judged)."""
    exps, n_rows = SECTIONS[section]
    rows = []
    for name in exps:
        result = run(name, mode="smoke", progress=False)
        mine = get(name).checks(result)
        assert mine and all(c.section == section for c in mine), name
        rows += mine
        for key, value in result.data.to_arrays().items():          # the fields the report reads
            report = key.startswith(("check", "limit", "gibbs[", "langevin.", "mp_")) or key in (
                "saddle_point_loss", "saddle_point_gradient", "flow_closest", "optimum_test", "fast_rel")
            if value.dtype.kind in "fc" and report:
                assert np.all(np.isfinite(value)), (name, key)
    assert len(rows) == n_rows
    assert all(c.theory and c.simulation and c.criterion and c.parameters for c in rows)
    orders = [get(name).report_order for name in exps]
    assert orders == sorted(orders)             # the section's rows keep their order in the report
