"""The named, typed data of experiments (``validation.experiments.ExperimentData``): how fields become ``.npz``
members and back, what is refused, the data class of every experiment (each field documented), results saved as typed
data and as plain dicts, and results saved by version 0.1.0 (plain dicts under each experiment's own names) read into
the data classes."""
from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import zipfile

import numpy as np
import pytest

from validation.experiments import ExperimentData, Result, get, registry, run

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: results written by version 0.1.0 (smoke settings): the arrays under the experiments' own names, no data class
LEGACY = pathlib.Path(__file__).resolve().parent / "data" / "results-0.1.0"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Inner(ExperimentData):
    """A nested piece.

    Attributes
    ----------
    curve : ndarray (n,)
    se : float
    """

    curve: np.ndarray
    se: float


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Outer(ExperimentData):
    """Every kind of field.

    Attributes
    ----------
    P : ndarray (n_P,)
    D : int
    model : str
    flag : bool
    by_D : dict of int to Inner
    by_ratio : dict of float to ndarray
    by_name : dict of str to ndarray
    runs : tuple of Inner
    theory : ndarray or None
    section : Inner or None
    """

    P: np.ndarray
    D: int
    model: str
    flag: bool
    by_D: dict[int, Inner]
    by_ratio: dict[float, np.ndarray]
    by_name: dict[str, np.ndarray]
    runs: tuple[Inner, ...]
    theory: np.ndarray | None
    section: Inner | None


def _outer(**changes):
    values = dict(P=[1, 2, 3], D=np.int64(20), model=np.asarray("full"), flag=np.True_,
                  by_D={20: Inner(np.arange(3.0), 0.5), np.int64(40): Inner([1.0], np.float64(0.25))},
                  by_ratio={1.0: np.ones(2), 0.5: np.zeros(1)}, by_name={"1-gen*": np.ones(1)},
                  runs=[Inner([2.0], 1.0)], theory=None, section=None)
    return Outer(**{**values, **changes})


def test_fields_become_members_named_by_path():
    arrays = _outer().to_arrays()
    assert list(arrays) == ["P", "D", "model", "flag", "by_D[20].curve", "by_D[20].se", "by_D[40].curve",
                            "by_D[40].se", "by_ratio[1.0]", "by_ratio[0.5]", "by_name[1-gen*]", "runs[0].curve",
                            "runs[0].se"]                     # None: no member
    assert all(isinstance(v, np.ndarray) for v in arrays.values())


def test_leaves_are_normalised_and_read_back_equal(tmp_path):
    d = _outer()
    assert type(d.D) is int and type(d.model) is str and type(d.flag) is bool and type(d.by_D[40].se) is float
    assert list(d.by_D) == [20, 40] and all(type(k) is int for k in d.by_D) and isinstance(d.P, np.ndarray)
    assert isinstance(d.runs, tuple)
    back = Outer.from_arrays(d.to_arrays())
    assert back == d and back.theory is None and back.section is None and back.by_ratio.keys() == d.by_ratio.keys()
    assert Outer.load(d.save(str(tmp_path / "d"))) == d
    full = _outer(theory=np.linspace(0, 1, 4), section=Inner([np.nan], np.nan))
    assert Outer.from_arrays(full.to_arrays()) == full        # NaN equal to NaN
    assert full != d and _outer(P=[1, 2, 4]) != d


@pytest.mark.parametrize("change, words", [
    (lambda a: {**a, "bogus": np.ones(1)}, "'bogus'"),
    (lambda a: {k: v for k, v in a.items() if k != "D"}, "no member 'D'"),
    (lambda a: {k: v for k, v in a.items() if k != "by_D[20].se"}, "no member 'by_D[20].se'"),
    (lambda a: {**a, "D": np.array([1, 2])}, "one integer"),
    (lambda a: {**a, "D": np.asarray(2.5)}, "non-integer"),
    (lambda a: {**a, "runs[2].se": np.asarray(1.0), "runs[2].curve": np.ones(1)}, "runs[0] … [n−1]"),
    (lambda a: {**a, "by_D[x].se": np.asarray(1.0)}, "a key of type int"),
])
def test_members_that_are_not_fields_are_refused(change, words):
    with pytest.raises(ValueError, match=re.escape(words)) as err:
        Outer.from_arrays(change(_outer().to_arrays()))
    assert str(err.value).startswith("arrays")


