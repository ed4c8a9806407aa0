"""Docstring form of the public API: one numpydoc entry per parameter, typed signatures.

For every public function, method and class constructor of the modules in
:data:`CHECKED` (read statically by griffe, as the API pages are):

* every signature parameter (except ``self``, ``cls``, ``*args``, ``**kwargs``)
  has its own entry in the docstring's numpydoc *Parameters* section
  (``name : type, default=...`` on a line of its own: ``a, b : float`` does not
  count for ``b``), with a non-empty type;
* no public parameter is annotated with ``typing.Any`` (use ``ArrayLike``,
  ``SeedLike``, ``Relation``, ... from :mod:`dpselect.typing`).

To hold another module to these rules, add its dotted name to ``CHECKED``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]

#: Modules whose public API must follow the rules above (extend as modules are rewritten).
CHECKED: tuple[str, ...] = (
    "dpselect.typing",
    "dpselect.problem",
    "dpselect.sensitivity",
    "dpselect.mechanisms.base",
    "dpselect.mechanisms.distance",
    "dpselect.mechanisms.registry",
    "dpselect.mechanisms.dampening",
    "dpselect.mechanisms.sensitivity_bound",
    "dpselect.analysis.audit",
    "dpselect.analysis.error",
    "dpselect.analysis.error_distribution",
    "dpselect.datasets",
    "dpselect.apps.counts._instability",
    "dpselect.apps.counts._majority",
    "dpselect.apps.counts._mode",
    "dpselect.apps.counts._ptr",
    "dpselect.apps.counts._ptr_mode",
    "dpselect.apps.counts._stable_histogram",
    "dpselect.apps.counts._vote",
    "dpselect.privacy",
    "dpselect.accounting.accountant",
    "dpselect.accounting.composition",
    "dpselect.accounting.ledger",
    "dpselect.accounting.optimal",
    "dpselect.accounting.bounded_range",
    "dpselect.accounting.conversions",
    "dpselect.accounting.ptr",
    "dpselect.accounting.trees",
    "dpselect.accounting.dp_events",
    "dpselect.mechanisms.classic",
    "dpselect.mechanisms.top_k",
    "dpselect.mechanisms.joint_top_k",
    "dpselect.apps.trees._search",
    "dpselect.apps.trees._tree",
    "dpselect.apps.trees._forest",
    "dpselect.apps.trees._ensemble",
)

#: Dunder methods that are part of the public interface (documented like any method).
PUBLIC_DUNDERS = frozenset({"__call__"})

_SKIPPED_KINDS = ("variadic positional", "variadic keyword")


@functools.lru_cache(maxsize=1)
def _package() -> Any:
    return griffe.load("dpselect", search_paths=[str(ROOT / "src")], resolve_aliases=False)


def _module(dotted: str) -> Any:
    return _package()[dotted.removeprefix("dpselect.")]


def _is_public(name: str) -> bool:
    return not name.startswith("_") or name in PUBLIC_DUNDERS


def _signature_parameters(func: Any) -> list[Any]:
    """The parameters a caller passes: no self/cls, no *args/**kwargs."""
    params = list(func.parameters)
    if params and params[0].name in ("self", "cls") and "staticmethod" not in func.labels:
        params = params[1:]
    return [p for p in params if p.kind.value not in _SKIPPED_KINDS]


def _documented(text: str) -> dict[str, str]:
    """name -> written type of every entry of the Parameters section(s) (types from the text only)."""
    sections = griffe.Docstring(text, lineno=1).parse("numpy", warn_missing_types=False, warnings=False)
    out: dict[str, str] = {}
    for section in sections:
        if section.kind.value == "parameters":
            for param in section.value:
                out[param.name] = str(param.annotation or "").strip()
    return out


def _callables(module: Any) -> list[tuple[str, Any, Any]]:
    """(qualified name, object whose parameters are checked, object whose docstring documents them)."""
    found: list[tuple[str, Any, Any]] = []
    for name, obj in module.members.items():
        if obj.is_alias or not _is_public(name):
            continue
        if obj.is_function:
            found.append((name, obj, obj))
        elif obj.is_class:
            found.append((f"{name}.__init__", obj, obj))  # the class docstring documents the constructor
            for mname, member in obj.members.items():
                if not member.is_alias and member.is_function and _is_public(mname):
                    found.append((f"{name}.{mname}", member, member))
    return found


def check_module(module: Any) -> list[str]:
    """Every violation of the rules in the module docstring, one message each."""
    problems: list[str] = []
    for qualname, owner, documented_by in _callables(module):
        params = _signature_parameters(owner)
        for p in params:
            if p.annotation is not None and re.search(r"\bAny\b", str(p.annotation)):
                problems.append(f"{qualname}: parameter {p.name!r} is annotated {p.annotation!s} (mentions Any)")
        if not params:
            continue
        doc = documented_by.docstring
        if doc is None:
            problems.append(f"{qualname}: no docstring (parameters {[p.name for p in params]})")
            continue
        entries = _documented(doc.value)
        for p in params:
            if p.name not in entries:
                problems.append(f"{qualname}: parameter {p.name!r} has no entry in the Parameters section")
            elif not entries[p.name]:
                problems.append(f"{qualname}: parameter {p.name!r} has no type in its entry")
            elif not re.search(rf"^\s*{re.escape(p.name)}\s*:", doc.value, flags=re.MULTILINE):
                problems.append(f"{qualname}: parameter {p.name!r} shares its entry with others (one line each)")
    return problems


@pytest.mark.parametrize("dotted", CHECKED)
def test_public_parameters_documented_and_typed(dotted: str) -> None:
    problems = check_module(_module(dotted))
    assert not problems, f"{dotted}:\n" + "\n".join(problems)


def test_checked_modules_exist_and_have_public_callables() -> None:
    """A typo in CHECKED would silently check nothing."""
    for dotted in CHECKED:
        module = _module(dotted)
        assert module.is_module, dotted
    assert sum(len(_callables(_module(d))) for d in CHECKED) >= 70


_BAD = '''
from typing import Any


def shared(a: float, b: float) -> float:
    """Two names on one line.

    Parameters
    ----------
    a, b : float
        Numbers.
    """


def untyped(x: float, y: Any = None) -> None:
    """An entry without a type, one missing and an Any annotation.

    Parameters
    ----------
    x
        No type.
    """


class Thing:
    """A class whose constructor parameter is not documented."""

    def __init__(self, size: int) -> None:
        self.size = size

    def method(self, k: int) -> int:
        return k


def good(z: float, *args: float, w: int = 1, **kwargs: float) -> None:
    """All documented.

    Parameters
    ----------
    z : float
        A number.
    w : int, default=1
        Another.
    """
'''


def test_checker_catches_each_violation() -> None:
    """Negative control: the checker reports every kind of violation, and only those."""
    with griffe.temporary_visited_module(_BAD) as module:
        problems = check_module(module)
    text = "\n".join(problems)
    assert "shared: parameter 'b' shares its entry" in text
    assert "shared: parameter 'a' shares its entry" in text
    assert "untyped: parameter 'x' has no type" in text
    assert "untyped: parameter 'y' has no entry" in text
    assert "untyped: parameter 'y' is annotated Any" in text
    assert "Thing.__init__: parameter 'size' has no entry" in text
    assert "Thing.method: no docstring" in text
    assert not any(p.startswith("good") for p in problems), problems
    assert len(problems) == 7, problems
