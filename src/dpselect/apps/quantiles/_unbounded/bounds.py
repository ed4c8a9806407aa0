r"""Quantiles without bounds: private bounds by AboveThreshold on a geometric grid, then the bounded mechanism.

Durfee (NeurIPS 2023) runs AboveThreshold over a geometric grid to find a
quantile with no upper bound on the data.  Here the scan releases **bounds**:
on the public grid :math:`G = \{s\, 2^e (1 + i/K) : e \ge 0,\ 0 \le i < K\}`
(smallest scale :math:`s`, ``scale``; :math:`K` steps per octave, ``steps``)
the upper bound is the first :math:`t \in G` (ascending) whose count of records
above it, :math:`\#\{x > t\}`, is at most the noisy threshold; the lower bound
is the mirror scan of :math:`\#\{x < -t\}`.  Both are monotone counting
queries of sensitivity 1, so each scan is :math:`\varepsilon`-DP with
discrete Laplace scales :math:`2/\varepsilon`
(:class:`dpselect.mechanisms.sparse_vector.AboveThreshold`).  No bound is
read from the data: only these released grid points are.

A quantile then runs the bounded mechanism of :func:`.private_quantile`
(:func:`.private_quantiles`) on the records clamped to the released bounds,
with the rest of the budget.  Clamping is a per-record map, so neighbours stay
neighbours; it leaves every order statistic whose rank is not among the
clamped records unchanged.  Total: basic composition,
:math:`\varepsilon_b + (\varepsilon - \varepsilon_b) = \varepsilon`
(docs/mathematics.md §15.2).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...._docstrings import fill_doc
from ...._exact_numbers import check_granularity
from ...._params import validate_params
from ...._validation import check_array_1d, check_random_state
from ....accounting import Accountant, charge
from ....mechanisms import AboveThreshold
from ....privacy import Privacy
from ....typing import Relation, SeedLike
from .._rules import ACCOUNTANT, EPSILON, RELATION, SAMPLE, SEED, SIZE, Rule

__all__ = ["Bounds", "private_bounds", "private_max", "release_bounds_draws"]

#: Default smallest scale s of the geometric grid and steps per octave K.
DEFAULT_SCALE = 2.0**-30
DEFAULT_STEPS = 16
#: Default share of epsilon spent on the bounds by the quantile functions.
DEFAULT_BOUNDS_SHARE = 0.25
#: Bits of the default output grid below the released bound: lambda = 2^(floor(log2 max|bound|) - 40), so a
#: bound that overshoots the data by 2^20 still leaves a grid 2^-20 of the data's scale (and the many-quantile
#: jitter keeps its 10 finer bits below 2^51 lambda).
GRID_BITS = 40
#: Threshold of the scans: at most MARGIN * ceil(b2) records beyond the bound (b2: the query noise scale).
MARGIN = 2


@dataclass(frozen=True)
class Bounds:
    """Released clipping bounds ``(lower, upper)``: points of the public grid (iterable, unpacks).

    Parameters
    ----------
    lower : float
        the lower bound, -t for a grid point t (or -scale).
    upper : float
        the upper bound, a grid point.

    See Also
    --------
    private_bounds : Private clipping bounds of ``x`` with no prior bound: two AboveThreshold scans, epsilon-DP
    private_max : A private maximum (clipping bound) with no prior bound: one AboveThreshold scan, epsilon-DP

    Examples
    --------
    >>> a, b = Bounds(-2.0, 8.0)
    >>> b - a
    10.0
    """

    lower: float
    upper: float

    def __iter__(self) -> Iterator[float]:
        """Iterate over ``(lower, upper)`` (so ``a, b = bounds`` unpacks)."""
        return iter((self.lower, self.upper))


def _check_scale(scale: Any) -> float:
    s = check_granularity(scale, "scale")
    if not 2.0**-1000 <= s <= 2.0**100:
        raise ValueError(f"scale must be a power of two in [2^-1000, 2^100], got {scale!r}")
    return s


def _check_steps(steps: Any) -> int:
    if (
        isinstance(steps, bool)
        or not isinstance(steps, (int, np.integer))
        or steps < 1
        or steps > 1024
        or steps & (steps - 1)
    ):
        raise ValueError(f"steps must be a power of two in [1, 1024], got {steps!r}")
    return int(steps)


def _check_share(share: Any) -> float:
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 < share < 1.0:
        raise ValueError(f"bounds_share must be in (0, 1), got {share!r}")
    return float(share)


#: The smallest scale of the geometric grid: a power of two in [2^-1000, 2^100].
SCALE = Rule("a power of two in [2^-1000, 2^100]", check=lambda v, n: _check_scale(v))
#: Grid points per octave: a power of two in [1, 1024].
STEPS = Rule("a power of two in [1, 1024]", check=lambda v, n: _check_steps(v))
#: The first stage's defaults (scale, steps, share of epsilon) of the quantiles without bounds.
FIRST_STAGE = (DEFAULT_SCALE, DEFAULT_STEPS, DEFAULT_BOUNDS_SHARE)

_SCAN_RULES = {
    "x": SAMPLE,
    "epsilon": EPSILON,
    "scale": SCALE,
    "steps": STEPS,
    "relation": RELATION,
    "rng": SEED,
    "size": SIZE,
    "accountant": ACCOUNTANT,
}


def geometric_grid(scale: float, steps: int) -> np.ndarray:
    """The public grid s 2^e (1 + i/K), ascending, up to the largest finite float (all dyadic, exact)."""
    top = 1023 - int(math.log2(scale))
    e = np.repeat(np.arange(top), steps)
    i = np.tile(np.arange(steps), top)
    return np.ldexp(scale * (1.0 + i / steps), e)


def _scan(sorted_x: np.ndarray, grid: np.ndarray, side: str, at: AboveThreshold, src: Any) -> float:
    """Upper (side="upper": #{x > t}), lower (#{x < -t}) or magnitude ("abs": #{|x| > t}) bound.

    The first grid t whose count is at most the noisy threshold MARGIN * ceil(b2) (a public
    margin in records: the chance of overshooting the data by j steps falls like e^-MARGIN).
    """
    above = np.zeros(grid.size, dtype=np.int64)
    if side in ("upper", "abs"):
        above += sorted_x.size - np.searchsorted(sorted_x, grid, side="right")
    if side in ("lower", "abs"):
        above += np.searchsorted(sorted_x, -grid, side="left")
    k = at.select(-above, -MARGIN * math.ceil(at.scales[1]), rng=src)
    t = float(grid[min(k, grid.size - 1)])
    return -t if side == "lower" else t


def _sorted_and_grid(x: Any, scale: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The sorted records and the geometric grid (every argument already checked by the caller's rules)."""
    return np.sort(check_array_1d(x, "x")), geometric_grid(scale, steps)


def _bounds(sorted_x: np.ndarray, epsilon: float, relation: str, grid: np.ndarray, gen: Any) -> Bounds:
    at = AboveThreshold(epsilon / 2.0, monotone=relation == "add_remove")
    return Bounds(_scan(sorted_x, grid, "lower", at, gen), _scan(sorted_x, grid, "upper", at, gen))


def _magnitude_bounds(sorted_x: np.ndarray, epsilon: float, relation: str, grid: np.ndarray, gen: Any) -> Bounds:
    """(-M, M), M the "abs" scan at the full epsilon (one scan: half the noise of two)."""
    m = _scan(sorted_x, grid, "abs", AboveThreshold(epsilon, monotone=relation == "add_remove"), gen)
    return Bounds(-m, m)


@validate_params(_SCAN_RULES)
@fill_doc
def private_bounds(
    x: ArrayLike,
    epsilon: float,
    *,
    scale: float = DEFAULT_SCALE,
    steps: int = DEFAULT_STEPS,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    r"""Private clipping bounds of ``x`` with no prior bound: two AboveThreshold scans, epsilon-DP.

    On the public grid :math:`G = \{s 2^e (1 + i/K)\}` the upper bound is the
    first :math:`t \in G` with :math:`-\#\{x > t\} + \nu_t \ge \rho - 2\lceil b_2 \rceil`, the lower
    bound :math:`-t` for the first :math:`t` with :math:`-\#\{x < -t\} + \nu_t \ge \rho - 2\lceil b_2 \rceil`
    (fresh noise per scan): each scan is AboveThreshold with
    discrete Laplace scales :math:`b_1 = b_2 = 4/\varepsilon` (monotone
    counts under add/remove; :math:`b_2` doubles under replace), so
    :math:`\varepsilon/2` per scan.  Typically a few records lie outside
    (of the order of :math:`2\lceil b_2 \rceil + b_2` at each end) and the
    bounds rarely overshoot the data by more than a few grid steps; data within
    :math:`(-s, s)` give :math:`\pm s`.

    Parameters
    ----------
    x : array_like
        1-D finite sample (any range, both signs).
    epsilon : float
        privacy budget (> 0).
    scale : float, default=2**-30
        :math:`s`, the smallest scale of the grid (a power of two): the resolution near 0.
    steps : int, default=16
        :math:`K`, grid points per octave (a power of two; ratio at most 1 + 1/K).
    %(unbounded_release)s

    Returns
    -------
    Bounds or ndarray
        ``(lower, upper)``, lower < 0 < upper, both dyadic (floating-point exact);
        with ``size``, an array of shape ``(size, 2)`` of them.

    See Also
    --------
    Bounds : Released clipping bounds ``(lower, upper)``: points of the public grid (iterable, unpacks)
    private_max : A private maximum (clipping bound) with no prior bound: one AboveThreshold scan, epsilon-DP

    References
    ----------
    D. Durfee, "Unbounded differentially private quantile and maximum
    estimation", NeurIPS 2023; M. Lyu, D. Su & N. Li, PVLDB 2017 (AboveThreshold,
    monotone queries).  Proof: docs/mathematics.md §15.2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_bounds
    >>> x = np.random.default_rng(0).uniform(-3, 100, size=5000)
    >>> private_bounds(x, 1.0, rng=1)
    Bounds(lower=-2.875, upper=116.0)
    """
    sorted_x, grid = _sorted_and_grid(x, scale, steps)
    gen = check_random_state(rng)
    charge(accountant, Privacy(epsilon, 0.0, relation, "private_bounds: two AboveThreshold scans"), size=size)
    if size is None:
        return _bounds(sorted_x, epsilon, relation, grid, gen)
    return np.array([tuple(_bounds(sorted_x, epsilon, relation, grid, gen)) for _ in range(size)])


@validate_params(_SCAN_RULES)
@fill_doc
def private_max(
    x: ArrayLike,
    epsilon: float,
    *,
    scale: float = DEFAULT_SCALE,
    steps: int = DEFAULT_STEPS,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> Any:
    r"""A private maximum (clipping bound) with no prior bound: one AboveThreshold scan, epsilon-DP.

    The first :math:`t` of the public grid :math:`\{s 2^e (1 + i/K)\}` with
    :math:`-\#\{x > t\} + \nu_t \ge \rho - 2\lceil b_2 \rceil`, :math:`\rho, \nu_t` discrete Laplace
    of scale :math:`2/\varepsilon` (monotone counting queries: Lyu, Su & Li
    2017; :math:`\nu` scale :math:`4/\varepsilon` under replace).  The answer
    is a positive grid point (``scale`` when max(x) < scale, e.g. for
    all-negative data).

    Parameters
    ----------
    x : array_like
        1-D finite sample.
    epsilon : float
        privacy budget (> 0).
    scale : float, default=2**-30
        smallest grid scale (a power of two).
    steps : int, default=16
        grid points per octave (a power of two).
    %(unbounded_release)s

    Returns
    -------
    float or ndarray
        (an array of ``size`` of them) a grid point with typically a few records above it (of the order of
        :math:`2\lceil b_2 \rceil + b_2`; a clipping bound for sums and means) and
        rarely far above max(x) (the chance falls geometrically with the distance in grid steps).

    See Also
    --------
    Bounds : Released clipping bounds ``(lower, upper)``: points of the public grid (iterable, unpacks)
    private_bounds : Private clipping bounds of ``x`` with no prior bound: two AboveThreshold scans, epsilon-DP

    References
    ----------
    D. Durfee, NeurIPS 2023 (AboveThreshold for the maximum); docs/mathematics.md §15.2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_max
    >>> x = np.random.default_rng(0).exponential(10.0, size=10_000)
    >>> private_max(x, 1.0, rng=3)  # max(x) = 91.6: a few records above 72
    72.0
    """
    sorted_x, grid = _sorted_and_grid(x, scale, steps)
    gen = check_random_state(rng)
    charge(accountant, Privacy(epsilon, 0.0, relation, "private_max: AboveThreshold"), size=size)
    scan = AboveThreshold(epsilon, monotone=relation == "add_remove")
    if size is None:
        return _scan(sorted_x, grid, "upper", scan, gen)
    return np.array([_scan(sorted_x, grid, "upper", scan, gen) for _ in range(size)])


def _clamped(sorted_x: np.ndarray, b: Bounds, integer: bool, granularity: Any) -> tuple[np.ndarray, tuple, Any]:
    """Records clamped to the released bounds, the bounds, the output grid (None: 2^(e - 40), e = floor(log2 |b|))."""
    lo, hi = b
    if integer:  # integer outputs: bounds within +-2^53 (post-processing of the released bounds)
        lo, hi = min(max(math.floor(lo), -(2**53)), 2**53 - 1), max(min(math.ceil(hi), 2**53), 1 - 2**53)
        lo, hi = min(lo, hi - 1), max(hi, lo + 1)
    elif granularity is None:
        granularity = math.ldexp(1.0, math.frexp(max(-lo, hi))[1] - 1 - GRID_BITS)
    else:
        hi = max(hi, lo + float(granularity))
        granularity = max(float(granularity), math.ldexp(1.0, math.frexp(max(-lo, hi))[1] - 51))
    x = np.clip(sorted_x, lo, hi)
    return (x.astype(np.int64) if integer else x), (lo, hi), granularity


def release_bounds_draws(
    x: Any,
    epsilon: float,
    size: int | None,
    integer: bool | None,
    relation: Relation,
    rng: SeedLike,
    accountant: Accountant | None,
    granularity: float | None,
    scale: float,
    steps: int,
    bounds_share: float,
) -> tuple[list[tuple[np.ndarray, tuple, Any]], float, np.random.Generator]:
    """First stage of the quantiles without bounds (mathematics §15.2), ``size`` draws (None: one).

    Its callers' rules have checked every argument on its own; here the cross-argument checks
    (integer records, ``granularity`` for integer outputs), then it charges ``accountant`` the
    whole epsilon (``size`` releases) and releases M by the scan of #{|x| > t} at
    ``bounds_share * epsilon`` per draw.

    Returns ``([(x clamped, bounds, granularity) per draw], the rest of epsilon, the Generator)``.
    """
    sorted_x, grid = _sorted_and_grid(x, scale, steps)
    if integer is None:
        integer = bool(np.issubdtype(np.asarray(x).dtype, np.integer))
    if integer and not (sorted_x == np.round(sorted_x)).all():
        raise ValueError("x must hold integers when integer=True")
    if granularity is not None and not (integer and granularity == 1):
        if integer:
            raise ValueError(f"granularity applies to real outputs, got granularity={granularity!r}")
        check_granularity(granularity)
    gen = check_random_state(rng)
    privacy = Privacy(epsilon, 0.0, relation, "quantiles without bounds: AboveThreshold bounds + EM")
    charge(accountant, privacy, size=size)
    found = [_magnitude_bounds(sorted_x, bounds_share * epsilon, relation, grid, gen) for _ in range(size or 1)]
    if any(b.upper < 2.0 * grid[0] for b in found):
        warn_unlocated(float(grid[0]))
    return [_clamped(sorted_x, b, bool(integer), granularity) for b in found], (1.0 - bounds_share) * epsilon, gen


def warn_unlocated(scale: float) -> None:
    """Say that the bound search stopped in its grid's first octave: the estimate then ignores the data's scale.

    A function of the released bound only (mathematics §15.2: the joint law of the bound and the
    estimate is what the guarantee covers), so the warning is itself covered.
    """
    warnings.warn(
        "quantiles without bounds: the private bound search stopped in the first octave of its grid "
        f"(below {2 * scale:g}): too few records for this epsilon to find the data's scale (or every "
        "|x| is below it), so the estimate lies in that tiny range and says almost nothing about x; "
        "pass public bounds=(a, b) or a larger epsilon",
        UserWarning,
        stacklevel=4,
    )
