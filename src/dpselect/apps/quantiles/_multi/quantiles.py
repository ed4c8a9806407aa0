"""Many quantiles at once: JointExp and the recursive ApproximateQuantiles; ties by jitter.

* ``method="joint"``: JointExp (Gillenwater, Joseph & Kulesza, ICML 2021),
  one exponential mechanism over sorted m-tuples (:mod:`.joint_exp`).
* ``method="recursive"``: ApproximateQuantiles (Kaplan, Schnapp & Stemmer,
  ICML 2022): estimate the middle quantile with the single-quantile
  mechanism, split the records at it (left: < o, right: >= o) and recurse on
  both halves with the relative levels; ``ceil(log2(m + 1))`` levels share the
  budget equally and the nodes of one level hold disjoint records (parallel
  composition).

Integer data (``integer=True`` or an integer dtype) are **jittered**: each
record x becomes x + U, U uniform on [0, 1) independently, the continuous
mechanism runs on [a, b + 1) and the outputs are floored.  Flooring is
post-processing, and a per-record randomised map preserves epsilon-DP under
add/remove and replace (condition on the jitters of the shared records: the
two jittered datasets are neighbours).  The floor of the k-th jittered order
statistic is the k-th order statistic, so a run of tied records behaves like
an interval of length 1: no collapse on ties (the failure of JointExp run on
the raw tied values, where every tie is a zero-length interval).

Real data on the public grid lambda Z (``granularity``) are jittered the same
way at the grid's resolution: x + lambda U on [a, b + lambda), both methods
run on the finer grid lambda 2^-J (J = 10 unless the bounds' magnitude
forbids it: grid indices stay below 2^51) -- JointExp over sorted grid
tuples, the recursive method's nodes on the grid points of their intervals --
and the outputs are floored to lambda Z and clipped to [a, b]: exact
multiples of lambda (floating-point safe), within lambda of the estimate on
the raw data, and a heavy atom (the zeros of a zero-inflated column) becomes
a run of distinct values inside one grid cell instead of a zero-length piece
(docs/mathematics.md §12.2-12.4).  Both are post-processing of a per-record
randomised map: the guarantee is unchanged.  Outputs come back in the order
of ``qs`` (numpy's convention).
"""

from __future__ import annotations

import math
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ...._validation import check_random_state
from ....accounting import Accountant, charge
from ....noise import grid_values
from ....privacy import Privacy
from ....typing import Relation, SeedLike
from .._exponential.mechanism import output_grid, sample_quantile
from .._exponential.piecewise_em import grid_ceil
from .._exponential.quantile_pieces import Sample, check_q, check_sample
from .._rules import (
    ACCOUNTANT,
    BOUNDS,
    EPSILON,
    GRANULARITY,
    INTEGER,
    OUT_OF_BOUNDS_RULE,
    RELATION,
    SAMPLE,
    SEED,
    SIZE,
    Rule,
    options,
)
from .._unbounded.bounds import FIRST_STAGE, release_bounds_draws
from .joint_exp import sample_joint

__all__ = ["QUANTILES_METHODS", "private_quantiles"]

#: Methods of :func:`private_quantiles`.
QUANTILES_METHODS = ("auto", "joint", "recursive")


def check_qs(qs: Any) -> np.ndarray:
    try:
        arr = np.asarray(qs, dtype=np.float64) if not isinstance(qs, (str, bytes)) else None
    except (TypeError, ValueError):
        raise TypeError("qs must be a non-empty 1-D sequence of levels in [0, 1]") from None
    if arr is None or arr.ndim != 1 or arr.size == 0:
        raise ValueError("qs must be a non-empty 1-D sequence of levels in [0, 1]")
    for v in arr:
        check_q(float(v), "qs")
    return arr


#: A non-empty 1-D sequence of levels in [0, 1] (returned as float64).
LEVELS = Rule("a non-empty 1-D sequence of levels in [0, 1]", check=lambda v, n: check_qs(v))
#: The methods of :func:`private_quantiles`.
QUANTILES_METHOD = options(*QUANTILES_METHODS)


