"""Quantiles per group: parallel composition over public keys (or keys selected privately first).

Each record holds one value and one group.  Over **public** keys every record falls in at most
one group's sub-sample, so adding or removing one record changes one group's input only and the
per-group releases together are epsilon-DP (parallel composition, mathematics §12.6).  Without
keys, the keys are released first by partition selection
(:func:`dpselect.apps.counts.select_partitions`, (epsilon_keys, delta)-DP) and the quantiles
of the released keys follow with the rest of epsilon (sequential composition).
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ...._params import as_array_1d, real_in, validate_params
from ...._validation import check_random_state
from ....accounting import Accountant, charge
from ....privacy import Privacy
from ....typing import ArrayLike, SeedLike
from .._exponential.quantile import private_quantile
from .._exponential.quantile_pieces import check_q
from .._multi.quantiles import private_quantiles
from .._rules import ACCOUNTANT, BOUNDS, DELTA, EPSILON, GRANULARITY, INTEGER, SAMPLE, SEED, Rule

__all__ = ["GroupedQuantiles", "group_anchor", "grouped_quantiles"]

#: The source of the guarantee over public keys.
PARALLEL = "parallel composition over public groups (mathematics §12.6)"


@dataclass(frozen=True)
class GroupedQuantiles:
    """The private quantiles of each group, in the order of ``keys``.

    Parameters
    ----------
    keys : tuple
        The groups (the public keys given, or the keys released by partition selection).
    q : float or tuple of float
        The levels asked.
    values : numpy.ndarray
        Shape (len(keys),) for one level, (len(keys), len(q)) for several.
    privacy : Privacy
        The guarantee of the whole release (charged once).
    """

    keys: tuple[Hashable, ...]
    q: float | tuple[float, ...]
    values: np.ndarray
    privacy: Privacy

    def __getitem__(self, key: Hashable) -> np.ndarray:
        """The quantile(s) of group ``key``."""
        return np.asarray(self.values[self.keys.index(key)])

    def to_dict(self) -> dict[Hashable, np.ndarray]:
        """The quantile(s) of every group.

        Returns
        -------
        dict
            ``{key: quantile(s)}`` in the order of :attr:`keys`.
        """
        return {k: np.asarray(self.values[i]) for i, k in enumerate(self.keys)}


def _levels(value: Any, name: str) -> float | tuple[float, ...]:
    """One level (a float) or several (a tuple), each in [0, 1]."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return check_q(value, name)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a level in [0, 1] or a sequence of levels, got {type(value).__name__}")
    levels = tuple(check_q(v, name) for v in value)
    if not levels:
        raise ValueError(f"{name} must not be empty")
    return levels


def _groups(value: Any, name: str) -> np.ndarray:
    return as_array_1d(value, name)


def _keys(value: Any, name: str) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be None or a sequence of group keys, got {type(value).__name__}")
    keys = tuple(as_array_1d(value, name).tolist())
    if not keys:
        raise ValueError(f"{name} must not be empty")
    if len(set(keys)) != len(keys):
        raise ValueError(f"{name} must be distinct")
    return keys


#: One level in [0, 1] or a non-empty sequence of them.
LEVEL_OR_LEVELS = Rule("a level in [0, 1] or a non-empty 1-D sequence of levels", check=_levels)
#: One group per record (any hashable values: strings, integers, ...).
GROUPS = Rule("a 1-D array-like of group keys, one per record", check=_groups)
#: The public keys: distinct, non-empty.
KEYS = Rule("a non-empty sequence of distinct group keys", check=_keys, none=True)


def group_anchor(bounds: tuple[float, float] | None, integer: bool) -> float:
    """The public record every group holds: the middle of ``bounds`` (an integer for integer data), 0 without."""
    if bounds is None:
        return 0.0
    mid = (bounds[0] + bounds[1]) / 2
    return float(np.floor(mid)) if integer else mid


def split_by_key(values: np.ndarray, groups: np.ndarray, keys: tuple[Any, ...]) -> list[np.ndarray]:
    """The values of each key's records, in the order of ``keys`` (records of another group dropped).

    Vectorised over records: one ``np.unique`` of the groups, a dictionary over the distinct
    groups only, one stable sort.
    """
    if values.shape != groups.shape:
        raise ValueError(f"values and groups must have the same length, got {values.size} and {groups.size}")
    index = {k: i for i, k in enumerate(keys)}
    distinct, inverse = np.unique(groups, return_inverse=True)
    code_of = np.array([index.get(g, -1) for g in distinct.tolist()], dtype=np.int64)
    codes = code_of[inverse.ravel()]
    order = np.argsort(codes, kind="stable")
    cuts = np.searchsorted(codes[order], np.arange(len(keys) + 1))
    ordered = values[order]
    return [ordered[cuts[i] : cuts[i + 1]] for i in range(len(keys))]


def _private_keys(groups: np.ndarray, epsilon: float, delta: float, gen: np.random.Generator) -> tuple[Any, ...]:
    """Keys released by partition selection (one record = one user contributing its one group)."""
    from ...counts import select_partitions  # lazy: the counts room is needed only without public keys

    return tuple(select_partitions([[g] for g in groups.tolist()], epsilon, delta, max_contributions=1, rng=gen))


