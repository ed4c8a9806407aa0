"""Neighbouring datasets of a small raw sample on a public grid, for exact audits of percentiles."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ....typing import Relation
from .._rules import ANY, GRID, PERCENT, RELATION
from .grid import check_grid, raw_values

__all__ = ["percentile_neighbours"]


@validate_params({"data": ANY, "grid": GRID, "p": PERCENT.or_none(), "relation": RELATION})
def percentile_neighbours(
    data: ArrayLike, grid: ArrayLike, *, p: float | None = None, relation: Relation = "add_remove"
) -> list[np.ndarray]:
    """Neighbouring raw datasets of a small dataset, for exact audits.

    add_remove: remove any one record (one dataset per distinct value;
    removing the last record would leave an empty dataset, for which no
    problem exists, so it is skipped) and add one record at any grid value.
    replace: replace one record (one per distinct value) by any grid value.
    Exact duplicates are listed once.  ``p`` is only validated (the set of
    neighbours does not depend on it).

    Parameters
    ----------
    data : array_like
        The raw records (1-D, finite, within the grid range).
    grid : array_like
        Public candidate values, finite and strictly increasing.
    p : float or None, default=None
        Percentile in [0, 100], only validated.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation (mathematics §1).

    Returns
    -------
    list of ndarray
        The neighbouring datasets, each listed once.

    Examples
    --------
    >>> from dpselect.apps.quantiles import percentile_neighbours
    >>> [y.tolist() for y in percentile_neighbours([0.0, 1.0], [0, 1], relation="replace")]
    [[1.0, 1.0], [0.0, 0.0]]
    """
    g, _ = check_grid(grid)
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
