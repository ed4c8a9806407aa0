"""Propose-test-release, stable histograms and the private sensitivity bound (mathematics §6.2, §6.3, §9.2)."""

from __future__ import annotations

import math

from .._params import EPSILON, RELATION, positive, validate_params
from ..privacy import Privacy
from ..typing import Relation
from ._rules import DELTA_POSITIVE, delta_positive

#: PTR needs 0 < delta < 1 (its threshold is ln(1/delta)/epsilon).
_PTR_DELTA = delta_positive("the PTR threshold is ln(1/delta)/epsilon")


@validate_params({"epsilon": EPSILON, "delta": _PTR_DELTA, "relation": RELATION.or_none()})
def ptr_privacy(epsilon: float, delta: float, *, relation: Relation | None = None) -> Privacy:
    """Generic propose-test-release: (2 epsilon, delta/2)-DP (mathematics §6.2, mathematics §7 item 27).

    The test ``gamma + K > T`` is epsilon-DP (gamma has sensitivity 1; K is a
    Laplace variable of scale 1/epsilon, or the library's discrete Laplace
    integer of scale >= 1/epsilon, whose tails change by at most e^epsilon
    under a shift of 1); when gamma(D) >= 1 the release of ``f(D)`` with
    noise of scale b/epsilon (continuous or on a grid) costs another epsilon;
    when gamma(D) = 0 the test passes with probability P[K > T] <= delta/2
    (equal for the continuous threshold ln(1/delta)/epsilon; for the integer
    threshold T is the smallest integer with P[K > T] <= delta/2).

    Parameters
    ----------
    epsilon : float
        The epsilon of the test (and of the release), > 0.
    delta : float
        The delta parameter of the threshold, in (0, 1).
    relation : {"add_remove", "replace"} or None, default=None
        The neighbour relation in which gamma (the distance to instability)
        is measured; None leaves the guarantee untied to a relation.

    Returns
    -------
    Privacy
        (2 epsilon, delta/2)-DP.

    See Also
    --------
    ptr_mode_privacy : PTR for the mode (b = 0, nothing noisy released after the test): (epsilon, delta/2)-DP
    sensitivity_bound_privacy : Private sensitivity bound then a fixed-scale selector: (eps1 + eps2, delta)-DP ...
    sensitivity_bound_shift : Upward shift (beta/eps1) ln(1/(2 delta)) of the released log-bound (mathematics §9.2)

    References
    ----------
    Dwork & Lei, Differential Privacy and Robust Statistics, STOC 2009
    (propose-test-release); the mathematics page §6.2.

    Examples
    --------
    >>> print(ptr_privacy(0.5, 1e-6))
    (1, 5e-07)-DP
    """
    eps, d = epsilon, delta
    return Privacy(2.0 * eps, d / 2.0, relation, "propose-test-release (mathematics §6.2)")


@validate_params({"epsilon": EPSILON, "delta": _PTR_DELTA, "relation": RELATION})
def ptr_mode_privacy(epsilon: float, delta: float, *, relation: Relation = "add_remove") -> Privacy:
    """PTR for the mode (b = 0, nothing noisy released after the test): (epsilon, delta/2)-DP.

    Under the relation whose distance to instability is used (mathematics §6.2,
    mathematics §7 item 28; the derivation is in :mod:`dpselect.apps.counts`).  The bound is
    attained (exact audit in the tests).

    Parameters
    ----------
    epsilon : float
        The epsilon of the test, > 0.
    delta : float
        The delta parameter of the threshold, in (0, 1).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation in which the distance to instability is
        measured.

    Returns
    -------
    Privacy
        (epsilon, delta/2)-DP under ``relation``.

    See Also
    --------
    ptr_privacy : Generic propose-test-release: (2 epsilon, delta/2)-DP (mathematics §6.2, mathematics §7 item 27)
    sensitivity_bound_privacy : Private sensitivity bound then a fixed-scale selector: (eps1 + eps2, delta)-DP ...
    sensitivity_bound_shift : Upward shift (beta/eps1) ln(1/(2 delta)) of the released log-bound (mathematics §9.2)

    Examples
    --------
    >>> print(ptr_mode_privacy(0.5, 1e-6))
    (0.5, 5e-07)-DP [add_remove]
    """
    eps, d = epsilon, delta
    return Privacy(eps, d / 2.0, relation, "PTR mode, no release noise (mathematics §6.2, mathematics §7 item 28)")


