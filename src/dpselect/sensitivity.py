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
from typing import Any

import numpy as np

from ._validation import as_real_array, check_array_1d, check_positive
from .typing import ArrayLike

__all__ = [
    "StepProfile",
    "smooth_sensitivity_scan",
    "distance_to_instability_bound",
    "thm4_beta_max",
    "thm5_beta_max",
]


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

    def __post_init__(self) -> None:
        bp = check_array_1d(self.breakpoints, "breakpoints")
        vals = np.asarray(self.values, dtype=np.float64)
        if vals.ndim not in (1, 2) or vals.shape[0] != bp.size:
            raise ValueError(
                f"values must have shape ({bp.size},) or ({bp.size}, m), got {vals.shape}"
            )
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

    def __call__(self, t: ArrayLike) -> Any:
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

    def smooth(self, beta: float) -> Any:
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

    def max_value(self) -> Any:
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
    beta = check_positive(beta, "beta")
    ts = np.arange(max_distance + 1)
    ls = np.fromiter((float(local_sensitivity(int(t))) for t in ts), dtype=np.float64, count=ts.size)
    if not np.isfinite(ls).all() or (ls < 0).any():
        raise ValueError("local_sensitivity(t) must return finite non-negative values")
    return float((np.exp(-beta * ts) * ls).max())


# ---------------------------------------------------------------------------
# Generic smooth upper bounds from a distance to an "unstable" set (mathematics §4.1)
# ---------------------------------------------------------------------------

#: Relative tolerance used only to absorb floating-point rounding when
#: comparing local sensitivities with the global sensitivity.
_LS_RTOL = 1e-9


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


def distance_to_instability_bound(global_sensitivity: float, distance: ArrayLike, beta: float) -> Any:
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
    which are the caller's obligation (``thm4_beta_max`` / ``thm5_beta_max``
    turn hypothesis 3 into the largest admissible beta on a finite state
    space).

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
    gs = check_positive(global_sensitivity, "global_sensitivity")
    beta = check_positive(beta, "beta")
    dist = _real_array(distance, "distance", allow_inf=True)
    return (gs * np.exp(-beta * dist))[()]


def _beta_max_inputs(
    global_sensitivity: Any, local_sensitivity: Any, distance: Any, dist_name: str
) -> tuple[float, np.ndarray, np.ndarray]:
    gs = check_positive(global_sensitivity, "global_sensitivity")
    ls = _real_array(local_sensitivity, "local_sensitivity")
    dist = _real_array(distance, dist_name, allow_inf=True)
    if ls.shape != dist.shape:
        raise ValueError(
            f"local_sensitivity and {dist_name} must have the same shape, "
            f"got {ls.shape} and {dist.shape}"
        )
    if ls.size == 0:
        raise ValueError("local_sensitivity must not be empty")
    if (ls > gs * (1.0 + _LS_RTOL)).any():
        raise ValueError("local_sensitivity must not exceed global_sensitivity")
    return gs, ls, dist


def _min_ratio(gs: float, ls: np.ndarray, dist: np.ndarray) -> float:
    """min over dist > 0, ls > 0 of ln(gs/ls)/dist (log clipped at 0); +inf if empty."""
    mask = (dist > 0) & (ls > 0)
    if not mask.any():
        return float("inf")
    log_ratio = np.maximum(np.log(gs / ls[mask]), 0.0)
    return float((log_ratio / dist[mask]).min())


