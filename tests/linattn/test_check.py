"""The argument checks every package uses (``linattn._check``): numbers beyond float64, results that overflow,
the shared array conversion."""
import fractions
import math

import numpy as np
import pytest
from helpers import CALLED, assert_refused, name_not_within_letters, name_not_within_words_or_after_a_dot, refusals
from hypothesis import example, given
from hypothesis import strategies as st

import linattn
from linattn import _check as check

REFUSED = refusals(name_not_within_words_or_after_a_dot, [
    ("memory-nan", lambda: check.memory(float("nan"), "x", "arg"), "arg"),
    ("memory-huge-int", lambda: check.memory(10**400, "x", "arg"), "arg"),
    ("work-huge-int", lambda: check.work(10**400, "x", "arg"), "arg"),
    ("positive-int-fraction", lambda: check.positive_int("x", fractions.Fraction(7, 2)), "x"),
    ("positive-int-huge-fraction", lambda: check.positive_int("x", fractions.Fraction(10**400, 3)), "x"),
]) + refusals(name_not_within_letters, [
    ("block-lambdas-model", lambda: check.block_lambdas(0.1, "nonsense"), "model"),
])


@pytest.mark.parametrize("call, match, limit", REFUSED)
def test_refused_naming_the_argument(call, match, limit, monkeypatch):
    assert_refused(call, match, limit, monkeypatch)


def test_the_shared_conversion_keeps_scalars_and_lists():
    """``check.asarray`` (``min_ndim``) is what ``np.atleast_1d`` / ``np.atleast_2d`` were for well-formed input."""
    assert check.finite_array("x", 3.0, min_ndim=1).shape == (1,)
    assert check.finite_array("x", [1.0, 2.0], min_ndim=2).shape == (1, 2)
    assert check.real_array("x", 2.0, low=1.0, min_ndim=1).tolist() == [2.0]
    assert check.counts("steps", 5).tolist() == [5]
    assert check.block_lambdas((0.1, 0.2), "full") == (0.1, 0.2)
    assert linattn.markov.first_law(np.full((1, 3, 3), 1 / 3), "stationary").shape == (1, 3)


@pytest.mark.parametrize("min_ndim", [2.5, 10**9, -1, True, "2", None])
def test_asarray_checks_its_own_min_ndim(min_ndim):
    """``min_ndim`` of 2.5 raised numpy's TypeError, 10⁹ built a shape tuple of 10⁹ entries (8 GB): refused by
    name, an integer in [0, 32]."""
    with pytest.raises(ValueError, match=r"^min_ndim must be an integer >= 0 and <= 32"):
        check.asarray("x", [1.0], min_ndim=min_ndim)
    assert check.asarray("x", 1.0, min_ndim=32).shape == (1,) * 32


def test_integers_beyond_float64_are_refused_by_name():
    """A Python int >= 2**1024 cannot become a float: every real argument refuses it with its name (one check)."""
    with pytest.raises(ValueError, match="noise must be"):
        linattn.Problem(3, 4, noise=10**400)
    with pytest.raises(ValueError, match="slope must be"):
        linattn.links.Link.linear(10**400)
    with pytest.raises(ValueError, match="steps must be"):
        check.counts("steps", [1e300])


def test_a_result_that_overflows_names_the_argument_that_made_it():
    """One check (``linattn._check.finite_result``) where a finite input gives a result beyond float64: the exact test
    error, the training energy, the layer output, the in-distribution error and the eigen-coordinate error raise a
    ValueError naming the culprit instead of returning inf or NaN."""
    import spectra
    from linattn import _attention as attention
    from linattn import _idg as pools
    from linattn import _sampling as sampling

    pb = linattn.Problem(3, 4, 0.1)
    data = pb.sample(6, rng=0)
    cases = [(lambda: pb.test_error(1e200 * np.eye(3)), "Gamma"),
             (lambda: pb.test_error(np.zeros((3, 3)), v=np.full(3, 1e200)), "v"),
             (lambda: linattn.Problem(3, 4, link="tanh").test_error(1e200 * np.eye(3)), "Gamma"),
             (lambda: linattn.Problem(3, 4, 0.1, covariance=[1.0, 0.5, 0.25]).test_error(1e200 * np.eye(3)), "Gamma"),
             (lambda: linattn.train_energy(data, 1e200 * np.eye(3), 0.1), "Gamma"),
             (lambda: linattn.train_energy(data, 10 * np.eye(3), 1e308), "lam"),
             (lambda: attention.forward(1e200 * sampling.sample_tokens(pb, 2, rng=0).embed(), np.eye(4)), "Z"),
             (lambda: pools.idg_error(pb, np.full((2, 3), 1e200), 0.1 * np.eye(3)), "pool"),
             (lambda: spectra.eigensystem(data, pb).test_error(np.full(6, 1e200)),
              r"spectra\.Eigensystem\.test_error: a")]
    for call, name in cases:
        with pytest.raises(ValueError, match=f"^{CALLED}{name} must be small enough"):
            call()
    assert np.isfinite(pb.test_error(1e10 * np.eye(3)))          # large but representable: a value



class _List(list):
    """A list that ``real_array`` does not recognise as one (its fast path takes ``list`` and ``tuple`` only)."""


class _Tuple(tuple):
    """A tuple that ``real_array`` does not recognise as one."""


def _outcome(call):
    try:
        out = call()
    except ValueError as err:
        return "refused", str(err)
    return repr((out.dtype, out.shape, out.tolist()))


_EDGES = st.sampled_from([0.0, -0.0, 1.0, 0.5, 2.0, -1.0, math.inf, -math.inf, math.nan, 0, 1, 2**53, 2**53 + 1])


@given(st.lists(st.one_of(_EDGES, st.floats(), st.integers(-2**60, 2**60), st.booleans()), min_size=0, max_size=20),
       st.sampled_from([None, 0.0, 1.0]), st.booleans(), st.booleans(), st.sampled_from([0, 1]), st.booleans())
@example([1.0, 3.0], 1.0, True, False, 1, False)         # a bound met where it is open
@example([0, 2.5], 0.0, True, False, 0, True)
@example([2.0, math.inf], 1.0, False, True, 1, False)      # inf where it is allowed
@example([2**53 + 1], None, False, False, 0, False)        # an integer beyond 2**53
@example([True, 2.0], None, False, False, 0, False)         # a bool
def test_real_array_of_a_short_list_is_what_the_general_path_gives(values, low, low_open, allow_inf, min_ndim, tup):
    """``real_array`` checks a short list of Python numbers without building an array first; its value, or its
    refusal with the same message, is the one of the general path (the same list, not recognised as one)."""
    kw = dict(low=low, low_open=low_open, allow_inf=allow_inf, min_ndim=min_ndim)
    given, general = (tuple(values), _Tuple(values)) if tup else (values, _List(values))
    fast = _outcome(lambda: check.real_array("x", given, **kw))
    assert fast == _outcome(lambda: check.real_array("x", general, **kw))
