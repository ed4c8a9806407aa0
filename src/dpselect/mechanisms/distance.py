"""Dataset-distance ("inverse sensitivity") utilities (mathematics §9.1).

For a public candidate set R and Y_r := {y : r is an optimal output at y}, the
utility u(x, r) = -d(x, Y_r) in the neighbour metric of the relation has
sensitivity 1 for every task (triangle inequality), so the exponential
mechanism / permute-and-flip on it need no m-fold dilation and no smooth
sensitivity (Asi & Duchi, NeurIPS 2020; Johnson & Shmatikov, KDD 2013 for
TDT; Gillenwater & Muñoz Medina's Duff for medians).  Any 1-Lipschitz lower bound l_r of
d(., Y_r) with l_r = 0 on Y_r is also valid: privacy needs only the
Lipschitz property.

Applications supply the distances (the "oracle"); :func:`distance_problem`
turns them into an ordinary :class:`~dpselect.problem.SelectionProblem` with
``global_sensitivity=1`` that any global-sensitivity mechanism
(:class:`~dpselect.mechanisms.classic.ExponentialMechanism`,
:class:`~dpselect.mechanisms.classic.PermuteAndFlip`, report-noisy-max) runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .._params import BOOLEAN, ITERABLE, NAMES, RELATION, array_1d, validate_params
from .._validation import check_array_1d
from ..problem import SelectionProblem
from ..typing import ArrayLike, Relation

__all__ = ["distance_problem", "max_utility_change"]


@validate_params(
    {"distances": array_1d(), "relation": RELATION, "labels": NAMES, "monotone": BOOLEAN, "private": BOOLEAN}
)
def distance_problem(
    distances: ArrayLike,
    *,
    relation: Relation,
    labels: Sequence[object] | None = None,
    monotone: bool = False,
    private: bool = True,
) -> SelectionProblem:
    r"""A selection problem on the dataset-distance utility u_r = -d_r (mathematics §9.1).

    The distances are measured in the metric of the neighbour relation
    ``relation`` (add/remove or replace neighbours); EM and PF on the problem
    are then epsilon-DP under that relation (mathematics §9.1).

    .. math::

        u(x, r) = -d(x, Y_r), \qquad |u(x, r) - u(y, r)| \le d(x, y) = 1
        \text{ for neighbours } x \sim y,

    with :math:`Y_r` the datasets at which r is an optimal output.

    Parameters
    ----------
    distances : array_like of float, shape (m,)
        Finite, non-negative d_r = d(x, Y_r) (or a 1-Lipschitz lower bound
        of it that is 0 on Y_r), one per candidate, measured in the metric
        of ``relation``.
    relation : {"add_remove", "replace"}
        The neighbour relation (keyword-only, required: a distance is only
        meaningful in one neighbour metric).
    labels : sequence of length m, default=None
        Names of the candidates.
    monotone : bool, default=False
        True when, for every pair of neighbours, all distances move in the
        same direction (e.g. negated counts under add/remove); EM and PF may
        then use half the noise (mathematics §2.6, §9.1).
    private : bool, default=True
        False when the candidate set itself depends on the data (e.g. the
        data's own distinct values): every mechanism then reports no
        guarantee (mathematics §7 item 16).

    Returns
    -------
    SelectionProblem
        scores = -distances, ``global_sensitivity=1``.

    See Also
    --------
    max_utility_change : The largest change of any utility over the given neighbour pairs

    References
    ----------
    Asi & Duchi, "Instance-optimality in differential privacy via
    approximate inverse sensitivity mechanisms", NeurIPS 2020 (the inverse
    sensitivity mechanism); mathematics §9.1.

    Examples
    --------
    >>> import dpselect
    >>> from dpselect.mechanisms.distance import distance_problem
    >>> problem = distance_problem([0.0, 3.0, 7.0], relation="replace")
    >>> dpselect.PermuteAndFlip(1.0).probabilities(problem).round(3)
    array([0.876, 0.11 , 0.014])
    """
    d = np.asarray(distances)
    if (d < 0).any():
        raise ValueError("distances must be >= 0")
    return SelectionProblem(
        0.0 - d,  # not -d: no negative zeros
        labels=labels,
        global_sensitivity=1.0,
        monotone=monotone,
        relation=relation,
        private=private,
    )


@validate_params({"pairs": ITERABLE})  # each pair is checked below (a generator is read once)
def max_utility_change(pairs: Iterable[tuple[SelectionProblem | ArrayLike, SelectionProblem | ArrayLike]]) -> float:
    r"""The largest change of any utility over the given neighbour pairs.

    .. math::

        \max_{(x, y) \in \text{pairs}} \max_r |u(x, r) - u(y, r)|

    The empirical sensitivity of a utility (e.g. a distance oracle) over the
    given pairs: every application's tests check that it is <= 1 on all
    neighbours of small datasets before relying on ``global_sensitivity=1``
    (mathematics §9.1).

    Parameters
    ----------
    pairs : iterable of (x, y) pairs
        Each element of a pair is a
        :class:`~dpselect.problem.SelectionProblem` (its scores are used)
        or a 1-D array of utilities (or of distances: the change is the
        same); both elements of a pair have the same length.

    Returns
    -------
    float
        The maximum above (a ValueError if ``pairs`` is empty).

    See Also
    --------
    distance_problem : A selection problem on the dataset-distance utility u_r = -d_r (mathematics §9.1)
    NoisyMaxMechanism : Report noisy max for a calibration (b, h) chosen by the subclass
    ReportNoisyMax : Report noisy max: argmax_r (u_r + (c Delta u / eps) Z_r), c = 2 (1 if monotone)

    Examples
    --------
    >>> from dpselect.mechanisms.distance import max_utility_change
    >>> max_utility_change([([0, 2, 3], [1, 2, 2]), ([0, 1], [0, 0])])
    1.0
    """
    worst = 0.0
    n = 0
    for x, y in pairs:
        ux = check_array_1d(getattr(x, "scores", x), "pairs")
        uy = check_array_1d(getattr(y, "scores", y), "pairs")
        if ux.shape != uy.shape:
            raise ValueError(f"pairs must hold utilities of equal length, got {ux.size} and {uy.size}")
        worst = max(worst, float(np.abs(ux - uy).max()))
        n += 1
    if n == 0:
        raise ValueError("pairs must not be empty")
    return worst
