"""The unit of the validation layer: an experiment is settings → run → result → checks.

An experiment is a subclass of :class:`Experiment` in a module of :mod:`validation.experiments`. It
declares

* ``name`` (how figures, the report, the command line and sweeps call it) and ``title``;
* ``presets``: its frozen settings per mode — ``"smoke"`` (exercises every code path in seconds; its
  numbers are not judged), ``"quick"`` (what ``make run`` regenerates) and ``"full"`` (the papers'
  protocol) — each a plain ``dict`` that :meth:`Experiment.settings` turns into a read-only
  :class:`Settings`;
* ``points(settings)``: the independent units of work (a list of JSON-able dicts), and
  ``compute(settings, point)``: one point's outputs (a dict of numeric arrays; every random number
  is seeded from the settings and the point, so a point gives the same numbers wherever it runs);
* ``data_class``: the frozen dataclass of its data (a subclass of :class:`ExperimentData`: every array and scalar a
  named, documented field), and ``assemble(settings, outputs)``: an instance of it and the metadata, from the outputs
  of all points in order (the :attr:`Result.data` that figures, checks and tests read by field name);
* ``checks(result)``: its theory-vs-simulation comparisons (a list of :class:`Check`; the report is
  the loop over these).

:func:`run` evaluates the points in this process, on local processes or on a Dask cluster, and with
``store=`` writes each point as it finishes into a Zarr group (:func:`validation.sweeps.run_points`):
an interrupted run resumes where it stopped. Adding an experiment means adding a module: the
registry (:func:`registry`) discovers every module of this package.
"""
from __future__ import annotations

import importlib
import json
import math
import numbers
import os
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from linattn import _check as check

from ._data import ExperimentData
from ._result_io import MODES, RESULT_MODES, check_data_keys, jsonable, read_result, write_result

#: a count in an experiment's settings may be at most this many times its largest preset (a thousand full-size runs
#: of work; beyond it a count of 10¹² reached numpy's allocator or looped for hours)
MAX_SCALE = 1000


@dataclass(frozen=True)
class Check:
    """One theory-vs-simulation comparison: a row of the validation report.

    Attributes
    ----------
    section : str
        The report section (usually the experiment's name).
    quantity : str
        What is compared.
    parameters : str
        The setting, in words and numbers.
    theory, simulation, rel_error : str
        The two values (with their uncertainty) and their relative difference, formatted.
    passed : bool
        Whether the criterion holds.
    criterion : str
        The rule, with the error estimate it rests on.
    """

    section: str
    quantity: str
    parameters: str
    theory: str
    simulation: str
    rel_error: str
    passed: bool
    criterion: str

    def __post_init__(self):
        object.__setattr__(self, "passed", bool(self.passed))

    def __repr__(self):
        return f"Check({self.section}: {self.quantity} — {'PASS' if self.passed else 'FAIL'})"


class Settings(Mapping):
    """Read-only settings of an experiment: a mapping, also readable as attributes (``s.n_datasets``)."""

    def __init__(self, values):
        if not isinstance(values, Mapping):
            check.fail("values", values, "a mapping of setting names to values")
        object.__setattr__(self, "_values", dict(values))

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __getattr__(self, key):
        try:        # not self._values: on an instance being unpickled or copied it is not set yet (infinite recursion)
            return object.__getattribute__(self, "_values")[key]
        except (KeyError, AttributeError):
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        raise AttributeError("Settings are read-only: make new ones with Experiment.settings(mode, **overrides)")

    def __repr__(self):
        return f"Settings({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"[:300]


