"""Differentially private decision tree: DiffP-ID3 with pluggable split selection.

Friedman & Schuster, "Data mining with differential privacy", KDD 2010
(DiffP-ID3), as used by Chaves et al. (Smooth Noisy Max, Algorithm 2) and
corrected in SPEC.md §5.2 / errata 17, 21.

Algorithm (SPEC.md §5.2)
------------------------
Neighbours are add/remove (PINQ symmetric difference).  Every feature is
discrete: categorical features use their public categories, continuous ones
are cut into ``n_bins`` equal-width bins over *public* bounds (values outside
the bounds go to the first/last bin).  With d the depth limit and
d_eff = min(d, number of features) (no node deeper than the number of
features can exist, so the unused levels' budget is redistributed),

    eps' = eps / (2 (d_eff + 1))       (SPEC errata 17: the seed prints eps/2·(d+1))

and, at every node T (its records) with candidate attributes A:

1. noisy count N_T = |T| + Lap(1/eps');
2. stop if A is empty, the depth is exhausted, or N_T / (t |C|) < sqrt(2)/eps'
   (t = the largest domain size in A, |C| = number of classes; errata 17:
   sqrt(2)/eps' is the standard deviation of Lap(1/eps'));
3. a leaf releases the noisy class counts tau_c + Lap(1/eps') (the classes
   partition T, so this costs eps') and predicts their argmax;
4. an internal node chooses its split attribute with ONE private selection of
   budget eps' (below), splits multiway on all its values, and removes the
   attribute from A for the subtree.

Privacy accounting (documented derivation)
------------------------------------------
A record reaches at most one node per level, and the partition of a level is
a function of the (already released) tree above it, so each level is a
parallel composition over its disjoint nodes: the level costs the *maximum*
over its nodes of (count) + (leaf counts or split selection), i.e.
(eps' + max(eps', eps_sel), max delta_sel).  Levels compose sequentially
(adaptively), so the tree is

    (sum_k eps'_k + max(...), sum_k delta_k)-DP   under add/remove,

which is (eps, delta_total) with delta_total = sum over the levels that can
hold a split of the selection's delta.  At depth k exactly (p - k) attributes
are candidates (every split removes one), so the per-level cost is
data-independent and ``privacy_`` is computed *a priori* from the
mechanisms' own ``privacy()`` (never from what the data happened to use).
``delta`` is split evenly over the levels that can hold a split; pure
mechanisms ("snm_t", "sps", "em", "pf", "ld") spend none.  ``level_privacy_``
records what each realised level actually spent (max over its nodes); its
composition equals ``privacy_`` when the tree grows to full depth and is
smaller otherwise.

Split selection (``selection`` x ``split_utility``)
----------------------------------------------------
* ``split_utility="max_operator"``: MaxOp(T, A) = sum_j max_c tau^A_{j,c},
  global sensitivity 1 (SPEC §5.2).

  - "em", "pf": the utility is MaxOp itself with Delta = 1.  MaxOp is
    *monotone* under add/remove (adding a record raises every MaxOp by 0 or
    1), so the problem is flagged ``monotone=True`` and the classic
    mechanisms use noise Delta/eps' instead of 2 Delta/eps' (SPEC §2.6;
    McSherry–Talwar).  Friedman–Schuster's EM used exp(eps' q/(2 Delta)).
  - smooth mechanisms ("snm_t", "snm_lln", "snm_laplace", "sps"): the
    utility is the max-operator *indicator* (SNM Def. 6.2, tie set: u = 1 for
    every attribute with the largest MaxOp), global sensitivity 1, with the
    local-sensitivity profile LS(t) = 1[t >= max(k - 1, 0)], k = top - second
    MaxOp **computed on the node's own records** (SPEC §4.2: every pairwise
    gap moves by <= 1 per add/remove step, so max(k-1, 0) is a 1-Lipschitz
    lower bound on the distance to instability; S = e^{-beta max(k-1, 0)}).
    The SNM authors' code computed S once on the whole dataset with beta = eps
    (errata 21) -- not private.  The mechanism's own proven accounting pays
    for the m-fold dilation (m = number of candidate attributes).
  - "ld": local dampening on MaxOp; MaxOp's element local sensitivity is 1
    at every distance (one added record of the majority class always raises
    it), so this is the exponential mechanism with Delta = 1 (non-monotone
    form).  Local dampening is meant for ``split_utility="info_gain"``.
* ``split_utility="info_gain"``: q_IG(T, A) = sum_j sum_c tau_jc
  log2(tau_jc / tau_j) (unnormalised, bits), global sensitivity
  Delta = log2(N + 1) + 1/ln 2 with N = ``n_max`` a PUBLIC bound on |T|
  (SPEC §5.2; the SNM code mixes ln and log2, errata 21).  If ``n_max`` is
  None the number of training samples is used and a PrivacyLeakWarning is
  issued.  q_IG is monotone (adding a record can only decrease it, by
  convexity of x log x), which the problems declare.

  - "em", "pf": utility q_IG with Delta.
  - "ld" and the smooth mechanisms: utility q_IG with the info-gain *element
    local sensitivity* of SPEC §5.1 as the (per-candidate) profile, see
    :func:`info_gain_element_sensitivity`: computed for t = 0..LD_HORIZON
    (64) and set to the global sensitivity Delta beyond (and capped by Delta
    everywhere); the cap is data-independent, so the profile stays
    admissible (delta(x, t) <= delta(y, t + 1) for neighbours).

Neighbour datasets for audits: :func:`split_problem` builds exactly the
problem a node builds from the node's records, and :func:`node_neighbours`
enumerates the add/remove neighbours of a small node dataset.

Inputs (shared with :mod:`dpselect.apps.forest`)
------------------------------------------------
* ``bounds``: public (lo, hi) of the continuous features: a pair of scalars
  (all features), a dict {feature index or column name: (lo, hi)}, or an
  array of shape (n_continuous, 2) or (n_features, 2).  Continuous features
  without bounds get the training data's min/max with a PrivacyLeakWarning
  (as diffprivlib does): that leaks.
* Categorical features: pandas ``category`` columns (their dtype's categories
  are taken as the public domain -- if they were created by
  ``astype("category")`` they came from the data), ``bool`` columns (domain
  {False, True}), object/string columns and the features listed in
  ``categorical_features`` (indices, names, a boolean mask, or a dict
  {feature: categories} giving the public domain).  Domains inferred from the
  training data issue a PrivacyLeakWarning.  Training values outside a
  declared domain are a ValueError.
* ``classes``: the public class labels.  If None they are inferred from y
  with a PrivacyLeakWarning (the set of labels present leaks).  With a single
  class every prediction is that class.
* NaN / inf in X is a ValueError.  At prediction time an unseen category (not
  in the public domain) at a node splitting on that feature follows the child
  with the largest noisy count N_T (the "majority child"; a function of
  released values only).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_delta, check_epsilon, check_int
from .._warnings import PrivacyLeakWarning
from ..mechanisms.registry import APPROXIMATE_NAMES
from ..mechanisms.registry import make_mechanism as registry_make_mechanism
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..sensitivity import StepProfile

try:  # scikit-learn is an optional dependency of dpselect (the "ml" extra)
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data
except ImportError as _exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError(
        "dpselect.apps.tree and dpselect.apps.forest need scikit-learn (>= 1.6): pip install scikit-learn"
    ) from _exc

__all__ = [
    "DPDecisionTreeClassifier",
    "SELECTIONS",
    "SPLIT_UTILITIES",
    "make_mechanism",
    "split_problem",
    "node_neighbours",
    "info_gain",
    "max_operator",
    "info_gain_sensitivity",
    "info_gain_element_sensitivity",
]

#: Selection mechanisms by name.
SELECTIONS = ("snm_t", "snm_lln", "snm_laplace", "sps", "em", "pf", "ld")
#: Split-quality functions.
SPLIT_UTILITIES = ("max_operator", "info_gain")

_SMOOTH = ("snm_t", "snm_lln", "snm_laplace", "sps")
_LN2 = math.log(2.0)
#: Horizon T of the info-gain element-sensitivity profile: delta(x, t, A) is
#: computed exactly for t = 0..T and set to the global sensitivity beyond (a
#: data-independent cap keeps the profile admissible, SPEC §5.1).
LD_HORIZON = 64
_TABLE_CELLS = 1 << 22  # bound on contingency-table cells built at once


# ---------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------


def _check_selection(selection: Any) -> str:
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    return selection


def make_mechanism(selection: str, epsilon: float, delta: float = 0.0) -> Any:
    """The dpselect mechanism behind a selection name (:func:`dpselect.mechanisms.registry.make_mechanism`).

    "em" ExponentialMechanism, "pf" PermuteAndFlip, "snm_t"/"snm_laplace"/
    "snm_lln" SmoothNoisyMax(noise="student_t"/"laplace"/"lln") (proven
    calibration), "sps" SmoothPrivateSelection (gamma = 4, one-sided), "ld"
    LocalDampening.  ``delta`` is only used by "snm_laplace" and "snm_lln"
    (it must then be > 0); the others are pure.
    """
    return registry_make_mechanism(_check_selection(selection), epsilon, delta)


# ---------------------------------------------------------------------------
# split utilities and their sensitivities
# ---------------------------------------------------------------------------


def max_operator(tables: np.ndarray) -> np.ndarray:
    """MaxOp(T, A) = sum_j max_c tau^A_{j,c} for tables of shape (m, k, C)."""
    return np.asarray(tables).max(axis=2).sum(axis=1).astype(np.float64)


def _xlog2x(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log2(x[pos])
    return out


def info_gain(tables: np.ndarray) -> np.ndarray:
    """q_IG(T, A) = sum_j sum_c tau_jc log2(tau_jc / tau_j) (bits, <= 0) for tables (m, k, C)."""
    t = np.asarray(tables, dtype=np.float64)
    return _xlog2x(t).sum(axis=(1, 2)) - _xlog2x(t.sum(axis=2)).sum(axis=1)


def info_gain_sensitivity(n_max: float) -> float:
    """Global sensitivity of q_IG under add/remove: log2(N + 1) + 1/ln 2 (SPEC §5.2)."""
    return math.log2(float(n_max) + 1.0) + 1.0 / _LN2


def _inc(x: np.ndarray) -> np.ndarray:
    """F(x) = f(x+1) - f(x) with f(x) = x log2 x: log2(x+1) + x log2(1 + 1/x), F(0) = 0."""
    x = np.asarray(x, dtype=np.float64)
    inv = np.divide(1.0, x, out=np.zeros_like(x), where=x > 0)
    return np.log2(x + 1.0) + x * np.log1p(inv) / _LN2


def _ig_cell_sensitivity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Largest |change of q_IG| from one record touching a cell with tau_j = a, tau_jc = b.

    Adding a record (j, c): q changes by F(b) - F(a) (<= 0); removing one
    (needs b >= 1): by F(a-1) - F(b-1) (>= 0), F(x) = f(x+1) - f(x),
    f(x) = x log2 x.  This is h(a, b) of SPEC §5.1 (f, g there are F and
    -F(. - 1)); it increases in a and decreases in b.
    """
    add = _inc(a) - _inc(b)
    rem = np.where(b >= 1, _inc(np.maximum(a - 1, 0)) - _inc(np.maximum(b - 1, 0)), 0.0)
    return np.maximum(add, rem)


