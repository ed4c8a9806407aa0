r"""The joint exponential mechanism for top-k (Gillenwater, Joseph, Muñoz Medina & Ribero, ICML 2022).

One exponential mechanism over the ordered k-tuples s = (s_1, ..., s_k) of
distinct candidates, with the *sequence utility*

.. math::

    u^*(x, s) = -\max_{1 \le i \le k} \bigl(c_{(i)}(x) - c_{s_i}(x)\bigr) = -G(s),

where c_(1) >= c_(2) >= ... are the scores sorted in decreasing order.  It is
sampled without enumerating the m!/(m-k)! tuples: N(t) = #{s : G(s) <= t}
factorises over positions (position i may hold any candidate with score >=
c_(i) - t, and these sets are nested), so

.. math::

    N(t) = \prod_{i=1}^{k} \bigl(n_i(t) - i + 1\bigr), \qquad n_i(t) = \#\{j : c_j \ge c_{(i)} - t\},

and the level t (a distinct value of c_(i) - c_j >= 0) is drawn with
probability proportional to (N(t) - N(t^-)) exp(-lambda t); a tuple of that
level is then drawn uniformly (by the first position whose candidate is new at
level t).  Cost O(m k log(m k)) for the levels, O(k^2) per tuple; log space
throughout.  Privacy (the documentation's mathematics page, §10.2): with
lambda = epsilon / (2 Delta*), Delta* = Delta u for monotone problems and
2 Delta u otherwise, the mechanism is epsilon-DP and epsilon-bounded-range.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..typing import ArrayLike

__all__ = ["JointLevels", "joint_lambda", "joint_levels"]


def joint_lambda(epsilon: float, global_sensitivity: float, monotone: bool, *, k: int | None = None) -> float:
    """The weight lambda = epsilon / (2 Delta*): the weight exp(lambda u*) of the joint EM at total budget ``epsilon``.

    Delta* = Delta u if every score moves in the same direction between
    neighbours (``monotone``), else 2 Delta u (the sensitivity of u*).
    At k = 1 the weight is 2 lambda = epsilon / Delta*, the exponential
    mechanism's: G(s) = c_(1) - c_s and c_(1) is common to every candidate,
    so the law is proportional to exp(2 lambda c_s), the exponential mechanism
    with utility c_s (sensitivity Delta u, one-signed changes when monotone),
    which is epsilon-DP and epsilon-bounded-range at that weight, under the
    neighbour relation of Delta u (add/remove or replace; mathematics §10.2).

    Parameters
    ----------
    epsilon : float
        The total budget of the joint mechanism (k times the per-round epsilon
        in :func:`~dpselect.mechanisms.top_k.select_top_k`).
    global_sensitivity : float
        Delta u, the global sensitivity of the scores.
    monotone : bool
        Whether the problem is monotone.
    k : int or None, default=None
        The tuple length; ``k=1`` gives the exponential mechanism's weight
        (see above), any other value (or None) the joint mechanism's.

    Returns
    -------
    float
        lambda.

    Examples
    --------
    >>> joint_lambda(1.0, 1.0, False), joint_lambda(1.0, 1.0, True)
    (0.25, 0.5)
    >>> joint_lambda(1.0, 1.0, False, k=1)  # the exponential mechanism's exp(epsilon u / (2 Delta u))
    0.5
    """
    sens = global_sensitivity if monotone else 2.0 * global_sensitivity
    return epsilon / sens if k == 1 else epsilon / (2.0 * sens)


class JointLevels:
    """The level structure of the joint EM on one score vector (precomputed once, sampled many times).

    Parameters
    ----------
    scores : numpy.ndarray of float, shape (m,)
        The scores c_j (a float array; :func:`joint_levels` converts any
        array_like).
    k : int
        The tuple length, 1 <= k <= m.
    lam : float
        The weight lambda of exp(-lambda G(s)) (:func:`joint_lambda`).

    Attributes
    ----------
    order : numpy.ndarray of int, shape (m,)
        The candidates by decreasing score (stable).
    gaps : numpy.ndarray of float, shape (k, m)
        c_(i) - c_(j) over the sorted candidates.
    values : numpy.ndarray of float
        The levels t, increasing, the first 0.
    log_weights : numpy.ndarray of float
        log of (N(t) - N(t^-)) e^{-lambda t} per level, normalised.

    Examples
    --------
    >>> import numpy as np
    >>> levels = JointLevels(np.array([3.0, 1.0, 0.0]), 2, 1.0)
    >>> levels.values.tolist(), np.exp(levels.log_weights).round(4).tolist()
    ([0.0, 1.0, 2.0, 3.0], [0.5753, 0.2117, 0.1557, 0.0573])
    """

    def __init__(self, scores: np.ndarray, k: int, lam: float) -> None:
        self.k, self.lam = k, lam
        self.order = np.argsort(-scores, kind="stable")
        c = scores[self.order]
        self.gaps = c[:k, None] - c[None, :]  # row i non-decreasing in j
        rows = np.arange(k)
        # n_i(0) = #{j : c_j >= c_(i)}; every row holds its own diagonal zero, so n_i(0) >= i + 1
        n0 = np.searchsorted(-c, -c[:k], side="right")
        log_n0 = float(np.log(n0 - rows).sum())
        i, j = np.nonzero(self.gaps > 0.0)
        vals = self.gaps[i, j]
        srt = np.argsort(vals, kind="stable")
        vals, i, j = vals[srt], i[srt], j[srt]
        # the event (i, j) raises n_i from j to j + 1: log N grows by log((j + 1 - i) / (j - i))
        inc = np.log1p(1.0 / (j - i))
        if vals.size:
            levels, starts = np.unique(vals, return_index=True)
            jumps = np.add.reduceat(inc, starts)  # log N(t) - log N(t^-) at each positive level
        else:
            levels, jumps = np.empty(0), np.empty(0)
        log_n = log_n0 + np.cumsum(jumps)
        log_count = np.concatenate(([log_n0], log_n + np.log(-np.expm1(-jumps))))
        self.values = np.concatenate(([0.0], levels))
        with np.errstate(over="ignore"):
            lw = log_count - lam * self.values
        top = float(lw.max())
        self.log_norm = top + math.log(float(np.exp(lw - top).sum()))
        self.log_weights = lw - self.log_norm
        self._cdf: np.ndarray | None = None

    def _allowed(self, t: float) -> np.ndarray:
        """n_i(t) for every position i: how many sorted candidates position i may hold at level t."""
        return np.array([np.searchsorted(self.gaps[p], t, side="right") for p in range(self.k)], dtype=np.int64)

    def log_probability_of_gap(self, gap: np.ndarray) -> np.ndarray:
        """Log P[s] for tuples whose G(s) is ``gap`` (the law depends on s only through G(s)).

        Parameters
        ----------
        gap : numpy.ndarray of float
            Values of G(s) (e.g. from :meth:`gap`), any shape.

        Returns
        -------
        numpy.ndarray of float
            -lambda G(s) - log Z, the shape of ``gap``.

        Examples
        --------
        >>> import numpy as np
        >>> levels = joint_levels([3.0, 1.0, 0.0], 2, 1.0)
        >>> np.exp(levels.log_probability_of_gap(np.array([0.0, 1.0]))).round(4)
        array([0.5753, 0.2117])
        """
        with np.errstate(over="ignore"):
            return -self.lam * np.asarray(gap, dtype=np.float64) - self.log_norm

    def gap(self, tuples: np.ndarray) -> np.ndarray:
        """G(s) = max_i (c_(i) - c_{s_i}) for each row of ``tuples`` (original candidate indices).

        Parameters
        ----------
        tuples : numpy.ndarray of int, shape (n, k)
            Ordered tuples of distinct candidate indices, one per row.

        Returns
        -------
        numpy.ndarray of float, shape (n,)
            G(s) for each row.

        Examples
        --------
        >>> levels = joint_levels([3.0, 1.0, 0.0], 2, 1.0)
        >>> levels.gap(enumerate_tuples(3, 2)).tolist()
        [0.0, 1.0, 2.0, 2.0, 3.0, 3.0]
        """
        rank = np.empty_like(self.order)
        rank[self.order] = np.arange(self.order.size)
        return self.gaps[np.arange(self.k)[None, :], rank[tuples]].max(axis=1)

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent ordered k-tuples (int64, shape (size, k)).

        Parameters
        ----------
        size : int
            The number of tuples, >= 0.
        rng : numpy.random.Generator
            The randomness (a generator, used as is and advanced).

        Returns
        -------
        numpy.ndarray of int, shape (size, k)
            One tuple of original candidate indices per row.

        Examples
        --------
        >>> import numpy as np
        >>> joint_levels([3.0, 1.0, 0.0], 2, 1.0).sample(2, np.random.default_rng(0)).shape
        (2, 2)
        """
        if self._cdf is None:
            cdf = np.cumsum(np.exp(self.log_weights))
            self._cdf = cdf / cdf[-1]
        lv = np.minimum(np.searchsorted(self._cdf, rng.random(size), side="right"), self.values.size - 1)
        out = np.empty((size, self.k), dtype=np.int64)
        for n, level in enumerate(lv):
            out[n] = self.order[self._sample_in_level(int(level), rng)]
        return out

    def _sample_in_level(self, level: int, rng: np.random.Generator) -> np.ndarray:
        """A uniform tuple (positions in the sorted order) among those with G(s) equal to level ``level``."""
        k = self.k
        pos = np.arange(k)
        a = self._allowed(self.values[level]) - pos  # free choices at position p once p earlier ones are used
        if level == 0:
            first, b = k, a  # every position draws from its level-0 prefix
        else:
            b = self._allowed(self.values[level - 1]) - pos
            # tuples whose first "new" position is i: prod_{p<i} b_p * (a_i - b_i) * prod_{p>i} a_p
            with np.errstate(divide="ignore"):
                lb, la, lnew = np.log(b), np.log(a), np.log(a - b)
            logw = (
                np.concatenate(([0.0], np.cumsum(lb)[:-1]))
                + lnew
                + np.concatenate((np.cumsum(la[::-1])[::-1][1:], [0.0]))
            )
            p = np.exp(logw - logw.max())
            first = int(rng.choice(k, p=p / p.sum()))
        used: list[int] = []
        for p_ in range(k):
            if p_ == first:
                pick = int(b[p_] + p_ + rng.integers(a[p_] - b[p_]))  # the new block [b, a) is untouched
            else:
                free = int(b[p_] if p_ < first else a[p_])
                pick = int(rng.integers(free))
                for u in sorted(used):  # the pick-th unused index of the prefix (used ones all lie in it)
                    if u <= pick:
                        pick += 1
            used.append(pick)
        return np.array(used, dtype=np.int64)


