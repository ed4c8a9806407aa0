"""Exact samplers and the output grid against their float counterparts.

Run by hand:  python benchmarks/bench_exact.py
Prints the median wall time of
  * 10,000 draws of EM and PF on 100 integer scores: sampler="float" vs "exact"
    (and "exact" with rng="secure");
  * 100,000 discrete Laplace draws (scale 5/2) vs numpy's float Laplace (the floor);
  * 10,000 smooth-sensitivity Laplace releases: grid (exact discrete) vs granularity=0 (float).
No target: the exact paths trade speed for a proven guarantee (docs: "Floating point and side channels").
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import dpselect
from _timing import median_time
from dpselect.noise import discrete_laplace


def main() -> None:
    rng = np.random.default_rng(0)
    problem = dpselect.SelectionProblem(rng.integers(0, 50, size=100).astype(float))
    rows = []
    for name, cls in (("EM", dpselect.ExponentialMechanism), ("PF", dpselect.PermuteAndFlip)):
        t_float = median_time(lambda c=cls: c(1.0).select(problem, size=10_000, rng=rng), repeat=3)
        t_exact = median_time(lambda c=cls: c(1.0, sampler="exact").select(problem, size=10_000, rng=rng), repeat=3)
        t_sec = median_time(
            lambda c=cls: c(1.0, sampler="exact").select(problem, size=10_000, rng="secure"), repeat=3
        )
        rows += [(f"{name} float, 10^4 draws, m=100", t_float, t_float),
                 (f"{name} exact", t_exact, t_float), (f"{name} exact, rng='secure'", t_sec, t_float)]
    t_np = median_time(lambda: rng.laplace(size=100_000), repeat=3)
    t_dl = median_time(lambda: discrete_laplace(Fraction(5, 2), size=100_000, rng=rng), repeat=3)
    rows += [("numpy laplace, 10^5 draws (floor)", t_np, t_np), ("exact discrete Laplace, 10^5 draws", t_dl, t_np)]
    old = dpselect.SmoothSensitivityRelease(1.0, 1e-6, noise="laplace", granularity=0)
    new = dpselect.SmoothSensitivityRelease(1.0, 1e-6, noise="laplace")
    t_old = median_time(lambda: old.release(0.3, 0.5, size=10_000, rng=rng), repeat=3)
    t_new = median_time(lambda: new.release(0.3, 0.5, size=10_000, rng=rng), repeat=3)
    rows += [("smooth Laplace release float, 10^4", t_old, t_old), ("smooth Laplace release on the grid", t_new, t_old)]
    print(f"{'':<44}{'seconds':>10}{'ratio':>8}")
    for label, t, ref in rows:
        print(f"{label:<44}{t:>10.4f}{t / ref:>8.1f}")


if __name__ == "__main__":
    main()
