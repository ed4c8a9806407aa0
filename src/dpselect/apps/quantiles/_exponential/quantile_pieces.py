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
``k = max(1, ceil(q n))`` (numpy's ``method="inverted_cdf"``).  The score
(a loss, smaller is better) is the pointwise largest of two sensitivity-1
losses (docs/mathematics.md §12.1):

    psi = max(R, I),   I = max(L - q n, q n - C) / w   (IndExp, normalised),

``w = max(q, 1 - q)`` under add/remove (one record moves ``L - q n`` by
``1 - q`` or ``-q``), ``w = 1`` under replace (n fixed), and the rank distance

* ``kind="integer"``: ``R = max(0, L + 1 - k, k - C)``, zero exactly at
  ``x_(k)`` (the exact replace distance; no longer the default of integer outputs);
* real and integer outputs (grid points, the integers as the grid 1, continuous
  intervals): ``R = max(0, min(C, L + 1) - k, k - C)``,
  zero on the closed interval ``[x_(k), x_(k+1)]``: on an interval (``L = C = j``)
  ``R = |j - k|``, so at large epsilon the output is near ``x_(k)``;
* the median (q = 1/2, add/remove): Gillenwater & Muñoz Medina's exact
  add/remove distance of the Duff median, with ``E = C - L``,
  ``D = (n - C) - L``, ``e = max(E, 1)``: ``R = max(0, 1 - E) + max(0, 1 - e - D, D - e)``
  (it dominates I).

The exponential mechanism (Delta = 1, McSherry & Talwar 2007 with the base
measure above) picks piece ``p`` with probability proportional to
``|p| exp(-epsilon psi_p / 2)`` (``|p|`` its length or its number of
integers) and outputs a uniform point (integer) of it: epsilon-DP under the
relation.

**On the output grid** lambda Z (lambda a power of two; the default for real
outputs, floating-point safe): the base measure is the counting measure on the
grid points of ``[a, b]`` and a grid point t scores ``psi(L(t), C(t))`` with
``L(t) = #{x < t}``, ``C(t) = #{x <= t}`` (single quantiles: ``atoms=True``
in :func:`pieces`).  The pieces are the grid points strictly between
consecutive data values (``L = C``) and, for a data value lying on the grid
(0, an integer, a bound), the atom of that one grid point (``L < C``): a tied
value on the grid is released exactly, with the probability its score gives.
A piece has ``|p|`` = its number of grid points (pieces without one drop out)
and the output is ``lambda * (first index + uniform integer)``, drawn with
integer arithmetic: exactly a grid point, and every grid point of a piece of
positive weight is reachable from every dataset.  :func:`distance_exact`
gives the scores as exact rationals for the exact sampler; :func:`log_masses`
evaluates them in float64 for the law and the float sampler.  (JointExp keeps
the half-open pieces ``[v_i, v_{i+1})``, each point counting the records at or
below it: ``atoms=False``.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...._validation import as_real_array, check_out_of_bounds, check_probability_in
from ....noise import grid_values
from .._rules import check_bounds
from .piecewise_em import _grid_groups, grid_ceil

__all__: list[str] = []

#: Integers in bounds must be exactly representable as float64.
_MAX_INT = float(2**53)


def check_q(q: Any, name: str = "q") -> float:
    return check_probability_in(q, name, 0.0, 1.0, closed=True)


def target_rank(q: float, n: int) -> int:
    """K = max(1, ceil(q n)), computed as numpy's ``inverted_cdf`` does (float q n)."""
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


def _validate_values(values: np.ndarray, a: float, b: float, integer: bool, name: str, on_out: str) -> None:
    if values.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if on_out == "raise" and (values[0] < a or values[-1] > b):
        raise ValueError(f"{name} values must lie within bounds [{a!r}, {b!r}] (on_out_of_bounds='raise')")
    if integer and not (values == np.round(values)).all():
        raise ValueError(f"{name} must hold integers when integer=True")


def _clip(values: np.ndarray, counts: np.ndarray, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Records outside [a, b] moved to the nearest bound (a per-record map: neighbours stay neighbours)."""
    if values[0] >= a and values[-1] <= b:
        return values, counts
    v, inv = np.unique(np.clip(values, a, b), return_inverse=True)
    return v, np.bincount(inv, weights=counts, minlength=v.size).astype(np.int64)


def check_sample(x: Any, bounds: Any, integer: Any = None, name: str = "x", on_out_of_bounds: str = "clip") -> Sample:
    """Validate ``x`` (1-D numeric, or a dask array) and reduce it to distinct values and counts.

    Records outside ``bounds`` (the integers of ``bounds`` for integer outputs)
    are clamped to them (``on_out_of_bounds="clip"``: no exception, no warning,
    so nothing observable depends on them) or refused (``"raise"``: a
    curator's data check, not private -- the exception itself reveals that some
    record is out of bounds).  A dask array is reduced chunk by chunk
    (``dask.array.unique`` with counts): the result, hence every law and draw,
    is the same as for the in-memory array.
    """
    on_out = check_out_of_bounds(on_out_of_bounds)
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
    counts = np.asarray(counts, dtype=np.int64)
    _validate_values(values, a, b, integer, name, on_out)
    values, counts = _clip(values, counts, a, b)
    return Sample(values, counts, a, b, integer)


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


def pieces(s: Sample, lam: float = 0.0, atoms: bool = False) -> Pieces:
    """The pieces of the module docstring, in increasing order; O(D).

    ``lam > 0`` (real outputs only): the grid points of the half-open pieces
    ``[v_i, v_{i+1})`` (the last one closed at b); with ``atoms`` (the single
    quantile) a data value on the grid is a piece of its own (``L < C``) and
    the gaps hold the grid points strictly between data values (2 D + 1 pieces).
    """
    cum = np.concatenate(([0], np.cumsum(s.counts)))
    edges = np.concatenate(([s.a], s.values, [s.b]))
    if not s.integer:
        lo, hi = edges[:-1], edges[1:]
        if lam > 0 and atoms:
            return _grid_pieces_with_atoms(s, cum, lam)
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
    lo, hi, L, C = _interleave(run_lo, run_hi, s.values, s.values, cum)
    size = hi - lo + 1.0
    with np.errstate(divide="ignore"):
        logsize = np.where(size > 0, np.log(np.maximum(size, 1.0)), -np.inf)
    return Pieces(lo, hi, L, C, logsize, True)


def _interleave(
    gap_lo: np.ndarray, gap_hi: np.ndarray, atom_lo: np.ndarray, atom_hi: np.ndarray, cum: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gaps (D + 1, L = C = cum) and atoms (D, L = cum[i], C = cum[i + 1]) in increasing order."""
    D = atom_lo.size
    lo = np.empty(2 * D + 1, dtype=gap_lo.dtype)
    hi = np.empty(2 * D + 1, dtype=gap_lo.dtype)
    L = np.empty(2 * D + 1, dtype=np.int64)
    C = np.empty(2 * D + 1, dtype=np.int64)
    lo[0::2], hi[0::2], L[0::2], C[0::2] = gap_lo, gap_hi, cum, cum
    lo[1::2], hi[1::2], L[1::2], C[1::2] = atom_lo, atom_hi, cum[:-1], cum[1:]
    return lo, hi, L, C


def _grid_pieces_with_atoms(s: Sample, cum: np.ndarray, lam: float) -> Pieces:
    """Grid points strictly between consecutive data values, and each data value on the grid.

    Indices are exact integers (:func:`.piecewise_em.grid_ceil`): ``c_i = ceil(v_i / lambda)``,
    ``on_i = (c_i lambda == v_i)``; gap i runs from ``c_i + on_i`` (``ceil(a / lambda)`` for i = 0)
    to ``c_{i+1} - 1`` (``floor(b / lambda)`` for the last), atom i is ``{c_i}`` when ``on_i``.
    """
    c = grid_ceil(s.values, lam)
    on = (grid_values(c, lam) == s.values).astype(np.int64)
    start = np.concatenate((grid_ceil(np.asarray([s.a]), lam), c + on))
    stop = np.concatenate((c, grid_ceil(np.asarray([s.b]), lam, floor=True) + 1))  # exclusive
    first, last, _, _ = _interleave(start, stop - 1, c, c + on - 1, cum)
    lo, hi, L, C = _interleave(
        grid_values(start, lam), grid_values(stop - 1, lam), grid_values(c, lam), grid_values(c + on - 1, lam), cum
    )
    cnt = np.maximum(last - first + 1, 0)
    with np.errstate(divide="ignore"):
        logsize = np.log(cnt.astype(np.float64))
    return Pieces(lo, hi, L, C, logsize, False, lam)


def _q_terms(q: float, n: int, relation: str) -> tuple[int, int, int, int]:
    """(k, m, den, Z): q = m / den exactly (den a power of two) and the denominator Z of the scores.

    W = max(m, den - m) (w = W / den) under add/remove, den under replace.
    """
    m, den = Fraction(q).as_integer_ratio()
    return target_rank(q, n), m, den, (max(m, den - m) if relation == "add_remove" else den)


def rank_distance(L: np.ndarray, C: np.ndarray, n: int, q: float, relation: str, kind: str = "integer") -> np.ndarray:
    """Psi of the module docstring per piece (float64).

    ``kind``: "integer" (integer candidates), "grid" or "continuous" (real
    outputs: the interval form, zero on the closed interval [x_(k), x_(k+1)]).
    """
    L = np.asarray(L, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    k, _, _, _ = _q_terms(q, n, relation)
    qn = q * n
    scale = max(q, 1.0 - q) if relation == "add_remove" else 1.0
    ind = np.maximum(L - qn, qn - C) / scale  # IndExp, normalised (Smith)
    if relation == "add_remove" and q == 0.5:
        E = C - L
        D = (n - C) - L
        e = np.maximum(E, 1.0)
        return np.maximum(np.maximum(0.0, 1.0 - E) + np.maximum(0.0, np.maximum(1.0 - e - D, D - e)), ind)
    up = L + 1.0 if kind == "integer" else np.minimum(C, L + 1.0)
    return np.maximum(np.maximum(0.0, np.maximum(up - k, k - C)), ind)


def distance_exact(
    L: np.ndarray, C: np.ndarray, n: int, q: float, relation: str, kind: str = "integer"
) -> tuple[np.ndarray, int]:
    """(num, Z): :func:`rank_distance` as exact rationals, psi = num / Z (integer arrays).

    With q = m / den exactly: the rank terms are integers times Z and the
    IndExp term is ``max(L den - m n, m n - C den) / Z``.  int64, or Python
    ints (object arrays) when the products may pass 2^62.
    """
    k, m, den, Z = _q_terms(q, n, relation)
    big = (n + 2) * den * 2 >= 2**62
    L = np.asarray(L, dtype=np.int64)
    C = np.asarray(C, dtype=np.int64)
    if big:
        L, C = L.astype(object), C.astype(object)
    ind = np.maximum(L * den - m * n, m * n - C * den)
    if relation == "add_remove" and q == 0.5:  # Z = 1
        E = C - L
        D = (n - C) - L
        e = np.maximum(E, 1)
        return np.maximum(np.maximum(0, 1 - E) + np.maximum(0, np.maximum(1 - e - D, D - e)), ind), 1
    up = L + 1 if kind == "integer" else np.minimum(C, L + 1)
    return np.maximum(np.maximum(0, np.maximum(up - k, k - C)) * Z, ind), Z


def log_masses(pc: Pieces, n: int, q: float, epsilon: float, relation: str, sensitivity: float = 1.0) -> np.ndarray:
    """Log |p| - epsilon psi_p / (2 sensitivity) per piece (unnormalised)."""
    kind = "grid" if pc.integer or pc.lam > 0 else "continuous"  # integers: the grid lambda = 1
    psi = rank_distance(pc.L, pc.C, n, q, relation, kind)
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
