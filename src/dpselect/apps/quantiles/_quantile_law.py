"""Exact law of the single-quantile exponential mechanism: pieces, rank distances, masses.

Data reduce to their sorted distinct values ``v_1 < ... < v_D`` with counts
``h_i`` (``n = sum h``); with public bounds ``[a, b]`` the output space is cut
into **pieces** on which the utility is constant:

* continuous outputs (Lebesgue base measure): the D + 1 open intervals between
  consecutive distinct values (``[a, v_1], [v_1, v_2], ..., [v_D, b]``; the
  data points themselves have measure zero);
* integer outputs (counting measure on the integers of ``[a, b]``): the runs
  of integers strictly between consecutive distinct values and the D atoms
  ``{v_i}`` (2 D + 1 pieces, in increasing order).

A piece has ``L`` records below it and ``C`` records at or below it (``L = C``
except at an atom).  The target is the order statistic ``x_(k)``,
``k = max(1, ceil(q n))`` (numpy's ``method="inverted_cdf"``).  An integer
candidate ``t`` is ``x_(k)`` iff ``L + 1 <= k <= C``; its score is the
largest of the 1-Lipschitz lower bounds on its distance (docs/mathematics.md,
"Quantiles without a grid")

    psi = max(0, L + 1 - k, k - C, (L - q n) / w, (q n - C) / w),

``w = max(q, 1 - q)`` under add/remove (one record moves ``L - q n`` by
``1 - q`` or ``-q``), the last two terms dropped under replace (n and k fixed,
where the first three are the exact distance).  A continuous interval
(``L = C = j``) scores

    psi = max(|j - k|, (j - q n - 1) / w, (q n - j) / w)

(the last two under add/remove only): 0 on the one interval
``[x_(k), x_(k+1)]`` and >= 1 on every other, so at large epsilon the output
is uniform on one interval next to ``x_(k)`` (two tied intervals would favour
the longer one).  For the median (q = 1/2, add/remove) the exact add/remove
distance of Gillenwater & Muñoz Medina's Duff median is used instead: with
``E = C - L``, ``D = (n - C) - L``, ``e = max(E, 1)``:
``psi = max(0, 1 - E) + max(0, 1 - e - D, D - e)``.

The exponential mechanism (Delta = 1, McSherry & Talwar 2007 with the base
measure above) picks piece ``p`` with probability proportional to
``|p| exp(-epsilon psi_p / 2)`` (``|p|`` its length or its number of
integers) and outputs a uniform point (integer) of it: epsilon-DP under the
relation.

**On the output grid** lambda Z (lambda a power of two; the default for real
outputs, floating-point safe): the base measure is the counting measure on the
grid points of ``[a, b]``.  A grid point t gets the score of the continuous
piece holding it in the half-open convention ``[v_i, v_{i+1})`` (the last piece
also holds b): the interval score at ``j = #{x <= t}``, the right limit of the
continuous score.  ``j`` moves like ``#{x < t'}`` for an interior point t', so
this score is 1-Lipschitz by the same lemma (docs/mathematics.md §12.1).  A
piece then has ``|p|`` = its number of grid points (pieces without one drop
out) and the output is ``lambda * (first index + uniform integer)``, drawn with
integer arithmetic: exactly a grid point, and every grid point of a piece of
positive weight is reachable from every dataset.  :func:`interval_distance_exact`
gives these scores as exact rationals for the exact sampler; :func:`log_masses`
evaluates them in float64 for the law and the float sampler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..._validation import as_real_array, check_probability_in
from ...noise.grid import grid_values
from ._order_stats import check_bounds
from ._piecewise_em import _grid_groups

__all__: list[str] = []

#: Integers in bounds must be exactly representable as float64.
_MAX_INT = float(2**53)


def check_q(q: Any, name: str = "q") -> float:
    return check_probability_in(q, name, 0.0, 1.0, closed=True)


def target_rank(q: float, n: int) -> int:
    """k = max(1, ceil(q n)), computed as numpy's ``inverted_cdf`` does (float q n)."""
    return max(1, min(n, math.ceil(q * n)))


