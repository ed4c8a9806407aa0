"""Percentile selection over a public grid (Chaves et al. §5, corrected by SPEC.md §4.3).

Utility
-------
The candidates are a **public, data-independent grid** ``grid`` (sorted,
strictly increasing, finite).  SNM's Def. 5.1 uses the data positions as
candidates and outputs a data value — a data-dependent output space, which is
not differentially private whatever the noise (SPEC errata 16); that variant
is only available as :func:`paper_problem`, which warns.

Records are snapped to the nearest grid point (a value exactly half-way
between two grid points goes to the **lower** one); values outside
``[grid[0], grid[-1]]`` are rejected.  With n records, the rank is

    k = max(1, floor(p n / 100))            (1-indexed, the paper's convention;
                                             p = 0 gives k = 1, the minimum)

and u_p(x, r) = 1 if r is the grid value of the record of rank k, else 0.
Global sensitivity 1; ``monotone=False``.

Everything is computed from the per-bin counts (``np.cumsum`` +
``np.searchsorted``); raw records are first reduced to counts, so
``histogram=True`` (counts per grid bin, e.g. the DPBench files with 20M
records) and raw data share one implementation.

Stability and local sensitivity
-------------------------------
Let v be the grid value at rank k, j_l the number of copies of v at ranks
< k and j_g the number at ranks > k (:func:`percentile_stability`).  LS is 0
or 1, so LS(x, t) = 1[t >= t*] and S*_beta = exp(-beta t*), with t* the
distance to the nearest dataset where one more step can change the
percentile value (SPEC.md §4.3):

* add_remove, p = 50: t* = min(2 j_l + 1[n odd], 2 j_g + 1[n even]) — the
  exact value over unconstrained add/remove sequences (checked by BFS);
* add_remove, other p: t* = min(j_l, j_g).  Each step moves both slacks by at
  most one, so this is a valid lower bound on the true t*, i.e.
  exp(-beta min(j_l, j_g)) is a beta-smooth **upper bound** on LS, not
  necessarily the exact smooth sensitivity (the true t* can be one larger);
* replace: t* = floor(min(j_l, j_g) / 2) (SPEC.md §4.3; valid lower bound).

(When v is an end point of the grid, records cannot be added beyond it, so
the true t* can be larger still; the formulas stay valid lower bounds
because the grid-restricted neighbour graph is a subgraph of the
unconstrained one.)  The per-candidate profile is the same profile for every
candidate (a valid per-candidate upper bound).

Sources: Chaves et al., Smooth Noisy Max, §5 (Def. 5.1, Prop. 5.3/5.4);
SPEC.md §4.3 and errata 14 (S = e^{-(2j+1) beta} is invalid), 15 (j = min,
not max) and 16 (public grid).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import (
    check_array_1d,
    check_counts,
    check_positive,
    check_probability_in,
    check_random_state,
    check_relation,
)
from .._warnings import PrivacyLeakWarning
from ..problem import SelectionProblem
from ..sensitivity import StepProfile
from ..mechanisms.registry import resolve_mechanism

__all__ = [
    "DPBENCH_NAMES",
    "absolute_error_loss",
    "load_dpbench",
    "neighbours",
    "paper_problem",
    "percentile_stability",
    "private_percentile",
    "problem",
    "rank",
    "true_percentile",
]

#: The DPBench 1-D histograms used by Chaves et al. (4096 bins each).
DPBENCH_NAMES = ("HEPTH", "INCOME", "PATENT")


# --------------------------------------------------------------------------
# validation and the shared counts representation
# --------------------------------------------------------------------------

def _check_p(p: Any) -> float:
    return check_probability_in(p, "p", 0.0, 100.0, closed=True)


def _check_grid(grid: Any) -> tuple[np.ndarray, np.ndarray]:
    """(float64 grid, original array) — finite, 1-D, non-empty, strictly increasing."""
    g = check_array_1d(grid, "grid")
    if g.size > 1 and not (np.diff(g) > 0).all():
        raise ValueError("grid must be strictly increasing")
    return g, np.asarray(grid)


def _snap(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Index of the nearest grid point for each value (ties -> the lower point)."""
    if grid.size == 1:
        return np.zeros(values.size, dtype=np.int64)
    hi = np.clip(np.searchsorted(grid, values, side="left"), 1, grid.size - 1)
    lo = hi - 1
    return np.where(grid[hi] - values < values - grid[lo], hi, lo).astype(np.int64)


