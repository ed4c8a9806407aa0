"""The ``dpselect`` command line: reproduce / select / audit / demo, and one-line errors (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("typer")

import dpselect
from dpselect.cli import main


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


@pytest.mark.parametrize(
    "argv, match",
    [
        (["reproduce", "nope"], "unknown experiment 'nope'"),
        (["reproduce", "percentile"], "--data-dir"),  # full grid without the real data
        (["reproduce", "tree", "--data-dir", "/definitely/not/here"], "not a directory"),
        (["reproduce", "percentile", "--quick", "--workers", "0"], "--workers"),
        (["reproduce", "percentile", "--quick", "--scheduler", "nonsense"], "--scheduler"),
        (["demo", "--epsilon", "-1"], "--epsilon"),
        (["demo", "--epsilon", "nan"], "--epsilon"),
        (["demo", "--m", "x"], "--m"),
        (
            ["select", "/no/such/file.csv", "--column", "a", "--epsilon", "1"],
            "FILE '/no/such/file.csv': file not found",
        ),
        (["select", "/", "--column", "a", "--epsilon", "1"], "FILE '/' is a directory"),
        (["reproduce", "percentile", "--quick", "--seed", "-5"], "--seed must be a non-negative integer, got -5"),
        (["demo", "--seed", "-1"], "--seed"),
        (["audit", "em", "--seed", "-2"], "--seed"),
        (["audit", "em", "--epsilon", "0"], "--epsilon"),
        (["audit", "nope"], "MECHANISM 'nope'"),
        (["audit", "em", "--m", "1"], "--m"),
        (["audit", "em", "--app", "majority"], "No such option: --app"),
        (["audit", "em", "--relation", "swap"], "--relation must be one of"),
        (["nosuchcommand"], "No such command"),
        (["select"], "Missing argument"),
    ],
)
def test_errors_are_one_line_exit_2(argv, match, capsys, monkeypatch):
    monkeypatch.delenv("DPSELECT_DATA", raising=False)
    code, _, err = run(argv, capsys)
    assert_one_line_error(code, err, match)


def test_option_errors_are_the_librarys_rule_messages_under_the_option_name(capsys):
    """One validation layer: the CLI applies dpselect._params' rules and prints their message as one line."""
    from dpselect._params import EPSILON

    for value in ("-1", "nan", "1e-320"):
        with pytest.raises(ValueError) as expected:
            EPSILON(float(value), "--epsilon")
        code, out, err = run(["demo", "--epsilon", value], capsys)
        assert code == 2 and out == "" and err.strip() == f"dpselect: error: {expected.value}"


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


def _library_choice(utility, counts, mechanism, epsilon, seed, delta=None):
    """The CLI's expected output, computed with the library directly."""
    import numpy as np

    from dpselect.apps import counts as majority
    from dpselect.mechanisms.registry import make_mechanism
    from dpselect.problem import SelectionProblem

    if utility == "majority":
        prob = SelectionProblem(np.asarray(counts, float), global_sensitivity=1.0, monotone=True)
    else:
        prob = majority.majority_problem(np.asarray(counts))
    mech = make_mechanism(mechanism, epsilon=epsilon, **({} if delta is None else {"delta": delta}))
    return int(mech.select(prob, rng=np.random.default_rng(seed))), str(mech.privacy(prob))


@pytest.mark.parametrize(
    "utility, mechanism, delta",
    [
        ("majority", "pf", None),
        ("majority", "em", None),
        ("majority", "rnm_laplace", None),
        ("indicator", "em", None),
        ("indicator", "snm_t", None),
        ("indicator", "snm_laplace", 1e-6),
        ("indicator", "sps", None),
        ("indicator", "ld", None),
    ],
)
@pytest.mark.parametrize("seed", [1, 7])
def test_select_counts_matches_the_library_and_prints_no_count(votes_csv, capsys, utility, mechanism, delta, seed):
    extra = [] if delta is None else ["--delta", str(delta)]
    code, out, err = run(
        [
            "select",
            str(votes_csv),
            "--column",
            "votes",
            "--utility",
            utility,
            "--mechanism",
            mechanism,
            "--epsilon",
            "0.3",
            "--seed",
            str(seed),
            "--label-column",
            "name",
            *extra,
        ],
        capsys,
    )
    assert code == 0, err
    idx, guarantee = _library_choice(utility, [40, 3, 5], mechanism, 0.3, seed, delta)
    lines = out.splitlines()
    assert lines[0] == f"selected: {['alice', 'bob', 'carol'][idx]} (row {idx} of 3)"
    assert lines[2].startswith(f"guarantee: {guarantee}")
    assert "40" not in lines[0] and "votes =" not in out  # no private count leaks


