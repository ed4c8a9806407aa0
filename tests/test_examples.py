"""Every script in examples/ runs and prints what it promises."""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(name: str, timeout: float = 120.0) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def value(output: str, label: str) -> str:
    m = re.search(rf"^{re.escape(label)}:\s*(.+)$", output, flags=re.M)
    assert m, f"no line {label!r} in:\n{output}"
    return m.group(1).strip()


def number(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    assert m, f"{pattern!r} not found in {text!r}"
    return m.group(1)


def test_every_example_has_a_test() -> None:
    here = Path(__file__).read_text(encoding="utf-8")
    for script in EXAMPLES.glob("*.py"):
        assert f'"{script.name}"' in here, f"{script.name} is not run by tests/test_examples.py"


def test_private_median_csv() -> None:
    out = run("private_median_csv.py")
    released = float(value(out, "private median"))
    true = float(value(out, "true median (not private)"))
    assert int(value(out, "records")) == 2000
    assert 0.0 <= released <= 120.0
    # Duff at eps = 1 on 2,000 records: the released value is within a few records' spread of the median.
    assert abs(released - true) < 5.0
    assert value(out, "guarantee").startswith("1-DP under add/remove")


def _percentile_has_rank_utility() -> bool:
    from dpselect.apps.quantiles._percentile import percentile

    return "utility" in inspect.signature(percentile.percentile_problem).parameters


@pytest.mark.skipif(
    not _percentile_has_rank_utility(),
    reason="apps.percentile.percentile_problem(..., utility='rank') is not in this version yet",
)
def test_private_percentile() -> None:
    out = run("private_percentile.py")
    released = float(value(out, "private p90"))
    assert released % 500 == 0 and 0 <= released <= 200_000  # a point of the public grid
    errors = {}
    for utility in ("rank", "indicator"):
        line = value(out, utility)
        errors[utility] = float(number(r"exact expected error ([-+\d.eE]+)", line))
        assert line.endswith("guarantee 1-DP [add_remove]")
    # 20,000 records, eps = 1: the rank distance puts nearly all mass within a few grid steps
    # (500 each) of the truth; the indicator is close to uniform over the 401 grid points.
    assert errors["rank"] < 1_000 < errors["indicator"]


def test_audit_your_mechanism() -> None:
    out = run("audit_your_mechanism.py")
    # independent count: each of the 5^3 tables has (#non-zero classes) x 2 replace-neighbours
    expected_pairs = sum(2 * sum(c > 0 for c in t) for t in itertools.product(range(5), repeat=3))
    assert int(value(out, "pairs audited")) == expected_pairs
    correct, broken = value(out, "correct"), value(out, "broken")
    loss_ok = float(number(r"max loss ([\d.]+)", correct))
    loss_bad = float(number(r"max loss ([\d.]+)", broken))
    assert correct.endswith(": ok") and loss_ok <= 1.0
    assert broken.endswith(": VIOLATION") and loss_bad > 1.0


def test_dp_tree_budget() -> None:
    out = run("dp_tree_budget.py")
    assert value(out, "model selection spent") == "1 over 10 fits"  # 2 depths x 5 folds x 0.1
    assert value(out, "chosen max_depth") in ("2", "3")
    assert value(out, "tree spent").startswith("0.5-DP")
    assert 0.0 <= float(value(out, "test accuracy")) <= 1.0
    assert float(value(out, "budget remaining")) == pytest.approx(0.5)
    assert value(out, "second tree refused") == "BudgetExceededError"


def _gwas_available() -> bool:
    if importlib.util.find_spec("dpselect.apps.genomics") is None:
        return False
    from dpselect.apps import genomics as tdt

    return hasattr(tdt, "select_top_snps")


@pytest.mark.skipif(
    not _gwas_available(), reason="dpselect.apps.genomics / apps.tdt.select_top_snps are not in this version yet"
)
def test_top_snps_plink() -> None:
    out = run("top_snps_plink.py", timeout=300.0)
    line = value(out, "families")
    families, snps = number(r"^(\d+),", line), number(r"SNPs: (\d+)", line)
    assert 0 < int(families) <= 400 and int(snps) == 2000
    assert len(value(out, "private top 5").split(", ")) == 5
    assert value(out, "guarantee").startswith("4-DP [replace]")
    assert 0 <= int(value(out, "overlap with the non-private top 5")) <= 5
