"""The rules of the parameter layer: :class:`Rule`, its building blocks and the shared rules.

Every rule more than one package uses is defined here once (scikit-learn's
``_param_validation`` constraints, written for this library): ``EPSILON``, ``DELTA``,
``SEED``, the data ``SAMPLE``, candidate ``NAMES``, the ``ACCOUNTANT``, the output grid
``GRANULARITY``, ...  :mod:`dpselect._params` re-exports them with the decorators that apply
them, so ``from dpselect._params import EPSILON`` is the one way in.

Examples
--------
>>> SAMPLE([1, 2, 3], "x").tolist()
[1, 2, 3]
>>> GRANULARITY(0.3, "granularity")
Traceback (most recent call last):
...
ValueError: granularity must be a power of two (e.g. 2**-20), got 0.3
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._arraylike import as_array_1d
from ._exact_numbers import check_granularity
from ._validation import (
    OUT_OF_BOUNDS,
    RELATIONS,
    SAMPLERS,
    as_real_array,
    check_array_1d,
    check_counts,
    check_delta,
    check_epsilon,
    check_finite_float,
    check_int,
    check_labels,
    check_pair,
    check_positive,
    check_probability_in,
    check_real,
)

__all__ = [
    "ACCOUNTANT",
    "ANY",
    "BOOLEAN",
    "COUNTS",
    "DATA_FINITE",
    "DELTA",
    "EPSILON",
    "FINITE",
    "GRANULARITY",
    "GRANULARITY_OR_ZERO",
    "ITERABLE",
    "LOG_LAW",
    "NAMES",
    "OUT_OF_BOUNDS_RULE",
    "PAIR",
    "REAL",
    "REALS",
    "RELATION",
    "SAMPLE",
    "SAMPLER",
    "SEED",
    "SENSITIVITY",
    "SIZE",
    "Rule",
    "any_of",
    "array_1d",
    "callable_",
    "granularity",
    "instance_of",
    "int_at_least",
    "options",
    "positive",
    "real_in",
    "show",
]

Check = Callable[[Any, str], Any]


def show(value: Any) -> str:
    """A public parameter value as a message shows it (numpy scalars as plain numbers, long reprs cut)."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Rule:
    """What one argument accepts.

    Parameters
    ----------
    description : str
        The accepted values in words ("a float > 0"), for messages and documentation.
    check : callable, default=None
        ``check(value, name) -> value`` raising ``TypeError`` / ``ValueError`` with a message
        that names ``name`` (never the data); its return value is what the function body gets.
    options : tuple of str, default=None
        The accepted strings: another string is a ``ValueError``, a non-string a ``TypeError``.
    none : bool, default=False
        Whether None is accepted as well (passed through unchecked).
    types : tuple of type, default=()
        Instances of these types are accepted as they are.

    Examples
    --------
    >>> Rule("an int >= 2", check=lambda v, n: check_int(v, n, minimum=2))(3, "k")
    3
    """

    description: str
    check: Check | None = None
    options: tuple[str, ...] | None = None
    none: bool = False
    types: tuple[type, ...] = ()

    def __call__(self, value: Any, name: str) -> Any:
        """Return the checked (normalised) ``value`` of argument ``name``; raise if it is not accepted."""
        if value is None and self.none:
            return None
        if self.types and isinstance(value, self.types):
            return value
        if self.options is not None:
            if not isinstance(value, str):
                raise TypeError(f"{name} must be one of {self.options}, got {type(value).__name__}")
            if value not in self.options:
                raise ValueError(f"{name} must be one of {self.options}, got {show(value)}")
            return value
        if self.check is not None:
            return self.check(value, name)
        if self.types:
            raise TypeError(f"{name} must be {self.text}, got {type(value).__name__}")
        return value

    @property
    def text(self) -> str:
        """The accepted values in words, None included where accepted."""
        return f"None or {self.description}" if self.none else self.description

    def or_none(self) -> Rule:
        """The same rule, accepting None as well."""
        return Rule(self.description, self.check, self.options, True, self.types)


# --------------------------------------------------------------------------- building blocks


def options(*values: str, none: bool = False) -> Rule:
    """One of the strings ``values`` (and None with ``none``)."""
    return Rule(f"one of {values}", options=tuple(values), none=none)


def int_at_least(minimum: int, *, none: bool = False) -> Rule:
    """An int (Python or NumPy, not bool) >= ``minimum``, returned as a Python int."""
    return Rule(f"an int >= {minimum}", check=lambda v, n: check_int(v, n, minimum=minimum), none=none)