def test_select_prints_only_the_label_never_the_value(tmp_path, capsys):
    path = tmp_path / "votes.csv"
    path.write_text("votes\n22\n8\n17\n4\n0\n")
    code, out, err = run(
        ["select", str(path), "--column", "votes", "--utility", "majority", "--epsilon", "1", "--seed", "0"], capsys
    )
    assert code == 0, err
    assert out.splitlines()[0] in {f"selected: {i} (row {i} of 5)" for i in range(5)}
    assert "22" not in out and "17" not in out and "votes =" not in out


def test_default_mechanism_for_counts_is_the_most_accurate_registered_one():
    """PF on the counts: P[best] = 0.9966 on [22, 8, 17, 4, 0] at eps = 1 (EM on the indicator: 0.29).

    The PF probability is checked against a brute-force enumeration of its
    permutations (independent of the library's closed form).
    """
    import itertools
    import math

    import numpy as np

    from dpselect.analysis import accuracy
    from dpselect.apps import counts as majority
    from dpselect.cli._input import DEFAULT_MECHANISM
    from dpselect.mechanisms.registry import make_mechanism
    from dpselect.problem import SelectionProblem

    counts = np.array([22, 8, 17, 4, 0], float)
    counts_problem = SelectionProblem(counts, global_sensitivity=1.0, monotone=True)
    default = make_mechanism(DEFAULT_MECHANISM, epsilon=1.0)
    p = np.exp(counts - counts.max())  # monotone PF: coin of r has probability exp(eps (u_r - u*) / Delta)
    first = np.zeros(5)
    for perm in itertools.permutations(range(5)):
        survive = 1.0
        for r in perm:
            first[r] += survive * p[r]
            survive *= 1 - p[r]
    brute = first[0] / first.sum()
    assert accuracy(default, counts_problem) == pytest.approx(brute, rel=1e-9)
    assert brute == pytest.approx(0.9966, abs=5e-5)
    others = [accuracy(make_mechanism(n, epsilon=1.0), counts_problem) for n in ("em", "rnm_laplace", "rnm_gumbel")]
    indicator = [
        accuracy(make_mechanism(n, epsilon=1.0), majority.majority_problem(counts.astype(int)))
        for n in ("em", "pf", "snm_t", "sps", "ld")
    ]
    assert brute > max(others + indicator)
    assert indicator[0] == pytest.approx(0.2919, abs=5e-5)
    assert not math.isnan(brute)


def test_delta_actually_used_is_printed(votes_csv, capsys):
    base = ["select", str(votes_csv), "--column", "votes", "--utility", "indicator", "--epsilon", "1", "--seed", "0"]
    code, out, err = run([*base, "--mechanism", "snm_laplace"], capsys)
    assert code == 0, err
    import re

    shown = re.search(r"^guarantee: \(1, ([0-9.e+-]+)\)-DP", out, flags=re.M)
    assert shown is not None and float(shown.group(1)) > 0  # approximate DP: the delta is never hidden
    assert re.search(rf"^delta: {re.escape(shown.group(1))}( \(default for snm_laplace.*)?$", out, flags=re.M)
    code, out, err = run([*base, "--mechanism", "snm_lln", "--delta", "1e-05"], capsys)
    assert code == 0, err
    assert "delta: 1e-05 (from --delta)" in out
    code, out, err = run([*base, "--mechanism", "pf"], capsys)
    assert code == 0, err
    assert "delta: 0" in out.splitlines()
    code, out, err = run([*base, "--mechanism", "em", "--delta", "1e-05"], capsys)
    assert (code == 2 and "--delta" in err) or (code == 0 and "pure epsilon-DP: --delta 1e-05 is not used" in out)


def test_huge_counts_name_the_column(tmp_path, capsys):
    path = tmp_path / "big.csv"
    path.write_text(f"c\n{2**63}\n1\n")
    code, _, err = run(["select", str(path), "--column", "c", "--utility", "majority", "--epsilon", "1"], capsys)
    assert_one_line_error(code, err, "--column 'c'")


