"""The shape of the source: small modules, short functions, declared parameters, few ``Any``.

* every module has at most :data:`MAX_MODULE_LINES` lines (past that it holds two ideas);
* every function body has at most :data:`MAX_FUNCTION_LINES` lines, its docstring not counted;
* every public function of a face declares its parameters with
  :func:`dpselect._params.validate_params` (``__parameter_constraints__``), and every public
  class a user configures declares ``_parameter_constraints`` (results, exceptions and
  warnings excepted: :data:`NOT_CONFIGURED`);
* ``typing.Any`` appears in at most :data:`MAX_ANY` public signatures (faces' functions,
  constructors and public methods).
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

import pytest

from _source_imports import exported_callables, modules

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
MAX_ANY = 10

#: Public classes a user does not configure (results the library returns, exceptions, warnings):
#: they need no ``_parameter_constraints``.  One entry per face; say why in a comment.
NOT_CONFIGURED: dict[str, frozenset[str]] = {
    # the law a mechanism or a *_law function returns; the abstract bases of the mechanisms
    "dpselect": frozenset({"OutputLaw", "Mechanism", "NoisyMaxMechanism"}),
    "dpselect.accounting": frozenset(),
    # AuditReport: what audit() returns, never built by a user
    "dpselect.analysis": frozenset({"AuditReport"}),
    # ModeUtility: what duff_mode_utility returns (candidates and utilities), never built by a user;
    # TopKeys: what select_top_k_keys returns
    "dpselect.apps.counts": frozenset({"ModeUtility", "TopKeys"}),
    # results the library returns (readers, selections, simulations), never configured by a user
    "dpselect.apps.genomics": frozenset({"CaseControlSimulation", "TopSNPRelease", "TopSNPs", "TransmissionCounts"}),
    "dpselect.apps.quantiles": frozenset(
        {"Bounds", "Description", "GroupedQuantiles", "MeanLevels", "PercentileStability"}
    ),  # results returned
    "dpselect.apps.trees": frozenset(),
    # results the library returns (reproduce's result and the claims it holds), not configured by users
    "dpselect.experiments": frozenset({"Claim", "ExperimentResult"}),
    # abstract base classes: users configure their concrete subclasses
    "dpselect.mechanisms": frozenset({"Mechanism", "NoisyMaxMechanism"}),
    "dpselect.noise": frozenset(),
}


def _exported() -> list[tuple[str, str, Any]]:
    """(face, name, object) for every function and class in a face's ``__all__`` (optional faces skipped)."""
    return exported_callables()


@pytest.mark.parametrize("name", sorted(modules()))
def test_module_size(name: str) -> None:
    lines = len(modules()[name].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name}: {lines} lines (split it: two ideas)"


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function without its docstring (decorators not counted)."""
    total = node.end_lineno - node.lineno + 1  # type: ignore[operator]
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        total -= first.end_lineno - first.lineno + 1  # type: ignore[operator]
    return total


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, body lines) of every function of ``source`` longer than :data:`MAX_FUNCTION_LINES`."""
    tree = ast.parse(source)
    return [
        (node.name, _body_lines(node))
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _body_lines(node) > MAX_FUNCTION_LINES
    ]


@pytest.mark.parametrize("name", sorted(modules()))
def test_function_length(name: str) -> None:
    long = long_functions(modules()[name].read_text())
    assert not long, f"{name}: functions over {MAX_FUNCTION_LINES} lines (docstring not counted): {long}"


def test_function_length_counts_the_body_only() -> None:
    """Negative control: an 81-line body is caught, an 80-line body under a long docstring is not."""
    doc = '    """' + "\n" * 40 + '    """\n'
    ok = "def f():\n" + doc + "    x = 1\n" * 79
    bad = "def g():\n" + "    x = 1\n" * 81
    assert long_functions(ok) == []
    assert long_functions(bad) == [("g", 82)]


@pytest.mark.parametrize(("face", "name", "obj"), _exported(), ids=lambda v: v if isinstance(v, str) else "")
def test_public_entry_points_declare_their_parameters(face: str, name: str, obj: Any) -> None:
    if inspect.isfunction(obj):
        assert hasattr(obj, "__parameter_constraints__"), (
            f"{face}.{name}: decorate it with dpselect._params.validate_params"
        )
        return
    if issubclass(obj, BaseException) or name in NOT_CONFIGURED.get(face, ()):
        return
    rules = getattr(obj, "_parameter_constraints", None)
    assert rules is not None, f"{face}.{name}: declare _parameter_constraints (or list it in NOT_CONFIGURED)"
    params = {
        p.name for p in inspect.signature(obj).parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
    assert set(rules) == params, f"{face}.{name}: _parameter_constraints {sorted(rules)} != parameters {sorted(params)}"


def _any_in_signature(obj: Any) -> list[str]:
    """Parameters and returns of ``obj`` annotated with a text that mentions ``Any``."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    hits = [
        p.name
        for p in sig.parameters.values()
        if p.name not in ("self", "cls") and re.search(r"\bAny\b", str(p.annotation))
    ]
    if re.search(r"\bAny\b", str(sig.return_annotation)):
        hits.append("return")
    return hits


def _public_signatures() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for face, name, obj in _exported():
        if inspect.isfunction(obj):
            out[f"{face}.{name}"] = _any_in_signature(obj)
            continue
        if issubclass(obj, BaseException):
            continue
        out[f"{face}.{name}"] = _any_in_signature(obj)
        for mname, member in vars(obj).items():
            if inspect.isfunction(member) and (not mname.startswith("_") or mname == "__call__"):
                out[f"{face}.{name}.{mname}"] = _any_in_signature(member)
    return out


def test_any_in_public_signatures_is_rare() -> None:
    sigs = _public_signatures()
    with_any = {k: v for k, v in sigs.items() if v}
    assert len(sigs) > 200
    assert len(with_any) <= MAX_ANY, f"{len(with_any)} of {len(sigs)} public signatures mention Any:\n" + "\n".join(
        f"{k}: {v}" for k, v in sorted(with_any.items())
    )
