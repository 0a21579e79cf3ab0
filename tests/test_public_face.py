"""The public face of the library (``docs/conventions.md`` §8): few public modules over private rooms.

A module is public when no part of its dotted path starts with an underscore. The public modules are exactly the
ones listed in the conventions (a new one must be listed, a listed one must exist), each declares its ``__all__``,
and tests, docs, examples and benchmarks reach a name through its public path wherever it has one. The rooms stay
small: no library module over 800 lines, no file name (leading underscores aside) in more than two places.
"""
import ast
import collections
import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("linattn", "spectra", "dynamics", "replica", "diagnostics", "validation")
MAX_PUBLIC = 40
MAX_LINES = 800


def _library_files():
    return sorted(f for p in PACKAGES for f in (ROOT / p).rglob("*.py"))


def _module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_public(module):
    return not any(part.startswith("_") for part in module.split("."))


PUBLIC = sorted(m for m in map(_module_name, _library_files()) if _is_public(m))


def _listed():
    """The public modules listed in ``docs/conventions.md`` §8 (the lines of its fenced block)."""
    text = (ROOT / "docs" / "conventions.md").read_text()
    section = text.split("## 8. The public face", 1)[1]
    block = section.split("```", 2)[1]
    return sorted(line.split()[0] for line in block.splitlines() if line.strip())


def test_the_public_modules_are_the_listed_ones():
    assert PUBLIC == _listed()
    assert len(PUBLIC) <= MAX_PUBLIC


@pytest.mark.parametrize("module", PUBLIC)
def test_a_public_module_declares_its_names(module):
    mod = importlib.import_module(module)
    assert isinstance(getattr(mod, "__all__", None), (list, tuple)) and mod.__all__, f"{module} has no __all__"
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, f"{module}.__all__ names what it does not have: {missing}"


def test_no_module_is_over_the_limit():
    long = {str(f.relative_to(ROOT)): n for f in _library_files() if (n := len(f.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_no_file_name_in_more_than_two_places():
    names = collections.Counter(f.name.lstrip("_") for f in _library_files() if f.name != "__init__.py")
    assert {n: k for n, k in names.items() if k > 2} == {}


def _public_objects():
    """id of every object reachable as a public name -> that name."""
    out = {}
    for module in PUBLIC:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if callable(obj) or isinstance(obj, type) or type(obj).__name__ == "module":
                out.setdefault(id(obj), f"{module}.{name}")
    return out


def _imports_of(path):
    """(line, module, name) of every ``from module import name`` of a Python file or of a Markdown file's code."""
    text = path.read_text()
    if path.suffix == ".md":
        text = "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.S))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def _user_files():
    out = [ROOT / "README.md"]
    for folder in ("tests", "docs", "examples", "benchmarks"):
        out += sorted((ROOT / folder).rglob("*.py")) + sorted((ROOT / folder).rglob("*.md"))
    return [f for f in out if f.exists() and "scripts" not in f.parts]


def test_tests_and_docs_use_the_public_path_where_there_is_one():
    public = _public_objects()
    found = []
    for path in _user_files():
        for lineno, module, name in _imports_of(path):
            if module in PUBLIC:            # a former path without an underscore (a deprecated alias) is not public
                continue
            try:
                obj = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError):
                continue
            if id(obj) in public:
                found.append(f"{path.relative_to(ROOT)}:{lineno}: from {module} import {name} -> {public[id(obj)]}")
    assert found == []


def test_the_scan_would_catch_a_private_import():
    mod = importlib.import_module("replica._stationary")
    assert id(mod.stationary) in _public_objects()