def test_select_scores_is_reproducible_with_seed(votes_csv, capsys):
    args = ["select", str(votes_csv), "--column", "score", "--epsilon", "1", "--sensitivity", "0.5", "--seed", "3"]
    first = run(args, capsys)
    second = run(args, capsys)
    assert first[0] == 0 and first[1] == second[1]
    assert "1-DP" in first[1] and "global sensitivity 0.5" in first[1]


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--column", "nope", "--epsilon", "1"], "--column 'nope' not in"),
        (["--column", "name", "--epsilon", "1", "--utility", "majority"], "--column 'name' must be numeric"),
        (["--column", "score", "--epsilon", "1", "--utility", "majority"], "integer counts"),
        (["--column", "votes", "--epsilon", "1", "--seed", "-5"], "--seed must be a non-negative integer, got -5"),
        (["--column", "votes", "--epsilon", "1", "--delta", "-0.1"], "--delta"),
        (["--column", "votes", "--epsilon", "1", "--mechanism", "bogus"], "--mechanism"),
        (["--column", "votes", "--epsilon", "1", "--delta", "1.5"], "--delta"),
        (["--column", "votes", "--epsilon", "1", "--sensitivity", "0"], "--sensitivity"),
        (["--column", "votes", "--epsilon", "1", "--utility", "nope"], "--utility"),
    ],
)
def test_select_errors(votes_csv, capsys, extra, match):
    code, _, err = run(["select", str(votes_csv), *extra], capsys)
    assert_one_line_error(code, err, match)


def test_select_parquet(tmp_path, capsys):
    import pandas as pd  # pyarrow is a runtime dependency: Parquet works out of the box

    path = tmp_path / "counts.parquet"
    pd.DataFrame({"c": [1, 9, 2], "who": ["x", "y", "z"]}).to_parquet(path)
    for seed in range(3):
        code, out, err = run(
            [
                "select",
                str(path),
                "--column",
                "c",
                "--utility",
                "majority",
                "--epsilon",
                "0.5",
                "--seed",
                str(seed),
                "--label-column",
                "who",
            ],
            capsys,
        )
        assert code == 0, err
        idx, _ = _library_choice("majority", [1, 9, 2], "pf", 0.5, seed)
        assert out.splitlines()[0] == f"selected: {'xyz'[idx]} (row {idx} of 3)"


@pytest.mark.parametrize("mechanism", ["em", "snm_t"])
def test_audit(capsys, mechanism):
    code, out, err = run(
        ["audit", mechanism, "--m", "3", "--epsilon", "1", "--max-count", "4", "--n-vectors", "4"], capsys
    )
    assert code == 0, err
    assert "audit over" in out and out.rstrip().endswith("ok")


def test_reproduce_quick_via_cli(tmp_path, capsys, monkeypatch):
    from dpselect.experiments import percentile

    monkeypatch.setattr(percentile, "DATASETS", ("HEPTH",))
    monkeypatch.setattr(percentile, "PERCENTILES", (90,))
    monkeypatch.setattr(percentile, "epsilons", lambda quick: [1.0, 10.0])
    code, out, err = run(
        ["reproduce", "percentile", "--quick", "--out", str(tmp_path), "--workers", "1", "--seed", "3"], capsys
    )
    assert code == 0, err
    assert "percentile:" in out and "ours: " in out and "published: " in out
    for markdown in ("| claim |", "<br>", "\\|", "|---"):  # plain text on the terminal; report.md has the table
        assert markdown not in out
    # stderr is not a terminal here: plain progress lines instead of a bar (at least the final one)
    import re

    n = int(re.search(r"^percentile: (\d+) tasks in ", out, flags=re.M).group(1))
    assert err.splitlines()[-1].startswith(f"percentile: {n}/{n} tasks, elapsed ")
    assert (tmp_path / "percentile" / "results.csv").is_file()
    assert (tmp_path / "percentile" / "report.md").is_file()


def test_console_entry_point_subprocess():
    env = dict(os.environ)
    src = str(Path(dpselect.__file__).resolve().parents[1])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "dpselect", "reproduce", "nope"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "dpselect: error: unknown experiment 'nope'; choose one of: percentile, median, tdt, tree, forest, all"
    ]


# ------------------------------------------------------------------ select on raw labels (votes)


def _votes_file(tmp_path: Path) -> Path:
    path = tmp_path / "votes.csv"
    path.write_text(
        "party,age\n" + "".join(f"{p},{a}\n" for p, a in [("red", 30)] * 7 + [("blue", 41)] * 2 + [("green", 55)])
    )
    return path


def test_select_majority_from_raw_labels_prints_the_winner_and_no_count(tmp_path, capsys):
    path = _votes_file(tmp_path)
    code, out, err = run(
        [
            "select",
            str(path),
            "--column",
            "party",
            "--epsilon",
            "5",
            "--seed",
            "0",
            "--candidates",
            "red,green,blue,purple",
        ],
        capsys,
    )
    assert code == 0, err
    assert out.splitlines()[0] == "selected: red"
    assert "1-DP" not in out and "5-DP [add_remove]" in out
    shown = out.replace("5-DP", "").replace("add_remove", "").replace("§2.6", "")
    for private in ("7", "10", "(row "):  # the counts, the number of records, a row index
        assert private not in shown, out


