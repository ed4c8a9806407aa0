"""The mechanism behind :func:`~.quantile.private_quantile` and :func:`~.quantile.private_median`.

Its guarantee (:func:`quantile_privacy`), the output grid (:func:`output_grid`), the pieces and their
log-masses (:func:`_law`, also read by :mod:`.law`), the draws on a validated sample
(:func:`sample_quantile`, shared with :mod:`.._multi.quantiles`) and the release body of both faces
(:func:`_release`: bounds, validation, charge, draw).  The law and the samplers are described in
:mod:`.quantile`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ...._validation import check_random_state
from ....accounting import Accountant, charge
from ....privacy import Privacy
from ....typing import Relation, SeedLike
from .._unbounded.bounds import FIRST_STAGE, release_bounds_draws
from .piecewise_em import _sample_categorical, check_output_grid, default_quantile_granularity, sample_grid_exact
from .quantile_pieces import Pieces, Sample, check_sample, distance_exact, draw_in_pieces, log_masses, pieces

__all__ = ["output_grid", "padded_pieces", "quantile_privacy", "sample_quantile"]


def quantile_privacy(epsilon: float, relation: str) -> Privacy:
    """epsilon-DP under ``relation`` (exponential mechanism, utility sensitivity 1)."""
    return Privacy(epsilon, 0.0, relation, "exponential mechanism on a rank distance, sensitivity 1")


def output_grid(granularity: Any, s: Sample) -> float:
    """Lambda of the output grid: 0.0 for integer outputs (granularity None or 1) or for granularity=0.

    Real outputs: :func:`.piecewise_em.check_output_grid` (None:
    :func:`default_quantile_granularity`, from the public bounds only).
    """
    if not s.integer:
        return check_output_grid(
            default_quantile_granularity(s.a, s.b) if granularity is None else granularity, s.a, s.b
        )
    if granularity is None or (
        isinstance(granularity, (int, float, np.integer, np.floating))
        and not isinstance(granularity, bool)
        and granularity == 1
    ):
        return 0.0
    raise ValueError(
        f"granularity applies to real outputs; integer outputs are on the grid 1 already, "
        f"got granularity={granularity!r} with integer outputs"
    )


def padded_pieces(s: Sample, lam: float = 0.0) -> Pieces:
    """The pieces of :func:`.quantile_pieces.pieces` (``atoms=True``), padded to 2 n + 1 with empty ones.

    Every record its own piece: whatever the ties, the arrays the scores and the
    samplers work on have 2 n + 1 entries (n the number of records), so the run
    time follows n and the public parameters, not the data (publishing.md).  The
    padding pieces hold no point (``count() == 0``, log-size -inf, L = C = n): the
    law is unchanged.  The continuous law (``granularity=0``, for reproductions, not
    floating-point safe) is not padded: its draws stay those of ``duff_median``.
    """
    pc = pieces(s, lam, atoms=True)
    extra = 2 * s.n + 1 - pc.lo.size
    if extra <= 0 or (lam == 0 and not s.integer):  # granularity=0: reproductions, the draws of duff_median
        return pc
    step = 1.0 if s.integer else lam
    top = np.full(extra, s.b)

    def pad(arr: np.ndarray, fill: Any) -> np.ndarray:
        return np.concatenate((arr, np.full(extra, fill, dtype=arr.dtype)))

    hi = np.concatenate((pc.hi, top - step if step > 0 else np.nextafter(top, -np.inf)))  # hi < lo: empty
    return Pieces(pad(pc.lo, s.b), hi, pad(pc.L, s.n), pad(pc.C, s.n), pad(pc.logsize, -np.inf), pc.integer, pc.lam)


#: The balance term is added to the median's score at epsilon <= this (a public rule; mathematics §12.1).
BALANCE_MAX_EPSILON = 0.1


def uses_balance(q: float, epsilon: float) -> bool:
    """Whether the score is max(psi, O): the median (q = 1/2) at epsilon <= 0.1, from public q and epsilon only.

    O = |(1 - q) #{x < t} - q #{x > t}| / w (OpenDP's balance, a candidate's own ties
    excluded) has sensitivity 1, so max(psi, O) does (mathematics §12.1).  On a tied
    median at small epsilon it doubles the neighbouring atoms' score (adult age, n = 10^3,
    epsilon = 0.1: exact error 0.38 -> 0.23); elsewhere it costs more than it gives.
    """
    return q == 0.5 and epsilon <= BALANCE_MAX_EPSILON


def balance_exact(L: np.ndarray, C: np.ndarray, n: int) -> Any:
    """Z O at q = 1/2 as exact integers: |L - G|, G = n - C.

    O = |L - G| / (2 w) and the scores' denominator Z = 2 w (1 under add/remove, 2 under replace).
    """
    return np.abs(L - (n - C))


def _law(s: Sample, q: float, epsilon: float, relation: str, lam: float = 0.0) -> tuple[Any, np.ndarray]:
    pc = padded_pieces(s, lam)
    logw = log_masses(pc, s.n, q, epsilon, relation)
    if uses_balance(q, epsilon):  # psi -> max(psi, O): the log-mass only falls
        Z = 1.0 if relation == "add_remove" else 2.0
        logw = np.minimum(logw, pc.logsize - 0.5 * epsilon * balance_exact(pc.L, pc.C, s.n) / Z)
    return pc, logw


def sample_quantile(
    s: Sample,
    q: float,
    epsilon: float,
    relation: str,
    size: int | None,
    gen: np.random.Generator,
    method: str = "auto",
    lam: float = 0.0,
    sampler: str = "float",
) -> Any:
    """Draws of the mechanism on a validated sample (no validation, no accounting); ``lam``: grid.

    ``sampler="exact"`` on the grid (``lam > 0``): the piece and the grid point by
    :func:`.piecewise_em.sample_grid_exact` on the exact rational scores; otherwise
    the piece by the float sampler (``method``) and a uniform point of it.
    """
    count = 1 if size is None else size
    if lam > 0 and sampler == "exact":
        pc = padded_pieces(s, lam)  # empty pieces (off-grid data values, padding) have weight 0
        num, Z = distance_exact(pc.L, pc.C, s.n, q, relation, "grid")
        if uses_balance(q, epsilon):
            num = np.maximum(num, balance_exact(pc.L.astype(num.dtype), pc.C.astype(num.dtype), s.n))
        first = np.rint(pc.lo / lam).astype(np.int64)
        out = sample_grid_exact(first, pc.count(), -num, Fraction(epsilon) / (2 * Z), lam, count, gen, keep_empty=True)
    else:
        pc, logw = _law(s, q, epsilon, relation, lam)
        out = draw_in_pieces(pc, _sample_categorical(count, gen, method, logw=logw), gen)
    if size is None:
        return int(out[0]) if s.integer else float(out[0])
    return out


def _release(
    x: Any,
    q: float,
    epsilon: float,
    bounds: Any,
    integer: bool | None,
    relation: Relation,
    rng: SeedLike,
    size: int | None,
    method: str,
    accountant: Accountant | None,
    granularity: float | None,
    sampler: str,
    on_out_of_bounds: str,
) -> Any:
    """The body of ``private_quantile`` and ``private_median`` (:mod:`.quantile`; arguments checked by them)."""
    if bounds is None:  # no bounds: released by AboveThreshold, then this mechanism (mathematics §15.2)
        draws, rest, gen = release_bounds_draws(
            x, epsilon, size, integer, relation, rng, accountant, granularity, *FIRST_STAGE
        )  # size draws: new bounds each time, charged as size releases
        outs = []
        for xc, bnd, gi in draws:
            s = check_sample(xc, bnd, integer, on_out_of_bounds=on_out_of_bounds)
            outs.append(sample_quantile(s, q, rest, relation, None, gen, method, output_grid(gi, s), sampler))
        return outs[0] if size is None else np.array(outs)
    s = check_sample(x, bounds, integer, on_out_of_bounds=on_out_of_bounds)
    lam = output_grid(granularity, s)
    gen = check_random_state(rng)
    charge(accountant, quantile_privacy(epsilon, relation), size=size)
    return sample_quantile(s, q, epsilon, relation, size, gen, method, lam, sampler)
