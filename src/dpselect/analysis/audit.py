r"""Exact privacy audits on pairs of neighbouring datasets.

For a finite output space the privacy of a mechanism on a pair (x, y) is
read off its exact output distributions p = P_x, q = P_y:

* privacy loss  max_r |log p_r - log q_r|  (pure epsilon-DP holds on the pair
  iff it is <= epsilon);
* hockey-stick divergence  delta(eps) = max(sum_r (p_r - e^eps q_r)_+,
  sum_r (q_r - e^eps p_r)_+)  ((eps, delta)-DP holds on the pair iff it is
  <= delta; e.g. Balle et al. 2018, Thm 1):

.. math::

    L(p, q) = \max_r |\log p_r - \log q_r|, \qquad
    \delta(\varepsilon) = \max\Bigl(\sum_r (p_r - e^\varepsilon q_r)_+,\;
    \sum_r (q_r - e^\varepsilon p_r)_+\Bigr).

Outputs with probability below ``floor`` under both datasets are ignored for
the loss (their log-probabilities are below the quadrature's accuracy floor);
they still count, exactly, in the hockey-stick divergence.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._params import LOG_LAW, Rule, instance_of, positive, validate_params
from ..mechanisms import Mechanism
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import ArrayLike
from ._rules import MECHANISM, NON_NEGATIVE

__all__ = ["AuditReport", "audit", "hockey_stick", "privacy_loss"]


def _log_probs(mech: Any, problem: SelectionProblem) -> np.ndarray:
    if hasattr(mech, "log_probabilities"):
        return np.asarray(mech.log_probabilities(problem), dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(mech.probabilities(problem), dtype=np.float64))


def _check_pairs(pairs: Any, name: str = "pairs") -> list[tuple[Any, Any]]:
    """The pairs as a list of (SelectionProblem, SelectionProblem), or a TypeError naming the bad entry."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(f"{name} must be an iterable of (x, y) SelectionProblem pairs, got {type(pairs).__name__}")
    out = list(pairs)
    for i, pair in enumerate(out):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"{name}[{i}] must be an (x, y) pair of SelectionProblems, got {type(pair).__name__}")
        for j in (0, 1):
            check_problem(pair[j], f"{name}[{i}][{j}]")
    return out


@validate_params({"logp": LOG_LAW, "logq": LOG_LAW, "floor": NON_NEGATIVE})
@fill_doc
def privacy_loss(logp: ArrayLike, logq: ArrayLike, floor: float = 1e-300) -> float:
    r"""The privacy loss between two exact output distributions.

    .. math::

        L(p, q) = \max_{r : \max(p_r, q_r) > \text{floor}} |\log p_r - \log q_r|

    Parameters
    ----------
    %(log_laws)s
    floor : float, default=1e-300
        Outputs with both probabilities at or below it are ignored (>= 0).

    Returns
    -------
    float
        The loss (``inf`` when one side has an output the other cannot give).

    See Also
    --------
    AuditReport : Result of :func:`audit` (built by it; the fields are its attributes)
    audit : Exact audit of ``mech`` on neighbouring problem pairs (x, y)
    hockey_stick : The hockey-stick divergence at epsilon, the larger of the two directions

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.analysis import privacy_loss
    >>> round(privacy_loss(np.log([0.5, 0.5]), np.log([0.25, 0.75])), 6)   # ln 2
    0.693147
    """
    logp, logq = np.asarray(logp, dtype=np.float64), np.asarray(logq, dtype=np.float64)
    if logp.shape != logq.shape:
        raise ValueError(f"the two output distributions differ in size: {logp.shape} vs {logq.shape}")
    keep = np.maximum(logp, logq) > (math.log(floor) if floor > 0 else -math.inf)
    if not keep.any():
        return 0.0
    with np.errstate(invalid="ignore"):
        diff = np.abs(logp[keep] - logq[keep])
    return float(np.nan_to_num(diff, nan=np.inf).max())


@validate_params({"logp": LOG_LAW, "logq": LOG_LAW, "epsilon": positive(allow_inf=True, allow_zero=True)})
@fill_doc
def hockey_stick(logp: ArrayLike, logq: ArrayLike, epsilon: float) -> float:
    r"""The hockey-stick divergence at epsilon, the larger of the two directions.

    For the output laws p, q of a mechanism on two neighbouring datasets (add/remove or
    replace neighbours, whichever relation the guarantee refers to: mathematics §1), the
    mechanism satisfies (epsilon, delta)-DP on the pair iff the divergence is <= delta; the
    exact audits of the verification log (mathematics §8) use it.

    .. math::

        \delta(\varepsilon) = \max\Bigl(\sum_r (p_r - e^\varepsilon q_r)_+,\;
        \sum_r (q_r - e^\varepsilon p_r)_+\Bigr)

    Parameters
    ----------
    %(log_laws)s
    epsilon : float
        The epsilon at which the divergence is taken (>= 0; inf gives 0).

    Returns
    -------
    float
        The smallest delta for which the pair satisfies (epsilon, delta)-DP.

    See Also
    --------
    AuditReport : Result of :func:`audit` (built by it; the fields are its attributes)
    audit : Exact audit of ``mech`` on neighbouring problem pairs (x, y)
    privacy_loss : The privacy loss between two exact output distributions

    References
    ----------
    Balle, Barthe & Gaboardi, "Privacy amplification by subsampling: tight
    analyses via couplings and divergences", NeurIPS 2018, Theorem 1.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.analysis import hockey_stick
    >>> round(hockey_stick(np.log([0.5, 0.5]), np.log([0.25, 0.75]), 0.0), 6)
    0.25
    """
    p, q = np.exp(np.asarray(logp, dtype=np.float64)), np.exp(np.asarray(logq, dtype=np.float64))
    e = math.exp(epsilon) if epsilon < 700 else math.inf
    with np.errstate(invalid="ignore"):
        d1 = np.clip(p - e * q, 0.0, None)
        d2 = np.clip(q - e * p, 0.0, None)
    return float(max(np.nan_to_num(d1).sum(), np.nan_to_num(d2).sum()))


