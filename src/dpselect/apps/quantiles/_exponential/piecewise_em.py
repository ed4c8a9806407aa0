"""Exponential mechanism over a partition of an interval into constant-utility pieces.

The Duff median and mean (:mod:`dpselect.apps.quantiles`) have piecewise-constant
utilities on a public interval ``[a, b]``; the exponential mechanism with
``Delta = 1`` then has density ``∝ exp(epsilon u / 2)`` w.r.t. Lebesgue
measure, so it chooses piece ``k`` with probability

    P(k) ∝ (r_k - l_k) exp(epsilon u_k / 2)

and then a uniform point in it (mathematics §6.1 sampler; Duff Prop. 5 / Alg. 1).
This is a *continuous* output range, which the finite-candidate engine
(:mod:`dpselect._engine`) does not cover; the finite Duff mode uses the
library's :class:`~dpselect.mechanisms.classic.ExponentialMechanism`.

Sampling: the piece is ``argmin_k log log(1/U_k) - l_k`` (the Gumbel race,
``l_k`` the log-masses) when (number of draws) x (pieces) <= 2**20, otherwise
the same categorical law by inverse CDF on ``exp(l - max l)`` (log-domain
normalised, hence equally stable, and O(pieces + size log pieces) for
batches).  Long weight vectors given without logs (the Duff median at very
small epsilon, see ``_scale_geometric``) are sampled for a few draws by a
two-stage inverse CDF (block sums, then one block).  All paths give the same
law; the tests check each against the log-domain probabilities.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ...._exact_numbers import check_granularity
from ....noise import IntegerSource, default_granularity, exponential_weights_batch, grid_values, rational_rates
from ....privacy import Privacy

__all__: list[str] = []

#: Gumbel race is used when (draws x pieces) is at most this; inverse CDF above.
_RACE_BUDGET = 1 << 20
#: Pieces whose log-mass is this far below the maximum have exp(.) == 0 exactly.
_UNDERFLOW_MARGIN = 750.0


def _log_masses(lefts: np.ndarray, rights: np.ndarray, utilities: np.ndarray, epsilon: float) -> np.ndarray:
    """log(lambda) + epsilon u / 2 per piece (-inf for empty pieces)."""
    lengths = np.asarray(rights, dtype=np.float64) - np.asarray(lefts, dtype=np.float64)
    with np.errstate(divide="ignore"):
        logm = np.log(lengths)
    logm += (0.5 * epsilon) * np.asarray(utilities, dtype=np.float64)
    return logm


def _normalise_log(logw: np.ndarray) -> np.ndarray:
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return w


def piecewise_probabilities(lefts: Any, rights: Any, utilities: Any, epsilon: float) -> np.ndarray:
    """Exact EM probabilities of pieces ``[l, r]`` of a piecewise-constant utility.

    P(piece k) ∝ (r_k - l_k) exp(epsilon u_k / 2) (Delta = 1), normalised in
    the log domain (no overflow/underflow of the normaliser).
    """
    return _normalise_log(_log_masses(lefts, rights, utilities, epsilon))


def _sample_categorical(
    count: int,
    rng: np.random.Generator,
    method: str = "auto",
    *,
    logw: np.ndarray | None = None,
    w: np.ndarray | None = None,
    overwrite: bool = False,
) -> np.ndarray:
    """``count`` iid draws from P(k) ∝ exp(logw_k) (or ∝ w_k, w >= 0 not all 0).

    method "race": Gumbel race K = argmin_k log log(1/U_k) - logw_k (the mathematics page
    §6.1, Duff Prop. 5); "inverse": inverse CDF of exp(logw - max logw) (or of
    w); "auto": the race when count * pieces <= 2**20 and log-weights are
    given, the inverse CDF otherwise.  Both give the same law.
    """
    given = logw if logw is not None else w
    if given is None:
        raise ValueError("one of logw and w must be given")
    n_pieces = given.size
    if method == "auto":
        method = "race" if (logw is not None and count * n_pieces <= _RACE_BUDGET) else "inverse"
    if method == "race":
        if logw is None:
            with np.errstate(divide="ignore"):
                logw = np.log(given)
        out = np.empty(count, dtype=np.intp)
        chunk = max(1, _RACE_BUDGET // max(n_pieces, 1))
        for s in range(0, count, chunk):
            c = min(chunk, count - s)
            u = rng.random((c, n_pieces))
            with np.errstate(divide="ignore"):
                z = np.log(-np.log(u))
            z -= logw
            out[s : s + c] = np.argmin(z, axis=1)
        return out
    if method != "inverse":
        raise ValueError(f"method must be 'auto', 'race' or 'inverse', got {method!r}")
    if w is not None and count <= 8 and w.size > (1 << 16):
        return _sample_two_stage(w, count, rng)
    if w is None:
        cdf = np.exp(given - given.max())
    else:
        cdf = np.array(w, dtype=np.float64, copy=not overwrite)
    np.cumsum(cdf, out=cdf)
    total = cdf[-1]
    u = rng.random(count) * total
    idx = np.searchsorted(cdf, u, side="right")
    last = int(np.searchsorted(cdf, total, side="left"))  # last piece with positive weight
    np.minimum(idx, last, out=idx)
    return idx


def _sample_two_stage(w: np.ndarray, count: int, rng: np.random.Generator, block: int = 4096) -> np.ndarray:
    """Inverse CDF in two stages (block sums, then within one block): a few draws from a long w.

    Same law as the one-stage inverse CDF, without a cumulative sum over all of w.
    """
    starts = np.arange(0, w.size, block)
    sums = np.add.reduceat(w, starts)
    bcdf = np.cumsum(sums)
    last_block = int(np.searchsorted(bcdf, bcdf[-1], side="left"))
    out = np.empty(count, dtype=np.intp)
    for t in range(count):
        kb = min(int(np.searchsorted(bcdf, rng.random() * bcdf[-1], side="right")), last_block)
        seg = w[starts[kb] : starts[kb] + block]
        cdf = np.cumsum(seg)
        k = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
        out[t] = starts[kb] + min(k, int(np.searchsorted(cdf, cdf[-1], side="left")))
    return out


def _sample_pieces(
    lefts: np.ndarray,
    rights: np.ndarray,
    size: int | None,
    rng: np.random.Generator,
    method: str = "auto",
    *,
    logw: np.ndarray | None = None,
    w: np.ndarray | None = None,
    overwrite: bool = False,
) -> Any:
    """Choose a piece (law ∝ exp(logw) or ∝ w), then a uniform point in it.

    ``overwrite``: ``w`` may be used as scratch space (its cumulative sum).
    """
    count = 1 if size is None else size
    k = _sample_categorical(count, rng, method, logw=logw, w=w, overwrite=overwrite)
    lo = lefts[k]
    hi = rights[k]
    out = lo + rng.random(count) * (hi - lo)
    np.minimum(out, hi, out=out)
    if size is None:
        return float(out[0])
    return out


def sample_piecewise_em(
    lefts: Any,
    rights: Any,
    utilities: Any,
    epsilon: float,
    size: int | None,
    rng: np.random.Generator,
    method: str = "auto",
) -> Any:
    """EM over a partition of an interval into pieces with constant utility.

    Chooses a piece with P ∝ length * exp(epsilon u / 2) (Delta = 1; see
    :func:`_sample_categorical`), then a uniform point in it.  Returns a float
    (``size`` None) or an array of ``size`` floats.  Shared by the Duff median
    and mean.
    """
    lefts = np.asarray(lefts, dtype=np.float64)
    rights = np.asarray(rights, dtype=np.float64)
    logw = _log_masses(lefts, rights, utilities, epsilon)
    return _sample_pieces(lefts, rights, size, rng, method, logw=logw)


def _scale_geometric(arr: np.ndarray, log_first: float, rate: float) -> None:
    """In place: arr[r] *= exp(log_first - rate r), r = 0..len(arr)-1 (arr may be a reversed view).

    The factors come from two short exp tables (block heads and in-block
    offsets, block length B with rate * B <= 1, so a head that underflows
    means every factor of the block is < e^{-744}: no spurious zeros), applied
    block-wise without temporaries of the array's size.
    """
    n_terms = arr.size
    if n_terms == 0:
        return
    B = int(min(1024, max(1.0, 1.0 / rate)))
    H = n_terms // B
    tail = np.exp(-rate * np.arange(B, dtype=np.float64))
    if H:
        heads = np.exp(log_first - (rate * B) * np.arange(H, dtype=np.float64))
        block = arr[: H * B].reshape(H, B)
        rows = max(1, (1 << 16) // B)  # cache-sized chunks: one pass over arr
        for r0 in range(0, H, rows):
            block[r0 : r0 + rows] *= np.multiply.outer(heads[r0 : r0 + rows], tail)
    rest = n_terms - H * B
    if rest:
        arr[H * B :] *= np.exp(log_first - (rate * B) * H) * tail[:rest]


def em_privacy(epsilon: float, relation: str = "add_remove") -> Privacy:
    """Guarantee of the piecewise EM on a utility with sensitivity 1 in ``relation``: epsilon-DP.

    McSherry & Talwar 2007, Thm 6, with Lebesgue base measure (mathematics §6.1);
    the Duff utilities are 1-Lipschitz under add/remove (mathematics §7 item 23).
    """
    return Privacy(epsilon, 0.0, relation, "Duff exponential mechanism, sensitivity 1 (mathematics §6.1)")


# ---------------------------------------------------------------------------
# On the output grid (floating-point safe): exact EM over the grid points
# ---------------------------------------------------------------------------


#: Default grid of the quantile releases: 2^-MAGNITUDE_BITS of the bounds' magnitude (2^-40: a relative
#: rounding of 1e-12, far below any statistical error, whatever the width of the bounds).
MAGNITUDE_BITS = 40


def default_quantile_granularity(a: float, b: float) -> float:
    """Lambda = 2^e, e = max(min(floor(log2 M) - 40, floor(log2(b - a)) - 20), floor(log2 M) - 50), M = max(|a|, |b|).

    From the public bounds only: the bounds' magnitude and float precision fix
    the resolution (2^-40 of M, at most 2^-20 of the width so that narrow
    bounds far from 0 keep 2^20 points), so 100x looser bounds move lambda by
    2^7 only, to ~1e-12 M; kept >= 2^-50 M so that indices stay exact
    (|bound| < 2^51 lambda) and >= 2^-1074.

    Examples
    --------
    >>> default_quantile_granularity(0.0, 400.0) == 2.0**-32, default_quantile_granularity(-5.0, 5.0) == 2.0**-38
    (True, True)
    """
    em = math.frexp(max(abs(a), abs(b)))[1] - 1
    ew = math.frexp(b - a)[1] - 1
    return math.ldexp(1.0, max(min(em - MAGNITUDE_BITS, ew - 20), em - 50, -1074))


def check_output_grid(granularity: Any, a: float, b: float) -> float:
    """Lambda for an output in [a, b]: None -> 2^(floor(log2(b - a)) - 20); 0 -> 0.0 (continuous law).

    A power of two with lambda <= b - a (so [a, b] holds a grid point) and
    |a|, |b| < 2^51 lambda (grid indices and values exact in float64).
    """
    if granularity is None:
        lam = default_granularity(b - a)
    elif (
        isinstance(granularity, (int, float, np.integer, np.floating))
        and not isinstance(granularity, bool)
        and granularity == 0
    ):
        return 0.0
    else:
        lam = check_granularity(granularity)
    if lam > b - a:
        raise ValueError(f"granularity must be <= b - a = {b - a!r}, got {granularity!r}")
    if max(abs(a), abs(b)) >= 2.0**51 * lam:
        raise ValueError(f"granularity {lam!r} is too fine for the bounds ({a!r}, {b!r}): |bound| / lambda >= 2^51")
    return lam


def _grid_groups(lefts: np.ndarray, a: float, b: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(first grid index, number of grid points) of each half-open piece [l_j, l_{j+1}) of [a, b].

    ``lefts`` are the sorted left ends of contiguous pieces covering [a, b]
    (lefts[0] = a); the last piece also holds b.  A grid point k lambda gets
    the utility of the piece holding it: the right limit of the utility, which
    is 1-Lipschitz in the data whenever the utility is.
    """
    starts = grid_ceil(np.maximum(np.asarray(lefts, dtype=np.float64), a), lam)
    return starts, grid_counts(starts, b, lam)


