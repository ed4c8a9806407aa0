"""Case-control counting vs ``plink1.9 --model`` and the threads sweep (``bench_gwas.py`` modes ``cc``, ``threads``).

``cc [N_SNPS]`` (default 50,000): 1,000 cases + 1,000 controls simulated by
:func:`dpselect.apps.genomics.simulate_case_control` (5 % missing calls set
afterwards, the last 5 % of SNPs moved to chromosome X; sexes alternate),
counted by ``plink1.9 --bfile F --model --keep-allele-order`` and by
:func:`dpselect.apps.genomics.case_control_counts` (popcount kernel, Dask
threads) in a fresh Python process each, three times alternating; the best
CPU (user + system) and wall of each are printed with their ratio, and the
genotype counts are compared with PLINK's GENO rows (must be identical).

``threads [N_SNPS]`` (default 200,000): one process per path (the TDT on the
trio cohort of the default mode, and case-control) counts the same fileset
with Dask's threaded scheduler at 1, 2, ... up to the machine's cores
(``dask.config.set(num_workers=k)``), each setting five times alternating
(page cache warm), and prints the best wall and CPU per setting and the
speed-up over one thread.  On a shared machine the wall times carry the
other processes' load: read the best of the runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from _timing import best_of
from dpselect.apps.genomics import simulate_case_control

N_CASES = N_CONTROLS = 1000

_CHILD = """
import json, resource, sys, time
import numpy as np, dask
from dpselect.apps.genomics import case_control_counts, transmission_counts
kind, path, out, threads, repeat = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
count = case_control_counts if kind == "cc" else transmission_counts
dask.compute(dask.delayed(int)(0), scheduler="threads")  # start Dask's thread pool first

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

rows = []
for _ in range(repeat):
    for k in [int(t) for t in threads.split(",")]:
        with dask.config.set(num_workers=k):
            w, c = time.perf_counter(), cpu()
            counts = count(path)
            rows.append({"threads": k, "wall": time.perf_counter() - w, "cpu": cpu() - c})
if out:
    np.save(out, counts.cases if kind == "cc" else np.stack([counts.b, counts.c]))
print(json.dumps(rows))
"""


def _child(kind: str, path: Path, out: str, threads: list[int], repeat: int) -> list[dict[str, float]]:
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, kind, str(path), out, ",".join(map(str, threads)), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def cc_cohort(m: int, tmp: str) -> Path:
    """A case-control fileset (cached in $DPSELECT_BENCH_DIR when set)."""
    prefix = Path(os.environ.get("DPSELECT_BENCH_DIR") or tmp) / f"cc_{N_CASES}x{N_CONTROLS}x{m}"
    if prefix.with_suffix(".bed").exists():
        return prefix
    prefix.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    simulate_case_control(N_CASES, N_CONTROLS, m, n_causal=10, odds_ratio=1.5, path=prefix, rng=0)
    n = N_CASES + N_CONTROLS
    nb = (n + 3) // 4
    bed = np.fromfile(prefix.with_suffix(".bed"), dtype=np.uint8, offset=3).reshape(m, nb)
    rng = np.random.default_rng(1)
    for p in range(4):  # 5 % of the calls at each byte position become code 01 (n is a multiple of 4: no padding)
        hit = rng.integers(0, 20, size=bed.shape, dtype=np.uint8) == 0
        bed = np.where(hit, (bed & np.uint8(~(3 << 2 * p) & 255)) | np.uint8(1 << 2 * p), bed)
    prefix.with_suffix(".bed").write_bytes(bytes((0x6C, 0x1B, 0x01)) + bed.tobytes())
    bim = prefix.with_suffix(".bim").read_text().splitlines()
    x_from = m - m // 20
    prefix.with_suffix(".bim").write_text(
        "".join(("23" + line[line.index("\t") :] if j >= x_from else line) + "\n" for j, line in enumerate(bim))
    )
    print(f"simulated {n} x {m} case-control cohort in {time.perf_counter() - t0:.1f} s")
    return prefix


def _plink_model(plink: str, prefix: Path) -> tuple[dict[str, float], np.ndarray]:
    out = str(prefix) + "_plink"
    run = subprocess.run(
        [
            "/usr/bin/time",
            "-f",
            "TIME %U %S %e",
            plink,
            "--bfile",
            str(prefix),
            "--model",
            "--keep-allele-order",
            "--out",
            out,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    user, sys_, wall = next(line for line in run.stderr.splitlines() if line.startswith("TIME")).split()[1:]
    rows = [r.split() for r in Path(out + ".model").read_text().splitlines()[1:] if " GENO " in r]
    geno = np.array([list(map(int, r[5].split("/"))) for r in rows])
    return {"cpu": float(user) + float(sys_), "wall": float(wall)}, geno


def main_cc(m: int, tmp: str) -> None:
    plink = shutil.which("plink1.9") or shutil.which("plink")
    prefix = cc_cohort(m, tmp)

    def ours() -> tuple[dict[str, float], np.ndarray]:
        t = _child("cc", prefix, str(prefix) + "_ours.npy", [os.cpu_count() or 1], 1)[0]
        return t, np.load(str(prefix) + "_ours.npy")

    runs = [("dpselect (Dask threads)", ours)]
    if plink is not None:
        runs.append(("plink1.9 --model", lambda: _plink_model(plink, prefix)))
    best, counts = best_of(runs)
    print(f"{N_CASES} cases + {N_CONTROLS} controls x {m} SNPs ({m // 20} on X), best of 3")
    print(f"{'tool':<26}{'CPU s':>8}{'wall s':>8}{'SNPs/s (CPU)':>14}")
    for name, b in best.items():
        print(f"{name:<26}{b['cpu']:>8.3f}{b['wall']:>8.3f}{m / b['cpu']:>14,.0f}")
    if plink is not None:
        got, ref = counts["dpselect (Dask threads)"], counts["plink1.9 --model"]
        print(
            f"genotype counts identical to PLINK's --model GENO (cases, autosomes and X): "
            f"{got.shape == ref.shape and bool((got == ref).all())}"
        )
        p, o = best["plink1.9 --model"], best["dpselect (Dask threads)"]
        print(f"ratios dpselect / PLINK: CPU {o['cpu'] / p['cpu']:.2f}, wall {o['wall'] / p['wall']:.2f}")


def main_threads(m: int, tmp: str, trio_cohort) -> None:
    cores = os.cpu_count() or 1
    threads = sorted({1, 2, *(k for k in (4, 8, 16) if k <= cores), cores})
    print(f"threads sweep on {cores} cores, {m} SNPs, best of 5 alternating runs per setting")
    print(f"{'path':<14}{'threads':>8}{'wall s':>9}{'CPU s':>9}{'speed-up':>10}{'efficiency':>12}")
    for kind, prefix in (("tdt", trio_cohort(m, tmp)), ("cc", cc_cohort(m, tmp))):
        rows = _child(kind, prefix, "", threads, 5)
        wall = {k: min(r["wall"] for r in rows if r["threads"] == k) for k in threads}
        cpu = {k: min(r["cpu"] for r in rows if r["threads"] == k) for k in threads}
        for k in threads:
            print(
                f"{kind:<14}{k:>8}{wall[k]:>9.3f}{cpu[k]:>9.3f}{wall[1] / wall[k]:>10.2f}{wall[1] / wall[k] / k:>12.2f}"
            )
