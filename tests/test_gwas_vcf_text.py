"""The vectorised VCF text parser against htslib (cyvcf2), the .bed reader and PLINK's VCF import.

The fixed-width path must give exactly htslib's codes on every line it takes
and leave every other line to htslib (never guess): checked on simulated
cohorts written with 3-byte calls, haploid male calls on X, ``GT:DP`` lines
and multi-allelic sites, on random fields from a wide alphabet, across chunk
and BGZF block boundaries.
"""

from __future__ import annotations

import gzip
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

pytest.importorskip("cyvcf2", reason="VCF/BCF input needs the optional dependency cyvcf2 (pip install cyvcf2)")

from dpselect.apps.genomics import simulate_trios, transmission_counts
from dpselect.apps.genomics._io import _textstream, _vcftext
from dpselect.apps.genomics._io._vcf import _htslib_sites, _text_sites, read_pedigree

PLINK = shutil.which("plink1.9") or shutil.which("plink")
HEADER = (
    "##fileformat=VCFv4.2\n##contig=<ID=1>\n##contig=<ID=23>\n"
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
    '##FORMAT=<ID=DP,Number=1,Type=Integer,Description="Depth">\n'
    '##FORMAT=<ID=AD,Number=R,Type=Integer,Description="Allelic depths">\n'
    '##FORMAT=<ID=GQ,Number=1,Type=Integer,Description="Genotype quality">\n'
    '##FORMAT=<ID=PL,Number=G,Type=Integer,Description="Phred-scaled likelihoods">\n'
    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t"
)
#: 3-byte spellings by PLINK code (00 two A1 = ALT, 01 missing, 10 one, 11 none).
SPELL = {0: ["1/1", "1|1"], 1: ["./.", ".|.", "./1", "1|.", ".|0"], 2: ["0/1", "1/0", "0|1", "1|0"], 3: ["0/0", "0|0"]}
HAPLOID = {0: "1", 1: ".", 3: "0"}


def _bgzf_block(payload):
    comp = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = comp.compress(payload) + comp.flush()
    head = struct.pack("<4BI2BH2BHH", 31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, len(body) + 25)
    return head + body + struct.pack("<II", zlib.crc32(payload), len(payload))


def bgzf(text, block=1000, eof=True):
    data = b"".join(_bgzf_block(text[a : a + block]) for a in range(0, len(text), block))
    return data + (_bgzf_block(b"") if eof else b"")


def write_cohort_vcf(prefix, rng=0, odd_every=0, multi_every=0, haploid_x=True):
    """VCF text (bytes) of a fileset: random 3-byte spellings; males' homozygous X calls haploid.

    Every ``odd_every``-th site is written with FORMAT ``GT:DP`` or GATK's
    ``GT:AD:DP:GQ:PL`` (same calls), and a tri-allelic site follows every ``multi_every``-th
    site.  Returns (text, number of lines the fixed-width path must leave).
    """
    gen = np.random.default_rng(rng)
    fam = [r.split() for r in prefix.with_suffix(".fam").read_text().splitlines()]
    bim = [r.split() for r in prefix.with_suffix(".bim").read_text().splitlines()]
    n = len(fam)
    bed = np.frombuffer(prefix.with_suffix(".bed").read_bytes()[3:], dtype=np.uint8).reshape(len(bim), -1)
    codes = ((bed[:, :, None] >> np.array([0, 2, 4, 6], dtype=np.uint8)) & 3).reshape(len(bim), -1)[:, :n]
    male = [r[4] == "1" for r in fam]
    lines, slow = [HEADER + "\t".join(r[1] for r in fam) + "\n"], 0
    for j, (chrom, sid, _, pos, a1, a2) in enumerate(bim):
        calls = [
            HAPLOID[k] if haploid_x and chrom == "23" and male[i] and k != 2 else str(gen.choice(SPELL[k]))
            for i, k in enumerate(codes[j])
        ]
        fmt = "GT"
        if odd_every and j % odd_every == 0 and j % (2 * odd_every) == 0:
            fmt, calls = "GT:DP", [c + f":{gen.integers(1, 40)}" for c in calls]
        elif odd_every and j % odd_every == 0:  # GATK style; a missing call may drop the trailing fields
            fmt = "GT:AD:DP:GQ:PL"
            calls = [
                c
                if c[0] == "." and gen.random() < 0.5
                else c + f":{gen.integers(0, 30)},{gen.integers(0, 30)}:{gen.integers(1, 60)}:99:0,30,300"
                for c in calls
            ]
        slow += any(len(c.split(":")[0]) not in (1, 3) for c in calls)  # (none here: haploid calls are read)
        lines.append(f"{chrom}\t{pos}\t{sid}\t{a2}\t{a1}\t.\t.\t.\t{fmt}\t" + "\t".join(calls) + "\n")
        if multi_every and j % multi_every == 0:
            lines.append(f"1\t{pos}\tmulti{j}\tC\tA,T\t.\t.\t.\tGT\t" + "\t".join(["0/1"] * n) + "\n")
    return "".join(lines).encode(), slow


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    d = tmp_path_factory.mktemp("vcftext")
    prefix = d / "mx"
    simulate_trios(
        prefix, 80, 90, causal=[4], effect=0.8, missing_rate=0.05, error_rate=0.05, x_snps=30, child_sex="mixed", rng=3
    )
    return prefix