@dataclass(frozen=True, eq=False)
class Result:
    """What an experiment computed: its name, mode, settings, data and metadata.

    Attributes
    ----------
    experiment : str
    mode : str
        The preset the settings came from (``"custom"`` for hand-made settings).
    settings : dict
    data : ExperimentData or dict of str to ndarray
        The named arrays: an instance of the experiment's data class (:attr:`Experiment.data_class`; read its fields,
        ``result.data.theory_icl``), or, for an experiment whose :meth:`Experiment.assemble` returns a plain dict (one
        of your own, or a result whose data class this version does not know), that dict.
    meta : dict
        JSON-able metadata (summaries, derived scalars).
    """

    experiment: str
    mode: str
    settings: dict
    data: ExperimentData | dict = field(repr=False)
    meta: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if not isinstance(self.experiment, str) or not self.experiment:
            check.fail("experiment", self.experiment, "a non-empty string (the experiment's name)")
        if self.mode not in RESULT_MODES:
            check.fail("mode", self.mode, f"one of {RESULT_MODES}")
        for key in ("settings", "meta"):
            if not isinstance(getattr(self, key), Mapping):
                check.fail(key, getattr(self, key), "a dict")
        if not isinstance(self.data, (ExperimentData, Mapping)):
            check.fail("data", self.data, "an ExperimentData (the experiment's data class) or a dict of str to arrays")
        if isinstance(self.data, Mapping):
            check_data_keys(self.data)

    def __repr__(self):
        data = (type(self.data).__name__ if isinstance(self.data, ExperimentData)
                else f"{len(self.data)} arrays")
        return f"Result({self.experiment!r}, mode={self.mode!r}, {data}, meta keys {sorted(self.meta)[:6]})"

    def save(self, path: str) -> str:
        """Write the result to ``path`` (``.npz``: the arrays of :attr:`data` by member name
        (:meth:`ExperimentData.to_arrays`), and the rest as JSON in ``__result__``, with the name of the data class);
        like :func:`numpy.savez`, ``.npz`` is appended to a path that does not end with it, and the path returned is
        the file written (what :meth:`load` reads).

        What :meth:`load` would refuse is refused here, before anything is written: a header outside the schema
        (:func:`validation.experiments._result_io.check_header`), settings or metadata that are not JSON, object arrays
        (they need pickles).

        Parameters
        ----------
        path : str

        Returns
        -------
        str
            The path of the file written (``path``, with ``.npz`` appended when it does not end with it).

        Raises
        ------
        ValueError
            Naming the field (``experiment``, ``mode``, ``settings``, ``meta``, ``data[key]``) that cannot be saved
            (settings and metadata nested more than :data:`~validation.experiments._result_io.MAX_DEPTH` levels deep
            included), or ``path`` (not writable, or a folder).
        """
        typed = isinstance(self.data, ExperimentData)
        if not typed and not isinstance(self.data, Mapping):
            check.fail("data", self.data, "an ExperimentData or a dict of str to arrays")
        arrays = self.data.to_arrays() if typed else dict(self.data)
        return write_result(path, self.experiment, self.mode, self.settings, self.meta, arrays,
                            type(self.data).__name__ if typed else None)

    @classmethod
    def load(cls, path: str) -> "Result":
        """Read a result written by :meth:`save` (no pickles: object arrays are refused), or by version 0.1.0.

        The data become an instance of the experiment's data class (:attr:`Experiment.data_class`): from the members
        of a file that names that class, or, for a file of version 0.1.0 (a plain dict of arrays, no data class in
        its header), from its arrays under their old names (:meth:`ExperimentData.legacy_arrays`). The data stay a
        plain dict of arrays for an experiment that is not registered in this process or has no data class, and for
        a file whose data class this version does not know.

        Parameters
        ----------
        path : str

        Returns
        -------
        Result

        Raises
        ------
        ValueError
            Naming ``path``: not a file, not a result file (not a zip, truncated, a member that is not an ``.npy``
            array or holds fewer bytes than its header claims, object arrays, a header outside the schema of
            :func:`~validation.experiments._result_io.check_header`, arrays that are not the fields of its data
            class), or arrays whose sizes — declared by the zip and by the ``.npy`` headers, checked before anything
            is decompressed — exceed the memory limit (:func:`linattn._check.memory`).
        """
        header, arrays = read_result(path)
        data = _typed_data(header, arrays, f"path {os.fspath(path)!r}")
        return cls(header["experiment"], header["mode"], header["settings"], data, header["meta"])


def _typed_data(header, arrays, where):
    """The data of a result file as its experiment's data class (:meth:`Result.load`), else the plain dict."""
    exp = registry().get(header["experiment"])
    data_class = getattr(exp, "data_class", None)
    name = header.get("data")
    if data_class is None or (name is not None and name != data_class.__name__):
        return arrays
    try:
        if name is None:                        # version 0.1.0: the experiment's own names
            return data_class.from_arrays(data_class.legacy_arrays(arrays, header["settings"], header["meta"]))
        return data_class.from_arrays(arrays)
    except (ValueError, KeyError, IndexError, TypeError) as err:
        layout = "its data class" if name is not None else "version 0.1.0"
        raise ValueError(f"{where} is not a result file of experiment {header['experiment']!r}: its arrays are not "
                         f"those of {data_class.__name__} ({layout}): {type(err).__name__}: {err}") from None


