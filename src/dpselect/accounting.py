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

from scipy import optimize, special

from ._validation import check_delta, check_epsilon, check_int, check_positive, check_probability_in, check_relation
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
#
#    Mechanism: argmax_r { u(x, r) + (S(x)/A) Z_r }, Z_r iid h, S a beta-smooth
#    upper bound on max_r LS_u(x, r), m candidates.  Every coordinate's noise is
#    dilated between neighbours (the step the SNM paper's proof omits), so the
#    dilation costs m times the one-dimensional price.
# ---------------------------------------------------------------------------


def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0 without overflow."""
    return x + math.log1p(-math.exp(-x)) if x > 1.0 else math.log(math.expm1(x))


def _sliding_factor(monotone: bool) -> float:
    """2 (candidate and competitors move in opposite directions), 1 for monotone utilities (SPEC §3.1)."""
    return 1.0 if monotone else 2.0


def smooth_rnm_epsilon(
    a: float, beta: float, m: int, shift_constant: float, dilation_constant: float, *, monotone: bool = False
) -> float:
    """epsilon of smooth report-noisy-max with a pure noise law (SPEC §3.1):

        eps_total = 2 A L_s + m beta L_d      (A L_s for monotone utilities),

    noise scale S(x)/A, S beta-smooth, L_s / L_d the noise's shift / dilation
    constants (SPEC §2.1, §2.7).  [DERIVED; generalises YS Thm 2/3.]

    Examples
    --------
    >>> import math
    >>> ls, ld = 4 / (2 * math.sqrt(3)), 4.0          # Student's t_3 (Bun-Steinke constants)
    >>> round(smooth_rnm_epsilon(0.2165, 0.025, 5, ls, ld), 3)   # SNM-t proven, eps = 1, m = 5
    1.0
    """
    a = check_positive(a, "a")
    beta = check_positive(beta, "beta", allow_zero=True)
    m = check_int(m, "m", minimum=1)
    ls = check_positive(shift_constant, "shift_constant")
    ld = check_positive(dilation_constant, "dilation_constant")
    return _sliding_factor(monotone) * a * ls + m * beta * ld


def laplace_selection_log_delta(m: int, beta: float, eps_d: float) -> float:
    """log delta_d of the m-fold Laplace dilation (SPEC §3.1, [DERIVED]).

    With noise scale S(x)/A, S beta-smooth, the dilation of all m Laplace
    coordinates costs (eps_d, delta_d) for any eps_d >= m beta, with

        delta_d = P[Gamma(m, 1) > (eps_d + m beta) / (e^beta - 1)].

    Computed with ``scipy.special.gammaincc`` (log space; where it underflows,
    the conservative upper bound x^(m-1) e^-x / (Gamma(m) (1 - (m-1)/x)) on
    the regularised tail).  beta = 0 (fixed scale) gives -inf.

    Examples
    --------
    >>> import math
    >>> round(laplace_selection_log_delta(1, 0.2, 0.3), 6) == round(-0.5 / math.expm1(0.2), 6)   # m = 1: e^-x
    True
    """
    m = check_int(m, "m", minimum=1)
    beta = check_positive(beta, "beta", allow_zero=True)
    eps_d = check_positive(eps_d, "eps_d", allow_zero=True, allow_inf=True)
    if beta == 0.0 or math.isinf(eps_d):
        return -math.inf
    log_thr = math.log(eps_d + m * beta) - _log_expm1(beta)
    if log_thr > 700.0:
        return -math.inf
    thr = math.exp(log_thr)
    q = float(special.gammaincc(m, thr))
    if q > 0.0:
        return math.log(q)
    return (m - 1) * log_thr - thr - math.lgamma(m) - math.log1p(-(m - 1) / thr)


def _gamma_upper_quantile(m: int, delta: float) -> float:
    """q with P[Gamma(m, 1) > q] = delta."""
    return float(special.gammainccinv(m, delta))


def laplace_selection_beta(m: int, eps_d: float, delta: float) -> float:
    """Largest beta with m beta <= eps_d and delta_d(beta) <= delta (SPEC §3.1).

    delta_d(beta) <= delta  <=>  (eps_d + m beta)/(e^beta - 1) >= q, q the
    Gamma(m, 1) upper delta-quantile  <=>  q (e^beta - 1) - m beta <= eps_d.
    The left side is convex in beta and 0 at beta = 0, so the feasible set is
    an interval [0, beta*]; beta* is found by Brent's method on the
    equivalent log-space condition (no overflow for huge eps_d) and then
    certified (nudged down if rounding requires) on the exact tail.
    """
    m = check_int(m, "m", minimum=1)
    eps_d = check_epsilon(eps_d, "eps_d")
    d = _require_delta_positive(delta)
    cap = eps_d / m
    log_q = math.log(_gamma_upper_quantile(m, d))

    def g(b: float) -> float:  # same sign as q expm1(b) - m b - eps_d
        return log_q + _log_expm1(b) - math.log(eps_d + m * b)

    if g(cap) <= 0.0:
        beta = cap
    else:
        lo = cap * 1e-12  # g -> -inf as beta -> 0 (log expm1(beta) ~ log beta)
        while g(lo) > 0.0:
            lo *= 1e-12
        beta = optimize.brentq(g, lo, cap, xtol=lo * 1e-3, rtol=1e-15, maxiter=500)
    log_delta = math.log(d)
    for _ in range(200):
        if laplace_selection_log_delta(m, beta, eps_d) <= log_delta:
            return beta
        beta *= 1.0 - 1e-9
    raise RuntimeError("could not calibrate the Laplace smoothing parameter")  # pragma: no cover


def laplace_selection_eps_d(m: int, beta: float, delta: float) -> float:
    """Smallest eps_d >= m beta with delta_d <= delta for a given beta (SPEC §3.1); inf if it overflows."""
    m = check_int(m, "m", minimum=1)
    beta = check_positive(beta, "beta")
    d = _require_delta_positive(delta)
    log_q = math.log(_gamma_upper_quantile(m, d))
    log_need = log_q + _log_expm1(beta)
    if log_need > 700.0:
        return math.inf
    eps_d = max(m * beta, math.exp(log_need) - m * beta)
    log_delta = math.log(d)
    for _ in range(200):
        if laplace_selection_log_delta(m, beta, eps_d) <= log_delta:
            return eps_d
        eps_d *= 1.0 + 1e-9
    raise RuntimeError("could not find eps_d for the Laplace dilation")  # pragma: no cover


def laplace_selection_privacy(
    a: float, beta: float, m: int, eps_d: float, *, monotone: bool = False, relation: str | None = None
) -> Privacy:
    """(2A + eps_d, delta_d) of smooth report-noisy-max with Laplace noise (SPEC §3.1; A + eps_d if monotone)."""
    a = check_positive(a, "a")
    eps_d = check_positive(eps_d, "eps_d", allow_inf=True)
    if eps_d < m * beta:
        raise ValueError(f"eps_d must be >= m beta = {m * beta!r}, got {eps_d!r}")
    delta_d = math.exp(laplace_selection_log_delta(m, beta, eps_d))
    return Privacy(
        _sliding_factor(monotone) * a + eps_d, delta_d, relation,
        "smooth report-noisy-max, Laplace (SPEC §3.1: (2A + eps_d, P[Gamma(m,1) > (eps_d + m beta)/(e^beta - 1)]))",
    )


def lln_selection_rho(m: int, beta: float, sigma: float, a: float) -> float:
    """rho-zCDP of releasing all m LLN-noised scores (SPEC §3.1, §2.5):

        rho = m (beta/sigma + e^{3 sigma^2/2} A)^2 / 2

    (each coordinate is Bun & Steinke's §3.1.1 mechanism with shift <= S, so
    s = A; the argmax is post-processing).
    """
    x = _lln_coordinate_epsilon(beta, sigma, a)
    return 0.5 * check_int(m, "m", minimum=1) * x * x  # x * x: inf (not OverflowError) beyond the float range


def _lln_coordinate_epsilon(beta: float, sigma: float, a: float) -> float:
    """Bun & Steinke's per-coordinate CDP level eps_c = beta/sigma + e^{3 sigma^2/2} A (inf on overflow)."""
    beta = check_positive(beta, "beta", allow_zero=True)
    sigma = check_positive(sigma, "sigma")
    a = check_positive(a, "a")
    log_growth = 1.5 * sigma * sigma
    return beta / sigma + (math.exp(log_growth) * a if log_growth < 709.0 else math.inf)


