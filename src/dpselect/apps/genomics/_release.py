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

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..._params import EPSILON, SEED, SIZE, Rule, int_at_least, options, real_in, validate_params
from ..._validation import check_random_state
from ...accounting import Accountant, charge
from ...mechanisms import PURE_NOISES, Mechanism, SmoothSensitivityRelease
from ...privacy import Privacy
from ...typing import SeedLike
from ._beta_max import beta_max, smooth_upper_bound
from ._rules import ACCOUNTANT, COUNTS, MECHANISM, N_FAMILIES, THRESHOLD
from ._sensitivity import tdt_statistic
from ._tdt_problem import UTILITIES, build_tdt_problem, resolve_tdt_mechanism

__all__ = ["TopSNPRelease", "release_mechanism", "release_statistic", "select_and_release"]

_RELATION = "replace"


def _check_noise(noise: object, name: str) -> str:
    if noise not in PURE_NOISES:
        raise ValueError(f"{name} must be one of {PURE_NOISES} (pure epsilon-DP, YS Thm 1), got {noise!r}")
    return str(noise)


_NOISE = Rule(f"one of {PURE_NOISES}", check=_check_noise)
#: Tail parameters and grid: checked by SmoothSensitivityRelease against the noise they belong to.
_GAMMA = Rule("a float > 1 (polynomial noise; checked by SmoothSensitivityRelease with the noise)")
_DF = Rule("a float > 0 (Student's t noise; checked by SmoothSensitivityRelease with the noise)")
_GRANULARITY = Rule("None, 0 or a power of two (checked by SmoothSensitivityRelease)")
_KAPPA = real_in(0.0, 1.0)


@dataclass(frozen=True)
class TopSNPRelease:
    """Result of :func:`select_and_release`: the selected SNP, its released statistic and the guarantee.

    Parameters
    ----------
    index : int
        The selected SNP (0-based).
    value : float
        The released chi2 of that SNP (on the release's grid; not clipped at 0).
    privacy : Privacy
        The total guarantee of the selection and the release ("replace": one family).
    """

    index: int
    value: float
    privacy: Privacy


