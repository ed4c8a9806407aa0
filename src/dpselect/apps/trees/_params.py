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

from ..._params import ANY, DELTA, EPSILON, OUT_OF_BOUNDS_RULE, SEED, Rule, instance_of, options
from ...accounting import Accountant

__all__ = ["ALGORITHMS", "COMMON_CONSTRAINTS", "LEAF_UTILITIES", "MECHANISMS", "SPLITS", "STOPPINGS"]

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

#: The rules of the parameters both tree estimators take (each adds its own).
COMMON_CONSTRAINTS: dict[str, Rule] = {
    "epsilon": EPSILON,
    "delta": DELTA,
    "mechanism": options(*MECHANISMS),
    "bounds": ANY,  # checked against the training data's columns at fit
    "categorical_features": ANY,  # checked against the training data's columns at fit
    "classes": ANY,  # checked against the training labels at fit
    "accountant": instance_of(Accountant, description="a dpselect.Accountant", none=True),
    "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    "random_state": _RANDOM_STATE,
}
