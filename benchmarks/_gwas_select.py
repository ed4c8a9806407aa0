"""Counting + private top-10 selection vs ``plink1.9 --model`` / ``plink2 --glm`` (``bench_gwas.py select``).

``select [N_SNPS ...]`` (default 100,000): ``plink1.9 --simulate`` draws 2,000 cases +
2,000 controls (10 disease SNPs of odds ratio 1.5, MAF 0.05-0.5; the rest null), written
once as ``.bed`` and, by ``plink2 --make-pgen``, as ``.pgen``.  Then, each in a fresh
process on one thread (best of 3, alternating):

* ``plink1.9 --bfile F --model --keep-allele-order --threads 1`` (all five tests);
* ``plink2 --bfile F --glm allow-no-covars --threads 1`` (logistic regression, the PLINK 2 route);
* ours: :func:`dpselect.apps.genomics.case_control_counts` (Dask on one thread) then
  :func:`dpselect.apps.genomics.select_top_snps` (k = 10, epsilon 1 and 10, default
  permute-and-flip on the neighbour distance) for each test; CPU of the counting call and of each
  selection in the process, and the whole process (Python start-up and imports included).

Printed: CPU (user + system) and wall per step and the ratios to PLINK 1.9's CPU, and how many
of the 10 disease SNPs each selection returned.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

_CHILD = """
import json, resource, sys, time
w0 = time.perf_counter()
import dask
from dpselect.apps.genomics import ASSOCIATION_TESTS, case_control_counts, select_top_snps
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
out = {"import_cpu": cpu()}
with dask.config.set(scheduler="synchronous"):
    c = cpu(); counts = case_control_counts(sys.argv[1]); out["count_cpu"] = cpu() - c
for test in ASSOCIATION_TESTS:
    for eps in (1.0, 10.0):
        c = cpu(); top = select_top_snps(counts, eps, 10, test=test, rng=0)
        out[f"{test} {eps:g}"] = [cpu() - c, sum(s.startswith("disease") for s in top.labels)]
out["process_cpu"] = cpu(); out["wall"] = time.perf_counter() - w0
print(json.dumps(out))
"""


P1 = ["plink1.9", "--threads", "1", "--silent"]
P2 = ["plink2", "--threads", "1", "--silent"]


P1 = ["plink1.9", "--threads", "1", "--silent"]
P2 = ["plink2", "--threads", "1", "--silent"]


def _timed(cmd: list[str]) -> dict[str, float]:
    run = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %e", *cmd], capture_output=True, text=True, check=True)
    user, sys_, wall = next(x for x in run.stderr.splitlines() if x.startswith("TIME")).split()[1:]
    return {"cpu": float(user) + float(sys_), "wall": float(wall)}


def cohort(m: int, tmp: str) -> Path:
    plink = shutil.which("plink1.9")
    assert plink is not None, "plink1.9 is needed to simulate the cohort"
    prefix = Path(os.environ.get("DPSELECT_BENCH_DIR") or tmp) / f"sel_4000x{m}"
    if not prefix.with_suffix(".bed").exists():
        spec = prefix.with_suffix(".sim")
        spec.write_text(f"{m - 10} null 0.05 0.5 1 1\n10 disease 0.05 0.5 1.5 mult\n")
        args = ["--simulate", spec, "--simulate-ncases", "2000", "--simulate-ncontrols", "2000", "--make-bed"]
        subprocess.run([plink, *map(str, args), "--out", str(prefix), "--silent"], check=True)
    if shutil.which("plink2") and not prefix.with_suffix(".pgen").exists():
        subprocess.run(["plink2", "--bfile", str(prefix), "--make-pgen", "--out", str(prefix), "--silent"], check=True)
    return prefix


def main_select(sizes: list[int], tmp: str) -> None:
    for m in sizes:
        prefix = cohort(m, tmp)
        runs: dict[str, list[dict[str, float]]] = {"plink1.9 --model": [], "plink2 --glm": [], "ours": []}
        ours: list[dict] = []
        for _ in range(3):
            runs["plink1.9 --model"].append(
                _timed([*P1, "--bfile", str(prefix), "--model", "--keep-allele-order", "--out", str(prefix) + "_p1"])
            )
            if shutil.which("plink2"):
                runs["plink2 --glm"].append(
                    _timed([*P2, "--bfile", str(prefix), "--glm", "allow-no-covars", "--out", str(prefix) + "_p2"])
                )
            env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
            run = subprocess.run(
                [sys.executable, "-c", _CHILD, str(prefix)], capture_output=True, text=True, check=True, env=env
            )
            ours.append(json.loads(run.stdout.strip().splitlines()[-1]))
        p1 = min(r["cpu"] for r in runs["plink1.9 --model"])
        print(f"\n4,000 individuals x {m:,} SNPs, one thread, best of 3 (CPU = user + system)")
        for name, rows in runs.items():
            if rows:
                best = min(rows, key=lambda r: r["cpu"])
                print(f"  {name:<34} CPU {best['cpu']:7.3f} s  wall {best['wall']:7.3f} s")
        best = min(ours, key=lambda r: r["process_cpu"])
        count = min(r["count_cpu"] for r in ours)
        print(f"  {'ours: counting':<34} CPU {count:7.3f} s  ({count / p1:.2f}x plink1.9 --model)")
        for key in [k for k in best if " " in k]:
            sel = min(r[key][0] for r in ours)
            print(
                f"  ours: select {key:<21} CPU {sel:7.3f} s  counting + selection {(count + sel) / p1:5.2f}x"
                f"  disease SNPs {best[key][1]}/10"
            )
        total, imports = best["process_cpu"], best["import_cpu"]
        print(f"  {'ours: whole process (all 10 runs)':<34} CPU {total:7.3f} s (imports {imports:.2f} s)")
