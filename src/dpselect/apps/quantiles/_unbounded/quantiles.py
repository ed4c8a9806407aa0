"""Quantiles without bounds with every option of the first stage: scale, steps, share of epsilon.

``private_quantile(x, q, epsilon)`` and ``private_quantiles(x, qs, epsilon)`` (``bounds=None``)
are these functions with the defaults; :mod:`.bounds` releases the bounds
(docs/mathematics.md §15.2).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ...._params import validate_params
from ....accounting import Accountant
from ....typing import Relation, SeedLike
from .._exponential.quantile import private_quantile
from .._multi.quantiles import LEVELS, QUANTILES_METHOD, private_quantiles
from .._rules import ACCOUNTANT, EPSILON, GRANULARITY, INTEGER, LEVEL, RELATION, SAMPLE, SEED, SIZE, Rule
from .bounds import DEFAULT_BOUNDS_SHARE, DEFAULT_SCALE, DEFAULT_STEPS, SCALE, STEPS, _check_share, release_bounds_draws

#: The share of epsilon spent on the bounds, in (0, 1).
SHARE = Rule("a float in (0, 1)", check=lambda v, n: _check_share(v))
_RULES = {
    "x": SAMPLE,
    "epsilon": EPSILON,
    "scale": SCALE,
    "steps": STEPS,
    "bounds_share": SHARE,
    "integer": INTEGER,
    "relation": RELATION,
    "rng": SEED,
    "size": SIZE,
    "accountant": ACCOUNTANT,
    "granularity": GRANULARITY,
}

__all__ = ["unbounded_quantile", "unbounded_quantiles"]


@validate_params(_RULES | {"q": LEVEL})
def unbounded_quantile(
    x: ArrayLike,
    q: float,
    epsilon: float,
    *,
    scale: float = DEFAULT_SCALE,
    steps: int = DEFAULT_STEPS,
    bounds_share: float = DEFAULT_BOUNDS_SHARE,
    integer: bool | None = None,
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
) -> Any:
    r"""One private quantile with no bounds: :func:`private_bounds` then :func:`private_quantile`, epsilon-DP.

    ``bounds_share`` :math:`\cdot\,\varepsilon` releases bounds :math:`(a, b)`
    (:func:`private_bounds`); the rest runs the bounded exponential mechanism
    of :func:`private_quantile` on :math:`\min(\max(x, a), b)`.  What
    ``private_quantile(x, q, epsilon)`` (``bounds=None``) calls.

    Parameters
    ----------
    x : array_like
        1-D finite sample (any range, both signs).
    q : float
        quantile level in [0, 1].
    epsilon : float
        total privacy budget (> 0).
    scale : float, default=2**-30
        smallest scale of the bounds' grid (a power of two).
    steps : int, default=4
        bounds' grid points per octave (a power of two).
    bounds_share : float, default=0.25
        share of epsilon spent on the bounds, in (0, 1).
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation: epsilon-DP for add/remove or replace neighbours (mathematics §15.2).
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None: one release; an int: ``size`` independent releases (bounds and
        quantiles each time), charged as ``size`` releases (mathematics §10.1).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` once (``size`` times), before any randomness is drawn.
    granularity : float or None, default=None
        real outputs: the output grid (a power of two) or None (the default of
        :func:`private_quantile` for the released bounds).

    Returns
    -------
    float, int or ndarray
        the private quantile (an array of ``size`` of them).

    References
    ----------
    D. Durfee, NeurIPS 2023; A. Smith, STOC 2011; docs/mathematics.md §15.2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_quantile
    >>> x = np.random.default_rng(0).normal(50.0, 10.0, size=10_000)
    >>> round(private_quantile(x, 0.5, 1.0, rng=1), 1)  # no bounds
    49.9
    """
    draws, rest, gen = release_bounds_draws(
        x, epsilon, size, integer, relation, rng, accountant, granularity, scale, steps, bounds_share
    )
    out = [
        private_quantile(xc, q, rest, bounds=bnd, relation=relation, rng=gen, granularity=lam) for xc, bnd, lam in draws
    ]
    return out[0] if size is None else np.array(out)


@validate_params(_RULES | {"qs": LEVELS, "method": QUANTILES_METHOD})
def unbounded_quantiles(
    x: ArrayLike,
    qs: ArrayLike,
    epsilon: float,
    *,
    scale: float = DEFAULT_SCALE,
    steps: int = DEFAULT_STEPS,
    bounds_share: float = DEFAULT_BOUNDS_SHARE,
    integer: bool | None = None,
    method: Literal["auto", "joint", "recursive"] = "auto",
    relation: Relation = "add_remove",
    rng: SeedLike = None,
    size: int | None = None,
    accountant: Accountant | None = None,
    granularity: float | None = None,
) -> np.ndarray:
    r"""Several private quantiles with no bounds: :func:`private_bounds` then :func:`private_quantiles`.

    As :func:`unbounded_quantile`, with the many-quantile mechanism of
    :func:`private_quantiles` (``method``) on the clamped records; what
    ``private_quantiles(x, qs, epsilon)`` (``bounds=None``) calls.

    Parameters
    ----------
    x : array_like
        1-D finite sample.
    qs : array_like
        levels in [0, 1].
    epsilon : float
        total privacy budget (> 0).
    scale : float, default=2**-30
        smallest scale of the bounds' grid (a power of two).
    steps : int, default=4
        bounds' grid points per octave (a power of two).
    bounds_share : float, default=0.25
        share of epsilon spent on the bounds.
    integer : bool or None, default=None
        integer outputs; None: whether ``x`` has an integer dtype.
    method : {"auto", "joint", "recursive"}, default="auto"
        the method of :func:`private_quantiles`.
    relation : {"add_remove", "replace"}, default="add_remove"
        The neighbour relation: epsilon-DP for add/remove or replace neighbours (mathematics §15.2).
    rng : None, int or numpy.random.Generator, default=None
        randomness; a seed reproduces.
    size : int or None, default=None
        None: one release; an int: ``size`` independent releases (bounds and
        quantiles each time), charged as ``size`` releases (mathematics §10.1).
    accountant : Accountant or None, default=None
        charged ``Privacy(epsilon, 0, relation)`` once (``size`` times), before any randomness is drawn.
    granularity : float or None, default=None
        real outputs: the output grid or None (the default for the released bounds).

    Returns
    -------
    ndarray
        the estimates, as :func:`private_quantiles` returns them (shape ``(size, len(qs))`` with ``size``).

    References
    ----------
    D. Durfee, NeurIPS 2023; Kaplan, Schnapp & Stemmer, ICML 2022; docs/mathematics.md §15.2.

    Examples
    --------
    >>> import numpy as np
    >>> from dpselect.apps.quantiles import private_quantiles
    >>> x = np.random.default_rng(0).normal(-20.0, 5.0, size=10_000)
    >>> private_quantiles(x, [0.1, 0.5, 0.9], 1.0, rng=1).round(0) + 0.0
    array([-26., -20., -14.])
    """
    draws, rest, gen = release_bounds_draws(
        x, epsilon, size, integer, relation, rng, accountant, granularity, scale, steps, bounds_share
    )
    out = [
        private_quantiles(xc, qs, rest, bounds=bnd, method=method, relation=relation, rng=gen, granularity=lam)
        for xc, bnd, lam in draws
    ]
    return out[0] if size is None else np.stack(out)
