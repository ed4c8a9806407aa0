"""Privacy accounting: every conversion and composition rule in one place.

Each rule is a pure function returning a number or a :class:`~dpselect.privacy.Privacy`
and cites the SPEC.md section (shipped in the documentation's *Mathematics*
page) that proves it.  :class:`Accountant` tracks a budget across calls.

Sections (one per family of rules; keep them apart so they stay findable):

1. zCDP <-> (epsilon, delta) conversions (SPEC §2.5).
2. Noise admissibility conditions for smooth-sensitivity releases (SPEC §2).
3. Smooth report-noisy-max and Smooth Private Selection (SPEC §3.1, §3.2).
4. Propose-test-release and the private sensitivity bound (SPEC §6.2, §9.2).
5. Decision trees and forests (SPEC §5).
6. The budget accountant.
"""

from __future__ import annotations

import math
from typing import Any

from ._validation import check_delta, check_epsilon, check_positive, check_probability_in, check_relation
from .privacy import Privacy

__all__ = [
    "Accountant",
    "BudgetExceededError",
    "charge",
    "dp_to_zcdp",
    "ptr_mode_privacy",
    "ptr_privacy",
    "stable_histogram_privacy",
    "forest_privacy",
    "parallel_composition",
    "tree_privacy",
    "tree_query_epsilon",
    "zcdp_to_dp",
]


# ---------------------------------------------------------------------------
# 1. zCDP <-> (epsilon, delta) conversions (SPEC §2.5)
# ---------------------------------------------------------------------------


def _require_delta_positive(delta: Any) -> float:
    d = check_delta(delta)
    if d <= 0.0:
        raise ValueError(f"delta must be > 0 to convert zCDP to (epsilon, delta)-DP, got {delta!r}")
    return d


def zcdp_to_dp(rho: Any, delta: Any) -> float:
    """epsilon of the (epsilon, delta)-DP guarantee implied by rho-zCDP.

    epsilon = rho + 2 sqrt(rho ln(1/delta))  (Bun & Steinke 2016, Prop. 1.3;
    SPEC §2.5).  ``delta`` must be > 0.
    """
    r = check_positive(rho, "rho", allow_zero=True)
    d = _require_delta_positive(delta)
    return r + 2.0 * math.sqrt(r * -math.log(d))


def dp_to_zcdp(epsilon: Any, delta: Any) -> float:
    """Largest rho whose conversion :func:`zcdp_to_dp` is at most ``epsilon``.

    rho = (sqrt(L + eps) - sqrt(L))^2 = (eps / (sqrt(L + eps) + sqrt(L)))^2 with
    L = ln(1/delta) (the inverse of SPEC §2.5's conversion).
    """
    eps = check_epsilon(epsilon)
    L = -math.log(_require_delta_positive(delta))
    return (eps / (math.sqrt(L + eps) + math.sqrt(L))) ** 2


# ---------------------------------------------------------------------------
# 2. Noise admissibility conditions (SPEC §2.2-§2.5)
#    (owned by the noise/engine work: NRS and exact Laplace conditions)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# 3. Smooth report-noisy-max / Smooth Private Selection (SPEC §3.1, §3.2)
#    (owned by the mechanisms work)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# 4. Propose-test-release and the private sensitivity bound (SPEC §6.2, §9.2)
#    (owned by the PTR / distance-utility work)
# ---------------------------------------------------------------------------


def _ptr_delta(delta: Any) -> float:
    """PTR needs 0 < delta < 1 (its threshold is ln(1/delta)/epsilon)."""
    return check_probability_in(delta, "delta", 0.0, 1.0)


def ptr_privacy(epsilon: Any, delta: Any, *, relation: str | None = None) -> Privacy:
    """Generic propose-test-release: (2 epsilon, delta/2)-DP (SPEC §6.2, errata 27).

    The test ``gamma + Lap(1/epsilon) > ln(1/delta)/epsilon`` is epsilon-DP
    (gamma has sensitivity 1); when gamma(D) >= 1 the Laplace release
    ``f(D) + Lap(b/epsilon)`` costs another epsilon; when gamma(D) = 0 the test
    passes with probability exactly P[Lap(1/epsilon) > ln(1/delta)/epsilon] =
    delta/2.  ``relation``: the neighbour relation in which gamma is measured.

    Examples
    --------
    >>> print(ptr_privacy(0.5, 1e-6))
    (1, 5e-07)-DP
    """
    eps = check_epsilon(epsilon)
    d = _ptr_delta(delta)
    return Privacy(2.0 * eps, d / 2.0, relation, "propose-test-release (SPEC §6.2)")


def ptr_mode_privacy(epsilon: Any, delta: Any, *, relation: str = "add_remove") -> Privacy:
    """PTR for the mode (b = 0, nothing noisy released after the test): (epsilon, delta/2)-DP.

    Under the relation whose distance to instability is used (SPEC §6.2,
    errata 28; the derivation is in :mod:`dpselect.apps.ptr`).  The bound is
    attained (exact audit in the tests).
    """
    eps = check_epsilon(epsilon)
    d = _ptr_delta(delta)
    return Privacy(eps, d / 2.0, check_relation(relation), "PTR mode, no release noise (SPEC §6.2, errata 28)")


