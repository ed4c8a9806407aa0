"""The experiment modules on the shared scaffolding: rows, figures, claims and tables on tiny inputs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("sklearn")

from dpselect.experiments import _common, _tree_grid, forest, median, percentile, runner, tdt, tree
from dpselect.experiments._plotting import tidy_figure
from dpselect.experiments._tabular import SKLEARN, load
from dpselect.experiments.tasks import Task


@pytest.fixture
def figures(monkeypatch):
    """Capture the figures the experiments save (tidied as on disk) instead of writing them."""
    captured = []

    def fake_save(fig, path, *, tidy=True):
        if tidy:
            tidy_figure(fig)
        fig.canvas.draw()
        captured.append(fig)
        return path

    monkeypatch.setattr(_common, "save_figure", fake_save)
    return captured


def test_bundled_datasets_resolve_whatever_the_data_dir(tmp_path, monkeypatch):
    """Regression: with DPSELECT_DATA set, the quick tree/forest grids failed with "unknown dataset 'iris'"."""
    for name in SKLEARN:
        a, b = load(name, None), load(name, str(tmp_path))
        assert a.classes == b.classes and np.array_equal(a.y, b.y)
    monkeypatch.setenv("DPSELECT_DATA", str(tmp_path))
    monkeypatch.setattr(  # the grid that tree.tasks reads lives in _tree_grid
        _tree_grid,
        "grid",
        lambda quick, real: {
            "datasets": ("iris",),
            "depths": (2,),
            "selections": ("em",),
            "eps": (2.0,),
            "reps": 1,
            "folds": 3,
            "n_bins": 4,
        },
    )
    res = runner.reproduce("tree", quick=True, out=tmp_path / "out", seed=0, workers=1, progress=False)
    assert res.data_files == [] and len(res.rows) == 3


def test_tree_rows_carry_the_majority_rate_of_each_fold():
    from sklearn.model_selection import KFold

    task = Task(
        ("iris", 2, "em", 2.0, 1),
        {
            "dataset": "iris",
            "data_dir": None,
            "depth": 2,
            "selection": "em",
            "epsilon": 2.0,
            "rep": 1,
            "folds": 4,
            "n_bins": 4,
        },
    )
    rows = tree.run_task(task, np.random.SeedSequence(5))
    y = load("iris", None).y
    for row, (train, test) in zip(rows, KFold(4, shuffle=True, random_state=1).split(y)):
        counts = Counter(y[train].tolist())
        top = min(k for k, v in counts.items() if v == max(counts.values()))
        assert row["majority_accuracy"] == pytest.approx(sum(v == top for v in y[test]) / len(test))
        assert 0.0 <= row["accuracy"] <= 1.0


def _tree_rows() -> list[dict]:
    rows = []
    for sel, accs in {"em": (0.6, 0.8), "pf": (0.7, 0.7), "snm_t": (0.9, 0.7), "majority": (0.4, 0.4)}.items():
        for fold, acc in enumerate(accs):
            rows.append(
                {
                    "dataset": "acs",
                    "depth": 2,
                    "selection": sel,
                    "epsilon": 0.5,
                    "rep": 0,
                    "fold": fold,
                    "accuracy": acc,
                    "majority_accuracy": 0.4,
                }
            )
    return rows


def test_tree_figure_claims_and_table(tmp_path, figures):
    rows = _tree_rows()
    tree.plot(rows, tmp_path)
    (fig,) = figures
    ax = fig.axes[0]
    labels = [c.get_label() for c in ax.containers]
    assert labels == ["EM", "PF", "SNM-T"]  # the majority rate is the dashed line, not a series
    assert all(c.has_yerr for c in ax.containers)
    segs = ax.containers[0].lines[2][0].get_segments()  # EM: mean 0.7 +- sd 0.1414
    assert segs[0][:, 1] == pytest.approx([0.7 - np.sqrt(0.02), 0.7 + np.sqrt(0.02)])
    (maj,) = [ln for ln in ax.lines if ln.get_label() == "majority class"]
    assert list(maj.get_ydata()) == pytest.approx([0.4, 0.4])
    (pub,) = [ln for ln in ax.lines if ln.get_label() == "SNM-T (published)"]
    assert pub.get_ydata()[0] == tree.PUBLISHED[("acs", 2, 0.5)]["snm_t"]
    assert pub.get_color() == ax.containers[2].lines[0].get_color()  # in the series' colour
    assert ax.get_legend() is None and len(fig.legends) == 1

    claims = tree.claims(rows)
    assert len(claims) == 5  # one row per SNM variant + two published comparisons, evaluated or not
    assert claims[0].ok is True and "0.1 over 1 cells" in claims[0].ours  # 0.8 - max(0.7, 0.7)
    assert claims[1].ok is None and claims[2].ok is None  # SNM-LAP / SNM-LLN not in the grid
    pub_t = tree.PUBLISHED[("acs", 2, 0.5)]["snm_t"]
    assert claims[3].ok is (abs(0.8 - pub_t) <= 0.02) and claims[4].ok is None
    table = tree.summary(rows)
    assert "| dataset | depth | epsilon | EM | PF | SNM-T | majority rate | SNM-T published | majority class |" in table
    pub = tree.PUBLISHED[("acs", 2, 0.5)]["snm_t"]
    assert f"| acs | 2 | 0.5 | 0.7 ± 0.14 | 0.7 ± 0 | 0.8 ± 0.14 | 0.4 ± 0 | {pub:.3g} | 0.4 |" in table


def test_forest_claims_always_list_both_rows():
    rows = [
        {
            "dataset": "iris",
            "selection": s,
            "epsilon": 1.0,
            "rep": r,
            "depth": 2,
            "accuracy": a,
            "majority_accuracy": 0.3,
        }
        for s, accs in {"em": (0.5, 0.7), "snm_t": (0.8, 0.6)}.items()
        for r, a in enumerate(accs)
    ]
    claims = forest.claims(rows)
    assert [c.ok for c in claims] == [True, None]  # mean diff 0.1; no published cell for iris
    assert "iris | 1 | 0.6 ± 0.14 | 0.7 ± 0.14 | – | 0.3 |" in forest.summary(rows)


def test_median_figure_has_error_bars_over_datasets(tmp_path, figures):
    rows = [
        {"distribution": "uniform", "rep": r, "n": 11, "epsilon": e, "method": m, "expected_abs_error": v}
        for m in median.METHODS
        for e in (0.1, 1.0)
        for r, v in enumerate((0.01 * (1 + e), 0.03 * (1 + e)))
    ]
    median.plot(rows, tmp_path)
    ax = figures[0].axes[0]
    assert len(ax.containers) == len(median.METHODS) and all(c.has_yerr for c in ax.containers)
    assert ax.get_yscale() == "log" and not any(ln.get_label() == "majority class" for ln in ax.lines)
    # eps = 0.1: errors (0.011, 0.033) over the two datasets, mean 0.022, sd 0.0156
    assert "| uniform | 0.1 | 0.022 ± 0.016 |" in median.summary(rows)


def test_percentile_exact_zero_is_drawn_at_zero(tmp_path, figures):
    rows = [
        {"dataset": "HEPTH-like", "p": 50, "mechanism": m, "epsilon": e, "aee": v}
        for m in ("PF", "EM")
        for e, v in ((1.0, 3.0), (10.0, 0.02), (30.0, 1e-150), (100.0, 0.0))
    ]
    percentile.plot(rows, tmp_path)
    ax = figures[0].axes[0]
    assert [c.get_label() for c in ax.containers] == ["EM", "PF"]  # the order of MECHANISMS
    assert ax.get_yscale() == "symlog" and ax.yaxis.get_transform().linthresh == percentile.LINEAR_BELOW
    ticks = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels() if t.get_text()}
    assert ticks["0"] == 0.0 and min(v for v in ticks.values() if v > 0) == pytest.approx(1e-6)
    ys = np.concatenate([c.lines[0].get_ydata() for c in ax.containers])
    assert (ys == 0.0).sum() == 2 and (ys == 1e-150).sum() == 2  # neither floored nor moved


def test_tdt_task_grid_keeps_the_keys_order_and_kwargs():
    """The shared task grid gives the keys (hence seeds, spawned in key order) of the hand-written grid."""
    g = tdt.grid(True)
    out = tdt.tasks(True, None)
    expected = (
        [("accuracy", m, c) for m in g["ms"] for c in range(g["chunks"])]
        + [("runtime", m, 0) for m in g["runtime_ms"]]
        + [("real", 6, r) for r in range(g["real_reps"])]
    )
    assert [t.key for t in out] == expected
    acc, rt, real = out[0].kwargs, out[len(g["ms"]) * g["chunks"]].kwargs, out[-1].kwargs
    assert (acc["kind"], acc["n_reps"], tuple(acc["epsilons"])) == ("accuracy", g["reps_per_chunk"], g["eps"])
    assert (rt["kind"], rt["repeats"]) == ("runtime", 3)
    assert (real["kind"], real["rep"], real["data_dir"]) == ("real", g["real_reps"] - 1, None)


def _tdt_rows() -> list[dict]:
    """Two chunks per cell, accuracies base -/+ 0.05 (spread sqrt(0.005)); ND-PF 0.9, the others below."""
    rows = []
    base = {mech: 0.9 if mech == "nd_pf" else 0.2 + 0.05 * i for i, mech in enumerate(tdt.MECH_ORDER)}
    for acc in ("proven", "paper"):
        for m in (5, 10):
            for chunk, d in enumerate((-0.05, 0.05)):
                for eps in (3.0, 9.0):
                    for mech in tdt.MECH_ORDER:
                        rows.append(
                            {
                                "table": "fig1",
                                "m": m,
                                "chunk": chunk,
                                "n_reps": 2,
                                "epsilon": eps,
                                "accounting": acc,
                                "mechanism": mech,
                                "case": "",
                                "accuracy": base[mech] + d,
                                "epsilon_proven": eps,
                            }
                        )
                        if m == 5:
                            rows.append(
                                {
                                    "table": "table2",
                                    "m": 6,
                                    "rep": chunk,
                                    "epsilon": eps,
                                    "accounting": acc,
                                    "mechanism": mech,
                                    "accuracy": base[mech] + d,
                                    "epsilon_proven": eps,
                                    "source": "regenerated",
                                }
                            )
    return rows


def test_tdt_figures_have_error_bars_and_the_chance_line(tmp_path, figures):
    rows = _tdt_rows()
    tdt.plot(rows, tmp_path)
    fig1, fig2, table2 = figures
    ax = fig1.axes[0]
    assert ax.get_title() == "m = 5 (paper accounting)"  # paper accounting first whatever the row order
    labels = [c.get_label() for c in ax.containers]
    assert labels == [tdt.CASE[x] for x in tdt.MECH_ORDER] + ["chance (uniform pick, 1/m)"]
    nd = ax.containers[0].lines[2][0].get_segments()  # ND-PF at eps 3: mean 0.9 +- sd of (0.85, 0.95)
    assert nd[0][:, 1] == pytest.approx([0.9 - np.sqrt(0.005), 0.9 + np.sqrt(0.005)])
    chance = ax.containers[-1].lines[0]
    assert list(chance.get_xdata()) == [3.0, 9.0] and list(chance.get_ydata()) == pytest.approx([0.2, 0.2])
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == ["3", "9"]
    assert fig1.axes[1].get_title() == "m = 10 (paper accounting)"
    assert list(fig1.axes[1].containers[-1].lines[0].get_ydata()) == pytest.approx([0.1, 0.1])
    # Fig. 2 (x = m): the chance curve falls as 1/m; Table II: one panel per accounting, chance 1/6
    assert list(fig2.axes[0].containers[-1].lines[0].get_ydata()) == pytest.approx([0.2, 0.1])
    assert list(table2.axes[0].containers[-1].lines[0].get_ydata()) == pytest.approx([1 / 6, 1 / 6])
    for fig in figures:
        assert len(fig.legends) == 1 and all(a.get_legend() is None for a in fig.axes)
        assert all(c.has_yerr for a in fig.axes for c in a.containers)


def test_tdt_summary_and_claims_cover_every_table():
    rows = _tdt_rows()
    text = tdt.summary(rows)
    assert text.count("| m | epsilon | ND-PF | EM |") == 2  # Fig. 1/2 tables, both accountings
    assert "| paper | 3 | 0.9 ± 0.071 |" in text and "spread over 2 table sets (regenerated)" in text
    claims = {c.text: c for c in tdt.claims(rows)}
    nd = claims["Best sound mechanism vs the paper's mechanism: PF on the neighbour-distance utility vs SPS IV"]
    assert "ND-PF higher in 4/4 (m, eps) cells" in nd.ours
    assert claims["Table II (Justice et al. 2020 example): ND-PF beats every SPS case"].ok is True
    assert claims["The Thm 5 bound gives higher accuracy than the Thm 4 bound (case IV vs II)"].ok is True
    assert len(claims) == 7  # 2 accountings x (SPS IV, SPS III) vs EM/PF + Thm 5 vs 4 + ND-PF + Table II