def _element_kind(e):
    """The kind of one element of a preset's list (:func:`_check_elements`)."""
    if e is None:
        return "None"
    if isinstance(e, str):
        return "str"
    if isinstance(e, numbers.Integral) and not isinstance(e, bool):
        return "int"
    if isinstance(e, numbers.Real) and not isinstance(e, bool):
        return "float"
    return "list" if isinstance(e, (list, tuple)) else "other"


def _is_number(x):
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_)) and math.isfinite(x)


def _count_range(key, preset_counts, limit=None):
    """``(low, high)`` of a count override (a scalar or a list element) of setting ``key`` whose presets are the
    integers ``preset_counts``: ``>= 0`` and unbounded for a seed; else ``>= 1`` where every preset is, and at most
    ``limit`` (the experiment's :attr:`Experiment.count_limits`) or :data:`MAX_SCALE` times the largest preset."""
    if "seed" in key:
        return 0, None
    low = 0 if min(preset_counts) < 1 else 1
    return low, limit if limit is not None else MAX_SCALE * max(1, max(preset_counts))


def _check_elements(key, value, preset_elements, limit=None):
    """Refuse a list override whose elements are not of the kind of its presets' elements, naming ``key``: integers
    (``>= 1`` where every preset's are, ``>= 0`` for seeds; at most :data:`MAX_SCALE` times the largest preset's),
    finite numbers (``> 0`` where every preset's are), strings, ``None`` where a preset has it, non-empty lists of
    finite numbers (or, in-process, a :class:`linattn.Problem`) where the presets hold lists."""
    kinds = {_element_kind(e) for e in preset_elements}
    if "other" in kinds:
        return
    ints = [e for e in preset_elements if _element_kind(e) == "int"]
    floats = [e for e in preset_elements if _element_kind(e) in ("int", "float")]
    # numbers (a spectrum, task ratios, scales): > 0 where every preset's are (0 or less refused under inner names)
    positive = "float" in kinds and min(floats) > 0
    low, high = _count_range(key, ints, limit) if ints else (0 if "seed" in key else 1, None)
    accepted = {"None": "None", "str": "strings",
                "int": f"integers >= {low}" + ("" if high is None else f" and <= {high}"),
                "float": "finite numbers" + (" > 0" if positive else ""), "list": "non-empty lists of finite numbers"}

    def ok(e):
        if e is None or isinstance(e, str):
            return ("None" if e is None else "str") in kinds
        if isinstance(e, numbers.Integral) and not isinstance(e, (bool, np.bool_)):
            if "int" in kinds:
                return low <= e and (high is None or e <= high)
            return "float" in kinds and (e > 0 or not positive)
        if _is_number(e):
            return "float" in kinds and (e > 0 or not positive)
        if isinstance(e, (list, tuple, np.ndarray)) and "list" in kinds:
            items = np.asarray(e, dtype=object).ravel().tolist() if isinstance(e, np.ndarray) else list(e)
            return len(items) > 0 and all(_is_number(x) for x in items)
        if "list" in kinds and key == "problems":
            import linattn

            return isinstance(e, linattn.Problem)
        return False

    if isinstance(value, np.ndarray) and value.ndim > 1 and "list" in kinds:
        value = list(value)
    items = value.tolist() if isinstance(value, np.ndarray) and "list" not in kinds else list(value)
    bad = [e for e in items if not ok(e)]
    if bad:
        check.fail(key, value, "a non-empty list of " + " or ".join(accepted[k] for k in sorted(kinds))
                   + f" (as in the presets; not: {bad[0]!r})")


