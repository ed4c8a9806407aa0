"""VCF/BCF + pedigree -> TDT counts (dpselect.apps.genomics) against the per-trio reference and the PLINK reader."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

pytest.importorskip("cyvcf2", reason="VCF/BCF input needs the optional dependency cyvcf2 (pip install cyvcf2)")
from bed_reader import open_bed

from dpselect.apps.genomics import simulate_trios, transmission_counts
from test_gwas import _reference

HEADER = (
    "##fileformat=VCFv4.2\n##contig=<ID=1>\n"
    '##FORMAT=<ID=GT,Number=1,Type=String,Description="Genotype">\n'
    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t"
)


def _line(chrom, pos, sid, ref, alt, calls):
    return f"{chrom}\t{pos}\t{sid}\t{ref}\t{alt}\t.\t.\t.\tGT\t" + "\t".join(calls) + "\n"


def write_vcf(prefix, out, *, rng=0, multiallelic=False):
    """Write the genotypes of a PLINK fileset as a text VCF (REF = .bim A2, ALT = .bim A1).

    Calls are written in random spellings (unphased / phased, both orders; a
    missing call as ``./.``, ``.``, ``./1`` or ``.|0``), and with
    ``multiallelic`` an extra tri-allelic site follows every third SNP.
    Samples are written in reverse .fam order (the reader must match names).
    """
    gen = np.random.default_rng(rng)
    with open_bed(str(prefix) + ".bed", count_A1=True) as bed:
        g, iid = bed.read(dtype="float64"), list(bed.iid)
        sid, a1, a2, pos = bed.sid, bed.allele_1, bed.allele_2, bed.bp_position
    order = np.arange(len(iid))[::-1]
    spell = {0: ["0/0", "0|0"], 1: ["0/1", "1/0", "0|1", "1|0"], 2: ["1/1", "1|1"], -1: ["./.", ".", "./1", ".|0"]}
    lines = [HEADER + "\t".join(iid[i] for i in order) + "\n"]
    for j in range(g.shape[1]):
        codes = np.nan_to_num(g[order, j], nan=-1).astype(int)
        lines.append(_line(1, pos[j], sid[j], a2[j], a1[j], [gen.choice(spell[k]) for k in codes]))
        if multiallelic and j % 3 == 0:
            lines.append(_line(1, pos[j], f"multi{j}", "C", "A,T", [gen.choice(["0/1", "1/2", "0/0"]) for _ in order]))
    text = "".join(lines)
    if str(out).endswith(".gz"):
        with gzip.open(out, "wt") as f:  # plain gzip: htslib reads it too
            f.write(text)
    else:
        with open(out, "w") as f:
            f.write(text)
    return out


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    d = tmp_path_factory.mktemp("vcf")
    prefix = d / "cohort"
    simulate_trios(prefix, 40, 23, causal=[2, 9], effect=0.85, missing_rate=0.05, error_rate=0.1, rng=4)
    return prefix, write_vcf(prefix, d / "cohort.vcf")


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_vcf_counts_equal_reference_and_plink_reader(cohort, chunk):
    prefix, vcf = cohort
    got = transmission_counts(vcf, pedigree=str(prefix) + ".fam", chunk_snps=chunk)
    b, c, err, n, sid = _reference(prefix)
    np.testing.assert_array_equal(got.b, b)
    np.testing.assert_array_equal(got.c, c)
    np.testing.assert_array_equal(got.mendel_errors, err)
    assert got.n_families == n == 40 and list(got.snp_ids) == list(sid)
    assert err.sum() > 0 and b.sum() > 0 and c.sum() > 0
    plink = transmission_counts(prefix)
    for name in ("b", "c", "mendel_errors", "snp_ids"):
        np.testing.assert_array_equal(getattr(got, name), getattr(plink, name))
    # all trios, not only the affected ones: the same trios here (every simulated child is affected)
    assert transmission_counts(vcf, pedigree=str(prefix) + ".fam", affected_only=False).b.tolist() == b.tolist()


def test_compressed_vcf_and_bcf_give_the_same_counts(cohort, tmp_path):
    from cyvcf2 import VCF, Writer

    prefix, vcf = cohort
    want = transmission_counts(prefix)
    gz = write_vcf(prefix, tmp_path / "plain-gzip.vcf.gz")
    paths = [gz]
    for name, mode in (("bgzf.vcf.gz", "wz"), ("cohort.bcf", "wb")):
        src = VCF(str(vcf))
        w = Writer(str(tmp_path / name), src, mode=mode)
        for v in src:
            w.write_record(v)
        w.close()
        src.close()
        paths.append(tmp_path / name)
    for path in paths:
        got = transmission_counts(path, pedigree=str(prefix) + ".fam", chunk_snps=5)
        np.testing.assert_array_equal(got.b, want.b)
        np.testing.assert_array_equal(got.c, want.c)
        np.testing.assert_array_equal(got.mendel_errors, want.mendel_errors)


def test_multiallelic_sites_are_skipped_with_a_warning(cohort, tmp_path):
    prefix, _ = cohort
    vcf = write_vcf(prefix, tmp_path / "multi.vcf", multiallelic=True, rng=1)
    with pytest.warns(UserWarning, match=r"skipped 8 multi-allelic site"):
        got = transmission_counts(vcf, pedigree=str(prefix) + ".fam", chunk_snps=4)
    want = transmission_counts(prefix)
    np.testing.assert_array_equal(got.b, want.b)
    np.testing.assert_array_equal(got.c, want.c)
    np.testing.assert_array_equal(got.snp_ids, want.snp_ids)


def test_hand_made_vcf(tmp_path):
    # Pedigree: trio A (affected), trio B (unaffected child), a second affected child of A's parents,
    # an orphan child (mother absent). Allele 1 = ALT.
    ped = tmp_path / "p.ped"
    ped.write_text(
        "A fa 0 0 1 1 G G\nA mo 0 0 2 1 G G\nA k1 fa mo 1 2 G G\nB fb 0 0 1 1 G G\n"
        "B mb 0 0 2 1 G G\nB kb fb mb 1 1 G G\nA k2 fa mo 2 2 G G\nC orphan fa x 1 2 G G\n"
    )
    samples = ["k2", "extra", "orphan", "kb", "mb", "fb", "k1", "mo", "fa"]
    rows = [  # calls in the order of `samples`
        ("s1", "G", "A", ["0/0", "0/0", "1/1", "1/1", "0/1", "0/1", "1/1", "0/1", "0/1"]),  # A: het x het -> 2
        ("s2", "G", "A", ["0/0", "0/0", "1/1", "0/0", "0/1", "0/1", "1|1", "1/1", "0/1"]),  # A: fa het sent A
        ("s3", "G", "A", ["0/0", "0/0", "0/0", "0/0", "0/0", "0/0", "0/0", "1/1", "1/1"]),  # A: Mendel error
        ("s4", "G", "A", ["0/0", "0/0", "0/0", "0/0", "0/0", "0/0", "1/1", "0/1", "./1"]),  # A: half-missing
        ("s5", "G", "A", ["0/0", "0/0", "0/0", "0/0", "0/0", "0/0", "1", "0/1", "0/1"]),  # A: haploid child
        ("s6", "G", ".", ["0/0"] * 9),  # no ALT: nothing to count
        ("s7", "G", "A", ["0/0", "0/0", "0/0", "0/0", "0/0", "0/0", "0/1", "0/1", "0/1"]),  # A: one of each
    ]
    vcf = tmp_path / "h.vcf"
    vcf.write_text(
        HEADER
        + "\t".join(samples)
        + "\n"
        + "".join(_line(1, j + 1, sid, r, a, calls) for j, (sid, r, a, calls) in enumerate(rows))
    )
    got = transmission_counts(vcf, pedigree=ped, chunk_snps=3)
    assert got.n_families == 1 and list(got.snp_ids) == [r[0] for r in rows]
    assert got.b.tolist() == [2, 1, 0, 0, 0, 0, 1]
    assert got.c.tolist() == [0, 0, 0, 0, 0, 0, 1]
    assert got.mendel_errors.tolist() == [0, 0, 1, 0, 0, 0, 0]
    both = transmission_counts(vcf, pedigree=ped, affected_only=False)  # trio B joins (s1: 2 x A, s2: 2 x G)
    assert both.n_families == 2
    assert both.b.tolist() == [4, 1, 0, 0, 0, 0, 1] and both.c.tolist() == [0, 2, 0, 0, 0, 0, 1]
    assert both.mendel_errors.tolist() == [0, 0, 1, 0, 0, 0, 0]


def test_bad_inputs_name_the_argument(cohort, tmp_path):
    prefix, vcf = cohort
    fam = str(prefix) + ".fam"
    with pytest.raises(ValueError, match="pedigree"):
        transmission_counts(vcf)
    with pytest.raises(ValueError, match="pedigree: only for VCF"):
        transmission_counts(prefix, pedigree=fam)
    with pytest.raises(ValueError, match="scheduler"):
        transmission_counts(vcf, pedigree=fam, scheduler="threads")
    with pytest.raises(ValueError, match="chunk_snps"):
        transmission_counts(vcf, pedigree=fam, chunk_snps=0)
    junk = tmp_path / "junk.vcf"
    junk.write_bytes(b"\x00\x01 this is not a VCF\n")
    with pytest.raises(ValueError, match=r"path: .* not a readable VCF"):
        transmission_counts(junk, pedigree=fam)
    with pytest.raises(FileNotFoundError, match="path"):
        transmission_counts(tmp_path / "absent.vcf", pedigree=fam)
    with pytest.raises(FileNotFoundError, match="pedigree"):
        transmission_counts(vcf, pedigree=tmp_path / "absent.fam")
    with pytest.raises(TypeError, match="pedigree"):
        transmission_counts(vcf, pedigree=3)
    text = tmp_path / "text.vcf"
    text.write_text("hello\nnot a VCF\n")
    with pytest.raises(ValueError, match=r"path: .* not a readable VCF"):
        transmission_counts(text, pedigree=fam)
    nogt = tmp_path / "nogt.vcf"
    nogt.write_text(open(vcf).read().replace("\tGT\t", "\tXX\t"))
    with pytest.raises(ValueError, match=r"path: variant 'rs0' .* no GT"):
        transmission_counts(nogt, pedigree=fam)
    extra = tmp_path / "extra.fam"
    extra.write_text(open(fam).read() + "Z ghost 0 0 1 1\n")
    with pytest.raises(ValueError, match="pedigree: some trio members' individual ids are not sample names") as info:
        transmission_counts(vcf, pedigree=extra)
    assert "ghost" not in str(info.value)
    dup = tmp_path / "dup.fam"
    dup.write_text(open(fam).read() + "Z F0_fa 0 0 1 1\n")
    n_rows = len(open(fam).read().splitlines())
    with pytest.raises(ValueError, match=f"pedigree: .* rows 1 and {n_rows + 1} have the same individual id") as info:
        transmission_counts(vcf, pedigree=dup)
    assert "F0_fa" not in str(info.value)
    short = tmp_path / "short.fam"
    short.write_text("F a 0 0 1\n")
    with pytest.raises(ValueError, match=r"pedigree: .* row 1 has 5 columns"):
        transmission_counts(vcf, pedigree=short)
    unaffected = tmp_path / "unaffected.fam"
    unaffected.write_text(open(fam).read().replace("\t2\n", "\t1\n"))
    with pytest.raises(ValueError, match=r"pedigree: .* no complete affected trio"):
        transmission_counts(vcf, pedigree=unaffected)


def test_chrx_haploid_male_calls_and_y_skipped(tmp_path):
    # one trio with a son: on X his haploid call is his mother's allele; the father adds nothing
    ped = tmp_path / "x.fam"
    ped.write_text("F fa 0 0 1 1\nF mo 0 0 2 1\nF son fa mo 1 2\n")
    rows = [
        ("X", "x1", ["1", "0/1", "1"]),  # mother het, son received A -> b
        ("chrX", "x2", ["1", "0/1", "0"]),  # son received G -> c (autosomal rule: a Mendel error)
        ("23", "x3", ["0", "0/0", "1"]),  # son has A, mother cannot give it: Mendel error
        ("1", "a1", ["0/1", "0/1", "1"]),  # haploid call on an autosome: missing
        ("Y", "y1", ["1", "0/0", "1"]),
    ]
    vcf = tmp_path / "x.vcf"
    vcf.write_text(
        HEADER
        + "fa\tmo\tson\n"
        + "".join(_line(c, j + 1, sid, "G", "A", calls) for j, (c, sid, calls) in enumerate(rows))
    )
    with pytest.warns(UserWarning, match=r"skipped 1 site\(s\) on Y / MT"):
        got = transmission_counts(vcf, pedigree=ped)
    assert list(got.snp_ids) == ["x1", "x2", "x3", "a1"]
    assert got.b.tolist() == [1, 0, 0, 0] and got.c.tolist() == [0, 1, 0, 0]
    assert got.mendel_errors.tolist() == [0, 0, 1, 0]
    assert got.annotations([0])[0] == ("X", "x1", 1, "A", "G")


def test_bed_and_vcf_agree_on_x_with_mixed_sexes(tmp_path):
    prefix = tmp_path / "mx"
    simulate_trios(prefix, 60, 40, x_snps=20, child_sex="mixed", missing_rate=0.03, error_rate=0.05, rng=8)
    vcf = write_vcf(prefix, tmp_path / "mx.vcf")
    vcf.write_text(vcf.read_text().replace("\n1\t", "\n23\t"))  # every site on X in the VCF ...
    bim = prefix.with_suffix(".bim")
    bim.write_text(bim.read_text().replace("1\t", "23\t"))  # ... and in the fileset
    got = transmission_counts(vcf, pedigree=str(prefix) + ".fam")
    want = transmission_counts(prefix)
    for name in ("b", "c", "mendel_errors"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))


def test_sample_mismatch_is_reported_from_the_header_before_any_site(tmp_path):
    ped = tmp_path / "p.fam"
    ped.write_text("F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo 1 2\n")
    vcf = tmp_path / "m.vcf"
    # the body is garbage: a reader that parsed a site before checking the names would fail differently
    vcf.write_text(HEADER + "fa\tmo\tkid\n" + "1\tnot a site\n" * 3)
    with pytest.raises(ValueError, match=r"pedigree: some trio members' individual ids are not sample names"):
        transmission_counts(vcf, pedigree=ped)


def _bgzf_block(payload):
    """One BGZF block (SAM/BAM spec 4.1): a gzip member with the BC extra field holding its size - 1."""
    import struct
    import zlib

    comp = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = comp.compress(payload) + comp.flush()
    head = struct.pack("<4BI2BH2BHH", 31, 139, 8, 4, 0, 0, 255, 6, 66, 67, 2, len(body) + 25)
    return head + body + struct.pack("<II", zlib.crc32(payload), len(payload))


def test_truncated_vcf_gz_is_one_named_error(cohort, tmp_path):
    prefix, _ = cohort
    lines = write_vcf(prefix, tmp_path / "full.vcf").read_text().splitlines(keepends=True)
    # one BGZF block per line (what bgzip writes): cutting the file mid-way leaves a readable header
    data = b"".join(_bgzf_block(line.encode()) for line in lines) + _bgzf_block(b"")
    cut = tmp_path / "cut.vcf.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ValueError, match=r"path: .*cut.vcf.gz' is truncated or corrupt after variant") as err:
        transmission_counts(cut, pedigree=str(prefix) + ".fam")
    assert "\n" not in str(err.value)
