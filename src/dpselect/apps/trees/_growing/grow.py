"""Level-wise growth of a private tree, its released arrays, and the leaves' post-processing.

One pass per level (vectorised over the level's nodes, never a Python loop
over nodes on the default path): optional noisy node counts (DiffP-ID3
stopping), noisy class counts at the leaves (integers, :func:`noisy_counts`), and ONE
batched private selection (:func:`dpselect.apps.trees._growing.nodes.select_nodes`)
for all the level's splits.  The algorithm, budget and accounting are
documented in :mod:`dpselect.apps.trees`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....noise import GridLaplace
from ....problem import SelectionProblem
from .leaf_labels import LABEL_MARGIN, leaf_values
from .nodes import select_nodes
from .split_criteria import binary_candidates, binary_scores, binary_valid, cut_mask, problem_from_tables, split_scores

__all__ = ["COUNT_GRID", "LABEL_MARGIN", "DPTree", "GrowSpec", "goes_yes", "grow", "leaf_values", "noisy_counts"]

#: Granularity of every noisy count the estimators release: counts are integers (the grid 2^0 Z).
COUNT_GRID = 1.0


def noisy_counts(counts: Any, epsilon: float, gen: np.random.Generator) -> Any:
    """Counts (sensitivity 1) plus exact discrete Laplace noise of scale 1/epsilon: integers, epsilon-DP.

    :class:`~dpselect.noise.GridLaplace` on the grid :data:`COUNT_GRID` Z
    (Ghosh, Roughgarden & Sundararajan 2009; sampled exactly, Canonne, Kamath
    & Steinke 2020): the released value is an integer, so a neighbour's
    output set is the same (no float gaps, Mironov 2012), and the noise law is
    P[K = k] proportional to e^{-|k| / t}, t = 1/epsilon rounded up to 40
    significant bits.  A float scalar for a scalar count, else an array of
    the counts' shape.
    """
    return GridLaplace(1.0, epsilon, granularity=COUNT_GRID).release(np.asarray(counts, dtype=np.float64), rng=gen)


_TABLE_CELLS = 1 << 22  # bound on contingency-table cells built at once


@dataclass
class DPTree:
    """Arrays of a fitted private tree (every value here is released or post-processed).

    Node i: ``feature[i]`` (-1 for a leaf); ``cut[i]`` the code b of a binary
    split (continuous: "code < b" goes to child 0; categorical: "code == b"
    goes to child 0), -1 for a multiway split (child = code); children
    ``child_start[i] .. child_start[i] + n_children[i] - 1``;
    ``default_child[i]`` (multiway: the child with the largest released mass,
    used for unseen categories); ``noisy_count[i]`` (N_T, NaN without count
    queries); ``depth[i]``; ``parent[i]``; ``leaf[i]`` (row of
    ``leaf_counts``/``value``, -1 for internal nodes).  ``leaf_counts`` are
    the leaves' noisy class counts, ``value`` the class probabilities after
    the fallback of near-empty leaves (:func:`leaf_values`).  Noisy counts
    are integers (:func:`noisy_counts`: exact discrete Laplace on the grid
    Z); ``value`` is their post-processing.
    """

    feature: np.ndarray
    cut: np.ndarray
    child_start: np.ndarray
    n_children: np.ndarray
    default_child: np.ndarray
    noisy_count: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    leaf: np.ndarray
    leaf_counts: np.ndarray
    value: np.ndarray

    @property
    def node_count(self) -> int:
        return int(self.feature.size)

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_counts.shape[0])

    @property
    def max_depth(self) -> int:
        return int(self.depth.max())


@dataclass
class GrowSpec:
    """What :func:`grow` needs: shape, budgets per query, the mechanism and the public schema."""

    depth: int
    binary: bool
    count_queries: bool
    eps_count: float
    eps_leaf: float
    mech: Any
    kind: str
    split_utility: str
    sensitivity: float
    n_values: np.ndarray  # (p,) public domain sizes (bins or categories)
    is_cont: np.ndarray  # (p,) bool
    n_classes: int
    template: SelectionProblem | None = None  # the batched mechanisms' calibration problem (cached)
    root_prior: tuple[np.ndarray, float] | None = None  # released root class counts and their epsilon


def _cells(Z: np.ndarray, y: np.ndarray, k: int, C: int) -> np.ndarray:
    """Per record and feature, its cell (feature, code, class) in a node's flattened (p, k, C) table."""
    p = Z.shape[1]
    cells = np.array(Z, dtype=np.int64)  # int64: what bincount indexes with (no cast per level)
    cells += np.arange(p)[None, :] * k
    cells *= C
    cells += y[:, None]
    return cells


