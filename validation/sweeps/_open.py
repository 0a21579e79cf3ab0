"""One call that opens any store the library writes as one ``xarray.Dataset`` (:func:`open_store`)."""
from __future__ import annotations

import os

from linattn import _check as check

from ._points import point_dataset
from ._store import load_sweep, store_kind


def open_store(store):
    """Open a store written by the library as one ``xarray.Dataset``: a sweep's (:func:`validation.sweep`), or the
    points of an experiment or a figure (:func:`validation.run_experiment` and ``linattn figures … --store``).

    A sweep store opens as :func:`load_sweep` opens it: dimensions the grid's parameters and ``replicate``. A point
    store opens over the dimension ``point``, with the points' parameters as coordinates (``D``, ``N``, ``P``,
    ``kind``, ``seed``, …; NaN, or ``""``, at a point that does not have the parameter; a parameter that is also an
    output is ``point_{name}``), every output as one variable — stacked where it has one shape at every point, else
    padded to its largest shape with NaN (``""`` for strings), axis ``j`` of output ``k`` being the dimension
    ``{k}_{j}`` — and ``status`` and ``error``. A finished store is read from the arrays written when it finished
    (one read of its metadata: seconds for the largest figure); an unfinished one, or one finished by an older
    version, is assembled from its points' subgroups (the points done). The folder that ``linattn figures --store
    DIR`` fills (``DIR/<experiment>/<mode>``) opens when it holds one store; with several, the message lists them.

    Parameters
    ----------
    store : str or os.PathLike
        The store's folder.

    Returns
    -------
    xarray.Dataset

    Raises
    ------
    ValueError
        In one line naming the store: not a folder, not a store of this library (saying what it is), a folder of
        several stores (naming them), a damaged store, or arrays whose metadata claim more than the memory limit
        (checked before anything is read).

    Examples
    --------
    >>> import validation                                          # doctest: +SKIP
    >>> ds = validation.open_store("runs/stationary_N/full")      # doctest: +SKIP
    >>> ds.test.where(ds.kind == "exact", drop=True).sel(test_0=0)  # doctest: +SKIP
    """
    if not isinstance(store, (str, os.PathLike)) or not os.path.isdir(store):
        check.fail("store", store, "the folder of a store written by validation.sweep, run_experiment or linattn "
                   "figures --store")
    path = os.fspath(store)
    kind, info = store_kind(path)
    if kind == "folder":
        if len(info) > 1:
            raise ValueError(f"store {path!r} is a folder of {len(info)} experiment stores ({', '.join(info[:6])}"
                             f"{', …' if len(info) > 6 else ''}): open one of them, e.g. "
                             f"validation.open_store({os.path.join(path, info[0])!r})")
        path = os.path.join(path, info[0])
        kind, info = store_kind(path)
    where = f"store {path!r}"
    if kind == "sweep":
        return load_sweep(path)
    if kind != "points":
        raise ValueError(f"{where} is not a store written by this library (validation.sweep, run_experiment, "
                         f"linattn figures): {info}")
    try:
        return point_dataset(path, where, info)
    except MemoryError:
        raise
    except Exception as err:                 # zarr's, numcodecs' and xarray's errors of a damaged store among them
        if isinstance(err, ValueError) and str(err).startswith(where):   # ours (sizes), already naming the store
            raise
        raise ValueError(f"{where} is a damaged point store: {type(err).__name__}: "
                         f"{' '.join(str(err).split())[:300]}") from None