class Experiment:
    """Base class of an experiment (module docstring). Subclasses set ``name``, ``title``, ``presets``
    and implement :meth:`points`, :meth:`compute`, :meth:`assemble` and (optionally) :meth:`checks`.

    ``report_order`` places the experiment's checks in the validation report (``None``: no section).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    presets: ClassVar[dict] = {}
    #: the class of the data :meth:`assemble` returns (``None``: a plain dict of arrays, the generic fallback that
    #: :meth:`Result.load` also reads)
    data_class: ClassVar[type | None] = None
    report_order: ClassVar[float | None] = None
    #: counts whose largest accepted value is the experiment's own, not :data:`MAX_SCALE` times the largest preset
    #: (:meth:`check_overrides`)
    count_limits: ClassVar[dict] = {}
    #: settings whose presets are dicts that also accept ``None`` (:meth:`check_overrides`)
    nullable: ClassVar[tuple] = ()
    #: number settings that must be ``> 0`` (a rate, scale, inverse temperature; others need ``>= 0``)
    positive: ClassVar[tuple] = ()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.name:
            if cls.name in _REGISTRY and _REGISTRY[cls.name].__module__ != cls.__module__:
                raise ValueError(f"experiment name {cls.name!r} is registered twice ({_REGISTRY[cls.name].__module__}, "
                                 f"{cls.__module__})")
            _REGISTRY[cls.name] = cls

    # -- settings ---------------------------------------------------------------------------------------
    @classmethod
    def settings(cls, mode: str = "quick", **overrides) -> Settings:
        """The preset of ``mode`` with ``overrides`` applied (only known keys).

        Parameters
        ----------
        mode : {"smoke", "quick", "full"}
        **overrides
            Keys of the preset to replace.

        Returns
        -------
        Settings
        """
        check.choice("mode", mode, tuple(cls.presets) or MODES)
        if mode not in cls.presets:          # the base class (or an experiment without this preset): no KeyError
            check.fail("mode", mode, f"a preset of experiment {cls.name!r}: one of {tuple(cls.presets)} (Experiment "
                       "itself has none: validation.experiments.get(name).settings(mode))")
        base = dict(cls.presets[mode])
        unknown = sorted(set(overrides) - set(base))
        if unknown:
            raise ValueError(f"settings of experiment {cls.name!r} have no key {unknown[0]!r}; "
                             f"known keys: {sorted(base)}")
        cls.check_overrides(overrides)
        base.update(overrides)
        return Settings(base)

    @classmethod
    def check_overrides(cls, overrides):
        """Refuse an override of another kind than the presets' values of its key, naming the key: an integer where
        every preset is one (``>= 1`` where every preset is, seeds ``>= 0``; a count at most :data:`MAX_SCALE` times
        its largest preset, as an experiment's work and memory grow with its counts), ``True``/``False`` for a flag,
        a finite number where every preset is one (``>= 0`` where every preset is, ``> 0`` for a key in
        :attr:`positive`), a non-empty list where every preset is one, its elements of the kind of the presets'
        elements (:func:`_check_elements`), a string or a dict where every preset is one (or ``None`` for a dict
        in :attr:`nullable`; a dict's keys are checked the same way against the presets' dicts), ``None`` where a
        preset is (the other presets give the kind) (ranges beyond these: the experiment's own checks).

        Parameters
        ----------
        overrides : dict
        """
        if not isinstance(overrides, Mapping):
            check.fail("overrides", overrides, "a dict of setting names to values")
        for key, value in overrides.items():
            cls._check_override(key, value, [p[key] for p in cls.presets.values() if key in p], key)

    @classmethod
    def _check_override(cls, key, value, vals, name):
        """:meth:`check_overrides` of one setting ``key`` (called ``name`` in messages: ``transition['P_exact']``
        inside a dict) against its presets' values ``vals``. A preset ``None`` allows ``None`` and leaves the kind to
        the others; a dict setting is checked key by key against its presets' dicts (keys no preset has, such as
        keyword arguments passed on, are the experiment's own)."""
        if value is None and any(v is None for v in vals):
            return
        vals = [v for v in vals if v is not None]
        if not vals:
            return
        if all(isinstance(v, bool) for v in vals):
            check.boolean(name, value)
        elif all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in vals):
            low, high = _count_range(key, vals, cls.count_limits.get(key))
            check.positive_int(name, value, minimum=low, maximum=high)
        elif all(isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in vals):
            if key in cls.positive:
                check.positive(name, value)
            elif min(vals) >= 0:    # a time, scale or penalty: refused here, not under an inner name
                check.nonnegative(name, value)
            else:
                check.real(name, value)
        elif all(isinstance(v, (list, tuple)) and len(v) > 0 for v in vals):
            listed = isinstance(value, (list, tuple, np.ndarray)) and getattr(value, "ndim", 1) > 0
            if not listed or len(value) == 0:
                check.fail(name, value, "a non-empty list (as in the presets)")
            _check_elements(name, value, [e for v in vals for e in v], cls.count_limits.get(key))
        elif all(isinstance(v, str) for v in vals):
            if not isinstance(value, str):
                check.fail(name, value, "a string (as in the presets)")
        elif all(isinstance(v, Mapping) for v in vals):
            if not isinstance(value, Mapping) and not (value is None and key in cls.nullable):
                check.fail(name, value, ("None or " if key in cls.nullable else "") + "a dict (as in the presets)")
            for sub, v in (value or {}).items():
                cls._check_override(sub, v, [p[sub] for p in vals if sub in p], f"{name}[{sub!r}]")

    # -- the work ---------------------------------------------------------------------------------------
    def points(self, s: Settings) -> list:
        """The independent units of work; default: one point.

        Parameters
        ----------
        s : Settings

        Returns
        -------
        list of dict
            JSON-able points, each evaluated by :meth:`compute` (in any order, anywhere).
        """
        return [{}]

    def describe_point(self, s: Settings, point: dict) -> dict:
        """Parameters of a point that it does not hold itself (e.g. the ``D`` and ``N`` of the problem its index
        names): with the point's own fields, the coordinates of a store's ``point`` dimension
        (:func:`validation.open_store`); default: none.

        Parameters
        ----------
        s : Settings
        point : dict
            One element of :meth:`points`.

        Returns
        -------
        dict of str to number or str
        """
        return {}

    def compute(self, s: Settings, point: dict) -> dict:
        """One point's outputs; every random number is seeded from ``s`` and ``point``.

        Parameters
        ----------
        s : Settings
        point : dict
            One element of :meth:`points`.

        Returns
        -------
        dict of str to ndarray
            Numeric arrays (any shapes).
        """
        raise NotImplementedError

    def assemble(self, s: Settings, outputs: list) -> tuple:
        """The data and metadata of the :class:`Result` from the outputs of every point.

        Parameters
        ----------
        s : Settings
        outputs : list of dict
            :meth:`compute` of every point, in the order of :meth:`points`.

        Returns
        -------
        (ExperimentData or dict, dict)
            ``(data, meta)``: an instance of :attr:`data_class` (or, for an experiment without one, a plain dict of
            str to arrays) and JSON-able metadata; default: the union of the outputs as a dict and no metadata.
        """
        data = {}
        for out in outputs:
            data.update(out)
        return data, {}

    def checks(self, result: Result) -> list:
        """The theory-vs-simulation comparisons of this experiment; default: none.

        Parameters
        ----------
        result : Result

        Returns
        -------
        list of Check
        """
        return []


_REGISTRY: dict[str, type] = {}
_DISCOVERED: list = []


def registry() -> dict:
    """Every experiment, by name (discovers the modules of :mod:`validation.experiments` once).

    Returns
    -------
    dict of str to Experiment subclass
    """
    if not _DISCOVERED:
        package = importlib.import_module("validation.experiments")
        for info in pkgutil.iter_modules(package.__path__):
            if info.name not in ("_base", "_data", "_result_io"):   # every family module registers its own
                importlib.import_module(f"validation.experiments.{info.name}")
        _DISCOVERED.append(True)
    return dict(_REGISTRY)


def get(name: str) -> Experiment:
    """The experiment called ``name`` (an instance).

    Parameters
    ----------
    name : str

    Returns
    -------
    Experiment
    """
    reg = registry()
    return reg[check.choice("name", name, sorted(reg))]()


def _point_task(name, settings, point, rng=None):
    """Evaluate point ``point`` (an index) of experiment ``name`` (module-level: workers import it)."""
    exp = get(name)
    s = Settings(settings)
    return exp.compute(s, exp.points(s)[point])


def point_coords(points, described=None):
    """The coordinates of a store's ``point`` dimension (:func:`validation.sweeps.run_points`): every field that some
    point has (with :meth:`Experiment.describe_point`'s, ``described``), one value per point — numbers as numbers
    (NaN where a point does not have the field; integers stay integers where every point has one), strings as
    strings (``""`` where absent), booleans as booleans where every point has one, anything else (lists, mixed
    kinds) as its JSON text."""
    if not isinstance(points, (list, tuple)) or not all(isinstance(p, dict) for p in points):
        check.fail("points", points, "a list of dicts (the points of an experiment)")
    rows = [dict(p, **(described[i] if described else {})) for i, p in enumerate(points)]
    out = {}
    for k in sorted(set().union(*rows) if rows else ()):
        values = [r.get(k) for r in rows]
        present = [v for v in values if v is not None]
        if all(isinstance(v, (bool, np.bool_)) for v in present):
            out[k] = (np.asarray(values, dtype=bool) if len(present) == len(values)
                      else np.asarray([np.nan if v is None else float(v) for v in values]))
        elif all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                 for v in present):
            ints = len(present) == len(values) and all(isinstance(v, (int, np.integer)) and abs(v) < 2**63
                                                       for v in present)
            out[k] = (np.asarray(values, dtype=np.int64) if ints
                      else np.asarray([np.nan if v is None else float(v) for v in values]))
        elif all(isinstance(v, str) for v in present):
            out[k] = np.asarray(["" if v is None else v for v in values], dtype=str)
        else:
            out[k] = np.asarray(["" if v is None else json.dumps(jsonable(v), sort_keys=True) for v in values],
                                dtype=str)
    return out


