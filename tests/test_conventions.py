"""The public signatures keep the vocabulary of docs/conventions.md §7: one argument name, one meaning, one order.

Walks every public function, class and public method defined in the modules of the six packages and checks, with
``inspect.signature``, the rules of the table that a signature decides: which modules may take ``alpha``, ``beta``,
``tasks``, ``length``, ``concentration``, ``score_scale``; that no public function takes ``n_test``, ``lam_gamma`` or
(outside the listed exceptions) ``lam_v``; and that functions taking the same pair of arguments take them in one
order. Each allowed exception is listed here with its reason (and in §7).
"""
import collections
import importlib
import inspect
import itertools
import pkgutil

import pytest

PACKAGES = ("linattn", "replica", "spectra", "dynamics", "diagnostics", "validation")
#: optional extras a module may need; any other import failure is a failure of this test
OPTIONAL = {"torch", "dask", "distributed", "zarr", "xarray", "cupy", "cloudpickle"}

#: (qualified name, argument): allowed uses outside the general rule, each with its reason
EXCEPTIONS = {
    # sweep grid functions: a grid coordinate is one number, so λ_v is its own coordinate (None: the common λ)
    ("validation.experiments._grid_functions.gibbs_point", "lam_v"),
    ("validation.experiments._grid_functions.langevin_point", "lam_v"),
    ("validation.experiments._grid_functions.long_time_point", "lam_v"),
    ("validation.experiments._grid_functions.decay", "lam_v"),
    # a result record stores the two block decays as two numbers
    ("replica._gibbs.GibbsAverages", "lam_v"),
}


