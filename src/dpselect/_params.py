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
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, ParamSpec, TypeVar

import numpy as np

from ._arraylike import as_array_1d
from ._validation import (
    OUT_OF_BOUNDS,
    RELATIONS,
    SAMPLERS,
    check_array_1d,
    check_delta,
    check_epsilon,
    check_finite_float,
    check_int,
    check_pair,
    check_positive,
    check_probability_in,
    check_real,
)

__all__ = [
    "ANY",
    "BOOLEAN",
    "DATA_FINITE",
    "DELTA",
    "EPSILON",
    "FINITE",
    "OUT_OF_BOUNDS_RULE",
    "PAIR",
    "REAL",
    "RELATION",
    "SAMPLER",
    "SEED",
    "SIZE",
    "Rule",
    "array_1d",
    "as_array_1d",
    "callable_",
    "instance_of",
    "int_at_least",
    "options",
    "positive",
    "real_in",
    "validate_estimator",
    "validate_fields",
    "validate_params",
]

P = ParamSpec("P")
R = TypeVar("R")
Check = Callable[[Any, str], Any]


def _show(value: Any) -> str:
    """A public parameter value as a message shows it (numpy scalars as plain numbers, long reprs cut)."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Rule:
    """What one argument accepts.

    Parameters
    ----------
    description : str
        The accepted values in words ("a float > 0"), for messages and documentation.
    check : callable, default=None
        ``check(value, name) -> value`` raising ``TypeError`` / ``ValueError`` with a message
        that names ``name`` (never the data); its return value is what the function body gets.
    options : tuple of str, default=None
        The accepted strings: another string is a ``ValueError``, a non-string a ``TypeError``.
    none : bool, default=False
        Whether None is accepted as well (passed through unchecked).
    types : tuple of type, default=()
        Instances of these types are accepted as they are.

    Examples
    --------
    >>> Rule("an int >= 2", check=lambda v, n: check_int(v, n, minimum=2))(3, "k")
    3
    """

    description: str
    check: Check | None = None
    options: tuple[str, ...] | None = None
    none: bool = False
    types: tuple[type, ...] = ()

    def __call__(self, value: Any, name: str) -> Any:
        """Return the checked (normalised) ``value`` of argument ``name``; raise if it is not accepted."""
        if value is None and self.none:
            return None
        if self.types and isinstance(value, self.types):
            return value
        if self.options is not None:
            if not isinstance(value, str):
                raise TypeError(f"{name} must be one of {self.options}, got {type(value).__name__}")
            if value not in self.options:
                raise ValueError(f"{name} must be one of {self.options}, got {_show(value)}")
            return value
        if self.check is not None:
            return self.check(value, name)
        if self.types:
            raise TypeError(f"{name} must be {self.text}, got {type(value).__name__}")
        return value

    @property
    def text(self) -> str:
        """The accepted values in words, None included where accepted."""
        return f"None or {self.description}" if self.none else self.description

    def or_none(self) -> Rule:
        """The same rule, accepting None as well."""
        return Rule(self.description, self.check, self.options, True, self.types)


# --------------------------------------------------------------------------- building blocks


def options(*values: str, none: bool = False) -> Rule:
    """One of the strings ``values`` (and None with ``none``)."""
    return Rule(f"one of {values}", options=tuple(values), none=none)


def int_at_least(minimum: int, *, none: bool = False) -> Rule:
    """An int (Python or NumPy, not bool) >= ``minimum``, returned as a Python int."""
    return Rule(f"an int >= {minimum}", check=lambda v, n: check_int(v, n, minimum=minimum), none=none)


def positive(*, allow_inf: bool = False, allow_zero: bool = False, none: bool = False) -> Rule:
    """A real number > 0 (>= 0 with ``allow_zero``; +inf with ``allow_inf``), returned as a float."""
    words = ("a float >= 0" if allow_zero else "a float > 0") + (" (inf allowed)" if allow_inf else "")
    return Rule(words, check=lambda v, n: check_positive(v, n, allow_inf=allow_inf, allow_zero=allow_zero), none=none)


def real_in(lo: float, hi: float, *, closed: bool = False, none: bool = False) -> Rule:
    """A real number in (lo, hi) (``closed``: [lo, hi]), returned as a float."""
    br = "[]" if closed else "()"
    return Rule(
        f"a float in {br[0]}{lo}, {hi}{br[1]}",
        check=lambda v, n: check_probability_in(v, n, lo, hi, closed=closed),
        none=none,
    )


def array_1d(*, allow_empty: bool = False, finite: bool = True, none: bool = False) -> Rule:
    """A 1-D array of real numbers (finite unless ``finite=False``), returned as float64."""
    return Rule(
        "a 1-D array of " + ("finite " if finite else "") + "real numbers",
        check=lambda v, n: check_array_1d(v, n, allow_empty=allow_empty, finite=finite),
        none=none,
    )


def instance_of(*types: type, description: str | None = None, none: bool = False) -> Rule:
    """An instance of one of ``types``, passed through as it is."""
    words = description or " or ".join(f"a {t.__name__}" for t in types)
    return Rule(words, types=tuple(types), none=none)


def _callable(value: Any, name: str) -> Any:
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")
    return value


def callable_(*, none: bool = False) -> Rule:
    """A callable, passed through as it is."""
    return Rule("a callable", check=_callable, none=none)


def _boolean(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _seed(value: Any, name: str) -> Any:
    """Check the type of a seed without using it (a RandomState would advance)."""
    if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence, np.random.RandomState)):
        return value
    if isinstance(value, str):
        if value != "secure":
            raise TypeError(f"{name} as a string must be 'secure', got {_show(value)}")
        return value
    if isinstance(value, numbers.Integral):
        return check_int(value, name, minimum=0)
    raise TypeError(
        f"{name} must be None, an int seed, 'secure', a numpy Generator or RandomState, got {type(value).__name__}"
    )


#: Privacy parameter epsilon: a finite float > 0 (a normal float).
EPSILON = Rule("a finite float > 0", check=check_epsilon)
#: Privacy parameter delta: a float in [0, 1).
DELTA = Rule("a float in [0, 1)", check=check_delta)
#: Any finite real number.
FINITE = Rule("a finite float", check=check_finite_float)
#: A finite real number that may come from the data (a statistic, a true value): the message
#: names the argument and never echoes the value.
DATA_FINITE = Rule("a finite float", check=lambda v, n: check_finite_float(v, n, quote=False))
#: A pair (lo, hi) of finite reals with lo <= hi.
PAIR = Rule("a pair (lo, hi) of finite floats with lo <= hi", check=check_pair)
#: A bool (or numpy bool).
BOOLEAN = Rule("a bool", check=_boolean)
#: The randomness argument (``rng`` / ``random_state``); checked, handed on unchanged (no draw).
SEED = Rule("None, an int seed >= 0, 'secure', a Generator, SeedSequence or RandomState", check=_seed)
#: Number of batched draws: None (one draw) or an int >= 1.
SIZE = int_at_least(1, none=True)
#: A neighbour relation of mathematics §1.
RELATION = options(*RELATIONS)
#: The sampler of the classic mechanisms and the grid releases.
SAMPLER = options(*SAMPLERS)
#: What a bounded-data function does with a record outside the public bounds.
OUT_OF_BOUNDS_RULE = options(*OUT_OF_BOUNDS)
#: Anything: the argument is checked in the body against other arguments (say why next to its use).
ANY = Rule("checked by the function against its other arguments")
#: A real number (NaN and inf included), returned as a float.
REAL = Rule("a real number", check=check_real)


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
            raise type(exc)(f"{owner}: {name} must be {rule.text}, got {_show(value)}") from None
    return params
