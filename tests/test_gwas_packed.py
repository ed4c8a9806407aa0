"""The packed-byte TDT kernel against the decode-based kernel, PLINK 1.9 and hand-checked chrX rules."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from dpselect.apps.genomics import simulate_trios, transmission_counts
from dpselect.apps.genomics._io._packed import CODE_COPIES, TrioPlan, count_codes, count_packed, trio_contribution
from dpselect.apps.genomics._io._vcftext import allele_codes

PLINK = shutil.which("plink1.9") or shutil.which("plink")
needs_plink = pytest.mark.skipif(
    PLINK is None,
    reason="plink1.9 not installed (Debian package plink1.9; .ci/run installs it): PLINK comparisons skipped",
)


def count_trios(g: np.ndarray) -> np.ndarray:
    """Decode-based autosomal kernel, the reference: (3, n_trios, k) int8 allele-1 copies (child, father,
    mother; < 0 = missing) -> (3, k) int64 rows b, c and Mendel errors."""
    kid, fa, mo = g
    called = (kid >= 0) & (fa >= 0) & (mo >= 0)
    het = (fa == 1).view(np.int8) + (mo == 1).view(np.int8)
    x = kid - (fa == 2).view(np.int8) - (mo == 2).view(np.int8)
    ok = called & (x >= 0) & (x <= het)
    b = np.where(ok, x, 0).sum(axis=0, dtype=np.int64)
    c = np.where(ok, het - x, 0).sum(axis=0, dtype=np.int64)
    return np.stack([b, c, (called & ~ok).sum(axis=0, dtype=np.int64)])


def _decode(records: np.ndarray, n_ind: int) -> np.ndarray:
    """(k, bytes) SNP-major .bed records -> (n_ind, k) int8 copies of A1, -1 missing (plain bit arithmetic)."""
    i = np.arange(n_ind)
    codes = (records[:, i // 4] >> (2 * (i % 4))) & 3  # (k, n_ind)
    return np.array([2, -1, 1, 0], dtype=np.int8)[codes].T


@pytest.mark.parametrize("n_trios,k,seed", [(1, 5, 0), (7, 33, 1), (600, 40, 2), (1100, 9, 3)])
def test_packed_kernel_equals_decode_kernel_on_random_bytes(n_trios, k, seed):
    # uniformly random bytes: every code combination, missing calls and Mendel errors all occur
    rng = np.random.default_rng(seed)
    n_ind = 3 * n_trios + 2  # two individuals outside any trio
    records = rng.integers(0, 256, size=(k, (n_ind + 3) // 4), dtype=np.uint8)
    rows = rng.permutation(n_ind)[: 3 * n_trios].reshape(n_trios, 3)
    got = count_packed(records, TrioPlan.from_rows(rows, np.zeros(n_trios, dtype=bool)))
    g = _decode(records, n_ind)
    want = count_trios(np.stack([g[rows[:, 0]], g[rows[:, 1]], g[rows[:, 2]]]))
    np.testing.assert_array_equal(got, want)
    assert want[2].sum() > 0 and (want[0] + want[1]).sum() > 0


def test_packed_kernel_chrx_equals_per_trio_rule_and_dosage_kernel():
    rng = np.random.default_rng(5)
    n_trios, k = 300, 50
    n_ind = 3 * n_trios
    records = rng.integers(0, 256, size=(k, (n_ind + 3) // 4), dtype=np.uint8)
    rows = rng.permutation(n_ind).reshape(n_trios, 3)
    male = rng.random(n_trios) < 0.5
    x_mask = rng.random(k) < 0.5
    got = count_packed(records, TrioPlan.from_rows(rows, male), x_mask)
    g = _decode(records, n_ind)
    want = np.zeros((3, k), dtype=np.int64)
    for j in range(k):
        for t, (ch, fa, mo) in enumerate(rows):
            codes = [3 if g[i, j] < 0 else int(g[i, j]) for i in (fa, mo, ch)]
            want[:, j] += trio_contribution(*codes, male_x=bool(male[t] and x_mask[j]))
    np.testing.assert_array_equal(got, want)
    # the VCF readers' route: allele indices (diploid; -1 missing) -> PLINK codes -> the same table kernel
    d = np.stack([g[rows[:, 1]], g[rows[:, 2]], g[rows[:, 0]]]).transpose(2, 0, 1).reshape(k, 3 * n_trios)
    alleles_a = np.where(d < 0, -1, (d >= 1).astype(np.int16))
    alleles_b = np.where(d < 0, -1, (d == 2).astype(np.int16))
    codes = allele_codes(alleles_a, alleles_b, np.zeros(d.shape, dtype=bool), x_mask[:, None]).T
    male64 = np.where(male, 64, 0).astype(np.uint8)[:, None]
    got_vcf = count_codes(codes[:n_trios].copy(), codes[n_trios : 2 * n_trios], codes[2 * n_trios :], male64, x_mask)
    np.testing.assert_array_equal(got_vcf, want)


def test_chrx_male_rule_by_hand():
    # son of a heterozygous mother: his (homozygous) call is her transmitted allele; the father adds nothing
    assert trio_contribution(0, 1, 2, male_x=True) == (1, 0, 0)  # autosomal rule: a Mendel error
    assert trio_contribution(2, 1, 0, male_x=True) == (0, 1, 0)
    assert trio_contribution(2, 1, 2, male_x=True) == (1, 0, 0)
    assert trio_contribution(0, 0, 2, male_x=True) == (0, 0, 1)  # no A1 to receive from his mother
    assert trio_contribution(0, 1, 2) == (0, 0, 1)
    assert trio_contribution(1, 1, 3, male_x=True) == (0, 0, 0)  # missing
    assert CODE_COPIES == (2, 3, 1, 0)


def _write_one_trio_per_combination(prefix, chrom, child_sex):
    """A fileset with one trio and one SNP per (father, mother, child) code combination (64 SNPs)."""
    combos = list(itertools.product(range(4), repeat=3))
    code = {0: 0b11, 1: 0b10, 2: 0b00, 3: 0b01}
    prefix.with_suffix(".fam").write_text(f"F fa 0 0 1 1\nF mo 0 0 2 1\nF ch fa mo {child_sex} 2\n")
    prefix.with_suffix(".bim").write_text("".join(f"{chrom}\tr{i}\t0\t{i + 1}\tA\tG\n" for i in range(len(combos))))
    body = bytes(code[f] | code[m] << 2 | code[c] << 4 for f, m, c in combos)
    prefix.with_suffix(".bed").write_bytes(bytes((0x6C, 0x1B, 0x01)) + body)
    return combos


def _plink_tu(prefix, tmp_path, *extra):
    out = tmp_path / ("plink_" + prefix.name)
    run = subprocess.run(
        [PLINK, "--bfile", str(prefix), "--tdt", "--keep-allele-order", "--out", str(out), *extra],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = (out.parent / (out.name + ".tdt")).read_text().splitlines()[1:]
    rows = [line.split() for line in lines]
    return [r[1] for r in rows], np.array([int(r[5]) for r in rows]), np.array([int(r[6]) for r in rows])


@needs_plink
@pytest.mark.parametrize("chrom,sex", [("1", 1), ("1", 2), ("23", 1), ("23", 2), ("X", 1), ("25", 1)])
def test_every_code_combination_equals_plink(tmp_path, chrom, sex):
    prefix = tmp_path / f"c{chrom}s{sex}"
    _write_one_trio_per_combination(prefix, chrom, sex)
    ids, t, u = _plink_tu(prefix, tmp_path)
    got = transmission_counts(prefix)
    assert list(got.snp_ids) == ids
    np.testing.assert_array_equal(got.b, t)
    np.testing.assert_array_equal(got.c, u)


@needs_plink
def test_simulated_cohort_equals_plink_on_autosomes_and_x(tmp_path):
    prefix = tmp_path / "mixed"
    simulate_trios(
        prefix,
        300,
        400,
        causal=[3, 350],
        effect=0.85,
        missing_rate=0.02,
        error_rate=0.01,
        x_snps=150,
        child_sex="mixed",
        rng=11,
    )
    ids, t, u = _plink_tu(prefix, tmp_path)
    got = transmission_counts(prefix, chunk_snps=97)
    assert list(got.snp_ids) == ids
    np.testing.assert_array_equal(got.b, t)
    np.testing.assert_array_equal(got.c, u)
    on_x = got.chrom == "23"
    assert on_x.sum() == 150 and (got.b[on_x] + got.c[on_x]).sum() > 0
    # every son's X call is homozygous: no Mendel error beyond the simulated call errors
    assert got.mendel_errors[on_x].mean() < 0.05 * got.n_families


def test_simulated_x_has_hemizygous_fathers_and_sons(tmp_path):
    from bed_reader import open_bed

    prefix = tmp_path / "x"
    simulate_trios(prefix, 200, 20, x_snps=10, child_sex="mixed", causal=0, rng=3)
    with open_bed(str(prefix) + ".bed", count_A1=True) as bed:
        g, sex, chrom = bed.read(dtype="int8"), bed.sex, bed.chromosome
    x = chrom == "23"
    fathers, kids = g[0::3], g[2::3]
    assert not (fathers[:, x] == 1).any() and (fathers[:, ~x] == 1).any()
    sons = sex[2::3] == 1
    assert 0 < sons.sum() < 200 and not (kids[sons][:, x] == 1).any() and (kids[~sons][:, x] == 1).any()
    counts = transmission_counts(prefix)
    assert counts.mendel_errors.sum() == 0


def test_y_and_mt_skipped_with_a_warning_and_annotations_kept(tmp_path):
    prefix = tmp_path / "ymt"
    simulate_trios(prefix, 30, 6, causal=0, rng=2)
    bim = prefix.with_suffix(".bim")
    lines = bim.read_text().splitlines()
    chroms = ["1", "Y", "chrX", "MT", "XY", "7"]
    bim.write_text(
        "".join(f"{c}\t{ln.split()[1]}\t0\t{100 * (j + 1)}\tC\tT\n" for j, (c, ln) in enumerate(zip(chroms, lines)))
    )
    with pytest.warns(UserWarning, match=r"skipped 2 SNP\(s\).*1 on Y.*1 on MT"):
        got = transmission_counts(prefix)
    assert got.annotations() == [
        ("1", "rs0", 100, "C", "T"),
        ("chrX", "rs2", 300, "C", "T"),
        ("XY", "rs4", 500, "C", "T"),
        ("7", "rs5", 600, "C", "T"),
    ]
    assert got.b.size == 4


def test_half_sibling_pedigree_is_refused(tmp_path):
    prefix = tmp_path / "half"
    simulate_trios(prefix, 3, 4, causal=0, rng=0)
    fam = prefix.with_suffix(".fam")
    rows = fam.read_text().splitlines()
    # F0's father has a second affected child with another mother (F1's mother, moved into family F0)
    rows[4] = rows[4].replace("F1\t", "F0\t", 1)
    rows[5] = "F0\tF1_ch\tF0_fa\tF1_mo\t1\t2"
    fam.write_text("\n".join(rows) + "\n")
    with pytest.raises(
        ValueError,
        match=r"path: the individual of row 1 is in two trios \(the children of rows 3 "
        r"and 6\).*half-sibling",
    ) as info:
        transmission_counts(prefix)
    assert "F0" not in str(info.value) and "F1" not in str(info.value)  # rows, never a record's ids


def test_full_siblings_keep_the_first_child(tmp_path):
    prefix = tmp_path / "full"
    simulate_trios(prefix, 2, 4, causal=0, rng=0)
    fam = prefix.with_suffix(".fam")
    text = fam.read_text()
    fam.write_text(text + "F0\tF0_sib\tF0_fa\tF0_mo\t2\t2\n")
    bed = prefix.with_suffix(".bed")
    # one more individual: rewrite the .bed with 7 individuals (the sibling missing everywhere)
    n_ind = 7
    g = _decode(np.frombuffer(bed.read_bytes()[3:], dtype=np.uint8).reshape(4, 2), 6)
    from dpselect.apps.genomics._simulate._trios import _pack

    bed.write_bytes(bytes((0x6C, 0x1B, 0x01)) + _pack(np.vstack([g, -np.ones((1, 4), np.int8)])).tobytes())
    assert (n_ind + 3) // 4 == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = transmission_counts(prefix)
    assert got.n_families == 2


def _unknown_sex_children(prefix, rng):
    """Set the sex of about a third of the children of a simulated fileset to 0 (unknown); their count."""
    rows = [line.split() for line in prefix.with_suffix(".fam").read_text().splitlines()]
    unknown = 0
    for r in rows:
        if r[2] != "0" and rng.random() < 1 / 3:
            r[4], unknown = "0", unknown + 1
    prefix.with_suffix(".fam").write_text("".join(" ".join(r) + "\n" for r in rows))
    return unknown


@needs_plink
def test_unknown_sex_children_as_plink_with_and_without_allow_no_sex(tmp_path):
    prefix = tmp_path / "nosex"
    simulate_trios(
        prefix,
        150,
        120,
        causal=[3],
        effect=0.85,
        missing_rate=0.02,
        error_rate=0.01,
        x_snps=40,
        child_sex="mixed",
        rng=5,
    )
    unknown = _unknown_sex_children(prefix, np.random.default_rng(0))
    assert 20 < unknown < 130
    for allow, extra in ((False, ()), (True, ("--allow-no-sex",))):
        ids, t, u = _plink_tu(prefix, tmp_path, *extra)
        got = transmission_counts(prefix, allow_no_sex=allow, chunk_snps=50)
        assert list(got.snp_ids) == ids
        np.testing.assert_array_equal(got.b, t)
        np.testing.assert_array_equal(got.c, u)
        assert got.n_families == 150 - (0 if allow else unknown)


@needs_plink
@pytest.mark.parametrize("chrom", ["1", "23"])
def test_unknown_sex_child_every_code_combination_with_allow_no_sex(tmp_path, chrom):
    prefix = tmp_path / f"c{chrom}s0"
    _write_one_trio_per_combination(prefix, chrom, 0)
    _ids, t, u = _plink_tu(prefix, tmp_path, "--allow-no-sex")
    got = transmission_counts(prefix, allow_no_sex=True)
    np.testing.assert_array_equal(got.b, t)
    np.testing.assert_array_equal(got.c, u)
    with pytest.raises(ValueError, match="no complete affected trio"):
        transmission_counts(prefix)


@pytest.mark.skipif(shutil.which("plink2") is None, reason="plink2 not installed (Debian package plink2)")
def test_pgen_transmission_counts_equal_bed(tmp_path):
    pytest.importorskip("pgenlib")
    prefix = tmp_path / "t"
    simulate_trios(
        prefix,
        101,
        150,
        causal=[3],
        effect=0.85,
        missing_rate=0.02,
        error_rate=0.01,
        x_snps=40,
        child_sex="mixed",
        rng=8,
    )
    _unknown_sex_children(prefix, np.random.default_rng(1))
    run = subprocess.run(
        [shutil.which("plink2"), "--bfile", str(prefix), "--make-pgen", "--out", str(tmp_path / "p")],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for allow in (False, True):
        bed = transmission_counts(prefix, allow_no_sex=allow)
        pgen = transmission_counts(tmp_path / "p.pgen", allow_no_sex=allow, chunk_snps=31)
        for name in ("b", "c", "mendel_errors"):
            np.testing.assert_array_equal(getattr(pgen, name), getattr(bed, name))
        assert pgen.n_families == bed.n_families and list(pgen.snp_ids) == list(bed.snp_ids)
