"""The parameter rules the genomics entry points share (:func:`dpselect._params.validate_params`).

Count arrays (``b``, ``c``) are checked in the bodies against each other and against
``n_families`` (same shape, ``b + c <= 2N``), a threshold against ``n_families``, labels
against the number of SNPs and file paths when opened (messages name the file, never a count).
"""

from __future__ import annotations

import os

import numpy as np

from ..._params import Rule, instance_of, int_at_least, options, positive
from ..._validation import check_counts
from ...accounting import Accountant

__all__ = [
    "ACCOUNTANT",
    "BOUND",
    "CHUNK_SNPS",
    "COUNTS",
    "LABELS",
    "MECHANISM",
    "N_FAMILIES",
    "PATH",
    "SCHEDULER",
    "THRESHOLD",
    "path_like",
]


def _counts(value: object, name: str) -> object:
    try:
        arr = np.asarray(value)
    except ValueError:
        raise ValueError(f"{name} must be an array-like of counts (ints >= 0)") from None
    check_counts(arr, name, ndim=arr.ndim)
    return value


def _labels(value: object, name: str) -> object:
    if value is not None and (isinstance(value, (str, bytes)) or not hasattr(value, "__len__")):
        raise TypeError(f"{name} must be None or a sequence of SNP names")
    return value


def _scheduler(value: object, name: str) -> object:
    if value is not None and not isinstance(value, str) and not callable(getattr(value, "submit", None)):
        raise TypeError(f"{name} must be None, a Dask scheduler name or address, or a dask.distributed Client")
    return value


#: Transmission counts: ints >= 0 here; the body checks them against each other and ``n_families``.
COUNTS = Rule("an array-like of counts (ints >= 0), checked against the other counts and n_families", check=_counts)
#: N, the number of families (trios).
N_FAMILIES = int_at_least(1)
#: Theorem 5's T; the body checks 6 <= T < global_sensitivity(n_families).
THRESHOLD = positive(allow_zero=True)
#: The smooth bound of Yamamoto & Shibuya (Theorem 4 or 5).
BOUND = options("thm4", "thm5")


def _mechanism(value: object, name: str) -> object:
    from ...mechanisms import MECHANISM_NAMES

    if isinstance(value, str):
        if value not in MECHANISM_NAMES:
            raise ValueError(f"{name} must be one of {MECHANISM_NAMES} or a mechanism instance, got {value!r}")
        return value
    if not (callable(getattr(value, "select", None)) and callable(getattr(value, "privacy", None))):
        raise TypeError(f"{name} must be a mechanism name or an object with select() and privacy()")
    return value


#: A selection mechanism: a registry name or an object with ``select`` and ``privacy``.
MECHANISM = Rule("a mechanism name of dpselect.mechanisms or a mechanism instance", check=_mechanism)
#: SNP names: checked by the body against the number of SNPs.
LABELS = Rule("None or a sequence of SNP names, one per SNP", check=_labels)
#: An accountant charged before any randomness is drawn.
ACCOUNTANT = instance_of(Accountant, none=True)


def path_like(description: str = "a str or path-like") -> Rule:
    """A file or fileset path (its type only: the body opens it, and its errors name the file)."""

    def check(value: object, name: str) -> str | os.PathLike[str]:
        if not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{name} must be {description}, got {type(value).__name__}")
        return value

    return Rule(description, check=check)


#: A file or fileset path.
PATH = path_like()
#: Where the counting tasks run: Dask's own checks (a scheduler name, an address or a Client).
SCHEDULER = Rule("None, a Dask scheduler name, a dask.distributed address or Client", check=_scheduler)
#: SNPs per counting task.
CHUNK_SNPS = int_at_least(1)
