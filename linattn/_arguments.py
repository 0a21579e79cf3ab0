"""What each public argument accepts: one table, applied where the user calls in.

Every public function and method of the library is decorated with :func:`public`. Before its body runs, each
argument whose name is in :data:`ARGUMENTS` — the vocabulary of ``docs/conventions.md`` §7, where one name has one
meaning library-wide — is checked and normalised by its :class:`Rule` (``P`` becomes an ``int``, ``rng`` a
``numpy.random.Generator``, …). A function states the rules of its other arguments in the decorator
(``@public(n_probes=integer())``), or replaces a table rule where its argument accepts more
(``@public(P=positive(allow_inf=True))``); ``name=None`` leaves an argument to the body (an argument whose check
needs another argument, such as a ``Γ`` of shape ``(D, D)``). Private functions trust their inputs: they are only
called with checked values. This follows scikit-learn's ``validate_params`` and its parameter constraints: a
declaration beside the function, checked at the boundary.

Every ``ValueError`` that leaves a public call names the function first, once: the public name of the outermost
public function the user called (``replica.stationary: P must be an integer >= 1 …; got 0``). A rule's message names
the argument, the value received and the accepted range (:func:`linattn._check.fail`).
"""
from __future__ import annotations

import contextvars
import functools
import inspect
import sys
import types
from dataclasses import dataclass
from typing import Callable

from . import _check as check


@dataclass(frozen=True)
class Rule:
    """What one argument accepts.

    Attributes
    ----------
    accepts : str
        The accepted values in words (the documentation and the conventions table read it).
    apply : callable
        ``apply(name, value)`` returns the value normalised, or raises ``ValueError`` naming ``name``, the value and
        :attr:`accepts`.
    """

    accepts: str
    apply: Callable

    def __call__(self, name, value):
        return self.apply(name, value)


def integer(minimum=1, maximum=None) -> Rule:
    """An integer (or an integral float) in ``[minimum, maximum]``, returned as ``int``."""
    hi = "" if maximum is None else f" and <= {maximum}"
    return Rule(f"an integer >= {minimum}{hi}",
                lambda name, v: check.positive_int(name, v, minimum=minimum, maximum=maximum))


def real(low=None, high=None, low_open=False, high_open=False, allow_inf=False) -> Rule:
    """A real number in an interval (no NaN; ``±inf`` only with ``allow_inf``), returned as ``float``."""
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    left, right = "(" if low_open or low is None else "[", ")" if high_open or high is None else "]"
    return Rule(f"a real number in {left}{lo}, {hi}{right}",
                lambda name, v: check.real(name, v, low=low, high=high, low_open=low_open, high_open=high_open,
                                           allow_inf=allow_inf))


def positive(allow_inf=False) -> Rule:
    """A real number ``> 0`` (``inf`` only with ``allow_inf``)."""
    return Rule("a real number > 0" + (" (inf allowed)" if allow_inf else ""),         # check.positive, one call
                lambda name, v: check.real(name, v, low=0.0, low_open=True, allow_inf=allow_inf))


def nonnegative(allow_inf=False) -> Rule:
    """A real number ``>= 0`` (``inf`` only with ``allow_inf``)."""
    return Rule("a real number >= 0" + (" (inf allowed)" if allow_inf else ""),        # check.nonnegative
                lambda name, v: check.real(name, v, low=0.0, allow_inf=allow_inf))


def choice(options) -> Rule:
    """One of ``options``."""
    options = tuple(options)
    return Rule(f"one of {options}", lambda name, v: check.choice(name, v, options))


def optional(rule: Rule) -> Rule:
    """``None``, or what ``rule`` accepts."""
    return Rule(f"None or {rule.accepts}", lambda name, v: None if v is None else rule.apply(name, v))


def boolean() -> Rule:
    """``True`` or ``False`` (no truthiness)."""
    return Rule("True or False", check.boolean)


def tolerance() -> Rule:
    """A tolerance or fraction: a real number in the open interval ``(0, 1)``, returned as ``float``."""
    return Rule("a real number in (0.0, 1.0)", check.tolerance)


