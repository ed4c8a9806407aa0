"""The private tree's shape from public quantities: depth, bins, and the per-level budget plan.

Shape from public quantities (never tuned on the private data)
--------------------------------------------------------------
n = ``n_records`` if given (a public count), else the sum of noisy class
counts c_k + K_k, K_k exact discrete Laplace of scale 1/eps_n (integers; the
classes partition the records, so the histogram is one eps_n query),
eps_n = 10% of epsilon (:data:`RECORD_COUNT_SHARE`); eps_r = epsilon - eps_n.
The depth steps at thresholds of n at least a factor 2 apart, so the count
needs a relative error well below 1 where the first thresholds lie (about
16 (1 + ln C) / eps_r records): 5% of epsilon gave a relative standard
deviation near 1 there, and on scikit-learn's bundled breast_cancer, wine
and digits (binarised) at epsilon in {0.5, 1} held-out accuracy with 10% was
within one standard error of 5% or better in every cell; 20% lost on 3 of
52 cells of the 13-table grid below and won none.  A shape that never
depends on the seed needs a public ``n_records`` (a published dataset size,
or a public lower bound); the class balance then stays unused.

With C classes and branching b (2 for binary cuts, the mean public domain
size for multiway):

* ``max_depth=None``: the largest d <= 12 with
  n_eff / b^d >= 4 (1 + ln C) / eps_leaf(d), at least 1.  Derivation: a leaf
  of an evenly split tree holds n / b^d records; its C noisy class counts
  carry noise of scale 1/eps_leaf, and the largest of C such noises is about
  (1 + ln C) / eps_leaf; asking for a 4x margin keeps most leaves' majorities
  intact (the constant 4 is this rule of thumb, not fitted).  A leaf can only
  move a prediction off the majority class with the records of the other
  classes, so the rule counts n_eff = :func:`effective_records` of the
  released class counts (n for balanced classes, 2 x 3% of n under a 97%
  majority; n itself when ``n_records`` is public).  Depth 0 is never
  planned: one split costs half the budget of a single leaf, and a tree
  whose leaves show no evidence falls back to the privately chosen majority
  label for free (:func:`~dpselect.apps.trees._growing.leaf_labels.leaf_values`).
  Measured (``benchmarks/bench_trees.py``, 13 real tables of 569-10,000
  rows, 5-fold CV x 3, epsilon in {0.1, 0.5, 1, 5}): accuracy within one
  standard error of the best of diffprivlib's tree and forest and DP-EBM in
  49 of 52 cells, balanced accuracy in 47, never below the majority class
  by more than 2 SE; in an exploration over the same tables (x 2), n in
  place of n_eff and no floor gave 40 and 45 of 49 (e.g. a 93% majority at
  epsilon = 1: depth 4, 0.941, where n gave depth 7, 0.936; breast_cancer at
  epsilon = 0.1: depth 1, 0.82, where the rule without the floor gave depth
  0 in 60% of fits, 0.71); Adult at epsilon = 1 (5-fold CV): depth 8, 0.832
  (the former rule: 0.817).  The remaining losses are at epsilon = 0.1 on tables
  under 1,000 rows, where diffprivlib's random-structure tree (the whole
  budget on leaf labels) wins.  Multiway
  trees are also capped at the number of features.
* ``n_bins=None``: the power of two nearest sqrt(n eps_r), clipped to
  [8, 32]: finer grids only help once leaves are large enough to see them,
  and PF's price of m candidates is only ln(m)/eps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._docstrings import fill_doc
from ...._params import BOOLEAN, EPSILON, int_at_least, positive, validate_params
from ....accounting import parallel_composition, tree_query_epsilon
from ....mechanisms import APPROXIMATE_NAMES, make_mechanism
from ....privacy import Privacy
from ....typing import ArrayLike
from .._estimator import DPClassifierBase
from .._tabular import Schema
from .split_criteria import problem_from_tables, problem_kind

__all__ = ["RECORD_COUNT_SHARE", "TreePlan", "auto_n_bins", "auto_tree_depth", "effective_records", "plan_tree"]

#: Share of epsilon spent on the noisy class counts (the record count and the class balance) when
#: ``n_records`` is not given (module docstring); the forests use the same share.
RECORD_COUNT_SHARE = 0.1
_LEAF_MARGIN = 4.0
_MAX_AUTO_DEPTH = 12
#: A public (or noisy) record count: a finite float >= 0.
_RECORDS = positive(allow_zero=True)


@validate_params(
    {
        "n_records": _RECORDS,
        "n_classes": int_at_least(1),
        "epsilon": EPSILON,
        "branching": positive(),
        "count_queries": BOOLEAN,
        "cap": int_at_least(0),
    }
)
@fill_doc
def auto_tree_depth(
    n_records: float,
    n_classes: int,
    epsilon: float,
    *,
    branching: float = 2.0,
    count_queries: bool = False,
    cap: int = _MAX_AUTO_DEPTH,
) -> int:
    """Largest d <= cap with n / b^d >= 4 (1 + ln C) / eps_leaf(d) (module docstring; public inputs only).

    eps_leaf(d) = :func:`~dpselect.accounting.tree_query_epsilon` (epsilon, d + 1):
    the budget of one level's queries when epsilon is split evenly over the
    d + 1 levels.  The shape spends no budget; the tree it sizes is
    epsilon-DP for add/remove neighbours (mathematics §5.2).

    %(public_records)s
    n_classes : int
        Public number of classes C.
    epsilon : float
        The tree's budget (> 0).
    branching : float, default=2.0
        Children per split b (2 for binary cuts, the mean public domain size
        for multiway splits).
    count_queries : bool, default=False
        Whether every node also releases a noisy count (``stopping="count"``),
        which halves eps_leaf.
    cap : int, default=12
        Largest depth returned.

    Returns
    -------
    int
        The depth d in [0, cap] (0 when no d >= 1 qualifies).

    See Also
    --------
    auto_n_bins : The power of two nearest sqrt(n eps), clipped to [8, 32] (:mod:`~dpselect.apps.trees._growing.shape`)
    DPDecisionTreeClassifier : Differentially private decision tree (binary cuts or DiffP-ID3), add/remove ...
    auto_forest_depth : Default depth: min(Fletcher–Islam depth, floor(log2(n / T)) + 2) (public inputs only)

    Examples
    --------
    >>> auto_tree_depth(455, 2, 0.95), auto_tree_depth(39_000, 2, 0.95), auto_tree_depth(1_437, 10, 0.95)
    (3, 9, 4)
    """
    need = _LEAF_MARGIN * (1.0 + math.log(max(n_classes, 1)))
    for d in range(cap, 0, -1):
        eps_leaf = tree_query_epsilon(epsilon, d + 1, count_queries=count_queries)
        if n_records / branching**d >= need / eps_leaf:
            return d
    return 0


@validate_params({"n_records": _RECORDS, "epsilon": EPSILON})
@fill_doc
def auto_n_bins(n_records: float, epsilon: float) -> int:
    """The power of two nearest sqrt(n eps), clipped to [8, 32] (:mod:`~dpselect.apps.trees._growing.shape`).

    Public inputs only: the grid spends no budget; the tree it serves is
    epsilon-DP for add/remove neighbours (mathematics §5.2).

    %(public_records)s
    epsilon : float
        The budget left after the record count (eps_r).

    Returns
    -------
    int
        The number of equal-width bins per continuous feature, in {8, 16, 32}.

    See Also
    --------
    auto_tree_depth : Largest d <= cap with n / b^d >= 4 (1 + ln C) / eps_leaf(d) (module docstring; public ...

    Examples
    --------
    >>> auto_n_bins(455, 0.95), auto_n_bins(39_000, 0.95)
    (16, 32)
    """
    x = math.sqrt(max(n_records * epsilon, 1.0))
    return int(min(32, max(8, 2 ** round(math.log2(x)))))


def effective_records(class_counts: ArrayLike) -> float:
    """C / (C - 1) times the records outside the largest class: n for balanced classes, less when one dominates.

    The depth rule's record count when the class counts are known (released
    noisy counts, clipped at 0): a leaf can only change a prediction from the
    majority class with records of the other classes, so a tree on data with a
    97% majority is sized as one on 2 x 3% of the records.

    Parameters
    ----------
    class_counts : array-like of shape (C,)
        Released (noisy) class counts.

    Returns
    -------
    float
        C / (C - 1) (n - max_c n_c) with n the sum of the counts clipped at 0
        (n when C = 1).

    Examples
    --------
    >>> effective_records([500, 500]), effective_records([970, 30]), effective_records([400, 300, 300])
    (1000.0, 60.0, 900.0)
    """
    c = np.clip(np.asarray(class_counts, dtype=np.float64), 0.0, None)
    C = c.size
    if C < 2:
        return float(c.sum())
    return float(C / (C - 1) * (c.sum() - c.max()))


@dataclass(frozen=True)
class TreePlan:
    """The tree's shape and per-query budget, fixed from public quantities (and the noisy count)."""

    n_bins: int
    n_values: np.ndarray
    depth: int
    eps_q: float
    mech: Any
    kind: str
    levels: list[Privacy]


