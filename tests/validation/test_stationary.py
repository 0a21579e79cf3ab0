"""The stationary sweep (:func:`validation.stationary_sweep`, :class:`validation.StationarySweep`,
:func:`validation.boundary_from_means`) and the settings of the ``stationary`` experiments: grids, counts and
seeds refused by name, the documented ranges accepted."""
from dataclasses import fields

import numpy as np
import pytest
from helpers import assert_refused, name_as_word, name_not_within_letters, refusals

import linattn
import validation
from validation import StationarySweep, boundary_from_means, stationary_sweep

PB = linattn.Problem(4, 8, 0.1)


def _run(experiment, **settings):
    return lambda: validation.run_experiment(experiment, "smoke", settings=settings, progress=False)


def _stationary_sweep():
    return validation.StationarySweep(**{f.name: None for f in fields(validation.StationarySweep)})


REFUSED = refusals(name_as_word, [
    # a sweep read back from a mapping without its keys
    ("stationary-from-dict", lambda: StationarySweep.from_dict({}), "data"),
    ("stationary-from-dict-type", lambda: StationarySweep.from_dict(5), "data"),
    ("stationary-sweep-sim", lambda: validation.stationary_sweep(PB, P_sim=[10], n_sim=10**9), "n_sim"),
    ("stationary-sweep-exact", lambda: validation.stationary_sweep(PB, P_exact=[10], n_exact=10**9), "n_exact"),
]) + refusals(name_not_within_letters, [
    # stationary_sweep: an unsorted or repeated P_exact / P_sim was refused deep inside, naming "P" (not an argument
    # of stationary_sweep); an unsorted P_theory was accepted and drawn as a zigzag
    ("stationary-sweep-P-exact-unsorted", lambda: stationary_sweep(PB, P_exact=[20, 10]), "P_exact"),
    ("stationary-sweep-P-sim-repeated", lambda: stationary_sweep(PB, P_sim=[10, 10]), "P_sim"),
    ("stationary-sweep-P-theory-unsorted", lambda: stationary_sweep(PB, P_theory=[20.0, 5.0]), "P_theory"),
    # the stationary experiment's settings n_exact / n_sim were not checked: n_sim = -1 raised a raw KeyError (10),
    # 2.5 a TypeError, 1 an AttributeError; -1 for n_exact was refused naming n_datasets
    ("experiment-n-sim", lambda: validation.run_experiment("stationary", "smoke", settings={"n_sim": -1},
                                                          progress=False), "n_sim"),
    ("experiment-n-sim-one", lambda: validation.run_experiment("stationary", "smoke", settings={"n_sim": 1},
                                                              progress=False), "n_sim"),
    ("experiment-n-exact", lambda: validation.run_experiment("stationary", "smoke", settings={"n_exact": -1},
                                                            progress=False), "n_exact"),
    # stationary_sweep: a P_exact of 1e12 was refused by the sampler's memory guard naming "P" (not an argument of
    # stationary_sweep); a P_sim of 1e300 was cast to int64 (-9.2e18) and refused showing that value
    ("stationary-sweep-P-exact-huge", lambda: stationary_sweep(PB, P_exact=[1e12]), "P_exact"),
    ("stationary-sweep-P-sim-huge", lambda: stationary_sweep(PB, P_sim=[10, 1e12]), "P_sim"),
    ("stationary-sweep-P-sim-beyond-int64", lambda: stationary_sweep(PB, P_sim=[1e300]), "P_sim"),
    ("stationary-P-exact-huge", _run("stationary", P_exact=[10, 10**12]), "P_exact"),
    ("experiment-problem-entry", _run("stationary", problems=[[10, "a"]]), "problems"),
    ("experiment-problem-flat", _run("stationary", problems=[10, 100]), "problems"),
    # boundary_from_means blamed relative_gap's arguments "train" / "test"
    ("boundary-train-mean", lambda: boundary_from_means([10, 20], [-1.0, 0.5], [1.0, 1.0]), "train_mean"),
    ("boundary-test-mean", lambda: boundary_from_means([10, 20], [0.5, 0.5], [-1.0, 1.0]), "test_mean"),
    # StationarySweep.as_dict(prefix=None): "unsupported operand type(s) for +" (from_dict already named prefix)
    ("as-dict-prefix", lambda: _stationary_sweep().as_dict(prefix=None), "prefix"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_stationary_sweep_counts_and_seeds_as_documented():
    """``stationary_sweep`` documents n_exact, n_sim up to 10⁶ and a Generator for rng, but its settings were refused
    by the experiments' generic count bound (n_sim <= 10 000, naming the bound of 1000 × the preset) and by the
    Langevin seed bound (a Generator's draw below 2⁶³, named ``seed``); the bound of rng is now its own, by name."""
    from validation.experiments import _stationary as st

    assert st.StationaryErrors.settings("smoke", n_sim=20_000, n_exact=10**6).n_sim == 20_000
    with pytest.raises(ValueError, match="n_sim"):
        st.StationaryErrors.settings("smoke", n_sim=10**6 + 1)
    with pytest.raises(ValueError, match=rf"rng.*<= {st.SEED_MAX}\b"):
        st.stationary_sweep(linattn.Problem(4, 8), P_theory=[1.0, 10.0], P_exact=[10], P_sim=[10], rng=2**60)
    r = st.stationary_sweep(linattn.Problem(3, 6), P_theory=[1.0, 10.0], P_exact=[6], P_sim=[6], n_exact=2, n_sim=2,
                            rng=np.random.default_rng(0),
                            langevin_kw=dict(n_chains=1, n_equilibrate=2000, n_samples=4, stride=200))
    assert np.all(np.isfinite(r.exact_test))


def test_an_unequilibrated_chain_at_a_huge_beta_names_beta():
    """``stationary_sweep(..., beta=1e300)``: the refusal named only ``n_equilibrate`` (the s.e. of the mean is
    ~1e-150 at that β, so no finite equilibration suffices); it now says at which ``beta``."""
    with pytest.raises(ValueError, match=r"n_equilibrate = .* at beta = 1e\+300"):
        validation.stationary_sweep(linattn.Problem(6, 12), "full", 1e300, 0.01, P_theory=[10, 100], P_exact=[10],
                                    P_sim=[10], n_exact=2, n_sim=2)
