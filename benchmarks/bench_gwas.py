"""GWAS benchmark: TDT counting on PLINK trio files, side by side with PLINK 1.9 ``--tdt``, in one run.

Run by hand:  python benchmarks/bench_gwas.py [N_SNPS ...]   (default 50,000 and 200,000 SNPs)
              python benchmarks/bench_gwas.py vcf [N_SNPS]   (VCF input; default 20,000 sites)
              python benchmarks/bench_gwas.py cc [N_SNPS]    (case-control vs plink1.9 --model; default 50,000)
              python benchmarks/bench_gwas.py select [N_SNPS ...]  (counting + top-10 selection, one thread;
                                                     vs plink1.9 --model and plink2 --glm; default 100,000)
              python benchmarks/bench_gwas.py threads [N_SNPS]   (threads sweep, TDT and case-control; 200,000)
              python benchmarks/bench_gwas.py vcf-gatk [N_SNPS]  (VCF with FORMAT GT:AD:DP:GQ:PL)

``cc`` and ``threads``: see ``_gwas_cc.py``; ``select``: ``_gwas_select.py``.

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

``vcf``: the same cohort written as a BGZF-compressed VCF (``REF`` = A2,
``ALT`` = A1, ``GT`` only; unphased diploid calls, missing ``./.``; on X the
males' homozygous calls are haploid ``0`` / ``1`` and missing ``.``, as
variant callers write them, so those lines take htslib's path), counted end
to end from the ``.vcf.gz`` by ``transmission_counts(path, pedigree=.fam)``
and by PLINK's own VCF route: ``plink1.9 --vcf F --double-id
--keep-allele-order --make-bed`` (the pedigree ``.fam`` then replaces the
imported one, whose samples have no parents) followed by ``--bfile --tdt
--keep-allele-order``; CPU (user + system) and wall of the two PLINK runs
summed.  Each side runs three times, alternating, and the best CPU and the
best wall of each are printed with their ratio.  ``vcf-gatk``: the same with
every autosomal line in GATK's ``FORMAT`` ``GT:AD:DP:GQ:PL`` (23-byte fields
such as ``0/1:6,7:13:99:120,0,110``).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from _timing import best_of
from dpselect.apps.genomics import simulate_trios

N_TRIOS = 2000
CHUNK = 10_000

_CHILD = """
import json, pickle, resource, sys, threading, time
import numpy as np, dask, dask.threaded  # imports before the baseline
from dpselect.apps.genomics import transmission_counts
prefix, chunk, out, ped = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
if ped:
    import cyvcf2  # noqa: F401  (the VCF reader's htslib fallback; imported before the baseline)
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
counts = transmission_counts(prefix, chunk_snps=chunk, **({"pedigree": ped} if ped else {}))
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
    cmd = [
        "/usr/bin/time",
        "-f",
        "TIME %U %S %e %M",
        plink,
        "--bfile",
        str(prefix),
        "--tdt",
        "--keep-allele-order",
        "--out",
        str(prefix) + "_plink",
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, check=True)
    user, sys_, wall, rss = next(line for line in run.stderr.splitlines() if line.startswith("TIME")).split()[1:]
    rows = [line.split() for line in Path(str(prefix) + "_plink.tdt").read_text().splitlines()[1:]]
    tu = np.array([[int(r[5]) for r in rows], [int(r[6]) for r in rows]])
    return {"wall": float(wall), "cpu": float(user) + float(sys_), "rss_peak_mb": int(rss) / 1024}, tu


def _ours(prefix: Path, chunk: int, pedigree: str = "") -> tuple[dict[str, float], np.ndarray]:
    out = str(prefix) + "_ours.npy"
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(prefix), str(chunk), out, pedigree],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1]), np.load(out)


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(CPU = user + system, wall) seconds of one command, from /usr/bin/time."""
    run = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %e", *cmd], capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"{cmd[0]} failed: {run.stderr[-500:]}")
    user, sys_, wall = next(line for line in run.stderr.splitlines() if line.startswith("TIME")).split()[1:]
    return float(user) + float(sys_), float(wall)


def _plink_vcf(plink: str, vcf: Path, fam: Path) -> tuple[dict[str, float], np.ndarray]:
    out = str(vcf.with_suffix("")) + "_plinkvcf"
    cpu1, wall1 = _timed([plink, "--vcf", str(vcf), "--double-id", "--keep-allele-order", "--make-bed", "--out", out])
    shutil.copyfile(fam, out + ".fam")  # the trios and sexes (the VCF has neither); same sample order
    cpu2, wall2 = _timed([plink, "--bfile", out, "--tdt", "--keep-allele-order", "--out", out])
    rows = [line.split() for line in Path(out + ".tdt").read_text().splitlines()[1:]]
    tu = np.array([[int(r[5]) for r in rows], [int(r[6]) for r in rows]])
    return {"cpu": cpu1 + cpu2, "wall": wall1 + wall2}, tu


def _bgzf_block(payload: bytes) -> bytes:
    """One BGZF block (SAM/BAM format specification 4.1), zlib level 6 as bgzip's default."""
    comp = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = comp.compress(payload) + comp.flush()
    head = struct.pack("<4BI2BH2BHH", 31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, len(body) + 25)
    return head + body + struct.pack("<II", zlib.crc32(payload), len(payload))


