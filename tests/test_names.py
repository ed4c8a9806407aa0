"""One name, one meaning, across the public API (docs/architecture.md, "Names").

* ``epsilon`` is positional-or-keyword wherever a function takes it (estimators, whose
  parameters are all keyword-only as in scikit-learn, excepted);
* ``method`` chooses an algorithm (a different law) and ``sampler`` / ``float_sampler`` how
  the same law is drawn: a ``sampler`` takes the values of :data:`dpselect._validation.SAMPLERS`;
* ``clip`` is not a parameter: ``clip_output`` clamps a released value, ``on_out_of_bounds``
  says what happens to input records outside the public bounds.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from _source_imports import exported_callables
from dpselect._validation import SAMPLERS


def _public() -> list[tuple[str, Any]]:
    return [(f"{face}.{name}", obj) for face, name, obj in exported_callables(unique=True)]


def _parameters(obj: Any) -> dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return {}


def _is_estimator(obj: Any) -> bool:
    return inspect.isclass(obj) and hasattr(obj, "get_params")


def keyword_only_epsilons(objects: list[tuple[str, Any]]) -> list[str]:
    """The callables (estimators excepted) whose ``epsilon`` is keyword-only."""
    return [
        name
        for name, obj in objects
        if not _is_estimator(obj)
        and (p := _parameters(obj).get("epsilon")) is not None
        and p.kind is inspect.Parameter.KEYWORD_ONLY
    ]


def test_epsilon_is_positional_or_keyword() -> None:
    assert keyword_only_epsilons(_public()) == []


def test_keyword_only_epsilon_is_caught() -> None:
    def f(x: float, *, epsilon: float) -> None: ...

    def g(x: float, epsilon: float) -> None: ...

    assert keyword_only_epsilons([("f", f), ("g", g)]) == ["f"]


@pytest.mark.parametrize(("name", "obj"), _public(), ids=lambda v: v if isinstance(v, str) else "")
def test_names_mean_one_thing(name: str, obj: Any) -> None:
    params = _parameters(obj)
    assert "clip" not in params, f"{name}: clip_output (the release) or on_out_of_bounds (the data)"
    sampler = params.get("sampler")
    if sampler is not None and isinstance(sampler.default, str):
        assert sampler.default in SAMPLERS, f"{name}: sampler={sampler.default!r} is not one of {SAMPLERS}"
