"""Exact samplers for the exponential mechanism and permute-and-flip (``sampler="exact"``).

Both laws are functions of the rates gamma_r = (u* - u_r) / b >= 0, b = c Delta u / eps
(c = 2, or 1 for monotone utilities), u* = max_r u_r:

* exponential mechanism: P[r] = e^{-gamma_r} / sum_s e^{-gamma_s} (rejection
  from a dyadic proposal, :func:`dpselect.noise.exact.exponential_weights_batch`);
* permute-and-flip: visit the candidates in a uniformly random order and stop
  at the first r for which a Bernoulli(e^{-gamma_r}) succeeds (McKenna &
  Sheldon 2020, Algorithm 1; OpenDP's implementation).

Every float (score, epsilon, Delta u) is a rational number and is converted
exactly, so gamma_r = n_r / d with integers n_r, d, and every decision is an
exact Bernoulli(e^{-n_r/d}) (:mod:`dpselect.noise.exact`).  No float enters a
decision: the output law is exactly the mathematical one.
"""

from __future__ import annotations

import numpy as np

from .._exact_numbers import as_fraction
from .._validation import SAMPLERS, check_sampler
from ..noise import IntegerSource, bernoulli_exp_batch, exponential_weights_batch, rational_rates
from ..problem import SelectionProblem

__all__ = ["SAMPLERS", "check_sampler", "exact_rates", "sample_em_exact", "sample_pf_exact"]

_PERM_ELEMENTS = 1 << 22


def exact_rates(problem: SelectionProblem, epsilon: float) -> tuple[np.ndarray, int]:
    """(n, d): gamma_r = n_r / d = (u* - u_r) eps / (c Delta u) exactly, n an int64 or object array."""
    factor = 1 if problem.monotone else 2
    q = as_fraction(epsilon, "epsilon") / (factor * as_fraction(problem.global_sensitivity, "global_sensitivity"))
    return rational_rates(problem.scores, q)


def sample_em_exact(nums: np.ndarray, den: int, n: int, src: IntegerSource) -> np.ndarray:
    """Draw n times from P[r] ∝ exp(-nums_r/den).

    :func:`dpselect.noise.exact.exponential_weights_batch` with unit counts.

    Rejection from a dyadic proposal (P[r proposed] ∝ 2^{-j_r}, j_r ln 2 <=
    gamma_r) with an exact Bernoulli(2^{j_r} e^{-gamma_r}) acceptance, so the
    law is exactly the exponential mechanism's and at most 2.5 rounds are
    expected, however many candidates are far behind.
    """
    return exponential_weights_batch(src, nums, den, np.ones(nums.size, dtype=np.int64), n)[0]


def sample_pf_exact(nums: np.ndarray, den: int, n: int, src: IntegerSource) -> np.ndarray:
    """Draw n times from permute-and-flip: a lazy Fisher-Yates order per draw, stop at the first success.

    Some candidate has gamma = 0 and accepts with probability 1, so one pass suffices.
    """
    m = nums.size
    out = np.empty(n, dtype=np.int64)
    rows = max(1, _PERM_ELEMENTS // m)
    for start in range(0, n, rows):
        k = min(rows, n - start)
        perm = np.tile(np.arange(m, dtype=np.int64), (k, 1))
        todo = np.arange(k)
        i = 0
        while todo.size:
            j = i + src.below_array(np.full(todo.size, m - i, dtype=np.int64))
            at_i = perm[todo, i].copy()
            perm[todo, i] = perm[todo, j]
            perm[todo, j] = at_i
            cand = perm[todo, i]
            acc = bernoulli_exp_batch(src, nums[cand], den)
            out[start + todo[acc]] = cand[acc]
            todo = todo[~acc]
            i += 1
    return out
