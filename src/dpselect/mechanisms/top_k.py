"""Private top-k selection: k distinct candidates, most preferred first, by three methods.

* ``method="peel"`` (any mechanism): round j runs ``mechanism`` on the problem
  restricted to the candidates not yet selected and removes its choice.  Each
  round is the mechanism's guarantee on that sub-problem (a public function of
  the remaining candidates for every mechanism of the library), so by
  adaptive sequential composition the k rounds are
  ``sum_j mechanism.privacy(round j)``-DP (Dwork & Roth, Thm 3.16).  The
  restricted problem keeps the scores and per-candidate bounds of the kept
  candidates and, conservatively, the whole problem's local / smooth
  sensitivity (an upper bound of the restricted one).
* ``method="gumbel"`` (mechanisms whose noise is Gumbel: the exponential
  mechanism and report-noisy-max with Gumbel noise): the k largest of
  ``u_r + scale * G_r`` in order.  Its output law equals k-fold peeling with
  the same mechanism (Durfee & Rogers, NeurIPS 2019, Lemma 4.2), so it has the
  same guarantee.  One draw of m noises, O(m + k log k).
* ``method="joint"`` (the same mechanisms): the joint exponential mechanism of
  Gillenwater, Joseph, Muñoz Medina & Ribero (ICML 2022) over ordered
  k-tuples, spending the whole k-round budget at once
  (:mod:`dpselect.mechanisms.joint_top_k`).

The mechanism's ``epsilon`` is the budget of **one** round: every method's
total is the sum of the k rounds' epsilons (k epsilon for EM / PF / RNM);
:func:`top_k_privacy` states it.  Peeling / Gumbel with the exponential
mechanism composes k epsilon-bounded-range mechanisms, the joint mechanism is
one (k epsilon)-bounded-range mechanism: the accountant
(:class:`dpselect.accounting.Accountant`) uses both certificates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, cast

import numpy as np

from .._docstrings import fill_doc
from .._params import SEED, Rule, int_at_least, validate_fields, validate_params
from .._validation import check_random_state
from ..output_law import OutputLaw
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import SeedLike
from ._top_k_law import TopKLaw, top_k_log_probabilities
from ._top_k_methods import (
    MECHANISM,
    METHOD,
    TOP_K_METHODS,
    TOP_K_RULES,
    check_k_at_most,
    default_top_k_method,
    joint_epsilon,
    joint_levels_for,
    resolve_method,
    restrict_problem,
)
from .base import Mechanism, NoisyMaxMechanism, no_guarantee

__all__ = [
    "TOP_K_METHODS",
    "TopK",
    "TopKLaw",
    "default_top_k_method",
    "restrict_problem",
    "select_top_k",
    "top_k_log_probabilities",
    "top_k_privacy",
]


@validate_params(TOP_K_RULES)
@fill_doc
def top_k_privacy(mechanism: Mechanism, problem: SelectionProblem, k: int, *, method: str | None = None) -> Privacy:
    """Guarantee of :func:`select_top_k` (the same ``method`` resolution).

    * peel / gumbel: the sum of the k rounds' guarantees (basic composition;
      round j's is ``mechanism.privacy`` of the problem restricted to m - j
      candidates, a public quantity).  For the exponential mechanism the
      result keeps the k epsilon-bounded-range rounds as its ``parts``, which
      the accountant composes more tightly.
    * joint: one exponential mechanism at the k rounds' total budget
      epsilon_J = k epsilon: epsilon_J-DP and epsilon_J-bounded-range.

    %(top_k_round)s
    k : int
        The number of candidates selected, 1 <= k <= m.
    method : {"joint", "peel", "gumbel"} or None, default=None
        As in :func:`select_top_k` (None: the same default).

    Returns
    -------
    Privacy
        The guarantee under the problem's relation.

    See Also
    --------
    TopK : :func:`select_top_k` as a mechanism over ordered k-tuples (for exact laws and audits)
    select_top_k : Select k distinct candidates, most preferred first: the joint EM, one-shot Gumbel top-k or ...

    References
    ----------
    Dwork & Roth 2014, Thm 3.16 (peeling); Durfee & Rogers, NeurIPS 2019,
    Lemma 4.2 (one-shot Gumbel); Gillenwater, Joseph, Muñoz Medina & Ribero,
    ICML 2022 (joint); the mathematics page §10.2.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([50.0, 40.0, 0.0, 1.0, 30.0])
    >>> q = top_k_privacy(dpselect.PermuteAndFlip(0.5), p, 3)
    >>> q.epsilon, len(q.atoms)
    (1.5, 3)
    """
    k = check_k_at_most(k, problem.n_candidates)
    if resolve_method(method, mechanism, problem, k) == "joint":
        eps = joint_epsilon(mechanism, k)
        return no_guarantee(problem) or Privacy(
            eps,
            0.0,
            problem.relation,
            "joint exponential mechanism (Gillenwater et al. ICML 2022; mathematics page §10.2)",
            bounded_range=eps,
        )
    m = problem.n_candidates
    total = mechanism.privacy(problem)
    for j in range(1, k):
        total = total + mechanism.privacy(restrict_problem(problem, np.arange(m - j)))
    return total


@validate_params({**TOP_K_RULES, "rng": SEED})
def select_top_k(
    mechanism: Mechanism, problem: SelectionProblem, k: int, *, method: str | None = None, rng: SeedLike = None
) -> np.ndarray:
    r"""Select k distinct candidates, most preferred first: the joint EM, one-shot Gumbel top-k or peeling.

    Parameters
    ----------
    mechanism : Mechanism
        A selection mechanism (``select`` and ``privacy``); its epsilon is the
        budget of **one** round, the total is k times it for every method.
    problem : SelectionProblem
        The candidates' scores and sensitivities.
    k : int
        The number of candidates to return, 1 <= k <= m.
    method : {"joint", "peel", "gumbel"} or None, default=None
        "joint" and "gumbel" need an exponential-mechanism-type mechanism
        (EM or Gumbel report-noisy-max); None picks
        :func:`default_top_k_method` ("gumbel", by measurement) for those and
        "peel" for the others.
    rng : SeedLike, default=None
        The randomness (keyword-only); a seed reproduces the output.

    Returns
    -------
    numpy.ndarray
        int64 array of k distinct indices.  Guarantee: :func:`top_k_privacy`
        under the problem's relation.

    See Also
    --------
    TopK : :func:`select_top_k` as a mechanism over ordered k-tuples (for exact laws and audits)
    top_k_privacy : Guarantee of :func:`select_top_k` (the same ``method`` resolution)

    Notes
    -----
    The joint method draws the ordered tuple s with

    .. math::

        P[s] \propto \exp\Bigl(-\frac{k\varepsilon}{2\Delta^*} \max_{i \le k}
        \bigl(u_{(i)} - u_{s_i}\bigr)\Bigr),

    u_(i) the i-th largest score, Delta* = Delta u for monotone problems and
    2 Delta u otherwise: (k epsilon)-DP and (k epsilon)-bounded-range.

    References
    ----------
    Gillenwater, Joseph, Muñoz Medina & Ribero, "A Joint Exponential Mechanism
    for Differentially Private Top-k", ICML 2022, §3 (sequence utility and
    sampler).  Durfee & Rogers, "Practical Differentially Private Top-k
    Selection with Pay-what-you-get Composition", NeurIPS 2019, Lemma 4.2
    (one-shot Gumbel = peeling EM).  Dwork & Roth 2014, Thm 3.16 (peeling).
    The documentation's mathematics page, §10.2.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.mechanisms.top_k import select_top_k, top_k_privacy
    >>> p = dpselect.SelectionProblem([50.0, 40.0, 0.0, 1.0, 30.0])
    >>> em = dpselect.ExponentialMechanism(2.0)
    >>> select_top_k(em, p, 3, method="joint", rng=0).tolist()
    [0, 1, 4]
    >>> sorted(select_top_k(em, p, 3, method="gumbel", rng=0).tolist())
    [0, 1, 4]
    >>> top_k_privacy(em, p, 3).epsilon
    6.0
    """
    k = check_k_at_most(k, problem.n_candidates)
    chosen_method = resolve_method(method, mechanism, problem, k)
    gen = check_random_state(rng)
    if chosen_method == "joint":
        return joint_levels_for(mechanism, problem, k).sample(1, gen)[0]
    if chosen_method == "gumbel":
        scale, noise = cast(NoisyMaxMechanism, mechanism).calibrate(problem)  # checked by resolve_method
        noisy = problem.scores + scale * np.asarray(noise.sample(problem.n_candidates, gen), dtype=np.float64)
        part = np.argpartition(-noisy, k - 1)[:k] if k < noisy.size else np.arange(noisy.size)
        return part[np.argsort(-noisy[part], kind="stable")].astype(np.int64)
    remaining = np.arange(problem.n_candidates)
    chosen = np.empty(k, dtype=np.int64)
    for j in range(k):
        sub = problem if j == 0 else restrict_problem(problem, remaining)
        pick = mechanism.select(sub, rng=gen)
        chosen[j] = remaining[pick]
        remaining = np.delete(remaining, pick)
    return chosen


@dataclass(frozen=True)
class TopK:
    """:func:`select_top_k` as a mechanism over ordered k-tuples (for exact laws and audits).

    ``log_probabilities(problem)`` is indexed like :func:`top_k_log_probabilities`'s
    tuples, so :func:`dpselect.analysis.audit` applies unchanged.  The
    guarantee is :func:`top_k_privacy`'s, under the problem's neighbour
    relation (add/remove or replace; mathematics §10.2).

    Parameters
    ----------
    mechanism : Mechanism
        The per-round mechanism.
    k : int
        The tuple length, 1 <= k <= m.
    method : {"joint", "peel", "gumbel"} or None, default=None
        As in :func:`select_top_k`.

    See Also
    --------
    select_top_k : Select k distinct candidates, most preferred first: the joint EM, one-shot Gumbel top-k or ...
    top_k_privacy : Guarantee of :func:`select_top_k` (the same ``method`` resolution)

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.mechanisms.top_k import TopK
    >>> law = TopK(dpselect.ExponentialMechanism(1.0), 2, "joint")
    >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0])
    >>> round(float(law.probabilities(p).sum()), 12), law.privacy(p).epsilon
    (1.0, 2.0)
    """

    mechanism: Mechanism
    k: int
    method: str | None = None
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"mechanism": MECHANISM, "k": int_at_least(1), "method": METHOD}

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    def select(self, problem: SelectionProblem, *, rng: SeedLike = None) -> np.ndarray:
        """One ordered tuple (:func:`select_top_k`).

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' scores and sensitivities.
        rng : SeedLike, default=None
            The randomness (keyword-only); a seed reproduces the output.

        Returns
        -------
        numpy.ndarray of int, shape (k,)
            k distinct indices, most preferred first.
        """
        return select_top_k(self.mechanism, problem, self.k, method=self.method, rng=rng)

    @fill_doc
    def outputs(self, problem: SelectionProblem) -> np.ndarray:
        """The ordered tuples, in the order of :meth:`log_probabilities`.

        %(scores_sections)s
        numpy.ndarray of int, shape (m!/(m-k)!, k)
            Every ordered k-tuple of distinct candidates, lexicographic.
        """
        return top_k_log_probabilities(self.mechanism, problem, self.k, method=self.method).tuples

    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact log-probabilities of the ordered tuples.

        %(scores_sections)s
        numpy.ndarray of float, shape (m!/(m-k)!,)
            One per tuple of :meth:`outputs`.
        """
        return top_k_log_probabilities(self.mechanism, problem, self.k, method=self.method).log_probabilities

    @fill_doc
    def probabilities(self, problem: SelectionProblem) -> OutputLaw:
        """Exact probabilities of the ordered tuples (sum to 1).

        %(scores_sections)s
        OutputLaw, shape (m!/(m-k)!,)
            One probability per tuple of :meth:`outputs`; the support is the tuples.
        """
        return top_k_log_probabilities(self.mechanism, problem, self.k, method=self.method).probabilities()

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The guarantee of :meth:`select` (:func:`top_k_privacy`).

        %(scores_sections)s
        Privacy
            The guarantee under the problem's relation.
        """
        return top_k_privacy(self.mechanism, problem, self.k, method=self.method)
