"""Every benchmark script imports (its names still exist), without running its measurements."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("*.py")))
def test_benchmark_script_imports(script: str, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the scripts share benchmarks/_timing.py
    spec = importlib.util.spec_from_file_location(f"_bench_{script[:-3]}", BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)  # module level only: the measurements run under __main__
    assert module.__doc__, f"{script} has no docstring saying what it measures"
