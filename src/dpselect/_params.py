"""The declarative parameter layer: every public entry point states what each argument accepts, once.

scikit-learn's ``_parameter_constraints`` idea, written for this library (scikit-learn's
validator is private and would pull scikit-learn into the numpy + scipy core):

* a :class:`Rule` says what one argument accepts, in words (for messages and the API pages)
  and as a check ``check(value, name) -> value`` (the :mod:`dpselect._validation` helpers,
  whose messages name the argument and never echo data);
* :func:`validate_params` decorates a function with one rule per parameter: every call binds
  its arguments, checks them **before the body runs** (so before any randomness is drawn),
  and hands the body the checked values (a float for ``epsilon``, a float64 array for ``x``);
  the rules stay readable as ``func.__parameter_constraints__``;
* :func:`validate_fields` does the same for a frozen dataclass's fields (the mechanisms'
  ``__post_init__``), and :func:`validate_estimator` for a scikit-learn estimator's
  ``get_params()`` against its ``_parameter_constraints`` table (messages then start with
  the estimator's name, as scikit-learn's do).

A wrong type is a :class:`TypeError`, a wrong value a :class:`ValueError`; both name the
argument.  The command line maps them to one-line messages (:mod:`dpselect.cli`) instead of
checking again.  Checks that tie two arguments together (``q`` inside ``bounds``) stay in
the function body, after the per-argument rules.

Examples
--------
>>> from dpselect._params import EPSILON, Rule, options, validate_params
>>> @validate_params({"epsilon": EPSILON, "how": options("fast", "exact")})
... def f(epsilon, how="fast"):
...     return epsilon, how
>>> f(1, how="exact")
(1.0, 'exact')
>>> f(-1.0)
Traceback (most recent call last):
...
ValueError: epsilon must be > 0, got -1.0
>>> sorted(f.__parameter_constraints__)
['epsilon', 'how']
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import fields
from types import MappingProxyType
from typing import Any, ParamSpec, TypeVar

from . import _param_rules
from ._arraylike import as_array_1d
from ._param_rules import *  # noqa: F403 (the rules, re-exported here: one import path for the layer)
from ._param_rules import Rule, show

__all__ = [*_param_rules.__all__, "as_array_1d", "validate_estimator", "validate_fields", "validate_params"]

P = ParamSpec("P")
R = TypeVar("R")


# --------------------------------------------------------------------------- functions


def _missing(sig: inspect.Signature, rules: Mapping[str, Rule], owner: str) -> None:
    """Raise (a programming error) unless ``rules`` names exactly the ordinary parameters of ``sig``."""
    ordinary = {
        name
        for name, p in sig.parameters.items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and name not in ("self", "cls")
    }
    if ordinary != set(rules):
        raise TypeError(
            f"{owner}: parameter rules do not match the signature "
            f"(missing {sorted(ordinary - set(rules))}, unknown {sorted(set(rules) - ordinary)})"
        )


def validate_params(rules: Mapping[str, Rule]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so each call checks its arguments against ``rules`` before the body runs.

    Parameters
    ----------
    rules : mapping of str to Rule
        One rule for every parameter of the function (``self``, ``*args`` and ``**kwargs``
        excepted); a missing or unknown name is a ``TypeError`` when the function is defined.

    Returns
    -------
    callable
        The decorator.  The decorated function gets the checked values (as the rules return
        them), has the same signature and docstring, and exposes the rules as
        ``__parameter_constraints__`` (a read-only mapping).  Arguments left at their
        defaults are not checked (the defaults are the library's own, public values).
    """
    table = MappingProxyType(dict(rules))

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        sig = inspect.signature(func)
        _missing(sig, table, func.__qualname__)
        kinds = [p.kind for p in sig.parameters.values()]
        positional = [p.name for p in sig.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]
        # Fast path (no Signature.bind per call): each rule in the signature's order, with the
        # position its argument takes when passed positionally (-1: keyword-only).
        plan = [
            (name, positional.index(name) if name in positional else -1, table[name])
            for name in sig.parameters
            if name in table
        ]
        simple = inspect.Parameter.POSITIONAL_ONLY not in kinds and inspect.Parameter.VAR_POSITIONAL not in kinds

        @functools.wraps(func)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            if not simple or len(args) > len(positional):
                bound = sig.bind(*args, **kwargs)  # the general case (and the error for a bad call)
                for name, value in bound.arguments.items():
                    rule = table.get(name)
                    if rule is not None:
                        bound.arguments[name] = rule(value, name)
                return func(*bound.args, **bound.kwargs)
            values = list(args)
            for name, pos, rule in plan:
                if 0 <= pos < len(values):
                    values[pos] = rule(values[pos], name)
                elif name in kwargs:
                    kwargs[name] = rule(kwargs[name], name)
            return func(*values, **kwargs)  # type: ignore[arg-type]

        checked.__parameter_constraints__ = table  # type: ignore[attr-defined]
        return checked

    return decorate


# --------------------------------------------------------------------------- dataclasses and estimators


def validate_fields(obj: Any, rules: Mapping[str, Rule]) -> None:
    """Check the fields of the frozen dataclass ``obj`` against ``rules`` and store the checked values.

    Parameters
    ----------
    obj : dataclass instance
        Called from its ``__post_init__``; every init field must have a rule.
    rules : mapping of str to Rule
        One rule per init field (a missing or unknown name is a ``TypeError``).
    """
    names = {f.name for f in fields(obj) if f.init}
    if names != set(rules):
        raise TypeError(
            f"{type(obj).__name__}: field rules do not match the fields "
            f"(missing {sorted(names - set(rules))}, unknown {sorted(set(rules) - names)})"
        )
    for name, rule in rules.items():
        object.__setattr__(obj, name, rule(getattr(obj, name), name))


def validate_estimator(estimator: Any, rules: Mapping[str, Rule]) -> dict[str, Any]:
    """Check an estimator's ``get_params(deep=False)`` against ``rules``; return the parameters.

    Messages start with the estimator's class name and say what the parameter accepts::

        DPDecisionTreeClassifier: max_depth must be None or an int >= 0, got -1

    Parameters
    ----------
    estimator : scikit-learn estimator
        Its parameters are read with ``get_params(deep=False)`` (nothing is set).
    rules : mapping of str to Rule
        The estimator's ``_parameter_constraints``; every parameter must have a rule.

    Returns
    -------
    dict
        The parameters, as ``get_params(deep=False)`` gives them.
    """
    owner = type(estimator).__name__
    params: dict[str, Any] = estimator.get_params(deep=False)
    for name, value in params.items():
        rule = rules.get(name)
        if rule is None:  # a programming error: every parameter has its rule
            raise KeyError(f"{owner}: parameter {name!r} has no rule in _parameter_constraints")
        try:
            rule(value, name)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{owner}: {name} must be {rule.text}, got {show(value)}") from None
    return params
