"""Exact accuracy and expected error of a selection mechanism on a problem."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._docstrings import fill_doc
from .._params import callable_, validate_params
from ..mechanisms import Mechanism
from ..output_law import OutputLaw
from ..problem import SelectionProblem
from ..typing import ArrayLike
from ._rules import MECHANISM, PROBLEM

__all__ = ["accuracy", "expected_error", "output_distribution"]


@validate_params({"mech": MECHANISM, "problem": PROBLEM})
@fill_doc
def output_distribution(mech: Mechanism, problem: SelectionProblem) -> OutputLaw:
    """Exact Pr[mech(problem) = r] for every candidate r (the law ``mech.probabilities`` gives).

    %(mech_on_problem)s
    OutputLaw
        The output probabilities over the candidate indices ``0..m-1`` (an array of
        shape (m,) with the law's helpers: ``sample``, ``expected_error``, ...).

    See Also
    --------
    accuracy : Probability of returning an optimal candidate (one with the maximal score)
    expected_error : The expected loss of the selected candidate under the mechanism's output law
    ErrorDistribution : Law of the release error E = A(x) - f(x) = scale * Z (scaled, symmetric noise)

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.analysis import output_distribution
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> law = output_distribution(dpselect.ExponentialMechanism(2.0), p)
    >>> law.round(4)
    array([0.7311, 0.2689])
    >>> round(law.expected_error(0), 4)   # E|r - 0| = P[r = 1]
    0.2689
    """
    if callable(getattr(mech, "probabilities", None)):
        p = mech.probabilities(problem)
    else:
        p = np.exp(mech.log_probabilities(problem))
    return p if isinstance(p, OutputLaw) else OutputLaw(p)


@validate_params({"mech": MECHANISM, "problem": PROBLEM})
@fill_doc
def accuracy(mech: Mechanism, problem: SelectionProblem) -> float:
    """Probability of returning an optimal candidate (one with the maximal score).

    %(mech_on_problem)s
    float
        The sum of the output probabilities over the optimal candidates.

    See Also
    --------
    expected_error : The expected loss of the selected candidate under the mechanism's output law
    output_distribution : Exact Pr[mech(problem) = r] for every candidate r (the law ``mech.probabilities`` gives)

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.analysis import accuracy
    >>> p = dpselect.SelectionProblem([22, 8, 17, 4, 0], monotone=True)
    >>> round(accuracy(dpselect.PermuteAndFlip(1.0), p), 3)
    0.997
    """
    p = output_distribution(mech, problem)
    return float(p[problem.optimal()].sum())


@validate_params({"mech": MECHANISM, "problem": PROBLEM, "loss": callable_(none=True)})
def expected_error(
    mech: Mechanism, problem: SelectionProblem, *, loss: Callable[[np.ndarray], ArrayLike] | None = None
) -> float:
    r"""The expected loss of the selected candidate under the mechanism's output law.

    .. math::

        E[\ell(\hat r)] = \sum_r P[\hat r = r]\, \ell_r, \qquad
        \ell_r = \max_s u(x, s) - u(x, r) \text{ by default.}

    Parameters
    ----------
    mech : Mechanism
        Any object with ``probabilities(problem)`` or ``log_probabilities(problem)``.
    problem : SelectionProblem
        The candidates' utilities.
    loss : callable, default=None
        Maps the score vector to a per-candidate loss vector (e.g. the
        absolute distance of each grid point to the true percentile);
        keyword-only.  None uses the utility gap :math:`u^* - u(x, r)`.

    Returns
    -------
    float
        The expected loss.

    See Also
    --------
    accuracy : Probability of returning an optimal candidate (one with the maximal score)
    output_distribution : Exact Pr[mech(problem) = r] for every candidate r (the law ``mech.probabilities`` gives)

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.analysis import expected_error
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> round(expected_error(dpselect.ExponentialMechanism(2.0), p), 4)   # P[second] * 1
    0.2689
    """
    p = output_distribution(mech, problem)
    if loss is None:
        losses = problem.scores.max() - problem.scores
    else:
        losses = np.asarray(loss(problem.scores), dtype=np.float64)
        if losses.shape != p.shape or not np.isfinite(losses).all():
            raise ValueError(f"loss must return {p.size} finite values")
    return float(p @ losses)
