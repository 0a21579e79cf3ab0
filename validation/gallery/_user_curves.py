"""A user's own theory and simulation curves in the figures' style (:func:`plot_curves`)."""
from __future__ import annotations

import os

import numpy as np

from linattn import _check as check
from linattn._arguments import array, optional, public

#: how the figures draw a theory against data: a line for the theory, open markers with ±1 s.e. bars for the data
#: (``validation/gallery/_fig2_3.py``, ``_task_pools.py``), a translucent band for a theory's uncertainty
MARKER = dict(fmt="o", mfc="w", ms=4.5, lw=0.8, capsize=2)
BAND_ALPHA = 0.25


def _style_params():
    """The rcParams of ``linattn.mplstyle`` (read from the file: no backend switch, unlike :func:`style`)."""
    import matplotlib

    return matplotlib.rc_params_from_file(os.path.join(os.path.dirname(__file__), "linattn.mplstyle"),
                                          use_default_template=False)


def _curve(name, value, n, where):
    if value is None:
        return None
    arr = check.finite_array(name, value, ndim=1)
    if arr.shape != (n,):
        check.fail(name, f"<array with shape {arr.shape}>", f"a 1-d array of the length of {where} ({n})")
    return arr


@public(x=array(ndim=1), theory=optional(array(ndim=1)), simulation=optional(array(ndim=1)),
        se=optional(array(ndim=1)), x_sim=optional(array(ndim=1)), ax=None, band=None, label=None, color=None,
        simulation_label=None)
def plot_curves(ax, x, theory=None, simulation=None, se=None, x_sim=None, band=None, label=None, color=None,
                simulation_label=None):
    r"""Draw your own theory curve and simulation points on ``ax`` in the style of the library's figures: the
    theory as a line, the simulation as open markers with ±1 s.e. error bars, an optional band around the theory
    (e.g. ±2 s.e. of a theory that samples, or a spread over datasets), the colours, widths and marker sizes of
    ``linattn.mplstyle``.

    The axes themselves are yours (scales, labels, legend); for the whole look (fonts, grid, the colour cycle of new
    axes) create the figure inside :func:`validation.gallery.style`. Nothing else of the figure is changed.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    x : array_like (n,)
        Abscissae of the theory (and of the simulation unless ``x_sim`` is given).
    theory : array_like (n,), optional
    simulation : array_like (m,), optional
        Simulated means at ``x_sim`` (default ``x``).
    se : array_like (m,), optional
        Their standard errors (``>= 0``): ±1 s.e. bars.
    x_sim : array_like (m,), optional
    band : (array_like (n,), array_like (n,)), optional
        Lower and upper edges of a band around the theory.
    label : str, optional
        Legend label of the theory line (and of the markers, ``"<label>, simulation ± 1 s.e."``; without a theory
        the markers get ``label`` itself).
    simulation_label : str, optional
        The markers' legend label instead (e.g. ``"exact average ± 1 s.e."``).
    color : str, optional
        Default: the next colour of the style's cycle (by the number of curves this function drew on ``ax``).

    Returns
    -------
    dict
        The artists: ``"theory"`` (Line2D), ``"simulation"`` (ErrorbarContainer), ``"band"`` (PolyCollection);
        ``None`` for what was not drawn.

    Raises
    ------
    ValueError
        Neither a theory nor a simulation, lengths that do not match, negative standard errors, or ``ax`` not a
        matplotlib Axes (each named).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np
    >>> from validation.gallery import plot_curves
    >>> fig, ax = plt.subplots()
    >>> x = np.geomspace(10, 1000, 20)
    >>> art = plot_curves(ax, x, theory=1 / x, simulation=1.05 / x[::5], se=0.02 / x[::5], x_sim=x[::5], label="E_g")
    >>> sorted(k for k, v in art.items() if v is not None)
    ['simulation', 'theory']
    >>> plt.close(fig)
    """
    import matplotlib
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        check.fail("ax", ax, "a matplotlib Axes (fig, ax = plt.subplots())")
    if theory is None and simulation is None:
        check.fail("theory", theory, "an array (or a simulation) to draw")
    n = x.size
    theory = _curve("theory", theory, n, "x")
    if x_sim is None and simulation is not None:
        x_sim = x
    m = None if simulation is None else x_sim.size
    simulation = _curve("simulation", simulation, m, "x_sim" if x_sim is not x else "x")
    if se is not None:
        if simulation is None:
            check.fail("se", "<array>", "None without a simulation (the standard errors of its points)")
        se = _curve("se", se, m, "simulation")
        if np.any(se < 0):
            check.fail("se", "<array with negative entries>", "standard errors >= 0")
    if band is not None:
        if not isinstance(band, (tuple, list)) or len(band) != 2:
            check.fail("band", band, "a pair (lower, upper) of arrays of the length of x")
        band = (_curve("band", band[0], n, "x"), _curve("band", band[1], n, "x"))
    for name, value in (("label", label), ("color", color), ("simulation_label", simulation_label)):
        if value is not None and not isinstance(value, str):
            check.fail(name, value, "None or a string")
    params = _style_params()
    drawn = getattr(ax, "_linattn_curves", 0)
    if color is None:
        cycle = params["axes.prop_cycle"].by_key()["color"]
        color = cycle[drawn % len(cycle)]
    ax._linattn_curves = drawn + 1
    out = dict(theory=None, simulation=None, band=None)
    with matplotlib.rc_context({k: v for k, v in params.items() if k.startswith(("lines.", "errorbar."))}):
        if band is not None:
            out["band"] = ax.fill_between(x, band[0], band[1], color=color, alpha=BAND_ALPHA, lw=0)
        if theory is not None:
            out["theory"], = ax.plot(x, theory, color=color, label=label)
        if simulation is not None:
            sim_label = simulation_label
            if sim_label is None and label is not None:
                sim_label = label if theory is None else f"{label}, simulation ± 1 s.e."
            out["simulation"] = ax.errorbar(x_sim, simulation, yerr=se, color=color, label=sim_label, **MARKER)
    return out
