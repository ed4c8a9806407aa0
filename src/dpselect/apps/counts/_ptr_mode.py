r"""Propose-test-release for the mode (b = 0, no release noise; mathematics §6.2, mathematics §7 items 28–29).

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

⊥ is numpy's masked value, as in :mod:`._ptr` (one draw: :data:`numpy.ma.masked`;
a batch: a :class:`numpy.ma.MaskedArray`).

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
from typing import overload

import numpy as np
from numpy.ma import MaskedArray
from numpy.ma.core import MaskedConstant

from ..._docstrings import fill_doc
from ..._params import ACCOUNTANT, COUNTS, EPSILON, RELATION, SEED, SIZE, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant, charge, ptr_mode_privacy
from ...output_law import OutputLaw
from ...typing import ArrayLike, Relation, SeedLike
from ._ptr import _integer_threshold, _test_noise
from ._rules import PTR_DELTA

__all__ = ["mode_distance_to_instability", "ptr_mode", "ptr_mode_privacy", "ptr_mode_probabilities"]


@validate_params({"counts": COUNTS, "relation": RELATION})
@fill_doc
def mode_distance_to_instability(counts: ArrayLike, *, relation: Relation = "add_remove") -> float:
    r"""Gamma for the mode: max(g-1, 0) (add/remove) or max(ceil(g/2)-1, 0) (replace); inf if m = 1.

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

    See Also
    --------
    ptr_mode : PTR mode: the argmax index (first on ties) if gamma + K > T, else ⊥
    ptr_mode_probabilities : The exact law of :func:`ptr_mode`: ``[P[output = argmax index], P[⊥]]`` (exact ...
    distance_to_instability : t*(x): distance to the nearest table whose local sensitivity is 1 (mathematics §4.2)

    %(ptr_mode_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import mode_distance_to_instability
    >>> mode_distance_to_instability([40, 3, 1]), mode_distance_to_instability([40, 3, 1], relation="replace")
    (36.0, 18.0)
    """
    return _mode_gamma(np.asarray(counts), relation)


def _mode_gamma(c: np.ndarray, relation: str) -> float:
    if c.size == 1:
        return math.inf  # a single candidate is always the mode
    top2 = np.partition(c, c.size - 2)[-2:]
    g = int(top2[1] - top2[0])
    if relation == "add_remove":
        return float(max(g - 1, 0))
    return float(max(-(-g // 2) - 1, 0))


@validate_params({"counts": COUNTS, "epsilon": EPSILON, "delta": PTR_DELTA, "relation": RELATION})
@fill_doc
def ptr_mode_probabilities(
    counts: ArrayLike, epsilon: float, *, delta: float, relation: Relation = "add_remove"
) -> OutputLaw:
    r"""The exact law of :func:`ptr_mode`: ``[P[output = argmax index], P[⊥]]`` (exact discrete Laplace tail).

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
    OutputLaw
        The release and the ⊥ probabilities (summing to 1), over the support
        ``[argmax index, np.ma.masked]`` (an object array: ⊥ is numpy's masked
        value, as :func:`ptr_mode` returns it).

    See Also
    --------
    ptr_mode : PTR mode: the argmax index (first on ties) if gamma + K > T, else ⊥
    mode_distance_to_instability : Gamma for the mode: max(g-1, 0) (add/remove) or max(ceil(g/2)-1, 0) ...
    duff_mode_probabilities : The exact output law of :func:`duff_mode` (epsilon-DP under add/remove)

    Notes
    -----
    (epsilon, delta/2)-DP under ``relation`` (add/remove or replace neighbours),
    mathematics §6.2 and the corrected distance to instability of mathematics §7
    item 28.

    %(ptr_mode_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import ptr_mode_probabilities
    >>> p, bottom = ptr_mode_probabilities([4, 3, 1], 1.0, delta=1e-6)   # gamma = 0: P <= delta/2
    >>> bool(0 < p <= 0.5e-6 and abs(p + bottom - 1) < 1e-12)
    True
    """
    c = np.asarray(counts)
    gamma = _mode_gamma(c, relation)
    test = _test_noise(epsilon)
    t1 = _integer_threshold(test, delta) + 1
    p_release = 1.0 if math.isinf(gamma) else float(np.exp(test.log_tail(t1 - gamma)))
    support = np.empty(2, dtype=object)
    support[0], support[1] = int(np.argmax(c)), np.ma.masked
    return OutputLaw([p_release, 1.0 - p_release], support=support)


@overload
def ptr_mode(
    counts: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    relation: Relation = ...,
    rng: SeedLike = ...,
    size: None = None,
    accountant: Accountant | None = ...,
) -> int | MaskedConstant: ...


@overload
def ptr_mode(
    counts: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    relation: Relation = ...,
    rng: SeedLike = ...,
    size: int,
    accountant: Accountant | None = ...,
) -> MaskedArray: ...


@validate_params(
    {
        "counts": COUNTS,
        "epsilon": EPSILON,
        "delta": PTR_DELTA,
        "relation": RELATION,
        "rng": SEED,
        "size": SIZE,
        "accountant": ACCOUNTANT,
    }
)
@fill_doc
def ptr_mode(
    counts: ArrayLike,
    epsilon: float,
    *,
    delta: float,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> int | MaskedConstant | MaskedArray:
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

    See Also
    --------
    ptr_mode_probabilities : The exact law of :func:`ptr_mode`: ``[P[output = argmax index], P[⊥]]`` (exact ...
    mode_distance_to_instability : Gamma for the mode: max(g-1, 0) (add/remove) or max(ceil(g/2)-1, 0) ...
    ModeUtility : What :func:`duff_mode_utility` returns: the output space and Duff's mode utility on it

    %(ptr_mode_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import ptr_mode
    >>> ptr_mode([40, 3, 1], 1.0, delta=1e-6, size=3, rng=0).tolist()
    [0, 0, 0]
    """
    c = np.asarray(counts)
    privacy = ptr_mode_privacy(epsilon, delta, relation=relation)
    test = _test_noise(epsilon)
    threshold = _integer_threshold(test, delta)
    gen = check_random_state(rng)
    charge(accountant, privacy, size=size)
    gamma = _mode_gamma(c, relation)
    mode = int(np.argmax(c))
    count = 1 if size is None else size
    passed = gamma + test.release(0.0, size=count, rng=gen) > threshold
    draws = np.ma.masked_array(np.full(count, mode, dtype=np.intp), mask=~passed)
    if size is None:
        return mode if bool(passed[0]) else np.ma.masked
    return draws