def _raw_values(data: Any, grid: np.ndarray) -> np.ndarray:
    x = check_array_1d(data, "data")  # non-empty (n >= 1), no NaN / inf
    lo, hi = grid[0], grid[-1]
    if (x < lo).any() or (x > hi).any():
        raise ValueError(f"data must lie within the grid range [{lo!r}, {hi!r}]")
    return x


def _bin_counts(data: Any, grid: np.ndarray, histogram: bool) -> np.ndarray:
    """Counts per grid point (int64, length len(grid), total >= 1)."""
    if not isinstance(histogram, (bool, np.bool_)):
        raise TypeError(f"histogram must be a bool, got {type(histogram).__name__}")
    if histogram:
        h = check_counts(data, "data")
        if h.size != grid.size:
            raise ValueError(f"data must hold one count per grid point ({grid.size}), got {h.size}")
        if int(h.sum()) == 0:
            raise ValueError("data must hold at least one record (all counts are 0)")
        return h
    x = _raw_values(data, grid)
    return np.bincount(_snap(x, grid), minlength=grid.size).astype(np.int64)


def rank(p: float, n: int) -> int:
    """k = max(1, floor(p n / 100)), computed exactly for the given float p (1-indexed)."""
    p = _check_p(p)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return max(1, math.floor(Fraction(p) * int(n) / 100))


def _stability(h: np.ndarray, k: int) -> tuple[int, int, int]:
    """(v_index, j_l, j_g) for the record of rank k (1-indexed) in the counts h."""
    cum = np.cumsum(h)
    v = int(np.searchsorted(cum, k, side="left"))
    below = int(cum[v - 1]) if v > 0 else 0
    return v, k - 1 - below, below + int(h[v]) - k


def percentile_stability(data: Any, p: float, grid: Any, histogram: bool = False) -> tuple[int, int, int, int]:
    """(k, v_index, j_l, j_g): rank, grid index of the percentile value, copies of it below / above rank k."""
    p = _check_p(p)
    g, _ = _check_grid(grid)
    h = _bin_counts(data, g, histogram)
    k = rank(p, int(h.sum()))
    return (k, *_stability(h, k))


def _tstar(p: float, n: int, j_l: int, j_g: int, relation: str) -> int:
    if relation == "replace":
        return min(j_l, j_g) // 2
    if p == 50:
        return min(2 * j_l + n % 2, 2 * j_g + 1 - n % 2)
    return min(j_l, j_g)


def _profile(tstar: int) -> StepProfile:
    return StepProfile([0], [1.0]) if tstar == 0 else StepProfile([0, tstar], [0.0, 1.0])


# --------------------------------------------------------------------------
# problems and the estimator
# --------------------------------------------------------------------------

def problem(
    data: Any,
    p: float,
    grid: Any,
    histogram: bool = False,
    relation: str = "add_remove",
) -> SelectionProblem:
    """Percentile :class:`~dpselect.problem.SelectionProblem` over a public grid.

    Parameters
    ----------
    data : raw values (1-D, finite, within ``[grid[0], grid[-1]]``), or with
        ``histogram=True`` non-negative integer counts, one per grid point.
    p : percentile in [0, 100].
    grid : public candidate values, finite and strictly increasing.
    histogram : whether ``data`` are per-grid-point counts.
    relation : "add_remove" (default) or "replace".

    Scores are the indicator of the grid point of rank k (module docstring);
    ``local_sensitivity`` is ``StepProfile([0, t*], [0, 1])`` (constant 1 if
    t* = 0) with t* from SPEC.md §4.3; labels are the grid values.
    """
    p = _check_p(p)
    g, g_orig = _check_grid(grid)
    relation = check_relation(relation)
    h = _bin_counts(data, g, histogram)
    n = int(h.sum())
    k = rank(p, n)
    v, j_l, j_g = _stability(h, k)
    tstar = _tstar(p, n, j_l, j_g, relation)
    scores = np.zeros(g.size)
    scores[v] = 1.0
    return SelectionProblem(
        scores,
        labels=g_orig.tolist(),
        global_sensitivity=1.0,
        local_sensitivity=_profile(tstar),
        max_distance=tstar + 1,
        monotone=False,
        relation=relation,
    )


