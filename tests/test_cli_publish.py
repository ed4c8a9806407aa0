"""Everything the ``dpselect`` command prints is a release: nothing computed from one record, checks before reads.

The main cases run the console command in a subprocess (what a user's terminal
gets, htslib's own stderr included).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("typer")

import dpselect
from dpselect.apps.genomics import simulate_trios
from dpselect.cli import main

SRC = str(Path(dpselect.__file__).resolve().parents[1])


def dpselect_cmd(*argv: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DPSELECT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "dpselect", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=cwd,
    )


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("dpselect: error: "), proc.stderr
    return lines[0]


@pytest.fixture
def people(tmp_path):
    """One row per person: unique names (private), an income (private), a public-looking team."""
    rng = np.random.default_rng(0)
    names = [f"person_{i:04d}_{rng.integers(10**6):06d}" for i in range(40)]
    incomes = rng.integers(20_000, 200_000, size=40)
    teams = rng.choice(["red", "blue"], size=40)
    path = tmp_path / "people.csv"
    path.write_text("name,income,team\n" + "".join(f"{n},{v},{t}\n" for n, v, t in zip(names, incomes, teams)))
    return path, names, incomes.tolist()


def _no_record_in(text: str, names: list[str], incomes: list[int]) -> None:
    for name in names:
        assert name not in text
    for value in incomes:
        assert str(value) not in text


@pytest.mark.slow  # over ~10 s on two loaded cores: run by CI's slow step
def test_select_on_unique_names_prints_no_name(people):
    path, names, incomes = people
    proc = dpselect_cmd("select", path, "--column", "name", "--epsilon", 1)
    line = one_error_line(proc)
    assert "--candidates" in line and "--non-private-candidates-from-data" in line
    assert proc.stdout == ""
    _no_record_in(proc.stdout + proc.stderr, names, incomes)
    # public candidates: a sound release (here none of them is a record's name)
    proc = dpselect_cmd("select", path, "--column", "name", "--epsilon", 1, "--candidates", "alice,bob", "--seed", 1)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] in ("selected: alice", "selected: bob")
    assert "1-DP [add_remove]" in proc.stdout
    _no_record_in(proc.stdout + proc.stderr, names, incomes)
    # the opt-in prints a name, marked as not private on both streams
    proc = dpselect_cmd("select", path, "--column", "name", "--epsilon", 1, "--non-private-candidates-from-data")
    assert proc.returncode == 0
    first = proc.stdout.splitlines()[0]
    assert first.removeprefix("selected: ").split()[0] in names and "NOT PRIVATE" in first
    assert "NOT differentially private" in proc.stderr and "inf-DP" in proc.stdout


def test_select_on_one_number_per_record_needs_an_explicit_sensitivity(people):
    path, names, incomes = people
    line = one_error_line(dpselect_cmd("select", path, "--column", "income", "--epsilon", 1))
    assert "--column 'income' is numeric" in line and "--sensitivity" in line
    line = one_error_line(dpselect_cmd("select", path, "--column", "income", "--epsilon", 1, "--utility", "scores"))
    assert "--utility scores needs --sensitivity" in line
    proc = dpselect_cmd("select", path, "--column", "income", "--epsilon", 1, "--sensitivity", 180_000, "--seed", 0)
    assert proc.returncode == 0, proc.stderr
    assert "scores with global sensitivity 180000 (from --sensitivity)" in proc.stdout
    assert "assumes: the rows are public candidates" in proc.stdout
    assert re.match(r"selected: \d+ \(row \d+ of 40\)$", proc.stdout.splitlines()[0])
    _no_record_in(proc.stdout.replace("180000", ""), names, incomes)


@pytest.fixture(scope="module")
def trios(tmp_path_factory):
    d = tmp_path_factory.mktemp("publish")
    prefix = d / "c"
    simulate_trios(prefix, 30, 20, causal=[2], effect=0.85, rng=1)
    return prefix


def test_truncated_vcf_error_names_the_file_and_a_variant_only(trios, tmp_path):
    """A VCF cut mid-line: htslib parses the last line and fails; neither its log nor our error quotes it."""
    pytest.importorskip("cyvcf2")
    from test_gwas_vcf import write_vcf

    text = write_vcf(trios, tmp_path / "full.vcf").read_text()
    cut = tmp_path / "cut.vcf"
    cut.write_text(text[: len(text) * 2 // 3])
    last = cut.read_text().splitlines()[-1]
    assert len(last.split("\t")) > 9  # the cut line holds genotype calls
    proc = dpselect_cmd("tdt", cut, "--pedigree", str(trios) + ".fam", "--epsilon", 1, "--k", 1, "--quiet")
    line = one_error_line(proc)  # nothing else on stderr: htslib's [E::...] log line is switched off
    assert re.fullmatch(
        r"dpselect: error: FILE '[^']+cut\.vcf' is truncated or corrupt after variant 'rs\d+' "
        r"\(htslib cannot parse the next line\)",
        line,
    ), line
    assert proc.stdout == ""
    for call in ("0/0", "0|0", "1/1", "1|1", "0/1", "\t"):
        assert call not in proc.stderr


def test_out_in_a_missing_folder_fails_before_the_data_is_read(trios, tmp_path):
    bad_out = tmp_path / "nodir" / "x.tsv"
    proc = dpselect_cmd("tdt", trios, "--epsilon", 1, "--k", 1, "--out", bad_out)
    line = one_error_line(proc)
    assert "--out" in line and "does not exist" in line
    assert proc.stdout == "" and "counting" not in proc.stderr  # no progress line: nothing was read
    # the same error with a FILE that cannot even be read: --out is checked first
    assert one_error_line(
        dpselect_cmd("tdt", tmp_path / "absent", "--epsilon", 1, "--k", 1, "--out", bad_out)
    ) == line.replace(str(trios), str(tmp_path / "absent"))
    assert not (tmp_path / "nodir").exists()


def test_argument_errors_come_before_warnings(trios, tmp_path, capsys):
    code, out, err = run(["tdt", trios, "--epsilon", 1, "--k", 1, "--out", tmp_path / "no" / "x.tsv"], capsys)
    assert code == 2 and out == "" and err.splitlines() == [ln for ln in err.splitlines() if "error" in ln]


def test_one_round_is_singular(trios, capsys):
    code, out, err = run(["tdt", trios, "--epsilon", 2, "--k", 1, "--seed", 0, "--quiet"], capsys)
    assert code == 0, err
    assert "1 round at epsilon 2 each" in out and "1 rounds" not in out
    code, out, _ = run(["tdt", trios, "--epsilon", 2, "--k", 2, "--seed", 0, "--quiet"], capsys)
    assert "2 rounds at epsilon 1 each" in out


def test_delta_zero_error_names_cli_options_only(tmp_path, capsys):
    path = tmp_path / "c.csv"
    path.write_text("c\n3\n1\n")
    code, _, err = run(
        [
            "select",
            path,
            "--column",
            "c",
            "--utility",
            "indicator",
            "--epsilon",
            1,
            "--mechanism",
            "snm_laplace",
            "--delta",
            0,
        ],
        capsys,
    )
    assert code == 2 and "--delta must be > 0 for --mechanism snm_laplace" in err and "--mechanism snm_t" in err
    assert "noise=" not in err and "student_t" not in err


def test_epsilon_is_checked_by_the_library_check(tmp_path, capsys):
    """--epsilon below the smallest normal float: the library's check_epsilon message, naming the option."""
    code, _, err = run(["select", tmp_path / "absent.csv", "--column", "c", "--epsilon", "1e-320"], capsys)
    assert code == 2 and "--epsilon must be at least" in err and "smallest normal float" in err