@validate_params(
    {
        "n_families": N_FAMILIES,
        "epsilon": EPSILON,
        "noise": _NOISE,
        "gamma": _GAMMA,
        "kappa": _KAPPA,
        "df": _DF,
        "threshold": THRESHOLD,
        "granularity": _GRANULARITY,
    }
)
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

    Its ``kappa`` is the requested kappa, or k*/2 with k* of the module
    docstring when the requested split would give beta' > beta_max.
    epsilon-DP under "replace" neighbours (one family replaced; mathematics
    §4.4 and §2.1: YS Thm 1 with the Thm 5 smooth bound).

    Parameters
    ----------
    n_families : int
        N >= 1, the number of families (public).
    epsilon : float
        The budget of one release.
    noise : {"polynomial", "laplace", "student_t", ...}, default="polynomial"
        A pure noise (:data:`dpselect.mechanisms.PURE_NOISES`).
    gamma : float, default=4
        The polynomial tail's exponent.
    kappa : float, default=0.5
        The requested share of the budget on the noise scale, in (0, 1).
    df : float, default=3
        Student's t degrees of freedom.
    threshold : float, default=6
        Theorem 5's T, ``6 <= T < global_sensitivity(n_families)``.
    granularity : float, default=None
        The output grid, a power of two (None: 2^-20; 0: float output).

    Returns
    -------
    SmoothSensitivityRelease
        The calibrated release (relation "replace").

    Examples
    --------
    >>> from dpselect.apps.genomics import release_mechanism
    >>> mech = release_mechanism(150, 1.0)
    >>> mech.relation, mech.beta <= 0.0337
    ('replace', True)
    """
    n = n_families
    mech = SmoothSensitivityRelease(
        epsilon, noise=noise, gamma=gamma, df=df, kappa=kappa, relation=_RELATION, granularity=granularity
    )
    bmax = beta_max(n, "thm5", threshold)
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


@validate_params(
    {
        "b": COUNTS,
        "c": COUNTS,
        "n_families": N_FAMILIES,
        "epsilon": EPSILON,
        "index": int_at_least(0),
        "noise": _NOISE,
        "gamma": _GAMMA,
        "kappa": _KAPPA,
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "df": _DF,
        "threshold": THRESHOLD,
        "size": SIZE,
        "granularity": _GRANULARITY,
    }
)
def release_statistic(
    b: ArrayLike,
    c: ArrayLike,
    n_families: int,
    epsilon: float,
    index: int,
    *,
    noise: str = "polynomial",
    gamma: float = 4,
    kappa: float = 0.5,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    df: float = 3,
    threshold: float = 6,
    size: int | None = None,
    granularity: float | None = None,
) -> float | np.ndarray:
    """Release chi2_TDT of SNP ``index`` with its Thm 5 smooth bound; epsilon-DP (family replacement).

    "replace" neighbours: one family replaced; the guarantee is YS Thm 1 with
    the Thm 5 smooth upper bound (mathematics §4.4, §2.1).

    Parameters
    ----------
    b : array-like of int
        1-D transmissions of allele 1, one per SNP.
    c : array-like of int
        1-D transmissions of allele 2, one per SNP (``b + c <= 2N``).
    n_families : int
        N >= 1, the number of families (public).
    epsilon : float
        The budget of this release.
    index : int
        The SNP to release (0-based).  Must be chosen independently of
        the data or by a private selection (see :func:`select_and_release`).
    noise : str, default="polynomial"
        The noise law (see :func:`release_mechanism`).
    gamma : float, default=4
        The polynomial tail's exponent.
    kappa : float, default=0.5
        The requested budget split (see :func:`release_mechanism`).
    rng : None, int or numpy.random.Generator, default=None
        Randomness.
    accountant : Accountant, default=None
        Charged with ``size`` (or 1) times epsilon before any draw.
    df : float, default=3
        Student's t degrees of freedom.
    threshold : float, default=6
        Theorem 5's T, ``6 <= T < global_sensitivity(n_families)``.
    size : int, default=None
        None (one release) or a number of independent releases (each
        costs epsilon; for studying the error distribution).
    granularity : float, default=None
        The output grid, a power of two (None: the
        :class:`~dpselect.mechanisms.SmoothSensitivityRelease`
        default 2^-20; 0: the unsnapped float output, not floating-point safe).

    Returns
    -------
    float or ndarray
        The released value (an array for ``size``; not clipped at 0).

    Examples
    --------
    >>> from dpselect.apps.genomics import release_statistic
    >>> value = release_statistic([90, 52], [20, 48], 150, 1.0, 0, rng=0)
    >>> isinstance(value, float)
    True
    """
    n = n_families
    scores = np.atleast_1d(np.asarray(tdt_statistic(b, c), dtype=np.float64))
    if scores.ndim != 1:
        raise ValueError(f"b and c must be 1-D (one table per SNP), got shape {scores.shape}")
    if index >= scores.size:
        raise ValueError(f"index must be < the number of SNPs ({scores.size}), got {index}")
    mech = release_mechanism(n, epsilon, noise, gamma, kappa, df=df, threshold=threshold, granularity=granularity)
    bounds = np.atleast_1d(smooth_upper_bound(b, c, n, mech.beta, "thm5", threshold))
    charge(accountant, Privacy(mech.privacy().epsilon, 0.0, _RELATION, "TDT release (YS Thm 1)"), size=size)
    return mech.release(float(scores[index]), float(bounds[index]), rng=rng, size=size)


@validate_params(
    {
        "b": COUNTS,
        "c": COUNTS,
        "n_families": N_FAMILIES,
        "epsilon_select": EPSILON,
        "epsilon_release": EPSILON,
        "mechanism": MECHANISM,
        "utility": options(*UTILITIES, none=True),
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "noise": _NOISE,
        "gamma": _GAMMA,
        "kappa": _KAPPA,
        "threshold": THRESHOLD,
        "granularity": _GRANULARITY,
    }
)
def select_and_release(
    b: ArrayLike,
    c: ArrayLike,
    n_families: int,
    epsilon_select: float,
    epsilon_release: float,
    *,
    mechanism: str | Mechanism = "pf",
    utility: str = "distance",
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    noise: str = "polynomial",
    gamma: float = 4,
    kappa: float = 0.5,
    threshold: float = 6,
    granularity: float | None = None,
) -> TopSNPRelease:
    """Privately select the top SNP, then release its chi2.

    The total guarantee is ``mechanism.privacy(problem) + release.privacy()``
    (sequential, adaptive composition under "replace" neighbours: one family
    replaced; mathematics §4.4, §9.1).

    Parameters
    ----------
    b : array-like of int
        1-D transmissions of allele 1, one per SNP.
    c : array-like of int
        1-D transmissions of allele 2, one per SNP (``b + c <= 2N``).
    n_families : int
        N >= 1, the number of families (public).
    epsilon_select : float
        The budget of the selection.
    epsilon_release : float
        The budget of the release.
    mechanism : str or Mechanism, default="pf"
        A name of :data:`dpselect.mechanisms.MECHANISM_NAMES` (e.g. "sps", YS's
        smooth private selection, with ``utility="chi2"``), or a mechanism
        instance (its ``epsilon`` must equal ``epsilon_select``).
    utility : {"distance", "chi2"}, default="distance"
        The neighbour distance (as :func:`dpselect.apps.genomics.select_top_snp`)
        or the chi2 scores of :func:`dpselect.apps.genomics.tdt_problem`
        (Thm 5 bound, ``threshold``).
    rng : None, int or numpy.random.Generator, default=None
        Randomness.
    accountant : Accountant, default=None
        Charged with the total before any randomness is drawn.
    noise : str, default="polynomial"
        The release's noise (see :func:`release_statistic`).
    gamma : float, default=4
        The polynomial tail's exponent.
    kappa : float, default=0.5
        The release's budget split.
    threshold : float, default=6
        Theorem 5's T.
    granularity : float, default=None
        The release's output grid.

    Returns
    -------
    TopSNPRelease
        The selected index, the released value and the total guarantee.

    Examples
    --------
    >>> from dpselect.apps.genomics import select_and_release
    >>> out = select_and_release([90, 52, 50], [20, 48, 50], 150, 3.0, 1.0, rng=0)
    >>> out.index, out.privacy.epsilon
    (0, 4.0)
    """
    n = n_families
    mech, util = resolve_tdt_mechanism(mechanism, epsilon_select, utility)
    problem = build_tdt_problem(util, b, c, n, "thm5", threshold, None, mech)
    rel = release_mechanism(n, epsilon_release, noise, gamma, kappa, threshold=threshold, granularity=granularity)
    total = mech.privacy(problem) + rel.privacy()
    charge(accountant, total)
    gen = check_random_state(rng)
    index = int(mech.select(problem, rng=gen))
    value = release_statistic(
        b,
        c,
        n,
        epsilon_release,
        index,
        noise=noise,
        gamma=gamma,
        kappa=kappa,
        rng=gen,
        threshold=threshold,
        granularity=granularity,
    )
    return TopSNPRelease(index, float(value), total)
