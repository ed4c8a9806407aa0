"""The valid composition routes of a ledger's sums and the choice of the best one.

:class:`_Routes` is the base of :class:`~dpselect.accounting.ledger.Ledger`: from the
running sums and counts the ledger keeps it builds every candidate route of
:func:`~dpselect.accounting.compose_privacy` (routes 1-7) and returns the one with the
smallest epsilon within the delta budget.
"""

from __future__ import annotations

import math

from ..privacy import Privacy
from ._exact_sum import _ExactSum
from .bounded_range import _br_with_pure_epsilon, br_adaptive_epsilon, br_nonadaptive_epsilon
from .composition import _br_epsilon, zcdp_epsilon
from .optimal import _groups, _pure_epsilon

_SPLITS = (0.5, 0.9, 0.1, 0.99, 0.01)  # shares of the free delta given to the pure charges' optimal composition

#: A candidate route: (epsilon, delta, source).
_Route = tuple[float, float, str]


class _Routes:
    """The routes of :func:`~dpselect.accounting.compose_privacy` over the sums a ledger keeps."""

    relation: str | None
    n_br: int
    n_zc: int
    n_pure: int
    plain_counts: dict[float, int]  # epsilon -> number of uncertified atoms
    br_counts: dict[float, int]  # eta -> number of bounded-range atoms
    eps_all: _ExactSum  # basic composition of the charges
    delta_all: _ExactSum
    eps_plain: _ExactSum  # atoms without a certificate
    delta_plain: _ExactSum
    eps_approx: _ExactSum  # ... of them, those with delta > 0 (and their sum eps^2/2)
    rho_approx: _ExactSum
    rho_pure: _ExactSum  # ... of them, those with delta = 0: sum eps^2/2
    eps_zc: _ExactSum  # atoms with a zCDP rho
    delta_zc: _ExactSum
    rho: _ExactSum  # sum eta^2/8 + sum rho
    br_eta: _ExactSum  # bounded-range atoms: sum eta, sum KL(eta), sum eta^2, their declared deltas
    br_kl: _ExactSum
    br_eta_sq: _ExactSum
    delta_br: _ExactSum
    eps_br: _ExactSum  # ... and their epsilons (the privacy filter's basic region)

    def _compose(self, budget_delta: float, basic: bool, cheap: bool, nonadaptive: bool) -> Privacy:
        routes: list[_Route] = [(self.eps_all.value, self.delta_all.value, "basic composition")]
        eps_plain, delta_fixed = self.eps_plain.value, self.delta_plain.value + self.delta_br.value
        # the delta left for conversions, stepped down until delta_fixed + slack does not exceed the budget
        slack = max(budget_delta - delta_fixed, 0.0)
        while slack > 0.0 and delta_fixed + slack > budget_delta:
            slack = math.nextafter(slack, 0.0)
        delta_z, rho = self.delta_zc.value, self.rho.value
        certified = bool(self.n_br or self.n_zc) and not basic
        if certified:
            routes += self._certified_routes(eps_plain, delta_fixed, slack, delta_z, rho, cheap)
        if not basic and self.n_pure >= 2 and slack > 0.0 and not math.isinf(self.rho_pure.value):
            routes.append(
                (
                    self.eps_approx.value + zcdp_epsilon(rho + self.rho_pure.value, slack),
                    delta_fixed + slack,
                    "zCDP (pure epsilon-DP is epsilon^2/2-zCDP, Bun-Steinke 2016)",
                )
            )
        if not (basic or cheap):
            routes += self._pure_routes(eps_plain, delta_fixed, slack, delta_z, rho, certified)
        if nonadaptive and len(self.br_counts) == 1 and slack - delta_z > 0.0 and not math.isinf(eps_plain):
            routes += self._nonadaptive_routes(eps_plain, delta_fixed, slack, delta_z)
        # within the delta budget if any route is (the basic route may not be); then the smallest epsilon
        within = [r for r in routes if r[1] <= budget_delta] or routes
        least = min(r[0] for r in within)  # the smallest epsilon; near-ties (1e-9) go to the smaller delta
        eps, dlt, source = min((r for r in within if r[0] <= least * (1.0 + 1e-9)), key=lambda r: (r[1], r[0]))
        if dlt >= 1.0:
            raise ValueError(f"composed delta {dlt!r} is >= 1 (no guarantee)")
        return Privacy(eps, dlt, self.relation, source)

    def _eps_cert(self, d_c: float, rho: float, delta_z: float, cheap: bool, recursion: bool = True) -> float:
        """The certified atoms at free delta d_c.

        zCDP, or zCDP atoms basic + bounded-range composition (Prop. 4, or the recursion:
        one grid per delta, so route 5's shares do without it).
        """
        best = zcdp_epsilon(rho, d_c) if d_c > 0.0 else math.inf
        if self.n_br and d_c - delta_z > 0.0:
            best = min(
                best,
                self.eps_zc.value
                + _br_epsilon(self.br_eta.value, self.br_kl.value, self.br_eta_sq.value, d_c - delta_z),
            )
            if recursion and not cheap and len(self.br_counts) == 1 and self.n_br >= 2:  # one eta
                ((eta, n),) = self.br_counts.items()
                if eta > 0.0:
                    best = min(best, self.eps_zc.value + br_adaptive_epsilon(eta, n, d_c - delta_z))
        return best

    def _certified_routes(
        self, eps_plain: float, delta_fixed: float, slack: float, delta_z: float, rho: float, cheap: bool
    ) -> list[_Route]:
        """Routes 2 and 3: the plain atoms basic, the certified ones in zCDP or bounded-range composition."""
        routes: list[_Route] = []
        for delta_c in {d for d in (slack, delta_z) if d > 0.0}:
            routes.append(
                (
                    eps_plain + zcdp_epsilon(rho, delta_c),
                    delta_fixed + delta_c,
                    "basic composition + zCDP (bounded-range and zCDP parts, converted once)",
                )
            )
        if self.n_br and slack - delta_z > 0.0:
            routes.append(
                (
                    eps_plain + self._eps_cert(slack, rho, delta_z, cheap),
                    delta_fixed + slack,
                    "basic composition + bounded-range composition (Dong-Durfee-Rogers 2020)",
                )
            )
        return routes

    def _pure_routes(
        self, eps_plain: float, delta_fixed: float, slack: float, delta_z: float, rho: float, certified: bool
    ) -> list[_Route]:
        """Routes 5 and 6: the plain atoms by their optimal composition, or with the bounded-range ones."""
        routes: list[_Route] = []
        if sum(self.plain_counts.values()) >= 2 and slack > 0.0 and not math.isinf(eps_plain):
            counts = tuple(self.plain_counts.items())
            for share in _SPLITS if certified else (1.0,):
                d_pure = slack * share
                routes.append(
                    (
                        _pure_epsilon(counts, d_pure)
                        + (self._eps_cert(slack - d_pure, rho, delta_z, False, False) if certified else 0.0),
                        delta_fixed + slack,
                        "optimal composition of the pure parts (Kairouz-Oh-Viswanath "
                        "2015)" + (" + zCDP / bounded-range parts" if certified else ""),
                    )
                )
        if self.plain_counts and len(self.br_counts) == 1 and slack - delta_z > 0.0:
            ((eta, n),) = self.br_counts.items()
            if eta > 0.0 and not math.isinf(eps_plain):  # every certificate at once: pure steps first (worst order)
                eps = _br_with_pure_epsilon(eta, n, _groups(self.plain_counts.items()), slack - delta_z)
                routes.append(
                    (
                        self.eps_zc.value + eps,
                        delta_fixed + slack,
                        "bounded-range and pure parts composed together (dynamic programming)",
                    )
                )
        return routes

    def _nonadaptive_routes(self, eps_plain: float, delta_fixed: float, slack: float, delta_z: float) -> list[_Route]:
        """Route 7: bounded-range atoms sharing one eta by their non-adaptive optimum."""
        routes: list[_Route] = []
        ((eta, n),) = self.br_counts.items()  # every mechanism fixed in advance: the non-adaptive optimum
        if eta > 0.0:
            counts = tuple(self.plain_counts.items())
            optimal = sum(self.plain_counts.values()) >= 2
            for share in _SPLITS if optimal else (0.0,):  # the plain atoms' share of the free delta
                eps_br = br_nonadaptive_epsilon(eta, n, (slack - delta_z) * (1.0 - share))
                eps_pl = _pure_epsilon(counts, (slack - delta_z) * share) if optimal else eps_plain
                routes.append(
                    (
                        eps_pl + self.eps_zc.value + eps_br,
                        delta_fixed + slack,
                        "non-adaptive bounded-range composition (Dong-Durfee-Rogers 2020, Thm 3)"
                        + (" + optimal composition of the pure parts" if optimal else ""),
                    )
                )
        return routes
