"""One-off verification: branch-and-bound beta_max == the full O(N^2) scan, bit for bit.

Usage: python benchmarks/verify_beta_max.py BOUND T ORDER [LOG]
  BOUND = thm4 | thm5 | both (thm5 at T and thm4), ORDER = a Python range spec
  "all<=300,every10<=2000,all<=1000" processed in that order (no N twice).
Each N prints "N bound T scan bb equal cpu_scan cpu_bb"; any mismatch is printed as MISMATCH.
"""

from __future__ import annotations

import sys
import time

from dpselect.apps.genomics._tdt._beta_max import beta_max_branch_and_bound, beta_max_scan
from dpselect.apps.genomics._tdt._sensitivity import global_sensitivity


def _ns(spec: str) -> list[int]:
    seen: list[int] = []
    for part in spec.split(","):
        kind, top = part.split("<=")
        step = 1 if kind == "all" else int(kind.removeprefix("every"))
        for n in range(step, int(top) + 1, step):
            if n not in seen:
                seen.append(n)
    return seen


def main() -> None:
    bound, t, spec = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    out = open(sys.argv[4], "a") if len(sys.argv) > 4 else sys.stdout
    configs = [("thm5", t), ("thm4", 0.0)] if bound == "both" else [(bound, t if bound == "thm5" else 0.0)]
    for n in _ns(spec):
        for bnd, thr in configs:
            if bnd == "thm5" and thr >= global_sensitivity(n):
                continue
            t0 = time.process_time()
            full = beta_max_scan(n, bnd, thr)
            t1 = time.process_time()
            fast = beta_max_branch_and_bound(n, bnd, thr)
            t2 = time.process_time()
            tag = "equal" if full == fast else "MISMATCH"
            print(f"{n} {bnd} {thr} {full!r} {fast!r} {tag} {t1 - t0:.3f} {t2 - t1:.4f}", file=out, flush=True)


if __name__ == "__main__":
    main()
