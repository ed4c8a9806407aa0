"""Duff mode: the exponential mechanism on the add/remove distance to "v is a mode".

Gillenwater & Muñoz Medina (Duff); mathematics §6.1, §9.1.  Neighbour relation:
**add/remove**.  The candidates are a finite public set, so the mode is an
ordinary :class:`~dpselect.problem.SelectionProblem` (:func:`mode_problem`,
a dataset-distance utility with ``global_sensitivity=1``) run by the
library's :class:`~dpselect.mechanisms.classic.ExponentialMechanism` and its
noisy-max engine; no sampler of its own.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import overload

import numpy as np

from ..._docstrings import fill_doc
from ..._params import ACCOUNTANT, BOOLEAN, EPSILON, SAMPLE, SEED, SIZE, validate_params
from ..._validation import check_array_1d, check_random_state
from ..._warnings import PrivacyLeakWarning
from ...accounting import Accountant, charge
from ...mechanisms import ExponentialMechanism, distance_problem
from ...output_law import OutputLaw
from ...problem import SelectionProblem
from ...typing import ArrayLike, SeedLike
from ._rules import CANDIDATES

__all__ = ["ModeUtility", "duff_mode", "duff_mode_probabilities", "duff_mode_utility", "mode_problem"]


@dataclass(frozen=True)
class ModeUtility:
    """What :func:`duff_mode_utility` returns: the output space and Duff's mode utility on it.

    Parameters
    ----------
    candidates : numpy.ndarray of float
        The output space (the public candidates, or the distinct values of the sample).
    utility : numpy.ndarray of float
        u_d(x, v) = n_v - n_max for each candidate (<= 0).

    See Also
    --------
    duff_mode_utility : The candidates and ``u_d(x, v) = n_v - n_max`` (mathematics §6.1, mathematics §7 item 25)
    duff_mode : Duff exponential mechanism for the mode: epsilon-DP under add/remove
    duff_mode_probabilities : The exact output law of :func:`duff_mode` (epsilon-DP under add/remove)
    """

    candidates: np.ndarray
    utility: np.ndarray


def _mode_setup(x: ArrayLike, candidates: np.ndarray | None, stacklevel: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(candidates, n_v - n_max) with the data-dependent-domain warning when candidates is None."""
    arr = check_array_1d(x, "x", allow_empty=candidates is not None)
    if candidates is None:
        warnings.warn(
            "duff_mode: candidates=None uses the distinct values of x as the output space; "
            "this candidate set is data-dependent and voids the DP guarantee (pass a public candidate set)",
            PrivacyLeakWarning,
            stacklevel=stacklevel,
        )
        cand = np.unique(arr)
    else:
        cand = candidates
        if np.unique(cand).size != cand.size:
            raise ValueError("candidates must be distinct")
    vals, cnts = np.unique(arr, return_counts=True)
    n_max = int(cnts.max()) if cnts.size else 0
    if vals.size:
        pos = np.clip(np.searchsorted(vals, cand), 0, vals.size - 1)
        n_c = np.where(vals[pos] == cand, cnts[pos], 0)
    else:
        n_c = np.zeros(cand.size, dtype=np.int64)
    return cand, (n_c - n_max).astype(np.float64)


