"""Split criteria of the private trees and their sensitivities (add/remove neighbours).

A node's candidate splits are scored from contingency tables tau_{j,c}
(children j, classes c) of the node's records; tables have shape
(..., k, C).  Two families of candidates (mathematics §5.2 and this module):

* **multiway** (DiffP-ID3): one candidate per attribute A, one child per
  value of A (k = |A|);
* **binary**: one candidate per (attribute, cut) with two children: a
  continuous attribute's codes ``< b`` vs ``>= b`` (b a bin edge of the
  PUBLIC equal-width grid inside the node's current code range) and a
  categorical attribute's ``== v`` vs ``!= v`` (v a public category still
  possible at the node).  The candidate set of a node depends only on the
  released structure above it (the "live" codes), never on its records.

Utilities (either family):

* ``max_operator``: MaxOp = sum_j max_c tau_{j,c}, the number of the node's
  records a majority vote in each child classifies correctly
  (= |T| - misclassification count).  **Delta = 1 and monotone** under
  add/remove: one added record increments exactly one cell tau_{j,c} of
  every candidate's table, so each child's max_c moves by 0 or +1 and MaxOp
  by 0 or +1 (removal: 0 or -1), for all candidates at once (mathematics §5.2; the
  binary case is the same argument with k = 2).  EM/PF then use noise
  Delta/eps instead of 2 Delta/eps (mathematics §2.6).
* ``info_gain``: q_IG = sum_j sum_c tau_jc log2(tau_jc / tau_j), Delta =
  log2(N + 1) + 1/ln 2 for a public bound N on |T|, monotone (mathematics §5.2; one
  record changes one cell, the bound is per cell, so k = 2 changes nothing).

Smooth mechanisms ("snm_*", "sps") use the max-operator *indicator* with the
local-sensitivity profile 1[t >= max(k - 1, 0)] (k = top - second MaxOp on
the node's records, mathematics §4.2) and "ld" the info-gain element sensitivity of
mathematics §5.1 (:func:`info_gain_element_sensitivity`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ....problem import SelectionProblem
from ....sensitivity import StepProfile

__all__ = [
    "LD_HORIZON",
    "SMOOTH",
    "SPLIT_UTILITIES",
    "binary_candidates",
    "binary_scores",
    "binary_valid",
    "check_split_utility",
    "cut_mask",
    "info_gain",
    "info_gain_element_sensitivity",
    "info_gain_sensitivity",
    "max_operator",
    "node_tables",
    "problem_from_tables",
    "problem_kind",
    "split_scores",
]

#: Split-quality functions.
SPLIT_UTILITIES = ("max_operator", "info_gain")
#: Selections that use a smooth-sensitivity profile (the max-operator indicator).
SMOOTH = ("snm_t", "snm_lln", "snm_laplace", "sps")
_LN2 = math.log(2.0)
#: Horizon T of the info-gain element-sensitivity profile: delta(x, t, A) is
#: computed exactly for t = 0..T and set to the global sensitivity beyond (a
#: data-independent cap keeps the profile admissible, mathematics §5.1).
LD_HORIZON = 64


def check_split_utility(split_utility: Any) -> str:
    """``split_utility`` if it is one of :data:`SPLIT_UTILITIES` (ValueError otherwise)."""
    if split_utility not in SPLIT_UTILITIES:
        raise ValueError(f"split_utility must be one of {SPLIT_UTILITIES}, got {split_utility!r}")
    return str(split_utility)


def max_operator(tables: np.ndarray) -> np.ndarray:
    """MaxOp(T, A) = sum_j max_c tau^A_{j,c} for tables of shape (..., k, C) (k children, C classes)."""
    t = np.asarray(tables)
    best = t[..., 0]
    for c in range(1, t.shape[-1]):  # a loop over the few classes: faster than a reduce over a short axis
        best = np.maximum(best, t[..., c])
    return best.sum(axis=-1, dtype=np.float64)


def _xlog2x(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log2(x[pos])
    return out


def info_gain(tables: np.ndarray) -> np.ndarray:
    """q_IG(T, A) = sum_j sum_c tau_jc log2(tau_jc / tau_j) (bits, <= 0) for tables (..., k, C)."""
    t = np.asarray(tables, dtype=np.float64)
    return _xlog2x(t).sum(axis=(-2, -1)) - _xlog2x(t.sum(axis=-1)).sum(axis=-1)


def info_gain_sensitivity(n_max: float) -> float:
    """Global sensitivity of q_IG under add/remove: log2(N + 1) + 1/ln 2 (mathematics §5.2)."""
    return math.log2(float(n_max) + 1.0) + 1.0 / _LN2


def _inc(x: np.ndarray) -> np.ndarray:
    """F(x) = f(x+1) - f(x) with f(x) = x log2 x: log2(x+1) + x log2(1 + 1/x), F(0) = 0."""
    x = np.asarray(x, dtype=np.float64)
    inv = np.divide(1.0, x, out=np.zeros_like(x), where=x > 0)
    return np.log2(x + 1.0) + x * np.log1p(inv) / _LN2


def _ig_cell_sensitivity(a: np.ndarray, b: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Largest |change of q_IG| from one record touching a cell with tau_j = a, tau_jc = b.

    Adding a record (j, c): q changes by F(b) - F(a) (<= 0); removing one
    (needs b >= 1): by F(a-1) - F(b-1) (>= 0), F(x) = f(x+1) - f(x),
    f(x) = x log2 x.  This is h(a, b) of mathematics §5.1 (f, g there are F and
    -F(. - 1)); it increases in a and decreases in b.  ``a``, ``b`` are
    non-negative integer arrays and ``F`` the table ``_inc(arange(max a + 1))``.
    """
    add = F[a] - F[b]
    rem = np.where(b >= 1, F[np.maximum(a - 1, 0)] - F[np.maximum(b - 1, 0)], 0.0)
    return np.maximum(add, rem)


