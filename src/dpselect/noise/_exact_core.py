"""The integer-arithmetic kernels of the exact samplers (Canonne, Kamath & Steinke 2020).

Bernoulli(exp(-num/den)) (Algorithm 1) and the discrete Laplace (Algorithm 2), scalar and
vectorised over int64, without the parameter layer: the public, checked entry points are
in :mod:`dpselect.noise.exact`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._integers import _INT62, _VEC_DEN, IntegerSource


def _bern_exp_scalar(src: IntegerSource, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)) with Python integers (CKS 2020, Algorithm 1)."""
    whole, frac = divmod(num, den)
    for _ in range(whole):  # Bernoulli(e^-1) ``whole`` times, all must succeed
        if not _bern_exp_unit(src, 1, 1, 1):
            return False
    return _bern_exp_unit(src, frac, den, 1)


def _bern_exp_unit(src: IntegerSource, num: int, den: int, k: int) -> bool:
    """Bernoulli(exp(-g)), g = num/den in [0, 1], continuing Algorithm 1 from K = k."""
    while src.below(den * k) < num:  # A ~ Bernoulli(g / K)
        k += 1
    return k % 2 == 1


def _bern_exp_unit_array(src: IntegerSource, num: np.ndarray, den: int) -> np.ndarray:
    """Vectorised :func:`_bern_exp_unit` for int64 ``num`` in [0, den], den < 2^50."""
    k = np.ones(num.shape, dtype=np.int64)
    active = np.flatnonzero(num > 0)
    while active.size:
        if den * (int(k[active].max()) + 1) >= _INT62:  # never in practice: finish exactly in Python
            for i in active:
                k[i] = 1 if _bern_exp_unit(src, int(num[i]), den, int(k[i])) else 2
            break
        hit = src.below_array(den * k[active]) < num[active]
        k[active[hit]] += 1
        active = active[hit]
    return k % 2 == 1


def _bernoulli_exp_batch(src: IntegerSource, num: Any, den: int) -> np.ndarray:
    """:func:`bernoulli_exp_batch` without the parameter layer (the samplers' inner loops)."""
    nums = np.asarray(num, dtype=object).reshape(-1)
    if den < _VEC_DEN and all(int(v) < _INT62 for v in nums):
        n = nums.astype(np.int64)
        whole, frac = np.divmod(n, den)
        alive = np.ones(n.shape, dtype=bool)
        j = 0
        while True:  # round j: every alive element with whole > j draws one Bernoulli(e^-1)
            idx = np.flatnonzero(alive & (whole > j))
            if not idx.size:
                break
            alive[idx] = _bern_exp_unit_array(src, np.ones(idx.size, dtype=np.int64), 1)
            j += 1
        idx = np.flatnonzero(alive)
        alive[idx] = _bern_exp_unit_array(src, frac[idx], den)
        return alive
    return np.fromiter((_bern_exp_scalar(src, int(v), den) for v in nums), dtype=bool, count=nums.size)


def _geometric_e1(src: IntegerSource, n: int) -> np.ndarray:
    """Return n iid counts of Bernoulli(e^-1) successes before the first failure (P[V >= v] = e^-v)."""
    v = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        ok = _bern_exp_unit_array(src, np.ones(active.size, dtype=np.int64), 1)
        v[active[ok]] += 1
        active = active[ok]
    return v


def _discrete_laplace_batch(src: IntegerSource, s: int, t: int, n: int, clamp: int | None = None) -> np.ndarray:
    """:func:`discrete_laplace_batch` without the parameter layer (the samplers' inner loops)."""
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        m = n - filled
        if t < _VEC_DEN:
            u = src.below_array(np.full(m, t, dtype=np.int64))
        else:
            u = np.array([src.below(t) for _ in range(m)], dtype=object)
        d = _bernoulli_exp_batch(src, u, t)  # accept U with probability exp(-U/t)
        u = u[d]
        x = u + t * _geometric_e1(src, int(u.size)).astype(object if t >= _VEC_DEN else np.int64)
        y = x // s
        b = src.below_array(np.full(y.size, 2, dtype=np.int64)).astype(bool)
        keep = ~(b & (y == 0))  # reject (B = 1, Y = 0) so that 0 is not counted twice
        y = np.where(b, -y, y)[keep]
        if clamp is not None:
            y = np.clip(y, -clamp, clamp)
        elif y.dtype == object and y.size and max(abs(int(v)) for v in y) >= _INT62:
            raise OverflowError("discrete Laplace draws exceed int64 (the scale is too large)")
        out[filled : filled + y.size] = y.astype(np.int64)
        filled += int(y.size)
    return out