def stable_histogram_privacy(epsilon: Any, delta: Any, *, relation: str = "add_remove") -> Privacy:
    """Stable histogram: (epsilon, delta/2)-DP under add/remove, (2 epsilon, delta) under replace-one (SPEC §6.3).

    A new bin with count 1 survives the threshold 1 + ln(1/delta)/epsilon with
    probability exactly delta/2; a replacement moves two bins.
    """
    eps = check_epsilon(epsilon)
    d = _ptr_delta(delta)
    rel = check_relation(relation)
    src = "stable histogram (SPEC §6.3)"
    return Privacy(eps, d / 2.0, rel, src) if rel == "add_remove" else Privacy(2.0 * eps, d, rel, src)


# ---------------------------------------------------------------------------
# 5. Decision trees and forests (SPEC §5)
#    (owned by the trees work)
# ---------------------------------------------------------------------------


def parallel_composition(parts: Any) -> Privacy:
    """Guarantee of mechanisms run on DISJOINT parts of the data: (max epsilon, max delta).

    Under add/remove one record lies in at most one part, so a neighbour
    changes one part only (McSherry 2009, PINQ Thm 4; SPEC §5.2: the nodes of
    one tree level, the leaves of a tree, the trees of a forest).  The part
    with the largest epsilon names the source.

    Examples
    --------
    >>> print(parallel_composition([Privacy(0.5), Privacy(0.2, 1e-6)]))
    (0.5, 1e-06)-DP
    """
    parts = list(parts)
    if not parts:
        raise ValueError("parts must not be empty")
    worst = max(parts, key=lambda q: q.epsilon)
    relations = {q.relation for q in parts if q.relation is not None}
    if len(relations) > 1:
        raise ValueError(f"cannot compose guarantees under different neighbour relations {sorted(relations)}")
    return Privacy(worst.epsilon, max(q.delta for q in parts), relations.pop() if relations else None,
                   worst.source)


def tree_query_epsilon(epsilon: Any, levels: Any, *, count_queries: bool) -> float:
    """Budget of one query of a level-wise private tree with ``levels`` levels (root .. leaves).

    Every record meets one node per level; a level costs one split selection
    or one leaf query, plus (``count_queries``, DiffP-ID3) a Laplace noisy
    count of the node.  Splitting ``epsilon`` evenly gives epsilon / levels
    (data-independent stopping) or epsilon / (2 levels) (DiffP-ID3:
    eps' = eps / (2 (d + 1)), SPEC §5.2 / errata 17).
    """
    eps = check_epsilon(epsilon)
    if not isinstance(levels, int) or levels < 1:
        raise ValueError(f"levels must be an int >= 1, got {levels!r}")
    return eps / (levels * (2 if count_queries else 1))


def tree_privacy(level_costs: Any, record_count: Privacy | None = None) -> Privacy:
    """Guarantee of a level-wise private tree: sequential over levels, each level parallel over its nodes.

    ``level_costs``: one Privacy per level, already the parallel composition
    (:func:`parallel_composition`) over the level's nodes; levels compose
    sequentially (adaptively: a level's partition is a function of the
    released levels above).  ``record_count``: the noisy record count used to
    choose the shape, composed sequentially in front (SPEC §5.2).
    """
    parts = ([record_count] if record_count is not None else []) + list(level_costs)
    if not parts:
        raise ValueError("level_costs must not be empty")
    total = parts[0]
    for q in parts[1:]:
        total = total + q
    return Privacy(total.epsilon, total.delta, "add_remove",
                   f"{len(parts)} sequential parts, parallel within each (SPEC §5.2)")


def forest_privacy(leaf_query: Privacy, record_count: Privacy | None = None) -> Privacy:
    """Guarantee of a forest whose trees get disjoint records and whose leaves query disjoint records.

    Parallel composition over leaves and trees leaves ONE leaf query
    (SPEC §5.3, with records assigned to trees by independent draws);
    ``record_count`` (the noisy count used for the shape) adds sequentially.
    """
    parts = ([record_count] if record_count is not None else []) + [leaf_query]
    return tree_privacy(parts[1:], parts[0]) if record_count is not None else Privacy(
        leaf_query.epsilon, leaf_query.delta, "add_remove",
        f"one leaf query (parallel over leaves and disjoint trees; SPEC §5.3): {leaf_query.source}")


# ---------------------------------------------------------------------------
# 6. The budget accountant
# ---------------------------------------------------------------------------


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
    epsilon : float > 0, the total epsilon budget (``inf`` for "track only").
    delta : float in [0, 1), the total delta budget.

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

    @property
    def budget(self) -> Privacy:
        """The total budget."""
        return self._budget

    @property
    def charges(self) -> tuple[Privacy, ...]:
        """Every guarantee spent so far, in order."""
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
        return self.compose(self._charges)

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
        total = self.compose([*self._charges, privacy])
        # A relative slack of 1e-12 absorbs floating-point sums of shares that add up to the budget.
        slack = 1.0 + 1e-12
        if total.epsilon > self._budget.epsilon * slack or total.delta > self._budget.delta * slack:
            raise BudgetExceededError(
                f"spending {privacy} would exceed the budget {self._budget} (already spent {self.spent})"
            )

    def spend(self, privacy: Privacy) -> None:
        """Charge ``privacy``; raise :class:`BudgetExceededError` (recording nothing) if it does not fit."""
        self.check(privacy)
        self._charges.append(privacy)

    def __repr__(self) -> str:
        return f"Accountant(budget={self._budget}, charges={len(self._charges)})"


def charge(accountant: Accountant | None, privacy: Privacy) -> None:
    """Charge ``accountant`` (if given) with ``privacy``: the one call apps make before drawing randomness."""
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise TypeError(f"accountant must be a dpselect.Accountant or None, got {type(accountant).__name__}")
    accountant.spend(privacy)

