"""The layering of the packages (README, Layout): imports only point downwards.

``linattn ← {spectra, diagnostics}``, ``spectra ← {dynamics, replica}``, everything ← ``validation``; inside
``validation`` the rooms ``simulators ← sweeps ← experiments ← gallery ← app``. No package imports one of its
own layer or above (dynamics and replica do not import each other; diagnostics knows nothing of linear
attention beyond the model package). There is no import cycle between modules anywhere, function-level imports
included (the model package's ground floor: ``check`` imports nothing of the library, ``problem`` stands on the
sampler ``law``, and what knows both types, ``validate``, stands above them). Read from the source with ``ast``.
"""
import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LAYER = {"linattn": 0, "spectra": 1, "diagnostics": 1, "dynamics": 2, "replica": 2, "validation": 3}
#: rooms of validation: its subpackages, named without the leading underscore of a private one (``_app``)
ROOM = {"simulators": 0, "sweeps": 1, "experiments": 2, "gallery": 3, "app": 4}


def _modules():
    for package in LAYER:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, path


MODULES = dict(_modules())


def _resolve(module, node):
    """Absolute module names an import node of ``module`` refers to (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    is_pkg = MODULES[module].name == "__init__.py"
    base = module.split(".")
    if node.level:
        base = base[: len(base) - node.level + (1 if is_pkg else 0)]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    out = []
    for a in node.names:           # `from pkg import module` names a module
        full = f"{prefix}.{a.name}"
        out.append(full if full in MODULES else prefix)
    return out


def imports(module, top_level_only=False):
    """``(lineno, imported module)`` of a module; ``top_level_only``: not inside functions or classes."""
    return _imports(module, top_level_only)


@functools.lru_cache(maxsize=None)
def _imports(module, top_level_only):          # each module is parsed once per process (the scans reread it)
    tree = ast.parse(MODULES[module].read_text(), filename=str(MODULES[module]))
    nodes = tree.body if top_level_only else ast.walk(tree)
    return tuple((node.lineno, target) for node in nodes if isinstance(node, (ast.Import, ast.ImportFrom))
                 for target in _resolve(module, node))


def edges():
    for module in MODULES:
        package = module.split(".")[0]
        for lineno, target in imports(module):
            top = target.split(".")[0]
            if top in LAYER and top != package:
                yield module, lineno, package, top


def _room(module):
    parts = module.split(".")
    if parts[0] != "validation" or len(parts) < 2:
        return None
    return ROOM.get(parts[1].lstrip("_"))


def room_edges():
    for module in MODULES:
        src = _room(module)
        if src is None:
            continue
        for lineno, target in imports(module):
            dst = _room(target) if target.startswith("validation.") else None
            if dst is not None and target.split(".")[1] != module.split(".")[1]:
                yield module, lineno, target, src, dst


def test_the_scan_sees_the_known_downward_edges():
    found = {(p, t) for _, _, p, t in edges()}
    assert {("spectra", "linattn"), ("dynamics", "spectra"), ("replica", "spectra"), ("diagnostics", "linattn"),
            ("validation", "replica")} <= found
    rooms = {(s, d) for _, _, _, s, d in room_edges()}
    assert (ROOM["experiments"], ROOM["simulators"]) in rooms and (ROOM["app"], ROOM["gallery"]) in rooms


def test_every_module_of_validation_is_in_a_room():
    """A module of validation outside the rooms (in the package root, or in a subpackage ROOM does not name) would
    escape the room check."""
    assert [m for m in MODULES if m.startswith("validation.") and _room(m) is None] == []


EDGES, ROOM_EDGES = list(edges()), list(room_edges())


@pytest.mark.parametrize("module, lineno, package, target", EDGES, ids=[f"{m}:{n}" for m, n, _, _ in EDGES])
def test_imports_point_downwards(module, lineno, package, target):
    assert LAYER[target] < LAYER[package], f"{module}:{lineno}: {package} imports {target} (same layer or above)"


@pytest.mark.parametrize("module, lineno, target, src, dst", ROOM_EDGES, ids=[f"{m}:{n}" for m, n, *_ in ROOM_EDGES])
def test_validation_rooms_point_downwards(module, lineno, target, src, dst):
    assert dst < src, f"{module}:{lineno} imports {target}: a room of validation imports its own level or above"


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _graph(top_level_only, within=None):
    graph = {}
    for module in MODULES:
        if within and not module.startswith(within):
            continue
        targets = {t for _, t in imports(module, top_level_only) if t in MODULES and t != module}
        # a package's __init__ importing its own submodules is not a cycle of the layering
        graph[module] = {t for t in targets if not (module + ".").startswith(t + ".")}
    return graph


def test_no_module_level_import_cycle():
    assert _cycles(_graph(top_level_only=True)) == []


def test_no_import_cycle_at_all():
    """Function-level imports included: a cycle hidden in a function is still a circle of the layering."""
    assert _cycles(_graph(top_level_only=False)) == []


def test_check_imports_nothing_of_the_library():
    assert {t for _, t in imports("linattn._check")} & set(MODULES) == set()


def test_a_sideways_edge_and_a_cycle_would_be_caught():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    tree = ast.parse("def f():\n    import replica\n")
    assert [n.names[0].name for n in ast.walk(tree) if isinstance(n, ast.Import)] == ["replica"]