def test_a_value_of_the_wrong_kind_is_refused_naming_the_field():
    with pytest.raises(ValueError, match=r"^Outer\.by_D must be a dict"):
        _outer(by_D=[1, 2])
    with pytest.raises(ValueError, match=r"^Outer\.section must be a Inner"):
        _outer(section=np.ones(2))
    with pytest.raises(ValueError, match=r"^Outer\.P must be an array of numbers"):
        _outer(P=np.array([{}], dtype=object))


def test_every_experiment_has_a_data_class_with_every_field_documented():
    """Each field of each data class (and of the dataclasses nested in it) is named in its class's Attributes
    section."""
    from validation.experiments._data import layout

    seen = set()

    def documented(cls):
        if cls in seen:
            return
        seen.add(cls)
        doc = cls.__doc__ or ""
        assert "Attributes\n    ----------" in doc, f"{cls.__name__}: no Attributes section"
        listed = re.findall(r"^    ([A-Za-z_][\w, ]*?) :", doc.split("Attributes", 1)[1], re.M)
        names = {n.strip() for line in listed for n in line.split(",")}
        for name, shape, _, detail in layout(cls):
            assert name in names, f"{cls.__name__}.{name} is not documented"
            kind, sub = (("nested", detail) if shape == "nested" else detail[1] if shape == "dict" else
                         detail if shape == "tuple" else (None, None))
            if kind == "nested" and issubclass(sub, ExperimentData):
                documented(sub)

    for name, exp in registry().items():
        assert exp.data_class is not None and issubclass(exp.data_class, ExperimentData), name
        documented(exp.data_class)


def test_figures_read_fields_not_key_strings():
    """No figure module indexes the data by a key string (``d["…"]``, ``d[f"…"]``, ``.data[…]``)."""
    for path in sorted((ROOT / "validation" / "gallery").glob("_*.py")):
        text = path.read_text()
        assert not re.search(r"\b(d|data)\[f?[\"']|\.data\[", text), path.name


def test_a_typed_result_saves_its_members_and_the_name_of_its_class(tmp_path):
    r = run("pools_phase", "smoke", progress=False)
    path = r.save(str(tmp_path / "r.npz"))
    with zipfile.ZipFile(path) as zf:
        names = sorted(n[:-len(".npy")] for n in zf.namelist())
    assert names == sorted(["__result__", "P", "K", "gap", "gtask_rel", "P_star_theory"])
    with np.load(path) as npz:
        assert json.loads(str(npz["__result__"]))["data"] == "PoolPhaseData"
    back = Result.load(path)
    assert type(back.data) is type(r.data) and back.data == r.data
    assert [c.__dict__ for c in get("pools_phase").checks(back)] == [c.__dict__ for c in get("pools_phase").checks(r)]


def test_plain_dicts_remain_the_generic_fallback(tmp_path):
    """An experiment whose ``assemble`` returns a dict (one of your own), and typed data of an experiment this
    process does not know, load as a dict of arrays."""
    r = Result("my_own_experiment", "custom", {"a": 1}, {"y": np.arange(3.0)})
    back = Result.load(r.save(str(tmp_path / "plain")))
    assert isinstance(back.data, dict) and np.array_equal(back.data["y"], np.arange(3.0))
    typed = Result("not_registered_here", "quick", {}, _outer())
    back = Result.load(typed.save(str(tmp_path / "typed")))
    assert isinstance(back.data, dict) and sorted(back.data) == sorted(_outer().to_arrays())


