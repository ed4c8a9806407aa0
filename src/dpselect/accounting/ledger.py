"""The accountant's running summary of its charges and the best valid composition of them.

:class:`Ledger` keeps, for a sequence of charges, the sums and counts every
rule of the modules ``composition`` and ``optimal`` needs, so that composing
costs the same after 10^5 charges as after one.  :func:`compose_privacy`
takes the best valid route (the documentation's mathematics page §10.1).
The routes themselves are built by the ledger's base class, in ``_routes``; its
exact running sums are in ``_exact_sum``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from .._params import DELTA, validate_params
from .._validation import check_delta
from ..privacy import Privacy
from ._exact_sum import _ExactSum
from ._routes import _Routes
from ._rules import PRIVACIES
from .composition import br_kl_bound

__all__ = ["Ledger", "compose_privacy"]

_ULP = 2.0**-50  # a few units of roundoff: float sums of parts may differ from their charge by that much

_SUMS = (
    "eps_all",
    "delta_all",
    "eps_plain",
    "delta_plain",
    "eps_approx",
    "rho_approx",
    "rho_pure",
    "eps_zc",
    "delta_zc",
    "rho",
    "br_eta",
    "eps_br",
    "br_kl",
    "br_eta_sq",
    "delta_br",
)


def _atoms(privacy: Privacy) -> tuple[Privacy, ...]:
    """The atoms a charge is composed from, or the charge itself when its parts would undercut it.

    ``parts`` are trusted only if their basic composition is at least the
    charge (sum of epsilons and of deltas, up to the rounding of ``a + b``):
    parts claiming less than the charge they belong to are ignored.
    """
    parts = privacy.parts
    if not parts:
        return (privacy,)
    eps, dlt = math.fsum(p.epsilon for p in parts), math.fsum(p.delta for p in parts)
    if eps >= privacy.epsilon * (1.0 - _ULP) and dlt >= privacy.delta * (1.0 - _ULP):
        return parts
    return (
        Privacy(privacy.epsilon, privacy.delta, privacy.relation, privacy.source, privacy.rho, privacy.bounded_range),
    )


class Ledger(_Routes):
    """The additive summary of a sequence of charges: everything :func:`compose_privacy` needs.

    Per atom (:attr:`Privacy.atoms`, see :func:`compose_privacy` for the
    groups): sums of epsilons, deltas, rho = sum eta^2/8 + sum rho, sum eta,
    sum KL(eta), sum eta^2, and the count of uncertified atoms per epsilon
    (for their optimal composition).  Adding a charge costs O(1), composing
    O(number of distinct epsilons).  Sums are exact until read (correctly
    rounded, like :func:`math.fsum`).

    Examples
    --------
    >>> from dpselect import Privacy
    >>> ledger = Ledger()
    >>> for _ in range(100):
    ...     _ = ledger.add(Privacy(0.05, bounded_range=0.05))
    >>> round(ledger.compose(1e-6).epsilon, 4), ledger.compose(basic=True).epsilon
    (1.0744, 5.0)
    """

    def __init__(self) -> None:
        self.relation: str | None = None
        self.n_br = 0
        self.n_zc = 0
        self.n_pure = 0
        self.plain_counts: dict[float, int] = {}  # epsilon -> number of uncertified atoms
        self.br_counts: dict[float, int] = {}  # eta -> number of bounded-range atoms
        self._cache: dict[tuple[float, bool, bool, bool], Privacy] = {}
        for name in _SUMS:
            setattr(self, name, _ExactSum())

    @classmethod
    def of(cls, charges: Iterable[Privacy]) -> Ledger:
        """A ledger holding every guarantee in ``charges``.

        Parameters
        ----------
        charges : iterable of Privacy
            The guarantees to record (each split into its atoms).

        Returns
        -------
        Ledger
            A new ledger.
        """
        ledger = cls()
        for c in charges:
            ledger.add(c)
        return ledger

    def copy(self) -> Ledger:
        """Return an independent copy (adding to it leaves this ledger unchanged).

        Returns
        -------
        Ledger
            The copy.
        """
        out = Ledger()
        out.relation, out.n_br, out.n_zc, out.n_pure = self.relation, self.n_br, self.n_zc, self.n_pure
        out.plain_counts, out.br_counts = dict(self.plain_counts), dict(self.br_counts)
        for name in _SUMS:
            setattr(out, name, getattr(self, name).copy())
        return out

    def add(self, privacy: Privacy) -> Ledger:
        """Record every atom of ``privacy`` (raises on a different neighbour relation, recording nothing).

        Parameters
        ----------
        privacy : Privacy
            The charge; a composed one is split into its atoms
            (:attr:`Privacy.atoms`) unless they would undercut it.

        Returns
        -------
        Ledger
            This ledger (so calls chain).
        """
        atoms = _atoms(privacy)
        relations = {a.relation for a in (*atoms, privacy) if a.relation is not None} | (
            {self.relation} if self.relation is not None else set()
        )
        if len(relations) > 1:
            raise ValueError(f"cannot compose guarantees under different neighbour relations {sorted(relations)}")
        if relations:
            self.relation = relations.pop()
        self._cache = {}
        self.eps_all.add(privacy.epsilon)
        self.delta_all.add(privacy.delta)
        for a, k in Counter(atoms).items():  # identical atoms (e.g. ``size`` draws) at once: O(distinct atoms)
            self._add_atom(a, k)
        return self

    def _add_atom(self, a: Privacy, k: int) -> None:
        """Record ``k`` copies of the atom ``a``."""
        if a.bounded_range is not None:
            eta = float(a.bounded_range)
            self.n_br += k
            self.rho.add(eta * eta / 8.0, k)
            self.br_eta.add(eta, k)
            self.eps_br.add(a.epsilon, k)
            self.br_kl.add(br_kl_bound(eta), k)
            self.br_eta_sq.add(eta * eta, k)
            self.delta_br.add(a.delta, k)  # a declared delta is never dropped
            self.br_counts[eta] = self.br_counts.get(eta, 0) + k
        elif a.rho is not None:
            self.n_zc += k
            self.rho.add(float(a.rho), k)
            self.eps_zc.add(a.epsilon, k)
            self.delta_zc.add(a.delta, k)
        else:
            self.eps_plain.add(a.epsilon, k)
            self.delta_plain.add(a.delta, k)
            if a.delta > 0.0:
                self.eps_approx.add(a.epsilon, k)
                self.rho_approx.add(a.epsilon * a.epsilon / 2.0, k)
            else:
                self.n_pure += k
                self.rho_pure.add(a.epsilon * a.epsilon / 2.0, k)
            if a.epsilon > 0.0:
                self.plain_counts[a.epsilon] = self.plain_counts.get(a.epsilon, 0) + k

    def filter_totals(self) -> tuple[float, float]:
        """(sum rho_t, sum delta_t) of the charges as approximate-zCDP parameters (privacy filter).

        An eta-bounded-range atom is (eta^2/8)-zCDP, a rho atom rho-zCDP, an
        (epsilon, delta)-DP atom delta-approximately (epsilon^2/2)-zCDP (Bun &
        Steinke 2016, Prop. 1.4 and §8); a bounded-range atom's declared delta
        adds to the deltas.

        Returns
        -------
        tuple of (float, float)
            (sum rho_t, sum delta_t).
        """
        rho = math.fsum((self.rho.value, self.rho_pure.value, self.rho_approx.value))
        return rho, self.delta_plain.value + self.delta_br.value

    def basic_totals(self) -> tuple[float, float] | None:
        """(sum epsilon_t, sum delta_t) of the atoms for the privacy filter's basic region; None if it has none.

        An atom is epsilon_t-DP except with probability delta_t (its declared
        delta), so these sums bound the loss along every sequence; a zCDP
        atom with a delta (a converted guarantee) has no such statement and
        leaves only the zCDP region.  Pure charges count at their own epsilon
        (their basic sum, never above the atoms').

        Returns
        -------
        tuple of (float, float) or None
            (sum epsilon, sum delta), or None when a zCDP atom carries a delta.
        """
        if self.delta_zc.value > 0.0:
            return None
        eps = math.fsum((self.eps_plain.value, self.eps_br.value, self.eps_zc.value))
        dlt = self.delta_plain.value + self.delta_br.value
        if dlt == 0.0 and self.delta_all.value == 0.0:
            eps = min(eps, self.eps_all.value)
        return eps, dlt

    def compose(
        self, delta: float = 0.0, *, basic: bool = False, cheap: bool = False, nonadaptive: bool = False
    ) -> Privacy:
        """The best guarantee of the recorded charges with ``delta`` available (see :func:`compose_privacy`).

        Parameters
        ----------
        delta : float, default=0.0
            The total delta available, in [0, 1).
        basic : bool, default=False
            If True, basic composition only (epsilons and deltas add).
        cheap : bool, default=False
            If True, only the closed-form routes (1-4 of :func:`compose_privacy`),
            a valid but possibly larger guarantee.
        nonadaptive : bool, default=False
            If True, also route 7 of :func:`compose_privacy`: valid only when
            every mechanism and its parameters were fixed in advance.

        Returns
        -------
        Privacy
            The guarantee with the smallest epsilon among the valid routes
            (within ``delta`` when any route is).
        """
        budget_delta = check_delta(delta)
        key = (budget_delta, basic, cheap, nonadaptive and not (basic or cheap))
        if key not in self._cache:
            self._cache[key] = self._compose(budget_delta, basic, cheap, key[3])
        return self._cache[key]


@validate_params({"charges": PRIVACIES, "delta": DELTA})
def compose_privacy(charges: Iterable[Privacy], delta: float = 0.0) -> Privacy:
    """Return the best guarantee of running every mechanism in ``charges``, spending at most ``delta`` in total.

    The charges are split into atoms (:attr:`Privacy.atoms`; parts whose
    basic sum is below their charge are ignored, the charge counts whole):
    *plain* ones (no certificate), *bounded-range* ones (``bounded_range`` =
    eta; a declared delta is added) and *zCDP* ones (``rho``).  With
    delta_f = the plain and bounded-range atoms' deltas and delta_c = ``delta``
    - delta_f (the free delta), the candidates are (the smallest epsilon
    within ``delta`` wins; ties: the smaller delta):

    1. basic composition of the charges: (sum eps, sum delta);
    2. plain atoms basic, every certified atom in zCDP (rho = sum eta^2/8 +
       sum rho) converted once by :func:`zcdp_epsilon` at delta_c or at the
       zCDP atoms' own deltas;
    3. plain and zCDP atoms basic, bounded-range atoms by
       :func:`br_composition_epsilon` (Dong, Durfee & Rogers 2020, Prop. 4)
       or, when they share one eta, by their adaptive optimum
       (:func:`~dpselect.accounting.br_adaptive_epsilon`);
    4. pure plain atoms in zCDP too (epsilon-DP is epsilon^2/2-zCDP, Bun &
       Steinke 2016, Prop. 1.4), approximate plain atoms basic;
    5. the plain atoms by their optimal composition
       (:func:`~dpselect.accounting.pure_composition_epsilon`: Kairouz, Oh &
       Viswanath 2015; an (epsilon, delta) atom counts as epsilon with its
       delta added) at a share of delta_c, the certified atoms by route 2 or
       3 at the rest (shares 1/2, 9/10, 1/10, 99/100, 1/100);
    6. bounded-range atoms sharing one eta together with the plain atoms, by
       :func:`~dpselect.accounting.br_adaptive_epsilon`'s recursion with the
       plain atoms as randomized responses taken first (the worst order),
       zCDP atoms basic;
    7. only with ``Ledger.compose(nonadaptive=True)`` (``Accountant(...,
       composition="nonadaptive")``), valid only when every mechanism and its
       parameters are fixed in advance: bounded-range atoms sharing one eta by
       their non-adaptive optimum
       (:func:`~dpselect.accounting.br_nonadaptive_epsilon`, Dong, Durfee &
       Rogers 2020, Thm 3), plain atoms basic or by their optimal composition
       at a share of delta_c, zCDP atoms basic.

    Every route but 1 needs delta_c > 0 (route 2 can use the zCDP atoms'
    own deltas), routes 4-5 at least two plain atoms (one gains nothing but
    spends delta); epsilons within a relative 1e-9 of the smallest count as
    ties, won by the smaller delta.  Routes 1-6 are valid for adaptively chosen
    mechanisms whose privacy parameters are fixed in advance.  Guarantees under different
    neighbour relations cannot be mixed.

    Parameters
    ----------
    charges : iterable of Privacy
        The guarantees of the mechanisms run.
    delta : float, default=0.0
        The total delta available, in [0, 1).

    Returns
    -------
    Privacy
        The composed guarantee (its ``source`` names the winning route).

    Examples
    --------
    >>> from dpselect import Privacy
    >>> round(compose_privacy([Privacy(0.05, bounded_range=0.05)] * 100, 1e-6).epsilon, 4)  # basic: 5.0
    1.0744
    >>> round(compose_privacy([Privacy(0.05)] * 100, 1e-6).epsilon, 3)  # basic: 5.0
    2.208
    """
    return Ledger.of(charges).compose(delta)
