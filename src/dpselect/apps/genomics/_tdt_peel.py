"""TDT top-k peeling: the k rounds of :func:`select_top_snps` and each round's data-free stand-in.

* :func:`_peel`: the k peeling rounds (already charged): one Gumbel top-k draw where the mechanism
  allows it (the same law), else round by round on the distance utility (distances updated) or on
  the chi2 utility (the problem rebuilt on the SNPs not yet chosen);
* :func:`_stand_in`: a data-free problem of a round's shape, whose guarantee is the round's.
"""

from __future__ import annotations

import numpy as np

from ...mechanisms import Mechanism, distance_problem, is_gumbel_mechanism, select_top_k
from ...problem import SelectionProblem
from ._distance import PanelDistances
from ._tdt_problem import build_tdt_problem
from ._top_snps import _peel_distances

__all__: list[str] = []


def _peel(
    mech: Mechanism,
    util: str,
    b: np.ndarray,
    c: np.ndarray,
    n: int,
    k: int,
    bound: str,
    threshold: float,
    gen: np.random.Generator,
) -> tuple[np.ndarray, str]:
    """The k peeling rounds (already charged): (indices, the method's name)."""
    panel = PanelDistances(b, c, n, removals=k - 1) if util == "distance" else None
    full = (
        distance_problem(panel.distances().astype(np.float64), relation="replace")
        if panel is not None
        else build_tdt_problem(util, b, c, n, bound, threshold, None, mech)
    )
    if is_gumbel_mechanism(mech, full):  # the same law as k-fold peeling (Durfee & Rogers 2019)
        return np.asarray(select_top_k(mech, full, k, rng=gen), dtype=np.int64), "gumbel_top_k"
    if panel is not None:
        return _peel_distances(mech, panel, k, gen), "peeling"
    return _peel_rebuild(mech, util, b, c, n, k, bound, threshold, gen), "peeling"


def _stand_in(util: str, m: int, n: int, bound: str, threshold: float, mech: Mechanism) -> SelectionProblem:
    """A data-free problem of the round's shape (m SNPs, N families): its guarantee is the round's."""
    zeros = np.zeros(m, dtype=np.int64)
    if util == "distance":
        return distance_problem(np.zeros(m), relation="replace")
    return build_tdt_problem(util, zeros, zeros, n, bound, threshold, None, mech)


def _peel_rebuild(
    mech: Mechanism,
    util: str,
    b: np.ndarray,
    c: np.ndarray,
    n: int,
    k: int,
    bound: str,
    threshold: float,
    gen: np.random.Generator,
) -> np.ndarray:
    """Peeling on the chi2 utility: round j's problem on the SNPs not yet chosen."""
    remaining = np.arange(b.size)
    chosen = []
    for _ in range(k):
        sub = build_tdt_problem(util, b[remaining], c[remaining], n, bound, threshold, None, mech)
        pick = int(mech.select(sub, rng=gen))
        chosen.append(int(remaining[pick]))
        remaining = np.delete(remaining, pick)
    return np.array(chosen, dtype=np.int64)
