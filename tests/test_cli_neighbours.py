"""Every command on neighbouring inputs: the same exit code, stdout and stderr except the released columns.

A CLI line is a release too: the neighbours below differ in one record (a vote, a count, a family, an
individual, a histogram record), and every line but the released ones (the chosen label, the table's
rows; timings are run time, covered by the constant-time notes of the publishing page) must match.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

pytest.importorskip("typer")

from dpselect.apps.genomics import simulate_case_control, simulate_trios
from dpselect.cli import main

TIMING = re.compile(r"[\d,]+(\.\d+)? [A-Za-z]+/s|\d+(\.\d+)?\s*(s|ms|min)\b|elapsed \S+")


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _masked(text: str, released: str) -> list[str]:
    """Lines with the released ones (matching ``released``) and the timings replaced by placeholders."""
    return [("<released>" if re.match(released, ln) else TIMING.sub("<time>", ln)) for ln in text.splitlines()]


def _same_but_released(runs, released):
    (c0, o0, e0), *rest = runs
    for c, o, e in rest:
        assert c == c0, (e0, e)
        assert _masked(o, released) == _masked(o0, released)
        assert _masked(e, released) == _masked(e0, released)


# ----------------------------------------------------------------------------- select


def _votes(tmp_path, name, rows):
    path = tmp_path / f"{name}.csv"
    path.write_text("vote\n" + "".join(("" if r is None else r) + "\n" for r in rows))
    return path


def test_select_votes_neighbours(tmp_path, capsys):
    """A missing vote, an out-of-domain label, a valid vote, or no extra record: one behaviour."""
    base = ["a"] * 5 + ["b"] * 3 + ["c"]
    files = [_votes(tmp_path, f"v{i}", base + extra) for i, extra in enumerate([[], [None], ["zz"], ["b"]])]
    runs = [
        _run(["select", f, "--column", "vote", "--candidates", "a,b,c", "--epsilon", 1, "--seed", 2], capsys)
        for f in files
    ]
    assert runs[0][0] == 0, runs[0][2]
    _same_but_released(runs, r"selected: ")


@pytest.mark.parametrize("utility, mechanism", [("majority", "pf"), ("indicator", "ld"), ("indicator", "snm_t")])
def test_select_counts_neighbours(tmp_path, capsys, utility, mechanism):
    """A count moved by one, up to 1e8 (local dampening's cost no longer follows the count)."""
    paths = []
    for i, counts in enumerate(([100_000_000, 3, 0], [100_000_001, 3, 0], [100_000_000, 4, 0])):
        p = tmp_path / f"c{i}.csv"
        p.write_text("name,votes\n" + "".join(f"{n},{c}\n" for n, c in zip("xyz", counts)))
        paths.append(p)
    argv = ["--column", "votes", "--label-column", "name", "--utility", utility, "--mechanism", mechanism]
    runs = [_run(["select", p, *argv, "--epsilon", 1, "--seed", 3], capsys) for p in paths]
    assert runs[0][0] == 0, runs[0][2]
    _same_but_released(runs, r"selected: ")


def test_audit_has_no_private_input(capsys):
    """``audit`` reads no data (public count vectors it enumerates itself): the same lines every time."""
    argv = ["audit", "em", "--m", "3", "--epsilon", "1", "--max-count", "3", "--n-vectors", "3"]
    _same_but_released([_run(argv, capsys), _run(argv, capsys)], r"$^")


# ----------------------------------------------------------------------------- tdt


def _copy_fileset(src, dst):
    for ext in ("bed", "bim", "fam"):
        shutil.copy(f"{src}.{ext}", f"{dst}.{ext}")


def _edit_fam(prefix, row, col, value):
    lines = [ln.split("\t") for ln in open(f"{prefix}.fam").read().splitlines()]
    lines[row][col] = value
    open(f"{prefix}.fam", "w").write("\n".join("\t".join(ln) for ln in lines) + "\n")


def test_tdt_neighbours(tmp_path, capsys):
    """The issue's example: one child unaffected, or of unknown sex (a family replaced); "60 trios" is gone."""
    base = tmp_path / "t0"
    simulate_trios(base, 60, 20, causal=[3], effect=0.8, rng=1)
    unaffected, nosex = tmp_path / "t1", tmp_path / "t2"
    _copy_fileset(base, unaffected)
    _copy_fileset(base, nosex)
    _edit_fam(unaffected, 2, 5, "1")  # the first family's child (row 2) unaffected
    _edit_fam(nosex, 2, 4, "0")  # ... or of unknown sex
    runs = [_run(["tdt", p, "--epsilon", 2, "--k", 2, "--seed", 5], capsys) for p in (base, unaffected, nosex)]
    assert runs[0][0] == 0, runs[0][2]
    assert "trios" not in runs[0][1] and "60" not in runs[0][1]
    _same_but_released(runs, r"\s*\d+\s+\S+\s+rs\d+")


def test_tdt_out_to_a_full_device_prints_nothing(tmp_path, capsys):
    """``--out /dev/full``: the write fails before the table is printed (exit 2, one line)."""
    base = tmp_path / "t0"
    simulate_trios(base, 20, 8, causal=[3], effect=0.8, rng=1)
    code, out, err = _run(["tdt", base, "--epsilon", 2, "--k", 2, "--seed", 5, "--out", "/dev/full", "--quiet"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("dpselect: error: --out '/dev/full': cannot write it") and "internal error" not in err


# ----------------------------------------------------------------------------- assoc


def test_assoc_add_remove_neighbours_one_case_or_none(tmp_path, capsys):
    """The issue's example: one case vs none (that individual left out) exit alike under add/remove."""
    one = tmp_path / "cc1"
    simulate_case_control(1, 20, 10, path=one, rng=1)
    none = tmp_path / "cc0"
    _copy_fileset(one, none)
    rows = [ln.split() for ln in open(f"{one}.fam").read().splitlines()]
    _edit_fam(none, next(i for i, r in enumerate(rows) if r[5] == "2"), 5, "-9")
    argv = ["--epsilon", 1, "--k", 2, "--relation", "add_remove", "--seed", 0, "--quiet"]
    runs = [_run(["assoc", p, *argv], capsys) for p in (one, none)]
    assert runs[0][0] == 0, runs[0][2]
    _same_but_released(runs, r"\s*\d+\s+\S+\s+rs\d+")


def test_assoc_replace_neighbours(tmp_path, capsys):
    """Under replace (status public) a case's genotypes replaced by another individual's: the same lines."""
    a = tmp_path / "a"
    simulate_case_control(30, 30, 12, path=a, rng=2)
    b = tmp_path / "b"
    _copy_fileset(a, b)
    bed = bytearray(open(f"{b}.bed", "rb").read())
    bed[3] ^= 0b11  # the first individual's genotype at the first SNP
    open(f"{b}.bed", "wb").write(bytes(bed))
    runs = [_run(["assoc", p, "--epsilon", 1, "--k", 2, "--seed", 0, "--quiet"], capsys) for p in (a, b)]
    assert runs[0][0] == 0, runs[0][2]
    _same_but_released(runs, r"\s*\d+\s+\S+\s+rs\d+")


# ----------------------------------------------------------------------------- reproduce


def test_reproduce_quick_neighbours(tmp_path, capsys, monkeypatch):
    """``reproduce percentile --quick`` on a histogram and on it plus one record: the same lines, numbers aside.

    The experiment's figures are measurements on public benchmark data (not releases): every number is
    masked, the rest (exit code, the lines and their order, the files written) must agree.
    """
    from dpselect.experiments import percentile

    monkeypatch.setattr(percentile, "DATASETS", ("HEPTH",))
    monkeypatch.setattr(percentile, "PERCENTILES", (90,))
    monkeypatch.setattr(percentile, "epsilons", lambda quick: [1.0])
    hist = np.random.default_rng(0).poisson(3.0, 4096)  # a stand-in for the DPBench histogram (4096 bins)
    runs, written = [], []
    for i, h in enumerate((hist, hist + (np.arange(hist.size) == 7))):
        root = tmp_path / f"data{i}" / "dpbench_1d"
        root.mkdir(parents=True)
        np.save(root / "HEPTH.n4096.npy", h.astype(np.int64))
        out = tmp_path / f"out{i}"
        argv = ["reproduce", "percentile", "--quick", "--out", out, "--workers", "1", "--seed", "3"]
        runs.append(_run([*argv, "--data-dir", root.parent], capsys))
        written.append(sorted(p.name for p in (out / "percentile").iterdir()))
    assert runs[0][0] == 0, runs[0][2]
    assert written[0] == written[1]
    number = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")
    masked = [(c, number.sub("#", o).replace(str(tmp_path), ""), number.sub("#", e)) for c, o, e in runs]
    masked = [(c, o.replace("data#", "data").replace("out#", "out"), e) for c, o, e in masked]
    _same_but_released(masked, r"$^")
