r"""User–key input of partition selection: one set of keys per user, bounded by a seeded public rule.

``user_items`` is either one iterable of hashable keys per user (a mapping ``{user: keys}``
counts its values), or a pandas / polars
frame with one row per (user, key) pair (``user_column``, ``key_column``).  Repeated keys of
a user count once.  A user with more than ``C = max_contributions`` distinct keys keeps the
``C`` keys of smallest priority, priorities i.i.d. uniform from the caller's ``rng`` (never
from the data), so the kept set of a user depends on her own keys and the seed only
(mathematics §16).  Errors name the argument and quote no key.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias

import numpy as np


class SupportsColumns(Protocol):
    """A data frame (pandas or polars): named columns, each with ``to_numpy()``."""

    @property
    def columns(self) -> Any: ...

    def __getitem__(self, key: str) -> Any: ...


#: ``user_items``: one iterable of hashable keys per user, or a frame of (user, key) rows.
UserItems: TypeAlias = Iterable[Iterable[Hashable]] | SupportsColumns

__all__ = [
    "SupportsColumns",
    "UserItems",
    "UserKeyPairs",
    "UserKeys",
    "as_user_keys",
    "check_columns",
    "is_frame",
    "parse_user_items",
    "sorted_keys",
]


@dataclass(frozen=True)
class UserKeys:
    """The bounded user–key incidence in CSR form.

    Parameters
    ----------
    keys : tuple
        The distinct keys, indexed by code.
    indptr : numpy.ndarray of int64, shape (n_users + 1,)
        User ``i`` holds the codes ``codes[indptr[i]:indptr[i + 1]]`` (distinct, at most C).
    codes : numpy.ndarray of int64
        The key codes, user after user.
    """

    keys: tuple[Hashable, ...]
    indptr: np.ndarray
    codes: np.ndarray

    @property
    def n_users(self) -> int:
        """The number of users (with at least one key)."""
        return int(self.indptr.size - 1)

    @property
    def sizes(self) -> np.ndarray:
        """The number of (bounded) keys of each user."""
        return np.diff(self.indptr)


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas or polars data frame (duck-typed: ``columns`` and ``__getitem__``)."""
    module = type(value).__module__.split(".")[0]
    return module in ("pandas", "polars") and hasattr(value, "columns") and not hasattr(value, "name")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and not math.isfinite(value)) or value is np.nan


def _check_keys(values: np.ndarray, name: str) -> np.ndarray:
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        raise ValueError(f"{name} must not contain missing values, NaN or inf")
    if values.dtype == object and values.size and np.frompyfunc(_missing, 1, 1)(values).astype(bool).any():
        raise ValueError(f"{name} must not contain missing values, NaN or inf")
    return values


def check_columns(user_items: Any, user_column: str | None, key_column: str | None) -> None:
    """A frame needs both column names (present in it); an iterable of users takes neither."""
    if is_frame(user_items):
        for opt, col in (("user_column", user_column), ("key_column", key_column)):
            if col is None:
                raise ValueError(f"{opt} must name a column when user_items is a data frame")
            if col not in list(user_items.columns):
                raise ValueError(f"{opt} {col!r} is not a column of user_items")
    elif user_column is not None or key_column is not None:
        raise ValueError("user_column and key_column apply to a data frame user_items only")


def _encode(values: np.ndarray, name: str) -> tuple[tuple[Hashable, ...], np.ndarray]:
    """(distinct values by code, code of each value): numpy's unique when sortable, a dict otherwise."""
    if values.dtype != object:
        uniq, inverse = np.unique(values, return_inverse=True)
        return tuple(uniq.tolist()), inverse.astype(np.int64).ravel()
    table: dict[Hashable, int] = {}
    try:
        codes = np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int64, count=values.size)
    except TypeError:
        raise TypeError(f"{name} must hold hashable keys") from None
    return tuple(table), codes


