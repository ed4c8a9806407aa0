"""Type aliases used in dpselect's public signatures.

Import them to annotate code that calls dpselect::

    from dpselect.typing import ArrayLike, Relation, SeedLike

* :data:`ArrayLike` -- anything :func:`numpy.asarray` turns into an array
  (lists, tuples, scalars, arrays); re-exported from :mod:`numpy.typing`.
* :data:`SeedLike` -- what a keyword-only ``rng`` (or an estimator's
  ``random_state``) accepts: ``None`` (fresh operating-system entropy), an
  ``int`` seed (reproducible), a :class:`numpy.random.Generator` (used as is,
  and advanced), a :class:`numpy.random.SeedSequence`, a legacy
  :class:`numpy.random.RandomState` (converted deterministically), or
  ``"secure"`` (operating-system randomness, where the function supports it).
* :data:`Relation` -- the neighbour relation a sensitivity or a guarantee
  refers to: ``"add_remove"`` (one record added or removed) or
  ``"replace"`` (one record replaced); see the mathematics page, §1.
* :data:`TieRule` -- how the argmax-indicator utility treats tied maxima:
  ``"tieset"`` (every tied maximum scores 1) or ``"first"`` (the lowest
  index wins).
* :data:`FeatureBounds` -- the public (lo, hi) bounds of the continuous
  features of a tabular estimator: one pair for every feature, a mapping
  {feature index or column name: (lo, hi)}, or one pair per row of an
  array of shape (n_continuous, 2) or (n_features, 2).
* :data:`CategoricalFeatures` -- which features of a tabular estimator are
  categorical: indices, column names or a boolean mask, or a mapping
  {feature index or column name: public categories} (None for a feature
  whose categories are to be inferred from the data, which leaks).

Examples
--------
>>> from typing import get_args
>>> from dpselect.typing import Relation
>>> get_args(Relation)
('add_remove', 'replace')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "CategoricalFeatures", "FeatureBounds", "Relation", "SeedLike", "TieRule"]

#: The randomness argument ``rng`` (``random_state`` for estimators).
SeedLike: TypeAlias = (
    int | np.integer | np.random.Generator | np.random.SeedSequence | np.random.RandomState | Literal["secure"] | None
)

#: A neighbour relation: one record added or removed, or one record replaced.
Relation: TypeAlias = Literal["add_remove", "replace"]

#: Tie convention of the argmax-indicator utility.
TieRule: TypeAlias = Literal["tieset", "first"]

#: Public (lo, hi) bounds of continuous features: one pair, {feature: (lo, hi)}, or one pair per row.
FeatureBounds: TypeAlias = ArrayLike | Mapping[int, Sequence[float]] | Mapping[str, Sequence[float]]

#: Categorical features: indices, names or a boolean mask, or {feature: public categories or None}.
CategoricalFeatures: TypeAlias = (
    ArrayLike | Mapping[int, Iterable[object] | None] | Mapping[str, Iterable[object] | None]
)
