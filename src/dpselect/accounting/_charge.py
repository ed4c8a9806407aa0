"""The one call apps make before drawing randomness: :func:`charge` an optional accountant.

:func:`repeated` is the one rule for ``size=`` draws: ``size`` independent
releases are ``size`` charges, composed by the accountant's own rule.
"""

from __future__ import annotations

import math
from typing import Any

from .._params import SIZE, Rule, validate_params
from ..privacy import Privacy
from ._rules import PRIVACY
from .accountant import Accountant, BudgetExceededError


def _accountant(value: Any, name: str) -> Accountant | None:
    if value is not None and not isinstance(value, Accountant):
        raise TypeError(f"{name} must be a dpselect.Accountant or None, got {type(value).__name__}")
    return value


@validate_params({"privacy": PRIVACY, "size": SIZE})
def repeated(privacy: Privacy, size: int | None = None) -> Privacy:
    """The guarantee of ``size`` independent runs of a mechanism with guarantee ``privacy``.

    ``size`` draws are ``size`` releases (mathematics §10.1): the result is
    ``privacy`` composed with itself ``size`` times, keeping every atom
    (:attr:`Privacy.atoms`) so that an :class:`Accountant` composes them by
    its own rule (basic, privacy filter or optimal); its ``epsilon`` and
    ``delta`` are the basic sums (Dwork & Roth 2014, Thm 3.16).

    Parameters
    ----------
    privacy : Privacy
        The guarantee of one draw.
    size : int or None, default=None
        The number of draws (>= 1); None is one draw (``privacy`` itself).

    Returns
    -------
    Privacy
        ``privacy`` for ``size`` None or 1, else the composition of ``size`` copies.

    Raises
    ------
    ValueError
        If the composed delta reaches 1 (no guarantee).

    Examples
    --------
    >>> from dpselect import Accountant, Privacy
    >>> print(repeated(Privacy(0.1), 3))
    0.3-DP
    >>> round(Accountant.compose([repeated(Privacy(0.05), 100)], 1e-6).epsilon, 3)  # optimal, not 5.0
    2.208
    """
    if size is None or size == 1:
        return privacy
    atoms = privacy.atoms * size
    delta = math.fsum(a.delta for a in atoms)
    if delta >= 1.0:
        raise ValueError(f"{size} draws of {privacy} compose to delta {delta} >= 1 (no guarantee)")
    rho = None if privacy.rho is None else privacy.rho * size
    return Privacy(
        math.fsum(a.epsilon for a in atoms),
        delta,
        privacy.relation,
        f"{size} draws of {privacy.source or privacy}",
        rho,
        parts=atoms,
    )


@validate_params(
    {"accountant": Rule("None or a dpselect.Accountant", check=_accountant), "privacy": PRIVACY, "size": SIZE}
)
def charge(accountant: Accountant | None, privacy: Privacy, *, size: int | None = None) -> Privacy | None:
    """Charge ``accountant`` (if given) with ``size`` draws of ``privacy``: the one call apps make before drawing.

    Parameters
    ----------
    accountant : Accountant or None
        The budget to charge; ``None`` charges nothing.
    privacy : Privacy
        The guarantee of one draw of the mechanism about to run.
    size : int or None, default=None
        The number of independent draws the caller returns (None: one);
        they are charged as ``size`` releases (:func:`repeated`), composed by
        the accountant's own rule, before any randomness is drawn.

    Returns
    -------
    Privacy or None
        The guarantee charged (:func:`repeated`); None without an accountant.

    Raises
    ------
    TypeError
        If ``accountant`` is neither an :class:`Accountant` nor None.
    BudgetExceededError
        If the charge does not fit in the remaining budget, or its ``size``
        draws compose to delta >= 1 (nothing is recorded).

    Examples
    --------
    >>> from dpselect import Accountant, Privacy
    >>> acc = Accountant(0.1)
    >>> charge(acc, Privacy(0.1), size=2)
    Traceback (most recent call last):
    ...
    dpselect.accounting.BudgetExceededError: spending 0.2-DP would exceed the budget 0.1-DP (already spent 0-DP)
    """
    if accountant is None:
        return None
    try:
        total = repeated(privacy, size)
    except ValueError as err:
        raise BudgetExceededError(f"{err}: would exceed the budget {accountant.budget}") from None
    accountant.spend(total)
    return total
