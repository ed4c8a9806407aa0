r"""Stable histogram (mathematics §6.3).

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
>>> from dpselect.apps.counts import stable_histogram
>>> stable_histogram([0, 1], 1.0, delta=1e-6, rng=0).tolist()   # a count of 1 is suppressed (w.p. >= 1 - delta/2)
[0.0, 0.0]
"""

from __future__ import annotations

import numpy as np

from ..._docstrings import fill_doc
from ..._params import ACCOUNTANT, COUNTS, EPSILON, GRANULARITY, SEED, SIZE, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant, charge, stable_histogram_privacy
from ...noise import GridLaplace
from ...typing import ArrayLike, SeedLike
from ._ptr import _grid_threshold
from ._rules import PTR_DELTA

__all__ = ["stable_histogram", "stable_histogram_privacy", "stable_histogram_probabilities"]


def _histogram_noise(epsilon: float, granularity: float | None) -> GridLaplace:
    rel = GridLaplace(1.0, epsilon, granularity=granularity)
    if rel.lam > 1.0:
        raise ValueError(f"granularity must be <= 1 for counts, got {granularity!r}")
    return rel


@validate_params({"counts": COUNTS, "epsilon": EPSILON, "delta": PTR_DELTA, "granularity": GRANULARITY})
@fill_doc
def stable_histogram_probabilities(
    counts: ArrayLike, epsilon: float, *, delta: float, granularity: float | None = None
) -> np.ndarray:
    r"""P[a_x != 0] per bin: P[lambda K >= thr - D_x] for D_x > 0, else 0 (exact discrete Laplace tail).

    The release is :func:`stable_histogram`, (epsilon, delta/2)-DP under add/remove
    neighbours (mathematics §6.3).  The bins are released independently, so this is one
    probability per bin (each in [0, 1], not a law over one output: they need not sum to 1).

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

    See Also
    --------
    stable_histogram : LN stable histogram (mathematics §6.3): (epsilon, delta/2)-DP under add/remove
    duff_mode_probabilities : The exact output law of :func:`duff_mode` (epsilon-DP under add/remove)
    ptr_mode_probabilities : The exact law of :func:`ptr_mode`: ``[P[output = argmax index], P[⊥]]`` (exact ...

    %(stable_histogram_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import stable_histogram_probabilities
    >>> p = stable_histogram_probabilities([0, 1], 1.0, delta=1e-6)   # count 1: <= delta/2
    >>> float(p[0]), bool(0 < p[1] <= 0.5e-6)
    (0.0, True)
    """
    c = np.asarray(counts)
    rel = _histogram_noise(epsilon, granularity)
    thr = 1.0 + _grid_threshold(rel, delta)
    p = np.exp(rel.log_tail(thr - c.astype(np.float64)))
    return np.where(c > 0, p, 0.0)


@validate_params(
    {
        "counts": COUNTS,
        "epsilon": EPSILON,
        "delta": PTR_DELTA,
        "granularity": GRANULARITY,
        "rng": SEED,
        "size": SIZE,
        "accountant": ACCOUNTANT,
    }
)
@fill_doc
def stable_histogram(
    counts: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    granularity: float | None = None,
    rng: SeedLike = None,
    size: int | None = None,
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
    size : int or None, default=None
        None: one release; an int: ``size`` independent releases (rows),
        charged as ``size`` releases (mathematics §10.1).
    accountant : Accountant, default=None
        Charged :func:`stable_histogram_privacy` (add/remove, ``size`` times)
        before any randomness is drawn.

    Returns
    -------
    numpy.ndarray of float, shape (k,) or (size, k)
        The released counts (0 for suppressed bins), multiples of the granularity.

    See Also
    --------
    stable_histogram_probabilities : P[a_x != 0] per bin: P[lambda K >= thr - D_x] for D_x > 0, else 0 (exact ...

    %(stable_histogram_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import stable_histogram
    >>> out = stable_histogram([500, 0, 1], 1.0, delta=1e-6, rng=0)
    >>> bool(out[0] > 480), out[1:].tolist()
    (True, [0.0, 0.0])
    """
    c = np.asarray(counts)
    privacy = stable_histogram_privacy(epsilon, delta)
    rel = _histogram_noise(epsilon, granularity)
    threshold = 1.0 + _grid_threshold(rel, delta)
    gen = check_random_state(rng)
    charge(accountant, privacy, size=size)
    rows = 1 if size is None else size
    noisy = np.asarray(rel.release(np.tile(c.astype(np.float64), rows), rng=gen)).reshape(rows, c.size)
    out = np.where((c > 0) & (noisy >= threshold), noisy, 0.0)
    return out[0] if size is None else out
