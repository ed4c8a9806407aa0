"""The exact law of :func:`~dpselect.mechanisms.top_k.select_top_k`'s ordered tuple (mathematics §10.2).

Public through :mod:`dpselect.mechanisms.top_k`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._docstrings import fill_doc
from .._params import validate_params
from ..output_law import OutputLaw
from ..problem import SelectionProblem
from ._top_k_methods import TOP_K_RULES, check_k_at_most, joint_levels_for, resolve_method, restrict_problem
from .base import Mechanism
from .joint_top_k import enumerate_tuples

__all__ = ["TopKLaw", "top_k_log_probabilities"]

_MAX_TUPLES = 200_000


@dataclass(frozen=True)
class TopKLaw:
    """Exact law of :func:`select_top_k`'s ordered tuple (returned by :func:`top_k_log_probabilities`).

    Parameters
    ----------
    tuples : numpy.ndarray of int, shape (n, k)
        Every ordered k-tuple of distinct candidates, lexicographic (n = m!/(m-k)!).
    log_probabilities : numpy.ndarray of float, shape (n,)
        ``log P[select_top_k(...) = tuples[i]]``.

    Examples
    --------
    >>> import dpselect
    >>> law = top_k_log_probabilities(dpselect.ExponentialMechanism(1.0), dpselect.SelectionProblem([2.0, 1.0]), 1)
    >>> law.tuples.tolist(), law.probabilities().round(4).tolist()
    ([[0], [1]], [0.6225, 0.3775])
    """

    tuples: np.ndarray
    log_probabilities: np.ndarray

    def probabilities(self) -> OutputLaw:
        """The probabilities of the tuples as an :class:`~dpselect.OutputLaw` (support: the tuples).

        Returns
        -------
        OutputLaw
            ``exp(log_probabilities)`` over the support ``tuples``.
        """
        return OutputLaw(np.exp(self.log_probabilities), support=self.tuples)


@validate_params(TOP_K_RULES)
@fill_doc
def top_k_log_probabilities(
    mechanism: Mechanism, problem: SelectionProblem, k: int, *, method: str | None = None
) -> TopKLaw:
    """Exact law of :func:`select_top_k`'s ordered tuple, on small problems.

    Every ordered k-tuple of distinct candidates (lexicographic, shape
    (m!/(m-k)!, k)) and its log-probability.  Joint: log P[s] = -lambda G(s)
    - log Z, Z from the level counts (no enumeration); peel / gumbel: the
    product over rounds of the mechanism's exact law on the restricted
    problems (gumbel has the peeling-EM law).  At most 200,000 tuples.
    The guarantee is :func:`top_k_privacy`'s, under the problem's neighbour
    relation (add/remove or replace; mathematics §10.2).

    %(top_k_round)s
    k : int
        The tuple length, 1 <= k <= m, with m!/(m-k)! <= 200,000.
    method : {"joint", "peel", "gumbel"} or None, default=None
        As in :func:`select_top_k`.

    Returns
    -------
    TopKLaw
        ``tuples`` (shape (m!/(m-k)!, k)) and their ``log_probabilities``.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([2.0, 1.0, 0.0])
    >>> law = top_k_log_probabilities(dpselect.ExponentialMechanism(1.0), p, 2, method="peel")
    >>> law.tuples.shape, round(float(np.exp(law.log_probabilities).sum()), 12)
    ((6, 2), 1.0)
    """
    k = check_k_at_most(k, problem.n_candidates)
    chosen_method = resolve_method(method, mechanism, problem, k)
    m = problem.n_candidates
    if math.perm(m, k) > _MAX_TUPLES:
        raise ValueError(f"the exact law enumerates m!/(m-k)! = {math.perm(m, k)} tuples; at most {_MAX_TUPLES}")
    tuples = enumerate_tuples(m, k)
    if chosen_method == "joint":
        levels = joint_levels_for(mechanism, problem, k)
        return TopKLaw(tuples, levels.log_probability_of_gap(levels.gap(tuples)))
    cache: dict[tuple[int, ...], np.ndarray] = {}
    logp = np.zeros(tuples.shape[0])
    for n, tup in enumerate(tuples.tolist()):
        remaining = list(range(m))
        for r in tup:
            key = tuple(remaining)
            if key not in cache:
                sub = problem if len(key) == m else restrict_problem(problem, key)
                cache[key] = np.asarray(mechanism.log_probabilities(sub), dtype=np.float64)
            logp[n] += cache[key][remaining.index(r)]
            remaining.remove(r)
    return TopKLaw(tuples, logp)
