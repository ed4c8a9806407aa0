"""The grid of the random-forest reproduction (Chaves et al., Fig. 5): its axes and its tasks.

:func:`grid` gives the datasets with their depths, the leaf-label selections, epsilons and
repetitions of the full or quick grid; :func:`tasks` the task per cell (DP-EBM on binary
tasks only).  Behind :mod:`dpselect.experiments.forest`, which re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from .._docstrings import fill_doc
from ._common import task_grid
from ._data import require_file
from ._peers import compared, supports
from ._tabular import load, load_all
from .tasks import Task

__all__ = ["QUICK_DEPTHS", "QUICK_SELECTIONS", "REAL_DEPTHS", "SELECTIONS", "Grid", "grid", "tasks"]

REAL_DEPTHS = {"adult": 9, "compas": 5, "mushroom": 11, "pendigits": 12, "wall_following": 4, "wine_quality": 10}
QUICK_DEPTHS = {"breast_cancer": 4, "digits": 6, "wine": 3, "iris": 3}
SELECTIONS = ("em", "pf", "snm_t", "snm_laplace", "snm_lln", "sps")
QUICK_SELECTIONS = ("em", "pf", "snm_t")


class Grid(TypedDict):
    """The axes of the forest grid (see the docstring of :mod:`dpselect.experiments.forest`)."""

    depths: Mapping[str, int]
    selections: tuple[str, ...]
    eps: tuple[float, ...]
    reps: int


@fill_doc
def grid(quick: bool, real: bool) -> Grid:
    """The grid: the full one, or the quick one on the bundled (``real=False``) or the real data.

    %(experiment_grid)s
        Datasets with their depths, selections (with the compared models importable here),
        epsilons and repetitions.
    """
    extra = compared()
    if quick and not real:
        return {"depths": QUICK_DEPTHS, "selections": QUICK_SELECTIONS + extra, "eps": (0.1, 1.0, 10.0), "reps": 2}
    if quick:
        return {"depths": REAL_DEPTHS, "selections": QUICK_SELECTIONS + extra, "eps": (0.1, 1.0), "reps": 1}
    return {"depths": REAL_DEPTHS, "selections": SELECTIONS + extra, "eps": (0.01, 0.05, 0.1, 1.0, 2.0), "reps": 10}


@fill_doc
def tasks(quick: bool, data_dir: Path | None) -> list[Task]:
    """One task per (dataset, selection, epsilon, repetition); the data are loaded now.

    %(experiment_grid_tasks)s
        The grid (DP-EBM on binary tasks only).
    """
    if data_dir is None and not quick:
        require_file(None, what="forest (Adult, COMPAS, Mushroom, Pendigits, Wall-following, Wine)")
    g = grid(quick, data_dir is not None)
    ddir = load_all(g["depths"], data_dir)
    axes = {"dataset": g["depths"], "selection": g["selections"], "epsilon": g["eps"], "rep": range(g["reps"])}
    return [
        t
        for t in task_grid(axes, lambda p: {"depth": g["depths"][p["dataset"]]}, data_dir=ddir)
        if supports(t.kwargs["selection"], load(t.kwargs["dataset"], ddir))
    ]
