"""The grid of the decision-tree reproduction (Chaves et al., Fig. 4): its axes and its tasks.

:func:`grid` gives the datasets, depths, split selections, epsilons, repetitions, folds and
bins of the full or quick grid; :func:`tasks` the task per cell (the compared models at the
first depth only).  Behind :mod:`dpselect.experiments.tree`, which re-exports the public names.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from .._docstrings import fill_doc
from ._common import task_grid
from ._data import require_file
from ._peers import compared, supports
from ._tabular import load, load_all
from .tasks import Task

__all__ = ["QUICK", "QUICK_SELECTIONS", "REAL", "SELECTIONS", "Grid", "grid", "tasks"]

REAL = ("nltcs", "acs", "adult_clean")
QUICK = ("breast_cancer", "wine", "iris")
SELECTIONS = ("em", "pf", "snm_t", "snm_laplace", "snm_lln", "sps", "ld")
QUICK_SELECTIONS = ("em", "pf", "snm_t", "snm_laplace", "snm_lln")


class Grid(TypedDict):
    """The axes of the tree grid (see the docstring of :mod:`dpselect.experiments.tree`)."""

    datasets: tuple[str, ...]
    depths: tuple[int, ...]
    selections: tuple[str, ...]
    eps: tuple[float, ...]
    reps: int
    folds: int
    n_bins: int


@fill_doc
def grid(quick: bool, real: bool) -> Grid:
    """The grid: the full one, or the quick one on the bundled (``real=False``) or the real data.

    %(experiment_grid)s
        Datasets, depths, selections (with the compared models importable here), epsilons,
        repetitions, folds and bins.
    """
    extra = compared()
    eps: tuple[float, ...]
    if quick:  # (datasets, eps, folds, bins) of the bundled or the real data
        datasets, eps, folds, n_bins = (REAL, (0.05, 0.5, 2.0), 3, 20) if real else (QUICK, (0.5, 2.0, 8.0), 5, 5)
        selections, reps = QUICK_SELECTIONS + extra, 1
    else:
        datasets, eps, folds, n_bins = REAL, (0.01, 0.05, 0.1, 0.5, 1.0, 2.0), 10, 20
        selections, reps = SELECTIONS + extra, 5
    return {
        "datasets": datasets,
        "depths": (2, 5),
        "selections": selections,
        "eps": eps,
        "reps": reps,
        "folds": folds,
        "n_bins": n_bins,
    }


@fill_doc
def tasks(quick: bool, data_dir: Path | None) -> list[Task]:
    """One task per (dataset, depth, selection, epsilon, repetition); the data are loaded now.

    %(experiment_grid_tasks)s
        The grid (compared models at the first depth only, DP-EBM on binary tasks only).
    """
    if data_dir is None and not quick:
        require_file(None, what="NLTCS / ACS / Adult")
    g = grid(quick, data_dir is not None)
    ddir = load_all(g["datasets"], data_dir)
    axes = {
        "dataset": g["datasets"],
        "depth": g["depths"],
        "selection": g["selections"],
        "epsilon": g["eps"],
        "rep": range(g["reps"]),
    }
    return [
        t
        for t in task_grid(axes, data_dir=ddir, folds=g["folds"], n_bins=g["n_bins"])
        if _runs(t.kwargs["selection"], t.kwargs["depth"] == g["depths"][0], t.kwargs["dataset"], ddir)
    ]


def _runs(selection: str, first_depth: bool, dataset: str, data_dir: str | None) -> bool:
    """Reproduction cells run at every depth; compared models once, DP-EBM on binary tasks only."""
    if selection in SELECTIONS:
        return True
    return first_depth and supports(selection, load(dataset, data_dir))
