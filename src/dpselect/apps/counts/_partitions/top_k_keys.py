r"""The k most frequent keys of a domain nobody can list (mathematics §16.4).

Two stages, composed adaptively (add/remove one user with all her keys):

1. :func:`~dpselect.apps.counts.select_partitions` at ``(share * epsilon, delta)`` releases
   the candidate keys;
2. the one-shot Gumbel top-k (the exponential mechanism peeled k times, Durfee & Rogers
   2019, Lemma 4.2) on the user counts of the released keys at ``(1 - share) * epsilon / k``
   per round: the counts are monotone with sensitivity 1 (one user adds 1 to each of at
   most C counts), so each round is ``(1 - share) epsilon / k``-DP.

Counts of the selected keys are released only when asked, by their own noise: exact
discrete Laplace on a power-of-two grid with l1 sensitivity ``min(k, C)`` (one user moves
at most that many of the selected counts by 1), at ``count_epsilon``, charged on top.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from ...._docstrings import fill_doc
from ...._params import BOOLEAN, EPSILON, SEED, int_at_least, real_in, validate_params
from ...._validation import check_random_state
from ....accounting import Accountant, charge
from ....mechanisms import ExponentialMechanism, select_top_k
from ....noise import GridLaplace
from ....privacy import Privacy
from ....problem import SelectionProblem
from ....typing import SeedLike
from .selection import PARTITION_RULES, calibrate, release_mask, resolve_partition_method
from .user_items import UserItems, as_user_keys, check_columns, parse_user_items

__all__ = ["TopKeys", "select_top_k_keys"]

#: The share of epsilon spent on partition selection (the rest on the top-k rounds); public,
#: measured on the benchmark's Zipf data (benchmarks/bench_partitions.py).
DEFAULT_SELECTION_SHARE = 0.5


@dataclass(frozen=True)
class TopKeys:
    """The result of :func:`select_top_k_keys`.

    Parameters
    ----------
    keys : tuple
        At most k keys, most frequent first (fewer when fewer keys were released).
    counts : numpy.ndarray of float or None
        Their noisy user counts (on the grid of ``granularity``) when asked, else None.
    privacy : Privacy
        The guarantee of the whole release, as charged.
    """

    keys: tuple[Hashable, ...]
    counts: np.ndarray | None
    privacy: Privacy


def _privacy(epsilon: float, delta: float, count_epsilon: float | None, name: str) -> Privacy:
    keys = Privacy(epsilon, delta, "add_remove", f"top-k keys ({name} then one-shot Gumbel top-k), mathematics §16")
    if count_epsilon is None:
        return keys
    return keys + Privacy(count_epsilon, 0.0, "add_remove", "grid-Laplace counts, mathematics §16")


@validate_params(
    {
        **PARTITION_RULES,
        "k": int_at_least(1),
        "selection_share": real_in(0.0, 1.0),
        "return_counts": BOOLEAN,
        "count_epsilon": EPSILON.or_none(),
        "rng": SEED,
    }
)
@fill_doc
def select_top_k_keys(
    user_items: UserItems,
    epsilon: float,
    delta: float,
    k: int,
    *,
    max_contributions: int,
    method: str = "auto",
    selection_share: float = DEFAULT_SELECTION_SHARE,
    return_counts: bool = False,
    count_epsilon: float | None = None,
    user_column: str | None = None,
    key_column: str | None = None,
    rng: SeedLike = None,
    accountant: Accountant | None = None,
) -> TopKeys:
    r"""The k keys held by the most users, with no candidate list: (epsilon, delta)-DP under add/remove.

    Partition selection at ``(s epsilon, delta)`` (``s = selection_share``), then the
    one-shot Gumbel top-k over the released keys' user counts at ``(1 - s) epsilon / k``
    per round (mathematics §16.4):

    .. math::

        \hat S = \mathrm{top}_k\bigl(n_j + G_j \cdot k / ((1 - s)\epsilon)\bigr)_{j \in R},
        \quad R = \text{select\_partitions}(s\epsilon, \delta).

    %(user_items)s
    epsilon : float
        > 0, the total of both stages.
    delta : float
        In (0, 1): the chance a key only one user holds may be released.
    max_contributions : int
        C >= 1, the most keys kept per user (public; keyword-only).
    k : int
        The number of keys wanted (>= 1); fewer are returned when fewer are released.
    method : str, default="auto"
        The partition-selection method (as :func:`~dpselect.apps.counts.select_partitions`).
    selection_share : float, default=0.5
        The share of epsilon spent on partition selection, in (0, 1).
    return_counts : bool, default=False
        Also release the k user counts, by discrete Laplace noise of l1 sensitivity
        ``min(k, C)`` at ``count_epsilon`` (required then), charged on top.
    count_epsilon : float, default=None
        The budget of the counts (only with ``return_counts``).
    user_column : str, default=None
        The user column of a data-frame ``user_items``.
    key_column : str, default=None
        The key column of a data-frame ``user_items``.
    rng : SeedLike, default=None
        The randomness.
    accountant : Accountant, default=None
        Charged the whole guarantee before any randomness is drawn.

    Returns
    -------
    TopKeys
        The keys (most frequent first), the noisy counts when asked, and the guarantee.

    References
    ----------
    Durfee & Rogers, Practical differentially private top-k selection with
    pay-what-you-get composition, NeurIPS 2019; Desfontaines et al. 2022; Gopi et al. 2020;
    mathematics §16.

    Examples
    --------
    >>> from dpselect.apps.counts import select_top_k_keys
    >>> users = [["a", "b"]] * 300 + [["b"]] * 200 + [["c"]] * 120 + [["lone"]]
    >>> select_top_k_keys(users, 2.0, 1e-6, 2, max_contributions=2, rng=0).keys
    ('b', 'a')
    """
    check_columns(user_items, user_column, key_column)
    if return_counts != (count_epsilon is not None):
        raise ValueError("count_epsilon must be given exactly when return_counts is True")
    name = resolve_partition_method(method, max_contributions)
    eps_sel, eps_round = selection_share * epsilon, (1.0 - selection_share) * epsilon / k
    constants = calibrate(name, eps_sel, delta, max_contributions)
    pairs = parse_user_items(user_items, user_column=user_column, key_column=key_column)
    privacy = _privacy(epsilon, delta, count_epsilon, name)
    gen = check_random_state(rng)
    charge(accountant, privacy)
    uk = as_user_keys(pairs, max_contributions, gen)
    released = np.flatnonzero(release_mask(uk, name, constants, max_contributions, gen))
    if released.size == 0:
        return TopKeys((), np.zeros(0) if return_counts else None, privacy)
    counts = np.bincount(uk.codes, minlength=len(uk.keys))[released].astype(np.float64)
    problem = SelectionProblem(counts, global_sensitivity=1.0, monotone=True, relation="add_remove")
    kk = min(k, released.size)
    mech = ExponentialMechanism(eps_round)
    chosen = select_top_k(mech, problem, kk, method="gumbel", rng=gen)
    noisy = None
    if count_epsilon is not None:
        noisy = GridLaplace(float(min(k, max_contributions)), count_epsilon).release(counts[chosen], rng=gen)
    return TopKeys(tuple(uk.keys[i] for i in released[chosen]), noisy, privacy)