def info_gain_element_sensitivity(tables: np.ndarray, horizon: int = LD_HORIZON,
                                  n_values: np.ndarray | None = None) -> np.ndarray:
    """delta(T, t, A) for t = 0..horizon: the info-gain element local sensitivity (SPEC §5.1).

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
        add = F[aa] - F[bb]
        rem = np.where(bb >= 1, F[np.maximum(aa - 1, 0)] - F[np.maximum(bb - 1, 0)], 0.0)
        val = np.where(ok[None] & (ts >= s), np.maximum(add, rem), 0.0)
        np.maximum(best, val.max(axis=2), out=best)
    return np.maximum.accumulate(best, axis=0)


# ---------------------------------------------------------------------------
# the selection problem a node builds
# ---------------------------------------------------------------------------


def _problem_kind(selection: str, split_utility: str) -> str:
    if split_utility == "max_operator":
        return "maxop_indicator" if selection in _SMOOTH else "maxop_score"
    return "ig_profile" if selection in _SMOOTH + ("ld",) else "ig_score"


def _problem_from_tables(tables: np.ndarray, n_values: np.ndarray, kind: str, ig_gs: float,
                         horizon: int = LD_HORIZON, labels: Any = None) -> SelectionProblem:
    """SelectionProblem over the m candidate attributes of one node (tables (m, k, C))."""
    if kind == "maxop_score":
        return SelectionProblem(max_operator(tables), labels=labels, global_sensitivity=1.0, monotone=True)
    if kind == "maxop_indicator":
        mo = max_operator(tables)
        u = (mo == mo.max()).astype(np.float64)
        srt = np.sort(mo)[::-1]
        gap = int(srt[0] - srt[1]) if mo.size > 1 else 0
        ell = max(gap - 1, 0)
        ls = StepProfile([0, ell], [0.0, 1.0]) if ell > 0 else StepProfile([0], [1.0])
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


def _tables(codes: np.ndarray, y: np.ndarray, n_values: np.ndarray, n_classes: int) -> np.ndarray:
    """Contingency tables tau^A_{j,c} of one node, shape (m, max(n_values), C)."""
    m = codes.shape[1]
    kmax = int(max(1, np.max(n_values)))
    idx = (np.arange(m)[None, :] * kmax + codes) * n_classes + y[:, None]
    return np.bincount(idx.ravel(), minlength=m * kmax * n_classes).reshape(m, kmax, n_classes)


def split_problem(codes: Any, y: Any, n_values: Any, n_classes: int, selection: str = "snm_t",
                  split_utility: str = "max_operator", n_max: float | None = None,
                  horizon: int = LD_HORIZON) -> SelectionProblem:
    """The split-selection problem a DiffP-ID3 node builds from its own records.

    Parameters
    ----------
    codes : (n, m) integer codes of the node's records for its m candidate
        attributes (code of attribute A in 0..n_values[A]-1).
    y : (n,) class codes in 0..n_classes-1.
    n_values : (m,) public domain sizes.
    n_classes : public number of classes.
    selection, split_utility : as in :class:`DPDecisionTreeClassifier`.
    n_max : public bound on the node size (required for "info_gain").

    Neighbours: one record added to or removed from the node (add/remove).
    """
    codes = np.asarray(codes, dtype=np.int64).reshape(len(np.asarray(y)), -1)
    y = np.asarray(y, dtype=np.int64)
    n_values = np.asarray(n_values, dtype=np.int64)
    kind = _problem_kind(_check_selection(selection), _check_split_utility(split_utility))
    if split_utility == "info_gain" and n_max is None:
        raise ValueError("n_max (a public bound on the node size) is required for split_utility='info_gain'")
    gs = info_gain_sensitivity(n_max) if n_max is not None else 1.0
    return _problem_from_tables(_tables(codes, y, n_values, int(n_classes)), n_values, kind, gs, horizon)


def node_neighbours(codes: Any, y: Any, n_values: Any, n_classes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """All add/remove neighbours (codes', y') of a small node dataset (for exact audits).

    Additions range over every combination of attribute values and classes
    (prod(n_values) * n_classes of them); removals over the distinct records.
    """
    codes = np.asarray(codes, dtype=np.int64).reshape(len(np.asarray(y)), -1)
    y = np.asarray(y, dtype=np.int64)
    n_values = np.asarray(n_values, dtype=np.int64)
    out = []
    grids = np.stack(np.meshgrid(*[np.arange(k) for k in n_values], indexing="ij"), -1).reshape(-1, n_values.size)
    for row in grids:
        for c in range(int(n_classes)):
            out.append((np.vstack([codes, row[None, :]]), np.append(y, c)))
    seen = set()
    for i in range(y.size):
        key = (tuple(codes[i]), int(y[i]))
        if key in seen:
            continue
        seen.add(key)
        out.append((np.delete(codes, i, axis=0), np.delete(y, i)))
    return out


def _check_split_utility(split_utility: Any) -> str:
    if split_utility not in SPLIT_UTILITIES:
        raise ValueError(f"split_utility must be one of {SPLIT_UTILITIES}, got {split_utility!r}")
    return split_utility


# ---------------------------------------------------------------------------
# input handling shared with the forest
# ---------------------------------------------------------------------------


def _generator(random_state: Any) -> np.random.Generator:
    """None / int / numpy Generator / SeedSequence / legacy RandomState -> Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        if int(random_state) < 0:
            raise ValueError(f"random_state must be a non-negative int, got {random_state}")
        return np.random.default_rng(int(random_state))
    raise TypeError(f"random_state must be None, an int, or a numpy Generator, got {type(random_state).__name__}")


