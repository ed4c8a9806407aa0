"""Composition of many guarantees: basic, bounded-range (Dong, Durfee & Rogers 2020) and zCDP.

Every rule returns an (epsilon, delta) statement valid for the adaptive
composition of the mechanisms (each chosen after seeing the earlier outputs)
whose privacy parameters are fixed in advance; the documentation's
mathematics page (§10.1) derives each one.

* basic (Dwork & Roth 2014, Thm 3.16): epsilons add, deltas add;
* an eta-bounded-range mechanism is (eta^2/8)-zCDP (Cesar & Rogers 2021);
  zCDP parameters add (Bun & Steinke 2016, Lemma 2.3) and rho-zCDP is
  (eps, delta)-DP with eps = min over alpha > 1 of
  alpha rho + ln(1 - 1/alpha) - ln(alpha delta)/(alpha - 1) (Canonne, Kamath
  & Steinke 2020, Prop. 12, applied to the Renyi divergence alpha rho), never
  above Bun & Steinke's rho + 2 sqrt(rho ln(1/delta)) (ibid., Prop. 1.3);
* bounded-range composition (Dong, Durfee & Rogers 2020, Prop. 4): the
  adaptive composition of eta_i-BR mechanisms is (eps', delta)-DP with
  eps' = sum_i KL(eta_i) + sqrt(sum_i eta_i^2 ln(1/delta) / 2),
  KL(eta) = eta/(1 - e^-eta) - 1 - ln(eta/(1 - e^-eta)) <= eta^2/8.

:func:`compose` takes the best of these, converting the certified part once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from .._validation import check_delta, check_positive
from ..privacy import Privacy

__all__ = ["Ledger", "br_kl_bound", "br_zcdp_rho", "br_composition_epsilon", "compose_privacy", "zcdp_epsilon"]

_SERIES_TERMS = 40


def _x_minus_log1p(x: float) -> float:
    """x - ln(1 + x) without cancellation (x >= 0)."""
    if x > 0.1:
        return x - math.log1p(x)
    # sum_{n >= 2} (-1)^n x^n / n; |x| <= 0.1: 40 terms leave < 0.1^40
    return math.fsum((-1) ** n * x**n / n for n in range(2, _SERIES_TERMS))


def br_kl_bound(eta: float) -> float:
    """Largest KL divergence (mean privacy loss) of an eta-bounded-range mechanism.

    .. math::

        \\mathrm{KL}(\\eta) = g - 1 - \\ln g, \\qquad g = \\frac{\\eta}{1 - e^{-\\eta}},

    the mean of the two-point loss law on {a, a + eta} with E[e^-L] = 1
    (Dong, Durfee & Rogers 2020, used in their Prop. 4); KL(eta) <= eta^2/8.

    Parameters
    ----------
    eta : float
        The bounded-range parameter, >= 0.

    Returns
    -------
    float
        KL(eta), computed without cancellation (0 at eta = 0).

    Examples
    --------
    >>> round(br_kl_bound(1.0), 6), 1.0 / 8
    (0.123302, 0.125)
    """
    eta = check_positive(eta, "eta", allow_zero=True)
    if eta == 0.0:
        return 0.0
    q = -math.expm1(-eta)  # 1 - e^-eta
    if eta < 1.0:  # g - 1 = (eta + expm1(-eta)) / q, the numerator by its series (no cancellation)
        num = math.fsum((-1) ** n * eta**n / math.factorial(n) for n in range(2, _SERIES_TERMS))
    else:
        num = eta - q
    return _x_minus_log1p(num / q)


def br_zcdp_rho(eta: float) -> float:
    """rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021).

    Parameters
    ----------
    eta : float
        The bounded-range parameter, >= 0.

    Returns
    -------
    float
        eta^2 / 8.

    Examples
    --------
    >>> br_zcdp_rho(1.0)
    0.125
    """
    eta = check_positive(eta, "eta", allow_zero=True)
    return eta * eta / 8.0


def _rdp_epsilon(alpha: float, rho: float, log_delta: float) -> float:
    """eps of (alpha, alpha rho)-RDP at delta = e^log_delta (Canonne, Kamath & Steinke 2020, Prop. 12)."""
    return alpha * rho + math.log1p(-1.0 / alpha) - (log_delta + math.log(alpha)) / (alpha - 1.0)


def zcdp_epsilon(rho: float, delta: float) -> float:
    r"""Smallest epsilon certified for rho-zCDP at ``delta`` > 0.

    .. math::

        \varepsilon = \min_{\alpha > 1}\; \alpha\rho + \ln(1 - 1/\alpha)
        - \frac{\ln(\alpha\delta)}{\alpha - 1}
        \;\le\; \rho + 2\sqrt{\rho \ln(1/\delta)}

    rho-zCDP is (alpha, alpha rho)-Renyi-DP for every alpha > 1 (Bun &
    Steinke 2016, Def. 1.1) and (alpha, tau)-RDP implies (tau + ln(1 - 1/alpha)
    - ln(alpha delta)/(alpha - 1), delta)-DP (Canonne, Kamath & Steinke 2020,
    Prop. 12).  Every alpha gives a valid bound, so the numerical minimisation
    can only lose tightness, never validity; the result is also capped by Bun &
    Steinke's closed form (Prop. 1.3).

    Parameters
    ----------
    rho : float
        The zCDP parameter, >= 0.
    delta : float
        The delta of the (epsilon, delta) statement, in (0, 1).

    Returns
    -------
    float
        The epsilon, >= 0 (0 when rho = 0).

    Examples
    --------
    >>> round(zcdp_epsilon(0.03125, 1e-6), 4)
    1.1429
    """
    r = check_positive(rho, "rho", allow_zero=True)
    d = check_delta(delta)
    if d <= 0.0:
        raise ValueError(f"delta must be > 0 to convert zCDP, got {delta!r}")
    log_d = math.log(d)
    classic = r + 2.0 * math.sqrt(r * -log_d)
    if r == 0.0:
        return 0.0
    # alpha - 1 on a log grid, then a bounded refinement around the best grid point
    grid = 1.0 + np.logspace(-6, 8, 400)
    vals = grid * r + np.log1p(-1.0 / grid) - (log_d + np.log(grid)) / (grid - 1.0)  # _rdp_epsilon, vectorised
    i = int(np.argmin(vals))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, grid.size - 1)])
    from scipy.optimize import minimize_scalar  # lazy: keeps `import dpselect` cheap

    res = minimize_scalar(lambda a: _rdp_epsilon(a, r, log_d), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12 * hi})
    best = min(float(vals[i]), float(res.fun)) if res.success else float(vals[i])
    return max(0.0, min(classic, best))


def br_composition_epsilon(etas: Sequence[float], delta: float) -> float:
    """epsilon of the adaptive composition of eta_i-bounded-range mechanisms at ``delta`` > 0.

    .. math::

        \\varepsilon' = \\min\\Bigl(\\sum_i \\eta_i,\\;
        \\sum_i \\mathrm{KL}(\\eta_i) + \\sqrt{\\tfrac12 \\textstyle\\sum_i \\eta_i^2 \\ln(1/\\delta)}\\Bigr)

    (Dong, Durfee & Rogers, ICML 2020, Prop. 4; the eta_i fixed in advance).

    Parameters
    ----------
    etas : sequence of float
        The bounded-range parameters eta_i >= 0 of the composed mechanisms.
    delta : float
        The delta of the (epsilon, delta) statement, in (0, 1).

    Returns
    -------
    float
        epsilon', never above basic composition (sum of the eta_i).

    Examples
    --------
    >>> round(br_composition_epsilon([0.05] * 100, 1e-6), 4)
    1.3454
    """
    d = check_delta(delta)
    if d <= 0.0:
        raise ValueError(f"delta must be > 0 for bounded-range composition, got {delta!r}")
    etas = [check_positive(e, "eta", allow_zero=True) for e in etas]
    return _br_epsilon(math.fsum(etas), math.fsum(br_kl_bound(e) for e in etas), math.fsum(e * e for e in etas), d)


def _br_epsilon(eta_sum: float, kl_sum: float, eta_sq_sum: float, delta: float) -> float:
    """Dong–Durfee–Rogers Prop. 4 from the sums over the eta_i (capped by basic composition)."""
    return min(eta_sum, kl_sum + math.sqrt(0.5 * eta_sq_sum * -math.log(delta)))


class _ExactSum:
    """A running sum of non-negative floats, correctly rounded when read (Shewchuk's partials,
    the algorithm behind :func:`math.fsum`, kept incrementally); ``inf`` is absorbing."""

    __slots__ = ("_partials", "_inf")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self._inf = False

    def add(self, x: float) -> None:
        if math.isinf(x):
            self._inf = True
            return
        partials, i = self._partials, 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    @property
    def value(self) -> float:
        return math.inf if self._inf else math.fsum(self._partials)

    def copy(self) -> _ExactSum:
        out = _ExactSum()
        out._partials, out._inf = list(self._partials), self._inf
        return out


_SUMS = ("eps_all", "delta_all", "eps_plain", "delta_plain", "eps_zc", "delta_zc", "rho", "br_eta", "br_kl",
         "br_eta_sq")


class Ledger:
    """The additive summary of a sequence of charges: everything :func:`compose_privacy` needs.

    Every composition rule of this module depends on the charges only through
    sums over their atoms (epsilons and deltas per group, rho = sum eta^2/8 +
    sum rho, sum eta, sum KL(eta), sum eta^2), so a ledger adds a charge in
    O(1) and composes in O(1): an accountant with n charges costs O(n), not
    O(n^2).  Sums are exact until read (correctly rounded, like :func:`math.fsum`).

    Examples
    --------
    >>> from dpselect import Privacy
    >>> ledger = Ledger()
    >>> for _ in range(100):
    ...     _ = ledger.add(Privacy(0.05, bounded_range=0.05))
    >>> round(ledger.compose(1e-6).epsilon, 4), ledger.compose(basic=True).epsilon
    (1.1429, 5.0)
    """

    eps_all: _ExactSum
    delta_all: _ExactSum
    eps_plain: _ExactSum  # atoms without a certificate
    delta_plain: _ExactSum
    eps_zc: _ExactSum  # atoms with a zCDP rho
    delta_zc: _ExactSum
    rho: _ExactSum  # sum eta^2/8 + sum rho
    br_eta: _ExactSum  # bounded-range atoms: sum eta, sum KL(eta), sum eta^2
    br_kl: _ExactSum
    br_eta_sq: _ExactSum

    def __init__(self) -> None:
        self.relation: str | None = None
        self.n_br = 0
        self.n_zc = 0
        for name in _SUMS:
            setattr(self, name, _ExactSum())

    @classmethod
    def of(cls, charges: Iterable[Privacy]) -> Ledger:
        """A ledger holding every guarantee in ``charges``.

        Parameters
        ----------
        charges : iterable of Privacy
            The guarantees to record (each split into its atoms).
        """
        ledger = cls()
        for c in charges:
            ledger.add(c)
        return ledger

    def copy(self) -> Ledger:
        out = Ledger()
        out.relation, out.n_br, out.n_zc = self.relation, self.n_br, self.n_zc
        for name in _SUMS:
            setattr(out, name, getattr(self, name).copy())
        return out

    def add(self, privacy: Privacy) -> Ledger:
        """Record every atom of ``privacy`` (raises on a different neighbour relation, recording nothing).

        Parameters
        ----------
        privacy : Privacy
            The charge; a composed one is split into its atoms
            (:attr:`Privacy.atoms`).

        Returns
        -------
        Ledger
            This ledger (so calls chain).
        """
        atoms = privacy.atoms
        relations = {a.relation for a in atoms if a.relation is not None} | (
            {self.relation} if self.relation is not None else set())
        if len(relations) > 1:
            raise ValueError(f"cannot compose guarantees under different neighbour relations {sorted(relations)}")
        if relations:
            self.relation = relations.pop()
        for a in atoms:
            self.eps_all.add(a.epsilon)
            self.delta_all.add(a.delta)
            if a.bounded_range is not None:
                eta = float(a.bounded_range)
                self.n_br += 1
                self.rho.add(eta * eta / 8.0)
                self.br_eta.add(eta)
                self.br_kl.add(br_kl_bound(eta))
                self.br_eta_sq.add(eta * eta)
            elif a.rho is not None:
                self.n_zc += 1
                self.rho.add(float(a.rho))
                self.eps_zc.add(a.epsilon)
                self.delta_zc.add(a.delta)
            else:
                self.eps_plain.add(a.epsilon)
                self.delta_plain.add(a.delta)
        return self

    def compose(self, delta: float = 0.0, *, basic: bool = False) -> Privacy:
        """The best guarantee of the recorded charges with ``delta`` available (see :func:`compose_privacy`).

        Parameters
        ----------
        delta : float, default=0.0
            The total delta available, in [0, 1).
        basic : bool, default=False
            If True, basic composition only (epsilons and deltas add).

        Returns
        -------
        Privacy
            The guarantee with the smallest epsilon among the valid routes
            (within ``delta`` when any route is).
        """
        budget_delta = check_delta(delta)
        routes = [(self.eps_all.value, self.delta_all.value, "basic composition")]
        eps_plain, delta_plain = self.eps_plain.value, self.delta_plain.value
        slack = budget_delta - delta_plain
        delta_z = self.delta_zc.value
        certified = not basic and (self.n_br or self.n_zc)
        for delta_c in {d for d in (slack, delta_z) if d > 0.0 and certified}:
            routes.append((eps_plain + zcdp_epsilon(self.rho.value, delta_c), delta_plain + delta_c,
                           "basic composition + zCDP (bounded-range and zCDP parts, converted once)"))
        if certified and self.n_br and slack - delta_z > 0.0:
            eps_br = _br_epsilon(self.br_eta.value, self.br_kl.value, self.br_eta_sq.value, slack - delta_z)
            routes.append((eps_plain + self.eps_zc.value + eps_br, budget_delta,
                           "basic composition + bounded-range composition (Dong-Durfee-Rogers 2020)"))
        # within the delta budget if any route is (the basic route may not be); then the smallest epsilon
        within = [r for r in routes if r[1] <= budget_delta * (1.0 + 1e-12)] or routes
        eps, dlt, source = min(within, key=lambda r: (r[0], r[1]))
        if dlt >= 1.0:
            raise ValueError(f"composed delta {dlt!r} is >= 1 (no guarantee)")
        return Privacy(eps, dlt, self.relation, source)


def compose_privacy(charges: Iterable[Privacy], delta: float = 0.0) -> Privacy:
    """The best guarantee of running every mechanism in ``charges``, spending at most ``delta`` in total.

    The charges are split into atoms (:attr:`Privacy.atoms`): *plain* ones
    (no certificate), *bounded-range* ones (``bounded_range`` = eta) and *zCDP*
    ones (``rho``).  Candidates, the smallest epsilon wins (ties: the smaller
    delta):

    1. basic composition of every atom: (sum eps, sum delta);
    2. plain atoms basic, every certified atom in zCDP (rho = sum eta^2/8 +
       sum rho) converted once at delta_c = ``delta`` - sum delta_plain (the
       rest of the budget) or at delta_c = the zCDP atoms' own deltas:
       (sum eps_plain + :func:`zcdp_epsilon` (rho, delta_c), sum delta_plain + delta_c);
    3. plain and zCDP atoms basic, bounded-range atoms by
       :func:`br_composition_epsilon` at delta_c = ``delta`` - their deltas.

    Routes 2-3 exist only with delta_c > 0 (with ``delta`` = 0 only the
    zCDP atoms' own deltas can be used).  Mixing is basic
    composition between the groups (mathematics page §10.1).  Guarantees
    under different neighbour relations cannot be mixed.

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
    >>> round(compose_privacy([Privacy(0.05, bounded_range=0.05)] * 100, 1e-6).epsilon, 4)
    1.1429
    """
    return Ledger.of(charges).compose(delta)
