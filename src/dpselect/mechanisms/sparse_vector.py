r"""Sparse vector: AboveThreshold with exact discrete Laplace noise, its exact law and guarantee.

Integer queries :math:`f_0, f_1, \dots, f_{m-1}` (values of one dataset, each
of sensitivity :math:`\Delta`), an integer threshold :math:`T`; the noisy
threshold :math:`T + \rho` and the noisy queries :math:`f_i + \nu_i` use the
discrete Laplace law on the integers (:func:`dpselect.noise.discrete_laplace`,
exact), :math:`\rho \sim \mathrm{DLap}(b_1)`, :math:`\nu_i \sim \mathrm{DLap}(b_2)`.
The output is the index of the first query above the noisy threshold,

.. math:: K = \min\{k : f_k + \nu_k \ge T + \rho\}, \quad K = m \text{ ("none") if there is none},

and its law, for a given query sequence, is the sum over the integer :math:`\rho`

.. math:: P[K = k] = \sum_{\rho \in \mathbb{Z}} p_1(\rho) \prod_{i<k} P[\nu < T + \rho - f_i]\;
          P[\nu \ge T + \rho - f_k]

(:meth:`AboveThreshold.log_probabilities`: a finite window summed exactly, the
two tails in closed form; relative error below :math:`e^{-40}`).

Guarantee (docs/mathematics.md §15.1, Lyu, Su & Li 2017 Thm 2 / Dwork & Roth
2014 Thm 3.23 in discrete noise): :math:`\Delta/b_1 + 2\Delta/b_2`-DP, and
:math:`\Delta/b_1 + \Delta/b_2` when the queries are monotone (between any two
neighbours every query moves in the same direction).  Integer shifts of a
discrete Laplace variable change its probabilities by at most
:math:`e^{|\text{shift}|/b}`, so the continuous proof carries over exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from .._docstrings import fill_doc
from .._params import BOOLEAN, EPSILON, Rule, validate_fields
from .._validation import check_relation
from ..noise import IntegerSource, discrete_laplace_batch
from ..output_law import OutputLaw
from ..privacy import Privacy
from ..typing import ArrayLike, Relation, SeedLike

__all__ = ["AboveThreshold"]

#: Queries in the first batch of noise while scanning (then twice as many a batch; the scan stops at the first hit).
_CHUNK = 64
#: Significant bits of the noise scales (rounded up: the guarantee holds, the sampler stays vectorised).
_SCALE_BITS = 24
#: Relative error target of the law's closed-form tails: e^-40.
_TAIL = 40.0


def _log_sf(m: np.ndarray, lr: float) -> np.ndarray:
    """Log P[nu >= m] for nu ~ DLap with log ratio lr = -1/b, integer-valued float m."""
    l1p = math.log1p(math.exp(lr))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        pos = m * lr - l1p
        neg = np.log1p(-np.exp(np.minimum((1.0 - m) * lr - l1p, 0.0)))
    return np.where(m >= 0, pos, neg)


def _log_c(lr: float) -> float:
    """Log of the discrete Laplace normaliser (1 - r) / (1 + r)."""
    return math.log(-math.expm1(lr)) - math.log1p(math.exp(lr))


def _check_queries(queries: ArrayLike, threshold: object) -> tuple[np.ndarray, int]:
    """The queries as int64 and the threshold as an int (TypeError / ValueError naming each)."""
    arr = np.asarray(queries)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"queries must be an array of integers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"queries must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all() or not (arr == np.round(arr)).all() or np.abs(arr).max() >= 2**52:
        raise ValueError("queries must hold finite integer values below 2^52 in magnitude")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)):
        raise TypeError(f"threshold must be an int, got {type(threshold).__name__}")
    return arr.astype(np.int64), int(threshold)


def _check_sensitivity(value: object, name: str) -> int:
    """Delta: a positive integer."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_share(value: object, name: str) -> float:
    """The threshold's share of epsilon, in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1) or None, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class AboveThreshold:
    r"""AboveThreshold (the sparse vector technique's core) with exact discrete Laplace noise.

    Threshold noise :math:`\mathrm{DLap}(b_1)`, query noise :math:`\mathrm{DLap}(b_2)`
    on the integers with :math:`b_1 = \Delta/\varepsilon_1`,
    :math:`b_2 = c\Delta/\varepsilon_2`, :math:`\varepsilon_1 = s\,\varepsilon`,
    :math:`\varepsilon_2 = (1 - s)\varepsilon` (:math:`s` = ``threshold_share``),
    :math:`c = 1` for monotone queries and 2 otherwise: epsilon-DP for one
    scan (the first index above the noisy threshold), whatever the number of
    queries, under the neighbour relation in which ``sensitivity`` bounds the
    queries' change (add/remove or replace neighbours; mathematics §15.1).
    The scales are exact rationals, rounded up to 24 significant bits (a larger scale
    only lowers the loss, and the sampler stays vectorised); the noise is sampled exactly
    (:func:`dpselect.noise.discrete_laplace`).

    Parameters
    ----------
    epsilon : float
        privacy budget (> 0).
    sensitivity : int, default=1
        :math:`\Delta`, a positive integer bounding every query's change between neighbours.
    monotone : bool, default=False
        True when, between any two neighbours, all queries move in the same
        direction (counts under add/remove): the query noise halves.
    threshold_share : float or None, default=None
        :math:`s \in (0, 1)`; None gives 1/2 (monotone) or :math:`1/(1 + 4^{1/3})`
        (the variance-optimal split of Lyu, Su & Li for c = 2).

    References
    ----------
    C. Dwork & A. Roth, "The algorithmic foundations of differential privacy",
    2014 (Alg. 1, Thm 3.23); M. Lyu, D. Su & N. Li, "Understanding the sparse
    vector technique for differential privacy", PVLDB 2017 (Alg. 1, Thm 2 and
    §4.3 for monotone queries); C. Canonne, G. Kamath & T. Steinke, NeurIPS 2020
    (discrete Laplace).  Proof: docs/mathematics.md §15.1.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.mechanisms.sparse_vector import AboveThreshold
    >>> at = AboveThreshold(1.0, monotone=True)
    >>> queries = np.array([0, 2, 5, 9, 14, 20])   # non-decreasing counts
    >>> at.select(queries, 10, rng=0)
    3
    >>> p = at.probabilities(queries, 10)          # indices 0..5 and "none" (6)
    >>> round(float(p.sum()), 12), int(np.argmax(p))
    (1.0, 4)
    """

    epsilon: float
    sensitivity: int = 1
    monotone: bool = False
    threshold_share: float | None = None
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": EPSILON,
        "sensitivity": Rule("a positive int", check=_check_sensitivity),
        "monotone": BOOLEAN,
        "threshold_share": Rule("a float in (0, 1)", check=_check_share, none=True),
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    @property
    def scales(self) -> tuple[Fraction, Fraction]:
        """``(b1, b2)``: exact rational noise scales of the threshold and of each query."""
        s = self.threshold_share
        if s is None:
            s = 0.5 if self.monotone else 1.0 / (1.0 + 4.0 ** (1.0 / 3.0))
        eps, d = Fraction(self.epsilon), Fraction(int(self.sensitivity))
        e1 = eps * Fraction(s)
        c = 1 if self.monotone else 2
        return _dyadic_up(d / e1), _dyadic_up(c * d / (eps - e1))

    def privacy(self, relation: Relation = "add_remove") -> Privacy:
        """Epsilon-DP (exactly Delta/b1 + c Delta/b2 = epsilon) under ``relation`` (mathematics §15.1).

        Parameters
        ----------
        relation : {"add_remove", "replace"}, default="add_remove"
            The neighbour relation in which ``sensitivity`` bounds every query's change.

        Returns
        -------
        Privacy
            ``(epsilon, 0)`` under ``relation``.

        Examples
        --------
        >>> print(AboveThreshold(1.0).privacy("replace"))
        1-DP [replace]
        """
        return Privacy(
            self.epsilon, 0.0, check_relation(relation), "AboveThreshold, discrete Laplace (mathematics §15.1)"
        )

    def select(self, queries: ArrayLike, threshold: int, *, rng: SeedLike = None) -> int:
        """The first index k with f_k + nu_k >= threshold + rho; ``len(queries)`` if none.

        Noise is drawn in batches of 64, 128, 256, ... queries and the scan stops
        at the first hit, so the running time depends on the output only.

        Parameters
        ----------
        queries : array_like of int, shape (m,)
            The query values f_0, ..., f_{m-1} on the dataset (integers below 2^52).
        threshold : int
            The public threshold T.
        rng : SeedLike, default=None
            The randomness (keyword-only); drawn exactly as integers.

        Returns
        -------
        int
            The index of the first query above the noisy threshold, or m for none.

        Examples
        --------
        >>> AboveThreshold(1.0, monotone=True).select([0, 2, 50], 10, rng=0)
        2
        """
        f, t = _check_queries(queries, threshold)
        return _scan(f, t, self.scales, IntegerSource(rng))

    @fill_doc
    def log_probabilities(self, queries: ArrayLike, threshold: int) -> np.ndarray:
        """Log P[K = k] for k = 0..m-1 and m ("none"): the exact law (module docstring).

        %(threshold_queries)s
        numpy.ndarray of float, shape (m + 1,)
            ``log P[K = k]``; the last entry is "no query above the threshold".

        Examples
        --------
        >>> float(np.exp(AboveThreshold(1.0).log_probabilities([0, 20], 10)).sum()).__round__(12)
        1.0
        """
        f, t = _check_queries(queries, threshold)
        b1, b2 = self.scales
        return _log_law(f.astype(np.float64), float(t), -1.0 / float(b1), -1.0 / float(b2))

    @fill_doc
    def probabilities(self, queries: ArrayLike, threshold: int) -> OutputLaw:
        """P[K = k], k = 0..m (the last entry: no query above the threshold).

        %(threshold_queries)s
        OutputLaw, shape (m + 1,)
            The exact law over the support ``0..m`` (m: "none").

        Examples
        --------
        >>> AboveThreshold(1.0).probabilities([0, 20], 10).support.tolist()
        [0, 1, 2]
        """
        return OutputLaw(np.exp(self.log_probabilities(queries, threshold)))


def _dyadic_up(b: Fraction) -> Fraction:
    """The smallest multiple of 2^j not below ``b`` with j = floor(log2 b) - _SCALE_BITS + 1.

    A larger scale only lowers the privacy loss, and a numerator below 2^_SCALE_BITS keeps the
    exact sampler on its vectorised path (a float's exact rational has a 53-bit numerator).
    """
    j = math.floor(math.log2(b)) - _SCALE_BITS + 1
    step = Fraction(2) ** j
    return math.ceil(b / step) * step


def _scan(f: np.ndarray, t: int, scales: tuple[Fraction, Fraction], src: IntegerSource) -> int:
    """The first index above the noisy threshold, drawing the noise in chunks."""
    b1, b2 = scales
    rho = int(discrete_laplace_batch(src, b1.denominator, b1.numerator, 1)[0])
    start, chunk = 0, _CHUNK
    while start < f.size:  # chunks of 64, 128, 256, ...: a few batched draws however far the hit
        block = f[start : start + chunk]
        nu = discrete_laplace_batch(src, b2.denominator, b2.numerator, block.size)
        hit = np.flatnonzero(block + nu >= t + rho)
        if hit.size:
            return start + int(hit[0])
        start, chunk = start + chunk, 2 * chunk
    return int(f.size)


def _log_law(f: np.ndarray, t: float, lr1: float, lr2: float) -> np.ndarray:
    """Exact log law: window [lo, hi] of rho summed, tails in closed form (relative error <= e^-40).

    Outside the window every comparison is decided up to probability
    (m + 1) r2^M with M = b2 (40 + log(m + 1)): below it rho < f_i - T - M, so
    P[nu < T + rho - f_i] = r2^(1 - T - rho + f_i) / (1 + r2) exactly and
    P[nu >= T + rho - f_k] = 1 - O(r2^M); above it the reverse.  Both tails are
    geometric series in rho.
    """
    m = f.size
    margin = math.ceil(-1.0 / lr2 * (_TAIL + math.log(m + 1.0))) + 1
    lo = min(float(f.min()) - t - margin, 0.0)
    hi = max(float(f.max()) - t + margin, 0.0)
    rho = np.arange(lo, hi + 1.0)
    a = t + rho[:, None] - f[None, :]
    log_below = _log_sf(1.0 - a, lr2)  # log P[nu < a] = log P[nu >= 1 - a]
    cum = np.cumsum(log_below, axis=1)
    prefix = np.concatenate((np.zeros((rho.size, 1)), cum), axis=1)  # sum over i < k, k = 0..m
    log_p1 = _log_c(lr1) + lr1 * np.abs(rho)
    stop = np.concatenate((_log_sf(a, lr2), np.zeros((rho.size, 1))), axis=1)
    inner = logsumexp(log_p1[:, None] + prefix + stop, axis=0)
    lc1, l1p2 = _log_c(lr1), math.log1p(math.exp(lr2))
    k = np.arange(m + 1, dtype=np.float64)
    # lower tail rho <= lo - 1 (rho < 0): p1 = c1 r1^-rho, prod_{i<k} r2^(1-T-rho+f_i)/(1+r2), stop ~ 1
    s_k = np.concatenate(([0.0], np.cumsum(1.0 - t + f)))
    ratio = lr1 + k * lr2
    lower = lc1 + lr2 * s_k - k * l1p2 + (1.0 - lo) * ratio - np.log(-np.expm1(ratio))
    # upper tail rho >= hi + 1: prod ~ 1, stop = r2^(T+rho-f_k)/(1+r2) (k < m) or 1 (none)
    up_ratio = lr1 + lr2
    upper = lc1 + (t - f) * lr2 - l1p2 + (hi + 1.0) * up_ratio - math.log(-math.expm1(up_ratio))
    upper = np.append(upper, lc1 + (hi + 1.0) * lr1 - math.log(-math.expm1(lr1)))
    return logsumexp(np.stack((inner, lower, upper)), axis=0)