def joint_levels(scores: ArrayLike, k: int, lam: float) -> JointLevels:
    """The :class:`JointLevels` of ``scores`` for k and weight ``lam``.

    Parameters
    ----------
    scores : array_like of float, shape (m,)
        The scores c_j (converted to a float array).
    k : int
        The tuple length, 1 <= k <= m.
    lam : float
        The weight lambda of exp(-lambda G(s)) (:func:`joint_lambda`).

    Returns
    -------
    JointLevels
        The level structure, ready to sample.

    Examples
    --------
    >>> joint_levels([3.0, 1.0, 0.0], 2, 1.0).values.tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    return JointLevels(np.asarray(scores, dtype=np.float64), k, lam)


def enumerate_tuples(m: int, k: int) -> np.ndarray:
    """Every ordered k-tuple of distinct indices in range(m), lexicographic (int64, shape (m!/(m-k)!, k)).

    Parameters
    ----------
    m : int
        The number of candidates, >= 0.
    k : int
        The tuple length, 0 <= k <= m.

    Returns
    -------
    numpy.ndarray of int, shape (m!/(m-k)!, k)
        The tuples, one per row.

    Examples
    --------
    >>> enumerate_tuples(3, 2).tolist()
    [[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]]
    """
    count = math.perm(m, k)
    return np.fromiter(
        itertools.chain.from_iterable(itertools.permutations(range(m), k)), dtype=np.int64, count=count * k
    ).reshape(count, k)