def test_csv_parser_errors_quote_nothing_of_the_file(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"name\nalice\nsecret_\xff_value\n")
    code, _, err = run(["select", path, "--column", "name", "--epsilon", 1, "--candidates", "alice"], capsys)
    assert code == 2 and "FILE" in err and "cannot be read as a CSV table" in err
    assert "secret" not in err and "0xff" not in err and "alice" not in err


def test_select_help_shows_the_real_utility_default(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(["select", "--help"], capsys)
    assert code == 0
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())
    assert "[default: scores]" not in flat
    assert re.search(r"\[default: \(?votes with --candidates, scores with --sensitivity, else required\)?\]", flat)


def _audit_loss(out: str) -> float:
    return float(re.search(r"^max privacy loss ([0-9.e+-]+) vs claimed", out, flags=re.M).group(1))


def test_audit_says_its_utility_and_defaults_to_the_counts(capsys):
    from dpselect.analysis import audit
    from dpselect.apps.counts import majority_neighbours, majority_problem

    x = np.array([22, 8, 17, 4, 0])
    code, out, err = run(["audit", "em", "--counts", "22,8,17,4,0"], capsys)
    assert code == 0, err
    assert "on the majority app, utility count: u(x, r) = n_r" in out
    pairs = [
        (majority_problem(x, utility="count"), majority_problem(y, utility="count")) for y in majority_neighbours(x)
    ]
    direct = audit(dpselect.ExponentialMechanism(1.0), pairs).max_loss
    assert _audit_loss(out) == pytest.approx(direct, rel=1e-5) and direct > 0.5
    assert "vacuous" not in out
    code, out, err = run(["audit", "em", "--counts", "22,8,17,4,0", "--utility", "indicator"], capsys)
    assert code == 0, err
    assert "utility indicator" in out and _audit_loss(out) == 0 and "this audit is vacuous" in out


