"""What the top-k methods share: method resolution, restricted problems and the joint levels.

Public through :mod:`dpselect.mechanisms.top_k` (mathematics §10.2).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from .._mechanism_support import PROBLEM, is_gumbel_mechanism
from .._params import Rule, int_at_least
from .._validation import check_epsilon, check_int
from ..problem import SelectionProblem
from ..sensitivity import StepProfile
from ..typing import ArrayLike
from .base import Mechanism
from .dampening import candidate_steps
from .joint_top_k import JointLevels, joint_lambda, joint_levels

__all__ = [
    "MECHANISM",
    "METHOD",
    "TOP_K_METHODS",
    "TOP_K_RULES",
    "check_k_at_most",
    "check_method",
    "default_top_k_method",
    "joint_epsilon",
    "joint_levels_for",
    "resolve_method",
    "restrict_problem",
]

#: The top-k methods of :func:`select_top_k`.
TOP_K_METHODS = ("joint", "peel", "gumbel")


def restrict_problem(problem: SelectionProblem, keep: ArrayLike) -> SelectionProblem:
    """The problem on the candidates ``keep`` (indices, in that order), with the same sensitivities.

    The whole local-sensitivity profile is kept (t -> LS(x, t) of the full
    problem, and the per-candidate profile restricted to ``keep``) up to the
    problem's :attr:`~dpselect.problem.SelectionProblem.profile_horizon`,
    beyond which it is constant: the full problem's LS at every distance is an
    upper bound for the restricted one, so every mechanism's calibration stays
    valid.

    Parameters
    ----------
    problem : SelectionProblem
        The full problem.
    keep : array_like of int
        Indices of the candidates kept, in the order of the restricted
        problem.

    Returns
    -------
    SelectionProblem
        The restricted problem (scores, labels and per-candidate bounds of
        ``keep``; the full problem's other sensitivities and flags).

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([3.0, 1.0, 2.0], labels=["a", "b", "c"])
    >>> sub = restrict_problem(p, [2, 0])
    >>> sub.scores.tolist(), sub.labels
    ([2.0, 3.0], ('c', 'a'))
    """
    keep = np.asarray(keep, dtype=np.int64)
    labels = None if problem.labels is None else [problem.labels[i] for i in keep]
    return SelectionProblem(
        problem.scores[keep],
        labels=labels,
        global_sensitivity=problem.global_sensitivity,
        local_sensitivity=problem.local_sensitivity,
        candidate_local_sensitivity=_restricted_profile(problem, keep),
        max_distance=problem.profile_horizon,
        monotone=problem.monotone,
        relation=problem.relation,
        private=problem.private,
        smooth_bound=problem.smooth_sensitivity,
        candidate_smooth_bound=lambda beta: problem.candidate_smooth_sensitivity(beta)[keep],
        beta_max=problem.beta_max,
    )


def _restricted_profile(problem: SelectionProblem, keep: np.ndarray) -> StepProfile | Callable[[int], np.ndarray]:
    """The per-candidate profile of ``keep``: a step profile stays one (its size never follows the distances)."""
    if isinstance(problem._cls, StepProfile) or (problem._cls is None and isinstance(problem._ls, StepProfile)):
        bps, values = candidate_steps(problem)
        return StepProfile(bps, values[:, keep])
    return lambda t: problem.candidate_local_sensitivity(t)[keep]


def check_k_at_most(k: int, m: int) -> int:
    """``k`` itself if 1 <= k <= m (the number of candidates)."""
    k = check_int(k, "k", minimum=1)
    if k > m:
        raise ValueError(f"k must be <= the number of candidates ({m}), got {k}")
    return k


def default_top_k_method(k: int, m: int, epsilon: float) -> str:
    """The method :func:`select_top_k` uses for an EM-type mechanism when ``method`` is None: "gumbel".

    Chosen from public quantities only (k, the number of candidates m and the
    per-round epsilon) by the measured expected number of true top-k found at
    equal total epsilon (``benchmarks/accuracy_top_k.py``, DPBench HEPTH /
    INCOME / PATENT and TDT panels, k in {3, 5, 10, 20}, total epsilon 0.01 to
    10; table in the documentation's *Choosing* page).  No (k, epsilon) cell
    favours the joint mechanism on average beyond sampling error: it wins by at most 0.6 of k
    where every method nearly finds the whole top k, and collapses where the
    per-position gaps are below about 2 k ln(m) / epsilon_total (HEPTH, k = 20,
    epsilon = 0.3: 0.23 found vs 8.4 for the one-shot Gumbel; TDT, k = 5,
    epsilon = 10: 0.22 vs 4.0), a regime no public quantity reveals.  The
    arguments are kept for a rule that depends on them.  Every method has the
    same guarantee, k times the per-round epsilon under the problem's
    neighbour relation (add/remove or replace; mathematics §10.2).

    Parameters
    ----------
    k : int
        The number of candidates selected, >= 1.
    m : int
        The number of candidates, >= 1.
    epsilon : float
        The per-round epsilon, > 0.

    Returns
    -------
    str
        "gumbel".

    Examples
    --------
    >>> default_top_k_method(10, 4096, 0.1)
    'gumbel'
    """
    check_int(k, "k", minimum=1)
    check_int(m, "m", minimum=1)
    check_epsilon(epsilon)
    return "gumbel"


def resolve_method(method: str | None, mechanism: Mechanism, problem: SelectionProblem, k: int) -> str:
    """The top-k method used: ``method``, or the default for ``mechanism`` (module docstring)."""
    gumbel = is_gumbel_mechanism(mechanism, problem)
    if method is None:
        if not gumbel:
            return "peel"
        return default_top_k_method(k, problem.n_candidates, joint_epsilon(mechanism, 1))
    if method != "peel" and not gumbel:
        raise ValueError(
            f"method={method!r} needs an exponential-mechanism-type mechanism (ExponentialMechanism or "
            f"ReportNoisyMax(noise='gumbel')), got {type(mechanism).__name__}; use method='peel'"
        )
    return str(method)


def joint_epsilon(mechanism: Mechanism, k: int) -> float:
    """Total budget of the joint mechanism: the k rounds' budget, k * epsilon."""
    return k * float(mechanism.epsilon)  # type: ignore[attr-defined]  # every EM-type mechanism has it


def joint_levels_for(mechanism: Mechanism, problem: SelectionProblem, k: int) -> JointLevels:
    """The joint mechanism's level structure at the k rounds' total budget."""
    lam = joint_lambda(joint_epsilon(mechanism, k), problem.global_sensitivity, problem.monotone, k=k)
    return joint_levels(problem.scores, k, lam)


def check_method(method: object, name: str = "method") -> str | None:
    """One of :data:`TOP_K_METHODS` or None (the message lists the methods)."""
    if method is not None and method not in TOP_K_METHODS:
        raise ValueError(f"{name} must be one of {TOP_K_METHODS} or None, got {method!r}")
    return None if method is None else str(method)


def _check_mechanism(value: object, name: str) -> Mechanism:
    """A selection mechanism: an object with ``select`` and ``privacy`` methods."""
    if not (callable(getattr(value, "select", None)) and callable(getattr(value, "privacy", None))):
        raise TypeError(f"{name} must be a selection mechanism (select() and privacy()), got {type(value).__name__}")
    return cast(Mechanism, value)


#: The rule of a per-round ``mechanism`` argument.
MECHANISM = Rule("a selection mechanism (select() and privacy())", check=_check_mechanism)
#: The rule of a top-k ``method`` argument (the message lists the methods).
METHOD = Rule(f"one of {TOP_K_METHODS} or None", check=check_method)
TOP_K_RULES = {"mechanism": MECHANISM, "problem": PROBLEM, "k": int_at_least(1), "method": METHOD}
