"""Figure registry: each seed figure is a function that writes its image (PNG and PDF) and the
data behind it (``.npz``) into an output folder.

A figure module registers itself with :func:`register`; :func:`names` lists them in order and
:func:`make` runs them. Modules are imported lazily (figures can be heavy to import).

Modes: ``"full"`` (the seed papers' protocol), ``"quick"`` (what ``make run`` regenerates) and
``"smoke"`` (tiny settings that exercise every code path of a figure in seconds; the pictures say
nothing and are for tests only).
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

#: modules that define figures, in the order ``figures all`` runs them
MODULES = ("fig1", "fig2_3", "fig4", "fig5_6", "phase")

#: settings of the figures and of the report
MODES = ("smoke", "quick", "full")

_REGISTRY: dict[str, "Figure"] = {}


@dataclass(frozen=True)
class Figure:
    """A registered figure: ``func(out_dir, mode, progress)`` returns the paths it wrote."""

    name: str
    title: str
    func: Callable


def register(name: str, title: str):
    """Decorator registering ``func(out_dir, mode, progress)`` as figure ``name``.

    Parameters
    ----------
    name : str
        Registry name (``linattn figures NAME``).
    title : str
        One-line description.

    Returns
    -------
    callable
        The decorator.
    """

    def deco(func):
        _REGISTRY[name] = Figure(name, title, func)
        return func

    return deco


def _load_all():
    for mod in MODULES:
        try:
            importlib.import_module(f"{__name__}.{mod}")
        except ModuleNotFoundError as err:  # a figure module not written yet
            if err.name != f"{__name__}.{mod}":
                raise


def registry() -> dict[str, Figure]:
    """All registered figures by name.

    Returns
    -------
    dict of str to Figure
    """
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def names() -> list[str]:
    """Names of the registered figures.

    Returns
    -------
    list of str
    """
    return list(registry())


def make(selected, out_dir: str, mode: str = "quick", progress: bool = True) -> list[str]:
    """Run the figures in ``selected`` (names, or ``["all"]``); return the paths written.

    Parameters
    ----------
    selected : list of str
        Figure names, or ``["all"]``.
    out_dir : str
        Output folder (created if needed; must be writable).
    mode : {"smoke", "quick", "full"}
    progress : bool

    Returns
    -------
    list of str
    """
    from linattn import check

    check.choice("mode", mode, MODES)
    progress = check.boolean("progress", progress)
    reg = registry()
    if list(selected) == ["all"] or not selected:
        selected = list(reg)
    unknown = [s for s in selected if s not in reg]
    if unknown:
        raise ValueError(f"figure names must be among {list(reg) + ['all']}; got {unknown}")
    writable_folder(out_dir)
    written = []
    for name in selected:
        written += reg[name].func(out_dir, mode, progress)
    return written


def writable_folder(path: str) -> str:
    """Create ``path`` if needed and check that files can be written there (before any work).

    Raises ``ValueError`` naming ``out`` otherwise.

    Parameters
    ----------
    path : str

    Returns
    -------
    str
        ``path``.
    """
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"out must be a folder path; got {path!r}")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"out must be a folder, but {path!r} is an existing file")
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, ".linattn-write-test")
        with open(probe, "w") as fh:
            fh.write("")
        os.remove(probe)
    except OSError as err:
        raise ValueError(f"out must be a writable folder; {path!r}: {err.strerror or err}") from None
    return path


def style():
    """Context manager applying the package's matplotlib style (Agg backend).

    Returns
    -------
    contextmanager
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.style.context(os.path.join(os.path.dirname(os.path.dirname(__file__)), "linattn.mplstyle"))


def save(fig, out_dir: str, name: str, data: dict, meta: dict | None = None) -> list[str]:
    """Write ``name.png``, ``name.pdf`` and the data ``name.npz`` (with ``meta`` as strings).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    out_dir, name : str
    data : dict of array_like
    meta : dict, optional

    Returns
    -------
    list of str
        The three paths.
    """
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"{name}.{ext}") for ext in ("png", "pdf", "npz")]
    fig.savefig(paths[0])
    fig.savefig(paths[1])
    plt.close(fig)
    payload = {k: np.asarray(v) for k, v in data.items()}
    for k, v in (meta or {}).items():
        payload[f"meta_{k}"] = np.asarray(str(v))
    np.savez_compressed(paths[2], **payload)
    return paths
