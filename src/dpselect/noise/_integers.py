"""Uniform integers and exact rationals: the two primitives of the exact samplers.

``IntegerSource`` draws uniform integers from a NumPy Generator (a seed
reproduces them) or, for ``rng="secure"``, from the operating system's CSPRNG;
``as_fraction`` converts a parameter to an exact :class:`~fractions.Fraction`.
Shared by :mod:`dpselect.noise.exact` and :mod:`dpselect.noise._exact_em`.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import SecureGenerator, check_random_state

__all__ = ["IntegerSource", "as_fraction"]

_VEC_DEN = 1 << 50  # vectorise while den * K stays below 2^62
_INT62 = 1 << 62


def as_fraction(value: Any, name: str, *, positive: bool = False, nonnegative: bool = False) -> Fraction:
    """An int, Fraction, float or NumPy real as an exact :class:`~fractions.Fraction`."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), got bool")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (int, Fraction)):
        q = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite")
        q = Fraction(value)
    else:
        raise TypeError(f"{name} must be a rational number (int, Fraction or float), got {type(value).__name__}")
    if positive and q <= 0:  # no value in the message: scales and rates may be computed from the data
        raise ValueError(f"{name} must be > 0")
    if nonnegative and q < 0:
        raise ValueError(f"{name} must be >= 0")
    return q


class IntegerSource:
    """Uniform random integers from a NumPy Generator, or from the OS for ``"secure"``.

    ``below(n)`` is uniform on {0, ..., n-1} for any Python int n >= 1;
    ``below_array(high)`` is elementwise uniform on {0, ..., high_i - 1} for an
    int64 array with entries in [1, 2^62].
    """

    def __init__(self, rng: Any = None) -> None:
        self.generator = check_random_state(rng)
        self.secure = isinstance(self.generator, SecureGenerator)

    def below(self, n: int) -> int:
        if self.secure:
            import secrets  # the OS CSPRNG (imported only when asked for)

            return secrets.randbelow(n)
        if n <= 1 << 64:
            return int(self.generator.integers(0, n, dtype=np.uint64)) if n > 1 else 0
        bits = (n - 1).bit_length()
        words = -(-bits // 64)
        while True:  # rejection on `bits` random bits: exact and reproducible
            w = self.generator.integers(0, 1 << 64, size=words, dtype=np.uint64, endpoint=False)
            x = int.from_bytes(w.astype("<u8").tobytes(), "little") >> (64 * words - bits)
            if x < n:
                return x

    def below_array(self, high: np.ndarray) -> np.ndarray:
        high = np.asarray(high, dtype=np.int64)
        if not self.secure:
            return self.generator.integers(0, high)
        h = high.astype(np.uint64)
        out = np.empty(h.shape, dtype=np.int64)
        todo = np.arange(h.size)
        while todo.size:  # x uniform on [0, 2^64); keep x < 2^64 - (2^64 mod h), return x mod h
            x = np.frombuffer(os.urandom(8 * todo.size), dtype=np.uint64)
            hh = h.reshape(-1)[todo]
            r = (np.uint64(0) - hh) % hh  # 2^64 mod h
            ok = (r == 0) | (x < np.uint64(0) - r)
            out.reshape(-1)[todo[ok]] = (x[ok] % hh[ok]).astype(np.int64)
            todo = todo[~ok]
        return out