def grid_counts(starts: np.ndarray, b: float, lam: float) -> np.ndarray:
    """Number of grid points of each piece from its first grid index (nondecreasing ``starts``)."""
    end = grid_ceil(np.asarray([b]), lam, floor=True) + 1
    return np.diff(np.append(starts, end))


def grid_ceil(v: np.ndarray, lam: float, floor: bool = False) -> np.ndarray:
    """Ceil(v / lambda) (or floor) as int64, exactly.

    v / lambda is exact for a power of two lambda except when it underflows to a subnormal,
    which the check k lambda <> v corrects (|v| < 2^51 lambda).
    """
    v = np.asarray(v, dtype=np.float64)
    if floor:
        k = np.floor(v / lam)
        k -= k * lam > v
    else:
        k = np.ceil(v / lam)
        k += k * lam < v
    return k.astype(np.int64)


def sample_piecewise_grid(
    lefts: Any,
    utilities: Any,
    epsilon: float,
    a: float,
    b: float,
    lam: float,
    size: int | None,
    rng: Any,
    starts: np.ndarray | None = None,
) -> Any:
    """Exact EM over the grid points k lambda of [a, b], utility of the piece holding each point.

    ``starts`` (optional): the pieces' first grid indices ceil(l_j / lambda), when the caller
    computed them exactly (``lefts`` is then unused).

    P[k lambda] ∝ exp(epsilon u(k lambda) / 2) (Delta = 1): a piece with n_j grid
    points is drawn with probability ∝ n_j exp(epsilon u_j / 2) and a uniform
    grid point in it (:func:`dpselect.noise.exact.exponential_weights_batch`:
    rates gamma_j = epsilon (max u - u_j) / 2 converted exactly to fractions,
    rejection from a dyadic proposal with an exact Bernoulli acceptance, no
    float in any decision, at most 2.5 rounds expected whatever the number of
    grid points).  epsilon-DP whenever u has sensitivity 1 (McSherry & Talwar
    2007, with the public grid as the output range).
    """
    if starts is None:
        starts, counts = _grid_groups(np.asarray(lefts, dtype=np.float64), a, b, lam)
    else:
        counts = grid_counts(starts, b, lam)
    out = sample_grid_exact(
        starts,
        counts,
        np.asarray(utilities, dtype=np.float64),
        Fraction(epsilon) / 2,
        lam,
        1 if size is None else size,
        rng,
    )
    return float(out[0]) if size is None else out


