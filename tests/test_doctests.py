"""Run the Examples sections of every dpselect module as doctests.

One parametrised test per module (found by walking the package with
:mod:`pkgutil`), so a failure names the module.  A module of an optional domain
whose extra is not installed (its import raises dpselect's MissingExtraError,
naming the extra) is skipped with that reason; any other import error fails the test.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import dpselect
from dpselect._optional import MissingExtraError

OPTIONFLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _module_names() -> list[str]:
    names = [dpselect.__name__]
    for info in pkgutil.walk_packages(dpselect.__path__, prefix=dpselect.__name__ + "."):
        names.append(info.name)
    return sorted(names)


def _import(name: str):
    try:
        return importlib.import_module(name)
    except MissingExtraError as exc:  # pragma: no cover - depends on the environment
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("name", _module_names())
def test_module_doctests(name: str) -> None:
    module = _import(name)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, (
        f"{result.failed} of {result.attempted} doctest examples failed in {name}:\n{out.getvalue()}"
    )


def test_walk_finds_the_package() -> None:
    names = _module_names()
    assert "dpselect.mechanisms.classic" in names
    assert "dpselect.analysis.audit" in names


def test_runner_reports_a_failing_example() -> None:
    """Negative control: the same runner fails on a module whose example is wrong."""
    import types

    module = types.ModuleType("fake_module")
    module.__doc__ = ">>> 1 + 1\n3\n"
    runner = doctest.DocTestRunner(optionflags=OPTIONFLAGS)
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test, out=lambda _: None)
    assert runner.summarize(verbose=False).failed == 1
