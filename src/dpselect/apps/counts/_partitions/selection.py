r"""Partition selection: release the keys of a domain nobody can list (mathematics §16).

Add/remove one user with all her keys.  Each user's set is bounded to
``max_contributions`` keys by a seeded public rule; every method then releases,
independently per key, the keys whose noisy weight passes a threshold calibrated so that
the added user's keys that nobody else holds appear with probability at most a share of
delta, and the rest is a Gaussian / Laplace mechanism of l2 / l1 sensitivity 1 (or the
optimal Bernoulli recurrence of the truncated geometric).

Examples
--------
>>> from dpselect.apps.counts import select_partitions
>>> users = [["apple"]] * 200 + [["pear", "fig"]] * 3 + [["my-secret-key"]]
>>> select_partitions(users, 1.0, 1e-6, max_contributions=2, rng=0)
['apple']
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
from scipy import special

from ...._docstrings import fill_doc
from ...._params import ACCOUNTANT, EPSILON, SEED, Rule, int_at_least, options, validate_params
from ...._validation import check_delta_positive, check_random_state
from ....accounting import Accountant, charge
from ....privacy import Privacy
from ....typing import SeedLike
from .calibration import ThresholdCalibration, calibrate_gaussian, calibrate_laplace, truncated_geometric_probabilities
from .user_items import UserItems, UserKeys, as_user_keys, check_columns, parse_user_items, sorted_keys
from .weights import (
    count_weights,
    noisy_weights,
    policy_gaussian_weights,
    policy_laplace_weights,
    policy_order,
    weighted_weights,
)

__all__ = ["PARTITION_METHODS", "partition_selection_privacy", "select_partitions"]

#: The partition-selection methods (``"auto"``: truncated geometric at one key per user, the
#: policy Gaussian otherwise; mathematics §16).
PARTITION_METHODS = (
    "auto",
    "truncated_geometric",
    "laplace",
    "gaussian",
    "weighted_laplace",
    "weighted_gaussian",
    "policy_gaussian",
    "policy_laplace",
)

#: The policies' cutoff is ``Gamma = rho + POLICY_CUTOFF_SCALES[method] * scale`` (public; tuned on the
#: Zipf and real data of ``benchmarks/bench_partitions.py``, mathematics §16.3).
POLICY_CUTOFF_SCALES = {"policy_gaussian": 20.0, "policy_laplace": 5.0}


def _partition_delta(value: Any, name: str) -> float:
    return check_delta_positive(value, "a key only one user holds must be kept with probability <= delta", name)


def _user_items(value: Any, name: str) -> Any:
    """A frame, a mapping, or an iterable (not a string) of users; each user's keys are read in the body."""
    if isinstance(value, (str, bytes)) or not (hasattr(value, "columns") or hasattr(value, "__iter__")):
        raise TypeError(f"{name} must be an iterable of users or a data frame, got {type(value).__name__}")
    return value


