"""Checks of the library's own objects: a :class:`~linattn.Problem`, :class:`~linattn.Prompts`, and the two together.

``linattn/_check.py`` holds the checks of plain arguments (numbers, arrays, choices, memory) and imports nothing of
the library; these three know the model types, so they stand one floor above them (``check ← problem, prompts ←
validate``) and the ground floor has no import circle.

Why a pair ``(data, pb)`` and not one validated dataset object: ``Prompts`` validate their arrays when they are
built and a ``Problem`` its parameters, so what :func:`problem_data` adds is two ``isinstance`` tests, one
comparison of ``D`` and a lookup of the model's fields — about a microsecond, against milliseconds for the cheapest
computation that follows. Checking the pair again along one call chain costs nothing measurable, while a wrapper
object would change every signature ``f(data, pb, ...)`` of the library and of its users for no numerical gain.
"""
from __future__ import annotations

from . import _check as check
from ._arguments import instance
from ._problem import Problem
from ._prompts import Prompts

#: the rules of the two objects as arguments of a public function (:func:`linattn._arguments.public`:
#: ``@public(pb=PROBLEM, data=PROMPTS)``); the messages are those of :func:`problem` and :func:`prompts`
PROBLEM = instance(Problem, "a linattn.Problem")
PROMPTS = instance(Prompts, "a linattn.Prompts")


def problem(pb, name="pb"):
    """``pb`` if it is a :class:`linattn.Problem`.

    Parameters
    ----------
    pb : object
    name : str
        The argument's name in messages.

    Returns
    -------
    linattn.Problem

    Raises
    ------
    ValueError
        Naming ``name``, when ``pb`` is not a Problem.
    """
    if not isinstance(pb, Problem):
        raise ValueError(f"{name} must be a linattn.Problem; got {type(pb).__name__}")
    return pb


def prompts(data, name="data"):
    """``data`` if it is a :class:`linattn.Prompts`.

    Parameters
    ----------
    data : object
    name : str
        The argument's name in messages.

    Returns
    -------
    linattn.Prompts

    Raises
    ------
    ValueError
        Naming ``name``, when ``data`` is not Prompts.
    """
    if not isinstance(data, Prompts):
        raise ValueError(f"{name} must be a linattn.Prompts; got {type(data).__name__}")
    return data


def problem_data(data, pb, model="reduced"):
    """Check that ``data`` (Prompts) and ``pb`` (Problem) belong together and can serve the model.

    Parameters
    ----------
    data : linattn.Prompts
    pb : linattn.Problem
    model : {"reduced", "full"}
        The full model needs the prompts' ``y2``.

    Returns
    -------
    str
        The model name.

    Raises
    ------
    ValueError
        The types are wrong, ``data.D != pb.D``, ``model`` is unknown, or the full model is asked of prompts
        without ``y2``.
    """
    prompts(data)
    problem(pb)
    check.model(model)
    if data.D != pb.D:
        raise ValueError(f"data.D must equal pb.D = {pb.D}; got {data.D}")
    data.require(model)
    return model
