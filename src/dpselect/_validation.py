"""Argument checks shared by every public entry point.

Every check raises a :class:`ValueError` or :class:`TypeError` whose message
names the offending argument, and every public function calls these checks
*before* drawing any randomness (so a bad call never consumes random state).
Modelled on scikit-learn's ``check_*`` helpers.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ._arraylike import to_numpy
from .typing import Relation

__all__ = [
    "OUT_OF_BOUNDS",
    "RELATIONS",
    "SecureGenerator",
    "as_real_array",
    "check_array_1d",
    "check_counts",
    "check_delta",
    "check_epsilon",
    "check_finite_float",
    "check_int",
    "check_labels",
    "check_pair",
    "check_positive",
    "check_probability_in",
    "check_random_state",
    "check_real",
    "check_relation",
    "check_scores",
    "check_size",
    "clip_to_bounds",
]

#: The two neighbour relations of mathematics §1.
RELATIONS = ("add_remove", "replace")


def _real(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_real(value: Any, name: str) -> float:
    """A real number (any float, NaN and inf included; not bool, not complex)."""
    return _real(value, name)


def check_pair(value: Any, name: str) -> tuple[float, float]:
    """A pair (lo, hi) of finite reals with lo <= hi (e.g. bounds, a clipping range)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{name} must be a pair (lo, hi)")
    lo = check_finite_float(value[0], f"{name}[0]")
    hi = check_finite_float(value[1], f"{name}[1]")
    if not lo <= hi:
        raise ValueError(f"{name} must satisfy lo <= hi, got ({lo!r}, {hi!r})")
    return lo, hi


def _got(x: float, quote: bool) -> str:
    """Return ", got x" for a public argument; nothing for a value computed from the data (a message is a release)."""
    return f", got {x!r}" if quote else ""


def check_finite_float(value: Any, name: str, *, quote: bool = True) -> float:
    """A finite real number (``quote=False``: the message does not echo the value -- data-derived values)."""
    x = _real(value, name)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite{_got(x, quote)}")
    return x


def check_positive(
    value: Any, name: str, *, allow_inf: bool = False, allow_zero: bool = False, quote: bool = True
) -> float:
    """A real number > 0 (or >= 0 with ``allow_zero``); NaN always rejected.

    ``quote=False`` for values computed from the data (a smooth sensitivity, a distance to
    instability, a statistic): the message then names the argument but never echoes its value.
    """
    x = _real(value, name)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    if math.isinf(x) and not (allow_inf and x > 0):
        raise ValueError(f"{name} must be finite{_got(x, quote)}")
    if x < 0 or (x == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}{_got(x, quote)}")
    return x


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """Privacy parameter epsilon: finite and > 0 (``+inf`` only if allowed), and a normal float.

    Subnormal values (below 2.2e-308) are rejected: noise scales 1/epsilon
    overflow and calibrations lose all precision there.
    """
    x = check_positive(value, name, allow_inf=allow_inf)
    if x < _SMALLEST_NORMAL:
        raise ValueError(f"{name} must be at least {_SMALLEST_NORMAL:.4g} (the smallest normal float), got {x!r}")
    return x


_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)


def check_delta(value: Any, name: str = "delta") -> float:
    """Privacy parameter delta in [0, 1)."""
    x = _real(value, name)
    if not (0.0 <= x < 1.0):  # also rejects NaN
        raise ValueError(f"{name} must be in [0, 1), got {x!r}")
    return x


def check_delta_positive(value: Any, why: str, name: str = "delta") -> float:
    """Privacy parameter delta in (0, 1): ``why`` says what needs delta > 0."""
    x = check_delta(value, name)
    if x == 0.0:
        raise ValueError(f"{name} must be > 0: {why}, got {name}={value!r}")
    return x


def check_probability_in(value: Any, name: str, lo: float, hi: float, *, closed: bool = False) -> float:
    """A real number in the open interval (lo, hi) (closed with ``closed``)."""
    x = _real(value, name)
    ok = (lo <= x <= hi) if closed else (lo < x < hi)
    if not ok:
        br = "[]" if closed else "()"
        raise ValueError(f"{name} must be in {br[0]}{lo}, {hi}{br[1]}, got {x!r}")
    return x


