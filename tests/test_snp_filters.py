"""Public SNP filters: filter_snps and assoc --extract/--exclude/--chr/--maf."""

from __future__ import annotations

import numpy as np
import pytest

from dpselect.apps import genomics as g
from dpselect.cli import main


@pytest.fixture
def cc():
    sim = g.simulate_case_control(100, 100, 6, n_causal=1, odds_ratio=2.0, rng=0)
    c = sim.counts
    return g.CaseControlCounts(
        c.cases, c.controls, snp_ids=[f"rs{i}" for i in range(6)], chrom=["1", "1", "2", "2", "X", "3"]
    )


def test_filter_snps_keeps_the_counts_of_the_kept_snps(cc, tmp_path):
    out = g.filter_snps(cc, chrom=["1", "2"], exclude=["rs2"])
    assert out.snp_ids.tolist() == ["rs0", "rs1", "rs3"]
    np.testing.assert_array_equal(out.cases, cc.cases[[0, 1, 3]])
    assert (out.n_cases, out.n_controls) == (cc.n_cases, cc.n_controls)
    listing = tmp_path / "keep.txt"
    listing.write_text("rs5\nrs4 extra-column\n")
    assert g.filter_snps(cc, extract=listing).snp_ids.tolist() == ["rs4", "rs5"]
    tc = g.TransmissionCounts([9, 5], [1, 5], 10, snp_ids=["a", "b"])
    assert g.filter_snps(tc, extract=["b"]).b.tolist() == [5]


def test_maf_filter_reads_a_public_reference(cc, tmp_path):
    frq = tmp_path / "ref.frq"
    frq.write_text(" CHR SNP A1 A2 MAF NCHROBS\n1 rs0 A G 0.2 100\n1 rs1 A G 0.01 100\n2 rs2 A G NA 0\n")
    assert g.filter_snps(cc, maf=0.05, maf_reference=frq).snp_ids.tolist() == ["rs0"]
    afreq = tmp_path / "ref.afreq"
    afreq.write_text("#CHROM\tID\tREF\tALT\tALT_FREQS\tOBS_CT\n1\trs3\tA\tG\t0.97\t10\n1\trs4\tA\tG\t0.6\t10\n")
    assert g.filter_snps(cc, maf=0.05, maf_reference=afreq).snp_ids.tolist() == ["rs4"]  # MAF 0.03 and 0.4
    with pytest.raises(ValueError, match="maf_reference"):
        g.filter_snps(cc, maf=0.05)
    with pytest.raises(ValueError, match="maf"):
        g.filter_snps(cc, maf=0.7, maf_reference=afreq)
    with pytest.raises(TypeError, match="chrom"):
        g.filter_snps(cc, chrom="1")


def test_assoc_filters(tmp_path, capsys):
    prefix = tmp_path / "cc"
    g.simulate_case_control(200, 200, 30, n_causal=2, odds_ratio=3.0, path=prefix, rng=1)
    ids = [line.split()[1] for line in prefix.with_suffix(".bim").read_text().splitlines()]
    keep = tmp_path / "keep.txt"
    keep.write_text("\n".join(ids[:5]) + "\n")
    argv = ["assoc", prefix, "--epsilon", 5, "--k", 2, "--seed", 0, "--quiet", "--extract", keep]
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert {line.split()[2] for line in out.splitlines()[1:3]} <= set(ids[:5]) and "5 SNPs" in out
    code = main([str(a) for a in [*argv[:-2], "--extract", tmp_path / "absent.txt"]])
    assert code == 2 and "not a file" in capsys.readouterr().err