def sample_grid_exact(
    starts: np.ndarray,
    counts: np.ndarray,
    utilities: np.ndarray,
    scale: Fraction,
    lam: float,
    count: int,
    rng: Any,
    keep_empty: bool = False,
) -> np.ndarray:
    """``count`` exact draws of (starts_j + o) lambda, P ∝ exp(scale u_j) per point, o uniform below counts_j.

    Piece j (of ``counts_j`` grid points from index ``starts_j``) is drawn with
    probability ∝ counts_j exp(scale u_j) by
    :func:`dpselect.noise.exact.exponential_weights_batch` on the exact
    rational rates scale (max u - u_j) (floats converted exactly, integer or
    Python-int arrays taken as they are); pieces without a grid point drop out
    (``keep_empty``: they stay with weight 0 and are never drawn, so the work
    follows the number of pieces, not which are empty -- the single quantile's
    padded pieces, publishing.md: run time).
    No float enters any decision; ``rng="secure"`` draws every integer from the OS.
    """
    keep = np.arange(counts.size) if keep_empty else np.flatnonzero(counts > 0)
    nums, den = rational_rates(utilities[keep], scale)
    g, o = exponential_weights_batch(IntegerSource(rng), nums, den, np.maximum(counts[keep], 0), count)
    return grid_values(starts[keep][g] + o, lam)
