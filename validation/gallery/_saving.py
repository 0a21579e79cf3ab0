"""What a figure leaves on disk: the results it drew (:func:`result_path`, :func:`save_result` with the
:func:`code_hash` of the experiment), its images and data (:func:`save`), drawn in the package's :func:`style` with
:func:`panel_letters`, into a folder checked writable before any work (:func:`writable_folder`).
"""
from __future__ import annotations

import os

import numpy as np

from linattn import _check as check

#: the folder of an output folder that holds the results its figures drew (``linattn validate --reuse`` reads them)
RESULTS_FOLDER = "results"


def result_path(out_dir, experiment, mode):
    """Where :func:`make` keeps the result of ``experiment`` in ``mode`` drawn into ``out_dir``.

    Parameters
    ----------
    out_dir : str
    experiment : str
    mode : str

    Returns
    -------
    str
        ``out_dir/results/<experiment>-<mode>.npz``.
    """
    if not isinstance(out_dir, (str, os.PathLike)):
        check.fail("out_dir", out_dir, "a folder path (str or os.PathLike)")
    for name, value in (("experiment", experiment), ("mode", mode)):
        if not isinstance(value, str):
            check.fail(name, value, "a str")
    return os.path.join(out_dir, RESULTS_FOLDER, f"{experiment}-{mode}.npz")


def code_hash(experiment):
    """A hash of the source of the module that defines ``experiment`` (a result computed by other code of that
    module is not reused).

    Parameters
    ----------
    experiment : str

    Returns
    -------
    str
        16 hexadecimal digits.
    """
    import hashlib
    import inspect

    from ..experiments import get, registry

    experiment = check.choice("experiment", experiment, sorted(registry()))
    source = inspect.getsource(inspect.getmodule(type(get(experiment))))
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def save_result(result, out_dir):
    """Keep ``result`` at :func:`result_path` with the :func:`code_hash` of its experiment in ``meta``.

    Parameters
    ----------
    result : validation.experiments.Result
    out_dir : str

    Returns
    -------
    str
        The path written.
    """
    from ..experiments import Result

    path = result_path(out_dir, result.experiment, result.mode)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    kept = Result(result.experiment, result.mode, result.settings, data=result.data,
                  meta={**result.meta, "code_hash": code_hash(result.experiment)})
    return kept.save(path)



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

    return plt.style.context(os.path.join(os.path.dirname(__file__), "linattn.mplstyle"))


def save(fig, out_dir: str, name: str, data: dict, meta: dict | None = None) -> list[str]:
    """Write ``name.png``, ``name.pdf`` and the data ``name.npz`` (with ``meta`` as strings).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    out_dir, name : str
    data : ExperimentData or dict of array_like
        The arrays by name (:meth:`~validation.experiments.ExperimentData.to_arrays` of typed data).
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
    from ..experiments import ExperimentData

    arrays = data.to_arrays() if isinstance(data, ExperimentData) else data
    payload = {k: np.asarray(v) for k, v in arrays.items()}
    for k, v in (meta or {}).items():
        payload[f"meta_{k}"] = np.asarray(str(v))
    np.savez_compressed(paths[2], **payload)
    return paths


def panel_letters(axes, labels=None, x=-0.12, y=1.04, size=11):
    """Write the panel letters (a), (b), … on ``axes`` (in reading order), bold, just outside the top-left corner.

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes or an array of them
    labels : sequence of str, optional
        Default ``"(a)", "(b)", …``.
    x, y : float
        Position in axes coordinates.
    size : float
        Font size.

    Returns
    -------
    list of matplotlib.text.Text
    """
    from matplotlib.axes import Axes

    try:
        axes = list(np.ravel(np.array(axes, dtype=object)))
    except ValueError:                   # ragged nested lists
        axes = [None]
    if not all(isinstance(ax, Axes) for ax in axes):
        check.fail("axes", f"<{type(axes).__name__}>", "a sequence of matplotlib Axes (or an array of them)")
    if labels is None:
        labels = [f"({chr(ord('a') + i)})" for i in range(len(axes))]
    elif (not isinstance(labels, (list, tuple)) or len(labels) < len(axes)
          or not all(isinstance(lab, str) for lab in labels)):
        check.fail("labels", labels, f"None or a sequence of at least {len(axes)} str")
    x, y = check.real("x", x), check.real("y", y)
    size = check.positive("size", size)
    return [ax.text(x, y, lab, transform=ax.transAxes, fontweight="bold", fontsize=size, va="bottom", ha="left")
            for ax, lab in zip(axes, labels)]
