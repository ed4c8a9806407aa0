"""Differentially private decision tree: level-wise private CART/ID3 with public shape rules.

Neighbours are add/remove (one record added or removed).  Sources:
Friedman & Schuster, "Data mining with differential privacy", KDD 2010
(DiffP-ID3), with binary cuts and data-independent stopping
added here (their sensitivities are derived in
:mod:`dpselect.apps.trees`).

Algorithm
---------
Features are coded on a PUBLIC grid: continuous ones into ``n_bins``
equal-width bins over the public ``bounds`` (values outside go to the first
or last bin), categorical ones by their public categories
(:mod:`dpselect.apps.trees`).  The tree grows level by level; every
level costs one query per record (the nodes of a level hold disjoint
records):

* ``splits="binary"`` (default): a node's candidates are the cuts
  (feature, bin edge) of continuous features and (feature == category) of
  categorical ones that leave a possible value on both sides (a function of
  the released structure only); features stay available below.
  ``splits="multiway"``: DiffP-ID3, one child per value, the feature removed
  below.
* The split is ONE private selection per node (all of a level's nodes in one
  batched call): ``mechanism="pf"`` (default, permute-and-flip) on the
  max-operator utility (Delta = 1, monotone: noise 1/eps per unit).  The
  seeds' smooth selections ("snm_t", "snm_lln", "snm_laplace", "sps") and
  "ld", "em" stay available by name.
* A leaf releases its noisy class counts tau_c + K, K exact discrete Laplace
  of scale 1/eps_leaf on the integers (the classes
  partition the leaf: one eps_leaf query).  Near-empty leaves, and leaves
  whose counts do not favour their own label over the one they inherit by a
  standard deviation of noise, fall back to their nearest ancestor that does,
  up to the root, whose label combines the leaves' counts with the noisy class
  counts of the shape rule: the privately chosen majority class
  (post-processing, :func:`dpselect.apps.trees._growing.leaf_labels.leaf_values`).  So a
  tree without evidence predicts the majority label: the depth-0 choice is
  made privately and at no cost.
* ``stopping="depth"``: data-independent, every node above ``max_depth``
  with a possible cut splits; the budget is split evenly over the d + 1
  levels: eps_q = eps_r / (d + 1) for each split level and for the leaves.
  ``stopping="count"`` (DiffP-ID3): each node also releases a noisy count
  N_T + K' (discrete Laplace of scale 1/eps') and becomes a leaf if
  N_T / (t |C|) < sqrt(2)/eps'
  (t = 2 for binary cuts, the largest domain for multiway); eps' =
  eps_r / (2 (d + 1)).  ``"auto"`` (default) is
  "depth" for binary cuts (the shape rule already sizes the tree, and the
  leaves get twice the budget; on scikit-learn's bundled breast_cancer,
  digits, wine and iris at eps in {0.5, 1, 2} it beat "count" in 11 of 12
  cells, e.g. digits at eps = 1: 0.56 vs 0.42) and "count" for multiway
  splits (DiffP-ID3, whose branches hold very unequal numbers of records).

Shape from public quantities (never tuned on the private data)
--------------------------------------------------------------
See :mod:`dpselect.apps.trees._growing.shape` (:func:`~dpselect.apps.trees.auto_tree_depth`,
:func:`~dpselect.apps.trees.auto_n_bins`, the record-count share).

Privacy accounting
------------------
Each level is a parallel composition over its disjoint nodes
(:func:`dpselect.accounting.parallel_composition`), levels compose
sequentially, and the noisy class counts compose in front
(:func:`dpselect.accounting.tree_privacy`).  Every per-level cost is fixed
before the data are looked at, so ``privacy_`` is a-priori (the mechanisms'
own ``privacy()``); ``level_privacy_`` records the realised levels.  ``fit``
charges the accountant with (epsilon, delta used) after validating every
parameter (and, when the shape is public, building the mechanism) and before
drawing anything.  A fit whose bounds, categories, classes or info-gain
sensitivity were inferred from the training data reports no guarantee
(``privacy_.epsilon = inf``) and refuses a finite accountant.
Pure selections spend no delta; "snm_laplace"/"snm_lln" split ``delta``
evenly over the split levels.

Audits: :func:`dpselect.apps.trees._growing.nodes.binary_split_problem` and
:func:`~dpselect.apps.trees._growing.nodes.split_problem` build exactly the problem a
node builds from its records; :func:`~dpselect.apps.trees._growing.nodes.node_neighbours`
enumerates a node dataset's neighbours.  Unseen categories at prediction go
to the "!=" side of a binary cut and to the child with the largest released
mass of a multiway split.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..._docstrings import fill_doc
from ..._params import Rule, int_at_least, options
from ...accounting import Accountant
from ...typing import ArrayLike, CategoricalFeatures, FeatureBounds, SeedLike
from ._estimator import DPClassifierBase
from ._growing.fit import fit_tree
from ._growing.grow import DPTree, route
from ._growing.split_criteria import SPLIT_UTILITIES, info_gain_sensitivity
from ._params import COMMON_CONSTRAINTS, SPLITS, STOPPINGS
from ._tabular import bin_codes, encode_transform

__all__ = ["DPDecisionTreeClassifier", "DPTree"]


@fill_doc
class DPDecisionTreeClassifier(DPClassifierBase):
    """Differentially private decision tree (binary cuts or DiffP-ID3), add/remove neighbours.

    The fit is (epsilon, delta used)-DP for add/remove neighbours (one training
    record added or removed; mathematics §5.2, levels composed sequentially over
    parallel nodes).  See the module docstring for the algorithm, the shape rule
    and the accounting, and :mod:`dpselect.apps.trees` for the input conventions.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget (> 0).
    max_depth : int or None, default=None
        Depth limit d (>= 0); None chooses it from public quantities.
    mechanism : {"pf", "em", "snm_t", "snm_lln", "snm_laplace", "sps", "ld"}, default="pf"
        The private selection of each split.
    split_utility : {"max_operator", "info_gain"}, default="max_operator"
        The split score.
    splits : {"binary", "multiway"}, default="binary"
        Binary cuts, or one child per value (DiffP-ID3).
    stopping : {"auto", "depth", "count"}, default="auto"
        Data-independent depth, or noisy node counts (DiffP-ID3); "auto" is
        "depth" for binary cuts and "count" for multiway splits.
    n_bins : int or None, default=None
        Equal-width bins per continuous feature (>= 2); None chooses it.
    bounds : pair, dict or array-like, default=None
        Public (lo, hi) of the continuous features
        (:data:`~dpselect.typing.FeatureBounds`, :mod:`dpselect.apps.trees`);
        None infers them from the data: no guarantee.
    categorical_features : indices, names, mask or dict, default=None
        The categorical features and, as a dict, their public categories
        (:data:`~dpselect.typing.CategoricalFeatures`).
    delta : float, default=1e-6
        Total delta of "snm_laplace" / "snm_lln" (unused by pure mechanisms).
    n_max : int or None, default=None
        Public upper bound on the number of records (the "info_gain"
        sensitivity); None uses the number of training records: no guarantee.
    n_records : int or None, default=None
        Public number of records for the shape rule (None: noisy class
        counts at 10% of epsilon, which also give the class balance the depth
        rule weighs and the root's label).
    classes : array-like or None, default=None
        Public class labels; None infers them from y: no guarantee.
    random_state : None, int or "secure", default=None
        The randomness.  None (fresh entropy) or ``"secure"`` (the operating
        system's CSPRNG): the fitted model holds no generator, so it can be
        published.  An int seed reproduces the fit, so anyone who knows it can
        redraw the noise (reproducible, **not private**).  A numpy Generator
        or RandomState is accepted but stays in the estimator (a parameter).
    %(estimator_accountant)s
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        Training values outside the public schema: "clip" clamps continuous
        values to ``bounds`` and drops records whose category or label is
        outside its declared domain, silently (nothing observable changes);
        "raise" raises a ``ValueError`` naming the features, to find data
        errors -- **not private** (the exception tells that such a record exists).

    Attributes
    ----------
    %(fitted_features)s
    tree_ : DPTree
        The released tree.
    privacy_ : Privacy
        The fit's guarantee: epsilon = inf when bounds, categories, classes or
        the info-gain sensitivity were inferred from the training data.
    level_privacy_ : list of Privacy
        The guarantee of each realised level.
    epsilon_per_query_ : float
        Budget of each level's queries.
    depth_, n_bins_ : int
        The shape used.
    stopping_ : str
        The stopping rule used.
    n_records_ : float or None
        The public or noisy record count used for the shape (a noisy count
        is the sum of the noisy class counts, integers: exact discrete
        Laplace, see :func:`~dpselect.apps.trees._growing.grow.noisy_counts`).

    See Also
    --------
    DPRandomForestClassifier : Private forest: greedy private trees on disjoint parts (default) or ...
    auto_tree_depth : Largest d <= cap with n / b^d >= 4 (1 + ln C) / eps_leaf(d) (module docstring; public ...

    Notes
    -----
    %(preprocessing_note)s

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 1, size=(2000, 3)); y = (X[:, 0] > 0.5).astype(int)
    >>> clf = DPDecisionTreeClassifier(epsilon=1.0, bounds=(0, 1), classes=[0, 1], random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9), round(clf.privacy_.epsilon, 12)
    (True, 1.0)
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        **COMMON_CONSTRAINTS,
        "max_depth": int_at_least(0, none=True),
        "split_utility": options(*SPLIT_UTILITIES),
        "splits": options(*SPLITS),
        "stopping": options(*STOPPINGS),
        "n_bins": int_at_least(2, none=True),
        "n_max": int_at_least(1, none=True),
        "n_records": int_at_least(1, none=True),
    }

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        max_depth: int | None = None,
        mechanism: str = "pf",
        split_utility: str = "max_operator",
        splits: str = "binary",
        stopping: str = "auto",
        n_bins: int | None = None,
        bounds: FeatureBounds | None = None,
        categorical_features: CategoricalFeatures | None = None,
        delta: float = 1e-6,
        n_max: int | None = None,
        n_records: int | None = None,
        classes: ArrayLike | None = None,
        random_state: SeedLike = None,
        accountant: Accountant | None = None,
        on_out_of_bounds: str = "clip",
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.mechanism = mechanism
        self.split_utility = split_utility
        self.splits = splits
        self.stopping = stopping
        self.n_bins = n_bins
        self.bounds = bounds
        self.categorical_features = categorical_features
        self.delta = delta
        self.n_max = n_max
        self.n_records = n_records
        self.classes = classes
        self.random_state = random_state
        self.accountant = accountant
        self.on_out_of_bounds = on_out_of_bounds

    # ------------------------------------------------------------------- fit
    def _ig_sensitivity(self, n: int, inferred: list[str]) -> float:
        if self.split_utility != "info_gain":
            return 1.0
        if self.n_max is None:
            inferred.append("the information-gain sensitivity (n_max=None: the number of training records)")
            return info_gain_sensitivity(n)
        if self.n_max < n:
            raise ValueError(
                f"{type(self).__name__}: n_max={self.n_max} is smaller than the number of training samples"
            )
        return info_gain_sensitivity(int(self.n_max))

    @fill_doc
    def fit(self, X: ArrayLike, y: ArrayLike, accountant: Accountant | None = None) -> DPDecisionTreeClassifier:
        """Grow the private tree on (X, y).

        Parameters
        ----------
        %(training_records)s
        accountant : Accountant or None, default=None
            Charged instead of the constructor's (both given: they must be the
            same object).  The charge happens after every parameter and the
            shape are validated and before any randomness is drawn.

        Returns
        -------
        DPDecisionTreeClassifier
            The fitted estimator.
        """
        mechanism = self._validated()["mechanism"]
        budget = self._budget(accountant)
        return fit_tree(self, X, y, budget, mechanism)

    def _codes_matrix(self, Xc: np.ndarray, Xk: np.ndarray) -> np.ndarray:
        sch = self._schema
        if not sch.cat.size:
            return bin_codes(Xc, sch.lo, sch.hi, self.n_bins_)
        Z = np.empty((Xc.shape[0], sch.n_features), dtype=np.int64)
        if sch.cont.size:
            Z[:, sch.cont] = bin_codes(Xc, sch.lo, sch.hi, self.n_bins_)
        if sch.cat.size:
            Z[:, sch.cat] = Xk
        return Z

    # --------------------------------------------------------------- predict
    def _leaves(self, X: ArrayLike) -> np.ndarray:
        check_is_fitted(self, "tree_")
        Xc, Xk = encode_transform(self, X, self._schema)
        Z = self._codes_matrix(Xc, np.where(Xk < 0, -1, Xk))
        return route(self.tree_, Z, np.isin(np.arange(Z.shape[1]), self._schema.cont))

    @fill_doc
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """The released class frequencies of each sample's leaf.

        Post-processing of the leaves' noisy class counts (no further privacy
        cost): the counts of the leaf, or of its nearest ancestor whose summed
        noisy counts are at least twice their noise and favour its own label over
        the inherited one by a standard deviation of noise (up to the root's
        majority label) when the leaf's own do not, clipped at 0 and normalised
        (:func:`~dpselect.apps.trees._growing.leaf_labels.leaf_values`).
        A class whose noisy count fell below 0 gets probability 0, so
        well-separated leaves give exactly 0 and 1.

        %(samples_X)s
        ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns follow ``classes_``.
        """
        check_is_fitted(self, "tree_")
        return self.tree_.value[self._leaves(X)]

    @fill_doc
    def apply(self, X: ArrayLike) -> np.ndarray:
        """Index (row of ``tree_.leaf_counts``) of the leaf each sample lands in.

        %(samples_X)s
        ndarray of int of shape (n_samples,)
            The leaf index of each sample.
        """
        return self._leaves(X)
