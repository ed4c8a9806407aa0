"""The selection problems a private tree node builds, batched selection, and node neighbours.

:func:`split_problem` (multiway, DiffP-ID3) and :func:`binary_split_problem`
(binary cuts) build exactly the :class:`~dpselect.problem.SelectionProblem`
a node builds from its own records (see :mod:`dpselect.apps.trees`
for the utilities and their sensitivities); :func:`node_neighbours`
enumerates the add/remove neighbours of a small node dataset for exact
audits.  :func:`select_nodes` makes all the selections of one tree level in
one call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....mechanisms import ExponentialMechanism, PermuteAndFlip, ReportNoisyMax
from ....problem import SelectionProblem
from .._params import MECHANISMS
from .split_criteria import (
    LD_HORIZON,
    binary_candidates,
    check_split_utility,
    info_gain_sensitivity,
    node_tables,
    problem_from_tables,
    problem_kind,
)

__all__ = ["binary_split_problem", "check_mechanism", "node_neighbours", "select_nodes", "split_problem"]

_BATCHED = (ExponentialMechanism, PermuteAndFlip, ReportNoisyMax)


def check_mechanism(mechanism: Any) -> str:
    """``mechanism`` if it is one of the estimators' mechanism names (ValueError otherwise)."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    return str(mechanism)


def select_nodes(
    mech: Any,
    scores: np.ndarray,
    valid: np.ndarray,
    template: SelectionProblem,
    gen: np.random.Generator,
    problem_of: Callable[[int], SelectionProblem],
) -> np.ndarray:
    """One private selection per row of ``scores`` (N nodes x M candidates), restricted to ``valid``.

    For the global-sensitivity mechanisms (EM, PF, report-noisy-max) the
    calibration (scale b, noise law h) depends only on the sensitivity and
    monotonicity, which ``template`` carries: all rows are drawn at once as
    argmax_r (u_r + b Z_r) over the valid r, with iid Z from the mechanism's
    own noise law -- the same law as ``mech.select`` on the row's problem
    (invalid candidates cannot win, and dropping a candidate from an
    iid-noise argmax leaves the others' joint law unchanged).  Other
    mechanisms calibrate per problem: ``problem_of(i)`` builds row i's
    problem over its valid candidates and ``mech.select`` is called per row.
    Returns the chosen column of each row.
    """
    n, _ = scores.shape
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    if isinstance(mech, _BATCHED):
        scale, noise = mech.calibrate(template)
        z = np.asarray(noise.sample(scores.shape, gen), dtype=np.float64)
        a = np.where(valid, scores, -np.inf)
        top = np.max(a, axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):  # (u - top) / b + z in place; invalid entries stay -inf
            a -= top  # (a row without a valid entry becomes NaN: argmax 0, as with all -inf)
            a /= scale
            a += z
        return np.argmax(a, axis=1)
    for i in range(n):  # smooth mechanisms: per-node calibration
        cols = np.flatnonzero(valid[i])
        out[i] = cols[int(mech.select(problem_of(i), rng=gen))]
    return out


def split_problem(
    codes: Any,
    y: Any,
    n_values: Any,
    n_classes: int,
    mechanism: str = "pf",
    split_utility: str = "max_operator",
    n_max: float | None = None,
    horizon: int = LD_HORIZON,
) -> SelectionProblem:
    """The split-selection problem a DiffP-ID3 node builds from its own records.

    Parameters
    ----------
    codes
        (n, m) integer codes of the node's records for its m candidate
        attributes (code of attribute A in 0..n_values[A]-1).
    y
        (n,) class codes in 0..n_classes-1.
    n_values
        (m,) public domain sizes.
    n_classes
        public number of classes.
    mechanism, split_utility
        as in :class:`DPDecisionTreeClassifier`.
    n_max
        public bound on the node size (required for "info_gain").

    Notes
    -----
    Neighbours: one record added to or removed from the node (add/remove).
    """
    y = np.asarray(y, dtype=np.int64)
    n_values = np.asarray(n_values, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64).reshape(y.size, n_values.size)
    kind = problem_kind(check_mechanism(mechanism), check_split_utility(split_utility))
    if split_utility == "info_gain" and n_max is None:
        raise ValueError("n_max (a public bound on the node size) is required for split_utility='info_gain'")
    gs = info_gain_sensitivity(n_max) if n_max is not None else 1.0
    return problem_from_tables(node_tables(codes, y, n_values, int(n_classes)), n_values, kind, gs, horizon)


def node_neighbours(codes: Any, y: Any, n_values: Any, n_classes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """All add/remove neighbours (codes', y') of a small node dataset (for exact audits).

    Additions range over every combination of attribute values and classes
    (prod(n_values) * n_classes of them); removals over the distinct records.
    """
    y = np.asarray(y, dtype=np.int64)
    n_values = np.asarray(n_values, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64).reshape(y.size, n_values.size)
    out = []
    grids = np.stack(np.meshgrid(*[np.arange(k) for k in n_values], indexing="ij"), -1).reshape(-1, n_values.size)
    for row in grids:
        for c in range(int(n_classes)):
            out.append((np.vstack([codes, row[None, :]]), np.append(y, c)))
    seen = set()
    for i in range(y.size):
        key = (tuple(codes[i]), int(y[i]))
        if key in seen:
            continue
        seen.add(key)
        out.append((np.delete(codes, i, axis=0), np.delete(y, i)))
    return out


def binary_split_problem(
    codes: Any,
    y: Any,
    n_values: Any,
    is_continuous: Any,
    n_classes: int,
    live: Any = None,
    mechanism: str = "pf",
    split_utility: str = "max_operator",
    n_max: float | None = None,
    horizon: int = LD_HORIZON,
) -> SelectionProblem:
    """The binary-split selection problem a node builds from its own records.

    Candidates are the valid (feature, cut) pairs of
    :func:`dpselect.apps.trees._growing.split_criteria.binary_candidates`, in row-major
    order (labels ``(f, b)``), given the node's PUBLIC live codes ``live``
    (p, k) (default: every code of every feature's domain).  Neighbours: one
    record added to or removed from the node (add/remove); the candidate set
    does not depend on the records.
    """
    y = np.asarray(y, dtype=np.int64)
    n_values = np.asarray(n_values, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64).reshape(y.size, n_values.size)
    p = n_values.size
    k = int(max(1, n_values.max()))
    kind = problem_kind(check_mechanism(mechanism), check_split_utility(split_utility))
    if split_utility == "info_gain" and n_max is None:
        raise ValueError("n_max (a public bound on the node size) is required for split_utility='info_gain'")
    gs = info_gain_sensitivity(n_max) if n_max is not None else 1.0
    if live is None:
        live = np.arange(k)[None, :] < n_values[:, None]
    hist = node_tables(codes, y, np.full(p, k), int(n_classes))
    tabs, valid = binary_candidates(hist, np.asarray(live, dtype=bool), np.asarray(is_continuous, dtype=bool))
    f, b = np.nonzero(valid)
    if f.size == 0:
        raise ValueError("the node has no valid binary split (every feature's live codes are on one side)")
    labels = list(zip(f.tolist(), b.tolist()))
    return problem_from_tables(tabs[f, b], np.full(f.size, 2), kind, gs, horizon, labels)
