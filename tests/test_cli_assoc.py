"""`dpselect assoc FILE --epsilon E --k K [--test ...]`: top-k SNPs of a case-control cohort, never a count."""

from __future__ import annotations

import pytest

pytest.importorskip("typer")

from dpselect.apps.genomics import ASSOCIATION_TESTS, case_control_counts, select_top_snps, simulate_case_control
from dpselect.cli import main

HEADER = ["RANK", "CHR", "SNP", "BP", "A1", "A2"]


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("assoc") / "cc"
    sim = simulate_case_control(300, 300, 60, n_causal=2, odds_ratio=4.0, path=prefix, rng=5)
    return prefix, sim


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "test, utility, relation",
    [(t, "distance", r) for t in ASSOCIATION_TESTS for r in ("replace", "add_remove")]
    + [("allelic", "chi2", "replace")],
)
def test_assoc_prints_the_librarys_choice_and_no_count(cohort, capsys, test, utility, relation):
    prefix, _sim = cohort
    code, out, err = _run(
        [
            "assoc",
            prefix,
            "--epsilon",
            5,
            "--k",
            2,
            "--test",
            test,
            "--utility",
            utility,
            "--relation",
            relation,
            "--seed",
            3,
        ],
        capsys,
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == HEADER
    counts = case_control_counts(prefix)
    top = select_top_snps(counts, 5.0, 2, test=test, utility=utility, relation=relation, rng=3)
    expected = [(str(r), *map(str, row)) for r, row in enumerate(counts.annotations(top.indices), start=1)]
    assert [tuple(ln.split()) for ln in lines[1:3]] == expected
    assert f"of the {test} test" in out and "2 rounds at epsilon 2.5 each" in out
    assert f"guarantee: {top.privacy.epsilon:g}-DP (delta = {top.privacy.delta:g}) under " in out
    assert (
        "one individual's genotypes replaced" if relation == "replace" else "one individual added or removed"
    ) in out
    assert "counting" in err  # the progress line
    shown = out.replace("60 SNPs", "")
    for table in (counts.cases, counts.controls):  # no genotype count of a selected SNP appears
        for i in top.indices:
            for v in table[i]:
                if v >= 10:
                    assert f" {v} " not in f" {shown} ".replace("\n", " ")


def test_assoc_finds_strong_causal_snps_at_large_epsilon(cohort, capsys):
    prefix, sim = cohort
    code, out, err = _run(["assoc", prefix, "--epsilon", 50, "--k", 2, "--seed", 0, "--quiet"], capsys)
    assert code == 0 and err == ""
    picked = sorted(ln.split()[2] for ln in out.splitlines()[1:3])
    names = case_control_counts(prefix).snp_ids
    assert picked == sorted(str(names[i]) for i in sim.causal)


def test_assoc_out_writes_the_table(cohort, tmp_path, capsys):
    prefix, _ = cohort
    dest = tmp_path / "top.tsv"
    code, out, err = _run(["assoc", prefix, "--epsilon", 5, "--k", 3, "--seed", 1, "--out", dest, "--quiet"], capsys)
    assert code == 0 and err == ""
    rows = [line.split("\t") for line in dest.read_text().splitlines()]
    assert rows[0] == HEADER and len(rows) == 4
    assert [r[2] for r in rows[1:]] == [ln.split()[2] for ln in out.splitlines()[1:4]]


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--epsilon", 0, "--k", 1], "--epsilon"),
        (["--epsilon", 1, "--k", 0], "--k"),
        (["--epsilon", 1, "--k", 61, "--quiet"], "--k must be <="),
        (["--epsilon", 1, "--k", 1, "--test", "fisher"], "--test 'fisher' is not a test"),
        (["--epsilon", 1, "--k", 1, "--utility", "p"], "--utility 'p' is not a utility"),
        (["--epsilon", 1, "--k", 1, "--mechanism", "nope"], "--mechanism 'nope' is not a mechanism"),
        (["--epsilon", 1, "--k", 1, "--mechanism", "snm_lln"], "approximate DP"),
        (["--epsilon", 1, "--k", 1, "--seed", -1], "--seed"),
        (["--epsilon", 1, "--k", 1, "--relation", "swap"], "--relation 'swap' is not a relation"),
        (["--epsilon", 1, "--k", 1, "--utility", "chi2", "--relation", "add_remove"], "--utility chi2 needs"),
        (["--epsilon", 1, "--k", 1, "--chunk-snps", 0], "--chunk-snps"),
        (["--epsilon", 1, "--k", 1, "--out", "no/such/dir/x.tsv"], "does not exist"),
    ],
)
def test_assoc_bad_options_are_one_line_errors(cohort, capsys, argv, match):
    code, out, err = _run(["assoc", cohort[0], *argv], capsys)
    assert code == 2 and out == "" and match in err
    assert [ln for ln in err.splitlines() if ln.strip()] == [ln for ln in err.splitlines() if "error" in ln]


def test_assoc_checks_options_before_reading(tmp_path, capsys):
    """Bad options with a FILE that cannot be read: the option's error, not the file's."""
    code, _, err = _run(["assoc", tmp_path / "absent", "--epsilon", 1, "--k", 1, "--test", "nope"], capsys)
    assert code == 2 and "--test" in err
    code, _, err = _run(["assoc", tmp_path / "absent", "--epsilon", 1, "--k", 1], capsys)
    assert code == 2 and "FILE" in err
    code, _, err = _run(["assoc", tmp_path / "x.vcf", "--epsilon", 1, "--k", 1], capsys)
    assert code == 2 and "PLINK fileset" in err


def test_assoc_options_are_in_the_readme():
    import re
    from pathlib import Path

    import typer

    from dpselect.cli import app

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    synopsis = re.search(r"`dpselect assoc [^`]*`", readme)
    assert synopsis is not None
    for param in typer.main.get_command(app).commands["assoc"].params:
        for opt in param.opts:
            if opt.startswith("--") and opt != "--help":
                assert opt in synopsis.group(0), opt
    assert all(t in synopsis.group(0) for t in ASSOCIATION_TESTS)
