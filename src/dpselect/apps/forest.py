"""Differentially private random decision forest (Fletcher & Islam, ESWA 2017).

Algorithm (SPEC.md §5.3, with its privacy caveats fixed)
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
  chunk; SPEC §5.3 caveat (ii), errata 22).  With independent draws, adding
  or removing one record changes exactly one tree's data by that record.
* **Private leaf labels.**  Each leaf's label is one private selection of the
  majority class from the leaf's OWN class counts through
  :mod:`dpselect.apps.majority` (argmax-indicator utility, tie set,
  add/remove; smooth sensitivity e^{-beta max(g - 1, 0)} from the leaf's
  gap g, SPEC §4.2).  Fletcher–Islam's EM with S = e^{-j eps} in place of the
  global sensitivity is not DP (SNM Thm 7.2), and SNM's reproduction code
  used one S computed on the whole dataset for every leaf (SPEC §5.3 caveat
  (iii)); here every leaf uses its own counts.  Extension:
  ``leaf_utility="count"`` selects with the class counts themselves as
  utilities (global sensitivity 1, monotone under add/remove) through the
  exponential mechanism or permute-and-flip, as diffprivlib does.
* **Accounting.**  Leaves of a tree partition its records and the trees'
  data are disjoint, so by parallel composition the whole forest costs what
  one leaf query costs: every leaf query gets the full (epsilon, delta), and
  ``privacy_`` is that one query's guarantee (the mechanism's own
  ``privacy()`` on a |C|-candidate majority problem; data-independent).
* **Depth** (Fletcher–Islam "Theorem 2", balls in bins): with m_c continuous
  and m_k categorical attributes, d_c = the smallest d with
  m_c ((m_c - 1)/m_c)^d <= m_c / 2 (= ceil(ln(1/2) / ln(1 - 1/m_c))), and the
  default depth is floor(d_c + m_k / 2) (floor(m_k / 2) if m_c = 0), capped
  at 15.  Note (SPEC §5.3): both public implementations' loops return
  d_c + 1 (they increment after the test), one more than the formula; we
  follow the formula.
* **Prediction.**  Every tree votes its leaf's label; ``predict_proba`` is the
  share of votes and ``predict`` its argmax (first class on ties).  A sample
  with a category outside a feature's public domain, at a node that splits
  on that feature, gets no vote from that tree; with no votes at all the
  probabilities are uniform.

Representation
--------------
The structure is generated from a counter-based hash (splitmix64) of the
node's id, itself a hash of (structure seed, tree, path), so it never needs
to be stored: training records and test samples descend the same implicit
trees, vectorised over (sample, tree) rows, each row carrying its current
sub-interval of every continuous attribute.  Leaf labels are stored in a
sorted table keyed by the leaf's 64-bit id (looked up with searchsorted).
(Two distinct nodes share an id with probability about (number of
nodes)^2 / 2^65: negligible.)

* When the whole structure has at most ``DENSE_LEAF_LIMIT`` leaves (e.g.
  32 trees of depth 15 on continuous data) the table holds the label of
  EVERY leaf; an empty leaf's label is the same private selection on
  all-zero counts, drawn (from the fit's secret generator) from the
  mechanism's exact output distribution on that problem (uniform for every
  selection here).  The fitted object then holds nothing but released values
  (the structure seed only determines the data-independent structure).
* Otherwise (deep trees over many categorical attributes, whose structure
  is astronomically large) only the leaves reached by training records are
  stored; the label of any other leaf is drawn, deterministically from a
  stored seed, from the same distribution on all-zero counts.  Predictions
  have exactly the same distribution as with the full table, **but the
  fitted object's leaf table reveals which leaves received training
  records**: do not publish the fitted object itself (a PrivacyLeakWarning
  says so).  ``dense_`` tells which case applies.

Leaf selections are batched: rows of leaf counts that define the same problem
(after sorting the counts, every selection being permutation-equivariant)
share one ``mech.select(problem, size=k)`` call.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._validation import check_int
from .._warnings import PrivacyLeakWarning
from ..privacy import Privacy
from ..problem import SelectionProblem
from . import majority
from .tree import (
    BaseEstimator,
    ClassifierMixin,
    _check_common,
    _encode_fit,
    _encode_transform,
    _encode_y,
    _generator,
    check_is_fitted,
    make_mechanism,
)

__all__ = [
    "DPRandomForestClassifier",
    "DENSE_LEAF_LIMIT",
    "LEAF_UTILITIES",
    "fletcher_islam_depth",
    "leaf_problem",
    "problem_key",
]

#: Largest number of leaves (counted level by level with the frontier) for which every leaf's label is stored.
DENSE_LEAF_LIMIT = 1 << 21
_ROW_CHUNK = 1 << 18  # (sample, tree) pairs processed at once in predict
_BLOCK_ELEMENTS = 1 << 22  # rows x attributes of per-row interval state in one descent block

_G = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SALT_ATTR = np.uint64(0x243F6A8885A308D3)
_SALT_THR = np.uint64(0x13198A2E03707344)
_SALT_CHILD = np.uint64(0xA4093822299F31D0)
_SALT_ROOT = np.uint64(0x082EFA98EC4E6C89)
_SALT_LABEL = np.uint64(0x452821E638D01377)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    x = np.asarray(x, dtype=np.uint64) + _G
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def _uniform(ids: np.ndarray, salt: np.uint64) -> np.ndarray:
    """Deterministic U[0, 1) per id."""
    return (_mix(ids ^ salt) >> np.uint64(11)).astype(np.float64) * (2.0 ** -53)


def _child(ids: np.ndarray, branch: np.ndarray) -> np.ndarray:
    return _mix(ids ^ _mix(np.asarray(branch).astype(np.uint64) + _SALT_CHILD))


def fletcher_islam_depth(n_continuous: int, n_categorical: int, cap: int = 15) -> int:
    """Default depth floor(d_c + m_k/2) (floor(m_k/2) if m_c = 0), capped (SPEC §5.3).

    d_c is the smallest d >= 0 with m_c ((m_c - 1)/m_c)^d <= m_c/2, i.e.
    ceil(ln(1/2) / ln(1 - 1/m_c)) (d_c = 1 for m_c = 1).  The public codes'
    loops return d_c + 1; we follow the formula.
    """
    m_c = check_int(n_continuous, "n_continuous", minimum=0)
    m_k = check_int(n_categorical, "n_categorical", minimum=0)
    if m_c == 0:
        return min(cap, m_k // 2)
    d_c, r = 0, 1.0
    while r > 0.5:
        d_c += 1
        r *= (m_c - 1) / m_c
    return min(cap, int(math.floor(d_c + m_k / 2)))


def problem_key(counts: np.ndarray) -> np.ndarray:
    """Rows (indicators u_r, per-class distances t*_r) that determine :func:`leaf_problem` (m >= 2).

    majority.problem(counts) (add/remove, tie set) is a function of the
    indicators and of the per-candidate distances t*_r (its global profile
    uses t* = min_r t*_r, its horizon max_r t*_r + 1): with
    W_r = max_{b != r} n_b - n_r, t*_r = -W_r if r wins (W_r <= 0) and
    W_r - 1 otherwise (majority's module docstring).  Equal keys therefore
    mean equal problems (checked against majority in tests/test_forest.py).
    """
    counts = np.asarray(counts, dtype=np.int64)
    top = counts.max(axis=1)
    second = np.sort(counts, axis=1)[:, -2]
    is_top = counts == top[:, None]
    unique_top = is_top & (is_top.sum(axis=1) == 1)[:, None]
    W = np.where(unique_top, second[:, None], top[:, None]) - counts
    return np.hstack([is_top.astype(np.int64), np.where(W <= 0, -W, W - 1)])


LEAF_UTILITIES = ("indicator", "count")


def leaf_problem(counts: Any, leaf_utility: str = "indicator") -> SelectionProblem:
    """The leaf-label problem of a leaf with these class counts (add/remove).

    "indicator": :func:`dpselect.apps.majority.problem` (argmax indicator,
    tie set; Fletcher–Islam / SNM).  "count": the counts themselves as
    utilities, global sensitivity 1, monotone under add/remove (as
    diffprivlib's permute-and-flip leaves).
    """
    if leaf_utility == "indicator":
        return majority.problem(counts, relation="add_remove", tie_rule="tieset")
    if leaf_utility == "count":
        return SelectionProblem(np.asarray(counts, dtype=np.float64), global_sensitivity=1.0, monotone=True,
                                relation="add_remove")
    raise ValueError(f"leaf_utility must be one of {LEAF_UTILITIES}, got {leaf_utility!r}")


def _sort_unique(x: np.ndarray, return_inverse: bool = False) -> Any:
    """np.unique for 1-D uint64 via one argsort (numpy's hash-based unique is slow on 64-bit keys)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.empty(xs.size, dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    uniq = xs[new]
    if not return_inverse:
        return uniq
    inv = np.empty(x.size, dtype=np.int64)
    inv[order] = np.cumsum(new) - 1
    return uniq, inv


class DPRandomForestClassifier(ClassifierMixin, BaseEstimator):
    """Fletcher–Islam random decision forest with private leaf labels.

    See the module docstring for the algorithm, accounting and representation.

    Parameters
    ----------
    epsilon : privacy budget (> 0); every leaf query uses all of it.
    n_estimators : number of trees (>= 1).
    max_depth : depth of every tree; None uses the Fletcher–Islam formula.
    selection : leaf-label mechanism: "snm_t" (default), "snm_lln",
        "snm_laplace", "sps", "em", "pf" or "ld".
    bounds : public bounds of the continuous features (see
        :mod:`dpselect.apps.tree`; inferred with a PrivacyLeakWarning if None).
    categorical_features : indices / names / mask / {feature: categories}.
    delta : delta of each leaf query for "snm_laplace" / "snm_lln" (the total,
        by parallel composition).
    classes : public class labels (None infers them with a PrivacyLeakWarning).
    leaf_utility : "indicator" (default: the argmax indicator of
        :mod:`~dpselect.apps.majority`, as Fletcher–Islam and SNM) or "count"
        (the class counts, Delta = 1, monotone; only with "em" or "pf", since
        a count's local sensitivity is 1 at every distance).  Extension
        beyond the paper: with the indicator the exponential mechanism cannot
        benefit from a large majority, with counts it does.
    random_state : None, an int, or a numpy Generator.

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_ (DataFrame input),
    privacy_ (one leaf query's guarantee = the forest's), depth_,
    dense_ (whether every leaf's label is stored, see module docstring),
    n_leaves_ (total number of leaves when dense_, else None).
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        n_estimators: int = 32,
        max_depth: Any = None,
        selection: str = "snm_t",
        bounds: Any = None,
        categorical_features: Any = None,
        delta: float = 1e-6,
        classes: Any = None,
        leaf_utility: str = "indicator",
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.selection = selection
        self.bounds = bounds
        self.categorical_features = categorical_features
        self.delta = delta
        self.classes = classes
        self.leaf_utility = leaf_utility
        self.random_state = random_state

    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.classifier_tags.poor_score = True  # see DPDecisionTreeClassifier.__sklearn_tags__
        return tags

    # ------------------------------------------------------------ structure
    def _descend(self, ids: np.ndarray, Xc: np.ndarray, Xk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leaf id reached by each row starting from node ``ids``; and whether it was not diverted.

        Rows are (sample, tree) pairs: ``ids`` their tree's root, ``Xc``/``Xk``
        the sample's continuous values / categorical codes.  Each row carries
        its current sub-interval of every continuous attribute, so a node's
        split point (uniform on that sub-interval) is recomputed from the
        node's id; no per-node state is stored.  Rows are processed in blocks
        (bounded memory), each block level by level.
        """
        sch = self._schema
        m_c, m_k = sch.cont.size, sch.cat.size
        out, alive = ids.copy(), np.ones(ids.size, dtype=bool)
        block = max(1024, _BLOCK_ELEMENTS // max(m_c + m_k, 1))
        ncat = sch.n_categories
        for b0 in range(0, ids.size, block):
            sl = slice(b0, min(ids.size, b0 + block))
            cur = out[sl]
            xc, xk = Xc[sl], Xk[sl]
            n = cur.size
            lo = np.repeat(sch.lo[None, :], n, axis=0)
            hi = np.repeat(sch.hi[None, :], n, axis=0)
            used = np.zeros((n, m_k), dtype=bool)
            n_used = np.zeros(n, dtype=np.int64)
            ok = np.ones(n, dtype=bool)
            act = np.arange(n)
            flat_lo, flat_hi = lo.reshape(-1), hi.reshape(-1)  # views: flat indices row * m_c + attr
            for _ in range(self.depth_):
                if m_k:
                    n_avail = m_c + m_k - n_used[act]
                    keep = n_avail > 0
                    if not keep.all():
                        act, n_avail = act[keep], n_avail[keep]
                else:
                    n_avail = m_c
                if not act.size or m_c + m_k == 0:
                    break
                nid = cur[act]
                pick = np.minimum((_uniform(nid, _SALT_ATTR) * n_avail).astype(np.int64), n_avail - 1)
                is_c = pick < m_c
                if is_c.all():
                    r, a, nc = act, pick, nid
                else:
                    r, a, nc = act[is_c], pick[is_c], nid[is_c]
                    branch = np.empty(act.size, dtype=np.int64)
                go = np.zeros(0, dtype=bool)
                if r.size:
                    f = r * m_c + a
                    l0, h0 = flat_lo[f], flat_hi[f]
                    thr = l0 + _uniform(nc, _SALT_THR) * (h0 - l0)
                    go = xc.reshape(-1)[r * xc.shape[1] + a] >= thr
                    np.copyto(l0, thr, where=go)
                    np.copyto(h0, thr, where=~go)
                    flat_lo[f], flat_hi[f] = l0, h0
                if is_c.all():
                    cur[act] = _child(nid, go)
                    continue
                branch[is_c] = go
                r, k = act[~is_c], pick[~is_c] - m_c
                a = np.argmax(np.cumsum(~used[r], axis=1, dtype=np.int16) > k[:, None], axis=1)
                code = xk[r, a]
                used[r, a] = True
                n_used[r] += 1
                bad = (code < 0) | (code >= ncat[a])
                ok[r[bad]] = False
                branch[~is_c] = np.where(bad, 0, code)
                cur[act] = _child(nid, branch)
            out[sl] = cur
            alive[sl] = ok
        return out, alive

    def _enumerate_leaves(self, roots: np.ndarray, limit: int) -> np.ndarray | None:
        """All leaf ids of the (data-independent) structure, sorted; None if it has more than ``limit`` leaves.

        Counted level by level: the leaves found so far plus the next level's
        nodes may not exceed ``limit`` (so memory stays O(limit)).
        """
        sch = self._schema
        m_c, m_k = sch.cont.size, sch.cat.size
        ncat = sch.n_categories
        ids, used = roots.copy(), np.zeros((roots.size, m_k), dtype=bool)
        leaves, n_leaves = [], 0
        for depth in range(self.depth_ + 1):
            n_avail = m_c + m_k - used.sum(axis=1)
            is_leaf = (n_avail == 0) if depth < self.depth_ else np.ones(ids.size, dtype=bool)
            leaves.append(ids[is_leaf])
            n_leaves += int(is_leaf.sum())
            ids, used, n_avail = ids[~is_leaf], used[~is_leaf], n_avail[~is_leaf]
            if not ids.size:
                break
            pick = np.minimum((_uniform(ids, _SALT_ATTR) * n_avail).astype(np.int64), n_avail - 1)
            is_c = pick < m_c
            if is_c.all():  # binary splits only
                if n_leaves + 2 * ids.size > limit:
                    return None
                ids = _child(np.repeat(ids, 2), np.tile(np.arange(2), ids.size))
                used = np.repeat(used, 2, axis=0)
                continue
            attr = np.zeros(ids.size, dtype=np.int64)
            k = pick[~is_c] - m_c
            attr[~is_c] = np.argmax(np.cumsum(~used[~is_c], axis=1, dtype=np.int16) > k[:, None], axis=1)
            nch = np.where(is_c, 2, ncat[attr])
            if n_leaves + int(nch.sum()) > limit:
                return None
            parent = np.repeat(np.arange(ids.size), nch)
            start = np.cumsum(nch) - nch
            branch = np.arange(parent.size) - start[parent]
            used = used[parent]
            cat_child = ~is_c[parent]
            used[np.flatnonzero(cat_child), attr[parent][cat_child]] = True
            ids = _child(ids[parent], branch)
        return np.sort(np.concatenate(leaves))

    # ------------------------------------------------------------------ fit
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
        perm = np.argsort(-counts, axis=1, kind="stable")
        srt = np.take_along_axis(counts, perm, axis=1)
        key = problem_key(srt) if self.leaf_utility == "indicator" else srt
        _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        order = np.argsort(inv, kind="stable")
        sizes = np.bincount(inv, minlength=first.size)
        draws = [np.asarray(mech.select(leaf_problem(srt[i], self.leaf_utility), size=int(k), rng=gen))
                 for i, k in zip(first, sizes)]
        pos = np.empty(L, dtype=np.int64)
        pos[order] = np.concatenate(draws)
        labels[:] = perm[np.arange(L), pos]
        return labels

    def fit(self, X: Any, y: Any) -> "DPRandomForestClassifier":
        """Build the forest on (X, y)."""
        epsilon, delta = _check_common(self)
        n_est = check_int(self.n_estimators, "n_estimators", minimum=1)
        if self.max_depth is not None:
            check_int(self.max_depth, "max_depth", minimum=0)
        if self.leaf_utility not in LEAF_UTILITIES:
            raise ValueError(f"leaf_utility must be one of {LEAF_UTILITIES}, got {self.leaf_utility!r}")
        if self.leaf_utility == "count" and self.selection not in ("em", "pf"):
            raise ValueError("leaf_utility='count' needs selection='em' or 'pf' (a count's local sensitivity is "
                             "always 1, so smooth-sensitivity mechanisms cannot improve on them)")
        schema, Xc, Xk = _encode_fit(self, X, self.bounds, self.categorical_features)
        n = Xc.shape[0]
        classes, yc = _encode_y(self, y, n)
        C = int(classes.size)
        gen = _generator(self.random_state)
        self._schema = schema
        self.depth_ = (
            fletcher_islam_depth(schema.cont.size, schema.cat.size)
            if self.max_depth is None else int(self.max_depth)
        )
        mech = make_mechanism(self.selection, epsilon, delta)
        zero_problem = leaf_problem(np.zeros(C, dtype=np.int64), self.leaf_utility)
        one = mech.privacy(zero_problem)
        self.privacy_ = Privacy(one.epsilon, one.delta, "add_remove",
                                "one leaf query (parallel composition over leaves and over disjoint trees; "
                                f"SPEC §5.3): {one.source}")

        seed = gen.integers(0, 2**63 - 1, size=2, dtype=np.int64).astype(np.uint64)
        self._roots = _mix(_mix(seed[:1]) ^ _mix(np.arange(n_est, dtype=np.uint64) + _SALT_ROOT))
        tree_of = gen.integers(0, n_est, size=n)
        leaf_ids, _ = self._descend(self._roots[tree_of], Xc, Xk)
        occupied, inv = _sort_unique(leaf_ids, return_inverse=True)
        counts = np.bincount(inv * C + yc, minlength=occupied.size * C).reshape(occupied.size, C)
        labels = self._select_labels(counts, mech, gen)
        # exact output distribution of a leaf without records (uniform for every selection here)
        p0 = np.exp(mech.log_probabilities(zero_problem)) if C > 1 else np.ones(1)
        p0 = p0 / p0.sum()

        all_leaves = self._enumerate_leaves(self._roots, DENSE_LEAF_LIMIT)
        self.dense_ = all_leaves is not None
        if self.dense_:
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
            self._empty_salt = _SALT_LABEL ^ _mix(seed[1:])[0]
        self.classes_ = classes
        self.n_leaves_ = int(self._leaf_ids.size) if self.dense_ else None
        return self

    # -------------------------------------------------------------- predict
    def _votes(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "_leaf_ids")
        Xc, Xk = _encode_transform(self, X, self._schema)
        n, T, C = Xc.shape[0], self._roots.size, self.classes_.size
        votes = np.zeros((n, C))
        step = max(1, _ROW_CHUNK // T)
        for s0 in range(0, n, step):
            s1 = min(n, s0 + step)
            smp = np.repeat(np.arange(s0, s1), T)
            ids, alive = self._descend(np.tile(self._roots, s1 - s0), Xc[smp], Xk[smp])
            pos = np.minimum(np.searchsorted(self._leaf_ids, ids), self._leaf_ids.size - 1)
            found = self._leaf_ids[pos] == ids
            lab = self._leaf_labels[pos]
            if not found.all():
                miss = ~found
                u = _uniform(ids[miss], self._empty_salt)
                lab[miss] = np.minimum(np.searchsorted(self._empty_cdf, u, side="right"), C - 1)
            votes[s0:s1] = np.bincount((smp[alive] - s0) * C + lab[alive], minlength=(s1 - s0) * C).reshape(-1, C)
        return votes

    def predict_proba(self, X: Any) -> np.ndarray:
        """Share of the trees' votes for each class (uniform if no tree votes)."""
        votes = self._votes(X)
        tot = votes.sum(axis=1, keepdims=True)
        return np.where(tot > 0, votes / np.where(tot > 0, tot, 1.0), 1.0 / votes.shape[1])

    def predict(self, X: Any) -> np.ndarray:
        """The class with the most votes (first on ties)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
