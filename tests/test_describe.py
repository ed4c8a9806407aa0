"""describe / ``dpselect describe``: a noisy row count and each column's quantiles, epsilon split in the open.

Also the help of the command line at 80 columns (option names whole, FILE in the usage line).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from dpselect.accounting import Accountant
from dpselect.apps.quantiles import describe, private_quantiles


def _table(n: int = 3000) -> dict[str, np.ndarray]:
    gen = np.random.default_rng(0)
    return {"age": gen.integers(18, 90, n), "hours": gen.normal(40.0, 10.0, n)}


def test_budget_split_is_charged_once_and_sums_to_epsilon():
    for eps, c in [(1.0, 2), (0.3, 3), (0.7, 7)]:
        table = {f"c{i}": np.arange(100) for i in range(c)}
        acc = Accountant(eps)
        d = describe(table, eps, bounds=(0, 100), rng=0, accountant=acc)
        assert acc.spent.epsilon == d.privacy.epsilon <= eps
        assert d.privacy.epsilon >= eps * (1 - 1e-12)
        assert d.epsilon_count == pytest.approx(0.1 * eps) and d.epsilon_column == pytest.approx(0.9 * eps / c)


def test_each_column_is_private_quantiles_at_its_share_with_the_same_generator():
    table = _table()
    d = describe(table, 1.0, bounds={"age": (0, 120), "hours": (0, 100)}, rng=3)
    gen = np.random.default_rng(3)
    from dpselect.noise import GridLaplace

    count = GridLaplace(1.0, d.epsilon_count, granularity=1.0).release(3000.0, rng=gen)
    age = private_quantiles(table["age"], [0.25, 0.5, 0.75], d.epsilon_column, bounds=(0, 120), rng=gen)
    hours = private_quantiles(table["hours"], [0.25, 0.5, 0.75], d.epsilon_column, bounds=(0, 100), rng=gen)
    assert d.count == max(0, int(count))
    np.testing.assert_array_equal(d.quantiles, np.vstack([age, hours]))
    text = str(d)
    assert "budget: count 0.1 + 2 column(s) x 0.45 = 1-DP" in text and text.splitlines()[2].startswith("age")


def test_numeric_columns_only_by_default_and_a_missing_value_is_named():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"age": pd.array([30, 40, 50] * 50, dtype="Int64"), "name": ["x", "y", "z"] * 50})
    assert describe(df, 1.0, bounds=(0, 100), rng=0).columns == ("age",)
    df.loc[3, "age"] = pd.NA
    with pytest.raises(ValueError, match=r"^age has missing values"):
        describe(df, 1.0, bounds=(0, 100))
    with pytest.raises(ValueError, match=r"^columns must name columns of data"):
        describe(df, 1.0, columns=["nope"])


def test_cli_describe_prints_the_table_and_the_split(tmp_path, capsys):
    pytest.importorskip("typer")
    pd = pytest.importorskip("pandas")
    from dpselect.cli import main

    path = tmp_path / "people.csv"
    pd.DataFrame(_table(500)).round(2).to_csv(path, index=False)
    assert main(["describe", str(path), "--epsilon", "2", "--bounds", "0,120", "--seed", "1", "--q", "0.5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("rows (noisy count): ")
    assert out[1].split() == ["column", "q=0.5"] and out[2].startswith("age") and out[3].startswith("hours")
    assert out[-1] == "budget: count 0.2 + 2 column(s) x 0.9 = 2-DP [add_remove], one row = one record"
    assert main(["describe", str(path), "--epsilon", "1", "--bounds", "5,1"]) == 2
    assert "--bounds" in capsys.readouterr().err


def test_help_at_80_columns_keeps_option_names_whole_and_shows_file():
    pytest.importorskip("typer")
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    for command, flag in [("select", "--non-private-candidates-from-data"), ("describe", "--count-share")]:
        out = subprocess.run(
            [sys.executable, "-m", "dpselect", command, "--help"], capture_output=True, text=True, env=env, check=True
        ).stdout
        assert f"Usage: dpselect {command} [OPTIONS] FILE" in out
        assert "{file}" not in out and "{FILE}" not in out and "…" not in out
        assert flag in out
        assert max(len(line) for line in out.splitlines()) <= 80
