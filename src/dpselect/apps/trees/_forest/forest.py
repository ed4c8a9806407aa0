"""Differentially private forests: private greedy trees on disjoint parts (default), or Fletcher–Islam.

``algorithm="trees"`` (default) is the partition ensemble of private greedy
trees of :mod:`dpselect.apps.trees._forest.ensemble` (as many trees as the records
allow without losing depth; one tree on small budgets).
``algorithm="fletcher_islam"`` is the random decision forest of Fletcher &
Islam (ESWA 2017), kept for the paper's reproduction and described below.

Fletcher–Islam trees, their leaf labels and their accounting are in
:mod:`dpselect.apps.trees._forest.fletcher_islam`; the partition ensemble in
:mod:`dpselect.apps.trees._forest.ensemble`.  Both are (epsilon, delta)-DP for add/remove
neighbours by parallel composition over disjoint records (mathematics §11.1 for the
trees, mathematics §5.3 for Fletcher–Islam with its caveats fixed).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ...._docstrings import fill_doc
from ...._params import Rule, int_at_least, options
from ....accounting import Accountant
from ....typing import ArrayLike, CategoricalFeatures, FeatureBounds, SeedLike
from .._estimator import DPClassifierBase
from .._params import ALGORITHMS, COMMON_CONSTRAINTS, LEAF_UTILITIES
from .ensemble import fit_partition_forest, partition_forest_proba
from .fletcher_islam import fit_fletcher_islam, forest_votes
from .structure import auto_forest_depth, auto_n_estimators, fletcher_islam_depth

__all__ = ["DPRandomForestClassifier", "auto_forest_depth", "auto_n_estimators", "fletcher_islam_depth"]


@fill_doc
class DPRandomForestClassifier(DPClassifierBase):
    """Private forest: greedy private trees on disjoint parts (default) or Fletcher–Islam random trees.

    The fit is (epsilon, delta)-DP for add/remove neighbours (one training record added
    or removed): the trees on disjoint parts by mathematics §11.1, Fletcher–Islam's
    leaf queries by parallel composition (mathematics §5.3).  See
    :mod:`dpselect.apps.trees._forest.ensemble` and :mod:`dpselect.apps.trees._forest.fletcher_islam`
    for the algorithms, accounting and representation.
    **With the defaults the forest is one private tree below about a million records**:
    ``n_estimators=None`` makes as many disjoint parts as cost no depth
    (:func:`~dpselect.apps.trees.auto_partitions`), which is one below about 10^6
    records (``n_estimators_ = 1``).  Such a forest *is* the default
    :class:`~dpselect.apps.trees.DPDecisionTreeClassifier` (the same noisy class
    counts, shape and leaf labels), and so has its accuracy: under pure DP two or
    four trees on halves or quarters of the records lost to one tree on all of them
    in most measured cells (:mod:`dpselect.apps.trees._forest.ensemble`).  Use the tree
    unless the data hold millions of records.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget (> 0).  "fletcher_islam": every leaf query uses all of
        it; "trees": every tree does (parallel composition).  Less the noisy
        noisy class counts' share when the shape rule needs one.
    n_estimators : int or None, default=None
        Number of trees (>= 1; "trees": the number of disjoint parts); None
        chooses it (shape rule).
    max_depth : int or None, default=None
        Depth of every tree; None chooses it (shape rule).
    mechanism : {"pf", "em", "snm_t", "snm_lln", "snm_laplace", "sps", "ld"}, default="pf"
        The leaf-label selection ("fletcher_islam") or the trees' split
        selection ("trees").
    %(feature_schema)s
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
        (:mod:`dpselect.apps.trees._forest.ensemble`); "fletcher_islam":
        random-structure trees with private leaf labels (Fletcher & Islam
        2017, described in the module docstring).
    %(estimator_accountant)s
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        Training values outside the public schema, as for
        :class:`~dpselect.apps.trees.DPDecisionTreeClassifier` ("raise" is
        not private).

    Attributes
    ----------
    %(fitted_features)s
    privacy_ : Privacy
        The fit's guarantee ("fletcher_islam": one leaf query's; "trees": one
        tree's), plus the class counts if they were spent; epsilon = inf when
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

    See Also
    --------
    DPDecisionTreeClassifier : Differentially private decision tree (binary cuts or DiffP-ID3), add/remove ...
    auto_forest_depth : Default depth: min(Fletcher–Islam depth, floor(log2(n / T)) + 2) (public inputs only)

    Notes
    -----
    %(preprocessing_note)s

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

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        **COMMON_CONSTRAINTS,
        "n_estimators": int_at_least(1, none=True),
        "max_depth": int_at_least(0, none=True),
        "leaf_utility": options(*LEAF_UTILITIES, none=True),
        "n_records": int_at_least(1, none=True),
        "algorithm": options(*ALGORITHMS),
    }

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

    @fill_doc
    def fit(self, X: ArrayLike, y: ArrayLike, accountant: Accountant | None = None) -> DPRandomForestClassifier:
        """Build the forest on (X, y) with ``algorithm``.

        Parameters
        ----------
        %(training_records)s
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
        if self.algorithm == "trees" and self.leaf_utility is not None:
            raise ValueError(
                f"{type(self).__name__}: leaf_utility applies to algorithm='fletcher_islam' only "
                f"(the trees release noisy leaf counts), got leaf_utility={self.leaf_utility!r}"
            )
        self.algorithm_ = self.algorithm
        if self.algorithm == "trees":
            return fit_partition_forest(self, X, y, budget, mechanism)
        return fit_fletcher_islam(self, X, y, budget, mechanism)

    # -------------------------------------------------------------- predict
    @fill_doc
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

        %(samples_X)s
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns follow ``classes_``.
        """
        check_is_fitted(self, "algorithm_")
        if self.algorithm_ == "trees":
            return partition_forest_proba(self, X)
        votes = forest_votes(self, X)
        tot = votes.sum(axis=1, keepdims=True)
        return np.where(tot > 0, votes / np.where(tot > 0, tot, 1.0), 1.0 / votes.shape[1])
