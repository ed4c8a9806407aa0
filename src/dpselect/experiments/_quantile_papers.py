"""Paper-only helpers of the percentile experiment: Chaves et al.'s (non-private) problem, DPBench.

Nothing here is differentially private or needed to release a private quantile: the
problem reproduces the published numbers of Chaves et al. (Smooth Noisy Max §5), and
:func:`load_dpbench` reads the DPBench 1-D histograms the paper uses.  The private
percentile is :func:`dpselect.apps.quantiles.private_percentile` on a public grid.

Examples
--------
>>> from dpselect.experiments._quantile_papers import DPBENCH_NAMES
>>> DPBENCH_NAMES
('HEPTH', 'INCOME', 'PATENT')
"""

from __future__ import annotations

import math
import os
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_array_1d, check_counts, check_positive, check_probability_in
from .._warnings import PrivacyLeakWarning
from ..problem import SelectionProblem
from ..sensitivity import StepProfile

__all__ = ["DPBENCH_NAMES", "load_dpbench", "paper_problem"]

#: The DPBench 1-D histograms used by Chaves et al. (4096 bins each).
DPBENCH_NAMES = ("HEPTH", "INCOME", "PATENT")


def paper_problem(
    data: ArrayLike, p: float, *, beta: float | None = None, rank_convention: str = "code"
) -> SelectionProblem:
    """Chaves et al.'s percentile problem -- NOT differentially private.

    Candidates are the sorted data values themselves (a data-dependent output
    space, mathematics §7 item 16); every position holding the percentile value
    scores 1 (as in the authors' code); the smooth sensitivity is the paper's
    S = exp(-(2j + 1) beta), j = min(j_l, j_g) (Prop. 5.4, invalid per
    mathematics §7 item 14).  Only for reproducing the published numbers; emits a
    :class:`~dpselect.PrivacyLeakWarning`.  A mechanism's ``privacy()`` on this
    problem is meaningless (it describes the calibration, not a guarantee: the
    output space itself leaks the data).

    Parameters
    ----------
    data : array_like
        The raw records (1-D, finite, non-empty).
    p : float
        Percentile in [0, 100].
    beta : float or None, default=None
        None gives the profile ``StepProfile([0, 2j+1], [0, 1])`` (S = exp(-(2j+1) beta')
        for whatever beta' a mechanism asks for); a float fixes S = exp(-(2j+1) beta)
        whatever beta' is asked (as the authors' code, which picks its own beta).
    rank_convention : {"code", "paper"}, default="code"
        "code": the authors' 0-indexed position floor(p n / 100) (clamped to n - 1 for
        p = 100, where the code indexes out of range); "paper": Def. 5.1's 1-indexed
        rank max(1, floor(p n / 100)).

    Returns
    -------
    SelectionProblem
        The problem (``private=False``; add/remove relation as in the paper).
    """
    p = check_probability_in(p, "p", 0.0, 100.0, closed=True)
    x = np.sort(check_array_1d(data, "data"))
    if rank_convention not in ("code", "paper"):
        raise ValueError(f"rank_convention must be 'code' or 'paper', got {rank_convention!r}")
    if beta is not None:
        beta = check_positive(beta, "beta")
    n = x.size
    f = math.floor(Fraction(p) * n / 100)
    pos = min(f, n - 1) if rank_convention == "code" else max(1, f) - 1
    u = (x == x[pos]).astype(np.float64)
    j = min(int(u[:pos].sum()), int(u[pos + 1 :].sum()))
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


def load_dpbench(name: str, data_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """Load a DPBench 1-D histogram ``{HEPTH,INCOME,PATENT}.n4096.npy`` (int64 counts, 4096 bins).

    Use with ``percentile_problem(counts, p, np.arange(4096), histogram=True)``.

    Parameters
    ----------
    name : str
        One of :data:`DPBENCH_NAMES` (any case).
    data_dir : str, path or None, default=None
        The data root (containing ``dpbench_1d/``) or that folder itself; None reads the
        environment variable ``DPSELECT_DATA``.

    Returns
    -------
    ndarray of int64
        The 4096 counts.
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
