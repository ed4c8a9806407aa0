"""The mechanism interface shared by every selection mechanism.

A mechanism is a small immutable configuration object (a frozen dataclass)::

    mech.select(problem, *, size=None, rng=None)  -> int | ndarray[int]
    mech.probabilities(problem)                -> OutputLaw (exact, sums to 1)
    mech.log_probabilities(problem)            -> ndarray (log of the above)
    mech.privacy(problem)                      -> Privacy

Noisy-max mechanisms only say how to calibrate: ``calibrate(problem)`` returns
the noise scale b and the noise law h, and :mod:`dpselect._engine` does the
sampling of argmax_r (u_r + b Z_r) and the exact output distribution.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import NamedTuple, overload

import numpy as np

from .. import _engine as noisy_max
from .._docstrings import fill_doc
from .._mechanism_support import check_problem
from .._validation import check_random_state, check_size
from ..noise import NoiseDistribution
from ..output_law import OutputLaw
from ..privacy import Privacy
from ..problem import SelectionProblem
from ..typing import SeedLike

__all__ = ["Calibration", "Mechanism", "NoisyMaxMechanism", "no_guarantee"]


class Calibration(NamedTuple):
    """A noisy max's calibration: the noise scale b(x) and the standard noise law h.

    Attributes
    ----------
    scale : float
        The noise scale b(x) > 0.
    noise : NoiseDistribution
        The standard noise law h (a :mod:`dpselect.noise` object).
    """

    scale: float
    noise: NoiseDistribution


def no_guarantee(problem: SelectionProblem) -> Privacy | None:
    """``Privacy(inf)`` for a problem built as not private (``private=False``), else None.

    Every mechanism's ``privacy()`` starts with this check: a problem whose
    candidate set or scores are not differentially private (e.g. data points
    as candidates, mathematics §7 item 16) has no guarantee whatever the noise.

    Parameters
    ----------
    problem : SelectionProblem
        The problem a mechanism is asked about.

    Returns
    -------
    Privacy or None
        ``Privacy(inf, 0)`` under ``problem.relation`` when
        ``problem.private`` is False, else None.

    Examples
    --------
    >>> from dpselect import SelectionProblem
    >>> from dpselect.mechanisms.base import no_guarantee
    >>> no_guarantee(SelectionProblem([1.0, 0.0])) is None
    True
    >>> no_guarantee(SelectionProblem([1.0, 0.0], private=False)).epsilon
    inf
    """
    if problem.private:
        return None
    return Privacy(
        math.inf,
        0.0,
        problem.relation,
        "no guarantee: the problem itself is not differentially private (mathematics §7 item 16)",
    )


class Mechanism(ABC):
    """Abstract selection mechanism (see module docstring).

    Subclasses are immutable configurations (frozen dataclasses) that
    implement :meth:`select`, :meth:`log_probabilities` and :meth:`privacy`.

    See Also
    --------
    NoisyMaxMechanism : Report noisy max for a calibration (b, h) chosen by the subclass
    ExponentialMechanism : Exponential mechanism, P[r] ∝ exp(eps u_r / (2 Delta u)); sampled as Gumbel noisy max
    make_mechanism : The mechanism called ``name`` with budget ``epsilon`` (and ``delta`` where it applies)

    Examples
    --------
    >>> import dpselect
    >>> isinstance(dpselect.PermuteAndFlip(1.0), dpselect.Mechanism)
    True
    """

    @overload
    def select(self, problem: SelectionProblem, *, size: None = None, rng: SeedLike = None) -> int: ...

    @overload
    def select(self, problem: SelectionProblem, *, size: int, rng: SeedLike = None) -> np.ndarray: ...

    def select(self, problem: SelectionProblem, *, size: int | None = None, rng: SeedLike = None) -> int | np.ndarray:
        """Draw the selected candidate's index.

        Parameters
        ----------
        problem : SelectionProblem
            The candidates' utilities and sensitivities.
        size : int, default=None
            ``None`` for one draw, else the number of independent draws.
        rng : SeedLike, default=None
            The randomness (keyword-only): None, an int seed, a
            ``numpy.random.Generator``, ... (:data:`dpselect.typing.SeedLike`).

        Returns
        -------
        int or numpy.ndarray of int
            One index (``size=None``) or an array of ``size`` indices.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> dpselect.PermuteAndFlip(1.0).select(p, size=4, rng=0).shape
        (4,)
        >>> int(dpselect.ReportNoisyMax(50.0).select(p, rng=0))
        0
        """
        check_problem(problem)
        n = check_size(size)
        out = self._sample(problem, 1 if n is None else n, rng)
        return int(out[0]) if n is None else out

    @abstractmethod
    def _sample(self, problem: SelectionProblem, n: int, rng: SeedLike) -> np.ndarray:
        """``n`` independent indices (int64 array) for a checked problem and size; ``rng`` unchecked."""

    @abstractmethod
    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact log output probabilities, one per candidate.

        %(problem_sections)s
        numpy.ndarray of float, shape (m,)
            ``log P[select(problem) = r]`` (``-inf`` where impossible).

        %(log_probabilities_example)s
        """

    @abstractmethod
    @fill_doc
    def privacy(self, problem: SelectionProblem) -> Privacy:
        """The (epsilon, delta) guarantee this mechanism has on this problem.

        %(privacy_sections)s
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> print(dpselect.PermuteAndFlip(1.0).privacy(p))
        1-DP [add_remove]
        """

    @fill_doc
    def probabilities(self, problem: SelectionProblem) -> OutputLaw:
        """Exact output distribution over the candidates (sums to 1).

        %(problem_sections)s
        OutputLaw, shape (m,)
            ``exp(log_probabilities(problem))`` over the support of candidate
            indices ``0..m-1`` (a read-only array: copy it before editing).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> dpselect.ExponentialMechanism(2.0).probabilities(p).round(4)   # exp(eps u / 2) normalised
        array([0.7311, 0.2689])
        """
        return OutputLaw(np.exp(self.log_probabilities(problem)))