@validate_params({"epsilon": EPSILON, "delta": _PTR_DELTA, "relation": RELATION})
def stable_histogram_privacy(epsilon: float, delta: float, *, relation: Relation = "add_remove") -> Privacy:
    """Stable histogram: (epsilon, delta/2)-DP under add/remove, (2 epsilon, delta) under replace-one.

    See mathematics §6.3.

    A new bin with count 1 survives the threshold (1 + ln(1/delta)/epsilon for
    continuous noise, 1 + the smallest grid point x with P[noise >= x] <=
    delta/2 on a grid) with probability at most delta/2; a replacement moves
    two bins.

    Parameters
    ----------
    epsilon : float
        The epsilon of the noisy counts, > 0.
    delta : float
        The delta parameter of the threshold, in (0, 1).
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation of the guarantee.

    Returns
    -------
    Privacy
        (epsilon, delta/2)-DP under add/remove, (2 epsilon, delta)-DP under
        replace.

    See Also
    --------
    ptr_mode_privacy : PTR for the mode (b = 0, nothing noisy released after the test): (epsilon, delta/2)-DP
    ptr_privacy : Generic propose-test-release: (2 epsilon, delta/2)-DP (mathematics §6.2, mathematics §7 item 27)
    sensitivity_bound_privacy : Private sensitivity bound then a fixed-scale selector: (eps1 + eps2, delta)-DP ...

    References
    ----------
    Korolova, Kenthapadi, Mishra & Ntoulas, Releasing Search Queries and
    Clicks Privately, WWW 2009; Bun, Nissim & Stemmer, Simultaneous Private
    Learning of Multiple Concepts, ITCS 2016 (stability-based histograms);
    the mathematics page §6.3.

    Examples
    --------
    >>> print(stable_histogram_privacy(0.5, 1e-6, relation="replace"))
    (1, 1e-06)-DP [replace]
    """
    eps, d = epsilon, delta
    rel = relation
    src = "stable histogram (mathematics §6.3)"
    return Privacy(eps, d / 2.0, rel, src) if rel == "add_remove" else Privacy(2.0 * eps, d, rel, src)


@validate_params({"beta": positive(), "epsilon1": EPSILON, "delta": DELTA_POSITIVE})
def sensitivity_bound_shift(beta: float, epsilon1: float, delta: float) -> float:
    """Upward shift (beta/eps1) ln(1/(2 delta)) of the released log-bound (mathematics §9.2).

    With L̂ = ln S(x) + (beta/eps1)(Z + ln(1/(2 delta))), Z ~ Lap(1), the bad
    event L̂ < ln S(x) has probability exactly delta.

    Parameters
    ----------
    beta : float
        The Lipschitz constant of ln S (S is beta-smooth), > 0.
    epsilon1 : float
        The epsilon of the Laplace release of ln S(x), > 0.
    delta : float
        The probability that the released bound is below S(x), in (0, 1/2).

    Returns
    -------
    float
        The shift (beta/epsilon1) ln(1/(2 delta)) > 0.

    See Also
    --------
    sensitivity_bound_privacy : Private sensitivity bound then a fixed-scale selector: (eps1 + eps2, delta)-DP ...
    ptr_mode_privacy : PTR for the mode (b = 0, nothing noisy released after the test): (epsilon, delta/2)-DP
    ptr_privacy : Generic propose-test-release: (2 epsilon, delta/2)-DP (mathematics §6.2, mathematics §7 item 27)

    Examples
    --------
    >>> round(sensitivity_bound_shift(0.1, 0.5, 1e-6), 6)
    2.624473
    """
    d = delta
    if d >= 0.5:
        raise ValueError(f"delta must be < 1/2 for the sensitivity bound, got {delta!r}")
    return (beta / epsilon1) * -math.log(2.0 * d)


@validate_params({"epsilon1": EPSILON, "epsilon2": EPSILON, "delta": DELTA_POSITIVE, "relation": RELATION.or_none()})
def sensitivity_bound_privacy(
    epsilon1: float, epsilon2: float, delta: float, *, relation: Relation | None = None
) -> Privacy:
    """Private sensitivity bound then a fixed-scale selector: (eps1 + eps2, delta)-DP (mathematics §9.2).

    eps1 pays for the Laplace release of ln S(x) (beta-Lipschitz, scale
    beta/eps1), delta is the probability that the released bound is below
    S(x), eps2 pays for EM / PF / Laplace RNM at the released sensitivity.
    The proof is in :class:`dpselect.mechanisms.sensitivity_bound.PrivateSensitivityBound`.

    Parameters
    ----------
    epsilon1 : float
        The epsilon of the sensitivity-bound release, > 0.
    epsilon2 : float
        The epsilon of the selector run at the released sensitivity, > 0.
    delta : float
        The probability that the released bound is below S(x), in (0, 1).
    relation : {"add_remove", "replace"} or None, default=None
        The neighbour relation of the guarantee (None: not tied to one).

    Returns
    -------
    Privacy
        (epsilon1 + epsilon2, delta)-DP.

    See Also
    --------
    sensitivity_bound_shift : Upward shift (beta/eps1) ln(1/(2 delta)) of the released log-bound (mathematics §9.2)
    ptr_mode_privacy : PTR for the mode (b = 0, nothing noisy released after the test): (epsilon, delta/2)-DP
    ptr_privacy : Generic propose-test-release: (2 epsilon, delta/2)-DP (mathematics §6.2, mathematics §7 item 27)

    Examples
    --------
    >>> print(sensitivity_bound_privacy(0.5, 1.0, 1e-6, relation="add_remove"))
    (1.5, 1e-06)-DP [add_remove]
    """
    return Privacy(
        epsilon1 + epsilon2,
        delta,
        relation,
        "private sensitivity bound + fixed-scale selection (generalized PTR; mathematics §9.2)",
    )
