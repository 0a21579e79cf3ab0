"""Statistical assertion helpers shared by the tests.

Statistical assertions state their error estimate: a Monte Carlo mean is compared with its
exact value within ``k`` standard errors, the standard error estimated from the same sample.
With ``k = 4`` a correct implementation fails with probability ~6e-5 per assertion.
"""
import numpy as np


def assert_mean(samples, expected, k=4.0, label=""):
    """Assert that the sample mean of ``samples`` is within ``k`` standard errors of ``expected``."""
    x = np.asarray(samples, dtype=float)
    mean = x.mean()
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert abs(mean - expected) <= k * se, (
        f"{label}: mean {mean:.6g} vs exact {expected:.6g}: |diff| = {abs(mean-expected):.3g} "
        f"> {k} standard errors ({k*se:.3g})")




# ----------------------------------------------------------------------------- bad-input sweep
# Each package's tests/<package>/test_<package>_bad_input.py holds a table of its public functions: a valid
# call and the kind of each argument. The sweep replaces one argument at a time by each bad value
# of its kind and expects a ValueError whose message names the argument. A new public function
# joins the sweep by adding a row; test_every_public_name_is_swept checks that none is missing.
import dataclasses  # noqa: E402
from typing import Callable  # noqa: E402


def _array_bads(valid):
    arr = np.asarray(valid, dtype=float)
    out = [("nan", np.where(np.arange(arr.size).reshape(arr.shape) == 0, np.nan, arr) if arr.size else None),
           ("inf", np.where(np.arange(arr.size).reshape(arr.shape) == 0, np.inf, arr) if arr.size else None),
           ("complex", arr + 1j),
           ("bool", np.ones(arr.shape, dtype=bool)),
           ("strings", np.full(arr.shape, "a"))]
    return [(k, v) for k, v in out if v is not None]


BAD = {
    "posint": [("zero", 0), ("negative", -3), ("fraction", 2.5), ("bool", True), ("nan", np.nan), ("string", "4")],
    "nonnegint": [("negative", -1), ("fraction", 2.5), ("bool", True), ("string", "4")],
    "positive": [("zero", 0.0), ("negative", -1.0), ("nan", np.nan), ("inf", np.inf), ("bool", True),
                 ("string", "1"), ("complex", 1j)],
    "positive_inf": [("zero", 0.0), ("negative", -1.0), ("nan", np.nan), ("bool", True), ("string", "1")],
    "nonneg": [("negative", -1e-3), ("nan", np.nan), ("inf", np.inf), ("bool", True), ("string", "1")],
    "real": [("nan", np.nan), ("bool", True), ("string", "x"), ("complex", 1j)],
    "model": [("unknown", "xl"), ("none", None), ("number", 1)],
    "choice": [("unknown", "nope"), ("none", None), ("list", ["a"])],
    "intlist": [("string", "12"), ("empty", ()), ("fraction", (1.5,)), ("negative", (-1,)), ("bool", (True,))],
    "strlist": [("string", "W"), ("unknown", ["nope"]), ("number", 3), ("numbers", [1, 2])],
    "bool": [("string", "no"), ("int", 1), ("none", None)],
    "problem": [("none", None), ("string", "pb")],
    "prompts": [("none", None), ("array", np.zeros(3))],
    "rng": [("negative", -1), ("fraction", 1.5), ("string", "seed"), ("bool", True)],
    "seed": [("negative", -1), ("fraction", 1.5), ("bool", True), ("string", "s")],
    "link": [("unknown", "softplus"), ("none", None), ("number", 1), ("degree", "hermite:x"),
             ("not_square_integrable", lambda z: np.exp(z * z)), ("not_vectorised", lambda z: 1.0),
             ("nan", lambda z: z * np.nan)],
    "tol": [("zero", 0.0), ("negative", -1e-3), ("nan", np.nan), ("one", 1.0), ("bool", True)],
}


@dataclasses.dataclass(frozen=True)
class Row:
    """One public callable: its name (as users spell it), the function, a valid call, and the
    kinds of the arguments to sweep (kind ``"array"`` derives its bad values from the valid one;
    ``"array_shape"`` also tries an array with one axis too many; ``"array_complex"`` accepts
    complex values)."""

    name: str
    func: Callable
    kwargs: dict
    kinds: dict


def sweep_cases(rows):
    """``(id, row, argument, bad value)`` for every row, swept argument and bad value."""
    cases = []
    for row in rows:
        for arg, kind in row.kinds.items():
            if kind in ("array", "array_shape", "array_complex"):
                bads = _array_bads(row.kwargs[arg])
                if kind == "array_complex":      # complex values are legitimate input here
                    bads = [(k, v) for k, v in bads if k != "complex"]
                if kind == "array_shape":
                    bads.append(("extra_axis", np.asarray(row.kwargs[arg], float)[None, ...]))
            else:
                bads = BAD[kind]
            for label, value in bads:
                cases.append((f"{row.name}-{arg}-{label}", row, arg, value))
    return cases


def check_case(row, arg, value):
    """The call with ``arg`` replaced by ``value`` raises ValueError naming ``arg``."""
    import warnings

    import pytest

    kwargs = dict(row.kwargs)
    kwargs[arg] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a warning instead of an error is a silent coercion
        with pytest.raises(ValueError) as info:
            row.func(**kwargs)
    assert arg.split(".")[-1] in str(info.value), f"message does not name {arg!r}: {info.value}"


