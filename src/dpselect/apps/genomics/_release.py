"""Private release of TDT chi-square statistics (Yamamoto & Shibuya, IPCCC'24 §V).

Neighbour relation: replace one **family** ("replace", mathematics §4.4).

* :func:`release_statistic` releases chi2_TDT of one SNP r,
  chi2(b_r, c_r) + (S(x, r)/alpha') Z, with the YS Theorem 5 smooth upper
  bound S(x, r) = GS e^{-beta' ud(b_r, c_r)} of that SNP
  (:func:`dpselect.apps.genomics.smooth_upper_bound`, U = {LS > threshold}) and
  pure noise (polynomial-tail by default, YS's choice) through
  :class:`~dpselect.mechanisms.release.SmoothSensitivityRelease`:
  alpha' = alpha(k eps), beta' = beta((2 - k) eps) (YS Thm 1) => eps-DP,
  with YS's split k = 2 kappa (``kappa`` in (0, 1) is the sliding share of
  the budget, the library's one name for it).
  One family change moves SNP r's table by one table-level move, so S(., r)
  is a beta'-smooth upper bound on the local sensitivity of chi2_r.
* Theorem 5 only holds for beta' <= beta_max(N) (a public function of N,
  :func:`dpselect.apps.genomics.beta_max`).  If the requested split gives
  beta' > beta_max, the split is moved towards the noise scale: k = 2 kappa is
  increased to k* = 2 - (2 - k) beta_max / beta' so that
  beta((2 - k*) eps) = beta_max (beta(.) is linear for the pure noises), which
  keeps eps-DP and lowers the noise (alpha' grows).  k* depends only on
  (N, eps, noise), never on the data.
* :func:`select_and_release` selects one SNP with a selection mechanism
  (epsilon_select; default PF on the neighbour-distance utility, as
  :func:`dpselect.apps.genomics.select_top_snp`) and then releases its statistic
  (epsilon_release); by sequential (adaptive) composition the total is
  (epsilon_select + epsilon_release)-DP (Privacy ``+``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._validation import check_epsilon, check_int, check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import PURE_NOISES, SmoothSensitivityRelease
from ...privacy import Privacy
from . import _tdt as tdt

__all__ = ["release_mechanism", "release_statistic", "select_and_release"]

_RELATION = "replace"


def release_mechanism(
    n_families: int,
    epsilon: float,
    noise: str = "polynomial",
    gamma: float = 4,
    kappa: float = 0.5,
    *,
    df: float = 3,
    threshold: float = 6,
    granularity: float | None = None,
) -> SmoothSensitivityRelease:
    """The calibrated release for one TDT statistic, with beta' <= beta_max(N) (Thm 5).

    Returns a :class:`SmoothSensitivityRelease` (relation "replace"); its
    ``kappa`` is the requested kappa, or k*/2 with k* of the module docstring
    when the requested split would give beta' > beta_max.  ``granularity``
    is its output grid (a power of two; None: 2^-20; 0: float output).
    """
    n = check_int(n_families, "n_families", minimum=1)
    if noise not in PURE_NOISES:
        raise ValueError(f"noise must be one of {PURE_NOISES} (pure epsilon-DP, YS Thm 1), got {noise!r}")
    mech = SmoothSensitivityRelease(
        epsilon, noise=noise, gamma=gamma, df=df, kappa=kappa, relation=_RELATION, granularity=granularity
    )
    bmax = tdt.beta_max(n, "thm5", threshold)
    if mech.beta <= bmax:
        return mech
    # beta((2 - k) eps) is linear in (2 - k): solve beta((2 - k*) eps) = beta_max
    k_star = 2.0 - (2.0 - 2.0 * mech.kappa) * bmax / mech.beta
    for _ in range(64):
        mech = SmoothSensitivityRelease(
            epsilon, noise=noise, gamma=gamma, df=df, kappa=k_star / 2.0, relation=_RELATION, granularity=granularity
        )
        if mech.beta <= bmax:
            return mech
        k_star = 2.0 - (2.0 - k_star) * (1.0 - 1e-12)  # float rounding: nudge towards 2
    raise ValueError(  # pragma: no cover - only reachable through pathological rounding
        f"cannot calibrate beta' <= beta_max = {bmax!r} for n_families={n}"
    )


def release_statistic(
    b: Any,
    c: Any,
    n_families: int,
    epsilon: float,
    index: int,
    *,
    noise: str = "polynomial",
    gamma: float = 4,
    kappa: float = 0.5,
    rng: Any = None,
    accountant: Accountant | None = None,
    df: float = 3,
    threshold: float = 6,
    size: Any = None,
    granularity: float | None = None,
) -> Any:
    """Release chi2_TDT of SNP ``index`` with its Thm 5 smooth bound; epsilon-DP (family replacement).

    Parameters
    ----------
    b, c : 1-D arrays of transmission counts, one entry per SNP (b + c <= 2N).
    n_families : N.
    epsilon : budget of this release.
    index : the SNP to release (0-based).  Must be chosen independently of
        the data or by a private selection (see :func:`select_and_release`).
    noise, gamma, kappa, df : noise law and budget split (see :func:`release_mechanism`).
    rng : None, int seed or numpy Generator.
    size : None (one release) or a number of independent releases (each
        costs epsilon; for studying the error distribution).
    accountant : charged with ``size`` (or 1) times epsilon before any draw.
    granularity : the output grid, a power of two (None: the
        :class:`~dpselect.mechanisms.release.SmoothSensitivityRelease`
        default 2^-20; 0: the unsnapped float output, not floating-point safe).

    Returns
    -------
    float or ndarray
        The released value (an array for ``size``; not clipped at 0).
    """
    n = check_int(n_families, "n_families", minimum=1)
    scores = np.atleast_1d(np.asarray(tdt.tdt_statistic(b, c), dtype=np.float64))
    if scores.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {scores.shape}")
    idx = check_int(index, "index", minimum=0)
    if idx >= scores.size:
        raise ValueError(f"index must be < the number of SNPs ({scores.size}), got {idx}")
    mech = release_mechanism(n, epsilon, noise, gamma, kappa, df=df, threshold=threshold, granularity=granularity)
    bounds = np.atleast_1d(tdt.smooth_upper_bound(b, c, n, mech.beta, "thm5", threshold))
    draws = 1 if size is None else check_int(size, "size", minimum=1)
    charge(accountant, Privacy(mech.privacy().epsilon * draws, 0.0, _RELATION, "TDT release (YS Thm 1)"))
    return mech.release(float(scores[idx]), float(bounds[idx]), rng=rng, size=size)


def select_and_release(
    b: Any,
    c: Any,
    n_families: int,
    epsilon_select: float,
    epsilon_release: float,
    *,
    mechanism: Any = "pf",
    utility: str = "distance",
    rng: Any = None,
    accountant: Accountant | None = None,
    noise: str = "polynomial",
    gamma: float = 4,
    kappa: float = 0.5,
    threshold: float = 6,
    granularity: float | None = None,
) -> tuple[int, float, Privacy]:
    """Privately select the top SNP, then release its chi2; returns (index, value, total Privacy).

    Parameters
    ----------
    mechanism : "pf" (default), "em", another name of
        :data:`dpselect.mechanisms.registry.MECHANISM_NAMES` (e.g. "sps", YS's
        smooth private selection, with ``utility="chi2"``), or a mechanism
        instance (its ``epsilon`` must equal ``epsilon_select``); "nd_pf" /
        "nd_em" are deprecated spellings of "pf" / "em" on the distance utility.
    utility : "distance" (default: the neighbour distance, as
        :func:`dpselect.apps.genomics.select_top_snp`) or "chi2".
    accountant : charged with the total before any randomness is drawn.
    noise, gamma, kappa, granularity : of the release (see :func:`release_statistic`).

    Notes
    -----
    The selection runs on :func:`dpselect.apps.genomics.tdt_problem` (Thm 5 bound,
    ``threshold``, relation "replace").  The total guarantee is
    ``mechanism.privacy(problem) + release.privacy()`` (sequential, adaptive
    composition under family replacement).
    """
    epsilon_select = check_epsilon(epsilon_select, "epsilon_select")
    epsilon_release = check_epsilon(epsilon_release, "epsilon_release")
    n = check_int(n_families, "n_families", minimum=1)
    mech, util = tdt.resolve_tdt_mechanism(mechanism, epsilon_select, utility, {})
    problem = tdt.build_tdt_problem(util, b, c, n, "thm5", threshold, None, mech)
    rel = release_mechanism(n, epsilon_release, noise, gamma, kappa, threshold=threshold, granularity=granularity)
    total = mech.privacy(problem) + rel.privacy()
    charge(accountant, total)
    gen = check_random_state(rng)
    index = int(mech.select(problem, rng=gen))
    value = release_statistic(b, c, n, epsilon_release, index, noise=noise, gamma=gamma, kappa=kappa, rng=gen,
                              threshold=threshold)
    return index, value, total
