"""The parameter rules the counts entry points share (:func:`dpselect._params.validate_params`).

Each rule calls the check the bodies used to call, so messages are unchanged.  Values
computed from the data (a PTR value, its distance to instability, the proposed bound) are
checked without echoing them (a message is a release).  A sample ``x`` is checked in the
body against its ``candidates`` (it may be empty only when they are given), candidate
names against the number of counts, and a mechanism against ``epsilon`` by the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._params import Rule, array_1d, instance_of, options
from ..._validation import check_counts, check_delta_positive, check_positive
from ...accounting import Accountant
from ...noise import check_granularity
from ...typing import ArrayLike

__all__ = [
    "ACCOUNTANT",
    "CANDIDATES",
    "COUNTS",
    "DISTANCE",
    "GRANULARITY",
    "LABELS",
    "MECHANISM",
    "NAMES",
    "PTR_BOUND",
    "PTR_DELTA",
    "SAMPLE",
    "TIE_RULE",
    "TIE_RULES",
    "UTILITIES",
    "as_labels",
]

#: Supported tie conventions (mathematics §4.2: T1 = "tieset", T2 = "first").
TIE_RULES = ("tieset", "first")

#: Utilities of :func:`~dpselect.apps.counts.majority_problem`: the counts (mathematics §9.1) and the
#: argmax indicator (mathematics §4.2).
UTILITIES = ("count", "indicator")


def as_labels(values: ArrayLike | Sequence[object], name: str) -> np.ndarray:
    """One label per entry as a 1-D array (no None, NaN or inf; the message quotes no label)."""
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got {arr.ndim} dimensions")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} must not contain NaN or inf")
    if arr.dtype == object and any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in arr):
        raise ValueError(f"{name} must not contain None, NaN or inf")
    return arr


def _ptr_delta(value: Any, name: str) -> float:
    return check_delta_positive(value, "the PTR threshold is ln(1/delta)/epsilon", name)


#: Non-negative integer counts, one per candidate (returned as int64; messages quote no count).
COUNTS = Rule("a 1-D array of non-negative integer counts", check=check_counts)
#: The tie convention of the argmax-indicator utility.
TIE_RULE = options(*TIE_RULES)
#: Raw labels, one per record (or public candidate labels).
LABELS = Rule("a 1-D sequence of labels (no None, NaN or inf)", check=as_labels)
#: Names of the candidates: checked by :class:`~dpselect.problem.SelectionProblem` against the counts.
NAMES = Rule("None or a sequence of candidate names, one per count")
#: A selection mechanism: resolved (and checked against epsilon) by the mechanisms' registry.
MECHANISM = Rule("a mechanism name of dpselect.mechanisms or a mechanism instance")
#: An accountant charged before any randomness is drawn.
ACCOUNTANT = instance_of(Accountant, description="an Accountant", none=True)
#: A sample: checked in the body against ``candidates`` (empty only when they are given).
SAMPLE = Rule("a 1-D array of finite real numbers (empty only with public candidates)")
#: A public candidate set of real values (distinctness checked in the body).
CANDIDATES = array_1d(none=True)
#: The output grid: a power of two.
GRANULARITY = Rule("a power of two", check=check_granularity, none=True)
#: delta of propose-test-release: in (0, 1), since the threshold is ln(1/delta)/epsilon.
PTR_DELTA = Rule("a float in (0, 1)", check=_ptr_delta)
#: A distance to instability: >= 0 (inf allowed), never echoed.
DISTANCE = Rule(
    "a float >= 0 (inf allowed)", check=lambda v, n: check_positive(v, n, allow_inf=True, allow_zero=True, quote=False)
)
#: The proposed bound on the local sensitivity: >= 0, never echoed.
PTR_BOUND = Rule("a float >= 0", check=lambda v, n: check_positive(v, n, allow_zero=True, quote=False))