def _public_signatures():
    out = {}
    for package in PACKAGES:
        names = [package] + [m.name for m in pkgutil.walk_packages(importlib.import_module(package).__path__,
                                                                    package + ".")]
        for name in names:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as err:
                if err.name and err.name.split(".")[0] in OPTIONAL:
                    continue
                raise
            for attr, obj in vars(module).items():
                if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                    continue
                if inspect.isclass(obj):
                    items = [(f"{name}.{attr}", obj, True)] + [
                        (f"{name}.{attr}.{k}", v, False) for k, v in vars(obj).items()
                        if not k.startswith("_") and inspect.isfunction(v)]
                elif inspect.isfunction(obj):
                    items = [(f"{name}.{attr}", obj, False)]
                else:
                    continue
                for qual, f, is_class in items:
                    try:
                        sig = inspect.signature(f).parameters.values()
                    except (TypeError, ValueError):
                        continue
                    params = [p.name for p in sig if p.name not in ("self", "cls")]
                    required = [p.name for p in sig if p.name not in ("self", "cls") and p.default is p.empty
                                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
                    out[qual] = (params, is_class, required)
    return out


SIGNATURES = _public_signatures()
#: the modules of the Markov-chain minimal model (its loss, flow and theory, and the law of its sequences)
MINIMAL_MODEL = "dynamics._minimal_"


def _takers(argument):
    return [q for q, (params, *_) in SIGNATURES.items() if argument in params and (q, argument) not in EXCEPTIONS]


def _markov(qual):
    return "markov" in qual or "bottleneck" in qual or qual.startswith(MINIMAL_MODEL)


def test_the_walk_sees_the_library():
    """The walk must reach the modules the rules are about (else every rule below passes vacuously)."""
    for qual in ("linattn._problem.Problem", "linattn.markov._chains.Chains.sample",
                 "linattn.markov._loss_curves.losses",
                 "dynamics._minimal_loss.markov_minimal_loss", "linattn._idg.idg_error",
                 "validation.simulators._learner_sims.feature_learner", "replica._pool_finite.solve",
                 "dynamics._flow.gradient_descent", "validation.simulators._gradient_descent.descent_from_random_inits",
                 "spectra._density.density", "replica._stationary.stationary"):
        assert qual in SIGNATURES, qual


@pytest.mark.parametrize("argument, allowed, meaning", [
    ("alpha", lambda q: q.startswith(("spectra.", "validation.experiments._spectra.")),     # and the spectra' data
     "α = P/D², the seed paper's sample ratio (spectra)"),
    ("beta", lambda q: not _markov(q), "the inverse temperature (never a Markov model weight)"),
    ("tasks", lambda q: q == "linattn._problem.Problem", "the pool size K of Problem(tasks=K); a drawn pool is `pool`"),
    ("length", _markov, "the states per Markov sequence"),
    ("concentration", _markov, "the Dirichlet concentration of a chain's rows"),
    ("score_scale", lambda q: q.startswith((MINIMAL_MODEL, "validation.experiments._markov_minimal.")),   # and its data
     "the minimal model's layer-2 score scale β"),
    ("n_test", lambda q: False, "never: the number of test prompts is n_test_prompts, the test length N_test"),
    ("lam_gamma", lambda q: False, "never: a per-block decay is lam=(λ_Γ, λ_v)"),
    ("lam_v", lambda q: False, "never outside the listed exceptions: a per-block decay is lam=(λ_Γ, λ_v)"),
])
def test_an_argument_name_has_the_tables_meaning(argument, allowed, meaning):
    wrong = [q for q in _takers(argument) if not allowed(q)]
    assert not wrong, f"{argument} ({meaning}) is taken by {wrong}"


def test_beta_comes_with_the_energy_it_weighs():
    """β is the inverse temperature of the Gibbs law ∝ exp(−β E_t), and E_t includes the weight decay: whatever takes
    ``beta`` also takes ``lam`` (a Markov model weight would not)."""
    lonely = [q for q in _takers("beta") if "lam" not in SIGNATURES[q][0]]
    assert not lonely, lonely


#: pairs that must come in one order wherever a public function takes both (result records are field lists, not calls)
PAIRS = [("steps", "lr"), ("n_steps", "lr"), ("n_seq", "length"), ("beta", "lam"), ("P", "beta"), ("P", "lam")]


@pytest.mark.parametrize("first, second", PAIRS)
def test_pairs_of_arguments_come_in_one_order(first, second):
    orders = collections.defaultdict(list)
    for qual, (params, is_class, _) in SIGNATURES.items():
        if is_class or first not in params or second not in params:
            continue
        orders[params.index(first) < params.index(second)].append(qual)
    assert orders[True], f"no public function takes both {first} and {second}: the pair is stale"
    assert not orders[False], f"({second}, {first}) instead of ({first}, {second}) in {orders[False]}"


def test_every_pair_in_the_markov_and_learner_rooms_has_one_order():
    """Within the Markov modules and the learners every pair of positional arguments (those without a default: the
    ones a caller passes by position) that two public functions share comes in one order (e.g.
    ``Chains.sample(n_seq, length, rng)`` and ``losses(chains, n_seq, length, rng)``)."""
    rooms = {q: req for q, (_, is_class, req) in SIGNATURES.items() if not is_class
             and (_markov(q) or "learner" in q or "kernel_learner" in q)}
    seen = collections.defaultdict(set)
    for qual, params in rooms.items():
        for a, b in itertools.combinations(params, 2):
            seen[frozenset((a, b))].add(((a, b), qual))
    mixed = {tuple(sorted(k)): sorted(v) for k, v in seen.items() if len({o for o, _ in v}) > 1}
    assert not mixed, mixed


def test_experiment_means_one_thing():
    """An experiment is a unit of validation.experiments; the sweep runner registers grid functions and the staged
    dynamics return runs: no public name outside validation.experiments.base says 'experiment' for them."""
    import validation.experiments._staged_runs as staged
    import validation.sweeps as sweeps

    assert not [n for n in vars(sweeps) if "experiment" in n.lower() and not n.startswith("_")]
    assert not [n for n in vars(staged) if "experiment" in n.lower() and not n.startswith("_")]
    assert "grid_function" in vars(sweeps) and "GRID_FUNCTIONS" in vars(sweeps)
