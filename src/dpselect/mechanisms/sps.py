"""Smooth Private Selection (Yamamoto & Shibuya, IPCCC 2024, Def. 12; mathematics §3.2).

argmax_r { u(x, r) + (max_r S(x, r)/alpha') Z_r } with polynomial-tail noise
P_gamma (one- or two-sided), alpha' = alpha(k eps), beta' = beta(l eps):
(k + m l / 2) eps-DP (YS Thm 2; one-sided: the supplement's corrected Thm 3;
mathematics §3.2, mathematics §7 items 1-2).  The privacy formula is
:func:`dpselect.accounting.sps_epsilon`; sampling and the exact law are
:mod:`dpselect._engine`'s.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from functools import lru_cache
from typing import ClassVar, NamedTuple

from .. import accounting
from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._params import BOOLEAN, EPSILON, Rule, positive, real_in, validate_fields
from .._validation import check_positive, check_tail_exponent
from ..noise import NoiseDistribution, PolynomialTail
from ..privacy import Privacy
from ..problem import SelectionProblem
from .base import Calibration, NoisyMaxMechanism, no_guarantee
from .snm import noise_scale

__all__ = ["SPSParameters", "SmoothPrivateSelection"]


class SPSParameters(NamedTuple):
    """Calibration of :class:`SmoothPrivateSelection` for one problem.

    Attributes
    ----------
    k, l
        budget split (guarantee (k + m l / 2) eps).
    alpha
        alpha' = alpha(k eps); the noise scale is max_r S(x, r) / alpha'.
    beta
        beta' = beta(l eps), the smoothing parameter of S(., r).
    """

    k: float
    l: float
    alpha: float
    beta: float


def _check_gamma(value: object, name: str) -> float:
    """The tail exponent: > 1 (integrable density) and within the accurate range of the noise."""
    gamma = check_positive(value, name)
    if gamma <= 1.0:
        raise ValueError(f"gamma must be > 1 (the noise density must be integrable), got {gamma!r}")
    check_tail_exponent(gamma - 1.0, name, gamma)
    return gamma


@dataclass(frozen=True)
class SmoothPrivateSelection(NoisyMaxMechanism):
    """Smooth Private Selection (Yamamoto & Shibuya, IPCCC 2024, Def. 12; mathematics §3.2).

    argmax_r { u(x, r) + (max_r S(x, r) / alpha') Z_r },  Z_r iid P_gamma
    (density proportional to 1/(1+|z|^gamma)), restricted to z >= 0 and
    renormalised when ``one_sided`` (YS Def. 12), S(., r) =
    ``problem.candidate_smooth_sensitivity(beta')``.

    **Not the default for selection.**  The noise of all m candidates is
    rescaled by S(x), so SPS pays the m-fold dilation (k + m l/2, mathematics §3.1)
    and loses to PF/EM on a dataset-distance utility (mathematics §9.1).  TDT top
    SNP, m = 20 simulated SNPs, N = 150 families, exact P[best] averaged over
    40 panels (``apps.tdt.accuracy_table(ms=(20,), rng=0)``): sound SPS
    (case IV, Thm 5 bound, one-sided) 0.096 at eps = 3 and 0.526 at eps = 9,
    against 0.77 and 0.99 for PF on the neighbour-distance utility (the mathematics page
    §9.1's measurement; Justice 2020 example at eps = 9: 0.97 vs SPS 0.47).
    Majority counts [22, 8, 17, 4, 0], eps = 1: SPS on the argmax indicator
    0.250 vs PF on the counts 0.997.  Use the neighbour-distance default of
    ``apps.tdt``; SPS stays available to reproduce Yamamoto & Shibuya.

    Parameters
    ----------
    epsilon : float
        Privacy budget unit (> 0).
    gamma : float, default=4.0
        Tail exponent of the noise (> 1).
    one_sided : bool, default=True
        Use the one-sided noise (YS's recommended variant).
    kappa : float, default=0.5
        Share of the budget for the sliding (shift) term, in (0, 1) — the
        same name and meaning as in :class:`SmoothNoisyMax`: k = kappa,
        l = 2 (1 - kappa)/m, so k + m l / 2 = 1.
    k : float, default=None
        Yamamoto & Shibuya's sliding share (> 0, kappa's role), overriding
        ``kappa``; the guarantee is then (k + m l / 2) eps, which need not be
        eps.
    l : float, default=None
        Yamamoto & Shibuya's per-candidate dilation share (> 0); ``None``
        defaults to 2 (1 - k)/m (requires k < 1).

    See Also
    --------
    SmoothNoisyMax : Smooth Noisy Max (Chaves et al., Algorithm 1) with a sound calibration
    SmoothSensitivityRelease : Numeric release, not a selection mechanism: f(x) + (S(x)/alpha') Z, S beta'-smooth

    Notes
    -----
    alpha' = alpha(k eps), beta' = beta(l eps) with (alpha(e), beta(e)) =
    ``PolynomialTail(gamma).admissible(e)`` = (e / (2 (gamma-1)^{(gamma-1)/gamma}),
    e / (2 max(1, gamma-1))) — YS Thm 6 with the corrected beta (mathematics §7 item 1).
    Worked example (mathematics §3.2): eps = 1, gamma = 4, kappa = 1/2, m = 5:
    alpha' = 0.1097, beta' = 0.0333.

    **Guarantee: (k + m l / 2) eps-DP for both sidedness settings** (YS Thm 2;
    for one-sided noise the supplement's correction of Thm 3, mathematics §7 item 2);
    with the defaults this is exactly eps, under ``problem.relation`` (the
    neighbour relation, add/remove or replace, of the smooth bound S).

    If the problem's smooth bound is only valid up to ``problem.beta_max``
    (YS Thm 4/5, mathematics §4.1) and beta' exceeds it: with l defaulted, l is
    reduced so that beta(l eps) = beta_max and, with k defaulted too,
    k = 1 - m l / 2 (mathematics §3.2 "Choosing k, l"; the total stays eps); with l
    fixed by the user a ValueError is raised.  :meth:`parameters` reports the
    (k, l, alpha', beta') actually used.

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0, 0.0, 0.0], local_sensitivity=0.5)
    >>> mech = dpselect.SmoothPrivateSelection(1.0)
    >>> [round(v, 4) for v in mech.parameters(p)]
    [0.5, 0.2, 0.1097, 0.0333]
    >>> print(mech.privacy(p))
    1-DP [add_remove]
    """

    epsilon: float
    _: KW_ONLY
    gamma: float = 4.0
    one_sided: bool = True
    kappa: float = 0.5
    k: float | None = None
    l: float | None = None  # the paper's name
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": EPSILON,
        "gamma": Rule("a float > 1", check=_check_gamma),
        "one_sided": BOOLEAN,
        "kappa": real_in(0.0, 1.0),
        "k": positive(none=True),
        "l": positive(none=True),
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)
        if self.k is not None and self.l is None and self.k >= 1.0:
            raise ValueError(f"k must be < 1 when l is not given (l defaults to 2 (1 - k)/m), got {self.k!r}")

    def _noise(self) -> NoiseDistribution:
        """The noise law: P_gamma, one-sided when ``one_sided``."""
        h = PolynomialTail(self.gamma)
        return h.one_sided() if self.one_sided else h

    def parameters(self, problem: SelectionProblem) -> SPSParameters:
        """The (k, l, alpha', beta') used on this problem (after the beta_max adjustment).

        Parameters
        ----------
        problem : SelectionProblem
            The problem (its m and ``beta_max`` matter).

        Returns
        -------
        SPSParameters
            The named (k, l, alpha, beta).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0, 0.0, 0.0], local_sensitivity=0.5)
        >>> dpselect.SmoothPrivateSelection(1.0).parameters(p).k
        0.5
        """
        check_problem(problem)
        return _sps_parameters(
            self.epsilon, self.gamma, self.kappa, self.k, self.l, problem.n_candidates, float(problem.beta_max)
        )

    def calibrate(self, problem: SelectionProblem) -> Calibration:
        """The noise scale max_r S(x, r)/alpha' and the noise law.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities and per-candidate smooth sensitivities.

        Returns
        -------
        Calibration
            The scale and the standard noise law (one-sided when ``one_sided``).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0, 0.0, 0.0], local_sensitivity=0.5)
        >>> type(dpselect.SmoothPrivateSelection(1.0).calibrate(p)[1]).__name__
        'OneSided'
        """
        params = self.parameters(problem)
        s = float(problem.candidate_smooth_sensitivity(params.beta).max())
        return Calibration(noise_scale(s, params.alpha), self._noise())

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """(k + m l / 2) eps-DP (YS Thm 2 / corrected Thm 3; mathematics §3.2), under problem.relation.

        %(privacy_sections_m)s
        >>> p = dpselect.SelectionProblem([3.0, 1.0, 0.0, 0.0, 0.0], local_sensitivity=0.5)
        >>> print(dpselect.SmoothPrivateSelection(1.0).privacy(p))
        1-DP [add_remove]
        """
        params = self.parameters(problem)
        side = "one-sided" if self.one_sided else "two-sided"
        return no_guarantee(problem) or Privacy(
            accounting.sps_epsilon(params.k, params.l, problem.n_candidates, self.epsilon),
            0.0,
            problem.relation,
            f"smooth private selection, {side} P_{self.gamma:g} (Yamamoto-Shibuya Thm 2 / YS-supp Thm 3; "
            "mathematics §3.2)",
        )


@lru_cache(maxsize=1024)
def _sps_parameters(
    epsilon: float, gamma: float, kappa: float, k: float | None, l: float | None, m: int, beta_max: float
) -> SPSParameters:
    h = PolynomialTail(gamma)
    if l is None:  # k + m l / 2 = 1 (k < 1 was checked)
        k_used, l_used = accounting.sps_split(kappa if k is None else k, m)
    else:
        k_used, l_used = (kappa if k is None else k), l
    beta = float(h.admissible(l_used * epsilon)[1])
    if beta > beta_max:
        if l is not None:
            raise ValueError(
                f"l={l!r} gives beta' = {beta:.6g} > the problem's beta_max (the attribute) for its smooth bound "
                "(YS Thm 4/5); choose l <= beta_max / (beta(1) epsilon) or leave l unset"
            )
        beta_unit = float(h.admissible(1.0)[1])  # beta(e) = e * beta(1) (linear in e)
        l_used = beta_max / (beta_unit * epsilon)
        beta = float(h.admissible(l_used * epsilon)[1])
        while beta > beta_max:  # rounding
            l_used *= 1.0 - 1e-12
            beta = float(h.admissible(l_used * epsilon)[1])
        if k is None:
            k_used = 1.0 - m * l_used / 2.0
    alpha = float(h.admissible(k_used * epsilon)[0])
    return SPSParameters(k_used, l_used, alpha, beta)