def test_a_file_whose_arrays_are_not_its_experiments_is_refused(tmp_path):
    """A file of a registered experiment whose arrays are neither its data class nor its 0.1.0 names."""
    path = Result("pools_phase", "smoke", {}, {"x": np.ones(2)}).save(str(tmp_path / "bad"))
    with pytest.raises(ValueError, match=r"path .*bad\.npz.* not a result file of experiment 'pools_phase'"):
        Result.load(path)


LEGACY_FILES = sorted(LEGACY.glob("*.npz"))


#: experiments added after version 0.1.0: no result of theirs was saved by it
NEW_SINCE_0_1_0 = {"structured_tasks"}


def test_the_legacy_files_cover_every_experiment():
    assert {p.stem for p in LEGACY_FILES} == set(registry()) - NEW_SINCE_0_1_0


@pytest.mark.parametrize("path", LEGACY_FILES, ids=[p.stem for p in LEGACY_FILES])
def test_results_saved_by_version_0_1_0_load_into_the_data_classes(path, tmp_path):
    """Every array of the 0.1.0 file lands in a field (a leftover would be refused), the checks run on it, and saved
    again it reads back equal."""
    with np.load(path) as npz:
        assert "data" not in json.loads(str(npz["__result__"]))                 # the layout of version 0.1.0
    r = Result.load(str(path))
    exp = get(r.experiment)
    assert type(r.data) is exp.data_class
    exp.checks(r)
    again = Result.load(r.save(str(tmp_path / "again")))
    assert again.data == r.data


#: relative tolerance of a fresh run against the 0.1.0 file: 1e-10 for direct computations (the reassociation of
#: multithreaded BLAS sums, far above round-off of one sum and far below any physics); ``pools_phase`` averages ridge
#: solutions found by conjugate gradients (``replica.ridge`` at ``P >= M``, stopped at a relative residual of 1e-8),
#: accurate to 1e-8 × cond(H + λ) ≤ 1e-8 × 160 (measured at D = 10, N = 100, P = 200, λ = 0.01): a change of
#: summation order anywhere before the solve may move a solution by that much, so 2e-6 (the errors are linear in it)
LEGACY_RTOL = {"pools_phase": 2e-6}


@pytest.mark.parametrize("name", ["pools_phase", "gaps_finite_time", "saddles"])
def test_a_legacy_file_holds_the_numbers_of_a_fresh_run(name):
    """The 0.1.0 smoke results, read through the mapping of old names to fields, equal a smoke run of today's code
    (same seeds; tolerance :data:`LEGACY_RTOL`, else 1e-10 relative)."""
    old = Result.load(str(LEGACY / f"{name}.npz")).data.to_arrays()
    new = run(name, "smoke", progress=False).data.to_arrays()
    assert old.keys() == new.keys()
    for k in new:
        assert old[k].shape == new[k].shape, k
        if new[k].dtype.kind in "fc":
            np.testing.assert_allclose(old[k], new[k], rtol=LEGACY_RTOL.get(name, 1e-10), atol=0, err_msg=k)
        else:
            np.testing.assert_array_equal(old[k], new[k], err_msg=k)


def test_load_of_a_foreign_npz_names_the_path(tmp_path):
    """ExperimentData.load of a readable .npz of another layout blamed an internal 'arrays'; on the base class it
    raised dataclasses' TypeError."""
    registry()
    cls = next(c for c in ExperimentData.__subclasses__() if c.__name__ == "ReplicaSection")
    path = str(tmp_path / "foreign.npz")
    np.savez(path, a=np.arange(3))
    with pytest.raises(ValueError, match=r"^path '.*foreign\.npz' is not data of ReplicaSection"):
        cls.load(path)
    with pytest.raises(ValueError, match="must be called on the data class of an experiment"):
        ExperimentData.load(path)
