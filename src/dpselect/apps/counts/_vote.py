"""Majority vote from raw labels: one label per record in, one private winning label out."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TypeVar, overload

import numpy as np

from ..._params import EPSILON, SEED, SIZE, int_at_least, validate_params
from ..._validation import check_random_state
from ..._warnings import PrivacyLeakWarning
from ...accounting import Accountant, charge
from ...mechanisms import Mechanism, resolve_mechanism, select_top_k, top_k_privacy
from ...problem import SelectionProblem
from ...typing import ArrayLike, SeedLike
from ._rules import ACCOUNTANT, LABELS, MECHANISM

__all__ = ["label_counts", "private_majority"]

L = TypeVar("L")


@validate_params({"labels": LABELS, "candidates": LABELS})
def label_counts(labels: ArrayLike | Sequence[object], candidates: Sequence[object]) -> np.ndarray:
    """How many records carry each candidate label (records with another label count nowhere).

    Parameters
    ----------
    labels : array_like of shape (n,)
        One label per record (strings, integers, ...; compared by equality).
    candidates : sequence
        The distinct public candidate labels.

    Returns
    -------
    numpy.ndarray of int64, shape (len(candidates),)
        ``counts[j]`` = number of records whose label equals ``candidates[j]``.

    Examples
    --------
    >>> label_counts(["a", "b", "a", "z"], ["a", "b", "c"]).tolist()
    [2, 1, 0]
    """
    lab, cand = np.asarray(labels), np.asarray(candidates)
    index = {c: j for j, c in enumerate(cand.tolist())}
    if len(index) != cand.size:
        raise ValueError("candidates must be distinct")
    codes = np.fromiter((index.get(v, -1) for v in lab.tolist()), dtype=np.int64, count=lab.size)
    return np.bincount(codes[codes >= 0], minlength=cand.size).astype(np.int64)


@overload
def private_majority(
    labels: ArrayLike | Sequence[object],
    epsilon: float | None,
    *,
    candidates: None = None,
    mechanism: str | Mechanism = ...,
    rng: SeedLike = ...,
    size: None = None,
    accountant: Accountant | None = ...,
    k: None = None,
) -> object: ...


@overload
def private_majority(
    labels: ArrayLike | Sequence[object],
    epsilon: float | None,
    *,
    candidates: Sequence[L],
    mechanism: str | Mechanism = ...,
    rng: SeedLike = ...,
    size: None = None,
    accountant: Accountant | None = ...,
    k: None = None,
) -> L: ...


@overload
def private_majority(
    labels: ArrayLike | Sequence[object],
    epsilon: float | None,
    *,
    candidates: Sequence[L] | None = ...,
    mechanism: str | Mechanism = ...,
    rng: SeedLike = ...,
    size: None = None,
    accountant: Accountant | None = ...,
    k: int,
) -> list[L]: ...


@overload
def private_majority(
    labels: ArrayLike | Sequence[object],
    epsilon: float | None,
    *,
    candidates: Sequence[L] | None = None,
    mechanism: str | Mechanism = ...,
    rng: SeedLike = ...,
    size: int,
    accountant: Accountant | None = ...,
    k: int | None = None,
) -> np.ndarray: ...


@validate_params(
    {
        "labels": LABELS,
        "epsilon": EPSILON.or_none(),
        "candidates": LABELS.or_none(),
        "mechanism": MECHANISM,
        "rng": SEED,
        "size": SIZE,
        "accountant": ACCOUNTANT,
        "k": int_at_least(1, none=True),
    }
)
def private_majority(
    labels: ArrayLike | Sequence[object],
    epsilon: float | None,
    *,
    candidates: Sequence[L] | None = None,
    mechanism: str | Mechanism = "pf",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
    k: int | None = None,
) -> L | object | list[L] | np.ndarray:
    r"""Privately select the most frequent label of a sample of raw labels (one per record).

    The labels are counted over the public ``candidates`` and a winner is drawn by
    permute-and-flip on the counts (McKenna & Sheldon 2020): under add/remove of one
    record one count moves by 1 and the counts only grow when a record is added
    (sensitivity 1, monotone), so

    .. math::

        P[\text{candidate } r \text{ is examined and accepted}] \propto
        \exp\bigl(\varepsilon\,(c_r - \max_s c_s)\bigr)

    in a uniformly random order, which is :math:`\varepsilon`-DP.  With ``k``, the k most
    frequent labels, most preferred first, by peeling (mathematics §10.2): round j runs the
    mechanism at :math:`\varepsilon / k` on the candidates not chosen yet, and the k rounds
    compose to :math:`\varepsilon`-DP (:func:`~dpselect.mechanisms.top_k.top_k_privacy`; the
    exponential mechanism and Gumbel report-noisy-max draw the same law in one shot).

    Parameters
    ----------
    labels : array_like of shape (n,)
        One label per record (strings, integers, ...).  Records whose label is not a
        candidate count for no candidate (they change no count, so ignoring them is
        private; no warning is given, since a warning would reveal that such a record
        exists).
    epsilon : float or None
        The privacy budget (None when ``mechanism`` is an instance with its own).
    candidates : sequence, default=None
        The **public** set of labels to choose from, fixed without looking at the data.
        If None, the distinct labels of the data are used: the output space then depends
        on the data, a :class:`~dpselect.PrivacyLeakWarning` is emitted, the release has
        no guarantee (:math:`\varepsilon = \infty`) and any accountant refuses it.
    mechanism : str or Mechanism, default="pf"
        ``"pf"`` (permute-and-flip, the most accurate sound choice on counts), ``"em"``,
        ``"rnm_gumbel"``, ``"rnm_exponential"``, ``"rnm_laplace"``, or a mechanism
        instance.
    rng : SeedLike, default=None
        The randomness: None, an int seed, a ``numpy.random.Generator``, or
        "secure" where supported (:data:`dpselect.typing.SeedLike`).
    size : int or None, default=None
        None: one draw; an int: an (object) array of ``size`` independent draws, charged
        as ``size`` releases (mathematics §10.1).
    accountant : Accountant, default=None
        Charged the release's guarantee (``size`` times) before any randomness is drawn.
    k : int or None, default=None
        None: one label.  An int (1 <= k <= number of candidates): the k labels, most
        preferred first; ``epsilon`` is the budget of all k (each round gets epsilon / k;
        with a mechanism instance, its own epsilon is one round's, k times it in all).

    Returns
    -------
    label, list of labels or ndarray
        One candidate label (an element of ``candidates``); with ``k``, a list of k
        distinct candidate labels, most preferred first; with ``size``, an object array of
        ``size`` draws (shape ``(size,)``, or ``(size, k)`` with ``k``).  No count is
        returned or printed.

    References
    ----------
    McKenna & Sheldon, "Permute-and-Flip: a new mechanism for differentially private
    selection", NeurIPS 2020, Theorem 1.  The mathematics page: mathematics §2.6
    (permute-and-flip as report-noisy-max, the monotone scale) and mathematics §9.1
    (counts as utilities under add/remove).

    Examples
    --------
    >>> from dpselect.apps.counts import private_majority
    >>> votes = ["red"] * 30 + ["blue"] * 12 + ["green"] * 5
    >>> private_majority(votes, 1.0, candidates=["red", "green", "blue"], rng=0)
    'red'
    >>> private_majority(votes, 3.0, candidates=["red", "green", "blue"], k=2, rng=0)
    ['red', 'blue']
    """
    lab = np.asarray(labels)
    if candidates is None:
        warnings.warn(
            "private_majority: candidates=None uses the distinct labels of the data as the output space; "
            "this is data-dependent and voids the DP guarantee (pass the public candidates)",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        cand = np.unique(lab.astype(str)) if lab.dtype == object else np.unique(lab)
        cand_list = cand.tolist()
        counts = label_counts(lab.astype(str) if lab.dtype == object else lab, cand_list)
    else:
        cand_list = list(np.asarray(candidates).tolist())
        if not cand_list:
            raise ValueError("candidates must not be empty")
        counts = label_counts(lab, cand_list)
    prob = SelectionProblem(
        counts, global_sensitivity=1.0, monotone=True, relation="add_remove", private=candidates is not None
    )
    if k is None:
        mech = resolve_mechanism(mechanism, epsilon, 0.0)
        gen = check_random_state(rng)
        charge(accountant, mech.privacy(prob), size=size)
        if size is None:
            return cand_list[int(mech.select(prob, rng=gen))]
        return np.asarray(cand_list, dtype=object)[mech.select(prob, size=size, rng=gen)]
    if k > len(cand_list):
        raise ValueError(f"k must be at most the number of candidates ({len(cand_list)}), got {k}")
    mech = _round_mechanism(mechanism, epsilon, k, prob)
    gen = check_random_state(rng)
    charge(accountant, top_k_privacy(mech, prob, k), size=size)
    if size is None:
        return [cand_list[int(i)] for i in select_top_k(mech, prob, k, rng=gen)]
    cands = np.asarray(cand_list, dtype=object)
    return np.stack([cands[np.asarray(select_top_k(mech, prob, k, rng=gen))] for _ in range(size)])


def _round_mechanism(mechanism: str | Mechanism, epsilon: float | None, k: int, prob: SelectionProblem) -> Mechanism:
    """One round's mechanism at epsilon / k, rounded down until the k rounds' total is at most ``epsilon``.

    The k rounds compose to the sum of their epsilons, computed in floating point: epsilon / k
    summed k times may exceed epsilon by an ulp (and an accountant holding exactly epsilon would
    refuse the release), so the round's budget steps down by ulps until the total fits.
    """
    if epsilon is None:
        return resolve_mechanism(mechanism, None, 0.0)
    eps = epsilon / k
    mech = resolve_mechanism(mechanism, eps, 0.0)
    while prob.private and top_k_privacy(mech, prob, k).epsilon > epsilon:
        eps = float(np.nextafter(eps, 0.0))
        mech = resolve_mechanism(mechanism, eps, 0.0)
    return mech
