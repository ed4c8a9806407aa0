"""The tree estimators' parameters: one declarative table and the validator that reads it.

Every ``__init__`` parameter of :class:`DPDecisionTreeClassifier` and
:class:`DPRandomForestClassifier` has one :class:`Rule` in :data:`PARAMETERS`
(scikit-learn's ``_parameter_constraints`` pattern, written here because
scikit-learn's validator is private).  :func:`validate_params` checks an
estimator's parameters against the table before any data are read or any
randomness is drawn; a wrong type is a ``TypeError``, a wrong value a
``ValueError``, and each message names the estimator and the parameter::

    DPDecisionTreeClassifier: max_depth must be None or an int >= 0, got -1

Relations between parameters (delta > 0 for the approximate mechanisms, the
forest's count leaves with EM/PF only, its ``leaf_utility`` with
``algorithm="fletcher_islam"`` only) are checked by the estimators after the
table.  ``bounds``, ``categorical_features`` and ``classes`` are checked
against the data's columns and labels at fit time (:mod:`dpselect.apps.trees._tabular`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._validation import check_delta, check_epsilon, check_int
from ...accounting import Accountant
from ._split_criteria import SPLIT_UTILITIES
from ._tabular import OUT_OF_BOUNDS

__all__ = [
    "ALGORITHMS",
    "LEAF_UTILITIES",
    "MECHANISMS",
    "PARAMETERS",
    "SPLITS",
    "STOPPINGS",
    "Rule",
    "validate_params",
]

#: Selection mechanisms the estimators accept, by registry name (:mod:`dpselect.mechanisms.registry`).
MECHANISMS = ("pf", "em", "snm_t", "snm_lln", "snm_laplace", "sps", "ld")
#: Split shapes of :class:`DPDecisionTreeClassifier`.
SPLITS = ("binary", "multiway")
#: Stopping rules of :class:`DPDecisionTreeClassifier`.
STOPPINGS = ("auto", "depth", "count")
#: Leaf-label utilities of :class:`DPRandomForestClassifier`.
LEAF_UTILITIES = ("indicator", "count")
#: Algorithms of :class:`DPRandomForestClassifier`: private greedy trees on disjoint parts, Fletcher–Islam trees.
ALGORITHMS = ("trees", "fletcher_islam")


def _show(value: Any) -> str:
    """A value as a message shows it: numpy scalars as plain numbers."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Rule:
    """What one parameter accepts.

    Parameters
    ----------
    description : str
        The accepted values in words ("an int >= 0"), used in error messages.
    options : tuple of str, default=None
        The accepted strings (a string outside them is a ``ValueError``,
        anything but a string a ``TypeError``).
    check : callable, default=None
        ``check(value, name)`` raising ``TypeError`` / ``ValueError`` (the
        library's ``_validation`` helpers).
    none : bool, default=False
        Whether None is accepted as well.
    types : tuple of type, default=()
        Instances of these types are accepted as they are.
    """

    description: str
    options: tuple[str, ...] | None = None
    check: Callable[[Any, str], Any] | None = None
    none: bool = False
    types: tuple[type, ...] = ()

    def validate(self, owner: str, name: str, value: Any) -> None:
        """Raise ``TypeError`` / ``ValueError`` naming ``owner`` and ``name`` unless ``value`` is accepted."""
        if value is None and self.none:
            return
        if self.types and isinstance(value, self.types):
            return
        what = f"None or {self.description}" if self.none else self.description
        try:
            if self.options is not None:
                if not isinstance(value, str):
                    raise TypeError
                if value not in self.options:
                    raise ValueError
            elif self.check is not None:
                self.check(value, name)
            elif self.types:
                raise TypeError
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{owner}: {name} must be {what}, got {_show(value)}") from None


def _int_at_least(minimum: int) -> Rule:
    return Rule(f"an int >= {minimum}", check=lambda v, n: check_int(v, n, minimum=minimum), none=True)


def _options(values: tuple[str, ...], *, none: bool = False) -> Rule:
    return Rule(f"one of {values}", options=values, none=none)


def _seed(value: Any, name: str) -> None:
    if not (isinstance(value, str) and value == "secure"):  # "secure": the OS CSPRNG
        check_int(value, name, minimum=0)


_SCHEMA = Rule("checked against the training data at fit", check=lambda v, n: None, none=True)

#: The one table of the estimators' parameters (a parameter of either estimator is a key).
PARAMETERS: dict[str, Rule] = {
    "epsilon": Rule("a finite float > 0", check=check_epsilon),
    "delta": Rule("a float in [0, 1)", check=check_delta),
    "mechanism": _options(MECHANISMS),
    "selection": _options(MECHANISMS, none=True),  # deprecated alias of mechanism
    "split_utility": _options(SPLIT_UTILITIES),
    "splits": _options(SPLITS),
    "stopping": _options(STOPPINGS),
    "leaf_utility": _options(LEAF_UTILITIES, none=True),
    "algorithm": _options(ALGORITHMS),
    "max_depth": _int_at_least(0),
    "n_bins": _int_at_least(2),
    "n_estimators": _int_at_least(1),
    "n_records": _int_at_least(1),
    "n_max": _int_at_least(1),
    "bounds": _SCHEMA,
    "categorical_features": _SCHEMA,
    "classes": _SCHEMA,
    "accountant": Rule("a dpselect.Accountant", none=True, types=(Accountant,)),
    "on_out_of_bounds": _options(OUT_OF_BOUNDS),
    "random_state": Rule("an int >= 0, 'secure', a Generator, SeedSequence or RandomState", check=_seed, none=True,
                         types=(np.random.Generator, np.random.SeedSequence, np.random.RandomState)),
}


def validate_params(estimator: Any) -> dict[str, Any]:
    """Check every parameter of ``estimator`` against :data:`PARAMETERS`; return them (``get_params``).

    Examples
    --------
    >>> from dpselect.apps.trees import DPDecisionTreeClassifier
    >>> validate_params(DPDecisionTreeClassifier(max_depth=-1))
    Traceback (most recent call last):
    ...
    ValueError: DPDecisionTreeClassifier: max_depth must be None or an int >= 0, got -1
    """
    owner = type(estimator).__name__
    params = estimator.get_params(deep=False)
    for name, value in params.items():
        rule = PARAMETERS.get(name)
        if rule is None:  # a programming error: every parameter has its rule
            raise KeyError(f"{owner}: parameter {name!r} has no rule in the parameter table")
        rule.validate(owner, name, value)
    return params

