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


#: what the docs may say of code that does not exist
ABSENT = re.compile(r"\b(not (yet )?implemented|unimplemented)\b", re.I)
#: a code name in backticks: a dotted public path (``replica.learner_theory``, ``linattn.pools.idg_error``)
CODE_NAME = re.compile(r"`((?:linattn|spectra|dynamics|replica|diagnostics|validation)(?:\.\w+)+)")


def _resolves(name):
    """Whether the dotted public path ``name`` exists: attributes from its package down, a submodule where an
    attribute is missing (``linattn.pools``)."""
    import importlib
    import warnings

    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i, attr in enumerate(parts[1:], start=2):
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
            continue
        try:
            with warnings.catch_warnings():         # a module path of an earlier release still resolves
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            return False
    return True


def absent_claims(text):
    """The sentences of ``text`` that call something not implemented, each with the code names it gives."""
    prose = FENCE.sub("", text)
    out = []
    for paragraph in re.split(r"\n\s*\n", prose):
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(paragraph.split())):
            if ABSENT.search(sentence):
                out.append((sentence, CODE_NAME.findall(sentence)))
    return out


def test_what_the_docs_call_not_implemented_is_absent():
    """Every sentence of README.md and docs/*.md that calls something "not implemented" names it (a dotted public
    path in backticks), and the name does not exist: a claim that outlives the code it denies is found here (the
    learners' replica theory was once called "not implemented" on the nonlinear page after it was built)."""
    stale, vague = [], []
    for page in PAGES:
        for sentence, names in absent_claims(page.read_text()):
            if not names:
                vague.append(f"{page.name}: {sentence}")
            stale += [f"{page.name}: {name} exists ({sentence})" for name in names if _resolves(name)]
    assert not vague, "say by its public name what is not implemented:\n" + "\n".join(vague)
    assert not stale, "\n".join(stale)


def test_absent_claims_are_found():
    """The scan sees a claim, its code name, and whether the name exists."""
    text = ("Intro.\n\nThe `replica.learner_theory` of X is not implemented. `replica.nothing_here` is not yet "
            "implemented.")
    claims = absent_claims(text)
    assert [names for _, names in claims] == [["replica.learner_theory"], ["replica.nothing_here"]]
    assert _resolves("replica.learner_theory") and _resolves("linattn.pools.idg_error")
    assert not _resolves("replica.nothing_here") and not _resolves("replica.learner_theory.nope")
    assert absent_claims("Their replica theory (the stretch goal) is not implemented.")[0][1] == []


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
