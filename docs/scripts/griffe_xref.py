"""A griffe extension for the API reference: the Sphinx roles of the docstrings (``:func:`gibbs```,
``:class:`~replica.StationaryTheory```, ``:meth:`Problem.sample```, ``:mod:`linattn.pools```) become links
to the object's entry, or code where the object has no entry of its own (a constant, a private helper).

A role's target is resolved the way a reader of the docstring resolves it: in the enclosing class, then in the
docstring's module and each package above it, then as an absolute path; the object found is linked by its public
path (``replica.gibbs``), the anchor ``docs/scripts/api_pages.py`` gives every entry. Loaded by
``mkdocs.yml`` (``extensions:`` of the python handler).
"""
from __future__ import annotations

import importlib
import inspect
import pathlib
import re
import sys

import griffe

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const|ref):`(~?)([^`<]*?)\s*(?:<([^>`]+)>)?`")
_MISSING = object()


def _lookup(path):
    """The object at a dotted path, by attribute access from the top package as Python resolves it (a function
    re-exported under its module's name, ``replica.gibbs``, is the function), importing submodules where an
    attribute is not set yet; ``_MISSING`` when there is none."""
    parts = path.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except Exception:                     # not a module, or one that fails to import (an optional extra): no link
        return _MISSING
    for i, attr in enumerate(parts[1:], start=1):
        nxt = getattr(obj, attr, _MISSING)
        if nxt is _MISSING and inspect.ismodule(obj):
            try:
                nxt = importlib.import_module(".".join(parts[:i + 1]))
            except Exception:
                return _MISSING
        if nxt is _MISSING:
            return _MISSING
        obj = nxt
    return obj


def _public_paths():
    if not _PUBLIC:
        _PUBLIC.update(_api_pages().public_paths())
    return _PUBLIC


_PUBLIC = {}


def _api_pages():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "docs" / "scripts"))
    try:
        import api_pages
    finally:
        sys.path.pop(0)
    return api_pages


def _canonical(path, obj):
    """The public path of ``obj`` found at ``path`` (its anchor), else its defining path: its module and qualified
    name where it has them."""
    if inspect.ismodule(obj):
        return obj.__name__
    target = inspect.unwrap(obj) if callable(obj) else obj
    if (inspect.isfunction(target) or inspect.isclass(target)) and "<locals>" not in target.__qualname__:
        defining = f"{target.__module__}.{target.__qualname__}"
        return _public_paths().get(defining, defining)
    owner, _, name = path.rpartition(".")                   # a property, a constant: where it was found
    holder = _lookup(owner)
    if inspect.isclass(holder):
        defining = f"{holder.__module__}.{holder.__qualname__}"
        return f"{_public_paths().get(defining, defining)}.{name}"
    return path


def resolve(target, module, cls=None):
    """The defining path of the object a docstring in ``module`` (inside class ``cls``) means by ``target``."""
    target = target.strip().lstrip(".")
    candidates = [f"{cls}.{target}"] if cls else []
    parts = module.split(".")
    candidates += [".".join(parts[:i] + [target]) for i in range(len(parts), 0, -1)] + [target]
    for path in candidates:
        obj = _lookup(path)
        if obj is not _MISSING:
            return _canonical(path, obj)
    return None


def anchors():
    """Every anchor of the reference: the entries of ``api_pages``, the packages and modules, and the members of
    the classes documented there that render (methods and properties with a docstring of their own)."""
    api_pages = _api_pages()
    found = set(api_pages.pages()[1])
    for package in api_pages.PACKAGES:
        found.add(package)
        found.update(api_pages._public_modules(package))
    for path in list(found):
        obj = _lookup(path)
        if inspect.isclass(obj):
            found.update(f"{path}.{name}" for name, member in vars(obj).items() if not name.startswith("_")
                         and (inspect.isfunction(member) or isinstance(member, property)) and member.__doc__)
    return found


class CrossReferences(griffe.Extension):
    """Rewrite the roles of every docstring into autorefs links (module docstring)."""

    def __init__(self):
        super().__init__()
        self.anchors = anchors()

    def _link(self, match, module, cls):
        short, text, target = match.group(1), match.group(2), match.group(3)
        target = target or text
        shown = text if match.group(3) else (target.strip().rsplit(".", 1)[-1] if short else target.strip())
        path = resolve(target, module, cls)
        if path in self.anchors:
            return f"[`{shown}`][{path}]"
        return f"`{shown}`"

    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is None or ":" not in obj.docstring.value:
            return
        module = obj.path if obj.is_module else obj.module.path
        cls = obj.parent.path if obj.parent is not None and obj.parent.is_class else (
            obj.path if obj.is_class else None)
        obj.docstring.value = ROLE.sub(lambda m: self._link(m, module, cls), obj.docstring.value)
