"""Audit your own mechanism exactly, on every pair of neighbouring datasets.

A mechanism is any object with ``log_probabilities(problem)`` (or
``probabilities``) and ``privacy(problem)``.  ``dpselect.analysis.audit``
computes the exact privacy loss max_r |log P_x(r) / P_y(r)| over all pairs
you give it and compares it with the claimed guarantee.

Here: the exponential mechanism written by hand on vote counts where one voter
may change their vote (the "replace" relation: one count goes up by one and
another down by one, so the scores are not monotone).  The correct version
uses exp(eps u / 2); the broken one forgets the 2 — a classic mistake the
audit catches.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import logsumexp

import dpselect
from dpselect.analysis import audit
from dpselect.apps.counts import majority_neighbours

EPSILON = 1.0


class HandWrittenExponential:
    """P[r] proportional to exp(epsilon * u_r / (divisor * sensitivity))."""

    def __init__(self, epsilon: float, divisor: float = 2.0) -> None:
        self.epsilon, self.divisor = epsilon, divisor

    def log_probabilities(self, problem: dpselect.SelectionProblem) -> np.ndarray:
        z = self.epsilon * problem.scores / (self.divisor * problem.global_sensitivity)
        return z - logsumexp(z)

    def probabilities(self, problem: dpselect.SelectionProblem) -> np.ndarray:
        return np.exp(self.log_probabilities(problem))

    def privacy(self, problem: dpselect.SelectionProblem) -> dpselect.Privacy:
        return dpselect.Privacy(self.epsilon, relation=problem.relation, source="exponential mechanism")


def as_problem(counts: np.ndarray) -> dpselect.SelectionProblem:
    return dpselect.SelectionProblem(counts, global_sensitivity=1.0, relation="replace")


def all_pairs(n_classes: int = 3, max_count: int = 4) -> list[tuple[dpselect.SelectionProblem, ...]]:
    """Every vote table with counts <= max_count, paired with each of its replace-neighbours."""
    pairs = []
    for counts in itertools.product(range(max_count + 1), repeat=n_classes):
        x = np.array(counts)
        pairs += [(as_problem(x), as_problem(y)) for y in majority_neighbours(x, relation="replace")]
    return pairs


def main() -> None:
    pairs = all_pairs()
    print(f"pairs audited: {len(pairs)}")
    for label, mech in (
        ("correct", HandWrittenExponential(EPSILON)),
        ("broken", HandWrittenExponential(EPSILON, divisor=1.0)),
    ):
        report = audit(mech, pairs)
        verdict = "VIOLATION" if report.violates else "ok"
        print(f"{label}: max loss {report.max_loss:.4f} vs claimed epsilon {EPSILON:g}: {verdict}")


if __name__ == "__main__":
    main()