#: GATK-style ``GT:AD:DP:GQ:PL`` fields by PLINK code, all 23 bytes (so one byte table writes the lines).
_GATK = (b"1/1:0,12:12:36:360,36,0", b"./.:12,10:22:10:90,0,99", b"0/1:6,7:13:99:120,0,110", b"0/0:12,0:12:36:0,36,360")


def write_vcf_gz(prefix: Path, out: Path, gatk: bool = False) -> None:
    """The fileset as a BGZF VCF (REF = A2, ALT = A1; haploid homozygous male calls on X); ``gatk``: autosomal
    lines with FORMAT ``GT:AD:DP:GQ:PL``."""
    fam = [line.split() for line in prefix.with_suffix(".fam").read_text().splitlines()]
    bim = [line.split() for line in prefix.with_suffix(".bim").read_text().splitlines()]
    n, m = len(fam), len(bim)
    bed = np.fromfile(prefix.with_suffix(".bed"), dtype=np.uint8, offset=3).reshape(m, (n + 3) // 4)
    codes = ((bed[:, :, None] >> np.array([0, 2, 4, 6], dtype=np.uint8)) & 3).reshape(m, -1)[:, :n]
    spell = _GATK if gatk else (b"1/1", b"./.", b"0/1", b"0/0")
    field = np.frombuffer(b"".join(f + b"\t" for f in spell), dtype=np.uint8).reshape(4, -1)  # by PLINK code
    haploid = np.array(["1", ".", "0/1", "0"], dtype=object)
    male = np.array([r[4] == "1" for r in fam])
    head = (
        "##fileformat=VCFv4.2\n##contig=<ID=1>\n##contig=<ID=23>\n"
        '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
        '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allelic depths">\n'
        '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Depth">\n'
        '##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Genotype quality">\n'
        '##FORMAT=<ID=PL,Number=G,Type=Integer,Description="Phred-scaled likelihoods">\n'
        "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t" + "\t".join(r[1] for r in fam) + "\n"
    )
    pieces = [head.encode()]
    for j, (chrom, sid, _, pos, a1, a2) in enumerate(bim):
        fmt = "GT:AD:DP:GQ:PL" if gatk and chrom != "23" else "GT"
        prefix_j = f"{chrom}\t{pos}\t{sid}\t{a2}\t{a1}\t.\t.\t.\t{fmt}\t".encode()
        if chrom == "23":
            calls = np.where(male, haploid[codes[j]], np.array(["1/1", "./.", "0/1", "0/0"], dtype=object)[codes[j]])
            pieces.append(prefix_j + "\t".join(calls).encode() + b"\n")
        else:
            row = field[codes[j]].ravel()
            row[-1] = 10
            pieces.append(prefix_j + row.tobytes())
    text = b"".join(pieces)
    size = 0xFF00
    with ThreadPoolExecutor(2) as pool:
        blocks = list(pool.map(_bgzf_block, (text[a : a + size] for a in range(0, len(text), size))))
    out.write_bytes(b"".join(blocks) + _bgzf_block(b""))


def _cohort(m: int, tmp: str) -> Path:
    # a simulated cohort is reused from $DPSELECT_BENCH_DIR when set (simulation is slow on a shared machine)
    prefix = Path(os.environ.get("DPSELECT_BENCH_DIR") or tmp) / f"cohort_{N_TRIOS}x{m}"
    if not prefix.with_suffix(".bed").exists():
        prefix.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        simulate_trios(
            prefix,
            N_TRIOS,
            m,
            causal=10,
            effect=0.6,
            missing_rate=0.02,
            error_rate=0.01,
            x_snps=m // 20,
            child_sex="mixed",
            rng=0,
        )
        print(
            f"{m:>9} simulate_trios: {time.perf_counter() - t0:.1f} s, .bed "
            f"{prefix.with_suffix('.bed').stat().st_size / 1e6:.0f} MB"
        )
    return prefix


def main_vcf(m: int, gatk: bool = False) -> None:
    plink = shutil.which("plink1.9") or shutil.which("plink")
    if plink is None or not Path("/usr/bin/time").exists():
        print("plink1.9 (Debian package plink1.9) or /usr/bin/time not found: only dpselect is timed")
        plink = None
    with tempfile.TemporaryDirectory() as tmp:
        prefix = _cohort(m, tmp)
        vcf = Path(str(prefix) + ("_gatk" if gatk else "") + ".vcf.gz")
        if not vcf.exists():
            t0 = time.perf_counter()
            write_vcf_gz(prefix, vcf, gatk)
            print(f"wrote {vcf.name}: {vcf.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t0:.0f} s")
        fam = prefix.with_suffix(".fam")
        runs = [("dpselect", lambda: _ours(vcf, CHUNK, str(fam)))]
        if plink is not None:
            runs.append(("plink1.9 VCF route", lambda: _plink_vcf(plink, vcf, fam)))
        best, results = best_of(runs)
        print(f"{N_TRIOS} trios, {m} sites ({m // 20} on X), {vcf.stat().st_size / 1e6:.0f} MB .vcf.gz; best of 3")
        print(f"{'tool':<22}{'CPU s':>8}{'wall s':>8}{'sites/s (CPU)':>15}")
        for name, b in best.items():
            print(f"{name:<22}{b['cpu']:>8.2f}{b['wall']:>8.2f}{m / b['cpu']:>15,.0f}")
        if plink is not None:
            ours, ref = results["dpselect"], results["plink1.9 VCF route"]
            same = ours.shape == ref.shape and bool((ours == ref).all())
            print(f"counts identical to PLINK's T/U (autosomes and X): {same}")
            p, o = best["plink1.9 VCF route"], best["dpselect"]
            print(f"ratios dpselect / PLINK VCF route: CPU {o['cpu'] / p['cpu']:.2f}, wall {o['wall'] / p['wall']:.2f}")


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].isdigit() else ""
    if mode in ("vcf", "vcf-gatk"):
        main_vcf(int(sys.argv[2]) if len(sys.argv) > 2 else 20_000, gatk=mode == "vcf-gatk")
        return
    if mode == "select":
        from _gwas_select import main_select

        with tempfile.TemporaryDirectory() as tmp:
            main_select([int(a) for a in sys.argv[2:]] or [100_000], tmp)
        return
    if mode in ("cc", "threads"):
        from _gwas_cc import main_cc, main_threads

        with tempfile.TemporaryDirectory() as tmp:
            if mode == "cc":
                main_cc(int(sys.argv[2]) if len(sys.argv) > 2 else 50_000, tmp)
            else:
                main_threads(int(sys.argv[2]) if len(sys.argv) > 2 else 200_000, tmp, _cohort)
        return
    sizes = [int(a) for a in sys.argv[1:]] or [50_000, 200_000]
    plink = shutil.which("plink1.9") or shutil.which("plink")
    if plink is None or not Path("/usr/bin/time").exists():
        print("plink1.9 (Debian package plink1.9) or /usr/bin/time not found: only dpselect is timed")
    n_ind = 3 * N_TRIOS
    chunk_mb = CHUNK * ((n_ind + 3) // 4) / 2**20
    print(f"{N_TRIOS} trios ({n_ind} individuals), chunk {CHUNK} SNPs = {chunk_mb:.1f} MiB of .bed bytes")
    print(f"{'SNPs':>9} {'tool':<26}{'wall s':>8}{'CPU s':>8}{'SNPs/s (wall)':>15}{'SNPs/s (CPU)':>14}  memory")
    for m in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            prefix = _cohort(m, tmp)
            ref = None
            if plink is not None and Path("/usr/bin/time").exists():
                p, ref = _plink(plink, prefix)
                print(
                    f"{m:>9} {'plink1.9 --tdt':<26}{p['wall']:>8.2f}{p['cpu']:>8.2f}{m / p['wall']:>15,.0f}"
                    f"{m / p['cpu']:>14,.0f}  peak RSS {p['rss_peak_mb']:.0f} MiB"
                )
            o, got = _ours(prefix, CHUNK)
            print(
                f"{m:>9} {'dpselect (Dask threads)':<26}{o['wall']:>8.2f}{o['cpu']:>8.2f}{m / o['wall']:>15,.0f}"
                f"{m / o['cpu']:>14,.0f}  peak RSS growth {o['rss_growth_mb']:.0f} MiB "
                f"= {o['rss_growth_mb'] / chunk_mb:.1f} chunks (process peak {o['rss_peak_mb']:.0f} MiB)"
            )
            print(
                f"{m:>9} {'':<26}peak growth {'from VmHWM' if o['hwm'] else 'sampled'}"
                f" (sampled every 5 ms: {o['rss_sampled_mb']:.0f} MiB); of it the result held "
                f"{o['result_mb']:.1f} MiB, work {(o['rss_growth_mb'] - o['result_mb']) / chunk_mb:.1f} chunks"
            )
            if ref is not None:
                same = ref.shape == got.shape and bool((ref == got).all())
                print(f"{m:>9} counts identical to PLINK's T/U (autosomes and X): {same}")
                if p["cpu"] > 0:
                    print(
                        f"{m:>9} ratios dpselect / PLINK: CPU {o['cpu'] / p['cpu']:.2f}, "
                        f"wall {o['wall'] / p['wall']:.2f}"
                    )


if __name__ == "__main__":
    main()
