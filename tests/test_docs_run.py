"""Docs that run: every fenced ``python`` block of README.md and docs/*.md is executed as written, as a user would
run it: the blocks of one page saved in order as one script (a later block may use what an earlier one defined) and
run with ``python page.py`` in a temporary folder. A block that starts processes therefore meets the start method of
a real script (the spawn start method re-runs an unguarded script in its children; the library's local pools do not,
a Dask ``LocalCluster`` does and is written under the ``__main__`` guard).

Without an optional extra, a page runs up to its first block that uses the extra (a later block may build on it), and
is skipped when that is its first block (the extra is named in the skip reason)."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

import linattn

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)
#: the optional extras a block may use: the modules each needs, and what in a block's code shows that it uses it
EXTRAS = {
    "dask": (("xarray", "zarr", "distributed"),
             re.compile(r"\b(sweep|load_sweep|sweep_summary|local_cluster|xarray|zarr|dask)\b|\bstore=")),
    "torch": (("torch",), re.compile(r"^\s*(import|from)\s+torch\b|\btorch\.|\btransformers\b", re.M)),
}
#: seconds one page may run (the longest page takes about 30 s on 2 cores)
PAGE_TIMEOUT = 600


def blocks(page):
    return FENCE.findall(page.read_text())


def missing_extras(code):
    """The extras that ``code`` uses and that are not installed."""
    return [name for name, (modules, uses) in EXTRAS.items()
            if uses.search(code) and not all(importlib.util.find_spec(m) for m in modules)]


def test_the_pages_have_blocks():
    assert len(blocks(ROOT / "README.md")) >= 2
    assert sum(len(blocks(p)) for p in PAGES) >= 6


def test_extras_are_detected():
    """The detector sees the sweep and torch blocks (so that a page is skipped, not failed, without its extra)."""
    assert EXTRAS["dask"][1].search('ds = sweep("gibbs", grid)') and EXTRAS["dask"][1].search("run(x, store='a')")
    assert EXTRAS["torch"][1].search("import torch") and not EXTRAS["dask"][1].search("replica._gibbs(data, pb)")
    assert not EXTRAS["torch"][1].search("x = load(folder)   # .npz files or torch .pt state_dicts")


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=lambda p: p.name)
def test_every_python_block_runs_as_a_script(page, tmp_path):
    code = blocks(page)
    first = next((i for i, c in enumerate(code) if missing_extras(c)), len(code))
    if first == 0:
        pytest.skip(f"{page.name} starts with the optional extra(s) {missing_extras(code[0])}, not installed")
    code = code[:first]
    script = tmp_path / (page.stem.replace(".", "_") + ".py")
    script.write_text("\n".join(f"# --- {page.name}, python block {i}\n{c}" for i, c in enumerate(code)))
    env = dict(os.environ, MPLBACKEND="Agg")
    # the library as this test imports it (installed, or a source tree on the path), whatever the folder
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(linattn.__file__).resolve().parents[1])]
                                        + [str(pathlib.Path(p).resolve()) for p in
                                           env.get("PYTHONPATH", "").split(os.pathsep) if p])
    run = subprocess.run([sys.executable, script.name], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=PAGE_TIMEOUT)
    if run.returncode != 0:
        lines = script.read_text().splitlines()
        at = [int(m) for m in re.findall(rf'File "[^"]*{re.escape(script.name)}", line (\d+)', run.stderr)]
        where = next((ln for ln in reversed(lines[:at[-1]]) if ln.startswith("# --- ")), "") if at else ""
        raise AssertionError(f"{page.name} as a script failed {where[6:]}:\n{run.stderr[-3000:]}")
