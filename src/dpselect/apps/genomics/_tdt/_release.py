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
* :func:`tdt_release` releases the statistics of k selected SNPs at epsilon / k each
  (:func:`dpselect.apps.genomics.select_and_release`; sequential composition).
"""

from __future__ import annotations

import numpy as np

from ...._exact_numbers import check_granularity
from ...._params import EPSILON, SEED, SIZE, Rule, instance_of, int_at_least, positive, real_in, validate_params
from ...._validation import check_positive
from ....accounting import Accountant, charge
from ....mechanisms import PURE_NOISES, SmoothSensitivityRelease
from ....privacy import Privacy
from ....typing import SeedLike
from .._counts import TransmissionCounts
from .._rules import ACCOUNTANT, N_FAMILIES, THRESHOLD
from ._beta_max import beta_max, smooth_upper_bound
from ._sensitivity import tdt_statistic

__all__ = [
    "DF",
    "GAMMA",
    "GRANULARITY",
    "KAPPA",
    "NOISE",
    "release_mechanism",
    "release_statistic",
    "tdt_release",
    "tdt_release_privacy",
]

_RELATION = "replace"


def _check_noise(noise: object, name: str) -> str:
    if noise not in PURE_NOISES:
        raise ValueError(f"{name} must be one of {PURE_NOISES} (pure epsilon-DP, YS Thm 1), got {noise!r}")
    return str(noise)


NOISE = Rule(f"one of {PURE_NOISES}", check=_check_noise)


def _check_gamma(value: object, name: str) -> float:
    g = check_positive(value, name)
    if not g > 1:
        raise ValueError(f"{name} must be a float > 1 (the polynomial tail's exponent), got {g!r}")
    return g


def _check_granularity(value: object, name: str) -> float | None:
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0):
        return value
    return check_granularity(value, name)


#: The polynomial tail's exponent.
GAMMA = Rule("a float > 1", check=_check_gamma)
#: Student's t degrees of freedom.
DF = positive()
#: The output grid of a release.
GRANULARITY = Rule("None, 0 or a power of two", check=_check_granularity)
KAPPA = real_in(0.0, 1.0)


@validate_params(
    {
        "n_families": N_FAMILIES,
        "epsilon": EPSILON,
        "noise": NOISE,
        "gamma": GAMMA,
        "kappa": KAPPA,
        "df": DF,
        "threshold": THRESHOLD,
        "granularity": GRANULARITY,
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
        "counts": instance_of(TransmissionCounts),
        "epsilon": EPSILON,
        "index": int_at_least(0),
        "noise": NOISE,
        "gamma": GAMMA,
        "kappa": KAPPA,
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "df": DF,
        "threshold": THRESHOLD,
        "size": SIZE,
        "granularity": GRANULARITY,
    }
)
def release_statistic(
    counts: TransmissionCounts,
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
    counts : TransmissionCounts
        The trio study's transmissions (N = ``counts.n_families`` public).
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
    >>> from dpselect.apps.genomics import TransmissionCounts, release_statistic
    >>> value = release_statistic(TransmissionCounts([90, 52], [20, 48], 150), 1.0, 0, rng=0)
    >>> isinstance(value, float)
    True
    """
    b, c, n = counts.b, counts.c, counts.n_families
    scores = np.atleast_1d(np.asarray(tdt_statistic(b, c), dtype=np.float64))
    if index >= scores.size:
        raise ValueError(f"index must be < the number of SNPs ({scores.size}), got {index}")
    mech = release_mechanism(n, epsilon, noise, gamma, kappa, df=df, threshold=threshold, granularity=granularity)
    bounds = np.atleast_1d(smooth_upper_bound(b, c, n, mech.beta, "thm5", threshold))
    charge(accountant, Privacy(mech.privacy().epsilon, 0.0, _RELATION, "TDT release (YS Thm 1)"), size=size)
    return mech.release(float(scores[index]), float(bounds[index]), rng=rng, size=size)


def tdt_release(
    counts: TransmissionCounts,
    indices: np.ndarray,
    epsilon: float,
    *,
    noise: str,
    gamma: float,
    kappa: float,
    df: float,
    threshold: float,
    granularity: float | None,
    gen: np.random.Generator,
) -> np.ndarray:
    """The chi2 of each SNP in ``indices`` released at epsilon / len(indices) each (already charged)."""
    each = epsilon / indices.size
    return np.array(
        [
            release_statistic(
                counts,
                each,
                int(i),
                noise=noise,
                gamma=gamma,
                kappa=kappa,
                df=df,
                rng=gen,
                threshold=threshold,
                granularity=granularity,
            )
            for i in indices  # k releases, k <= a few dozen: not a loop over SNPs
        ],
        dtype=np.float64,
    )


def tdt_release_privacy(
    n: int, epsilon: float, k: int, *, noise: str, gamma: float, kappa: float, threshold: float
) -> Privacy:
    """The guarantee of k TDT releases at epsilon / k each (sequential composition)."""
    each = release_mechanism(n, epsilon / k, noise, gamma, kappa, threshold=threshold).privacy()
    return Privacy(each.epsilon * k, 0.0, _RELATION, "TDT releases (YS Thm 1)")
