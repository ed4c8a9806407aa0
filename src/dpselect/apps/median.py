"""Private median, mode and mean with dataset-distance ("Duff") utilities, and
the NRS smooth sensitivity of the median / any order statistic.

Neighbour relations (SPEC.md §1)
--------------------------------
* **Duff** (Gillenwater & Muñoz Medina; SPEC.md §6.1, errata 23–25): **add/remove**
  ("add_remove").  The utility of an output ``v`` is ``u_d(x, v) = -d_AR(x, x')``
  minimised over datasets ``x'`` (records in the public ``bounds``) whose
  statistic equals ``v``.  By the triangle inequality ``|u_d(x, v) - u_d(y, v)| <= 1``
  for neighbours (errata 23: "at most 1"), so the exponential mechanism with
  ``Delta = 1`` -- density ``p(v) ∝ exp(epsilon u_d(x, v) / 2)`` w.r.t. Lebesgue
  measure on ``[a, b]`` (counting measure on a public candidate set for the
  mode) -- is ``epsilon``-DP under add/remove (and ``2 epsilon``-DP under
  replace-one).
* **NRS median smooth sensitivity** (Nissim, Raskhodnikova & Smith 2007 §3.1;
  SPEC.md §4.5): **replace-one** ("replace"), ``n`` fixed.  Under add/remove the
  median index moves with ``n`` and the formula here is *not* the smooth
  sensitivity (SPEC.md §4.5, last bullet).

What is here
------------
* :func:`duff_median` (alias :func:`private_median`) and its exact output
  distribution: :func:`duff_median_intervals`, :func:`duff_median_pdf`,
  :func:`output_cdf`, :func:`expected_absolute_error`,
  :func:`duff_median_utility`.  Lower median ``y_m``, ``m = ceil(n/2)``.
* :func:`duff_mode`, :func:`duff_mode_probabilities`, :func:`duff_mode_utility`.
* :func:`duff_mean`, :func:`duff_mean_intervals`, :func:`duff_mean_levels`,
  :func:`duff_mean_utility`.
* :func:`smooth_sensitivity_quantile`, :func:`smooth_sensitivity_median`,
  :func:`local_sensitivity_quantile`, :func:`local_sensitivity_median`.
* :func:`neighbours`: add/remove neighbours of a small dataset, for audits.

Duff median utility (SPEC.md §6.1, errata 24)
---------------------------------------------
Sorted data ``y_1 <= ... <= y_n`` in ``[a, b]``, ``y_0 = a``, ``y_{n+1} = b``,
``m = ceil(n/2)``.  For ``v`` strictly inside the ``j``-th interval
``(y_j, y_{j+1})`` (``j = 0..n``) the distance is

    d_j = max(n - 2j, 2j + 1 - n)

which is SPEC's ``2k - 1[n odd]`` for ``j = m - k`` (left of the median) and
``2k - 1[n even]`` for ``j = m + k - 1``, ``1 <= k <= n - m + 1`` (right).  Each
level ``1..n+1`` is exactly one interval (the level sets ``A_k`` of SPEC), so
``P(output in interval j) ∝ lambda_j exp(-epsilon d_j / 2)``.  Ties in the data
give zero-length intervals, which get probability exactly 0; this is exact
because the EM density is defined up to null sets and ``d_j`` depends only on
``j = #{y_i < v}``.  At arbitrary points (including data points, with ties)
:func:`duff_median_utility` uses the exact count formula derived in its
docstring (checked against BFS in the tests).

Sampling (SPEC.md §6.1 sampler; Duff Prop. 5 / Alg. 1)
------------------------------------------------------
Log-masses ``l_j = log lambda_j - epsilon d_j / 2`` (``-inf`` for empty
intervals); the interval is ``argmin_j log log(1/U_j) - l_j`` (the Gumbel race)
when (number of draws) x (intervals) <= 2**20, otherwise the same categorical
law by inverse CDF on ``exp(l - max l)`` (log-domain normalised, hence equally
stable, and O(n + size log n) for batches); then a uniform point in the chosen
interval.  For the median only the window of levels whose mass is not exactly
zero after normalisation in double precision is touched (every level outside
it has ``l_j - max l < -750``, using ``lambda_j <= b - a``), so after the
O(n log n) sort the cost is O(window) and the law is identical to the full
computation.  Windows longer than 2**16 intervals (very small epsilon) are
weighted without logs -- ``d_j`` grows by 2 per step away from the median on
each side, so the weights are two geometric sequences, built from short exp
tables -- and, for a few draws, sampled by a two-stage inverse CDF (block
sums, then one block); the tests check both against the log-domain law.

Duff mean (their u_d for the mean; derivation in :func:`duff_mean_levels`)
--------------------------------------------------------------------------
Level sets J_k = [L_k, U_k] of means reachable with <= k add/remove operations
(at least one addition), exact up to a finite set; utility ``-k`` on the ring
J_k minus J_{k-1}, ``-(K+1)`` beyond the public number of levels K.

Floating point: like every floating-point EM, masses that underflow are
returned as 0 and level boundaries of the Duff mean are computed in double
precision (SPEC's guarantees are for exact arithmetic).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._validation import (
    as_real_array,
    check_array_1d,
    check_epsilon,
    check_finite_float,
    check_int,
    check_positive,
    check_random_state,
    check_size,
)
from .._warnings import PrivacyLeakWarning

__all__ = [
    "PrivacyLeakWarning",
    "duff_mean",
    "duff_mean_intervals",
    "duff_mean_levels",
    "duff_mean_utility",
    "duff_median",
    "duff_median_intervals",
    "duff_median_pdf",
    "duff_median_utility",
    "duff_mode",
    "duff_mode_probabilities",
    "duff_mode_utility",
    "expected_absolute_error",
    "local_sensitivity_median",
    "local_sensitivity_quantile",
    "neighbours",
    "output_cdf",
    "private_median",
    "smooth_sensitivity_median",
    "smooth_sensitivity_quantile",
]

#: Gumbel race is used when (draws x pieces) is at most this; inverse CDF above.
_RACE_BUDGET = 1 << 20
#: Pieces whose log-mass is this far below the maximum have exp(.) == 0 exactly.
_UNDERFLOW_MARGIN = 750.0
#: Median windows longer than this are weighted without logs (geometric weights).
_FAST_WINDOW = 1 << 16
#: ... unless the upper bound on the max log-mass is this far above the lower bound.
_FAST_SHIFT_LIMIT = 600.0


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------


def _check_bounds(bounds: Any) -> tuple[float, float]:
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__"):
        raise TypeError(f"bounds must be a pair (a, b), got {type(bounds).__name__}")
    if len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (a, b), got length {len(bounds)}")
    a = check_finite_float(bounds[0], "bounds[0]")
    b = check_finite_float(bounds[1], "bounds[1]")
    if not a < b:
        raise ValueError(f"bounds must satisfy a < b, got ({a!r}, {b!r})")
    if not math.isfinite(b - a):
        raise ValueError("bounds width b - a must be finite")
    return a, b


def _sorted_padded(x: Any, a: float, b: float, name: str = "x") -> np.ndarray:
    """``[a, sorted(x)..., b]`` (one copy + in-place sort); validates x in [a, b].

    NaN sorts last and -inf/+inf fall outside the bounds, so no separate
    finiteness pass is needed.
    """
    arr = check_array_1d(x, name, finite=False)
    n = arr.size
    ext = np.empty(n + 2, dtype=np.float64)
    ext[0] = a
    ext[n + 1] = b
    body = ext[1 : n + 1]
    body[...] = arr
    body.sort()
    if np.isnan(ext[n]):
        raise ValueError(f"{name} must not contain NaN")
    if ext[1] < a or ext[n] > b:
        raise ValueError(f"{name} values must lie within bounds [{a!r}, {b!r}] (and be finite)")
    return ext


def _check_points(t: Any, name: str = "t") -> np.ndarray:
    arr = as_real_array(t, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


# ---------------------------------------------------------------------------
# shared samplers (piecewise-constant EM over [a, b]; categorical EM)
# ---------------------------------------------------------------------------


def _log_masses(lefts: np.ndarray, rights: np.ndarray, utilities: np.ndarray, epsilon: float) -> np.ndarray:
    """log(lambda) + epsilon u / 2 per piece (-inf for empty pieces)."""
    lengths = np.asarray(rights, dtype=np.float64) - np.asarray(lefts, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logm = np.log(lengths)
    logm += (0.5 * epsilon) * np.asarray(utilities, dtype=np.float64)
    return logm


def _normalise_log(logw: np.ndarray) -> np.ndarray:
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return w


def _piecewise_probabilities(lefts: Any, rights: Any, utilities: Any, epsilon: float) -> np.ndarray:
    """Exact EM probabilities of pieces ``[l, r]`` of a piecewise-constant utility.

    P(piece k) ∝ (r_k - l_k) exp(epsilon u_k / 2) (Delta = 1), normalised in
    the log domain (no overflow/underflow of the normaliser).
    """
    return _normalise_log(_log_masses(lefts, rights, utilities, epsilon))


def _sample_categorical(
    count: int,
    rng: np.random.Generator,
    method: str = "auto",
    *,
    logw: np.ndarray | None = None,
    w: np.ndarray | None = None,
    overwrite: bool = False,
) -> np.ndarray:
    """``count`` iid draws from P(k) ∝ exp(logw_k) (or ∝ w_k, w >= 0 not all 0).

    method "race": Gumbel race K = argmin_k log log(1/U_k) - logw_k (SPEC.md
    §6.1, Duff Prop. 5); "inverse": inverse CDF of exp(logw - max logw) (or of
    w); "auto": the race when count * pieces <= 2**20 and log-weights are
    given, the inverse CDF otherwise.  Both give the same law.
    """
    n_pieces = (logw if logw is not None else w).size
    if method == "auto":
        method = "race" if (logw is not None and count * n_pieces <= _RACE_BUDGET) else "inverse"
    if method == "race":
        if logw is None:
            with np.errstate(divide="ignore"):
                logw = np.log(w)
        out = np.empty(count, dtype=np.intp)
        chunk = max(1, _RACE_BUDGET // max(n_pieces, 1))
        for s in range(0, count, chunk):
            c = min(chunk, count - s)
            u = rng.random((c, n_pieces))
            with np.errstate(divide="ignore"):
                z = np.log(-np.log(u))
            z -= logw
            out[s : s + c] = np.argmin(z, axis=1)
        return out
    if method != "inverse":
        raise ValueError(f"method must be 'auto', 'race' or 'inverse', got {method!r}")
    if w is not None and count <= 8 and w.size > (1 << 16):
        return _sample_two_stage(w, count, rng)
    cdf = np.exp(logw - logw.max()) if w is None else np.array(w, dtype=np.float64, copy=not overwrite)
    np.cumsum(cdf, out=cdf)
    total = cdf[-1]
    u = rng.random(count) * total
    idx = np.searchsorted(cdf, u, side="right")
    last = int(np.searchsorted(cdf, total, side="left"))  # last piece with positive weight
    np.minimum(idx, last, out=idx)
    return idx


def _sample_two_stage(w: np.ndarray, count: int, rng: np.random.Generator, block: int = 4096) -> np.ndarray:
    """Inverse CDF in two stages (block sums, then within one block): a few draws from a long w.

    Same law as the one-stage inverse CDF, without a cumulative sum over all of w.
    """
    starts = np.arange(0, w.size, block)
    sums = np.add.reduceat(w, starts)
    bcdf = np.cumsum(sums)
    last_block = int(np.searchsorted(bcdf, bcdf[-1], side="left"))
    out = np.empty(count, dtype=np.intp)
    for t in range(count):
        kb = min(int(np.searchsorted(bcdf, rng.random() * bcdf[-1], side="right")), last_block)
        seg = w[starts[kb] : starts[kb] + block]
        cdf = np.cumsum(seg)
        k = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
        out[t] = starts[kb] + min(k, int(np.searchsorted(cdf, cdf[-1], side="left")))
    return out


def _sample_pieces(
    lefts: np.ndarray,
    rights: np.ndarray,
    size: int | None,
    rng: np.random.Generator,
    method: str = "auto",
    *,
    logw: np.ndarray | None = None,
    w: np.ndarray | None = None,
    overwrite: bool = False,
) -> Any:
    """Choose a piece (law ∝ exp(logw) or ∝ w), then a uniform point in it.

    ``overwrite``: ``w`` may be used as scratch space (its cumulative sum).
    """
    count = 1 if size is None else size
    k = _sample_categorical(count, rng, method, logw=logw, w=w, overwrite=overwrite)
    lo = lefts[k]
    hi = rights[k]
    out = lo + rng.random(count) * (hi - lo)
    np.minimum(out, hi, out=out)
    if size is None:
        return float(out[0])
    return out


def _sample_piecewise_em(
    lefts: Any,
    rights: Any,
    utilities: Any,
    epsilon: float,
    size: int | None,
    rng: np.random.Generator,
    method: str = "auto",
) -> Any:
    """EM over a partition of an interval into pieces with constant utility.

    Chooses a piece with P ∝ length * exp(epsilon u / 2) (Delta = 1; see
    :func:`_sample_categorical`), then a uniform point in it.  Returns a float
    (``size`` None) or an array of ``size`` floats.  Shared by the Duff median
    and mean.
    """
    lefts = np.asarray(lefts, dtype=np.float64)
    rights = np.asarray(rights, dtype=np.float64)
    logw = _log_masses(lefts, rights, utilities, epsilon)
    return _sample_pieces(lefts, rights, size, rng, method, logw=logw)


# ---------------------------------------------------------------------------
# Duff median
# ---------------------------------------------------------------------------


def _median_costs(n: int, jlo: int, jhi: int) -> np.ndarray:
    """d_j = max(n - 2j, 2j + 1 - n) for j = jlo..jhi (interval (y_j, y_{j+1}))."""
    j = np.arange(jlo, jhi + 1, dtype=np.float64)
    return np.maximum(n - 2.0 * j, 2.0 * j + 1.0 - n)


def _level_window(n: int, level: int) -> tuple[int, int]:
    """Indices j with d_j <= level: ceil((n - level)/2) <= j <= floor((level + n - 1)/2)."""
    jlo = max(0, -((level - n) // 2))
    jhi = min(n, (level + n - 1) // 2)
    return jlo, jhi


def _median_plan(ext: np.ndarray, epsilon: float) -> tuple[int, int, float, float, bool]:
    """Window [jlo, jhi] of intervals outside which every normalised mass is exactly 0.

    Returns ``(jlo, jhi, mx, s, wide)``: ``mx`` is the largest log-mass found
    in the scanned central window (a lower bound on the global maximum), ``s``
    an upper bound on the global maximum log-mass, and ``wide`` says that the
    window is longer than ``_FAST_WINDOW`` and was not scanned (``s == mx``
    otherwise).  Levels c >= need have log-mass
    <= log(b - a) - epsilon c / 2 <= mx - 750, so they are exactly 0 after
    normalisation in double precision.
    """
    n = ext.size - 2
    log_width = math.log(ext[-1] - ext[0])
    level = min(n + 1, 64)
    while True:
        jlo, jhi = _level_window(n, level)
        lam = ext[jlo + 1 : jhi + 2] - ext[jlo : jhi + 1]
        with np.errstate(divide="ignore"):
            logm = np.log(lam) - (0.5 * epsilon) * _median_costs(n, jlo, jhi)
        mx = float(logm.max())
        if level >= n + 1:
            return jlo, jhi, mx, mx, False
        if mx == -math.inf:  # only empty (tied) intervals so far
            level = min(n + 1, 2 * level)
            continue
        need = 2.0 * (log_width - mx + _UNDERFLOW_MARGIN) / epsilon
        if need <= level:
            return jlo, jhi, mx, mx, False
        new_level = n + 1 if need >= n + 1 else min(n + 1, max(int(math.ceil(need)), 2 * level))
        jlo2, jhi2 = _level_window(n, new_level)
        if jhi2 - jlo2 + 1 > _FAST_WINDOW:
            return jlo2, jhi2, mx, max(mx, log_width - 0.5 * epsilon * (level + 1)), True
        level = new_level


def _scale_geometric(arr: np.ndarray, log_first: float, rate: float) -> None:
    """In place: arr[r] *= exp(log_first - rate r), r = 0..len(arr)-1 (arr may be a reversed view).

    The factors come from two short exp tables (block heads and in-block
    offsets, block length B with rate * B <= 1, so a head that underflows
    means every factor of the block is < e^{-744}: no spurious zeros), applied
    block-wise without temporaries of the array's size.
    """
    n_terms = arr.size
    if n_terms == 0:
        return
    B = int(min(1024, max(1.0, 1.0 / rate)))
    H = n_terms // B
    tail = np.exp(-rate * np.arange(B, dtype=np.float64))
    if H:
        heads = np.exp(log_first - (rate * B) * np.arange(H, dtype=np.float64))
        block = arr[: H * B].reshape(H, B)
        rows = max(1, (1 << 16) // B)  # cache-sized chunks: one pass over arr
        for r0 in range(0, H, rows):
            block[r0 : r0 + rows] *= np.multiply.outer(heads[r0 : r0 + rows], tail)
    rest = n_terms - H * B
    if rest:
        arr[H * B :] *= np.exp(log_first - (rate * B) * H) * tail[:rest]


def _median_fast_masses(ext: np.ndarray, epsilon: float, jlo: int, jhi: int, s: float) -> np.ndarray:
    """Unnormalised masses lambda_j exp(-epsilon d_j / 2 - s) on [jlo, jhi] without logs.

    The weights are two geometric sequences in the distance from the median
    (d = c0 + 2r on each side, see :func:`_scale_geometric`); ``s`` bounds the
    maximal log-mass from above, so nothing overflows.
    """
    n = ext.size - 2
    m = (n + 1) // 2
    w = np.subtract(ext[jlo + 1 : jhi + 2], ext[jlo : jhi + 1])
    n_left = m - jlo  # j = m-1 down to jlo: d = (n - 2m + 2) + 2r
    _scale_geometric(w[:n_left][::-1], -0.5 * epsilon * (n - 2 * m + 2) - s, epsilon)
    _scale_geometric(w[n_left:], -0.5 * epsilon * (2 * m + 1 - n) - s, epsilon)
    return w


def _median_window_log_masses(ext: np.ndarray, epsilon: float, jlo: int, jhi: int) -> np.ndarray:
    n = ext.size - 2
    return _log_masses(ext[jlo : jhi + 1], ext[jlo + 1 : jhi + 2], -_median_costs(n, jlo, jhi), epsilon)


def duff_median(x: Any, epsilon: float, bounds: Any, rng: Any = None, size: Any = None, *, method: str = "auto") -> Any:
    """Sample the Duff exponential mechanism for the (lower) median.

    Parameters
    ----------
    x : 1-D array of finite floats in ``bounds`` (n >= 1).
    epsilon : privacy parameter (> 0); the release is epsilon-DP under
        **add/remove** (SPEC.md §6.1).
    bounds : public ``(a, b)`` with ``a < b``.
    rng : None, int seed or ``numpy.random.Generator``.
    size : None (one float) or number of iid draws (array).
    method : "auto" | "race" | "inverse" -- how the interval is chosen (same law).

    Cost: one sort of ``x`` plus O(window + size log window), see the module
    docstring; the window is all n + 1 intervals only for very small epsilon.
    """
    epsilon = check_epsilon(epsilon)
    a, b = _check_bounds(bounds)
    size = check_size(size)
    if method not in ("auto", "race", "inverse"):
        raise ValueError(f"method must be 'auto', 'race' or 'inverse', got {method!r}")
    ext = _sorted_padded(x, a, b)
    gen = check_random_state(rng)
    n = ext.size - 2
    jlo, jhi, mx, s, wide = _median_plan(ext, epsilon)
    lefts, rights = ext[jlo : jhi + 1], ext[jlo + 1 : jhi + 2]
    if not wide or s - mx > _FAST_SHIFT_LIMIT or method == "race":
        utilities = -_median_costs(n, jlo, jhi)
        return _sample_piecewise_em(lefts, rights, utilities, epsilon, size, gen, method)
    w = _median_fast_masses(ext, epsilon, jlo, jhi, s)
    return _sample_pieces(lefts, rights, size, gen, "inverse", w=w, overwrite=True)


#: DESIGN.md's convenience name.
private_median = duff_median


def _median_distribution(x: Any, epsilon: float, bounds: Any) -> tuple[np.ndarray, np.ndarray, float, float]:
    epsilon = check_epsilon(epsilon)
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    n = ext.size - 2
    jlo, jhi, _, _, _ = _median_plan(ext, epsilon)
    probs = np.zeros(n + 1)
    probs[jlo : jhi + 1] = _normalise_log(_median_window_log_masses(ext, epsilon, jlo, jhi))
    return ext, probs, a, b


def duff_median_intervals(x: Any, epsilon: float, bounds: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact output law of :func:`duff_median` as a piecewise-uniform mixture.

    Returns ``(lefts, rights, probabilities)``, each of length n + 1: interval
    ``j`` is ``[y_j, y_{j+1}]`` (``y_0 = a``, ``y_{n+1} = b``), and the output is
    uniform on interval ``j`` with the given probability.  Zero-length
    intervals (ties, data at the bounds) have probability 0.
    """
    ext, probs, _, _ = _median_distribution(x, epsilon, bounds)
    return ext[:-1].copy(), ext[1:].copy(), probs


