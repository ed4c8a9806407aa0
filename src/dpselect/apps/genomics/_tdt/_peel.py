"""TDT top-k peeling: the k rounds of :func:`select_top_snps` and each round's data-free stand-in.

* :func:`_peel`: the k peeling rounds (already charged): on the distance utility round by round,
  distances updated, for every mechanism; on the chi2 utility one Gumbel top-k draw where the
  mechanism allows it (the same law on fixed scores), else the problem rebuilt on the SNPs left;
* :func:`top_k_set_problem`: the distance to the top-k set, the utility of the one-shot methods;
* :func:`_stand_in`: a data-free problem of a round's shape, whose guarantee is the round's.
"""

from __future__ import annotations

import numpy as np

from ...._mechanism_support import is_gumbel_mechanism
from ....mechanisms import Mechanism, distance_problem, select_top_k
from ....problem import SelectionProblem
from .._top_snps import _peel_distances
from ._distance import TransmissionPanel
from ._problem import build_tdt_problem

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
    if util == "distance":  # every mechanism: round j + 1 runs on the distances updated from round j's
        return _peel_distances(mech, TransmissionPanel(b, c, n, removals=k - 1), k, gen), "peeling"
    full = build_tdt_problem(util, b, c, n, bound, threshold, None, mech)
    if is_gumbel_mechanism(mech, full):  # fixed scores: the same law as k-fold peeling (Durfee & Rogers 2019)
        return np.asarray(select_top_k(mech, full, k, rng=gen), dtype=np.int64), "gumbel_top_k"
    remaining = np.arange(b.size)  # chi2 peeling: round j's problem on the SNPs not yet chosen
    chosen = []
    for _ in range(k):
        sub = build_tdt_problem(util, b[remaining], c[remaining], n, bound, threshold, None, mech)
        pick = int(mech.select(sub, rng=gen))
        chosen.append(int(remaining[pick]))
        remaining = np.delete(remaining, pick)
    return np.array(chosen, dtype=np.int64), "peeling"


def top_k_set_problem(b: np.ndarray, c: np.ndarray, n: int, k: int) -> SelectionProblem:
    """u_r = -(fewest family replacements before SNP r is among the k largest chi2): Delta u = 1 ("replace")."""
    return distance_problem(TransmissionPanel(b, c, n, rank=k).distances().astype(np.float64), relation="replace")


def _stand_in(util: str, m: int, n: int, bound: str, threshold: float, mech: Mechanism) -> SelectionProblem:
    """A data-free problem of the round's shape (m SNPs, N families): its guarantee is the round's."""
    zeros = np.zeros(m, dtype=np.int64)
    if util == "distance":
        return distance_problem(np.zeros(m), relation="replace")
    return build_tdt_problem(util, zeros, zeros, n, bound, threshold, None, mech)
