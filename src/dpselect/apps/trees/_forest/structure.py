"""The implicit structure of a random decision forest: hashed node ids, descent, leaf enumeration.

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
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...._params import int_at_least, positive, validate_params

__all__ = [
    "DENSE_LEAF_LIMIT",
    "ROW_CHUNK",
    "SALT_LABEL",
    "auto_forest_depth",
    "auto_n_estimators",
    "child",
    "descend",
    "enumerate_leaves",
    "fletcher_islam_depth",
    "mix",
    "root_ids",
    "sort_unique",
    "uniform",
]

DENSE_LEAF_LIMIT = 1 << 21
ROW_CHUNK = 1 << 18  # (sample, tree) pairs processed at once in predict
_BLOCK_ELEMENTS = 1 << 22  # rows x attributes of per-row interval state in one descent block

_G = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_SALT_ATTR = np.uint64(0x243F6A8885A308D3)
_SALT_THR = np.uint64(0x13198A2E03707344)
_SALT_CHILD = np.uint64(0xA4093822299F31D0)
_SALT_ROOT = np.uint64(0x082EFA98EC4E6C89)
SALT_LABEL = np.uint64(0x452821E638D01377)


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    x = np.asarray(x, dtype=np.uint64) + _G
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def uniform(ids: np.ndarray, salt: np.uint64) -> np.ndarray:
    """Deterministic U[0, 1) per id."""
    return (mix(ids ^ salt) >> np.uint64(11)).astype(np.float64) * (2.0**-53)


def child(ids: np.ndarray, branch: np.ndarray) -> np.ndarray:
    return mix(ids ^ mix(np.asarray(branch).astype(np.uint64) + _SALT_CHILD))


def sort_unique(x: np.ndarray, return_inverse: bool = False) -> Any:
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


def descend(schema: Any, depth: int, ids: np.ndarray, Xc: np.ndarray, Xk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Leaf id reached by each row starting from node ``ids``; and whether it was not diverted.

    Rows are (sample, tree) pairs: ``ids`` their tree's root, ``Xc``/``Xk``
    the sample's continuous values / categorical codes.  Each row carries
    its current sub-interval of every continuous attribute, so a node's
    split point (uniform on that sub-interval) is recomputed from the
    node's id; no per-node state is stored.  Rows are processed in blocks
    (bounded memory), each block level by level.
    """
    sch = schema
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
        for _ in range(depth):
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
            pick = np.minimum((uniform(nid, _SALT_ATTR) * n_avail).astype(np.int64), n_avail - 1)
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
                thr = l0 + uniform(nc, _SALT_THR) * (h0 - l0)
                go = xc.reshape(-1)[r * xc.shape[1] + a] >= thr
                np.copyto(l0, thr, where=go)
                np.copyto(h0, thr, where=~go)
                flat_lo[f], flat_hi[f] = l0, h0
            if is_c.all():
                cur[act] = child(nid, go)
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
            cur[act] = child(nid, branch)
        out[sl] = cur
        alive[sl] = ok
    return out, alive


def enumerate_leaves(schema: Any, depth: int, roots: np.ndarray, limit: int) -> np.ndarray | None:
    """All leaf ids of the (data-independent) structure, sorted; None if it has more than ``limit`` leaves.

    Counted level by level: the leaves found so far plus the next level's
    nodes may not exceed ``limit`` (so memory stays O(limit)).
    """
    sch = schema
    m_c, m_k = sch.cont.size, sch.cat.size
    ncat = sch.n_categories
    ids, used = roots.copy(), np.zeros((roots.size, m_k), dtype=bool)
    leaves, n_leaves = [], 0
    for level in range(depth + 1):
        n_avail = m_c + m_k - used.sum(axis=1)
        is_leaf = (n_avail == 0) if level < depth else np.ones(ids.size, dtype=bool)
        leaves.append(ids[is_leaf])
        n_leaves += int(is_leaf.sum())
        ids, used, n_avail = ids[~is_leaf], used[~is_leaf], n_avail[~is_leaf]
        if not ids.size:
            break
        pick = np.minimum((uniform(ids, _SALT_ATTR) * n_avail).astype(np.int64), n_avail - 1)
        is_c = pick < m_c
        if is_c.all():  # binary splits only
            if n_leaves + 2 * ids.size > limit:
                return None
            ids = child(np.repeat(ids, 2), np.tile(np.arange(2), ids.size))
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
        ids = child(ids[parent], branch)
    return np.sort(np.concatenate(leaves))


# ------------------------------------------------------------------ fit


def root_ids(seed: np.ndarray, n_trees: int) -> np.ndarray:
    """The trees' root ids from a secret structure seed."""
    return mix(mix(seed[:1]) ^ mix(np.arange(n_trees, dtype=np.uint64) + _SALT_ROOT))


