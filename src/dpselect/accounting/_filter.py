"""The privacy filter of :class:`~dpselect.accounting.Accountant` and the float searches of its budget.

* :func:`_filter_budget`, :func:`_filter_total`: the approximate-zCDP privacy filter
  (Whitehouse, Ramdas, Rogers & Wu, ICML 2023; mathematics §10.1);
* :func:`_largest_finite`, :func:`_bisect`: the largest float accepted by a monotone test
  (the accountant's ``remaining`` and the filter's zCDP budget).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..privacy import Privacy
from .composition import zcdp_epsilon
from .ledger import Ledger


def _largest_finite(fits: Callable[[float], bool]) -> float:
    """The largest finite x >= 0 with fits(x) (fits(0) holds, fits(inf) does not): doubling, then bisection."""
    lo, hi = 0.0, 1.0
    while fits(hi):
        lo, hi = hi, hi * 2.0
        if math.isinf(hi):
            return lo
    return _bisect(fits, lo, hi)


def _bisect(fits: Callable[[float], bool], lo: float, hi: float) -> float:
    """The largest float x in [lo, hi) with fits(x), given fits(lo) and not fits(hi) (fits monotone)."""
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid in (lo, hi):
            return lo
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)


def _filter_budget(budget: Privacy) -> tuple[float, float] | None:
    """(rho_B, delta_F) of the approximate-zCDP filter: zcdp_epsilon(rho_B, delta/2) <= epsilon, delta_F = delta/2.

    None for a pure budget (the filter is then basic composition) or an
    infinite epsilon (rho_B = inf).
    """
    if budget.delta == 0.0:
        return None
    half = budget.delta / 2.0
    if math.isinf(budget.epsilon):
        return math.inf, half
    fits = lambda r: zcdp_epsilon(r, half) <= budget.epsilon
    return _largest_finite(fits), half


def _filter_total(ledger: Ledger, filt: tuple[float, float] | None) -> Privacy:
    """What a filter has spent: its zCDP sum converted at the filter's delta, plus the declared deltas."""
    if filt is None or not (ledger.n_br or ledger.n_zc or ledger.n_pure or ledger.plain_counts):
        return Privacy(ledger.eps_all.value, ledger.delta_all.value, ledger.relation, "basic composition (filter)")
    rho, dlt = ledger.filter_totals()
    return Privacy(
        math.inf if math.isinf(rho) else zcdp_epsilon(rho, filt[1]),
        dlt + filt[1],
        ledger.relation,
        "approximate-zCDP privacy filter (Whitehouse, Ramdas, Rogers & Wu 2023)",
    )
