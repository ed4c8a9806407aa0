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

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._validation import check_epsilon, check_int, check_random_state
from ..noise import Gumbel
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import ArrayLike, SeedLike
from .base import Mechanism, NoisyMaxMechanism, check_problem, no_guarantee
from .joint_top_k import enumerate_tuples, joint_lambda, joint_levels

__all__ = [
    "TOP_K_METHODS",
    "TopK",
    "default_top_k_method",
    "is_gumbel_mechanism",
    "restrict_problem",
    "select_top_k",
    "top_k_log_probabilities",
    "top_k_privacy",
]

#: The top-k methods of :func:`select_top_k`.
TOP_K_METHODS = ("joint", "peel", "gumbel")


def is_gumbel_mechanism(mechanism: Mechanism, problem: SelectionProblem) -> bool:
    """True when ``mechanism`` is a noisy max with Gumbel noise (EM-type: one-shot top-k applies).

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism; only one with a ``calibrate`` method whose noise law is
        :class:`~dpselect.noise.Gumbel` qualifies.
    problem : SelectionProblem
        The problem passed to ``calibrate`` (the noise law may depend on it).

    Returns
    -------
    bool
        Whether ``mechanism`` calibrates Gumbel noise on ``problem`` (the
        exponential mechanism, report-noisy-max with Gumbel noise).

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> is_gumbel_mechanism(dpselect.ExponentialMechanism(1.0), p), is_gumbel_mechanism(dpselect.PermuteAndFlip(1.0), p)
    (True, False)
    """
    calibrate = getattr(mechanism, "calibrate", None)
    if not callable(calibrate):
        return False
    _, noise = calibrate(problem)
    return isinstance(noise, Gumbel)


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
    arguments are kept for a rule that depends on them.

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


def _method(method: Any, mechanism: Any, problem: SelectionProblem, k: int) -> str:
    gumbel = is_gumbel_mechanism(mechanism, problem)
    if method is None:
        if not gumbel:
            return "peel"
        return default_top_k_method(k, problem.n_candidates, float(mechanism.epsilon))
    if method not in TOP_K_METHODS:
        raise ValueError(f"method must be one of {TOP_K_METHODS} or None, got {method!r}")
    if method != "peel" and not gumbel:
        raise ValueError(
            f"method={method!r} needs an exponential-mechanism-type mechanism (ExponentialMechanism or "
            f"ReportNoisyMax(noise='gumbel')), got {type(mechanism).__name__}; use method='peel'")
    return str(method)


def _joint_epsilon(mechanism: Any, k: int) -> float:
    """Total budget of the joint mechanism: the k rounds' budget, k * epsilon."""
    return k * float(mechanism.epsilon)


def _joint(mechanism: Any, problem: SelectionProblem, k: int) -> Any:
    lam = joint_lambda(_joint_epsilon(mechanism, k), problem.global_sensitivity, problem.monotone, k=k)
    return joint_levels(problem.scores, k, lam)


def top_k_privacy(mechanism: Mechanism, problem: SelectionProblem, k: int, *,
                  method: str | None = None) -> Privacy:
    """Guarantee of :func:`select_top_k` (the same ``method`` resolution).

    * peel / gumbel: the sum of the k rounds' guarantees (basic composition;
      round j's is ``mechanism.privacy`` of the problem restricted to m - j
      candidates, a public quantity).  For the exponential mechanism the
      result keeps the k epsilon-bounded-range rounds as its ``parts``, which
      the accountant composes more tightly.
    * joint: one exponential mechanism at the k rounds' total budget
      epsilon_J = k epsilon: epsilon_J-DP and epsilon_J-bounded-range.

    Parameters
    ----------
    mechanism : Mechanism
        The per-round mechanism (as in :func:`select_top_k`).
    problem : SelectionProblem
        The candidates' scores and sensitivities.
    k : int
        The number of candidates selected, 1 <= k <= m.
    method : {"joint", "peel", "gumbel"} or None, default=None
        As in :func:`select_top_k` (None: the same default).

    Returns
    -------
    Privacy
        The guarantee under the problem's relation.

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
    problem = check_problem(problem)
    k = _check_k(k, problem.n_candidates)
    if _method(method, mechanism, problem, k) == "joint":
        eps = _joint_epsilon(mechanism, k)
        return no_guarantee(problem) or Privacy(
            eps, 0.0, problem.relation,
            "joint exponential mechanism (Gillenwater et al. ICML 2022; mathematics page §10.2)",
            bounded_range=eps)
    m = problem.n_candidates
    total = mechanism.privacy(problem)
    for j in range(1, k):
        total = total + mechanism.privacy(restrict_problem(problem, np.arange(m - j)))
    return total


def select_top_k(mechanism: Mechanism, problem: SelectionProblem, k: int, *, method: str | None = None,
                 rng: SeedLike = None) -> np.ndarray:
    """k distinct candidates, most preferred first: the joint EM, one-shot Gumbel top-k or peeling.

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

    Notes
    -----
    The joint method draws the ordered tuple s with

    .. math::

        P[s] \\propto \\exp\\Bigl(-\\frac{k\\varepsilon}{2\\Delta^*} \\max_{i \\le k}
        \\bigl(u_{(i)} - u_{s_i}\\bigr)\\Bigr),

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
    problem = check_problem(problem)
    k = _check_k(k, problem.n_candidates)
    chosen_method = _method(method, mechanism, problem, k)
    gen = check_random_state(rng)
    if chosen_method == "joint":
        return _joint(mechanism, problem, k).sample(1, gen)[0]
    if chosen_method == "gumbel":
        scale, noise = cast(NoisyMaxMechanism, mechanism).calibrate(problem)  # checked by _method
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