def run(experiment, mode="quick", settings=None, store=None, client=None, workers=1, progress=True,
        allow_mixed=False) -> Result:
    """Run an experiment: every point, then :meth:`Experiment.assemble`.

    Parameters
    ----------
    experiment : str or Experiment
    mode : {"smoke", "quick", "full"}
        The preset (when ``settings`` is given: the values of the keys it does not set).
    settings : Settings or dict, optional
        Settings of your own (e.g. ``Exp.settings("quick", n_datasets=50)``): each key one of the presets', its value
        of the presets' kind (:meth:`Experiment.check_overrides`; a count at most :data:`MAX_SCALE` times its
        largest preset).
    store : str, optional
        Zarr folder: each point is written as it finishes and a re-run resumes (optional extra ``[dask]``); a
        store opens as one ``xarray.Dataset`` over ``point``, the points' parameters as coordinates
        (:func:`validation.open_store`), and a finished one keeps the assembled result beside it
        (:data:`ASSEMBLED`, its key inside it), so reopening it assembles nothing.
        Ctrl-C raises ``KeyboardInterrupt`` saying how many points are stored; the same call resumes.
    client : dask.distributed.Client, optional
        Evaluate the points on this cluster.
    workers : int
        Local processes when no client is given (1: in this process).
    progress : bool
    allow_mixed : bool
        Accept a store written by another code version.

    Returns
    -------
    Result

    Examples
    --------
    >>> import validation
    >>> r = validation.run_experiment("spectra", "smoke", progress=False)   # settings → points → result
    >>> r.experiment, r.mode
    ('spectra', 'smoke')
    """
    from ..sweeps import checked_client, run_points

    exp = get(check.choice("experiment", experiment, sorted(registry()))) if isinstance(experiment, str) else experiment
    if not isinstance(exp, Experiment):
        check.fail("experiment", experiment, "an experiment name or an Experiment instance")
    check.choice("mode", mode, MODES)
    progress = check.boolean("progress", progress)
    client = checked_client(client)
    allow_mixed = check.boolean("allow_mixed", allow_mixed)
    workers = check.positive_int("workers", workers)
    if settings is not None:
        if not isinstance(settings, Mapping):
            check.fail("settings", settings, "a Settings or a dict of the experiment's settings")
        full = exp.settings(mode)
        unknown = sorted(set(settings) - set(full))
        if unknown:
            check.fail("settings", sorted(settings), f"the keys of experiment {exp.name!r}'s settings: {sorted(full)} "
                       f"(unknown: {unknown}); start from {type(exp).__name__}.settings(mode, **overrides)")
        exp.check_overrides(dict(settings))
    s = exp.settings(mode) if settings is None else Settings({**exp.settings(mode), **dict(settings)})
    pts = exp.points(s)
    label = mode if settings is None else "custom"
    if store is None and client is None and workers == 1:
        from tqdm import tqdm

        outputs = [exp.compute(s, p) for p in tqdm(pts, desc=exp.name, disable=not progress or len(pts) < 2,
                                                  leave=False)]
    else:
        import functools

        fn = functools.partial(_point_task, exp.name, jsonable(dict(s)))
        outputs = run_points(fn, len(pts), name=f"{exp.name}:{label}",
                             attrs={"settings": json.dumps(jsonable(dict(s)))},
                             store=store, client=client, workers=workers, progress=progress, allow_mixed=allow_mixed,
                             source=type(exp), coords=point_coords(pts, [exp.describe_point(s, p) for p in pts]))
    if store is None:
        data, meta = exp.assemble(s, outputs)
        return Result(exp.name, label, dict(s), data, meta)
    return _assembled(exp, s, label, outputs, os.fspath(store))


