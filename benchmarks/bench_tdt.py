"""TDT benchmark: neighbour-distance selection (the default) vs EM on raw scores, and SPS.

Run by hand:  python benchmarks/bench_tdt.py   (the figures depend on the machine and its load)

Prints, side by side in one run (median wall time):

* the neighbour-distance (ND) utility and one PF selection on it from the raw
  (b, c) arrays at m = 10^6 SNPs, N = 500 families (target <= 2 s), next to
  the exponential mechanism on the raw chi2 scores (GS = 8(N-1)/N);
* ``select_top_snp`` (default ND-PF) at N = 10^4 families, m = 10^5 SNPs
  (target <= 10 s; the state-space tables of the old code stopped at N = 2,000);
* ``select_top_snps`` (k = 10) at N = 500, m = 10^6, and next to
  ``select_top_snp`` at N = 10^4 with m = 2 * 10^4 and m = 10^6 (CPU time,
  min of 3; target: top-10 <= 3 x top-1);
* SPS (``mechanism="sps", utility="chi2"``) at N = 10^4, m = 2 * 10^4, CPU
  including the one-off ``beta_max`` (cache cleared; target: seconds);
* the one-off Theorem 4 / 5 ``beta_max`` by branch and bound (CPU, cache
  cleared) at N = 2,000, 10^4 and 10^5, next to the full O(N^2) scan at
  N = 2,000, and one SPS selection at N = 150, m = 10^6.

``python benchmarks/bench_tdt.py --beta-max`` prints the beta_max / SPS rows only.
Panels are ``dpselect.experiments.datasets.simulate_tdt`` with 10 SNPs given a
transmission distortion (a realistic "a few causal SNPs" panel).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from _timing import median_time
from dpselect.apps import genomics as tdt
from dpselect.apps.genomics import TransmissionCounts
from dpselect.apps.genomics._tdt._beta_max import beta_max_scan, beta_max_unchecked
from dpselect.experiments.datasets import simulate_tdt
from dpselect.mechanisms import ExponentialMechanism, SmoothPrivateSelection

EPSILON = 1.0


def _panel(m: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    b, c = simulate_tdt(m, n, rng)
    causal = rng.choice(m, size=10, replace=False)
    s = b[causal] + c[causal]
    b[causal] = rng.binomial(s, 0.62)
    c[causal] = s - b[causal]
    return b, c


def _row(name: str, seconds: float, target: float | None = None) -> None:
    extra = "" if target is None else f"   (target {target:g} s: {'met' if seconds <= target else 'NOT met'})"
    print(f"{name:<62}{seconds:>10.3f} s{extra}")


def _cpu(fn: object, repeat: int = 3) -> float:
    """Least CPU time (process_time) of ``fn()`` over ``repeat`` runs after a warm-up (the machine is shared)."""
    fn()  # type: ignore[operator]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()  # type: ignore[operator]
        best = min(best, time.process_time() - t0)
    return best


def _sps_n1e4(bs: np.ndarray, cs: np.ndarray, rng: np.random.Generator) -> None:
    beta_max_unchecked.cache_clear()  # include the one-off beta_max
    tdt.select_top_snp(TransmissionCounts(bs, cs, 10**4), EPSILON, mechanism="sps", utility="chi2", rng=rng)


def beta_max_rows(rng: np.random.Generator) -> None:
    """beta_max by branch and bound (CPU, cache cleared, least of 3) and SPS at N = 1e4."""
    for n in (2000, 10**4, 10**5):
        for bound, t in (("thm5", 6.0), ("thm5", 7.5), ("thm4", 0.0)):

            def run(n: int = n, bound: str = bound, t: float = t) -> None:
                beta_max_unchecked.cache_clear()
                beta_max_unchecked(n, bound, t)

            _row(
                f"beta_max({bound}{', T = ' + format(t, 'g') if bound == 'thm5' else ''}), N = {n} "
                "(branch and bound, CPU)",
                _cpu(run),
            )
    for bound, t in (("thm5", 6.0), ("thm4", 0.0)):
        t0 = time.process_time()
        beta_max_scan(2000, bound, t)
        full = time.process_time() - t0
        beta_max_unchecked.cache_clear()
        t0 = time.process_time()
        beta_max_unchecked(2000, bound, t)
        fast = time.process_time() - t0
        print(
            f"{'  full O(N^2) scan, N = 2000, ' + bound + ' (CPU)':<62}{full:>10.3f} s: {full / fast:.0f}x the "
            "branch and bound"
        )
    bs, cs = _panel(2 * 10**4, 10**4, rng)
    _row("SPS select_top_snp, N = 1e4, m = 2e4, incl. beta_max (CPU)", _cpu(lambda: _sps_n1e4(bs, cs, rng)))
    beta_max_unchecked(10**4, "thm5", 6.0)
    _row(
        "  the same, beta_max cached (CPU)",
        _cpu(
            lambda: tdt.select_top_snp(
                TransmissionCounts(bs, cs, 10**4), EPSILON, mechanism="sps", utility="chi2", rng=rng
            )
        ),
    )


def main() -> None:
    if "--beta-max" in sys.argv:
        beta_max_rows(np.random.default_rng(0))
        return
    rng = np.random.default_rng(0)
    b, c = _panel(10**6, 500, rng)
    em = ExponentialMechanism(EPSILON)
    _row(
        "ND-PF select_top_snp, m = 1e6, N = 500 (from raw b, c)",
        median_time(lambda: tdt.select_top_snp(TransmissionCounts(b, c, 500), EPSILON, rng=rng), 3),
        2.0,
    )
    _row("  of which the ND distances", median_time(lambda: tdt.neighbour_distances(b, c, 500), 3))
    _row(
        "EM on raw chi2, m = 1e6, N = 500 (problem + select)",
        median_time(
            lambda: tdt.select_top_snp(TransmissionCounts(b, c, 500), EPSILON, mechanism="em", utility="chi2", rng=rng),
            3,
        ),
    )
    raw = tdt.tdt_problem(b, c, 500)
    _row("EM on raw chi2, select only (prebuilt problem)", median_time(lambda: em.select(raw, rng=rng), 3))
    _row(
        "select_top_snps k = 10 (ND-PF peeling), m = 1e6, N = 500",
        median_time(lambda: tdt.select_top_snps(TransmissionCounts(b, c, 500), EPSILON, 10, rng=rng), 1),
    )
    _row(
        "select_top_snps k = 10 (ND-EM Gumbel), m = 1e6, N = 500",
        median_time(
            lambda: tdt.select_top_snps(TransmissionCounts(b, c, 500), EPSILON, 10, mechanism="em", rng=rng), 1
        ),
    )
    for m in (2 * 10**4, 10**6):
        bk, ck = _panel(m, 10**4, rng)
        one = _cpu(lambda: tdt.select_top_snp(TransmissionCounts(bk, ck, 10**4), EPSILON, rng=rng))
        ten = _cpu(lambda: tdt.select_top_snps(TransmissionCounts(bk, ck, 10**4), EPSILON, 10, rng=rng))
        print(
            f"{'top-10 vs top-1 (PF, distance), N = 1e4, m = ' + format(m, '.0e'):<62}{ten:>10.3f} s CPU vs "
            f"{one:.3f} s: {ten / one:.2f}x (target <= 3x: {'met' if ten <= 3 * one else 'NOT met'})"
        )
    b4, c4 = _panel(10**5, 10**4, rng)
    _row(
        "ND-PF select_top_snp, m = 1e5, N = 1e4",
        median_time(lambda: tdt.select_top_snp(TransmissionCounts(b4, c4, 10**4), EPSILON, rng=rng), 3),
        10.0,
    )
    beta_max_rows(rng)
    b1, c1 = _panel(10**6, 150, rng)
    sps = SmoothPrivateSelection(EPSILON)
    _row(
        "SPS (Thm 5) select_top_snp, m = 1e6, N = 150",
        median_time(
            lambda: tdt.select_top_snp(
                TransmissionCounts(b1, c1, 150), EPSILON, mechanism=sps, utility="chi2", rng=rng
            ),
            3,
        ),
    )


if __name__ == "__main__":
    main()