def _choose(spec: GrowSpec, hist: np.ndarray, cand_ok: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Chosen candidate column of every splitting node from its histogram (binary: f * k + b; multiway: f)."""
    S = hist.shape[0]
    if spec.template is None:  # built once per tree: only the sensitivity and monotonicity matter
        spec.template = SelectionProblem(np.zeros(2), global_sensitivity=spec.sensitivity, monotone=True)
    template = spec.template
    if spec.binary:
        scores = binary_scores(hist, spec.is_cont, spec.split_utility).reshape(S, -1)
    else:
        scores = split_scores(hist, spec.split_utility).reshape(S, -1)

    def problem_of(i: int) -> SelectionProblem:
        ok = cand_ok[i]
        if spec.binary:  # the stacked two-child tables, built only for per-node (smooth) selections
            tabs, _ = binary_candidates(hist[i], ok, spec.is_cont)
            t = tabs.reshape(-1, *tabs.shape[-2:])[ok.ravel()]
            return problem_from_tables(t, np.full(t.shape[0], 2), spec.kind, spec.sensitivity)
        return problem_from_tables(hist[i][ok], spec.n_values[ok], spec.kind, spec.sensitivity)

    return select_nodes(spec.mech, scores, cand_ok.reshape(S, -1), template, gen, problem_of)


def _split_level(
    spec: GrowSpec,
    cells: np.ndarray,
    buf: np.ndarray,
    loc: np.ndarray,
    n_lvl: int,
    splits: np.ndarray,
    prev: np.ndarray | None,
    cand_ok: np.ndarray,
    gen: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Chosen candidates of the level's splitting nodes, and their histograms (for the next level) if kept.

    Histograms (node, feature, code, class) come from one bincount.  For
    binary trees whose whole level fits in memory only the smaller child of
    each pair is counted; the other's histogram is its parent's minus its
    sibling's (``prev``: the parents' histograms, in split order; exact
    integer counts, so the result does not depend on which child is counted).
    """
    p = cells.shape[1]
    k, C = int(spec.n_values.max()), spec.n_classes
    stride = p * k * C
    shape = (p, k, C)
    if n_lvl * stride <= _TABLE_CELLS:
        if spec.binary and prev is not None:
            pairs = n_lvl // 2  # children come in (yes, no) pairs: offsets 2j, 2j + 1
            small = np.bincount(loc, minlength=n_lvl).reshape(pairs, 2).argmin(axis=1)  # the smaller child
            rec = np.flatnonzero((loc & 1) == small[loc >> 1])
            idx = cells.take(rec, axis=0, out=buf[: rec.size], mode="clip")  # reused buffer (unbuffered: "clip")
            idx += ((loc[rec] >> 1) * stride)[:, None]
            counted = np.bincount(idx.ravel(), minlength=pairs * stride).reshape(pairs, *shape)
            pair_hist = np.empty((pairs, 2, *shape), dtype=np.int64)
            at = np.arange(pairs)
            pair_hist[at, small] = counted
            pair_hist[at, 1 - small] = np.subtract(prev, counted, out=prev)  # prev is not needed after this level
            hist = pair_hist.reshape(n_lvl, *shape)
        else:
            idx = cells + (loc * stride)[:, None] if n_lvl > 1 else cells
            hist = np.bincount(idx.ravel(), minlength=n_lvl * stride).reshape(n_lvl, *shape)
        if splits.size < n_lvl:
            hist, cand_ok = hist[splits], cand_ok[splits]
        return _choose(spec, hist, cand_ok, gen), hist
    at = np.full(n_lvl, -1, dtype=np.int64)
    at[splits] = np.arange(splits.size)
    node = at[loc]
    chosen = np.empty(splits.size, dtype=np.int64)
    per_chunk = max(1, _TABLE_CELLS // stride)
    for c0 in range(0, splits.size, per_chunk):  # bounded memory: chunks of splitting nodes
        c1 = min(splits.size, c0 + per_chunk)
        mask = (node >= c0) & (node < c1)
        idx = cells[mask] + ((node[mask] - c0) * stride)[:, None]
        hist = np.bincount(idx.ravel(), minlength=(c1 - c0) * stride).reshape(c1 - c0, *shape)
        chosen[c0:c1] = _choose(spec, hist, cand_ok[splits[c0:c1]], gen)
    return chosen, None


def grow(Z: np.ndarray, y: np.ndarray, spec: GrowSpec, gen: np.random.Generator) -> DPTree:
    """Grow the tree level by level on codes ``Z`` (n, p) and class codes ``y`` (n,)."""
    n, p = Z.shape
    C, k = spec.n_classes, int(spec.n_values.max())
    rows, loc = np.arange(n), np.zeros(n, dtype=np.int64)
    cells = _cells(Z, y, k, C)  # of the active records, filtered with rows
    buf = np.empty_like(cells)  # scratch for a level's histogram indices
    prev: np.ndarray | None = None  # histograms of the previous level's splitting nodes
    live = np.arange(k)[None, None, :] < spec.n_values[None, :, None]  # binary: codes still possible
    valid = binary_valid(live, spec.is_cont) if spec.binary else np.zeros(0, dtype=bool)  # binary: cuts possible
    # the codes in the smallest integer type that holds them: each level gathers one code per record
    Zflat = Z.astype(np.int8 if k <= 127 else np.int16 if k <= 32767 else np.int64).ravel()
    used = np.zeros((1, p), dtype=bool)  # multiway: attributes used on the path
    parent = np.array([-1])
    out: dict[str, list] = {key: [] for key in ("feature", "cut", "cstart", "nch", "noisy", "depth", "leaf", "parent")}
    leaf_counts: list[np.ndarray] = []
    n_lvl, first, n_leaves = 1, 0, 0
    for lvl in range(spec.depth + 1):
        cand_ok = valid if spec.binary else ~used
        stop = np.asarray(~cand_ok.reshape(n_lvl, -1).any(axis=1) | (lvl >= spec.depth))
        noisy = np.full(n_lvl, np.nan)
        if spec.count_queries:  # DiffP-ID3: N_T + DLap(1/eps'), stop if N_T / (t |C|) < sqrt(2)/eps'
            noisy = noisy_counts(np.bincount(loc, minlength=n_lvl), spec.eps_count, gen)
            t = 2 if spec.binary else np.maximum(np.where(~used, spec.n_values[None, :], 0).max(axis=1), 1)
            stop |= noisy / (t * C) < math.sqrt(2.0) / spec.eps_count
        feat = np.full(n_lvl, -1, dtype=np.int64)
        cut = np.full(n_lvl, -1, dtype=np.int64)
        cstart = np.full(n_lvl, -1, dtype=np.int64)
        nch = np.zeros(n_lvl, dtype=np.int64)
        leaf_idx = np.full(n_lvl, -1, dtype=np.int64)
        leaves = np.flatnonzero(stop)
        if leaves.size:  # noisy class counts (the classes partition the leaf: one query of eps_leaf)
            cc = np.bincount(loc * C + y[rows], minlength=n_lvl * C).reshape(n_lvl, C)[leaves]
            leaf_counts.append(noisy_counts(cc, spec.eps_leaf, gen))
            leaf_idx[leaves] = n_leaves + np.arange(leaves.size)
            n_leaves += leaves.size
        splits = np.flatnonzero(~stop)
        if splits.size:
            chosen, prev = _split_level(spec, cells, buf, loc, n_lvl, splits, prev, cand_ok, gen)
            if spec.binary:
                feat[splits], cut[splits] = np.divmod(chosen, k)
                nch[splits] = 2
            else:
                feat[splits] = chosen
                nch[splits] = spec.n_values[chosen]
            cstart[splits] = first + n_lvl + np.cumsum(nch[splits]) - nch[splits]
        for key, val in zip(out, (feat, cut, cstart, nch, noisy, np.full(n_lvl, lvl), leaf_idx, parent)):
            out[key].append(val)
        if not splits.size:
            break
        if leaves.size:
            keep = np.flatnonzero(~stop[loc])
            rows, loc, cells = rows[keep], loc[keep], cells.take(keep, axis=0)
        f = feat[loc]
        code = Zflat.take(rows * p + f)
        if spec.binary:
            branch = ~goes_yes(code, cut[loc], spec.is_cont[f])
        else:
            branch = code
        loc = cstart[loc] - (first + n_lvl) + branch.astype(np.int64)
        par = np.repeat(splits, nch[splits])
        if spec.binary:
            fs, bs = feat[splits], cut[splits]
            yes = cut_mask(k, bs, spec.is_cont[fs])
            live = live[par].copy()
            rows2 = np.arange(par.size)
            side = np.tile([True, False], splits.size)
            f2 = fs.repeat(2)
            live[rows2, f2] &= np.where(side[:, None], yes.repeat(2, axis=0), ~yes.repeat(2, axis=0))
            valid = valid[par]  # only the cut feature's possible cuts change below a split
            valid[rows2, f2] = binary_valid(live[rows2, f2], spec.is_cont[f2])
        else:
            used = used[par].copy()
            used[np.arange(par.size), feat[par]] = True
        parent = first + par
        first += n_lvl
        n_lvl = par.size
    return _released_tree(out, leaf_counts, C, spec.eps_leaf, spec.root_prior)


def _released_tree(
    out: dict[str, list],
    leaf_counts: list[np.ndarray],
    C: int,
    eps_leaf: float,
    root_prior: tuple[np.ndarray, float] | None = None,
) -> DPTree:
    """The :class:`DPTree` of the grown levels: node arrays, noisy leaf counts and their post-processing."""
    arr = {key: np.concatenate(v) for key, v in out.items()}
    counts = np.vstack(leaf_counts) if leaf_counts else np.zeros((0, C))
    mass, value = leaf_values(arr, counts, eps_leaf, root_prior)
    default = np.full(arr["feature"].size, -1, dtype=np.int64)
    multi = np.flatnonzero((arr["feature"] >= 0) & (arr["cut"] < 0))
    for i in multi:  # multiway nodes only (unseen categories); the default binary path has none
        s = arr["cstart"][i]
        default[i] = s + int(np.argmax(mass[s : s + arr["nch"][i]]))
    return DPTree(
        arr["feature"],
        arr["cut"],
        arr["cstart"],
        arr["nch"],
        default,
        arr["noisy"],
        arr["depth"],
        arr["parent"],
        arr["leaf"],
        counts,
        value,
    )


def goes_yes(code: np.ndarray, cut: np.ndarray, continuous: np.ndarray) -> np.ndarray:
    """Whether codes take child 0 of binary cuts: code < cut (continuous) or code == cut (categorical; -1 never)."""
    continuous = np.asarray(continuous, dtype=bool)
    if continuous.all():
        return np.asarray(code < cut)
    return np.where(continuous, code < cut, code == cut)


def route(tree: DPTree, Z: np.ndarray, is_cont: np.ndarray) -> np.ndarray:
    """The leaf (row of ``tree.leaf_counts``) each row of codes ``Z`` (n, p) lands in.

    Codes outside a multiway node's children (unseen categories, -1) go to its
    default child; at a binary cut they take the "!=" side.
    """
    tr = tree
    node = np.zeros(Z.shape[0], dtype=np.int64)
    rows = np.arange(Z.shape[0])
    for _ in range(tr.max_depth):
        f = tr.feature[node]
        inner = f >= 0
        if not inner.any():
            break
        fz = np.where(inner, f, 0)
        code = Z[rows, fz]
        ok = (code >= 0) & (code < tr.n_children[node])
        multi = np.where(ok, tr.child_start[node] + code, tr.default_child[node])
        binary = tr.child_start[node] + ~goes_yes(code, tr.cut[node], is_cont[fz])
        child = np.where(tr.cut[node] >= 0, binary, multi)
        node = np.where(inner, child, node)
    return tr.leaf[node]