#: the file of a finished store that holds its assembled result (``{key}``: :func:`_assembly_key`)
ASSEMBLED = "assembled-{key}.npz"
#: the entry of a kept result's metadata that holds its key (removed from the result returned)
_KEY_ENTRY = "assembly_key"


def _assembled(exp, s, label, outputs, store):
    """:meth:`Experiment.assemble` of a stored run, kept beside the points (:data:`ASSEMBLED`): reopening a finished
    store reads it instead of assembling again (the theory curves some experiments compute there take seconds). Its
    key digests everything the assembly depends on, so any change assembles afresh and replaces the file. The key is
    also written inside the file, and a kept file is returned only when it is this experiment's result, of this mode
    and these settings, holding this key: a damaged file, or another experiment's result under the name, costs a
    recomputation and is replaced, never returned."""
    key = _assembly_key(exp, s, label, outputs)
    path = os.path.join(store, ASSEMBLED.format(key=key)) if key else None
    if path and os.path.isfile(path):
        kept = _kept(path, exp, s, label, key)
        if kept is not None:
            return kept
    data, meta = exp.assemble(s, outputs)
    result = Result(exp.name, label, dict(s), data, meta)
    if path:
        try:
            for old in os.listdir(store):
                if old.startswith("assembled-") and old.endswith(".npz"):
                    os.remove(os.path.join(store, old))
            keyed = Result(exp.name, label, dict(s), data, {**meta, _KEY_ENTRY: key})
            tmp = keyed.save(f"{path[:-len('.npz')]}.{os.getpid()}.partial.npz")
            os.replace(tmp, path)                 # whole or absent
        except (OSError, ValueError):             # a read-only store: the result, not kept
            pass
    return result


