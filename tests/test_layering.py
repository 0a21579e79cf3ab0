"""The layering of the packages (README, Layout): ``linattn ← spectra ← {dynamics, replica} ← validation``. Imports only point
downwards: no module imports a package of its own layer or above (dynamics and replica do not
import each other). Read from the source with ``ast`` (function-level imports included)."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LAYER = {"linattn": 0, "spectra": 1, "dynamics": 2, "replica": 2, "validation": 3}


def imported_packages(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0]


def edges():
    for package in LAYER:
        for path in sorted((ROOT / package).rglob("*.py")):
            for lineno, target in imported_packages(path):
                if target in LAYER and target != package:
                    yield path.relative_to(ROOT), lineno, package, target


def test_the_scan_sees_the_known_downward_edges():
    found = {(p, t) for _, _, p, t in edges()}
    assert {("spectra", "linattn"), ("dynamics", "spectra"), ("replica", "spectra"),
            ("validation", "replica")} <= found


@pytest.mark.parametrize("path, lineno, package, target", list(edges()),
                         ids=[f"{p}:{n}" for p, n, _, _ in edges()])
def test_imports_point_downwards(path, lineno, package, target):
    assert LAYER[target] < LAYER[package], f"{path}:{lineno}: {package} imports {target} (same layer or above)"


def test_a_sideways_edge_would_be_caught(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("def f():\n    import replica\n")
    assert list(imported_packages(bad)) == [(2, "replica")]
