r"""Majority vote / mode / leaf label over non-negative integer counts: count and argmax-indicator utilities.

Count utility (``utility="count"``, the default of :func:`private_argmax`)
--------------------------------------------------------------------------
u(x, r) = n_r, the counts themselves (mathematics §9.1, §6.1: Duff's mode utility
n_r - n_max orders the candidates the same way).  Global sensitivity 1 under
both relations; under add/remove every count moves in the same direction, so
the problem is ``monotone`` and EM / PF use scale 1/eps (mathematics §2.6); under
replace one count rises and another falls (not monotone, scale 2/eps).  On
votes [22, 8, 17, 4, 0] at eps = 1, PF on the counts returns the winner with
probability 0.997, EM on the indicator below with 0.29
(``tests/test_majority.py``): use the indicator only to reproduce the seed
papers (SNM, Fletcher–Islam) or with their smooth-sensitivity mechanisms.

Argmax-indicator utility (``utility="indicator"``)
-------------------------------------------------

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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ..._validation import check_counts, check_random_state, check_relation
from ...accounting import Accountant, charge
from ...mechanisms.base import Mechanism
from ...mechanisms.registry import MECHANISM_NAMES, resolve_mechanism
from ...problem import SelectionProblem
from ...sensitivity import StepProfile
from ...typing import ArrayLike, Relation, SeedLike, TieRule

__all__ = [
    "MECHANISM_NAMES",
    "TIE_RULES",
    "UTILITIES",
    "distance_to_instability",
    "candidate_distances",
    "majority_problem",
    "private_argmax",
    "majority_neighbours",
]

#: Supported tie conventions (mathematics §4.2: T1 = "tieset", T2 = "first").
TIE_RULES = ("tieset", "first")

#: Utilities of :func:`problem`: the counts (mathematics §9.1) and the argmax indicator (mathematics §4.2).
UTILITIES = ("count", "indicator")

_NONE = np.iinfo(np.int64).min // 4  # sentinel "no such class" for prefix/suffix maxima


def _check_tie_rule(tie_rule: Any) -> TieRule:
    if tie_rule not in TIE_RULES:
        raise ValueError(f"tie_rule must be one of {TIE_RULES}, got {tie_rule!r}")
    return tie_rule


def _indicators(n: np.ndarray, tie_rule: str) -> np.ndarray:
    top = n.max()
    if tie_rule == "tieset":
        return (n == top).astype(np.float64)
    u = np.zeros(n.size)
    u[int(np.argmax(n))] = 1.0
    return u


def _ceil_div(a: Any, b: Any) -> Any:
    return -((-a) // b)


def distance_to_instability(
    counts: ArrayLike, *, tie_rule: TieRule = "tieset", relation: Relation = "add_remove"
) -> float:
    r"""t*(x): distance to the nearest table whose local sensitivity is 1 (mathematics §4.2).

    With g the gap between the two largest counts (tie set, add/remove),

    .. math::

        t^* = \max(g - 1, 0), \qquad S^*_\beta(x) = e^{-\beta t^*};

    the module docstring tabulates the other three cases.

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate class (m >= 1).
    tie_rule : {"tieset", "first"}, default="tieset"
        "tieset": every tied maximum scores 1 (T1); "first": the lowest index
        among the maxima wins (T2).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation: one count +-1, or one unit moved between
        classes (module docstring).

    Returns
    -------
    float
        t*, ``math.inf`` when no indicator can ever change (m = 1, or the
        empty table under ``relation="replace"``).

    References
    ----------
    Chaves et al., Smooth Noisy Max, Definition 7.1 (leaf majority, the
    argmax-indicator utility), corrected on the mathematics page,
    mathematics §4.2 (the table of t* in the module docstring).

    Examples
    --------
    >>> from dpselect.apps.counts import distance_to_instability
    >>> distance_to_instability([22, 8, 17, 4, 0])   # gap 5 -> 4
    4.0
    >>> distance_to_instability([22, 8, 17, 4, 0], relation="replace")   # ceil(5/2) - 1
    2.0
    """
    n = check_counts(counts, "counts")
    tie_rule = _check_tie_rule(tie_rule)
    relation = check_relation(relation)
    return _global_tstar(n, tie_rule, relation)


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
        r = rows[start:start + chunk]
        c = np.broadcast_to(n, (r.size, m)).copy()
        if tie_rule == "first":
            c += cols[None, :] < r[:, None]
        exc = np.clip(c - n[r][:, None], 0, None)
        exc[np.arange(r.size), r] = 0
        exc = -np.sort(-exc, axis=1)
        csum = np.cumsum(exc, axis=1)
        out[start:start + chunk] = np.maximum(_ceil_div(csum, denom[None, :]).max(axis=1), 0)
    return out


def candidate_distances(
    counts: ArrayLike, *, tie_rule: TieRule = "tieset", relation: Relation = "add_remove"
) -> np.ndarray:
    """Per-candidate t*_r: distance to the nearest table where r's indicator can flip in one step.

    Derivation in the module docstring;
    ``min(candidate_distances(...)) == distance_to_instability(...)``.

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate class (m >= 1).
    tie_rule : {"tieset", "first"}, default="tieset"
        "tieset": every tied maximum scores 1 (T1); "first": the lowest index
        among the maxima wins (T2).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation: one count +-1, or one unit moved between
        classes (module docstring).

    Returns
    -------
    numpy.ndarray of float, shape (m,)
        t*_r (``inf`` where r's indicator can never flip).

    References
    ----------
    Chaves et al., Smooth Noisy Max, Definition 7.1 (leaf majority, the
    argmax-indicator utility), corrected on the mathematics page,
    mathematics §4.2 (the table of t* in the module docstring).

    Examples
    --------
    >>> from dpselect.apps.counts import candidate_distances
    >>> candidate_distances([22, 8, 17, 4, 0]).tolist()
    [5.0, 13.0, 4.0, 17.0, 21.0]
    """
    n = check_counts(counts, "counts")
    return _candidate_tstar(n, _check_tie_rule(tie_rule), check_relation(relation))


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


def majority_problem(
    counts: ArrayLike,
    *,
    relation: Relation | str = "add_remove",
    tie_rule: TieRule = "tieset",
    labels: Sequence[object] | None = None,
    utility: Literal["indicator", "count"] = "indicator",
) -> SelectionProblem:
    r"""Majority :class:`~dpselect.problem.SelectionProblem` for class counts.

    .. math::

        u_{\text{count}}(x, r) = n_r, \qquad
        u_{\text{indicator}}(x, r) = \mathbf{1}\bigl[n_r = \max_s n_s\bigr] \text{ (tie set)}.

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate class (m >= 1).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation: one count +-1, or one unit moved between
        classes (module docstring).
    tie_rule : {"tieset", "first"}, default="tieset"
        "tieset": every tied maximum scores 1 (T1); "first": the lowest index
        among the maxima wins (T2).  Used by the indicator utility only.
    labels : sequence of length m, default=None
        Names of the candidates.
    utility : {"indicator", "count"}, default="indicator"
        "indicator" (for the seed papers' smooth mechanisms) or "count" (the
        accurate choice for EM / PF, the default of :func:`private_argmax`).

    Returns
    -------
    SelectionProblem
        The problem, with the exact local-sensitivity profiles for the
        indicator utility.

    Notes
    -----
    The indicator problem has global sensitivity 1, ``monotone=False``
    (indicators move in opposite directions, mathematics §3.1), the exact
    local-sensitivity profile ``LS(t) = 1[t >= t*]`` (so
    ``smooth_sensitivity(beta) = exp(-beta t*)`` exactly) and the exact
    per-candidate profile ``LS(t, r) = 1[t >= t*_r]``.  The count problem
    has scores n_r, global sensitivity 1 and ``monotone`` under add/remove.

    References
    ----------
    Chaves et al., Smooth Noisy Max, Definition 7.1 (leaf majority, the
    argmax-indicator utility), corrected on the mathematics page,
    mathematics §4.2 (t* and the profiles).

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.apps.counts import majority_problem
    >>> prob = majority_problem([22, 8, 17, 4, 0], utility="count")
    >>> prob.monotone, round(float(dpselect.PermuteAndFlip(1.0).probabilities(prob)[0]), 3)
    (True, 0.997)
    """
    n = check_counts(counts, "counts")
    relation = check_relation(relation)
    tie_rule = _check_tie_rule(tie_rule)
    if utility not in UTILITIES:
        raise ValueError(f"utility must be one of {UTILITIES}, got {utility!r}")
    if utility == "count":
        return SelectionProblem(
            n.astype(np.float64),
            labels=labels,
            global_sensitivity=1.0,
            monotone=relation == "add_remove",
            relation=relation,
        )
    ls, cls, max_distance = _profiles(n, tie_rule, relation)
    return SelectionProblem(
        _indicators(n, tie_rule),
        labels=labels,
        global_sensitivity=1.0,
        local_sensitivity=ls,
        candidate_local_sensitivity=cls,
        max_distance=max_distance,
        monotone=False,
        relation=relation,
    )


def private_argmax(
    counts: ArrayLike,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism = "pf",
    utility: Literal["count", "indicator"] = "count",
    delta: float = 0.0,
    rng: SeedLike = None,
    labels: Sequence[object] | None = None,
    tie_rule: TieRule = "tieset",
    relation: Relation = "add_remove",
    accountant: Accountant | None = None,
) -> Any:
    r"""Privately select (approximately) the class with the largest count.

    Default: permute-and-flip on the counts (module docstring), the most
    accurate sound choice measured by the library's exact accuracy
    (votes [22, 8, 17, 4, 0], eps = 1: P[winner] 0.997 vs 0.29 for the
    previous default, EM on the argmax indicator, still available as
    ``mechanism="em", utility="indicator"``).

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per class.
    epsilon : float or None
        The privacy budget (None when ``mechanism`` is an instance, whose
        own epsilon is then used).
    mechanism : str or Mechanism, default="pf"
        "pf", "em", "rnm_laplace" (also "rnm_gumbel", "rnm_exponential"), a
        smooth mechanism name ("snm_laplace", "snm_t", "snm_lln", "sps",
        "ld"; meant for ``utility="indicator"``), or any mechanism instance.
    utility : {"count", "indicator"}, default="count"
        The utility (see :func:`majority_problem`).
    delta : float, default=0.0
        For mechanisms that take it (smooth Laplace / LLN); pure mechanisms
        satisfy any delta.
    rng : SeedLike, default=None
        The randomness: None, an int seed or a ``numpy.random.Generator``.
    labels : sequence of length m, default=None
        Names of the classes; the chosen label is returned (else the index).
    tie_rule : {"tieset", "first"}, default="tieset"
        Tie convention of the indicator utility (see :func:`majority_problem`).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation (see :func:`majority_problem`).
    accountant : Accountant, default=None
        Charged ``mech.privacy(problem)`` before any randomness is drawn.

    Returns
    -------
    int or object
        The index of the chosen class, or its label when ``labels`` is given.

    Notes
    -----
    The privacy guarantee is ``mech.privacy(majority_problem(counts, ...))``;
    for the default (PF on the monotone counts, sensitivity 1):

    .. math::

        P[r \text{ examined and accepted}] \propto \exp\bigl(\varepsilon (n_r - \max_s n_s)\bigr),
        \quad \varepsilon\text{-DP under add/remove}.

    References
    ----------
    McKenna & Sheldon, "Permute-and-Flip: a new mechanism for differentially
    private selection", NeurIPS 2020, Theorem 1; McSherry & Talwar,
    "Mechanism design via differential privacy", FOCS 2007, Theorem 6 (the
    exponential mechanism); mathematics §9.1 (counts as utilities).

    Examples
    --------
    >>> from dpselect.apps.counts import private_argmax
    >>> private_argmax([22, 8, 17, 4, 0], 1.0, labels=list("abcde"), rng=0)
    'a'
    """
    prob = majority_problem(counts, relation=relation, tie_rule=tie_rule, labels=labels, utility=utility)
    mech = resolve_mechanism(mechanism, epsilon, delta)
    gen = check_random_state(rng)
    charge(accountant, mech.privacy(prob))
    idx = int(mech.select(prob, rng=gen))
    return prob.labels[idx] if prob.labels is not None else idx


def majority_neighbours(counts: ArrayLike, relation: Relation | str = "add_remove") -> list[np.ndarray]:
    """All neighbouring count vectors (for exact audits).

    add_remove: one count +-1, staying >= 0; replace: one unit moved from a
    class with a positive count to another class.

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate class (m >= 1).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation: one count +-1, or one unit moved between
        classes (module docstring).

    Returns
    -------
    list of numpy.ndarray of int64
        Every neighbour of ``counts`` under ``relation``.

    Examples
    --------
    >>> from dpselect.apps.counts import majority_neighbours
    >>> [y.tolist() for y in majority_neighbours([1, 0])]
    [[2, 0], [0, 0], [1, 1]]
    """
    n = check_counts(counts, "counts")
    relation = check_relation(relation)
    m = n.size
    out: list[np.ndarray] = []
    if relation == "add_remove":
        for i in range(m):
            for d in (1, -1):
                if n[i] + d >= 0:
                    y = n.copy()
                    y[i] += d
                    out.append(y)
    else:
        for i in range(m):
            if n[i] == 0:
                continue
            for j in range(m):
                if j != i:
                    y = n.copy()
                    y[i] -= 1
                    y[j] += 1
                    out.append(y)
    return out
