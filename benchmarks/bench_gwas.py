"""GWAS benchmark: TDT counting on PLINK trio files, side by side with PLINK 1.9 ``--tdt``, in one run.

Run by hand:  python benchmarks/bench_gwas.py [N_SNPS ...]   (default 50,000 and 200,000 SNPs)

For each size, 2,000 affected trios (2 % missing calls, 1 % child errors, the
last 5 % of SNPs on chromosome X with mixed-sex children) are simulated once,
then counted by

* ``plink1.9 --bfile F --tdt --keep-allele-order`` (if installed; Debian
  package ``plink1.9``), and
* :func:`dpselect.apps.genomics.transmission_counts` (packed-byte kernel,
  Dask threads), each run in a fresh Python process,

and one line each reports wall time, CPU time (user + system, all threads),
SNPs/s and peak memory: PLINK's peak RSS, and for ours the peak growth of
the resident set during the counting call, from after the imports and Dask's
thread-pool start (the kernel's high-water mark VmHWM, reset there through
``/proc/self/clear_refs``, so no short peak is missed; else VmRSS sampled
every 5 ms), next to one chunk's bytes (``chunk_snps x ceil(individuals /
4)``).  The growth includes the returned result (counts and annotations,
which grow with the number of SNPs while a chunk does not); its size is
printed, and the growth without it as "work".  CPU of ours is that of the
counting call (reading the .fam/.bim included, Python start-up excluded).  The counts are compared with
PLINK's T and U (must be identical).  The machine's load shows in the wall
times; CPU times are the comparable figure on a shared machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dpselect.apps.genomics import simulate_trios

N_TRIOS = 2000
CHUNK = 10_000

_CHILD = """
import json, pickle, resource, sys, threading, time
import numpy as np, dask, dask.threaded  # imports before the baseline
from dpselect.apps.genomics import transmission_counts
prefix, chunk, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dask.compute(dask.delayed(int)(0), scheduler="threads")  # start Dask's thread pool before the baseline

