"""Yamamoto & Shibuya's Theorems 4 and 5 on a finite state space: the reference beta_max.

The genomics app computes beta_max by a branch-and-bound search (``dpselect.apps.genomics``);
these brute-force minima over an enumerated state space are the tests' reference for it
(mathematics §4.1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpselect._validation import check_positive
from dpselect.sensitivity import _real_array

__all__ = ["thm4_beta_max", "thm5_beta_max"]

#: Relative tolerance used only to absorb floating-point rounding when
#: comparing local sensitivities with the global sensitivity.
_LS_RTOL = 1e-9


def _beta_max_inputs(
    global_sensitivity: Any, local_sensitivity: Any, distance: Any, dist_name: str
) -> tuple[float, np.ndarray, np.ndarray]:
    gs = check_positive(global_sensitivity, "global_sensitivity")
    ls = _real_array(local_sensitivity, "local_sensitivity")
    dist = _real_array(distance, dist_name, allow_inf=True)
    if ls.shape != dist.shape:
        raise ValueError(f"local_sensitivity and {dist_name} must have the same shape, got {ls.shape} and {dist.shape}")
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


def thm4_beta_max(global_sensitivity: float, local_sensitivity: Any, gd: Any) -> float:
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
    """
    gs, ls, dist = _beta_max_inputs(global_sensitivity, local_sensitivity, gd, "gd")
    if ((dist == 0) & (ls < gs * (1.0 - _LS_RTOL))).any():
        raise ValueError(
            "gd must be > 0 wherever local_sensitivity != global_sensitivity (gd is the distance to {LS = GS})"
        )
    return _min_ratio(gs, ls, dist)


def thm5_beta_max(global_sensitivity: float, local_sensitivity: Any, ud: Any) -> float:
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
    """
    gs, ls, dist = _beta_max_inputs(global_sensitivity, local_sensitivity, ud, "ud")
    return _min_ratio(gs, ls, dist)