@pytest.mark.slow  # over ~10 s on two loaded cores: run by CI's slow step
def test_select_votes_frequencies_follow_permute_and_flip(tmp_path, capsys):
    from conftest import assert_frequencies_match
    from dpselect.apps.counts import label_counts

    path = _votes_file(tmp_path)
    cands = ["red", "green", "blue"]
    law = dpselect.PermuteAndFlip(0.4).probabilities(
        dpselect.SelectionProblem(label_counts(["red"] * 7 + ["blue"] * 2 + ["green"], cands), monotone=True)
    )
    picks = []
    for seed in range(600):
        _code, out, _ = run(
            [
                "select",
                str(path),
                "--column",
                "party",
                "--epsilon",
                "0.4",
                "--seed",
                str(seed),
                "--candidates",
                ",".join(cands),
            ],
            capsys,
        )
        picks.append(cands.index(out.splitlines()[0].removeprefix("selected: ")))
    assert_frequencies_match(np.array(picks), law)


@pytest.mark.parametrize("utility", [[], ["--utility", "votes"]])
def test_select_votes_without_candidates_is_refused_before_reading(tmp_path, capsys, utility):
    path = _votes_file(tmp_path)
    code, out, err = run(["select", str(path), "--column", "party", "--epsilon", "1", *utility], capsys)
    assert_one_line_error(code, err, "--candidates")
    assert out == "" and "--non-private-candidates-from-data" in err
    # refused before the file is read: the same error for a file that does not exist (with --utility votes)
    if utility:
        code, _, err2 = run(
            ["select", str(tmp_path / "absent.csv"), "--column", "party", "--epsilon", "1", *utility], capsys
        )
        assert code == 2 and err2 == err.replace(str(path), str(tmp_path / "absent.csv"))


def test_select_votes_non_private_opt_in_is_marked_everywhere(tmp_path, capsys):
    code, out, err = run(
        [
            "select",
            str(_votes_file(tmp_path)),
            "--column",
            "party",
            "--epsilon",
            "1",
            "--non-private-candidates-from-data",
        ],
        capsys,
    )
    assert code == 0, err
    assert "NOT differentially private" in err
    assert "NOT PRIVATE" in out.splitlines()[0] and "inf-DP" in out
    code, _, err = run(
        [
            "select",
            str(_votes_file(tmp_path)),
            "--column",
            "party",
            "--epsilon",
            "1",
            "--non-private-candidates-from-data",
            "--candidates",
            "red,blue",
        ],
        capsys,
    )
    assert_one_line_error(code, err, "not both")


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--candidates", "red,,blue"], "--candidates"),
        (["--candidates", "red,red"], "--candidates must be distinct"),
        (["--utility", "votes", "--column", "nope", "--candidates", "red"], "--column 'nope'"),
        (["--candidates", "red", "--sensitivity", "1"], "--sensitivity does not apply to --utility votes"),
        (["--candidates", "red", "--label-column", "age"], "--label-column does not apply"),
    ],
)
def test_select_votes_bad_options_are_one_line_errors(tmp_path, capsys, extra, match):
    argv = ["select", str(_votes_file(tmp_path)), "--column", "party", "--epsilon", "1", *extra]
    code, _, err = run(argv, capsys)
    assert_one_line_error(code, err, match)


def test_candidates_only_with_votes(tmp_path, capsys):
    code, _, err = run(
        [
            "select",
            str(_votes_file(tmp_path)),
            "--column",
            "age",
            "--epsilon",
            "1",
            "--utility",
            "scores",
            "--sensitivity",
            "1",
            "--candidates",
            "a,b",
        ],
        capsys,
    )
    assert_one_line_error(code, err, "apply to --utility votes (a column of raw labels) only")


def test_the_getting_started_select_command_runs_as_written(tmp_path, capsys, monkeypatch):
    page = (Path(__file__).resolve().parents[1] / "docs" / "getting-started.md").read_text(encoding="utf-8")
    line = next(ln for ln in page.splitlines() if ln.startswith("dpselect select votes.csv"))
    argv = line.split("#")[0].split()[1:]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "votes.csv").write_text("party\n" + "red\n" * 9 + "green\n" * 2 + "blue\n")
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert out.startswith("selected: ") and "[add_remove]" in out and "inf-DP" not in out


@pytest.mark.parametrize(
    "out, match", [("{file}", "is not a directory"), ("{file}/sub", "is not a writable directory")]
)
def test_reproduce_checks_out_before_any_work(tmp_path, capsys, out, match):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    code, _, err = run(["reproduce", "tree", "--quick", "--out", out.format(file=blocker)], capsys)
    assert_one_line_error(code, err, match)
    assert "tasks" not in err
