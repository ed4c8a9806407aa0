"""`dpselect tdt FILE --epsilon E --k K`: top-k SNPs of a PLINK trio cohort, never the private counts."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("typer")

from dpselect.apps import genomics as tdt
from dpselect.apps.genomics import simulate_trios, transmission_counts
from dpselect.cli import main


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("cli") / "cohort"
    causal = simulate_trios(prefix, 300, 60, causal=[5, 33], effect=0.85, rng=3)
    return prefix, causal


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_tdt_prints_ids_and_guarantee_only(cohort, capsys):
    prefix, causal = cohort
    code, out, err = _run(["tdt", prefix, "--epsilon", 20, "--k", 2, "--seed", 4], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["RANK", "CHR", "SNP", "BP", "A1", "A2"]
    rows = [ln.split() for ln in lines[1:3]]
    assert sorted(r[2] for r in rows) == sorted(f"rs{i}" for i in causal)
    for r in rows:  # the public .bim annotations of the SNP, nothing else
        j = int(r[2][2:])
        assert r == [r[0], "1", f"rs{j}", str(j + 1), "A", "G"]
    assert "counting transmissions: 60/60 SNPs (100%)" in err  # the progress line
    assert "guarantee: 20-DP (delta = 0) under one family replaced" in out
    assert "10 each" in out and "trios" not in out  # the number of trios is the data's: never printed
    # nothing private: no count or statistic of any SNP appears
    counts = transmission_counts(prefix)
    chi = np.asarray(tdt.tdt_statistic(counts.b, counts.c))
    for i in causal:
        for value in (counts.b[i], counts.c[i], round(float(chi[i]), 2), round(float(chi[i]), 1)):
            assert f"{value}" not in out.replace("60 SNPs", "")
    # same seed, same output; another mechanism by name
    assert _run(["tdt", prefix, "--epsilon", 20, "--k", 2, "--seed", 4], capsys)[1] == out
    for word in ("CHISQ", "OR", " P ", "T\t", "U\t"):
        assert word not in out
    code, out2, _ = _run(
        ["tdt", str(prefix) + ".bed", "--epsilon", 20, "--k", 2, "--mechanism", "em", "--seed", 1], capsys
    )
    assert code == 0 and "peeling" in out2  # the distance utility: distances updated every round


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--epsilon", 0, "--k", 1], "--epsilon"),
        (["--epsilon", 1, "--k", 0], "--k"),
        (["--epsilon", 1, "--k", 61], "--k must be <="),
        (["--epsilon", 1, "--k", 1, "--seed", -5], "--seed"),
        (
            ["--epsilon", 1, "--k", 1, "--mechanism", "nope"],
            "--mechanism 'nope' is not a mechanism; choose one of: em, pf",
        ),
        (["--epsilon", 1, "--k", 1, "--utility", "p"], "--utility 'p' is not a utility; choose one of: distance, chi2"),
        (["--epsilon", 1, "--k", 1, "--mechanism", "nd_pf"], "--mechanism 'nd_pf' is not a mechanism"),
        (["--epsilon", 1, "--k", 1, "--pedigree", "nowhere.fam"], "--pedigree 'nowhere.fam' is not a file"),
        (["--epsilon", 1, "--k", 1, "--mechanism", "snm_laplace"], "--mechanism snm_laplace is approximate DP"),
    ],
)
def test_tdt_bad_options(cohort, capsys, argv, match):
    code, out, err = _run(["tdt", cohort[0], *argv], capsys)
    assert code == 2 and match in err and out == ""


def test_tdt_bad_files(tmp_path, capsys):
    code, _, err = _run(["tdt", tmp_path / "missing", "--epsilon", 1, "--k", 1], capsys)
    assert code == 2 and "dpselect: error: FILE PLINK fileset" in err and "no .bed" in err
    code, _, err = _run(["tdt", tmp_path, "--epsilon", 1, "--k", 1], capsys)
    assert code == 2 and "FILE" in err and "directory" in err


def test_tdt_out_writes_the_table_as_tsv(cohort, tmp_path, capsys):
    prefix, _ = cohort
    dest = tmp_path / "top.tsv"
    code, out, err = _run(["tdt", prefix, "--epsilon", 20, "--k", 3, "--seed", 2, "--out", dest, "--quiet"], capsys)
    assert code == 0 and err == ""
    rows = [line.split("\t") for line in dest.read_text().splitlines()]
    assert rows[0] == ["RANK", "CHR", "SNP", "BP", "A1", "A2"] and len(rows) == 4
    assert [r[2] for r in rows[1:]] == [ln.split()[2] for ln in out.splitlines()[1:4]]
    code, out_chi, err = _run(
        ["tdt", prefix, "--epsilon", 20, "--k", 2, "--mechanism", "sps", "--utility", "chi2", "--quiet", "--seed", 0],
        capsys,
    )
    assert code == 0, err
    assert "sps on utility chi2" in out_chi


def test_tdt_truncated_vcf_gz_is_one_named_line(cohort, tmp_path, capsys):
    pytest.importorskip("cyvcf2")
    from test_gwas_vcf import _bgzf_block, write_vcf

    prefix, _ = cohort
    lines = write_vcf(prefix, tmp_path / "c.vcf").read_text().splitlines(keepends=True)
    data = b"".join(_bgzf_block(line.encode()) for line in lines)
    cut = tmp_path / "cut.vcf.gz"
    cut.write_bytes(data[: len(data) // 2])
    code, out, err = _run(["tdt", cut, "--pedigree", str(prefix) + ".fam", "--epsilon", 1, "--k", 1, "--quiet"], capsys)
    assert code == 2 and out == ""
    assert [ln for ln in err.splitlines() if ln.startswith("dpselect:")] == [
        ln for ln in err.splitlines() if "is truncated or corrupt" in ln
    ]
    assert "dpselect: error: FILE" in err and "internal error" not in err


def test_tdt_reads_a_vcf_with_its_pedigree(cohort, tmp_path, capsys):
    """The same cohort as a VCF (+ .fam pedigree) gives the same selection as the PLINK fileset."""
    pytest.importorskip("cyvcf2", reason="VCF/BCF input needs the optional dependency cyvcf2")
    from test_gwas_vcf import write_vcf

    prefix, _ = cohort
    vcf = write_vcf(prefix, tmp_path / "cohort.vcf")
    argv = ["--epsilon", 20, "--k", 2, "--seed", 4]
    code, out_vcf, err = _run(["tdt", vcf, "--pedigree", str(prefix) + ".fam", *argv], capsys)
    assert code == 0, err
    code, out_bed, _ = _run(["tdt", prefix, *argv], capsys)
    assert code == 0 and out_vcf == out_bed
    code, out, err = _run(["tdt", vcf, *argv], capsys)
    assert code == 2 and "pedigree" in err and out == ""


def test_tdt_allow_no_sex_keeps_children_of_unknown_sex(tmp_path, capsys):
    prefix = tmp_path / "nosex"
    simulate_trios(prefix, 20, 10, causal=[1], effect=0.85, rng=2)
    fam = prefix.with_suffix(".fam")
    rows = [ln.split() for ln in fam.read_text().splitlines()]
    for row in rows[2:12:3]:  # the children of four trios get sex 0 (unknown)
        assert row[2] != "0"
        row[4] = "0"
    fam.write_text("".join("\t".join(r) + "\n" for r in rows))
    argv = ["tdt", prefix, "--epsilon", 5, "--k", 1, "--seed", 0, "--quiet"]
    for extra, kept in (([], 16), (["--allow-no-sex"], 20)):
        code, out, err = _run(argv + extra, capsys)
        assert code == 0, err
        assert "trios" not in out  # the number of trios kept is the data's: never printed
        counts = transmission_counts(prefix, allow_no_sex=bool(extra))
        assert counts.n_families == kept
        top = tdt.select_top_snps(counts, 5.0, 1, rng=0)
        assert out.splitlines()[1].split()[2] == str(counts.snp_ids[top.indices[0]])