_MAX_TUPLES = 200_000


def top_k_log_probabilities(mechanism: Mechanism, problem: SelectionProblem, k: int, *,
                            method: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of :func:`select_top_k`'s ordered tuple, on small problems.

    Returns ``(tuples, log_p)``: every ordered k-tuple of distinct candidates
    (lexicographic, shape (m!/(m-k)!, k)) and its log-probability.  Joint:
    log P[s] = -lambda G(s) - log Z, Z from the level counts (no
    enumeration); peel / gumbel: the product over rounds of the mechanism's
    exact law on the restricted problems (gumbel has the peeling-EM law).
    At most 200,000 tuples.

    Parameters
    ----------
    mechanism : Mechanism
        The per-round mechanism (as in :func:`select_top_k`).
    problem : SelectionProblem
        The candidates' scores and sensitivities.
    k : int
        The tuple length, 1 <= k <= m, with m!/(m-k)! <= 200,000.
    method : {"joint", "peel", "gumbel"} or None, default=None
        As in :func:`select_top_k`.

    Returns
    -------
    tuples : numpy.ndarray of int, shape (m!/(m-k)!, k)
        Every ordered k-tuple of distinct candidates, lexicographic.
    log_p : numpy.ndarray of float, shape (m!/(m-k)!,)
        ``log P[select_top_k(...) = tuples[i]]``.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([2.0, 1.0, 0.0])
    >>> tuples, log_p = top_k_log_probabilities(dpselect.ExponentialMechanism(1.0), p, 2, method="peel")
    >>> tuples.shape, round(float(np.exp(log_p).sum()), 12)
    ((6, 2), 1.0)
    """
    problem = check_problem(problem)
    k = _check_k(k, problem.n_candidates)
    chosen_method = _method(method, mechanism, problem, k)
    m = problem.n_candidates
    if math.perm(m, k) > _MAX_TUPLES:
        raise ValueError(f"the exact law enumerates m!/(m-k)! = {math.perm(m, k)} tuples; at most {_MAX_TUPLES}")
    tuples = enumerate_tuples(m, k)
    if chosen_method == "joint":
        levels = _joint(mechanism, problem, k)
        return tuples, levels.log_probability_of_gap(levels.gap(tuples))
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
    return tuples, logp


@dataclass(frozen=True)
class TopK:
    """:func:`select_top_k` as a mechanism over ordered k-tuples (for exact laws and audits).

    ``log_probabilities(problem)`` is indexed like :func:`top_k_log_probabilities`'s
    tuples, so :func:`dpselect.analysis.audit` applies unchanged.

    Parameters
    ----------
    mechanism : Mechanism
        The per-round mechanism.
    k : int
        The tuple length, 1 <= k <= m.
    method : {"joint", "peel", "gumbel"} or None, default=None
        As in :func:`select_top_k`.

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

    def outputs(self, problem: SelectionProblem) -> np.ndarray:
        """The ordered tuples, in the order of :meth:`log_probabilities`.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' scores and sensitivities.

        Returns
        -------
        numpy.ndarray of int, shape (m!/(m-k)!, k)
            Every ordered k-tuple of distinct candidates, lexicographic.
        """
        return top_k_log_probabilities(self.mechanism, problem, self.k, method=self.method)[0]

    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact log-probabilities of the ordered tuples.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' scores and sensitivities.

        Returns
        -------
        numpy.ndarray of float, shape (m!/(m-k)!,)
            One per tuple of :meth:`outputs`.
        """
        return top_k_log_probabilities(self.mechanism, problem, self.k, method=self.method)[1]

    def probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact probabilities of the ordered tuples (sum to 1).

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' scores and sensitivities.

        Returns
        -------
        numpy.ndarray of float, shape (m!/(m-k)!,)
            One per tuple of :meth:`outputs`.
        """
        return np.exp(self.log_probabilities(problem))

    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The guarantee of :meth:`select` (:func:`top_k_privacy`).

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' scores and sensitivities.

        Returns
        -------
        Privacy
            The guarantee under the problem's relation.
        """
        return top_k_privacy(self.mechanism, problem, self.k, method=self.method)