def true_percentile(data: Any, p: float, grid: Any, histogram: bool = False) -> Any:
    """The (non-private) grid value of rank k — what :func:`private_percentile` estimates."""
    _, v, _, _ = percentile_stability(data, p, grid, histogram)
    return np.asarray(grid)[v].item()


def private_percentile(
    data: Any,
    p: float,
    epsilon: float | None,
    grid: Any,
    mechanism: Any = "em",
    delta: float = 0.0,
    histogram: bool = False,
    rng: Any = None,
    *,
    relation: str = "add_remove",
) -> Any:
    """Privately select the p-th percentile from the public ``grid``; returns a grid value.

    ``mechanism`` is a name ("em", "pf", "rnm_laplace", "rnm_gumbel",
    "rnm_exponential", or — once implemented — "snm_laplace", "snm_t",
    "snm_lln", "sps", "ld") or a mechanism instance; see
    :func:`dpselect.apps.majority.private_argmax`.  The guarantee is
    ``mech.privacy(problem(data, p, grid, ...))``.
    """
    prob = problem(data, p, grid, histogram=histogram, relation=relation)
    mech = resolve_mechanism(mechanism, epsilon, delta)
    gen = check_random_state(rng)
    idx = int(mech.select(prob, rng=gen))
    return np.asarray(grid)[idx].item()


def absolute_error_loss(grid: Any, true_value: float) -> Callable[[np.ndarray], np.ndarray]:
    """Loss for :func:`dpselect.analysis.expected_error`: |grid_r - true_value| in value units.

    ``expected_error(mech, problem(data, p, grid), loss=absolute_error_loss(grid,
    true_percentile(data, p, grid)))`` is the expected absolute error.
    """
    g, _ = _check_grid(grid)
    t = float(true_value)
    if not math.isfinite(t):
        raise ValueError(f"true_value must be finite, got {true_value!r}")
    err = np.abs(g - t)

    def loss(scores: np.ndarray) -> np.ndarray:
        if np.shape(scores) != err.shape:
            raise ValueError(f"the problem has {np.size(scores)} candidates but the grid has {err.size} points")
        return err

    return loss


# --------------------------------------------------------------------------
# the paper's (non-private) variant, for reproducing its numbers only
# --------------------------------------------------------------------------

