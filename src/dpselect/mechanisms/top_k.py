"""Private top-k selection: k distinct candidates by peeling, one-shot Gumbel for the EM.

* **Peeling** (any mechanism): round j runs ``mechanism`` on the problem
  restricted to the candidates not yet selected and removes its choice.  Each
  round is the mechanism's guarantee on that sub-problem (a public function of
  the remaining candidates for every mechanism of the library), so by
  adaptive sequential composition the k rounds are
  ``sum_j mechanism.privacy(round j)``-DP (Dwork & Roth, Thm 3.16).  The
  restricted problem keeps the scores and per-candidate bounds of the kept
  candidates and, conservatively, the whole problem's local / smooth
  sensitivity (an upper bound of the restricted one).
* **One-shot Gumbel top-k** (mechanisms whose noise is Gumbel: the
  exponential mechanism and report-noisy-max with Gumbel noise): the k
  largest of ``u_r + scale * G_r`` in order.  Its output law equals k-fold
  peeling with the same mechanism (Durfee & Rogers, NeurIPS 2019, Lemma 4.2:
  the Gumbel-max trick applied round by round on the remaining candidates),
  so it has the same guarantee: k times the per-round one.  One draw of m
  noises, O(m + k log k).

The guarantee of :func:`select_top_k` is :func:`top_k_privacy`; the
mechanism's ``epsilon`` is the per-round budget (use epsilon/k for a total
of epsilon).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_int, check_random_state
from ..noise import Gumbel
from ..privacy import Privacy
from ..problem import SelectionProblem
from .base import check_problem

__all__ = ["select_top_k", "top_k_privacy", "is_gumbel_mechanism", "restrict_problem"]


def is_gumbel_mechanism(mechanism: Any, problem: SelectionProblem) -> bool:
    """True when ``mechanism`` is a noisy max with Gumbel noise (EM-type: one-shot top-k applies)."""
    calibrate = getattr(mechanism, "calibrate", None)
    if not callable(calibrate):
        return False
    _, noise = calibrate(problem)
    return isinstance(noise, Gumbel)


def restrict_problem(problem: SelectionProblem, keep: Any) -> SelectionProblem:
    """The problem on the candidates ``keep`` (indices, in that order), with the same sensitivities.

    The whole local-sensitivity profile is kept (t -> LS(x, t) of the full
    problem, and the per-candidate profile restricted to ``keep``) up to the
    problem's :attr:`~dpselect.problem.SelectionProblem.profile_horizon`,
    beyond which it is constant: the full problem's LS at every distance is an
    upper bound for the restricted one, so every mechanism's calibration stays
    valid.
    """
    keep = np.asarray(keep, dtype=np.int64)
    labels = None if problem.labels is None else [problem.labels[i] for i in keep]
    return SelectionProblem(
        problem.scores[keep],
        labels=labels,
        global_sensitivity=problem.global_sensitivity,
        local_sensitivity=problem.local_sensitivity,
        candidate_local_sensitivity=lambda t: problem.candidate_local_sensitivity(t)[keep],
        max_distance=problem.profile_horizon,
        monotone=problem.monotone,
        relation=problem.relation,
        private=problem.private,
        smooth_bound=problem.smooth_sensitivity,
        candidate_smooth_bound=lambda beta: problem.candidate_smooth_sensitivity(beta)[keep],
        beta_max=problem.beta_max,
    )


def _check_k(k: Any, m: int) -> int:
    k = check_int(k, "k", minimum=1)
    if k > m:
        raise ValueError(f"k must be <= the number of candidates ({m}), got {k}")
    return k


def top_k_privacy(mechanism: Any, problem: SelectionProblem, k: int) -> Privacy:
    """Guarantee of :func:`select_top_k`: the sum of the k rounds' guarantees (basic composition).

    Round j's guarantee is ``mechanism.privacy`` of the problem restricted to
    m - j candidates (it depends only on public quantities).
    """
    problem = check_problem(problem)
    k = _check_k(k, problem.n_candidates)
    m = problem.n_candidates
    total = mechanism.privacy(problem)
    for j in range(1, k):
        total = total + mechanism.privacy(restrict_problem(problem, np.arange(m - j)))
    return total


def select_top_k(mechanism: Any, problem: SelectionProblem, k: int, *, rng: Any = None) -> np.ndarray:
    """k distinct candidates, most preferred first: one-shot Gumbel top-k (EM-type) or peeling.

    Parameters
    ----------
    mechanism : a selection mechanism (``select`` and ``privacy``); its
        epsilon is the budget of **one** round.
    problem : the :class:`~dpselect.problem.SelectionProblem`.
    k : number of candidates to return, 1 <= k <= m.
    rng : None, int seed or numpy Generator (keyword-only).

    Returns
    -------
    int64 ndarray of k distinct indices.  Guarantee: :func:`top_k_privacy`
    (k times epsilon for EM / PF / RNM), under the problem's relation.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.mechanisms.top_k import select_top_k, top_k_privacy
    >>> p = dpselect.SelectionProblem([50.0, 40.0, 0.0, 1.0, 30.0])
    >>> em = dpselect.ExponentialMechanism(2.0)
    >>> sorted(select_top_k(em, p, 3, rng=0).tolist())
    [0, 1, 4]
    >>> top_k_privacy(em, p, 3).epsilon
    6.0
    """
    problem = check_problem(problem)
    k = _check_k(k, problem.n_candidates)
    gen = check_random_state(rng)
    if is_gumbel_mechanism(mechanism, problem):
        scale, noise = mechanism.calibrate(problem)
        noisy = problem.scores + scale * np.asarray(noise.sample(problem.n_candidates, gen), dtype=np.float64)
        part = np.argpartition(-noisy, k - 1)[:k] if k < noisy.size else np.arange(noisy.size)
        return part[np.argsort(-noisy[part], kind="stable")].astype(np.int64)
    remaining = np.arange(problem.n_candidates)
    chosen = np.empty(k, dtype=np.int64)
    for j in range(k):
        sub = problem if j == 0 else restrict_problem(problem, remaining)
        pick = int(mechanism.select(sub, rng=gen))
        chosen[j] = remaining[pick]
        remaining = np.delete(remaining, pick)
    return chosen
