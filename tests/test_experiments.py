"""The reproduction framework: deterministic Dask runner, outputs, experiment modules (tiny grids)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask")
pytest.importorskip("matplotlib")

from dpselect.experiments import runner  # noqa: E402
from dpselect.experiments.runner import Claim, Task  # noqa: E402


def tiny_mixed_grid() -> list[tuple[str, list[Task]]]:
    """Exact (percentile) and randomised (tree, tdt, median) tasks, small enough for a unit test."""
    pct = [Task(("HEPTH-like", 50, mech), {"dataset": "HEPTH", "source": "synthetic", "p": 50, "mechanism": mech,
                                           "epsilons": [1.0, 10.0]}) for mech in ("EM", "SNM-T")]
    tree = [Task(("iris", 2, sel, 2.0, 0), {"dataset": "iris", "data_dir": None, "depth": 2, "selection": sel,
                                            "epsilon": 2.0, "rep": 0, "folds": 3, "n_bins": 4})
            for sel in ("em", "snm_t")]
    tdt = [Task(("accuracy", 3, c), {"kind": "accuracy", "m": 3, "chunk": c, "n_reps": 1, "epsilons": (9.0,)})
           for c in range(2)]
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
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
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
    table = runner.claims_table([Claim("a | b", "1", "2", True), Claim("c", "3", "4", False, "n"),
                                 Claim("d", "5", "6", None)])
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
        monkeypatch.setattr(mod, "grid", lambda quick: {"ms": (3,), "eps": (9.0,), "chunks": 1, "reps_per_chunk": 1,
                                                        "runtime_ms": (10,), "real_reps": 1})
    elif name == "tree":
        monkeypatch.setattr(mod, "grid", lambda quick, real: {
            "datasets": ("iris",), "depths": (2,), "selections": ("em", "pf", "snm_t", "snm_lln"), "eps": (2.0,),
            "reps": 1, "folds": 3, "n_bins": 4})
    elif name == "forest":
        monkeypatch.setattr(mod, "grid", lambda quick, real: {
            "depths": {"iris": 2}, "selections": ("em", "snm_t"), "eps": (1.0,), "reps": 1})
        monkeypatch.setattr(mod, "N_TREES", 4)


@pytest.mark.parametrize("name", runner.EXPERIMENTS)
def test_reproduce_writes_csv_png_and_report(tmp_path, monkeypatch, name):
    _shrink(monkeypatch, name)
    res = runner.reproduce(name, quick=True, out=tmp_path, seed=1, workers=1, progress=False)
    out = tmp_path / name
    assert (out / "results.csv").is_file() and (out / "report.md").is_file()
    pngs = list(out.glob("*.png"))
    assert pngs and all(p.read_bytes()[:4] == b"\x89PNG" for p in pngs)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| claim | ours | published | ✓/✗ |" in report
    assert res.claims and all(isinstance(c, Claim) for c in res.claims)
    header = (out / "results.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "task" and not any(c.endswith("_seconds") for c in header)
    if name == "tdt":  # run times are kept out of results.csv
        assert "median_seconds" in (out / "timings.csv").read_text().splitlines()[0]


def test_reproduce_all_writes_combined_report(tmp_path, monkeypatch):
    for name in runner.EXPERIMENTS:
        _shrink(monkeypatch, name)
    results = runner.reproduce_all(quick=True, out=tmp_path, seed=0, workers=1, progress=False)
    assert [r.name for r in results] == list(runner.EXPERIMENTS)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| experiment | claim | ours | published | ✓/✗ |" in text
    for name in runner.EXPERIMENTS:
        assert f"{name}/report.md" in text


def test_percentile_aee_is_exact_and_ld_shortcut_matches_the_mechanism():
    from dpselect.analysis import expected_error
    from dpselect.apps import percentile as pct
    from dpselect.experiments import percentile as exp
    from dpselect.mechanisms import LocalDampening

    task = Task(("HEPTH-like", 90, "LD"), {"dataset": "HEPTH", "source": "synthetic", "p": 90, "mechanism": "LD",
                                          "epsilons": [0.5, 2.0]})
    rows = exp.run_task(task, np.random.SeedSequence(0))
    h = exp.synthetic_histogram("HEPTH")
    grid = np.arange(exp.GRID_SIZE)
    prob = pct.problem(h, 90, grid, histogram=True)
    loss = pct.absolute_error_loss(grid, pct.true_percentile(h, 90, grid, histogram=True))
    for r in rows:
        assert r["aee"] == pytest.approx(expected_error(LocalDampening(r["epsilon"]), prob, loss=loss), rel=1e-9)


def test_synthetic_histograms_are_fixed():
    from dpselect.experiments import percentile as exp

    for name in ("HEPTH", "PATENT", "INCOME"):
        h = exp.synthetic_histogram(name)
        assert h.shape == (4096,) and h.dtype == np.int64 and h.sum() > 50_000
    assert exp.synthetic_histogram("INCOME").max() > 20 * np.median(exp.synthetic_histogram("INCOME")[
        exp.synthetic_histogram("INCOME") > 0])
