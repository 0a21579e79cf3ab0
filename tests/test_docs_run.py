"""Docs that run: every fenced ``python`` block of README.md and docs/*.md is executed as written, the blocks of
one file in order in one namespace (a later block may use what an earlier one defined), in a temporary folder."""
import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def blocks(page):
    return FENCE.findall(page.read_text())


def test_the_pages_have_blocks():
    assert len(blocks(ROOT / "README.md")) >= 2
    assert sum(len(blocks(p)) for p in PAGES) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_every_python_block_runs(page, tmp_path, monkeypatch):
    pytest.importorskip("xarray")        # the sweep blocks need the optional extra [dask]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    from validation import gallery as figures
    from validation.experiments import base

    saved = dict(base._REGISTRY), dict(figures._REGISTRY)     # a page may register an example experiment
    namespace = {"__name__": "__main__"}
    try:
        for i, code in enumerate(blocks(page)):
            try:
                exec(compile(code, f"{page.name}[block {i}]", "exec"), namespace)
            except Exception as err:     # name the block in the failure
                raise AssertionError(f"{page.name}, python block {i} failed: {type(err).__name__}: {err}") from err
    finally:
        for registry, old in zip((base._REGISTRY, figures._REGISTRY), saved):
            registry.clear()
            registry.update(old)
    assert os.getcwd() == str(tmp_path)
