"""Parameter rules shared by the accounting functions (see :mod:`dpselect._params`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._params import ITERABLE, Rule, instance_of, int_at_least, positive
from .._validation import check_delta, check_delta_positive, check_epsilon, check_positive
from ..privacy import Privacy

__all__ = [
    "DELTA_POSITIVE",
    "NONNEGATIVE",
    "N_CANDIDATES",
    "PRIVACIES",
    "PRIVACY",
    "delta_nonzero",
    "delta_positive",
    "epsilon_inf",
    "reals",
]


def delta_positive(why: str) -> Rule:
    """A delta in (0, 1); ``why`` says, in the message for delta = 0, what needs delta > 0."""
    return Rule("a float in (0, 1)", check=lambda v, n: check_delta_positive(v, why, n))


def delta_nonzero(why: str = "") -> Rule:
    """A delta in (0, 1); for delta = 0 the message is "delta must be > 0{why}, got 0"."""

    def check(value: Any, name: str) -> float:
        d = check_delta(value, name)
        if d <= 0.0:
            raise ValueError(f"{name} must be > 0{why}, got {value!r}")
        return d

    return Rule("a float in (0, 1)", check=check)


#: delta > 0, needed by every conversion through zCDP or a tail bound.
DELTA_POSITIVE = delta_positive("(epsilon, delta)-DP with delta > 0 is needed here")

#: A guarantee.
PRIVACY = instance_of(Privacy, description="a Privacy")


def _privacies(value: Any, name: str) -> list[Privacy]:
    if not isinstance(value, Iterable) or isinstance(value, (str, bytes, Privacy)):
        raise TypeError(f"{name} must be an iterable of Privacy, got {type(value).__name__}")
    out = list(value)
    for item in out:
        if not isinstance(item, Privacy):
            raise TypeError(f"{name} must be an iterable of Privacy, got an element of type {type(item).__name__}")
    return out


#: An iterable of guarantees, handed to the body as a list.
PRIVACIES = Rule("an iterable of dpselect.Privacy", check=_privacies)


def epsilon_inf() -> Rule:
    """An epsilon > 0 that may be ``inf`` ("track only" budgets)."""
    return Rule("a float > 0 (inf allowed)", check=lambda v, n: check_epsilon(v, n, allow_inf=True))


def reals(element: str, *, allow_zero: bool = False, allow_inf: bool = False) -> Rule:
    """An iterable of floats > 0 (>= 0 with ``allow_zero``), each checked under the name ``element``."""
    return Rule(
        "an iterable of floats " + (">= 0" if allow_zero else "> 0"),
        check=lambda v, n: [
            check_positive(e, element, allow_zero=allow_zero, allow_inf=allow_inf) for e in ITERABLE(v, n)
        ],
    )


#: A float >= 0.
NONNEGATIVE = positive(allow_zero=True)
#: m, the number of candidates (>= 1).
N_CANDIDATES = int_at_least(1)