def status_mb(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024

base, start_peak, peak, done = status_mb("VmRSS"), status_mb("VmHWM"), [0.0], threading.Event()
try:  # reset the kernel's high-water mark (VmHWM) to the current RSS: the exact peak, not a 5 ms sample
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    hwm = True
except OSError:
    hwm = False

def watch():
    while not done.is_set():
        peak[0] = max(peak[0], status_mb("VmRSS"))
        time.sleep(0.005)

threading.Thread(target=watch, daemon=True).start()
w0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
counts = transmission_counts(prefix, chunk_snps=chunk)
w1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
done.set()
sampled = max(peak[0], status_mb("VmRSS")) - base
growth = max(sampled, status_mb("VmHWM") - base) if hwm else sampled
# ru_maxrss also counts the parent's pages at fork (before exec): this process's own peak is its VmHWM
process_peak = max(start_peak, base + growth) if hwm else r1.ru_maxrss / 1024
np.save(out, np.stack([counts.b, counts.c]))
print(json.dumps({"wall": w1 - w0, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                  "rss_growth_mb": growth, "rss_sampled_mb": sampled, "hwm": hwm,
                  "result_mb": len(pickle.dumps(counts, protocol=5)) / 2**20, "rss_peak_mb": process_peak}))
"""


def _plink(plink: str, prefix: Path) -> tuple[dict[str, float], np.ndarray]:
    cmd = ["/usr/bin/time", "-f", "TIME %U %S %e %M", plink, "--bfile", str(prefix), "--tdt",
           "--keep-allele-order", "--out", str(prefix) + "_plink"]
    run = subprocess.run(cmd, capture_output=True, text=True, check=True)
    user, sys_, wall, rss = next(line for line in run.stderr.splitlines() if line.startswith("TIME")).split()[1:]
    rows = [line.split() for line in Path(str(prefix) + "_plink.tdt").read_text().splitlines()[1:]]
    tu = np.array([[int(r[5]) for r in rows], [int(r[6]) for r in rows]])
    return {"wall": float(wall), "cpu": float(user) + float(sys_), "rss_peak_mb": int(rss) / 1024}, tu


def _ours(prefix: Path, chunk: int) -> tuple[dict[str, float], np.ndarray]:
    out = str(prefix) + "_ours.npy"
    run = subprocess.run([sys.executable, "-c", _CHILD, str(prefix), str(chunk), out], capture_output=True,
                         text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1]), np.load(out)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [50_000, 200_000]
    # a simulated cohort is reused from $DPSELECT_BENCH_DIR when set (simulation is slow on a shared machine)
    plink = shutil.which("plink1.9") or shutil.which("plink")
    if plink is None or not Path("/usr/bin/time").exists():
        print("plink1.9 (Debian package plink1.9) or /usr/bin/time not found: only dpselect is timed")
    n_ind = 3 * N_TRIOS
    chunk_mb = CHUNK * ((n_ind + 3) // 4) / 2**20
    print(f"{N_TRIOS} trios ({n_ind} individuals), chunk {CHUNK} SNPs = {chunk_mb:.1f} MiB of .bed bytes")
    print(f"{'SNPs':>9} {'tool':<26}{'wall s':>8}{'CPU s':>8}{'SNPs/s (wall)':>15}{'SNPs/s (CPU)':>14}  memory")
    for m in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            keep = os.environ.get("DPSELECT_BENCH_DIR")
            prefix = Path(keep or tmp) / f"cohort_{N_TRIOS}x{m}"
            if not prefix.with_suffix(".bed").exists():
                prefix.parent.mkdir(parents=True, exist_ok=True)
                t0 = time.perf_counter()
                simulate_trios(prefix, N_TRIOS, m, causal=10, effect=0.6, missing_rate=0.02, error_rate=0.01,
                               x_snps=m // 20, child_sex="mixed", rng=0)
                print(f"{m:>9} simulate_trios: {time.perf_counter() - t0:.1f} s, .bed "
                      f"{prefix.with_suffix('.bed').stat().st_size / 1e6:.0f} MB")
            ref = None
            if plink is not None and Path("/usr/bin/time").exists():
                p, ref = _plink(plink, prefix)
                print(f"{m:>9} {'plink1.9 --tdt':<26}{p['wall']:>8.2f}{p['cpu']:>8.2f}{m / p['wall']:>15,.0f}"
                      f"{m / p['cpu']:>14,.0f}  peak RSS {p['rss_peak_mb']:.0f} MiB")
            o, got = _ours(prefix, CHUNK)
            print(f"{m:>9} {'dpselect (Dask threads)':<26}{o['wall']:>8.2f}{o['cpu']:>8.2f}{m / o['wall']:>15,.0f}"
                  f"{m / o['cpu']:>14,.0f}  peak RSS growth {o['rss_growth_mb']:.0f} MiB "
                  f"= {o['rss_growth_mb'] / chunk_mb:.1f} chunks (process peak {o['rss_peak_mb']:.0f} MiB)")
            print(f"{m:>9} {'':<26}peak growth {'from VmHWM' if o['hwm'] else 'sampled'}"
                  f" (sampled every 5 ms: {o['rss_sampled_mb']:.0f} MiB); of it the result held "
                  f"{o['result_mb']:.1f} MiB, work {(o['rss_growth_mb'] - o['result_mb']) / chunk_mb:.1f} chunks")
            if ref is not None:
                same = ref.shape == got.shape and bool((ref == got).all())
                print(f"{m:>9} counts identical to PLINK's T/U (autosomes and X): {same}")
                if p["cpu"] > 0:
                    print(f"{m:>9} ratios dpselect / PLINK: CPU {o['cpu'] / p['cpu']:.2f}, "
                          f"wall {o['wall'] / p['wall']:.2f}")


if __name__ == "__main__":
    main()
