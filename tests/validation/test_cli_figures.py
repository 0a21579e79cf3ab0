"""The command line, the figure registry and the report (smoke tests of what `make run` calls):
every registered figure and `linattn validate` run end to end at tiny ("smoke") settings."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

from validation import gallery as figures
from validation._app import cli


def test_help_and_info(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "figures" in capsys.readouterr().out
    assert cli.main(["info", "--D", "10", "--N", "100"]) == 0
    out = capsys.readouterr().out
    assert "0.111" in out and "1.224" in out
    assert cli.main(["info", "--D", "0", "--N", "5"]) == 2
    assert "D must be" in capsys.readouterr().err


def test_console_script_is_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "linattn")
    res = subprocess.run([exe, "figures", "--list"], capture_output=True, text=True, check=True)
    for name in ("fig1", "fig2", "fig3", "fig4", "fig5", "fig6", "phase"):
        assert name in res.stdout


@pytest.mark.parametrize("argv, words", [
    (["info", "--D", "10", "--N", "5", "--noise", "1e200"], "noise must be"),
    (["info", "--D", "1000000", "--N", "5", "--noise", "nan"], "noise must be"),
    (["figures", "fig4", "--out", "/proc/x"], "writable folder"),
    (["figures", "fig4", "--out", ""], "folder path"),
    (["validate", "--out", "/proc/x"], "writable folder"),
    (["figures", "fig99", "--out", "OUT"], "figure names"),
    (["info", "--D", "9" * 400, "--N", "5"], "D must be an integer >= 1 and <= 9007199254740992"),
    (["info", "--D", "10", "--N", "5", "--tasks", "9" * 400], "tasks must be an integer"),
    (["sweep", "gibbs", "--grid", "DATEGRID"], "grid['D'] must be a list of scalars"),
    (["sweep", "gibbs", "--grid", "GOODGRID", "--scheduler", ""], "scheduler must be the address"),
    (["sweep", "no_such_module_xyz:f", "--grid", "GOODGRID"], "importable module:function"),
    (["sweep", "gibbs", "--grid", "GOODGRID", "--timeout", "nan"], "timeout must be a real number"),
    (["sweep", "gibbs", "--grid", "GOODGRID", "--timeout", "0"], "timeout must be a real number"),
    (["sweep", "gibbs", "--grid", "GOODGRID", "--seed", "-1"], "--seed must be"),
    (["sweep", "gibbs", "--grid", "GOODGRID", "--replicates", "0"], "--replicates must be"),
    (["figures", "fig4", "--workers", "0", "--store", "OUT"], "--workers must be"),
    (["figures", "fig4", "--store", ""], "--store must be a folder path"),
    (["figures", "fig4", "--out", "MANIFESTDIR"], "manifest.json is a file"),
    (["sweep", "gibbs", "--grid", "MIXEDGRID"], "grid['D'] must be a list of values of one kind"),
])
def test_cli_errors_are_one_line(argv, words, tmp_path, capsys):
    """Every error: one line on stderr, non-zero exit, no traceback (before any computing)."""
    (tmp_path / "date.toml").write_text("D = [1979-05-27]\nN = [10]\nP = [10]\nbeta = [1.0]\nlam = [0.1]\n")
    (tmp_path / "good.toml").write_text("D = [3]\nN = [10]\nP = [10]\nbeta = [1.0]\nlam = [0.1]\n")
    (tmp_path / "mixed.toml").write_text("D = [3, 'a']\nN = [10]\nP = [10]\nbeta = [1.0]\nlam = [0.1]\n")
    (tmp_path / "m" / "manifest.json").mkdir(parents=True)
    paths = {"OUT": str(tmp_path), "DATEGRID": str(tmp_path / "date.toml"), "GOODGRID": str(tmp_path / "good.toml"),
             "MIXEDGRID": str(tmp_path / "mixed.toml"), "MANIFESTDIR": str(tmp_path / "m")}
    argv = [paths.get(a, a) for a in argv]
    if argv[0] == "sweep":                  # without the extra, a sweep's first error is the missing extra
        pytest.importorskip("xarray", reason="the sweep command needs the optional extra [dask]")
    assert cli.main(argv) != 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("linattn: error:") and words in lines[0], lines


def test_cli_sweep_survives_a_module_or_a_point_that_ends_its_process(tmp_path, monkeypatch, capsys):
    """A module that calls os._exit when imported is reported (one line, exit 2: it ended the command silently with
    status 0); serial points run in one worker process, so a point that ends its process is that point's failure
    (exit 1, the others done) instead of the end of the command with status 0."""
    pytest.importorskip("xarray", reason="the sweep command needs the optional extra [dask]")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ends_at_import_cli.py").write_text("import os\nos._exit(0)\n")
    (tmp_path / "ends_at_point_cli.py").write_text("import os\n\n\ndef f(x, rng):\n    if x == 2:\n"
                                                   "        os._exit(0)\n    return {'y': float(x)}\n")
    (tmp_path / "g.toml").write_text("x = [1, 2, 3]\n")
    assert cli.main(["sweep", "ends_at_import_cli:f", "--grid", "g.toml", "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "importing 'ends_at_import_cli' ends the process (exit status 0)" in err[0]
    assert cli.main(["sweep", "ends_at_point_cli:f", "--grid", "g.toml", "--workers", "1", "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "2 of 3 evaluations done, 1 failed" in out and "x=2: n = 0" in out and "WorkerDied" in out


def test_cli_error_in_a_real_process_has_no_traceback():
    res = subprocess.run([sys.executable, "-m", "validation._app.cli", "figures", "fig4", "--out", "/proc/x"],
                         capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.strip().count("\n") == 0 and "Traceback" not in res.stderr


def test_out_may_not_be_an_existing_file(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    assert cli.main(["figures", "fig4", "--out", str(path), "--no-progress"]) == 2


def test_unknown_figure_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="figure names"):
        figures.make(["fig99"], str(tmp_path))
    with pytest.raises(ValueError, match="mode"):
        figures.make(["fig4"], str(tmp_path), mode="tiny")


TORCH_FIGURES = {"icl_emergence", "grokking", "markov_transformer"}


@pytest.mark.parametrize("name", figures.names())
def test_every_figure_builder_runs(name, tmp_path, capsys):
    """Smoke test: each registered figure writes its PNG, PDF and data at tiny settings (the figures of
    the optional extra [torch] say that they are skipped and write nothing when torch is absent)."""
    from validation.simulators import torch_available

    paths = figures.make([name], str(tmp_path), mode="smoke", progress=False)
    if name in TORCH_FIGURES and not torch_available():
        assert paths == [] and "torch is not installed" in capsys.readouterr().err
        return
    assert {os.path.splitext(p)[1] for p in paths} == {".png", ".pdf", ".npz"}
    assert all(os.path.getsize(p) > 1000 for p in paths)
    gallery = (tmp_path / "index.md").read_text()            # the caption, computed from the result it drew
    fig = figures.registry()[name]
    caption = fig.caption(figures.compute(fig.experiment, "smoke")) if callable(fig.caption) else fig.caption
    assert len(caption) > 100 and caption in gallery and "No caption" not in gallery
    for p in paths:
        if p.endswith(".npz"):
            with np.load(p) as d:
                assert d["meta_mode"] == "smoke"
                if name.startswith("learners"):       # every number of the learners' results is finite
                    for k in d.files:
                        if d[k].dtype.kind in "fc":
                            assert np.all(np.isfinite(d[k])), (name, k)


def test_validate_runs_and_writes_the_report(tmp_path):
    """`linattn validate --smoke`: every section runs and the report and its JSON are written
    (smoke settings are too small for the comparisons to mean anything; exit 0 or 1). After the figure builders
    above: the experiments they computed in this process are not computed again."""
    code = cli.main(["validate", "--smoke", "--out", str(tmp_path), "--no-progress"])
    assert code in (0, 1)
    text = (tmp_path / "validation_report.md").read_text()
    rows = json.loads((tmp_path / "validation_report.json").read_text())
    assert {r["section"] for r in rows} == {"spectra", "dynamics", "replica", "langevin", "transition", "nonlinear",
                                           "learners", "learners_scaling", "factorized", "diagnostics", "pools",
                                           "structured_tasks", "markov"}
    assert f"of {len(rows)} comparisons pass" in text


def test_fig4_data(tmp_path):
    figures.make(["fig4"], str(tmp_path), mode="smoke", progress=False)
    d = np.load(os.path.join(tmp_path, "fig4.npz"))
    t, test = d["figure[10].times"], d["figure[10].test"]          # the members named by field
    assert t.shape == test.shape and np.all(np.isfinite(test))


def test_gallery_lists_every_registered_figure(tmp_path):
    """`make run` writes figures/index.md and index.html: every registered figure appears with its
    caption and, once generated, its images and the command that regenerated it; the summary line
    of the validation report is there once the report is."""
    out = str(tmp_path)
    figures.write_gallery(out)
    text = (tmp_path / "index.md").read_text()
    for name, fig in figures.registry().items():
        assert f"## {name}: {fig.title}" in text
        assert callable(fig.caption) or len(fig.caption) > 100      # a real caption (or one computed), not a stub
        assert f"linattn figures {name} --out" in text         # not generated yet: how to
    assert "no report yet" in text
    figures.make(["fig4"], out, mode="smoke", progress=False)
    text = (tmp_path / "index.md").read_text()
    assert "![fig4](fig4.png)" in text and "`linattn figures fig4 --smoke --out" in text
    (tmp_path / "validation_report.json").write_text('[{"section": "s", "quantity": "q", "passed": true}]')
    figures.write_gallery(out)
    assert "1 of 1 theory-vs-simulation comparisons pass" in (tmp_path / "index.md").read_text()
    html = (tmp_path / "index.html").read_text()
    assert "<img src='fig4.png'" in html and all(f"<h2>{n}:" in html for n in figures.names())


def test_parallel_figures_with_exclusions(tmp_path):
    """`figures all --exclude ... --jobs 2` (what `make run` calls): the figures left in run in two
    spawned processes and are recorded in the manifest and the gallery like serial ones."""
    keep = {"fig4", "staged"}
    others = [n for n in figures.names() if n not in keep]
    paths = figures.make(["all"], str(tmp_path), mode="smoke", progress=False, jobs=2, exclude=others)
    assert {os.path.basename(p).split(".")[0] for p in paths} == keep
    manifest = json.load(open(tmp_path / "manifest.json"))
    assert set(manifest) == keep
    assert all(name in open(tmp_path / "index.md").read() for name in keep)


@pytest.mark.parametrize("text", ["[1, 2]", '{"fig4": 3}', '{"fig4": {"files": "x"}}', "garbage{", ""])
def test_a_corrupt_manifest_is_dropped_with_a_warning(text, tmp_path):
    """A manifest.json that is not what ``_record`` writes (not JSON, not an object, malformed entries) is
    replaced, with a warning naming the file, instead of failing the gallery with a raw exception."""
    from validation.gallery import write_gallery

    (tmp_path / "manifest.json").write_text(text)
    with pytest.warns(UserWarning, match="manifest.json"):
        paths = write_gallery(str(tmp_path))
    assert "Not generated yet" in open(paths[0]).read()


@pytest.mark.parametrize("argv", [[], ["info", "--D", "nan", "--N", "3"],
                                  ["info", "--D", "3", "--N", "3", "--model", "xl"],
                                  ["figures", "fig4", "--quick", "--full"], ["sweep"]])
def test_argument_errors_are_one_line_too(argv, capsys):
    """argparse's own errors (missing or malformed flags) keep the promise: one line, exit status 2, no usage block."""
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("linattn: error:"), lines


