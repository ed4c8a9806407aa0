r"""Argmax-indicator utility over class counts: tie rules, local sensitivities, distance to instability.

Utility (mathematics §4.2)
----------------------
Candidates are the m classes (public; ``labels`` name them), the data enter
only through their counts ``n_r >= 0``, and

* ``tie_rule="tieset"`` (T1, the Fletcher–Islam convention): u(x, r) = 1 if
  n_r is a maximum (every tied maximum gets 1), else 0;
* ``tie_rule="first"`` (T2): u(x, r) = 1 only for the lowest index among the
  maxima.

Global sensitivity 1.  Sources: Chaves et al. (Smooth Noisy Max) Def. 7.1
(leaf majority) and Def. 6.2 (max-operator split), corrected by mathematics §4.2
and mathematics §7 items 12–13: the paper's smooth sensitivity S = e^{-j eps} (j = gap) is
wrong twice — the rate must be the smoothing parameter beta, not eps, and
t* = j overstates the distance (a gap of 1 already has local sensitivity 1).

Neighbour relations (mathematics §1)
--------------------------------
* ``relation="add_remove"`` (AR, default): one count changes by +-1 (staying
  >= 0) — one record added or removed.
* ``relation="replace"`` (RO): one unit moves from a class with a positive
  count to another class — one record's class changes; n is fixed.

Local sensitivity (exact)
-------------------------
LS_u(x) is 0 or 1, so LS_u(x, t) = 1[t >= t*(x)] and the smooth sensitivity is
S*_beta(x) = e^{-beta t*(x)}, t* the distance to the nearest dataset where one
more step can change some indicator.  With g = top - runner-up count (over all
m classes, zeros included), a the T2 winner and
M = min_{b != a} (n_a - n_b + 1[a < b]) (mathematics §4.2):

=========  =====================  ============================
tie rule   add_remove             replace
=========  =====================  ============================
tieset     max(g - 1, 0)          max(ceil(g/2) - 1, 0)
first      M - 1                  max(ceil(M/2) - 1, 0)
=========  =====================  ============================

Per candidate (element local sensitivity LS_u(y, r), used by local dampening
and by SPS's S(x, r)), derived here and checked by breadth-first search over
the exact neighbour graph (tests/test_majority.py).  Write
c_b = n_b + tau_b with tau_b = 1[b < r] for T2 and 0 for T1, so that r wins
iff n_r >= c_b for every b != r, and let W_r = max_{b != r} c_b - n_r.

* r wins (W_r <= 0, G = -W_r): r loses once some c_b exceeds n_r.  A step
  changes c_b - n_r by at most 1 (AR) or 2 (RO: move one unit from r to b),
  so t*_r = G (AR) and floor(G/2) (RO).
* r loses (W_r >= 1): making r win takes x moves into r plus removals from
  every b above the threshold n_r + x.  AR: k* = W_r steps (add to r);
  RO: every removal from another class can be a move into r, so, with
  S_j the sum of the j largest c_b,

  .. math::

      k^* = \min\Bigl\{x : \sum_b (c_b - n_r - x)_+ \le x\Bigr\}
          = \Bigl\lceil \max_j \frac{S_j - j\, n_r}{j + 1} \Bigr\rceil,

  and t*_r = k* - 1 (the state one move before the flip).

min_r t*_r is the global t* of the table.  Degenerate cases: with m = 1 the
only indicator never changes, and under RO the empty table (n = 0) has no
neighbours; there LS = 0 at every distance (t* = inf, S* = 0).

Examples
--------
>>> from dpselect.apps.counts import candidate_distances, distance_to_instability
>>> distance_to_instability([5, 3, 0])   # g = 2: one removal from the top leaves a gap of 1
1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._docstrings import fill_doc
from ..._params import COUNTS, RELATION, validate_params
from ...sensitivity import StepProfile
from ...typing import ArrayLike, Relation, TieRule
from ._rules import TIE_RULE, TIE_RULES

__all__ = ["TIE_RULES", "candidate_distances", "distance_to_instability"]

_NONE = np.iinfo(np.int64).min // 4  # sentinel "no such class" for prefix/suffix maxima


def _indicators(n: np.ndarray, tie_rule: str) -> np.ndarray:
    top = n.max()
    if tie_rule == "tieset":
        return (n == top).astype(np.float64)
    u = np.zeros(n.size)
    u[int(np.argmax(n))] = 1.0
    return u


def _ceil_div(a: Any, b: Any) -> Any:
    """ceil(a / b) for integers (scalars or arrays)."""
    return -((-a) // b)


@validate_params({"counts": COUNTS, "tie_rule": TIE_RULE, "relation": RELATION})
@fill_doc
def distance_to_instability(
    counts: ArrayLike, *, tie_rule: TieRule = "tieset", relation: Relation = "add_remove"
) -> float:
    r"""t*(x): distance to the nearest table whose local sensitivity is 1 (mathematics §4.2).

    With g the gap between the two largest counts (tie set, add/remove),

    .. math::

        t^* = \max(g - 1, 0), \qquad S^*_\beta(x) = e^{-\beta t^*};

    the module docstring tabulates the other three cases.

    %(indicator_table)s

    Returns
    -------
    float
        t*, ``math.inf`` when no indicator can ever change (m = 1, or the
        empty table under ``relation="replace"``).

    See Also
    --------
    candidate_distances : Per-candidate t*_r: distance to the nearest table where r's indicator can flip in one step
    mode_distance_to_instability : Gamma for the mode: max(g-1, 0) (add/remove) or max(ceil(g/2)-1, 0) ...

    %(indicator_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import distance_to_instability
    >>> distance_to_instability([22, 8, 17, 4, 0])   # gap 5 -> 4
    4.0
    >>> distance_to_instability([22, 8, 17, 4, 0], relation="replace")   # ceil(5/2) - 1
    2.0
    """
    return _global_tstar(np.asarray(counts), tie_rule, relation)


def _global_tstar(n: np.ndarray, tie_rule: str, relation: str) -> float:
    m = n.size
    if m == 1 or (relation == "replace" and int(n.sum()) == 0):
        return math.inf
    if tie_rule == "tieset":
        s = np.sort(n)[::-1]
        g = int(s[0] - s[1])
        return float(max(g - 1, 0) if relation == "add_remove" else max(_ceil_div(g, 2) - 1, 0))
    a = int(np.argmax(n))
    others = np.arange(m) != a
    M = int((n[a] - n[others] + (np.arange(m)[others] > a)).min())
    return float(M - 1 if relation == "add_remove" else max(_ceil_div(M, 2) - 1, 0))


def _max_competitor(n: np.ndarray, tie_rule: str) -> np.ndarray:
    """max_{b != r} c_b with c_b = n_b + 1[b < r] (T2) or n_b (T1), for every r."""
    m = n.size
    prefix = np.full(m, _NONE, dtype=np.int64)
    suffix = np.full(m, _NONE, dtype=np.int64)
    if m > 1:
        prefix[1:] = np.maximum.accumulate(n[:-1])
        suffix[:-1] = np.maximum.accumulate(n[::-1][:-1])[::-1]
    if tie_rule == "first":
        prefix = np.where(prefix == _NONE, _NONE, prefix + 1)
    return np.maximum(prefix, suffix)


def _replace_moves_to_win(n: np.ndarray, tie_rule: str, rows: np.ndarray) -> np.ndarray:
    """k*_r = ceil(max_j (S_j - j n_r)/(j+1)) for the candidates ``rows`` (replace relation).

    S_j is the sum of the j largest excesses (c_b - n_r)_+ over b != r; terms
    with c_b <= n_r never raise the maximum, so they are clipped to 0.
    Vectorised over chunks of rows (memory O(chunk * m)).
    """
    m = n.size
    out = np.empty(rows.size, dtype=np.int64)
    chunk = max(1, 2_000_000 // max(m, 1))
    cols = np.arange(m)
    denom = np.arange(2, m + 2, dtype=np.int64)  # j terms -> j + 1
    for start in range(0, rows.size, chunk):
        r = rows[start : start + chunk]
        c = np.broadcast_to(n, (r.size, m)).copy()
        if tie_rule == "first":
            c += cols[None, :] < r[:, None]
        exc = np.clip(c - n[r][:, None], 0, None)
        exc[np.arange(r.size), r] = 0
        exc = -np.sort(-exc, axis=1)
        csum = np.cumsum(exc, axis=1)
        out[start : start + chunk] = np.maximum(_ceil_div(csum, denom[None, :]).max(axis=1), 0)
    return out


@validate_params({"counts": COUNTS, "tie_rule": TIE_RULE, "relation": RELATION})
@fill_doc
def candidate_distances(
    counts: ArrayLike, *, tie_rule: TieRule = "tieset", relation: Relation = "add_remove"
) -> np.ndarray:
    """Per-candidate t*_r: distance to the nearest table where r's indicator can flip in one step.

    Derivation in the module docstring;
    ``min(candidate_distances(...)) == distance_to_instability(...)``.

    %(indicator_table)s

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        t*_r (``inf`` where r's indicator can never flip).

    See Also
    --------
    distance_to_instability : t*(x): distance to the nearest table whose local sensitivity is 1 (mathematics §4.2)

    %(indicator_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import candidate_distances
    >>> candidate_distances([22, 8, 17, 4, 0]).tolist()
    [5.0, 13.0, 4.0, 17.0, 21.0]
    """
    return _candidate_tstar(np.asarray(counts), tie_rule, relation)


def _candidate_tstar(n: np.ndarray, tie_rule: str, relation: str) -> np.ndarray:
    m = n.size
    if m == 1 or (relation == "replace" and int(n.sum()) == 0):
        return np.full(m, np.inf)
    W = _max_competitor(n, tie_rule) - n  # >= 1: r loses now; <= 0: r wins, margin G = -W
    t = np.empty(m, dtype=np.int64)
    win = W <= 0
    if relation == "add_remove":
        t[win] = -W[win]
        t[~win] = W[~win] - 1
    else:
        t[win] = (-W[win]) // 2
        lose = np.flatnonzero(~win)
        if lose.size:
            t[lose] = _replace_moves_to_win(n, tie_rule, lose) - 1
    return t.astype(np.float64)


def _profiles(n: np.ndarray, tie_rule: str, relation: str) -> tuple[StepProfile, StepProfile, int]:
    tstar = _global_tstar(n, tie_rule, relation)
    tr = _candidate_tstar(n, tie_rule, relation)
    if math.isinf(tstar):
        ls = StepProfile(np.array([0]), np.array([0.0]))
    elif tstar == 0:
        ls = StepProfile(np.array([0]), np.array([1.0]))
    else:
        ls = StepProfile(np.array([0, int(tstar)]), np.array([0.0, 1.0]))
    finite = tr[np.isfinite(tr)]
    bps = np.unique(np.concatenate([[0.0], finite])).astype(np.int64)
    values = (bps[:, None] >= tr[None, :]).astype(np.float64)
    cls = StepProfile(bps, values)
    max_distance = int(finite.max()) + 1 if finite.size else 1
    return ls, cls, max_distance
