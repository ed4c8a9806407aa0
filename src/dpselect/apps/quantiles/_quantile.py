"""One private quantile without a grid: continuous or integer outputs, exact law and error.

The exponential mechanism over the pieces between consecutive order
statistics (Smith 2011; the inverse-sensitivity view of Asi & Duchi 2020),
with the rank-distance utility of :mod:`._quantile_law`; integer data give
integer outputs (ties exact).  O(n log n) (one ``np.unique``), log space.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validation import check_array_1d, check_epsilon, check_random_state, check_relation, check_size
from ...accounting import Accountant, charge
from ...privacy import Privacy
from ._piecewise_em import _sample_categorical, check_method
from ._quantile_law import (
    Sample,
    abs_dev,
    check_q,
    check_sample,
    draw_in_pieces,
    log_masses,
    normalise,
    pieces,
    target_rank,
)

__all__ = ["private_median", "private_quantile", "quantile_expected_error", "quantile_law", "true_quantile"]


def quantile_privacy(epsilon: float, relation: str) -> Privacy:
    """epsilon-DP under ``relation`` (exponential mechanism, utility sensitivity 1)."""
    return Privacy(epsilon, 0.0, relation, "exponential mechanism on a rank distance, sensitivity 1")


def _law(s: Sample, q: float, epsilon: float, relation: str) -> tuple[Any, np.ndarray]:
    pc = pieces(s)
    return pc, log_masses(pc, s.n, q, epsilon, relation)


def sample_quantile(s: Sample, q: float, epsilon: float, relation: str, size: int | None,
                    gen: np.random.Generator, method: str = "auto") -> Any:
    """Draws of the mechanism on a validated sample (no validation, no accounting)."""
    pc, logw = _law(s, q, epsilon, relation)
    count = 1 if size is None else size
    idx = _sample_categorical(count, gen, method, logw=logw)
    out = draw_in_pieces(pc, idx, gen)
    if size is None:
        return int(out[0]) if s.integer else float(out[0])
    return out


def private_quantile(
    x: Any,
    q: float,
    epsilon: float,
    *,
    bounds: Any,
    integer: bool | None = None,
    relation: str = "add_remove",
    rng: Any = None,
    size: int | None = None,
    method: str = "auto",
    accountant: Accountant | None = None,
) -> Any:
    r"""Privately estimate the q-th quantile of ``x`` (no grid): epsilon-DP under ``relation``.

    The target is the order statistic :math:`x_{(k)}`, :math:`k = \max(1, \lceil q n \rceil)`
    (``numpy.quantile(x, q, method="inverted_cdf")``).  The output space is
    ``bounds`` (continuous) or its integers (``integer=True``, the default for
    an integer dtype): the exponential mechanism with the rank distance
    :math:`\psi` of the pieces between consecutive distinct values,

    .. math:: P(\text{piece } p) \propto |p|\, e^{-\varepsilon \psi_p / 2},

    then a uniform point (integer) of the chosen piece.  Integer outputs land
    exactly on a run of ties; continuous outputs never fall between tied
    records (a zero-length piece has no mass).

    Parameters
    ----------
    x : array_like or dask array
        1-D sample, finite, within ``bounds`` (values outside are refused).
    q : float
        quantile level in [0, 1].
    epsilon : float
        privacy budget (> 0).
    bounds : tuple of float
        public ``(a, b)``, ``a < b``.
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    relation : str, default="add_remove"
        "add_remove" or "replace" (the utility is adapted; docs/mathematics.md).
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None for one value, else the number of iid draws (an array).
    method : str, default="auto"
        "auto", "race" or "inverse": how the piece is drawn (same law).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` before any randomness is drawn.

    Returns
    -------
    float, int or ndarray
        the private quantile (int for integer outputs).

    References
    ----------
    A. Smith, "Privacy-preserving statistical estimation with optimal
    convergence rates", STOC 2011 (§3, the exponential mechanism for quantiles);
    H. Asi & J. Duchi, "Instance-optimality in differential privacy via
    approximate inverse sensitivity mechanisms", NeurIPS 2020 (Def. 2.1);
    F. McSherry & K. Talwar, FOCS 2007 (Thm 6).  Proof: docs/mathematics.md,
    "Quantiles without a grid".

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_quantile
    >>> x = np.random.default_rng(0).normal(size=1000)
    >>> round(private_quantile(x, 0.9, 1.0, bounds=(-5, 5), rng=1), 1)
    1.3
    >>> private_quantile(np.array([3, 5, 5, 5, 9]), 0.5, 5.0, bounds=(0, 10), rng=1)
    5
    """
    epsilon = check_epsilon(epsilon)
    q = check_q(q)
    relation = check_relation(relation)
    size = check_size(size)
    method = check_method(method)
    s = check_sample(x, bounds, integer)
    gen = check_random_state(rng)
    charge(accountant, quantile_privacy(epsilon, relation))
    return sample_quantile(s, q, epsilon, relation, size, gen, method)


def quantile_law(
    x: Any, q: float, epsilon: float, *, bounds: Any, integer: bool | None = None, relation: str = "add_remove"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact output law of :func:`private_quantile`: ``(lo, hi, probabilities)`` per piece.

    The output is uniform on ``[lo, hi]`` (on its integers for integer outputs)
    with the given probability; pieces are in increasing order (an integer
    run between adjacent values is empty: ``hi < lo``, probability 0).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import quantile_law
    >>> lo, hi, p = quantile_law(np.array([1, 2, 2, 3]), 0.5, 2.0, bounds=(0, 4))
    >>> lo.tolist()
    [0.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0]
    >>> hi.tolist()
    [0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 4.0]
    >>> round(float(p[3]), 3)  # the atom {2}: the median
    0.826
    """
    epsilon = check_epsilon(epsilon)
    q = check_q(q)
    relation = check_relation(relation)
    s = check_sample(x, bounds, integer)
    pc, logw = _law(s, q, epsilon, relation)
    return pc.lo.copy(), pc.hi.copy(), normalise(logw)


def true_quantile(x: Any, q: float) -> float:
    """x_(k), k = max(1, ceil(q n)): ``numpy.quantile(x, q, method="inverted_cdf")``.

    Examples
    --------
    >>> from dpselect.apps.quantiles import true_quantile
    >>> true_quantile([4.0, 1.0, 3.0, 2.0], 0.5)
    2.0
    """
    q = check_q(q)
    arr = np.sort(check_array_1d(x, "x"))
    return float(arr[target_rank(q, arr.size) - 1])


def quantile_expected_error(
    x: Any,
    q: float,
    epsilon: float,
    *,
    bounds: Any,
    integer: bool | None = None,
    relation: str = "add_remove",
    target: float | None = None,
) -> float:
    """Exact E|private_quantile(x, q) - target| (default target: x_(k)), closed form per piece.

    Examples
    --------
    >>> from dpselect.apps.quantiles import quantile_expected_error
    >>> import numpy as np
    >>> round(quantile_expected_error(np.array([1, 2, 2, 3]), 0.5, 2.0, bounds=(0, 4)), 4)
    0.1944
    """
    epsilon = check_epsilon(epsilon)
    q = check_q(q)
    relation = check_relation(relation)
    s = check_sample(x, bounds, integer)
    t = s.order_statistic(target_rank(q, s.n)) if target is None else float(target)
    pc, logw = _law(s, q, epsilon, relation)
    p = normalise(logw)
    keep = p > 0
    return float(np.dot(p[keep], abs_dev(pc, t)[keep]))


def private_median(
    x: Any,
    epsilon: float,
    *,
    bounds: Any,
    integer: bool | None = None,
    relation: str = "add_remove",
    rng: Any = None,
    size: int | None = None,
    method: str = "auto",
    accountant: Accountant | None = None,
) -> Any:
    r"""Private (lower) median :math:`x_{(\lceil n/2 \rceil)}`: epsilon-DP under ``relation``.

    :func:`private_quantile` at q = 1/2.  Under add/remove its utility is the
    exact add/remove distance of the Duff median (Gillenwater & Muñoz Medina),
    so continuous outputs have exactly the law of
    :func:`~dpselect.apps.quantiles.duff_median`; integer data (or
    ``integer=True``) give integer outputs, exactly on a run of tied records.

    Parameters
    ----------
    x : array_like or dask array
        1-D sample within ``bounds``.
    epsilon : float
        privacy budget (> 0).
    bounds : tuple of float
        public ``(a, b)``, ``a < b``.
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    relation : str, default="add_remove"
        "add_remove" or "replace".
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None for one value, else the number of iid draws.
    method : str, default="auto"
        "auto", "race" or "inverse" (same law).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` before any randomness is drawn.

    Returns
    -------
    float, int or ndarray
        the private median.

    References
    ----------
    J. Gillenwater & A. Muñoz Medina (Duff median: exact add/remove distance);
    A. Smith, STOC 2011; docs/mathematics.md, "Quantiles without a grid".

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_median
    >>> private_median(np.array([30, 38, 40, 40, 40, 40, 45, 50]), 1.0, bounds=(0, 99), rng=0)
    40
    """
    return private_quantile(x, 0.5, epsilon, bounds=bounds, integer=integer, relation=relation, rng=rng,
                            size=size, method=method, accountant=accountant)