def choose_method(m: int, epsilon: float) -> str:
    """Default method from public quantities (m, epsilon): JointExp or the recursive method.

    epsilon >= 0.5: JointExp for m <= 32; epsilon < 0.5: JointExp for 5 <= m <= 9 (the deciles);
    else the recursive method.  Both methods run on jittered data (module
    docstring), so ties never leave flat scores.  Measured (Monte Carlo, 6-12
    subsamples per cell, 42 columns from statsmodels, vega_datasets,
    scikit-learn and the project's data; n in {100, 1000}; tight and 100x loose
    bounds; ``benchmarks/accuracy_quantile_methods.py``): at epsilon = 0.1 the
    geometric mean of MAE(joint) / MAE(recursive) is 1.10 for m = 3, 0.89 for
    m = 5, 0.88 for m = 9 (JointExp better in 77 % of 168 cells, at n = 100 and
    1000 alike), 1.21 for m = 14 and 1.18 for m = 19 (1.5 at n = 1000); at
    epsilon = 0.3: 1.19 for m = 3, 0.95 for m = 9, 1.14 for m = 19.  At epsilon
    >= 1 JointExp is the more accurate in 11 of 24 cells and the recursive
    method in 7; for m = 49 and 99 the recursive method is as accurate and
    30-150x faster (docs/choosing.md).  n is not used: it is private under
    add/remove, and the winner at epsilon = 0.1 does not change with it for the deciles.
    """
    if epsilon >= 0.5:
        return "joint" if m <= 32 else "recursive"
    return "joint" if 5 <= m <= 9 else "recursive"


#: Real data: the mechanisms run on the grid lambda 2^-JITTER_BITS inside the jittered cells.
JITTER_BITS = 10


def _jitter(s: Sample, gen: np.random.Generator, width: float = 1.0) -> Sample:
    """Sample -> x + width U on [a, b + width) (U iid uniform on [0, 1)): ties spread over one cell."""
    x = np.repeat(s.values, s.counts) + width * gen.random(s.n)
    values, counts = np.unique(x, return_counts=True)
    return Sample(values, counts.astype(np.int64), s.a, s.b + width, False)


def _fine_grid(lam: float, a: float, b: float) -> float:
    """Lambda 2^-J, J <= JITTER_BITS the largest keeping |a|, |b| < 2^51 lambda 2^-J (grid indices exact)."""
    e = math.frexp(max(abs(a), abs(b)) / lam)[1]  # max(|a|, |b|) / lambda < 2^e
    return math.ldexp(lam, -max(0, min(JITTER_BITS, 51 - e)))


def _sub(s: Sample, lo: float, hi: float) -> Sample:
    """Records in [lo, hi) -- in [lo, b] for the last node -- with bounds (lo, hi)."""
    i0 = np.searchsorted(s.values, lo, side="left")
    i1 = np.searchsorted(s.values, hi, side="left") if hi < s.b else s.values.size
    return Sample(s.values[i0:i1], s.counts[i0:i1], lo, hi, False)


def _recursive(
    s: Sample, qs: np.ndarray, epsilon: float, relation: str, gen: np.random.Generator, lam: float = 0.0
) -> np.ndarray:
    """ApproximateQuantiles on a real sample; qs sorted.  Level by level (breadth first); ``lam``: grid.

    On the grid every node interval [lo, hi] holds a grid point: the root because
    lambda <= b - a, the others because lo or hi is an earlier (grid) output.
    """
    m = qs.size
    levels = max(1, math.ceil(math.log2(m + 1)))
    eps_node = epsilon / levels / (2.0 if relation == "replace" else 1.0)
    out = np.empty(m)
    # node: (index range [i0, i1) of qs, value range [lo, hi], level range [qlo, qhi])
    nodes = [(0, m, s.a, s.b, 0.0, 1.0)]
    while nodes:
        nxt = []
        for i0, i1, lo, hi, qlo, qhi in nodes:
            mid = (i0 + i1) // 2
            rel = 0.5 if qhi <= qlo else min(1.0, max(0.0, (qs[mid] - qlo) / (qhi - qlo)))
            sub = _sub(s, lo, hi)
            if sub.a >= sub.b:
                o = sub.a
            else:
                o = float(sample_quantile(sub, rel, eps_node, "add_remove", None, gen, lam=lam))
            out[mid] = o
            if mid > i0:
                nxt.append((i0, mid, lo, o, qlo, float(qs[mid])))
            if i1 > mid + 1:
                nxt.append((mid + 1, i1, o, hi, float(qs[mid]), qhi))
        nodes = nxt
    return np.maximum.accumulate(out)


