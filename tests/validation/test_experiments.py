"""The experiments (:mod:`validation.experiments`: :func:`~validation.experiments.get`,
:func:`validation.run_experiment`, :class:`validation.Experiment` and its settings): names, overrides of
another kind than the presets', counts beyond the accepted range, refused by name; settings that travel."""
import numpy as np
import pytest
from helpers import assert_refused, name_not_within_letters, refusals

import linattn
import validation
from validation.experiments import Settings
from validation.experiments._base import point_coords


def _run(experiment, **settings):
    return lambda: validation.run_experiment(experiment, "smoke", settings=settings, progress=False)


REFUSED = refusals(name_not_within_letters, [
    ("point-coords", lambda: point_coords("ab"), "points"),
    # raw exceptions: an unhashable name reached a dict lookup (TypeError: unhashable type: 'list')
    ("experiments-get-list", lambda: validation.experiments.get(["fig2"]), "name"),
    # the name in the message: get's argument is name (it said experiment); run_experiment's is experiment
    ("experiments-get-unknown", lambda: validation.experiments.get("nope"), "name"),
    ("run-experiment-unknown", lambda: validation.run_experiment("nope", "smoke", progress=False), "experiment"),
    # an experiment's settings were not checked (every experiment, run_experiment(settings=...)):
    # 2.5 for a count raised numpy's TypeError "'float' object cannot be interpreted as an integer", -1 numpy's
    # "Number of samples, -1, must be non-negative" or "max() arg is an empty sequence", an empty list of context
    # lengths returned a result with non-finite arrays; now each override is checked against its presets' kind
    ("experiment-count-fraction", lambda: validation.run_experiment("phase", "smoke", settings={"n_P": 2.5},
                                                                   progress=False), "n_P"),
    ("experiment-count-negative", lambda: validation.run_experiment("saddles", "smoke",
                                                                   settings={"saddle_starts": -1},
                                                                   progress=False), "saddle_starts"),
    ("experiment-empty-list", lambda: validation.run_experiment("gaps_finite_time", "smoke",
                                                               settings={"N_values": []}, progress=False),
     "N_values"),
    ("experiment-nan-float", lambda: validation.run_experiment("flow_curves", "smoke",
                                                              settings={"sigma0": float("nan")}, progress=False),
     "sigma0"),
    ("experiment-settings-method", lambda: validation.experiments.get("phase").settings("smoke", n_P="3"), "n_P"),
    # an experiment's float setting given a negative value was refused under the inner name: saddles step as "lr",
    # flow_curves sigma0 as "init"
    ("experiment-negative-step", _run("saddles", step=-0.1), "step"),
    ("experiment-negative-sigma0", _run("flow_curves", sigma0=-0.1), "sigma0"),
    ("experiment-negative-t-max", _run("flow_curves", t_max=-1.0), "t_max"),
    ("experiment-negative-saddle-scale", _run("saddles", saddle_scale=-1.0), "saddle_scale"),
    # zero where the setting is a step, a scale or an inverse temperature (> 0): refused as "lr", "scale", "beta", or
    # by numpy's geomspace ("Geometric sequence cannot include zero", flow_curves t_max)
    ("experiment-zero-step", _run("saddles", step=0.0), "step"),
    ("experiment-zero-t-max", _run("flow_curves", t_max=0.0), "t_max"),
    ("experiment-zero-beta", _run("stationary", beta=0.0), "beta"),
    ("experiment-zero-lr", lambda: validation.experiments.get("markov_transformer").settings("smoke", lr=0.0), "lr"),
    # a list setting with elements of another kind than its presets': raw TypeError "int() argument must be ... not
    # 'list'" (a ragged list), "invalid literal for int() with base 10: 'a'", "cannot convert float NaN to integer"
    # (None in a list of floats), or refused under an inner name (N, rng)
    ("experiment-ragged-list", _run("gaps_finite_time", N_values=[[1], 2]), "N_values"),
    ("experiment-string-element", _run("gaps_finite_time", N_values=["a"]), "N_values"),
    ("experiment-negative-element", _run("gaps_finite_time", N_values=[-3]), "N_values"),
    ("experiment-fraction-element", _run("gaps_finite_time", D_values=[2.5]), "D_values"),
    ("experiment-none-in-floats", _run("pools_gtask", kappa=[None]), "kappa"),
    ("experiment-bool-element", _run("pools_gtask", kappa=[True]), "kappa"),
    ("experiment-negative-seed-element", _run("icl_emergence", seeds=[-1]), "seeds"),
    ("experiment-huge-element", _run("gaps_finite_time", N_values=[10**12]), "N_values"),
    # numbers of a list whose presets' are all > 0 (a spectrum, task ratios): -1 was refused as "spectrum",
    # "task_ratio", "N", "P" or "tasks"
    ("experiment-negative-spectrum", _run("staged", check_spectrum=[-1]), "check_spectrum"),
    ("experiment-negative-kappa", _run("pools_gtask", kappa=[-1]), "kappa"),
    ("experiment-negative-alpha", _run("pools_double_descent", alpha=[-1]), "alpha"),
    ("experiment-zero-tau", _run("pools_double_descent", tau=[0.0]), "tau"),
    ("experiment-pools-finite-d-kappa", _run("pools_finite_d", kappa=[-1]), "kappa"),
    # a string setting given a number: reached the experiment (markov_transformer positions=3: ImportError without
    # torch, before any check); the stationary seed "x" was refused as "rng"
    ("experiment-string-setting", lambda: validation.experiments.get("markov_transformer").settings("smoke",
                                                                                                   positions=3),
     "positions"),
    ("experiment-stationary-seed", _run("stationary", seed="x"), "seed"),
    ("experiment-stationary-seed-negative", _run("stationary_N", seed=-1), "seed"),
    # a dict setting given another kind: "train_attention_only() argument after ** must be a mapping, not int"
    ("experiment-dict-setting", lambda: validation.experiments.get("icl_emergence").settings("smoke", copy=3), "copy"),
    ("experiment-dict-setting-none", _run("stationary_N", transition=3), "transition"),
    # nested lists where a preset is None (P_exact: None in quick) or inside a dict setting were not checked at all
    # and reached numpy raw ("setting an array element with a sequence")
    ("experiment-nested-list-none-preset", _run("stationary_N", P_exact=[[10, 20], [30]]), "P_exact"),
    ("experiment-nested-list-in-dict", _run("stationary_N", transition={"P_exact": [[1], [2, 3]]}), "P_exact"),
    ("experiment-string-in-dict", _run("stationary_N", transition={"n_exact": "x"}), "n_exact"),
    # experiments' overrides / Settings of another kind than a mapping: AttributeError "'NoneType' object has no
    # attribute 'items'", dict's "'int' object is not iterable"
    ("check-overrides-none", lambda: validation.experiments.get("stationary").check_overrides(None), "overrides"),
    ("check-overrides-list", lambda: validation.experiments.get("stationary").check_overrides([1]), "overrides"),
    ("settings-int", lambda: Settings(3), "values"),
    ("settings-str", lambda: Settings("x"), "values"),
    # a client that is no dask Client (a string, a number) reached client.submit: AttributeError
    ("run-experiment-client", lambda: validation.run_experiment("spectra", "smoke", client="x", progress=False),
     "client"),
    # the base class's settings (public as validation.Experiment): KeyError 'smoke'
    ("experiment-base-settings", lambda: validation.Experiment.settings("smoke"), "mode"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


@pytest.mark.parametrize("experiment, key", [("flow_curves", "n_marks"), ("phase", "n_datasets")])
def test_experiment_huge_count_is_refused(experiment, key):
    """A count of 10¹² in an experiment's settings reached numpy (flow_curves n_marks: MemoryError) or looped for
    hours (phase n_datasets); now refused by name, with the accepted range (MAX_SCALE × its largest preset)."""
    from validation.experiments._base import MAX_SCALE

    largest = max(p[key] for p in validation.experiments.get(experiment).presets.values())
    with pytest.raises(ValueError, match=rf"{key}.*<= {MAX_SCALE * largest}\b"):
        validation.run_experiment(experiment, "smoke", settings={key: 10**12}, progress=False)
    validation.experiments.get(experiment).settings("smoke", **{key: MAX_SCALE * largest})   # the largest accepted


def test_every_preset_passes_the_checks_of_its_own_experiment():
    """The checks of overrides (a None preset leaves the kind to the others; dicts key by key) accept every preset
    of every experiment as an override of every mode."""
    for exp in validation.experiments.registry().values():
        for preset in exp.presets.values():
            exp.check_overrides(dict(preset))


def test_experiment_overrides_of_the_presets_kind_still_pass():
    """Seed 0 (presets 1…), a numpy array for a list, an integral float for a count."""
    s = validation.experiments.get("staged").settings("smoke", seed=0)
    assert s.seed == 0
    validation.experiments.get("gaps_finite_time").settings("smoke", N_values=np.array([10, 20]), n_P=4.0)


def test_markov_transformer_without_torch_says_how_to_install_it():
    """``run_experiment("markov_transformer")`` without the extra raised ``ModuleNotFoundError: No module named
    'torch'`` from its own ``import torch``; now the library's ImportError with the install line."""
    from validation.simulators import torch_available

    if torch_available():
        pytest.skip("torch is installed")
    with pytest.raises(ImportError, match=r"\[torch\]"):
        validation.run_experiment("markov_transformer", "smoke", progress=False)


def test_list_settings_of_the_presets_kind_still_pass():
    """Numpy arrays and numpy integers for lists, ints in a list of floats, a Problem in ``problems`` (in-process), a
    2-d array for a list of lists, ``None`` where a preset has it, seed 0, zero for a float setting (λ = 0)."""
    get = validation.experiments.get
    get("gaps_finite_time").settings("smoke", N_values=np.array([10, 20]), D_values=[np.int64(5)], lam=0.0)
    get("pools_gtask").settings("smoke", kappa=[1, 2.5])
    get("stationary").settings("smoke", problems=[linattn.Problem(4, 8, 0.1), [10, 100, 0.25]])
    get("learners").settings("smoke", sim=np.array([[1, 1]]))
    get("markov_transformer").settings("smoke", K=[None, 3], seeds=[0])
    get("stationary_N").settings("smoke", transition=None, langevin_kw=None)
    get("flow_curves").settings("smoke", sigma0=0.0)
    get("nonlinear_boundary").settings("smoke", amplitudes=[0.0, -1.0])      # presets with 0: any finite number
    get("markov_transformer").settings("smoke", positions="learned")


def test_settings_pickle_and_copy():
    """``pickle``, ``copy.copy`` and ``copy.deepcopy`` of a Settings raised RecursionError (``__getattr__`` looked up
    ``self._values`` before the unpickled instance had it), e.g. Settings sent to a process pool."""
    import copy
    import pickle

    s = validation.experiments.get("spectra").settings("smoke")
    for clone in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert isinstance(clone, Settings) and dict(clone) == dict(s)
        assert all(getattr(clone, k) is not None or s[k] is None for k in s)
    with pytest.raises(AttributeError):
        s.no_such_setting
