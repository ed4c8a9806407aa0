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
u(x, r) = 1 if r is a maximum (tie rules, local sensitivities and the
distance to instability: :mod:`._instability`, mathematics §4.2).

Examples
--------
>>> from dpselect.apps.counts import majority_problem, private_argmax
>>> private_argmax([22, 8, 17, 4, 0], 1.0, rng=0)
0
>>> majority_problem([22, 8, 17], utility="indicator").scores.tolist()
[1.0, 0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar, cast, overload

import numpy as np

from ..._params import DELTA, EPSILON, RELATION, SEED, SIZE, options, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism, resolve_mechanism
from ...problem import SelectionProblem
from ...typing import ArrayLike, Relation, SeedLike, TieRule
from ._instability import _indicators, _profiles
from ._rules import ACCOUNTANT, COUNTS, MECHANISM, NAMES, TIE_RULE, UTILITIES

__all__ = ["UTILITIES", "majority_neighbours", "majority_problem", "private_argmax"]

L = TypeVar("L")

_UTILITY = options(*UTILITIES)


@validate_params({"counts": COUNTS, "relation": RELATION, "tie_rule": TIE_RULE, "labels": NAMES, "utility": _UTILITY})
def majority_problem(
    counts: ArrayLike,
    *,
    relation: Relation = "add_remove",
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
    n = np.asarray(counts)
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


@overload
def private_argmax(
    counts: ArrayLike,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism = ...,
    utility: Literal["count", "indicator"] = ...,
    delta: float = ...,
    rng: SeedLike = ...,
    labels: None = None,
    tie_rule: TieRule = ...,
    relation: Relation = ...,
    size: None = None,
    accountant: Accountant | None = ...,
) -> int: ...


@overload
def private_argmax(
    counts: ArrayLike,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism = ...,
    utility: Literal["count", "indicator"] = ...,
    delta: float = ...,
    rng: SeedLike = ...,
    labels: Sequence[L],
    tie_rule: TieRule = ...,
    relation: Relation = ...,
    size: None = None,
    accountant: Accountant | None = ...,
) -> L: ...


@overload
def private_argmax(
    counts: ArrayLike,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism = ...,
    utility: Literal["count", "indicator"] = ...,
    delta: float = ...,
    rng: SeedLike = ...,
    labels: Sequence[L] | None = None,
    tie_rule: TieRule = ...,
    relation: Relation = ...,
    size: int,
    accountant: Accountant | None = ...,
) -> np.ndarray: ...


@validate_params(
    {
        "counts": COUNTS,
        "epsilon": EPSILON.or_none(),
        "mechanism": MECHANISM,
        "utility": _UTILITY,
        "delta": DELTA,
        "rng": SEED,
        "labels": NAMES,
        "tie_rule": TIE_RULE,
        "relation": RELATION,
        "size": SIZE,
        "accountant": ACCOUNTANT,
    }
)
def private_argmax(
    counts: ArrayLike,
    epsilon: float | None,
    *,
    mechanism: str | Mechanism = "pf",
    utility: Literal["count", "indicator"] = "count",
    delta: float = 0.0,
    rng: SeedLike = None,
    labels: Sequence[L] | None = None,
    tie_rule: TieRule = "tieset",
    relation: Relation = "add_remove",
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | L | np.ndarray:
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
    size : int or None, default=None
        None: one draw; an int: an array of ``size`` independent draws, charged
        as ``size`` releases (mathematics §10.1).
    accountant : Accountant, default=None
        Charged ``mech.privacy(problem)`` (``size`` times) before any randomness is drawn.

    Returns
    -------
    int, label or ndarray
        The index of the chosen class, or its label (an element of ``labels``)
        when ``labels`` is given; with ``size``, an array of ``size`` of them.

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
    charge(accountant, mech.privacy(prob), size=size)
    if size is not None:
        many = mech.select(prob, size=size, rng=gen)
        return many if prob.labels is None else np.asarray(prob.labels, dtype=object)[many]
    idx = int(mech.select(prob, rng=gen))
    return idx if prob.labels is None else cast(L, prob.labels[idx])


@validate_params({"counts": COUNTS, "relation": RELATION})
def majority_neighbours(counts: ArrayLike, relation: Relation = "add_remove") -> list[np.ndarray]:
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
    n = np.asarray(counts)
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