def _is_dataframe(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


@dataclass
class _Schema:
    """Fitted description of the (public) feature space."""

    n_features: int
    is_cat: np.ndarray  # (p,) bool
    cont: np.ndarray  # indices of continuous features
    cat: np.ndarray  # indices of categorical features
    lo: np.ndarray  # (m_c,) public lower bounds
    hi: np.ndarray  # (m_c,) public upper bounds
    categories: list  # m_k public domains (1-D arrays)

    @property
    def n_categories(self) -> np.ndarray:
        return np.array([len(c) for c in self.categories], dtype=np.int64)


def _feature_index(key: Any, names: list | None, p: int, what: str) -> int:
    if isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)):
        j = int(key)
        if not -p <= j < p:
            raise ValueError(f"{what}: feature index {j} out of range for {p} features")
        return j % p
    if names is not None and key in names:
        return names.index(key)
    raise ValueError(f"{what}: unknown feature {key!r}")


def _resolve_categorical(categorical_features: Any, names: list | None, p: int) -> dict:
    """categorical_features -> {feature index: public categories or None}."""
    if categorical_features is None:
        return {}
    if isinstance(categorical_features, dict):
        return {_feature_index(k, names, p, "categorical_features"): v for k, v in categorical_features.items()}
    if isinstance(categorical_features, str):
        categorical_features = [categorical_features]
    arr = np.asarray(categorical_features)
    if arr.dtype == bool:
        if arr.shape != (p,):
            raise ValueError(f"categorical_features as a boolean mask must have length {p}, got {arr.shape}")
        return {int(j): None for j in np.flatnonzero(arr)}
    return {_feature_index(k, names, p, "categorical_features"): None for k in list(categorical_features)}


