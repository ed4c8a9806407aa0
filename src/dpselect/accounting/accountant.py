"""The budget accountant: sequential composition across calls, zCDP parts composed in rho."""

from __future__ import annotations

import math
import threading
from typing import Any

from .._validation import check_delta, check_epsilon
from ..privacy import Privacy


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
    epsilon
        float > 0, the total epsilon budget (``inf`` for "track only").
    delta
        float in [0, 1), the total delta budget.

    Notes
    -----
    Pure and approximate guarantees compose by basic sequential composition
    (Dwork & Roth 2014, Thm 3.16): epsilons add, deltas add.  Guarantees that
    carry a zCDP parameter (``Privacy.rho``, e.g. Laplace-log-normal noise,
    SPEC §2.5) compose in rho (Bun & Steinke 2016, Lemma 2.3) and are converted
    once, with the sum of their deltas:

        spent = (sum eps_i + min(sum eps_z, rho + 2 sqrt(rho ln(1/delta_z))),
                 sum delta_i + delta_z),

    rho = sum rho_z, delta_z = sum delta_z (indices i: guarantees without rho;
    z: with rho).  This is never larger than adding every epsilon.  Guarantees
    under different neighbour relations cannot be mixed.

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
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self._budget = Privacy(check_epsilon(epsilon, allow_inf=True), check_delta(delta))
        self._charges: list[Privacy] = []
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
    def compose(charges: Any) -> Privacy:
        """The guarantee of running every mechanism in ``charges`` (see Notes)."""
        charges = list(charges)
        relations = {c.relation for c in charges if c.relation is not None}
        if len(relations) > 1:
            raise ValueError(f"cannot compose guarantees under different neighbour relations {sorted(relations)}")
        relation = relations.pop() if relations else None
        plain = [c for c in charges if c.rho is None]
        zcdp = [c for c in charges if c.rho is not None]
        eps = math.fsum(c.epsilon for c in plain)
        delta = math.fsum(c.delta for c in plain)
        if zcdp:
            rho = math.fsum(c.rho or 0.0 for c in zcdp)
            delta_z = math.fsum(c.delta for c in zcdp)
            eps_z = math.fsum(c.epsilon for c in zcdp)
            if delta_z > 0.0:
                eps_z = min(eps_z, rho + 2.0 * math.sqrt(rho * -math.log(min(delta_z, 1.0))))
            eps += eps_z
            delta += delta_z
        if delta >= 1.0:
            raise BudgetExceededError(f"composed delta {delta!r} is >= 1 (no guarantee)")
        return Privacy(eps, delta, relation, "sequential composition (zCDP parts composed in rho)")

    @property
    def spent(self) -> Privacy:
        """The guarantee of everything charged so far (``Privacy(0.0)`` before any charge)."""
        return self.compose(self.charges)

    @property
    def remaining(self) -> Privacy:
        """The budget left: (budget epsilon - spent epsilon, budget delta - spent delta), floored at 0."""
        spent = self.spent
        return Privacy(
            max(self._budget.epsilon - spent.epsilon, 0.0),
            max(self._budget.delta - spent.delta, 0.0),
        )

    def check(self, privacy: Privacy) -> None:
        """Raise :class:`BudgetExceededError` if spending ``privacy`` would exceed the budget."""
        if not isinstance(privacy, Privacy):
            raise TypeError(f"privacy must be a Privacy, got {type(privacy).__name__}")
        with self._lock:
            total = self.compose([*self._charges, privacy])
            # A relative slack of 1e-12 absorbs floating-point sums of shares that add up to the budget.
            slack = 1.0 + 1e-12
            if total.epsilon > self._budget.epsilon * slack or total.delta > self._budget.delta * slack:
                raise BudgetExceededError(
                    f"spending {privacy} would exceed the budget {self._budget} (already spent {self.spent})"
                )

    def spend(self, privacy: Privacy) -> None:
        """Charge ``privacy``; raise :class:`BudgetExceededError` (recording nothing) if it does not fit.

        The check and the record happen under one lock (atomic across threads of one process).
        """
        with self._lock:
            self.check(privacy)
            self._charges.append(privacy)

    def __getstate__(self) -> dict[str, Any]:
        # A lock cannot be pickled or deep-copied: a copy gets its own lock (and its own charges).
        with self._lock:
            state = self.__dict__.copy()
            state["_charges"] = list(self._charges)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget}, charges={len(self.charges)})"


def charge(accountant: Accountant | None, privacy: Privacy) -> None:
    """Charge ``accountant`` (if given) with ``privacy``: the one call apps make before drawing randomness."""
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a dpselect.Accountant or None, got {type(accountant).__name__}")
    accountant.spend(privacy)