def _pairs_from_frame(frame: Any, user_column: str, key_column: str) -> tuple[np.ndarray, np.ndarray, tuple]:
    users = _check_keys(np.asarray(frame[user_column].to_numpy()), f"user_items[{user_column!r}]")
    keys = _check_keys(np.asarray(frame[key_column].to_numpy()), f"user_items[{key_column!r}]")
    _, user_codes = _encode(users, f"user_items[{user_column!r}]")
    key_list, key_codes = _encode(keys, f"user_items[{key_column!r}]")
    return user_codes, key_codes, key_list


def _pairs_from_iterable(user_items: Iterable[Any]) -> tuple[np.ndarray, np.ndarray, tuple]:
    if isinstance(user_items, (str, bytes)) or not isinstance(user_items, Iterable):
        raise TypeError("user_items must be an iterable of users (each an iterable of keys) or a data frame")
    if isinstance(user_items, Mapping):  # {user: keys}
        user_items = user_items.values()
    table: dict[Hashable, int] = {}
    users: list[int] = []
    codes: list[int] = []
    for i, items in enumerate(user_items):
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise TypeError("each user of user_items must be an iterable of keys (a list, set or tuple, not a string)")
        for key in items:
            if _missing(key):
                raise ValueError("user_items must not contain missing keys, NaN or inf")
            try:
                codes.append(table.setdefault(key, len(table)))
            except TypeError:
                raise TypeError("user_items must hold hashable keys") from None
            users.append(i)
    return np.asarray(users, dtype=np.int64), np.asarray(codes, dtype=np.int64), tuple(table)


@dataclass(frozen=True)
class UserKeyPairs:
    """The parsed (user, key) pairs, before bounding: codes and the distinct keys by code."""

    users: np.ndarray
    codes: np.ndarray
    keys: tuple[Hashable, ...]


def parse_user_items(user_items: Any, *, user_column: str | None = None, key_column: str | None = None) -> UserKeyPairs:
    """The distinct (user, key) pairs of ``user_items`` (no randomness: every input error is raised here)."""
    if is_frame(user_items):
        assert user_column is not None and key_column is not None
        users, codes, keys = _pairs_from_frame(user_items, user_column, key_column)
    else:
        users, codes, keys = _pairs_from_iterable(user_items)
    n_keys = max(len(keys), 1)
    pairs = np.unique(users * n_keys + codes)  # one pair per distinct key of a user, sorted by user
    return UserKeyPairs(pairs // n_keys, pairs % n_keys, keys)


def as_user_keys(pairs: UserKeyPairs, max_contributions: int, gen: np.random.Generator) -> UserKeys:
    """The bounded :class:`UserKeys` of ``pairs``: the seeded rule of mathematics §16.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.counts._partitions.user_items import as_user_keys, parse_user_items
    >>> uk = as_user_keys(parse_user_items([["a", "b", "a"], ["c"]]), 5, np.random.default_rng(0))
    >>> uk.sizes.tolist(), len(uk.keys)
    ([2, 1], 3)
    """
    priority = gen.random(pairs.users.size)
    order = np.lexsort((priority, pairs.users))
    users, codes = pairs.users[order], pairs.codes[order]
    starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]]) if users.size else np.zeros(0, np.int64)
    rank = np.arange(users.size) - np.repeat(starts, np.diff(np.r_[starts, users.size]))
    keep = rank < max_contributions
    users, codes = users[keep], codes[keep]
    _, counts = np.unique(users, return_counts=True)
    indptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    return UserKeys(pairs.keys, indptr, codes.astype(np.int64))


def sorted_keys(keys: Iterable[Hashable]) -> list[Hashable]:
    """The released keys in a data-free order: sorted, by ``(type name, repr)`` when not comparable."""
    out = list(keys)
    try:
        return sorted(out)  # type: ignore[type-var]
    except TypeError:
        return sorted(out, key=lambda k: (type(k).__name__, repr(k)))