def _resolve_bounds(bounds: Any, cont: np.ndarray, names: list | None, p: int) -> list:
    """bounds -> list over continuous features of (lo, hi) or None (infer)."""
    m_c = cont.size
    if bounds is None:
        return [None] * m_c
    if isinstance(bounds, dict):
        resolved = {_feature_index(k, names, p, "bounds"): v for k, v in bounds.items()}
        return [resolved.get(int(j)) for j in cont]
    arr = np.asarray(bounds, dtype=np.float64)
    if arr.shape == (2,):
        return [tuple(arr)] * m_c
    if arr.ndim == 2 and arr.shape[1] == 2 and arr.shape[0] in (m_c, p):
        rows = arr if arr.shape[0] == m_c else arr[cont]
        return [tuple(r) for r in rows]
    raise ValueError(
        f"bounds must be a (lo, hi) pair, a dict {{feature: (lo, hi)}} or an array of shape ({m_c}, 2) "
        f"or ({p}, 2); got shape {arr.shape}"
    )


def _check_pair(b: Any, j: int) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in b)
    except (TypeError, ValueError):
        raise ValueError(f"bounds for feature {j} must be a (lo, hi) pair of numbers, got {b!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds for feature {j} must be finite with lo < hi, got ({lo}, {hi})")
    return lo, hi