def thm4_beta_max(global_sensitivity: float, local_sensitivity: ArrayLike, gd: ArrayLike) -> float:
    r"""Largest beta allowed by Yamamoto & Shibuya's Theorem 4 on a finite state space.

    **Theorem 4** (Yamamoto & Shibuya, IPCCC 2024, Thm 4; proof in the
    supplement; mathematics §4.1).  Let ``G = {x : LS(x) = GS}`` (non-empty) and
    ``gd(x) = d(x, G)`` in the neighbour metric.  If

        beta <= min_{x : LS(x) != GS} ln(GS / LS(x)) / gd(x),

    then the beta-smooth sensitivity is exactly ``S*_beta(x) = GS exp(-beta gd(x))``:

    .. math::

        \beta \le \min_{x : LS(x) \ne GS} \frac{\ln(GS / LS(x))}{gd(x)}
        \implies S^*_\beta(x) = GS \, e^{-\beta\, gd(x)}.

    (Sketch: taking y in G nearest to x gives ``S*_beta(x) >= GS e^{-beta gd(x)}``;
    for any y, the condition gives ``LS(y) <= GS e^{-beta gd(y)}`` and
    ``gd(x) <= gd(y) + d(x, y)``, so ``LS(y) e^{-beta d(x,y)} <= GS e^{-beta gd(x)}``.)

    Conditions / conventions
    ------------------------
    * ``local_sensitivity`` and ``gd`` are arrays over the **whole** (finite)
      state space, index-aligned; the result is only as valid as that
      enumeration and the metric used for ``gd``.
    * ``LS <= GS`` everywhere (up to a relative rounding tolerance of 1e-9).
    * ``gd == 0`` exactly on ``G``: a state with ``gd == 0`` must have
      ``LS = GS`` (ValueError otherwise).  A state with ``gd > 0`` and
      ``LS = GS`` cannot occur for a true distance; if passed it contributes
      ``ln(1)/gd = 0`` (conservative), it is never skipped.
    * States with ``LS = 0`` are excluded: ``ln(GS/0) = +inf`` imposes no
      constraint (``0 <= GS e^{-beta gd}`` always holds).
    * ``gd = +inf`` (a state that cannot reach G) gives the constraint 0.

    Parameters
    ----------
    global_sensitivity : float
        GS (> 0).
    local_sensitivity : array_like of float
        LS(x) of every state, 0 <= LS <= GS.
    gd : array_like of float
        d(x, G) of every state, index-aligned with ``local_sensitivity``
        (>= 0; ``+inf`` allowed).

    Returns
    -------
    float
        The minimum above, ``+inf`` if no state constrains beta.

    References
    ----------
    Yamamoto & Shibuya, private top-SNP selection by the TDT statistic with
    smooth sensitivity, IPCCC 2024, Theorem 4; mathematics §4.1.

    Examples
    --------
    >>> from dpselect.sensitivity import thm4_beta_max
    >>> round(thm4_beta_max(2.0, [2.0, 1.0, 0.5], [0.0, 1.0, 2.0]), 6)   # min(ln 2 / 1, ln 4 / 2)
    0.693147
    """
    gs, ls, dist = _beta_max_inputs(global_sensitivity, local_sensitivity, gd, "gd")
    if ((dist == 0) & (ls < gs * (1.0 - _LS_RTOL))).any():
        raise ValueError("gd must be > 0 wherever local_sensitivity != global_sensitivity "
                         "(gd is the distance to {LS = GS})")
    return _min_ratio(gs, ls, dist)


def thm5_beta_max(global_sensitivity: float, local_sensitivity: ArrayLike, ud: ArrayLike) -> float:
    r"""Largest beta allowed by Yamamoto & Shibuya's Theorem 5 on a finite state space.

    **Theorem 5** (Yamamoto & Shibuya, IPCCC 2024, Thm 5; proof in the
    supplement; mathematics §4.1).  Let ``U = {x : LS(x) > T}`` for a threshold T
    and ``ud(x) = d(x, U)`` in the neighbour metric.  If

        beta <= min_{x not in U} ln(GS / LS(x)) / ud(x),

    then ``S(x) = GS exp(-beta ud(x))`` is a beta-smooth upper bound on LS
    (an instance of :func:`distance_to_instability_bound` with ``l = ud``):

    .. math::

        \beta \le \min_{x \notin U} \frac{\ln(GS / LS(x))}{ud(x)}
        \implies S(x) = GS \, e^{-\beta\, ud(x)} \text{ is } \beta\text{-smooth and } \ge LS(x).

    Conditions / conventions
    ------------------------
    * ``local_sensitivity`` and ``ud`` are arrays over the **whole** (finite)
      state space, index-aligned.  States outside U are recognised by
      ``ud > 0``; ``U`` itself may be any set (the theorem's conclusion only
      uses that ud is a distance to U), T only decides which set it is.
    * ``LS <= GS`` everywhere (up to a relative rounding tolerance of 1e-9).
    * States with ``LS = 0`` are excluded (``ln(GS/0) = +inf``, no constraint).
    * ``ud = +inf`` (U unreachable or empty) gives the constraint 0 unless LS = 0.
    * A state with ``ud > 0`` and ``LS = GS`` gives 0 (conservative).

    Parameters
    ----------
    global_sensitivity : float
        GS (> 0).
    local_sensitivity : array_like of float
        LS(x) of every state, 0 <= LS <= GS.
    ud : array_like of float
        d(x, U) of every state, index-aligned with ``local_sensitivity``
        (>= 0; ``+inf`` allowed).

    Returns
    -------
    float
        The minimum above, ``+inf`` if no state constrains beta.

    References
    ----------
    Yamamoto & Shibuya, private top-SNP selection by the TDT statistic with
    smooth sensitivity, IPCCC 2024, Theorem 5 (proof in the supplement);
    mathematics §4.1.

    Examples
    --------
    >>> from dpselect.sensitivity import thm5_beta_max
    >>> round(thm5_beta_max(8.0, [8.0, 6.0, 2.0], [0.0, 1.0, 2.0]), 6)   # min(ln(8/6)/1, ln(4)/2)
    0.287682
    """
    gs, ls, dist = _beta_max_inputs(global_sensitivity, local_sensitivity, ud, "ud")
    return _min_ratio(gs, ls, dist)
