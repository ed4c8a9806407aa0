"""The leaves' labels: post-processing of a private tree's noisy leaf class counts (no privacy cost).

:func:`leaf_values` turns the released noisy class counts of the leaves (and, when the shape rule spent
them, the noisy class counts of all records) into each leaf's class probabilities: a leaf keeps its own
counts only when they are large enough and favour its own label over the one it inherits by a standard
deviation of noise; otherwise it falls back to its nearest ancestor that does, up to the root's privately
chosen majority label.  Everything here is a function of released values (post-processing).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LABEL_MARGIN", "leaf_values"]

#: Standard deviations of noise by which a node's counts must favour its own label over the one it
#: inherits (:func:`leaf_values`).
LABEL_MARGIN = 1.0


def leaf_values(
    arr: dict, counts: np.ndarray, eps_leaf: float, root_prior: tuple[np.ndarray, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Post-processing of the leaves' noisy class counts: (released mass per node, leaf probabilities).

    Every node's aggregate a_v is the sum of the noisy counts of the L_v
    leaves below it (a function of released values); with ``root_prior`` =
    (noisy class counts of all records, their epsilon eps_0), the root's is the
    inverse-variance mean (eps_0^2 prior + (eps_leaf^2 / L) a_root) /
    (eps_0^2 + eps_leaf^2 / L).  Top-down, each node v takes a *source*: itself
    if (i) its total is at least twice its noise standard deviation
    sqrt(2 C L_v)/eps_leaf and (ii) its own label k = argmax a_v is its
    parent's source's label j, or a_v[k] - a_v[j] >= ``LABEL_MARGIN`` x
    2 sqrt(L_v / eps_leaf^2 + N_v), N_v = max(total, 0): one standard
    deviation of the difference's noise (variance 4 L_v / eps_leaf^2) and two
    of its sampling spread (variance at most N_v: a split chosen among many
    cuts makes one too weak); else its parent's source.  The root is its own
    source.  A leaf's
    probabilities are its source's aggregate clipped at 0 and normalised
    (one-hot on its argmax if nothing is positive): near-empty leaves and
    leaves without evidence against the inherited label fall back to their
    ancestors', up to the root's privately chosen majority label (the depth-0
    tree, chosen at no privacy cost).  Measured (13 real tables, epsilon in
    {0.1, 0.5, 1, 5}, 5-fold CV x 2): at a fixed depth 8 on a 98.5%-majority
    table at epsilon = 0.1 the noise margin alone scores 0.975 and no margin
    (every usable leaf keeps its own label) 0.964; on labels independent of 6
    uniform features (60% majority, 5,000 records, the default depth 8 at
    epsilon = 5) the tree scores 0.6 points below the majority rate, 1.1 with
    one sampling standard deviation instead of two and 1.6 with no margin; on
    the real tables the margin moves no cell by more than 0.02 (accuracy
    within one standard error of the best peer in 48 of 52 cells with one or
    two sampling standard deviations, balanced accuracy in 46 and 47).
    """
    leaf, parent, depth = arr["leaf"], arr["parent"], arr["depth"]
    N, C = leaf.size, counts.shape[1]
    agg = np.zeros((N, C))
    nleaf = np.zeros(N)
    is_leaf = leaf >= 0
    agg[is_leaf] = counts[leaf[is_leaf]]
    nleaf[is_leaf] = 1.0
    for d in range(int(depth.max()), 0, -1):  # bottom-up, one vectorised step per level
        nodes = np.flatnonzero(depth == d)
        np.add.at(agg, parent[nodes], agg[nodes])
        np.add.at(nleaf, parent[nodes], nleaf[nodes])
    if root_prior is not None:  # inverse-variance mean of two released estimates of the root's class counts
        w_prior, w_leaves = root_prior[1] ** 2, eps_leaf**2 / max(nleaf[0], 1.0)
        agg[0] = (w_prior * np.asarray(root_prior[0], dtype=np.float64) + w_leaves * agg[0]) / (w_prior + w_leaves)
    total = agg.sum(axis=1)
    usable = total >= 2.0 * np.sqrt(2.0 * C * np.maximum(nleaf, 1.0)) / eps_leaf
    src = np.arange(N)
    own = np.argmax(agg, axis=1)
    # a node's label differs from its source's only when the difference of the two noisy counts clears
    # LABEL_MARGIN x 2 sqrt(L / eps_leaf^2 + N): one standard deviation of its noise (variance 4 L / eps^2)
    # and two of its sampling spread (variance at most N, the node's records)
    need = LABEL_MARGIN * 2.0 * np.sqrt(np.maximum(nleaf, 1.0) / eps_leaf**2 + np.maximum(total, 0.0))
    for d in range(1, int(depth.max()) + 1):  # top-down
        nodes = np.flatnonzero(depth == d)
        up = src[parent[nodes]]
        inherited = own[up]
        sure = (own[nodes] == inherited) | (agg[nodes, own[nodes]] - agg[nodes, inherited] >= need[nodes])
        src[nodes] = np.where(usable[nodes] & sure, nodes, up)
    src[0] = 0
    chosen = agg[src[is_leaf]][np.argsort(leaf[is_leaf])]
    p = np.clip(chosen, 0.0, None)
    s = p.sum(axis=1, keepdims=True)
    onehot = np.zeros_like(p)
    onehot[np.arange(p.shape[0]), np.argmax(chosen, axis=1)] = 1.0
    return total, np.where(s > 0, p / np.where(s > 0, s, 1.0), onehot)
