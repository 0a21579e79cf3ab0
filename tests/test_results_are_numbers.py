"""Results as numbers: the scalar fields of the library's result objects are Python floats (``round(g.test, 4)``
works), and their reprs are short (key scalars and shapes, never whole arrays)."""
import dataclasses

import numpy as np
import pytest

import dynamics
import linattn
import replica
import validation


def _results():
    pb = linattn.Problem(6, 12, 0.1)
    d = pb.sample(40, rng=0)
    pk = linattn.Problem(6, 12, 0.1, tasks=4)
    dk = pk.sample(60, rng=1)
    return {
        "gibbs": replica.gibbs(d, pb, 1e3, 0.01),
        "gibbs_pool": replica.gibbs(dk, pk, 1e3, 0.01, "full"),
        "stationary": replica.stationary(pb, 40, 1e3, 0.01),
        "stationary_pool": replica.stationary(pk, 60, np.inf, 0.01, "full"),
        "dataset_average": replica.dataset_average(pb, 40, 1e3, 0.01, n_datasets=3),
        "ridge": replica.ridge(dk, pk, 0.01, "full"),
        "asymptotic": replica.asymptotic(1, 2, 0.5, 0.1, 0.1),
        "long_time": dynamics.long_time_limit(d, pb, 0.01),
        "icl": pb.icl_solution(),
        "langevin": validation.langevin(d, pb, 1e3, 0.01, n_equilibrate=1000, n_samples=5, stride=100,
                                        on_unequilibrated="warn"),
    }


@pytest.fixture(scope="module")
def results():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _results()


def _scalar_like(v):
    return isinstance(v, np.ndarray) and v.ndim == 0 or isinstance(v, np.generic)


def test_scalar_fields_are_python_numbers(results):
    bad = []
    for key, obj in results.items():
        names = [f.name for f in dataclasses.fields(obj)]
        names += [a for a in dir(type(obj)) if isinstance(getattr(type(obj), a, None), property)]
        for attr in names:
            if _scalar_like(getattr(obj, attr)):
                bad.append(f"{key}.{attr}")
    assert bad == []
    assert isinstance(round(results["gibbs"].test, 4), float)


def test_reprs_are_short(results):
    long = {k: len(repr(o)) for k, o in results.items() if len(repr(o)) > 600}
    assert long == {}
