"""Benchmark: instance-based selection (SNM, SPS, local dampening, private sensitivity bound).

Run by hand:  PYTHONPATH=src python benchmarks/bench_smooth.py
Prints the median wall time of
  * ``output_distribution`` of SNM-Laplace, SNM-T (and SNM-LLN, SPS, LD for reference)
    on the HEPTH percentile problem shape: a public grid of 4,096 candidates, indicator
    utility (score 1 at the grid index holding the percentile, 0 elsewhere: 2 distinct
    scores), local sensitivity LS(t) = 1[t >= j] with j = 3 (built by hand);
  * one ``select`` of SPS from 10^6 candidates, side by side with EM on the same problem
    (and a plain NumPy Gumbel-argmax floor);
  * the exact law of PrivateSensitivityBound (quadrature over the released bound, one
    fixed-scale PF/EM law per node) at m = 5, 100 and 1,000 distinct scores.
Targets: distribution <= 50 ms each (SNM-Laplace, SNM-T); SPS select from 10^6 <= 1 s.
"""

from __future__ import annotations

import numpy as np

from _timing import median_time
from dpselect import ExponentialMechanism, SelectionProblem, StepProfile
from dpselect.analysis import output_distribution
from dpselect.mechanisms import LocalDampening, PrivateSensitivityBound, SmoothNoisyMax, SmoothPrivateSelection


def hepth_like_problem(m: int = 4096, index: int = 1234, j: int = 3) -> SelectionProblem:
    scores = np.zeros(m)
    scores[index] = 1.0
    return SelectionProblem(
        scores, global_sensitivity=1.0, local_sensitivity=StepProfile([0, j], [0.0, 1.0]), max_distance=j
    )


def main() -> None:
    eps = 1.0
    pr = hepth_like_problem()
    print(f"{'output_distribution, 4096 candidates, 2 distinct scores':<60}{'ms':>10}{'target':>10}")
    cases = [
        ("SmoothNoisyMax(laplace, delta=1e-6)", SmoothNoisyMax(eps, 1e-6, noise="laplace"), "50"),
        ("SmoothNoisyMax(student_t, d=3)", SmoothNoisyMax(eps, noise="student_t"), "50"),
        (
            "SmoothNoisyMax(student_t, paper calibration)",
            SmoothNoisyMax(eps, noise="student_t", calibration="paper"),
            "",
        ),
        ("SmoothNoisyMax(lln, delta=1e-6)", SmoothNoisyMax(eps, 1e-6, noise="lln"), ""),
        ("SmoothPrivateSelection(gamma=4, one-sided)", SmoothPrivateSelection(eps), ""),
        ("SmoothPrivateSelection(gamma=4, two-sided)", SmoothPrivateSelection(eps, one_sided=False), ""),
        ("LocalDampening", LocalDampening(eps), ""),
        ("ExponentialMechanism (closed form)", ExponentialMechanism(eps), ""),
    ]
    for name, mech, target in cases:
        t = median_time(lambda mech=mech: output_distribution(mech, pr), repeat=5)
        print(f"{name:<60}{t * 1e3:>10.2f}{target:>10}")

    print()
    m = 10**6
    rng = np.random.default_rng(0)
    scores = rng.normal(size=m) * 10
    big = SelectionProblem(
        scores, global_sensitivity=1.0, local_sensitivity=StepProfile([0, 5], [0.25, 1.0]), max_distance=5
    )
    sps = SmoothPrivateSelection(eps)
    b_em = 2.0 / eps

    def floor():
        return int(np.argmax(scores + b_em * rng.gumbel(size=m)))

    print(f"{'select, 10^6 candidates':<60}{'seconds':>10}{'target':>10}")
    print(f"{'numpy Gumbel-argmax floor':<60}{median_time(floor):>10.4f}{'':>10}")
    for name, mech, target in (
        ("SmoothPrivateSelection(gamma=4, one-sided)", sps, "1"),
        ("SmoothPrivateSelection(gamma=4, two-sided)", SmoothPrivateSelection(eps, one_sided=False), ""),
        ("SmoothNoisyMax(student_t)", SmoothNoisyMax(eps, noise="student_t"), ""),
        ("SmoothNoisyMax(laplace, delta=1e-6)", SmoothNoisyMax(eps, 1e-6, noise="laplace"), ""),
        ("ExponentialMechanism", ExponentialMechanism(eps), ""),
        ("LocalDampening", LocalDampening(eps), ""),
        ("PrivateSensitivityBound(1/3, 2/3, pf)", PrivateSensitivityBound(eps / 3, 2 * eps / 3), ""),
    ):
        t = median_time(lambda mech=mech: mech.select(big, rng=rng))
        print(f"{name:<60}{t:>10.4f}{target:>10}")

    print()
    print(f"{'PrivateSensitivityBound exact law (distinct scores)':<60}{'seconds':>10}")
    for m_psb in (5, 100, 1000):
        pr_psb = SelectionProblem(
            rng.normal(size=m_psb) * 5,
            global_sensitivity=1.0,
            local_sensitivity=StepProfile([0, 5], [0.1, 1.0]),
            max_distance=5,
        )
        for sel in ("pf", "em") if m_psb <= 100 else ("em",):  # PF's closed form is O(m^2) per node
            mech = PrivateSensitivityBound(eps / 3, 2 * eps / 3, selector=sel)
            t = median_time(lambda mech=mech, pr_psb=pr_psb: mech.probabilities(pr_psb), repeat=3)
            print(f"{f'm = {m_psb}, selector = {sel}':<60}{t:>10.4f}")


if __name__ == "__main__":
    main()
