"""Chaves et al.'s (non-private) percentile problem, neighbours for audits, DPBench loading.

Re-exported by :mod:`dpselect.apps.quantiles` (use it from there).
"""

from __future__ import annotations

import math
import os
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..._validation import check_array_1d, check_counts, check_positive, check_relation
from ..._warnings import PrivacyLeakWarning
from ...problem import SelectionProblem
from ...sensitivity import StepProfile
from ._grid import check_grid, check_p, rank, raw_values

__all__ = ["DPBENCH_NAMES", "load_dpbench", "paper_problem", "percentile_neighbours"]

#: The DPBench 1-D histograms used by Chaves et al. (4096 bins each).
DPBENCH_NAMES = ("HEPTH", "INCOME", "PATENT")


# --------------------------------------------------------------------------
# the paper's (non-private) variant, for reproducing its numbers only
# --------------------------------------------------------------------------

def paper_problem(
    data: Any, p: float, *, beta: float | None = None, rank_convention: str = "code"
) -> SelectionProblem:
    """Chaves et al.'s percentile problem — NOT differentially private.

    Candidates are the sorted data values themselves (a data-dependent output
    space, mathematics §7 item 16); every position holding the percentile value
    scores 1 (as in the authors' code); the smooth sensitivity is the paper's
    S = exp(-(2j + 1) beta), j = min(j_l, j_g) (Prop. 5.4, invalid per
    mathematics §7 item 14).  Only for reproducing the published numbers; emits a
    :class:`~dpselect._warnings.PrivacyLeakWarning`.  A mechanism's
    ``privacy()`` on this problem is meaningless (it describes the
    calibration, not a guarantee: the output space itself leaks the data).

    ``rank_convention="code"`` (default) uses the authors' code: 0-indexed
    position floor(p n / 100) (clamped to n - 1 for p = 100, where the code
    indexes out of range); ``"paper"`` uses Def. 5.1's 1-indexed rank
    max(1, floor(p n / 100)).  ``beta=None`` gives the profile
    ``StepProfile(np.array([0, 2j+1]), np.array([0, 1]))`` (S = exp(-(2j+1) beta') for whatever
    beta' a mechanism asks for); a float fixes S = exp(-(2j+1) beta) whatever
    beta' is asked (as the authors' code, which picks its own beta).
    """
    p = check_p(p)
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
        "private: its candidates are the data values (mathematics §7 item 16) and S = exp(-(2j+1) beta) is not a "
        "smooth upper bound (mathematics §7 item 14). Use percentile.problem with a public grid instead.",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    t = 2 * j + 1
    smooth_bound = None if beta is None else (lambda _b, _s=math.exp(-t * beta): _s)
    return SelectionProblem(
        u,
        labels=x.tolist(),
        global_sensitivity=1.0,
        local_sensitivity=StepProfile(np.array([0, t]), np.array([0.0, 1.0])),
        max_distance=t + 1,
        monotone=False,
        relation="add_remove",
        smooth_bound=smooth_bound,
        private=False,
    )


# --------------------------------------------------------------------------
# neighbours (audits) and data loading
# --------------------------------------------------------------------------

def percentile_neighbours(
    data: Any, grid: Any, *, p: float | None = None, relation: str = "add_remove"
) -> list[np.ndarray]:
    """Neighbouring raw datasets of a small dataset, for exact audits.

    add_remove: remove any one record (one dataset per distinct value;
    removing the last record would leave an empty dataset, for which no
    problem exists, so it is skipped) and add one record at any grid value.
    replace: replace one record (one per distinct value) by any grid value.
    Exact duplicates are listed once.  ``p`` is only validated (the set of
    neighbours does not depend on it).
    """
    if p is not None:
        check_p(p)
    g, _ = check_grid(grid)
    relation = check_relation(relation)
    x = raw_values(data, g, "data")
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
    ``percentile_problem(counts, p, np.arange(4096), histogram=True)``.
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
