"""The API reference: generated from each package's ``__all__`` (docs/scripts/api_pages.py, committed pages that may
not drift), every public name with an entry that renders (signature, parameters, returns), the docstrings' roles
rendered as links, the central functions with a running example, and the site's search index holding the entries."""
import doctest
import html
import importlib
import inspect
import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "scripts"))
import api_pages  # noqa: E402

sys.path.pop(0)

#: the functions a user meets first: each has an ``Examples`` section (run by tests/test_doctests.py)
CENTRAL = ("linattn.Problem", "spectra.hessian_eigenvalues", "spectra._density", "spectra._eigensystem",
           "replica._stationary", "replica._gibbs", "replica._ridge", "replica._asymptotic", "replica._learner_theory",
           "replica._kernel_ridge", "replica.diversity_transition", "replica.phase_boundary", "dynamics.gradient_flow",
           "diagnostics.diagnose", "diagnostics.load_checkpoints", "validation.langevin", "validation.pool_average",
           "validation.run_experiment")


def _public(package):
    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{package}.{name}", obj, PUBLIC_PATHS[api_pages._defining_path(pkg, name)]


PUBLIC_PATHS = api_pages.public_paths()
PUBLIC = [item for p in api_pages.PACKAGES for item in _public(p)]


def test_the_committed_pages_are_the_generated_ones():
    """A new public name (or a moved one) must be regenerated into the reference: `python docs/scripts/api_pages.py`."""
    for name, text in api_pages.pages()[0].items():
        assert (ROOT / "docs" / "api" / name).read_text() == text, f"docs/api/{name} is stale: regenerate it"


@pytest.mark.parametrize("public", CENTRAL)
def test_central_functions_have_an_example_that_doctest_runs(public):
    module, _, name = public.rpartition(".")
    obj = getattr(importlib.import_module(module), name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(obj, name, module=inspect.getmodule(obj))
    assert any(t.examples and t.name == name for t in tests), f"{public} has no Examples section"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    mkdocs = pathlib.Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists():
        pytest.skip("mkdocs is not installed (the [docs] extra)")
    out = tmp_path_factory.mktemp("site")
    res = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-4000:]
    return out


def test_docs_build_strict(site):
    """``mkdocs build --strict`` passes (the fixture asserts it: warnings are errors) and writes the API pages."""
    assert (site / "api" / "linattn" / "index.html").stat().st_size > 10_000


def _section(page, anchor):
    """The text of the entry ``anchor`` of a built page: from its heading to the next entry of its level."""
    start = page.find(f'id="{anchor}"')
    if start < 0:
        return None
    nxt = re.search(r'<h[1-4] id="[^"]+" class="doc doc-heading"', page[start + 10:])
    chunk = page[start:start + 10 + (nxt.start() if nxt else len(page))]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", chunk))), chunk


@pytest.mark.parametrize("public, obj, anchor", PUBLIC, ids=[p[0] for p in PUBLIC])
def test_every_public_name_renders_with_signature_parameters_and_returns(site, public, obj, anchor):
    pages = [(site / "api" / p / "index.html").read_text() for p in api_pages.PACKAGES]   # a re-export: on its
    found = next((f for f in (_section(page, anchor) for page in pages) if f is not None), None)  # home package's
    assert found is not None, f"{public}: no entry {anchor!r}"
    text, raw = found
    assert anchor.rsplit(".", 1)[-1] in text
    exception = inspect.isclass(obj) and issubclass(obj, Exception)
    target = obj.__init__ if inspect.isclass(obj) else obj
    params = [p for p in inspect.signature(target).parameters if p not in ("self", "cls", "args", "kwargs")]
    if params or inspect.isfunction(obj):
        assert "doc-signature" in raw, f"{public}: no signature"
    if params and not exception:
        assert "Parameters:" in text or "Attributes:" in text, f"{public}: no parameters"
    if inspect.isfunction(obj):
        assert "Returns:" in text or "Yields:" in text, f"{public}: no returns"


def test_roles_render_as_links_and_search_finds_the_entries(site):
    pages = {p: (site / "api" / p / "index.html").read_text() for p in api_pages.PACKAGES}
    for name, page in pages.items():
        raw = re.findall(r":(?:func|class|meth|mod|data|attr|exc):`", page)
        assert not raw, f"api/{name}: {len(raw)} raw roles"
    # a cross-reference of a docstring is a link to the entry, at its public path (replica.stationary's docstring
    # names replica.gibbs; StationaryTheory is linked from the learners' pages)
    assert 'href="#replica.gibbs"' in pages["replica"]
    links = sum(len(re.findall(r'href="(?:\.\./[a-z]+/)?#[a-z]', p)) for p in pages.values())
    assert links > 300
    index = json.loads((site / "search" / "search_index.json").read_text())
    locations = {d["location"] for d in index["docs"]}
    for public, _, anchor in PUBLIC:
        assert any(loc.endswith(f"/#{anchor}") for loc in locations), f"{public} is not in the search index"
