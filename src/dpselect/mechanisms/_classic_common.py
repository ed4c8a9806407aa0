"""What the classic mechanisms share: the global-sensitivity noise scale, the pure guarantee, exact sampling.

See :mod:`dpselect.mechanisms.classic` (mathematics §2.6, §3.1).
"""

from __future__ import annotations

import math

import numpy as np

from .._params import Rule
from .._validation import SAMPLERS, check_sampler
from ..noise import IntegerSource
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import SeedLike
from ._exact_selection import exact_rates, sample_em_exact, sample_pf_exact
from .base import NoisyMaxMechanism, no_guarantee

__all__ = ["SAMPLER", "ExactSampling", "global_scale", "pure_privacy"]

#: The ``sampler`` rule of the classic mechanisms (any other value, None included, is a ValueError).
SAMPLER = Rule(f"one of {SAMPLERS}", check=lambda value, name: check_sampler(value))

_TINY = float(np.nextafter(0.0, 1.0))


def global_scale(epsilon: float, problem: SelectionProblem) -> float:
    """2 Delta u / eps, or Delta u / eps for monotone utilities.

    A scale that overflows (epsilon far below Delta u / 1e308) is rejected with an
    error naming epsilon.  A scale that underflows (epsilon above ~1e308 Delta u)
    is floored at the smallest positive double: the gaps then overflow to -inf
    and the output is uniform over the maximal scores, which is the exact limit
    for these light-tailed noises (Gumbel, exponential, Laplace: a candidate
    1e308 noise units behind wins with probability below e^-1e308).
    """
    factor = 1.0 if problem.monotone else 2.0
    scale = factor * problem.global_sensitivity / epsilon
    if math.isinf(scale):
        raise ValueError(
            f"epsilon={epsilon!r} is too small for global_sensitivity={problem.global_sensitivity!r}: "
            f"the noise scale {factor:g} * global_sensitivity / epsilon overflows (use epsilon >= "
            f"{factor * problem.global_sensitivity / 1.7e308:.3g})"
        )
    return max(scale, _TINY)


def pure_privacy(epsilon: float, problem: SelectionProblem, source: str, bounded_range: bool = False) -> Privacy:
    """Epsilon-DP; epsilon-bounded-range for the exponential mechanism.

    Durfee & Rogers 2019, §3; derived in the mathematics page §10.1.
    """
    return no_guarantee(problem) or Privacy(
        epsilon, 0.0, problem.relation, source, bounded_range=epsilon if bounded_range else None
    )


class ExactSampling(NoisyMaxMechanism):
    """``sampler="exact"``: draw the mechanism's exact law with integer arithmetic."""

    epsilon: float
    sampler: str
    _EXACT: str | None = None  # "em" or "pf": the law sampled exactly

    def _exact_kind(self) -> str | None:
        """The law the exact sampler draws ("em" or "pf")."""
        return self._EXACT

    def _sample(self, problem: SelectionProblem, n: int, rng: SeedLike) -> np.ndarray:
        """The float noisy max, or the exact integer sampler of the law."""
        if self.sampler != "exact":
            return super()._sample(problem, n, rng)
        src = IntegerSource(rng)
        nums, den = exact_rates(problem, self.epsilon)
        draw = sample_em_exact if self._exact_kind() == "em" else sample_pf_exact
        return np.asarray(draw(nums, den, n, src), dtype=np.int64)