def lln_selection_privacy(
    m: int, beta: float, sigma: float, a: float, delta: float, *, relation: str | None = None
) -> Privacy:
    """rho-zCDP of :func:`lln_selection_rho`, converted to (rho + 2 sqrt(rho ln 1/delta), delta) (SPEC §2.5).

    The returned ``Privacy`` carries ``rho`` so the accountant composes it in rho.

    Examples
    --------
    >>> p = lln_selection_privacy(5, 0.1, 0.5, 0.05, 1e-6)   # x = 0.1/0.5 + e^0.375 0.05; rho = 5 x^2 / 2
    >>> round(p.rho, 6), round(p.epsilon, 4)
    (0.185981, 3.3919)
    """
    m = check_int(m, "m", minimum=1)
    d = _require_delta_positive(delta)
    x = _lln_coordinate_epsilon(beta, sigma, a)
    rho = 0.5 * m * x * x
    # rho + 2 sqrt(rho ln(1/delta)) written as x (m x / 2 + sqrt(2 m ln(1/delta))): no under/overflow in x^2
    eps = x * (0.5 * m * x + math.sqrt(2.0 * m * -math.log(d)))
    exact_rho = rho if (0.0 < rho < math.inf) else None  # an underflowed or infinite rho is not reported
    return Privacy(
        eps, d, relation,
        "smooth report-noisy-max, LLN: rho = m (beta/sigma + e^{3 sigma^2/2} A)^2/2 zCDP (SPEC §3.1), "
        "converted by rho + 2 sqrt(rho ln(1/delta)) (SPEC §2.5)",
        exact_rho,
    )