@dataclass(frozen=True)
class Sample:
    """A validated 1-D sample reduced to distinct values and counts, with its bounds."""

    values: np.ndarray  # sorted distinct values (float64)
    counts: np.ndarray  # int64, >= 1
    a: float
    b: float
    integer: bool

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def order_statistic(self, k: int) -> float:
        cum = np.cumsum(self.counts)
        return float(self.values[int(np.searchsorted(cum, k, side="left"))])


def _is_integer_dtype(x: Any) -> bool:
    dt = getattr(x, "dtype", None)
    return dt is not None and (np.issubdtype(dt, np.integer) or np.issubdtype(dt, np.bool_))


def _check_integer_flag(integer: Any, x: Any) -> bool:
    if integer is None:
        return _is_integer_dtype(x)
    if not isinstance(integer, (bool, np.bool_)):
        raise TypeError(f"integer must be None or a bool, got {type(integer).__name__}")
    return bool(integer)


def _integer_bounds(a: float, b: float) -> tuple[float, float]:
    lo, hi = float(math.ceil(a)), float(math.floor(b))
    if lo > hi:
        raise ValueError(f"bounds [{a!r}, {b!r}] contain no integer (integer outputs)")
    if max(abs(lo), abs(hi)) > _MAX_INT:
        raise ValueError("bounds must lie within [-2**53, 2**53] for integer outputs")
    return lo, hi


def _validate_values(values: np.ndarray, a: float, b: float, integer: bool, name: str) -> None:
    if values.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.isnan(values).any():
        raise ValueError(f"{name} must not contain NaN")
    if values[0] < a or values[-1] > b:
        raise ValueError(f"{name} values must lie within bounds [{a!r}, {b!r}] (and be finite)")
    if integer and not (values == np.round(values)).all():
        raise ValueError(f"{name} must hold integers when integer=True")


def check_sample(x: Any, bounds: Any, integer: Any = None, name: str = "x") -> Sample:
    """Validate ``x`` (1-D numeric, or a dask array) and reduce it to distinct values and counts.

    A dask array is reduced chunk by chunk (``dask.array.unique`` with counts):
    the result, hence every law and draw, is the same as for the in-memory array.
    """
    integer = _check_integer_flag(integer, x)
    a, b = check_bounds(bounds)
    if integer:
        a, b = _integer_bounds(a, b)
    if hasattr(x, "dask") and hasattr(x, "compute"):
        values, counts = _dask_unique(x, name)
    else:
        arr = as_real_array(x, name)
        if arr.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"{name} must not be empty")
        values, counts = np.unique(arr, return_counts=True)
    values = np.asarray(values, dtype=np.float64)
    _validate_values(values, a, b, integer, name)
    return Sample(values, np.asarray(counts, dtype=np.int64), a, b, integer)


