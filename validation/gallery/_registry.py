"""The figure registry: :func:`register` (the decorator of the figure modules), :class:`Figure`, the registered
figures (:func:`registry`, :func:`names`; every module of the package is discovered, there is no list to edit), the
points of a figure's experiment and ``linattn figures --list``.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import dataclass
from typing import Callable

from linattn import _check as check

_REGISTRY: dict[str, "Figure"] = {}


@dataclass(frozen=True)
class Figure:
    """A registered figure: ``draw(result)`` returns a matplotlib figure of the saved result of
    ``experiment`` (or a dict ``file stem -> figure`` or ``-> (figure, data, meta)`` for several files);
    ``caption`` says what is plotted, the parameters, theory vs simulation, and the
    paper's figure (a str, or a function of the result that computes every number it quotes);
    ``order`` places it in ``figures all`` and in the gallery (seed figures first,
    then by topic)."""

    name: str
    title: str
    func: Callable
    caption: str | Callable = ""
    requires: str = ""
    experiment: str = ""
    order: float = 100.0
    files: tuple = ()

    @property
    def stems(self) -> tuple:
        """The names of the files the figure writes (``name.png``, ``.pdf``, ``.npz`` for each)."""
        return self.files or (self.name,)

    def __repr__(self):
        return f"Figure({self.name!r}, experiment={self.experiment!r})"


def register(name: str, title: str, caption: str | Callable = "", requires: str = "", experiment: str = "",
             order: float = 100.0, files: tuple = ()):
    """Decorator registering ``draw(result) -> matplotlib.figure.Figure`` as figure ``name``.

    Parameters
    ----------
    name : str
        Registry name (``linattn figures NAME``), also the name of the files written.
    title : str
        One-line description.
    caption : str or callable
        The caption of the gallery (:func:`write_gallery`): a text, or ``caption(result) -> str`` computed from the
        result the figure drew (settings and measured numbers from that result, never typed in).
    requires : str
        Optional extra the figure needs (the module to import, e.g. ``"torch"``); without it :func:`make`
        skips the figure with a message and the gallery says how to get it.
    experiment : str
        The experiment whose result the figure draws (required: a figure draws a result, it computes nothing).
    order : float
        Position in ``figures all`` and in the gallery.
    files : tuple of str
        The file stems when the figure writes several files (``("fig5a", "fig5b")``); each is also accepted as
        a name by :func:`make` and the command line. Default: ``(name,)``.

    Returns
    -------
    callable
        The decorator.
    """

    if not experiment:
        raise ValueError(f"figure {name!r}: experiment must name the experiment whose result it draws; got "
                         f"{experiment!r}")

    def deco(func):
        _REGISTRY[name] = Figure(name, title, func, caption, requires, experiment, order, tuple(files))
        return func

    return deco


def _load_all():
    package = __name__.rpartition(".")[0]
    for info in pkgutil.iter_modules([os.path.dirname(__file__)]):     # every module of the package (private rooms)
        importlib.import_module(f"{package}.{info.name}")


def registry() -> dict[str, Figure]:
    """All registered figures by name.

    Returns
    -------
    dict of str to Figure
    """
    _load_all()
    return dict(sorted(_REGISTRY.items(), key=lambda kv: (kv[1].order, kv[0])))


def points(name: str, mode: str) -> int:
    """The number of points (independent units of work) of figure ``name``'s experiment in ``mode``.

    Parameters
    ----------
    name : str
        A registered figure.
    mode : {"smoke", "quick", "full"}

    Returns
    -------
    int
    """
    from ..experiments._base import get

    figures = registry()
    if not isinstance(name, str) or name not in figures:
        check.fail("name", name, f"one of the registered figures {tuple(figures)}")
    exp = get(figures[name].experiment)
    return len(exp.points(exp.settings(mode)))


def listing() -> str:
    """``linattn figures --list``: each figure, its title, the points of its experiment and what it costs (quick
    and full, seconds measured on 2 cores: :data:`validation.gallery.costs.COSTS`).

    Returns
    -------
    str
        One line per figure and a note on how the costs were measured.
    """
    from ._costs import COSTS

    def cost(seconds):
        return "—" if seconds is None else (f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min")

    rows = [f"{'figure':22s} {'points quick/full':>17s} {'quick':>7s} {'full':>7s}  title"]
    for name, fig in registry().items():
        quick, full = COSTS.get(name, (None, None))
        files = f"  (writes {', '.join(fig.stems)}; each name is accepted)" if fig.files else ""
        counts = f"{points(name, 'quick')}/{points(name, 'full')}"
        rows.append(f"{name:22s} {counts:>17s} {cost(quick):>7s} {cost(full):>7s}  {fig.title}{files}")
    note = ("costs on 2 cores: quick, measured in a fresh-clone `make run` (two figures at a time beside the report); "
            "full, `linattn figures NAME --full` (one process, or --store DIR --workers 2) beside another job: upper "
            "bounds; — not measured. A full run takes --store DIR --workers N to spread its points and to resume.")
    return "\n".join(rows) + "\n\n" + note


def names() -> list[str]:
    """Names of the registered figures.

    Returns
    -------
    list of str
    """
    return list(registry())

