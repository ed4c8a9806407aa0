"""The reproduction framework: deterministic Dask runner, outputs, experiment modules (tiny grids)."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("matplotlib")

from dpselect.experiments import runner
from dpselect.experiments.runner import Claim, Task


@pytest.fixture(autouse=True)
def _no_data_dir(monkeypatch):
    """These tests run the embedded-data grids: a DPSELECT_DATA of the environment must not switch them."""
    monkeypatch.delenv("DPSELECT_DATA", raising=False)


def tiny_mixed_grid() -> list[tuple[str, list[Task]]]:
    """Exact (percentile) and randomised (tree, tdt, median) tasks, small enough for a unit test."""
    pct = [
        Task(
            ("HEPTH-like", 50, mech),
            {"dataset": "HEPTH", "source": "synthetic", "p": 50, "mechanism": mech, "epsilons": [1.0, 10.0]},
        )
        for mech in ("EM", "SNM-T")
    ]
    tree = [
        Task(
            ("iris", 2, sel, 2.0, 0),
            {
                "dataset": "iris",
                "data_dir": None,
                "depth": 2,
                "selection": sel,
                "epsilon": 2.0,
                "rep": 0,
                "folds": 3,
                "n_bins": 4,
            },
        )
        for sel in ("em", "snm_t")
    ]
    tdt = [
        Task(("accuracy", 3, c), {"kind": "accuracy", "m": 3, "chunk": c, "n_reps": 1, "epsilons": (9.0,)})
        for c in range(2)
    ]
    med = [Task(("uniform", r), {"distribution": "uniform", "rep": r, "n": 51, "epsilons": [1.0]}) for r in range(2)]
    return [("percentile", pct), ("tree", tree), ("tdt", tdt), ("median", med)]


def _csv_bytes(tmp_path, tag: str, **kwargs) -> dict[str, bytes]:
    out = {}
    for name, tasks in tiny_mixed_grid():
        rows = runner.execute(name, tasks, seed=123, progress=False, **kwargs)
        path = runner.write_csv(rows, tmp_path / f"{name}-{tag}.csv")
        out[name] = path.read_bytes()
    return out


def test_task_seeds_are_spawned_in_task_order():
    a = runner.task_seeds(5, 7)
    b = np.random.SeedSequence(7).spawn(5)
    assert [s.generate_state(2).tolist() for s in a] == [s.generate_state(2).tolist() for s in b]


def test_same_seed_same_csv_on_local_cluster_and_default_scheduler(tmp_path):
    distributed = pytest.importorskip("distributed")
    default = _csv_bytes(tmp_path, "default", workers=1)  # synchronous default
    threads = _csv_bytes(tmp_path, "threads", scheduler="threads", workers=2)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl,
        distributed.Client(cl) as client,
    ):
        cluster = _csv_bytes(tmp_path, "cluster", client=client)
    for name in default:
        assert default[name] == cluster[name], name
        assert default[name] == threads[name], name
    # and a different seed changes the randomised results
    rows = runner.execute("tree", tiny_mixed_grid()[1][1], seed=124, progress=False, workers=1)
    assert runner.write_csv(rows, tmp_path / "other.csv").read_bytes() != default["tree"]


def test_process_pool_scheduler_gives_the_same_csv(tmp_path):
    name, tasks = tiny_mixed_grid()[1]
    a = runner.write_csv(runner.execute(name, tasks, seed=5, progress=False, workers=1), tmp_path / "a.csv")
    b = runner.write_csv(runner.execute(name, tasks, seed=5, progress=False, workers=2), tmp_path / "b.csv")
    assert a.read_bytes() == b.read_bytes()


def test_rows_are_in_task_key_order_whatever_the_input_order():
    _, tasks = tiny_mixed_grid()[0]
    r1 = runner.execute("percentile", tasks, seed=0, progress=False, workers=1)
    r2 = runner.execute("percentile", list(reversed(tasks)), seed=0, progress=False, workers=1)
    assert r1 == r2
    assert [r["task"] for r in r1] == sorted(r["task"] for r in r1)


def test_duplicate_task_keys_are_rejected():
    t = Task(("a",), {})
    with pytest.raises(ValueError, match="duplicate"):
        runner.execute("percentile", [t, t], progress=False, workers=1)


def test_csv_format_is_deterministic(tmp_path):
    rows = [{"task": "x", "a": 0.1, "b": 1, "c": True, "d": None, "e": float("inf")}, {"task": "y", "a": 1 / 3}]
    text = runner.write_csv(rows, tmp_path / "r.csv").read_text()
    assert text == "task,a,b,c,d,e\nx,0.1,1,True,,inf\ny,0.3333333333333333,,,,\n"


def test_claims_table_marks():
    table = runner.claims_table(
        [Claim("a | b", "1", "2", True), Claim("c", "3", "4", False, "n"), Claim("d", "5", "6", None)]
    )
    assert "| a \\| b | 1 | 2 | ✓ |" in table
    assert "✗" in table and "| – |" in table


def test_unknown_experiment_and_missing_data(tmp_path):
    with pytest.raises(ValueError, match="unknown experiment"):
        runner.load_experiment("nope")
    with pytest.raises(runner.DataNotFoundError, match="--data-dir"):
        runner.reproduce("percentile", quick=False, out=tmp_path, data_dir=None, progress=False)
    with pytest.raises(runner.DataNotFoundError, match="not a directory"):
        runner.resolve_data_dir(tmp_path / "missing")
    with pytest.raises(runner.DataNotFoundError, match="DPBench"):
        runner.reproduce("percentile", quick=True, out=tmp_path, data_dir=tmp_path, progress=False)


def test_face_is_lazy_and_exports_the_entry_points():
    """``import dpselect.experiments`` imports no module behind the face; the names resolve on first use."""
    import subprocess
    import sys

    code = (
        "import sys, dpselect.experiments as e; print(sorted(m for m in sys.modules if m.startswith(e.__name__)));"
        "e.reproduce; print('dpselect.experiments.runner' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "['dpselect.experiments']" and out[1] == "True"
    import dpselect.experiments as face

    assert face.reproduce is runner.reproduce and face.EXPERIMENTS == runner.EXPERIMENTS
    assert set(face.__all__) <= set(dir(face))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        face.nope  # noqa: B018


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda f, p: f.reproduce("nope", out=p), ValueError, "unknown experiment 'nope'; choose one of: percentile"),
        (lambda f, p: f.reproduce(3, out=p), TypeError, "name must be a str"),
        (lambda f, p: f.reproduce("tdt", out=p, seed=-1), ValueError, "seed"),
        (lambda f, p: f.reproduce("tdt", out=p, workers=0), ValueError, "workers"),
        (lambda f, p: f.reproduce("tdt", out=p, quick=1), TypeError, "quick must be a bool"),
        (lambda f, p: f.reproduce("tdt", out=3), TypeError, "out must be a str or os.PathLike path"),
        (lambda f, p: f.reproduce("tdt", out=p, client="tcp://x"), TypeError, "client must be None or a dask"),
        (lambda f, p: f.reproduce_all(out=p, on_done=3), TypeError, "on_done must be callable"),
        (lambda f, p: f.reproduce_all(out=p, data_dir=1.5), TypeError, "data_dir must be None or a str"),
        (lambda f, p: f.load_experiment(["tdt"]), TypeError, "name must be a str"),
        (lambda f, p: f.resolve_data_dir(7), TypeError, "data_dir must be None or a str"),
        (lambda f, p: f.claims_text("✓ a claim"), TypeError, "claims must be an iterable of Claim"),
        (lambda f, p: f.count_line([1]), TypeError, "claims must hold Claim objects"),
    ],
)
def test_face_checks_its_arguments_before_running(tmp_path, call, error, message):
    import dpselect.experiments as face

    with pytest.raises(error, match=re.escape(message)):
        call(face, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_named_results():
    from dpselect.experiments.datasets import simulate_tdt, tdt_real_example
    from dpselect.experiments.tasks import ClaimCounts

    counts = ClaimCounts.of(
        [Claim("a", "1", "2", True), Claim("b", "1", "2", False, kind="new"), Claim("c", "1", "2", None)], "paper"
    )
    assert (counts.holds, counts.fails, counts.not_evaluated, counts.total) == (1, 0, 1, 2)
    assert tuple(counts) == (1, 0, 1)
    panel = simulate_tdt(3, 10, rng=0)
    b, c = panel
    assert b is panel.b and c is panel.c
    example = tdt_real_example(rng=0)
    assert example.n_families == 215 and tuple(example)[2] == 215


def test_write_results_names_its_files(tmp_path):
    from dpselect.experiments.csvio import write_results

    plain = write_results([{"a": 1}], tmp_path)
    assert plain.files == [tmp_path / "results.csv"] and plain.timed is False
    timed = write_results([{"a": 1, "run_seconds": 0.5}, {"a": 2}], tmp_path)
    assert timed.timed and timed.files == [tmp_path / "results.csv", tmp_path / "timings.csv"]
    assert (tmp_path / "timings.csv").read_text() == "a,run_seconds\n1,0.5\n"
    assert (tmp_path / "results.csv").read_text() == "a\n1\n2\n"


def _shrink(monkeypatch, name: str) -> None:
    """Monkeypatch an experiment module down to a grid of a few seconds."""
    import importlib

    mod = importlib.import_module(f"dpselect.experiments.{name}")
    if name == "percentile":
        monkeypatch.setattr(mod, "DATASETS", ("HEPTH",))
        monkeypatch.setattr(mod, "PERCENTILES", (50,))
        monkeypatch.setattr(mod, "epsilons", lambda quick: [1.0, 10.0])
    elif name == "median":
        monkeypatch.setattr(mod, "DISTRIBUTIONS", {"uniform": (0.0, 1.0)})
        monkeypatch.setattr(mod, "N", 101)
        monkeypatch.setattr(mod, "epsilons", lambda quick: [0.1, 1.0])
    elif name == "tdt":
        monkeypatch.setattr(
            mod,
            "grid",
            lambda quick: {
                "ms": (3,),
                "eps": (9.0,),
                "chunks": 1,
                "reps_per_chunk": 1,
                "runtime_ms": (10,),
                "real_reps": 1,
            },
        )
    elif name == "tree":
        monkeypatch.setattr(  # the grid that tree.tasks reads lives in _tree_grid
            importlib.import_module("dpselect.experiments._tree_grid"),
            "grid",
            lambda quick, real: {
                "datasets": ("iris",),
                "depths": (2,),
                "selections": ("em", "pf", "snm_t", "snm_lln"),
                "eps": (2.0,),
                "reps": 1,
                "folds": 3,
                "n_bins": 4,
            },
        )
    elif name == "forest":
        monkeypatch.setattr(  # the grid that forest.tasks reads lives in _forest_grid
            importlib.import_module("dpselect.experiments._forest_grid"),
            "grid",
            lambda quick, real: {"depths": {"iris": 2}, "selections": ("em", "snm_t"), "eps": (1.0,), "reps": 1},
        )
        monkeypatch.setattr(mod, "N_TREES", 4)


@pytest.mark.parametrize("name", runner.EXPERIMENTS)
def test_reproduce_writes_csv_png_and_report(tmp_path, monkeypatch, name):
    import csv

    from dpselect.experiments.report import claim_counts, finding_counts

    _shrink(monkeypatch, name)
    res = runner.reproduce(name, quick=True, out=tmp_path, seed=1, workers=1, progress=False)
    out = tmp_path / name
    # results.csv holds exactly the rows returned, cell by cell, without the timing columns
    with open(out / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(res.rows) > 0
    assert next(iter(table[0])) == "task" and not any(c.endswith("_seconds") for c in table[0])
    for got, row in zip(table, res.rows):
        assert got == {c: runner.format_value(row.get(c)) for c in got}
    assert res.n_tasks == len({r["task"] for r in res.rows})
    if name == "tdt":  # run times are kept out of results.csv
        assert "median_seconds" in (out / "timings.csv").read_text().splitlines()[0]
    # one embedded figure per PNG, the claim counts and the data actually used
    pngs = sorted(out.glob("*.png"))
    assert pngs and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    report = (out / "report.md").read_text(encoding="utf-8")
    paper, new = claim_counts(res.claims), finding_counts(res.claims)
    ok, bad, none = paper.holds, paper.fails, paper.not_evaluated
    holds, fails, open_ = new
    assert ok + bad + none + holds + fails + open_ == len(res.claims) > 0
    assert (
        f"{ok + bad + none} claims of the papers: {ok} reproduced (✓), {bad} not reproduced (✗), "
        f"{none} not evaluated (–)." in report
    )
    section = report.split("## Claims", 1)[1].split("\n## ", 1)[0]
    assert section.count("| ✓ |") == ok and section.count("| ✗ |") == bad
    assert section.count("| + |") == holds and section.count("| ○ |") == fails
    assert section.count("| – |") == none + open_
    for c in res.claims:  # a finding about a baseline the paper does not have never gets a paper mark
        if "not in the paper" in c.published or c.published.startswith("paper: "):
            assert c.kind == "new" and c.mark in "+○–"
    assert "- data: embedded data only" in report and res.data_files == []
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == len(pngs) == report.count("![")


def test_data_line_names_the_files_read(tmp_path, monkeypatch):
    """With --data-dir the report names exactly the files the experiment read (and nothing else)."""
    from dpselect.experiments import percentile

    monkeypatch.setattr(percentile, "DATASETS", ("HEPTH",))
    monkeypatch.setattr(percentile, "PERCENTILES", (50,))
    monkeypatch.setattr(percentile, "epsilons", lambda quick: [1.0])
    data = tmp_path / "data"
    data.mkdir()
    np.save(data / "HEPTH.n4096.npy", np.random.default_rng(0).integers(0, 20, size=4096))
    (data / "unrelated.npy").write_bytes(b"")
    res = runner.reproduce("percentile", quick=True, out=tmp_path / "out", data_dir=data, workers=1, progress=False)
    assert res.data_files == [data / "HEPTH.n4096.npy"]
    report = (tmp_path / "out" / "percentile" / "report.md").read_text(encoding="utf-8")
    assert f"- data: files read under `{data}`: `HEPTH.n4096.npy`\n" in report
    assert "unrelated" not in report


def test_plain_progress_lines_when_not_a_terminal():
    import io
    import time

    from dpselect.experiments._progress import Progress, format_duration

    assert format_duration(3725.4) == "1:02:05"
    now = [100.0]
    p = Progress("exp", 4, enabled=False, clock=lambda: now[0])
    p.advance()
    now[0] += 30.0
    assert p.line() == "exp: 1/4 tasks, elapsed 0:00:30, ETA 0:01:30"
    stream = io.StringIO()  # not a terminal: plain lines from a ticker, even while no task finishes
    p = Progress("exp", 3, None, interval=0.02, stream=stream)
    time.sleep(0.15)
    p.advance(3)
    p.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3 and all(ln.startswith("exp: ") and " tasks, elapsed " in ln for ln in lines)
    assert lines[0].endswith("ETA ?") and lines[-1].startswith("exp: 3/3 tasks")
    silent = io.StringIO()
    Progress("exp", 3, False, interval=0.01, stream=silent).close()
    assert silent.getvalue() == ""


def test_common_stats_grid_majority_and_claims():
    from dpselect.experiments import _common as c

    rows = [{"d": "a", "e": 1.0, "acc": v} for v in (0.5, 0.7, 0.9)] + [{"d": "b", "e": 1.0, "acc": 0.25}]
    st = c.stats_by(rows, ["d", "e"], "acc")
    assert st[("a", 1.0)].mean == pytest.approx(0.7) and st[("a", 1.0)].spread == pytest.approx(0.2)
    assert st[("b", 1.0)] == c.Stat(0.25, 0.0, 1)
    tasks = c.task_grid({"d": ["x", "y"], "rep": range(2)}, lambda pt: {"depth": len(pt["d"]) + pt["rep"]}, n=5)
    assert [t.key for t in tasks] == [("x", 0), ("x", 1), ("y", 0), ("y", 1)]
    assert tasks[1].kwargs == {"d": "x", "rep": 1, "n": 5, "depth": 2}
    assert c.majority_accuracy([0, 1, 1, 2], [1, 1, 0, 2, 1]) == pytest.approx(0.6)
    assert c.majority_accuracy([3, 3, 1, 1], [1, 3]) == pytest.approx(0.5)  # tie: smallest label
    assert c.claim_at_least("t", [0.1, -0.05], "diff", "p").ok is True
    assert c.claim_at_least("t", [-0.1, 0.05], "diff", "p").ok is False
    assert c.claim_at_least("t", [], "diff", "p").ok is None
    m = c.claim_matches_published("t", [(0.80, 0.81), (0.70, 0.75)], 0.02, "p", "needs data")
    assert m.ok is False and "0.05" in m.ours
    assert c.claim_matches_published("t", [(0.80, 0.81)], 0.02, "p", "needs data").ok is True
    assert c.claim_matches_published("t", [], 0.02, "p", "needs data").ours == "not evaluated (needs data)"
    table = c.means_table(st, [("a", 1.0), ("b", 1.0)], [], ["d", "e"])
    assert table.splitlines()[0] == "| d | e |"


def test_accuracy_panel_has_error_bars_and_majority_line(tmp_path):
    from dpselect.experiments import _common as c
    from dpselect.experiments._plotting import accuracy_panel, new_figure

    _, axes = new_figure(1, 1)
    ax = axes[0, 0]
    accuracy_panel(ax, [0.1, 1.0, 10.0], {"EM": ([0.5, 0.6, 0.9], [0.1, 0.05, 0.0])}, majority=0.4)
    (container,) = ax.containers
    assert container.has_yerr
    segs = container.lines[2][0].get_segments()
    assert [tuple(np.round(s[:, 1], 9)) for s in segs] == [(0.4, 0.6), (0.55, 0.65), (0.9, 0.9)]
    majority_lines = [ln for ln in ax.lines if ln.get_label() == "majority class"]
    assert len(majority_lines) == 1 and list(majority_lines[0].get_ydata()) == [0.4, 0.4]
    assert ax.get_xscale() == "log"
    rows = [
        {"ds": "iris", "sel": s, "epsilon": e, "accuracy": a, "majority_accuracy": 0.33}
        for s in ("em", "pf")
        for e in (0.5, 2.0)
        for a in (0.6, 0.8)
    ]
    path = c.accuracy_figure(
        rows,
        tmp_path / "f.png",
        panels=["ds"],
        x="epsilon",
        series="sel",
        published=lambda key, s, e: 0.9 if s == "pf" else None,
    )
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_log_axis_labels_decades_only_and_shows_exact_zero():
    from matplotlib.ticker import NullFormatter

    from dpselect.experiments._plotting import log_axis, new_figure

    fig, axes = new_figure(1, 2)
    a, b = axes[0]
    a.plot([1, 10, 100], [1e-3, 1e-1, 2.0])
    log_axis(a, "y", [1e-3, 1e-1, 2.0])
    assert a.get_yscale() == "log" and isinstance(a.yaxis.get_minor_formatter(), NullFormatter)
    b.plot([1, 10, 100], [0.0, 1e-2, 1.0])
    log_axis(b, "y", [0.0, 1e-2, 1.0])
    assert b.get_yscale() == "symlog"
    fig.canvas.draw()
    labels = {t.get_text(): t.get_position()[1] for t in b.get_yticklabels() if t.get_text()}
    assert labels["0"] == 0.0 and "$10^{-2}$" in labels and "$10^{0}$" in labels
    lo, _ = b.get_ylim()
    assert lo < 0.0  # the zero points sit inside the panel, not on its edge


def test_reproduce_all_writes_combined_report(tmp_path, monkeypatch):
    for name in runner.EXPERIMENTS:
        _shrink(monkeypatch, name)
    results = runner.reproduce_all(quick=True, out=tmp_path, seed=0, workers=1, progress=False)
    assert [r.name for r in results] == list(runner.EXPERIMENTS)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| experiment | claim | ours | published | result |" in text
    for name in runner.EXPERIMENTS:
        assert f"{name}/report.md" in text
    claims = [c for r in results for c in r.claims]
    ok, bad, none = (sum(c.ok is v and c.kind == "paper" for c in claims) for v in (True, False, None))
    assert (
        f"**Summary:** {ok + bad + none} claims of the papers: {ok} reproduced (✓), {bad} not reproduced (✗), "
        f"{none} not evaluated (–)." in text
    )
    assert "## Abbreviations" in text and "- **EM**: exponential mechanism" in text
    # terms of the experiments' own reports (shown in report.html) are defined too, and only terms used
    assert "- **PF-rank**: permute-and-flip on the rank-distance utility" in text
    pages = "\n".join((tmp_path / n / "report.md").read_text(encoding="utf-8") for n in runner.EXPERIMENTS)
    for term in re.findall(r"^- \*\*(.+?)\*\*:", text.split("## Abbreviations", 1)[1], flags=re.M):
        assert re.search(rf"(?<![\w-]){re.escape(term)}(?!\w)", text.split("## Abbreviations")[0] + pages), term
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    n_png = sum(len(list((tmp_path / n).glob("*.png"))) for n in runner.EXPERIMENTS)
    assert page.count('src="data:image/png;base64,') == n_png > 0


def test_percentile_aee_is_exact_and_ld_shortcut_matches_the_mechanism():
    from dpselect.analysis import expected_error
    from dpselect.apps.quantiles._percentile import percentile as pct
    from dpselect.experiments import percentile as exp
    from dpselect.mechanisms import LocalDampening

    task = Task(
        ("HEPTH-like", 90, "LD"),
        {"dataset": "HEPTH", "source": "synthetic", "p": 90, "mechanism": "LD", "epsilons": [0.5, 2.0]},
    )
    rows = exp.run_task(task, np.random.SeedSequence(0))
    h = exp.synthetic_histogram("HEPTH")
    grid = np.arange(exp.GRID_SIZE)
    prob = pct.percentile_problem(h, 90, grid, histogram=True)
    loss = pct.absolute_error_loss(grid, pct.true_percentile(h, 90, grid, histogram=True))
    for r in rows:
        assert r["aee"] == pytest.approx(expected_error(LocalDampening(r["epsilon"]), prob, loss=loss), rel=1e-9)


def test_synthetic_histograms_are_fixed():
    from dpselect.experiments import percentile as exp

    for name in ("HEPTH", "PATENT", "INCOME"):
        h = exp.synthetic_histogram(name)
        assert h.shape == (4096,) and h.dtype == np.int64 and h.sum() > 50_000
    assert exp.synthetic_histogram("INCOME").max() > 20 * np.median(
        exp.synthetic_histogram("INCOME")[exp.synthetic_histogram("INCOME") > 0]
    )


def test_save_figure_tidies_log_ticks_and_moves_legends_off_the_panels(tmp_path):
    from matplotlib.ticker import NullFormatter

    from dpselect.experiments._plotting import new_figure, save_figure, tidy_figure

    fig, axes = new_figure(1, 2)
    for ax in axes[0]:
        ax.plot([0.5, 2.0, 8.0], [0.7, 0.8, 0.9], label="EM")
        ax.plot([0.5, 2.0, 8.0], [0.6, 0.85, 0.95], label="PF")
        ax.set_xscale("log")
        ax.legend()
    tidy_figure(fig)
    fig.canvas.draw()
    for ax in axes[0]:
        assert ax.get_legend() is None
        assert [t.get_text() for t in ax.get_xticklabels() if t.get_text()] == ["0.5", "2", "8"]
        assert isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["EM", "PF"]  # merged, once
    fig2, axes2 = new_figure(1, 1)
    axes2[0, 0].plot([1e-3, 1e3], [1, 2])
    axes2[0, 0].set_xscale("log")
    path = save_figure(fig2, tmp_path / "f.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
    labels = [t.get_text() for t in axes2[0, 0].get_xticklabels() if t.get_text()]
    assert labels == ["$10^{-3}$", "$10^{-2}$", "$10^{-1}$", "$10^{0}$", "$10^{1}$", "$10^{2}$", "$10^{3}$"]


@pytest.mark.parametrize("name", ["percentile", "median", "tree", "forest", "tdt"])
def test_report_texts_name_only_objects_that_exist(name):
    """Every dotted name a report prints (description, notes) imports, and no RST role is left raw."""
    import importlib

    module = runner.load_experiment(name)
    text = "\n".join([module.DESCRIPTION, *module.notes(True, None), *module.notes(False, None)])
    assert not re.search(r":(?:func|class|mod|meth|attr|data|obj):`", text)
    names = set(re.findall(r"``((?:dpselect|apps|analysis|datasets)\.[\w.]+)", text))
    assert names, "no dotted name found: the pattern is wrong"
    for dotted in sorted(names):
        assert dotted.startswith("dpselect."), f"{dotted}: print the full dotted name"
        module_name, attr = dotted, []
        while True:
            try:
                obj = importlib.import_module(module_name)
                break
            except ImportError:
                module_name, _, last = module_name.rpartition(".")
                attr.insert(0, last)
        for part in attr:
            obj = getattr(obj, part)  # AttributeError: the report names something that does not exist


def test_terminal_claims_are_plain_text_with_a_gloss_and_evaluated():
    claims = [
        Claim("SPS IV (Thm 5) beats EM | PF", "3/3 cells", "YS Fig. 1", True, note="a note"),
        Claim("Duff is best", "7/9", "Fig. 1", None, kind="new"),
    ]
    text = runner.claims_text(claims)
    assert "<br>" not in text and "\\|" not in text and "*" not in text
    lines = text.splitlines()
    assert lines[0] == "✓ SPS IV (Thm 5) beats EM | PF" and lines[-1].startswith("    meaning: Duff:")
    meaning = next(line for line in lines if line.startswith("    meaning: SPS IV"))
    assert "Thm 5:" not in meaning.split("SPS IV:")[0] and "EM:" in meaning and "PF:" in meaning


def test_data_line_lists_files_of_a_cached_dataset_again():
    """A dataset parsed earlier in the process (load's cache) is still reported as read."""
    from dpselect.experiments import _data, _tabular

    table = _tabular.Tabular.__new__(_tabular.Tabular)
    path = _data.Path("/data/nltcs/nltcs.csv")
    _tabular._load_cached.cache_clear()
    try:
        original = _tabular._real
        _tabular._real = lambda name, d: (_data.record_read(path), table)[1]
        with _data.recording() as first:
            _tabular.load("nltcs", "/data")
        with _data.recording() as second:
            assert _tabular.load("nltcs", "/data") is table  # from the cache
    finally:
        _tabular._real = original
        _tabular._load_cached.cache_clear()
    assert first == second == [path]


def test_tdt_best_sound_claim_is_evaluated():
    from dpselect.experiments._tdt_claims import _best_sound_claims

    means = {("proven", 5, 3.0, "nd_pf"): 0.9, ("proven", 5, 3.0, "sps_thm5_one_sided"): 0.5}
    claim = _best_sound_claims(means, {})[0]
    assert claim.ok is True and claim.mark == "+"
    means[("proven", 5, 3.0, "nd_pf")] = 0.1
    assert _best_sound_claims(means, {})[0].mark == "○"
