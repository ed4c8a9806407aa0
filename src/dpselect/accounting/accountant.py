"""The budget accountant: composition across calls, bounded-range and zCDP parts composed tightly."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from .._validation import check_delta, check_epsilon
from ..privacy import Privacy
from .composition import Ledger


class BudgetExceededError(ValueError):
    """Raised by :meth:`Accountant.spend` when a charge would exceed the budget.

    It is raised before the charge is recorded, and the library charges the
    accountant before drawing any randomness, so a refused call releases
    nothing.
    """


class Accountant:
    """A privacy budget tracked across calls (sequential composition).

    Parameters
    ----------
    epsilon : float
        The total epsilon budget, > 0 (``inf`` for "track only").
    delta : float, default=0.0
        The total delta budget, in [0, 1).
    composition : {"tight", "basic"}, default="tight"
        "tight": the best valid rule (see Notes); "basic": epsilons and deltas
        add.

    Notes
    -----
    The spent guarantee is :func:`~dpselect.accounting.composition.compose_privacy`
    of every charge with the budget's delta available, i.e. the best of

    * basic sequential composition (Dwork & Roth 2014, Thm 3.16): epsilons
      add, deltas add — the only route for a pure budget (delta = 0) and for
      guarantees without a certificate (e.g. permute-and-flip, Laplace RNM);
    * charges carrying a bounded-range certificate eta (the exponential
      mechanism: eta = epsilon) or a zCDP rho composed in zCDP
      (rho = sum eta^2/8 + sum rho; Cesar & Rogers 2021, Bun & Steinke 2016)
      and converted **once**, at the delta the budget has left, by the
      Renyi conversion :func:`~dpselect.accounting.zcdp_epsilon` (Canonne,
      Kamath & Steinke 2020; never above rho + 2 sqrt(rho ln(1/delta_c)));
    * bounded-range charges by Dong, Durfee & Rogers (2020, Prop. 4):
      eps = sum KL(eta_i) + sqrt(sum eta_i^2 ln(1/delta_c) / 2).

    Uncertified charges are added to the certified part's epsilon and delta
    (basic composition between the two groups).  A composed charge (e.g.
    ``top_k_privacy``, a sum of rounds) is split into its atoms
    (:attr:`Privacy.atoms`).  The theorems assume each charge's privacy
    parameters are fixed before the interaction starts (the mechanisms and
    their data may be chosen adaptively); with parameters chosen from earlier
    outputs use ``composition="basic"``, which is a valid privacy filter
    (Rogers, Roth, Ullman & Vadhan 2016).  Guarantees under different
    neighbour relations cannot be mixed.  Derivations: the documentation's
    mathematics page §10.1.

    Cost: the accountant keeps running sums of its charges
    (:class:`~dpselect.accounting.composition.Ledger`), so a check or a spend
    costs the same after 10^5 charges as after one (about 0.3 ms, mostly the
    zCDP conversion; ``benchmarks/bench_accountant.py``).

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

    A hundred exponential mechanisms at epsilon = 0.05 (basic composition: 5.0;
    rho = 100 * 0.05^2 / 8 converted at delta = 1e-6):

    >>> acc = dpselect.Accountant(2.0, delta=1e-6)
    >>> for _ in range(100):
    ...     acc.spend(dpselect.Privacy(0.05, bounded_range=0.05))
    >>> round(acc.spent.epsilon, 4), acc.spent.delta
    (1.1429, 1e-06)
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, composition: str = "tight") -> None:
        self._budget = Privacy(check_epsilon(epsilon, allow_inf=True), check_delta(delta))
        if composition not in ("tight", "basic"):
            raise ValueError(f"composition must be 'tight' or 'basic', got {composition!r}")
        self._composition = composition
        self._charges: list[Privacy] = []
        self._ledger = Ledger()  # the charges' sums: a check or a spend costs O(1), not O(number of charges)
        # One re-entrant lock around every read-check-record of the charges (spend calls check).
        self._lock = threading.RLock()

    @property
    def budget(self) -> Privacy:
        """The total budget."""
        return self._budget

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
            The guarantees of the mechanisms run, in any order.
        delta : float, default=0.0
            The total delta available, in [0, 1): the certified charges'
            zCDP / bounded-range parts are converted at what it leaves.

        Returns
        -------
        Privacy
            The composed guarantee
            (:func:`~dpselect.accounting.composition.compose_privacy`).

        Examples
        --------
        >>> from dpselect import Accountant, Privacy
        >>> print(Accountant.compose([Privacy(0.3), Privacy(0.2)]))
        0.5-DP
        """
        return Accountant._composed(Ledger.of(charges), delta)

    @staticmethod
    def _composed(ledger: Ledger, delta: float, basic: bool = False) -> Privacy:
        try:
            return ledger.compose(delta, basic=basic)
        except ValueError as err:
            if "delta" in str(err) and ">= 1" in str(err):
                raise BudgetExceededError(str(err)) from None
            raise

    def _total(self, ledger: Ledger) -> Privacy:
        return self._composed(ledger, self._budget.delta, self._composition == "basic")

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
        """The budget left: (budget epsilon - spent epsilon, budget delta - spent delta), floored at 0."""
        spent = self.spent
        return Privacy(
            max(self._budget.epsilon - spent.epsilon, 0.0),
            max(self._budget.delta - spent.delta, 0.0),
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
            the budget.
        TypeError
            If ``privacy`` is not a :class:`~dpselect.privacy.Privacy`.
        """
        if not isinstance(privacy, Privacy):
            raise TypeError(f"privacy must be a Privacy, got {type(privacy).__name__}")
        with self._lock:
            total = self._total(self._ledger.copy().add(privacy))
            # A relative slack of 1e-12 absorbs floating-point sums of shares that add up to the budget.
            slack = 1.0 + 1e-12
            if total.epsilon > self._budget.epsilon * slack or total.delta > self._budget.delta * slack:
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
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget}, charges={len(self.charges)})"


def charge(accountant: Accountant | None, privacy: Privacy) -> None:
    """Charge ``accountant`` (if given) with ``privacy``: the one call apps make before drawing randomness.

    Parameters
    ----------
    accountant : Accountant or None
        The budget to charge; ``None`` charges nothing.
    privacy : Privacy
        The guarantee of the mechanism about to run.

    Raises
    ------
    TypeError
        If ``accountant`` is neither an :class:`Accountant` nor None.
    BudgetExceededError
        If ``privacy`` does not fit in the remaining budget (nothing is
        recorded).
    """
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a dpselect.Accountant or None, got {type(accountant).__name__}")
    accountant.spend(privacy)
