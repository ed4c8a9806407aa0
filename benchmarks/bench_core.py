"""Core benchmark: selection from 10^6 scores and exact output distributions.

Run by hand:  python benchmarks/bench_core.py
Prints, side by side in one run, the median wall time of
  * one ``select`` from 10^6 scores (EM = Gumbel noisy max, PF, RNM-Laplace)
    vs a plain NumPy Gumbel-argmax floor (``np.argmax(u + b*rng.gumbel(size=m))``);
  * ``output_distribution`` of a 4,096-candidate problem with 2 distinct scores and
    with 4,096 distinct scores (through the noisy-max quadrature: RNM-Laplace and
    RNM-Gumbel, and EM's / PF's closed forms).
  * the exact output distribution of 10^6 distinct scores: permute-and-flip
    (power-sum evaluation of its integral) beside the exponential mechanism's
    log-softmax.
Targets (issue #2): select <= 1.5x the floor; distribution <= 50 ms (2 distinct),
<= 1 s (4,096 distinct); issue #11 item 5: PF's exact law at 10^6 distinct
scores <= 1 s.
"""

from __future__ import annotations

import numpy as np

import dpselect
from _timing import median_time
from dpselect.analysis import output_distribution


def main() -> None:
    rng = np.random.default_rng(0)
    m = 10**6
    scores = rng.normal(size=m) * 10
    eps = 1.0
    b = 2.0 / eps
    problem = dpselect.SelectionProblem(scores)

    def floor():
        return int(np.argmax(scores + b * rng.gumbel(size=m)))

    t_floor = median_time(floor)
    print(f"{'select from 10^6 scores':<48}{'seconds':>10}{'ratio':>8}")
    print(f"{'numpy Gumbel-argmax floor':<48}{t_floor:>10.4f}{1.0:>8.2f}")
    for mech in (dpselect.ExponentialMechanism(eps), dpselect.PermuteAndFlip(eps),
                 dpselect.ReportNoisyMax(eps, "laplace")):
        t = median_time(lambda: mech.select(problem, rng=rng))
        name = type(mech).__name__ + (f"({mech.noise})" if hasattr(mech, "noise") else "")
        print(f"{name:<48}{t:>10.4f}{t / t_floor:>8.2f}")

    print()
    print(f"{'output_distribution, 4096 candidates':<48}{'seconds':>10}")
    two = dpselect.SelectionProblem(np.r_[np.ones(1), np.zeros(4095)])
    many = dpselect.SelectionProblem(np.arange(4096.0))
    for label, pr in (("2 distinct", two), ("4096 distinct", many)):
        for mech in (dpselect.ReportNoisyMax(eps, "laplace"), dpselect.ReportNoisyMax(eps, "gumbel"),
                     dpselect.ExponentialMechanism(eps), dpselect.PermuteAndFlip(eps)):
            name = type(mech).__name__ + (f"({mech.noise})" if hasattr(mech, "noise") else "")
            t = median_time(lambda: output_distribution(mech, pr), repeat=3)
            print(f"{name + ', ' + label:<48}{t:>10.4f}")

    print()
    print(f"{'exact distribution, 10^6 distinct scores':<48}{'seconds':>10}")
    for mech in (dpselect.ExponentialMechanism(eps), dpselect.PermuteAndFlip(eps)):
        t = median_time(lambda: mech.probabilities(problem), repeat=3)
        print(f"{type(mech).__name__:<48}{t:>10.4f}")


if __name__ == "__main__":
    main()