def _codes(values: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Index of each value in the public domain, -1 if absent."""
    try:
        import pandas as pd

        return np.asarray(pd.Index(categories).get_indexer(values), dtype=np.int64)
    except ImportError:  # pragma: no cover - pandas absent: numeric domains only
        cats = np.asarray(categories)
        order = np.argsort(cats, kind="stable")
        pos = np.clip(np.searchsorted(cats[order], values), 0, cats.size - 1)
        hit = cats[order][pos] == values
        return np.where(hit, order[pos], -1).astype(np.int64)


def _infer_categories(values: np.ndarray) -> np.ndarray:
    try:
        return np.unique(values)
    except TypeError:  # unorderable mix of types: order of appearance
        import pandas as pd

        return np.asarray(pd.unique(values), dtype=object)


def _columns(estimator: Any, X: Any, reset: bool) -> tuple[list, list | None, int, int]:
    """Validated columns of X: (list of 1-D arrays, per-column declared categories or None, n, p)."""
    if _is_dataframe(X):
        import pandas as pd

        n, p = X.shape
        if n < 1:
            raise ValueError(f"Found array with {n} sample(s) (shape={X.shape}) while a minimum of 1 is required.")
        if p < 1:
            raise ValueError(f"Found array with {p} feature(s) (shape={X.shape}) while a minimum of 1 is required.")
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        cols, declared = [], []
        for j in range(p):
            s = X.iloc[:, j]
            if s.isna().any():
                raise ValueError("Input X contains NaN.")
            dtype = s.dtype
            if isinstance(dtype, pd.CategoricalDtype):
                cols.append(np.asarray(s.astype(object)))
                declared.append(np.asarray(dtype.categories))
            elif pd.api.types.is_bool_dtype(dtype):
                cols.append(s.to_numpy(dtype=bool))
                declared.append(np.array([False, True]))
            elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
                v = s.to_numpy(dtype=np.float64)
                if not np.isfinite(v).all():
                    raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
                cols.append(v)
                declared.append(None)
            elif pd.api.types.is_complex_dtype(dtype):
                raise ValueError("Complex data not supported")
            else:  # object / string: categorical with a domain to be declared or inferred
                cols.append(np.asarray(s.astype(object)))
                declared.append("object")
        return cols, declared, n, p
    Xa = check_array(X, dtype=np.float64, ensure_all_finite=True, estimator=estimator)
    validate_data(estimator, Xa, reset=reset, skip_check_array=True)
    n, p = Xa.shape
    return _ArrayColumns(Xa), [None] * p, n, p


class _ArrayColumns(list):
    """The columns of a 2-D float array (indexable like a list of columns, keeps the array)."""

    def __init__(self, a: np.ndarray) -> None:
        super().__init__(a[:, j] for j in range(a.shape[1]))
        self.array = a


def _stack(cols: list, idx: np.ndarray, n: int) -> np.ndarray:
    if not idx.size:
        return np.empty((n, 0))
    if isinstance(cols, _ArrayColumns):
        return cols.array if idx.size == cols.array.shape[1] else cols.array[:, idx]
    return np.column_stack([cols[j] for j in idx]).astype(np.float64, copy=False)


def _encode_fit(estimator: Any, X: Any, bounds: Any, categorical_features: Any) -> tuple[_Schema, np.ndarray, np.ndarray]:
    """Fit the public feature schema; returns (schema, continuous values (n, m_c), categorical codes (n, m_k))."""
    cols, declared, n, p = _columns(estimator, X, reset=True)
    names = list(X.columns) if _is_dataframe(X) else None
    cat_spec = _resolve_categorical(categorical_features, names, p)
    is_cat = np.zeros(p, dtype=bool)
    categories: list = []
    leaked_cats = []
    for j in range(p):
        if declared[j] is not None or j in cat_spec:
            is_cat[j] = True
            given = cat_spec.get(j)
            if given is not None:
                dom = np.asarray(list(given))
            elif declared[j] is not None and not isinstance(declared[j], str):
                dom = declared[j]
            else:
                dom = _infer_categories(cols[j])
                leaked_cats.append(names[j] if names else j)
            if len(dom) < 1 or len(set(dom.tolist())) != len(dom):
                raise ValueError(f"the categories of feature {j} must be non-empty and distinct")
            categories.append(dom)
    cont = np.flatnonzero(~is_cat)
    cat = np.flatnonzero(is_cat)
    for j in cont:
        if cols[j].dtype == object:
            raise ValueError(f"feature {j} is not numeric: declare it in categorical_features")
    raw_bounds = _resolve_bounds(bounds, cont, names, p)
    lo, hi, leaked_bounds = np.empty(cont.size), np.empty(cont.size), []
    for i, j in enumerate(cont):
        if raw_bounds[i] is None:
            v = cols[j]
            a, b = float(v.min()), float(v.max())
            if not a < b:
                a, b = a - 0.5, b + 0.5
            lo[i], hi[i] = a, b
            leaked_bounds.append(names[j] if names else int(j))
        else:
            lo[i], hi[i] = _check_pair(raw_bounds[i], int(j))
    name = type(estimator).__name__
    if leaked_bounds:
        warnings.warn(
            f"{name}: bounds of continuous features {leaked_bounds[:10]}{'...' if len(leaked_bounds) > 10 else ''} "
            "were taken from the training data's min/max, which leaks private information; pass public "
            "bounds=... to keep the differential-privacy guarantee.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    if leaked_cats:
        warnings.warn(
            f"{name}: the categories of features {leaked_cats[:10]} were inferred from the training data, "
            "which leaks private information; declare the public domains (pandas categorical dtype or "
            "categorical_features={feature: categories}).",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    schema = _Schema(p, is_cat, cont, cat, lo, hi, categories)
    Xc = _stack(cols, cont, n)
    Xk = _cat_codes(cols, schema, n)
    if (Xk < 0).any():
        j = int(cat[np.flatnonzero((Xk < 0).any(axis=0))[0]])
        raise ValueError(f"training values of feature {j} lie outside its declared categories")
    return schema, Xc, Xk


def _cat_codes(cols: list, schema: _Schema, n: int) -> np.ndarray:
    Xk = np.empty((n, schema.cat.size), dtype=np.int64)
    for i, j in enumerate(schema.cat):
        Xk[:, i] = _codes(cols[j], schema.categories[i])
    return Xk


def _encode_transform(estimator: Any, X: Any, schema: _Schema) -> tuple[np.ndarray, np.ndarray]:
    """Continuous values and categorical codes (-1 = unseen category) for prediction."""
    cols, declared, n, p = _columns(estimator, X, reset=False)
    for j in schema.cont:
        if cols[j].dtype == object:
            raise ValueError(f"feature {j} was continuous at fit time but is not numeric now")
    return _stack(cols, schema.cont, n), _cat_codes(cols, schema, n)


def _encode_y(estimator: Any, y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, y codes); warns when the classes are inferred from y."""
    if y is None:
        raise ValueError(
            f"This {type(estimator).__name__} estimator requires y to be passed, but the target y is None."
        )
    y = column_or_1d(y, warn=True)
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        raise ValueError("Input y contains NaN or infinity.")
    if y.shape[0] != n:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]")
    check_classification_targets(y)
    if estimator.classes is None:
        classes = np.unique(y)
        warnings.warn(
            f"{type(estimator).__name__}: the classes were inferred from y, which leaks which labels occur; "
            "pass the public label set as classes=... to keep the differential-privacy guarantee.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    else:
        classes = np.unique(np.asarray(estimator.classes))
        if classes.size != len(estimator.classes):
            raise ValueError("classes must be distinct")
    codes = _codes(y, classes)
    if (codes < 0).any():
        raise ValueError("y contains labels that are not in classes")
    return classes, codes


def _check_common(estimator: Any) -> tuple[float, float]:
    epsilon = check_epsilon(estimator.epsilon)
    delta = check_delta(estimator.delta)
    _check_selection(estimator.selection)
    return epsilon, delta


def _bin(Xc: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bin codes over [lo, hi]; values outside go to the first/last bin."""
    z = np.floor((Xc - lo) / (hi - lo) * n_bins)
    return np.clip(z, 0, n_bins - 1).astype(np.int64)


def _max_privacy(a: Privacy | None, b: Privacy) -> Privacy:
    """Parallel composition: a neighbour changes one part only -> (max eps, max delta)."""
    if a is None:
        return b
    return Privacy(max(a.epsilon, b.epsilon), max(a.delta, b.delta), "add_remove",
                   a.source if a.epsilon >= b.epsilon else b.source)


def _leaf_values(noisy: np.ndarray) -> np.ndarray:
    """Class probabilities of leaves from noisy counts: clipped at 0 and normalised (one-hot on the argmax if all <= 0)."""
    p = np.clip(noisy, 0.0, None)
    s = p.sum(axis=1, keepdims=True)
    onehot = np.zeros_like(p)
    onehot[np.arange(p.shape[0]), np.argmax(noisy, axis=1)] = 1.0
    return np.where(s > 0, p / np.where(s > 0, s, 1.0), onehot)


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------


@dataclass
class DPTree:
    """Arrays of a fitted DiffP-ID3 tree (every value here is a released, private quantity).

    Node i: ``feature[i]`` (-1 for a leaf), children ``child_start[i] ..
    child_start[i] + n_children[i] - 1`` (one per value of the feature),
    ``default_child[i]`` (the child with the largest noisy count, used for
    unseen categories), ``noisy_count[i]`` (N_T), ``depth[i]``,
    ``leaf[i]`` (row of ``leaf_counts`` / ``value``, -1 for internal nodes).
    """

    feature: np.ndarray
    child_start: np.ndarray
    n_children: np.ndarray
    default_child: np.ndarray
    noisy_count: np.ndarray
    depth: np.ndarray
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


class DPDecisionTreeClassifier(ClassifierMixin, BaseEstimator):
    """Differentially private ID3 decision tree (Friedman–Schuster DiffP-ID3).

    See the module docstring for the algorithm, the privacy accounting and
    the input conventions.

    Parameters
    ----------
    epsilon : total privacy budget (> 0).
    max_depth : depth limit d (>= 0); nodes at depth d are leaves.
    selection : split-selection mechanism: "snm_t" (default), "snm_lln",
        "snm_laplace", "sps", "em", "pf" or "ld".
    split_utility : "max_operator" (default) or "info_gain".
    n_bins : number of equal-width bins of each continuous feature (>= 2).
    bounds : public bounds of the continuous features (module docstring).
    categorical_features : indices / names / mask / {feature: categories}.
    delta : total delta for the (eps, delta) mechanisms "snm_laplace" and
        "snm_lln" (split evenly over the levels that can hold a split).
    n_max : public upper bound on the number of records (required for a
        private "info_gain"; None uses n_samples with a PrivacyLeakWarning).
    classes : public class labels (None infers them with a PrivacyLeakWarning).
    random_state : None, an int, or a numpy Generator.

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_ (DataFrame input),
    tree_ (:class:`DPTree`), privacy_ (:class:`~dpselect.privacy.Privacy`,
    the a-priori guarantee), level_privacy_ (what each realised level spent),
    epsilon_per_query_ (eps').
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        max_depth: int = 5,
        selection: str = "snm_t",
        split_utility: str = "max_operator",
        n_bins: int = 20,
        bounds: Any = None,
        categorical_features: Any = None,
        delta: float = 1e-6,
        n_max: Any = None,
        classes: Any = None,
        random_state: Any = None,
    ) -> None:
        self.epsilon = epsilon
        self.max_depth = max_depth
        self.selection = selection
        self.split_utility = split_utility
        self.n_bins = n_bins
        self.bounds = bounds
        self.categorical_features = categorical_features
        self.delta = delta
        self.n_max = n_max
        self.classes = classes
        self.random_state = random_state

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self):  # noqa: D105
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        # differential privacy trades accuracy for privacy: at the default budget the tree need not
        # reach scikit-learn's 0.83 training accuracy on its 300-sample blobs (tests/test_tree.py checks
        # accuracy with generous budgets instead)
        tags.classifier_tags.poor_score = True
        return tags

    # ------------------------------------------------------------------- fit
    def _codes_matrix(self, Xc: np.ndarray, Xk: np.ndarray) -> np.ndarray:
        sch = self._schema
        Z = np.empty((Xc.shape[0], sch.n_features), dtype=np.int64)
        if sch.cont.size:
            Z[:, sch.cont] = _bin(Xc, sch.lo, sch.hi, self.n_bins)
        if sch.cat.size:
            Z[:, sch.cat] = Xk
        return Z

    def fit(self, X: Any, y: Any) -> "DPDecisionTreeClassifier":
        """Grow the private tree on (X, y)."""
        epsilon, delta = _check_common(self)
        split_utility = _check_split_utility(self.split_utility)
        max_depth = check_int(self.max_depth, "max_depth", minimum=0)
        n_bins = check_int(self.n_bins, "n_bins", minimum=2)
        schema, Xc, Xk = _encode_fit(self, X, self.bounds, self.categorical_features)
        n = Xc.shape[0]
        classes, yc = _encode_y(self, y, n)
        gen = _generator(self.random_state)
        self._schema = schema
        C = int(classes.size)
        p = schema.n_features
        n_values = np.empty(p, dtype=np.int64)
        n_values[schema.cont] = n_bins
        n_values[schema.cat] = schema.n_categories
        Z = self._codes_matrix(Xc, Xk)

        ig_gs = 1.0
        if split_utility == "info_gain":
            if self.n_max is None:
                warnings.warn(
                    f"{type(self).__name__}: n_max is None, so the information-gain sensitivity uses the number "
                    "of training samples, which leaks it; pass a public bound n_max=...",
                    PrivacyLeakWarning,
                    stacklevel=2,
                )
                n_max = float(n)
            else:
                n_max = float(check_int(self.n_max, "n_max", minimum=1))
                if n_max < n:
                    raise ValueError(f"n_max={self.n_max} is smaller than the number of training samples ({n})")
            ig_gs = info_gain_sensitivity(n_max)

        d_eff = min(max_depth, p)
        eps_q = epsilon / (2.0 * (d_eff + 1))
        split_levels = [k for k in range(d_eff) if p - k >= 2]
        delta_node = delta / max(1, len(split_levels)) if self.selection in APPROXIMATE_NAMES else 0.0
        mech = make_mechanism(self.selection, eps_q, delta_node)
        kind = _problem_kind(self.selection, split_utility)
        kmax = int(n_values.max())

        # a-priori guarantee (data-independent: depth k has exactly p - k candidates)
        count_priv = Privacy(eps_q, 0.0, "add_remove", "Laplace noisy count (sensitivity 1)")
        leaf_priv = Privacy(eps_q, 0.0, "add_remove", "Laplace noisy class counts (parallel over classes)")
        total = None
        for k in range(d_eff + 1):
            level = leaf_priv
            if k in split_levels:
                dummy = _problem_from_tables(np.zeros((p - k, kmax, max(C, 1)), dtype=np.int64),
                                             np.full(p - k, kmax), kind, ig_gs, 1)
                level = _max_privacy(level, mech.privacy(dummy))
            level = count_priv + level
            total = level if total is None else total + level
        self.privacy_ = Privacy(total.epsilon, total.delta, "add_remove",
                                f"DiffP-ID3, {d_eff + 1} levels x (count + leaf/split), parallel within levels "
                                "(SPEC §5.2)")
        self.epsilon_per_query_ = eps_q

        # ---- grow level by level
        sqrt2 = math.sqrt(2.0)
        feature, child_start, n_children, noisy_count, depth_arr, leaf_of = [], [], [], [], [], []
        leaf_counts = []
        level_priv: list[Privacy] = []
        rows = np.arange(n)  # active records
        loc = np.zeros(n, dtype=np.int64)  # their node at the current level (local index)
        used = np.zeros((1, p), dtype=bool)
        n_lvl, first = 1, 0
        n_leaves = 0
        for k in range(d_eff + 1):
            N = np.bincount(loc, minlength=n_lvl).astype(np.float64)
            noisy = N + gen.laplace(0.0, 1.0 / eps_q, size=n_lvl)
            avail = ~used
            n_avail = avail.sum(axis=1)
            t = np.where(avail, n_values[None, :], 0).max(axis=1)
            denom = (t * max(C, 1)).astype(np.float64)
            small = np.divide(noisy, denom, out=np.full(n_lvl, -np.inf), where=denom > 0) < sqrt2 / eps_q
            stop = (n_avail == 0) | (k >= d_eff) | small
            feat = np.full(n_lvl, -1, dtype=np.int64)
            cstart = np.full(n_lvl, -1, dtype=np.int64)
            nch = np.zeros(n_lvl, dtype=np.int64)
            leaf_idx = np.full(n_lvl, -1, dtype=np.int64)
            lp = count_priv
            # leaves: noisy class counts
            leaves = np.flatnonzero(stop)
            if leaves.size:
                cc = np.bincount(loc * C + yc[rows], minlength=n_lvl * C).reshape(n_lvl, C)[leaves]
                leaf_counts.append(cc + gen.laplace(0.0, 1.0 / eps_q, size=cc.shape))
                leaf_idx[leaves] = n_leaves + np.arange(leaves.size)
                n_leaves += leaves.size
                lp = lp + leaf_priv
            # internal nodes: one private selection each
            splits = np.flatnonzero(~stop)
            sel_priv = None
            if splits.size:
                at_split = np.full(n_lvl, -1, dtype=np.int64)
                at_split[splits] = np.arange(splits.size)
                rec_split = at_split[loc]
                chosen = np.empty(splits.size, dtype=np.int64)
                per_chunk = max(1, _TABLE_CELLS // (p * kmax * max(C, 1)))
                for c0 in range(0, splits.size, per_chunk):
                    c1 = min(splits.size, c0 + per_chunk)
                    mask = (rec_split >= c0) & (rec_split < c1)
                    s_loc = rec_split[mask] - c0
                    r = rows[mask]
                    idx = ((s_loc[:, None] * p + np.arange(p)[None, :]) * kmax + Z[r]) * C + yc[r][:, None]
                    tabs = np.bincount(idx.ravel(), minlength=(c1 - c0) * p * kmax * C).reshape(c1 - c0, p, kmax, C)
                    for i in range(c1 - c0):
                        cand = np.flatnonzero(avail[splits[c0 + i]])
                        if cand.size == 1:
                            chosen[c0 + i] = cand[0]
                            continue
                        prob = _problem_from_tables(tabs[i][cand], n_values[cand], kind, ig_gs)
                        chosen[c0 + i] = cand[int(mech.select(prob, rng=gen))]
                        sel_priv = _max_privacy(sel_priv, mech.privacy(prob))
                feat[splits] = chosen
                nch[splits] = n_values[chosen]
                offs = np.concatenate([[0], np.cumsum(nch[splits])[:-1]])
                cstart[splits] = first + n_lvl + offs
            if sel_priv is not None:
                lp = count_priv + _max_privacy(leaf_priv if leaves.size else None, sel_priv)
            level_priv.append(lp)
            feature.append(feat)
            child_start.append(cstart)
            n_children.append(nch)
            noisy_count.append(noisy)
            depth_arr.append(np.full(n_lvl, k, dtype=np.int64))
            leaf_of.append(leaf_idx)
            if not splits.size:
                break
            # route the records of split nodes to their children
            keep = ~stop[loc]
            rows, loc = rows[keep], loc[keep]
            f_rec = feat[loc]
            loc = (cstart[loc] - (first + n_lvl)) + Z[rows, f_rec]
            n_next = int(nch.sum())
            parent_of_child = np.repeat(splits, nch[splits])
            used = used[parent_of_child].copy()
            used[np.arange(n_next), feat[parent_of_child]] = True
            first += n_lvl
            n_lvl = n_next

        feature_a = np.concatenate(feature)
        cs = np.concatenate(child_start)
        nch_a = np.concatenate(n_children)
        nc = np.concatenate(noisy_count)
        default = np.full(feature_a.size, -1, dtype=np.int64)
        for i in np.flatnonzero(feature_a >= 0):  # loop over internal nodes only
            default[i] = cs[i] + int(np.argmax(nc[cs[i]:cs[i] + nch_a[i]]))
        counts = np.vstack(leaf_counts) if leaf_counts else np.zeros((0, C))
        self.tree_ = DPTree(feature_a, cs, nch_a, default, nc, np.concatenate(depth_arr),
                            np.concatenate(leaf_of), counts, _leaf_values(counts))
        self.level_privacy_ = level_priv
        self.classes_ = classes
        return self

    # --------------------------------------------------------------- predict
    def _leaves(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "tree_")
        Xc, Xk = _encode_transform(self, X, self._schema)
        Z = self._codes_matrix(Xc, np.where(Xk < 0, -1, Xk))
        tr = self.tree_
        node = np.zeros(Z.shape[0], dtype=np.int64)
        rows = np.arange(Z.shape[0])
        for _ in range(tr.max_depth):
            f = tr.feature[node]
            inner = f >= 0
            if not inner.any():
                break
            code = Z[rows, np.where(inner, f, 0)]
            ok = (code >= 0) & (code < tr.n_children[node])
            child = np.where(ok, tr.child_start[node] + code, tr.default_child[node])
            node = np.where(inner, child, node)
        return tr.leaf[node]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities: the leaf's noisy class counts clipped at 0 and normalised."""
        check_is_fitted(self, "tree_")
        return self.tree_.value[self._leaves(X)]

    def predict(self, X: Any) -> np.ndarray:
        """The class with the largest noisy count in the sample's leaf."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def apply(self, X: Any) -> np.ndarray:
        """Index (row of ``tree_.leaf_counts``) of the leaf each sample lands in."""
        return self._leaves(X)
