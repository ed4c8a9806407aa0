r"""Optimal composition of pure epsilon-DP mechanisms (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016).

Every epsilon_i-DP mechanism is, for each pair of neighbours, a
post-processing of randomized response RR(epsilon_i): the pair P_i, Q_i with
privacy loss L = +epsilon_i with P-probability e^eps_i / (1 + e^eps_i) and
-epsilon_i otherwise (Kairouz, Oh & Viswanath 2015, Thm 2.4).  The k-fold
adaptive composition (mechanisms chosen from earlier outputs, the epsilon_i
fixed in advance) is therefore dominated by the product of these pairs, whose
hockey-stick divergence is the exact optimal delta at every epsilon
(KOV Thm 3.3 for equal epsilon_i; Murtagh & Vadhan 2016, Thm 1.5, for mixed
ones):

.. math::

    \delta(\varepsilon) = \mathbb{E}_P\bigl[(1 - e^{\varepsilon - L})_+\bigr]
    = \sum_{l > \varepsilon} P(L = l)\,\bigl(1 - e^{\varepsilon - l}\bigr),
    \qquad L = \sum_i L_i .

Both directions are covered: RR is symmetric.  With equal epsilon_i the law of
L is binomial and delta(epsilon) is evaluated exactly (log space); the
smallest epsilon with delta(epsilon) <= delta is found in closed form on the
piece of the curve that crosses delta (delta(epsilon) = A_j - e^epsilon B_j
between two atoms of L).  With mixed epsilon_i (computing the optimum exactly
is #P-hard, Murtagh & Vadhan 2016) each group of equal epsilon_i keeps its
exact binomial law, its total loss is rounded **up** to a grid h (which can
only increase delta: the summand is increasing in l), and the groups are
convolved by FFT with an allowance for the floating-point error of the FFT.
Every result is rounded up (relative 1e-10) so that float rounding never
reports a value below the exact one.  The documentation's mathematics page
(§10.1) gives the derivations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from .._params import DELTA, int_at_least, positive, validate_params
from ._rules import reals

__all__ = ["kov_epsilon", "pure_composition_epsilon"]

_ROUND_UP = 1e-10  # relative guard added to every epsilon found from float arithmetic
_GRID_POINTS = 2**15  # grid of the mixed-epsilon composition
_MAX_GROUPS = 6  # mixed epsilons are rounded up into at most this many groups
_FFT_ERROR = 6e-16  # allowance per grid point and FFT level (about 5 units of roundoff)


def _binomial_log_pmf(k: int, log_p_up: float, log_p_down: float) -> np.ndarray:
    """Return log P(i of the k losses are -epsilon), i = 0..k (log_p_up, log_p_down: log-probabilities of +/-)."""
    from scipy.special import gammaln

    i = np.arange(k + 1, dtype=float)
    return gammaln(k + 1.0) - gammaln(i + 1.0) - gammaln(k - i + 1.0) + (k - i) * log_p_up + i * log_p_down


def _delta_at(loss: np.ndarray, p: np.ndarray, eps: float) -> float:
    """Return the sum over loss > eps of p (1 - e^(eps - loss)), every term computed without cancellation."""
    m = loss > eps
    return float(np.sum(p[m] * -np.expm1(eps - loss[m])))


def _smallest_epsilon(loss: np.ndarray, log_p: np.ndarray, delta: float) -> float:
    """Smallest eps >= 0 with delta(eps) <= delta for the loss law (loss, e^log_p); inf if none.

    Between consecutive atoms l_(j+1) <= eps < l_j of the loss (sorted
    decreasingly), delta(eps) = A_j - e^eps B_j with A_j = sum_{i<=j} p_i and
    B_j = sum_{i<=j} p_i e^-l_i, so the crossing is eps = ln((A_j - delta)/B_j).
    """
    if delta <= 0.0:
        return math.inf
    order = np.argsort(-loss, kind="stable")
    loss, log_p = loss[order], log_p[order]
    keep = loss > 0.0
    loss, log_p = loss[keep], log_p[keep]
    p = np.exp(log_p)
    if loss.size == 0 or _delta_at(loss, p, 0.0) <= delta:
        return 0.0
    a = np.cumsum(p)
    log_b = np.logaddexp.accumulate(log_p - loss)
    # delta at each atom l_j (the atoms above it count): d_j = A_(j-1) - e^(l_j) B_(j-1), increasing in j
    d = np.empty(loss.size)
    d[0] = 0.0
    d[1:] = a[:-1] - np.exp(loss[1:] + log_b[:-1])
    j = int(np.searchsorted(d, delta, side="right")) - 1  # last atom with delta(l_j) <= delta
    if a[j] - delta <= 0.0:
        eps = float(loss[j + 1]) if j + 1 < loss.size else 0.0
    else:
        eps = math.log(a[j] - delta) - float(log_b[j])
    eps = max(eps, float(loss[j + 1]) if j + 1 < loss.size else 0.0, 0.0)
    eps = min(eps, float(loss[j]))
    eps = eps * (1.0 + _ROUND_UP) + 1e-15
    # guard: the closed form came from float sums; step up until the stable sum confirms it
    for _ in range(60):
        if _delta_at(loss, p, eps) <= delta:
            return eps
        eps = eps * (1.0 + 1e-9) + 1e-12
    return math.inf  # pragma: no cover - the closed form is never that far off


@validate_params({"epsilon": positive(), "k": int_at_least(1), "delta": DELTA})
def kov_epsilon(epsilon: float, k: int, delta: float) -> float:
    r"""Return the optimal epsilon of the k-fold adaptive composition of epsilon-DP mechanisms at ``delta``.

    .. math::

        \delta(\varepsilon') = \frac{1}{(1 + e^{\varepsilon})^k}
        \sum_{i=0}^{k} \binom{k}{i}
        \Bigl(e^{(k - i)\varepsilon} - e^{\varepsilon'} e^{i \varepsilon}\Bigr)_+

    (Kairouz, Oh & Viswanath, ICML 2015, Thm 3.3; no valid bound is smaller:
    randomized response attains it).  Returns the smallest epsilon' >= 0 with
    delta(epsilon') <= ``delta``, computed in log space and rounded up.  The mechanisms'
    guarantees and the result refer to one neighbour relation (add/remove or replace
    neighbours); derivation: mathematics §10.1.

    Parameters
    ----------
    epsilon : float
        The epsilon of every mechanism, > 0.
    k : int
        The number of mechanisms, >= 1.
    delta : float
        The delta of the composed guarantee, in [0, 1) (0 gives k epsilon).

    Returns
    -------
    float
        epsilon', never above k epsilon.

    See Also
    --------
    pure_composition_epsilon : Return the epsilon of the adaptive composition of epsilon_i-DP mechanisms at ...

    Examples
    --------
    >>> round(kov_epsilon(0.05, 100, 1e-6), 3)
    2.208
    """
    e0, d = epsilon, delta
    if d == 0.0 or math.isinf(e0):
        return k * e0
    return min(_kov(e0, k, d), k * e0)


@lru_cache(maxsize=256)
def _kov(e0: float, k: int, delta: float) -> float:
    log_up = -float(np.logaddexp(0.0, -e0))  # log(e^eps / (1 + e^eps))
    log_down = -float(np.logaddexp(0.0, e0))
    log_p = _binomial_log_pmf(k, log_up, log_down)
    loss = (k - 2.0 * np.arange(k + 1)) * e0
    return _smallest_epsilon(loss, log_p, delta)


def _groups(epsilons: Iterable[tuple[float, int]]) -> tuple[tuple[float, int], ...]:
    """(epsilon, count) pairs, merged into at most _MAX_GROUPS groups by rounding epsilon up."""
    counts: dict[float, int] = {}
    for e, n in epsilons:
        counts[e] = counts.get(e, 0) + n
    if len(counts) <= _MAX_GROUPS:
        return tuple(sorted(counts.items()))
    lo, hi = min(counts), max(counts)
    step = math.log(hi / lo) / (_MAX_GROUPS - 1)
    merged: dict[float, int] = {}
    for e, n in counts.items():
        j = min(math.ceil(math.log(e / lo) / step - 1e-12), _MAX_GROUPS - 1) if step > 0 else 0
        top = hi if j == _MAX_GROUPS - 1 else max(lo * math.exp(j * step) * (1 + 1e-12), e)
        merged[top] = merged.get(top, 0) + n
    return tuple(sorted(merged.items()))


def _rr_on_grid(e: float, n: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(grid indices, probabilities) of n randomized responses RR(e): total loss (n - 2i) e rounded **up** to h."""
    log_p = _binomial_log_pmf(n, -float(np.logaddexp(0.0, -e)), -float(np.logaddexp(0.0, e)))
    idx = np.ceil((n - 2.0 * np.arange(n + 1)) * e / h + 1e-9).astype(np.int64)
    return idx, np.exp(log_p)


@lru_cache(maxsize=256)
def _mixed(groups: tuple[tuple[float, int], ...], delta: float) -> float:
    """Composition of RR groups on a grid (losses rounded up per group, FFT convolution)."""
    from scipy.signal import fftconvolve

    total = math.fsum(e * n for e, n in groups)
    h = 2.0 * total / _GRID_POINTS
    dist = np.ones(1)
    offset = 0
    for e, n in groups:
        idx, p = _rr_on_grid(e, n, h)
        lo = int(idx.min())
        g = np.zeros(int(idx.max()) - lo + 1)
        np.add.at(g, idx - lo, p)
        dist = np.clip(fftconvolve(dist, g), 0.0, None)
        offset += lo
    error = len(groups) * dist.size * max(math.log2(dist.size), 1.0) * _FFT_ERROR
    if error >= 0.01 * delta:
        return math.inf  # the FFT allowance would eat the budget: no statement from this route
    loss = (offset + np.arange(dist.size)) * h
    with np.errstate(divide="ignore"):
        log_p = np.log(dist)
    return _smallest_epsilon(loss, log_p, delta - error)


@validate_params({"epsilons": reals("epsilons", allow_inf=True), "delta": DELTA})
def pure_composition_epsilon(epsilons: Iterable[float], delta: float) -> float:
    r"""Return the epsilon of the adaptive composition of epsilon_i-DP mechanisms at ``delta``, near-optimal.

    The composition is dominated by the product of randomized responses
    RR(epsilon_i) (Kairouz, Oh & Viswanath 2015, Thm 2.4 and 3.5; Murtagh &
    Vadhan 2016, Thm 1.5), so

    .. math::

        \delta(\varepsilon') = \mathbb{E}_P\bigl[(1 - e^{\varepsilon' - L})_+\bigr],
        \quad L = \sum_i L_i,\ L_i = \pm\varepsilon_i \text{ w.p. }
        \tfrac{e^{\pm\varepsilon_i}}{1 + e^{\pm\varepsilon_i}} .

    Equal epsilons: exactly :func:`kov_epsilon`.  Mixed epsilons: each group
    of equal epsilons is exact, its total loss rounded up to a grid of
    2^15 points (at most 6 groups, further epsilons rounded up into them), and
    the groups convolved by FFT; delta is reduced by a bound on the FFT's
    rounding error.  Never above basic composition (sum of the epsilon_i).

    Parameters
    ----------
    epsilons : iterable of float
        The epsilon_i > 0 of the composed mechanisms (fixed in advance).
    delta : float
        The delta of the composed guarantee, in [0, 1).

    Returns
    -------
    float
        epsilon' (the sum of the epsilon_i when delta = 0).

    See Also
    --------
    kov_epsilon : Return the optimal epsilon of the k-fold adaptive composition of epsilon-DP mechanisms at ...
    br_composition_epsilon : Return the epsilon of the adaptive composition of eta_i-bounded-range mechanisms ...
    parallel_composition : Guarantee of mechanisms run on DISJOINT parts of the data: (max epsilon, max delta)

    Examples
    --------
    >>> round(pure_composition_epsilon([0.05] * 100, 1e-6), 3)
    2.208
    >>> round(pure_composition_epsilon([0.05] * 50 + [0.1] * 25, 1e-6), 2)  # basic: 5.0
    2.71
    """
    d, eps = delta, epsilons
    basic = math.fsum(eps)
    eps = [e for e in eps if e > 0.0]
    if d == 0.0 or not eps or math.isinf(basic):
        return basic
    return min(basic, _pure_epsilon(tuple((e, 1) for e in eps), d))


def _pure_epsilon(counts: tuple[tuple[float, int], ...], delta: float) -> float:
    """The optimal-composition epsilon of (epsilon, count) groups of pure charges at delta > 0."""
    groups = _groups(counts)
    if len(groups) == 1:
        e, n = groups[0]
        return _kov(e, n, delta)
    return _mixed(groups, delta)
