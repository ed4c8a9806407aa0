"""Smooth report-noisy-max with LLN noise: its rho-zCDP and the converted guarantee (mathematics §3.1, §2.5)."""

from __future__ import annotations

import math

from .._docstrings import fill_doc
from .._params import RELATION, positive, validate_params
from ..privacy import Privacy
from ..typing import Relation
from ._rules import DELTA_POSITIVE, N_CANDIDATES, NONNEGATIVE

__all__ = ["lln_selection_privacy", "lln_selection_rho"]


_LLN_RULES = {"m": N_CANDIDATES, "beta": NONNEGATIVE, "sigma": positive(), "a": positive()}


@validate_params(_LLN_RULES)
@fill_doc
def lln_selection_rho(m: int, beta: float, sigma: float, a: float) -> float:
    """Return the rho-zCDP of releasing all m LLN-noised scores (mathematics §3.1, §2.5).

        rho = m (beta/sigma + e^{3 sigma^2/2} A)^2 / 2

    (each coordinate is Bun & Steinke's §3.1.1 mechanism with shift <= S, so
    s = A; the argmax is post-processing).

    %(lln_parameters)s

    Returns
    -------
    float
        rho (``inf`` beyond the float range).

    See Also
    --------
    lln_selection_privacy : Return the rho-zCDP of :func:`lln_selection_rho` as (rho + 2 sqrt(rho ln 1/delta) ...
    lln_zcdp_rho : Return rho = (beta/sigma + e^{3 sigma^2/2} alpha)^2 / 2 of smooth-scale LLN noise
    br_zcdp_rho : Return rho = eta^2 / 8: an eta-bounded-range mechanism is rho-zCDP (Cesar & Rogers 2021)
    """
    x = _lln_coordinate_epsilon(beta, sigma, a)
    return 0.5 * m * x * x  # x * x: inf (not OverflowError) beyond the float range


def _lln_coordinate_epsilon(beta: float, sigma: float, a: float) -> float:
    """Bun & Steinke's per-coordinate CDP level eps_c = beta/sigma + e^{3 sigma^2/2} A (inf on overflow)."""
    log_growth = 1.5 * sigma * sigma
    return beta / sigma + (math.exp(log_growth) * a if log_growth < 709.0 else math.inf)


@validate_params({**_LLN_RULES, "delta": DELTA_POSITIVE, "relation": RELATION.or_none()})
@fill_doc
def lln_selection_privacy(
    m: int, beta: float, sigma: float, a: float, delta: float, *, relation: Relation | None = None
) -> Privacy:
    """Return the rho-zCDP of :func:`lln_selection_rho` as (rho + 2 sqrt(rho ln 1/delta), delta)-DP (mathematics §2.5).

    The returned ``Privacy`` carries ``rho`` so the accountant composes it in rho.

    %(lln_parameters)s
    delta : float
        The delta of the conversion, in (0, 1).
    relation : {"add_remove", "replace"} or None, default=None
        The neighbour relation in which S is a smooth bound (None: not tied to one).

    Returns
    -------
    Privacy
        The converted guarantee, with its ``rho``.

    See Also
    --------
    lln_selection_rho : Return the rho-zCDP of releasing all m LLN-noised scores (mathematics §3.1, §2.5)
    laplace_selection_beta : Return the largest beta with m beta <= eps_d and delta_d(beta) <= delta ...
    laplace_selection_eps_d : Return the smallest eps_d >= m beta with delta_d <= delta for a given beta ...

    Examples
    --------
    >>> p = lln_selection_privacy(5, 0.1, 0.5, 0.05, 1e-6)   # x = 0.1/0.5 + e^0.375 0.05; rho = 5 x^2 / 2
    >>> round(p.rho, 6), round(p.epsilon, 4)
    (0.185981, 3.3919)
    """
    d = delta
    x = _lln_coordinate_epsilon(beta, sigma, a)
    rho = 0.5 * m * x * x
    # rho + 2 sqrt(rho ln(1/delta)) written as x (m x / 2 + sqrt(2 m ln(1/delta))): no under/overflow in x^2
    eps = x * (0.5 * m * x + math.sqrt(2.0 * m * -math.log(d)))
    exact_rho = rho if (0.0 < rho < math.inf) else None  # an underflowed or infinite rho is not reported
    return Privacy(
        eps,
        d,
        relation,
        "smooth report-noisy-max, LLN: rho = m (beta/sigma + e^{3 sigma^2/2} A)^2/2 zCDP (mathematics §3.1), "
        "converted by rho + 2 sqrt(rho ln(1/delta)) (mathematics §2.5)",
        exact_rho,
    )
