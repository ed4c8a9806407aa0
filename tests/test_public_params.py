"""Every public parameter refuses an invalid value, naming itself (scikit-learn's ``test_public_functions``).

Built from the declared rules (:mod:`dpselect._params`), for every function and class of every
face's ``__all__``:

* for each parameter, an invalid value is found among :data:`INVALID` (one its rule refuses);
  a parameter whose rule refuses none of them checks nothing (a pass-through);
* a function is called with that value alone (the rules run before the body, and before the
  missing arguments are noticed), a class with valid values for its required parameters
  (found among :data:`VALID`) and the invalid one; either must raise a ``TypeError`` or
  ``ValueError`` whose message names the parameter;
* at most :data:`MAX_PASS_THROUGH` of all the rules are pass-throughs (documented in
  :data:`PASS_THROUGH`, each with its reason).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from _source_imports import exported_callables
from dpselect._params import Rule, validate_estimator

#: Values a rule may refuse: each parameter's first refused value is the one fed to it.
INVALID: tuple[Any, ...] = (
    object(),
    "not-a-valid-option",
    math.nan,
    -1,
    -1.5,
    0,
    math.inf,
    1.5,
    3,
    [],
    [[1.0, 2.0], [3.0, 4.0]],
    ["a", "b"],
    True,
    None,
)

#: Values tried, in order, for the required parameters of a class (the first its rule accepts).
VALID: tuple[Any, ...] = (1.0, 0.5, 2, 1, 0.25, np.array([0.0, 1.0, 2.0]), (0.0, 1.0), [0, 1], True, "laplace")

#: Parameters whose rule documents why it accepts anything: "face.callable.parameter" -> reason.
PASS_THROUGH: dict[str, str] = {}

#: Faces whose rules are still being made to check (another change is on its way): left out
#: of both tests until it lands.
PENDING: frozenset[str] = frozenset()

#: The largest share of pass-through rules among all public parameters.
MAX_PASS_THROUGH = 0.03


def _exported() -> Iterator[tuple[str, str, Any, dict[str, Rule]]]:
    """(face, name, object, rules) for every declared function and configurable class of a face."""
    for face, name, obj in exported_callables(unique=True):
        attr = "__parameter_constraints__" if inspect.isfunction(obj) else "_parameter_constraints"
        rules = getattr(obj, attr, None)
        if rules:
            yield face, name, obj, dict(rules)


def _refuses(rule: Rule, value: Any, name: str) -> bool:
    try:
        rule(value, name)
    except (TypeError, ValueError):
        return True
    return False


def invalid_value(rule: Rule, name: str) -> tuple[bool, Any]:
    """(found, value): the first value of :data:`INVALID` that ``rule`` refuses."""
    for value in INVALID:
        if _refuses(rule, value, name):
            return True, value
    return False, None


def is_pass_through(rule: Rule) -> bool:
    """A rule that checks nothing: no check, no options, no types."""
    return rule.check is None and rule.options is None and not rule.types


def _cases() -> list[tuple[str, str, str]]:
    return [(face, name, p) for face, name, _, rules in _exported() if face not in PENDING for p in sorted(rules)]


def _lookup(face: str, name: str) -> tuple[Any, dict[str, Rule]]:
    for f, n, obj, rules in _exported():
        if (f, n) == (face, name):
            return obj, rules
    raise LookupError(f"{face}.{name}")


def _valid_required(cls: type, rules: dict[str, Rule], skip: str) -> dict[str, Any] | None:
    """Valid values for the required parameters of ``cls`` other than ``skip`` (None: none found)."""
    out: dict[str, Any] = {}
    for p in inspect.signature(cls).parameters.values():
        if p.name == skip or p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        value = next((v for v in VALID if not _refuses(rules[p.name], v, p.name)), _refuses)
        if value is _refuses:
            return None
        out[p.name] = value
    return out


def _call(obj: Any, rules: dict[str, Rule], name: str, value: Any) -> Callable[[], Any]:
    if inspect.isfunction(obj):
        return lambda: obj(**{name: value})
    if hasattr(obj, "get_params"):  # a scikit-learn estimator: fit checks get_params() against the rules
        params = {name: value}
        stub = type(obj.__name__, (), {"get_params": lambda self, deep=False: params})
        return lambda: validate_estimator(stub(), rules)
    required = _valid_required(obj, rules, name)
    if required is None:  # no valid required values at hand: the rule itself, as validate_fields runs it
        return lambda: rules[name](value, name)
    return lambda: obj(**required, **{name: value})


@pytest.mark.parametrize(("face", "name", "param"), _cases(), ids=lambda v: v)
def test_every_public_parameter_refuses_an_invalid_value(face: str, name: str, param: str) -> None:
    obj, rules = _lookup(face, name)
    found, value = invalid_value(rules[param], param)
    key = f"{face}.{name}.{param}"
    if not found:
        assert key in PASS_THROUGH, f"{key}: its rule refuses none of INVALID (a pass-through)"
        return
    with pytest.raises((TypeError, ValueError)) as info:
        _call(obj, rules, param, value)()
    assert param in str(info.value), f"{key}: the message does not name the parameter: {info.value}"


def test_pass_through_rules_are_rare() -> None:
    rules = [
        (f"{face}.{name}.{p}", r)
        for face, name, _, table in _exported()
        if face not in PENDING
        for p, r in table.items()
    ]
    through = [key for key, rule in rules if is_pass_through(rule)]
    assert len(rules) > 300
    share = len(through) / len(rules)
    assert share <= MAX_PASS_THROUGH, f"{len(through)} of {len(rules)} rules check nothing ({share:.1%}): {through}"


def test_invalid_values_catch_a_pass_through() -> None:
    """Negative control: a rule that checks nothing refuses no value, one that checks refuses one."""
    assert invalid_value(Rule("anything"), "x") == (False, None)
    assert is_pass_through(Rule("anything"))
    found, value = invalid_value(Rule("a float", check=lambda v, n: float(v)), "x")
    assert found and value is INVALID[0]