def test_report_sections_have_distinct_orders(monkeypatch):
    """Every registered section is in the report once; two experiments with one order are refused by name."""
    from validation._app import report
    from validation.experiments import _base as base
    from validation.experiments import registry

    sections = report.report_sections()
    assert len(sections) == sum(exp.report_order is not None for exp in registry().values())
    first, second = list(sections.values())[:2]
    # defining a subclass registers it: into a copy of the registry, so that no later test of this process meets the
    # twin (under pytest-xdist the order of tests varies: `validate --smoke` in the same worker was refused)
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))
    twin = type("Twin", (second,), {"name": "twin", "report_order": first.report_order})
    monkeypatch.setattr(report, "registry", lambda: {**registry(), "twin": twin})
    with pytest.raises(ValueError, match="report_order must be distinct.*twin"):
        report.report_sections()
    assert "twin" in base._REGISTRY                        # the copy; the registry itself is restored afterwards


def test_the_report_reuses_what_the_figures_computed(tmp_path):
    """`validate --reuse` takes the result a figure drew (same settings, same source) and computes nothing again;
    a result of other settings, or of other source, is not reused."""
    from validation._app import report
    from validation.experiments import Result, get
    from validation.gallery import result_path, save_result

    figures.make(["fig4"], str(tmp_path), mode="smoke", progress=False)
    exp = get("flow_curves")
    kept = report.reused(str(tmp_path), exp, "smoke")
    assert kept is not None and kept.experiment == "flow_curves"
    assert report.reused(str(tmp_path), exp, "quick") is None                       # another mode: not there
    path = result_path(str(tmp_path), "flow_curves", "smoke")
    other = Result("flow_curves", "smoke", {**kept.settings, "n_init": 99}, data=kept.data, meta=kept.meta)
    save_result(other, str(tmp_path))                                                # other settings: recomputed
    assert report.reused(str(tmp_path), exp, "smoke") is None
    stale = Result("flow_curves", "smoke", kept.settings, data=kept.data, meta={**kept.meta, "code_hash": "0" * 16})
    stale.save(path)                                                                 # other source: recomputed
    assert report.reused(str(tmp_path), exp, "smoke") is None