@dataclass(frozen=True)
@fill_doc
class AuditReport:
    """Result of :func:`audit` (built by it; the fields are its attributes).

    Parameters
    ----------
    max_loss : float
        The exact max over pairs and outputs of |log p_x(r) / p_y(r)|.
    delta_at_claimed : float
        The max hockey-stick divergence at the claimed epsilon.
    worst_pair : int
        The index of the pair with the largest loss (-1 if no pairs).
    claimed : Privacy
        The guarantee audited (the mechanism's own ``privacy`` if not given).
    violates : bool
        Whether some pair breaks the claim (beyond ``tol``).
    n_pairs : int
        The number of pairs audited.

    See Also
    --------
    audit : Exact audit of ``mech`` on neighbouring problem pairs (x, y)
    hockey_stick : The hockey-stick divergence at epsilon, the larger of the two directions
    privacy_loss : The privacy loss between two exact output distributions

    %(audit_example)s
    >>> report = audit(dpselect.ExponentialMechanism(1.0), [(x, y)])
    >>> report.violates, round(report.max_loss, 6)
    (False, 0.620115)
    """

    max_loss: float
    delta_at_claimed: float
    worst_pair: int
    claimed: Privacy
    violates: bool
    n_pairs: int

    def __str__(self) -> str:
        verdict = "VIOLATION" if self.violates else "ok"
        return (
            f"audit over {self.n_pairs} pairs: max loss {self.max_loss:.6g} (pair {self.worst_pair}), "
            f"delta at eps={self.claimed.epsilon:.6g}: {self.delta_at_claimed:.3g}; "
            f"claimed {self.claimed}: {verdict}"
        )


@validate_params(
    {
        "mech": MECHANISM,
        "pairs": Rule("an iterable of (x, y) SelectionProblem pairs", check=_check_pairs),
        "claimed": instance_of(Privacy, none=True),
        "tol": NON_NEGATIVE,
        "floor": NON_NEGATIVE,
    }
)
@fill_doc
def audit(
    mech: Mechanism,
    pairs: Iterable[tuple[SelectionProblem, SelectionProblem]],
    *,
    claimed: Privacy | None = None,
    tol: float = 1e-8,
    floor: float = 1e-300,
) -> AuditReport:
    """Exact audit of ``mech`` on neighbouring problem pairs (x, y).

    With ``claimed=None`` each pair is held to ``mech.privacy(x)`` (and the
    report shows the first pair's claim).  A pure claim (delta = 0) is violated
    when the loss exceeds epsilon + tol; an approximate claim when the
    hockey-stick divergence at epsilon exceeds delta + tol.

    Parameters
    ----------
    mech : Mechanism
        Any object with ``log_probabilities(problem)`` or
        ``probabilities(problem)`` (and ``privacy(problem)`` when
        ``claimed`` is None).
    pairs : iterable of (SelectionProblem, SelectionProblem)
        The neighbouring datasets, as problems (non-empty).
    claimed : Privacy, default=None
        The guarantee to hold every pair to; None uses ``mech.privacy(x)``.
    tol : float, default=1e-8
        Relative and absolute slack for the comparison (>= 0).
    floor : float, default=1e-300
        Outputs below it under both datasets are ignored by the loss
        (:func:`privacy_loss`); they still count in the hockey stick.

    Returns
    -------
    AuditReport
        The worst loss, the worst divergence and the verdict.

    See Also
    --------
    AuditReport : Result of :func:`audit` (built by it; the fields are its attributes)
    hockey_stick : The hockey-stick divergence at epsilon, the larger of the two directions
    privacy_loss : The privacy loss between two exact output distributions

    %(audit_example)s
    >>> audit(dpselect.ExponentialMechanism(1.0), [(x, y)]).violates
    False
    >>> audit(dpselect.ExponentialMechanism(1.0), [(x, y)], claimed=dpselect.Privacy(0.5)).violates
    True
    """
    max_loss, max_delta, worst, violates, n = 0.0, 0.0, -1, False, 0
    report_claim = claimed
    for i, (x, y) in enumerate(pairs):
        claim = claimed if claimed is not None else mech.privacy(x)
        if report_claim is None:
            report_claim = claim
        lp, lq = _log_probs(mech, x), _log_probs(mech, y)
        loss = privacy_loss(lp, lq, floor)
        delta = hockey_stick(lp, lq, claim.epsilon)
        if worst < 0 or loss > max_loss:
            max_loss, worst = loss, i
        max_delta = max(max_delta, delta)
        if claim.delta == 0.0:
            violates |= loss > claim.epsilon * (1 + tol) + tol
        else:
            violates |= delta > claim.delta * (1 + tol) + tol
        n += 1
    if report_claim is None:
        raise ValueError("pairs must not be empty")
    return AuditReport(max_loss, max_delta, worst, report_claim, bool(violates), n)