def _column_name(value: Any, name: str) -> Any:
    """A column name: a string or an int (a frame's label)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, np.integer)):
        raise TypeError(f"{name} must be a column name (str or int), got {type(value).__name__}")
    return value


#: What the partition entry points accept.
PARTITION_RULES: dict[str, Rule] = {
    "user_items": Rule(
        "an iterable of users (each an iterable of hashable keys) or a pandas / polars frame", check=_user_items
    ),
    "epsilon": EPSILON,
    "delta": Rule("a float in (0, 1)", check=_partition_delta),
    "max_contributions": int_at_least(1),
    "method": options(*PARTITION_METHODS),
    "user_column": Rule("None or a column name (str or int)", check=_column_name, none=True),
    "key_column": Rule("None or a column name (str or int)", check=_column_name, none=True),
    "rng": SEED,
    "accountant": ACCOUNTANT,
}


def resolve_partition_method(method: str, max_contributions: int) -> str:
    """``"auto"``: the truncated geometric at ``max_contributions == 1``, the policy Gaussian otherwise."""
    if method != "auto":
        return method
    return "truncated_geometric" if max_contributions == 1 else "policy_gaussian"


def calibrate(method: str, epsilon: float, delta: float, max_contributions: int) -> ThresholdCalibration | np.ndarray:
    """The public constants of ``method`` (raises on an impossible (epsilon, delta) before any randomness)."""
    if method == "truncated_geometric":
        return truncated_geometric_probabilities(epsilon, delta, max_contributions)
    if method in ("laplace", "weighted_laplace", "policy_laplace"):
        return calibrate_laplace(epsilon, delta, max_contributions, method)
    return calibrate_gaussian(epsilon, delta, max_contributions, method)


@validate_params({k: PARTITION_RULES[k] for k in ("epsilon", "delta", "max_contributions", "method")})
def partition_selection_privacy(
    epsilon: float, delta: float, *, max_contributions: int, method: str = "auto"
) -> Privacy:
    """The guarantee of :func:`select_partitions`: (epsilon, delta)-DP under add/remove of one user.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    max_contributions : int
        The most keys one user contributes (keyword-only).
    method : str, default="auto"
        One of :data:`PARTITION_METHODS`.

    Returns
    -------
    Privacy
        ``Privacy(epsilon, delta, relation="add_remove")`` (mathematics §16).

    Examples
    --------
    >>> from dpselect.apps.counts import partition_selection_privacy
    >>> partition_selection_privacy(1.0, 1e-6, max_contributions=3).delta
    1e-06
    """
    name = resolve_partition_method(method, max_contributions)
    calibrate(name, epsilon, delta, max_contributions)  # refuses what cannot be calibrated
    return Privacy(epsilon, delta, "add_remove", f"partition selection ({name}), mathematics §16")


def _count_method_weights(uk: UserKeys, method: str, max_contributions: int) -> np.ndarray:
    scale = 1.0 / (np.sqrt(max_contributions) if method == "gaussian" else max_contributions)
    return count_weights(uk, float(scale))


@validate_params(PARTITION_RULES)
def select_partitions(
    user_items: UserItems,
    epsilon: float,
    delta: float,
    *,
    max_contributions: int,
    method: str = "auto",
    user_column: str | None = None,
    key_column: str | None = None,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> list[Hashable]:
    r"""The keys of an unknown domain that may be released: (epsilon, delta)-DP under add/remove of one user.

    Each user's distinct keys are bounded to ``C = max_contributions`` (the ``C`` of smallest
    seeded uniform priority are kept); each key then gets a weight (the number of users
    holding it, or the users' adaptive weights) and is released when its noisy weight
    passes a threshold (or, truncated geometric, with the optimal probability for its
    count).  A key held by the added user only is released with probability at most a share
    ``theta`` of delta; the noise on the other keys is a mechanism of sensitivity 1; together
    (mathematics §16, with the exact constants there)

    .. math::

        \max\bigl(\delta_G(\epsilon + \ln(1-\theta)),\
        \theta + (1-\theta)\,\delta_G(\epsilon - \ln(1-\theta))\bigr) \le \delta .

    Parameters
    ----------
    user_items : iterable of iterables of hashable, or a pandas / polars DataFrame
        One iterable of keys per user (repeats count once), or a frame with one row per
        (user, key) pair named by ``user_column`` and ``key_column``.
    epsilon : float
        > 0.
    delta : float
        In (0, 1): the chance a key only one user holds may be released.
    max_contributions : int
        C >= 1, the most keys kept per user (public; keyword-only).
    method : str, default="auto"
        ``"truncated_geometric"`` (Desfontaines et al. 2022, optimal at C = 1),
        ``"laplace"`` / ``"gaussian"`` (thresholded user counts), ``"weighted_laplace"`` /
        ``"weighted_gaussian"`` (Gopi et al. 2020), ``"policy_gaussian"`` / ``"policy_laplace"``
        (Gopi et al. 2020, adaptive l2 / l1 weights); ``"auto"``: the truncated geometric at C = 1, the policy
        Gaussian otherwise (the most keys of all, benchmarks/bench_partitions.py).
    user_column : str, default=None
        The user column of a data-frame ``user_items``.
    key_column : str, default=None
        The key column of a data-frame ``user_items``.
    rng : SeedLike, default=None
        The randomness (the bounding priorities, the policy's tie order and the noise).
    accountant : Accountant, default=None
        Charged (epsilon, delta) before any randomness is drawn.

    Returns
    -------
    list
        The released keys, sorted (by ``(type name, repr)`` when they are not comparable).

    References
    ----------
    Desfontaines, Voss, Gipson & Mandayam, Differentially private partition selection,
    PoPETs 2022; Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, Differentially private
    set union, ICML 2020; Balle & Wang, ICML 2018 (the Gaussian profile); mathematics §16.

    Examples
    --------
    >>> from dpselect.apps.counts import select_partitions
    >>> users = [["a", "b"]] * 60 + [["c"]] * 2
    >>> select_partitions(users, 1.0, 1e-6, max_contributions=2, method="weighted_gaussian", rng=1)
    ['a', 'b']
    """
    check_columns(user_items, user_column, key_column)
    name = resolve_partition_method(method, max_contributions)
    constants = calibrate(name, epsilon, delta, max_contributions)
    pairs = parse_user_items(user_items, user_column=user_column, key_column=key_column)
    privacy = Privacy(epsilon, delta, "add_remove", f"partition selection ({name}), mathematics §16")
    gen = check_random_state(rng)
    charge(accountant, privacy)
    uk = as_user_keys(pairs, max_contributions, gen)
    mask = release_mask(uk, name, constants, max_contributions, gen)
    return sorted_keys(uk.keys[i] for i in np.flatnonzero(mask))


def key_weights(
    uk: UserKeys, method: str, cal: ThresholdCalibration, max_contributions: int, gen: np.random.Generator
) -> np.ndarray:
    """The per-key weights of a thresholding ``method`` (the policy's tie order drawn from ``gen``)."""
    if method in POLICY_CUTOFF_SCALES:
        cutoff = cal.threshold + POLICY_CUTOFF_SCALES[method] * cal.scale
        policy = policy_gaussian_weights if method == "policy_gaussian" else policy_laplace_weights
        return policy(uk, cutoff, policy_order(uk, gen))
    if method in ("weighted_gaussian", "weighted_laplace"):
        return weighted_weights(uk, 0.5 if method == "weighted_gaussian" else 1.0)
    return _count_method_weights(uk, method, max_contributions)


def release_mask(
    uk: UserKeys,
    method: str,
    constants: ThresholdCalibration | np.ndarray,
    max_contributions: int,
    gen: np.random.Generator,
) -> np.ndarray:
    """Which keys of ``uk`` are released by ``method`` (one independent draw per key)."""
    if isinstance(constants, np.ndarray):  # truncated geometric: P[release | n users] = pi_n
        n = np.bincount(uk.codes, minlength=len(uk.keys))
        return gen.random(n.size) < constants[np.minimum(n, constants.size - 1)]
    weights = key_weights(uk, method, constants, max_contributions, gen)
    return noisy_weights(weights, constants.scale, constants.noise, gen) > constants.threshold


def release_probabilities(
    uk: UserKeys,
    method: str,
    constants: ThresholdCalibration | np.ndarray,
    max_contributions: int,
    gen: np.random.Generator,
) -> np.ndarray:
    """``P[key released]`` for each key of ``uk``, given the bounding and tie order drawn from ``gen``."""
    if isinstance(constants, np.ndarray):
        n = np.bincount(uk.codes, minlength=len(uk.keys))
        return constants[np.minimum(n, constants.size - 1)]
    z = (constants.threshold - key_weights(uk, method, constants, max_contributions, gen)) / constants.scale
    if constants.noise == "gaussian":
        return special.ndtr(-z)
    return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))


@validate_params(PARTITION_RULES)
@fill_doc
def partition_release_probabilities(
    user_items: UserItems,
    epsilon: float,
    delta: float,
    *,
    max_contributions: int,
    method: str = "auto",
    user_column: str | None = None,
    key_column: str | None = None,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> dict[Hashable, float]:
    r"""The exact probability that :func:`select_partitions` releases each key (mathematics §16).

    Keys are released independently, with probability ``pi_n`` (truncated geometric, ``n``
    users hold the key) or ``P[w + scale Z > rho] = sf((rho - w) / scale)`` (thresholding,
    ``w`` the key's weight); the output law on two neighbouring datasets is the product of
    these Bernoulli laws, which the exact audits enumerate.  The bounding priorities and
    the policy's tie order are drawn from ``rng`` (no noise is drawn; nothing is charged
    unless ``accountant`` is given, as this is an analysis tool, not a release).

    %(user_items)s
    epsilon : float
        > 0.
    delta : float
        In (0, 1): the chance a key only one user holds may be released.
    max_contributions : int
        C >= 1, the most keys kept per user (public; keyword-only).
    method : str, default="auto"
        One of :data:`PARTITION_METHODS`, as :func:`select_partitions`.
    user_column : str, default=None
        The user column of a data-frame ``user_items``.
    key_column : str, default=None
        The key column of a data-frame ``user_items``.
    rng : SeedLike, default=None
        The bounding priorities and the policy's tie order.
    accountant : Accountant, default=None
        Charged (epsilon, delta) when given (the probabilities are computed from the data).

    Returns
    -------
    dict
        ``{key: P[key released]}`` over the keys of ``user_items``.

    Examples
    --------
    >>> from dpselect.apps.counts import partition_release_probabilities
    >>> p = partition_release_probabilities([["a"], ["b"], ["b"]], 1.0, 1e-6, max_contributions=1)
    >>> bool(p["a"] <= 1e-6), bool(p["a"] < p["b"] <= 3.8e-6)
    (True, True)
    """
    check_columns(user_items, user_column, key_column)
    name = resolve_partition_method(method, max_contributions)
    constants = calibrate(name, epsilon, delta, max_contributions)
    pairs = parse_user_items(user_items, user_column=user_column, key_column=key_column)
    gen = check_random_state(rng)
    charge(accountant, Privacy(epsilon, delta, "add_remove", f"partition selection ({name}), mathematics §16"))
    uk = as_user_keys(pairs, max_contributions, gen)
    probs = release_probabilities(uk, name, constants, max_contributions, gen)
    return dict(zip(uk.keys, probs.tolist(), strict=True))
