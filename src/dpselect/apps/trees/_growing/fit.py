"""The fit of :class:`~.._tree.DPDecisionTreeClassifier`: budget, shape, charge, growth, claims.

:func:`fit_tree` splits the budget (the record count in front when the shape needs one), plans the
shape (:mod:`.shape`), charges the accountant before any randomness is drawn, grows the tree
level by level (:mod:`.grow`) and records the guarantee of the fit and of each realised level.  The
algorithm and its accounting are described in :mod:`.._tree`.
"""

from __future__ import annotations

import warnings
from typing import TypeVar

import numpy as np

from ...._docstrings import fill_doc
from ...._validation import check_random_state
from ....accounting import Accountant, tree_privacy
from ....mechanisms import APPROXIMATE_NAMES
from ....privacy import Privacy
from ....typing import ArrayLike
from .._estimator import DPClassifierBase
from .._tabular import encode_training
from .grow import GrowSpec, grow, noisy_counts
from .shape import RECORD_COUNT_SHARE, TreePlan, effective_records, plan_tree

#: The tree estimator :func:`fit_tree` fits and returns.
E = TypeVar("E", bound=DPClassifierBase)

__all__ = ["fit_tree"]


@fill_doc
def fit_tree(
    est: E,
    X: ArrayLike,
    y: ArrayLike,
    accountant: Accountant | None,
    mechanism: str,
    *,
    root: tuple[np.ndarray, float] | None = None,
) -> E:
    """Fit ``est`` (a private decision tree, see :mod:`.._tree`) on (X, y).

    ``est``'s parameters have been validated (``est._validated()``) and ``accountant`` is
    the budget its fit charges (``est._budget(...)``).  A public shape is planned (and so
    validated) before the charge; a noisy one after the record count it needs.

    Parameters
    ----------
    est : DPDecisionTreeClassifier
        The tree, its parameters validated.
    %(training_records_budget)s
    mechanism : str
        The split selection (a name of :func:`dpselect.mechanisms.make_mechanism`).
    root : (ndarray of shape (C,), float) or None, default=None
        Noisy class counts of (X, y) already released and charged by the caller
        (a forest), with the epsilon of their noise: the shape and the root's
        label use them and the tree spends nothing on its own count.

    Returns
    -------
    DPDecisionTreeClassifier
        ``est``, fitted (``tree_``, ``privacy_``, ``level_privacy_``, ``classes_``, the
        shape attributes).
    """
    epsilon, delta = float(est.epsilon), float(est.delta)
    stopping = est.stopping if est.stopping != "auto" else ("depth" if est.splits == "binary" else "count")
    counting = stopping == "count"
    schema, Xc, Xk, classes, yc = encode_training(est, X, y, est.bounds, est.categorical_features)
    n = Xc.shape[0]
    inferred = est._inferred(schema)
    gs = est._ig_sensitivity(n, inferred)
    est._warn(inferred, stacklevel=4)  # called from the tree's fit
    C = max(int(classes.size), 1)
    delta_used = delta if mechanism in APPROXIMATE_NAMES else 0.0
    count_priv = None
    eps_r = epsilon
    noisy_shape = root is None and est.n_records is None and (est.max_depth is None or est.n_bins is None)
    n_hat = float(est.n_records) if est.n_records is not None else float("nan")
    n_depth = None
    if root is not None:
        n_hat, n_depth = max(1.0, float(np.sum(root[0]))), effective_records(root[0])
    if noisy_shape:
        eps_n = RECORD_COUNT_SHARE * epsilon
        count_priv = Privacy(
            eps_n, 0.0, "add_remove", "discrete Laplace noisy class counts (the classes partition the records)"
        )
        eps_r = epsilon - eps_n
    # a public shape is planned (and so validated) before the charge; a noisy one after the counts it needs
    plan: TreePlan | None = (
        None if noisy_shape else plan_tree(est, schema, C, n_hat, eps_r, mechanism, delta, counting, gs, n_depth)
    )
    est._charge(accountant, Privacy(epsilon, delta_used, "add_remove", type(est).__name__), inferred)
    gen = check_random_state(est.random_state, "random_state")
    if noisy_shape:
        root = (np.asarray(noisy_counts(np.bincount(yc, minlength=C), epsilon - eps_r, gen), dtype=np.float64), eps_n)
        n_hat, n_depth = max(1.0, float(root[0].sum())), effective_records(root[0])
        plan = plan_tree(est, schema, C, n_hat, eps_r, mechanism, delta, counting, gs, n_depth)
    assert plan is not None
    est._schema = schema
    est.n_bins_, est.depth_, est.stopping_ = plan.n_bins, plan.depth, stopping
    est.privacy_ = est._claim(tree_privacy(plan.levels, count_priv), inferred)
    est.epsilon_per_query_ = plan.eps_q
    est.n_records_ = n_hat if est.n_records is not None or root is not None else None
    p = schema.n_features
    spec = GrowSpec(
        plan.depth,
        est.splits == "binary",
        counting,
        plan.eps_q,
        plan.eps_q,
        plan.mech,
        plan.kind,
        est.split_utility,
        gs,
        plan.n_values,
        np.isin(np.arange(p), schema.cont),
        C,
        root_prior=root,
    )
    est.tree_ = grow(est._codes_matrix(Xc, Xk), yc, spec, gen)
    realised = np.bincount(est.tree_.depth)
    levels = plan.levels
    est.level_privacy_ = [est._claim(levels[min(d, len(levels) - 1)], inferred) for d in range(realised.size)]
    est.classes_ = classes
    if C > 1 and np.unique(np.argmax(est.tree_.value, axis=1)).size == 1:  # a function of the released tree
        warnings.warn(
            f"{type(est).__name__}: the fitted tree predicts the same class for every sample (a single leaf, or "
            f"leaves whose noisy counts fell back to the root's label) at epsilon={epsilon} and depth {plan.depth}: "
            "increase epsilon or give more records.",
            UserWarning,
            stacklevel=3,  # the tree's fit's caller
        )
    return est
