r"""Propose-test-release (PTR) and stable histograms (mathematics §6.2–6.3, mathematics §7 items 27–29).

Propose-test-release (lecture notes "LN", corrected)
---------------------------------------------------
Propose a bound ``b`` on the local sensitivity of ``f``.  Let
``gamma(D) = min{d(D, D') : LS_f(D') > b}`` (strict ">", mathematics §7 item 27): the
distance to instability, which has sensitivity 1.  Release

.. math::

    \hat\gamma = \gamma(D) + \mathrm{Lap}(1/\varepsilon); \qquad
    \text{output } \bot \text{ if } \hat\gamma \le \ln(1/\delta)/\varepsilon,
    \text{ else } f(D) + \mathrm{Lap}(b/\varepsilon).

On the grid (floating-point safe, Mironov 2012): the test noise is an exact
discrete Laplace integer K of scale t >= 1/epsilon and the threshold the
smallest integer T with P[K > T] <= delta/2; the value is released as
lambda (round(f(D)/lambda) + K'), K' discrete Laplace of scale >=
ceil(b/lambda)/epsilon (:class:`~dpselect.noise.GridLaplace`).  The proof
below carries over: the tails of K change by at most e^{1/t} <= e^epsilon
under a shift of gamma by 1 (and floor(T - gamma) moves by at most 1), the
grid release is epsilon-DP for |f(D) - f(D')| <= b, and at gamma = 0 the
test passes with probability P[K > T] <= delta/2.

Guarantee (2 epsilon, delta/2) (mathematics §6.2; LN's "Lap(epsilon/delta)" in the
proof reads Lap(1/epsilon)): the test is epsilon-DP; when gamma(D) >= 1 the
neighbours have LS <= b and the Laplace release costs another epsilon; when
gamma(D) = 0 the test passes with probability P[Lap(1/epsilon) >
ln(1/delta)/epsilon] = delta/2.  :func:`ptr_privacy` returns it as a
:class:`~dpselect.privacy.Privacy` (the formulas live in
:mod:`dpselect.accounting`, section 4).

PTR for the mode (b = 0, no release noise)
------------------------------------------
Counts ``c`` over m candidates; ``g = c_(1) - c_(2)`` (top minus runner-up,
zeros included).  The released index is ``argmax c`` (first index on ties).
Distance to instability (tie-set convention, mathematics §4.2 (T1), mathematics §7 item 28):

* add/remove: ``gamma = max(g - 1, 0)`` (one record moves one count by 1);
* replace-one: ``gamma = max(ceil(g/2) - 1, 0)`` (one record moves two counts).

LN's ``gamma = g`` is wrong: a gap of 1 is already unstable.

**Guarantee: (epsilon, delta/2)** (:func:`ptr_mode_privacy`), under the
relation whose gamma is used.  Derivation: let D ~ D'.  (i) If argmax(D) =
argmax(D') = r, both mechanisms output r or ⊥, and P[r] = P[gamma + L >
T] with gammas differing by at most 1 (L ~ Lap(1/epsilon), T =
ln(1/delta)/epsilon), so every event has ratio <= e^epsilon.  (ii) If the
argmaxes differ, the gap of each dataset is <= 1 under add/remove (<= 2 under
replace-one), hence gamma(D) = gamma(D') = 0; both output ⊥ with the same
probability 1 - delta/2 and otherwise their own mode, so the hockey-stick
divergence is exactly P[L > T] = delta/2.  No second epsilon is spent because
nothing noisy is released after the test.  (With LN's gamma = g the bound
becomes e^epsilon delta/2, mathematics §7 item 28; the tests show the violation.)

Utility (mathematics §7 item 29): for gamma >= T, P[⊥] = exp(-epsilon (gamma - T)) / 2.  At
LN's "gap >= ln(1/delta)/epsilon" (gamma = T) the failure probability is 1/2;
it is <= delta once gamma >= (ln(1/delta) + ln(1/(2 delta)))/epsilon (the mathematics page's
threshold) and <= delta/2 once gamma >= 2 ln(1/delta)/epsilon.

"No answer" (⊥)
---------------
One convention for one draw and for batches: ⊥ is numpy's masked value.  A
batch (``size=k``) is a :class:`numpy.ma.MaskedArray` of indices whose
masked entries are ⊥ (``np.ma.getmaskarray(draws)`` marks them); one draw
returns the index or :data:`numpy.ma.masked` -- exactly ``draws[i]`` of a
batch -- so ``out is np.ma.masked`` tests for ⊥, and using ⊥ as an index
raises instead of silently picking the last candidate (as ``-1`` would).
:func:`propose_test_release` releases a float, so its ⊥ is the same masked
value.

API: data (and epsilon) positional, everything else keyword-only; every
sampling function takes ``rng`` and ``accountant`` (charged before any
randomness is drawn).

Stable histogram (mathematics §6.3)
-------------------------------
Add/remove.  For each bin with ``D_x > 0``: ``a_x = D_x + Lap(1/epsilon)``, set
to 0 if ``a_x < 1 + ln(1/delta)/epsilon``; bins with ``D_x = 0`` stay 0.
Guarantee (epsilon, delta/2) under add/remove (a new bin with count 1 survives
with probability exactly delta/2); (2 epsilon, delta) under replace-one.
On the grid: ``a_x = D_x + lambda K`` (:class:`~dpselect.noise.GridLaplace`,
sensitivity 1, lambda <= 1), kept when ``a_x >= 1 + x*`` with x* the smallest
grid point such that P[lambda K >= x*] <= delta/2: a new bin survives with
probability at most delta/2, and the guarantees are unchanged.

Examples
--------
>>> import numpy as np
>>> from dpselect.accounting import ptr_mode_privacy
>>> from dpselect.apps.counts import ptr_mode
>>> ptr_mode([40, 3, 1], 1.0, delta=1e-6, rng=0)
0
>>> ptr_mode([4, 3, 1], 1.0, delta=1e-6, rng=0) is np.ma.masked
True
>>> print(ptr_mode_privacy(1.0, 1e-6))
(1, 5e-07)-DP [add_remove]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._validation import (
    check_counts,
    check_delta_positive,
    check_epsilon,
    check_finite_float,
    check_positive,
    check_random_state,
    check_relation,
    check_size,
)
from ...accounting import Accountant, charge, ptr_mode_privacy, ptr_privacy, stable_histogram_privacy
from ...noise import Laplace
from ...noise.grid import GridLaplace, check_granularity, grid_index, grid_values
from ...typing import ArrayLike, Relation, SeedLike

__all__ = [
    "laplace_sf",
    "mode_distance_to_instability",
    "propose_test_release",
    "ptr_mode",
    "ptr_mode_privacy",
    "ptr_mode_probabilities",
    "ptr_privacy",
    "stable_histogram",
    "stable_histogram_privacy",
    "stable_histogram_probabilities",
]

_LAPLACE = Laplace()


def _check_ptr_delta(delta: Any) -> float:
    return check_delta_positive(delta, "the PTR threshold is ln(1/delta)/epsilon")


#: Output grid of a release with bound 0 (nothing noisy; the value is only snapped).
_ZERO_BOUND_GRID = 2.0**-20


def _test_noise(epsilon: float) -> GridLaplace:
    """The integer test noise K (discrete Laplace, scale >= 1/epsilon): the test is on integers."""
    return GridLaplace(1.0, epsilon, granularity=1.0)


def _first_tail_index(noise: GridLaplace, delta: float) -> int:
    """The smallest integer k >= 1 with P[K >= k] <= delta/2, for the noise lambda K of ``noise``.

    P[K >= k] = q^k / (1 + q) for k >= 1 (q = e^{-1/t}; :meth:`GridLaplace.log_tail`),
    so k starts at the continuous solution and is moved until the exact tail
    satisfies the bound (k >= 1 always: P[K >= 0] > 1/2 > delta/2).
    """
    target = math.log(delta / 2.0)
    r = 1.0 / float(noise.scale_units)
    tail = lambda j: float(noise.log_tail(j * noise.lam))  # noqa: E731
    k = max(1, math.ceil((-target - math.log1p(math.exp(-r))) / r))
    while k > 1 and tail(k - 1) <= target:
        k -= 1
    while tail(k) > target:
        k += 1
    return k


def _integer_threshold(noise: GridLaplace, delta: float) -> int:
    """T = the smallest integer with P[K > T] <= delta/2 (K the integer test noise)."""
    return _first_tail_index(noise, delta) - 1


def _grid_threshold(noise: GridLaplace, delta: float) -> float:
    """x* = the smallest grid point with P[lambda K >= x*] <= delta/2 (lambda K the release noise)."""
    return noise.lam * _first_tail_index(noise, delta)


def laplace_sf(z: ArrayLike, scale: float) -> Any:
    """P[Lap(scale) > z], vectorised and accurate in both tails (``dpselect.noise.Laplace().logsf``).

    Parameters
    ----------
    z : array_like of float
        Threshold(s).
    scale : float
        The Laplace scale (> 0).

    Returns
    -------
    float or numpy.ndarray
        The tail probability (a float for scalar z).

    Examples
    --------
    >>> from dpselect.apps.counts import laplace_sf
    >>> laplace_sf(0.0, 1.0), round(laplace_sf(1.0, 1.0), 6)   # 1/2, e^-1 / 2
    (0.5, 0.18394)
    """
    z = np.asarray(z, dtype=np.float64)
    out = np.exp(_LAPLACE.logsf(z / scale))
    return float(out) if out.ndim == 0 else out


def propose_test_release(
    value: float,
    distance_to_instability: float,
    *,
    bound: float,
    epsilon: float,
    delta: float,
    granularity: float | None = None,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> Any:
    """Generic PTR: ⊥ (``np.ma.masked``) or ``value`` + discrete Laplace on a grid; (2 epsilon, delta/2)-DP.

    The test passes when ``gamma + K > T``, K an exact discrete Laplace integer
    of scale >= 1/epsilon and T the smallest integer with P[K > T] <= delta/2;
    the value is released by :class:`~dpselect.noise.GridLaplace` (sensitivity
    ``bound``): a multiple of the granularity, exactly epsilon-DP.

    Parameters
    ----------
    value : float
        f(D), finite.
    distance_to_instability : float
        gamma(D) = min{d(D, D') : LS_f(D') > bound} (>= 0; ``inf`` allowed);
        must have sensitivity 1 in the neighbour relation used.
    bound : float
        The proposed bound b >= 0 on the local sensitivity (chosen publicly;
        keyword-only).
    epsilon : float
        The privacy parameter (> 0; keyword-only).
    delta : float
        In (0, 1) (keyword-only).
    granularity : float or None, default=None
        The output grid lambda (a power of two); None: the
        :class:`~dpselect.noise.GridLaplace` default from ``bound`` and
        ``epsilon`` (2^-20 when ``bound`` = 0, where the value is only snapped).
    rng : SeedLike, default=None
        The randomness: None, an int seed, a ``numpy.random.Generator`` or ``"secure"``.
    accountant : Accountant, default=None
        Charged :func:`ptr_privacy` before any randomness is drawn.

    Returns
    -------
    float or numpy.ma.MaskedConstant
        ``value`` plus discrete Laplace noise on the grid, or ``np.ma.masked`` (⊥)
        when the test fails.

    References
    ----------
    Dwork & Lei, "Differential privacy and robust statistics", STOC 2009
    (propose-test-release); the lecture notes' version with the corrections
    of mathematics §6.2 (strict distance to instability, the mode's gamma);
    Mironov, "On significance of the least significant bits for differential
    privacy", CCS 2012 (why the output lies on a grid).

    Examples
    --------
    >>> propose_test_release(3.5, 1e6, bound=0.0, epsilon=1.0, delta=1e-3, rng=0)
    3.5
    """
    value = check_finite_float(value, "value")
    gamma = check_positive(distance_to_instability, "distance_to_instability", allow_inf=True, allow_zero=True)
    bound = check_positive(bound, "bound", allow_zero=True)
    privacy = ptr_privacy(epsilon, delta)
    epsilon = check_epsilon(epsilon)
    delta = _check_ptr_delta(delta)
    if bound == 0.0:
        lam = _ZERO_BOUND_GRID if granularity is None else check_granularity(granularity)
        release = None
    else:
        release = GridLaplace(bound, epsilon, granularity=granularity)
    test = _test_noise(epsilon)
    threshold = _integer_threshold(test, delta)
    gen = check_random_state(rng)
    charge(accountant, privacy)
    if gamma + test.release(0.0, rng=gen) <= threshold:
        return np.ma.masked
    if release is None:
        return float(grid_values(grid_index(value, lam), lam)[()])
    return float(release.release(value, rng=gen))


def mode_distance_to_instability(counts: ArrayLike, *, relation: Relation = "add_remove") -> float:
    r"""gamma for the mode: max(g-1, 0) (add/remove) or max(ceil(g/2)-1, 0) (replace); inf if m = 1.

    .. math::

        \gamma_{AR} = \max(g - 1, 0), \qquad \gamma_{RO} = \max(\lceil g/2 \rceil - 1, 0),

    with g the gap between the two largest counts.

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation whose distance to instability is used.

    Returns
    -------
    float
        gamma (``inf`` for a single candidate).

    References
    ----------
    Dwork & Lei, "Differential privacy and robust statistics", STOC 2009
    (propose-test-release); the lecture notes' version with the corrections
    of mathematics §6.2 (strict distance to instability, the mode's gamma).

    Examples
    --------
    >>> from dpselect.apps.counts import mode_distance_to_instability
    >>> mode_distance_to_instability([40, 3, 1]), mode_distance_to_instability([40, 3, 1], relation="replace")
    (36.0, 18.0)
    """
    c = check_counts(counts, "counts")
    relation = check_relation(relation)
    return _mode_gamma(c, relation)


def _mode_gamma(c: np.ndarray, relation: str) -> float:
    if c.size == 1:
        return math.inf  # a single candidate is always the mode
    top2 = np.partition(c, c.size - 2)[-2:]
    g = int(top2[1] - top2[0])
    if relation == "add_remove":
        return float(max(g - 1, 0))
    return float(max(-(-g // 2) - 1, 0))


def ptr_mode_probabilities(
    counts: ArrayLike, epsilon: float, *, delta: float, relation: Relation = "add_remove"
) -> tuple[float, float]:
    r"""Exact ``(P[output = argmax index], P[⊥])`` of :func:`ptr_mode` (exact discrete Laplace tail).

    .. math::

        P[\text{release}] = P[K \ge T + 1 - \gamma]

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate.
    epsilon : float
        The privacy parameter (> 0).
    delta : float
        In (0, 1): T is the smallest integer with P[K > T] <= delta/2 (keyword-only).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation whose distance to instability is used.

    Returns
    -------
    tuple of (float, float)
        The release and the ⊥ probabilities (summing to 1).

    Examples
    --------
    >>> from dpselect.apps.counts import ptr_mode_probabilities
    >>> p, bottom = ptr_mode_probabilities([4, 3, 1], 1.0, delta=1e-6)   # gamma = 0: P <= delta/2
    >>> 0 < p <= 0.5e-6 and abs(p + bottom - 1) < 1e-12
    True
    """
    c = check_counts(counts, "counts")
    epsilon = check_epsilon(epsilon)
    delta = _check_ptr_delta(delta)
    relation = check_relation(relation)
    gamma = _mode_gamma(c, relation)
    test = _test_noise(epsilon)
    t1 = _integer_threshold(test, delta) + 1
    p_release = 1.0 if math.isinf(gamma) else float(np.exp(test.log_tail(t1 - gamma)))
    return p_release, 1.0 - p_release


def ptr_mode(
    counts: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    """PTR mode: the argmax index (first on ties) if gamma + K > T, else ⊥.

    K is an exact discrete Laplace integer of scale >= 1/epsilon and T the
    smallest integer with P[K > T] <= delta/2 (the integer form of the
    threshold ln(1/delta)/epsilon).

    (epsilon, delta/2)-DP under ``relation`` (:func:`ptr_mode_privacy`; see
    the module docstring).

    Parameters
    ----------
    counts : array_like of int, shape (m,)
        Non-negative integer counts, one per candidate.
    epsilon : float
        The privacy parameter (> 0).
    delta : float
        In (0, 1): the test's threshold is ln(1/delta)/epsilon (keyword-only).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation whose distance to instability is used.
    rng : SeedLike, default=None
        The randomness: None, an int seed or a ``numpy.random.Generator``.
    size : int, default=None
        None (one draw) or the number of independent draws.
    accountant : Accountant, default=None
        Charged :func:`ptr_mode_privacy` before any randomness is drawn.

    Returns
    -------
    int, numpy.ma.MaskedConstant or numpy.ma.MaskedArray
        One draw: the index or ``np.ma.masked`` (⊥); with ``size``: a masked
        array of ``size`` indices whose masked entries are ⊥.

    References
    ----------
    Dwork & Lei, "Differential privacy and robust statistics", STOC 2009
    (propose-test-release); the lecture notes' version with the corrections
    of mathematics §6.2 (strict distance to instability, the mode's gamma).

    Examples
    --------
    >>> from dpselect.apps.counts import ptr_mode
    >>> ptr_mode([40, 3, 1], 1.0, delta=1e-6, size=3, rng=0).tolist()
    [0, 0, 0]
    """
    c = check_counts(counts, "counts")
    privacy = ptr_mode_privacy(epsilon, delta, relation=relation)
    epsilon = check_epsilon(epsilon)
    delta = _check_ptr_delta(delta)
    relation = check_relation(relation)
    size = check_size(size)
    test = _test_noise(epsilon)
    threshold = _integer_threshold(test, delta)
    gen = check_random_state(rng)
    charge(accountant, privacy)
    gamma = _mode_gamma(c, relation)
    mode = int(np.argmax(c))
    count = 1 if size is None else size
    passed = gamma + test.release(0.0, size=count, rng=gen) > threshold
    draws = np.ma.masked_array(np.full(count, mode, dtype=np.intp), mask=~passed)
    if size is None:
        return mode if bool(passed[0]) else np.ma.masked
    return draws


def _histogram_noise(epsilon: float, granularity: float | None) -> GridLaplace:
    rel = GridLaplace(1.0, epsilon, granularity=granularity)
    if rel.lam > 1.0:
        raise ValueError(f"granularity must be <= 1 for counts, got {granularity!r}")
    return rel


def stable_histogram_probabilities(
    counts: ArrayLike, epsilon: float, *, delta: float, granularity: float | None = None
) -> np.ndarray:
    r"""P[a_x != 0] per bin: P[lambda K >= thr - D_x] for D_x > 0, else 0 (exact discrete Laplace tail).

    .. math::

        P[a_x \ne 0] = P[\lambda K \ge 1 + x^* - D_x] \quad (D_x > 0)

    Parameters
    ----------
    counts : array_like of int, shape (k,)
        Non-negative integer bin counts D_x.
    epsilon : float
        The privacy parameter (> 0).
    delta : float
        In (0, 1): x* is the smallest grid point with P[lambda K >= x*] <= delta/2 (keyword-only).
    granularity : float or None, default=None
        The grid lambda (a power of two <= 1); None: the default from epsilon.

    Returns
    -------
    numpy.ndarray of float, shape (k,)
        The probability that each bin is released non-zero.

    References
    ----------
    The stable histogram of the propose-test-release lecture notes, proof
    checked in mathematics §6.3.

    Examples
    --------
    >>> from dpselect.apps.counts import stable_histogram_probabilities
    >>> p = stable_histogram_probabilities([0, 1], 1.0, delta=1e-6)   # count 1: <= delta/2
    >>> float(p[0]), bool(0 < p[1] <= 0.5e-6)
    (0.0, True)
    """
    c = check_counts(counts, "counts")
    epsilon = check_epsilon(epsilon)
    delta = _check_ptr_delta(delta)
    rel = _histogram_noise(epsilon, granularity)
    thr = 1.0 + _grid_threshold(rel, delta)
    p = np.exp(rel.log_tail(thr - c.astype(np.float64)))
    return np.where(c > 0, p, 0.0)


def stable_histogram(
    counts: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    granularity: float | None = None,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> np.ndarray:
    r"""LN stable histogram (mathematics §6.3): (epsilon, delta/2)-DP under add/remove.

    Noisy counts ``D_x + lambda K`` (:class:`~dpselect.noise.GridLaplace`,
    sensitivity 1, exact discrete Laplace on the grid lambda Z); a bin is kept
    when its noisy count is >= ``1 + x*``, x* the smallest grid point with
    P[lambda K >= x*] <= delta/2, so a new bin of count 1 survives with
    probability at most delta/2:

    .. math::

        a_x = D_x + \lambda K, \quad
        a_x \leftarrow 0 \text{ if } a_x < 1 + x^* \text{ or } D_x = 0.

    Parameters
    ----------
    counts : array_like of int, shape (k,)
        The non-negative integer bin counts over the bins present in the data
        domain (bins with count 0 are always released as 0, so the bin set
        may be data-dependent).
    epsilon : float
        The privacy parameter (> 0).
    delta : float
        In (0, 1) (keyword-only).
    granularity : float or None, default=None
        The grid lambda (a power of two <= 1); None: the default from epsilon.
    rng : SeedLike, default=None
        The randomness: None, an int seed, a ``numpy.random.Generator`` or ``"secure"``.
    accountant : Accountant, default=None
        Charged :func:`stable_histogram_privacy` (add/remove) before any
        randomness is drawn.

    Returns
    -------
    numpy.ndarray of float, shape (k,)
        The released counts (0 for suppressed bins), multiples of the granularity.

    References
    ----------
    The stable histogram of the propose-test-release lecture notes, proof
    checked in mathematics §6.3.

    Examples
    --------
    >>> from dpselect.apps.counts import stable_histogram
    >>> out = stable_histogram([500, 0, 1], 1.0, delta=1e-6, rng=0)
    >>> bool(out[0] > 480), out[1:].tolist()
    (True, [0.0, 0.0])
    """
    c = check_counts(counts, "counts")
    privacy = stable_histogram_privacy(epsilon, delta)
    epsilon = check_epsilon(epsilon)
    delta = _check_ptr_delta(delta)
    rel = _histogram_noise(epsilon, granularity)
    threshold = 1.0 + _grid_threshold(rel, delta)
    gen = check_random_state(rng)
    charge(accountant, privacy)
    noisy = rel.release(c.astype(np.float64), rng=gen)
    return np.where((c > 0) & (noisy >= threshold), noisy, 0.0)