def duff_median_pdf(t: Any, x: Any, epsilon: float, bounds: Any) -> Any:
    """Density of :func:`duff_median` at ``t`` (vectorised; 0 outside [a, b]).

    The density is piecewise constant; at a breakpoint the value of the
    interval to the right is returned (at ``b``, of the last interval).
    """
    ext, probs, a, b = _median_distribution(x, epsilon, bounds)
    tt = _check_points(t)
    n = ext.size - 2
    idx = np.searchsorted(ext, tt, side="right") - 1
    at_b = tt == b
    if at_b.any():
        idx = np.where(at_b, np.searchsorted(ext, b, side="left") - 1, idx)
    idx = np.clip(idx, 0, n)
    lam = ext[idx + 1] - ext[idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(lam > 0, probs[idx] / np.where(lam > 0, lam, 1.0), 0.0)
    dens = np.where((tt < a) | (tt > b), 0.0, dens)
    return float(dens) if dens.ndim == 0 else dens


def output_cdf(t: Any, x: Any, epsilon: float, bounds: Any) -> Any:
    """Exact CDF P(duff_median(x) <= t), vectorised over ``t``."""
    ext, probs, a, b = _median_distribution(x, epsilon, bounds)
    tt = _check_points(t)
    n = ext.size - 2
    cum = np.concatenate(([0.0], np.cumsum(probs)))
    idx = np.clip(np.searchsorted(ext, tt, side="right") - 1, 0, n)
    lo = ext[idx]
    lam = ext[idx + 1] - lo
    frac = np.where(lam > 0, np.clip((tt - lo) / np.where(lam > 0, lam, 1.0), 0.0, 1.0), 1.0)
    cdf = np.clip(cum[idx] + probs[idx] * frac, 0.0, 1.0)
    cdf = np.where(tt < a, 0.0, np.where(tt >= b, 1.0, cdf))
    return float(cdf) if cdf.ndim == 0 else cdf


def _uniform_abs_dev(lo: np.ndarray, hi: np.ndarray, c: float) -> np.ndarray:
    """E|U - c| for U ~ Uniform[lo, hi] (lo <= hi), elementwise."""
    mid = 0.5 * lo + 0.5 * hi
    lam = hi - lo
    inside = (lo < c) & (c < hi)
    # ((c - lo)^2 + (hi - c)^2) / (2 lam) = lam (s^2 + (1 - s)^2) / 2, s = (c - lo)/lam: no overflow
    s = np.clip((c - lo) / np.where(lam > 0, lam, 1.0), 0.0, 1.0)
    within = 0.5 * lam * (s * s + (1.0 - s) * (1.0 - s))
    return np.where(inside, within, np.abs(mid - c))


def expected_absolute_error(x: Any, epsilon: float, bounds: Any, target: Any = None) -> float:
    """Exact E|duff_median(x) - target| (default target: the lower median y_m).

    Closed form per interval: for U ~ Uniform[l, r] and l < c < r,
    E|U - c| = ((c - l)^2 + (r - c)^2) / (2 (r - l)); otherwise |(l + r)/2 - c|.
    """
    ext, probs, _, _ = _median_distribution(x, epsilon, bounds)
    n = ext.size - 2
    c = float(ext[(n + 1) // 2]) if target is None else check_finite_float(target, "target")
    keep = probs > 0
    dev = _uniform_abs_dev(ext[:-1][keep], ext[1:][keep], c)
    return float(np.dot(probs[keep], dev))


def duff_median_utility(t: Any, x: Any, bounds: Any) -> Any:
    """Exact Duff utility ``u_d(x, t) = -d_AR(x, {x' : median(x') = t})`` for t in [a, b].

    With L, E, G = #{x_i < t}, #{x_i = t}, #{x_i > t} and D = G - L, the lower
    median of x' equals t iff E' >= 1, 1 - E' <= G' - L' <= E'.  Each
    add/remove changes one of L, E, G by one, and adding a copy of t widens the
    window by one on each side, which never beats moving D; so

        d = max(0, 1 - E) + dist(D, [1 - max(E, 1), max(E, 1)]).

    (Records may be added at a, t or b, all inside the bounds.)  For t strictly
    between order statistics this is ``max(n - 2j, 2j + 1 - n)``; at data points
    it is the larger of the two adjacent interval values (SPEC.md §6.1,
    errata 24), and 0 at the lower median.
    """
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    tt = _check_points(t)
    if ((tt < a) | (tt > b)).any():
        raise ValueError("t must lie within bounds")
    y = ext[1:-1]
    n = y.size
    L = np.searchsorted(y, tt, side="left")
    G = n - np.searchsorted(y, tt, side="right")
    E = n - L - G
    D = G - L
    e1 = np.maximum(E, 1)
    dist = np.maximum(0, np.maximum((1 - e1) - D, D - e1))
    u = 0.0 - (np.maximum(0, 1 - E) + dist).astype(np.float64)
    return float(u) if u.ndim == 0 else u


# ---------------------------------------------------------------------------
# Duff mode
# ---------------------------------------------------------------------------


def _mode_setup(x: Any, candidates: Any, stacklevel: int = 3) -> tuple[np.ndarray, np.ndarray]:
    arr = check_array_1d(x, "x", allow_empty=candidates is not None)
    if candidates is None:
        warnings.warn(
            "duff_mode: candidates=None uses the distinct values of x as the output space; "
            "this candidate set is data-dependent and voids the DP guarantee (pass a public candidate set)",
            PrivacyLeakWarning,
            stacklevel=stacklevel,
        )
        cand = np.unique(arr)
    else:
        cand = check_array_1d(candidates, "candidates")
        if np.unique(cand).size != cand.size:
            raise ValueError("candidates must be distinct")
    vals, cnts = np.unique(arr, return_counts=True)
    n_max = int(cnts.max()) if cnts.size else 0
    if vals.size:
        pos = np.clip(np.searchsorted(vals, cand), 0, vals.size - 1)
        n_c = np.where(vals[pos] == cand, cnts[pos], 0)
    else:
        n_c = np.zeros(cand.size, dtype=np.int64)
    return cand, (n_c - n_max).astype(np.float64)


def duff_mode_utility(x: Any, candidates: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(candidates, u_d)`` with ``u_d(x, v) = n_v - n_max`` (SPEC.md §6.1, errata 25).

    ``n_max`` is the largest count over *all* values of x (candidates or not);
    ties count in v's favour (v is a mode when ``n_v = n_max``).  Under
    add/remove the distance to "v is a mode" is exactly ``n_max - n_v`` (add
    copies of v), so ``|Delta u_d| <= 1``.
    """
    return _mode_setup(x, candidates)


def duff_mode_probabilities(x: Any, epsilon: float, candidates: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(candidates, probabilities)`` of :func:`duff_mode`: P(v) ∝ exp(epsilon u_d(x, v)/2)."""
    epsilon = check_epsilon(epsilon)
    cand, u = _mode_setup(x, candidates)
    return cand, _normalise_log((0.5 * epsilon) * u)


def duff_mode(x: Any, epsilon: float, rng: Any = None, candidates: Any = None, size: Any = None) -> Any:
    """Duff exponential mechanism for the mode: epsilon-DP under add/remove.

    Parameters
    ----------
    x : 1-D numeric values (may be empty when ``candidates`` is given).
    candidates : the **public** output space (distinct values).  If None the
        distinct values of x are used and a :class:`PrivacyLeakWarning` is
        emitted (data-dependent output space: not DP).
    size : None (one value) or number of iid draws.

    P(v) ∝ exp(epsilon (n_v - n_max) / 2) (EM with Delta = 1).  SPEC.md §6.1 also
    records that, n_v being monotone under add/remove, exp(epsilon n_v) would be
    epsilon-DP; that statement is a recollection (not verified against the
    paper) and is **not** implemented.
    """
    epsilon = check_epsilon(epsilon)
    size = check_size(size)
    cand, u = _mode_setup(x, candidates)
    gen = check_random_state(rng)
    count = 1 if size is None else size
    k = _sample_categorical(count, gen, logw=(0.5 * epsilon) * u)
    out = cand[k]
    return out[0].item() if size is None else out


# ---------------------------------------------------------------------------
# Duff mean
# ---------------------------------------------------------------------------


def _check_levels(levels: Any, epsilon: float | None) -> int:
    if levels is None:
        if epsilon is None:
            raise ValueError("levels must be given")
        # public, data-independent default: levels beyond K carry relative weight <= e^{-40}
        return int(min(max(math.ceil(80.0 / epsilon), 8), 10**6))
    return check_int(levels, "levels", minimum=1)


def _extreme_means(shift: np.ndarray, K: int) -> np.ndarray:
    """min over i + j = k, j >= 1 of mean (in shifted coordinates, origin at the bound).

    ``shift`` = data minus the bound (all >= 0), sorted **descending**.  With
    T_i the sum of the i largest values, the mean after removing the i largest
    and adding j = k - i copies of the bound is g(i) = (T_n - T_i)/(n + k - 2i).
    Moving from i to i + 1 lowers g iff t_{i+1} > 2 g(i) (t_{i+1} = (i+1)-th
    largest); once false it stays false, so the minimiser is the first i where
    it fails (found by a vectorised binary search over k = 1..K).
    """
    n = shift.size
    T = np.concatenate(([0.0], np.cumsum(shift)))
    total = T[n]
    k = np.arange(1, K + 1)
    imax = np.minimum(k - 1, n)
    lo = np.zeros(K, dtype=np.int64)
    hi = imax.astype(np.int64)
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        nxt = shift[np.minimum(mid, n - 1)]
        g_num = total - T[mid]
        improve = nxt * (n + k - 2 * mid) > 2.0 * g_num
        lo = np.where(active & improve, mid + 1, lo)
        hi = np.where(active & ~improve, mid, hi)
    best = np.full(K, np.inf)
    for off in (-1, 0, 1):  # guard against rounding at the switch point
        i = np.clip(lo + off, 0, imax)
        best = np.minimum(best, (total - T[i]) / (n + k - 2 * i))
    return np.maximum(best, 0.0)


def duff_mean_levels(x: Any, bounds: Any, levels: Any) -> tuple[np.ndarray, np.ndarray]:
    """Ends ``(L, U)`` of the level sets J_k, k = 0..K' (K' = min(levels, n + 1)).

    J_k = [L_k, U_k] is the set of means reachable from x with at most k
    add/remove operations using at least one addition (records in [a, b]);
    J_0 = {mean(x)}.  With exactly i removals and j >= 1 additions the
    reachable means form the full interval
    [(S - top_i + j a)/(n - i + j), (S - bottom_i + j b)/(n - i + j)]
    (subset sums of size i can be walked by swaps changing the sum by at most
    b - a <= the width j (b - a) of the addition range), each such interval
    contains mean(x), and adding a copy of a (b) never raises (lowers) the
    lower (upper) end, so L_k = min over i + j = k, j >= 1 (see
    :func:`_extreme_means`).  Means reachable only by pure removals form a
    finite set, so J_k equals the exact level set up to a null set; J_{n+1} = [a, b].
    """
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    K = _check_levels(levels, None)
    return _mean_levels(ext, a, b, K)


def _mean_levels(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    y = ext[1:-1]
    n = y.size
    Kp = min(K, n + 1)
    mu = float(np.mean(y))
    mu = min(max(mu, a), b)
    low = a + _extreme_means((y - a)[::-1], Kp)
    high = b - _extreme_means((b - y), Kp)
    L = np.concatenate(([mu], np.minimum(low, mu)))
    U = np.concatenate(([mu], np.maximum(high, mu)))
    L = np.minimum.accumulate(np.maximum(L, a))
    U = np.maximum.accumulate(np.minimum(U, b))
    if Kp == n + 1:  # remove everything, add one record anywhere: J_{n+1} = [a, b]
        L[-1], U[-1] = a, b
    return L, U


def _mean_pieces(ext: np.ndarray, a: float, b: float, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    L, U = _mean_levels(ext, a, b, K)
    Kp = L.size - 1
    k = np.arange(Kp, 0, -1, dtype=np.float64)
    lefts = np.concatenate(([a], L[::-1][:-1], U[:-1], [U[-1]]))
    rights = np.concatenate(([L[-1]], L[::-1][1:], U[1:], [b]))
    utilities = -np.concatenate(([K + 1.0], k, k[::-1], [K + 1.0]))
    return lefts, rights, utilities


def duff_mean_intervals(
    x: Any, epsilon: float, bounds: Any, levels: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact output law of :func:`duff_mean`: ``(lefts, rights, utilities, probabilities)``.

    Pieces, left to right: [a, L_K'] (utility -(K+1)), the left rings
    [L_k, L_{k-1}] (utility -k, k = K'..1), the right rings [U_{k-1}, U_k]
    (k = 1..K'), and [U_K', b] (utility -(K+1)); empty pieces have probability 0.
    """
    epsilon = check_epsilon(epsilon)
    a, b = _check_bounds(bounds)
    K = _check_levels(levels, epsilon)
    ext = _sorted_padded(x, a, b)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    return lefts, rights, utilities, _piecewise_probabilities(lefts, rights, utilities, epsilon)


def duff_mean_utility(v: Any, x: Any, bounds: Any, levels: Any) -> Any:
    """Truncated Duff utility of the mean: ``-min(d(v), K + 1)`` (a.e. exact).

    ``d(v) = min{k : v in J_k}`` (:func:`duff_mean_levels`), 0 at mean(x).  It
    equals the true add/remove distance to "mean = v" except on the finite set
    of means reachable by pure removals (and the level-0 point), where it is
    larger -- i.e. off a null set it is exact, never a lower bound on the
    distance.  Hence for neighbours |u_x(v) - u_y(v)| <= 1 for all v outside a
    finite set (e.g. x = {0}, y = {0, 10} on [0, 10]: at v = 0 the values are
    0 and -2), which does not change the EM density, so the mechanism is
    epsilon-DP.  Clipping at K + 1 preserves the bound; K must be public.
    """
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    K = _check_levels(levels, None)
    L, U = _mean_levels(ext, a, b, K)
    vv = _check_points(v, "v")
    if ((vv < a) | (vv > b)).any():
        raise ValueError("v must lie within bounds")
    mu = L[0]
    left = np.searchsorted(-L, -vv, side="left")
    right = np.searchsorted(U, vv, side="left")
    d = np.where(vv < mu, left, np.where(vv > mu, right, 0))
    d = np.where(d > L.size - 1, K + 1, d).astype(np.float64)
    u = 0.0 - d
    return float(u) if u.ndim == 0 else u


def duff_mean(
    x: Any, epsilon: float, bounds: Any, rng: Any = None, levels: Any = None, size: Any = None, *, method: str = "auto"
) -> Any:
    """Duff exponential mechanism for the mean: epsilon-DP under add/remove.

    Utility ``u(v) = -min(d(v), K + 1)`` with ``K = levels`` (public; default
    ``min(max(ceil(80/epsilon), 8), 10**6)``, depending on epsilon only): the
    rings between consecutive level sets J_k get ``-k`` and the rest of
    [a, b] beyond J_K gets ``-(K+1)`` (for n + 1 <= K, J_{n+1} = [a, b] already).
    Density ∝ exp(epsilon u / 2) on [a, b] (Delta = 1); sampled with the same
    piecewise sampler as the median.  See :func:`duff_mean_levels`.
    """
    epsilon = check_epsilon(epsilon)
    a, b = _check_bounds(bounds)
    K = _check_levels(levels, epsilon)
    size = check_size(size)
    if method not in ("auto", "race", "inverse"):
        raise ValueError(f"method must be 'auto', 'race' or 'inverse', got {method!r}")
    ext = _sorted_padded(x, a, b)
    gen = check_random_state(rng)
    lefts, rights, utilities = _mean_pieces(ext, a, b, K)
    return _sample_piecewise_em(lefts, rights, utilities, epsilon, size, gen, method)


# ---------------------------------------------------------------------------
# NRS smooth sensitivity of the median / order statistics (replace-one)
# ---------------------------------------------------------------------------


def _check_index(index: Any, n: int) -> int:
    idx = check_int(index, "index", minimum=0)
    if idx >= n:
        raise ValueError(f"index must be < n = {n}, got {idx}")
    return idx


def local_sensitivity_quantile(x: Any, bounds: Any, index: Any) -> float:
    """LS of the order statistic x_(index) (0-based) under replace-one, data in [a, b].

    LS = max(x_m - x_{m-1}, x_{m+1} - x_m) with m = index + 1 (1-based) and the
    padding x_0 = a, x_{n+1} = b (SPEC.md §4.5).
    """
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    m = _check_index(index, ext.size - 2) + 1
    return float(max(ext[m] - ext[m - 1], ext[m + 1] - ext[m]))


def local_sensitivity_median(x: Any, bounds: Any) -> float:
    """LS of the lower median (0-based index ceil(n/2) - 1) under replace-one."""
    n = check_array_1d(x, "x", finite=False).size
    return local_sensitivity_quantile(x, bounds, (n + 1) // 2 - 1)


def _smooth_sens_sorted(ext: np.ndarray, m: int, beta: float) -> float:
    """max_{0 <= i <= m <= j <= n+1, i < j} (ext_j - ext_i) exp(-beta (j - i - 1)).

    Divide and conquer on i with the monotone argmax j*(i) (SPEC.md §4.5;
    (x_j - c) e^{-beta j} has increasing differences in (j, c)), run level by
    level: all sub-problems of one recursion depth are scanned in one
    vectorised pass (segment max via ``maximum.reduceat``), in the log domain
    (no underflow of far terms).  O(n log n) time.
    """
    n = ext.size - 2
    ilo = np.array([0], dtype=np.int64)
    ihi = np.array([m], dtype=np.int64)
    jlo = np.array([m], dtype=np.int64)
    jhi = np.array([n + 1], dtype=np.int64)
    best = -math.inf
    best_pair = (m - 1, m)
    while ilo.size:
        mid = (ilo + ihi) // 2
        lens = jhi - jlo + 1
        starts = np.zeros(lens.size, dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        total = int(starts[-1] + lens[-1])
        seg = np.repeat(np.arange(lens.size), lens)
        j = np.arange(total, dtype=np.int64) - (starts - jlo)[seg]
        i = mid[seg]
        gap = j - i - 1
        with np.errstate(divide="ignore"):
            vals = np.log(ext[j] - ext[i])
        vals -= beta * np.maximum(gap, 0)
        vals[gap < 0] = -math.inf
        segmax = np.maximum.reduceat(vals, starts)
        pos = np.where(vals == segmax[seg], np.arange(total), total)
        first = np.minimum.reduceat(pos, starts)
        top = int(np.argmax(segmax))
        if segmax[top] > best:
            best = float(segmax[top])
            best_pair = (int(i[first[top]]), int(j[first[top]]))
        jstar = j[first]
        left = mid > ilo
        right = mid < ihi
        ilo, ihi, jlo, jhi = (
            np.concatenate((ilo[left], mid[right] + 1)),
            np.concatenate((mid[left] - 1, ihi[right])),
            np.concatenate((jlo[left], jstar[right])),
            np.concatenate((jstar[left], jhi[right])),
        )
    # evaluate the maximising pair directly (not exp(log(.))): exact for gap 0, so S >= LS holds exactly
    bi, bj = best_pair
    value = (ext[bj] - ext[bi]) * math.exp(-beta * max(bj - bi - 1, 0))
    local = max(ext[m] - ext[m - 1], ext[m + 1] - ext[m])
    return float(max(value, local))


def smooth_sensitivity_quantile(x: Any, beta: float, bounds: Any, index: Any) -> float:
    """NRS07 beta-smooth sensitivity of the order statistic x_(index) (0-based), replace-one.

    S*_beta(x) = max_{i <= m <= j, i < j} (x_j - x_i) e^{-beta (j - i - 1)}
    with m = index + 1 (1-based), x_i = a for i < 1 and x_i = b for i > n
    (SPEC.md §4.5; one padded index on each side suffices).  O(n log n).
    Neighbour relation: replace-one (n fixed).
    """
    beta = check_positive(beta, "beta")
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    m = _check_index(index, ext.size - 2) + 1
    return _smooth_sens_sorted(ext, m, beta)


def smooth_sensitivity_median(x: Any, beta: float, bounds: Any) -> float:
    """NRS07 beta-smooth sensitivity of the **lower** median (m = ceil(n/2), 1-based), replace-one.

    For odd n this is NRS's median; for even n it is the lower median, the
    same convention as :func:`duff_median`.
    """
    beta = check_positive(beta, "beta")
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    n = ext.size - 2
    return _smooth_sens_sorted(ext, (n + 1) // 2, beta)


# ---------------------------------------------------------------------------
# neighbours for audits
# ---------------------------------------------------------------------------


def neighbours(x: Any, bounds: Any, values: Any = None) -> list[np.ndarray]:
    """Add/remove neighbours of a small dataset (for audits).

    Removals: one dataset per distinct value of x (removing equal records gives
    the same multiset); the empty dataset (n = 1) is skipped because the Duff
    median/mean need n >= 1.  Additions: one dataset per value of ``values``
    (a small public grid inside ``bounds``; default: a, b and the distinct
    values of x).  Returned arrays are sorted.
    """
    a, b = _check_bounds(bounds)
    ext = _sorted_padded(x, a, b)
    y = ext[1:-1]
    if values is None:
        grid = np.unique(np.concatenate(([a, b], y)))
    else:
        grid = check_array_1d(values, "values")
        if ((grid < a) | (grid > b)).any():
            raise ValueError("values must lie within bounds")
    out: list[np.ndarray] = []
    if y.size > 1:
        for v in np.unique(y):
            k = int(np.searchsorted(y, v))
            out.append(np.delete(y, k))
    for v in grid:
        out.append(np.sort(np.append(y, v)))
    return out