@validate_params(
    {
        "values": SAMPLE,
        "groups": GROUPS,
        "q": LEVEL_OR_LEVELS,
        "epsilon": EPSILON,
        "bounds": BOUNDS.or_none(),
        "keys": KEYS,
        "delta": DELTA,
        "key_share": real_in(0.0, 1.0),
        "integer": INTEGER,
        "rng": SEED,
        "accountant": ACCOUNTANT,
        "granularity": GRANULARITY,
    }
)
def grouped_quantiles(
    values: ArrayLike,
    groups: ArrayLike | Sequence[Hashable],
    q: float | Sequence[float],
    epsilon: float,
    *,
    bounds: tuple[float, float] | None,
    keys: Sequence[Hashable] | None = None,
    delta: float = 0.0,
    key_share: float = 0.5,
    integer: bool | None = None,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
) -> GroupedQuantiles:
    r"""Private quantile(s) of ``values`` in each group: epsilon once over all public groups.

    With public ``keys``, group g's release is :func:`private_quantile` (one level) or
    :func:`private_quantiles` (several) at the **whole** epsilon on the records of group g plus
    one public anchor record (:func:`group_anchor`); records of a group outside ``keys`` are
    dropped.  Adding or removing one record changes one group's input by that record, so

    .. math:: \frac{P[M(x) = o]}{P[M(x') = o]}
              = \frac{P[M_g(x_g) = o_g]}{P[M_g(x'_g) = o_g]} \le e^{\varepsilon}

    (parallel composition, McSherry 2009 Thm 4; mathematics §12.6): the release is epsilon-DP
    under add/remove however many groups there are.  The anchor (present in every group of every
    dataset) keeps an empty group from being an error, so nothing observable tells an empty group
    from a full one; it moves a group's target by at most one rank.

    Parameters
    ----------
    values : array_like
        One value per record (numpy, list, pandas, polars, pyarrow).
    groups : array_like
        One group key per record (same length as ``values``).
    q : float or sequence of float
        The level(s) in [0, 1].
    epsilon : float
        The total budget (> 0).
    bounds : tuple of float or None
        Public ``(a, b)`` of the values (records outside are clamped), or None: each group
        releases its own bounds (:func:`unbounded_quantile`, mathematics §15.2).
    keys : sequence or None, default=None
        The **public** groups (fixed without looking at the data).  None: released first by
        :func:`dpselect.apps.counts.select_partitions` at ``key_share * epsilon`` and ``delta``
        (one record, one user); the quantiles get the rest.
    delta : float, default=0.0
        The delta of the key selection (> 0 needed when ``keys`` is None).
    key_share : float, default=0.5
        The share of epsilon spent on selecting keys (``keys=None`` only).
    integer : bool or None, default=None
        Integer outputs; None: whether ``values`` has an integer dtype.
    rng : SeedLike, default=None
        The randomness (one generator for every group, in the order of the keys).
    accountant : Accountant, default=None
        Charged the whole release once (epsilon, or (epsilon, delta) without keys) before any
        randomness is drawn.
    granularity : float or None, default=None
        The output grid of real outputs (see :func:`private_quantile`).

    Returns
    -------
    GroupedQuantiles
        The keys, the levels, the private quantiles and the guarantee.

    References
    ----------
    F. McSherry, "Privacy integrated queries", SIGMOD 2009, Thm 4 (parallel composition);
    mathematics §11.1 (public anchors), §12.1 (one quantile), §12.6 (groups).

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import grouped_quantiles
    >>> gen = np.random.default_rng(0)
    >>> ages = gen.integers(18, 90, size=3000)
    >>> region = gen.choice(["north", "south", "east"], size=3000)
    >>> res = grouped_quantiles(ages, region, 0.5, 1.0, bounds=(0, 120), keys=["north", "south", "east"], rng=1)
    >>> res.privacy.epsilon, len(res.values)
    (1.0, 3)
    """
    vals, grp = np.asarray(values), np.asarray(groups)
    integer = bool(np.issubdtype(vals.dtype, np.integer) or vals.dtype == np.bool_) if integer is None else integer
    if keys is None and delta == 0.0:
        raise ValueError("delta must be > 0 when keys is None (partition selection is (epsilon, delta)-DP)")
    eps_keys, eps_q = 0.0, epsilon
    privacy = Privacy(epsilon, 0.0, "add_remove", PARALLEL)
    if keys is None:
        eps_keys, eps_q = key_share * epsilon, (1.0 - key_share) * epsilon
        privacy = Privacy(eps_keys, delta, "add_remove", "partition selection") + Privacy(
            eps_q, 0.0, "add_remove", PARALLEL
        )
    if vals.shape != grp.shape:
        raise ValueError(f"values and groups must have the same length, got {vals.size} and {grp.size}")
    gen = check_random_state(rng)
    charge(accountant, privacy)
    if keys is None:
        keys = _private_keys(grp, eps_keys, delta, gen)
    anchor = np.asarray([group_anchor(bounds, integer)], dtype=vals.dtype if integer else np.float64)
    parts = split_by_key(vals, grp, tuple(keys))
    out = [_one_group(np.concatenate([p, anchor]), q, eps_q, bounds, integer, gen, granularity) for p in parts]
    shape = (len(out),) if isinstance(q, float) else (len(out), len(q))
    levels = cast("float | tuple[float, ...]", q)  # the rule made a sequence a tuple
    return GroupedQuantiles(tuple(keys), levels, np.asarray(out).reshape(shape), privacy)


def _one_group(
    x: np.ndarray, q: Any, epsilon: float, bounds: Any, integer: bool, gen: np.random.Generator, granularity: Any
) -> Any:
    if isinstance(q, float):
        return private_quantile(x, q, epsilon, bounds=bounds, integer=integer, rng=gen, granularity=granularity)
    return private_quantiles(x, list(q), epsilon, bounds=bounds, integer=integer, rng=gen, granularity=granularity)
