r"""Sensitivity profiles, smooth sensitivity and smooth upper bounds.

Notation (mathematics §1): LS_u(x, t) = max_{y: d(x,y) <= t} LS_u(y) is the local
sensitivity at distance t; the beta-smooth sensitivity is

.. math::

    S^*_\beta(x) = \max_{t \ge 0} e^{-\beta t} LS_u(x, t)

(Nissim, Raskhodnikova & Smith 2007, Def. 2.2 / Prop. 3.1).  t ranges over all
t >= 0 (mathematics §7 item 11).  A profile that is a step function of t with
breakpoints t_0 = 0 < t_1 < ... and values v_0 <= v_1 <= ... has the closed
form S*_beta = max_i exp(-beta t_i) v_i, because on [t_i, t_{i+1}) the term
exp(-beta t) v_i is largest at t_i.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ._params import Rule, array_1d, callable_, int_at_least, positive, validate_fields, validate_params
from ._validation import as_real_array, check_positive
from .typing import ArrayLike

__all__ = ["StepProfile", "distance_to_instability_bound", "smooth_sensitivity_scan"]


def _profile(value: Any, name: str) -> Any:
    """A local-sensitivity profile: a StepProfile or a callable, or a float >= 0 (never echoed)."""
    if not callable(value):
        check_positive(value, name, allow_zero=True, quote=False)
    return value


#: ``local_sensitivity``: a float >= 0, a StepProfile or a callable (checked against the global
#: sensitivity and ``max_distance`` in the body).
_PROFILE = Rule("a float >= 0, a StepProfile or a callable", check=_profile, none=True)


#: A profile's values: real numbers, one row per breakpoint (checked against them in the body).
_VALUES = Rule("an array of real numbers (one row per breakpoint)", check=as_real_array)


@dataclass(frozen=True, eq=False)
class StepProfile:
    r"""Local sensitivity at distance t as a non-decreasing step function.

    ``LS(t) = values[i]`` for ``breakpoints[i] <= t < breakpoints[i+1]`` and
    ``LS(t) = values[-1]`` for ``t >= breakpoints[-1]``.

    Parameters
    ----------
    breakpoints : array_like of int, shape (k,)
        Increasing integers starting at 0.
    values : array_like of float, shape (k,) or (k, m)
        Non-negative and non-decreasing in t.  2-D for a per-candidate
        profile (each column non-decreasing); then calling the profile
        returns an array of length m.

    Notes
    -----
    The exact beta-smooth sensitivity of the profile is (module docstring)

    .. math::

        S^*_\beta = \max_i e^{-\beta t_i} v_i,

    with :math:`t_i` the breakpoints and :math:`v_i` the values.

    References
    ----------
    Nissim, Raskhodnikova & Smith, "Smooth sensitivity and sampling in private
    data analysis", STOC 2007, Definition 2.2 and Proposition 3.1.

    Examples
    --------
    >>> from dpselect import StepProfile
    >>> prof = StepProfile([0, 3], [0.5, 2.0])
    >>> prof(2), prof(7)
    (0.5, 2.0)
    >>> round(prof.smooth(0.5), 6)   # max(0.5, 2 exp(-1.5))
    0.5
    """

    breakpoints: np.ndarray
    values: np.ndarray
    _bp: np.ndarray = field(init=False, repr=False)

    #: ``values`` is checked against the breakpoints (its first axis has one row per breakpoint).
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"breakpoints": array_1d(), "values": _VALUES}

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)
        bp = self.breakpoints
        vals = np.asarray(self.values, dtype=np.float64)
        if vals.ndim not in (1, 2) or vals.shape[0] != bp.size:
            raise ValueError(f"values must have shape ({bp.size},) or ({bp.size}, m), got {vals.shape}")
        if not np.isfinite(vals).all() or (vals < 0).any():
            raise ValueError("values must be finite and non-negative")
        if bp[0] != 0 or (np.diff(bp) <= 0).any() or (bp != np.round(bp)).any():
            raise ValueError("breakpoints must be increasing integers starting at 0")
        if (np.diff(vals, axis=0) < 0).any():
            raise ValueError("values must be non-decreasing in t")
        bp.setflags(write=False)
        vals = vals.copy()
        vals.setflags(write=False)
        object.__setattr__(self, "breakpoints", bp)
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "_bp", bp)

    @property
    def per_candidate(self) -> bool:
        """Whether the profile has one column per candidate."""
        return self.values.ndim == 2

    def __call__(self, t: ArrayLike) -> float | np.ndarray:
        """The local sensitivity LS(t) at distance t.

        Parameters
        ----------
        t : int or array_like of int
            Distance(s) >= 0.

        Returns
        -------
        float or numpy.ndarray
            A float for a scalar t and a 1-D profile; an array otherwise
            (length m per t for a per-candidate profile).

        Examples
        --------
        >>> from dpselect import StepProfile
        >>> prof = StepProfile([0, 3], [0.5, 2.0])
        >>> prof([0, 3, 9]).tolist()
        [0.5, 2.0, 2.0]
        """
        idx = np.searchsorted(self._bp, np.asarray(t, dtype=np.float64), side="right") - 1
        if np.any(idx < 0):
            raise ValueError("t must be >= 0")
        out = self.values[idx]
        return float(out) if out.ndim == 0 else out

    def smooth(self, beta: float) -> float | np.ndarray:
        r"""The exact beta-smooth sensitivity of the profile.

        .. math::

            S^*_\beta = \max_i e^{-\beta t_i} v_i

        Parameters
        ----------
        beta : float
            The smoothing parameter (> 0).

        Returns
        -------
        float or numpy.ndarray
            A float, or one value per candidate for a 2-D profile.

        Examples
        --------
        >>> from dpselect import StepProfile
        >>> prof = StepProfile([0, 3], [0.5, 2.0])
        >>> round(prof.smooth(0.1), 6)   # max(0.5, 2 e^-0.3)
        1.481636
        """
        beta = check_positive(beta, "beta")
        w = np.exp(-beta * self._bp)
        if self.per_candidate:
            return (w[:, None] * self.values).max(axis=0)
        return float((w * self.values).max())

    def max_value(self) -> float | np.ndarray:
        """The supremum over t of LS(t) (per candidate for a 2-D profile).

        Returns
        -------
        float or numpy.ndarray
            ``values[-1]`` (a row of m values for a per-candidate profile).

        Examples
        --------
        >>> from dpselect import StepProfile
        >>> prof = StepProfile([0, 3], [0.5, 2.0])
        >>> prof.max_value()
        2.0
        """
        return self.values[-1] if self.per_candidate else float(self.values[-1])


@validate_params({"local_sensitivity": callable_(), "beta": positive(), "max_distance": int_at_least(0)})
def smooth_sensitivity_scan(local_sensitivity: Callable[[int], float], beta: float, max_distance: int) -> float:
    r"""The smooth sensitivity of a local-sensitivity callable, by a scan over t.

    .. math::

        S^*_\beta = \max_{t = 0, \dots, T} e^{-\beta t} LS(t)

    ``local_sensitivity`` is called with one Python int at a time (user
    callables need not accept arrays).  The caller promises that LS is constant
    for t >= max_distance, so the scan is exact.

    Parameters
    ----------
    local_sensitivity : callable
        ``t -> LS(t)``, finite and non-negative.
    beta : float
        The smoothing parameter (> 0).
    max_distance : int
        T, the last t examined (LS is constant beyond it).

    Returns
    -------
    float
        :math:`S^*_\beta`.

    References
    ----------
    Nissim, Raskhodnikova & Smith, "Smooth sensitivity and sampling in private
    data analysis", STOC 2007, Definition 2.2.

    Examples
    --------
    >>> from dpselect.sensitivity import smooth_sensitivity_scan
    >>> round(smooth_sensitivity_scan(lambda t: min(t, 4) / 4, 0.5, 4), 6)   # 2 e^-1 / 4 at t = 2
    0.18394
    """
    ts = np.arange(max_distance + 1)
    ls = np.fromiter((float(local_sensitivity(int(t))) for t in ts), dtype=np.float64, count=ts.size)
    if not np.isfinite(ls).all() or (ls < 0).any():
        raise ValueError("local_sensitivity(t) must return finite non-negative values")
    return float((np.exp(-beta * ts) * ls).max())


# ---------------------------------------------------------------------------
# Generic smooth upper bounds from a distance to an "unstable" set (mathematics §4.1)
# ---------------------------------------------------------------------------


def _real_array(values: Any, name: str, *, allow_inf: bool = False) -> np.ndarray:
    """Any-shape float64 array of non-negative reals (NaN rejected; +inf optional)."""
    arr = as_real_array(values, name)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative")
    return arr


@validate_params(
    {
        "global_sensitivity": positive(),
        "distance": Rule("an array of reals >= 0 (inf allowed)", check=lambda v, n: _real_array(v, n, allow_inf=True)),
        "beta": positive(),
    }
)
def distance_to_instability_bound(global_sensitivity: float, distance: ArrayLike, beta: float) -> float | np.ndarray:
    r"""Smooth upper bound ``S = GS * exp(-beta * distance)`` (distance-to-instability lemma).

    .. math::

        S(x) = GS \, e^{-\beta\, l(x)}


    **Lemma** (mathematics §4.1, [DERIVED]; YS Thm 5 is a special case).  Let
    ``U`` be a set of datasets containing every x with ``LS_u(x) > T`` and let
    ``l`` be a function with

    1. ``l`` 1-Lipschitz in the neighbour metric: ``|l(x) - l(y)| <= 1`` for
       all neighbours x ~ y;
    2. ``l >= 0`` everywhere and ``l = 0`` on ``U`` (``l(x) <= d(x, U)``, e.g.
       ``l = d(., U)`` itself);
    3. ``LS_u(x) <= GS * exp(-beta * l(x))`` for every x outside ``U``.

    Then ``S(x) = GS * exp(-beta * l(x))`` is a beta-smooth upper bound on
    ``LS_u``: it dominates LS (on U because S = GS >= LS, off U by 3.) and
    ``S(x) <= exp(beta) S(y)`` for neighbours by 1.

    This function only evaluates the formula; it cannot check the hypotheses,
    which are the caller's obligation.

    Parameters
    ----------
    global_sensitivity : float
        GS of the utility (> 0).
    distance : array_like of float
        Values ``l(x) >= 0`` (any shape).  ``+inf`` is accepted and gives 0.
    beta : float
        The smoothing parameter (> 0).

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``GS * exp(-beta * l)``, of the shape of ``distance`` (a numpy scalar
        for a scalar ``distance``).

    References
    ----------
    Yamamoto & Shibuya, private top-SNP selection by the TDT statistic with
    smooth sensitivity, IPCCC 2024, Theorem 5 (a special case); mathematics §4.1.

    Examples
    --------
    >>> from dpselect.sensitivity import distance_to_instability_bound
    >>> distance_to_instability_bound(2.0, [0.0, 1.0, float("inf")], 0.5).round(4)
    array([2.    , 1.2131, 0.    ])
    """
    out: float | np.ndarray = (global_sensitivity * np.exp(-beta * np.asarray(distance)))[()]
    return out


# ---------------------------------------------------------------------------
# Local-sensitivity profiles of a SelectionProblem (checked against its global sensitivity)
# ---------------------------------------------------------------------------

#: Relative slack when comparing a local sensitivity with the global one (rounding only).
_GS_RTOL = 1e-12

#: A local-sensitivity profile t -> LS_u(x, t): a constant, a step profile, a callable or None.
ProfileLike = float | StepProfile | Callable[[int], float] | None


def _check_beta_within(beta: float, beta_max: float) -> float:
    """The smoothing parameter beta: > 0 and at most ``beta_max`` (where a smooth bound is valid).

    Parameters
    ----------
    beta : float
        The smoothing parameter asked for.
    beta_max : float
        The largest beta for which the problem's smooth upper bound is valid.

    Returns
    -------
    float
        ``beta`` as a float.
    """
    beta = check_positive(beta, "beta")
    if beta > beta_max * (1 + _GS_RTOL):
        raise ValueError(
            f"beta={beta:.6g} exceeds this problem's beta_max (the attribute), the largest beta for which "
            "its smooth upper bound is valid"
        )
    return beta


def _check_profile(profile: object, gs: float, max_distance: int | None) -> StepProfile | Callable[[int], float]:
    """A problem's ``local_sensitivity`` as a 1-D StepProfile or a callable (None: the constant GS)."""
    if profile is None:
        profile = gs
    if isinstance(profile, StepProfile):
        if profile.per_candidate:
            raise ValueError("local_sensitivity must be a 1-D profile; use candidate_local_sensitivity")
        if float(profile.max_value()) > gs * (1 + _GS_RTOL):
            raise ValueError("local_sensitivity exceeds global_sensitivity")
        return profile
    if callable(profile):
        if max_distance is None:
            raise ValueError("max_distance is required when local_sensitivity is a callable")
        return profile
    ls = check_positive(profile, "local_sensitivity", allow_zero=True, quote=False)
    if ls > gs * (1 + _GS_RTOL):
        raise ValueError("local_sensitivity exceeds global_sensitivity")
    return StepProfile(np.array([0]), np.array([ls]))


def _check_candidate_profile(
    profile: object, gs: float, m: int, max_distance: int | None
) -> StepProfile | Callable[[int], ArrayLike] | None:
    """A problem's ``candidate_local_sensitivity``: a per-candidate StepProfile, a callable or None."""
    if isinstance(profile, StepProfile):
        if not profile.per_candidate or profile.values.shape[1] != m:
            raise ValueError(f"candidate_local_sensitivity must be a per-candidate profile with {m} columns")
        if (np.asarray(profile.max_value()) > gs * (1 + _GS_RTOL)).any():
            raise ValueError("candidate_local_sensitivity exceeds global_sensitivity")
        return profile
    if profile is None:
        return None
    if not callable(profile):
        raise TypeError("candidate_local_sensitivity must be a StepProfile or a callable")
    if max_distance is None:
        raise ValueError("max_distance is required when candidate_local_sensitivity is a callable")
    return profile
