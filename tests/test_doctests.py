"""The ``Examples`` sections of the docstrings run (doctest), like the code blocks of README.md and docs/."""
import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("linattn", "spectra", "dynamics", "replica", "diagnostics", "validation")


def _modules():
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        yield name
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{name}."):
            yield info.name


def _tests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    out = []
    for modname in _modules():
        module = importlib.import_module(modname)
        out += [t for t in finder.find(module) if t.examples and t.name.startswith(modname)]
    return out


TESTS = _tests()


def test_there_are_docstring_examples():
    assert len(TESTS) >= 3


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_docstring_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=lambda s: None)
    assert result.failed == 0, f"{test.name}: {result.failed} of {result.attempted} examples failed"
