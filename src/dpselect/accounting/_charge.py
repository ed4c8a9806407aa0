"""The one call apps make before drawing randomness: :func:`charge` an optional accountant."""

from __future__ import annotations

from .._params import ACCOUNTANT, validate_params
from ..privacy import Privacy
from ._rules import PRIVACY
from .accountant import Accountant


@validate_params({"accountant": ACCOUNTANT, "privacy": PRIVACY})
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
    if accountant is not None:
        accountant.spend(privacy)