def sps_epsilon(k: float, l: float, m: int, epsilon: float) -> float:
    """Smooth Private Selection: (k + m l / 2) epsilon-DP (YS Thm 2; YS-supp Thm 3; SPEC §3.2).

    Holds for two-sided and one-sided polynomial-tail noise with
    alpha' = alpha(k eps), beta' = beta(l eps).

    Examples
    --------
    >>> k, l = sps_split(0.5, 5)      # SPEC §3.2's worked example: k = 1/2, l = 1/5
    >>> sps_epsilon(k, l, 5, 1.0)
    1.0
    """
    k = check_positive(k, "k")
    l = check_positive(l, "l")  # noqa: E741 - the paper's name
    m = check_int(m, "m", minimum=1)
    return (k + m * l / 2.0) * check_epsilon(epsilon)


def sps_split(kappa: float, m: int) -> tuple[float, float]:
    """The default (k, l) = (kappa, 2 (1 - kappa)/m): k + m l / 2 = 1 (SPEC §3.2 "Choosing k, l")."""
    kappa = check_probability_in(kappa, "kappa", 0.0, 1.0)
    m = check_int(m, "m", minimum=1)
    return kappa, 2.0 * (1.0 - kappa) / m


__all__ += [  # section 3 (kept here so each section's names stay with it)
    "laplace_selection_beta",
    "laplace_selection_eps_d",
    "laplace_selection_log_delta",
    "laplace_selection_privacy",
    "lln_selection_privacy",
    "lln_selection_rho",
    "smooth_rnm_epsilon",
    "sps_epsilon",
    "sps_split",
]


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


def sensitivity_bound_shift(beta: float, epsilon1: float, delta: float) -> float:
    """Upward shift (beta/eps1) ln(1/(2 delta)) of the released log-bound (SPEC §9.2).

    With L̂ = ln S(x) + (beta/eps1)(Z + ln(1/(2 delta))), Z ~ Lap(1), the bad
    event L̂ < ln S(x) has probability exactly delta.
    """
    beta = check_positive(beta, "beta")
    epsilon1 = check_epsilon(epsilon1, "epsilon1")
    d = _require_delta_positive(delta)
    if d >= 0.5:
        raise ValueError(f"delta must be < 1/2 for the sensitivity bound, got {delta!r}")
    return (beta / epsilon1) * -math.log(2.0 * d)


def sensitivity_bound_privacy(
    epsilon1: float, epsilon2: float, delta: float, *, relation: str | None = None
) -> Privacy:
    """Private sensitivity bound then a fixed-scale selector: (eps1 + eps2, delta)-DP (SPEC §9.2).

    eps1 pays for the Laplace release of ln S(x) (beta-Lipschitz, scale
    beta/eps1), delta is the probability that the released bound is below
    S(x), eps2 pays for EM / PF / Laplace RNM at the released sensitivity.
    The proof is in :class:`dpselect.mechanisms.sensitivity_bound.PrivateSensitivityBound`.

    Examples
    --------
    >>> print(sensitivity_bound_privacy(0.5, 1.0, 1e-6, relation="add_remove"))
    (1.5, 1e-06)-DP [add_remove]
    """
    return Privacy(
        check_epsilon(epsilon1, "epsilon1") + check_epsilon(epsilon2, "epsilon2"),
        _require_delta_positive(delta),
        relation,
        "private sensitivity bound + fixed-scale selection (generalized PTR; SPEC §9.2)",
    )


__all__ += ["sensitivity_bound_privacy", "sensitivity_bound_shift"]  # section 4 (sensitivity bound)


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

