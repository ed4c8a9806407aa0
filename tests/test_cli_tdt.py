"""`dpselect tdt FILE --epsilon E --k K`: top-k SNPs of a PLINK trio cohort, never the private counts."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("typer")

from dpselect.apps.genomics import _tdt as tdt  # noqa: E402
from dpselect.apps.genomics import simulate_trios, transmission_counts  # noqa: E402
from dpselect.cli import main  # noqa: E402


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
    ids = [ln.split("\t")[1] for ln in lines[:2]]
    assert sorted(ids) == sorted(f"rs{i}" for i in causal)
    assert "guarantee: 20-DP (delta = 0) under one family replaced" in out
    assert "10 each" in out and "300 trios" in out
    # nothing private: no count or statistic of any SNP appears
    counts = transmission_counts(prefix)
    chi = np.asarray(tdt.tdt_statistic(counts.b, counts.c))
    for i in causal:
        for value in (counts.b[i], counts.c[i], round(float(chi[i]), 2), round(float(chi[i]), 1)):
            assert f"{value}" not in out.replace("300 trios", "").replace("60 SNPs", "")
    # same seed, same output; another mechanism by name
    assert _run(["tdt", prefix, "--epsilon", 20, "--k", 2, "--seed", 4], capsys)[1] == out
    code, out2, _ = _run(["tdt", str(prefix) + ".bed", "--epsilon", 20, "--k", 2, "--mechanism", "nd_em",
                          "--seed", 1], capsys)
    assert code == 0 and "gumbel_top_k" in out2


@pytest.mark.parametrize("argv, match", [
    (["--epsilon", 0, "--k", 1], "--epsilon"),
    (["--epsilon", 1, "--k", 0], "--k"),
    (["--epsilon", 1, "--k", 61], "--k must be <="),
    (["--epsilon", 1, "--k", 1, "--seed", -5], "--seed"),
    (["--epsilon", 1, "--k", 1, "--mechanism", "nope"], "mechanism"),
])
def test_tdt_bad_options(cohort, capsys, argv, match):
    code, out, err = _run(["tdt", cohort[0], *argv], capsys)
    assert code == 2 and match in err and out == ""


def test_tdt_bad_files(tmp_path, capsys):
    code, _, err = _run(["tdt", tmp_path / "missing", "--epsilon", 1, "--k", 1], capsys)
    assert code == 2 and "no .bed" in err
    code, _, err = _run(["tdt", tmp_path, "--epsilon", 1, "--k", 1], capsys)
    assert code == 2 and "directory" in err


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
