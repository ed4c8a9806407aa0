"""Many quantiles at once: JointExp and the recursive ApproximateQuantiles; ties by jitter.

* ``method="joint"``: JointExp (Gillenwater, Joseph & Kulesza, ICML 2021),
  one exponential mechanism over sorted m-tuples (:mod:`._joint_exp`).
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

Real data: both methods release points of the public grid lambda Z
(``granularity``; JointExp over sorted grid tuples, the recursive method's
nodes on the grid points of their intervals), so the outputs are exact
multiples of lambda (floating-point safe; docs/mathematics.md §12.2-12.3).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._validation import check_epsilon, check_random_state, check_relation
from ...accounting import Accountant, charge
from ...privacy import Privacy
from ._joint_exp import sample_joint
from ._quantile import output_grid, sample_quantile
from ._quantile_law import Sample, check_q, check_sample
from ._unbounded import release_bounds

__all__ = ["QUANTILES_METHODS", "private_quantiles"]

#: Methods of :func:`private_quantiles`.
QUANTILES_METHODS = ("auto", "joint", "recursive")


def check_qs(qs: Any) -> np.ndarray:
    arr = np.asarray(qs, dtype=np.float64) if not isinstance(qs, (str, bytes)) else None
    if arr is None or arr.ndim != 1 or arr.size == 0:
        raise ValueError("qs must be a non-empty 1-D sequence of levels in [0, 1]")
    for v in arr:
        check_q(float(v), "qs")
    return arr


def _check_method(method: Any) -> str:
    if method not in QUANTILES_METHODS:
        raise ValueError(f"method must be one of {QUANTILES_METHODS}, got {method!r}")
    return str(method)


def choose_method(m: int, epsilon: float) -> str:
    """Default method from public quantities: JointExp for m <= 32 and epsilon >= 0.5, else recursive.

    Measured (``benchmarks/accuracy_quantiles.py``, nine deciles, 9 real columns x n in
    {1e3, 1e4}): at epsilon = 0.1 the recursive method beats JointExp in 12/18 cells, at
    epsilon = 1 and 10 JointExp beats it in 13/18 and 12/18; for m = 49 and 99 the recursive
    method is as accurate or better at every epsilon and 30-150x faster (docs/choosing.md).
    Integer data are jittered for both, so the choice does not depend on ties.
    """
    return "joint" if m <= 32 and epsilon >= 0.5 else "recursive"


def _jitter(s: Sample, gen: np.random.Generator) -> Sample:
    """Integer sample -> continuous sample x + U on [a, b + 1) (U iid uniform on [0, 1))."""
    x = np.repeat(s.values, s.counts) + gen.random(s.n)
    values, counts = np.unique(x, return_counts=True)
    return Sample(values, counts.astype(np.int64), s.a, s.b + 1.0, False)


def _sub(s: Sample, lo: float, hi: float) -> Sample:
    """Records in [lo, hi) -- in [lo, b] for the last node -- with bounds (lo, hi)."""
    i0 = np.searchsorted(s.values, lo, side="left")
    i1 = np.searchsorted(s.values, hi, side="left") if hi < s.b else s.values.size
    return Sample(s.values[i0:i1], s.counts[i0:i1], lo, hi, False)


def _recursive(s: Sample, qs: np.ndarray, epsilon: float, relation: str, gen: np.random.Generator,
               lam: float = 0.0) -> np.ndarray:
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


def private_quantiles(
    x: Any,
    qs: Any,
    epsilon: float,
    *,
    bounds: Any = None,
    integer: bool | None = None,
    method: str = "auto",
    relation: str = "add_remove",
    rng: Any = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
) -> np.ndarray:
    r"""Private estimates of several quantiles at once, total budget epsilon; sorted, one per q.

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

    Parameters
    ----------
    x : array_like or dask array
        1-D sample within ``bounds``.
    qs : array_like
        levels in [0, 1] (any order; the result is sorted by level).
    epsilon : float
        total privacy budget (> 0).
    bounds : tuple of float or None, default=None
        public ``(a, b)``, ``a < b``; None: no bounds (:func:`unbounded_quantiles`).
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    method : str, default="auto"
        "auto" (JointExp for m <= 32 and epsilon >= 0.5, else recursive; docs/choosing.md),
        "joint" or "recursive".
    relation : str, default="add_remove"
        "add_remove" or "replace".
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` before any randomness is drawn.
    granularity : float or None, default=None
        real outputs: the output grid, a power of two <= b - a (None:
        2^(floor(log2(b - a)) - 20), from the bounds; 0: the continuous
        mechanisms sampled with floats, not floating-point safe).  Integer
        outputs: None (or 1).

    Returns
    -------
    ndarray
        m non-decreasing estimates (multiples of ``granularity``, or int64 for integer outputs), in the
        order of sorted ``qs``.

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
    """
    if bounds is None:  # no bounds: released by AboveThreshold, then this mechanism (mathematics §14.2)
        check_qs(qs), _check_method(method)
        x, bounds, granularity, epsilon, rng = release_bounds(x, epsilon, integer=integer, relation=relation,
                                                              rng=rng, accountant=accountant, granularity=granularity)
        accountant = None
    epsilon = check_epsilon(epsilon)
    q_arr = np.sort(check_qs(qs))
    method = _check_method(method)
    relation = check_relation(relation)
    s = check_sample(x, bounds, integer)
    lam = output_grid(granularity, s)
    if method == "auto":
        method = choose_method(q_arr.size, epsilon)
    gen = check_random_state(rng)
    charge(accountant, Privacy(epsilon, 0.0, relation, f"private_quantiles ({method})"))
    work = _jitter(s, gen) if s.integer else s
    if method == "joint":
        out = sample_joint(work, q_arr, epsilon, relation, gen, lam=lam)
    else:
        out = _recursive(work, q_arr, epsilon, relation, gen, lam)
    if s.integer:
        return np.minimum(np.floor(out), s.b).astype(np.int64)
    return out