def paper_problem(data: Any, p: float, beta: float | None = None, *, rank_convention: str = "code") -> SelectionProblem:
    """Chaves et al.'s percentile problem — NOT differentially private.

    Candidates are the sorted data values themselves (a data-dependent output
    space, SPEC errata 16); every position holding the percentile value
    scores 1 (as in the authors' code); the smooth sensitivity is the paper's
    S = exp(-(2j + 1) beta), j = min(j_l, j_g) (Prop. 5.4, invalid per
    errata 14).  Only for reproducing the published numbers; emits a
    :class:`~dpselect._warnings.PrivacyLeakWarning`.  A mechanism's
    ``privacy()`` on this problem is meaningless (it describes the
    calibration, not a guarantee: the output space itself leaks the data).

    ``rank_convention="code"`` (default) uses the authors' code: 0-indexed
    position floor(p n / 100) (clamped to n - 1 for p = 100, where the code
    indexes out of range); ``"paper"`` uses Def. 5.1's 1-indexed rank
    max(1, floor(p n / 100)).  ``beta=None`` gives the profile
    ``StepProfile([0, 2j+1], [0, 1])`` (S = exp(-(2j+1) beta') for whatever
    beta' a mechanism asks for); a float fixes S = exp(-(2j+1) beta) whatever
    beta' is asked (as the authors' code, which picks its own beta).
    """
    p = _check_p(p)
    x = np.sort(check_array_1d(data, "data"))
    if rank_convention not in ("code", "paper"):
        raise ValueError(f"rank_convention must be 'code' or 'paper', got {rank_convention!r}")
    if beta is not None:
        beta = check_positive(beta, "beta")
    n = x.size
    if rank_convention == "code":
        pos = min(math.floor(Fraction(p) * n / 100), n - 1)
    else:
        pos = rank(p, n) - 1
    u = (x == x[pos]).astype(np.float64)
    j = min(int(u[:pos].sum()), int(u[pos + 1:].sum()))
    warnings.warn(
        "paper_problem reproduces Chaves et al.'s percentile selection, which is NOT differentially "
        "private: its candidates are the data values (SPEC errata 16) and S = exp(-(2j+1) beta) is not a "
        "smooth upper bound (errata 14). Use percentile.problem with a public grid instead.",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    t = 2 * j + 1
    smooth_bound = None if beta is None else (lambda _b, _s=math.exp(-t * beta): _s)
    return SelectionProblem(
        u,
        labels=x.tolist(),
        global_sensitivity=1.0,
        local_sensitivity=StepProfile([0, t], [0.0, 1.0]),
        max_distance=t + 1,
        monotone=False,
        relation="add_remove",
        smooth_bound=smooth_bound,
    )


# --------------------------------------------------------------------------
# neighbours (audits) and data loading
# --------------------------------------------------------------------------

def neighbours(data: Any, grid: Any, p: float | None = None, relation: str = "add_remove") -> list[np.ndarray]:
    """Neighbouring raw datasets of a small dataset, for exact audits.

    add_remove: remove any one record (one dataset per distinct value;
    removing the last record would leave an empty dataset, for which no
    problem exists, so it is skipped) and add one record at any grid value.
    replace: replace one record (one per distinct value) by any grid value.
    Exact duplicates are listed once.  ``p`` is only validated (the set of
    neighbours does not depend on it).
    """
    if p is not None:
        _check_p(p)
    g, _ = _check_grid(grid)
    relation = check_relation(relation)
    x = _raw_values(data, g)
    out: list[np.ndarray] = []
    seen: set[bytes] = set()

    def emit(y: np.ndarray) -> None:
        key = np.sort(y).tobytes()
        if key not in seen:
            seen.add(key)
            out.append(y)

    first = np.unique(x, return_index=True)[1]
    if relation == "add_remove":
        if x.size > 1:
            for i in first:
                emit(np.delete(x, i))
        for gv in g:
            emit(np.append(x, gv))
    else:
        for i in first:
            for gv in g:
                if gv != x[i]:
                    y = x.copy()
                    y[i] = gv
                    emit(y)
    return out


def load_dpbench(name: str, data_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """Load a DPBench 1-D histogram ``{HEPTH,INCOME,PATENT}.n4096.npy`` (int64 counts, 4096 bins).

    ``data_dir`` (or the environment variable ``DPSELECT_DATA``) may be the
    data root (containing ``dpbench_1d/``) or that folder itself.  Use with
    ``problem(counts, p, np.arange(4096), histogram=True)``.
    """
    if not isinstance(name, str) or name.upper() not in DPBENCH_NAMES:
        raise ValueError(f"name must be one of {DPBENCH_NAMES}, got {name!r}")
    fname = f"{name.upper()}.n4096.npy"
    if data_dir is None:
        data_dir = os.environ.get("DPSELECT_DATA")
        if not data_dir:
            raise FileNotFoundError(
                f"cannot locate {fname}: pass data_dir or set the DPSELECT_DATA environment variable "
                "to the data root (containing dpbench_1d/) or to the dpbench_1d folder"
            )
    root = Path(data_dir)
    tried = [root / "dpbench_1d" / fname, root / fname]
    for path in tried:
        if path.is_file():
            return check_counts(np.load(path, allow_pickle=False), "DPBench histogram")
    raise FileNotFoundError(f"{fname} not found; tried {', '.join(str(t) for t in tried)}")