@validate_params({"x": SAMPLE, "candidates": CANDIDATES})
@fill_doc
def duff_mode_utility(x: ArrayLike, *, candidates: ArrayLike | None = None) -> ModeUtility:
    r"""The candidates and ``u_d(x, v) = n_v - n_max`` (mathematics §6.1, mathematics §7 item 25).

    .. math::

        u_d(x, v) = n_v(x) - \max_w n_w(x)

    ``n_max`` is the largest count over *all* values of x (candidates or not);
    ties count in v's favour (v is a mode when ``n_v = n_max``).  Under
    add/remove the distance to "v is a mode" is exactly ``n_max - n_v`` (add
    copies of v), so ``|Delta u_d| <= 1``.  It is also **monotone** across
    add/remove neighbours (mathematics §2.6, §9.1): adding a record of a value w
    either raises u_d(w) by one and leaves the rest (w not a mode) or lowers
    every non-mode candidate by one (w a mode) -- never one up and another down.

    %(mode_sample)s
    %(mode_candidates)s

    Returns
    -------
    ModeUtility
        ``candidates`` (the output space) and ``utility`` (u_d(x, v) for each
        candidate, <= 0).

    %(duff_mode_see_also)s

    Examples
    --------
    >>> from dpselect.apps.counts import duff_mode_utility
    >>> duff_mode_utility([1, 1, 2], candidates=[1, 2, 3]).utility.tolist()
    [0.0, -1.0, -2.0]
    """
    return ModeUtility(*_mode_setup(x, None if candidates is None else np.asarray(candidates)))


@validate_params({"x": SAMPLE, "candidates": CANDIDATES, "monotone": BOOLEAN})
@fill_doc
def mode_problem(x: ArrayLike, *, candidates: ArrayLike | None = None, monotone: bool = True) -> SelectionProblem:
    """The Duff mode as a dataset-distance selection problem (mathematics §6.1, §9.1).

    Scores ``n_v - n_max`` over the public ``candidates`` (index ``i`` is
    ``candidates[i]``), ``global_sensitivity=1``, relation add/remove.
    ``monotone=True`` (default) lets EM/PF use the monotone scale
    ``Delta / epsilon`` (see :func:`duff_mode_utility`); ``monotone=False`` is
    the Duff paper's ``exp(epsilon u / 2)``.  ``candidates=None`` uses the
    distinct values of x (warns: data-dependent output space).

    %(mode_sample)s
    %(mode_candidates)s
    %(mode_monotone)s

    Returns
    -------
    SelectionProblem
        The problem (no guarantee when ``candidates`` is None).

    %(duff_mode_see_also)s

    Examples
    --------
    >>> import dpselect
    >>> p = mode_problem([1, 1, 2], candidates=[1, 2, 3])
    >>> dpselect.ExponentialMechanism(1.0).probabilities(p).round(3)
    array([0.665, 0.245, 0.09 ])
    """
    return _problem(x, None if candidates is None else np.asarray(candidates), monotone)[1]


def _problem(x: ArrayLike, candidates: np.ndarray | None, monotone: bool) -> tuple[np.ndarray, SelectionProblem]:
    """(candidates, problem); the problem reports no guarantee when the candidates come from the data."""
    cand, u = _mode_setup(x, candidates, stacklevel=5)
    return cand, distance_problem(-u, relation="add_remove", monotone=monotone, private=candidates is not None)


@validate_params({"x": SAMPLE, "epsilon": EPSILON, "candidates": CANDIDATES, "monotone": BOOLEAN})
@fill_doc
def duff_mode_probabilities(
    x: ArrayLike, epsilon: float, *, candidates: ArrayLike | None = None, monotone: bool = True
) -> OutputLaw:
    r"""The exact output law of :func:`duff_mode` (epsilon-DP under add/remove).

    .. math::

        P(v) \propto \exp\bigl(\varepsilon\, u_d(x, v)\bigr) \text{ (monotone)}, \qquad
        P(v) \propto \exp\bigl(\varepsilon\, u_d(x, v) / 2\bigr) \text{ (otherwise)}:

    the exact law of :class:`~dpselect.mechanisms.classic.ExponentialMechanism`
    on :func:`mode_problem`.

    %(mode_sample)s
    epsilon : float
        The privacy parameter (> 0).
    %(mode_candidates)s
    %(mode_monotone)s

    Returns
    -------
    OutputLaw
        The output probability of each candidate; its ``support`` is the
        output space (the candidates).

    See Also
    --------
    duff_mode : Duff exponential mechanism for the mode: epsilon-DP under add/remove
    duff_mode_utility : The candidates and ``u_d(x, v) = n_v - n_max`` (mathematics §6.1, mathematics §7 item 25)
    ModeUtility : What :func:`duff_mode_utility` returns: the output space and Duff's mode utility on it

    %(duff_mode_references)s

    Examples
    --------
    >>> from dpselect.apps.counts import duff_mode_probabilities
    >>> law = duff_mode_probabilities([1, 1, 2], 1.0, candidates=[1, 2, 3])
    >>> law.support.tolist(), law.probabilities.round(3).tolist()
    ([1.0, 2.0, 3.0], [0.665, 0.245, 0.09])
    """
    mech = ExponentialMechanism(epsilon)
    cand, problem = _problem(x, None if candidates is None else np.asarray(candidates), monotone)
    return OutputLaw(mech.probabilities(problem), support=cand)


