"""Uniform integers and exact rationals: the two primitives of the exact samplers.

``IntegerSource`` draws uniform integers from a NumPy Generator (a seed
reproduces them) or, for ``rng="secure"``, from the operating system's CSPRNG;
the rules :func:`rational` and :data:`RATIONAL` convert a parameter to an exact
:class:`~fractions.Fraction` (:func:`dpselect._exact_numbers.as_fraction`).
Shared by :mod:`dpselect.noise.exact` and :mod:`dpselect.noise._exact_em`.
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from .._exact_numbers import as_fraction
from .._params import SEED, Rule
from .._validation import SecureGenerator, check_random_state
from ..typing import SeedLike

__all__ = ["NONNEGATIVE_INTEGERS", "POSITIVE_FRACTION", "RATIONAL", "IntegerSource", "Rational", "rational"]

_VEC_DEN = 1 << 50  # vectorise while den * K stays below 2^62
_INT62 = 1 << 62


#: A rational parameter of an exact sampler: an int, a Fraction, a float or a NumPy real.
Rational = int | Fraction | float | np.integer | np.floating


def rational(*, positive: bool = False, nonnegative: bool = False) -> Rule:
    """A rational parameter (int, Fraction, float, NumPy real), handed to the body as a Fraction."""
    words = "a rational number" + (" > 0" if positive else " >= 0" if nonnegative else "")
    return Rule(
        words + " (int, Fraction or float)",
        check=lambda v, n: as_fraction(v, n, positive=positive, nonnegative=nonnegative),
    )


#: A rational number > 0 (a scale), handed to the body as a Fraction.
RATIONAL = rational(positive=True)


class IntegerSource:
    """Uniform random integers from a NumPy Generator, or from the OS for ``"secure"``.

    ``below(n)`` is uniform on {0, ..., n-1} for any Python int n >= 1;
    ``below_array(high)`` is elementwise uniform on {0, ..., high_i - 1} for an
    int64 array with entries in [1, 2^62].

    Parameters
    ----------
    rng : None, int, Generator, SeedSequence, RandomState or "secure", default=None
        The randomness: a seed reproduces the integers; ``"secure"`` takes every one
        from the operating system's CSPRNG.

    Examples
    --------
    >>> src = IntegerSource(0)
    >>> 0 <= src.below(10) < 10
    True
    """

    #: The rng is converted (once) by :func:`dpselect._validation.check_random_state`.
    _parameter_constraints: ClassVar[dict[str, Rule]] = {"rng": Rule(SEED.description, check=check_random_state)}

    def __init__(self, rng: SeedLike = None) -> None:
        self.generator: np.random.Generator = self._parameter_constraints["rng"](rng, "rng")
        self.secure = isinstance(self.generator, SecureGenerator)

    def below(self, n: int) -> int:
        """Return a uniform integer on {0, ..., n - 1}.

        Parameters
        ----------
        n : int
            The bound, a Python int >= 1 (any size).

        Returns
        -------
        int
            The draw.
        """
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
        """Return elementwise uniform integers on {0, ..., high_i - 1}.

        Parameters
        ----------
        high : numpy.ndarray
            int64 bounds in [1, 2^62].

        Returns
        -------
        numpy.ndarray
            int64 draws, shaped like ``high``.
        """
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


# --------------------------------------------------------------------------- rules of the exact samplers


def _integers(value: Any, name: str, minimum: int) -> Any:
    """Check (cheaply: one vectorised pass for NumPy integers) that ``value`` holds integers >= minimum."""
    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        if arr.size and int(arr.min()) < minimum:
            raise ValueError(f"{name} must be >= {minimum}")
        return value
    if arr.dtype.kind == "O" and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in arr.reshape(-1)
    ):
        if arr.size and min(int(v) for v in arr.reshape(-1)) < minimum:
            raise ValueError(f"{name} must be >= {minimum}")
        return value
    raise TypeError(f"{name} must be integers (an int array or a list of Python ints), got dtype {arr.dtype}")


#: Integers >= 0 (NumPy integers, or Python ints of any size), passed through unchanged.
NONNEGATIVE_INTEGERS = Rule("integers >= 0 (an array or a list)", check=lambda v, n: _integers(v, n, 0))
#: Group sizes: integers >= 1.
_COUNTS = Rule("integers >= 1 (an array or a list)", check=lambda v, n: _integers(v, n, 1))


def _rate_values(value: Any, name: str) -> Any:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iufO":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite")
    return value


def _positive_fraction(value: Any, name: str) -> Fraction:
    if not isinstance(value, Fraction):
        raise TypeError(f"{name} must be a fractions.Fraction, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0")
    return value


#: A Fraction > 0.
POSITIVE_FRACTION = Rule("a Fraction > 0", check=_positive_fraction)