def public_callables(module, skip=()):
    """Names of the public functions and classes of a package (its ``__all__``) and of the public
    functions of its public submodules listed in ``__all__`` (as ``sub.name``); methods of public
    classes are not listed (the tables name the ones with arguments)."""
    import inspect
    import types

    out = []
    top = {id(getattr(module, n)) for n in getattr(module, "__all__", [])}
    for name in getattr(module, "__all__", []):
        if name in skip:
            continue
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):
            for sub in getattr(obj, "__all__", [n for n in dir(obj) if not n.startswith("_")]):
                f = getattr(obj, sub)
                if inspect.isfunction(f) and f.__module__ == obj.__name__ and id(f) not in top:
                    out.append(f"{name}.{sub}")
        elif callable(obj) and not isinstance(obj, (str, tuple)):
            out.append(name)
    return out


# ----------------------------------------------------------------------------- theory vs baselines
def within(values, mean, se, tol, k=3.0):
    """Per point: ``|values − mean| <= tol·|mean| + k·se`` (systematic tolerance plus sampling error)."""
    return np.abs(np.asarray(values) - mean) <= tol * np.abs(mean) + k * se


def assert_discriminating(mean, se, theory, baselines, tol, k=3.0, margin=4.0, equivalent=(), label=""):
    """Acceptance of a theory against exact dataset averages, and the proof that the test can tell
    it from its baselines.

    (a) the theory is within ``tol·|mean| + k·se`` of the exact mean at every point;
    (b) every baseline (name → values) violates (a) at some point, and is farther from the exact
        mean than the theory by at least ``margin`` standard errors at some point (paired: both are
        compared with the same exact averages).
    Baselines named in ``equivalent`` are not resolvable from the theory at these settings; for them
    the test asserts instead that their difference from the theory is inside the same band
    ``tol·|mean| + k·se``.
    """
    mean, se, theory = (np.asarray(a, float).ravel() for a in (mean, se, theory))
    ok = within(theory, mean, se, tol, k)
    worst = int(np.argmax(np.abs(theory - mean) / (tol * np.abs(mean) + k * se)))
    assert ok.all(), (f"{label}: theory off by {theory[worst] / mean[worst] - 1:+.2%} "
                      f"({(theory[worst] - mean[worst]) / se[worst]:+.1f} s.e.) "
                      f"at point {worst}, beyond {tol:.2%} + {k} s.e.")
    for name, values in baselines.items():
        values = np.asarray(values, float).ravel()
        if name in equivalent:
            assert within(values, theory, se, tol, k).all(), f"{label}: {name} is resolvable from the theory"
            continue
        gain = (np.abs(values - mean) - np.abs(theory - mean)) / se
        assert not within(values, mean, se, tol, k).all(), f"{label}: the criterion does not reject {name}"
        assert gain.max() >= margin, f"{label}: {name} is at most {gain.max():.1f} s.e. worse than the theory"


def sweep_tests(rows, package, not_inputs):
    """The three tests of a package's bad-input table: every valid call succeeds, every bad value
    raises a ValueError naming its argument, and every public callable of ``package`` has a row.
    Assign them to ``test_*`` names in the test module."""
    import pytest

    cases = sweep_cases(rows)

    @pytest.mark.parametrize("row", rows, ids=[r.name for r in rows])
    def test_valid_call_succeeds(row):
        row.func(**row.kwargs)

    @pytest.mark.parametrize("case_id, row, arg, value", cases, ids=[c[0] for c in cases])
    def test_bad_argument_raises(case_id, row, arg, value):
        check_case(row, arg, value)

    def test_every_public_name_is_swept():
        missing = [n for n in public_callables(package, skip=not_inputs) if n not in {r.name for r in rows}]
        assert not missing, f"public callables without a bad-input row: {missing}"

    return test_valid_call_succeeds, test_bad_argument_raises, test_every_public_name_is_swept


# ----------------------------------------------------------------------------- refusal tables
# A unit's refusal table lists calls that must raise a ValueError naming one argument: rows
# ``(id, call, name)`` or ``(id, call, name, memory limit in bytes)``. Each table states how the name
# must stand apart in the message, by one of these patterns.
def name_as_word(name):
    """``name`` between word boundaries (``name`` is a regular expression: ``pb.D`` also matches ``pb_D``)."""
    return rf"\b{name}\b"


def name_as_escaped_word(name):
    """``name`` verbatim, between word boundaries."""
    import re

    return rf"\b{re.escape(name)}\b"


def name_not_within_letters(name):
    """``name`` neither preceded nor followed by a letter or ``_`` (a digit or a dot may touch it)."""
    return rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"


def name_not_within_words_or_after_a_dot(name):
    """``name`` neither preceded by a word character or a dot nor followed by a word character."""
    return rf"(?<![\w.]){name}(?![\w])"


#: the start of a message raised through a public call: the function's public name (``replica.stationary: ``)
CALLED = r"(?:[A-Za-z_][\w.]*: )?"


def name_starts_too_large(name):
    """The message starts with ``"<name> too large"``, after the public function called (a memory or work guard names
    the dominant argument first)."""
    import re

    return rf"^{CALLED}{re.escape(name)} too large"


def refusals(pattern, rows, limit=None):
    """The rows of a refusal table as pytest parameters ``(call, match, limit)``, each with its id; ``pattern``
    (one of the ``name_*`` functions above) turns the row's name into the expected match, ``limit`` is the memory
    limit of rows that state none (``None``: the tests' default, conftest.TEST_MEMORY_LIMIT)."""
    import pytest

    return [pytest.param(row[1], pattern(row[2]), row[3] if len(row) > 3 else limit, id=row[0]) for row in rows]


def assert_refused(call, match, limit, monkeypatch):
    """``call()`` raises a ValueError whose message matches ``match``, under the memory limit ``limit`` (bytes;
    ``None``: the tests' default)."""
    import pytest

    if limit is not None:
        monkeypatch.setenv("LINATTN_MEMORY_LIMIT", str(limit))
    with pytest.raises(ValueError, match=match):
        call()