def _sites(path, fam, reader, monkeypatch=None):
    ped = read_pedigree(fam)
    from dpselect.apps.genomics._io._pedigree import trios

    rows = trios(ped)
    ids = ped[:, 1].astype(str)
    members = ids[rows[:, [1, 2, 0]].T.ravel()]
    blocks = list(reader(path, ids, members))
    return blocks, np.concatenate([b.codes for b in blocks])


@pytest.mark.parametrize("form", ["plain", "gzip", "bgzf"])
def test_text_path_equals_bed_and_htslib_with_x_odd_formats_and_multiallelic(cohort, tmp_path, form, monkeypatch):
    monkeypatch.setattr(_textstream, "CHUNK_BYTES", 5000)  # many chunks: lines cut at chunk ends
    monkeypatch.setattr(_textstream, "_READ_BYTES", 3000)  # and at read ends, across BGZF blocks
    monkeypatch.setattr(_vcftext, "_LONG_LINE", 1 if form == "gzip" else 10**9)  # line ends by find / NumPy
    text, slow = write_cohort_vcf(cohort, odd_every=7, multi_every=11)
    path = tmp_path / ("c.vcf" if form == "plain" else "c.vcf.gz")
    path.write_bytes(text if form == "plain" else gzip.compress(text) if form == "gzip" else bgzf(text))
    fam = cohort.with_suffix(".fam")
    with pytest.warns(UserWarning, match=r"skipped 9 multi-allelic site"):
        got = transmission_counts(path, pedigree=fam)
    want = transmission_counts(cohort)
    for name in ("b", "c", "mendel_errors", "snp_ids", "chrom", "pos", "a1", "a2"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert (got.chrom == "23").sum() == 30 and got.b[got.chrom == "23"].sum() > 0
    # the fixed-width path took every line it could; htslib read the others, with identical codes
    blocks, fast = _sites(path, fam, _text_sites)
    assert sum(b.fallback for b in blocks) == slow == 0  # multi-allelic: fast, skipped
    _, ref = _sites(path, fam, _htslib_sites)
    np.testing.assert_array_equal(fast, ref)


@pytest.mark.parametrize("fmt", ["GT", "GT:AD:DP"])
def test_random_fields_are_read_as_htslib_reads_them(tmp_path, fmt):
    # one trio, 400 sites on 1 and X; each call drawn from valid 3-byte spellings and odd ones (with GT:AD:DP,
    # followed by its other fields or not)
    gen = np.random.default_rng(5 if fmt == "GT" else 6)
    odd = ["1", "0", ".", "0/1/1", "00/1", "0/01", "1/1/.", "./1/0"]
    fixed = [s for spellings in SPELL.values() for s in spellings]
    fam = tmp_path / "t.fam"
    fam.write_text("F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo 1 2\nG x 0 0 2 1\n")
    lines = [HEADER + "x\tch\tmo\tfa\n"]
    for j in range(400):
        pool = fixed if gen.random() < 0.6 else fixed + odd
        calls = [str(gen.choice(pool)) for _ in range(4)]
        if fmt != "GT":
            calls = [
                c + (f":{gen.integers(9)},{gen.integers(9)}:{gen.integers(20)}" if gen.random() < 0.8 else "")
                for c in calls
            ]
        lines.append(f"{'23' if j % 3 == 0 else '1'}\t{j + 1}\t.\tG\tA\t.\t.\t.\t{fmt}\t" + "\t".join(calls) + "\n")
    path = tmp_path / "r.vcf"
    path.write_text("".join(lines))
    blocks, fast = _sites(path, fam, _text_sites)
    _, ref = _sites(path, fam, _htslib_sites)
    np.testing.assert_array_equal(fast, ref)
    n_fast = 400 - sum(b.fallback for b in blocks)
    assert 100 < n_fast < 400
    assert list(np.concatenate([b.sid for b in blocks])[:2]) == ["23:1", "1:2"]  # ID '.' named CHROM:POS
    got = transmission_counts(path, pedigree=fam)
    assert got.b.size == 400 and got.mendel_errors.sum() > 0


@pytest.mark.parametrize("inflater", ["isal", "zlib"])
def test_bgzf_damage_is_a_named_error_or_warning(cohort, tmp_path, inflater, monkeypatch):
    if inflater == "isal":
        pytest.importorskip("isal")
    else:  # isal not installed: the standard library's zlib inflates
        monkeypatch.setattr(_textstream, "_inflater", lambda: (zlib, (zlib.error,)))
    text, _ = write_cohort_vcf(cohort)
    whole = tmp_path / "whole.vcf.gz"
    whole.write_bytes(bgzf(text, block=20000))
    assert b"".join(_textstream.text_chunks(whole)) == text
    fam = cohort.with_suffix(".fam")
    noeof = tmp_path / "noeof.vcf.gz"
    noeof.write_bytes(bgzf(text, eof=False))
    with pytest.warns(UserWarning, match="no BGZF end-of-file block"):
        transmission_counts(noeof, pedigree=fam)
    data = bytearray(bgzf(text, block=20000))
    data[len(data) // 2] ^= 0xFF  # inside a deflate stream (or its CRC)
    bad = tmp_path / "bad.vcf.gz"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"path: .*bad.vcf.gz' is truncated or corrupt after variant"):
        transmission_counts(bad, pedigree=fam)
    cut = tmp_path / "cut.vcf.gz"
    cut.write_bytes(gzip.compress(text)[:-100])
    with pytest.raises(ValueError, match=r"path: .*cut.vcf.gz' is truncated or corrupt after variant .*gzip"):
        transmission_counts(cut, pedigree=fam)


def test_duplicate_sample_name_is_refused_from_the_header(tmp_path):
    fam = tmp_path / "t.fam"
    fam.write_text("F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo 1 2\n")
    path = tmp_path / "d.vcf"
    path.write_text(HEADER + "fa\tmo\tch\tmo\n" + "1\tnot a site\n")
    with pytest.raises(ValueError, match=r"path: .* header names one sample twice \(sample columns 2 and 4\)") as info:
        transmission_counts(path, pedigree=fam)
    assert "'mo'" not in str(info.value)


def test_progress_line_for_vcf(cohort, tmp_path, capsys, monkeypatch):
    from dpselect.apps.genomics._io import _progress

    monkeypatch.setattr(_progress, "_EVERY", 0.0)  # off a terminal: a line per interval, here per chunk
    monkeypatch.setattr(_textstream, "CHUNK_BYTES", 20000)
    monkeypatch.setattr(_textstream, "_READ_BYTES", 20000)
    path = tmp_path / "p.vcf"
    path.write_bytes(write_cohort_vcf(cohort)[0])
    transmission_counts(path, pedigree=cohort.with_suffix(".fam"), progress=True)
    err = capsys.readouterr().err.splitlines()
    assert len(err) > 2 and err[-1].startswith("reading VCF: 90 sites, ")  # a stream: the total is unknown


@pytest.mark.skipif(PLINK is None, reason="plink1.9 not installed (Debian package plink1.9)")
def test_equals_plink_vcf_import_then_tdt(cohort, tmp_path):
    # PLINK's own VCF route: --vcf import (ALT becomes A1; a half-call such as ./1 missing, as ours), the
    # pedigree .fam, --tdt --keep-allele-order
    path = tmp_path / "c.vcf.gz"
    path.write_bytes(bgzf(write_cohort_vcf(cohort, rng=2)[0], block=0xFF00))
    out = tmp_path / "imported"
    for args in (
        ["--vcf", str(path), "--double-id", "--vcf-half-call", "missing", "--keep-allele-order", "--make-bed"],
        ["--bfile", str(out), "--tdt", "--keep-allele-order"],
    ):
        run = subprocess.run([PLINK, *args, "--out", str(out)], capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr
        shutil.copyfile(cohort.with_suffix(".fam"), out.with_suffix(".fam"))
    rows = [r.split() for r in out.with_suffix(".tdt").read_text().splitlines()[1:]]
    got = transmission_counts(path, pedigree=cohort.with_suffix(".fam"))
    assert list(got.snp_ids) == [r[1] for r in rows]
    np.testing.assert_array_equal(got.b, [int(r[5]) for r in rows])
    np.testing.assert_array_equal(got.c, [int(r[6]) for r in rows])
    assert list(got.a1[:3]) == [r[3] for r in rows[:3]]  # PLINK's A1 is the VCF's ALT


@pytest.mark.parametrize("last", ["0\t0/1\t1", "1\t0/1\t0", "1\t0\t1", "0/1\t1/1\t.", "1\t0/1:3\t1", "0/1\t0\t1|1"])
def test_short_fields_at_the_end_of_the_file_read_as_htslib(tmp_path, last):
    # the last fields of a chunk (haploid X calls, 1 byte) sit in its last 4 bytes: read exactly, not clipped
    fam = tmp_path / "t.fam"
    fam.write_text("F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo 1 2\n")
    fmt = "GT:DP" if ":" in last else "GT"
    path = tmp_path / "e.vcf"
    path.write_text(HEADER + f"fa\tmo\tch\n23\t5\tr\tG\tA\t.\t.\t.\t{fmt}\t{last}\n")
    blocks, fast = _sites(path, fam, _text_sites)
    _, ref = _sites(path, fam, _htslib_sites)
    np.testing.assert_array_equal(fast, ref)
    assert sum(b.fallback for b in blocks) == 0
