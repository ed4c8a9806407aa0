"""Neighbours of a small dataset for exhaustive audits: every record removed or a value of the universe added
(add/remove), or every record replaced by every value of the universe (replace); each neighbour sorted."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import numpy as np


def neighbours(x: np.ndarray, universe: Sequence[float], relation: str) -> Iterator[np.ndarray]:
    if relation == "add_remove":
        if x.size > 1:
            for i in range(x.size):
                yield np.delete(x, i)
        for v in universe:
            yield np.sort(np.append(x, v))
    else:
        for i, v in itertools.product(range(x.size), universe):
            y = x.copy()
            y[i] = v
            yield np.sort(y)
