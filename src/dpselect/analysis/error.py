"""Exact accuracy and expected error of a selection mechanism on a problem."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..mechanisms.base import check_problem
from ..problem import SelectionProblem

__all__ = ["output_distribution", "accuracy", "expected_error"]


def output_distribution(mech: Any, problem: SelectionProblem) -> np.ndarray:
    """Exact Pr[mech(problem) = r] for every candidate r (same as ``mech.probabilities``)."""
    check_problem(problem)
    return np.asarray(mech.probabilities(problem), dtype=np.float64)


def accuracy(mech: Any, problem: SelectionProblem) -> float:
    """Probability of returning an optimal candidate (one with the maximal score)."""
    p = output_distribution(mech, problem)
    return float(p[problem.optimal()].sum())


def expected_error(
    mech: Any,
    problem: SelectionProblem,
    *,
    loss: Callable[[np.ndarray], Any] | None = None,
) -> float:
    """E[loss(r)] under the mechanism's output law; default loss u* - u(x, r).

    ``loss`` maps the score vector to a per-candidate loss vector (e.g. the
    absolute distance of each grid point to the true percentile).
    """
    p = output_distribution(mech, problem)
    if loss is None:
        losses = problem.scores.max() - problem.scores
    else:
        losses = np.asarray(loss(problem.scores), dtype=np.float64)
        if losses.shape != p.shape or not np.isfinite(losses).all():
            raise ValueError(f"loss must return {p.size} finite values")
    return float(p @ losses)
