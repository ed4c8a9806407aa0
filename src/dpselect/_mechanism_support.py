"""What the mechanisms share with the layers above them about problems and noise laws.

A private module made for sharing (scikit-learn's ``utils._param_validation`` pattern): the
mechanisms, the analysis and the apps import these helpers from here, and no public face
exports them.

* :data:`PROBLEM` and :func:`check_problem`: a ``problem`` argument is a
  :class:`~dpselect.problem.SelectionProblem` (a ``TypeError`` naming the argument);
* :func:`is_gumbel_mechanism`: whether a mechanism is a noisy max with Gumbel noise, the
  exponential mechanism in disguise, for which one-shot top-k is exact (mathematics §10.2).

Examples
--------
>>> import dpselect
>>> p = dpselect.SelectionProblem([1.0, 0.0])
>>> check_problem(p) is p
True
>>> is_gumbel_mechanism(dpselect.ExponentialMechanism(1.0), p), is_gumbel_mechanism(dpselect.PermuteAndFlip(1.0), p)
(True, False)
"""

from __future__ import annotations

from ._params import Rule
from .noise import Gumbel
from .problem import SelectionProblem

__all__ = ["PROBLEM", "check_problem", "is_gumbel_mechanism"]


def check_problem(problem: object, name: str = "problem") -> SelectionProblem:
    """The argument itself if it is a :class:`~dpselect.problem.SelectionProblem`, else a TypeError.

    Parameters
    ----------
    problem : object
        The value to check.
    name : str, default="problem"
        The argument name used in the error message.

    Returns
    -------
    SelectionProblem
        ``problem`` unchanged.
    """
    if not isinstance(problem, SelectionProblem):
        raise TypeError(f"{name} must be a SelectionProblem, got {type(problem).__name__}")
    return problem


#: The rule of a ``problem`` argument (the message of :func:`check_problem`).
PROBLEM = Rule("a SelectionProblem", check=check_problem)


def is_gumbel_mechanism(mechanism: object, problem: SelectionProblem) -> bool:
    """True when ``mechanism`` is a noisy max with Gumbel noise (EM-type: one-shot top-k applies).

    Parameters
    ----------
    mechanism : object
        Any mechanism; only one with a ``calibrate`` method whose noise law is
        :class:`~dpselect.noise.Gumbel` qualifies.
    problem : SelectionProblem
        The problem passed to ``calibrate`` (the noise law may depend on it).

    Returns
    -------
    bool
        Whether ``mechanism`` calibrates Gumbel noise on ``problem`` (the exponential
        mechanism, report-noisy-max with Gumbel noise).
    """
    calibrate = getattr(mechanism, "calibrate", None)
    if not callable(calibrate):
        return False
    _, noise = calibrate(problem)
    return isinstance(noise, Gumbel)