def array(ndim=None, shape=None, allow_complex=False, min_ndim=0) -> Rule:
    """An array of finite real (or, with ``allow_complex``, complex) numbers of the given ``ndim`` or ``shape``
    (``None`` entries: free axes), returned as float64 (complex128) (:func:`linattn._check.finite_array`)."""
    kind = "real or complex" if allow_complex else "real"
    where = "" if shape is None else f" of shape {tuple('any' if s is None else s for s in shape)}"
    where += "" if ndim is None else f" with {ndim} dimension(s)"
    return Rule(f"an array of finite {kind} numbers{where}",
                lambda name, v: check.finite_array(name, v, ndim=ndim, shape=shape, allow_complex=allow_complex,
                                                   min_ndim=min_ndim))


def real_array(low=None, low_open=False, allow_inf=False, min_ndim=0) -> Rule:
    """A real number or a non-empty array of them, each ``>= low`` (``> low`` with ``low_open``; no NaN, ``+inf``
    only with ``allow_inf``), returned as float64 (:func:`linattn._check.real_array`)."""
    bound = "" if low is None else f" {'>' if low_open else '>='} {low}"
    return Rule(f"a real number{bound} or a non-empty array of them" + (" (inf allowed)" if allow_inf else ""),
                lambda name, v: check.real_array(name, v, low=low, low_open=low_open, allow_inf=allow_inf,
                                                 min_ndim=min_ndim))


def instance(cls, accepts) -> Rule:
    """An instance of ``cls`` (a class or a tuple of classes, by ``isinstance``), returned as is; ``accepts`` names it
    in messages (``"a linattn.Problem"``)."""
    def apply(name, value):
        if not isinstance(value, cls):
            raise ValueError(f"{name} must be {accepts}; got {type(value).__name__}")
        return value

    return Rule(accepts, apply)




def seed() -> Rule:
    """An integer seed: a non-negative integer below ``2**63``, or a ``numpy.random.Generator`` reduced to one draw
    of it (:func:`linattn._check.seed_int`), returned as ``int``."""
    return Rule("a non-negative integer below 2**63 or a numpy.random.Generator", check.seed_int)


def _rng(name, value):
    return check.rng(value) if name == "rng" else _named_rng(name, value)


def _named_rng(name, value):
    try:
        return check.rng(value)
    except ValueError:
        check.fail(name, value, "None, a non-negative integer seed, a tuple of them, or a numpy.random.Generator")


#: the public arguments that mean one thing everywhere (``docs/conventions.md`` §7; ``tests/test_conventions.py``
#: checks that the two tables agree). A function's own rules extend or replace these (:func:`public`).
ARGUMENTS: dict[str, Rule] = {
    "D": integer(),
    "N": integer(),
    "P": integer(),
    "N_test": optional(integer()),
    "noise": nonnegative(),
    "beta": positive(allow_inf=True),
    "gamma": positive(),
    "lr": positive(),
    "dt": optional(positive()),
    "alpha": positive(),
    "model": choice(check.MODELS),
    "rng": Rule("None, a non-negative integer seed, a tuple of them, or a numpy.random.Generator", _rng),
    "progress": boolean(),
    "n_test_prompts": integer(),
    "C": integer(minimum=2),
    "concentration": positive(),
    "n_seq": integer(),
    "length": integer(minimum=2),
}


_OUTERMOST = contextvars.ContextVar("linattn_public_call", default=None)


def public_name(fn) -> str:
    """The name a user calls ``fn`` by: the shortest public module that exports it (or its class) in ``__all__``, one
    of its own package first, then its qualified name (``replica._stationary.stationary`` → ``replica.stationary``;
    ``linattn._idg.idg_error`` → ``linattn.pools.idg_error``; ``linattn._readout.readout`` → ``validation.readout``;
    ``linattn._problem.Problem.sample`` → ``linattn.Problem.sample``); a function no loaded public module exports: its
    module path without the private rooms."""
    head, home = fn.__qualname__.split(".")[0], fn.__module__.split(".")[0]
    owner = vars(sys.modules[fn.__module__]).get(head)
    found = [name for name, module in list(sys.modules.items())
             if owner is not None and isinstance(module, types.ModuleType)
             and not any(p.startswith("_") for p in name.split("."))
             and vars(module).get(head) is owner and head in vars(module).get("__all__", ())]
    module = (min(found, key=lambda name: (name.split(".")[0] != home, name.count("."), len(name))) if found
              else ".".join(p for p in fn.__module__.split(".") if not p.startswith("_")))
    qualname = fn.__qualname__.removesuffix(".__init__")       # a constructor is called by its class's name
    return f"{module}.{qualname}"


