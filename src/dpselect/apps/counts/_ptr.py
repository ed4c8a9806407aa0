r"""Propose-test-release (PTR) for a value (mathematics §6.2, mathematics §7 item 27).

PTR for the mode (:mod:`._ptr_mode`) and the stable histogram
(:mod:`._stable_histogram`) share this module's exact discrete-Laplace test
noise and thresholds.

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

Examples
--------
>>> import numpy as np
>>> from dpselect.apps.counts import propose_test_release
>>> propose_test_release(3.5, 0.0, bound=1.0, epsilon=1.0, delta=1e-6, rng=0) is np.ma.masked   # unstable
True
>>> float(propose_test_release(3.5, 1e6, bound=0.0, epsilon=1.0, delta=1e-6, rng=0))   # stable, bound 0
3.5
"""

from __future__ import annotations

import math

import numpy as np
from numpy.ma.core import MaskedConstant

from ..._params import DATA_FINITE, EPSILON, SEED, SIZE, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant, charge, ptr_privacy
from ...noise import GridLaplace, grid_index, grid_values
from ...typing import SeedLike
from ._rules import ACCOUNTANT, DISTANCE, GRANULARITY, PTR_BOUND, PTR_DELTA

__all__ = ["propose_test_release", "ptr_privacy"]

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
    tail = lambda j: float(noise.log_tail(j * noise.lam))
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


@validate_params(
    {
        "value": DATA_FINITE,  # f(D): never echoed
        "distance_to_instability": DISTANCE,
        "bound": PTR_BOUND,
        "epsilon": EPSILON,
        "delta": PTR_DELTA,
        "granularity": GRANULARITY,
        "rng": SEED,
        "size": SIZE,
        "accountant": ACCOUNTANT,
    }
)
def propose_test_release(
    value: float,
    distance_to_instability: float,
    *,
    bound: float,
    epsilon: float,
    delta: float,
    granularity: float | None = None,
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> float | MaskedConstant | np.ma.MaskedArray:
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
    size : int or None, default=None
        None: one release; an int: ``size`` independent releases (a masked
        array, masked where the test fails), charged as ``size`` releases
        (mathematics §10.1).
    accountant : Accountant, default=None
        Charged :func:`ptr_privacy` (``size`` times) before any randomness is drawn.

    Returns
    -------
    float, numpy.ma.MaskedConstant or numpy.ma.MaskedArray
        ``value`` plus discrete Laplace noise on the grid, or ``np.ma.masked`` (⊥)
        when the test fails; with ``size``, a masked array of ``size`` of them.

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
    # value, distance and bound are computed from the data: their rules echo none of them
    gamma = distance_to_instability
    privacy = ptr_privacy(epsilon, delta)
    if bound == 0.0:
        lam = _ZERO_BOUND_GRID if granularity is None else granularity
        release = None
    else:
        release = GridLaplace(bound, epsilon, granularity=granularity)
    test = _test_noise(epsilon)
    threshold = _integer_threshold(test, delta)
    gen = check_random_state(rng)
    charge(accountant, privacy, size=size)
    if size is not None:  # every test, then every value (masked where its test failed)
        passed = gamma + np.asarray(test.release(0.0, size=size, rng=gen)) > threshold
        if release is None:
            vals = np.full(size, float(grid_values(grid_index(value, lam), lam)[()]))
        else:
            vals = np.asarray(release.release(value, size=size, rng=gen))
        return np.ma.masked_array(vals, mask=~passed)
    if gamma + test.release(0.0, rng=gen) <= threshold:
        return np.ma.masked
    if release is None:
        return float(grid_values(grid_index(value, lam), lam)[()])
    return float(release.release(value, rng=gen))
