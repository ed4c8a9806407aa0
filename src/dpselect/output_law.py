"""The exact output law of a release: one type for every ``probabilities`` and ``*_law``.

A mechanism's output is either one of finitely many values (a candidate index, a label, a
grid point) or a real number whose density is constant on each of finitely many intervals
(the exponential mechanism over intervals).  :class:`OutputLaw` holds both:

* **discrete**: ``support`` (the values, one per probability) and ``probabilities``;
* **pieces**: ``lo`` and ``hi`` (the interval ends, ``lo[i] <= hi[i]``) and the probability
  of each interval, the density uniform inside it (a piece with ``lo == hi`` is an atom).

It *is* the vector of probabilities (a read-only :class:`numpy.ndarray` subclass), so
``mech.probabilities(problem)`` keeps working wherever an array did (``p[r]``,
``p.sum()``, ``np.allclose(p, q)``: results of arithmetic are plain arrays), and it adds the
helpers that consume a law: :meth:`~OutputLaw.sample`, :meth:`~OutputLaw.expected_error`,
:meth:`~OutputLaw.expected_value`, :meth:`~OutputLaw.cdf`.

Examples
--------
>>> import numpy as np
>>> from dpselect.output_law import OutputLaw
>>> law = OutputLaw([0.25, 0.75], support=["a", "b"])
>>> float(law[1]), law.support.tolist()
(0.75, ['a', 'b'])
>>> law.sample(4, rng=0).tolist()
['b', 'b', 'a', 'a']
>>> pieces = OutputLaw([0.5, 0.5], lo=[0.0, 1.0], hi=[1.0, 3.0])
>>> float(pieces.expected_value()), float(pieces.cdf(2.0))
(1.25, 0.75)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from ._validation import check_random_state, check_size
from .typing import SeedLike

__all__ = ["OutputLaw"]

Loss = Literal["absolute", "squared", "zero_one"] | Callable[[np.ndarray, Any], np.ndarray]


class OutputLaw(np.ndarray):
    """Exact law of one release: probabilities over a finite support, or over uniform pieces.

    Built as ``OutputLaw(probabilities, *, support=None, lo=None, hi=None)`` (parameters:
    :meth:`__new__`).

    Notes
    -----
    The array itself is read-only; arithmetic and slicing give plain arrays, so a law
    never silently outlives the operation that consumed it.  :meth:`sample` is for
    simulation and analysis (floating-point inversion): a private release comes from the
    mechanism's own sampler.
    """

    support: np.ndarray | None
    lo: np.ndarray | None
    hi: np.ndarray | None
    _logp: np.ndarray | None

    def __new__(
        cls,
        probabilities: ArrayLike,
        *,
        support: ArrayLike | None = None,
        lo: ArrayLike | None = None,
        hi: ArrayLike | None = None,
    ) -> OutputLaw:
        """Build a law from its probabilities and its support or pieces.

        Parameters
        ----------
        probabilities : array_like of float
            1-D, non-negative, finite; they sum to 1 up to rounding (not renormalised).
        support : array_like, optional
            The value released with each probability (default: the indices ``0..m-1``).
            Mutually exclusive with ``lo`` / ``hi``.
        lo : array_like of float, optional
            The lower ends of the pieces of a piecewise-uniform law over the reals.
        hi : array_like of float, optional
            The upper ends of the pieces (``lo <= hi``, given together with ``lo``).

        Returns
        -------
        OutputLaw
            The read-only law.
        """
        p = np.array(probabilities, dtype=np.float64)
        if p.ndim != 1 or p.size == 0:
            raise ValueError(f"probabilities must be a non-empty 1-D array, got shape {p.shape}")
        if not np.isfinite(p).all() or (p < 0).any():
            raise ValueError("probabilities must be finite and non-negative")
        obj = p.view(cls)
        obj.support = obj.lo = obj.hi = obj._logp = None
        if (lo is None) != (hi is None):
            raise ValueError("lo and hi must be given together")
        if lo is not None:
            if support is not None:
                raise ValueError("give either support or lo/hi, not both")
            a, b = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64)
            if a.shape != p.shape or b.shape != p.shape:
                raise ValueError("lo and hi must have the shape of probabilities")
            if not (a <= b).all():
                raise ValueError("lo must be <= hi piece by piece")
            a.flags.writeable = b.flags.writeable = False
            obj.lo, obj.hi = a, b
        else:
            s = np.arange(p.size) if support is None else np.array(support)
            if s.shape[:1] != p.shape:
                raise ValueError("support must have one value per probability")
            s.flags.writeable = False
            obj.support = s
        obj.flags.writeable = False
        return obj

    @classmethod
    def from_log_probabilities(cls, log_probabilities: ArrayLike, *, support: ArrayLike | None = None) -> OutputLaw:
        """A discrete law given by its exact log-probabilities (kept: no underflow in the tails).

        Parameters
        ----------
        log_probabilities : array_like of float
            1-D, ``log P[release = support[i]]`` (``-inf`` for an impossible value).
        support : array_like, optional
            The value released with each probability (default: the indices).

        Returns
        -------
        OutputLaw
            The law; :attr:`log_probabilities` gives the logs as given.
        """
        logp = np.array(log_probabilities, dtype=np.float64)
        law = cls(np.exp(logp), support=support)
        logp.flags.writeable = False
        law._logp = logp
        return law

    def __array_finalize__(self, obj: Any) -> None:
        """Views and copies of a law carry its support and pieces (slices are plain arrays)."""
        self.support = getattr(obj, "support", None)
        self.lo = getattr(obj, "lo", None)
        self.hi = getattr(obj, "hi", None)
        self._logp = getattr(obj, "_logp", None)

    def __array_wrap__(self, arr: np.ndarray, context: Any = None, return_scalar: bool = False) -> Any:
        """Results of ufuncs are plain arrays (or scalars)."""
        out = arr.view(np.ndarray)
        return out[()] if return_scalar else out

    def __getitem__(self, key: Any) -> Any:
        """Indexing and slicing give plain floats and arrays."""
        return self.view(np.ndarray)[key]

    def __reduce__(self) -> Any:
        """Pickle as the constructor call (the read-only flag and the attributes survive)."""
        kw = {"lo": self.lo, "hi": self.hi} if self.lo is not None else {"support": self.support}
        return (_rebuild, (np.asarray(self.view(np.ndarray)), kw, self._logp))

    # ------------------------------------------------------------------ views

    @property
    def probabilities(self) -> np.ndarray:
        """The probabilities as a plain read-only array."""
        return self.view(np.ndarray)

    @property
    def log_probabilities(self) -> np.ndarray:
        """The log-probabilities: exact where the law was built from them, else ``log`` of the probabilities."""
        if self._logp is not None:
            return self._logp
        with np.errstate(divide="ignore"):
            return np.log(self.view(np.ndarray))

    @property
    def is_pieces(self) -> bool:
        """Whether this is a piecewise-uniform law over the reals (else a discrete one)."""
        return self.lo is not None

    # ------------------------------------------------------------------ consumers

    def sample(self, size: int | None = None, *, rng: SeedLike = None) -> np.ndarray:
        """Draw from the law (simulation; not a private release -- see the Notes of the class).

        Parameters
        ----------
        size : int, optional
            Number of draws (None: one draw, returned as a scalar).
        rng : None, int, Generator or "secure", optional
            The randomness (keyword-only).

        Returns
        -------
        ndarray
            Values of the support, or reals inside the pieces (a 0-d array for one draw).
        """
        n = check_size(size)
        gen = check_random_state(rng)
        p = np.asarray(self.probabilities) / float(np.sum(self.probabilities))
        idx = gen.choice(p.size, size=1 if n is None else n, p=p)
        if self.is_pieces:
            assert self.lo is not None and self.hi is not None
            out = self.lo[idx] + gen.random(idx.size) * (self.hi[idx] - self.lo[idx])
        else:
            assert self.support is not None
            out = self.support[idx]
        return out[0, ...] if n is None else out

    def expected_value(self) -> float:
        """Mean of the released value (numeric supports and pieces).

        Returns
        -------
        float
            ``sum_i p_i v_i`` (the piece midpoints for pieces).
        """
        p = self.probabilities
        if self.is_pieces:
            assert self.lo is not None and self.hi is not None
            return float(np.sum(p * (self.lo + self.hi) / 2))
        assert self.support is not None
        return float(np.sum(p * self.support.astype(np.float64)))

    def cdf(self, x: ArrayLike) -> float | np.ndarray:
        """Probability that the released value is <= ``x`` (numeric supports and pieces), vectorised.

        Parameters
        ----------
        x : float or array_like of float
            The thresholds (any shape).

        Returns
        -------
        float or numpy.ndarray
            ``Pr[release <= x]``: a float for a scalar ``x``, else an array shaped like ``x``.
        """
        t = np.asarray(x, dtype=np.float64)
        p = self.probabilities
        if self.is_pieces:
            assert self.lo is not None and self.hi is not None
            out = _pieces_cdf(self.lo, self.hi, p, t)
        else:
            assert self.support is not None
            values = self.support.astype(np.float64)
            order = np.argsort(values, kind="stable")
            cum = np.concatenate(([0.0], np.cumsum(p[order])))
            out = cum[np.searchsorted(values[order], t, side="right")]
        out = np.clip(out, 0.0, 1.0)
        return float(out) if out.ndim == 0 else out

    def expected_error(self, truth: float | str, loss: Loss = "absolute") -> float:
        """Expected loss of the release against ``truth``.

        Parameters
        ----------
        truth : float or str
            The non-private answer (a label for "zero_one" on a support of labels).
        loss : {"absolute", "squared", "zero_one"} or callable, default="absolute"
            ``|v - truth|``, ``(v - truth)**2``, ``v != truth``, or ``loss(values, truth)``
            on the support (discrete laws only for a callable and for "zero_one").

        Returns
        -------
        float
            The exact expectation (closed forms on pieces).
        """
        p = self.probabilities
        if self.is_pieces:
            assert self.lo is not None and self.hi is not None
            c = float(truth)
            a, b = self.lo - c, self.hi - c
            if loss == "squared":
                per = (a * a + a * b + b * b) / 3
            elif loss == "absolute":  # E|U - c| for U ~ Uniform[lo, hi], in forms that cannot overflow
                w = self.hi - self.lo
                s = np.clip((c - self.lo) / np.where(w > 0, w, 1.0), 0.0, 1.0)
                inside = (self.lo < c) & (c < self.hi)
                mid = 0.5 * self.lo + 0.5 * self.hi
                per = np.where(inside, 0.5 * w * (s * s + (1.0 - s) * (1.0 - s)), np.abs(mid - c))
            else:
                raise ValueError("loss must be 'absolute' or 'squared' for a law over pieces")
            return float(np.sum(p * per))
        assert self.support is not None
        values = self.support
        if callable(loss):
            per = np.asarray(loss(values, truth), dtype=np.float64)
        elif loss == "zero_one":
            per = (values != truth).astype(np.float64)
        elif loss in ("absolute", "squared"):
            d = values.astype(np.float64) - float(truth)
            per = np.abs(d) if loss == "absolute" else d * d
        else:
            raise ValueError(f"loss must be 'absolute', 'squared', 'zero_one' or a callable, got {loss!r}")
        return float(np.sum(p * per))


def _pieces_cdf(lo: np.ndarray, hi: np.ndarray, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Sum of p_i clip((t - lo_i) / (hi_i - lo_i), 0, 1) (an atom where lo_i = hi_i counts from t >= lo_i)."""
    order = np.argsort(lo, kind="stable")
    lo, hi, p = lo[order], hi[order], p[order]
    if (hi[:-1] <= lo[1:]).all():  # disjoint pieces (the usual case): one piece holds t
        idx = np.searchsorted(lo, t, side="right") - 1
        cum = np.concatenate(([0.0], np.cumsum(p)))
        j = np.clip(idx, 0, lo.size - 1)
        w = hi[j] - lo[j]
        frac = np.where(w > 0, np.clip((t - lo[j]) / np.where(w > 0, w, 1.0), 0.0, 1.0), 1.0)
        return np.where(idx < 0, 0.0, cum[j] + p[j] * frac)
    w = (hi - lo)[:, None]
    d = t.reshape(1, -1) - lo[:, None]
    frac = np.where(w > 0, np.clip(d / np.where(w > 0, w, 1.0), 0.0, 1.0), (d >= 0) * 1.0)
    return (p @ frac).reshape(t.shape)


def _rebuild(p: np.ndarray, kw: dict[str, Any], logp: np.ndarray | None = None) -> OutputLaw:
    if logp is not None:
        return OutputLaw.from_log_probabilities(logp, support=kw["support"])
    return OutputLaw(p, **kw)
