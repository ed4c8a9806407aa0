"""What the tree estimators' parameters accept: the trees' options and their rules.

The rules are the library's one parameter layer (:mod:`dpselect._params`); this module
holds only what is the trees' own: the option tuples and the rules shared by
:class:`DPDecisionTreeClassifier` and :class:`DPRandomForestClassifier`.  Each estimator
declares ``_parameter_constraints`` (one rule per constructor parameter) and checks it with
:func:`dpselect._params.validate_estimator` before any data are read or any randomness is
drawn; a message names the estimator and the parameter::

    DPDecisionTreeClassifier: max_depth must be None or an int >= 0, got -1

Relations between parameters (delta > 0 for the approximate mechanisms, the forest's count
leaves with EM/PF only, its ``leaf_utility`` with ``algorithm="fletcher_islam"`` only) are
checked by the estimators after the rules.  ``bounds``, ``categorical_features`` and
``classes`` are checked against the data's columns and labels at fit time
(:mod:`dpselect.apps.trees._tabular`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._params import ACCOUNTANT, DELTA, EPSILON, OUT_OF_BOUNDS_RULE, SEED, Rule, options
from ..._validation import as_real_array

__all__ = ["ALGORITHMS", "COMMON_CONSTRAINTS", "LEAF_UTILITIES", "MECHANISMS", "PARAM_GRID", "SPLITS", "STOPPINGS"]

#: Selection mechanisms the estimators accept, by registry name (:func:`dpselect.mechanisms.make_mechanism`).
MECHANISMS = ("pf", "em", "snm_t", "snm_lln", "snm_laplace", "sps", "ld")
#: Split shapes of :class:`DPDecisionTreeClassifier`.
SPLITS = ("binary", "multiway")
#: Stopping rules of :class:`DPDecisionTreeClassifier`.
STOPPINGS = ("auto", "depth", "count")
#: Leaf-label utilities of :class:`DPRandomForestClassifier`.
LEAF_UTILITIES = ("indicator", "count")
#: Algorithms of :class:`DPRandomForestClassifier`: private greedy trees on disjoint parts, Fletcher–Islam trees.
ALGORITHMS = ("trees", "fletcher_islam")

#: The estimators' ``random_state``: the library's seed check, in the estimators' words.
_RANDOM_STATE = Rule("an int >= 0, 'secure', a Generator, SeedSequence or RandomState", check=SEED.check, none=True)


def _collection(value: Any, name: str) -> Any:
    """A mapping or a non-string collection (its entries are checked against the data at fit)."""
    if isinstance(value, (str, bytes)) or not (isinstance(value, Mapping) or hasattr(value, "__iter__")):
        raise TypeError(f"{name} must be a collection or a mapping, got {type(value).__name__}")
    return value


def _bounds(value: Any, name: str) -> Any:
    """A mapping {feature: (lo, hi)}, or real (lo, hi) pairs (the last axis of length 2)."""
    if isinstance(_collection(value, name), Mapping):
        return value
    arr = as_real_array(value, name)
    if arr.ndim not in (1, 2) or arr.shape[-1] != 2:
        raise ValueError(f"{name} must be (lo, hi) pairs (shape (2,) or (n, 2)), got shape {arr.shape}")
    return value


def _classes(value: Any, name: str) -> Any:
    """Public class labels: a 1-D collection."""
    if np.ndim(_collection(value, name)) != 1 or isinstance(value, Mapping):
        raise ValueError(f"{name} must be a 1-D collection of labels")
    return value


def _param_grid(value: Any, name: str) -> Any:
    """A dict of parameter grids, or a non-empty list of such dicts."""
    grids = [value] if isinstance(value, Mapping) else value
    if isinstance(grids, (str, bytes)) or not isinstance(grids, (list, tuple)) or not grids:
        raise TypeError(f"{name} must be a dict or a non-empty list of dicts, got {type(value).__name__}")
    if not all(isinstance(g, Mapping) for g in grids):
        raise TypeError(f"{name} must be a dict or a list of dicts")
    return value


#: :class:`DPSearchCV`'s grid: a dict or a list of dicts (names checked against the estimator at fit).
PARAM_GRID = Rule("a dict or a non-empty list of dicts", check=_param_grid)

#: The rules of the parameters both tree estimators take (each adds its own).
COMMON_CONSTRAINTS: dict[str, Rule] = {
    "epsilon": EPSILON,
    "delta": DELTA,
    "mechanism": options(*MECHANISMS),
    # bounds, categorical features and classes: checked against the training data at fit
    "bounds": Rule("(lo, hi) pairs or a mapping {feature: (lo, hi)}", check=_bounds, none=True),
    "categorical_features": Rule("indices, names, a mask or a mapping", check=_collection, none=True),
    "classes": Rule("a 1-D collection of labels", check=_classes, none=True),
    "accountant": ACCOUNTANT,
    "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    "random_state": _RANDOM_STATE,
}