def info_gain_element_sensitivity(
    tables: np.ndarray, horizon: int = LD_HORIZON, n_values: np.ndarray | None = None
) -> np.ndarray:
    """delta(T, t, A) for t = 0..horizon: the info-gain element local sensitivity (mathematics §5.1).

    Returns an array of shape (horizon + 1, m): the largest local sensitivity
    of q_IG(., A) over all node datasets within t add/remove steps of T.

    Derivation.  LS(T, A) = max_{j, c} h(tau_j, tau_jc) (see
    ``_ig_cell_sensitivity``).  Within t steps the pair (tau_j, tau_jc) can
    move by (+1, +1), (+1, 0), (-1, -1), (-1, 0); since h increases in a and
    decreases in b, any such path is dominated by one of s removals
    (-1, -1) and t - s additions (+1, 0) (the "Candidates" moves of Farias et
    al.), and for a fixed j the class with the smallest tau_jc dominates.  So
    delta(T, t, A) = max_j max_{0 <= s <= min(t, b_j)} h(a_j + t - 2s, b_j - s)
    with a_j = tau_j, b_j = min_c tau_jc; only real values j < n_values[A]
    count.  The result is an upper bound on the exact element sensitivity,
    non-decreasing in t and satisfies the admissibility conditions
    delta(x, 0) >= LS(x) and delta(x, t) <= delta(y, t + 1) for neighbours.
    """
    t_ = np.asarray(tables, dtype=np.int64)
    m, k, _ = t_.shape
    a = t_.sum(axis=2)
    b = t_.min(axis=2)
    valid = np.ones((m, k), dtype=bool) if n_values is None else (np.arange(k)[None, :] < np.asarray(n_values)[:, None])
    # every argument of F is an integer in [0, max(a) + horizon]: tabulate F once
    F = _inc(np.arange(int(a.max(initial=0)) + horizon + 2))
    ts = np.arange(horizon + 1)[:, None, None]
    best = np.zeros((horizon + 1, m))
    s_max = int(min(horizon, b[valid].max() if valid.any() else 0))
    for s in range(s_max + 1):
        ok = valid & (b >= s)
        if not ok.any():
            break
        aa = np.maximum(a[None] + ts - 2 * s, 0)  # (T+1, m, k) >= bb
        bb = np.broadcast_to(np.maximum(b - s, 0), aa.shape)
        val = np.where(ok[None] & (ts >= s), _ig_cell_sensitivity(aa, bb, F), 0.0)
        np.maximum(best, val.max(axis=2), out=best)
    return np.maximum.accumulate(best, axis=0)


def problem_kind(mechanism: str, split_utility: str) -> str:
    if split_utility == "max_operator":
        return "maxop_indicator" if mechanism in SMOOTH else "maxop_score"
    return "ig_profile" if mechanism in (*SMOOTH, "ld") else "ig_score"


def problem_from_tables(
    tables: np.ndarray, n_values: np.ndarray, kind: str, ig_gs: float, horizon: int = LD_HORIZON, labels: Any = None
) -> SelectionProblem:
    """SelectionProblem over the m candidate attributes of one node (tables (m, k, C))."""
    if kind == "maxop_score":
        return SelectionProblem(max_operator(tables), labels=labels, global_sensitivity=1.0, monotone=True)
    if kind == "maxop_indicator":
        mo = max_operator(tables)
        u = (mo == mo.max()).astype(np.float64)
        srt = np.sort(mo)[::-1]
        gap = int(srt[0] - srt[1]) if mo.size > 1 else 0
        ell = max(gap - 1, 0)
        ls = (
            StepProfile(np.array([0, ell]), np.array([0.0, 1.0]))
            if ell > 0
            else StepProfile(np.array([0]), np.array([1.0]))
        )
        return SelectionProblem(u, labels=labels, global_sensitivity=1.0, local_sensitivity=ls, monotone=False)
    q = info_gain(tables)
    if kind == "ig_score":
        return SelectionProblem(q, labels=labels, global_sensitivity=ig_gs, monotone=True)
    delta = np.minimum(info_gain_element_sensitivity(tables, horizon, n_values), ig_gs)
    prof = np.vstack([delta, np.full((1, delta.shape[1]), ig_gs)])
    bps = np.arange(horizon + 2)
    return SelectionProblem(
        q,
        labels=labels,
        global_sensitivity=ig_gs,
        local_sensitivity=StepProfile(bps, prof.max(axis=1)),
        candidate_local_sensitivity=StepProfile(bps, prof),
        max_distance=horizon + 1,
        monotone=True,
    )


