"""Privacy guarantees and their composition.

``Privacy(epsilon, delta)`` is an (epsilon, delta)-differential-privacy
guarantee (Dwork & Roth 2014, Def. 2.4) with respect to a neighbour relation
(mathematics §1: "add_remove" or "replace"; ``None`` when it holds for both or is
not tied to data).  ``a + b`` is basic sequential composition (Dwork & Roth
Thm 3.16): epsilons and deltas add; the sum remembers its atomic guarantees
(``parts``) so that the accountant can compose their bounded-range / zCDP
certificates more tightly.  Guarantees under different relations do
not compose (a mechanism's sensitivity is only meaningful in one relation),
so mixing them is an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ._params import DELTA, Rule, instance_of, options, positive, validate_fields
from ._validation import RELATIONS

__all__ = ["Privacy"]


def _check_parts(parts: Any, name: str) -> tuple[Privacy, ...]:
    if not isinstance(parts, tuple) or not all(isinstance(p, Privacy) for p in parts):
        raise TypeError(f"{name} must be a tuple of Privacy")
    return parts


@dataclass(frozen=True)
class Privacy:
    """An (epsilon, delta)-DP guarantee.

    Parameters
    ----------
    epsilon : float
        epsilon >= 0 (``inf`` means "no guarantee", e.g. a deliberately
        non-private configuration; 0 is the guarantee of releasing nothing).
    delta : float, default=0.0
        delta in [0, 1).
    relation : {"add_remove", "replace"} or None, default=None
        The neighbour relation the guarantee refers to; None when it holds
        for both or is not tied to data.
    source : str, default=""
        Where the guarantee comes from (theorem / the mathematics page section).
    rho : float or None, default=None
        If not None, the mechanism is also rho-zCDP (Bun & Steinke 2016) and
        (epsilon, delta) is that rho converted (mathematics §2.5).  The accountant
        (:class:`dpselect.accounting.Accountant`) composes such guarantees in
        rho and converts once, which is never worse than adding epsilons.
    bounded_range : float or None, default=None
        If not None, eta: the mechanism is eta-bounded-range (Durfee & Rogers
        2019, Def. 3.1): for neighbours x, y and outputs r, r',
        P_x(r)/P_y(r) <= e^eta P_x(r')/P_y(r').  The exponential mechanism at
        epsilon is epsilon-BR, hence (epsilon^2/8)-zCDP (Cesar & Rogers 2021);
        see the documentation's mathematics page §10.1.
    parts : tuple of Privacy, default=()
        The atomic guarantees a composed guarantee was built from (empty for
        an atomic one); not compared.
    """

    epsilon: float
    delta: float = 0.0
    relation: str | None = None
    source: str = ""
    rho: float | None = None
    bounded_range: float | None = None
    parts: tuple[Privacy, ...] = field(default=(), compare=False, repr=False)

    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "epsilon": positive(allow_inf=True, allow_zero=True),
        "delta": DELTA,
        "relation": options(*RELATIONS, none=True),
        "source": instance_of(str),
        "rho": positive(allow_zero=True, none=True),
        "bounded_range": positive(allow_zero=True, none=True),
        "parts": Rule("a tuple of Privacy", check=_check_parts),
    }

    def __post_init__(self) -> None:
        validate_fields(self, self._parameter_constraints)

    @property
    def pure(self) -> bool:
        """True for pure epsilon-DP (delta == 0)."""
        return self.delta == 0.0

    @property
    def atoms(self) -> tuple[Privacy, ...]:
        """The atomic guarantees composed into this one (itself if atomic)."""
        return self.parts or (self,)

    def __add__(self, other: Privacy) -> Privacy:
        if not isinstance(other, Privacy):
            return NotImplemented
        if self.relation is not None and other.relation is not None and self.relation != other.relation:
            raise ValueError(
                f"cannot compose guarantees under different neighbour relations "
                f"({self.relation!r} and {other.relation!r})"
            )
        relation = self.relation if self.relation is not None else other.relation
        delta = self.delta + other.delta
        if delta >= 1.0:
            raise ValueError(f"composed delta {delta} is >= 1 (no guarantee)")
        parts = [s for s in (self.source, other.source) if s]
        rho = self.rho + other.rho if self.rho is not None and other.rho is not None else None
        return Privacy(
            self.epsilon + other.epsilon, delta, relation, " + ".join(parts), rho, parts=self.atoms + other.atoms
        )

    def __radd__(self, other: object) -> Privacy:
        if other == 0:  # lets sum([...]) work
            return self
        return NotImplemented

    def __str__(self) -> str:
        eps = "inf" if math.isinf(self.epsilon) else f"{self.epsilon:.6g}"
        rel = f", {self.relation}" if self.relation else ""
        core = f"({eps}, {self.delta:.3g})-DP" if self.delta else f"{eps}-DP"
        return core + (f" [{self.relation}]" if rel else "")