def test_the_report_computes_an_experiment_once_per_process(tmp_path, monkeypatch):
    """Without ``--reuse``, a section whose experiment a figure computed in this process is not computed again (the
    report and the figure check and draw one result), and the figure drawn after the report reuses the report's."""
    from validation import experiments
    from validation._app import report
    from validation.experiments import get

    calls = []
    real = experiments.run

    def counted(experiment, mode="quick", **kwargs):
        calls.append(experiment if isinstance(experiment, str) else experiment.name)
        return real(experiment, mode, **kwargs)

    monkeypatch.setattr(experiments, "run", counted)
    monkeypatch.setattr(figures._make, "COMPUTED", {})
    monkeypatch.setattr(report, "report_sections", lambda: {1: type(get("flow_curves"))})
    figures.make(["fig4"], str(tmp_path / "a"), mode="smoke", progress=False)
    assert calls == ["flow_curves"]
    report.run(str(tmp_path / "b"), mode="smoke", progress=False)
    assert calls == ["flow_curves"]                                   # the figure's result, checked
    assert json.loads((tmp_path / "b" / "validation_report.json").read_text())


# ----------------------------------------------------------------------------- refusals and extreme arguments
REFUSED = refusals(name_not_within_letters, [
    ("gallery-points", lambda: figures.points("nope", "quick"), "name"),
    ("code-hash-list", lambda: figures.code_hash(["spectra"]), "experiment"),
    # accepted nonsense: every selected figure excluded ran nothing and returned []; a str was read letter by letter
    ("make-exclude-all", lambda: figures.make(["fig4"], tempfile.mkdtemp(), mode="smoke", progress=False,
                                              exclude=["fig4"]), "exclude"),
    ("make-selected-str", lambda: figures.make("fig4", tempfile.mkdtemp(), mode="smoke", progress=False),
     "selected"),
    ("make-exclude-str", lambda: figures.make(["all"], tempfile.mkdtemp(), mode="smoke", progress=False,
                                              exclude="fig1"), "exclude"),
    # figures.make: an unknown name in exclude was refused as "figure names must be among …" (naming no argument)
    ("gallery-exclude-unknown", lambda: figures.make(["fig1"], tempfile.mkdtemp(), mode="smoke", exclude=["nope"]),
     "exclude"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_cli_figures_store_that_is_a_file(capsys):
    """``linattn figures --store FILE``: exit 4 with "Not a directory: 'FILE/stationary_N/smoke'"; now exit 2 naming
    --store."""
    f = tempfile.NamedTemporaryFile(suffix=".toml", delete=False).name
    assert cli.main(["figures", "--smoke", "--no-progress", "--store", f, "fig1", "--out", tempfile.mkdtemp()]) == 2
    assert "--store" in capsys.readouterr().err