@overload
def duff_mode(
    x: ArrayLike,
    epsilon: float,
    *,
    candidates: ArrayLike | None = ...,
    monotone: bool = ...,
    rng: SeedLike = ...,
    size: None = None,
    accountant: Accountant | None = ...,
) -> float: ...


@overload
def duff_mode(
    x: ArrayLike,
    epsilon: float,
    *,
    candidates: ArrayLike | None = ...,
    monotone: bool = ...,
    rng: SeedLike = ...,
    size: int,
    accountant: Accountant | None = ...,
) -> np.ndarray: ...


@validate_params(
    {
        "x": SAMPLE,
        "epsilon": EPSILON,
        "candidates": CANDIDATES,
        "monotone": BOOLEAN,
        "rng": SEED,
        "size": SIZE,
        "accountant": ACCOUNTANT,
    }
)
@fill_doc
def duff_mode(
    x: ArrayLike,
    epsilon: float,
    *,
    candidates: ArrayLike | None = None,
    monotone: bool = True,
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
) -> float | np.ndarray:
    """Duff exponential mechanism for the mode: epsilon-DP under add/remove.

    %(mode_sample)s
    epsilon : float
        The privacy parameter (> 0).
    %(mode_candidates)s
    %(mode_monotone)s
    rng : SeedLike, default=None
        The randomness: None, an int seed or a ``numpy.random.Generator``.
    size : int, default=None
        None (one value) or the number of iid draws.
    accountant : Accountant, default=None
        Charged the release's guarantee before any randomness is drawn.

    Returns
    -------
    float or numpy.ndarray
        The chosen candidate (a Python float), or an array of ``size``
        candidates.

    See Also
    --------
    duff_mode_probabilities : The exact output law of :func:`duff_mode` (epsilon-DP under add/remove)
    duff_mode_utility : The candidates and ``u_d(x, v) = n_v - n_max`` (mathematics §6.1, mathematics §7 item 25)
    ModeUtility : What :func:`duff_mode_utility` returns: the output space and Duff's mode utility on it

    Notes
    -----
    The library's :class:`~dpselect.mechanisms.classic.ExponentialMechanism`
    (McSherry & Talwar 2007, Thm 6; monotone scale mathematics §2.6) on
    :func:`mode_problem`, sampled by the noisy-max engine.  The monotone form
    is mathematics §9.1's "counts under add/remove" (§6.1 records it as a
    recollection; the exact audit in the tests confirms loss <= epsilon on all
    add/remove neighbours of small datasets, and shows that under replace-one
    the guarantee is 2 epsilon, as for every add/remove mechanism).

    %(duff_mode_references)s

    Examples
    --------
    >>> duff_mode([1, 1, 1, 2], 8.0, candidates=[1, 2, 3], rng=0)
    1.0
    """
    mech = ExponentialMechanism(epsilon)
    cand, problem = _problem(x, None if candidates is None else np.asarray(candidates), monotone)
    gen = check_random_state(rng)
    charge(accountant, mech.privacy(problem), size=size)
    k = mech.select(problem, size=size, rng=gen)
    return cand[k].item() if size is None else cand[k]
