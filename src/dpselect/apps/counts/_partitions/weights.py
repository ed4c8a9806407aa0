r"""Per-key weights of partition selection and the noise added to them (mathematics §16).

* counts (``laplace``, ``gaussian`` thresholding): the number of users holding a key, scaled
  to l1 / l2 norm at most 1 per user (``1/C``, ``1/sqrt(C)``);
* weighted (Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin 2020): a user with ``s`` keys
  gives ``1/s`` (l1) or ``1/sqrt(s)`` (l2) to each;
* policy Gaussian (Gopi et al. 2020, Algorithm 4): users in a public order (fewer keys first,
  ties by a seeded uniform) move the weights of their keys towards the cutoff ``Gamma`` by l2
  distance ``min(1, ||gap||)``, along the gap vector.  Each step is the block soft-threshold
  ``x -> c + (x - c) max(0, 1 - 1/||x - c||)`` on the user's coordinates: 1-Lipschitz in
  l2, so one added user moves the final weights by at most 1 in l2 (mathematics §16).  The
  loop over users is sequential by construction (each step reads the weights the earlier
  users left);
* policy Laplace: the same in l1, equal increments capped by the gaps (water-filling), each
  step 1-Lipschitz in l1.

Noise is drawn by inversion from 53-bit uniforms on the half-grid ``(j + 1/2) 2^-53``:
``P[Z > z] = P[U < sf(z)]`` up to the rounding of ``ndtri`` / ``log``, with tails down to
``2^-54``, far below any delta the thresholds spend.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special

from ...._docstrings import fill_doc
from .user_items import UserKeys

__all__ = [
    "count_weights",
    "noisy_weights",
    "policy_gaussian_weights",
    "policy_laplace_weights",
    "policy_order",
    "weighted_weights",
]


def count_weights(uk: UserKeys, scale: float) -> np.ndarray:
    """``scale`` times the number of users holding each key."""
    return np.bincount(uk.codes, minlength=len(uk.keys)).astype(np.float64) * scale


def weighted_weights(uk: UserKeys, power: float) -> np.ndarray:
    """Each user gives ``s^-power`` to each of her ``s`` keys (power 1: l1, 1/2: l2 norm 1)."""
    sizes = uk.sizes.astype(np.float64)
    per_pair = np.repeat(sizes**-power, uk.sizes)
    return np.bincount(uk.codes, weights=per_pair, minlength=len(uk.keys))


def policy_order(uk: UserKeys, gen: np.random.Generator) -> np.ndarray:
    """Users by increasing number of keys, ties by a seeded uniform (never by the data's order)."""
    tie = gen.random(uk.n_users)
    return np.lexsort((tie, uk.sizes))


def _policy_weights(
    uk: UserKeys,
    cutoff: float,
    order: np.ndarray,
    initial: np.ndarray | None,
    moves: Callable[[list[float]], list[float] | None],
) -> np.ndarray:
    """Users in ``order`` move their keys' weights by ``moves(gaps)`` (None: no move), capped at the cutoff."""
    weights = [0.0] * len(uk.keys) if initial is None else [float(v) for v in initial]
    indptr, codes = uk.indptr.tolist(), uk.codes.tolist()
    for u in np.asarray(order).tolist():
        idx = codes[indptr[u] : indptr[u + 1]]
        step = moves([max(cutoff - weights[k], 0.0) for k in idx])
        if step is None:
            continue
        for k, m in zip(idx, step, strict=True):
            weights[k] = min(weights[k] + m, cutoff)
    return np.asarray(weights, dtype=np.float64)


def _l2_moves(gaps: list[float]) -> list[float] | None:
    """The block soft-threshold's move: the gap vector scaled to l2 norm at most 1 (None at gap 0)."""
    norm = math.sqrt(math.fsum(g * g for g in gaps))
    if norm == 0.0:
        return None
    step = 1.0 / norm if norm > 1.0 else 1.0
    return [g * step for g in gaps]


def _l1_moves(gaps: list[float]) -> list[float]:
    """Water-filling: equal increments capped by the gaps, l1 norm at most 1."""
    level = _water_level(gaps)
    return [min(level, g) for g in gaps]


@fill_doc
def policy_gaussian_weights(
    uk: UserKeys, cutoff: float, order: np.ndarray, initial: np.ndarray | None = None
) -> np.ndarray:
    r"""The l2 policy of Gopi et al. 2020: users in ``order`` move their keys' weights towards ``cutoff``.

    .. math::

        g = (\Gamma - W_S)_+, \quad W_S \leftarrow W_S + g \min(1, 1/\lVert g \rVert_2).

    %(policy_example_users)s
    >>> from dpselect.apps.counts._partitions.weights import policy_gaussian_weights
    >>> w = policy_gaussian_weights(uk, 10.0, np.array([0, 1]))
    >>> [round(float(v), 4) for v in w]   # "a": 1 + 9/sqrt(181), "b": 10/sqrt(181)
    [1.669, 0.7433]
    """
    return _policy_weights(uk, cutoff, order, initial, _l2_moves)


def _water_level(gaps: list[float]) -> float:
    """The level ``a`` with ``sum(min(a, g)) = 1`` (inf when the gaps sum to at most 1)."""
    remaining, n = 1.0, len(gaps)
    for g in sorted(gaps):
        if g * n > remaining:
            return remaining / n
        remaining -= g
        n -= 1
    return math.inf


@fill_doc
def policy_laplace_weights(
    uk: UserKeys, cutoff: float, order: np.ndarray, initial: np.ndarray | None = None
) -> np.ndarray:
    r"""The l1 policy: users in ``order`` raise their keys by equal amounts, capped at ``cutoff``.

    .. math::

        g = (\Gamma - W_S)_+, \quad W_S \leftarrow W_S + \min(a, g), \quad
        \textstyle\sum_i \min(a, g_i) = \min(1, \sum_i g_i).

    The new gaps ``(g - a)_+`` are continuous and piecewise linear in ``g`` with Jacobian
    columns of l1 norm 1 (``a`` falls by ``1/n_a`` per unit of a saturated gap, shared by the
    ``n_a`` open keys), so each step is 1-Lipschitz in l1 (mathematics §16.3).

    %(policy_example_users)s
    >>> from dpselect.apps.counts._partitions.weights import policy_laplace_weights
    >>> policy_laplace_weights(uk, 1.25, np.array([0, 1])).tolist()   # "a" full at 1.25, "b" gets the rest
    [1.25, 0.75]
    """
    return _policy_weights(uk, cutoff, order, initial, _l1_moves)


def _uniforms(n: int, gen: np.random.Generator) -> np.ndarray:
    """``(j + 1/2) 2^-53``, j uniform in [0, 2^53): strictly inside (0, 1)."""
    return (gen.integers(0, 2**53, size=n, dtype=np.int64).astype(np.float64) + 0.5) * 2.0**-53


def noisy_weights(weights: np.ndarray, scale: float, noise: str, gen: np.random.Generator) -> np.ndarray:
    """``weights + scale * Z``, Z standard Gaussian or Laplace by inversion (one draw per key)."""
    u = _uniforms(weights.size, gen)
    if noise == "gaussian":
        z = -special.ndtri(u)
    else:
        centred = u - 0.5
        z = -np.sign(centred) * np.log1p(-2.0 * np.abs(centred))
    return weights + scale * z
