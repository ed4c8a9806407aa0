"""Neighbouring datasets of a small raw sample on a public grid, for exact audits of percentiles."""

from __future__ import annotations

import numpy as np

from ..._validation import check_relation
from ._grid import check_grid, check_p, raw_values

__all__ = ["percentile_neighbours"]


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
