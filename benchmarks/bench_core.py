"""Core benchmark: selection from 10^6 scores and exact output distributions.

Run by hand:  python benchmarks/bench_core.py  (only the exact-law table: ... exact_laws)
Prints, side by side in one run, the median wall time of
  * one ``select`` from 10^6 scores (EM = Gumbel noisy max, PF, RNM-Laplace)
    vs a plain NumPy Gumbel-argmax floor (``np.argmax(u + b*rng.gumbel(size=m))``);
  * ``output_distribution`` of a 4,096-candidate problem with 2 distinct scores and
    with 4,096 distinct scores (through the noisy-max quadrature: RNM-Laplace and
    RNM-Gumbel, and EM's / PF's closed forms).
  * the exact output distribution of 10^6 distinct scores: permute-and-flip
    (power-sum evaluation of its integral) beside the exponential mechanism's
    log-softmax.
  * the exact law of every noise through the engine (CPU seconds, time.process_time,
    best of 3): RNM-Laplace at 4,096 distinct scores, SNM-t at 1,000, and 10^3 -
    10^5 distinct scores for Laplace, Gumbel, exponential (RNM), Student t (SNM),
    polynomial tail (SPS, one- and two-sided) and Laplace-log-normal (SNM), side by
    side with the exponential mechanism's closed form on the same problem (ratio to
    EM); a size is skipped (and the table says so) when the previous size's time,
    scaled linearly, exceeds 100 s;
  * exact audits of the smooth mechanisms on 100 neighbour pairs (CPU seconds).
Targets (issue #2): select <= 1.5x the floor; distribution <= 50 ms (2 distinct),
<= 1 s (4,096 distinct); issue #11 item 5: PF's exact law at 10^6 distinct
scores <= 1 s; issue #24: RNM-Laplace at 4,096 and SNM-t at 1,000 distinct scores
<= 1 s CPU, 10^5 distinct scores <= 10 s CPU for every noise, audits in seconds.
"""

from __future__ import annotations

import time

import numpy as np

import dpselect
from _timing import median_time
from dpselect.analysis import audit, output_distribution
from dpselect.apps.counts import majority_problem


