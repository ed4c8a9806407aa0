"""The mechanism interface shared by every selection mechanism.

A mechanism is a small immutable configuration object (a frozen dataclass)::

    mech.select(problem, *, size=None, rng=None)  -> int | ndarray[int]
    mech.probabilities(problem)                -> ndarray (exact, sums to 1)
    mech.log_probabilities(problem)            -> ndarray (log of the above)
    mech.privacy(problem)                      -> Privacy

Noisy-max mechanisms only say how to calibrate: ``calibrate(problem)`` returns
the noise scale b and the noise law h, and :mod:`dpselect.noisy_max` does the
sampling of argmax_r (u_r + b Z_r) and the exact output distribution.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from .. import noisy_max
from .._validation import check_random_state, check_size
from ..privacy import Privacy
from ..problem import SelectionProblem

__all__ = ["Mechanism", "NoisyMaxMechanism", "check_problem", "no_guarantee"]


def check_problem(problem: Any, name: str = "problem") -> SelectionProblem:
    """The argument must be a :class:`SelectionProblem`."""
    if not isinstance(problem, SelectionProblem):
        raise TypeError(f"{name} must be a SelectionProblem, got {type(problem).__name__}")
    return problem


def no_guarantee(problem: SelectionProblem) -> Privacy | None:
    """``Privacy(inf)`` for a problem built as not private (``private=False``), else None.

    Every mechanism's ``privacy()`` starts with this check: a problem whose
    candidate set or scores are not differentially private (e.g. data points
    as candidates, SPEC errata 16) has no guarantee whatever the noise.
    """
    if problem.private:
        return None
    return Privacy(
        math.inf, 0.0, problem.relation,
        "no guarantee: the problem itself is not differentially private (SPEC errata 16)",
    )


class Mechanism(ABC):
    """Abstract selection mechanism (see module docstring)."""

    @abstractmethod
    def select(self, problem: SelectionProblem, *, size: int | None = None, rng: Any = None) -> Any:
        """One index (``size=None``) or an array of ``size`` independent draws."""

    @abstractmethod
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact log output probabilities, one per candidate."""

    @abstractmethod
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The guarantee this mechanism has on this problem (SPEC.md)."""

    def probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact output distribution over the candidates (sums to 1)."""
        return np.exp(self.log_probabilities(problem))


class NoisyMaxMechanism(Mechanism):
    """argmax_r (u(x, r) + b(x) Z_r) for a calibration (b, h) chosen by the subclass."""

    @abstractmethod
    def calibrate(self, problem: SelectionProblem) -> tuple[float, Any]:
        """(scale b, noise law h) for this problem."""

    def select(self, problem: SelectionProblem, *, size: int | None = None, rng: Any = None) -> Any:
        check_problem(problem)
        size = check_size(size)
        gen = check_random_state(rng)
        scale, noise = self.calibrate(problem)
        return noisy_max.sample_argmax(problem.scores, scale, noise, size=size, rng=gen)

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        check_problem(problem)
        scale, noise = self.calibrate(problem)
        return noisy_max.log_probabilities(problem.scores, scale, noise)
