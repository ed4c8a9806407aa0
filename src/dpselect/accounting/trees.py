"""Decision trees and forests: parallel and sequential composition over nodes and levels (mathematics §5)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._params import BOOLEAN, EPSILON, Rule, validate_params
from ..privacy import Privacy
from ._rules import PRIVACIES, PRIVACY


def _levels(value: Any, name: str) -> int:
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return value


@validate_params({"parts": PRIVACIES})
def parallel_composition(parts: Iterable[Privacy]) -> Privacy:
    """Guarantee of mechanisms run on DISJOINT parts of the data: (max epsilon, max delta).

    Under add/remove one record lies in at most one part, so a neighbour
    changes one part only (McSherry 2009, PINQ Thm 4; mathematics §5.2: the nodes of
    one tree level, the leaves of a tree, the trees of a forest).  The part
    with the largest epsilon names the source.  If every part is
    eta_i-bounded-range the result is (max eta_i)-bounded-range (one
    neighbour moves one part's output law only; mathematics page §10.1).

    Parameters
    ----------
    parts : iterable of Privacy
        The guarantees of the mechanisms, one per disjoint part (at least one).

    Returns
    -------
    Privacy
        (max epsilon, max delta)-DP, (max eta)-bounded-range when every part
        is bounded-range.

    See Also
    --------
    forest_privacy : Guarantee of a forest whose trees get disjoint records and whose leaves query disjoint records
    tree_privacy : Guarantee of a level-wise private tree: sequential over levels, each level parallel over its ...
    tree_query_epsilon : Return the budget of one query of a level-wise private tree with ``levels`` levels (root

    References
    ----------
    McSherry, Privacy Integrated Queries, SIGMOD 2009, Thm 4.

    Examples
    --------
    >>> print(parallel_composition([Privacy(0.5), Privacy(0.2, 1e-6)]))
    (0.5, 1e-06)-DP
    """
    if not parts:
        raise ValueError("parts must not be empty")
    worst = max(parts, key=lambda q: q.epsilon)
    relations = {q.relation for q in parts if q.relation is not None}
    if len(relations) > 1:
        raise ValueError(f"cannot compose guarantees under different neighbour relations {sorted(relations)}")
    etas = [q.bounded_range for q in parts]
    eta = max(e for e in etas if e is not None) if all(e is not None for e in etas) else None
    return Privacy(
        worst.epsilon,
        max(q.delta for q in parts),
        relations.pop() if relations else None,
        worst.source,
        bounded_range=eta,
    )


@validate_params({"epsilon": EPSILON, "levels": Rule("an int >= 1", check=_levels), "count_queries": BOOLEAN})
def tree_query_epsilon(epsilon: float, levels: int, *, count_queries: bool) -> float:
    """Return the budget of one query of a level-wise private tree with ``levels`` levels (root .. leaves).

    Under add/remove neighbours every record meets one node per level; a level costs one split selection
    or one leaf query, plus (``count_queries``, DiffP-ID3) a Laplace noisy
    count of the node.  Splitting ``epsilon`` evenly gives epsilon / levels
    (data-independent stopping) or epsilon / (2 levels) (DiffP-ID3:
    eps' = eps / (2 (d + 1)), mathematics §5.2 / mathematics §7 item 17).

    Parameters
    ----------
    epsilon : float
        The tree's total budget, > 0.
    levels : int
        The number of levels, root to leaves, >= 1.
    count_queries : bool
        Whether every node also pays for a Laplace noisy count (DiffP-ID3).

    Returns
    -------
    float
        epsilon / levels, or epsilon / (2 levels) with ``count_queries``.

    See Also
    --------
    tree_privacy : Guarantee of a level-wise private tree: sequential over levels, each level parallel over its ...
    forest_privacy : Guarantee of a forest whose trees get disjoint records and whose leaves query disjoint records
    parallel_composition : Guarantee of mechanisms run on DISJOINT parts of the data: (max epsilon, max delta)

    References
    ----------
    Friedman & Schuster, Data Mining with Differential Privacy, KDD 2010
    (DiffP-ID3's budget split).

    Examples
    --------
    >>> tree_query_epsilon(1.0, 4, count_queries=True)
    0.125
    """
    return epsilon / (levels * (2 if count_queries else 1))


@validate_params({"level_costs": PRIVACIES, "record_count": PRIVACY.or_none()})
def tree_privacy(level_costs: Iterable[Privacy], record_count: Privacy | None = None) -> Privacy:
    """Guarantee of a level-wise private tree: sequential over levels, each level parallel over its nodes.

    Levels compose sequentially (adaptively: a level's partition is a
    function of the released levels above; mathematics §5.2).  The result
    keeps the levels as its ``parts``: an accountant composes bounded-range
    levels (exponential-mechanism selections) tightly.

    Parameters
    ----------
    level_costs : iterable of Privacy
        One guarantee per level, already the parallel composition
        (:func:`parallel_composition`) over the level's nodes.
    record_count : Privacy or None, default=None
        The guarantee of the noisy record count used to choose the shape,
        composed sequentially in front; None if there is none.

    Returns
    -------
    Privacy
        The sum of the parts, under add/remove.

    See Also
    --------
    tree_query_epsilon : Return the budget of one query of a level-wise private tree with ``levels`` levels (root
    forest_privacy : Guarantee of a forest whose trees get disjoint records and whose leaves query disjoint records
    parallel_composition : Guarantee of mechanisms run on DISJOINT parts of the data: (max epsilon, max delta)

    Examples
    --------
    >>> print(tree_privacy([Privacy(0.25)] * 4, Privacy(0.1)))
    1.1-DP [add_remove]
    """
    parts = ([record_count] if record_count is not None else []) + list(level_costs)
    if not parts:
        raise ValueError("level_costs must not be empty")
    total = parts[0]
    for q in parts[1:]:
        total = total + q
    return Privacy(
        total.epsilon,
        total.delta,
        "add_remove",
        f"{len(parts)} sequential parts, parallel within each (mathematics §5.2)",
        parts=total.atoms,
    )


@validate_params({"leaf_query": PRIVACY, "record_count": PRIVACY.or_none()})
def forest_privacy(leaf_query: Privacy, record_count: Privacy | None = None) -> Privacy:
    """Guarantee of a forest whose trees get disjoint records and whose leaves query disjoint records.

    Parallel composition over leaves and trees leaves ONE leaf query
    (mathematics §5.3, with records assigned to trees by independent draws);
    ``record_count`` (the noisy count used for the shape) adds sequentially.

    Parameters
    ----------
    leaf_query : Privacy
        The guarantee of one leaf query.
    record_count : Privacy or None, default=None
        The guarantee of the noisy record count used for the shape; None if
        there is none.

    Returns
    -------
    Privacy
        ``leaf_query`` (plus ``record_count``), under add/remove.

    See Also
    --------
    parallel_composition : Guarantee of mechanisms run on DISJOINT parts of the data: (max epsilon, max delta)
    tree_privacy : Guarantee of a level-wise private tree: sequential over levels, each level parallel over its ...
    tree_query_epsilon : Return the budget of one query of a level-wise private tree with ``levels`` levels (root

    References
    ----------
    McSherry, Privacy Integrated Queries, SIGMOD 2009, Thm 4 (parallel
    composition); Fletcher & Islam, Differentially private random decision
    forests using smooth sensitivity, Expert Systems with Applications 2017
    (the forest); the mathematics page §5.3.

    Examples
    --------
    >>> print(forest_privacy(Privacy(0.5), Privacy(0.1)))
    0.6-DP [add_remove]
    """
    parts = ([record_count] if record_count is not None else []) + [leaf_query]
    return (
        tree_privacy(parts[1:], parts[0])
        if record_count is not None
        else Privacy(
            leaf_query.epsilon,
            leaf_query.delta,
            "add_remove",
            f"one leaf query (parallel over leaves and disjoint trees; mathematics §5.3): {leaf_query.source}",
        )
    )