def plan_tree(
    est: DPClassifierBase,
    schema: Schema,
    n_classes: int,
    n_hat: float,
    eps_r: float,
    mechanism: str,
    delta: float,
    counting: bool,
    gs: float,
    n_depth: float | None = None,
) -> TreePlan:
    """Shape, mechanism and per-level guarantees (raises on an invalid configuration; draws nothing).

    ``n_depth`` is the depth rule's record count (:func:`effective_records` of released class counts);
    None uses ``n_hat``.
    """
    binary, p, C = est.splits == "binary", schema.n_features, n_classes
    n_bins = int(est.n_bins) if est.n_bins is not None else auto_n_bins(n_hat, eps_r)
    n_values = np.empty(p, dtype=np.int64)
    n_values[schema.cont] = n_bins
    n_values[schema.cat] = schema.n_categories
    branching = 2.0 if binary else float(n_values.mean())
    depth = (
        int(est.max_depth)
        if est.max_depth is not None
        else max(  # at least one split: the leaves' label fallback chooses depth 0 privately (leaf_values)
            1,
            auto_tree_depth(
                n_hat if n_depth is None else n_depth, C, eps_r, branching=branching, count_queries=counting
            ),
        )
    )
    if not binary:
        depth = min(depth, p)
    eps_q = tree_query_epsilon(eps_r, depth + 1, count_queries=counting)
    approx = mechanism in APPROXIMATE_NAMES
    mech = make_mechanism(mechanism, eps_q, delta / max(depth, 1) if approx else 0.0)
    kind = problem_kind(mechanism, est.split_utility)
    m = int(n_values.sum()) if binary else p
    dummy = problem_from_tables(
        np.zeros((m, 2 if binary else int(n_values.max()), C), dtype=np.int64),
        np.full(m, 2) if binary else n_values,
        kind,
        gs,
    )
    query = Privacy(eps_q, 0.0, "add_remove", "discrete Laplace noisy counts (classes partition the node)")
    split_level = parallel_composition([query, mech.privacy(dummy)])
    levels = [split_level] * depth + [query]
    if counting:
        levels = [query + lv for lv in levels]
    return TreePlan(n_bins, n_values, depth, eps_q, mech, kind, levels)