@validate_params({"n_continuous": int_at_least(0), "n_categorical": int_at_least(0), "cap": int_at_least(0)})
def fletcher_islam_depth(n_continuous: int, n_categorical: int, cap: int = 15) -> int:
    """Default depth floor(d_c + m_k/2) (floor(m_k/2) if m_c = 0), capped (mathematics §5.3).

    d_c is the smallest d >= 0 with m_c ((m_c - 1)/m_c)^d <= m_c/2, i.e.
    ceil(ln(1/2) / ln(1 - 1/m_c)) (d_c = 1 for m_c = 1).  The public codes'
    loops return d_c + 1; we follow the formula.

    Parameters
    ----------
    n_continuous : int
        Number m_c of continuous attributes (>= 0).
    n_categorical : int
        Number m_k of categorical attributes (>= 0).
    cap : int, default=15
        Largest depth returned (>= 0).

    Returns
    -------
    int
        The depth, in [0, cap].

    See Also
    --------
    auto_forest_depth : Default depth: min(Fletcher–Islam depth, floor(log2(n / T)) + 2) (public inputs only)
    auto_n_estimators : Default number of trees: round(sqrt(n) / 2), clipped to [4, 32] (public inputs only)
    auto_tree_depth : Largest d <= cap with n / b^d >= 4 (1 + ln C) / eps_leaf(d) (module docstring; public ...

    Examples
    --------
    >>> fletcher_islam_depth(4, 0), fletcher_islam_depth(6, 8), fletcher_islam_depth(0, 3)
    (3, 8, 1)
    """
    m_c, m_k = n_continuous, n_categorical
    if m_c == 0:
        return min(cap, m_k // 2)
    d_c, r = 0, 1.0
    while r > 0.5:
        d_c += 1
        r *= (m_c - 1) / m_c
    return min(cap, math.floor(d_c + m_k / 2))


@validate_params({"n_records": positive(allow_zero=True)})
def auto_n_estimators(n_records: float) -> int:
    """Default number of trees: round(sqrt(n) / 2), clipped to [4, 32] (public inputs only).

    More trees average away the random structure, but each sees only n / T
    records, and a leaf needs a few records for its private label to carry
    signal; T ~ sqrt(n)/2 keeps about 2 sqrt(n) records per tree (chosen by
    measurement on scikit-learn's public bundled datasets, which are also
    in the benchmark table: say so when quoting it).

    Parameters
    ----------
    n_records : float
        Public (or noisy) number of training records n (>= 0).

    Returns
    -------
    int
        The number of trees T, in [4, 32].

    See Also
    --------
    auto_forest_depth : Default depth: min(Fletcher–Islam depth, floor(log2(n / T)) + 2) (public inputs only)
    fletcher_islam_depth : Default depth floor(d_c + m_k/2) (floor(m_k/2) if m_c = 0), capped (mathematics §5.3)

    Examples
    --------
    >>> auto_n_estimators(100), auto_n_estimators(2_000), auto_n_estimators(1e6)
    (5, 22, 32)
    """
    return int(min(32, max(4, round(math.sqrt(max(n_records, 1.0)) / 2.0))))


@validate_params(
    {"n_records": positive(allow_zero=True), "n_estimators": int_at_least(1), "fletcher_islam": int_at_least(0)}
)
def auto_forest_depth(n_records: float, n_estimators: int, fletcher_islam: int) -> int:
    """Default depth: min(Fletcher–Islam depth, floor(log2(n / T)) + 2) (public inputs only).

    Random splits need depth to reach the informative attributes
    (Fletcher–Islam's balls-in-bins depth), but beyond about four leaves per
    record of a tree (log2(n/T) + 2 levels) the extra leaves are empty and
    vote at random.

    Parameters
    ----------
    n_records : float
        Public (or noisy) number of training records n (>= 0).
    n_estimators : int
        Number of trees T (>= 1).
    fletcher_islam : int
        The Fletcher–Islam depth (:func:`fletcher_islam_depth`), an upper limit (>= 0).

    Returns
    -------
    int
        The depth of every tree (>= 0).

    See Also
    --------
    fletcher_islam_depth : Default depth floor(d_c + m_k/2) (floor(m_k/2) if m_c = 0), capped (mathematics §5.3)
    auto_n_estimators : Default number of trees: round(sqrt(n) / 2), clipped to [4, 32] (public inputs only)
    DPRandomForestClassifier : Private forest: greedy private trees on disjoint parts (default) or ...

    Examples
    --------
    >>> auto_forest_depth(2_000, 22, 8), auto_forest_depth(1e6, 32, 8)
    (8, 8)
    """
    occupancy = math.floor(math.log2(max(n_records / n_estimators, 1.0))) + 2
    return max(0, min(fletcher_islam, occupancy))