def positive(*, allow_inf: bool = False, allow_zero: bool = False, none: bool = False) -> Rule:
    """A real number > 0 (>= 0 with ``allow_zero``; +inf with ``allow_inf``), returned as a float."""
    words = ("a float >= 0" if allow_zero else "a float > 0") + (" (inf allowed)" if allow_inf else "")
    return Rule(words, check=lambda v, n: check_positive(v, n, allow_inf=allow_inf, allow_zero=allow_zero), none=none)


def real_in(lo: float, hi: float, *, closed: bool = False, none: bool = False) -> Rule:
    """A real number in (lo, hi) (``closed``: [lo, hi]), returned as a float."""
    br = "[]" if closed else "()"
    return Rule(
        f"a float in {br[0]}{lo}, {hi}{br[1]}",
        check=lambda v, n: check_probability_in(v, n, lo, hi, closed=closed),
        none=none,
    )


def array_1d(*, allow_empty: bool = False, finite: bool = True, none: bool = False) -> Rule:
    """A 1-D array of real numbers (finite unless ``finite=False``), returned as float64."""
    return Rule(
        "a 1-D array of " + ("finite " if finite else "") + "real numbers",
        check=lambda v, n: check_array_1d(v, n, allow_empty=allow_empty, finite=finite),
        none=none,
    )


def instance_of(*types: type, description: str | None = None, none: bool = False) -> Rule:
    """An instance of one of ``types``, passed through as it is."""
    words = description or " or ".join(f"a {t.__name__}" for t in types)
    return Rule(words, types=tuple(types), none=none)


def _callable(value: Any, name: str) -> Any:
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")
    return value


def callable_(*, none: bool = False) -> Rule:
    """A callable, passed through as it is."""
    return Rule("a callable", check=_callable, none=none)


def _boolean(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _seed(value: Any, name: str) -> Any:
    """Check the type of a seed without using it (a RandomState would advance)."""
    if value is None or isinstance(value, (np.random.Generator, np.random.SeedSequence, np.random.RandomState)):
        return value
    if isinstance(value, str):
        if value != "secure":
            raise TypeError(f"{name} as a string must be 'secure', got {show(value)}")
        return value
    if isinstance(value, numbers.Integral):
        return check_int(value, name, minimum=0)
    raise TypeError(
        f"{name} must be None, an int seed, 'secure', a numpy Generator or RandomState, got {type(value).__name__}"
    )


def _check_real_dtype(dtype: np.dtype, name: str) -> None:
    """A real numeric (or boolean) dtype; object, string and complex dtypes are a TypeError naming ``name``."""
    if not (np.issubdtype(dtype, np.number) or dtype == np.bool_) or np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"{name} must be real numeric, got dtype {dtype}")


def _sample(value: Any, name: str) -> Any:
    """A 1-D array-like of real numbers as numpy (:func:`~dpselect._arraylike.as_array_1d`); dask is not read."""
    if hasattr(value, "dask") and hasattr(value, "compute"):
        _check_real_dtype(np.dtype(value.dtype), name)
        shape = value.shape
    else:
        if isinstance(value, (str, bytes)) or np.ndim(value) == 0:
            raise TypeError(f"{name} must be a 1-D array of real numbers, got {type(value).__name__}")
        arr = as_array_1d(value, name)
        _check_real_dtype(arr.dtype, name)
        return arr
    if len(shape) != 1:
        raise ValueError(f"{name} must be 1-D, got shape {shape}")
    return value


def _reals(value: Any, name: str) -> Any:
    """Real numbers, a scalar or an array of any shape, handed on as given."""
    as_real_array(value, name)
    return value


def _sensitivity(value: Any, name: str) -> Any:
    """A sensitivity: a float >= 0 (data-derived: never echoed) or a callable of beta."""
    return value if callable(value) else check_positive(value, name, allow_zero=True, quote=False)


def _log_law(value: Any, name: str) -> np.ndarray:
    """Log-probabilities: real numbers (-inf allowed), any shape; shapes are compared in the body."""
    arr = as_real_array(value, name)
    if np.isnan(arr).any() or (arr == np.inf).any():
        raise ValueError(f"{name} must be log-probabilities (no NaN or +inf)")
    return arr


def _accountant(value: Any, name: str) -> Any:
    """A privacy accountant: anything with a ``spend(privacy)`` method (a dpselect.Accountant)."""
    if not callable(getattr(value, "spend", None)):
        raise TypeError(f"{name} must be a dpselect.Accountant or None, got {type(value).__name__}")
    return value


