"""TDT sensitivities in closed form (Yamamoto & Shibuya §V; mathematics §4.4).

A table is ``(b, c)`` with ``b, c >= 0`` and ``b + c <= 2N`` (N families);
chi2(b, c) = (b - c)^2 / (b + c).  One family replaced moves a table by one
*table-level move* ``(db, dc)``, ``|db|, |dc|, |db + dc| <= 2`` (:data:`MOVES`),
and the path metric of these moves (YS-supp Lemma 3) is the hexagonal norm

    d((b, c), (b', c')) = ceil(max(|db|, |dc|, |db + dc|) / 2).

Closed forms (no state-space table, no breadth-first search):

* ``G = {LS = GS}``: for N >= 5 only the swap moves (-+2, +-2) reach GS
  (Lemma 2: every other move changes chi2 by <= 6 < GS), and
  8 |b - c -+ 2| / (b + c) = 8 (N - 1)/N forces b + c = 2N, so
  G = {(2N, 0), (2N - 2, 2), (0, 2N), (2, 2N - 2)}; N <= 4 enumerates its
  <= 45 states.  gd = min over G of the Lemma 3 distance: O(1) per table.
* ``U = {LS > T}`` for 6 <= T < GS: only swaps exceed 6, and a swap changes
  chi2 by the *linear* fraction 8 |b - c -+ 2| / (b + c), so U is the union
  of four half-planes (Lemma 2 for T = 6):
  ``(8 - T) b - (8 + T) c > 16``, ``c >= 2 and (8 - T) b - (8 + T) c > -16``
  and the same with b and c swapped.  The distance to one half-plane is
  the least k whose hexagon of radius 2k (clipped to the state space) holds
  a point of it; the hexagon's maximum of the linear form sits at an integer
  vertex (all edges are b, c or b + c = integer), found greedily, and k by
  bisection: O(log N) per table, vectorised.
* ``beta_max`` and the smooth upper bounds built on these closed forms are in
  :mod:`._beta_max`.

Every closed form is checked against breadth-first search on the move graph
for every state at N <= 300 in ``tests/test_tdt_math.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._params import validate_params
from ...._validation import check_counts, check_positive
from .._rules import COUNTS, N_FAMILIES

__all__ = ["MOVES", "global_sensitivity", "lemma2_region", "local_sensitivity", "table_distance", "tdt_statistic"]

#: The 18 non-zero table-level moves (db, dc) of one family replacement.
MOVES: tuple[tuple[int, int], ...] = tuple(
    (db, dc) for db in range(-2, 3) for dc in range(-2, 3) if abs(db + dc) <= 2 and (db, dc) != (0, 0)
)

#: Smallest threshold T of Theorem 5 with a closed form (above 6 only the swap moves count).
MIN_THRESHOLD = 6.0


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def _counts(x: ArrayLike, name: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} must be a rectangular array of counts") from None
    return check_counts(arr, name, ndim=arr.ndim)


def check_tables(
    b: ArrayLike, c: ArrayLike, n_families: int | None = None, names: tuple[str, str] = ("b", "c")
) -> tuple[np.ndarray, np.ndarray]:
    """Validated int64 (b, c) of the same shape, b + c <= 2N when N is given."""
    b = _counts(b, names[0])
    c = _counts(c, names[1])
    if b.shape != c.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {b.shape} and {c.shape}")
    if n_families is not None and (b + c > 2 * n_families).any():
        raise ValueError(
            f"{names[0]} + {names[1]} must be <= 2 * n_families = {2 * n_families} on every SNP"  # no count quoted
        )
    return b, c


def check_threshold(threshold: object, n: int) -> float:
    """Theorem 5's T: MIN_THRESHOLD <= T < GS(N)."""
    t = check_positive(threshold, "threshold", allow_zero=True)
    gs = global_sensitivity(n)
    if t >= gs:
        raise ValueError(
            f"threshold must be < global_sensitivity(n_families) = {gs!r} (otherwise "
            f"U = {{LS > threshold}} is empty), got {t!r}"
        )
    if t < MIN_THRESHOLD:
        raise ValueError(
            f"threshold must be >= {MIN_THRESHOLD} (above 6 only the swap moves reach LS > threshold, "
            f"which gives the closed form; YS use 6), got {t!r}"
        )
    return t


