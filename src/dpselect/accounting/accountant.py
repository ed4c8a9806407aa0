"""The budget accountant: composition across calls, bounded-range and zCDP parts composed tightly."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from .._params import DELTA, Rule, options
from ..privacy import Privacy
from ._filter import _filter_budget, _filter_fits, _filter_total, _first_filter, _largest
from ._rules import epsilon_inf
from .ledger import Ledger

_MODES = ("tight", "nonadaptive", "filter", "basic")
#: How charges compose (see :class:`Accountant`).
Composition = Literal["tight", "nonadaptive", "filter", "basic"]


class BudgetExceededError(ValueError):
    """Raised by :meth:`Accountant.spend` when a charge would exceed the budget.

    It is raised before the charge is recorded, and the library charges the
    accountant before drawing any randomness, so a refused call releases
    nothing.
    """


class Accountant:
    """A privacy budget tracked across calls (sequential composition).

    The charges share one neighbour relation (add/remove or replace neighbours: a
    charge under another relation is refused); the composition rules are proved in
    mathematics §10.1.

    Parameters
    ----------
    epsilon : float
        The total epsilon budget, > 0 (``inf`` for "track only").
    delta : float, default=0.0
        The total delta budget, in [0, 1).
    composition : {"filter", "tight", "nonadaptive", "basic"}, default="filter"
        How charges compose (see Notes for which one is valid when):
        "filter", a privacy filter valid when each charge's parameters are
        chosen from earlier outputs (fully adaptive), never worse than basic
        composition for pure charges; "tight", the best valid rule for
        privacy parameters fixed in advance (a plan of charges);
        "nonadaptive", tighter still for exponential mechanisms, valid
        **only when every charge (mechanism and parameters) is fixed in
        advance**, none chosen from earlier answers; "basic", epsilons and
        deltas add.

    Notes
    -----
    **"filter"** (the default): valid when the next charge (its epsilon,
    delta, mechanism) is chosen from earlier outputs, e.g. from
    :attr:`remaining`.  With delta_F = delta / 2 (or delta - delta_1 when the
    first charge declares delta_1 > delta / 2), a charge is accepted when,
    for the whole sequence of atoms (:attr:`Privacy.atoms`) with it, the
    declared deltas add up to at most delta - delta_F and either

    * their epsilons add up to at most epsilon (the basic region; Rogers,
      Roth, Ullman & Vadhan 2016), or
    * their zCDP parameters (eta-BR: eta^2/8; rho-zCDP: rho; (epsilon_t,
      delta_t)-DP: epsilon_t^2/2) add up to at most rho_B, the largest rho
      with ``zcdp_epsilon(rho, delta_F) <= epsilon`` (the approximate-zCDP
      filter of Whitehouse, Ramdas, Rogers & Wu, ICML 2023).

    The interaction is (epsilon, delta)-DP (mathematics §10.1); delta = 0:
    basic composition.  :attr:`spent` is the smaller of the basic sums
    (sum epsilon_t, sum delta_t) and the zCDP region's figure
    (``zcdp_epsilon(sum rho_t, delta_F)``, sum delta_t + delta_F).

    **"tight"**: for a plan of charges whose privacy parameters are fixed
    before the interaction starts (the mechanisms and their data may still be
    chosen adaptively), e.g. :meth:`compose`.  The spent guarantee is
    :func:`~dpselect.accounting.compose_privacy` of every charge with the
    budget's delta available, the best of

    * basic sequential composition (Dwork & Roth 2014, Thm 3.16): epsilons
      add, deltas add — the only route for a pure budget (delta = 0);
    * the optimal composition of the pure charges without a certificate
      (permute-and-flip, Laplace noisy max, counts; Kairouz, Oh & Viswanath
      2015, Murtagh & Vadhan 2016:
      :func:`~dpselect.accounting.pure_composition_epsilon`);
    * charges carrying a bounded-range certificate eta (the exponential
      mechanism: eta = epsilon) or a zCDP rho, and pure charges
      (epsilon^2/2-zCDP), composed in zCDP (Cesar & Rogers 2021, Bun &
      Steinke 2016) and converted **once**, at the delta the budget has left,
      by :func:`~dpselect.accounting.zcdp_epsilon` (Canonne, Kamath & Steinke
      2020);
    * bounded-range charges by Dong, Durfee & Rogers (2020, Prop. 4), or
      their adaptive optimum by dynamic programming when they share one eta
      (:func:`~dpselect.accounting.br_adaptive_epsilon`), the pure charges
      joining that recursion as randomized responses taken first (the worst
      order);

    and combinations of these, the free delta shared between them.  These
    theorems do **not** hold when a charge's parameters are chosen from
    earlier outputs (fully adaptive composition: a branch can spend
    the delta that another branch's optimal composition relies on).  A
    declared delta is always added (a charge that cannot fit is refused); a
    composed charge (e.g. ``top_k_privacy``) is split into its atoms
    (:attr:`Privacy.atoms`) unless they add up to less than the charge.

    **"nonadaptive"**: valid only when the whole sequence of mechanisms and
    their parameters is fixed before the first one runs (a batch: no
    mechanism, query, candidate set or epsilon is chosen from an earlier
    answer).  Every rule of "tight", plus bounded-range charges sharing one
    eta composed by their exact non-adaptive optimum
    (:func:`~dpselect.accounting.br_nonadaptive_epsilon`: Dong, Durfee &
    Rogers 2020, Thm 3; k <= 500), the other charges as in "tight" (pure
    ones by their optimal composition, already exact) at a share of the free
    delta.

    **"basic"**: epsilons and deltas add; valid in every case above.

    Budget checks compare the composed (epsilon, delta) with the budget
    exactly (sums correctly rounded), with no slack.  :attr:`remaining` is the
    largest pure epsilon and the largest delta that the next check would
    accept.

    Cost: running sums of the charges (:class:`~dpselect.accounting.ledger.Ledger`);
    a check tries closed forms first (about 0.3 ms, ``benchmarks/bench_accountant.py``).

    Thread safety: :meth:`spend` checks the budget and records the charge
    under one lock, so threads sharing an accountant can never jointly
    overspend it (at most the charges that fit are recorded, whatever the
    interleaving).  This holds within one process only: an accountant is an
    in-memory object, so copies in other processes (``multiprocessing``,
    Dask or joblib workers, pickled estimators) each track their own
    charges and do not see one another.  To share one budget across
    processes, split it beforehand into per-process accountants whose
    budgets add up to the total (sequential composition), or charge a
    single accountant in the parent process before dispatching work.

    Examples
    --------
    >>> import dpselect
    >>> acc = dpselect.Accountant(1.0)
    >>> acc.spend(dpselect.Privacy(0.4))
    >>> print(acc.spent)
    0.4-DP
    >>> round(acc.remaining.epsilon, 12)
    0.6
    >>> acc.spend(dpselect.Privacy(0.7))
    Traceback (most recent call last):
    ...
    dpselect.accounting.BudgetExceededError: spending 0.7-DP would exceed the budget 1-DP (already spent 0.4-DP)

    A hundred exponential mechanisms at epsilon = 0.05 (basic composition: 5.0),
    by the default privacy filter (each epsilon may follow from earlier outputs),
    then as a plan fixed in advance (zCDP: 1.1429; their adaptive optimum,
    bounded on a grid), and a hundred permute-and-flip calls (optimal
    composition of pure mechanisms):

    >>> acc = dpselect.Accountant(2.0, delta=1e-6)
    >>> for _ in range(100):
    ...     acc.spend(dpselect.Privacy(0.05, bounded_range=0.05))
    >>> round(acc.spent.epsilon, 4), acc.spent.delta
    (1.1796, 5e-07)
    >>> acc = dpselect.Accountant(2.0, delta=1e-6, composition="tight")
    >>> for _ in range(100):
    ...     acc.spend(dpselect.Privacy(0.05, bounded_range=0.05))
    >>> round(acc.spent.epsilon, 4), acc.spent.delta
    (1.0744, 1e-06)
    >>> round(dpselect.Accountant.compose([dpselect.Privacy(0.05)] * 100, 1e-6).epsilon, 3)
    2.208

    The same hundred exponential mechanisms fixed in advance (non-adaptive optimum):

    >>> acc = dpselect.Accountant(2.0, delta=1e-6, composition="nonadaptive")
    >>> for _ in range(100):
    ...     acc.spend(dpselect.Privacy(0.05, bounded_range=0.05))
    >>> round(acc.spent.epsilon, 4)
    1.0577
    """

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": epsilon_inf(),
        "delta": DELTA,
        "composition": options(*_MODES),
    }

    def __init__(self, epsilon: float, delta: float = 0.0, *, composition: Composition = "filter") -> None:
        rules = self._parameter_constraints
        self._budget = Privacy(rules["epsilon"](epsilon, "epsilon"), rules["delta"](delta, "delta"))
        self._composition: Composition = rules["composition"](composition, "composition")
        self._charges: list[Privacy] = []
        self._ledger = Ledger()  # the charges' sums: a check or a spend costs O(1), not O(number of charges)
        # the filter's zCDP budget (fixed in advance): rho_B with zcdp_epsilon(rho_B, delta / 2) <= epsilon
        self._filter = _filter_budget(self._budget) if composition == "filter" else None
        self._settled = composition != "filter" or self._budget.delta == 0.0  # delta_F fixed (first charge)
        # One re-entrant lock around every read-check-record of the charges (spend calls check).
        self._lock = threading.RLock()

    @property
    def budget(self) -> Privacy:
        """The total budget."""
        return self._budget

    @property
    def composition(self) -> Composition:
        """The composition mode: "filter", "tight", "nonadaptive" or "basic"."""
        return self._composition

    @property
    def charges(self) -> tuple[Privacy, ...]:
        """Every guarantee spent so far, in order."""
        with self._lock:
            return tuple(self._charges)

    @staticmethod
    def compose(charges: Iterable[Privacy], delta: float = 0.0) -> Privacy:
        """The guarantee of running every mechanism in ``charges`` with ``delta`` available (see Notes).

        Parameters
        ----------
        charges : iterable of Privacy
            The guarantees of the mechanisms run, in any order (their
            privacy parameters fixed in advance).
        delta : float, default=0.0
            The total delta available, in [0, 1).

        Returns
        -------
        Privacy
            The composed guarantee
            (:func:`~dpselect.accounting.compose_privacy`).

        Examples
        --------
        >>> from dpselect import Accountant, Privacy
        >>> print(Accountant.compose([Privacy(0.3), Privacy(0.2)]))
        0.5-DP
        """
        return _composed(Ledger.of(charges), delta)

    def _total(self, ledger: Ledger, cheap: bool = False) -> Privacy:
        if self._composition == "filter":
            return _filter_total(ledger, self._budget, self._filter_for(ledger))
        return _composed(
            ledger, self._budget.delta, self._composition == "basic", cheap, self._composition == "nonadaptive"
        )

    def _filter_for(self, ledger: Ledger) -> tuple[float, float] | None:
        """The filter's (rho_B, delta_F): delta_F = delta / 2, or delta - delta_1 (first charge declaring more)."""
        return self._filter if self._settled else _first_filter(self._budget, self._filter, ledger)

    def _settle(self) -> None:
        """Fix delta_F once the first charge is recorded (it was chosen before any output)."""
        if not self._settled:
            self._filter, self._settled = self._filter_for(self._ledger), True

    def _fits(self, ledger: Ledger) -> bool:
        """Whether the charges in ``ledger`` fit the budget (exact comparisons, no slack)."""
        budget = self._budget
        if self._composition == "filter":
            return _filter_fits(ledger, budget, self._filter_for(ledger))
        try:
            for cheap in (True, False):
                total = self._total(ledger, cheap)
                if total.epsilon <= budget.epsilon and total.delta <= budget.delta:
                    return True
        except BudgetExceededError:
            return False
        return False

    def __sklearn_clone__(self) -> Accountant:
        """``sklearn.base.clone`` returns this accountant itself, not a copy.

        A budget is shared state: every estimator cloned from one that holds
        this accountant (by ``GridSearchCV``, ``cross_validate``, ``Pipeline``
        cloning, ...) must charge the same budget, or each clone could spend
        it again.  ``copy.deepcopy`` and pickling still make an independent
        copy (with its own charges), which a caller must not use to charge the
        same data's budget twice.
        """
        return self

    @property
    def spent(self) -> Privacy:
        """The guarantee of everything charged so far (``Privacy(0.0)`` before any charge)."""
        with self._lock:
            return self._total(self._ledger)

    @property
    def remaining(self) -> Privacy:
        """What the next check would still accept.

        The largest epsilon of a pure charge ``Privacy(epsilon)`` and the largest delta of a
        charge ``Privacy(0, delta)`` that fit.
        """
        with self._lock:
            fits = lambda p: self._fits(self._ledger.copy().add(p))
            return Privacy(
                _largest(fits, lambda e: Privacy(e), self._budget.epsilon),
                _largest(fits, lambda d: Privacy(0.0, d), self._budget.delta),
            )

    @property
    def remaining_epsilon(self) -> float:
        """The epsilon left in the budget (a number; ``remaining.epsilon``)."""
        return self.remaining.epsilon

    @property
    def remaining_delta(self) -> float:
        """The delta left in the budget (a number; ``remaining.delta``)."""
        return self.remaining.delta

    def check(self, privacy: Privacy) -> None:
        """Raise :class:`BudgetExceededError` if spending ``privacy`` would exceed the budget.

        Parameters
        ----------
        privacy : Privacy
            The guarantee of the mechanism about to run; nothing is recorded.

        Raises
        ------
        BudgetExceededError
            If the composition of the charges so far and ``privacy`` exceeds
            the budget (compared exactly, no slack).
        TypeError
            If ``privacy`` is not a :class:`~dpselect.privacy.Privacy`.
        """
        if not isinstance(privacy, Privacy):
            raise TypeError(f"privacy must be a Privacy, got {type(privacy).__name__}")
        with self._lock:
            if not self._fits(self._ledger.copy().add(privacy)):
                raise BudgetExceededError(
                    f"spending {privacy} would exceed the budget {self._budget} (already spent {self.spent})"
                )

    def spend(self, privacy: Privacy) -> None:
        """Charge ``privacy``; raise :class:`BudgetExceededError` (recording nothing) if it does not fit.

        The check and the record happen under one lock (atomic across threads of one process).

        Parameters
        ----------
        privacy : Privacy
            The guarantee of the mechanism about to run (charge it before
            drawing any randomness).
        """
        with self._lock:
            self.check(privacy)
            self._ledger.add(privacy)
            self._charges.append(privacy)
            self._settle()

    def record(self, privacy: Privacy) -> None:
        """Record a cost that was already incurred, even beyond the budget (no check; nothing is refused).

        For a mechanism that learns only after running that it cost more than
        it was charged (e.g. a private search whose candidate reported no
        guarantee): the accountant then shows the true spend (``spent`` may
        exceed the budget, or be infinite) and refuses every later charge
        that does not fit.

        Parameters
        ----------
        privacy : Privacy
            The cost incurred on top of the charges so far.
        """
        if not isinstance(privacy, Privacy):
            raise TypeError(f"privacy must be a Privacy, got {type(privacy).__name__}")
        with self._lock:
            self._ledger.add(privacy)
            self._charges.append(privacy)
            self._settle()

    def __getstate__(self) -> dict[str, Any]:
        # A lock cannot be pickled or deep-copied: a copy gets its own lock (and its own charges).
        with self._lock:
            state = self.__dict__.copy()
            state["_charges"] = list(self._charges)
            state["_ledger"] = self._ledger.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_filter", None)  # pickled before privacy filters existed
        self.__dict__.setdefault("_settled", True)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget}, charges={len(self.charges)})"


def _composed(
    ledger: Ledger, delta: float, basic: bool = False, cheap: bool = False, nonadaptive: bool = False
) -> Privacy:
    try:
        return ledger.compose(delta, basic=basic, cheap=cheap, nonadaptive=nonadaptive)
    except ValueError as err:
        if "delta" in str(err) and ">= 1" in str(err):
            raise BudgetExceededError(str(err)) from None
        raise