def check_int(value: Any, name: str, *, minimum: int | None = None) -> int:
    """A Python/NumPy integer (not bool), optionally >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def check_size(size: Any, name: str = "size") -> int | None:
    """Number of batched draws: None (one draw, scalar result) or an int >= 1."""
    if size is None:
        return None
    return check_int(size, name, minimum=1)


def as_real_array(values: Any, name: str) -> np.ndarray:
    """Any-shape float64 array of real numbers; rejects non-numeric and complex dtypes."""
    arr = to_numpy(values, name)  # pandas / polars / pyarrow columns; a missing value is a ValueError
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def check_array_1d(values: Any, name: str, *, allow_empty: bool = False, finite: bool = True) -> np.ndarray:
    """A 1-D float64 array; rejects non-numeric dtypes, 2-D input, NaN/inf."""
    arr = as_real_array(values, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_scores(scores: Any, name: str = "scores") -> np.ndarray:
    """Utility scores u(x, r): non-empty, 1-D, finite, float64."""
    return check_array_1d(scores, name)


def check_labels(labels: Any, name: str = "labels") -> tuple[Any, ...]:
    """Names of candidates as a tuple (a string is one name, not a sequence of them)."""
    if isinstance(labels, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of names, not a string")
    return tuple(labels)


def check_counts(counts: Any, name: str = "counts", *, ndim: int = 1) -> np.ndarray:
    """Non-negative integer counts (int64). Floats with integral values are accepted.

    Counts that do not fit in int64 (>= 2**63) are rejected with a ValueError
    naming the argument (never a silent wrap-around or a cast warning).  The
    messages never quote the (private) values.
    """
    arr = to_numpy(counts, name)  # pandas / polars / pyarrow columns; a missing value is a ValueError
    if arr.dtype == object:
        flat = arr.ravel()
        if flat.size and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in flat):
            raise ValueError(f"{name} must fit in a 64-bit integer (each count < 2**63)")
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real numeric counts, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must be finite (no NaN or inf)")
        if not (arr == np.round(arr)).all():
            raise ValueError(f"{name} must hold integers")
    elif not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be integer counts, got dtype {arr.dtype}")
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative")
    if np.issubdtype(arr.dtype, np.unsignedinteger):
        too_big = (arr > np.uint64(np.iinfo(np.int64).max)).any()
    else:  # signed ints always fit; a float >= 2**63 (exact as a float) cannot be cast
        too_big = np.issubdtype(arr.dtype, np.floating) and (arr >= float(2**63)).any()
    if too_big:
        raise ValueError(f"{name} must fit in a 64-bit integer (each count < 2**63)")
    return arr.astype(np.int64)


#: Samplers of the classic mechanisms and the quantile grid releases: NumPy floats, or exact integer arithmetic.
SAMPLERS = ("float", "exact")


def check_sampler(sampler: object) -> str:
    """``sampler`` must be one of :data:`SAMPLERS`."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    return str(sampler)


def check_relation(relation: Any, name: str = "relation") -> Relation:
    """Neighbour relation: 'add_remove' or 'replace' (mathematics §1)."""
    if relation not in RELATIONS:
        raise ValueError(f"{name} must be one of {RELATIONS}, got {relation!r}")
    return relation


class SecureGenerator(np.random.Generator):
    """The NumPy Generator handed out for ``rng="secure"``.

    Exact samplers (:mod:`dpselect.noise.exact`, ``sampler="exact"``) recognise
    it and take **every** uniform integer they use directly from the operating
    system's CSPRNG (:func:`os.urandom`), so their outputs are a function of
    OS randomness only.  NumPy's own float distributions (the default float
    samplers) need a bit generator: for them this Generator is a PCG64DXSM
    stream seeded with 256 bits from :mod:`secrets`, fresh for every call --
    unpredictable without the seed, but PCG64DXSM is not a cryptographic
    generator.  A copy (``copy.deepcopy``) is an ordinary Generator.
    """


def _secure_generator() -> SecureGenerator:
    import secrets  # only for rng="secure" (keeps `import dpselect` light)

    seed = np.random.SeedSequence(secrets.randbits(256))
    return SecureGenerator(np.random.PCG64DXSM(seed))


def check_random_state(rng: Any, name: str = "rng") -> np.random.Generator:
    """None, an int seed, a SeedSequence, a Generator, a RandomState or ``"secure"`` -> Generator.

    A legacy ``numpy.random.RandomState`` (scikit-learn's ``random_state``) is
    converted deterministically: the Generator is seeded with 128 bits drawn
    from it, so the same RandomState state gives the same Generator (and the
    RandomState advances, as scikit-learn's helpers do when they consume it).
    ``"secure"`` gives a :class:`SecureGenerator` (operating-system randomness;
    not reproducible by construction: it is the whole argument, so it cannot
    come with a seed).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, str):
        if rng == "secure":
            return _secure_generator()
        raise TypeError(f"{name} as a string must be 'secure', got {rng!r}")
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int seed, 'secure' or a numpy Generator, got bool")
    if isinstance(rng, numbers.Integral):
        if int(rng) < 0:
            raise ValueError(f"{name} seed must be a non-negative integer, got {rng}")
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(rng.randint(0, 2**32, size=4, dtype=np.uint64))
    raise TypeError(
        f"{name} must be None, an int seed, 'secure', a numpy Generator or RandomState, got {type(rng).__name__}"
    )


#: What a bounded-data function does with a record outside the public bounds.
OUT_OF_BOUNDS = ("clip", "raise")


def check_out_of_bounds(on_out_of_bounds: Any) -> str:
    """``on_out_of_bounds``: "clip" (the default everywhere) or "raise"."""
    if not isinstance(on_out_of_bounds, str) or on_out_of_bounds not in OUT_OF_BOUNDS:
        raise ValueError(f"on_out_of_bounds must be one of {OUT_OF_BOUNDS}, got {on_out_of_bounds!r}")
    return on_out_of_bounds


def clip_to_bounds(x: np.ndarray, bounds: tuple[float, float], on_out_of_bounds: str, name: str = "x") -> np.ndarray:
    """Records of ``x`` (finite float64) outside the public ``bounds = (lo, hi)``, clamped to them.

    "clip" (the default of every public function): a per-record map, so neighbouring datasets
    stay neighbours and every guarantee is unchanged; nothing observable (no exception, no
    warning) depends on whether a record was out of bounds.  "raise": a ValueError instead,
    for a curator looking for data errors -- **not private** (the exception itself reveals that
    some record lies outside the bounds); its message quotes no value.
    """
    lo, hi = bounds
    if check_out_of_bounds(on_out_of_bounds) == "raise":
        if (x < lo).any() or (x > hi).any():
            raise ValueError(
                f"{name} has values outside the bounds [{lo:g}, {hi:g}] (on_out_of_bounds='raise' is not private)"
            )
        return x
    return np.clip(x, lo, hi)
