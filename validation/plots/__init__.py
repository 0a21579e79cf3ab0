"""Figure registry: each seed figure is a function that writes its image (PNG and PDF) and the
data behind it (``.npz``) into an output folder.

A figure module registers itself with :func:`register`; :func:`names` lists them in order and
:func:`make` runs them. Modules are imported lazily (figures can be heavy to import).
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

#: modules that define figures, in the order ``figures all`` runs them
MODULES = ("fig1", "fig2_3", "fig4", "fig5_6", "phase")

_REGISTRY: dict[str, "Figure"] = {}


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    func: Callable  # func(out_dir: str, quick: bool, progress: bool) -> list of written paths


def register(name: str, title: str):
    """Decorator registering ``func(out_dir, quick, progress)`` as figure ``name``."""

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
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def names() -> list[str]:
    return list(registry())


def make(selected, out_dir: str, quick: bool = True, progress: bool = True) -> list[str]:
    """Run the figures in ``selected`` (names, or ``["all"]``); return the paths written."""
    reg = registry()
    if list(selected) == ["all"] or not selected:
        selected = list(reg)
    unknown = [s for s in selected if s not in reg]
    if unknown:
        raise ValueError(f"figure names must be among {list(reg) + ['all']}; got {unknown}")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name in selected:
        written += reg[name].func(out_dir, quick, progress)
    return written


def style():
    """Context manager applying the package's matplotlib style (Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.style.context(os.path.join(os.path.dirname(os.path.dirname(__file__)), "linattn.mplstyle"))


def save(fig, out_dir: str, name: str, data: dict, meta: dict | None = None) -> list[str]:
    """Write ``name.png``, ``name.pdf`` and the data ``name.npz`` (with ``meta`` as strings)."""
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