@validate_params(
    {
        "x": SAMPLE,
        "qs": LEVELS,
        "epsilon": EPSILON,
        "bounds": BOUNDS.or_none(),
        "integer": INTEGER,
        "method": QUANTILES_METHOD,
        "relation": RELATION,
        "rng": SEED,
        "size": SIZE,
        "accountant": ACCOUNTANT,
        "granularity": GRANULARITY,
        "on_out_of_bounds": OUT_OF_BOUNDS_RULE,
    }
)
def private_quantiles(
    x: ArrayLike,
    qs: ArrayLike,
    epsilon: float,
    *,
    bounds: tuple[float, float] | None = None,
    integer: bool | None = None,
    method: Literal["auto", "joint", "recursive"] = "auto",
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
    on_out_of_bounds: Literal["clip", "raise"] = "clip",
) -> np.ndarray:
    r"""Private estimates of several quantiles at once, total budget epsilon; one per q, in the order asked.

    Targets: :math:`x_{(k_i)}`, :math:`k_i = \max(1, \lceil q_i n \rceil)` (numpy's
    ``inverted_cdf``).  ``method="joint"`` is JointExp, density

    .. math:: p(o) \propto \exp\Big(-\frac{\varepsilon}{2\Delta} \sum_{i=1}^{m+1}
              \big|\#\{x \in [o_{i-1}, o_i)\} - (q_i - q_{i-1}) n\big|\Big),
              \quad \Delta = 2 (1 - \min_i (q_i - q_{i-1}))

    on sorted tuples; ``method="recursive"`` is ApproximateQuantiles
    (:func:`private_quantile` at budget epsilon / ceil(log2(m + 1)) per level
    of a balanced recursion).  Real outputs are points of the public grid
    :math:`\lambda\mathbb{Z}` (``granularity``): JointExp with the counting
    measure on sorted grid tuples (the records at a grid point count at or
    below it; the same :math:`\Delta`, docs/mathematics.md §12.2), the
    recursive method with the grid single-quantile mechanism at every node;
    the guarantee is unchanged.  Integer data are jittered and the outputs
    floored (module docstring), so ties never make the estimates collapse.
    Real data are jittered too, within one cell of the output grid (the
    outputs are floored back to it), so a heavy tie (the zeros of a
    zero-inflated column) cannot leave flat scores that push the estimates
    into an empty interval.
    The estimates come back in the order of ``qs``, as ``numpy.quantile``
    returns them; sorted by level they are non-decreasing.  Records outside
    ``bounds`` are clamped to them (no exception, no warning).

    Parameters
    ----------
    x : array_like or dask array
        1-D sample (records outside ``bounds`` are clamped to them).
    qs : array_like
        levels in [0, 1], in any order (the result follows it).
    epsilon : float
        total privacy budget (> 0): epsilon-DP under ``relation`` (add/remove or replace
        neighbours; mathematics §12.2, and §15.2 without bounds).
    bounds : tuple of float or None, default=None
        public ``(a, b)``, ``a < b``; None: no bounds (:func:`unbounded_quantiles`).
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    method : {"auto", "joint", "recursive"}, default="auto"
        "auto" (JointExp for m <= 32 at epsilon >= 0.5 and for 5 <= m <= 9 below, else
        recursive: :func:`choose_method`),
        "joint" or "recursive".
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation (mathematics §1).
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None: one release; an int: ``size`` independent releases (rows),
        charged as ``size`` releases (mathematics §10.1).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` (``size`` times) before any randomness is drawn.
    granularity : float or None, default=None
        real outputs: the output grid, a power of two <= b - a (None:
        about 2^-40 max(|a|, |b|), from the bounds only:
        :func:`~dpselect.apps.quantiles.private_quantile`; 0: the continuous
        mechanisms sampled with floats, not floating-point safe).  Integer
        outputs: None (or 1).
    on_out_of_bounds : {"clip", "raise"}, default="clip"
        "clip": records outside ``bounds`` are clamped to them (private; no
        exception, no warning); "raise": refuse them with a ValueError -- a
        curator's data check, **not private** (the exception reveals a record).

    Returns
    -------
    ndarray
        m estimates (multiples of ``granularity``, or int64 for integer outputs), in the order of ``qs``
        (numpy's convention), non-decreasing in the level.

    See Also
    --------
    unbounded_quantiles : Several private quantiles with no bounds: :func:`private_bounds` then ...

    References
    ----------
    J. Gillenwater, M. Joseph & A. Kulesza, "Differentially private quantiles",
    ICML 2021 (§3, JointExp); H. Kaplan, S. Schnapp & U. Stemmer, "Differentially
    private approximate quantiles", ICML 2022 (Alg. 1); docs/mathematics.md,
    "Many quantiles" (§12.2-12.3; the grid: Mironov, CCS 2012).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_quantiles
    >>> x = np.random.default_rng(0).normal(size=2000)
    >>> private_quantiles(x, [0.25, 0.5, 0.75], 1.0, bounds=(-5, 5), rng=1).round(1) + 0.0
    array([-0.7,  0. ,  0.7])
    >>> ages = np.random.default_rng(0).integers(17, 91, size=2000)
    >>> private_quantiles(ages, [0.1, 0.5, 0.9], 1.0, bounds=(0, 120), rng=1).dtype
    dtype('int64')
    >>> e = private_quantiles(ages, [0.9, 0.1, 0.5], 1.0, bounds=(0, 120), rng=1)  # numpy's order
    >>> bool(e[0] >= e[2] >= e[1])
    True
    """
    if bounds is None:  # no bounds: released by AboveThreshold, then this mechanism (mathematics §15.2)
        draws, epsilon, rng = release_bounds_draws(
            x, epsilon, size, integer, relation, rng, accountant, granularity, *FIRST_STAGE
        )
        accountant = None
    else:
        draws = [(cast(np.ndarray, x), bounds, granularity)]  # checked by check_sample below
    q_in = np.asarray(qs, dtype=np.float64)
    order = np.argsort(q_in, kind="stable")
    q_arr = q_in[order]
    samples = []
    for xi, bi, gi in draws:
        s = check_sample(xi, bi, integer, on_out_of_bounds=on_out_of_bounds)
        samples.append((s, output_grid(gi, s)))
    chosen = choose_method(q_arr.size, epsilon) if method == "auto" else method
    gen = check_random_state(rng)
    charge(accountant, Privacy(epsilon, 0.0, relation, f"private_quantiles ({chosen})"), size=size)
    if len(samples) == 1:  # public bounds: one sample, ``size`` draws from it
        samples *= 1 if size is None else size
    outs = [_draw(s, q_arr, order, epsilon, relation, chosen, lam, gen) for s, lam in samples]
    return outs[0] if size is None else np.stack(outs)


def _draw(
    s: Sample, q_arr: np.ndarray, order: np.ndarray, epsilon: float, relation: str, chosen: str, lam: float, gen: Any
) -> np.ndarray:
    """One draw of :func:`private_quantiles` on a checked sample (sorted levels ``q_arr``; ``order`` restores)."""
    width = 1.0 if s.integer else lam
    work = _jitter(s, gen, width) if width > 0 else s
    fine = lam if lam == 0 else _fine_grid(lam, work.a, work.b)
    if chosen == "joint":
        out = sample_joint(work, q_arr, epsilon, relation, gen, lam=fine)
    else:
        out = _recursive(work, q_arr, epsilon, relation, gen, fine)
    if s.integer:
        out = np.minimum(np.floor(out), s.b).astype(np.int64)
    elif lam > 0:  # back to the grid lambda Z of [a, b] (exact: lambda is a power of two)
        lo, hi = grid_ceil(np.array([s.a]), lam)[0], grid_ceil(np.array([s.b]), lam, floor=True)[0]
        out = grid_values(np.clip(grid_ceil(out, lam, floor=True), lo, hi), lam)
    res = np.empty_like(out)
    res[order] = out  # the order asked (numpy's convention)
    return res
