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


def _filter_budget(budget: Privacy, first: float = 0.0) -> tuple[float, float] | None:
    """(rho_B, delta_F) of the zCDP region: zcdp_epsilon(rho_B, delta_F) <= epsilon.

    delta_F = delta - max(delta / 2, first), ``first`` the declared delta of
    the first charge (chosen before any output).  None when delta_F = 0 (a
    pure budget, or a first charge declaring at least delta: the filter is
    then its basic region); rho_B = inf for an infinite epsilon.
    """
    if budget.delta == 0.0:
        return None
    half = budget.delta - max(budget.delta / 2.0, first)
    if half <= 0.0:
        return None
    if math.isinf(budget.epsilon):
        return math.inf, half
    fits = lambda r: zcdp_epsilon(r, half) <= budget.epsilon
    return _largest_finite(fits), half


def _first_filter(budget: Privacy, default: tuple[float, float] | None, ledger: Ledger) -> tuple[float, float] | None:
    """The filter before its first charge is recorded: ``ledger`` holds at most that charge (delta_1)."""
    first = ledger.filter_totals()[1]
    return default if first <= budget.delta / 2.0 else _filter_budget(budget, first)


def _largest(fits: Callable[[Privacy], bool], make: Callable[[float], Privacy], hi: float) -> float:
    """The largest x in [0, hi] with fits(make(x)) (bisection on floats; 0 if none): ``remaining``."""
    test = lambda x: fits(make(x))
    if hi == 0.0 or not test(0.0):
        return 0.0
    if math.isinf(hi):
        return math.inf if test(math.inf) else _largest_finite(test)
    return hi if test(hi) else _bisect(test, 0.0, hi)


def _filter_fits(ledger: Ledger, budget: Privacy, filt: tuple[float, float] | None) -> bool:
    """Whether the charges lie in the privacy filter's region (mathematics §10.1, adaptive parameters).

    The declared deltas add up to at most delta - delta_F, and either the
    atoms' epsilons add up to at most epsilon (basic region) or their zCDP
    parameters to at most rho_B (zCDP region); sums compared exactly.
    """
    delta_f = 0.0 if filt is None else filt[1]
    if not ledger.delta_plain.le(budget.delta, ledger.delta_br, extra=(delta_f,)):
        return False
    if ledger.delta_zc.value == 0.0:  # the basic region
        if ledger.eps_plain.le(budget.epsilon, ledger.eps_br, ledger.eps_zc):
            return True
        pure = ledger.delta_all.value == 0.0 and ledger.delta_plain.value == 0.0 and ledger.delta_br.value == 0.0
        if pure and ledger.eps_all.le(budget.epsilon):
            return True
    return filt is not None and ledger.rho.le(filt[0], ledger.rho_pure, ledger.rho_approx)


def _filter_total(ledger: Ledger, budget: Privacy, filt: tuple[float, float] | None) -> Privacy:
    """What a filter reports as spent: the basic sums, or the zCDP region's figure when its epsilon is smaller.

    Basic: (sum epsilon_t, sum delta_t) of the atoms; zCDP region:
    (zcdp_epsilon(sum rho_t, delta_F), sum delta_t + delta_F).
    """
    rho, dlt = ledger.filter_totals()
    basic = ledger.basic_totals()
    if basic is None and filt is None:  # a converted zCDP delta in a pure budget: no region holds
        basic = (ledger.eps_all.value, ledger.delta_all.value)
    zc = None
    if filt is not None and (ledger.n_br or ledger.n_zc or ledger.n_pure or ledger.plain_counts):
        zc = math.inf if math.isinf(rho) else zcdp_epsilon(rho, filt[1])
    if zc is None or filt is None or (basic is not None and basic[0] <= zc):
        eps, dlt_b = basic if basic is not None else (math.inf, dlt)
        return Privacy(eps, dlt_b, ledger.relation, "basic composition (privacy filter)")
    return Privacy(
        zc, dlt + filt[1], ledger.relation, "approximate-zCDP privacy filter (Whitehouse, Ramdas, Rogers & Wu 2023)"
    )
