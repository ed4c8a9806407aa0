"""A running sum of non-negative floats, correctly rounded when read (the ledger's sums)."""

from __future__ import annotations

import math
from fractions import Fraction


class _ExactSum:
    """A running sum of non-negative floats, correctly rounded when read.

    Shewchuk's partials, the algorithm behind :func:`math.fsum`, kept incrementally); ``inf`` is absorbing.
    """

    __slots__ = ("_inf", "_partials")

    def __init__(self) -> None:
        self._partials: list[float] = []
        self._inf = False

    def add(self, x: float, times: int = 1) -> None:
        if math.isinf(x):
            self._inf = True
            return
        if times != 1:  # times * x exactly: the rounded product and its (exactly representable) error
            hi = x * times
            if math.isinf(hi):
                self._inf = True
                return
            self.add(hi)
            self.add(float(Fraction(x) * times - Fraction(hi)))
            return
        partials, i = self._partials, 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    @property
    def value(self) -> float:
        return math.inf if self._inf else math.fsum(self._partials)

    def le(self, bound: float, *others: _ExactSum, extra: tuple[float, ...] = ()) -> bool:
        """Whether this sum plus ``others`` plus ``extra``, correctly rounded, is at most ``bound``.

        One rounding of the whole sum (as :func:`math.fsum`), as every budget check of the accountant.
        """
        sums = (self, *others)
        if any(s._inf for s in sums) or any(math.isinf(x) for x in extra):
            return math.isinf(bound) and bound > 0
        if math.isinf(bound):
            return bound > 0
        return math.fsum([p for s in sums for p in s._partials] + list(extra)) <= bound

    def copy(self) -> _ExactSum:
        out = _ExactSum()
        out._partials, out._inf = list(self._partials), self._inf
        return out
