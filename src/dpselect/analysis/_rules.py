"""Parameter rules shared by the analysis entry points (:mod:`dpselect._params`)."""

from __future__ import annotations

import math
from typing import Any

from .._mechanism_support import PROBLEM
from .._params import Rule

__all__ = ["MECHANISM", "NON_NEGATIVE", "PROBLEM"]


def _check_mechanism(mech: Any, name: str) -> Any:
    if not any(callable(getattr(mech, m, None)) for m in ("probabilities", "log_probabilities")):
        raise TypeError(f"{name} must be a mechanism with a probabilities(problem) method, got {type(mech).__name__}")
    return mech


def _check_non_negative(value: Any, name: str) -> float:
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


#: A mechanism: any object with ``probabilities(problem)`` or ``log_probabilities(problem)``.
MECHANISM = Rule("a mechanism with probabilities(problem) or log_probabilities(problem)", check=_check_mechanism)
#: A finite real number >= 0 (a tolerance, a probability floor).
NON_NEGATIVE = Rule("a finite number >= 0", check=_check_non_negative)
