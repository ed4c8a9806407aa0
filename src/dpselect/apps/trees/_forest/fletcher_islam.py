"""The Fletcher–Islam random decision forest: ``DPRandomForestClassifier(algorithm="fletcher_islam")``.

Fletcher–Islam algorithm (with its privacy caveats fixed)
---------------------------------------------------------
* **Data-independent structure.**  Every tree is a random decision tree: at
  each node an attribute is drawn uniformly from the available ones; a
  continuous attribute splits at a point drawn uniformly on the node's
  sub-interval of the attribute's PUBLIC domain (the user's ``bounds``,
  narrowed by the ancestors' splits on that attribute, as in Fletcher's
  Python code) and stays available; a categorical attribute splits into one
  child per public category and is removed below.  Nodes at the depth limit,
  or with no attribute left, are leaves.
* **Disjoint data.**  Each record is assigned to ONE tree by an independent
  uniform draw (``rng.integers(n_estimators, size=n)``).  Fletcher–Islam cut
  the shuffled data into positional chunks of floor(n/tau) records, which is
  not parallel-composable under add/remove (adding a record can shift every
  chunk; mathematics §5.3 caveat (ii), mathematics §7 item 22).  With independent draws, adding
  or removing one record changes exactly one tree's data by that record.
* **Private leaf labels.**  Each leaf's label is one private selection from
  the leaf's OWN class counts.  Default (``mechanism="pf"``,
  ``leaf_utility`` None -> "count"): permute-and-flip with the counts as
  utilities (global sensitivity 1, monotone under add/remove; mathematics §9.1),
  which can tell a 1-0 leaf from a 100-0 one.  The seeds' leaf query is
  ``leaf_utility="indicator"``: :mod:`dpselect.apps.counts`'s argmax
  indicator (tie set; smooth sensitivity e^{-beta max(g - 1, 0)} from the
  leaf's gap g, mathematics §4.2), the default for the smooth selections.
  Fletcher–Islam's EM with S = e^{-j eps} in place of the global sensitivity
  is not DP (SNM Thm 7.2), and SNM's reproduction code used one S computed
  on the whole dataset for every leaf (mathematics §5.3 caveat (iii)).
* **Accounting.**  Leaves of a tree partition its records and the trees'
  data are disjoint, so by parallel composition the whole forest costs what
  one leaf query costs (:func:`dpselect.accounting.forest_privacy`); a
  noisy record count used for the shape (10% of epsilon, an integer) adds sequentially.
  ``privacy_`` is fixed before any randomness and ``fit`` charges
  ``accountant`` with it first.
* **Shape from public quantities.**  n = ``n_records`` or a noisy count.
  Trees: round(sqrt(n)/2) clipped to [4, 32]; depth: min(Fletcher–Islam
  depth, floor(log2(n/T)) + 2) (:func:`auto_n_estimators`,
  :func:`auto_forest_depth`).  Fletcher–Islam "Theorem 2" (balls in bins):
  with m_c continuous and m_k categorical attributes, d_c = the smallest d
  with m_c ((m_c - 1)/m_c)^d <= m_c / 2, depth floor(d_c + m_k / 2)
  (floor(m_k / 2) if m_c = 0), capped at 15 (both public implementations
  return d_c + 1; we follow the formula, mathematics §5.3).  When n / (T 2^depth)
  < 1/8 records per leaf (most leaves empty, voting at random) ``fit``
  warns.
* **Prediction.**  Every tree votes its leaf's label; ``predict_proba`` is the
  share of votes and ``predict`` its argmax (first class on ties).  A sample
  with a category outside a feature's public domain, at a node that splits
  on that feature, gets no vote from that tree; with no votes at all the
  probabilities are uniform.

Leaf selections are batched: rows of leaf counts that define the same problem
(after sorting the counts, every selection being permutation-equivariant)
share one ``mech.select(problem, size=k)`` call.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ...._docstrings import fill_doc
from ...._validation import check_random_state
from ...._warnings import PrivacyLeakWarning
from ....accounting import Accountant, forest_privacy
from ....mechanisms import APPROXIMATE_NAMES, make_mechanism
from ....privacy import Privacy
from ....problem import SelectionProblem
from ....typing import ArrayLike
from ...counts import majority_problem
from .._estimator import DPClassifierBase
from .._growing.grow import noisy_counts
from .._growing.nodes import select_nodes
from .._growing.shape import RECORD_COUNT_SHARE
from .._params import LEAF_UTILITIES
from .._tabular import Schema, encode_training, encode_transform
from .structure import (
    DENSE_LEAF_LIMIT,
    ROW_CHUNK,
    SALT_LABEL,
    auto_forest_depth,
    auto_n_estimators,
    descend,
    enumerate_leaves,
    fletcher_islam_depth,
    mix,
    root_ids,
    sort_unique,
    uniform,
)

#: The forest estimator a fit function fits and returns.
E = TypeVar("E", bound=DPClassifierBase)

__all__ = ["fit_fletcher_islam", "forest_votes", "leaf_problem", "problem_key", "select_labels"]

#: Expected records per leaf below which the fit warns that most leaves are empty.
SPARSE_LEAVES = 1.0 / 8.0


def problem_key(counts: np.ndarray) -> np.ndarray:
    """Rows (indicators u_r, per-class distances t*_r) that determine :func:`leaf_problem` (m >= 2).

    majority_problem(counts) (add/remove, tie set) is a function of the
    indicators and of the per-candidate distances t*_r (its global profile
    uses t* = min_r t*_r, its horizon max_r t*_r + 1): with
    W_r = max_{b != r} n_b - n_r, t*_r = -W_r if r wins (W_r <= 0) and
    W_r - 1 otherwise (majority's module docstring).  Equal keys therefore
    mean equal problems (checked against majority in tests/test_forest.py).

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (L, m)
        One row of class counts per leaf, m >= 2 classes.

    Returns
    -------
    numpy.ndarray of int, shape (L, 2 m)
        Per row: the m argmax indicators, then the m distances t*_r.

    Examples
    --------
    >>> import numpy as np
    >>> problem_key(np.array([[5, 2, 2], [3, 3, 0]])).tolist()
    [[1, 0, 0, 3, 2, 2], [1, 1, 0, 0, 0, 2]]
    """
    counts = np.asarray(counts, dtype=np.int64)
    top = counts.max(axis=1)
    second = np.sort(counts, axis=1)[:, -2]
    is_top = counts == top[:, None]
    unique_top = is_top & (is_top.sum(axis=1) == 1)[:, None]
    W = np.where(unique_top, second[:, None], top[:, None]) - counts
    return np.hstack([is_top.astype(np.int64), np.where(W <= 0, -W, W - 1)])


def leaf_problem(counts: ArrayLike, leaf_utility: str = "indicator") -> SelectionProblem:
    """The leaf-label problem of a leaf with these class counts (add/remove).

    "indicator": :func:`dpselect.apps.counts.majority_problem` (argmax indicator,
    tie set; Fletcher–Islam / SNM).  "count": the counts themselves as
    utilities, global sensitivity 1, monotone under add/remove (as
    diffprivlib's permute-and-flip leaves).

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        The leaf's non-negative class counts.
    leaf_utility : {"indicator", "count"}, default="indicator"
        The utility of the leaf-label selection.

    Returns
    -------
    SelectionProblem
        The problem under add/remove.

    Examples
    --------
    >>> p = leaf_problem([5, 2, 2], "count")
    >>> p.scores.tolist(), p.monotone
    ([5.0, 2.0, 2.0], True)
    """
    if leaf_utility == "indicator":
        return majority_problem(counts, relation="add_remove", tie_rule="tieset")
    if leaf_utility == "count":
        return SelectionProblem(
            np.asarray(counts, dtype=np.float64), global_sensitivity=1.0, monotone=True, relation="add_remove"
        )
    raise ValueError(f"leaf_utility must be one of {LEAF_UTILITIES}, got {leaf_utility!r}")


def select_labels(counts: np.ndarray, mech: Any, gen: np.random.Generator, leaf_utility: str) -> np.ndarray:
    """One private selection per row of counts, batched over equivalent rows.

    Every selection here is permutation-equivariant on these problems
    (i.i.d. per-candidate noise or a symmetric closed form, and
    per-candidate quantities that permute with the counts), so a row's
    label is drawn on its counts sorted in decreasing order and mapped back
    through the sorting permutation.  Sorted rows with the same key
    (:func:`problem_key` for the indicator, the counts for "count") define
    identical problems, hence identical output distributions:
    ``mech.select(problem, size=k)`` draws their k independent labels at
    once.
    """
    L, C = counts.shape
    labels = np.zeros(L, dtype=np.int64)
    if L == 0 or C == 1:
        return labels
    if leaf_utility == "count":  # a global-sensitivity selection: every leaf in one batched call
        template = leaf_problem(np.zeros(C, dtype=np.int64), "count")
        return select_nodes(
            mech,
            counts.astype(np.float64),
            np.ones(counts.shape, dtype=bool),
            template,
            gen,
            lambda i: leaf_problem(counts[i], "count"),
        )
    perm = np.argsort(-counts, axis=1, kind="stable")
    srt = np.take_along_axis(counts, perm, axis=1)
    key = problem_key(srt) if leaf_utility == "indicator" else srt
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    sizes = np.bincount(inv, minlength=first.size)
    draws = [
        np.asarray(mech.select(leaf_problem(srt[i], leaf_utility), size=int(k), rng=gen)) for i, k in zip(first, sizes)
    ]
    pos = np.empty(L, dtype=np.int64)
    pos[order] = np.concatenate(draws)
    labels[:] = perm[np.arange(L), pos]
    return labels


def _leaf_utility(est: DPClassifierBase, mechanism: str) -> str:
    """The leaf-label utility: ``est.leaf_utility``, or "count" for EM/PF and "indicator" for the others."""
    leaf_utility: str | None = est.leaf_utility
    if leaf_utility is None:
        leaf_utility = "count" if mechanism in ("em", "pf") else "indicator"
    if leaf_utility == "count" and mechanism not in ("em", "pf"):
        raise ValueError(
            f"{type(est).__name__}: leaf_utility='count' needs mechanism='em' or 'pf' (a count's "
            "local sensitivity is always 1, so smooth-sensitivity mechanisms cannot improve on "
            "them)"
        )
    return leaf_utility


def _set_shape(est: DPClassifierBase, schema: Schema, n_hat: float | None) -> None:
    """``n_estimators_`` and ``depth_`` from public quantities; warn when most leaves would be empty."""
    fi = fletcher_islam_depth(schema.cont.size, schema.cat.size)
    n_est = int(est.n_estimators) if est.n_estimators is not None else auto_n_estimators(n_hat or 1.0)
    est.n_estimators_ = n_est
    est.depth_ = int(est.max_depth) if est.max_depth is not None else auto_forest_depth(n_hat or 1.0, n_est, fi)
    if n_hat is not None and n_hat / (n_est * 2.0**est.depth_) < SPARSE_LEAVES:
        warnings.warn(
            f"{type(est).__name__}: about {n_hat:.0f} records over {n_est} trees of depth {est.depth_} "
            f"leave most leaves empty (about {n_hat / (n_est * 2.0**est.depth_):.3g} records per leaf), "
            "and empty leaves vote at random: lower max_depth or n_estimators (or leave them None).",
            UserWarning,
            stacklevel=4,  # the forest's fit's caller
        )


def _store_leaves(
    est: DPClassifierBase,
    schema: Schema,
    occupied: np.ndarray,
    labels: np.ndarray,
    p0: np.ndarray,
    seed: np.ndarray,
    gen: np.random.Generator,
) -> None:
    """The leaf table: every leaf's label (dense), or the occupied leaves' and a seed for the others."""
    C = p0.size
    all_leaves = enumerate_leaves(schema, est.depth_, est._roots, DENSE_LEAF_LIMIT)
    est.dense_ = all_leaves is not None
    if all_leaves is not None:
        pos = np.searchsorted(all_leaves, occupied)
        if occupied.size and not np.array_equal(all_leaves[np.minimum(pos, all_leaves.size - 1)], occupied):
            raise RuntimeError("internal error: a training record reached a node outside the structure")
        full = np.zeros(all_leaves.size, dtype=np.int64)
        empty = np.ones(all_leaves.size, dtype=bool)
        empty[pos] = False
        if empty.any() and C > 1:  # the same selection on all-zero counts, drawn from its exact law
            full[empty] = gen.choice(C, size=int(empty.sum()), p=p0)
        full[pos] = labels
        est._leaf_ids, est._leaf_labels = all_leaves, full
        est._empty_cdf = None
        return
    warnings.warn(
        f"{type(est).__name__}: the forest's structure has more than {DENSE_LEAF_LIMIT} leaves, so only "
        "the leaves reached by training records are stored. Predictions are differentially private, but "
        "the fitted object reveals which leaves are occupied: do not publish it (e.g. pickled).",
        PrivacyLeakWarning,
        stacklevel=4,  # the forest's fit's caller
    )
    est._leaf_ids, est._leaf_labels = occupied, labels
    est._empty_cdf = np.cumsum(p0)
    est._empty_salt = SALT_LABEL ^ mix(seed[1:])[0]


@fill_doc
def fit_fletcher_islam(est: E, X: ArrayLike, y: ArrayLike, accountant: Accountant | None, mechanism: str) -> E:
    """Fit ``est`` (a forest estimator) as Fletcher–Islam random trees with private leaf labels.

    ``est``'s parameters have been validated (``est._validated()``) and
    ``accountant`` is the budget the fit charges (``est._budget(...)``): it is
    charged with the a-priori guarantee (one leaf query, plus the noisy
    record count) before any randomness is drawn.

    Parameters
    ----------
    est : DPRandomForestClassifier
        The forest (``algorithm="fletcher_islam"``), its parameters validated.
    %(training_records)s
    accountant : Accountant or None
        The budget the fit charges; None charges nothing.
    mechanism : str
        The leaf-label selection (a name of :func:`dpselect.mechanisms.make_mechanism`).

    Returns
    -------
    DPRandomForestClassifier
        ``est``, fitted (``privacy_``, ``classes_``, the shape attributes and the leaf table).
    """
    epsilon, delta = float(est.epsilon), float(est.delta)
    leaf_utility = _leaf_utility(est, mechanism)
    schema, Xc, Xk, classes, yc = encode_training(est, X, y, est.bounds, est.categorical_features)
    n = Xc.shape[0]
    inferred = est._inferred(schema)
    est._warn(inferred, stacklevel=4)  # called from the forest's fit
    C = int(classes.size)
    need_count = est.n_records is None and (est.n_estimators is None or est.max_depth is None)
    eps_leaf = epsilon * (1.0 - RECORD_COUNT_SHARE) if need_count else epsilon
    mech = make_mechanism(mechanism, eps_leaf, delta if mechanism in APPROXIMATE_NAMES else 0.0)
    est.leaf_utility_ = leaf_utility
    zero_problem = leaf_problem(np.zeros(C, dtype=np.int64), leaf_utility)
    count_priv = (
        Privacy(epsilon - eps_leaf, 0.0, "add_remove", "discrete Laplace noisy record count") if need_count else None
    )
    privacy = forest_privacy(mech.privacy(zero_problem), count_priv)
    est._charge(accountant, privacy, inferred)
    est.privacy_ = est._claim(privacy, inferred)
    gen = check_random_state(est.random_state, "random_state")
    est._schema = schema
    n_hat = float(est.n_records) if est.n_records is not None else None
    if need_count:
        n_hat = max(1.0, noisy_counts(n, epsilon - eps_leaf, gen))
    est.n_records_ = n_hat
    _set_shape(est, schema, n_hat)
    seed = gen.integers(0, 2**63 - 1, size=2, dtype=np.int64).astype(np.uint64)
    est._roots = root_ids(seed, est.n_estimators_)
    tree_of = gen.integers(0, est.n_estimators_, size=n)
    leaf_ids, _ = descend(schema, est.depth_, est._roots[tree_of], Xc, Xk)
    occupied, inv = sort_unique(leaf_ids, return_inverse=True)
    counts = np.bincount(inv * C + yc, minlength=occupied.size * C).reshape(occupied.size, C)
    labels = select_labels(counts, mech, gen, leaf_utility)
    # exact output distribution of a leaf without records (uniform for every selection here)
    p0 = np.exp(mech.log_probabilities(zero_problem)) if C > 1 else np.ones(1)
    _store_leaves(est, schema, occupied, labels, p0 / p0.sum(), seed, gen)
    est.classes_ = classes
    est.n_leaves_ = int(est._leaf_ids.size) if est.dense_ else None
    return est


def forest_votes(est: DPClassifierBase, X: ArrayLike) -> np.ndarray:
    """Each sample's votes per class (n_samples, n_classes) from the fitted Fletcher–Islam trees."""
    check_is_fitted(est, "_leaf_ids")
    Xc, Xk = encode_transform(est, X, est._schema)
    n, T, C = Xc.shape[0], est._roots.size, est.classes_.size
    votes = np.zeros((n, C))
    step = max(1, ROW_CHUNK // T)
    for s0 in range(0, n, step):
        s1 = min(n, s0 + step)
        smp = np.repeat(np.arange(s0, s1), T)
        ids, alive = descend(est._schema, est.depth_, np.tile(est._roots, s1 - s0), Xc[smp], Xk[smp])
        pos = np.minimum(np.searchsorted(est._leaf_ids, ids), est._leaf_ids.size - 1)
        found = est._leaf_ids[pos] == ids
        lab = est._leaf_labels[pos]
        if not found.all():
            miss = ~found
            u = uniform(ids[miss], est._empty_salt)
            cdf = np.asarray(est._empty_cdf)  # set whenever leaves can be missing (sparse storage)
            lab[miss] = np.minimum(np.searchsorted(cdf, u, side="right"), C - 1)
        votes[s0:s1] = np.bincount((smp[alive] - s0) * C + lab[alive], minlength=(s1 - s0) * C).reshape(-1, C)
    return votes
