"""Partition ensemble of private greedy trees: the default algorithm of the private forest.

Algorithm
---------
* **Shape.**  n = ``n_records`` (public) or the sum of noisy class counts
  (the tree's: exact discrete Laplace, eps_n = 10% of epsilon; the depth rule
  reads their effective count, :func:`~dpselect.apps.trees._growing.shape.effective_records`);
  eps_r = epsilon - eps_n.  The
  number of trees T (unless given) is :func:`auto_partitions`: the largest
  power of two T <= 8 such that a private tree on n / (2T) records still gets
  the depth (:func:`~dpselect.apps.trees.auto_tree_depth` at eps_r) of one
  tree on all n records, i.e. splitting the records costs no depth even with
  a twofold margin, and T = 1 whenever that depth is 0 (never a forest of
  stumps).  Under pure differential privacy every extra tree halves
  the records behind each noisy leaf count (T trees on disjoint parts carry
  sqrt(T) times the relative leaf noise of one tree), and on the shared
  tabular benchmark sets (5-fold CV) two or four trees on halves / quarters
  of the data lost to one tree on all of it in most cells at epsilon <= 1
  (e.g. mushroom 0.969 vs 0.988, pendigits at epsilon = 0.1: 0.50 vs 0.53,
  gamma at epsilon = 1: 0.806 vs 0.815, even where the halves kept the depth)
  and tied at epsilon = 5.  Below millions of records the forest is therefore
  a single private tree: the budget is not worth splitting.
* **Disjoint data.**  Each record goes to ONE tree by an independent uniform
  draw, so adding or removing a record changes one tree's data by that
  record (positional chunks would shift every tree's data).  With T >= 2
  every tree's data also holds one fixed PUBLIC anchor record (each
  continuous feature at the middle of its public bounds, each categorical one
  at its first public category, class t mod C for tree t): no tree is ever
  fitted on an empty part (whose emptiness would otherwise show), and a
  public record changes no neighbour relation.
* **Trees.**  Every tree is a :class:`~dpselect.apps.trees.DPDecisionTreeClassifier`
  at the whole remaining budget eps_r (binary cuts, one private selection per
  node, integer noisy leaf counts), its shape and root label from 1/T of the
  released class counts (a public n / T when ``n_records`` is given).  With
  T = 1 the forest is exactly the default tree (the same released class
  counts, the same shape, the same leaf labels): on the 13 tables of
  ``benchmarks/bench_trees.py`` the default forest and the default tree are
  equal in distribution, so no choice between them is left to make below
  about a million records.
* **Accounting.**  The trees' data are disjoint: parallel composition
  (McSherry 2009, Thm 4) costs what one tree costs, and the noisy class
  counts (one histogram query: the classes partition the records) add
  sequentially: (epsilon, delta)-DP in total, fixed before any randomness is
  drawn.
* **Prediction.**  The mean of the trees' class probabilities; ``predict`` its
  argmax.  The structure is T explicit trees of depth <= 12, so every fitted
  forest holds released values only (nothing that must not be published).

References
----------
McSherry, "Privacy integrated queries", SIGMOD 2009, Theorem 4 (parallel composition).
Friedman & Schuster, "Data mining with differential privacy", KDD 2010 (the private tree).
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ...._docstrings import fill_doc
from ...._params import EPSILON, int_at_least, positive, validate_params
from ...._validation import check_random_state
from ....accounting import Accountant, parallel_composition
from ....mechanisms import APPROXIMATE_NAMES
from ....privacy import Privacy
from ....typing import ArrayLike
from .._estimator import DPClassifierBase, child_random_states
from .._growing.fit import fit_tree
from .._growing.grow import noisy_counts
from .._growing.shape import RECORD_COUNT_SHARE, auto_tree_depth, effective_records
from .._tabular import encode_training, encode_transform
from .._tree import DPDecisionTreeClassifier

#: The forest estimator a fit function fits and returns.
E = TypeVar("E", bound=DPClassifierBase)

__all__ = ["MAX_PARTITIONS", "auto_partitions", "fit_partition_forest", "partition_forest_proba"]

#: Largest number of trees :func:`auto_partitions` returns.
MAX_PARTITIONS = 8


@validate_params(
    {"n_records": positive(allow_zero=True), "n_classes": int_at_least(1), "epsilon": EPSILON, "cap": int_at_least(1)}
)
@fill_doc
def auto_partitions(n_records: float, n_classes: int, epsilon: float, *, cap: int = MAX_PARTITIONS) -> int:
    """Largest power of two T <= cap whose trees on n / (2T) records keep the depth of one tree on n.

    Public inputs only (a public or noisy record count, the public number of
    classes, the trees' budget): the choice spends no budget, and the forest of
    T trees on disjoint parts is epsilon-DP for add/remove neighbours
    (mathematics §11.1).  See the module docstring for why a smaller depth is
    not worth a second tree.

    %(public_records)s
    n_classes : int
        Public number of classes C.
    epsilon : float
        Budget of each tree.
    cap : int, default=8
        Largest number of trees (>= 1).

    Returns
    -------
    int
        T in {1, 2, 4, ..., cap}, the largest with
        ``auto_tree_depth(n / (2T), C, epsilon) == auto_tree_depth(n, C, epsilon)``
        (1 if even T = 2 fails, and 1 when that depth is 0: no forest of stumps).

    Examples
    --------
    >>> auto_partitions(455, 2, 0.95), auto_partitions(39_000, 2, 4.75), auto_partitions(1e6, 2, 4.75)
    (1, 1, 4)
    >>> auto_partitions(200, 2, 0.1)  # one tree of depth 0, not 8 single-leaf trees
    1
    """
    depth = auto_tree_depth(n_records, n_classes, epsilon)
    T = 1
    if depth == 0:  # a part can only lose records: splitting a single leaf would give a forest of stumps
        return T
    while 2 * T <= cap and auto_tree_depth(n_records / (4 * T), n_classes, epsilon) >= depth:
        T *= 2
    return T


def _anchor(schema: Any, Xc: np.ndarray, Xk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The public anchor record: continuous features at mid-bounds, categorical ones at code 0."""
    return (0.5 * (schema.lo + schema.hi))[None, :].astype(Xc.dtype), np.zeros((1, Xk.shape[1]), dtype=Xk.dtype)


def _member_matrix(schema: Any, Xc: np.ndarray, Xk: np.ndarray) -> np.ndarray:
    """A float matrix in the original column order: continuous values, categorical codes 0..K-1 (-1: unseen)."""
    Z = np.empty((Xc.shape[0], schema.n_features), dtype=np.float64)
    Z[:, schema.cont] = Xc
    Z[:, schema.cat] = Xk
    return Z


@fill_doc
def fit_partition_forest(est: E, X: ArrayLike, y: ArrayLike, accountant: Accountant | None, mechanism: str) -> E:
    """Fit ``est`` (a forest estimator, see the module docstring) as a partition ensemble of private trees.

    ``est``'s parameters have been validated (``est._validated()``) and ``accountant`` is
    the budget its fit charges (``est._budget(...)``).  The forest's schema
    and classes decide the guarantee: inferred from the training data, the
    fit has none (``privacy_.epsilon = inf``, a finite ``accountant`` refused
    before any randomness), although every member tree, fitted on the
    forest's schema as if it were public, reports a finite one.

    Parameters
    ----------
    est : DPRandomForestClassifier
        The forest (``algorithm="trees"``), its parameters validated.
    %(training_records_budget)s
    mechanism : str
        The trees' split selection (a name of :func:`dpselect.mechanisms.make_mechanism`).

    Returns
    -------
    DPRandomForestClassifier
        ``est``, fitted (``estimators_``, ``privacy_``, ``classes_``, the
        shape attributes).
    """
    epsilon, delta = float(est.epsilon), float(est.delta)
    schema, Xc, Xk, classes, yc = encode_training(est, X, y, est.bounds, est.categorical_features)
    n = Xc.shape[0]
    inferred = est._inferred(schema)
    est._warn(inferred, stacklevel=4)  # called from the forest's fit
    C = int(classes.size)
    need_count = est.n_records is None
    eps_r = epsilon * (1.0 - RECORD_COUNT_SHARE) if need_count else epsilon
    approx = mechanism in APPROXIMATE_NAMES
    tree_priv = Privacy(eps_r, delta if approx else 0.0, "add_remove", "one private tree (sequential over levels)")
    count_priv = (
        Privacy(epsilon - eps_r, 0.0, "add_remove", "discrete Laplace noisy class counts (the classes partition)")
        if need_count
        else None
    )
    trees = parallel_composition([tree_priv])  # the trees' data are disjoint: one tree's guarantee
    total = count_priv + trees if count_priv is not None else trees
    how = "noisy class counts, then trees on disjoint records (parallel composition)"
    total = Privacy(total.epsilon, total.delta, "add_remove", how)
    est._charge(accountant, total, inferred)
    est.privacy_ = est._claim(total, inferred)
    gen = check_random_state(est.random_state, "random_state")
    root = None
    if need_count:  # noisy class counts: the trees' shape, class balance and root label (:mod:`.._growing.fit`)
        root = np.asarray(noisy_counts(np.bincount(yc, minlength=C), epsilon - eps_r, gen), dtype=np.float64)
    n_hat = float(est.n_records) if root is None else max(1.0, float(root.sum()))
    n_depth = n_hat if root is None else effective_records(root)
    T = int(est.n_estimators) if est.n_estimators is not None else auto_partitions(n_depth, C, eps_r)
    part = gen.integers(0, T, size=n) if T > 1 else np.zeros(n, dtype=np.int64)
    Z = _member_matrix(schema, Xc, Xk)
    ac, ak = _anchor(schema, Xc, Xk)
    anchor = _member_matrix(schema, ac, ak)
    bounds = {int(j): (float(lo), float(hi)) for j, lo, hi in zip(schema.cont, schema.lo, schema.hi)}
    cats = {int(j): list(range(len(dom))) for j, dom in zip(schema.cat, schema.categories)}
    kw: dict[str, Any] = {
        "mechanism": mechanism,
        "epsilon": eps_r,
        "delta": delta,
        "max_depth": est.max_depth,
        "bounds": bounds or None,
        "categorical_features": cats or None,
        "classes": list(range(C)),
        "n_records": max(1, round(n_hat / T)) if root is None else None,
    }
    # each part holds about 1/T of the records: its share of the released counts, noise scale 1/(T eps_n)
    prior = None if root is None else (root / T, (epsilon - eps_r) * T)
    members, seen = [], set()
    seeds = child_random_states(est.random_state, gen, T)  # never gen itself: it drew the noise
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for t in range(T):
            rows = np.flatnonzero(part == t)
            Zt, yt = Z[rows], yc[rows]
            # T > 1: the public anchor record with label t mod C; T = 1: the anchor with a label outside the
            # classes, which the tree drops as it drops every such label (the same law, and a tree on no
            # record fits as its neighbour on one record does)
            Zt, yt = np.vstack([Zt, anchor]), np.append(yt, t % C if T > 1 else C)
            member = DPDecisionTreeClassifier(random_state=seeds[t], **kw)
            members.append(fit_tree(member, Zt, yt, None, member._validated()["mechanism"], root=prior))
    for w in caught:  # the trees' warnings (public quantities), once each
        key = (w.category, str(w.message).split(":", 1)[-1])
        if key not in seen:
            seen.add(key)
            warnings.warn(f"{type(est).__name__}: a tree says{key[1]}", w.category, stacklevel=3)
    for m in members:  # the a-priori bound charged above covers every tree
        if m.privacy_.epsilon > eps_r * (1 + 1e-12) or m.privacy_.delta > tree_priv.delta * (1 + 1e-12):
            raise RuntimeError(f"internal error: a tree spent {m.privacy_}, more than {tree_priv}")
    est._schema = schema
    est.estimators_ = members
    est.classes_ = classes
    est.n_records_ = n_hat
    est.n_estimators_ = T
    est.depth_ = max(m.depth_ for m in members)
    est.dense_ = True
    est.n_leaves_ = int(sum(m.tree_.n_leaves for m in members))
    return est


def partition_forest_proba(est: DPClassifierBase, X: ArrayLike) -> np.ndarray:
    """Mean of the trees' class probabilities.

    Parameters
    ----------
    est : DPRandomForestClassifier
        A forest fitted by :func:`fit_partition_forest`.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Samples.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        Rows sum to 1; columns follow ``est.classes_``.
    """
    check_is_fitted(est, "estimators_")
    Xc, Xk = encode_transform(est, X, est._schema)
    Z = _member_matrix(est._schema, Xc, np.where(Xk < 0, -1, Xk))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="X does not have valid feature names")
        P = sum(m.predict_proba(Z) for m in est.estimators_)
    return np.asarray(P) / len(est.estimators_)
