"""The ``dpselect`` command line: reproduce / select / audit / demo, and one-line errors (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("typer")

import dpselect  # noqa: E402
from dpselect.cli import main  # noqa: E402


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, match):
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("dpselect: error: ")
    assert match in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, match", [
    (["reproduce", "nope"], "unknown experiment 'nope'"),
    (["reproduce", "percentile"], "--data-dir"),  # full grid without the real data
    (["reproduce", "tree", "--data-dir", "/definitely/not/here"], "not a directory"),
    (["reproduce", "percentile", "--quick", "--workers", "0"], "--workers"),
    (["reproduce", "percentile", "--quick", "--scheduler", "nonsense"], "--scheduler"),
    (["demo", "--epsilon", "-1"], "--epsilon"),
    (["demo", "--epsilon", "nan"], "--epsilon"),
    (["demo", "--m", "x"], "--m"),
    (["select", "/no/such/file.csv", "--column", "a", "--epsilon", "1"], "file not found"),
    (["audit", "em", "--epsilon", "0"], "--epsilon"),
    (["audit", "nope"], "unknown mechanism"),
    (["audit", "em", "--m", "1"], "--m"),
    (["nosuchcommand"], "No such command"),
    (["select"], "Missing argument"),
])
def test_errors_are_one_line_exit_2(argv, match, capsys, monkeypatch):
    monkeypatch.delenv("DPSELECT_DATA", raising=False)
    code, _, err = run(argv, capsys)
    assert_one_line_error(code, err, match)


def test_data_dir_from_environment_is_checked(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("DPSELECT_DATA", str(tmp_path / "missing"))
    code, _, err = run(["reproduce", "percentile", "--quick"], capsys)
    assert_one_line_error(code, err, "DPSELECT_DATA")


def test_demo_table(capsys):
    code, out, _ = run(["demo", "--epsilon", "0.5", "--epsilon", "1", "--m", "5"], capsys)
    assert code == 0
    assert "PermuteAndFlip" in out and "1-DP [add_remove]" in out


def test_help_exits_zero(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "reproduce" in out and "select" in out and "audit" in out


@pytest.fixture
def votes_csv(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("name,votes,score\nalice,40,1.5\nbob,3,0.2\ncarol,5,0.1\n")
    return path


@pytest.mark.parametrize("mechanism", ["em", "pf", "rnm_laplace", "snm_t", "snm_laplace", "sps", "ld"])
def test_select_majority(votes_csv, capsys, mechanism):
    code, out, err = run(["select", str(votes_csv), "--column", "votes", "--utility", "majority", "--mechanism",
                          mechanism, "--epsilon", "2", "--seed", "1", "--label-column", "name"], capsys)
    assert code == 0, err
    assert out.startswith("selected: ")
    assert "guarantee: " in out and "DP" in out


def test_select_scores_is_reproducible_with_seed(votes_csv, capsys):
    args = ["select", str(votes_csv), "--column", "score", "--epsilon", "1", "--sensitivity", "0.5", "--seed", "3"]
    first = run(args, capsys)
    second = run(args, capsys)
    assert first[0] == 0 and first[1] == second[1]
    assert "1-DP" in first[1] and "global sensitivity 0.5" in first[1]


@pytest.mark.parametrize("extra, match", [
    (["--column", "nope", "--epsilon", "1"], "column 'nope'"),
    (["--column", "name", "--epsilon", "1"], "numeric"),
    (["--column", "score", "--epsilon", "1", "--utility", "majority"], "integer counts"),
    (["--column", "votes", "--epsilon", "1", "--mechanism", "bogus"], "--mechanism"),
    (["--column", "votes", "--epsilon", "1", "--delta", "1.5"], "--delta"),
    (["--column", "votes", "--epsilon", "1", "--sensitivity", "0"], "--sensitivity"),
    (["--column", "votes", "--epsilon", "1", "--utility", "nope"], "--utility"),
])
def test_select_errors(votes_csv, capsys, extra, match):
    code, _, err = run(["select", str(votes_csv)] + extra, capsys)
    assert_one_line_error(code, err, match)


def test_select_parquet(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "counts.parquet"
    pd.DataFrame({"c": [1, 9, 2]}).to_parquet(path)
    code, out, _ = run(["select", str(path), "--column", "c", "--utility", "majority", "--epsilon", "50",
                        "--seed", "0"], capsys)
    assert code == 0 and out.startswith("selected: 1 (row 1")


@pytest.mark.parametrize("mechanism", ["em", "snm_t"])
def test_audit(capsys, mechanism):
    code, out, err = run(["audit", mechanism, "--app", "majority", "--m", "3", "--epsilon", "1", "--max-count", "4",
                          "--n-vectors", "4"], capsys)
    assert code == 0, err
    assert "audit over" in out and out.rstrip().endswith("ok")


def test_reproduce_quick_via_cli(tmp_path, capsys, monkeypatch):
    from dpselect.experiments import percentile

    monkeypatch.setattr(percentile, "DATASETS", ("HEPTH",))
    monkeypatch.setattr(percentile, "PERCENTILES", (90,))
    monkeypatch.setattr(percentile, "epsilons", lambda quick: [1.0, 10.0])
    code, out, err = run(["reproduce", "percentile", "--quick", "--out", str(tmp_path), "--workers", "1",
                          "--seed", "3"], capsys)
    assert code == 0, err
    assert "percentile:" in out and "| claim |" in out
    assert (tmp_path / "percentile" / "results.csv").is_file()
    assert (tmp_path / "percentile" / "report.md").is_file()


def test_console_entry_point_subprocess():
    env = dict(os.environ)
    src = str(Path(dpselect.__file__).resolve().parents[1])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "dpselect", "reproduce", "nope"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "dpselect: error: unknown experiment 'nope'; choose one of: percentile, median, tdt, tree, forest, all"]
