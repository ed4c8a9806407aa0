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

from dpselect._docstrings import expand

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]

#: Every module of the package is held to the rules above.
CHECKED: tuple[str, ...] = tuple(
    ".".join(p.relative_to(ROOT / "src").with_suffix("").parts).removesuffix(".__init__")
    for p in sorted((ROOT / "src" / "dpselect").rglob("*.py"))
)

#: What the docstring of a callable taking ``epsilon`` must say: its neighbour relation, and where
#: the guarantee is proved.
NEIGHBOUR_AND_CITATION = {
    "the neighbour relation": r"(?i)neighbo|add[_/ -]remove|\breplace\b",
    "a citation of the mathematics page": r"mathematics(\.md)?\s*§",
}

#: Dunder methods that are part of the public interface (documented like any method).
PUBLIC_DUNDERS = frozenset({"__call__"})

_SKIPPED_KINDS = ("variadic positional", "variadic keyword")


@functools.lru_cache(maxsize=1)
def _package() -> Any:
    return griffe.load("dpselect", search_paths=[str(ROOT / "src")], resolve_aliases=False)


def _module(dotted: str) -> Any:
    return _package() if dotted == "dpselect" else _package()[dotted.removeprefix("dpselect.")]


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


def _face_exports(dotted: str) -> frozenset[str]:
    """The names the nearest public package above a private module exports (its ``__all__``)."""
    parts = dotted.split(".")
    while parts and any(p.startswith("_") and p != "__init__" for p in parts):
        parts = parts[:-1]
    face = _package()[".".join(parts[1:])] if len(parts) > 1 else _package()
    exported = face.members.get("__all__")
    if exported is None or exported.value is None:
        return frozenset()
    return frozenset(a or b for a, b in re.findall(r"'([^']+)'|\"([^\"]+)\"", str(exported.value)))


def _callables(module: Any) -> list[tuple[str, Any, Any]]:
    """(qualified name, object whose parameters are checked, object whose docstring documents them).

    In a public module every public name counts; behind a face (a ``_private`` module, or one
    inside a private package) only the names the face exports: the others are helpers of the
    package, not its API.
    """
    found: list[tuple[str, Any, Any]] = []
    dotted = module.path
    private = any(p.startswith("_") and p != "__init__" for p in dotted.split("."))
    exported = _face_exports(dotted) if private else None
    for name, obj in module.members.items():
        if obj.is_alias or not _is_public(name) or (exported is not None and name not in exported):
            continue
        if obj.is_function:
            found.append((name, obj, obj))
        elif obj.is_class:
            found.append((f"{name}.__init__", obj, obj))  # the class docstring documents the constructor
            for mname, member in obj.members.items():
                if not member.is_alias and member.is_function and _is_public(mname):
                    found.append((f"{name}.{mname}", member, member))
    return found


def _sections(text: str) -> set[str]:
    return {s.kind.value for s in griffe.Docstring(text, lineno=1).parse("numpy", warnings=False)}


def _returns_problem(qualname: str, func: Any) -> str | None:
    """A function returning something (annotation not None) documents it in Returns or Yields."""
    if not func.is_function or qualname.endswith("__init__") or "property" in func.labels:
        return None
    if func.returns is None or str(func.returns) in ("None", "NoReturn"):
        return None
    doc = func.docstring
    if doc is None or not ({"returns", "yields"} & _sections(expand(doc.value))):
        return f"{qualname}: returns {func.returns!s} but has no Returns section"
    return None


def _privacy_problem(qualname: str, params: list[Any], doc: str) -> str | None:
    """A callable taking ``epsilon`` states its neighbour relation and cites the mathematics page."""
    if (
        "epsilon" not in {p.name for p in params}
        or qualname.count(".") > 1
        or ("." in qualname and not qualname.endswith("__init__"))
    ):
        return None
    missing = [what for what, pattern in NEIGHBOUR_AND_CITATION.items() if not re.search(pattern, doc)]
    return f"{qualname}: takes epsilon but its docstring lacks {missing}" if missing else None


def check_module(module: Any) -> list[str]:
    """Every violation of the rules in the module docstring, one message each."""
    problems: list[str] = []
    for qualname, owner, documented_by in _callables(module):
        params = _signature_parameters(owner)
        for p in params:
            if p.annotation is not None and re.search(r"\bAny\b", str(p.annotation)):
                problems.append(f"{qualname}: parameter {p.name!r} is annotated {p.annotation!s} (mentions Any)")
        returns = _returns_problem(qualname, owner)
        if returns:
            problems.append(returns)
        if not params:
            continue
        doc = documented_by.docstring
        if doc is None:
            problems.append(f"{qualname}: no docstring (parameters {[p.name for p in params]})")
            continue
        text = expand(doc.value)  # docstring fragments (dpselect._docstrings), as help() shows them
        entries = _documented(text)
        for p in params:
            if p.name not in entries:
                problems.append(f"{qualname}: parameter {p.name!r} has no entry in the Parameters section")
            elif not entries[p.name]:
                problems.append(f"{qualname}: parameter {p.name!r} has no type in its entry")
            elif not re.search(rf"^\s*{re.escape(p.name)}\s*:", text, flags=re.MULTILINE):
                problems.append(f"{qualname}: parameter {p.name!r} shares its entry with others (one line each)")
        privacy = _privacy_problem(qualname, params, text)
        if privacy:
            problems.append(privacy)
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
    assert sum(len(_callables(_module(d))) for d in CHECKED) >= 300


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


def leaky(epsilon: float) -> None:
    """A private release that cites nothing.

    Parameters
    ----------
    epsilon : float
        Privacy.
    """


def private(epsilon: float) -> float:
    """A release on add/remove neighbours (mathematics §4).

    Parameters
    ----------
    epsilon : float
        Privacy.

    Returns
    -------
    float
        The release.
    """


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
    assert "shared: returns float but has no Returns section" in text
    assert "Thing.method: returns int but has no Returns section" in text
    assert "leaky: takes epsilon but its docstring lacks ['the neighbour relation', 'a citation" in text
    assert not any(p.startswith(("good", "private")) for p in problems), problems
    assert len(problems) == 10, problems
