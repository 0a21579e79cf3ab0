"""Theory-vs-simulation experiments: stationary errors against task diversity ``P``.

For one problem, :func:`stationary_sweep` computes
* the replica-symmetric theory on a fine grid of ``P`` (:func:`replica.stationary`),
* dataset-averaged exact Gibbs averages (:func:`replica.gibbs`) at a coarser grid,
* Langevin simulations (:func:`validation.simulators.langevin`) on a few datasets per ``P`` — the markers of
  the seed's Figs. 2–3 — and
* the memorization → generalization boundary ``P*`` (``ΔEr = 5``) from each of the three.

Experiments (every random number is seeded per dataset, so the points below are independent):

* ``stationary`` (:class:`StationaryErrors`, what :func:`stationary_sweep` runs). Points, per problem: the theory
  curve and ``P*``; one exact marker per ``P`` (``n_exact`` datasets, ``rng=(seed, P, i)``); one Langevin run per
  ``P`` and dataset ``j`` (data ``rng=(seed + 1, P, j)``, chain seed ``seed · 7919 + j``).
* ``stationary_N`` (figure ``fig2``, seed paper, Fig. 2: ``N ∈ {10, 20, 50, 100}`` at ``D = 10``) and
  ``stationary_D`` (figure ``fig3``, Fig. 3: ``D ∈ {5, 10, 15, 20}`` at ``N = 100``): its presets, with the points
  of the report sections of the stationary physics added (settings ``replica``, ``langevin``, ``transition``;
  ``None``: no such points), so that each figure's result also gives its sections' checks:

  - ``stationary_D`` gives section ``replica``: dataset-averaged exact Gibbs errors against the replica theory
    (worst ``P`` per case), for the reduced and the full model at ``D = 10``, ``N = 100`` (a problem of Fig. 3)
    and for a noisy problem ``D = 20``, ``N = 40``, ``σ = 0.25`` (Fig. 3's largest ``D``); one point per (case,
    ``P``), ``n_datasets`` datasets ``rng=(51, P, i)``. The reduced model and the noisy problem are not drawn by
    any figure: the section checks the theory beyond the seed's figures. The full model at ``D = 10`` is the physics
    of Fig. 3's exact markers, on datasets of its own (60 in quick mode against the markers' 20, for the section's
    1 % goal; and the section's numbers stay what they were).
  - ``stationary_N`` gives sections ``langevin`` and ``transition``, both at ``D = 10``, ``N = 100`` (a problem of
    Fig. 2). ``langevin``: Langevin chains of one dataset against that dataset's exact Gibbs averages (data
    ``rng=(61, P)``, chains seed 62; one point per (model, ``P``)) and the exact ``O(dt)`` bias of a coarse step
    (data ``rng=(63, 1)``, chains seed 64; one point) — the figure's markers average over datasets, these compare
    one chain with its own exact target. ``transition``: ``P*`` of exact Gibbs averages and of Langevin
    simulations against the theory on a ``P`` grid around ``P*`` (9 exact and 7 simulated ``P`` in
    ``[20, 500]`` in quick and full mode, seed 71), finer than the figure's markers (its exact markers are a factor
    ≈ 2.2 apart, its Langevin markers ≈ 3; the section's 20 % tolerance rests on the spacing of its own grid).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields

import numpy as np

import linattn
import replica
from linattn import _check as check
from linattn import _validate as validate
from linattn._numerics.stats import mean_se

from ..simulators._langevin import langevin
from ._base import Experiment, Settings
from ._data import ExperimentData
from ._stationary_sections import (
    BETA,
    LAM,
    LANGEVIN_MODELS,
    REPLICA_CASES,
    CoarseStep,
    LangevinSection,
    ReplicaSection,
    langevin_checks,
    langevin_point,
    replica_checks,
    replica_point,
    transition_checks,
)

#: the settings shared by the presets of the figures and by the report sections
_SEED_SETTINGS = dict(model="full", beta=BETA, lam=LAM)


@dataclass(frozen=True, eq=False)
class StationarySweep:
    """Stationary errors along ``P`` from the three routes (:func:`stationary_sweep`): the replica theory, exact
    Gibbs averages over datasets, Langevin chains, and the boundary ``P*`` of each.

    Attributes
    ----------
    D, N : int
    model : str
    beta, lam : float
    P_theory, theory_train, theory_test : ndarray
        The theory's grid and ``⟨E_t⟩``, ``⟨E_g⟩``.
    P_exact, exact_train, exact_train_se, exact_test, exact_test_se : ndarray
        Exact Gibbs averages over datasets: grid, means and standard errors.
    P_sim, sim_train, sim_train_se, sim_test, sim_test_se : ndarray
        Langevin simulations: grid, means and standard errors.
    sim_dt : ndarray
        The Langevin step used at each simulated ``P``.
    P_star_theory, P_star_exact, P_star_sim : float or None
        ``P*`` of each route (:func:`linattn.transition_point`; ``None``: no crossing in the grid).
    """

    D: int
    N: int
    model: str
    beta: float
    lam: float
    P_theory: np.ndarray
    theory_train: np.ndarray
    theory_test: np.ndarray
    P_exact: np.ndarray
    exact_train: np.ndarray
    exact_train_se: np.ndarray
    exact_test: np.ndarray
    exact_test_se: np.ndarray
    P_sim: np.ndarray
    sim_train: np.ndarray
    sim_train_se: np.ndarray
    sim_test: np.ndarray
    sim_test_se: np.ndarray
    sim_dt: np.ndarray
    P_star_theory: float | None
    P_star_exact: float | None
    P_star_sim: float | None

    def as_dict(self, prefix=""):
        """All fields as a dict (``None`` boundaries stored as NaN, for ``.npz`` files).

        Parameters
        ----------
        prefix : str
            Prepended to every key.

        Returns
        -------
        dict
        """
        if not isinstance(prefix, str):
            check.fail("prefix", prefix, "a string")
        out = {}
        for k, v in self.__dict__.items():
            out[prefix + k] = np.nan if v is None else v  # npz storage of "no crossing" (documented)
        return out

    @classmethod
    def from_dict(cls, data, prefix=""):
        """The sweep written by :meth:`as_dict` (NaN boundaries read back as ``None``).

        Parameters
        ----------
        data : mapping of str to array_like
            Every key of :meth:`as_dict` (with ``prefix``); ``D``, ``N``, ``beta``, ``lam``, ``model`` and the
            ``P_star_*`` boundaries single values.
        prefix : str

        Returns
        -------
        StationarySweep

        Raises
        ------
        ValueError
            Naming ``data`` (not a mapping, a key missing, a scalar field that is not one value of its kind) or
            ``prefix`` (not a string).
        """
        from collections.abc import Mapping

        if not isinstance(data, Mapping):
            check.fail("data", data, "a mapping of str to arrays (StationarySweep.as_dict, or a Result's data)")
        if not isinstance(prefix, str):
            check.fail("prefix", prefix, "a string")
        missing = [prefix + f.name for f in fields(cls) if prefix + f.name not in data]
        if missing:
            check.fail("data", f"<mapping without the key {missing[0]!r} ({len(missing)} keys missing)>",
                       f"a mapping with every key of StationarySweep.as_dict(prefix={prefix!r})")
        values = {f.name: data[prefix + f.name] for f in fields(cls)}

        def scalar(k):
            v = np.asarray(values[k])
            if v.size != 1 or v.dtype.kind not in ("iuf" if k != "model" else "U"):
                check.fail("data", f"<{prefix + k!r}: {type(values[k]).__name__} {v.dtype} of shape {v.shape}>",
                           f"a mapping whose {prefix + k!r} is one " + ("string" if k == "model" else "number"))
            return v.reshape(()).item()

        for k in ("D", "N"):
            values[k] = check.positive_int(f"data[{prefix + k!r}]", scalar(k))
        values["beta"] = check.positive(f"data[{prefix + 'beta'!r}]", scalar("beta"), allow_inf=True)
        values["lam"] = check.nonnegative(f"data[{prefix + 'lam'!r}]", scalar("lam"))
        values["model"] = check.choice(f"data[{prefix + 'model'!r}]", scalar("model"), check.MODELS)
        for k in ("P_star_theory", "P_star_exact", "P_star_sim"):
            values[k] = _none_if_nan(scalar(k))
        return cls(**values)


def _none_if_nan(x):
    """``None`` for NaN (how a missing boundary is stored), else ``float(x)``."""
    x = float(x)
    return None if np.isnan(x) else x


def _mean_se(x):
    """Mean and standard error over the last axis (one value: nan s.e.)."""
    return mean_se(np.asarray(x, float), -1, single=np.nan)


def boundary_from_means(P, train_mean, test_mean, level=5.0):
    """``P*`` from dataset-averaged errors on a ``P`` grid: the library's rule
    (:func:`linattn.transition_point`) applied to the ratio of averages
    ``(⟨E_g⟩ − ⟨E_t⟩)/⟨E_t⟩``.

    Parameters
    ----------
    P : array_like (n,)
        Increasing grid.
    train_mean, test_mean : array_like (n,)
    level : float

    Returns
    -------
    float or None
    """
    grid = check.finite_array("P", P, ndim=1)
    train_mean = check.finite_array("train_mean", train_mean, shape=grid.shape)
    test_mean = check.finite_array("test_mean", test_mean, shape=grid.shape)
    for name, values in (("train_mean", train_mean), ("test_mean", test_mean)):
        if np.any(values < 0):          # relative_gap would refuse them as its own "train" / "test"
            check.fail(name, f"<values down to {float(values.min())!r}>", "mean energies >= 0")
    return linattn.transition_point(P, linattn.relative_gap(train_mean, test_mean), level)


def _grid(name, values, default, integer):
    """One ``P`` grid: the default for ``None``, else a non-empty increasing 1-d array of numbers ``>= 1`` (integers
    for data)."""
    if values is None:
        return default
    P = check.finite_array(name, values, ndim=1)
    if (P.size == 0 or np.any(P < 1) or (integer and (np.any(P != np.round(P)) or np.any(P > check.MAX_INT)))
            or np.any(np.diff(P) <= 0)):
        check.fail(name, P.tolist()[:8], "a non-empty increasing list of " + ("integers" if integer else "numbers")
                   + " >= 1" + (f" and <= {check.MAX_INT}" if integer else ""))
    return P.astype(int) if integer else P


def _grids(P_theory, P_exact, P_sim):
    """The three ``P`` grids (defaults of :func:`stationary_sweep` for ``None``)."""
    return (_grid("P_theory", P_theory, np.geomspace(1, 1e4, 100), False),
            _grid("P_exact", P_exact, np.unique(np.round(np.geomspace(1, 1e4, 13)).astype(int)), True),
            _grid("P_sim", P_sim, np.array([10, 30, 100, 300, 1000, 3000]), True))


#: datasets per exact point and per simulated point, at most
MAX_DATASETS = 10**6
#: largest ``seed``: the Langevin seeds ``seed · 7919 + j`` (``j < n_sim <= MAX_DATASETS``) stay below 2⁶³
SEED_MAX = (2**63 - 1) // 7919 - MAX_DATASETS


def _counts(n_exact, n_sim):
    """The datasets per exact point and per simulated point (``>= 2`` each; settings or arguments)."""
    return (check.positive_int("n_exact", n_exact, minimum=2, maximum=MAX_DATASETS),
            check.positive_int("n_sim", n_sim, minimum=2, maximum=MAX_DATASETS))


#: arguments of langevin that the experiment sets itself
_LANGEVIN_FIXED = ("data", "pb", "beta", "lam", "model", "rng")


def _langevin_kw(value):
    """``langevin_kw`` as a dict of keyword arguments of :func:`validation.simulators.langevin` (those the experiment
    sets itself excluded): an unknown key is refused before any point runs."""
    import inspect

    if value is None:
        return {}
    known = [p for p in inspect.signature(langevin).parameters if p not in _LANGEVIN_FIXED]
    if not isinstance(value, dict) or any(not isinstance(k, str) or k not in known for k in value):
        bad = sorted(map(str, value)) if isinstance(value, dict) else None
        check.fail("langevin_kw", value, f"None or a dict of keyword arguments of langevin among {known}"
                   + (f" (not: {[k for k in bad if k not in known]})" if bad is not None else ""))
    return dict(value)


def _as_problem(entry):
    """A problem of the settings: ``[D, N]``, ``[D, N, noise]`` or (in-process settings only) a
    :class:`linattn.Problem`."""
    return entry if isinstance(entry, linattn.Problem) else linattn.Problem(*entry)


#: the fixed settings of the sweep behind report section ``transition`` (its grids and datasets are the
#: ``transition`` settings)
TRANSITION_SWEEP = dict(problems=[[10, 100]], seed=71, langevin_kw=dict(n_chains=1), P_theory=None, **_SEED_SETTINGS)
#: the keys of the settings of each report section's points
SECTION_KEYS = {"replica": ("n_datasets", "P"), "langevin": ("chains", "P"),
                "transition": ("n_exact", "n_sim", "P_exact", "P_sim")}
_NO_SECTIONS = dict.fromkeys(SECTION_KEYS)


def _section(s, key):
    """The settings of report section ``key`` (``None``: the experiment has no such points)."""
    value = s[key]
    if value is not None and (not isinstance(value, dict) or set(value) != set(SECTION_KEYS[key])):
        check.fail(key, value, f"None or a dict with exactly the keys {list(SECTION_KEYS[key])}")
    return value


def _transition_settings(s):
    """The settings of the sweep behind report section ``transition`` (``D = 10``, ``N = 100``, seed 71)."""
    return Settings({**TRANSITION_SWEEP, **_section(s, "transition"), **_NO_SECTIONS})


@dataclass(frozen=True, eq=False, repr=False)
class StationaryData(ExperimentData):
    """Data of ``stationary``, ``stationary_N`` (figure ``fig2``) and ``stationary_D`` (figure ``fig3``).

    Attributes
    ----------
    sweeps : tuple of StationarySweep
        Theory, exact Gibbs averages and Langevin markers of each problem of the setting ``problems``, in order
        (a boundary ``P*`` without a crossing is ``None``).
    replica : ReplicaSection or None
        The points of report section ``replica`` (``None``: the settings have none).
    langevin : LangevinSection or None
        The points of report section ``langevin``.
    transition : StationarySweep or None
        The sweep behind report section ``transition`` (``D = 10``, ``N = 100``, seed 71).
    """

    sweeps: tuple[StationarySweep, ...]
    replica: ReplicaSection | None
    langevin: LangevinSection | None
    transition: StationarySweep | None

    @classmethod
    def legacy_arrays(cls, arrays, settings, meta):
        """Version 0.1.0: :meth:`StationarySweep.as_dict` with prefix ``D{D}_N{N}_`` per problem and
        ``transition_``, and ``replica_*``, ``langevin_*``, ``langevin_coarse_*`` (a missing boundary stored as
        NaN)."""
        out = {}
        prefixes = [(f"D{pb.D}_N{pb.N}_", f"sweeps[{k}].") for k, pb in enumerate(map(_as_problem,
                                                                                       settings["problems"]))]
        prefixes += [("langevin_coarse_", "langevin.coarse."), ("transition_", "transition."),
                     ("replica_", "replica."), ("langevin_", "langevin.")]
        for key, value in arrays.items():
            old, new = next(((o, n) for o, n in prefixes if key.startswith(o)), ("", ""))
            name = new + key[len(old):]
            if not (name.split(".")[-1].startswith("P_star") and np.isnan(np.asarray(value, float)).all()):
                out[name] = value
        return out


class StationaryErrors(Experiment):
    """Theory, exact Gibbs averages and Langevin markers of the stationary errors against ``P``, for each
    problem of ``problems`` (entries ``[D, N]`` or ``[D, N, noise]``; in-process runs also take a
    :class:`linattn.Problem`), and the points of the report sections named in its settings; module docstring.

    Settings: ``problems``; ``model``, ``beta``, ``lam``; the grids ``P_theory``, ``P_exact``, ``P_sim``
    (``None``: the defaults of :func:`stationary_sweep`); ``n_exact`` and ``n_sim`` datasets per exact and
    simulated marker; ``langevin_kw`` (passed to :func:`validation.simulators.langevin`); ``seed`` (``None``:
    ``D · 1000 + N`` per problem, the seed's figures); ``replica``, ``langevin``, ``transition`` (``None``, or
    the settings of that report section's points: keys :data:`SECTION_KEYS`).
    """

    name = "stationary"
    title = "Stationary train/test errors vs P: replica theory, exact Gibbs averages, Langevin"
    data_class = StationaryData
    nullable = ("langevin_kw", *SECTION_KEYS)
    positive = ("beta",)
    count_limits = {"n_exact": MAX_DATASETS, "n_sim": MAX_DATASETS}
    presets = {"smoke": dict(problems=[[10, 100]], n_exact=2, n_sim=2, langevin_kw=dict(n_chains=1), seed=None,
                             P_theory=np.geomspace(1, 1e3, 6).tolist(), P_exact=[10, 100], P_sim=[10, 300],
                             **_SEED_SETTINGS, **_NO_SECTIONS),
               "quick": dict(problems=[[10, 100]], n_exact=20, n_sim=3, langevin_kw=dict(n_chains=1), seed=None,
                             P_theory=None, P_exact=None, P_sim=None, **_SEED_SETTINGS, **_NO_SECTIONS),
               "full": dict(problems=[[10, 100]], n_exact=100, n_sim=10, langevin_kw=dict(n_chains=4), seed=None,
                            P_theory=None, P_exact=None, P_sim=None, **_SEED_SETTINGS, **_NO_SECTIONS)}

    @staticmethod
    def _problem(s, k):
        """Problem ``k`` of the settings and its seed."""
        pb = _as_problem(s.problems[k])
        return pb, (pb.D * 1000 + pb.N if s.seed is None else s.seed)

    def describe_point(self, s, point):
        """The ``D``, ``N``, label noise and seed of the problem a point's index names (a point of the report sections
        without one: none)."""
        if "problem" not in point:
            return {}
        if point.get("part") == "transition":
            s = _transition_settings(s)
        pb, seed = self._problem(s, point["problem"])
        return {"D": pb.D, "N": pb.N, "noise": float(pb.noise), "seed": int(seed)}

    def points(self, s):
        if s.seed is not None:
            check.positive_int("seed", s.seed, minimum=0, maximum=SEED_MAX)
        _langevin_kw(s.langevin_kw)
        _counts(s.n_exact, s.n_sim)
        _, P_exact, P_sim = _grids(s.P_theory, s.P_exact, s.P_sim)
        for k in range(len(s.problems)):    # the largest dataset of each grid, refused here naming its grid
            D = self._problem(s, k)[0].D
            for name, grid in (("P_exact", P_exact), ("P_sim", P_sim)):
                check.memory(8.0 * float(grid[-1]) * (3 * D + 2), f"a dataset of {int(grid[-1])} prompts of "
                             f"dimension D = {D}", name)
        pts = []
        for k in range(len(s.problems)):
            pts.append(dict(problem=k, kind="theory"))
            pts += [dict(problem=k, kind="exact", P=int(P)) for P in P_exact]
            pts += [dict(problem=k, kind="langevin", P=int(P), j=j) for P in P_sim for j in range(s.n_sim)]
        replica_s, langevin_s = _section(s, "replica"), _section(s, "langevin")
        if replica_s is not None:
            pts += [dict(part="replica", case=c, P=P) for c in range(len(REPLICA_CASES)) for P in replica_s["P"]]
        if langevin_s is not None:
            pts += [dict(part="langevin", model=m, P=P) for m in LANGEVIN_MODELS for P in langevin_s["P"]]
            pts.append(dict(part="langevin", model="full", P=100, coarse=True))
        if _section(s, "transition") is not None:
            pts += [dict(p, part="transition") for p in self.points(_transition_settings(s))]
        return pts

    def compute(self, s, point):
        part = point.get("part")
        if part == "replica":
            return replica_point(s.replica, point)
        if part == "langevin":
            return langevin_point(s.langevin, point)
        if part == "transition":
            s = _transition_settings(s)
        pb, seed = self._problem(s, point["problem"])
        if point["kind"] == "theory":
            P_theory = _grids(s.P_theory, None, None)[0]
            M = pb.n_params(s.model)
            theory_P = np.array([P for P in P_theory if not (s.lam == 0 and abs(P - M) < 1e-9)])
            cur = replica.stationary_curve(pb, theory_P, s.beta, s.lam, s.model, progress=False)
            star = replica.phase_boundary(pb, s.beta, s.lam, model=s.model)
            return {"P": cur.P, "train": cur.train, "test": cur.test, "P_star": np.nan if star is None else star}
        P = point["P"]
        if point["kind"] == "exact":
            avg = replica.dataset_average(pb, P, s.beta, s.lam, s.n_exact, s.model, rng=seed, progress=False)
            return {"train": avg.train, "test": avg.test}
        lkw = dict(n_chains=1)
        lkw.update(s.langevin_kw or {})
        j = point["j"]
        r = langevin(pb.sample(P, rng=(seed + 1, P, j)), pb, s.beta, s.lam, model=s.model, rng=seed * 7919 + j, **lkw)
        return {"train": r.train_mean, "test": r.test_mean, "dt": r.dt}

    def sweeps(self, s, outputs):
        """One :class:`StationarySweep` per problem from the outputs of the points (those of the report sections
        are skipped).

        Parameters
        ----------
        s : Settings
        outputs : list of dict

        Returns
        -------
        list of StationarySweep
        """
        _, P_exact, P_sim = _grids(s.P_theory, s.P_exact, s.P_sim)
        by_problem = [dict(theory=None, exact=[], langevin={}) for _ in s.problems]
        for p, out in zip(self.points(s), outputs):
            if "part" in p:
                continue
            group = by_problem[p["problem"]]
            if p["kind"] == "theory":
                group["theory"] = out
            elif p["kind"] == "exact":
                group["exact"].append(out)
            else:
                group["langevin"].setdefault(p["P"], []).append(out)
        result = []
        for k, group in enumerate(by_problem):
            pb, _ = self._problem(s, k)
            ex = np.array([(*_mean_se(o["train"]), *_mean_se(o["test"])) for o in group["exact"]])
            sim = np.array([(*_mean_se([o["train"] for o in runs]), *_mean_se([o["test"] for o in runs]),
                             np.mean([o["dt"] for o in runs])) for runs in (group["langevin"][int(P)] for P in P_sim)])
            th = group["theory"]
            result.append(StationarySweep(
                D=pb.D, N=pb.N, model=s.model, beta=s.beta, lam=s.lam, P_theory=th["P"], theory_train=th["train"],
                theory_test=th["test"], P_exact=P_exact, exact_train=ex[:, 0], exact_train_se=ex[:, 1],
                exact_test=ex[:, 2], exact_test_se=ex[:, 3], P_sim=P_sim, sim_train=sim[:, 0],
                sim_train_se=sim[:, 1], sim_test=sim[:, 2], sim_test_se=sim[:, 3], sim_dt=sim[:, 4],
                P_star_theory=_none_if_nan(th["P_star"]),
                P_star_exact=boundary_from_means(P_exact, ex[:, 0], ex[:, 2]),
                P_star_sim=boundary_from_means(P_sim, sim[:, 0], sim[:, 2])))
        return result

    def assemble(self, s, outputs):
        sweeps = tuple(self.sweeps(s, outputs))
        stars = {f"D{r.D}_N{r.N}": (r.P_star_theory, r.P_star_exact, r.P_star_sim) for r in sweeps}
        by_part = {}
        for p, out in zip(self.points(s), outputs):
            by_part.setdefault(p.get("part"), []).append(out)
        replica_data = langevin_data = transition = None
        if s.replica is not None:
            shape = (len(REPLICA_CASES), len(s.replica["P"]))
            outs = by_part["replica"]
            replica_data = ReplicaSection(**{k: np.array([float(o[k]) for o in outs]).reshape(shape)
                                             for k in outs[0]})
        if s.langevin is not None:
            shape = (len(LANGEVIN_MODELS), len(s.langevin["P"]))
            chains_out, coarse = by_part["langevin"][:-1], by_part["langevin"][-1]
            langevin_data = LangevinSection(**{k: np.array([float(o[k]) for o in chains_out]).reshape(shape)
                                               for k in chains_out[0]}, coarse=CoarseStep(**coarse))
        if s.transition is not None:
            transition = self.sweeps(_transition_settings(s), by_part["transition"])[0]
        data = StationaryData(sweeps=sweeps, replica=replica_data, langevin=langevin_data, transition=transition)
        return data, {"beta": s.beta, "lam": s.lam, "model": s.model, "P_star": stars}

    def checks(self, r):
        s, d = r.settings, r.data
        return ((replica_checks(d.replica, s["replica"]) if s["replica"] is not None else [])
                + (langevin_checks(d.langevin, s["langevin"]) if s["langevin"] is not None else [])
                + (transition_checks(d.transition) if s["transition"] is not None else []))


def sweeps_of(result):
    """The :class:`StationarySweep` of each problem of a :class:`StationaryErrors` result, in order
    (``result.data.sweeps``).

    Parameters
    ----------
    result : validation.experiments.Result

    Returns
    -------
    list of StationarySweep
    """
    return list(result.data.sweeps)


def _figure_presets(problems, smoke_problems, sections):
    """Presets of a seed figure: its problems, ``20`` / ``100`` datasets per exact marker and ``3`` / ``10``
    simulated datasets (``1`` / ``4`` chains each) per Langevin marker in quick / full mode, and the points of the
    report sections ``sections`` (:data:`SECTION_PRESETS`)."""
    return {mode: dict(StationaryErrors.presets[mode], problems=smoke_problems if mode == "smoke" else problems,
                       **{key: SECTION_PRESETS[key][mode] for key in sections}) for mode in StationaryErrors.presets}


#: the settings of the report sections' points per mode
SECTION_PRESETS = {
    "replica": {"smoke": dict(n_datasets=3, P=[10, 100]),
                "quick": dict(n_datasets=60, P=[10, 20, 50, 100, 200, 500, 1000]),
                "full": dict(n_datasets=100, P=[10, 20, 50, 100, 200, 500, 1000])},
    "langevin": {"smoke": dict(chains=2, P=[100]), "quick": dict(chains=8, P=[10, 100, 1000]),
                 "full": dict(chains=32, P=[10, 100, 1000])},
    "transition": {"smoke": dict(n_exact=2, n_sim=2, P_exact=[20, 100, 500], P_sim=[20, 500]),
                   "quick": dict(n_exact=20, n_sim=3, P_exact=np.geomspace(20, 500, 9).astype(int).tolist(),
                                 P_sim=np.geomspace(20, 500, 7).astype(int).tolist()),
                   "full": dict(n_exact=100, n_sim=10, P_exact=np.geomspace(20, 500, 9).astype(int).tolist(),
                                P_sim=np.geomspace(20, 500, 7).astype(int).tolist())}}


class StationaryVsN(StationaryErrors):
    """Seed paper, Fig. 2: ``N ∈ {10, 20, 50, 100}`` at ``D = 10`` (smoke: the first two); with the points of
    report sections ``langevin`` and ``transition`` (``D = 10``, ``N = 100``; module docstring)."""

    name = "stationary_N"
    title = "Stationary train/test errors vs P for several N at D = 10; Langevin chains and P* checks"
    presets = _figure_presets([[10, N] for N in (10, 20, 50, 100)], [[10, 10], [10, 20]], ("langevin", "transition"))
    report_order = 40


class StationaryVsD(StationaryErrors):
    """Seed paper, Fig. 3: ``D ∈ {5, 10, 15, 20}`` at ``N = 100`` (smoke: the first two); with the points of
    report section ``replica`` (module docstring)."""

    name = "stationary_D"
    title = "Stationary train/test errors vs P for several D at N = 100; replica theory checks"
    presets = _figure_presets([[D, 100] for D in (5, 10, 15, 20)], [[5, 100], [10, 100]], ("replica",))
    report_order = 30


def stationary_sweep(pb, model="reduced", beta=1e3, lam=0.01, P_theory=None, P_exact=None, n_exact=100,
                     P_sim=None, n_sim=4, langevin_kw=None, rng=0, progress=False, store=None) -> StationarySweep:
    """Theory, exact dataset averages and Langevin markers against ``P`` (module docstring): the
    experiment ``stationary`` with these settings.

    Parameters
    ----------
    pb : linattn.Problem
    model : {"reduced", "full"}
    beta, lam : float
        ``β > 0`` (finite: Langevin) and ``λ >= 0``.
    P_theory, P_exact, P_sim : array_like, optional
        Increasing grids of the theory curve, the exact dataset averages and the simulations.
    n_exact, n_sim : int
        Datasets per exact point (``>= 2``) and per simulated point (``>= 2``).
    langevin_kw : dict, optional
        Passed to :func:`validation.simulators.langevin` (protocol, chains).
    rng : int or numpy.random.Generator
        The seed, ``0 … SEED_MAX`` (a Generator gives one draw of it).
    progress : bool
    store : str, optional
        A folder: the points (theory, each exact marker, each simulated dataset) are computed into a
        Zarr group there (:func:`validation.experiments.run`; resumable: what is there is read, not
        recomputed; optional extra ``[dask]``). Only for problems given by ``D``, ``N`` and ``noise``.

    Returns
    -------
    StationarySweep
        Each simulated point averages the per-dataset sample means of ``n_sim`` datasets; its error
        bar is the standard error over datasets (which includes the thermal sampling error).

    Examples
    --------
    Theory, exact Gibbs averages and Langevin against ``P`` at your own ``(D, N)`` (one call):

    >>> import linattn, validation
    >>> sw = validation.stationary_sweep(linattn.Problem(6, 12), "full", 1e3, 0.01, P_theory=[10, 100],
    ...                                  P_exact=[10, 100], n_exact=4, P_sim=[100], n_sim=2)
    >>> sw.theory_test.shape, sw.exact_test.shape, sw.sim_test.shape
    ((2,), (2,), (1,))
    """
    from ._base import run

    validate.problem(pb)
    check.model(model)
    beta = check.positive("beta", beta)
    lam = check.nonnegative("lam", lam)
    P_theory, P_exact, P_sim = _grids(P_theory, P_exact, P_sim)
    n_exact, n_sim = _counts(n_exact, n_sim)
    if isinstance(rng, np.random.Generator):       # one draw of the seed (reproducible with the generator's state)
        rng = int(rng.integers(SEED_MAX + 1))
    rng = check.positive_int("rng", rng, minimum=0, maximum=SEED_MAX)
    progress = check.boolean("progress", progress)
    if store is not None and (not isinstance(store, (str, os.PathLike)) or not str(store).strip()):
        check.fail("store", store, "None or a folder path")
    langevin_kw = _langevin_kw(langevin_kw)
    plain = pb == linattn.Problem(pb.D, pb.N, pb.noise)
    if store is not None and not plain:
        check.fail("store", store, "None for a problem with a link, covariance or task pool (a store holds "
                   "problems given by D, N and noise)")
    settings = dict(problems=[[pb.D, pb.N, pb.noise] if plain else pb], model=model, beta=beta, lam=lam, seed=rng,
                    P_theory=P_theory.tolist(), P_exact=P_exact.tolist(), P_sim=P_sim.tolist(), n_exact=n_exact,
                    n_sim=n_sim, langevin_kw=langevin_kw)
    result = run(StationaryErrors(), settings=settings, store=None if store is None else os.fspath(store),
                 progress=progress)
    return sweeps_of(result)[0]