def _dask_unique(x: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    import dask.array as da

    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {x.shape}")
    if not (np.issubdtype(x.dtype, np.number) or x.dtype == np.bool_) or np.iscomplexobj(np.empty(0, x.dtype)):
        raise TypeError(f"{name} must be real numeric, got dtype {x.dtype}")
    values, counts = da.unique(x.astype(np.float64), return_counts=True)
    v, c = da.compute(values, counts)
    return np.asarray(v), np.asarray(c)


@dataclass(frozen=True)
class Pieces:
    """Pieces of constant utility: [lo, hi], L, C, log-size.

    ``integer``: closed integer ranges and the integer score.  ``lam > 0``:
    grid pieces, [lo, hi] the first and last grid point (``hi < lo``: none),
    ``logsize`` the log of their number; ``lam = 0``: Lebesgue (length).
    """

    lo: np.ndarray
    hi: np.ndarray
    L: np.ndarray
    C: np.ndarray
    logsize: np.ndarray
    integer: bool
    lam: float = 0.0

    def count(self) -> np.ndarray:
        """Number of points per piece (integer or grid pieces), int64, 0 for an empty piece."""
        step = 1.0 if self.integer else self.lam
        return np.maximum(np.rint((self.hi - self.lo) / step) + 1.0, 0.0).astype(np.int64)


def pieces(s: Sample, lam: float = 0.0) -> Pieces:
    """The pieces of the module docstring, in increasing order; O(D).

    ``lam > 0`` (real outputs only): the grid points of the half-open pieces
    ``[v_i, v_{i+1})`` (the last one closed at b).
    """
    D = s.values.size
    cum = np.concatenate(([0], np.cumsum(s.counts)))
    edges = np.concatenate(([s.a], s.values, [s.b]))
    if not s.integer:
        lo, hi = edges[:-1], edges[1:]
        if lam > 0:
            first, cnt = _grid_groups(lo, s.a, s.b, lam)
            with np.errstate(divide="ignore"):
                logsize = np.log(cnt.astype(np.float64))
            return Pieces(grid_values(first, lam), grid_values(first + cnt - 1, lam), cum, cum, logsize, False, lam)
        with np.errstate(divide="ignore"):
            logsize = np.log(hi - lo)
        return Pieces(lo, hi, cum, cum, logsize, False)
    run_lo = np.concatenate(([s.a], s.values + 1.0))
    run_hi = np.concatenate((s.values - 1.0, [s.b]))
    lo = np.empty(2 * D + 1)
    hi = np.empty(2 * D + 1)
    L = np.empty(2 * D + 1, dtype=np.int64)
    C = np.empty(2 * D + 1, dtype=np.int64)
    lo[0::2], hi[0::2], L[0::2], C[0::2] = run_lo, run_hi, cum, cum
    lo[1::2], hi[1::2], L[1::2], C[1::2] = s.values, s.values, cum[:-1], cum[1:]
    size = hi - lo + 1.0
    with np.errstate(divide="ignore"):
        logsize = np.where(size > 0, np.log(np.maximum(size, 1.0)), -np.inf)
    return Pieces(lo, hi, L, C, logsize, True)


def rank_distance(L: np.ndarray, C: np.ndarray, n: int, q: float, relation: str,
                  continuous: bool = False) -> np.ndarray:
    """psi of the module docstring per piece (float64); ``continuous``: the interval score."""
    L = np.asarray(L, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    if relation == "add_remove" and q == 0.5:
        E = C - L
        D = (n - C) - L
        e = np.maximum(E, 1.0)
        return np.maximum(0.0, 1.0 - E) + np.maximum(0.0, np.maximum(1.0 - e - D, D - e))
    k = target_rank(q, n)
    qn = q * n
    w = max(q, 1.0 - q)
    if continuous:  # L = C = j: one interval [x_(k), x_(k+1)] at 0, every other one at >= 1
        psi = np.abs(L - k)
        if relation == "add_remove":
            psi = np.maximum(psi, np.maximum(L - qn - 1.0, qn - L) / w)
        return psi
    psi = np.maximum(0.0, np.maximum(L + 1.0 - k, k - C))
    if relation == "add_remove":
        psi = np.maximum(psi, np.maximum(L - qn, qn - C) / w)
    return psi


def interval_distance_exact(j: np.ndarray, n: int, q: float, relation: str) -> tuple[np.ndarray, int]:
    """(num, W): the interval score psi of :func:`rank_distance` at ``j`` records below, psi = num / W exactly.

    Integers throughout (int64, or Python ints when they may pass 2^62): the
    Duff median and the replace score are integers (W = 1); otherwise, with the
    float q = m / 2^e exactly and W = max(m, 2^e - m) (so w = W / 2^e),
    num = max(|j - k| W, (j - 1) 2^e - m n, m n - j 2^e).
    """
    j = np.asarray(j, dtype=np.int64)
    if relation == "add_remove" and q == 0.5:  # E = 0, e = 1, D = n - 2 j
        return 1 + np.maximum(0, np.maximum(2 * j - n, n - 2 * j - 1)), 1
    k = target_rank(q, n)
    if relation != "add_remove":
        return np.abs(j - k), 1
    m, den = Fraction(q).as_integer_ratio()
    W = max(m, den - m)
    # q n = A + r / den, 0 <= r < den: for j > A the third term is < 0, for j <= A the second is,
    # and the first is >= 0, so num = max(|j - k| W, (j - A - 1) den - r or (A - j) den + r)
    A, r = divmod(m * n, den)
    up = j > A
    far = np.where(up, j - A - 1, A - j)
    near = np.abs(j - k)
    if (n + 2) * den >= 2**62:  # Python integers
        far, near = far.astype(object), near.astype(object)
    lin = far * den
    lin[up] -= r
    lin[~up] += r
    return np.maximum(near * W, lin), W


def log_masses(pc: Pieces, n: int, q: float, epsilon: float, relation: str, sensitivity: float = 1.0) -> np.ndarray:
    """log |p| - epsilon psi_p / (2 sensitivity) per piece (unnormalised)."""
    psi = rank_distance(pc.L, pc.C, n, q, relation, continuous=not pc.integer)
    return pc.logsize - (0.5 * epsilon / sensitivity) * psi


def normalise(logw: np.ndarray) -> np.ndarray:
    w = np.exp(logw - logw.max())
    return w / w.sum()


def draw_in_pieces(pc: Pieces, idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform point of each chosen piece: the one place real (or integer) outputs are drawn.

    Integer pieces: a uniform integer of [lo, hi].  Grid pieces: lambda times
    a uniform integer index of the piece's grid points (``rng.integers``: an
    exact grid point).  Continuous pieces (``lam = 0``, not floating-point
    safe): lo + U (hi - lo), U uniform in [0, 1).
    """
    lo, hi = pc.lo[idx], pc.hi[idx]
    if pc.integer:
        return lo.astype(np.int64) + rng.integers(0, (hi - lo).astype(np.int64) + 1)
    if pc.lam > 0:
        first = np.rint(lo / pc.lam).astype(np.int64)
        return grid_values(first + rng.integers(0, pc.count()[idx]), pc.lam)
    return np.minimum(lo + rng.random(idx.size) * (hi - lo), hi)


def abs_dev(pc: Pieces, t: float) -> np.ndarray:
    """E|U - t| for U uniform on each piece (continuous, integer or grid), closed forms."""
    lo, hi = pc.lo, pc.hi
    if pc.lam > 0:
        return pc.lam * _grid_abs_dev(lo / pc.lam, pc.count().astype(np.float64), t / pc.lam)
    if not pc.integer:
        lam = hi - lo
        s = np.clip((t - lo) / np.where(lam > 0, lam, 1.0), 0.0, 1.0)
        inside = 0.5 * lam * (s * s + (1.0 - s) * (1.0 - s))
        return np.where((lo < t) & (t < hi), inside, np.abs(0.5 * (lo + hi) - t))
    cnt = np.maximum(hi - lo + 1.0, 1.0)
    a_ = np.maximum(t - lo, 0.0)
    b_ = np.maximum(hi - t, 0.0)
    inside = (a_ * (a_ + 1.0) + b_ * (b_ + 1.0)) / (2.0 * cnt)
    return np.where((lo <= t) & (t <= hi), inside, np.abs(0.5 * (lo + hi) - t))


def _grid_abs_dev(first: np.ndarray, cnt: np.ndarray, t: float) -> np.ndarray:
    """E|I - t| for I uniform on the integers first .. first + cnt - 1 and any real t (cnt >= 1; else 0).

    With d = t - first in [0, cnt - 1] and A = floor(d): the A + 1 points at or
    below t contribute (A + 1)(d - A/2), the m = cnt - A - 1 above
    m (A + 1 - d + (m - 1)/2); outside, |mean - t|.
    """
    c = np.maximum(cnt, 1.0)
    d = t - first
    A = np.floor(np.clip(d, 0.0, c - 1.0))
    m = c - A - 1.0
    inside = ((A + 1.0) * (d - 0.5 * A) + m * (A + 1.0 - d + 0.5 * (m - 1.0))) / c
    out = np.where((d >= 0) & (d <= c - 1.0), inside, np.abs(0.5 * (c - 1.0) - d))
    return np.where(cnt > 0, out, 0.0)
