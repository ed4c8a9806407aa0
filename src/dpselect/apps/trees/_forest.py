"""Differentially private forests: private greedy trees on disjoint parts (default), or Fletcher–Islam.

``algorithm="trees"`` (default) is the partition ensemble of private greedy
trees of :mod:`dpselect.apps.trees._ensemble` (as many trees as the records
allow without losing depth; one tree on small budgets).
``algorithm="fletcher_islam"`` is the random decision forest of Fletcher &
Islam (ESWA 2017), kept for the paper's reproduction and described below.

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
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..._validation import check_random_state
from ..._warnings import PrivacyLeakWarning
from ...accounting import Accountant, forest_privacy
from ...mechanisms import APPROXIMATE_NAMES, make_mechanism
from ...privacy import Privacy
from ...problem import SelectionProblem
from ...typing import ArrayLike, CategoricalFeatures, FeatureBounds, SeedLike
from ..counts import majority_problem
from ._ensemble import fit_partition_forest, partition_forest_proba
from ._estimator import DPClassifierBase
from ._forest_structure import (
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
from ._grow import noisy_counts
from ._nodes import select_nodes
from ._params import ALGORITHMS, LEAF_UTILITIES
from ._tabular import encode_training, encode_transform
from ._tree import RECORD_COUNT_SHARE

__all__ = [
    "ALGORITHMS",
    "DPRandomForestClassifier",
    "DENSE_LEAF_LIMIT",
    "LEAF_UTILITIES",
    "auto_forest_depth",
    "auto_n_estimators",
    "fletcher_islam_depth",
    "leaf_problem",
    "problem_key",
]

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
        return SelectionProblem(np.asarray(counts, dtype=np.float64), global_sensitivity=1.0, monotone=True,
                                relation="add_remove")
    raise ValueError(f"leaf_utility must be one of {LEAF_UTILITIES}, got {leaf_utility!r}")


class DPRandomForestClassifier(DPClassifierBase):
    """Private forest: greedy private trees on disjoint parts (default) or Fletcher–Islam random trees.

    See the module docstring for the algorithms, accounting and representation.
    **With the defaults the forest is usually one private tree**: ``n_estimators=None`` makes
    as many disjoint parts as cost no depth (:func:`~dpselect.apps.trees.auto_partitions`),
    which is one below about a million records (``n_estimators_`` tells).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget (> 0).  "fletcher_islam": every leaf query uses all of
        it; "trees": every tree does (parallel composition).  Less the noisy
        record count's share when the shape rule needs one.
    n_estimators : int or None, default=None
        Number of trees (>= 1; "trees": the number of disjoint parts); None
        chooses it (shape rule).
    max_depth : int or None, default=None
        Depth of every tree; None chooses it (shape rule).
    mechanism : {"pf", "em", "snm_t", "snm_lln", "snm_laplace", "sps", "ld"}, default="pf"
        The leaf-label selection ("fletcher_islam") or the trees' split
        selection ("trees").
    bounds : pair, dict or array-like, default=None
        Public bounds of the continuous features
        (:data:`~dpselect.typing.FeatureBounds`, :mod:`dpselect.apps.trees`);
        None infers them from the data: no guarantee.
    categorical_features : indices, names, mask or dict, default=None
        The categorical features and, as a dict, their public categories
        (:data:`~dpselect.typing.CategoricalFeatures`).
    delta : float, default=1e-6
        Delta of each leaf query (or tree) for "snm_laplace" / "snm_lln" (the
        total, by parallel composition).
    classes : array-like or None, default=None
        Public class labels; None infers them from y: no guarantee.
    leaf_utility : {"count", "indicator"} or None, default=None
        "fletcher_islam" only (the "trees" release noisy leaf counts: leave
        it None).  "count" (the class counts, Delta = 1, monotone; only with
        "em" or "pf", since a count's local sensitivity is 1 at every
        distance) or "indicator" (the argmax indicator of
        :mod:`dpselect.apps.counts`, as Fletcher–Islam and SNM; it cannot
        tell a 1-0 count from a 100-0 one).  None: "count" for "em"/"pf",
        "indicator" for the others.
    n_records : int or None, default=None
        Public number of records for the shape rule (None: a noisy count).
    random_state : None, int or "secure", default=None
        The randomness, as :class:`~dpselect.apps.trees.DPDecisionTreeClassifier`'s:
        None or ``"secure"`` leave no generator in the fitted forest (its trees
        get the same value); an int seed reproduces the fit (the trees get
        fresh int seeds drawn from it: reproducible, **not private**).
    algorithm : {"trees", "fletcher_islam"}, default="trees"
        "trees": private greedy trees on disjoint parts of the records
        (:mod:`dpselect.apps.trees._ensemble`); "fletcher_islam":
        random-structure trees with private leaf labels (Fletcher & Islam
        2017, described in the module docstring).
    accountant : Accountant or None, default=None
        The budget every fit is charged to before drawing any randomness
        (carried by ``clone``, so ``GridSearchCV`` charges every fit to it).
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        Training values outside the public schema, as for
        :class:`~dpselect.apps.trees.DPDecisionTreeClassifier` ("raise" is
        not private).
    selection : str or None, default=None
        Deprecated alias of ``mechanism`` (a ``DeprecationWarning`` at fit).

    Attributes
    ----------
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Number of features seen at fit.
    feature_names_in_ : ndarray
        Column names of a DataFrame input.
    privacy_ : Privacy
        The fit's guarantee ("fletcher_islam": one leaf query's; "trees": one
        tree's), plus the record count if one was spent; epsilon = inf when
        bounds, categories or classes were inferred from the training data.
    algorithm_ : str
        The algorithm used.
    depth_, n_estimators_ : int
        The shape used ("trees": the deepest tree, the number of parts).
    n_records_ : float or None
        The public or noisy record count used for the shape.
    dense_ : bool
        Whether every leaf's label is stored (see the module docstring;
        always True for "trees").
    n_leaves_ : int or None
        Total number of leaves when ``dense_``, else None.
    estimators_ : list of DPDecisionTreeClassifier
        The fitted trees ("trees" only).

    References
    ----------
    Fletcher & Islam, "Differentially private random decision forests using
    smooth sensitivity", Expert Systems with Applications 78, 2017.
    McSherry, "Privacy integrated queries", SIGMOD 2009, Theorem 4 (parallel
    composition).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(4000, 2)); y = (X[:, 0] > 0.5).astype(int)
    >>> rf = DPRandomForestClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, y)
    >>> bool(rf.score(X, y) > 0.8), round(rf.privacy_.epsilon, 12)
    (True, 1.0)
    """

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        n_estimators: int | None = None,
        max_depth: int | None = None,
        mechanism: str = "pf",
        bounds: FeatureBounds | None = None,
        categorical_features: CategoricalFeatures | None = None,
        delta: float = 1e-6,
        classes: ArrayLike | None = None,
        leaf_utility: str | None = None,
        n_records: int | None = None,
        random_state: SeedLike = None,
        algorithm: str = "trees",
        accountant: Accountant | None = None,
        on_out_of_bounds: str = "clip",
        selection: str | None = None,
    ) -> None:
        self.epsilon = epsilon
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.mechanism = mechanism
        self.bounds = bounds
        self.categorical_features = categorical_features
        self.delta = delta
        self.classes = classes
        self.leaf_utility = leaf_utility
        self.n_records = n_records
        self.random_state = random_state
        self.algorithm = algorithm
        self.accountant = accountant
        self.on_out_of_bounds = on_out_of_bounds
        self.selection = selection

    # ------------------------------------------------------------ structure
    def _select_labels(self, counts: np.ndarray, mech: Any, gen: np.random.Generator) -> np.ndarray:
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
        if self.leaf_utility_ == "count":  # a global-sensitivity selection: every leaf in one batched call
            template = leaf_problem(np.zeros(C, dtype=np.int64), "count")
            return select_nodes(mech, counts.astype(np.float64), np.ones(counts.shape, dtype=bool), template, gen,
                                lambda i: leaf_problem(counts[i], "count"))
        perm = np.argsort(-counts, axis=1, kind="stable")
        srt = np.take_along_axis(counts, perm, axis=1)
        key = problem_key(srt) if self.leaf_utility_ == "indicator" else srt
        _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        order = np.argsort(inv, kind="stable")
        sizes = np.bincount(inv, minlength=first.size)
        draws = [np.asarray(mech.select(leaf_problem(srt[i], self.leaf_utility_), size=int(k), rng=gen))
                 for i, k in zip(first, sizes)]
        pos = np.empty(L, dtype=np.int64)
        pos[order] = np.concatenate(draws)
        labels[:] = perm[np.arange(L), pos]
        return labels

    def fit(self, X: ArrayLike, y: ArrayLike, accountant: Accountant | None = None) -> DPRandomForestClassifier:
        """Build the forest on (X, y) with ``algorithm``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training records.
        y : array-like of shape (n_samples,)
            Class labels.
        accountant : Accountant or None, default=None
            Charged instead of the constructor's (both given: they must be the
            same object), after every parameter is validated and before any
            randomness is drawn.

        Returns
        -------
        DPRandomForestClassifier
            The fitted estimator.
        """
        mechanism = self._validated()["mechanism"]
        budget = self._budget(accountant)
        if self.algorithm == "trees":
            if self.leaf_utility is not None:
                raise ValueError(f"{type(self).__name__}: leaf_utility applies to algorithm='fletcher_islam' only "
                                 f"(the trees release noisy leaf counts), got leaf_utility={self.leaf_utility!r}")
            self.algorithm_ = self.algorithm
            return fit_partition_forest(self, X, y, budget, mechanism)
        self.algorithm_ = self.algorithm
        epsilon, delta = float(self.epsilon), float(self.delta)
        leaf_utility = self.leaf_utility
        if leaf_utility is None:
            leaf_utility = "count" if mechanism in ("em", "pf") else "indicator"
        if leaf_utility == "count" and mechanism not in ("em", "pf"):
            raise ValueError(f"{type(self).__name__}: leaf_utility='count' needs mechanism='em' or 'pf' (a count's "
                             "local sensitivity is always 1, so smooth-sensitivity mechanisms cannot improve on "
                             "them)")
        schema, Xc, Xk, classes, yc = encode_training(self, X, y, self.bounds, self.categorical_features)
        n = Xc.shape[0]
        inferred = self._inferred(schema)
        self._warn(inferred)
        C = int(classes.size)
        need_count = self.n_records is None and (self.n_estimators is None or self.max_depth is None)
        eps_leaf = epsilon * (1.0 - RECORD_COUNT_SHARE) if need_count else epsilon
        mech = make_mechanism(mechanism, eps_leaf, delta if mechanism in APPROXIMATE_NAMES else 0.0)
        self.leaf_utility_ = leaf_utility
        zero_problem = leaf_problem(np.zeros(C, dtype=np.int64), leaf_utility)
        count_priv = (Privacy(epsilon - eps_leaf, 0.0, "add_remove", "discrete Laplace noisy record count")
                      if need_count else None)
        privacy = forest_privacy(mech.privacy(zero_problem), count_priv)
        self._charge(budget, privacy, inferred)
        self.privacy_ = self._claim(privacy, inferred)
        gen = check_random_state(self.random_state, "random_state")
        self._schema = schema
        n_hat = float(self.n_records) if self.n_records is not None else None
        if need_count:
            n_hat = max(1.0, noisy_counts(n, epsilon - eps_leaf, gen))
        self.n_records_ = n_hat
        fi = fletcher_islam_depth(schema.cont.size, schema.cat.size)
        n_est = int(self.n_estimators) if self.n_estimators is not None else auto_n_estimators(n_hat or 1.0)
        self.n_estimators_ = n_est
        self.depth_ = int(self.max_depth) if self.max_depth is not None else auto_forest_depth(n_hat or 1.0, n_est, fi)
        if n_hat is not None and n_hat / (n_est * 2.0 ** self.depth_) < SPARSE_LEAVES:
            warnings.warn(
                f"{type(self).__name__}: about {n_hat:.0f} records over {n_est} trees of depth {self.depth_} "
                f"leave most leaves empty (about {n_hat / (n_est * 2.0 ** self.depth_):.3g} records per leaf), "
                "and empty leaves vote at random: lower max_depth or n_estimators (or leave them None).",
                UserWarning,
                stacklevel=2,
            )
        seed = gen.integers(0, 2**63 - 1, size=2, dtype=np.int64).astype(np.uint64)
        self._roots = root_ids(seed, n_est)
        tree_of = gen.integers(0, n_est, size=n)
        leaf_ids, _ = descend(schema, self.depth_, self._roots[tree_of], Xc, Xk)
        occupied, inv = sort_unique(leaf_ids, return_inverse=True)
        counts = np.bincount(inv * C + yc, minlength=occupied.size * C).reshape(occupied.size, C)
        labels = self._select_labels(counts, mech, gen)
        # exact output distribution of a leaf without records (uniform for every selection here)
        p0 = np.exp(mech.log_probabilities(zero_problem)) if C > 1 else np.ones(1)
        p0 = p0 / p0.sum()

        all_leaves = enumerate_leaves(schema, self.depth_, self._roots, DENSE_LEAF_LIMIT)
        self.dense_ = all_leaves is not None
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
            self._leaf_ids, self._leaf_labels = all_leaves, full
            self._empty_cdf = None
        else:
            warnings.warn(
                f"{type(self).__name__}: the forest's structure has more than {DENSE_LEAF_LIMIT} leaves, so only "
                "the leaves reached by training records are stored. Predictions are differentially private, but "
                "the fitted object reveals which leaves are occupied: do not publish it (e.g. pickled).",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            self._leaf_ids, self._leaf_labels = occupied, labels
            self._empty_cdf = np.cumsum(p0)
            self._empty_salt = SALT_LABEL ^ mix(seed[1:])[0]
        self.classes_ = classes
        self.n_leaves_ = int(self._leaf_ids.size) if self.dense_ else None
        return self

    # -------------------------------------------------------------- predict
    def _votes(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "_leaf_ids")
        Xc, Xk = encode_transform(self, X, self._schema)
        n, T, C = Xc.shape[0], self._roots.size, self.classes_.size
        votes = np.zeros((n, C))
        step = max(1, ROW_CHUNK // T)
        for s0 in range(0, n, step):
            s1 = min(n, s0 + step)
            smp = np.repeat(np.arange(s0, s1), T)
            ids, alive = descend(self._schema, self.depth_, np.tile(self._roots, s1 - s0), Xc[smp], Xk[smp])
            pos = np.minimum(np.searchsorted(self._leaf_ids, ids), self._leaf_ids.size - 1)
            found = self._leaf_ids[pos] == ids
            lab = self._leaf_labels[pos]
            if not found.all():
                miss = ~found
                u = uniform(ids[miss], self._empty_salt)
                cdf = np.asarray(self._empty_cdf)  # set whenever leaves can be missing (sparse storage)
                lab[miss] = np.minimum(np.searchsorted(cdf, u, side="right"), C - 1)
            votes[s0:s1] = np.bincount((smp[alive] - s0) * C + lab[alive], minlength=(s1 - s0) * C).reshape(-1, C)
        return votes

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Share of the trees' votes for each class (uniform if no tree votes); "trees": their mean probabilities.

        Each leaf releases one privately selected label, not class counts
        (the selection is the whole leaf query, so its budget is not split
        with a count release), so a single tree's vote is 0 or 1 and the
        probabilities are the vote shares over the trees: post-processing
        of released labels, in steps of 1 / n_estimators_.  Leaf class
        frequencies would need noisy counts per leaf, another query on the
        same records.  With ``algorithm="trees"`` the trees release noisy
        leaf class counts, and the probabilities are the mean of the trees'.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns follow ``classes_``.
        """
        check_is_fitted(self, "algorithm_")
        if self.algorithm_ == "trees":
            return partition_forest_proba(self, X)
        votes = self._votes(X)
        tot = votes.sum(axis=1, keepdims=True)
        return np.where(tot > 0, votes / np.where(tot > 0, tot, 1.0), 1.0 / votes.shape[1])

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The class with the most votes (first on ties); "trees": the largest mean probability.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The argmax of :meth:`predict_proba` (the first class on ties),
            as labels of ``classes_``.
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