class NoisyMaxMechanism(Mechanism):
    r"""Report noisy max for a calibration (b, h) chosen by the subclass.

    .. math::

        \hat r = \operatorname{argmax}_r \bigl(u(x, r) + b(x) Z_r\bigr),
        \qquad Z_r \overset{iid}{\sim} h.

    Sampling and the exact output law are done by :mod:`dpselect._engine`.

    See Also
    --------
    Mechanism : Abstract selection mechanism (see module docstring)
    ReportNoisyMax : Report noisy max: argmax_r (u_r + (c Delta u / eps) Z_r), c = 2 (1 if monotone)
    SmoothNoisyMax : Smooth Noisy Max (Chaves et al., Algorithm 1) with a sound calibration

    Examples
    --------
    >>> import dpselect
    >>> isinstance(dpselect.ReportNoisyMax(1.0), dpselect.NoisyMaxMechanism)
    True
    """

    @abstractmethod
    @fill_doc
    def calibrate(self, problem: SelectionProblem) -> Calibration:
        """The noise scale and law for this problem.

        %(problem_sections)s
        Calibration
            The scale b(x) >= 0 and the standard noise law h (a
            :mod:`dpselect.noise` object).

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> scale, noise = dpselect.ReportNoisyMax(1.0, noise="gumbel").calibrate(p)
        >>> scale, type(noise).__name__
        (2.0, 'Gumbel')
        """

    def _sample(self, problem: SelectionProblem, n: int, rng: SeedLike) -> np.ndarray:
        """argmax_r (u_r + b Z_r) through the noisy-max engine, ``n`` times."""
        gen = check_random_state(rng)
        scale, noise = self.calibrate(problem)
        return np.asarray(noisy_max.sample_argmax(problem.scores, scale, noise, size=n, rng=gen), dtype=np.int64)

    @fill_doc
    def log_probabilities(self, problem: SelectionProblem) -> np.ndarray:
        """Exact log output probabilities of the noisy max, one per candidate.

        %(problem_sections)s
        numpy.ndarray of float, shape (m,)
            ``log P[argmax = r]`` by the engine's quadrature.

        Examples
        --------
        >>> import dpselect
        >>> p = dpselect.SelectionProblem([1.0, 0.0])
        >>> dpselect.ReportNoisyMax(2.0, noise="gumbel").probabilities(p).round(4)   # = EM
        array([0.7311, 0.2689])
        """
        check_problem(problem)
        scale, noise = self.calibrate(problem)
        return noisy_max.log_probabilities(problem.scores, scale, noise)
