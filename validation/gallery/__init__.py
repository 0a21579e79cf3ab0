"""Figure registry: a figure draws the saved :class:`~validation.experiments.Result` of one experiment
and writes its image (PNG and PDF) and the data behind it (``.npz``) into an output folder.

A figure module (any module of this package) registers its drawing functions with :func:`register`;
the registry discovers the modules (no list to edit). :func:`make` runs each figure's experiment
(:func:`validation.experiments.run`: in this process, or with ``store=`` as resumable points on local
processes or a Dask cluster), saves the result, and draws it.

Modes: ``"full"`` (the seed papers' protocol), ``"quick"`` (what ``make run`` regenerates) and
``"smoke"`` (tiny settings that exercise every code path of a figure in seconds; the pictures say
nothing and are for tests only).

Your own curves in the figures' style: :func:`plot_curves` (a theory line, simulation markers with ±1 s.e. bars, a
band) on axes made inside :func:`style`.
"""
from ..experiments._base import MODES
from ._make import LONG_FIRST, compute, make
from ._page import MANIFEST, write_gallery
from ._registry import Figure, listing, names, points, register, registry
from ._saving import RESULTS_FOLDER, code_hash, panel_letters, result_path, save, save_result, style, writable_folder
from ._user_curves import plot_curves

__all__ = ["make", "compute", "register", "registry", "names", "points", "listing", "Figure", "write_gallery",
           "result_path", "save_result", "code_hash", "writable_folder", "style", "save", "panel_letters", "MODES",
           "LONG_FIRST", "MANIFEST", "RESULTS_FOLDER", "plot_curves"]
