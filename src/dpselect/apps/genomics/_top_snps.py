"""Shared by the TDT and the case-control selections: the result type and the top-k rounds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._docstrings import fill_doc
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism, distance_problem, select_top_k, top_k_privacy
from ...privacy import Privacy
from ...problem import SelectionProblem
from ...typing import Relation
from ._panel import PanelDistances

__all__ = ["TOP_K_METHODS", "TopSNPs"]

#: Ways to select k SNPs (:func:`select_top_snps`).
TOP_K_METHODS = ("peel", "joint", "gumbel")


@dataclass(frozen=True)
@fill_doc
class TopSNPs:
    """Result of :func:`select_top_snps`: the k selected SNPs and the guarantee.

    %(selected_snps)s
    labels : list or None
        Their labels (None when the SNPs have none).
    privacy : Privacy
        The total guarantee, under the relation of the counts.
    round_privacy : Privacy
        One round's guarantee.
    method : str
        How they were drawn: "gumbel_top_k", "peeling", "joint" or "gumbel".
    """

    indices: np.ndarray
    labels: list[object] | None
    privacy: Privacy
    round_privacy: Privacy
    method: str


def _forward_top_k(
    mech: Mechanism,
    full: SelectionProblem,
    k: int,
    method: str,
    accountant: Accountant | None,
    gen: np.random.Generator,
) -> tuple[np.ndarray, Privacy]:
    """method="joint" | "gumbel": dpselect.mechanisms.top_k's own top-k (charged before drawing)."""
    total = top_k_privacy(mech, full, k, method=method)
    charge(accountant, total)
    return np.asarray(select_top_k(mech, full, k, rng=gen, method=method), dtype=np.int64), total


def _peel_distances(
    mech: Mechanism, panel: PanelDistances, k: int, gen: np.random.Generator, *, relation: Relation = "replace"
) -> np.ndarray:
    """K peeling rounds on the distance utility; round j + 1's distances updated from round j's."""
    remaining = np.ones(panel.inverse.size, dtype=bool)
    chosen: list[int] = []
    for _ in range(k):
        left = np.flatnonzero(remaining)
        sub = distance_problem(panel.distances()[left].astype(np.float64), relation=relation)
        pick = int(left[int(mech.select(sub, rng=gen))])
        chosen.append(pick)
        remaining[pick] = False
        if len(chosen) < k:  # the last round's distances are never used
            panel.remove(pick)
    return np.array(chosen, dtype=np.int64)
