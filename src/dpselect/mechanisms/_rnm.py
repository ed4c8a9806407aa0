"""Report noisy max with Gumbel, exponential or Laplace noise at the global-sensitivity scale.

Public through :mod:`dpselect.mechanisms.classic` (mathematics §2.6, §3.1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._params import EPSILON, Rule, options, validate_fields
from ..noise import Exponential, Gumbel, Laplace, NoiseDistribution
from ..privacy import Privacy
from ..problem import SelectionProblem
from ._classic_common import SAMPLER, ExactSampling, global_scale, pure_privacy
from .base import Calibration

__all__ = ["ReportNoisyMax"]

_RNM_NOISE: dict[str, Callable[[], NoiseDistribution]] = {
    "gumbel": Gumbel,
    "exponential": Exponential,
    "laplace": Laplace,
}


@dataclass(frozen=True)
class ReportNoisyMax(ExactSampling):
    """Report noisy max: argmax_r (u_r + (c Delta u / eps) Z_r), c = 2 (1 if monotone).

    ``noise="gumbel"`` is the exponential mechanism, ``"exponential"`` is
    permute-and-flip, ``"laplace"`` is Laplace report-noisy-max (Dwork & Roth
    Claim 3.9; mathematics §3.1 with constant scale).  Output probabilities always
    come from the noisy-max integral (so they independently check the closed
    forms of ExponentialMechanism and PermuteAndFlip).  epsilon-DP under the
    problem's neighbour relation (add/remove or replace, ``problem.relation``).

    ``sampler="exact"`` is available for ``noise="gumbel"`` (the exponential
    mechanism's exact rejection sampler) and ``"exponential"`` (exact
    permute-and-flip); Laplace report-noisy-max has no exact sampler here.

    Parameters
    ----------
    epsilon : float
        The privacy parameter, > 0.
    noise : {"gumbel", "exponential", "laplace"}, default="gumbel"
        The noise law Z_r.
    sampler : {"float", "exact"}, default="float"
        "float": NumPy float noise; "exact": the exact sampler of the
        equivalent mechanism (not with ``noise="laplace"``).

    See Also
    --------
    NoisyMaxMechanism : Report noisy max for a calibration (b, h) chosen by the subclass
    SmoothNoisyMax : Smooth Noisy Max (Chaves et al., Algorithm 1) with a sound calibration
    max_utility_change : The largest change of any utility over the given neighbour pairs

    Examples
    --------
    >>> import dpselect
    >>> p = dpselect.SelectionProblem([1.0, 0.0])
    >>> dpselect.ReportNoisyMax(2.0, noise="exponential").probabilities(p).round(4)   # = PF
    array([0.8161, 0.1839])
    """

    epsilon: float
    noise: str = "gumbel"
    sampler: str = "float"
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": EPSILON,
        "noise": options(*_RNM_NOISE),
        "sampler": SAMPLER,
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)
        if self.sampler == "exact" and self.noise == "laplace":
            raise ValueError("sampler='exact' needs noise='gumbel' or 'exponential' (no exact Laplace noisy max)")

    def _exact_kind(self) -> str | None:
        """The law the exact sampler draws: EM for Gumbel noise, PF for exponential noise."""
        return "em" if self.noise == "gumbel" else "pf"

    @fill_doc
    def calibrate(self, problem: SelectionProblem) -> Calibration:
        """The noise scale 2 Delta u / eps (Delta u / eps if monotone) and the law named by ``noise``.

        %(calibrate_sections)s
        >>> scale, noise = dpselect.ReportNoisyMax(2.0, noise="laplace").calibrate(p)
        >>> scale, type(noise).__name__
        (1.0, 'Laplace')
        """
        return Calibration(global_scale(self.epsilon, problem), _RNM_NOISE[self.noise]())

    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """epsilon-DP; also epsilon-bounded-range with ``noise="gumbel"`` (the exponential mechanism).

        %(privacy_sections)s
        >>> print(dpselect.ReportNoisyMax(1.0, noise="laplace").privacy(dpselect.SelectionProblem([1.0, 0.0])))
        1-DP [add_remove]
        """
        check_problem(problem)
        return pure_privacy(
            self.epsilon,
            problem,
            f"report noisy max ({self.noise}; mathematics §2.6/§3.1)",
            bounded_range=self.noise == "gumbel",
        )
