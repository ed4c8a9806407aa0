"""``SelectionProblem``: what is being selected, for one dataset.

A problem holds the utilities u(x, r) of every candidate r in a public,
data-independent candidate set R for one dataset x, together with what the
mechanisms need to calibrate noise: the global sensitivity Delta u, and,
for instance-based mechanisms, the local sensitivity at distance t
LS_u(x, t) (mathematics §1), optionally per candidate, or a ready smooth upper
bound.  It holds no privacy parameters.

Sensitivities are only meaningful within one neighbour relation
(``relation``: "add_remove" or "replace", mathematics §1).

A problem is immutable once built (attributes cannot be rebound, ``scores``
is a read-only array, ``labels`` a tuple), like the mechanisms: its
validation (e.g. global_sensitivity > 0) would otherwise not bind what a
mechanism later reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from ._docstrings import fill_doc
from ._params import BOOLEAN, NAMES, RELATION, Rule, callable_, int_at_least, positive, validate_params
from ._validation import check_int, check_scores
from .sensitivity import (
    _PROFILE,
    ProfileLike,
    StepProfile,
    _check_beta_within,
    _check_candidate_profile,
    _check_profile,
    smooth_sensitivity_scan,
)
from .typing import ArrayLike, Relation

__all__ = ["SelectionProblem"]


class SelectionProblem:
    r"""Utilities of a public candidate set for one dataset, with sensitivities.

    Parameters
    ----------
    scores : array_like of float, shape (m,)
        The utilities :math:`u(x, r)`, one per candidate: finite, m >= 1.
    labels : sequence of length m, default=None
        Names of the candidates (stored as a tuple); ``None`` for none.
    global_sensitivity : float, default=1.0
        :math:`\Delta u > 0`, the largest change of any score between
        neighbours (formula below).
    local_sensitivity : float, StepProfile or callable, default=None
        :math:`LS_u(x, t)` as a function of the distance t.  ``None`` means
        the constant ``global_sensitivity``; a float means that constant; a
        :class:`~dpselect.sensitivity.StepProfile` gives the exact closed form
        of the smooth sensitivity; any callable ``t -> float`` (called with
        one Python int at a time) is scanned over ``t = 0..max_distance``.
    candidate_local_sensitivity : StepProfile or callable, default=None
        Per-candidate version :math:`LS_u(x, t, r)`, ``t -> array of length m``
        (a 2-D StepProfile or a callable); used by local dampening and by
        SPS's S(x, r).  ``None`` broadcasts ``local_sensitivity`` to every
        candidate.
    max_distance : int, default=None
        The largest t that needs examining: the profile is promised to be
        constant for t >= max_distance.  Required for callable profiles.
    monotone : bool, default=False
        Whether, for all neighbours x ~ y, either u(y, r) >= u(x, r) for all r
        or u(y, r) <= u(x, r) for all r (e.g. counts under add/remove).
        Enables halved noise where mathematics §2.6/§3.1 allows it.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation the sensitivities refer to (mathematics §1).
    smooth_bound : callable, default=None
        ``beta -> S(x)``, a beta-smooth upper bound on LS (e.g. from
        Yamamoto–Shibuya Thm 4/5) used instead of the exact smooth
        sensitivity.
    candidate_smooth_bound : callable, default=None
        ``beta -> array S(x, r)`` of length m, the per-candidate version.
    beta_max : float, default=inf
        The largest beta for which ``smooth_bound`` is valid (Thm 4/5
        constraint); asking for a larger beta raises ValueError.
    private : bool, default=True
        False when the problem is not differentially private whatever the
        mechanism (e.g. a data-dependent candidate set, mathematics §7 item 16):
        every mechanism's ``privacy()`` then reports no guarantee
        (epsilon = inf).

    Notes
    -----
    The global and local sensitivities are, for neighbours x ~ y under
    ``relation`` and d the path metric of the relation,

    .. math::

        \Delta u = \max_{x \sim y} \max_r |u(x, r) - u(y, r)|, \qquad
        LS_u(x, t) = \max_{y : d(x, y) \le t} \max_{z \sim y} \max_r |u(y, r) - u(z, r)|.

    The problem is immutable: setting or deleting an attribute raises
    ``AttributeError``; ``scores`` is read-only; ``labels`` is a tuple.

    References
    ----------
    Nissim, Raskhodnikova & Smith, "Smooth sensitivity and sampling in private
    data analysis", STOC 2007, Definitions 2.1-2.2 (local and smooth
    sensitivity); mathematics §1 (neighbour relations, notation).

    Examples
    --------
    >>> from dpselect import SelectionProblem
    >>> p = SelectionProblem([3.0, 1.0, 2.0], labels=["a", "b", "c"])
    >>> p.n_candidates, p.labels
    (3, ('a', 'b', 'c'))
    >>> p.global_sensitivity = -5
    Traceback (most recent call last):
    ...
    AttributeError: SelectionProblem is immutable: cannot set 'global_sensitivity' (build a new problem)
    """

    _frozen: bool = False

    #: The profiles are checked against ``global_sensitivity``, ``max_distance`` and the number of
    #: scores, the labels' length against the number of scores.
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "scores": Rule("a non-empty 1-D array of finite real numbers", check=check_scores),
        "labels": NAMES,
        "global_sensitivity": positive(),
        "local_sensitivity": _PROFILE,
        "candidate_local_sensitivity": callable_(none=True),
        "max_distance": int_at_least(0, none=True),
        "monotone": BOOLEAN,
        "relation": RELATION,
        "smooth_bound": callable_(none=True),
        "candidate_smooth_bound": callable_(none=True),
        "beta_max": positive(allow_inf=True),
        "private": BOOLEAN,
    }

    @validate_params(_parameter_constraints)
    def __init__(
        self,
        scores: ArrayLike,
        *,
        labels: Sequence[object] | None = None,
        global_sensitivity: float = 1.0,
        local_sensitivity: ProfileLike = None,
        candidate_local_sensitivity: StepProfile | Callable[[int], ArrayLike] | None = None,
        max_distance: int | None = None,
        monotone: bool = False,
        relation: Relation = "add_remove",
        smooth_bound: Callable[[float], float] | None = None,
        candidate_smooth_bound: Callable[[float], ArrayLike] | None = None,
        beta_max: float = math.inf,
        private: bool = True,
    ) -> None:
        arr = np.array(scores, dtype=np.float64)  # a copy of the checked scores
        arr.setflags(write=False)
        self.scores: np.ndarray = arr
        if labels is not None and len(labels) != arr.size:
            raise ValueError(f"labels must have length {arr.size} (one per score), got {len(labels)}")
        self.labels: tuple[Any, ...] | None = None if labels is None else tuple(labels)
        self.global_sensitivity: float = global_sensitivity
        self.monotone: bool = monotone
        self.private: bool = private
        self.relation: Relation = relation
        self.max_distance: int | None = max_distance
        self.beta_max: float = beta_max
        self._ls = _check_profile(local_sensitivity, global_sensitivity, max_distance)
        self._cls = _check_candidate_profile(candidate_local_sensitivity, global_sensitivity, arr.size, max_distance)
        self._smooth_bound = smooth_bound
        self._candidate_smooth_bound = candidate_smooth_bound
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise AttributeError(f"SelectionProblem is immutable: cannot set {name!r} (build a new problem)")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SelectionProblem is immutable: cannot delete {name!r}")

    # ------------------------------------------------------------------ basics
    @property
    def n_candidates(self) -> int:
        """The number of candidates m = |R|."""
        return int(self.scores.size)

    def __len__(self) -> int:
        return self.n_candidates

    def __repr__(self) -> str:
        return (
            f"SelectionProblem(n_candidates={self.n_candidates}, global_sensitivity="
            f"{self.global_sensitivity:g}, monotone={self.monotone}, relation={self.relation!r})"
        )

    def optimal(self) -> np.ndarray:
        """Boolean mask of the candidates with the maximal score.

        Returns
        -------
        numpy.ndarray of bool, shape (m,)
            True where ``scores`` equals its maximum.

        Examples
        --------
        >>> from dpselect import SelectionProblem
        >>> SelectionProblem([3.0, 1.0, 3.0]).optimal().tolist()
        [True, False, True]
        """
        return self.scores == self.scores.max()

    # ---------------------------------------------------------- sensitivities
    @fill_doc
    def local_sensitivity(self, t: int = 0) -> float:
        r"""The local sensitivity at distance t, :math:`LS_u(x, t)` (mathematics §1).

        .. math::

            LS_u(x, t) = \max_{y : d(x, y) \le t} LS_u(y)

        %(distance_t)s
        float
            :math:`LS_u(x, t)`, at most ``global_sensitivity``.

        Examples
        --------
        >>> from dpselect import SelectionProblem, StepProfile
        >>> p = SelectionProblem([1.0, 0.0], local_sensitivity=StepProfile([0, 3], [0.0, 1.0]))
        >>> p.local_sensitivity(2), p.local_sensitivity(3)
        (0.0, 1.0)
        """
        t = check_int(t, "t", minimum=0)
        return float(self._ls(t))

    @fill_doc
    def candidate_local_sensitivity(self, t: int = 0) -> np.ndarray:
        r"""Per-candidate local sensitivity at distance t.

        .. math::

            LS_u(x, t, r) = \max_{y : d(x, y) \le t} LS_u(y, r)

        %(distance_t)s
        numpy.ndarray of float, shape (m,)
            One value per candidate (``local_sensitivity(t)`` for every
            candidate when no per-candidate profile was given).

        Examples
        --------
        >>> from dpselect import SelectionProblem
        >>> SelectionProblem([1.0, 0.0], global_sensitivity=2.0).candidate_local_sensitivity(0)
        array([2., 2.])
        """
        t = check_int(t, "t", minimum=0)
        if self._cls is None:
            return np.full(self.n_candidates, self.local_sensitivity(t))
        out = np.asarray(self._cls(t), dtype=np.float64)
        if out.shape != (self.n_candidates,) or not np.isfinite(out).all() or (out < 0).any():
            raise ValueError("candidate_local_sensitivity(t) must return finite non-negative values, one per candidate")
        return out

    @property
    def profile_horizon(self) -> int:
        """The T such that the (per-candidate) local sensitivity is constant for t >= T.

        ``max_distance`` when given, else the last breakpoint of the step
        profile(s).
        """
        if self.max_distance is not None:
            return self.max_distance
        last = [int(p.breakpoints[-1]) for p in (self._ls, self._cls) if isinstance(p, StepProfile)]
        return max(last) if last else 0

    def candidate_local_sensitivity_matrix(self, horizon: int | None = None) -> np.ndarray:
        """The per-candidate local sensitivities LS_u(x, t, r) for t = 0..horizon.

        Vectorised for step profiles; callables are called once per t.

        Parameters
        ----------
        horizon : int, default=None
            The largest t (>= 0); ``None`` uses ``profile_horizon``.

        Returns
        -------
        numpy.ndarray of float, shape (horizon + 1, m)
            Row t is ``candidate_local_sensitivity(t)``.

        Examples
        --------
        >>> from dpselect import SelectionProblem, StepProfile
        >>> p = SelectionProblem([1.0, 0.0], local_sensitivity=StepProfile([0, 2], [0.5, 1.0]))
        >>> p.candidate_local_sensitivity_matrix().tolist()
        [[0.5, 0.5], [0.5, 0.5], [1.0, 1.0]]
        """
        horizon = self.profile_horizon if horizon is None else check_int(horizon, "horizon", minimum=0)
        ts = np.arange(horizon + 1)
        if isinstance(self._cls, StepProfile):
            return np.asarray(self._cls(ts), dtype=np.float64)
        if self._cls is None and isinstance(self._ls, StepProfile):
            return np.repeat(np.asarray(self._ls(ts), dtype=np.float64)[:, None], self.n_candidates, axis=1)
        return np.stack([self.candidate_local_sensitivity(int(t)) for t in ts])

    @fill_doc
    def smooth_sensitivity(self, beta: float) -> float:
        r"""A beta-smooth upper bound S(x) on LS (the exact smooth sensitivity unless a bound was given).

        .. math::

            S^*_\beta(x) = \max_{t \ge 0} e^{-\beta t} LS_u(x, t)

        computed in closed form for step profiles and by a scan up to
        ``max_distance`` for callables; ``smooth_bound(beta)`` when given.

        %(smooth_beta)s
        float
            S(x) >= 0.

        References
        ----------
        Nissim, Raskhodnikova & Smith, "Smooth sensitivity and sampling in
        private data analysis", STOC 2007, Definition 2.2 and Proposition 3.1.

        Examples
        --------
        >>> from dpselect import SelectionProblem, StepProfile
        >>> p = SelectionProblem([1.0, 0.0], local_sensitivity=StepProfile([0, 2], [0.0, 1.0]))
        >>> round(p.smooth_sensitivity(0.5), 6)   # exp(-0.5 * 2) * 1
        0.367879
        """
        beta = _check_beta_within(beta, self.beta_max)
        if self._smooth_bound is not None:
            s = float(self._smooth_bound(beta))
        elif isinstance(self._ls, StepProfile):
            s = float(self._ls.smooth(beta))
        else:
            assert self.max_distance is not None
            s = smooth_sensitivity_scan(self._ls, beta, self.max_distance)
        if not (math.isfinite(s) and s >= 0):
            raise ValueError("smooth sensitivity must be finite and non-negative")
        return s

    @fill_doc
    def candidate_smooth_sensitivity(self, beta: float) -> np.ndarray:
        r"""Per-candidate beta-smooth upper bounds S(x, r).

        .. math::

            S^*_\beta(x, r) = \max_{t \ge 0} e^{-\beta t} LS_u(x, t, r)

        (``candidate_smooth_bound(beta)`` when given; ``smooth_sensitivity``
        for every candidate when there is no per-candidate profile).

        %(smooth_beta)s
        numpy.ndarray of float, shape (m,)
            S(x, r) >= 0 for each candidate.

        Examples
        --------
        >>> from dpselect import SelectionProblem
        >>> SelectionProblem([1.0, 0.0], global_sensitivity=2.0).candidate_smooth_sensitivity(0.1)
        array([2., 2.])
        """
        beta = _check_beta_within(beta, self.beta_max)
        if self._candidate_smooth_bound is not None:
            out = np.asarray(self._candidate_smooth_bound(beta), dtype=np.float64)
        elif isinstance(self._cls, StepProfile):
            out = np.asarray(self._cls.smooth(beta))
        elif self._cls is not None:
            prof = self.candidate_local_sensitivity_matrix()
            out = (np.exp(-beta * np.arange(prof.shape[0]))[:, None] * prof).max(axis=0)
        else:
            out = np.full(self.n_candidates, self.smooth_sensitivity(beta))
        if out.shape != (self.n_candidates,) or not np.isfinite(out).all() or (out < 0).any():
            raise ValueError("candidate smooth sensitivities must be finite, non-negative, one per candidate")
        return out