def _named(err, name):
    """Put ``name: `` in front of a ValueError's message (in place, once)."""
    if getattr(err, "_linattn_named", False):
        return
    if err.args and isinstance(err.args[0], str):
        err.args = (f"{name}: {err.args[0]}",) + err.args[1:]
    err._linattn_named = True


_UNCHECKED = object()
#: the values a rule may return for a default once and for all (immutable: every call can share them)
_CONSTANT_TYPES = (bool, int, float, complex, str, type(None))


def _default(name, rule, default):
    """``(default, checked default)`` of an argument ``name`` with a ``default`` (or none): a default that the rule
    accepts and turns into an immutable value is checked once, when the function is decorated, not at every call that
    leaves it out (a Generator, an array or a refused default: :data:`_UNCHECKED`, checked at each call as before)."""
    if default is inspect.Parameter.empty:
        return default, _UNCHECKED
    try:
        checked = rule.apply(name, default)
    except Exception:
        return default, _UNCHECKED
    if type(checked) not in _CONSTANT_TYPES or type(default) not in _CONSTANT_TYPES:
        return default, _UNCHECKED
    return default, checked


def public(fn=None, /, **rules):
    """Decorator of a public function or method: check its arguments by :data:`ARGUMENTS` and ``rules``, and name
    the function in every ``ValueError`` its call raises.

    Parameters
    ----------
    fn : callable
        The function (``@public``), or omitted (``@public(name=rule, …)``).
    **rules : Rule or None
        Rules of this function's own arguments, replacing the table's for the same name; ``None`` leaves that
        argument unchecked here (the body checks it, e.g. against another argument).

    Returns
    -------
    callable
        The checked function: the same signature, docstring and name (``functools.wraps``).
    """
    def decorate(f):
        sig = inspect.signature(f)
        plan = []
        for name in sig.parameters:
            rule = rules[name] if name in rules else ARGUMENTS.get(name)
            if rule is not None:
                plan.append((name, rule))
        unknown = set(rules) - set(sig.parameters)
        if unknown:
            raise TypeError(f"public({f.__qualname__}): rules for arguments it does not have: {sorted(unknown)}")
        label = []          # the public name, found when first needed (every public module is loaded by then)
        params = sig.parameters
        positions = [n for n, p in params.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
        # each rule where its value is: a position, a keyword or the default (``sig.bind`` costs ~8 µs a call; this
        # ~1 µs); a rule of a positional-only or variadic parameter binds through the signature
        fast = all(params[name].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
                   for name, _ in plan)
        steps = [(name, rule, positions.index(name) if name in positions else len(params),
                  *_default(name, rule, params[name].default)) for name, rule in plan]

        def bind(args, kwargs):
            if not fast:
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                for name, rule in plan:
                    bound.arguments[name] = rule.apply(name, bound.arguments[name])
                return bound.args, bound.kwargs
            args = list(args)
            for name, rule, position, default, checked in steps:
                if position < len(args):
                    args[position] = rule.apply(name, args[position])
                elif name in kwargs:
                    kwargs[name] = rule.apply(name, kwargs[name])
                elif checked is not _UNCHECKED:
                    if checked is not default:
                        kwargs[name] = checked
                elif default is not inspect.Parameter.empty:
                    kwargs[name] = rule.apply(name, default)
            return args, kwargs

        @functools.wraps(f)
        def checked(*args, **kwargs):
            token = _OUTERMOST.set(checked) if _OUTERMOST.get() is None else None
            try:
                if plan:
                    args, kwargs = bind(args, kwargs)
                return f(*args, **kwargs)
            except ValueError as err:
                if token is not None:
                    if not label:
                        label.append(public_name(f))
                    _named(err, label[0])
                raise
            finally:
                if token is not None:
                    _OUTERMOST.reset(token)

        checked.__linattn_rules__ = dict(plan)
        return checked

    return decorate if fn is None else decorate(fn)


def public_class(cls):
    """Class decorator of a public class whose constructor checks its arguments itself (a dataclass's
    ``__post_init__``): every ``ValueError`` of ``cls(…)`` names the class first (``linattn.Problem: D must be …``),
    as :func:`public` names a function. No rule of :data:`ARGUMENTS` is applied: the constructor's own checks and
    messages stand."""
    init = cls.__init__
    off = {name: None for name in inspect.signature(init).parameters if name in ARGUMENTS}
    cls.__init__ = public(init, **off)
    return cls