def _kept(path, exp, s, label, key):
    """The result kept at ``path`` if it is the one :func:`_assembled` would compute (its experiment, mode, settings
    and key, and data of the experiment's data class), else ``None``."""
    try:
        kept = Result.load(path)
    except Exception:                             # damaged, cut short, not a result file: assembled again
        return None
    meta = dict(kept.meta)
    same = (meta.pop(_KEY_ENTRY, None) == key and kept.experiment == exp.name and kept.mode == label
            and json.dumps(kept.settings, sort_keys=True) == json.dumps(jsonable(dict(s)), sort_keys=True)
            and (exp.data_class is None or type(kept.data) is exp.data_class))
    return Result(kept.experiment, kept.mode, kept.settings, kept.data, meta) if same else None


def _assembly_key(exp, s, label, outputs):
    """SHA-256 (24 hex digits) of what :meth:`Experiment.assemble` reads: the experiment's name and class, the
    settings and mode, every point's outputs, and the source of the library's packages (the experiments and the
    theory they call). ``None`` (no caching) for anything the key cannot vouch for: an experiment that is not the
    registered class of its name or that carries state of its own (an instance with attributes), or a library whose
    source changed since this process loaded it (an edit during a run, a module reloaded)."""
    import hashlib

    if registry().get(exp.name) is not type(exp) or vars(exp):
        return None
    source = _library_digest()
    if source != _LOADED_DIGEST:
        return None
    h = hashlib.sha256()
    for part in (exp.name, type(exp).__qualname__, label, json.dumps(jsonable(dict(s)), sort_keys=True), source):
        h.update(part.encode() + b"\0")
    for out in outputs:
        for k in sorted(out):
            a = np.ascontiguousarray(out[k])
            h.update(f"{k}:{a.dtype.str}:{a.shape}".encode())
            h.update(a.tobytes())
    return h.hexdigest()[:24]


#: the folder that holds the library's packages (this file is ``validation/experiments/_base.py`` in it)
_PACKAGES_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PACKAGES = ("linattn", "replica", "spectra", "dynamics", "diagnostics", "validation")


def _library_digest():
    """SHA-256 of the source files of the library's packages as they are on disk now (~4 ms)."""
    import hashlib

    h = hashlib.sha256()
    for package in _PACKAGES:
        for folder, dirs, files in sorted(os.walk(os.path.join(_PACKAGES_ROOT, package))):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    with open(os.path.join(folder, name), "rb") as fh:
                        h.update(name.encode() + b"\0" + fh.read())
    return h.hexdigest()


#: the library's source when this module was loaded: a result is cached only while the source is unchanged
_LOADED_DIGEST = _library_digest()
