"""Exact samplers and the output grid against their float counterparts.

Run by hand:  python benchmarks/bench_exact.py
Prints the median wall time of
  * 10,000 draws of EM and PF on 100 integer scores: sampler="float" vs "exact"
    (and "exact" with rng="secure");
  * 100,000 discrete Laplace draws (scale 5/2) vs numpy's float Laplace (the floor);
  * 10,000 smooth-sensitivity Laplace releases: grid (exact discrete) vs granularity=0 (float);
  * 10,000 smooth-sensitivity Student t (df = 3) and Cauchy (polynomial gamma = 2) releases on the
    default grid 2^-20 and on 0.5: the exact sampler (the default) vs the float draw snapped to the
    grid (the former path), CPU time (best of 3), also with rng="secure";
  * the Duff median and mean on the default grid (N(0,1) data, bounds +-5, eps = 1; 2^21 + 1 grid
    points): one draw at n = 10^4 and 100 draws at n = 10^3, CPU time (best of 3), with the exact
    dyadic-proposal sampler (the default), the plain rejection sampler it replaced ("old": uniform
    proposal over the grid points) and the float path (granularity=0, not floating-point safe).
  * ``--scales``: the timing channel of the smooth-sensitivity releases on the default grid: wall time per
    release at S(x) = 1, 1e60, 1e100, 1e306 (neighbouring inputs: the scale is private), median and max over
    up to 50 seeds (stopping after 20 s per cell), for Student t_3, Cauchy and Laplace noise.  Run it on an
    older checkout (PYTHONPATH=<old>/src) for the "before" column of the docs' table.
No target: the exact paths trade speed for a proven guarantee (docs: "Floating point and side channels").
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np

import dpselect
from _timing import median_time
from dpselect.apps.quantiles import duff_mean, duff_median
from dpselect.apps.quantiles._duff import mean as DM
from dpselect.apps.quantiles._duff import median_masses as DML
from dpselect.apps.quantiles._exponential import piecewise_em
from dpselect.apps.quantiles._order_stats import sorted_padded
from dpselect.noise import discrete_laplace
from dpselect.noise.exact import exponential_weights_uniform_batch
from dpselect.noise.grid import grid_index, grid_values


def cpu_best(fn: Callable[[int], object], repeat: int = 3) -> float:
    """Best CPU time (time.process_time) of ``fn(seed)`` over seeds 0, 1, ..., repeat - 1."""
    best = float("inf")
    for seed in range(repeat):
        t0 = time.process_time()
        fn(seed)
        best = min(best, time.process_time() - t0)
    return best


def expected_rounds(x: np.ndarray, name: str) -> tuple[float, float]:
    """Expected rejection rounds per draw on the default grid of [-5, 5], eps = 1: (old N / Z, new)."""
    a, b, eps = -5.0, 5.0, 1.0
    ext = sorted_padded(x, a, b)
    if name == "median":
        lefts, utilities = ext[:-1], -DML._median_costs(x.size, 0, x.size)
    else:
        lefts, _, utilities = DM._mean_pieces(ext, a, b, DM._check_levels(None, eps))
    _, counts = piecewise_em._grid_groups(lefts, a, b, piecewise_em.check_output_grid(None, a, b))
    keep = counts > 0
    c, gam = counts[keep].astype(np.float64), 0.5 * eps * (utilities[keep].max() - utilities[keep])
    z = float((c * np.exp(-gam)).sum())
    j = np.minimum(np.floor(gam / np.log(2.0)), float(int(c.sum()).bit_length() + 2))
    return float(c.sum()) / z, float((c * 2.0**-j).sum()) / z


@contextmanager
def old_sampler() -> Any:
    """The Duff grid releases with the plain rejection sampler (uniform proposal), as before."""
    new = piecewise_em.exponential_weights_batch
    piecewise_em.exponential_weights_batch = exponential_weights_uniform_batch
    try:
        yield
    finally:
        piecewise_em.exponential_weights_batch = new


def duff_rows() -> list[tuple[str, float, float]]:
    """(label, CPU seconds, float-path seconds) for the Duff median and mean on the default grid."""
    rows = []
    data = np.random.default_rng(1).standard_normal(10_000)
    for name, f in (("median", duff_median), ("mean", duff_mean)):
        for n, size in ((10_000, None), (1_000, 100)):
            x = data[:n]

            def run(rng: Any, granularity: Any = None, x: Any = x, f: Any = f, size: Any = size) -> object:
                return f(x, 1.0, bounds=(-5.0, 5.0), size=size, rng=rng, granularity=granularity)

            t_float = cpu_best(lambda seed, run=run: run(seed, granularity=0))
            t_new = cpu_best(run)
            t_sec = cpu_best(lambda seed, run=run: run("secure"))
            with old_sampler():
                t_old = cpu_best(run)
            old, new = expected_rounds(x, name)
            what = f"Duff {name}, n={n}, " + ("1 draw" if size is None else f"{size} draws")
            rows += [
                (f"{what}: float (granularity=0)", t_float, t_float),
                (f"{what}: exact, old ({old:,.0f} rounds/draw)", t_old, t_float),
                (f"{what}: exact, new ({new:.2f} rounds/draw)", t_new, t_float),
                (f"{what}: exact, new, rng='secure'", t_sec, t_float),
            ]
    return rows


def atan_rows() -> list[tuple[str, float, float]]:
    """(label, CPU seconds, float-snap seconds): 10^4 exact t3 / Cauchy grid releases vs float + snap."""
    rows = []
    for label, kw in (("Student t df=3", {}), ("Cauchy (polynomial gamma=2)", {"noise": "polynomial"})):
        for lam in (2.0**-20, 0.5):
            rel = dpselect.SmoothSensitivityRelease(1.0, granularity=lam, **kw)
            flt = dpselect.SmoothSensitivityRelease(1.0, granularity=0, **kw)

            def snap(seed: int, flt: Any = flt, lam: float = lam) -> object:
                y = flt.release(0.3, 0.5, size=10_000, rng=seed)
                return grid_values(grid_index(y, lam), lam)

            t_f = cpu_best(snap)
            t_e = cpu_best(lambda seed, rel=rel: rel.release(0.3, 0.5, size=10_000, rng=seed))
            t_s = cpu_best(lambda seed, rel=rel: rel.release(0.3, 0.5, size=10_000, rng="secure"))
            rows += [
                (f"{label}, lambda={lam:g}: float + snap, 10^4", t_f, t_f),
                (f"{label}, lambda={lam:g}: exact", t_e, t_f),
                (f"{label}, lambda={lam:g}: exact, rng='secure'", t_s, t_f),
            ]
    return rows


def scale_rows(budget: float = 20.0) -> Iterator[tuple[str, str]]:
    """(label, "median ms / max ms (draws)") per noise and smooth sensitivity S: one release per seed."""
    for label, rel in (
        ("Student t3", dpselect.SmoothSensitivityRelease(1.0)),
        ("Cauchy", dpselect.SmoothSensitivityRelease(1.0, noise="polynomial")),
        ("Laplace", dpselect.SmoothSensitivityRelease(1.0, 1e-6, noise="laplace")),
    ):
        for s in (1.0, 1e60, 1e100, 1e306):
            times: list[float] = []
            cell = ""
            for seed in range(50):
                t0 = time.perf_counter()
                try:
                    rel.release(0.3, s, rng=seed)
                except (OverflowError, ValueError) as exc:
                    cell = f"raises {type(exc).__name__}"
                    break
                times.append(time.perf_counter() - t0)
                if sum(times) > budget:
                    break
            ms = 1e3 * np.asarray(times)
            yield f"{label}, S = {s:g}", cell or f"{np.median(ms):.3f} / {ms.max():.3f} ({ms.size})"


def main() -> None:
    if "--scales" in sys.argv:
        print(f"{'one release on the default grid':<36}{'ms: median / max (draws)':>30}")
        for label, cell in scale_rows():
            print(f"{label:<36}{cell:>30}", flush=True)
        return
    rng = np.random.default_rng(0)
    problem = dpselect.SelectionProblem(rng.integers(0, 50, size=100).astype(float))
    rows = []
    for name, cls in (("EM", dpselect.ExponentialMechanism), ("PF", dpselect.PermuteAndFlip)):
        t_float = median_time(lambda c=cls: c(1.0).select(problem, size=10_000, rng=rng), repeat=3)
        t_exact = median_time(lambda c=cls: c(1.0, sampler="exact").select(problem, size=10_000, rng=rng), repeat=3)
        t_sec = median_time(lambda c=cls: c(1.0, sampler="exact").select(problem, size=10_000, rng="secure"), repeat=3)
        rows += [
            (f"{name} float, 10^4 draws, m=100", t_float, t_float),
            (f"{name} exact", t_exact, t_float),
            (f"{name} exact, rng='secure'", t_sec, t_float),
        ]
    t_np = median_time(lambda: rng.laplace(size=100_000), repeat=3)
    t_dl = median_time(lambda: discrete_laplace(Fraction(5, 2), size=100_000, rng=rng), repeat=3)
    rows += [("numpy laplace, 10^5 draws (floor)", t_np, t_np), ("exact discrete Laplace, 10^5 draws", t_dl, t_np)]
    old = dpselect.SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", granularity=0)
    new = dpselect.SmoothSensitivityRelease(1.0, 1e-6, noise="laplace")
    t_old = median_time(lambda: old.release(0.3, 0.5, size=10_000, rng=rng), repeat=3)
    t_new = median_time(lambda: new.release(0.3, 0.5, size=10_000, rng=rng), repeat=3)
    rows += [("smooth Laplace release float, 10^4", t_old, t_old), ("smooth Laplace release on the grid", t_new, t_old)]
    print(f"{'wall time, median of 3':<44}{'seconds':>10}{'ratio':>8}")
    for label, t, ref in rows:
        print(f"{label:<44}{t:>10.4f}{t / ref:>8.1f}")
    print(f"\n{'CPU time, best of 3 (seeds 0, 1, 2)':<66}{'seconds':>10}{'vs float':>10}")
    for label, t, ref in atan_rows() + duff_rows():
        print(f"{label:<66}{t:>10.4f}{t / max(ref, 1e-9):>10.1f}")


if __name__ == "__main__":
    main()
