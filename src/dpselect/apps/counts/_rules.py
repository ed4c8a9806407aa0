"""The parameter rules the counts entry points share (:func:`dpselect._params.validate_params`).

Each rule calls the check the bodies used to call, so messages are unchanged.  Values
computed from the data (a PTR value, its distance to instability, the proposed bound) are
checked without echoing them (a message is a release).  The rules every package shares
(the data ``x``, candidate names, a mechanism, an accountant, the output grid) live in
:mod:`dpselect._params` and :mod:`dpselect._mechanism_lookup`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._params import Rule, array_1d, options
from ..._validation import check_delta_positive, check_positive
from ...typing import ArrayLike

__all__ = [
    "CANDIDATES",
    "DISTANCE",
    "LABELS",
    "PTR_BOUND",
    "PTR_DELTA",
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


#: The tie convention of the argmax-indicator utility.
TIE_RULE = options(*TIE_RULES)
#: Raw labels, one per record (or public candidate labels).
LABELS = Rule("a 1-D sequence of labels (no None, NaN or inf)", check=as_labels)
#: A public candidate set of real values (distinctness checked in the body).
CANDIDATES = array_1d(none=True)
#: delta of propose-test-release: in (0, 1), since the threshold is ln(1/delta)/epsilon.
PTR_DELTA = Rule("a float in (0, 1)", check=_ptr_delta)
#: A distance to instability: >= 0 (inf allowed), never echoed.
DISTANCE = Rule(
    "a float >= 0 (inf allowed)", check=lambda v, n: check_positive(v, n, allow_inf=True, allow_zero=True, quote=False)
)
#: The proposed bound on the local sensitivity: >= 0, never echoed.
PTR_BOUND = Rule("a float >= 0", check=lambda v, n: check_positive(v, n, allow_zero=True, quote=False))