def node_tables(codes: np.ndarray, y: np.ndarray, n_values: np.ndarray, n_classes: int) -> np.ndarray:
    """Contingency tables tau^A_{j,c} of one node, shape (m, max(n_values), C)."""
    m = codes.shape[1]
    kmax = int(max(1, np.max(n_values)))
    idx = (np.arange(m)[None, :] * kmax + codes) * n_classes + y[:, None]
    return np.bincount(idx.ravel(), minlength=m * kmax * n_classes).reshape(m, kmax, n_classes)


def split_scores(tables: np.ndarray, split_utility: str) -> np.ndarray:
    """The global-sensitivity utility (MaxOp or q_IG) of tables (..., k, C)."""
    return max_operator(tables) if split_utility == "max_operator" else info_gain(tables)


def binary_candidates(hist: np.ndarray, live: np.ndarray, is_cont: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two-child tables and validity of every binary candidate (feature f, cut b).

    ``hist`` (..., p, k, C): class counts of a node's records per feature code;
    ``live`` (..., p, k): the codes still possible at the node (public);
    ``is_cont`` (p,): whether feature f is continuous (cut "code < b") or
    categorical (cut "code == b").  Returns tables (..., p, k, 2, C) (child 0 =
    the cut's "yes" side) and ``valid`` (..., p, k): both children can hold
    records (each side has a live code).  For continuous f, b = 0 is never
    valid (nothing is below code 0).
    """
    yes, no = _binary_sides(hist, is_cont)
    return np.stack([yes, no], axis=-2), binary_valid(live, is_cont)


def _binary_sides(hist: np.ndarray, is_cont: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class counts on the "yes" and "no" sides of every cut, each (..., p, k, C)."""
    h = np.asarray(hist)
    cum = np.cumsum(h, axis=-2)
    below = cum - h  # counts with code < b
    cont = np.asarray(is_cont, dtype=bool)
    yes = below if cont.all() else np.where(cont[:, None, None], below, h)
    return yes, cum[..., -1:, :] - yes


def binary_scores(hist: np.ndarray, is_cont: np.ndarray, split_utility: str) -> np.ndarray:
    """Utility of every binary cut (..., p, k) straight from the histograms (no stacked tables).

    Two classes with the max-operator take a shortcut with the same values:
    max(a, b) = (a + b + |a - b|) / 2, so the utility of a cut is
    (N + |d_yes| + |D - d_yes|) / 2 with d = tau_0 - tau_1 per code, d_yes its
    sum over the "yes" codes and D its sum over all codes (exact integers).
    """
    h = np.asarray(hist)
    if split_utility == "max_operator" and h.shape[-1] == 2 and h.dtype.kind in "iu":
        d = h[..., 0] - h[..., 1]  # in place below: fresh large arrays cost page faults
        cum = np.cumsum(d, axis=-1)
        total = cum[..., -1:].copy()
        cont = np.asarray(is_cont, dtype=bool)
        d_yes = np.subtract(cum, d, out=d, where=np.broadcast_to(cont[:, None], d.shape))  # cont: code < b
        d_no = np.subtract(total, d_yes, out=cum)
        np.abs(d_yes, out=d_yes)
        np.abs(d_no, out=d_no)
        d_yes += d_no
        d_yes += h.sum(axis=(-2, -1))[..., None]
        d_yes >>= 1
        return d_yes.astype(np.float64)
    yes, no = _binary_sides(h, is_cont)
    if split_utility == "max_operator":
        return max_operator(yes[..., None, :]) + max_operator(no[..., None, :])
    return info_gain(yes[..., None, :]) + info_gain(no[..., None, :])


def binary_valid(live: np.ndarray, is_cont: np.ndarray) -> np.ndarray:
    """(..., p, k) bool: the cut (f, b) leaves a live code on both sides (public: a function of ``live``)."""
    lv = np.asarray(live, dtype=bool)
    n_live = lv.sum(axis=-1, keepdims=True)
    live_below = np.cumsum(lv, axis=-1) - lv
    yes_live = np.where(np.asarray(is_cont, dtype=bool)[:, None], live_below, lv)
    return (yes_live >= 1) & (n_live - yes_live >= 1)


def cut_mask(k: int, b: np.ndarray, continuous: np.ndarray) -> np.ndarray:
    """(n, k) bool: the codes on the "yes" side of cuts b (code < b if continuous, code == b otherwise)."""
    codes = np.arange(k)[None, :]
    b = np.asarray(b)[:, None]
    return np.where(np.asarray(continuous, dtype=bool)[:, None], codes < b, codes == b)