def cpu(fn, repeat: int = 1) -> float:
    """CPU seconds of a call (time.process_time), best of ``repeat``."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def smooth_problem(m: int) -> dpselect.SelectionProblem:
    """m distinct scores N(0, 10^2), sensitivity 1, local sensitivity 1/4 up to distance 5."""
    scores = np.random.default_rng(0).normal(size=m) * 10
    return dpselect.SelectionProblem(
        scores, global_sensitivity=1.0, max_distance=5, local_sensitivity=dpselect.StepProfile([0, 5], [0.25, 1.0])
    )


def exact_laws() -> None:
    """CPU seconds of every noise's exact law, beside EM's closed form (ratio to EM)."""
    eps = 1.0
    em = dpselect.ExponentialMechanism(eps)
    print(f"{'exact law (CPU s, best of 3)':<44}{'m':>8}{'CPU s':>10}{'EM s':>10}{'ratio':>10}")

    def row(name, mech, pr):
        t = cpu(lambda: mech.log_probabilities(pr), 3)
        t_em = cpu(lambda: em.log_probabilities(pr), 3)
        print(f"{name:<44}{pr.n_candidates:>8}{t:>10.3f}{t_em:>10.4f}{t / max(t_em, 1e-6):>10.0f}", flush=True)
        return t

    row(
        "RNM-Laplace (arange scores)",
        dpselect.ReportNoisyMax(eps, "laplace"),
        dpselect.SelectionProblem(np.arange(4096.0)),
    )
    row("SNM-t (df = 3)", dpselect.SmoothNoisyMax(eps, noise="student_t"), smooth_problem(1000))
    mechs = [
        ("RNM-Laplace", dpselect.ReportNoisyMax(eps, "laplace")),
        ("RNM-Gumbel (engine, not the closed form)", dpselect.ReportNoisyMax(eps, "gumbel")),
        ("RNM-exponential (engine)", dpselect.ReportNoisyMax(eps, "exponential")),
        ("SNM-t (df = 3)", dpselect.SmoothNoisyMax(eps, noise="student_t")),
        ("SPS (P_4, one-sided)", dpselect.SmoothPrivateSelection(eps)),
        ("SPS (P_4, two-sided)", dpselect.SmoothPrivateSelection(eps, one_sided=False)),
        ("SNM-LLN (delta = 1e-6)", dpselect.SmoothNoisyMax(eps, 1e-6, noise="lln")),
    ]
    for name, mech in mechs:
        last, m_last = 0.0, 1
        for m in (10**3, 10**4, 10**5):
            if last * m / m_last > 10.0 * 10:  # cannot meet 10 s at 10^5 at this rate: say so
                print(f"{name:<44}{m:>8}{'skipped: ' + format(last * m / m_last, '.0f') + ' s extrapolated':>30}")
                continue
            last, m_last = row(name, mech, smooth_problem(m)), m

    print()
    print(f"{'exact audit, 100 neighbour pairs (50 candidates)':<44}{'CPU s':>10}")
    rng = np.random.default_rng(1)
    pairs = []
    for _ in range(100):
        c = rng.integers(0, 1000, size=50)
        d = c.copy()
        d[rng.integers(50)] += 1
        pairs.append((majority_problem(c), majority_problem(d)))
    for name, mech in (
        ("SNM-t (df = 3)", dpselect.SmoothNoisyMax(eps, noise="student_t")),
        ("SPS (P_4, one-sided)", dpselect.SmoothPrivateSelection(eps)),
        ("SPS (P_4, two-sided)", dpselect.SmoothPrivateSelection(eps, one_sided=False)),
        ("SNM-Laplace (delta = 1e-6)", dpselect.SmoothNoisyMax(eps, 1e-6, noise="laplace")),
        ("EM", em),
    ):
        print(f"{name:<44}{cpu(lambda mech=mech: audit(mech, pairs)):>10.3f}", flush=True)


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
    for mech in (
        dpselect.ExponentialMechanism(eps),
        dpselect.PermuteAndFlip(eps),
        dpselect.ReportNoisyMax(eps, "laplace"),
    ):
        t = median_time(lambda: mech.select(problem, rng=rng))
        name = type(mech).__name__ + (f"({mech.noise})" if hasattr(mech, "noise") else "")
        print(f"{name:<48}{t:>10.4f}{t / t_floor:>8.2f}")

    print()
    print(f"{'output_distribution, 4096 candidates':<48}{'seconds':>10}")
    two = dpselect.SelectionProblem(np.r_[np.ones(1), np.zeros(4095)])
    many = dpselect.SelectionProblem(np.arange(4096.0))
    for label, pr in (("2 distinct", two), ("4096 distinct", many)):
        for mech in (
            dpselect.ReportNoisyMax(eps, "laplace"),
            dpselect.ReportNoisyMax(eps, "gumbel"),
            dpselect.ExponentialMechanism(eps),
            dpselect.PermuteAndFlip(eps),
        ):
            name = type(mech).__name__ + (f"({mech.noise})" if hasattr(mech, "noise") else "")
            t = median_time(lambda: output_distribution(mech, pr), repeat=3)
            print(f"{name + ', ' + label:<48}{t:>10.4f}")

    print()
    print(f"{'exact distribution, 10^6 distinct scores':<48}{'seconds':>10}")
    for mech in (dpselect.ExponentialMechanism(eps), dpselect.PermuteAndFlip(eps)):
        t = median_time(lambda: mech.probabilities(problem), repeat=3)
        print(f"{type(mech).__name__:<48}{t:>10.4f}")

    print()
    exact_laws()


if __name__ == "__main__":
    import sys

    exact_laws() if sys.argv[1:] == ["exact_laws"] else main()