def test_readme_cli_synopsis_names_every_option():
    """Every option of select / tdt / audit appears in the README's synopsis of that command."""
    import typer

    from dpselect.cli import app

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    command = typer.main.get_command(app)
    for name in ("select", "tdt", "audit"):
        synopsis = re.search(rf"`dpselect {name} [^`]*`", readme)
        assert synopsis is not None, name
        for param in command.commands[name].params:
            for opt in param.opts:
                if opt.startswith("--") and opt != "--help":
                    assert opt in synopsis.group(0), (name, opt)
    assert "votes" in re.search(r"`dpselect select [^`]*`", readme).group(0)


def test_an_internal_error_shows_its_type_only(capsys, monkeypatch):
    from dpselect.cli import _commands

    def boom(*args, **kwargs):
        raise RuntimeError("value 123456.789 of record 17")

    monkeypatch.delenv("DPSELECT_DEBUG", raising=False)
    monkeypatch.setattr(_commands, "demo_table", boom)
    code, out, err = run(["demo", "--m", 3], capsys)
    assert code == 1 and out == ""
    assert err.strip() == (
        "dpselect: internal error: RuntimeError (set DPSELECT_DEBUG=1 for the message and the traceback)"
    )


def test_truncated_bcf_prints_one_line_and_no_htslib_log(tmp_path):
    """A BCF cut in its records: htslib's [E::...] lines are off; the error names the file and a variant."""
    cyvcf2 = pytest.importorskip("cyvcf2")
    from test_gwas_vcf import write_vcf

    prefix = tmp_path / "big"
    simulate_trios(prefix, 30, 600, causal=[2], effect=0.85, rng=1)
    vcf = cyvcf2.VCF(str(write_vcf(prefix, tmp_path / "big.vcf")))
    writer = cyvcf2.Writer(str(tmp_path / "big.bcf"), vcf, mode="wb")
    for record in vcf:
        writer.write_record(record)
    writer.close()
    data = (tmp_path / "big.bcf").read_bytes()
    (tmp_path / "cut.bcf").write_bytes(data[: len(data) * 2 // 3])
    proc = dpselect_cmd(
        "tdt", tmp_path / "cut.bcf", "--pedigree", str(prefix) + ".fam", "--epsilon", 1, "--k", 1, "--quiet"
    )
    line = one_error_line(proc)
    assert re.fullmatch(
        r"dpselect: error: FILE '[^']+cut\.bcf' is truncated or corrupt after variant 'rs\d+' "
        r"\(\w+ from htslib\)",
        line,
    ), line