# ---------------------------------------------------------------------------
# statistic and local sensitivity
# ---------------------------------------------------------------------------


def chi2(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(b - c)^2 / (b + c) (0 at b = c = 0) of validated integer arrays."""
    s = b + c
    d = (b - c).astype(np.float64)
    out = np.zeros(s.shape, dtype=np.float64)
    np.divide(d * d, s, out=out, where=s > 0)
    return out


@validate_params({"b": COUNTS, "c": COUNTS})
def tdt_statistic(b: ArrayLike, c: ArrayLike) -> float | np.ndarray:
    """TDT chi-square ``(b - c)^2 / (b + c)`` (0 when ``b = c = 0``), vectorised.

    Parameters
    ----------
    b : array-like of int
        Transmissions of allele 1 (PLINK's T), any shape.
    c : array-like of int
        Transmissions of allele 2 (PLINK's U), the shape of ``b``.

    Returns
    -------
    float or ndarray
        The statistic of each table (a float for scalar counts).

    Examples
    --------
    >>> from dpselect.apps.genomics import tdt_statistic
    >>> float(tdt_statistic(30, 10))
    10.0
    """
    b, c = check_tables(b, c)
    return chi2(b, c)[()]


@validate_params({"n_families": N_FAMILIES})
def global_sensitivity(n_families: int) -> float:
    """GS = 8(N - 1)/N for N >= 2 (Wang et al., quoted by YS §V; mathematics §4.4); 2 for N = 1.

    Under "replace" neighbours: one family replaced.

    Parameters
    ----------
    n_families : int
        N >= 1, the number of families (public).

    Returns
    -------
    float
        The global sensitivity of the TDT chi2.

    Examples
    --------
    >>> from dpselect.apps.genomics import global_sensitivity
    >>> global_sensitivity(4)
    6.0
    """
    n = n_families
    return 2.0 if n == 1 else 8.0 * (n - 1) / n


def gs_fraction(n: int) -> tuple[int, int]:
    return (2, 1) if n == 1 else (8 * (n - 1), n)


def move_fractions(b: np.ndarray, c: np.ndarray, n: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(valid, num, den) per move with |chi2(b, c) - chi2(b', c')| = num / den exactly."""
    p1 = (b - c) ** 2
    q1 = np.maximum(b + c, 1)
    for db, dc in MOVES:
        b2 = b + db
        c2 = c + dc
        valid = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        yield valid, np.abs(p1 * (np.maximum(b2 + c2, 1)) - (b2 - c2) ** 2 * q1), q1 * np.maximum(b2 + c2, 1)


#: Largest N whose LS is a quotient of exact int64 integers (above: float chi2 differences).
EXACT_LS_MAX_N = 500_000


def exact_local_sensitivity(b: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    """LS of validated tables from exact integer fractions (float chi2 differences for N > EXACT_LS_MAX_N)."""
    ls = np.zeros(b.shape, dtype=np.float64)
    if n <= EXACT_LS_MAX_N:  # p q <= 8 N^3 fits in int64
        for valid, num, den in move_fractions(b, c, n):
            np.maximum(ls, np.where(valid, num / den, 0.0), out=ls)
        return ls
    here = chi2(b, c)
    for db, dc in MOVES:
        b2, c2 = b + db, c + dc
        valid = (b2 >= 0) & (c2 >= 0) & (b2 + c2 <= 2 * n)
        diff = np.abs(here - chi2(np.maximum(b2, 0), np.maximum(c2, 0)))
        np.maximum(ls, np.where(valid, diff, 0.0), out=ls)
    return ls


@validate_params({"b": COUNTS, "c": COUNTS, "n_families": N_FAMILIES})
@fill_doc
def local_sensitivity(b: ArrayLike, c: ArrayLike, n_families: int) -> float | np.ndarray:
    """Exact local sensitivity ``max over legal moves |chi2(b, c) - chi2(b', c')|`` of each table.

    A legal move is one family replaced ("replace" neighbours; mathematics §4.4).

    Parameters
    ----------
    %(tdt_table_counts)s

    Returns
    -------
    float or ndarray
        LS of each table (a float for scalar counts).

    Examples
    --------
    >>> from dpselect.apps.genomics import local_sensitivity
    >>> round(float(local_sensitivity(30, 10, 50)), 4)
    4.4
    """
    n = n_families
    b, c = check_tables(b, c, n)
    return exact_local_sensitivity(b, c, n)[()]


def hex_distance(b1: ArrayLike, c1: ArrayLike, b2: ArrayLike, c2: ArrayLike) -> np.ndarray:
    """Lemma 3 distance ceil(max(|db|, |dc|, |db + dc|)/2) of integer arrays (no validation)."""
    db = np.subtract(b1, b2)
    dc = np.subtract(c1, c2)
    h = np.maximum(np.maximum(np.abs(db), np.abs(dc)), np.abs(db + dc))
    return (h + 1) // 2


@validate_params({"b1": COUNTS, "c1": COUNTS, "b2": COUNTS, "c2": COUNTS})
def table_distance(b1: ArrayLike, c1: ArrayLike, b2: ArrayLike, c2: ArrayLike) -> int | np.ndarray:
    """YS-supp Lemma 3: path distance between tables in the move graph.

    ``ceil(|(b1+c1) - (b2+c2)| / 2)`` if ``(b1-b2)(c1-c2) >= 0`` else
    ``ceil(max(|b1-b2|, |c1-c2|) / 2)`` (= ceil(hexagonal norm / 2)); the two
    tables broadcast against each other.  One step is one family replaced
    (mathematics §4.4).

    Parameters
    ----------
    b1 : array-like of int
        Allele-1 transmissions of the first table(s).
    c1 : array-like of int
        Allele-2 transmissions of the first table(s).
    b2 : array-like of int
        Allele-1 transmissions of the second table(s).
    c2 : array-like of int
        Allele-2 transmissions of the second table(s).

    Returns
    -------
    int or ndarray
        The number of family replacements between the tables.

    Examples
    --------
    >>> from dpselect.apps.genomics import table_distance
    >>> int(table_distance(10, 4, 6, 8))
    2
    """
    b1, c1 = check_tables(b1, c1, names=("b1", "c1"))
    b2, c2 = check_tables(b2, c2, names=("b2", "c2"))
    try:
        np.broadcast_shapes(b1.shape, b2.shape)
    except ValueError:
        raise ValueError(
            f"(b1, c1) with shape {b1.shape} and (b2, c2) with shape {b2.shape} do not broadcast"
        ) from None
    return np.asarray(hex_distance(b1, c1, b2, c2))[()]


@validate_params({"b": COUNTS, "c": COUNTS})
def lemma2_region(b: ArrayLike, c: ArrayLike) -> bool | np.ndarray:
    """YS-supp Lemma 2's ``LS > 6`` region, in exact integer arithmetic.

    ``7c < b - 8`` or ``b >= 2 and 7b < c + 8`` or ``7b < c - 8`` or
    ``c >= 2 and 7c < b + 8`` (independent of N; mathematics §4.4).

    Parameters
    ----------
    b : array-like of int
        Transmissions of allele 1, any shape.
    c : array-like of int
        Transmissions of allele 2, the shape of ``b``.

    Returns
    -------
    bool or ndarray of bool
        Whether each table is in the region.

    Examples
    --------
    >>> from dpselect.apps.genomics import lemma2_region
    >>> bool(lemma2_region(9, 0)), bool(lemma2_region(8, 0))
    (True, False)
    """
    b, c = check_tables(b, c)
    return ((7 * c < b - 8) | ((b >= 2) & (7 * b < c + 8)) | (7 * b < c - 8) | ((c >= 2) & (7 * c < b + 8)))[()]