def any_of(*rules: Rule, none: bool = False) -> Rule:
    """A value one of ``rules`` accepts (the first that does checks it); else a TypeError naming all."""
    words = " or ".join(r.description for r in rules)

    def check(value: Any, name: str) -> Any:
        for rule in rules:
            try:
                return rule(value, name)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"{name} must be {words}, got {type(value).__name__}")

    return Rule(words, check=check, none=none)


def _iterable(value: Any, name: str) -> Any:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be an iterable, got {type(value).__name__}")
    return value


def granularity(*, zero: bool = False, none: bool = True) -> Rule:
    """The output grid lambda: a power of two (0 too with ``zero``: the unsnapped float output)."""

    def check(value: Any, name: str) -> float:
        if zero and not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real) and value == 0:
            return 0.0
        return check_granularity(value, name)

    return Rule("a power of two > 0" + (", or 0" if zero else ""), check=check, none=none)


#: Privacy parameter epsilon: a finite float > 0 (a normal float).
EPSILON = Rule("a finite float > 0", check=check_epsilon)
#: Privacy parameter delta: a float in [0, 1).
DELTA = Rule("a float in [0, 1)", check=check_delta)
#: Any finite real number.
FINITE = Rule("a finite float", check=check_finite_float)
#: A finite real number that may come from the data (a statistic, a true value): the message
#: names the argument and never echoes the value.
DATA_FINITE = Rule("a finite float", check=lambda v, n: check_finite_float(v, n, quote=False))
#: A pair (lo, hi) of finite reals with lo <= hi.
PAIR = Rule("a pair (lo, hi) of finite floats with lo <= hi", check=check_pair)
#: A bool (or numpy bool).
BOOLEAN = Rule("a bool", check=_boolean)
#: The randomness argument (``rng`` / ``random_state``); checked, handed on unchanged (no draw).
SEED = Rule("None, an int seed >= 0, 'secure', a Generator, SeedSequence or RandomState", check=_seed)
#: Number of batched draws: None (one draw) or an int >= 1.
SIZE = int_at_least(1, none=True)
#: A neighbour relation of mathematics §1.
RELATION = options(*RELATIONS)
#: The sampler of the classic mechanisms and the grid releases.
SAMPLER = options(*SAMPLERS)
#: What a bounded-data function does with a record outside the public bounds.
OUT_OF_BOUNDS_RULE = options(*OUT_OF_BOUNDS)
#: Anything: the argument is checked in the body against other arguments (say why next to its use).
ANY = Rule("checked by the function against its other arguments")
#: A real number (NaN and inf included), returned as a float.
REAL = Rule("a real number", check=check_real)
#: An iterable (not a string), handed on as given: its items are checked by the function.
ITERABLE = Rule("an iterable", check=_iterable)
#: The data: a 1-D array-like of real numbers, one per record (a dask array too), handed on
#: as given; NaN, emptiness and the bounds are judged by the function, which reads the dtype.
SAMPLE = Rule("a 1-D array of real numbers", check=_sample)
#: Names of candidates: a sequence (not a string), returned as a tuple; None for none.
NAMES = Rule("a sequence of names, one per candidate", check=check_labels, none=True)
#: An accountant charged before any randomness is drawn (None: nothing is charged).
ACCOUNTANT = Rule("a dpselect.Accountant", check=_accountant, none=True)
#: The output grid: None (the function's default grid) or a power of two.
GRANULARITY = granularity()
#: The output grid of a real-valued release: None (the default grid), a power of two, or 0
#: (unsnapped floats); checked against the public bounds in the body where there are some.
GRANULARITY_OR_ZERO = granularity(zero=True)
#: Real numbers (points at which a law or a utility is evaluated): a scalar or an array.
REALS = Rule("real numbers (a scalar or an array)", check=_reals)
#: Non-negative integer counts, one per candidate (a 1-D array, returned as int64; never echoed).
COUNTS = Rule("a 1-D array of non-negative integer counts", check=check_counts)
#: A (smooth) sensitivity: a float >= 0, never echoed, or a callable beta -> S_beta(x).
SENSITIVITY = Rule("a float >= 0 or a callable of beta", check=_sensitivity)
#: A law as log-probabilities (a mechanism's ``log_probabilities``), returned as float64.
LOG_LAW = Rule("log-probabilities (real numbers, -inf allowed)", check=_log_law)
